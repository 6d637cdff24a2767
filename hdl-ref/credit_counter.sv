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
// - Synchronous active-low reset: cnt_q = Cap, ovf_q = 0, udf_q = 0.
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

  // Parameter range, checked at elaboration.
  if (Cap < 1 || Cap > 65535) begin : g_cap_range
    $error("credit_counter: Cap = %0d is outside 1..65535", Cap);
  end

  // Invariants.
  a_cnt_le_cap: assert property (@(posedge clk_i) disable iff (!rst_ni) cnt_q <= CapCnt);
  a_ovf_sticky: assert property (@(posedge clk_i) disable iff (!rst_ni) ovf_q |=> ovf_q);
  a_udf_sticky: assert property (@(posedge clk_i) disable iff (!rst_ni) udf_q |=> udf_q);
endmodule
