`include "arnsim_assert.svh"

// Port route cache (PRC) of an input port under flow routing (Birk and Zdornov, section 4): a CAM
// of the flows whose setup packet chose an alternate port here, keyed by the globally unique
// connection identifier GCID = (SLID, DLID, CID).
//
// Contract
// - Entry fields: valid 1, slid 16, dlid 16, cid 16, port 8.
// - Lookup, combinational from the current registers: lk_hit_o = lk_en_i and a valid entry holds
//   (lk_slid_i, lk_dlid_i, lk_cid_i); lk_port_o is its port, 0 without a hit.
// - Next state, one command a cycle (cmd_op_i):
//   0 idle;
//   1 insert: a valid entry on the command's GCID takes cmd_port_i (cmd_hit_o); otherwise the
//     lowest-index invalid entry takes the GCID and the port; with none, nothing is stored
//     (cmd_full_o);
//   2 erase: the valid entry on the GCID, if any, becomes invalid (cmd_hit_o);
//   3 is not a command (m_cmd_op).
//   An invalid entry keeps its other fields until written.
// - count_o: valid entries of the current registers.
// - Synchronous active-low reset: every field 0.
// Assertions at the end of the module; hdl-ref/arnsim_assert.svh has the macros.
// Parameters
// - Entries: CAM depth, 1..64. CntW = clog2(Entries + 1).
// Twin: src/blocks/route_cache.rs
module route_cache #(
  parameter  int unsigned Entries = 8,
  localparam int unsigned CntW    = $clog2(Entries + 1)
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic            lk_en_i,
  input  logic [15:0]     lk_slid_i,
  input  logic [15:0]     lk_dlid_i,
  input  logic [15:0]     lk_cid_i,
  input  logic [1:0]      cmd_op_i,
  input  logic [15:0]     cmd_slid_i,
  input  logic [15:0]     cmd_dlid_i,
  input  logic [15:0]     cmd_cid_i,
  input  logic [7:0]      cmd_port_i,
  output logic            lk_hit_o,
  output logic [7:0]      lk_port_o,
  output logic            cmd_hit_o,
  output logic            cmd_full_o,
  output logic [CntW-1:0] count_o
);
  localparam logic [1:0] OpInsert = 2'd1, OpErase = 2'd2;

  logic        valid_q [Entries], valid_d [Entries];
  logic [15:0] slid_q  [Entries], slid_d  [Entries];
  logic [15:0] dlid_q  [Entries], dlid_d  [Entries];
  logic [15:0] cid_q   [Entries], cid_d   [Entries];
  logic [7:0]  port_q  [Entries], port_d  [Entries];

  // Lookup and occupancy.
  always_comb begin
    lk_hit_o  = 1'b0;
    lk_port_o = '0;
    count_o   = '0;
    for (int e = 0; e < Entries; e++) begin
      if (lk_en_i && valid_q[e] && slid_q[e] == lk_slid_i && dlid_q[e] == lk_dlid_i
          && cid_q[e] == lk_cid_i) begin
        lk_hit_o  = 1'b1;
        lk_port_o = port_q[e];
      end
      count_o = count_o + CntW'(valid_q[e]);
    end
  end

  // The command.
  always_comb begin
    logic found, free;
    int   slot, hole;
    valid_d    = valid_q;
    slid_d     = slid_q;
    dlid_d     = dlid_q;
    cid_d      = cid_q;
    port_d     = port_q;
    found      = 1'b0;
    free       = 1'b0;
    slot       = 0;
    hole       = 0;
    for (int e = Entries - 1; e >= 0; e--) begin
      if (valid_q[e] && slid_q[e] == cmd_slid_i && dlid_q[e] == cmd_dlid_i
          && cid_q[e] == cmd_cid_i) begin
        found = 1'b1;
        slot  = e;
      end
      if (!valid_q[e]) begin
        free = 1'b1;
        hole = e;
      end
    end
    cmd_hit_o  = (cmd_op_i == OpInsert || cmd_op_i == OpErase) && found;
    cmd_full_o = cmd_op_i == OpInsert && !found && !free;
    for (int e = 0; e < Entries; e++) begin
      if (cmd_op_i == OpInsert && (found ? e == slot : (free && e == hole))) begin
        valid_d[e] = 1'b1;
        slid_d[e]  = cmd_slid_i;
        dlid_d[e]  = cmd_dlid_i;
        cid_d[e]   = cmd_cid_i;
        port_d[e]  = cmd_port_i;
      end
      if (cmd_op_i == OpErase && found && e == slot) valid_d[e] = 1'b0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      for (int e = 0; e < Entries; e++) begin
        valid_q[e] <= 1'b0;
        slid_q[e]  <= '0;
        dlid_q[e]  <= '0;
        cid_q[e]   <= '0;
        port_q[e]  <= '0;
      end
    end else begin
      valid_q <= valid_d;
      slid_q  <= slid_d;
      dlid_q  <= dlid_d;
      cid_q   <= cid_d;
      port_q  <= port_d;
    end
  end

  // Invariant terms, one bit per entry, reduced in the assertions below.
  logic [Entries-1:0] chk_unique;
  logic               chk_insert_q, chk_erase_q;
  logic [55:0]        chk_cmd_q;
  logic [Entries-1:0] chk_holds, chk_erased;
  always_comb begin
    for (int e = 0; e < Entries; e++) begin
      chk_unique[e] = 1'b1;
      for (int f = e + 1; f < Entries; f++) begin
        if (valid_q[e] && valid_q[f] && {slid_q[e], dlid_q[e], cid_q[e]}
            == {slid_q[f], dlid_q[f], cid_q[f]}) begin
          chk_unique[e] = 1'b0;
        end
      end
      chk_holds[e]  = valid_q[e] && {slid_q[e], dlid_q[e], cid_q[e], port_q[e]} == chk_cmd_q;
      chk_erased[e] = valid_q[e] && {slid_q[e], dlid_q[e], cid_q[e]} == chk_cmd_q[55:8];
    end
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      chk_insert_q <= 1'b0;
      chk_erase_q  <= 1'b0;
      chk_cmd_q    <= '0;
    end else begin
      chk_insert_q <= cmd_op_i == OpInsert && !cmd_full_o;
      chk_erase_q  <= cmd_op_i == OpErase;
      chk_cmd_q    <= {cmd_slid_i, cmd_dlid_i, cmd_cid_i, cmd_port_i};
    end
  end
  // Parameters (checked at elaboration).
  // Entries is in 1..64.
  `ASSERT_INIT(a_param_entries, Entries >= 1 && Entries <= 64)
  // Inputs.
  // The command is idle, insert or erase.
  `ASSUME(m_cmd_op, cmd_op_i != 2'd3)
  // Behaviour.
  // At most one valid entry per GCID.
  `ASSERT(a_gcid_unique, &chk_unique)
  // An insert that found room leaves an entry holding its GCID and port.
  `ASSERT(a_insert_lands, !chk_insert_q || |chk_holds)
  // An erase leaves no entry on its GCID.
  `ASSERT(a_erase_frees, !chk_erase_q || !(|chk_erased))
  // An insert is lost only when every entry is valid.
  `ASSERT(a_full_when_full, !cmd_full_o || 32'(count_o) == Entries)
  // A lookup's port is 0 without a hit.
  `ASSERT(a_miss_port_zero, lk_hit_o || lk_port_o == '0)
endmodule
