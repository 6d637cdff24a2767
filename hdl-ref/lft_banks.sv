`include "arnsim_assert.svh"

// Interleaved linear forwarding table: one access returns every routing option of a destination.
//
// Contract
// - The table holds Rows * 2^Lmc linear entries (LIDs 0 .. Rows*2^Lmc-1) of 8-bit output ports,
//   organised as Banks = 2^Lmc banks of Rows rows: LID l lives in bank l[Lmc-1:0], row l >> Lmc.
//   The LIDs d .. d+Banks-1 of one end node (d with the low Lmc bits clear) share a row.
// - Read port, latency 1: a request (rd_en_i, rd_dlid_i) in cycle t reads the whole row of
//   rd_dlid_i in every bank; the result is registered and shows in cycle t+1 on rd_valid_o,
//   rd_dlid_o (pipeline tag), rd_ports_o (option b in bits [8b+7:8b]) and rd_mask_o.
//   When rd_en_i is low, rd_valid_q clears and the other output registers hold.
// - rd_mask_o: a row >= Rows gives mask 0 and 8'hFF on every option; otherwise option b is
//   usable when its port is not 8'hFF and, for b > 0, rd_dlid_i[0] is set (adaptive routing;
//   LSB 0 asks for the deterministic option 0 only).
// - Write port (linear view of the subnet manager): wr_en_i writes wr_port_i at wr_lid_i
//   (bank wr_lid_i[Lmc-1:0], row wr_lid_i >> Lmc); writes to a row >= Rows are ignored.
//   Read-during-write of the same entry returns the old data (read-first); the write is
//   visible to the next cycle's read.
// - Inputs: every combination is legal (reads and writes beyond the table included, a read and
//   a write in the same cycle); the inputs must be known (m_inputs_known).
// - Synchronous active-low reset: rd_valid_q = 0, rd_dlid_q = 0, rd_ports_q = all ones,
//   rd_mask_q = 0, every memory entry = 8'hFF (no route).
// Assertions at the end of the module; hdl-ref/arnsim_assert.svh has the macros.
// Parameters
// - Lmc: LID Mask Control, 0..4 (Banks = 2^Lmc options per access, rd_ports_o up to 128 bits).
// - Rows: rows per bank, 1..49152 (one per unicast LID at Lmc 0), Rows * 2^Lmc <= 65536 (the
//   16-bit LID's range). RowW = max(1, clog2 Rows).
// Twin: src/blocks/lft_banks.rs
module lft_banks #(
  parameter  int unsigned Lmc   = 1,
  parameter  int unsigned Rows  = 64,
  localparam int unsigned Banks = 1 << Lmc,
  localparam int unsigned RowW  = (Rows > 1) ? $clog2(Rows) : 1,
  localparam int unsigned BankW = (Lmc > 0) ? Lmc : 1
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 rd_en_i,
  input  logic [15:0]          rd_dlid_i,
  input  logic                 wr_en_i,
  input  logic [15:0]          wr_lid_i,
  input  logic [7:0]           wr_port_i,
  output logic                 rd_valid_o,
  output logic [15:0]          rd_dlid_o,
  output logic [8*Banks-1:0]   rd_ports_o,
  output logic [Banks-1:0]     rd_mask_o
);
  localparam logic [7:0] NoRoute = 8'hFF;

  // The banks side by side: bank b is byte lane b of row word mem_q[r], so
  // mem_q[r][8*b +: 8] is the entry of LID r * Banks + b, and one row read returns every option.
  logic [8*Banks-1:0] mem_q [Rows];

  logic               rd_valid_q, rd_valid_d;
  logic [15:0]        rd_dlid_q, rd_dlid_d;
  logic [8*Banks-1:0] rd_ports_q, rd_ports_d;
  logic [Banks-1:0]   rd_mask_q, rd_mask_d;

  // Write port of the memory: the next value of one entry.
  logic             mem_we;
  logic [BankW-1:0] mem_bank;
  logic [RowW-1:0]  mem_row;
  logic [7:0]       mem_wdata;
  // Row of the read request inside a bank (meaningful when rd_dlid_i is in range).
  logic [RowW-1:0]  rd_row;

  // Row of a LID (16 bits, may be out of range) and its bank.
  function automatic logic [15:0] row_of(logic [15:0] lid);
    return lid >> Lmc;
  endfunction

  function automatic logic [BankW-1:0] bank_of(logic [15:0] lid);
    return BankW'(lid & 16'(Banks - 1));
  endfunction

  function automatic logic in_range(logic [15:0] lid);
    return 32'(row_of(lid)) < Rows;
  endfunction

  // Usable options of a read that returned ports; adaptive is the DLID's LSB.
  function automatic logic [Banks-1:0] mask_of(logic adaptive, logic [8*Banks-1:0] ports);
    logic [Banks-1:0] m;
    for (int b = 0; b < Banks; b++) begin
      m[b] = (ports[8*b +: 8] != NoRoute) && (b == 0 || adaptive);
    end
    return m;
  endfunction

  assign rd_row    = RowW'(row_of(rd_dlid_i));
  assign mem_we    = wr_en_i && in_range(wr_lid_i);
  assign mem_bank  = bank_of(wr_lid_i);
  assign mem_row   = RowW'(row_of(wr_lid_i));
  assign mem_wdata = wr_port_i;

  always_comb begin
    rd_valid_d = rd_valid_q;
    rd_dlid_d  = rd_dlid_q;
    rd_ports_d = rd_ports_q;
    rd_mask_d  = rd_mask_q;

    // Read (read-first: mem_q is the memory before this cycle's write).
    rd_valid_d = rd_en_i;
    if (rd_en_i) begin
      rd_dlid_d  = rd_dlid_i;
      rd_ports_d = '1;
      if (in_range(rd_dlid_i)) begin
        rd_ports_d = mem_q[rd_row];
      end
      rd_mask_d = mask_of(rd_dlid_i[0], rd_ports_d);
    end
  end

  assign rd_valid_o = rd_valid_q;
  assign rd_dlid_o  = rd_dlid_q;
  assign rd_ports_o = rd_ports_q;
  assign rd_mask_o  = rd_mask_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rd_valid_q <= 1'b0;
      rd_dlid_q  <= '0;
      rd_ports_q <= '1;
      rd_mask_q  <= '0;
      mem_q      <= '{default: '1};
    end else begin
      rd_valid_q <= rd_valid_d;
      rd_dlid_q  <= rd_dlid_d;
      rd_ports_q <= rd_ports_d;
      rd_mask_q  <= rd_mask_d;
      if (mem_we) begin
        mem_q[mem_row][8*mem_bank +: 8] <= mem_wdata;
      end
    end
  end

  // Parameters (checked at elaboration).
  // Lmc is in 0..4 (up to 16 options per access).
  `ASSERT_INIT(a_param_lmc, Lmc <= 4)
  // Rows is in 1..49152 and the table covers at most the 65,536 values of a 16-bit LID.
  `ASSERT_INIT(a_param_rows, Rows >= 1 && Rows <= 49152 && (Rows << Lmc) <= 65536)

  // Input contract.
  // Every input is known outside reset.
  `ASSUME(m_inputs_known, !$isunknown({rd_en_i, rd_dlid_i, wr_en_i, wr_lid_i, wr_port_i}))

  // Outputs.
  // Every output is known outside reset.
  `ASSERT_KNOWN(a_outputs_known, {rd_valid_o, rd_dlid_o, rd_ports_o, rd_mask_o})

  // Invariants.
  // rd_mask_o is the mask rule applied to the registered DLID and ports.
  `ASSERT(a_mask_rule, rd_mask_q == mask_of(rd_dlid_q[0], rd_ports_q))
  // A DLID beyond the table reads no route on every option.
  `ASSERT(a_out_of_range_no_route, in_range(rd_dlid_q) || rd_ports_q == '1)
  // A deterministic read (DLID LSB 0) exposes at most option 0.
  `ASSERT(a_deterministic_single, rd_dlid_q[0] || (rd_mask_q >> 1) == '0)

  // Read port timing.
  // rd_valid_o is the read enable of the cycle before.
  `ASSERT(a_valid_follows_en, 1'b1 |=> rd_valid_o == $past(rd_en_i))
  // A read is tagged with its DLID one cycle later.
  `ASSERT(a_read_tag, rd_en_i |=> rd_dlid_o == $past(rd_dlid_i))
  // Without a read the output registers hold.
  `ASSERT(a_idle_holds, !rd_en_i |=> $stable(rd_dlid_o) && $stable(rd_ports_o)
                                     && $stable(rd_mask_o))

`ifndef SYNTHESIS
  // The row an in-table read saw (the memory before the cycle's write), and the entry an
  // in-table write named, kept one cycle for the two properties below.
  logic               chk_rd_q, chk_wr_q;
  logic [8*Banks-1:0] chk_rd_row_q;
  logic [RowW-1:0]    chk_wr_row_q;
  logic [BankW-1:0]   chk_wr_bank_q;
  logic [7:0]         chk_wr_port_q, chk_wr_entry;
  // The entry the last write named, as the memory holds it now.
  assign chk_wr_entry = mem_q[chk_wr_row_q][8*chk_wr_bank_q +: 8];
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      chk_rd_q      <= 1'b0;
      chk_wr_q      <= 1'b0;
      chk_rd_row_q  <= '0;
      chk_wr_row_q  <= '0;
      chk_wr_bank_q <= '0;
      chk_wr_port_q <= '0;
    end else begin
      chk_rd_q      <= rd_en_i && in_range(rd_dlid_i);
      chk_rd_row_q  <= mem_q[rd_row];
      chk_wr_q      <= wr_en_i && in_range(wr_lid_i);
      chk_wr_row_q  <= RowW'(row_of(wr_lid_i));
      chk_wr_bank_q <= bank_of(wr_lid_i);
      chk_wr_port_q <= wr_port_i;
    end
  end
`endif
  // An in-table read returns the row as it was before the same cycle's write (read-first).
  `ASSERT(a_read_first, chk_rd_q |-> rd_ports_o == chk_rd_row_q)
  // An in-table write lands in its bank and row: the next cycle the entry holds the port.
  `ASSERT(a_write_lands, chk_wr_q |-> chk_wr_entry == chk_wr_port_q)
endmodule
