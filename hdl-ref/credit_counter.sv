`include "arnsim_assert.svh"

// Credit counter: free flit slots of one downstream VC buffer (credit-based flow control).
//
// Contract
// - cnt_q counts the free slots of the next switch's VC buffer. Each cycle: dec_i uses one credit
//   (a flit sent on the VC), inc_i returns 0..255 credits (flits freed downstream).
// - Underflow event: dec_i && cnt_q == 0 (no credit at the start of the cycle; a credit returned
//   in the same cycle does not excuse it). The illegal decrement is ignored.
// - sum = cnt_q + inc_i - (dec_i && !underflow), 17 bits (never wraps). Overflow event: sum > Cap;
//   then cnt_q <= Cap (saturate), else cnt_q <= sum.
// - ovf_q / udf_q latch the events and stay set until reset.
// - Outputs are registered values, except enough_o = (cnt_q >= need_i), the virtual cut-through
//   check of a packet of need_i flits.
// - Inputs: every combination is legal, errors included (they are what the flags record); the
//   inputs must be known (m_inputs_known).
// - Synchronous active-low reset: cnt_q = Cap, ovf_q = 0, udf_q = 0.
// Assertions at the end of the module; hdl-ref/arnsim_assert.svh has the macros.
// Parameters
// - Cap: capacity of the downstream VC buffer in flits, 1..65535. The counter is 16 bits.
// Twin: src/blocks/credit_counter.rs
module credit_counter #(
  parameter int unsigned Cap = 20
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        dec_i,
  input  logic [7:0]  inc_i,
  input  logic [15:0] need_i,
  output logic [15:0] cnt_o,
  output logic        enough_o,
  output logic        ovf_o,
  output logic        udf_o
);
  localparam logic [15:0] CapCnt = 16'(Cap);
  localparam logic [16:0] CapSum = 17'(Cap);

  logic [15:0] cnt_q, cnt_d;
  logic        ovf_q, ovf_d;
  logic        udf_q, udf_d;
  logic        udf_ev, ovf_ev;
  logic [16:0] sum;

  assign cnt_o    = cnt_q;
  assign enough_o = cnt_q >= need_i;
  assign ovf_o    = ovf_q;
  assign udf_o    = udf_q;

  always_comb begin
    cnt_d  = cnt_q;
    ovf_d  = ovf_q;
    udf_d  = udf_q;
    udf_ev = dec_i && (cnt_q == '0);
    sum    = {1'b0, cnt_q} + {9'b0, inc_i} - {16'b0, dec_i && !udf_ev};
    ovf_ev = sum > CapSum;
    cnt_d  = ovf_ev ? CapCnt : sum[15:0];
    ovf_d  = ovf_q | ovf_ev;
    udf_d  = udf_q | udf_ev;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cnt_q <= CapCnt;
      ovf_q <= 1'b0;
      udf_q <= 1'b0;
    end else begin
      cnt_q <= cnt_d;
      ovf_q <= ovf_d;
      udf_q <= udf_d;
    end
  end

  // Parameters (checked at elaboration).
  // Cap is in 1..65535 (the counter is 16 bits).
  `ASSERT_INIT(a_param_cap, Cap >= 1 && Cap <= 65535)

  // Input contract.
  // dec_i, inc_i and need_i are known outside reset.
  `ASSUME(m_inputs_known, !$isunknown({dec_i, inc_i, need_i}))

  // Outputs.
  // Every output is known outside reset.
  `ASSERT_KNOWN(a_outputs_known, {cnt_o, enough_o, ovf_o, udf_o})

  // Invariants.
  // The count never exceeds the capacity.
  `ASSERT(a_cnt_le_cap, cnt_q <= CapCnt)
  // The overflow flag stays set until reset.
  `ASSERT(a_ovf_sticky, ovf_q |=> ovf_q)
  // The underflow flag stays set until reset.
  `ASSERT(a_udf_sticky, udf_q |=> udf_q)
  // enough_o is the virtual cut-through check of the current count.
  `ASSERT(a_enough_rule, enough_o == (cnt_q >= need_i))

`ifndef SYNTHESIS
  // The next count by the credit protocol, from the inputs alone: legal means no decrement at
  // zero (the decrement is then ignored) and no credit beyond Cap.
  logic        chk_dec_at_zero, chk_legal;
  logic [16:0] chk_sum;
  assign chk_dec_at_zero = dec_i && cnt_q == '0;
  assign chk_sum   = 17'(cnt_q) + 17'(inc_i) - 17'(dec_i && !chk_dec_at_zero);
  assign chk_legal = !chk_dec_at_zero && chk_sum <= CapSum;
`endif
  // Legal traffic: the count moves by exactly the credits returned minus the flit sent, and
  // neither flag rises (the count never goes negative without the underflow flag).
  `ASSERT(a_cnt_follows_flits, chk_legal |=>
                               cnt_q == $past(chk_sum[15:0]) && ovf_q == $past(ovf_q)
                               && udf_q == $past(udf_q))
  // A send with no credit sets the underflow flag; the send itself is ignored.
  `ASSERT(a_udf_on_send_at_zero, chk_dec_at_zero |=>
                                 udf_q && cnt_q == ($past(chk_sum) > CapSum ? CapCnt
                                                                            : $past(chk_sum[15:0])))
  // More credit than Cap sets the overflow flag and the count saturates at Cap.
  `ASSERT(a_ovf_saturates, chk_sum > CapSum |=> ovf_q && cnt_q == CapCnt)
endmodule
