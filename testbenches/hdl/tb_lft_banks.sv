// Testbench of lft_banks: stimulus columns rd_en_i rd_dlid_i wr_en_i wr_lid_i wr_port_i;
// trace columns rd_valid_o rd_dlid_o rd_ports_o rd_mask_o rd_valid_q rd_dlid_q rd_ports_q rd_mask_q.
/* verilator lint_off BLKSEQ */
/* verilator lint_off UNUSEDSIGNAL */
module tb_lft_banks #(
  parameter int unsigned Lmc  = 1,
  parameter int unsigned Rows = 64
) (
  input logic clk_i,
  input logic rst_ni
);
  localparam int unsigned Banks = 1 << Lmc;
  localparam string TRACE_HEADER =
    "rd_valid_o rd_dlid_o rd_ports_o rd_mask_o rd_valid_q rd_dlid_q rd_ports_q rd_mask_q";

  logic               rd_en, rd_en_s;
  logic [15:0]        rd_dlid, rd_dlid_s;
  logic               wr_en, wr_en_s;
  logic [15:0]        wr_lid, wr_lid_s;
  logic [7:0]         wr_port, wr_port_s;
  logic               rd_valid;
  logic [15:0]        rd_dlid_out;
  logic [8*Banks-1:0] rd_ports;
  logic [Banks-1:0]   rd_mask;

  lft_banks #(.Lmc(Lmc), .Rows(Rows)) u_dut (
    .clk_i, .rst_ni,
    .rd_en_i(rd_en), .rd_dlid_i(rd_dlid),
    .wr_en_i(wr_en), .wr_lid_i(wr_lid), .wr_port_i(wr_port),
    .rd_valid_o(rd_valid), .rd_dlid_o(rd_dlid_out), .rd_ports_o(rd_ports), .rd_mask_o(rd_mask)
  );

  `include "tb_common.svh"

  always @(posedge clk_i) begin
    if (rst_ni) $fwrite(trace_fd, "%0h %0h %0h %0h %0h %0h %0h %0h\n",
                        rd_valid, rd_dlid_out, rd_ports, rd_mask,
                        u_dut.rd_valid_q, u_dut.rd_dlid_q, u_dut.rd_ports_q, u_dut.rd_mask_q);
    if ($fscanf(stim_fd, "%h %h %h %h %h\n", rd_en_s, rd_dlid_s, wr_en_s, wr_lid_s, wr_port_s)
        != 5) $finish;
    rd_en   <= rd_en_s;
    rd_dlid <= rd_dlid_s;
    wr_en   <= wr_en_s;
    wr_lid  <= wr_lid_s;
    wr_port <= wr_port_s;
  end
endmodule
