`include "arnsim_assert.svh"

// Routing stage of an input port controller (Rocher-Gonzalez et al., pseudo-code 4): the output,
// next VC and flags of the head the port holds, decided the cycle after it arrived, from its LFT
// read, the routing mode and the switch's answers; and the ARN the head sends upstream.
//
// Contract (combinational; the clock and reset serve the assertions only)
// - valid_i: a head is held (desc_i its descriptor, lft_ports_i/lft_mask_i its LFT read: option b
//   in bits 8b+7..8b, usable when mask bit b is set). det_o = option 0 when usable, else NoRoute.
// - A packet not yet adapted with a route is re-routed by the mode: Oblivious takes usable option
//   rng_k_i of rng_n_o (drawn by the switch when rng_req_o); AdaptiveTh(Afi) takes at_alt_i when
//   the VOQ of det_o holds more than AdaptiveTh flits (voq_i) and the switch found an alternative;
//   Fa takes the adaptive option (1 and up) whose next VC has the most credits (out_cred_i), at
//   least its length plus that output's escape half (res_o: the half, 0 otherwise); Arn(Afi) takes
//   the alternative port of a consumed ARN-table entry, and a hit on a non-consumed entry sends an
//   ARN upstream when may_send_arn_i (the entry's gap timer is out and the ARN FIFO has room);
//   SModK, when det_o is an up port (up_ports_i) and smodk_div_i is not 0, takes up port
//   (src / smodk_div_i) mod (up ports) in ascending order (its deterministic route); SnoopAr
//   takes sn_out_i, the port cnm_unit.sv chooses on its congestion table (sn_req_o); Flow takes
//   fl_out_i, the port flow_unit.sv chooses (its route cache, or for a setup packet its port
//   selection unit). A
//   re-routed packet is marked adapted under AFI (flags_o). An adapted packet that hits a
//   non-consumed entry refreshes it upstream when adapted_refresh_i.
// - routed_o: out_o is a port below P; nvc_o is the next VC, the AFC (V - 1) for an adapted packet
//   under AFI, else the VL of its SL at output out_o from this input (sl2vl_i[out_o][SL]).
// - arn_push_o/arn_o: the ARN sent upstream this cycle (dest: the DLID's base LID).
// Twin: src/cycle/routing_stage.rs (route, send_arn), src/switch/routing_stage.rs (choose,
// sends_arn, upstream_arn: the choice the cycle and event engines share)
module routing_stage
  import switch_pkg::*;
#(
  parameter  int unsigned P              = 4,
  parameter  int unsigned V              = 2,
  parameter  int unsigned Lmc            = 1,
  parameter  int unsigned AdaptiveTh     = 12,
  // The far buffer's credits per VC of each output (16 bits each; FA's escape halves).
  parameter  logic [1023:0] OutCaps      = {64{16'd16}},
  localparam int unsigned Banks          = 1 << Lmc,
  localparam int unsigned PortW          = (P > 1) ? $clog2(P) : 1,
  localparam int unsigned VcW            = (V > 1) ? $clog2(V) : 1
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // The switch's routing mode (Rt*) and whether adapted packets refresh entries upstream.
  input  logic [3:0]         routing_i,
  input  logic               adapted_refresh_i,
  // S-mod-K: the switch's up ports and the source's divisor.
  input  logic [63:0]        up_ports_i,
  input  logic [31:0]        smodk_div_i,
  // The head held, its LFT read, and what the choice reads: VOQ counts, this input's SL-to-VL
  // column, the outputs' credits per VC.
  input  logic               valid_i,
  input  desc_t              desc_i,
  input  logic [8*Banks-1:0] lft_ports_i,
  input  logic [Banks-1:0]   lft_mask_i,
  input  logic [15:0]        voq_i          [P],
  input  logic [3:0]         sl2vl_i        [P][16],
  input  logic [15:0]        out_cred_i     [P][V],
  // ARN-table lookup and its result.
  output logic               lk_en_o,
  output logic [15:0]        lk_dest_o,
  output logic [7:0]         lk_vc_o,
  input  logic               lk_hit_i,
  input  logic               lk_consumed_i,
  input  logic [7:0]         lk_port_i,
  input  logic [31:0]        lk_arn_id_i,
  input  logic [7:0]         lk_root_info_i,
  input  logic [7:0]         lk_alt_port_i,
  input  logic               may_send_arn_i,
  // Oblivious draw (k below n) and Adaptive-Th alternative.
  output logic               rng_req_o,
  output logic [4:0]         rng_n_o,
  input  logic [4:0]         rng_k_i,
  // Snooped AR: the head's destination (base LID) and the port the notification path chooses.
  output logic               sn_req_o,
  output logic [15:0]        sn_dest_o,
  output logic [7:0]         sn_det_o,
  input  logic [7:0]         sn_out_i,
  // Flow routing: the head it routes (held, not adapted, with a default port, under RtFlow) and
  // the port flow_unit.sv chooses for it (its route cache, its port selection unit).
  output logic               fl_req_o,
  input  logic [7:0]         fl_out_i,
  output logic               at_req_o,
  output logic [15:0]        at_dest_o,
  output logic [7:0]         at_vc_o,
  output logic [7:0]         at_avoid_o,
  input  logic [7:0]         at_alt_i,
  // The decision.
  output logic [7:0]         det_o,
  output logic               routed_o,
  output logic [7:0]         out_o,
  output logic [3:0]         nvc_o,
  output logic [7:0]         flags_o,
  output logic [15:0]        res_o,
  output logic               arn_push_o,
  output arn_t               arn_o
);
  localparam logic [3:0] Afc = 4'(V - 1);

  logic afi, uses_arn;
  assign afi      = routing_afi(32'(routing_i));
  assign uses_arn = routing_uses_arn(32'(routing_i));

  logic           adapted_in, adapted;
  logic [7:0]     obl;
  logic [4:0]     n;
  logic           arn1, arn2;
  logic [15:0]    base;
  logic [PortW-1:0] oi;
  // The stage reads the header fields it needs; the rest of the descriptor is not used here.
  logic           unused_desc;
  assign unused_desc = ^{desc_i.injected, desc_i.id, desc_i.sl[7:4], desc_i.cid};

  // S-mod-K: up port (src / smodk_div_i) mod n of the n up ports, in ascending order.
  logic        sm_req;
  logic [7:0]  sm_out;
  always_comb begin
    logic [6:0]  n_up, seen;
    logic [31:0] k;
    n_up   = '0;
    seen   = '0;
    k      = '0;
    sm_out = NoRoute;
    for (int p = 0; p < 64; p++) if (up_ports_i[p]) n_up = n_up + 7'd1;
    sm_req = valid_i && !desc_i.flags[FlagAdapted] && det_o != NoRoute
             && 32'(routing_i) == RtSModK && det_o < 8'd64 && up_ports_i[det_o[5:0]]
             && smodk_div_i != '0;
    if (sm_req) begin
      k = (32'(desc_i.src) / smodk_div_i) % 32'(n_up);
      for (int p = 0; p < 64; p++) begin
        if (up_ports_i[p]) begin
          if (32'(seen) == k) sm_out = 8'(p);
          seen = seen + 7'd1;
        end
      end
    end
  end

  always_comb begin
    adapted_in = desc_i.flags[FlagAdapted];
    base       = (desc_i.dlid >> Lmc) << Lmc;
    det_o      = lft_mask_i[0] ? lft_ports_i[7:0] : NoRoute;
    // Usable options.
    n = '0;
    for (int b = 0; b < Banks; b++) begin
      if (lft_mask_i[b]) n = n + 5'd1;
    end
    // ARN-table lookup of the head's destination (its original VC once adapted).
    lk_en_o   = uses_arn && valid_i && (!adapted_in || adapted_refresh_i);
    lk_dest_o = (uses_arn && valid_i) ? base : '0;
    lk_vc_o   = (uses_arn && valid_i) ? (adapted_in ? desc_i.orig_vc : desc_i.vc) : '0;
    // Requests to the switch.
    rng_req_o  = valid_i && !adapted_in && det_o != NoRoute
                 && 32'(routing_i) == RtOblivious && n > 5'd1;
    rng_n_o    = n;
    at_req_o   = valid_i && !adapted_in && det_o != NoRoute
                 && (32'(routing_i) == RtAdaptiveTh || 32'(routing_i) == RtAdaptiveThAfi)
                 && 32'(det_o) < P && 32'(voq_i[PortW'(det_o)]) > AdaptiveTh;
    at_dest_o  = base;
    at_vc_o    = desc_i.vc;
    sn_req_o   = valid_i && !adapted_in && det_o != NoRoute && 32'(routing_i) == RtSnoopAr;
    fl_req_o   = valid_i && !adapted_in && det_o != NoRoute && 32'(routing_i) == RtFlow;
    sn_dest_o  = base;
    sn_det_o   = det_o;
    at_avoid_o = det_o;
  end

  // FA (Martínez et al., section 4.4): of the adaptive options (1 and up), the one whose next VC
  // has the most credits, at least the packet's length and the VC's escape half (half the far
  // buffer's VC, at least 1); the first on a tie. None: option 0, the escape route.
  logic        fa_req;
  logic [7:0]  fa_out;
  logic [15:0] fa_res;
  always_comb begin
    logic [7:0]     p;
    logic [15:0]    c, best_c, half;
    logic [VcW-1:0] nv;
    p      = '0;
    c      = '0;
    half   = '0;
    nv     = '0;
    fa_req = valid_i && !adapted_in && det_o != NoRoute && 32'(routing_i) == RtFa;
    fa_out = NoRoute;
    fa_res = '0;
    best_c = '0;
    for (int b = 1; b < Banks; b++) begin
      p = lft_ports_i[8*b +: 8];
      if (lft_mask_i[b] && 32'(p) < P) begin
        nv   = VcW'(sl2vl_i[PortW'(p)][desc_i.sl[3:0]]);
        c    = out_cred_i[PortW'(p)][nv];
        half = OutCaps[16*PortW'(p) +: 16] >> 1;
        if (half == '0) half = 16'd1;
        if (17'(c) >= 17'(desc_i.len) + 17'(half) && (fa_out == NoRoute || c > best_c)) begin
          fa_out = p;
          fa_res = half;
          best_c = c;
        end
      end
    end
  end

  // The decision, with the switch's answers.
  always_comb begin
    logic [4:0] k;
    // The draw's pick among the usable options.
    obl = det_o;
    k   = '0;
    for (int b = 0; b < Banks; b++) begin
      if (lft_mask_i[b]) begin
        if (k == rng_k_i) obl = lft_ports_i[8*b +: 8];
        k = k + 5'd1;
      end
    end
    // The decision.
    out_o = det_o;
    arn1  = 1'b0;
    if (valid_i && !adapted_in && det_o != NoRoute) begin
      if (rng_req_o) out_o = obl;
      if (at_req_o && at_alt_i != NoRoute) out_o = at_alt_i;
      if (fa_req && fa_out != NoRoute) out_o = fa_out;
      if (sm_req) out_o = sm_out;
      if (sn_req_o) out_o = sn_out_i;
      if (fl_req_o) out_o = fl_out_i;
      if (uses_arn) begin
        if (lk_consumed_i && lk_alt_port_i != NoRoute) begin
          out_o = lk_alt_port_i;
        end else if (lk_hit_i && !lk_consumed_i) begin
          arn1 = 1'b1;
        end
      end
    end
    flags_o = desc_i.flags;
    if (valid_i && !adapted_in && det_o != NoRoute && out_o != det_o && afi) begin
      flags_o[FlagAdapted] = 1'b1;
    end
    adapted  = flags_o[FlagAdapted];
    arn2     = valid_i && adapted && uses_arn && adapted_refresh_i && lk_hit_i && !lk_consumed_i;
    routed_o = valid_i && out_o != NoRoute && 32'(out_o) < P;
    res_o    = (fa_req && fa_out != NoRoute) ? fa_res : '0;
    oi       = PortW'(out_o);
    // The next VC: the AFC for an adapted packet under AFI, otherwise the VL the output port's
    // SL-to-VL table gives the packet's SL from this input (the HCA set the SL).
    nvc_o    = (afi && adapted) ? Afc : sl2vl_i[oi][desc_i.sl[3:0]];
    // sendARN.
    arn_push_o = (arn1 || arn2) && may_send_arn_i;
    arn_o      = '{dest: base, port: lk_port_i,
                   vc: adapted ? desc_i.orig_vc : desc_i.vc,
                   arn_id: lk_arn_id_i, root_info: lk_root_info_i};
  end

  // ---------------------------------------------------------------------------------------------
  // Checks.
  // Parameters (checked at elaboration): P in 1..64, V in 1..16, Lmc in 0..4 (at most 16 options,
  // counted in 5 bits).
  `ASSERT_INIT(a_param_ports_vcs_lmc, P >= 1 && P <= 64 && V >= 1 && V <= 16 && Lmc <= 4)
  // Input contract: the switch's draw is one of the usable options.
  `ASSUME(m_draw_below_n, !rng_req_o || rng_k_i < rng_n_o)
  // Only AFI marks packets adapted.
  `ASSERT(a_adapted_only_under_afi, !(flags_o[FlagAdapted] && !adapted_in) || afi)
  // A packet leaves by a route other than option 0 only when the mode re-routed it.
  `ASSERT(a_rerouted_by_mode, !(routed_o && out_o != det_o)
                              || rng_req_o || at_req_o || fa_req || uses_arn || sm_req
                              || sn_req_o || fl_req_o)
  // An ARN is sent only on a hit of a non-consumed entry, with the gap out and room in the FIFO.
  `ASSERT(a_arn_on_hit, !arn_push_o || (lk_hit_i && !lk_consumed_i && may_send_arn_i))
endmodule
