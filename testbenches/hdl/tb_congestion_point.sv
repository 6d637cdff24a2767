// Testbench of congestion_point.
// Stimulus columns: qeq_i w_i sample_i arr_valid_i, arr_out_i[i], arr_len_i[i] (i = 0..P-1),
// queue_i[o] (o = 0..P-1).
// Trace columns: sampled_o cnm_o, fb_o[i], then left_q[o], qold_q[o].
/* verilator lint_off BLKSEQ */
/* verilator lint_off UNUSEDSIGNAL */
module tb_congestion_point #(
  parameter int unsigned P = 4
) (
  input logic clk_i,
  input logic rst_ni
);
  localparam int unsigned NumIn = 4 + 3 * P;

  function automatic string trace_header();
    string s;
    s = "sampled_o cnm_o";
    s = columns(s, "fb_o", P);
    s = columns(s, "left_q", P);
    s = columns(s, "qold_q", P);
    return s;
  endfunction

  string TRACE_HEADER;
  initial TRACE_HEADER = trace_header();

  logic [31:0]  qeq, qeq_s, sample, sample_s;
  logic [7:0]   w, w_s;
  logic [P-1:0] arr_valid, arr_valid_s;
  logic [7:0]   arr_out [P], arr_out_s [P];
  logic [15:0]  arr_len [P], arr_len_s [P];
  logic [31:0]  queue [P], queue_s [P];

  logic [P-1:0] sampled, cnm;
  logic [5:0]   fb [P];

  congestion_point #(.P(P)) u_dut (
    .clk_i, .rst_ni,
    .qeq_i(qeq), .w_i(w), .sample_i(sample),
    .arr_valid_i(arr_valid), .arr_out_i(arr_out), .arr_len_i(arr_len), .queue_i(queue),
    .sampled_o(sampled), .cnm_o(cnm), .fb_o(fb)
  );

  `include "tb_common.svh"

  integer n_in;

  always @(posedge clk_i) begin
    if (rst_ni) begin
      $fwrite(trace_fd, "%0h %0h", sampled, cnm);
      for (int i = 0; i < P; i++) $fwrite(trace_fd, " %0h", fb[i]);
      for (int o = 0; o < P; o++) $fwrite(trace_fd, " %0h", u_dut.left_q[o]);
      for (int o = 0; o < P; o++) $fwrite(trace_fd, " %0h", u_dut.qold_q[o]);
      $fwrite(trace_fd, "\n");
    end
    n_in = $fscanf(stim_fd, "%h %h %h %h", qeq_s, w_s, sample_s, arr_valid_s);
    for (int i = 0; i < P; i++) n_in += $fscanf(stim_fd, "%h", arr_out_s[i]);
    for (int i = 0; i < P; i++) n_in += $fscanf(stim_fd, "%h", arr_len_s[i]);
    for (int o = 0; o < P; o++) n_in += $fscanf(stim_fd, "%h", queue_s[o]);
    if (n_in != NumIn) $finish;
    qeq       <= qeq_s;
    w         <= w_s;
    sample    <= sample_s;
    arr_valid <= arr_valid_s;
    arr_out   <= arr_out_s;
    arr_len   <= arr_len_s;
    queue     <= queue_s;
  end
endmodule
