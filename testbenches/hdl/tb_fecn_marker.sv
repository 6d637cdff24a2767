// Testbench of fecn_marker.
// Stimulus columns: thr_i rate_i min_len_i victim_i gnt_i queue_i short_i len_i.
// Trace columns: elig_o mark_o count_q.
/* verilator lint_off BLKSEQ */
/* verilator lint_off UNUSEDSIGNAL */
module tb_fecn_marker (
  input logic clk_i,
  input logic rst_ni
);
  localparam int unsigned NumIn = 8;

  string TRACE_HEADER;
  initial TRACE_HEADER = "elig_o mark_o count_q";

  logic [15:0] thr, thr_s, rate, rate_s, min_len, min_len_s, len, len_s;
  logic        victim, victim_s, gnt, gnt_s, short, short_s;
  logic [31:0] queue, queue_s;
  logic        elig, mark;

  fecn_marker u_dut (
    .clk_i, .rst_ni,
    .thr_i(thr), .rate_i(rate), .min_len_i(min_len), .victim_i(victim),
    .gnt_i(gnt), .queue_i(queue), .short_i(short), .len_i(len),
    .elig_o(elig), .mark_o(mark)
  );

  `include "tb_common.svh"

  integer n_in;

  always @(posedge clk_i) begin
    if (rst_ni) $fwrite(trace_fd, "%0h %0h %0h\n", elig, mark, u_dut.count_q);
    n_in = $fscanf(stim_fd, "%h %h %h %h %h %h %h %h\n", thr_s, rate_s, min_len_s, victim_s,
                   gnt_s, queue_s, short_s, len_s);
    if (n_in != NumIn) $finish;
    thr     <= thr_s;
    rate    <= rate_s;
    min_len <= min_len_s;
    victim  <= victim_s;
    gnt     <= gnt_s;
    queue   <= queue_s;
    short   <= short_s;
    len     <= len_s;
  end
endmodule
