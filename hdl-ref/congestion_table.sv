`include "arnsim_assert.svh"

// Congestion table of adaptive routing on snooped congestion notifications (Gusat, Minkenberg
// and Rodríguez's charts): a CAM keyed by (destination, port), each entry with a TTL.
//
// Contract
// - Entry fields (the charts' congestion entry): fb_count 8 (notifications received for the key
//   since the entry was made, saturating at 255), feedback 6 (the last one's |Fb|), local 1 (the
//   last one came from this switch's own congestion point), congested 1 (the entry is live);
//   key: dest 16, port 8; ttl 24 (0 exactly when not congested).
// - Lookups, Lk of them, combinational from the current registers: lk_mask_o[k] has bit p set
//   when a congested entry holds (lk_dest_i[k], p) with p < Ports.
// - Next state, in this order:
//   1. with sn_en_i, the entry congested at the start of the cycle on (sn_dest_i, sn_port_i) is
//      hit (sn_hit_o): rewritten with fb_count + 1 (saturating), sn_fb_i, sn_local_i, ttl = Ttl;
//   2. every other congested entry counts ttl down; one at 1 is no longer congested;
//   3. with sn_en_i and no hit, the lowest-index entry not congested after step 2 takes the
//      snoop (fb_count = 1, ttl = Ttl); with none, the snoop is lost (sn_full_o).
//   An entry no longer congested keeps its other fields; only a write changes them.
// - count_o: congested entries of the current registers.
// - Inputs: every combination is legal; the inputs must be known.
// - Synchronous active-low reset: every field 0.
// Assertions at the end of the module; hdl-ref/arnsim_assert.svh has the macros.
// Parameters
// - Entries: CAM depth, 1..32. CntW = clog2(Entries + 1).
// - Lk: lookup ports, 1..192 (in cnm_unit.sv one per switch input and two per port for the
//   notifications of a cycle).
// - Ports: switch ports, the width of a mask, 1..64.
// - Ttl: cycles an entry stays congested after its last notification, 1..2^24-1.
// Twin: src/blocks/congestion_table.rs
module congestion_table #(
  parameter  int unsigned Entries = 8,
  parameter  int unsigned Lk      = 1,
  parameter  int unsigned Ports   = 8,
  parameter  int unsigned Ttl     = 64,
  localparam int unsigned CntW    = $clog2(Entries + 1)
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic [15:0]      lk_dest_i [Lk],
  input  logic             sn_en_i,
  input  logic [15:0]      sn_dest_i,
  input  logic [7:0]       sn_port_i,
  input  logic [5:0]       sn_fb_i,
  input  logic             sn_local_i,
  output logic [Ports-1:0] lk_mask_o [Lk],
  output logic             sn_hit_o,
  output logic             sn_full_o,
  output logic [CntW-1:0]  count_o
);
  logic        congested_q [Entries], congested_d [Entries];
  logic [15:0] dest_q      [Entries], dest_d      [Entries];
  logic [7:0]  port_q      [Entries], port_d      [Entries];
  logic [7:0]  fb_count_q  [Entries], fb_count_d  [Entries];
  logic [5:0]  feedback_q  [Entries], feedback_d  [Entries];
  logic        local_q     [Entries], local_d     [Entries];
  logic [23:0] ttl_q       [Entries], ttl_d       [Entries];

  // Lookups.
  always_comb begin
    for (int k = 0; k < Lk; k++) begin
      lk_mask_o[k] = '0;
      for (int e = 0; e < Entries; e++) begin
        for (int p = 0; p < Ports; p++) begin
          if (congested_q[e] && dest_q[e] == lk_dest_i[k] && port_q[e] == 8'(p)) begin
            lk_mask_o[k][p] = 1'b1;
          end
        end
      end
    end
  end

  always_comb begin
    count_o = '0;
    for (int e = 0; e < Entries; e++) count_o = count_o + CntW'(congested_q[e]);
  end

  // Next state: hit, ageing, allocation.
  always_comb begin
    logic hit [Entries];
    logic any_hit, found;
    int   slot;
    congested_d = congested_q;
    dest_d      = dest_q;
    port_d      = port_q;
    fb_count_d  = fb_count_q;
    feedback_d  = feedback_q;
    local_d     = local_q;
    ttl_d       = ttl_q;
    any_hit     = 1'b0;
    found       = 1'b0;
    slot        = 0;
    for (int e = 0; e < Entries; e++) begin
      hit[e] = 1'b0;
      if (sn_en_i && !any_hit && congested_q[e] && dest_q[e] == sn_dest_i
          && port_q[e] == sn_port_i) begin
        hit[e]  = 1'b1;
        any_hit = 1'b1;
      end
    end
    for (int e = 0; e < Entries; e++) begin
      if (congested_q[e] && !hit[e]) begin
        ttl_d[e]       = ttl_q[e] - 24'd1;
        congested_d[e] = (ttl_q[e] != 24'd1);
      end
    end
    for (int e = Entries - 1; e >= 0; e--) begin
      if (hit[e]) begin
        found = 1'b1;
        slot  = e;
      end
    end
    if (sn_en_i && !any_hit) begin
      for (int e = Entries - 1; e >= 0; e--) begin
        if (!congested_d[e]) begin
          found = 1'b1;
          slot  = e;
        end
      end
    end
    sn_hit_o  = any_hit;
    sn_full_o = sn_en_i && !found;
    if (sn_en_i && found) begin
      for (int e = 0; e < Entries; e++) begin
        if (e == slot) begin
          congested_d[e] = 1'b1;
          dest_d[e]      = sn_dest_i;
          port_d[e]      = sn_port_i;
          fb_count_d[e]  = any_hit ? ((fb_count_q[e] == 8'hFF) ? 8'hFF : fb_count_q[e] + 8'd1)
                                   : 8'd1;
          feedback_d[e]  = sn_fb_i;
          local_d[e]     = sn_local_i;
          ttl_d[e]       = 24'(Ttl);
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      for (int e = 0; e < Entries; e++) begin
        congested_q[e] <= 1'b0;
        dest_q[e]      <= '0;
        port_q[e]      <= '0;
        fb_count_q[e]  <= '0;
        feedback_q[e]  <= '0;
        local_q[e]     <= 1'b0;
        ttl_q[e]       <= '0;
      end
    end else begin
      congested_q <= congested_d;
      dest_q      <= dest_d;
      port_q      <= port_d;
      fb_count_q  <= fb_count_d;
      feedback_q  <= feedback_d;
      local_q     <= local_d;
      ttl_q       <= ttl_d;
    end
  end

  // Invariant terms, one bit per entry, reduced in the assertions below.
  logic [Entries-1:0] chk_congested_iff_ttl, chk_key_unique, chk_ttl_in_range;
  always_comb begin
    for (int e = 0; e < Entries; e++) begin
      chk_congested_iff_ttl[e] = congested_q[e] == (ttl_q[e] != '0);
      chk_ttl_in_range[e]      = 32'(ttl_q[e]) <= Ttl;
      chk_key_unique[e]        = 1'b1;
      for (int f = e + 1; f < Entries; f++) begin
        if (congested_q[e] && congested_q[f] && dest_q[e] == dest_q[f]
            && port_q[e] == port_q[f]) begin
          chk_key_unique[e] = 1'b0;
        end
      end
    end
  end
  // Parameters (checked at elaboration).
  // Entries is in 1..32.
  `ASSERT_INIT(a_param_entries, Entries >= 1 && Entries <= 32)
  // Lk is in 1..192.
  `ASSERT_INIT(a_param_lookups, Lk >= 1 && Lk <= 192)
  // Ports is in 1..64.
  `ASSERT_INIT(a_param_ports, Ports >= 1 && Ports <= 64)
  // Ttl is in 1..2^24-1 (the TTL counter is 24 bits).
  `ASSERT_INIT(a_param_ttl, Ttl >= 1 && Ttl <= 24'hFF_FFFF)
  // Inputs.
  // The snoop's fields are known.
  `ASSUME(m_snoop_known, !$isunknown({sn_en_i, sn_dest_i, sn_port_i, sn_fb_i, sn_local_i}))
  // Behaviour.
  // An entry is congested exactly while its TTL runs.
  `ASSERT(a_congested_iff_ttl, &chk_congested_iff_ttl)
  // A TTL never exceeds Ttl.
  `ASSERT(a_ttl_in_range, &chk_ttl_in_range)
  // No two congested entries hold one key.
  `ASSERT(a_key_unique, &chk_key_unique)
  // A snoop hits or is lost, never both, and is lost only when every entry stays congested.
  `ASSERT_NEVER(a_hit_or_full, sn_hit_o && sn_full_o)
  // The snoop is in the table in the next cycle, unless it was lost.
  `ASSERT(a_snoop_lands, sn_en_i && !sn_full_o |=> count_o != '0)
endmodule
