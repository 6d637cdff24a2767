`include "arnsim_assert.svh"

// ARN table: a CAM of congestion roots (or ARNs received about them), each entry with a TTL.
//
// Contract
// - Entry fields (table 2 of Rocher-Gonzalez et al.): dest 16, port 8, vc 8, arn_id 32, root_info 8, consumed 1;
//   model fields: valid 1, alt_port 8 (alternative output port chosen when consumed), ttl 24.
// - Lookups, one per input port p, combinational from the current registers: an entry matches
//   when valid_q and (dest_q, vc_q) == (lk_dest_i[p], lk_vc_i[p]). lk_hit_o[p] = lk_en_i[p] and
//   some entry matches; lk_consumed_o[p] = ... and a consumed entry matches. The selected entry
//   (lk_idx_o[p]) is the lowest-index consumed match if any, else the lowest-index match; the
//   field outputs show it. With no hit, lk_idx_o and the field outputs are 0.
// - Next state, in this order:
//   1. ageing: every valid entry counts ttl_q down; one at ttl_q == 1 expires (valid_d = 0).
//   2. remove: with rm_en_i, every valid entry matching (rm_dest_i, rm_port_i, rm_vc_i) is
//      invalidated.
//   3. processARN: with pr_en_i, an entry "exists" when it is valid_q, not removed by step 2,
//      and (dest, port, vc, arn_id) all equal the command's. If one exists it is refreshed
//      (ttl_d = Ttl, valid_d = 1, winning over expiry) and pr_hit_o is set. Otherwise every
//      valid entry matching (dest, port, vc) is invalidated (the root moved) and, with pr_add_i,
//      the new entry is written (ttl = Ttl) into the lowest-index slot free after steps 1-3; if
//      none is free, the valid entry with the smallest ttl_q is evicted (ties: lowest index)
//      and pr_evict_o is set.
//   Invalidated entries keep their other fields; only a write changes them.
// - count_o: number of valid_q entries; full_o: count_o == Entries.
// - Inputs: every combination is legal (commands on any key, a remove and a processARN in the
//   same cycle, fields of disabled commands and lookups are ignored); the inputs must be known
//   (m_inputs_known).
// - Synchronous active-low reset: every entry invalid, every field 0.
// Assertions at the end of the module; hdl-ref/arnsim_assert.svh has the macros.
// Parameters
// - Entries: CAM depth, 1..64. IdxW = max(1, clog2 Entries), CntW = clog2(Entries + 1).
// - Ports: lookup ports (switch input ports), 1..64.
// - Ttl: cycles an entry stays visible after its last insert or refresh, 1..2^24-1.
// Twin: src/blocks/arn_table.rs
module arn_table #(
  parameter  int unsigned Entries = 8,
  parameter  int unsigned Ports   = 4,
  parameter  int unsigned Ttl     = 64,
  localparam int unsigned IdxW    = (Entries > 1) ? $clog2(Entries) : 1,
  localparam int unsigned CntW    = $clog2(Entries + 1)
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  // Lookups, one per input port.
  input  logic            lk_en_i        [Ports],
  input  logic [15:0]     lk_dest_i      [Ports],
  input  logic [7:0]      lk_vc_i        [Ports],
  // processARN command.
  input  logic            pr_en_i,
  input  logic [15:0]     pr_dest_i,
  input  logic [7:0]      pr_port_i,
  input  logic [7:0]      pr_vc_i,
  input  logic [31:0]     pr_arn_id_i,
  input  logic [7:0]      pr_root_info_i,
  input  logic            pr_consumed_i,
  input  logic [7:0]      pr_alt_port_i,
  input  logic            pr_add_i,
  // Remove command.
  input  logic            rm_en_i,
  input  logic [15:0]     rm_dest_i,
  input  logic [7:0]      rm_port_i,
  input  logic [7:0]      rm_vc_i,
  // Lookup results.
  output logic            lk_hit_o       [Ports],
  output logic            lk_consumed_o  [Ports],
  output logic [IdxW-1:0] lk_idx_o       [Ports],
  output logic [7:0]      lk_port_o      [Ports],
  output logic [31:0]     lk_arn_id_o    [Ports],
  output logic [7:0]      lk_root_info_o [Ports],
  output logic [7:0]      lk_alt_port_o  [Ports],
  // Command results and occupancy.
  output logic            pr_hit_o,
  output logic            pr_evict_o,
  output logic [CntW-1:0] count_o,
  output logic            full_o
);
  logic        valid_q     [Entries], valid_d     [Entries];
  logic [15:0] dest_q      [Entries], dest_d      [Entries];
  logic [7:0]  port_q      [Entries], port_d      [Entries];
  logic [7:0]  vc_q        [Entries], vc_d        [Entries];
  logic [31:0] arn_id_q    [Entries], arn_id_d    [Entries];
  logic [7:0]  root_info_q [Entries], root_info_d [Entries];
  logic        consumed_q  [Entries], consumed_d  [Entries];
  logic [7:0]  alt_port_q  [Entries], alt_port_d  [Entries];
  logic [23:0] ttl_q       [Entries], ttl_d       [Entries];

  // Lookups: per port, the lowest-index match and the lowest-index consumed match.
  always_comb begin
    logic            any_m, any_c;
    logic [IdxW-1:0] idx_m, idx_c, sel;
    for (int p = 0; p < Ports; p++) begin
      any_m = 1'b0;
      any_c = 1'b0;
      idx_m = '0;
      idx_c = '0;
      for (int e = Entries - 1; e >= 0; e--) begin
        if (valid_q[e] && dest_q[e] == lk_dest_i[p] && vc_q[e] == lk_vc_i[p]) begin
          any_m = 1'b1;
          idx_m = IdxW'(e);
          if (consumed_q[e]) begin
            any_c = 1'b1;
            idx_c = IdxW'(e);
          end
        end
      end
      lk_hit_o[p]       = lk_en_i[p] && any_m;
      lk_consumed_o[p]  = lk_en_i[p] && any_c;
      sel               = any_c ? idx_c : idx_m;
      lk_idx_o[p]       = lk_hit_o[p] ? sel : '0;
      lk_port_o[p]      = '0;
      lk_arn_id_o[p]    = '0;
      lk_root_info_o[p] = '0;
      lk_alt_port_o[p]  = '0;
      for (int e = 0; e < Entries; e++) begin
        if (lk_hit_o[p] && IdxW'(e) == sel) begin
          lk_port_o[p]      = port_q[e];
          lk_arn_id_o[p]    = arn_id_q[e];
          lk_root_info_o[p] = root_info_q[e];
          lk_alt_port_o[p]  = alt_port_q[e];
        end
      end
    end
  end

  // Occupancy of the current registers.
  always_comb begin
    count_o = '0;
    for (int e = 0; e < Entries; e++) begin
      count_o = count_o + CntW'(valid_q[e]);
    end
    full_o = (32'(count_o) == Entries);
  end

  // Next state: ageing, remove, processARN, in this order.
  always_comb begin
    logic            removed [Entries];
    logic            exists, found_free;
    logic [IdxW-1:0] slot;
    logic [23:0]     slot_ttl;
    valid_d     = valid_q;
    dest_d      = dest_q;
    port_d      = port_q;
    vc_d        = vc_q;
    arn_id_d    = arn_id_q;
    root_info_d = root_info_q;
    consumed_d  = consumed_q;
    alt_port_d  = alt_port_q;
    ttl_d       = ttl_q;
    pr_hit_o    = 1'b0;
    pr_evict_o  = 1'b0;
    exists      = 1'b0;
    found_free  = 1'b0;
    slot        = '0;
    slot_ttl    = '0;
    // 1. Ageing.
    for (int e = 0; e < Entries; e++) begin
      if (valid_q[e]) begin
        ttl_d[e] = ttl_q[e] - 24'd1;
        if (ttl_q[e] == 24'd1) valid_d[e] = 1'b0;
      end
    end
    // 2. Remove.
    for (int e = 0; e < Entries; e++) begin
      removed[e] = rm_en_i && valid_q[e] && dest_q[e] == rm_dest_i && port_q[e] == rm_port_i
                   && vc_q[e] == rm_vc_i;
      if (removed[e]) valid_d[e] = 1'b0;
    end
    // 3. processARN.
    if (pr_en_i) begin
      for (int e = 0; e < Entries; e++) begin
        if (valid_q[e] && !removed[e] && dest_q[e] == pr_dest_i && port_q[e] == pr_port_i
            && vc_q[e] == pr_vc_i && arn_id_q[e] == pr_arn_id_i) begin
          exists   = 1'b1;
          valid_d[e] = 1'b1;
          ttl_d[e] = 24'(Ttl);
        end
      end
      pr_hit_o = exists;
      if (!exists) begin
        for (int e = 0; e < Entries; e++) begin
          if (valid_q[e] && dest_q[e] == pr_dest_i && port_q[e] == pr_port_i
              && vc_q[e] == pr_vc_i) begin
            valid_d[e] = 1'b0;
          end
        end
        if (pr_add_i) begin
          for (int e = Entries - 1; e >= 0; e--) begin
            if (!valid_d[e]) begin
              found_free = 1'b1;
              slot       = IdxW'(e);
            end
          end
          if (!found_free) begin
            // Every entry is valid: evict the one nearest expiry, lowest index on a tie.
            slot_ttl = ttl_q[0];
            for (int e = 1; e < Entries; e++) begin
              if (ttl_q[e] < slot_ttl) begin
                slot     = IdxW'(e);
                slot_ttl = ttl_q[e];
              end
            end
            pr_evict_o = 1'b1;
          end
          for (int e = 0; e < Entries; e++) begin
            if (IdxW'(e) == slot) begin
              valid_d[e]     = 1'b1;
              dest_d[e]      = pr_dest_i;
              port_d[e]      = pr_port_i;
              vc_d[e]        = pr_vc_i;
              arn_id_d[e]    = pr_arn_id_i;
              root_info_d[e] = pr_root_info_i;
              consumed_d[e]  = pr_consumed_i;
              alt_port_d[e]  = pr_alt_port_i;
              ttl_d[e]       = 24'(Ttl);
            end
          end
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      for (int e = 0; e < Entries; e++) begin
        valid_q[e]     <= 1'b0;
        dest_q[e]      <= '0;
        port_q[e]      <= '0;
        vc_q[e]        <= '0;
        arn_id_q[e]    <= '0;
        root_info_q[e] <= '0;
        consumed_q[e]  <= 1'b0;
        alt_port_q[e]  <= '0;
        ttl_q[e]       <= '0;
      end
    end else begin
      valid_q     <= valid_d;
      dest_q      <= dest_d;
      port_q      <= port_d;
      vc_q        <= vc_d;
      arn_id_q    <= arn_id_d;
      root_info_q <= root_info_d;
      consumed_q  <= consumed_d;
      alt_port_q  <= alt_port_d;
      ttl_q       <= ttl_d;
    end
  end

  // Invariant terms, one bit per port or entry, reduced in the assertions below.
  logic [Ports-1:0]   chk_hit_needs_en, chk_consumed_needs_hit, chk_miss_zero, chk_idx_in_range;
  logic [Entries-1:0] chk_ttl_in_range, chk_key_unique;
  always_comb begin
    for (int p = 0; p < Ports; p++) begin
      chk_hit_needs_en[p]       = !lk_hit_o[p] || lk_en_i[p];
      chk_consumed_needs_hit[p] = !lk_consumed_o[p] || lk_hit_o[p];
      chk_miss_zero[p]          = lk_hit_o[p] || (lk_idx_o[p] == '0 && lk_port_o[p] == '0
                                  && lk_arn_id_o[p] == '0 && lk_root_info_o[p] == '0
                                  && lk_alt_port_o[p] == '0);
      chk_idx_in_range[p]       = 32'(lk_idx_o[p]) < Entries;
    end
    for (int e = 0; e < Entries; e++) begin
      chk_ttl_in_range[e] = !valid_q[e] || (ttl_q[e] != '0 && ttl_q[e] - 24'd1 < 24'(Ttl));
      chk_key_unique[e]   = 1'b1;
      for (int f = e + 1; f < Entries; f++) begin
        if (valid_q[e] && valid_q[f] && dest_q[e] == dest_q[f] && port_q[e] == port_q[f]
            && vc_q[e] == vc_q[f]) begin
          chk_key_unique[e] = 1'b0;
        end
      end
    end
  end

  // Parameters (checked at elaboration).
  // Entries is in 1..64.
  `ASSERT_INIT(a_param_entries, Entries >= 1 && Entries <= 64)
  // Ports is in 1..64.
  `ASSERT_INIT(a_param_ports, Ports >= 1 && Ports <= 64)
  // Ttl is in 1..2^24-1 (the TTL counter is 24 bits).
  `ASSERT_INIT(a_param_ttl, Ttl >= 1 && Ttl <= 24'hFF_FFFF)

`ifndef SYNTHESIS
  // Packed copies of the per-port inputs and outputs ($isunknown needs packed values).
  localparam int unsigned LkOutW = 2 + IdxW + 8 + 32 + 8 + 8;
  logic [Ports-1:0][24:0]       chk_lk_in;
  logic [Ports-1:0][LkOutW-1:0] chk_lk_out;
  always_comb begin
    for (int p = 0; p < Ports; p++) begin
      chk_lk_in[p]  = {lk_en_i[p], lk_dest_i[p], lk_vc_i[p]};
      chk_lk_out[p] = {lk_hit_o[p], lk_consumed_o[p], lk_idx_o[p], lk_port_o[p], lk_arn_id_o[p],
                       lk_root_info_o[p], lk_alt_port_o[p]};
    end
  end
`endif

  // Input contract.
  // Every input is known outside reset.
  `ASSUME(m_inputs_known, !$isunknown({chk_lk_in, pr_en_i, pr_dest_i, pr_port_i, pr_vc_i,
                                       pr_arn_id_i, pr_root_info_i, pr_consumed_i,
                                       pr_alt_port_i, pr_add_i, rm_en_i, rm_dest_i, rm_port_i,
                                       rm_vc_i}))

  // Outputs.
  // Every output is known outside reset.
  `ASSERT_KNOWN(a_outputs_known, {chk_lk_out, pr_hit_o, pr_evict_o, count_o, full_o})

  // Invariants.
  // count_o never exceeds the table.
  `ASSERT(a_count_le_entries, 32'(count_o) <= Entries)
  // full_o follows count_o.
  `ASSERT(a_full_iff_count, full_o == (32'(count_o) == Entries))
  // A command never both refreshes and evicts.
  `ASSERT_NEVER(a_hit_evict_exclusive, pr_hit_o && pr_evict_o)
  // pr_hit_o and pr_evict_o only with pr_en_i.
  `ASSERT(a_pr_out_needs_en, (pr_hit_o || pr_evict_o) -> pr_en_i)
  // An eviction only when every entry is valid.
  `ASSERT(a_evict_only_when_full, pr_evict_o -> full_o)
  // Per port: a hit needs the enable.
  `ASSERT(a_hit_needs_en, &chk_hit_needs_en)
  // Per port: a consumed hit is a hit.
  `ASSERT(a_consumed_needs_hit, &chk_consumed_needs_hit)
  // Per port: without a hit the index and the field outputs are 0.
  `ASSERT(a_miss_outputs_zero, &chk_miss_zero)
  // Per port: the selected index names an entry.
  `ASSERT(a_idx_in_range, &chk_idx_in_range)
  // Per entry: a valid entry has 1 <= ttl_q <= Ttl.
  `ASSERT(a_valid_ttl_in_range, &chk_ttl_in_range)
  // At most one valid entry per (dest, port, vc).
  `ASSERT(a_key_unique, &chk_key_unique)

`ifndef SYNTHESIS
  // Per entry, what this cycle's commands do to it, judged from the inputs and the current
  // registers (not from the next-state logic):
  // - chk_removed: the remove names its key;
  // - chk_refresh: processARN names its full key (dest, port, vc, arn_id) and it is not removed;
  // - chk_untouched: live past this cycle (ttl_q > 1), not named by either command, and not an
  //   eviction candidate (no add into a full table);
  // - chk_expiring: in its last cycle (ttl_q == 1) and not refreshed.
  // Registered (_q), they are judged against the next cycle's registers.
  typedef logic [16+8+8+32+8+1+8-1:0] chk_fields_t;
  logic [Entries-1:0] chk_removed, chk_refresh, chk_untouched, chk_expiring;
  logic [Entries-1:0] chk_refresh_q, chk_untouched_q, chk_expiring_q, chk_removed_q;
  logic [Entries-1:0] chk_counted, chk_reloaded, chk_expired, chk_dropped, chk_holds_cmd;
  logic               chk_add, chk_add_q, chk_drop_q;
  chk_fields_t        chk_cmd, chk_cmd_q;
  chk_fields_t        chk_fields [Entries], chk_fields_q [Entries];
  logic [23:0]        chk_ttl_q [Entries];
  always_comb begin
    chk_cmd = {pr_dest_i, pr_port_i, pr_vc_i, pr_arn_id_i, pr_root_info_i, pr_consumed_i,
               pr_alt_port_i};
    for (int e = 0; e < Entries; e++) begin
      chk_fields[e]    = {dest_q[e], port_q[e], vc_q[e], arn_id_q[e], root_info_q[e],
                          consumed_q[e], alt_port_q[e]};
      chk_removed[e]   = rm_en_i && valid_q[e] && {dest_q[e], port_q[e], vc_q[e]}
                         == {rm_dest_i, rm_port_i, rm_vc_i};
      chk_refresh[e]   = pr_en_i && valid_q[e] && !chk_removed[e]
                         && {dest_q[e], port_q[e], vc_q[e], arn_id_q[e]}
                         == {pr_dest_i, pr_port_i, pr_vc_i, pr_arn_id_i};
      chk_untouched[e] = valid_q[e] && ttl_q[e] > 24'd1 && !chk_removed[e]
                         && !(pr_en_i && {dest_q[e], port_q[e], vc_q[e]}
                              == {pr_dest_i, pr_port_i, pr_vc_i})
                         && !(pr_en_i && pr_add_i && full_o);
      chk_expiring[e]  = valid_q[e] && ttl_q[e] == 24'd1 && !chk_refresh[e];
    end
    chk_add = pr_en_i && pr_add_i && !(|chk_refresh);
    for (int e = 0; e < Entries; e++) begin
      chk_counted[e]   = !chk_untouched_q[e] || (valid_q[e] && ttl_q[e] == chk_ttl_q[e] - 24'd1
                                                 && chk_fields[e] == chk_fields_q[e]);
      chk_reloaded[e]  = !chk_refresh_q[e] || (valid_q[e] && ttl_q[e] == 24'(Ttl));
      chk_expired[e]   = !chk_expiring_q[e] || !valid_q[e] || ttl_q[e] == 24'(Ttl);
      chk_dropped[e]   = !(chk_removed_q[e] && chk_drop_q) || !valid_q[e];
      chk_holds_cmd[e] = valid_q[e] && ttl_q[e] == 24'(Ttl) && chk_fields[e] == chk_cmd_q;
    end
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      chk_refresh_q   <= '0;
      chk_untouched_q <= '0;
      chk_expiring_q  <= '0;
      chk_removed_q   <= '0;
      chk_add_q       <= 1'b0;
      chk_drop_q      <= 1'b0;
      chk_cmd_q       <= '0;
      chk_fields_q    <= '{default: '0};
      chk_ttl_q       <= '{default: '0};
    end else begin
      chk_refresh_q   <= chk_refresh;
      chk_untouched_q <= chk_untouched;
      chk_expiring_q  <= chk_expiring;
      chk_removed_q   <= chk_removed;
      chk_add_q       <= chk_add;
      chk_drop_q      <= !(pr_en_i && pr_add_i);
      chk_cmd_q       <= chk_cmd;
      chk_fields_q    <= chk_fields;
      chk_ttl_q       <= ttl_q;
    end
  end
`endif

  // Behaviour.
  // pr_hit_o is set exactly when processARN names the full key of a valid entry not removed.
  `ASSERT(a_hit_iff_refresh, pr_hit_o == (|chk_refresh))
  // A live entry that no command names counts its TTL down by exactly one and keeps its fields.
  `ASSERT(a_ttl_counts_down, &chk_counted)
  // A refreshed entry is valid with a full TTL in the next cycle.
  `ASSERT(a_refresh_reloads, &chk_reloaded)
  // An entry in its last cycle and not refreshed is gone in the next one (or its slot holds a
  // new entry, with a full TTL).
  `ASSERT(a_expire_at_one, &chk_expired)
  // A removed entry is gone in the next cycle unless the same cycle adds an entry.
  `ASSERT(a_remove_drops, &chk_dropped)
  // An add (processARN with pr_add_i, no refresh) leaves an entry holding the command's fields
  // with a full TTL.
  `ASSERT(a_add_lands, chk_add_q |-> |chk_holds_cmd)
endmodule
