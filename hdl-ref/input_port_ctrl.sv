`include "arnsim_assert.svh"

// Input port controller of one switch port (Rocher-Gonzalez et al., pseudo-code 4): link receive
// into a VC-partitioned buffer whose packets are descriptors in a pool, the FIFO of each
// (VC, output) as a linked list over the pool, VOQ accounting, the LFT read of each head, the
// routing stage, and what the port sends back upstream (the credits it frees, at most one ARN
// per cycle).
//
// Contract
// - Link receive: a flit (flit_valid_i) joins VC flit_vc_i. A head takes the lowest free slot of
//   the pool (its descriptor stored with vc = flit_vc_i), issues the read of its DLID on the LFT
//   (lft_banks, registered) and is registered in route_q for the routing stage of the next cycle.
//   Body flits belong to the packet in rx_q (slot and flits still due).
// - Routing stage (the cycle after the head arrived; the LFT read is ready): routing_stage.sv
//   decides the output, next VC and adapted flag by the mode, with the switch's answers (the
//   oblivious draw, Adaptive-Th's alternative, the ARN-table lookup), and the ARN sent upstream
//   (sendARN: at most one per entry per ArnGap cycles, while the 8-deep ARN FIFO has room;
//   arn_sender holds the FIFO and the entries' gap timers). The
//   routed packet joins the FIFO of (its VC, its output) at the clock edge, with its next VC; FA
//   records the escape half (res_q) and option 0 (esc_q); a packet with no usable route stays
//   unrouted.
// - Outputs' side: per (VC, output) the FIFO head (hd_*_o) for arbitration; per output the VOQ
//   occupancy and the head of the fullest VC for the congestion detector (det_*_o). An output
//   that wins a head pops it (pop_valid_i, pop_vc_i); a flit leaving for output o (dep_*_i)
//   frees its place: one credit upstream on its VC (credit_o), one flit less in the VC and VOQ
//   counts, and the tail frees the slot. rd_slot_i/rd_desc_o: one descriptor read port per output
//   (the head flit of the packet it sends). FA: each head shows the escape credits it needs
//   (hd_res_o); an output that finds it short raises esc_i[output][VC], and the head moves to
//   the tail of its escape route's FIFO at the clock edge (after the pops, output by output).
//   A packet joining a FIFO (routed or escaping) takes stamp_i, which its head shows
//   (hd_stamp_o) to FCFS arbitration.
// - ARN upstream: the FIFO's front leaves, or this cycle's sendARN when the FIFO is empty.
// - Inputs: the link obeys the protocol (assumptions m_*: VC in range, no overflow, a head only
//   between packets and with a free slot and a consistent tail bit, body flits in step); the
//   outputs pop only FIFO heads and send only flits that arrived.
// - Synchronous active-low reset: the pool empty, every FIFO empty, every count 0, no packet
//   arriving, nothing to route, the ARN FIFO empty and the gap timers 0. The descriptor memory
//   and the list links are not reset (a slot is written when taken).
// Assertions in input_port_ctrl_checks.svh, included at the end of the module;
// hdl-ref/arnsim_assert.svh has the macros.
// Parameters: those of switch.sv (P ports, V VCs, Cap flits per VC, Pool descriptors, Lmc,
// Rows, Entries of the ARN table, ArnGap, AdaptiveTh); the routing mode and adapted refresh
// come from the switch's configuration (cfg_i).
// Twin: src/cycle/input_port_ctrl.rs (registers, clock edge, receive_flits),
// src/cycle/routing_stage.rs (lookups, route, send_arn), src/cycle/detection.rs
// (fill_detector_input)
module input_port_ctrl
  import switch_pkg::*;
#(
  parameter  int unsigned P              = 4,
  parameter  int unsigned V              = 2,
  parameter  int unsigned Cap            = 16,
  parameter  int unsigned Pool           = 37,
  parameter  int unsigned Lmc            = 1,
  parameter  int unsigned Rows           = 16,
  parameter  int unsigned Entries        = 8,
  parameter  int unsigned ArnGap         = 40,
  parameter  int unsigned AdaptiveTh     = 12,
  // The far buffer's credits per VC of each output (16 bits each; FA's escape halves).
  parameter  logic [1023:0] OutCaps      = {64{16'd16}},
  localparam int unsigned Banks          = 1 << Lmc,
  localparam int unsigned SlotW          = $clog2(Pool + 1),
  localparam int unsigned EIdxW          = (Entries > 1) ? $clog2(Entries) : 1,
  // Index widths of the arrays over ports, VCs and slots.
  localparam int unsigned PortW          = (P > 1) ? $clog2(P) : 1,
  localparam int unsigned VcW            = (V > 1) ? $clog2(V) : 1,
  localparam int unsigned SIdxW          = (Pool > 1) ? $clog2(Pool) : 1
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // The switch's configuration registers.
  input  cfg_t             cfg_i,
  // LFT write port (broadcast to every input).
  input  logic             lft_wr_en_i,
  input  logic [15:0]      lft_wr_lid_i,
  input  logic [7:0]       lft_wr_port_i,
  // This input's number, and the SL-to-VL write port (broadcast: the entries of this input are
  // kept).
  input  logic [7:0]       port_idx_i,
  input  logic             sl2vl_wr_en_i,
  input  logic [7:0]       sl2vl_wr_out_i,
  input  logic [7:0]       sl2vl_wr_in_i,
  input  logic [3:0]       sl2vl_wr_sl_i,
  input  logic [3:0]       sl2vl_wr_vl_i,
  // The input link.
  input  logic             flit_valid_i,
  input  logic [3:0]       flit_vc_i,
  input  logic             flit_head_i,
  input  logic             flit_tail_i,
  input  desc_t            flit_desc_i,
  // Upstream: credits freed per VC, the ARN sent.
  output logic [7:0]       credit_o       [V],
  output logic             arn_valid_o,
  output arn_t             arn_o,
  // Routing stage: ARN-table lookup and its result.
  output logic             lk_en_o,
  output logic [15:0]      lk_dest_o,
  output logic [7:0]       lk_vc_o,
  input  logic             lk_hit_i,
  input  logic             lk_consumed_i,
  input  logic [EIdxW-1:0] lk_idx_i,
  input  logic [7:0]       lk_port_i,
  input  logic [31:0]      lk_arn_id_i,
  input  logic [7:0]       lk_root_info_i,
  input  logic [7:0]       lk_alt_port_i,
  // Routing stage: oblivious draw (k below n), Adaptive-Th alternative, snooped AR's port.
  output logic             rng_req_o,
  output logic [4:0]       rng_n_o,
  input  logic [4:0]       rng_k_i,
  output logic             at_req_o,
  output logic [15:0]      at_dest_o,
  output logic [7:0]       at_vc_o,
  output logic [7:0]       at_avoid_o,
  input  logic [7:0]       at_alt_i,
  output logic             sn_req_o,
  output logic [15:0]      sn_dest_o,
  output logic [7:0]       sn_det_o,
  input  logic [7:0]       sn_out_i,
  // Routing stage: whether flow routing routes the head, and its port (flow_unit.sv).
  output logic             fl_req_o,
  input  logic [7:0]       fl_out_i,
  // FIFO heads per (VC, output).
  output logic             hd_valid_o     [V][P],
  output logic [SlotW-1:0] hd_slot_o      [V][P],
  output logic [15:0]      hd_len_o       [V][P],
  output logic [3:0]       hd_nvc_o       [V][P],
  // FA: per (VC, output) head, the escape credits it needs free beside its length (0: not
  // adaptive); the outputs' credits at the start of the cycle, per VC; per output, the VCs whose
  // adaptive head leaves for its escape queue at the clock edge.
  output logic [15:0]      hd_res_o       [V][P],
  // FCFS: per (VC, output) head, the stamp it took joining its FIFO; stamp_i, the stamp a
  // packet joining a FIFO at this clock edge takes (the next cycle's number, 32 bits).
  output logic [31:0]      hd_stamp_o     [V][P],
  input  logic [31:0]      stamp_i,
  input  logic [15:0]      out_cred_i     [P][V],
  input  logic [V-1:0]     esc_i          [P],
  // Per output: VOQ occupancy and the detector's head.
  output logic [15:0]      voq_occ_o      [P],
  output logic             det_valid_o    [P],
  output logic [15:0]      det_dest_o     [P],
  output logic [7:0]       det_vc_o       [P],
  output logic             det_adapted_o  [P],
  output logic [3:0]       det_nvc_o      [P],
  // Per output: the head it won, the flit it sends, the descriptor it reads.
  input  logic [P-1:0]     pop_valid_i,
  input  logic [3:0]       pop_vc_i       [P],
  input  logic [P-1:0]     dep_valid_i,
  input  logic [SlotW-1:0] dep_slot_i     [P],
  input  logic [3:0]       dep_vc_i       [P],
  input  logic [P-1:0]     dep_tail_i,
  input  logic [15:0]      dep_sent_i     [P],
  input  logic [SlotW-1:0] rd_slot_i      [P],
  output desc_t            rd_desc_o      [P],
  // The packet the routing stage places in a VOQ this cycle, its output and descriptor (the
  // QCN congestion points sample it).
  output logic             route_valid_o,
  output logic [7:0]       route_out_o,
  output desc_t            route_desc_o,
  // Flits stored over all VCs (status).
  output logic [31:0]      buffered_o
);
  localparam logic [SlotW-1:0] Nil       = '1;

  // The mode's features, from the configuration.
  logic uses_arn;
  assign uses_arn = routing_uses_arn(32'(cfg_i.routing));
  // The switch's identity and seed are used at switch level.
  logic unused_cfg;
  // The queuing scheme is the HCAs' SL policy: the switch reads the SL, not the scheme. The
  // outputs arbitrate and mark FECN.
  assign unused_cfg = ^{cfg_i.id, cfg_i.stage, cfg_i.seed, cfg_i.queuing,
                        cfg_i.qvcs, cfg_i.qarg, cfg_i.fcfs, cfg_i.fecn_threshold,
                        cfg_i.fecn_rate, cfg_i.fecn_min_len, cfg_i.fecn_victims,
                        cfg_i.qcn_qeq, cfg_i.qcn_w, cfg_i.qcn_sample};

  // ---------------------------------------------------------------------------------------------
  // Registers.
  // This input's column of the SL-to-VL tables: per output and SL, the VL (VL = SL at reset).
  logic [3:0]     sl2vl_q [P][16];
  // Descriptor pool: slot_used_q, the descriptor, the route (output, next VC), the list link.
  logic [Pool-1:0] used_q;
  logic [Pool-1:0] routed_q;
  desc_t           desc_q   [Pool];
  logic [7:0]      out_q    [Pool];
  logic [3:0]      nvc_q    [Pool];
  // FA: the escape credits an adaptive packet needs (0 otherwise) and its escape route.
  logic [15:0]     res_q    [Pool];
  logic [7:0]      esc_q    [Pool];
  // FCFS: the cycle from which a routed packet requests its output (the stamp it took joining
  // its FIFO, by the routing stage or by FA's escape).
  logic [31:0]     stamp_q  [Pool];
  logic [SlotW-1:0] next_q  [Pool];
  // FIFO ends per (VC, output).
  logic [SlotW-1:0] head_q  [V][P], head_d [V][P];
  logic [SlotW-1:0] tail_q  [V][P], tail_d [V][P];
  // Counts.
  logic [15:0]     occ_q    [V], occ_d [V];
  logic [15:0]     voq_q    [P], voq_d [P];
  logic [15:0]     vc_voq_q [V][P], vc_voq_d [V][P];
  // The packet arriving and the head held for the routing stage.
  logic            rx_valid_q, rx_valid_d;
  logic [SlotW-1:0] rx_slot_q, rx_slot_d;
  logic [15:0]     rx_left_q, rx_left_d;
  logic            rt_valid_q;
  logic [SlotW-1:0] rt_slot_q;

  // ---------------------------------------------------------------------------------------------
  // LFT: the head's DLID read now, its options shown next cycle to the routing stage.
  logic             lft_rd_valid;
  logic [15:0]      lft_rd_dlid;
  logic [8*Banks-1:0] lft_ports;
  logic [Banks-1:0] lft_mask;

  lft_banks #(.Lmc(Lmc), .Rows(Rows)) u_lft (
    .clk_i,
    .rst_ni,
    .rd_en_i    (flit_valid_i && flit_head_i),
    .rd_dlid_i  ((flit_valid_i && flit_head_i) ? flit_desc_i.dlid : 16'd0),
    .wr_en_i    (lft_wr_en_i),
    .wr_lid_i   (lft_wr_lid_i),
    .wr_port_i  (lft_wr_port_i),
    .rd_valid_o (lft_rd_valid),
    .rd_dlid_o  (lft_rd_dlid),
    .rd_ports_o (lft_ports),
    .rd_mask_o  (lft_mask)
  );

  // ---------------------------------------------------------------------------------------------
  // Reads of the pool for the outputs: FIFO heads, descriptor read ports.
  always_comb begin
    for (int v = 0; v < V; v++) begin
      for (int o = 0; o < P; o++) begin
        hd_valid_o[v][o] = head_q[v][o] != Nil;
        hd_slot_o[v][o]  = head_q[v][o];
        hd_len_o[v][o]   = '0;
        hd_nvc_o[v][o]   = '0;
        hd_res_o[v][o]   = '0;
        hd_stamp_o[v][o] = '0;
        if (head_q[v][o] != Nil) begin
          hd_stamp_o[v][o] = stamp_q[SIdxW'(head_q[v][o])];
          hd_len_o[v][o] = desc_q[SIdxW'(head_q[v][o])].len;
          hd_nvc_o[v][o] = nvc_q[SIdxW'(head_q[v][o])];
          hd_res_o[v][o] = res_q[SIdxW'(head_q[v][o])];
        end
      end
    end
    for (int o = 0; o < P; o++) begin
      rd_desc_o[o] = desc_q[SIdxW'(rd_slot_i[o])];
      voq_occ_o[o] = voq_q[o];
    end
  end

  // The congestion detector's view of each output: the head of the fullest VC for it (the lowest
  // such VC on a tie), when that VC's FIFO has one.
  always_comb begin
    logic [15:0]      best_occ;
    logic [VcW-1:0]   best_vc;
    logic [SlotW-1:0] s;
    s = Nil;
    for (int o = 0; o < P; o++) begin
      best_occ         = '0;
      best_vc          = '0;
      det_valid_o[o]   = 1'b0;
      det_dest_o[o]    = '0;
      det_vc_o[o]      = '0;
      det_adapted_o[o] = 1'b0;
      det_nvc_o[o]     = '0;
      if (uses_arn) begin
        for (int v = 0; v < V; v++) begin
          if (vc_voq_q[v][o] > best_occ) begin
            best_occ = vc_voq_q[v][o];
            best_vc  = VcW'(v);
          end
        end
        s = head_q[best_vc][o];
        if (best_occ != '0 && s != Nil) begin
          det_valid_o[o]   = 1'b1;
          det_dest_o[o]    = (desc_q[SIdxW'(s)].dlid >> Lmc) << Lmc;
          det_vc_o[o]      = desc_q[SIdxW'(s)].orig_vc;
          det_adapted_o[o] = desc_q[SIdxW'(s)].flags[FlagAdapted];
          det_nvc_o[o]     = nvc_q[SIdxW'(s)];
        end
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Routing stage.
  desc_t          rt_desc;
  logic [VcW-1:0] rt_vc;
  logic [7:0]     rt_det, rt_out, rt_flags;
  logic [3:0]     rt_nvc;
  logic [15:0]    rt_res;
  logic           rt_routed, arn_push, may_send_arn;
  logic [PortW-1:0] rt_oi;
  arn_t           arn_push_info;
  assign rt_desc = desc_q[SIdxW'(rt_slot_q)];
  assign rt_vc   = VcW'(rt_desc.vc);
  assign rt_oi   = PortW'(rt_out);
  assign route_valid_o = rt_routed;
  assign route_out_o   = rt_out;
  assign route_desc_o  = rt_desc;

  routing_stage #(
    .P(P), .V(V), .Lmc(Lmc), .AdaptiveTh(AdaptiveTh), .OutCaps(OutCaps)
  ) u_route (
    .clk_i,
    .rst_ni,
    .routing_i         (cfg_i.routing),
    .adapted_refresh_i (cfg_i.adapted_refresh),
    .up_ports_i        (cfg_i.up_ports),
    .smodk_div_i       (cfg_i.smodk_div),
    .valid_i           (rt_valid_q),
    .desc_i            (rt_desc),
    .lft_ports_i       (lft_ports),
    .lft_mask_i        (lft_mask),
    .voq_i             (voq_q),
    .sl2vl_i           (sl2vl_q),
    .out_cred_i,
    .lk_en_o,
    .lk_dest_o,
    .lk_vc_o,
    .lk_hit_i,
    .lk_consumed_i,
    .lk_port_i,
    .lk_arn_id_i,
    .lk_root_info_i,
    .lk_alt_port_i,
    .may_send_arn_i    (may_send_arn),
    .rng_req_o,
    .rng_n_o,
    .rng_k_i,
    .at_req_o,
    .at_dest_o,
    .at_vc_o,
    .at_avoid_o,
    .at_alt_i,
    .sn_req_o,
    .sn_dest_o,
    .sn_det_o,
    .sn_out_i,
    .fl_req_o,
    .fl_out_i,
    .det_o             (rt_det),
    .routed_o          (rt_routed),
    .out_o             (rt_out),
    .nvc_o             (rt_nvc),
    .flags_o           (rt_flags),
    .res_o             (rt_res),
    .arn_push_o        (arn_push),
    .arn_o             (arn_push_info)
  );

  // The ARN FIFO and the gap timer of each ARN-table entry; the ARN sent upstream.
  arn_sender #(.Entries(Entries), .ArnGap(ArnGap)) u_arn (
    .clk_i,
    .rst_ni,
    .idx_i       (lk_idx_i),
    .may_send_o  (may_send_arn),
    .push_i      (arn_push),
    .push_arn_i  (arn_push_info),
    .arn_valid_o,
    .arn_o
  );

  // ---------------------------------------------------------------------------------------------
  // Link receive.
  logic             free_found;
  logic [SlotW-1:0] free_slot;
  logic             head_we, body_we;
  logic [VcW-1:0]   arr_vc;
  logic             arr_routed;
  logic [PortW-1:0] arr_oi;

  always_comb begin
    free_found = 1'b0;
    free_slot  = '0;
    for (int s = Pool - 1; s >= 0; s--) begin
      if (!used_q[s]) begin
        free_found = 1'b1;
        free_slot  = SlotW'(s);
      end
    end
    head_we = flit_valid_i && flit_head_i;
    body_we = flit_valid_i && !flit_head_i;
    arr_vc  = head_we ? VcW'(flit_vc_i) : VcW'(desc_q[SIdxW'(rx_slot_q)].vc);
    // A body flit of a packet routed before (or in) this cycle counts in its VOQ.
    arr_routed = body_we && (routed_q[SIdxW'(rx_slot_q)] || (rt_routed && rt_slot_q == rx_slot_q));
    arr_oi     = (rt_routed && rt_slot_q == rx_slot_q) ? rt_oi
               : PortW'(out_q[SIdxW'(rx_slot_q)]);
  end

  // ---------------------------------------------------------------------------------------------
  // Next state of the counts, FIFO ends and packet arriving.
  // FA's escapes of this cycle, output by output and VC by VC: the slot, the tail it is linked
  // behind (Nil: it heads its new FIFO), its escape route and next VC there.
  logic [SlotW-1:0] es_slot [P][V], es_prev [P][V];
  logic [7:0]       es_port [P][V];
  logic [3:0]       es_nvc  [P][V];
  always_comb begin
    logic [SlotW-1:0] s, nh;
    logic [VcW-1:0]   v;
    // Per FIFO: the first slot linked behind its tail of the start of the cycle (Nil: none).
    logic [SlotW-1:0] link [V][P];
    logic [PortW-1:0] ep;
    logic [15:0]      got;
    s        = '0;
    nh       = '0;
    v        = '0;
    ep       = '0;
    got      = '0;
    link     = '{default: '{default: Nil}};
    occ_d    = occ_q;
    voq_d    = voq_q;
    vc_voq_d = vc_voq_q;
    head_d   = head_q;
    tail_d   = tail_q;
    // Routing stage: the packet joins its FIFO with its one flit received so far (its head
    // arrived in the cycle before; the Rust twin adds the slot's arrived count, 1 here).
    if (rt_routed) begin
      voq_d[rt_oi]           = voq_d[rt_oi] + 16'd1;
      vc_voq_d[rt_vc][rt_oi] = vc_voq_d[rt_vc][rt_oi] + 16'd1;
      if (tail_q[rt_vc][rt_oi] == Nil) head_d[rt_vc][rt_oi] = rt_slot_q;
      else link[rt_vc][rt_oi] = rt_slot_q;
      tail_d[rt_vc][rt_oi] = rt_slot_q;
    end
    // Link receive.
    if (flit_valid_i) begin
      occ_d[arr_vc] = occ_d[arr_vc] + 16'd1;
      if (arr_routed) begin
        voq_d[arr_oi]            = voq_d[arr_oi] + 16'd1;
        vc_voq_d[arr_vc][arr_oi] = vc_voq_d[arr_vc][arr_oi] + 16'd1;
      end
    end
    rx_valid_d = rx_valid_q;
    rx_slot_d  = rx_slot_q;
    rx_left_d  = rx_left_q;
    if (head_we) begin
      rx_slot_d  = free_slot;
      rx_left_d  = flit_desc_i.len - 16'd1;
      rx_valid_d = flit_desc_i.len != 16'd1;
    end else if (body_we) begin
      rx_left_d  = rx_left_q - 16'd1;
      rx_valid_d = rx_left_q != 16'd1;
    end
    // Departures and pops, output by output. A pop of the FIFO the routing stage appends to,
    // holding one packet, leaves the appended one at its head.
    for (int o = 0; o < P; o++) begin
      if (dep_valid_i[o]) begin
        v              = VcW'(dep_vc_i[o]);
        occ_d[v]       = occ_d[v] - 16'd1;
        voq_d[o]       = voq_d[o] - 16'd1;
        vc_voq_d[v][o] = vc_voq_d[v][o] - 16'd1;
      end
      if (pop_valid_i[o]) begin
        v  = VcW'(pop_vc_i[o]);
        s  = head_q[v][o];
        nh = (rt_routed && rt_vc == v && 32'(rt_oi) == o && tail_q[v][o] == s) ? rt_slot_q
           : next_q[SIdxW'(s)];
        head_d[v][o] = nh;
        if (nh == Nil) tail_d[v][o] = Nil;
      end
    end
    // FA's escapes (after the pops, as in the Rust twin's clock edge): the head of (v, o) leaves
    // its FIFO for the tail of its escape route's, the flits it has received moving with it.
    for (int o = 0; o < P; o++) begin
      for (int w = 0; w < V; w++) begin
        es_slot[o][w] = '0;
        es_prev[o][w] = Nil;
        es_port[o][w] = '0;
        es_nvc[o][w]  = '0;
        if (esc_i[o][w]) begin
          v  = VcW'(w);
          s  = head_q[v][o];
          nh = (tail_q[v][o] == s) ? link[v][o] : next_q[SIdxW'(s)];
          head_d[v][o] = nh;
          if (nh == Nil) tail_d[v][o] = Nil;
          got = desc_q[SIdxW'(s)].len;
          if (rx_valid_q && rx_slot_q == s) got = got - rx_left_q + 16'(body_we);
          ep = PortW'(esc_q[SIdxW'(s)]);
          voq_d[o]       = voq_d[o] - got;
          vc_voq_d[v][o] = vc_voq_d[v][o] - got;
          voq_d[ep]       = voq_d[ep] + got;
          vc_voq_d[v][ep] = vc_voq_d[v][ep] + got;
          es_slot[o][w] = s;
          es_prev[o][w] = tail_d[v][ep];
          es_port[o][w] = esc_q[SIdxW'(s)];
          es_nvc[o][w]  = sl2vl_q[ep][desc_q[SIdxW'(s)].sl[3:0]];
          if (tail_d[v][ep] == Nil) head_d[v][ep] = s;
          else if (tail_d[v][ep] == tail_q[v][ep] && link[v][ep] == Nil) link[v][ep] = s;
          tail_d[v][ep] = s;
        end
      end
    end
  end

  // Upstream: one credit per flit that left this cycle, per VC.
  always_comb begin
    buffered_o = '0;
    for (int v = 0; v < V; v++) buffered_o = buffered_o + 32'(occ_q[v]);
    for (int v = 0; v < V; v++) begin
      credit_o[v] = '0;
      for (int o = 0; o < P; o++) begin
        if (dep_valid_i[o] && 32'(dep_vc_i[o]) == v) credit_o[v] = credit_o[v] + 8'd1;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // The pool's route fields and list links after the clock edge, written in the order of the
  // Rust twin's: the routing stage (a routed packet joins its FIFO), a head taking its slot, FA's
  // escapes (the slot joins its escape route's FIFO, behind the tail of that moment).
  logic [SlotW-1:0] next_d [Pool];
  logic [7:0]       out_d  [Pool];
  logic [3:0]       nvc_d  [Pool];
  logic [15:0]      res_d  [Pool];
  logic [31:0]      stamp_d [Pool];
  always_comb begin
    next_d  = next_q;
    out_d   = out_q;
    nvc_d   = nvc_q;
    res_d   = res_q;
    stamp_d = stamp_q;
    if (rt_routed) begin
      stamp_d[SIdxW'(rt_slot_q)] = stamp_i;
      out_d[SIdxW'(rt_slot_q)] = rt_out;
      nvc_d[SIdxW'(rt_slot_q)] = rt_nvc;
      res_d[SIdxW'(rt_slot_q)] = rt_res;
      if (tail_q[rt_vc][rt_oi] != Nil) next_d[SIdxW'(tail_q[rt_vc][rt_oi])] = rt_slot_q;
      next_d[SIdxW'(rt_slot_q)] = Nil;
    end
    if (head_we) begin
      out_d[SIdxW'(free_slot)]  = '0;
      nvc_d[SIdxW'(free_slot)]  = '0;
      res_d[SIdxW'(free_slot)]  = '0;
      stamp_d[SIdxW'(free_slot)] = '0;
      next_d[SIdxW'(free_slot)] = Nil;
    end
    for (int o = 0; o < P; o++) begin
      for (int w = 0; w < V; w++) begin
        if (esc_i[o][w]) begin
          if (es_prev[o][w] != Nil) next_d[SIdxW'(es_prev[o][w])] = es_slot[o][w];
          next_d[SIdxW'(es_slot[o][w])] = Nil;
          out_d[SIdxW'(es_slot[o][w])]  = es_port[o][w];
          nvc_d[SIdxW'(es_slot[o][w])]  = es_nvc[o][w];
          res_d[SIdxW'(es_slot[o][w])]  = '0;
          stamp_d[SIdxW'(es_slot[o][w])] = stamp_i;
        end
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // The SL-to-VL column's clock edge.
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      for (int o = 0; o < P; o++) begin
        for (int l = 0; l < 16; l++) sl2vl_q[o][l] <= 4'(l);
      end
    end else if (sl2vl_wr_en_i && sl2vl_wr_in_i == port_idx_i && 32'(sl2vl_wr_out_i) < P) begin
      sl2vl_q[PortW'(sl2vl_wr_out_i)][sl2vl_wr_sl_i] <= sl2vl_wr_vl_i;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Clock edge. The pool is written in the order of the Rust clock edge: route, arrival,
  // departures (the last write of an element wins).
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      used_q     <= '0;
      routed_q   <= '0;
      head_q     <= '{default: '{default: Nil}};
      tail_q     <= '{default: '{default: Nil}};
      vc_voq_q   <= '{default: '{default: '0}};
      occ_q      <= '{default: '0};
      voq_q      <= '{default: '0};
      rx_valid_q <= 1'b0;
      rx_slot_q  <= '0;
      rx_left_q  <= '0;
      rt_valid_q <= 1'b0;
      rt_slot_q  <= '0;
    end else begin
      head_q     <= head_d;
      tail_q     <= tail_d;
      occ_q      <= occ_d;
      voq_q      <= voq_d;
      vc_voq_q   <= vc_voq_d;
      rx_valid_q <= rx_valid_d;
      rx_slot_q  <= rx_slot_d;
      rx_left_q  <= rx_left_d;
      rt_valid_q <= head_we;
      rt_slot_q  <= head_we ? free_slot : rt_slot_q;
      // Routing stage: the header's adapted bit; a routed packet joins its FIFO.
      if (rt_valid_q) begin
        // An unrouted packet keeps its header as it came.
        desc_q[SIdxW'(rt_slot_q)].flags <= rt_routed ? rt_flags : rt_desc.flags;
        if (rt_routed) begin
          routed_q[SIdxW'(rt_slot_q)] <= 1'b1;
          esc_q[SIdxW'(rt_slot_q)]    <= rt_det;
        end
      end
      // Link receive: a head takes its slot.
      if (head_we) begin
        used_q[SIdxW'(free_slot)]   <= 1'b1;
        routed_q[SIdxW'(free_slot)] <= 1'b0;
        desc_q[SIdxW'(free_slot)]   <= '{cid: flit_desc_i.cid, flags: flit_desc_i.flags,
                                         orig_vc: flit_desc_i.orig_vc,
                                         vc: 8'(flit_vc_i), sl: flit_desc_i.sl,
                                         len: flit_desc_i.len, dlid: flit_desc_i.dlid,
                                         src: flit_desc_i.src, id: flit_desc_i.id,
                                         injected: flit_desc_i.injected};
      end
      // The route fields and list links of the pool.
      next_q <= next_d;
      out_q  <= out_d;
      nvc_q  <= nvc_d;
      res_q  <= res_d;
      stamp_q <= stamp_d;
      // Departures: a tail frees its slot. (The Rust twin also clears the list link of a popped
      // slot; that link is never read again before the slot is taken anew, which rewrites it,
      // so it is left as it is here.)
      for (int o = 0; o < P; o++) begin
        if (dep_valid_i[o] && dep_tail_i[o]) used_q[SIdxW'(dep_slot_i[o])] <= 1'b0;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Checks.
  `include "input_port_ctrl_checks.svh"
endmodule
