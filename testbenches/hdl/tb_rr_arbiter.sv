// Testbench of rr_arbiter: stimulus columns req_i ack_i; trace columns gnt_o valid_o idx_o ptr_q.
/* verilator lint_off BLKSEQ */
/* verilator lint_off UNUSEDSIGNAL */
module tb_rr_arbiter #(
  parameter int unsigned N = 4
) (
  input logic clk_i,
  input logic rst_ni
);
  localparam int unsigned IdxW = (N > 1) ? $clog2(N) : 1;
  localparam string TRACE_HEADER = "gnt_o valid_o idx_o ptr_q";

  logic [N-1:0] req, req_s;
  logic         ack, ack_s;
  logic [N-1:0] gnt;
  logic         valid;
  logic [IdxW-1:0] idx;

  rr_arbiter #(.N(N)) u_dut (
    .clk_i, .rst_ni, .req_i(req), .ack_i(ack), .gnt_o(gnt), .valid_o(valid), .idx_o(idx)
  );

  `include "tb_common.svh"

  always @(posedge clk_i) begin
    if (rst_ni) $fwrite(trace_fd, "%0h %0h %0h %0h\n", gnt, valid, idx, u_dut.ptr_q);
    if ($fscanf(stim_fd, "%h %h\n", req_s, ack_s) != 2) $finish;
    req <= req_s;
    ack <= ack_s;
  end
endmodule
