// Round-robin arbiter: N requests in, at most one one-hot grant out.
//
// Contract
// - gnt_o/valid_o/idx_o are combinational from req_i and ptr_q: the lowest-index requester at or
//   above ptr_q wins; if none, the lowest-index requester overall (the search wraps).
// - When ack_i is high and a grant is valid, ptr_q moves just past the granted requester, so the
//   requester just served has the lowest priority next; otherwise ptr_q holds.
// - Synchronous active-low reset: ptr_q = 0.
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

  // Invariants.
  a_gnt_onehot0:    assert property (@(posedge clk_i) disable iff (!rst_ni) $onehot0(gnt_o));
  a_gnt_subset_req: assert property (@(posedge clk_i) disable iff (!rst_ni) (gnt_o & ~req_i) == '0);
  a_valid_iff_req:  assert property (@(posedge clk_i) disable iff (!rst_ni) valid_o == (|req_i));
  a_ptr_in_range:   assert property (@(posedge clk_i) disable iff (!rst_ni) 32'(ptr_q) < N);
endmodule
