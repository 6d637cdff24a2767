// Testbench of route_cache.
// Stimulus columns: lk_en_i lk_slid_i lk_dlid_i lk_cid_i cmd_op_i cmd_slid_i cmd_dlid_i cmd_cid_i
// cmd_port_i.
// Trace columns: lk_hit_o lk_port_o cmd_hit_o cmd_full_o count_o, then valid_q[e] slid_q[e]
// dlid_q[e] cid_q[e] port_q[e] (each for e = 0..Entries-1).
/* verilator lint_off BLKSEQ */
/* verilator lint_off UNUSEDSIGNAL */
module tb_route_cache #(
  parameter int unsigned Entries = 8
) (
  input logic clk_i,
  input logic rst_ni
);
  localparam int unsigned CntW = $clog2(Entries + 1);

  function automatic string trace_header();
    string s;
    s = "lk_hit_o lk_port_o cmd_hit_o cmd_full_o count_o";
    s = columns(s, "valid_q", Entries);
    s = columns(s, "slid_q", Entries);
    s = columns(s, "dlid_q", Entries);
    s = columns(s, "cid_q", Entries);
    s = columns(s, "port_q", Entries);
    return s;
  endfunction

  string TRACE_HEADER;
  initial TRACE_HEADER = trace_header();

  logic        lk_en, lk_en_s;
  logic [15:0] lk_slid, lk_slid_s, lk_dlid, lk_dlid_s, lk_cid, lk_cid_s;
  logic [1:0]  cmd_op, cmd_op_s;
  logic [15:0] cmd_slid, cmd_slid_s, cmd_dlid, cmd_dlid_s, cmd_cid, cmd_cid_s;
  logic [7:0]  cmd_port, cmd_port_s;
  logic            lk_hit, cmd_hit, cmd_full;
  logic [7:0]      lk_port;
  logic [CntW-1:0] count;

  route_cache #(.Entries(Entries)) u_dut (
    .clk_i, .rst_ni,
    .lk_en_i(lk_en), .lk_slid_i(lk_slid), .lk_dlid_i(lk_dlid), .lk_cid_i(lk_cid),
    .cmd_op_i(cmd_op), .cmd_slid_i(cmd_slid), .cmd_dlid_i(cmd_dlid), .cmd_cid_i(cmd_cid),
    .cmd_port_i(cmd_port),
    .lk_hit_o(lk_hit), .lk_port_o(lk_port), .cmd_hit_o(cmd_hit), .cmd_full_o(cmd_full),
    .count_o(count)
  );

  `include "tb_common.svh"

  always @(posedge clk_i) begin
    if (rst_ni) begin
      $fwrite(trace_fd, "%0h %0h %0h %0h %0h", lk_hit, lk_port, cmd_hit, cmd_full, count);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.valid_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.slid_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.dlid_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.cid_q[e]);
      for (int e = 0; e < Entries; e++) $fwrite(trace_fd, " %0h", u_dut.port_q[e]);
      $fwrite(trace_fd, "\n");
    end
    if ($fscanf(stim_fd, "%h %h %h %h %h %h %h %h %h\n", lk_en_s, lk_slid_s, lk_dlid_s, lk_cid_s,
                cmd_op_s, cmd_slid_s, cmd_dlid_s, cmd_cid_s, cmd_port_s) != 9) $finish;
    lk_en    <= lk_en_s;
    lk_slid  <= lk_slid_s;
    lk_dlid  <= lk_dlid_s;
    lk_cid   <= lk_cid_s;
    cmd_op   <= cmd_op_s;
    cmd_slid <= cmd_slid_s;
    cmd_dlid <= cmd_dlid_s;
    cmd_cid  <= cmd_cid_s;
    cmd_port <= cmd_port_s;
  end
endmodule
