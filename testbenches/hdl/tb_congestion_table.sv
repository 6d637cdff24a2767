// Testbench of congestion_table.
// Stimulus columns: lk_dest_i[k] (k = 0..Lk-1), then sn_en_i sn_dest_i sn_port_i sn_fb_i
// sn_local_i.
// Trace columns: lk_mask_o[k] (k = 0..Lk-1), sn_hit_o sn_full_o count_o, then congested_q[e]
// dest_q[e] port_q[e] fb_count_q[e] feedback_q[e] local_q[e] ttl_q[e] (each for
// e = 0..Entries-1).
/* verilator lint_off BLKSEQ */
/* verilator lint_off UNUSEDSIGNAL */
module tb_congestion_table #(
  parameter int unsigned Entries = 8,
  parameter int unsigned Lk      = 1,
  parameter int unsigned Ports   = 8,
  parameter int unsigned Ttl     = 64
) (
  input logic clk_i,
  input logic rst_ni
);
  localparam int unsigned CntW  = $clog2(Entries + 1);
  localparam int unsigned NumIn = Lk + 5;

  function automatic string trace_header();
    string s;
    s = columns("", "lk_mask_o", Lk);
    s = {s, " sn_hit_o sn_full_o count_o"};
    s = columns(s, "congested_q", Entries);
    s = columns(s, "dest_q", Entries);
    s = columns(s, "port_q", Entries);
    s = columns(s, "fb_count_q", Entries);
    s = columns(s, "feedback_q", Entries);
    s = columns(s, "local_q", Entries);
    s = columns(s, "ttl_q", Entries);
    return s;
  endfunction

  string TRACE_HEADER;
  initial TRACE_HEADER = trace_header();

  logic [15:0] lk_dest [Lk], lk_dest_s [Lk];
  logic        sn_en, sn_en_s;
  logic [15:0] sn_dest, sn_dest_s;
  logic [7:0]  sn_port, sn_port_s;
  logic [5:0]  sn_fb, sn_fb_s;
  logic        sn_local, sn_local_s;

  logic [Ports-1:0] lk_mask [Lk];
  logic             sn_hit, sn_full;
  logic [CntW-1:0]  count;

  congestion_table #(.Entries(Entries), .Lk(Lk), .Ports(Ports), .Ttl(Ttl)) u_dut (
    .clk_i, .rst_ni,
    .lk_dest_i(lk_dest),
    .sn_en_i(sn_en), .sn_dest_i(sn_dest), .sn_port_i(sn_port), .sn_fb_i(sn_fb),
    .sn_local_i(sn_local),
    .lk_mask_o(lk_mask), .sn_hit_o(sn_hit), .sn_full_o(sn_full), .count_o(count)
  );

  `include "tb_common.svh"

  integer n_in;

  always @(posedge clk_i) begin
    if (rst_ni) begin
      $fwrite(trace_fd, "%0h", lk_mask[0]);
      for (int k = 1; k < Lk; k++) $fwrite(trace_fd, " %0h", lk_mask[k]);
      $fwrite(trace_fd, " %0h %0h %0h", sn_hit, sn_full, count);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.congested_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.dest_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.port_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.fb_count_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.feedback_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.local_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.ttl_q[e]);
      $fwrite(trace_fd, "\n");
    end
    n_in = 0;
    for (int k = 0; k < Lk; k++) n_in += $fscanf(stim_fd, "%h", lk_dest_s[k]);
    n_in += $fscanf(stim_fd, "%h %h %h %h %h\n", sn_en_s, sn_dest_s, sn_port_s, sn_fb_s,
                    sn_local_s);
    if (n_in != NumIn) $finish;
    lk_dest  <= lk_dest_s;
    sn_en    <= sn_en_s;
    sn_dest  <= sn_dest_s;
    sn_port  <= sn_port_s;
    sn_fb    <= sn_fb_s;
    sn_local <= sn_local_s;
  end
endmodule
