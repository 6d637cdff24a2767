// Testbench of arn_table.
// Stimulus columns: lk_en_i[p] lk_dest_i[p] lk_vc_i[p] (each for p = 0..Ports-1), then
// pr_en_i pr_dest_i pr_port_i pr_vc_i pr_arn_id_i pr_root_info_i pr_consumed_i pr_alt_port_i
// pr_add_i, then rm_en_i rm_dest_i rm_port_i rm_vc_i.
// Trace columns: lk_hit_o[p] lk_consumed_o[p] lk_idx_o[p] lk_port_o[p] lk_arn_id_o[p]
// lk_root_info_o[p] lk_alt_port_o[p] (each for p = 0..Ports-1), pr_hit_o pr_evict_o count_o
// full_o, then valid_q[e] dest_q[e] port_q[e] vc_q[e] arn_id_q[e] root_info_q[e] consumed_q[e]
// alt_port_q[e] ttl_q[e] (each for e = 0..Entries-1).
/* verilator lint_off BLKSEQ */
/* verilator lint_off UNUSEDSIGNAL */
module tb_arn_table #(
  parameter int unsigned Entries = 8,
  parameter int unsigned Ports   = 4,
  parameter int unsigned Ttl     = 64
) (
  input logic clk_i,
  input logic rst_ni
);
  localparam int unsigned IdxW = (Entries > 1) ? $clog2(Entries) : 1;
  localparam int unsigned CntW = $clog2(Entries + 1);
  localparam int unsigned NumIn = 3 * Ports + 13;

  // Names of the columns of one unpacked array of n elements, each preceded by a space when
  // the header is not empty yet.
  function automatic string trace_header();
    string s;
    s = columns("", "lk_hit_o", Ports);
    s = columns(s, "lk_consumed_o", Ports);
    s = columns(s, "lk_idx_o", Ports);
    s = columns(s, "lk_port_o", Ports);
    s = columns(s, "lk_arn_id_o", Ports);
    s = columns(s, "lk_root_info_o", Ports);
    s = columns(s, "lk_alt_port_o", Ports);
    s = {s, " pr_hit_o pr_evict_o count_o full_o"};
    s = columns(s, "valid_q", Entries);
    s = columns(s, "dest_q", Entries);
    s = columns(s, "port_q", Entries);
    s = columns(s, "vc_q", Entries);
    s = columns(s, "arn_id_q", Entries);
    s = columns(s, "root_info_q", Entries);
    s = columns(s, "consumed_q", Entries);
    s = columns(s, "alt_port_q", Entries);
    s = columns(s, "ttl_q", Entries);
    return s;
  endfunction

  // The header depends on the parameters: built at time 0; tb_common.svh writes it at the
  // reset edge.
  string TRACE_HEADER;
  initial TRACE_HEADER = trace_header();

  // DUT inputs (registered from the stimulus) and their read temporaries.
  logic        lk_en   [Ports], lk_en_s   [Ports];
  logic [15:0] lk_dest [Ports], lk_dest_s [Ports];
  logic [7:0]  lk_vc   [Ports], lk_vc_s   [Ports];
  logic        pr_en, pr_en_s;
  logic [15:0] pr_dest, pr_dest_s;
  logic [7:0]  pr_port, pr_port_s;
  logic [7:0]  pr_vc, pr_vc_s;
  logic [31:0] pr_arn_id, pr_arn_id_s;
  logic [7:0]  pr_root_info, pr_root_info_s;
  logic        pr_consumed, pr_consumed_s;
  logic [7:0]  pr_alt_port, pr_alt_port_s;
  logic        pr_add, pr_add_s;
  logic        rm_en, rm_en_s;
  logic [15:0] rm_dest, rm_dest_s;
  logic [7:0]  rm_port, rm_port_s;
  logic [7:0]  rm_vc, rm_vc_s;

  // DUT outputs.
  logic            lk_hit       [Ports];
  logic            lk_consumed  [Ports];
  logic [IdxW-1:0] lk_idx       [Ports];
  logic [7:0]      lk_port      [Ports];
  logic [31:0]     lk_arn_id    [Ports];
  logic [7:0]      lk_root_info [Ports];
  logic [7:0]      lk_alt_port  [Ports];
  logic            pr_hit, pr_evict, full;
  logic [CntW-1:0] count;

  arn_table #(.Entries(Entries), .Ports(Ports), .Ttl(Ttl)) u_dut (
    .clk_i, .rst_ni,
    .lk_en_i(lk_en), .lk_dest_i(lk_dest), .lk_vc_i(lk_vc),
    .pr_en_i(pr_en), .pr_dest_i(pr_dest), .pr_port_i(pr_port), .pr_vc_i(pr_vc),
    .pr_arn_id_i(pr_arn_id), .pr_root_info_i(pr_root_info), .pr_consumed_i(pr_consumed),
    .pr_alt_port_i(pr_alt_port), .pr_add_i(pr_add),
    .rm_en_i(rm_en), .rm_dest_i(rm_dest), .rm_port_i(rm_port), .rm_vc_i(rm_vc),
    .lk_hit_o(lk_hit), .lk_consumed_o(lk_consumed), .lk_idx_o(lk_idx), .lk_port_o(lk_port),
    .lk_arn_id_o(lk_arn_id), .lk_root_info_o(lk_root_info), .lk_alt_port_o(lk_alt_port),
    .pr_hit_o(pr_hit), .pr_evict_o(pr_evict), .count_o(count), .full_o(full)
  );

  `include "tb_common.svh"

  integer n_in;

  always @(posedge clk_i) begin
    if (rst_ni) begin
      $fwrite(trace_fd, "%0h", lk_hit[0]);
      for (int p = 1; p < Ports; p++) $fwrite(trace_fd, " %0h", lk_hit[p]);
      for (int p = 0; p < Ports; p++) $fwrite(trace_fd, " %0h", lk_consumed[p]);
      for (int p = 0; p < Ports; p++) $fwrite(trace_fd, " %0h", lk_idx[p]);
      for (int p = 0; p < Ports; p++) $fwrite(trace_fd, " %0h", lk_port[p]);
      for (int p = 0; p < Ports; p++) $fwrite(trace_fd, " %0h", lk_arn_id[p]);
      for (int p = 0; p < Ports; p++) $fwrite(trace_fd, " %0h", lk_root_info[p]);
      for (int p = 0; p < Ports; p++) $fwrite(trace_fd, " %0h", lk_alt_port[p]);
      $fwrite(trace_fd, " %0h %0h %0h %0h", pr_hit, pr_evict, count, full);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.valid_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.dest_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.port_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.vc_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.arn_id_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.root_info_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.consumed_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.alt_port_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.ttl_q[e]);
      $fwrite(trace_fd, "\n");
    end
    n_in = 0;
    for (int p = 0; p < Ports; p++) n_in += $fscanf(stim_fd, "%h", lk_en_s[p]);
    for (int p = 0; p < Ports; p++) n_in += $fscanf(stim_fd, "%h", lk_dest_s[p]);
    for (int p = 0; p < Ports; p++) n_in += $fscanf(stim_fd, "%h", lk_vc_s[p]);
    n_in += $fscanf(stim_fd, "%h %h %h %h %h %h %h %h %h", pr_en_s, pr_dest_s, pr_port_s,
                    pr_vc_s, pr_arn_id_s, pr_root_info_s, pr_consumed_s, pr_alt_port_s,
                    pr_add_s);
    n_in += $fscanf(stim_fd, "%h %h %h %h\n", rm_en_s, rm_dest_s, rm_port_s, rm_vc_s);
    if (n_in != NumIn) $finish;
    lk_en        <= lk_en_s;
    lk_dest      <= lk_dest_s;
    lk_vc        <= lk_vc_s;
    pr_en        <= pr_en_s;
    pr_dest      <= pr_dest_s;
    pr_port      <= pr_port_s;
    pr_vc        <= pr_vc_s;
    pr_arn_id    <= pr_arn_id_s;
    pr_root_info <= pr_root_info_s;
    pr_consumed  <= pr_consumed_s;
    pr_alt_port  <= pr_alt_port_s;
    pr_add       <= pr_add_s;
    rm_en        <= rm_en_s;
    rm_dest      <= rm_dest_s;
    rm_port      <= rm_port_s;
    rm_vc        <= rm_vc_s;
  end
endmodule
