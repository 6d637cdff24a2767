`include "arnsim_assert.svh"

// IEEE 802.1Qau in the switch: a congestion point at every output and the notification path
// that carries congestion notification messages (CNMs) upstream to the sampled packets' sources.
//
// Contract
// - Congestion points (congestion_point, u_cp; on while qeq_i != 0): every packet an input's
//   routing stage places in a VOQ this cycle (route_valid_i[i], route_out_i[i], its length)
//   joins its output's queue, in input order, against the flits queued for each output at the
//   start of the cycle (voq_occ_i[*][o] summed); a sample with a negative feedback makes a CNM
//   {src: the packet's source, dest: its DLID, fb: the block's 6-bit |Fb|}.
// - Notification path: the CNMs arriving on the outputs' reverse directions (in_cnm_*_i, port
//   order), then the congestion points' (input order), are each queued at the port the LFT's
//   option 0 gives the LID src << Lmc (lft_i, the switch's combinational copy), a port's queue
//   holding CnmDepth; one whose LID is unrouted or beyond the ports, or whose queue is full
//   after this cycle's departure, is dropped. Each port sends its oldest CNM upstream
//   (out_cnm_*_o: from the registers), and it leaves at the clock edge.
// - Synchronous active-low reset: the queues empty, the congestion points' registers 0.
// Twin: src/cycle/qcn.rs (notify, queue_cnm, commit_cnms), src/blocks/congestion_point.rs
module cnm_unit
  import switch_pkg::*;
#(
  parameter  int unsigned P        = 4,
  parameter  int unsigned Lmc      = 1,
  parameter  int unsigned Rows     = 16,
  parameter  int unsigned SnEntries = 16,
  parameter  int unsigned SnTtl    = 64,
  localparam int unsigned Banks    = 1 << Lmc,
  localparam int unsigned CnmDepth = 8,
  localparam int unsigned SnDepth  = 16,
  localparam int unsigned PortW    = (P > 1) ? $clog2(P) : 1
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // Snooped AR (the routing mode is RtSnoopAr): per input, the head its routing stage routes on
  // the congestion table (its destination's base LID, its option 0) and the port chosen.
  input  logic               snoop_i,
  input  logic [P-1:0]       sn_req_i,
  input  logic [15:0]        sn_dest_i      [P],
  input  logic [7:0]         sn_det_i       [P],
  output logic [7:0]         sn_out_o       [P],
  // The switch's configuration registers: Qeq (flits, 0: off), w, the sample interval (flits).
  input  logic [31:0]        qeq_i,
  input  logic [7:0]         w_i,
  input  logic [31:0]        sample_i,
  // The LFT's combinational copy (switch.sv's lft_q).
  input  logic [8*Banks-1:0] lft_i          [Rows],
  // Per input: the packet its routing stage places in a VOQ this cycle.
  input  logic [P-1:0]       route_valid_i,
  input  logic [7:0]         route_out_i    [P],
  input  desc_t              route_desc_i   [P],
  // Per input and output: the VOQ occupancy at the start of the cycle.
  input  logic [15:0]        voq_occ_i      [P][P],
  // CNMs arriving on, and leaving by, the reverse directions of the links.
  input  logic [P-1:0]       in_cnm_valid_i,
  input  cnm_t               in_cnm_i       [P],
  output logic [P-1:0]       out_cnm_valid_o,
  output cnm_t               out_cnm_o      [P]
);
  localparam int unsigned RowW = (Rows > 1) ? $clog2(Rows) : 1;
  localparam int unsigned Cands = 2 * P;

  logic qcn_on;
  assign qcn_on = qeq_i != '0;

  // ---------------------------------------------------------------------------------------------
  // Registers.
  cnm_t        fifo_q    [P][CnmDepth], fifo_d [P][CnmDepth];
  logic [2:0]  rd_q      [P], rd_d [P];
  logic [3:0]  cnt_q     [P], cnt_d [P];

  // The oldest CNM of each port leaves upstream.
  always_comb begin
    for (int p = 0; p < P; p++) begin
      out_cnm_valid_o[p] = cnt_q[p] != '0;
      out_cnm_o[p]       = (cnt_q[p] != '0) ? fifo_q[p][rd_q[p]] : '0;
    end
  end

  // The port option 0 of the LFT gives the LID of end node src (NoRoute when unrouted).
  function automatic logic [7:0] port_of(logic [15:0] src, logic [8*Banks-1:0] lft [Rows]);
    logic [15:0] lid;
    lid = 16'(32'(src) << Lmc);
    if ((32'(lid) >> Lmc) >= Rows) return NoRoute;
    return lft[RowW'(32'(lid) >> Lmc)][7:0];
  endfunction

  // ---------------------------------------------------------------------------------------------
  // This cycle's CNMs, in queuing order: arrivals (port order), then samples (input order).
  logic [31:0]  cp_queue [P];
  logic [15:0]  cp_len   [P];
  logic [P-1:0] cp_sampled, cp_cnm;
  logic [5:0]   cp_fb    [P];
  always_comb begin
    for (int o = 0; o < P; o++) begin
      cp_queue[o] = '0;
      for (int j = 0; j < P; j++) cp_queue[o] = cp_queue[o] + 32'(voq_occ_i[j][o]);
    end
    for (int i = 0; i < P; i++) cp_len[i] = route_desc_i[i].len;
  end
  congestion_point #(.P(P)) u_cp (
    .clk_i,
    .rst_ni,
    .qeq_i,
    .w_i,
    .sample_i,
    .arr_valid_i (route_valid_i),
    .arr_out_i   (route_out_i),
    .arr_len_i   (cp_len),
    .queue_i     (cp_queue),
    .sampled_o   (cp_sampled),
    .cnm_o       (cp_cnm),
    .fb_o        (cp_fb)
  );
  // Which packets were sampled is for the waves.
  logic unused_cp;
  assign unused_cp = ^cp_sampled;
  logic [Cands-1:0] cand_valid;
  cnm_t             cand      [Cands];
  always_comb begin
    for (int p = 0; p < P; p++) begin
      cand_valid[p]     = in_cnm_valid_i[p];
      cand[p]           = in_cnm_i[p];
      cand_valid[P + p] = cp_cnm[p];
      cand[P + p]       = cp_cnm[p] ? '{fb: 8'(cp_fb[p]), dest: route_desc_i[p].dlid,
                                        src: route_desc_i[p].src} : '0;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Snooped AR (src/switch/snoop.rs): the congestion table, looked up by the routing stages
  // (0 .. P-1) and by this cycle's CNMs (P .. 3P-1), the snoop queue feeding it one CNM a cycle,
  // and each input's round-robin pointer among congested options.
  localparam int unsigned Lk = 3 * P;
  typedef struct packed {
    logic [15:0] dest;
    logic [7:0]  port;
    logic [5:0]  fb;
    logic        is_local;
  } snoop_t;
  logic [15:0]  ct_dest [Lk];
  logic [P-1:0] ct_mask [Lk];
  snoop_t       sn_head;
  logic         ct_hit, ct_full;
  logic [$clog2(SnEntries + 1)-1:0] ct_count;
  logic         sn_head_valid;
  logic [Cands-1:0] absorbed, snooped;
  logic [7:0]       cand_port [Cands];
  // Its destination's options (the LFT row of dest | 1) and option 0 of its own row.
  function automatic logic [8*Banks-1:0] row_of(logic [15:0] lid, logic [8*Banks-1:0] lft [Rows]);
    if ((32'(lid) >> Lmc) >= Rows) return '1;
    return lft[RowW'(32'(lid) >> Lmc)];
  endfunction
  function automatic logic [7:0] first_option(logic [15:0] lid, logic [8*Banks-1:0] lft [Rows]);
    if ((32'(lid) >> Lmc) >= Rows) return NoRoute;
    return lft[RowW'(32'(lid) >> Lmc)][7:0];
  endfunction
  function automatic logic [15:0] base_of(logic [15:0] dlid);
    return 16'((32'(dlid) >> Lmc) << Lmc);
  endfunction
  // Bit p of a mask (0 for a port beyond P).
  function automatic logic bit_of(logic [P-1:0] mask, logic [7:0] p);
    for (int q = 0; q < P; q++) if (p == 8'(q)) return mask[q];
    return 1'b0;
  endfunction
  // The first usable option below P not in mask, NoRoute when none.
  function automatic logic [7:0] first_free(logic [8*Banks-1:0] row, logic [P-1:0] mask);
    for (int b = 0; b < Banks; b++) begin
      if (row[8*b +: 8] != NoRoute && 32'(row[8*b +: 8]) < P && !bit_of(mask, row[8*b +: 8]))
        return row[8*b +: 8];
    end
    return NoRoute;
  endfunction
  // The port the switch routes the destination to now.
  function automatic logic [7:0] current(logic [8*Banks-1:0] row, logic [P-1:0] mask,
                                         logic [7:0] det);
    return bit_of(mask, det) ? first_free(row, mask) : det;
  endfunction
  always_comb begin
    for (int i = 0; i < P; i++) ct_dest[i] = sn_dest_i[i];
    for (int p = 0; p < P; p++) ct_dest[P + p] = base_of(in_cnm_i[p].dest);
    for (int i = 0; i < P; i++) ct_dest[2 * P + i] = base_of(route_desc_i[i].dlid);
  end
  congestion_table #(.Entries(SnEntries), .Lk(Lk), .Ports(P), .Ttl(SnTtl)) u_table (
    .clk_i,
    .rst_ni,
    .lk_dest_i  (ct_dest),
    .sn_en_i    (sn_head_valid),
    .sn_dest_i  (sn_head.dest),
    .sn_port_i  (sn_head.port),
    .sn_fb_i    (sn_head.fb),
    .sn_local_i (sn_head.is_local),
    .lk_mask_o  (ct_mask),
    .sn_hit_o   (ct_hit),
    .sn_full_o  (ct_full),
    .count_o    (ct_count)
  );
  // What the table says of the snoop and its occupancy are for the waves.
  logic unused_ct;
  assign unused_ct = ^{ct_hit, ct_full, ct_count};
  // The routing stages' choices: the current port, else the options in turn from the pointer.
  logic [3:0] rr_q [P], rr_d [P];
  always_comb begin
    logic [8*Banks-1:0] row;
    logic [7:0]         cur, q;
    logic               found;
    int unsigned        b;
    rr_d = rr_q;
    for (int i = 0; i < P; i++) begin
      row   = row_of(sn_dest_i[i] | 16'd1, lft_i);
      cur   = current(row, ct_mask[i], sn_det_i[i]);
      found = 1'b0;
      b     = 0;
      q     = NoRoute;
      sn_out_o[i] = cur;
      if (sn_req_i[i] && cur == NoRoute && sn_det_i[i] != NoRoute) begin
        sn_out_o[i] = sn_det_i[i];
        for (int k = 0; k < Banks; k++) begin
          b = (32'(rr_q[i]) + 32'(k)) & (Banks - 1);
          q = row[8*b +: 8];
          if (!found && q != NoRoute && 32'(q) < P) begin
            found       = 1'b1;
            sn_out_o[i] = q;
            rr_d[i]     = 4'((b + 1) & (Banks - 1));
          end
        end
      end
    end
  end
  // This cycle's CNMs: the port each names, whether it is snooped and whether it is absorbed.
  always_comb begin
    logic [8*Banks-1:0] row;
    logic [7:0]         p, det;
    logic [15:0]        dest;
    logic               is_opt;
    for (int c = 0; c < Cands; c++) begin
      p    = (c < P) ? 8'(c) : route_out_i[c - P];
      dest = base_of(cand[c].dest);
      row  = row_of(dest | 16'd1, lft_i);
      det  = first_option(cand[c].dest, lft_i);
      is_opt = 1'b0;
      for (int b = 0; b < Banks; b++) begin
        if (row[8*b +: 8] != NoRoute && row[8*b +: 8] == p && 32'(p) < P) is_opt = 1'b1;
      end
      cand_port[c] = p;
      snooped[c]   = snoop_i && cand_valid[c] && is_opt;
      absorbed[c]  = snoop_i && cand_valid[c] && p != NoRoute
                     && current(row, ct_mask[P + c], det) == p
                     && first_free(row, ct_mask[P + c] | (P'(1) << p[PortW-1:0])) != NoRoute;
    end
  end
  // The snoop queue: its oldest goes to the table at the clock edge, this cycle's join behind.
  snoop_t     sn_fifo_q [SnDepth], sn_fifo_d [SnDepth];
  logic [3:0] sn_rd_q, sn_rd_d;
  logic [4:0] sn_cnt_q, sn_cnt_d;
  always_comb begin
    sn_head_valid = sn_cnt_q != '0;
    sn_head       = sn_fifo_q[sn_rd_q];
    sn_fifo_d     = sn_fifo_q;
    sn_rd_d       = sn_rd_q;
    sn_cnt_d      = sn_cnt_q;
    if (sn_cnt_q != '0) begin
      sn_rd_d  = sn_rd_q + 4'd1;
      sn_cnt_d = sn_cnt_q - 5'd1;
    end
    for (int c = 0; c < Cands; c++) begin
      if (snooped[c] && 32'(sn_cnt_d) < SnDepth) begin
        sn_fifo_d[sn_rd_d + 4'(sn_cnt_d)] = '{dest: base_of(cand[c].dest), port: cand_port[c],
                                               fb: cand[c].fb[5:0], is_local: c >= P};
        sn_cnt_d = sn_cnt_d + 5'd1;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // The queues at the clock edge: each port's oldest leaves (it was sent), then this cycle's
  // CNMs join behind in order while their queue has room.
  always_comb begin
    logic [7:0]       port;
    logic [PortW-1:0] pi;
    port   = '0;
    pi     = '0;
    fifo_d = fifo_q;
    for (int p = 0; p < P; p++) begin
      rd_d[p]  = rd_q[p];
      cnt_d[p] = cnt_q[p];
      if (cnt_q[p] != '0) begin
        rd_d[p]  = rd_q[p] + 3'd1;
        cnt_d[p] = cnt_q[p] - 4'd1;
      end
    end
    for (int c = 0; c < Cands; c++) begin
      if (cand_valid[c] && !absorbed[c]) begin
        port = port_of(cand[c].src, lft_i);
        pi   = PortW'(port);
        if (32'(port) < P && 32'(cnt_d[pi]) < CnmDepth) begin
          fifo_d[pi][rd_d[pi] + 3'(cnt_d[pi])] = cand[c];
          cnt_d[pi] = cnt_d[pi] + 4'd1;
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rd_q      <= '{default: '0};
      cnt_q     <= '{default: '0};
      sn_rd_q   <= '0;
      sn_cnt_q  <= '0;
      rr_q      <= '{default: '0};
    end else begin
      fifo_q <= fifo_d;
      rd_q   <= rd_d;
      cnt_q  <= cnt_d;
      sn_fifo_q <= sn_fifo_d;
      sn_rd_q   <= sn_rd_d;
      sn_cnt_q  <= sn_cnt_d;
      rr_q      <= rr_d;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Checks.
  logic [P-1:0] over_depth, fb_outside;
  always_comb begin
    for (int p = 0; p < P; p++) begin
      over_depth[p] = 32'(cnt_q[p]) > CnmDepth;
      fb_outside[p] = out_cnm_valid_o[p] && (out_cnm_o[p].fb == '0 || out_cnm_o[p].fb > 8'd63);
    end
  end
  // A port's queue never holds more than CnmDepth CNMs.
  `ASSERT_NEVER(a_cnm_queue_depth, |over_depth)
  // A CNM sent upstream asks for some decrease, within 6 bits (the arrivals' too: m_cnm_fb).
  `ASSERT_NEVER(a_cnm_fb_range, |fb_outside)
  // The congestion points make CNMs only while they are on.
  `ASSERT_NEVER(a_cnm_made_only_when_on, !qcn_on && |cand_valid[Cands-1:P])
  // The CNMs arriving carry a feedback of 1 to 63.
  logic [P-1:0] in_fb_outside;
  always_comb begin
    for (int p = 0; p < P; p++) begin
      in_fb_outside[p] = in_cnm_valid_i[p] && (in_cnm_i[p].fb == '0 || in_cnm_i[p].fb > 8'd63);
    end
  end
  `ASSUME(m_cnm_fb, !(|in_fb_outside))
endmodule
