`include "arnsim_assert.svh"

// Output port of one switch port: a credit counter per VC of the buffer at the far end of its
// link, two-level round-robin arbitration among the (input, VC) heads whose packet fits whole in
// the downstream credits (virtual cut-through), the packet being sent one flit per cycle from
// head to tail, the congestion detector of the output and its root register.
//
// Contract
// - Sending (tx_q): the packet won in cycle t sends its head in t+1 and one flit per cycle up to
//   its tail, on its next VC; the head flit carries the descriptor read from its input
//   (tx_desc_i, the pool read port addressed by tx_input_o/tx_slot_o) with vc = next VC, body
//   flits a zero descriptor. Each flit is a departure (dep_*_o) at its input and spends one
//   credit of its VC; credit_i returns credits.
// - Arbitration, when idle or sending a tail: input i requests with VC v when its (v, this
//   output) FIFO has a head whose packet fits in the credits of its next VC at the start of the
//   cycle, less the one this cycle's flit spends; under FA an adaptive head (hd_res_i, its escape
//   credits, not 0) needs those credits free too, and one short of them is sent on to its escape
//   queue (esc_o) instead of requesting. The input-level arbiter picks the input, that
//   input's VC-level arbiter the VC (both accept, moving their pointers, only on a grant); the
//   winner is popped from its FIFO (gnt_*_o) and its head leaves next cycle. Under FCFS
//   (fcfs_i) a request stands only if its head's stamp (hd_stamp_i, taken joining its FIFO) is
//   the oldest of the requests' (stamp_older); the arbiters choose among those.
// - FECN marking (fecn_marker, u_fecn; fecn_thr_i != 0; InfiniBand congestion control): each
//   grant is offered to the marker with the flits queued for this output (voq_occ_i summed),
//   the packet's length and whether some valid head lacks the credits to request (a victim); a
//   marked packet's head flit leaves with flags bit FlagFecn.
// - Congestion detection (uses_arn_i only; otherwise the detector sees empty VOQs and stays
//   idle): the detector watches every input's VOQ for this output
//   and the head of its fullest VC (head_fc = credits of that head's next VC). A declaration
//   loads the root register with the ARN {offending head's destination and original VC, this
//   port, root_arn_id_i, root_info_i} and files it as a processARN command (cmd_*_o, adapted as the
//   offending head); a release clears it; a standing root re-files its ARN (not adapted) every
//   ArnGap cycles.
// - Inputs: credits never return beyond the far buffer (m_credit_no_overflow); heads and the
//   detector's view come from the input controllers.
// - Synchronous active-low reset: nothing being sent, every counter at OutCap, arbiters at 0,
//   detector idle, no root.
// Assertions at the end of the module; hdl-ref/arnsim_assert.svh has the macros.
// Parameters
// - P inputs (1..64), V VCs (1..16), OutCap flits per VC of the far buffer (1..65535), SlotW
//   width of a pool slot number, Hcdth/Lcdth/Fcth/Crt of the detector, ArnGap, Port (this
//   port's number). From the switch's configuration: uses_arn_i (the routing mode uses ARNs)
//   and root_info_i (the root_info of the ARNs this port files: the stage for an up port, the
//   stage less one otherwise).
// Twin: src/cycle/output_port.rs (registers, transmit, vc_requests), src/cycle/detection.rs
// (detect), src/cycle/step.rs (commit)
module output_port
  import switch_pkg::*;
#(
  parameter  int unsigned P        = 4,
  parameter  int unsigned V        = 2,
  parameter  int unsigned OutCap   = 16,
  parameter  int unsigned SlotW    = 6,
  parameter  int unsigned Hcdth    = 12,
  parameter  int unsigned Lcdth    = 10,
  parameter  int unsigned Fcth     = 12,
  parameter  int unsigned Crt      = 24,
  parameter  int unsigned ArnGap   = 40,
  parameter  int unsigned Port     = 0,
  localparam int unsigned PortW    = (P > 1) ? $clog2(P) : 1,
  localparam int unsigned VcW      = (V > 1) ? $clog2(V) : 1
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // From the switch's configuration: ARN modes, and the root_info of this port's ARNs.
  input  logic             uses_arn_i,
  // From the switch's configuration: first come, first served arbitration.
  input  logic             fcfs_i,
  // From the switch's configuration: FECN marking (threshold 0: off), its rate, the shortest
  // packet it marks, and whether this port marks as a victim.
  input  logic [15:0]      fecn_thr_i,
  input  logic [15:0]      fecn_rate_i,
  input  logic [15:0]      fecn_len_i,
  input  logic             fecn_victim_i,
  input  logic [7:0]       root_info_i,
  // Credits returned by the far buffer, and the counts at the start of the cycle.
  input  logic [7:0]       credit_i      [V],
  output logic [15:0]      credits_o     [V],
  // Per input and VC: the head of its FIFO for this output.
  input  logic             hd_valid_i    [P][V],
  input  logic [SlotW-1:0] hd_slot_i     [P][V],
  input  logic [15:0]      hd_len_i      [P][V],
  input  logic [3:0]       hd_nvc_i      [P][V],
  // FA: per input and VC, the escape credits its adaptive head needs free beside its length (0:
  // not adaptive); the VCs whose adaptive head is short of them while this output arbitrates
  // leave for their escape queue at the clock edge.
  input  logic [15:0]      hd_res_i      [P][V],
  // FCFS: per input and VC, the stamp its head took joining its FIFO.
  input  logic [31:0]      hd_stamp_i    [P][V],
  output logic [V-1:0]     esc_o         [P],
  // Per input: its VOQ for this output and the detector's head.
  input  logic [15:0]      voq_occ_i     [P],
  input  logic             det_valid_i   [P],
  input  logic [15:0]      det_dest_i    [P],
  input  logic [7:0]       det_vc_i      [P],
  input  logic             det_adapted_i [P],
  input  logic [3:0]       det_nvc_i     [P],
  // The packet being sent and its descriptor.
  output logic [PortW-1:0] tx_input_o,
  output logic [SlotW-1:0] tx_slot_o,
  input  desc_t            tx_desc_i,
  // The output link.
  output logic             flit_valid_o,
  output logic [3:0]       flit_vc_o,
  output logic             flit_head_o,
  output logic             flit_tail_o,
  output desc_t            flit_desc_o,
  // To the inputs: the flit leaving, the head won.
  output logic             dep_valid_o,
  output logic [PortW-1:0] dep_input_o,
  output logic [SlotW-1:0] dep_slot_o,
  output logic [3:0]       dep_vc_o,
  output logic             dep_tail_o,
  output logic [15:0]      dep_sent_o,
  output logic             gnt_valid_o,
  output logic [PortW-1:0] gnt_input_o,
  output logic [3:0]       gnt_vc_o,
  // Root register: declaration, its ARNid, the processARN command filed.
  output logic             root_det_o,
  input  logic [31:0]      root_arn_id_i,
  output logic             cmd_valid_o,
  output arn_t             cmd_o,
  output logic             cmd_adapted_o
);
  localparam logic [31:0] GapLoad = (ArnGap > 0) ? 32'(ArnGap - 1) : 32'd0;

  // tx_q: the packet being sent.
  logic             tx_valid_q, tx_valid_d;
  logic [PortW-1:0] tx_input_q, tx_input_d;
  logic [SlotW-1:0] tx_slot_q, tx_slot_d;
  logic [3:0]       tx_in_vc_q, tx_in_vc_d;
  logic [3:0]       tx_nvc_q, tx_nvc_d;
  logic [15:0]      tx_len_q, tx_len_d;
  logic [15:0]      tx_sent_q, tx_sent_d;
  logic             tx_fecn_q, tx_fecn_d;
  // root_q.
  logic             root_valid_q, root_valid_d;
  arn_t             root_q, root_d;
  logic [31:0]      refresh_q, refresh_d;

  // ---------------------------------------------------------------------------------------------
  // Credit counters: one credit spent per flit sent on the VC.
  logic             sending, tail, finishing;
  logic [15:0]      cnt [V];

  assign sending   = tx_valid_q;
  assign tail      = tx_sent_q + 16'd1 == tx_len_q;
  assign finishing = !tx_valid_q || tail;

  for (genvar v = 0; v < V; v++) begin : g_cc
    logic enough, ovf, udf;
    credit_counter #(.Cap(OutCap)) u_cc (
      .clk_i,
      .rst_ni,
      .dec_i    (sending && 32'(tx_nvc_q) == v),
      .inc_i    (credit_i[v]),
      .need_i   (16'd0),
      .cnt_o    (cnt[v]),
      .enough_o (enough),
      .ovf_o    (ovf),
      .udf_o    (udf)
    );
    // enough_o serves a need_i this port does not use (the requests below compare the count
    // with each head's length); the flags are covered by m_credit_no_overflow and
    // a_head_has_credits.
    logic unused_cc;
    assign unused_cc = ^{enough, ovf, udf};
  end
  assign credits_o = cnt;

  // ---------------------------------------------------------------------------------------------
  // The flit sent.
  assign tx_input_o = tx_input_q;
  assign tx_slot_o  = tx_slot_q;
  always_comb begin
    flit_valid_o = tx_valid_q;
    flit_vc_o    = tx_valid_q ? tx_nvc_q : '0;
    flit_head_o  = tx_valid_q && tx_sent_q == '0;
    flit_tail_o  = tx_valid_q && tail;
    flit_desc_o  = '0;
    if (tx_valid_q && tx_sent_q == '0) begin
      flit_desc_o    = tx_desc_i;
      flit_desc_o.vc = 8'(tx_nvc_q);
      if (tx_fecn_q) flit_desc_o.flags[FlagFecn] = 1'b1;
    end
    dep_valid_o = tx_valid_q;
    dep_input_o = tx_input_q;
    dep_slot_o  = tx_slot_q;
    dep_vc_o    = tx_in_vc_q;
    dep_tail_o  = tx_valid_q && tail;
    dep_sent_o  = tx_sent_q;
  end

  // ---------------------------------------------------------------------------------------------
  // Requests and arbitration.
  logic [V-1:0]     vc_req [P];
  logic [P-1:0]     in_req;
  logic [P-1:0]     in_gnt;
  logic             in_valid;
  logic [PortW-1:0] in_idx;
  logic [V-1:0]     vc_gnt [P];
  logic             vc_valid [P];
  logic [VcW-1:0]   vc_idx [P];
  // FECN: some valid head lacks the credits to request (the output is a victim).
  logic             short_head;

  always_comb begin
    logic [15:0] c;
    logic [16:0] need;
    // FCFS: the oldest stamp among the requests (the first of the oldest in input, then VC
    // order).
    logic        any;
    logic [31:0] oldest;
    any        = 1'b0;
    oldest     = '0;
    short_head = 1'b0;
    for (int i = 0; i < P; i++) begin
      for (int v = 0; v < V; v++) begin
        c = cnt[VcW'(hd_nvc_i[i][v])];
        if (sending && tx_nvc_q == hd_nvc_i[i][v] && c != '0) c = c - 16'd1;
        need         = 17'(hd_len_i[i][v]) + 17'(hd_res_i[i][v]);
        vc_req[i][v] = hd_valid_i[i][v] && 17'(c) >= need;
        if (hd_valid_i[i][v] && !vc_req[i][v]) short_head = 1'b1;
        esc_o[i][v]  = finishing && hd_valid_i[i][v] && hd_res_i[i][v] != '0 && 17'(c) < need;
        if (vc_req[i][v] && (!any || stamp_older(hd_stamp_i[i][v], oldest))) begin
          oldest = hd_stamp_i[i][v];
          any    = 1'b1;
        end
      end
    end
    for (int i = 0; i < P; i++) begin
      for (int v = 0; v < V; v++) begin
        if (fcfs_i && hd_stamp_i[i][v] != oldest) vc_req[i][v] = 1'b0;
      end
      in_req[i] = |vc_req[i];
    end
  end

  rr_arbiter #(.N(P)) u_in_arb (
    .clk_i,
    .rst_ni,
    .req_i   (in_req),
    .ack_i   (finishing),
    .gnt_o   (in_gnt),
    .valid_o (in_valid),
    .idx_o   (in_idx)
  );

  for (genvar i = 0; i < P; i++) begin : g_vc_arb
    rr_arbiter #(.N(V)) u_vc_arb (
      .clk_i,
      .rst_ni,
      .req_i   (vc_req[i]),
      .ack_i   (finishing && in_valid && 32'(in_idx) == i),
      .gnt_o   (vc_gnt[i]),
      .valid_o (vc_valid[i]),
      .idx_o   (vc_idx[i])
    );
  end

  // The one-hot grants repeat the indices; a VC arbiter's valid is its input's request.
  logic unused_gnt;
  always_comb begin
    unused_gnt = ^in_gnt;
    for (int i = 0; i < P; i++) unused_gnt = unused_gnt ^ ^{vc_gnt[i], vc_valid[i]};
  end

  // FECN: the flits queued for this output, and whether the grant is eligible and marked.
  logic [22:0] queue;
  logic        fecn_elig, fecn_mark;
  always_comb begin
    queue = '0;
    for (int i = 0; i < P; i++) queue = queue + 23'(voq_occ_i[i]);
  end
  fecn_marker u_fecn (
    .clk_i,
    .rst_ni,
    .thr_i     (fecn_thr_i),
    .rate_i    (fecn_rate_i),
    .min_len_i (fecn_len_i),
    .victim_i  (fecn_victim_i),
    .gnt_i     (gnt_valid_o),
    .queue_i   (32'(queue)),
    .short_i   (short_head),
    .len_i     (hd_len_i[in_idx][vc_idx[in_idx]]),
    .elig_o    (fecn_elig),
    .mark_o    (fecn_mark)
  );
  // Whether the grant was eligible is for the waves.
  logic unused_fecn;
  assign unused_fecn = fecn_elig;

  // The grant, and the next packet being sent.
  logic [VcW-1:0] g_vc;
  assign gnt_valid_o = finishing && in_valid;
  always_comb begin
    g_vc        = vc_idx[in_idx];
    gnt_input_o = in_idx;
    gnt_vc_o    = 4'(g_vc);
    tx_valid_d  = tx_valid_q;
    tx_input_d  = tx_input_q;
    tx_slot_d   = tx_slot_q;
    tx_in_vc_d  = tx_in_vc_q;
    tx_nvc_d    = tx_nvc_q;
    tx_len_d    = tx_len_q;
    tx_sent_d   = tx_sent_q;
    tx_fecn_d   = tx_fecn_q;
    if (tx_valid_q) begin
      tx_sent_d = tx_sent_q + 16'd1;
      if (tail) tx_valid_d = 1'b0;
    end
    if (gnt_valid_o) begin
      tx_valid_d = 1'b1;
      tx_input_d = in_idx;
      tx_slot_d  = hd_slot_i[in_idx][g_vc];
      tx_in_vc_d = 4'(g_vc);
      tx_nvc_d   = hd_nvc_i[in_idx][g_vc];
      tx_len_d   = hd_len_i[in_idx][g_vc];
      tx_sent_d  = '0;
      tx_fecn_d  = fecn_mark;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Congestion detector and root register.
  logic        det_root, det_root_det, det_root_rel, det_root_adapted;
  logic [15:0] det_root_dest;
  logic [7:0]  det_root_vc;

  // Without ARNs the detector sees empty VOQs and no heads, so it stays idle.
  localparam int unsigned DetIdxW = (P > 1) ? $clog2(P) : 1;
  localparam int unsigned DetCntW = $clog2(P + 1);
  logic [15:0]       det_occ   [P];
  logic              det_hv    [P];
  logic [15:0]       head_fc   [P];
  logic [DetIdxW-1:0] root_in;
  logic [DetCntW-1:0] crossed;
  always_comb begin
    for (int i = 0; i < P; i++) begin
      det_occ[i] = uses_arn_i ? voq_occ_i[i] : '0;
      det_hv[i]  = uses_arn_i && det_valid_i[i];
      head_fc[i] = det_hv[i] ? cnt[VcW'(det_nvc_i[i])] : '0;
    end
  end
  congestion_detector #(
    .P(P), .Hcdth(Hcdth), .Lcdth(Lcdth), .Fcth(Fcth), .Crt(Crt)
  ) u_det (
    .clk_i,
    .rst_ni,
    .voq_occ_i      (det_occ),
    .head_valid_i   (det_hv),
    .head_dest_i    (det_dest_i),
    .head_vc_i      (det_vc_i),
    .head_adapted_i (det_adapted_i),
    .head_fc_i      (head_fc),
    .root_o         (det_root),
    .root_det_o     (det_root_det),
    .root_rel_o     (det_root_rel),
    .root_in_o      (root_in),
    .root_dest_o    (det_root_dest),
    .root_vc_o      (det_root_vc),
    .root_adapted_o (det_root_adapted),
    .crossed_o      (crossed)
  );
  // The offending input and the crossed count are observation outputs of the detector.
  logic unused_det;
  assign unused_det = ^{root_in, crossed};

  always_comb begin
    root_valid_d  = root_valid_q;
    root_d        = root_q;
    refresh_d     = (refresh_q != '0) ? refresh_q - 32'd1 : '0;
    cmd_valid_o   = 1'b0;
    cmd_o         = '0;
    cmd_adapted_o = 1'b0;
    root_det_o    = det_root_det;
    if (det_root_det) begin
      root_valid_d  = 1'b1;
      root_d        = '{dest: det_root_dest, port: 8'(Port), vc: det_root_vc,
                        arn_id: root_arn_id_i, root_info: root_info_i};
      refresh_d     = GapLoad;
      cmd_valid_o   = 1'b1;
      cmd_o         = root_d;
      cmd_adapted_o = det_root_adapted;
    end else if (det_root_rel) begin
      root_valid_d = 1'b0;
    end else if (root_valid_q && refresh_q == '0) begin
      refresh_d   = GapLoad;
      cmd_valid_o = 1'b1;
      cmd_o       = root_q;
    end
  end

  // ---------------------------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      tx_valid_q   <= 1'b0;
      tx_input_q   <= '0;
      tx_slot_q    <= '0;
      tx_in_vc_q   <= '0;
      tx_nvc_q     <= '0;
      tx_len_q     <= '0;
      tx_sent_q    <= '0;
      tx_fecn_q    <= 1'b0;
      root_valid_q <= 1'b0;
      root_q       <= '0;
      refresh_q    <= '0;
    end else begin
      tx_valid_q   <= tx_valid_d;
      tx_input_q   <= tx_input_d;
      tx_slot_q    <= tx_slot_d;
      tx_in_vc_q   <= tx_in_vc_d;
      tx_nvc_q     <= tx_nvc_d;
      tx_len_q     <= tx_len_d;
      tx_sent_q    <= tx_sent_d;
      tx_fecn_q    <= tx_fecn_d;
      root_valid_q <= root_valid_d;
      root_q       <= root_d;
      refresh_q    <= refresh_d;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Checks.
`ifndef SYNTHESIS
  logic [V-1:0]  chk_credit_ok;
  logic [15:0]   chk_tx_credits, chk_gnt_credits, chk_gnt_len;
  // FCFS: some head that fits in its credits joined its FIFO before the granted one.
  logic          chk_older_fits;
  always_comb begin
    logic [15:0] c;
    chk_older_fits = 1'b0;
    for (int i = 0; i < P; i++) begin
      for (int v = 0; v < V; v++) begin
        c = cnt[VcW'(hd_nvc_i[i][v])];
        if (sending && tx_nvc_q == hd_nvc_i[i][v] && c != '0) c = c - 16'd1;
        if (hd_valid_i[i][v] && 17'(c) >= 17'(hd_len_i[i][v]) + 17'(hd_res_i[i][v])
            && stamp_older(hd_stamp_i[i][v], hd_stamp_i[in_idx][g_vc])) begin
          chk_older_fits = 1'b1;
        end
      end
    end
    for (int v = 0; v < V; v++) begin
      chk_credit_ok[v] = 32'(cnt[v]) + 32'(credit_i[v])
                         <= OutCap + 32'(sending && 32'(tx_nvc_q) == v);
    end
    chk_tx_credits  = cnt[VcW'(tx_nvc_q)];
    chk_gnt_credits = cnt[VcW'(hd_nvc_i[in_idx][g_vc])];
    chk_gnt_len     = hd_len_i[in_idx][g_vc];
    if (sending && tx_nvc_q == hd_nvc_i[in_idx][g_vc]) chk_gnt_credits = chk_gnt_credits - 16'd1;
  end
`endif

  // Parameters (checked at elaboration).
  // P in 1..64, V in 1..16.
  `ASSERT_INIT(a_param_ports_vcs, P >= 1 && P <= 64 && V >= 1 && V <= 16)
  // Port names one of the P ports.
  `ASSERT_INIT(a_param_port, Port < P)

  // Input contract.
  // The far buffer never returns more credits than it got flits: the count stays within OutCap.
  `ASSUME(m_credit_no_overflow, &chk_credit_ok)
  // Every input is known outside reset.
  `ASSUME(m_inputs_known, !$isunknown({in_req, root_arn_id_i, tx_desc_i}))

  // Outputs.
  // The link and the commands are known outside reset.
  `ASSERT_KNOWN(a_outputs_known, {flit_valid_o, flit_vc_o, flit_head_o, flit_tail_o,
                                  flit_desc_o, dep_valid_o, gnt_valid_o, cmd_valid_o, cmd_o})

  // Behaviour.
  // A packet starts only with credits for its whole length (virtual cut-through): at its grant,
  // less the credit this cycle's flit spends, and when its head leaves.
  `ASSERT(a_grant_has_credits, gnt_valid_o |-> chk_gnt_credits >= chk_gnt_len)
  `ASSERT(a_head_has_credits, flit_valid_o && flit_head_o |-> chk_tx_credits >= tx_len_q)
  // FCFS: no head that fits in its credits joined its FIFO before the one granted.
  `ASSERT(a_fcfs_grants_oldest, gnt_valid_o && fcfs_i |-> !chk_older_fits)
  // FECN: a head leaves marked only when marking is on and its output's queue was over the
  // threshold at its grant; body flits never carry it.
  `ASSERT(a_fecn_only_when_congested, gnt_valid_o && tx_fecn_d |->
          fecn_thr_i != '0 && queue >= 23'(fecn_thr_i))
  `ASSERT(a_fecn_only_on_heads, flit_valid_o && !flit_head_o |-> !flit_desc_o.flags[FlagFecn])
  // A flit is sent only against a credit.
  `ASSERT(a_flit_has_credit, flit_valid_o |-> chk_tx_credits != '0)
  // A packet's flits leave in consecutive cycles: a non-tail flit is followed by the next one.
  `ASSERT(a_packet_contiguous, flit_valid_o && !flit_tail_o |=> flit_valid_o && !flit_head_o)
  // A grant only when idle or on the tail.
  `ASSERT(a_grant_when_free, gnt_valid_o |-> finishing)
  // The sent count stays below the length.
  `ASSERT(a_sent_below_len, !tx_valid_q || tx_sent_q < tx_len_q)
  // A root register only while the detector is a root (ARN modes).
  `ASSERT(a_root_reg_iff_det, root_valid_q == det_root)
endmodule
