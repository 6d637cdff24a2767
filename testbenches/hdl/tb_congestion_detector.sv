// Testbench of congestion_detector: stimulus columns voq_occ_i[0..P-1] head_valid_i[..]
// head_dest_i[..] head_vc_i[..] head_adapted_i[..] head_fc_i[..] (array by array); trace columns
// root_o root_det_o root_rel_o root_in_o root_dest_o root_vc_o root_adapted_o crossed_o state_q
// crt_q over_q root_in_q.
/* verilator lint_off BLKSEQ */
/* verilator lint_off UNUSEDSIGNAL */
module tb_congestion_detector #(
  parameter int unsigned P     = 4,
  parameter int unsigned Hcdth = 80,
  parameter int unsigned Lcdth = 63,
  parameter int unsigned Fcth  = 15,
  parameter int unsigned Crt   = 16
) (
  input logic clk_i,
  input logic rst_ni
);
  localparam int unsigned IdxW = (P > 1) ? $clog2(P) : 1;
  localparam int unsigned CntW = $clog2(P + 1);
  localparam string TRACE_HEADER =
      "root_o root_det_o root_rel_o root_in_o root_dest_o root_vc_o root_adapted_o crossed_o state_q crt_q over_q root_in_q";

  logic [15:0] voq_occ      [P], voq_occ_s      [P];
  logic        head_valid   [P], head_valid_s   [P];
  logic [15:0] head_dest    [P], head_dest_s    [P];
  logic [7:0]  head_vc      [P], head_vc_s      [P];
  logic        head_adapted [P], head_adapted_s [P];
  logic [15:0] head_fc      [P], head_fc_s      [P];
  logic            root, root_det, root_rel, root_adapted;
  logic [IdxW-1:0] root_in;
  logic [15:0]     root_dest;
  logic [7:0]      root_vc;
  logic [CntW-1:0] crossed;
  integer          n_fields;

  congestion_detector #(
    .P(P), .Hcdth(Hcdth), .Lcdth(Lcdth), .Fcth(Fcth), .Crt(Crt)
  ) u_dut (
    .clk_i, .rst_ni,
    .voq_occ_i(voq_occ), .head_valid_i(head_valid), .head_dest_i(head_dest),
    .head_vc_i(head_vc), .head_adapted_i(head_adapted), .head_fc_i(head_fc),
    .root_o(root), .root_det_o(root_det), .root_rel_o(root_rel), .root_in_o(root_in),
    .root_dest_o(root_dest), .root_vc_o(root_vc), .root_adapted_o(root_adapted),
    .crossed_o(crossed)
  );

  `include "tb_common.svh"

  always @(posedge clk_i) begin
    if (rst_ni) begin
      $fwrite(trace_fd, "%0h %0h %0h %0h %0h %0h %0h %0h %0h %0h %0h %0h\n",
              root, root_det, root_rel, root_in, root_dest, root_vc, root_adapted, crossed,
              u_dut.state_q, u_dut.crt_q, u_dut.over_q, u_dut.root_in_q);
    end
    n_fields = 0;
    for (int i = 0; i < P; i++) n_fields += $fscanf(stim_fd, "%h", voq_occ_s[i]);
    for (int i = 0; i < P; i++) n_fields += $fscanf(stim_fd, "%h", head_valid_s[i]);
    for (int i = 0; i < P; i++) n_fields += $fscanf(stim_fd, "%h", head_dest_s[i]);
    for (int i = 0; i < P; i++) n_fields += $fscanf(stim_fd, "%h", head_vc_s[i]);
    for (int i = 0; i < P; i++) n_fields += $fscanf(stim_fd, "%h", head_adapted_s[i]);
    for (int i = 0; i < P; i++) n_fields += $fscanf(stim_fd, "%h", head_fc_s[i]);
    if (n_fields != 6 * P) $finish;
    voq_occ      <= voq_occ_s;
    head_valid   <= head_valid_s;
    head_dest    <= head_dest_s;
    head_vc      <= head_vc_s;
    head_adapted <= head_adapted_s;
    head_fc      <= head_fc_s;
  end
endmodule
