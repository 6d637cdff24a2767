`include "arnsim_assert.svh"

// Round-robin arbiter: N requests in, at most one one-hot grant out.
//
// Contract
// - gnt_o/valid_o/idx_o are combinational from req_i and ptr_q: the lowest-index requester at or
//   above ptr_q wins; if none, the lowest-index requester overall (the search wraps).
// - When ack_i is high and a grant is valid, ptr_q moves just past the granted requester, so the
//   requester just served has the lowest priority next; otherwise ptr_q holds.
// - Inputs: any req_i and ack_i are legal (an ack_i without a request is ignored); they must be
//   known (m_inputs_known).
// - Fairness: a requester that keeps requesting is served (granted with ack_i) before N other
//   grants are accepted (a_fair_bounded).
// - Synchronous active-low reset: ptr_q = 0.
// Assertions at the end of the module; hdl-ref/arnsim_assert.svh has the macros.
// Parameters
// - N: number of requesters, 1..128. IdxW = max(1, clog2 N).
// Twin: src/blocks/rr_arbiter.rs
module rr_arbiter #(
  parameter  int unsigned N    = 4,
  localparam int unsigned IdxW = (N > 1) ? $clog2(N) : 1
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic [N-1:0]        req_i,
  input  logic                ack_i,
  output logic [N-1:0]        gnt_o,
  output logic                valid_o,
  output logic [IdxW-1:0]     idx_o
);
  logic [IdxW-1:0] ptr_q, ptr_d;

  // Priority search: first requester at or above the pointer, else first overall.
  always_comb begin
    logic found_upper;
    logic [IdxW-1:0] idx_upper, idx_any;
    found_upper = 1'b0;
    idx_upper   = '0;
    idx_any     = '0;
    for (int i = N - 1; i >= 0; i--) begin
      if (req_i[i]) begin
        idx_any = IdxW'(i);
        if (IdxW'(i) >= ptr_q) begin
          idx_upper   = IdxW'(i);
          found_upper = 1'b1;
        end
      end
    end
    valid_o = |req_i;
    idx_o   = !valid_o ? '0 : (found_upper ? idx_upper : idx_any);
    gnt_o   = valid_o ? (N'(1) << idx_o) : '0;
  end

  always_comb begin
    ptr_d = ptr_q;
    if (ack_i && valid_o) begin
      ptr_d = (idx_o == IdxW'(N - 1)) ? '0 : idx_o + 1'b1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ptr_q <= '0;
    end else begin
      ptr_q <= ptr_d;
    end
  end

  // Parameters (checked at elaboration).
  // N is in 1..128.
  `ASSERT_INIT(a_param_n, N >= 1 && N <= 128)

  // Input contract.
  // Requests and ack are known outside reset.
  `ASSUME(m_inputs_known, !$isunknown({req_i, ack_i}))

  // Outputs.
  // Every output is known outside reset.
  `ASSERT_KNOWN(a_outputs_known, {gnt_o, valid_o, idx_o})

  // Invariants.
  // At most one grant bit is set.
  `ASSERT(a_gnt_onehot0, $onehot0(gnt_o))
  // A grant only goes to a requester.
  `ASSERT(a_gnt_subset_req, (gnt_o & ~req_i) == '0)
  // valid_o is high exactly when some requester is present.
  `ASSERT(a_valid_iff_req, valid_o == (|req_i))
  // The pointer is below N.
  `ASSERT(a_ptr_in_range, 32'(ptr_q) < N)
  // With a grant, gnt_o is the one-hot code of idx_o; without, both are 0.
  `ASSERT(a_gnt_is_idx, gnt_o == (valid_o ? (N'(1) << idx_o) : '0) && (valid_o || idx_o == '0))

`ifndef SYNTHESIS
  // Requesters strictly between ptr_q and idx_o, going up from ptr_q and wrapping at N:
  // the round-robin order says none of them is requesting.
  logic [N-1:0] below_idx, below_ptr, skipped;
  assign below_idx = (N'(1) << idx_o) - N'(1);
  assign below_ptr = (N'(1) << ptr_q) - N'(1);
  assign skipped   = (idx_o >= ptr_q) ? (below_idx & ~below_ptr) : (below_idx | ~below_ptr);
`endif
  // The grant goes to the first requester at or after ptr_q (wrapping): none is skipped.
  `ASSERT(a_rr_order, !valid_o || (req_i & skipped) == '0)

  // The pointer moves only on an accepted grant, and holds otherwise.
  `ASSERT(a_ptr_holds, !(ack_i && valid_o) |=> $stable(ptr_q))
  // On an accepted grant the pointer moves just past the winner (wrapping to 0).
  `ASSERT(a_ptr_moves, ack_i && valid_o |=>
                       ptr_q == (($past(idx_o) == IdxW'(N - 1)) ? '0 : $past(idx_o) + 1'b1))

`ifndef SYNTHESIS
  // Bounded fairness (the liveness rule, bounded): wait_q[i] counts the grants accepted by
  // others since requester i last started requesting or was served.
  localparam int unsigned WaitW = $clog2(N + 1) + 1;
  logic [WaitW-1:0] wait_q [N], wait_d [N];
  logic [N-1:0]     fair_ok;
  always_comb begin
    for (int i = 0; i < N; i++) begin
      wait_d[i] = wait_q[i];
      if (!req_i[i] || (ack_i && valid_o && 32'(idx_o) == i)) begin
        wait_d[i] = '0;
      end else if (ack_i && valid_o && wait_q[i] != '1) begin
        wait_d[i] = wait_q[i] + 1'b1;
      end
      fair_ok[i] = 32'(wait_q[i]) < N;
    end
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      wait_q <= '{default: '0};
    end else begin
      wait_q <= wait_d;
    end
  end
`endif
  // A requester that keeps requesting is served before N other grants are accepted.
  `ASSERT(a_fair_bounded, &fair_ok)
endmodule
