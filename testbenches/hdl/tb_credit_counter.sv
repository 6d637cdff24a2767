// Testbench of credit_counter: stimulus columns dec_i inc_i need_i;
// trace columns cnt_o enough_o ovf_o udf_o cnt_q ovf_q udf_q.
/* verilator lint_off BLKSEQ */
/* verilator lint_off UNUSEDSIGNAL */
module tb_credit_counter #(
  parameter int unsigned Cap = 20
) (
  input logic clk_i,
  input logic rst_ni
);
  localparam string TRACE_HEADER = "cnt_o enough_o ovf_o udf_o cnt_q ovf_q udf_q";

  logic        dec, dec_s;
  logic [7:0]  inc, inc_s;
  logic [15:0] need, need_s;
  logic [15:0] cnt;
  logic        enough, ovf, udf;

  credit_counter #(.Cap(Cap)) u_dut (
    .clk_i, .rst_ni, .dec_i(dec), .inc_i(inc), .need_i(need),
    .cnt_o(cnt), .enough_o(enough), .ovf_o(ovf), .udf_o(udf)
  );

  `include "tb_common.svh"

  always @(posedge clk_i) begin
    if (rst_ni) begin
      $fwrite(trace_fd, "%0h %0h %0h %0h %0h %0h %0h\n", cnt, enough, ovf, udf,
              u_dut.cnt_q, u_dut.ovf_q, u_dut.udf_q);
    end
    if ($fscanf(stim_fd, "%h %h %h\n", dec_s, inc_s, need_s) != 3) $finish;
    dec  <= dec_s;
    inc  <= inc_s;
    need <= need_s;
  end
endmodule
