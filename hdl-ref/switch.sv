`include "arnsim_assert.svh"

// The switch: P ports, each an input port controller (input_port_ctrl) and an output port
// (output_port), one ARN table and a queue of processARN commands shared by all ports.
//
// Contract
// - Ports (docs/recording.md): per port p, in_flit_*_i[p] is the flit arriving on input link p,
//   in_credit_i[p][vc] the credits the far buffer of output p returns, in_arn_*_i[p] an ARN
//   arriving on the reverse direction of output p (its port field is ignored: p is used).
//   out_flit_*_o[p] is the flit leaving on output p, out_credit_o[p][vc] the credits input p
//   frees (one per flit of that VC that left it, over all outputs), out_arn_*_o[p] the ARN
//   input p sends upstream; in_cnm_*_i[p] a QCN CNM arriving on the reverse direction of output
//   p, out_cnm_*_o[p] the CNM sent upstream by input p (cnm_unit.sv). Every output is combinational from the registers and this cycle's
//   inputs; the registers take the cycle's writes at the rising edge.
// - One cycle, in the order the decisions feed each other (src/cycle/mod.rs):
//   1. each output's congestion detector evaluates; a declared root files a processARN command
//      with ARNid {id, next 20-bit sequence number} (sequence numbers taken in port order); a
//      standing root re-files every ArnGap cycles;
//   2. ARNs arriving on the outputs' reverse directions file processARN commands;
//   3. the oldest command (the queue's front, else the first filed this cycle) is applied to
//      the ARN table (pseudo-code 2; a consumed entry, root_info == stage, gets the alternative
//      of the destination other than the command's port with the most credits, pseudo-code 3);
//      each input routes the head that arrived in the cycle before (pseudo-code 4);
//   4. each input takes the flit on its link;
//   5. each output sends the next flit of its packet and, when idle or sending a tail,
//      arbitrates among the heads that fit in its credits (virtual cut-through); under FCFS
//      (cfg_i.fcfs) only those with the oldest stamp request (a packet joining a FIFO takes
//      the number of the next cycle, cyc_q + 1, as its stamp);
//   6. each input sends upstream the credits of the flits that left it and its oldest ARN.
//   The processARN queue (arn_cmd_queue.sv, CmdDepth deep) takes this cycle's commands in
//   filing order while it has room, then its front leaves if it was applied.
// - LFT: lft_wr_*_i writes one linear entry of every input's lft_banks and of the switch's own
//   copy (lft_q below). lft_banks clears its memory during reset, so the table is written after
//   reset is released, while the links are idle (m_lft_write_idle); a switch just out of reset
//   stays in its reset state while its links are idle.
//   lft_q is the combinational read the ARN unit and Adaptive-Th need (pseudo-code 3, the
//   options of dest|1 read in the same cycle): a second memory with asynchronous read ports,
//   written by the same write port as the per-input lft_banks, not a copy of their registers.
// - SL-to-VL tables (one per output port: input port and SL to VL): sl2vl_wr_*_i writes one
//   entry, kept by the input port it names (each input holds its column, every output and
//   SL); reset maps every SL to the VL of the same number. Written like the LFT, after reset
//   while the links are idle (m_sl2vl_write_idle).
// - Configuration (cfg_i, switch_pkg::cfg_t): routing mode, queuing scheme, id, stage, up ports,
//   seed, adapted refresh, FCFS arbitration, FECN marking, QCN congestion points. Like the LFT it is what the subnet manager
//   programs; it is an input held constant from before reset is released (m_cfg_stable), so one
//   build of the switch serves every switch of a fabric and every routing mode, and it takes
//   effect at reset.
// - Oblivious routing draws from SplitMix64 (state reset to seed ^ id * golden gamma):
//   below(n) is the high 64 bits of next * n; the inputs that draw do so in ascending order.
// - Flow routing (RtFlow): the inputs' route caches and the port selection unit (flow_unit.sv).
// - Synchronous active-low reset.
// Assertions in switch_checks.svh (included at the end of the module) and in the port modules;
// hdl-ref/arnsim_assert.svh has the macros.
// Parameters
// - P ports (1..64), V VCs (1..16) = cfg_i.qvcs regular VCs + 1 AFC under AFI, Cap flits per input
//   VC (1..65535), Pool descriptors per input, Lmc (0..4) and Rows of the LFT, OutCaps: the far
//   buffer's flits per VC of output p in bits [16p+15:16p].
// - Entries (1..64), Ttl, ArnGap of the ARN machinery, CmdDepth of the processARN queue;
//   Hcdth, Lcdth, Fcth, Crt of the detectors; AdaptiveTh (flits); SnEntries, SnTtl of snooped
//   AR's congestion table (cnm_unit.sv); PrcEntries (1..64) of each input's route cache
//   (flow_unit.sv).
// Twin: src/cycle/mod.rs, src/cycle/step.rs, src/cycle/qcn.rs, src/cycle/flow.rs
module switch
  import switch_pkg::*;
#(
  parameter  int unsigned P              = 4,
  parameter  int unsigned V              = 2,
  parameter  int unsigned Cap            = 16,
  parameter  int unsigned Pool           = 37,
  parameter  int unsigned Lmc            = 1,
  parameter  int unsigned Rows           = 16,
  parameter  logic [1023:0] OutCaps      = {64{16'd16}},
  parameter  int unsigned Entries        = 8,
  parameter  int unsigned Ttl            = 3000,
  parameter  int unsigned ArnGap         = 40,
  parameter  int unsigned CmdDepth       = 64,
  parameter  int unsigned Hcdth          = 12,
  parameter  int unsigned Lcdth          = 10,
  parameter  int unsigned Fcth           = 12,
  parameter  int unsigned Crt            = 24,
  parameter  int unsigned AdaptiveTh     = 12,
  parameter  int unsigned SnEntries      = 16,
  parameter  int unsigned SnTtl          = 64,
  parameter  int unsigned PrcEntries     = 16,
  localparam int unsigned Banks          = 1 << Lmc,
  localparam int unsigned SlotW          = $clog2(Pool + 1),
  localparam int unsigned EIdxW          = (Entries > 1) ? $clog2(Entries) : 1,
  localparam int unsigned PortW          = (P > 1) ? $clog2(P) : 1,
  localparam int unsigned VcW            = (V > 1) ? $clog2(V) : 1
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  // Configuration registers (held constant from before reset is released).
  input  cfg_t          cfg_i,
  // LFT write port.
  input  logic          lft_wr_en_i,
  input  logic [15:0]   lft_wr_lid_i,
  input  logic [7:0]    lft_wr_port_i,
  // SL-to-VL write port: the VL of SL sl2vl_wr_sl_i from input sl2vl_wr_in_i at output
  // sl2vl_wr_out_i.
  input  logic          sl2vl_wr_en_i,
  input  logic [7:0]    sl2vl_wr_out_i,
  input  logic [7:0]    sl2vl_wr_in_i,
  input  logic [3:0]    sl2vl_wr_sl_i,
  input  logic [3:0]    sl2vl_wr_vl_i,
  // What each port receives.
  input  logic [P-1:0]  in_flit_valid_i,
  input  logic [3:0]    in_flit_vc_i    [P],
  input  logic [P-1:0]  in_flit_head_i,
  input  logic [P-1:0]  in_flit_tail_i,
  input  desc_t         in_flit_desc_i  [P],
  input  logic [7:0]    in_credit_i     [P][V],
  input  logic [P-1:0]  in_arn_valid_i,
  input  arn_t          in_arn_i        [P],
  input  logic [P-1:0]  in_cnm_valid_i,
  input  cnm_t          in_cnm_i        [P],
  // What each port drives.
  output logic [P-1:0]  out_flit_valid_o,
  output logic [3:0]    out_flit_vc_o   [P],
  output logic [P-1:0]  out_flit_head_o,
  output logic [P-1:0]  out_flit_tail_o,
  output desc_t         out_flit_desc_o [P],
  output logic [7:0]    out_credit_o    [P][V],
  output logic [P-1:0]  out_arn_valid_o,
  output arn_t          out_arn_o       [P],
  output logic [P-1:0]  out_cnm_valid_o,
  output cnm_t          out_cnm_o       [P]
);
  localparam logic [7:0]  Afc     = 8'(V - 1);
  localparam int unsigned RowW    = (Rows > 1) ? $clog2(Rows) : 1;

  // The mode's features, from the configuration.
  logic afi, uses_arn;
  assign afi      = routing_afi(32'(cfg_i.routing));
  assign uses_arn = routing_uses_arn(32'(cfg_i.routing));

  // ---------------------------------------------------------------------------------------------
  // Wires between the ports. Arrays indexed [input][vc][output] come from the inputs, those
  // indexed [output] from the outputs.
  logic             hd_valid   [P][V][P];
  logic [SlotW-1:0] hd_slot    [P][V][P];
  logic [15:0]      hd_len     [P][V][P];
  logic [3:0]       hd_nvc     [P][V][P];
  logic [15:0]      hd_res     [P][V][P];
  logic [31:0]      hd_stamp   [P][V][P];
  logic [15:0]      voq_occ    [P][P];
  logic             det_valid  [P][P];
  logic [15:0]      det_dest   [P][P];
  logic [7:0]       det_vc     [P][P];
  logic             det_adapt  [P][P];
  logic [3:0]       det_nvc    [P][P];
  desc_t            rd_desc    [P][P];
  logic [31:0]      buffered   [P];
  logic [P-1:0]     route_valid;
  logic [7:0]       route_out  [P];
  desc_t            route_desc [P];
  // Per input: routing-stage requests and answers.
  logic             lk_en      [P];
  logic [15:0]      lk_dest    [P];
  logic [7:0]       lk_vc      [P];
  logic             lk_hit     [P];
  logic             lk_consumed[P];
  logic [EIdxW-1:0] lk_idx     [P];
  logic [7:0]       lk_port    [P];
  logic [31:0]      lk_arn_id  [P];
  logic [7:0]       lk_root    [P];
  logic [7:0]       lk_alt     [P];
  logic [P-1:0]     rng_req;
  logic [4:0]       rng_n      [P];
  logic [4:0]       rng_k      [P];
  logic [P-1:0]     at_req;
  logic [15:0]      at_dest    [P];
  logic [7:0]       at_vc      [P];
  logic [7:0]       at_avoid   [P];
  logic [7:0]       at_alt     [P];
  logic [P-1:0]     sn_req;
  logic [15:0]      sn_dest    [P];
  logic [7:0]       sn_det     [P];
  logic [7:0]       sn_out     [P];
  logic [P-1:0]     fl_req;
  logic [7:0]       fl_out     [P];
  // Per output.
  logic [15:0]      credits    [P][V];
  logic [PortW-1:0] tx_input   [P];
  logic [SlotW-1:0] tx_slot    [P];
  desc_t            tx_desc    [P];
  logic [P-1:0]     dep_valid;
  logic [PortW-1:0] dep_input  [P];
  logic [SlotW-1:0] dep_slot   [P];
  logic [3:0]       dep_vc     [P];
  logic [P-1:0]     dep_tail;
  logic [15:0]      dep_sent   [P];
  logic [P-1:0]     gnt_valid;
  logic [PortW-1:0] gnt_input  [P];
  logic [3:0]       gnt_vc     [P];
  logic [P-1:0]     root_det;
  logic [31:0]      root_arn_id[P];
  logic [P-1:0]     cmd_valid;
  arn_t             cmd        [P];
  logic [P-1:0]     cmd_adapted;
  // Per input, the outputs' view: each output's pop, departure and read address.
  logic [P-1:0]     pop_valid_in [P];
  logic [P-1:0]     dep_valid_in [P];
  // Per output, the inputs' view: [input][vc] of this output.
  logic             o_hd_valid [P][P][V];
  logic [SlotW-1:0] o_hd_slot  [P][P][V];
  logic [15:0]      o_hd_len   [P][P][V];
  logic [3:0]       o_hd_nvc   [P][P][V];
  logic [15:0]      o_hd_res   [P][P][V];
  logic [31:0]      o_hd_stamp [P][P][V];
  // FA: per output, the VCs of each input whose adaptive head leaves for its escape queue; and
  // per input, the same from each output.
  logic [V-1:0]     o_esc      [P][P];
  logic [V-1:0]     in_esc     [P][P];
  logic [15:0]      o_voq_occ  [P][P];
  logic             o_det_valid[P][P];
  logic [15:0]      o_det_dest [P][P];
  logic [7:0]       o_det_vc   [P][P];
  logic             o_det_adapt[P][P];
  logic [3:0]       o_det_nvc  [P][P];

  always_comb begin
    for (int o = 0; o < P; o++) begin
      for (int i = 0; i < P; i++) begin
        for (int v = 0; v < V; v++) begin
          o_hd_valid[o][i][v] = hd_valid[i][v][o];
          o_hd_slot[o][i][v]  = hd_slot[i][v][o];
          o_hd_len[o][i][v]   = hd_len[i][v][o];
          o_hd_nvc[o][i][v]   = hd_nvc[i][v][o];
          o_hd_res[o][i][v]   = hd_res[i][v][o];
          o_hd_stamp[o][i][v] = hd_stamp[i][v][o];
        end
      end
    end
  end
  always_comb begin
    for (int o = 0; o < P; o++) begin
      for (int i = 0; i < P; i++) begin
        o_voq_occ[o][i]   = voq_occ[i][o];
        o_det_valid[o][i] = det_valid[i][o];
        o_det_dest[o][i]  = det_dest[i][o];
        o_det_vc[o][i]    = det_vc[i][o];
        o_det_adapt[o][i] = det_adapt[i][o];
        o_det_nvc[o][i]   = det_nvc[i][o];
      end
    end
  end
  always_comb begin
    for (int i = 0; i < P; i++) begin
      for (int o = 0; o < P; o++) begin
        pop_valid_in[i][o] = gnt_valid[o] && 32'(gnt_input[o]) == i;
        in_esc[i][o]       = o_esc[o][i];
        dep_valid_in[i][o] = dep_valid[o] && 32'(dep_input[o]) == i;
      end
    end
  end
  always_comb begin
    for (int o = 0; o < P; o++) tx_desc[o] = rd_desc[tx_input[o]][o];
  end

  // ---------------------------------------------------------------------------------------------
  // FCFS: the cycle counter whose next value a packet joining a FIFO takes as its stamp (32
  // bits, wrapping; the outputs compare stamps as serial numbers).
  logic [31:0] cyc_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) cyc_q <= '0;
    else         cyc_q <= cyc_q + 32'd1;
  end

  // ---------------------------------------------------------------------------------------------
  // Input port controllers.
  for (genvar i = 0; i < P; i++) begin : g_in
    input_port_ctrl #(
      .P(P), .V(V), .Cap(Cap), .Pool(Pool), .Lmc(Lmc), .Rows(Rows), .Entries(Entries),
      .ArnGap(ArnGap), .AdaptiveTh(AdaptiveTh), .OutCaps(OutCaps)
    ) u_in (
      .clk_i,
      .rst_ni,
      .cfg_i,
      .lft_wr_en_i,
      .lft_wr_lid_i,
      .lft_wr_port_i,
      .port_idx_i     (8'(i)),
      .sl2vl_wr_en_i,
      .sl2vl_wr_out_i,
      .sl2vl_wr_in_i,
      .sl2vl_wr_sl_i,
      .sl2vl_wr_vl_i,
      .flit_valid_i   (in_flit_valid_i[i]),
      .flit_vc_i      (in_flit_vc_i[i]),
      .flit_head_i    (in_flit_head_i[i]),
      .flit_tail_i    (in_flit_tail_i[i]),
      .flit_desc_i    (in_flit_desc_i[i]),
      .credit_o       (out_credit_o[i]),
      .arn_valid_o    (out_arn_valid_o[i]),
      .arn_o          (out_arn_o[i]),
      .lk_en_o        (lk_en[i]),
      .lk_dest_o      (lk_dest[i]),
      .lk_vc_o        (lk_vc[i]),
      .lk_hit_i       (lk_hit[i]),
      .lk_consumed_i  (lk_consumed[i]),
      .lk_idx_i       (lk_idx[i]),
      .lk_port_i      (lk_port[i]),
      .lk_arn_id_i    (lk_arn_id[i]),
      .lk_root_info_i (lk_root[i]),
      .lk_alt_port_i  (lk_alt[i]),
      .rng_req_o      (rng_req[i]),
      .rng_n_o        (rng_n[i]),
      .rng_k_i        (rng_k[i]),
      .at_req_o       (at_req[i]),
      .at_dest_o      (at_dest[i]),
      .at_vc_o        (at_vc[i]),
      .at_avoid_o     (at_avoid[i]),
      .at_alt_i       (at_alt[i]),
      .sn_req_o       (sn_req[i]),
      .sn_dest_o      (sn_dest[i]),
      .sn_det_o       (sn_det[i]),
      .sn_out_i       (sn_out[i]),
      .fl_req_o       (fl_req[i]),
      .fl_out_i       (fl_out[i]),
      .hd_valid_o     (hd_valid[i]),
      .hd_slot_o      (hd_slot[i]),
      .hd_len_o       (hd_len[i]),
      .hd_nvc_o       (hd_nvc[i]),
      .hd_res_o       (hd_res[i]),
      .hd_stamp_o     (hd_stamp[i]),
      .stamp_i        (cyc_q + 32'd1),
      .out_cred_i     (credits),
      .esc_i          (in_esc[i]),
      .voq_occ_o      (voq_occ[i]),
      .det_valid_o    (det_valid[i]),
      .det_dest_o     (det_dest[i]),
      .det_vc_o       (det_vc[i]),
      .det_adapted_o  (det_adapt[i]),
      .det_nvc_o      (det_nvc[i]),
      .pop_valid_i    (pop_valid_in[i]),
      .pop_vc_i       (gnt_vc),
      .dep_valid_i    (dep_valid_in[i]),
      .dep_slot_i     (dep_slot),
      .dep_vc_i       (dep_vc),
      .dep_tail_i     (dep_tail),
      .dep_sent_i     (dep_sent),
      .rd_slot_i      (tx_slot),
      .rd_desc_o      (rd_desc[i]),
      .route_valid_o  (route_valid[i]),
      .route_out_o    (route_out[i]),
      .route_desc_o   (route_desc[i]),
      .buffered_o     (buffered[i])
    );
  end

  // ---------------------------------------------------------------------------------------------
  // Output ports.
  for (genvar o = 0; o < P; o++) begin : g_out
    // The root_info of this output's ARNs: the stage toward the roots, one below toward the
    // leaves.
    logic [7:0] root_info;
    assign root_info = cfg_i.up_ports[o] ? cfg_i.stage
                                         : ((cfg_i.stage > 0) ? cfg_i.stage - 8'd1 : 8'd0);
    output_port #(
      .P(P), .V(V), .OutCap(32'(OutCaps[16*o +: 16])), .SlotW(SlotW), .Hcdth(Hcdth),
      .Lcdth(Lcdth), .Fcth(Fcth), .Crt(Crt), .ArnGap(ArnGap), .Port(o)
    ) u_out (
      .clk_i,
      .rst_ni,
      .uses_arn_i    (uses_arn),
      .fcfs_i        (cfg_i.fcfs),
      .fecn_thr_i    (cfg_i.fecn_threshold),
      .fecn_rate_i   (cfg_i.fecn_rate),
      .fecn_len_i    (cfg_i.fecn_min_len),
      .fecn_victim_i (cfg_i.fecn_victims[o]),
      .root_info_i   (root_info),
      .credit_i      (in_credit_i[o]),
      .credits_o     (credits[o]),
      .hd_valid_i    (o_hd_valid[o]),
      .hd_slot_i     (o_hd_slot[o]),
      .hd_len_i      (o_hd_len[o]),
      .hd_nvc_i      (o_hd_nvc[o]),
      .hd_res_i      (o_hd_res[o]),
      .hd_stamp_i    (o_hd_stamp[o]),
      .esc_o         (o_esc[o]),
      .voq_occ_i     (o_voq_occ[o]),
      .det_valid_i   (o_det_valid[o]),
      .det_dest_i    (o_det_dest[o]),
      .det_vc_i      (o_det_vc[o]),
      .det_adapted_i (o_det_adapt[o]),
      .det_nvc_i     (o_det_nvc[o]),
      .tx_input_o    (tx_input[o]),
      .tx_slot_o     (tx_slot[o]),
      .tx_desc_i     (tx_desc[o]),
      .flit_valid_o  (out_flit_valid_o[o]),
      .flit_vc_o     (out_flit_vc_o[o]),
      .flit_head_o   (out_flit_head_o[o]),
      .flit_tail_o   (out_flit_tail_o[o]),
      .flit_desc_o   (out_flit_desc_o[o]),
      .dep_valid_o   (dep_valid[o]),
      .dep_input_o   (dep_input[o]),
      .dep_slot_o    (dep_slot[o]),
      .dep_vc_o      (dep_vc[o]),
      .dep_tail_o    (dep_tail[o]),
      .dep_sent_o    (dep_sent[o]),
      .gnt_valid_o   (gnt_valid[o]),
      .gnt_input_o   (gnt_input[o]),
      .gnt_vc_o      (gnt_vc[o]),
      .root_det_o    (root_det[o]),
      .root_arn_id_i (root_arn_id[o]),
      .cmd_valid_o   (cmd_valid[o]),
      .cmd_o         (cmd[o]),
      .cmd_adapted_o (cmd_adapted[o])
    );
  end

  // ---------------------------------------------------------------------------------------------
  // The LFT's combinational copy (see the contract): the same write port as lft_banks.
  logic [8*Banks-1:0] lft_q [Rows];
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      lft_q <= '{default: '1};
    end else if (lft_wr_en_i && (32'(lft_wr_lid_i) >> Lmc) < Rows) begin
      lft_q[RowW'(32'(lft_wr_lid_i) >> Lmc)][8*(32'(lft_wr_lid_i) % Banks) +: 8] <= lft_wr_port_i;
    end
  end

  // Pseudo-code 3: the usable option of dest|1 other than avoid (and below P) with the most
  // credits in the VC the packet would use downstream (the AFC under AFI, else vc; 0 credits for
  // a VC beyond V), the first on a tie; NoRoute when none.
  localparam int unsigned AltReqs = P + 1;
  logic [15:0] alt_dest  [AltReqs];
  logic [7:0]  alt_vc    [AltReqs];
  logic [7:0]  alt_avoid [AltReqs];
  logic [7:0]  alt_port  [AltReqs];
  always_comb begin
    logic [15:0]        lid, best_c, c;
    logic [8*Banks-1:0] row;
    logic [7:0]         nvc, p, best;
    lid    = '0;
    best_c = '0;
    c      = '0;
    row    = '1;
    nvc    = '0;
    p      = '0;
    best   = NoRoute;
    alt_port = '{default: NoRoute};
    for (int r = 0; r < AltReqs; r++) begin
      lid  = alt_dest[r] | 16'd1;
      nvc  = afi ? Afc : alt_vc[r];
      row  = '1;
      if ((32'(lid) >> Lmc) < Rows) row = lft_q[RowW'(32'(lid) >> Lmc)];
      best   = NoRoute;
      best_c = '0;
      for (int b = 0; b < Banks; b++) begin
        p = row[8*b +: 8];
        if (p != NoRoute && p != alt_avoid[r] && 32'(p) < P) begin
          c = (32'(nvc) < V) ? credits[PortW'(p)][VcW'(nvc)] : '0;
          if (best == NoRoute || c > best_c) begin
            best   = p;
            best_c = c;
          end
        end
      end
      alt_port[r] = best;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // QCN: the congestion points and the notification path (cnm_unit.sv).
  cnm_unit #(.P(P), .Lmc(Lmc), .Rows(Rows), .SnEntries(SnEntries), .SnTtl(SnTtl)) u_cnm (
    .clk_i,
    .rst_ni,
    .snoop_i         (32'(cfg_i.routing) == RtSnoopAr),
    .sn_req_i        (sn_req),
    .sn_dest_i       (sn_dest),
    .sn_det_i        (sn_det),
    .sn_out_o        (sn_out),
    .qeq_i           (cfg_i.qcn_qeq),
    .w_i             (cfg_i.qcn_w),
    .sample_i        (cfg_i.qcn_sample),
    .lft_i           (lft_q),
    .route_valid_i   (route_valid),
    .route_out_i     (route_out),
    .route_desc_i    (route_desc),
    .voq_occ_i       (voq_occ),
    .in_cnm_valid_i,
    .in_cnm_i,
    .out_cnm_valid_o,
    .out_cnm_o
  );

  // Flow routing: the route caches and the port selection unit (flow_unit.sv).
  flow_unit #(.P(P), .Lmc(Lmc), .Rows(Rows), .PrcEntries(PrcEntries)) u_flow (
    .clk_i,
    .rst_ni,
    .on_i          (32'(cfg_i.routing) == RtFlow),
    .lft_i         (lft_q),
    .route_desc_i  (route_desc),
    .fl_req_i      (fl_req),
    .fl_out_o      (fl_out)
  );

  // ---------------------------------------------------------------------------------------------
  // Oblivious routing: the inputs that draw, in ascending order.
  logic [63:0] rng_q, rng_d;
  always_comb begin
    logic [63:0] z;
    z     = '0;
    rng_d = rng_q;
    for (int i = 0; i < P; i++) begin
      rng_k[i] = '0;
      if (rng_req[i]) begin
        rng_d    = rng_d + Golden;
        z        = splitmix_mix(rng_d);
        // below(n): the high 64 bits of the 128-bit product z * n (n < 32: 5 bits).
        rng_k[i] = 5'((69'(z) * 69'(rng_n[i])) >> 64);
      end
    end
  end


  // Adaptive-Th: each input's alternative.
  always_comb begin
    for (int i = 0; i < P; i++) begin
      alt_dest[i]  = at_dest[i];
      alt_vc[i]    = at_vc[i];
      alt_avoid[i] = at_avoid[i];
    end
  end
  always_comb begin
    for (int i = 0; i < P; i++) begin
      at_alt[i] = at_req[i] ? alt_port[i] : NoRoute;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // ARN machinery: ARNids of declared roots, the processARN queue, the ARN table.
  logic [19:0] arn_seq_q, arn_seq_d;
  always_comb begin
    logic [19:0] seq;
    seq = arn_seq_q;
    for (int o = 0; o < P; o++) begin
      root_arn_id[o] = '0;
      if (root_det[o]) begin
        seq            = seq + 20'd1;
        root_arn_id[o] = (cfg_i.id << 20) | 32'(seq);
      end
    end
    arn_seq_d = seq;
  end

  // The processARN commands of this cycle (the outputs', then the ARNs received) and the queue
  // (arn_cmd_queue.sv); the command applied now (pr_*), consumed when it names this stage.
  logic              pr_en, pr_adapted, pr_consumed;
  arn_t              pr;
  arn_cmd_queue #(.P(P), .CmdDepth(CmdDepth)) u_cmdq (
    .clk_i,
    .rst_ni,
    .uses_arn_i      (uses_arn),
    .cmd_valid_i     (cmd_valid),
    .cmd_i           (cmd),
    .cmd_adapted_i   (cmd_adapted),
    .in_arn_valid_i,
    .in_arn_i,
    .pr_en_o         (pr_en),
    .pr_o            (pr),
    .pr_adapted_o    (pr_adapted)
  );
  always_comb begin
    pr_consumed  = pr_en && !pr_adapted && pr.root_info == cfg_i.stage;
    alt_dest[P]  = pr.dest;
    alt_vc[P]    = pr.vc;
    alt_avoid[P] = pr.port;
  end

  logic pr_hit, pr_evict, arn_full;
  logic [$clog2(Entries + 1)-1:0] arn_count;
  arn_table #(.Entries(Entries), .Ports(P), .Ttl(Ttl)) u_arn (
    .clk_i,
    .rst_ni,
    .lk_en_i        (lk_en),
    .lk_dest_i      (lk_dest),
    .lk_vc_i        (lk_vc),
    .pr_en_i        (pr_en),
    .pr_dest_i      (pr.dest),
    .pr_port_i      (pr.port),
    .pr_vc_i        (pr.vc),
    .pr_arn_id_i    (pr.arn_id),
    .pr_root_info_i (pr.root_info),
    .pr_consumed_i  (pr_consumed),
    .pr_alt_port_i  (pr_consumed ? alt_port[P] : NoRoute),
    .pr_add_i       (pr_en && !pr_adapted),
    .rm_en_i        (1'b0),
    .rm_dest_i      (16'd0),
    .rm_port_i      (8'd0),
    .rm_vc_i        (8'd0),
    .lk_hit_o       (lk_hit),
    .lk_consumed_o  (lk_consumed),
    .lk_idx_o       (lk_idx),
    .lk_port_o      (lk_port),
    .lk_arn_id_o    (lk_arn_id),
    .lk_root_info_o (lk_root),
    .lk_alt_port_o  (lk_alt),
    .pr_hit_o       (pr_hit),
    .pr_evict_o     (pr_evict),
    .count_o        (arn_count),
    .full_o         (arn_full)
  );
  // The command results and occupancy are statistics of the Rust twin, not used here.
  logic unused_arn;
  assign unused_arn = ^{pr_hit, pr_evict, arn_count, arn_full};

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rng_q     <= cfg_i.seed ^ (64'(cfg_i.id) * Golden);
      arn_seq_q <= '0;
    end else begin
      rng_q     <= rng_d;
      arn_seq_q <= arn_seq_d;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Checks.
  `include "switch_checks.svh"
endmodule
