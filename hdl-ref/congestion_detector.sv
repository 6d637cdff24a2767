// Congestion detector of one switch output port: is this output the root of a congestion tree?
//
// Contract
// - Crossed set, with per-VOQ hysteresis:
//     over_d[i] = over_q[i] ? (voq_occ_i[i] >= Lcdth) : (voq_occ_i[i] > Hcdth).
// - Root condition of VOQ i: cond[i] = voq_occ_i[i] > Hcdth && head_valid_i[i] &&
//   head_fc_i[i] > Fcth (above the high threshold, and the downstream VC of its head packet still
//   has room: a root, not a branch). C = |cond. The offending VOQ is the i with cond[i] and the
//   largest voq_occ_i[i], the lowest index on ties.
// - FSM (state_q):
//     StIdle: C -> declare if Crt == 1, else StWait with crt_d = Crt - 1.
//     StWait: !C -> StIdle (timer cancelled); crt_q == 1 -> declare; else crt_d = crt_q - 1.
//     StRoot: over_d == 0 -> StIdle with root_rel_o = 1.
//   declare: -> StRoot, root_det_o = 1, root_in_d = offending. crt_q is 0 outside StWait.
//   So C held in cycles t0 .. t0+Crt-1 (t0 in StIdle) declares in cycle t0+Crt-1.
// - Outputs: root_o = (state_q == StRoot); root_in_o = offending during root_det_o, else
//   root_in_q; root_dest_o/root_vc_o/root_adapted_o = header of the offending head packet
//   during root_det_o, else 0; crossed_o = popcount(over_q).
// - Synchronous active-low reset: state_q = StIdle, crt_q = 0, over_q = 0, root_in_q = 0.
// Parameters
// - P: input ports, 1..64. IdxW = max(1, clog2 P), CntW = clog2(P + 1).
// - Hcdth, Lcdth: thresholds in flits (Lcdth <= Hcdth <= 65535).
// - Fcth: free-credit threshold (<= 65535).
// - Crt: congestion root timer in cycles, 1..2^24-1.
// Twin: src/blocks/congestion_detector.rs
module congestion_detector #(
  parameter  int unsigned P     = 4,
  parameter  int unsigned Hcdth = 80,
  parameter  int unsigned Lcdth = 63,
  parameter  int unsigned Fcth  = 15,
  parameter  int unsigned Crt   = 16,
  localparam int unsigned IdxW  = (P > 1) ? $clog2(P) : 1,
  localparam int unsigned CntW  = $clog2(P + 1)
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic [15:0]     voq_occ_i      [P],
  input  logic            head_valid_i   [P],
  input  logic [15:0]     head_dest_i    [P],
  input  logic [7:0]      head_vc_i      [P],
  input  logic            head_adapted_i [P],
  input  logic [15:0]     head_fc_i      [P],
  output logic            root_o,
  output logic            root_det_o,
  output logic            root_rel_o,
  output logic [IdxW-1:0] root_in_o,
  output logic [15:0]     root_dest_o,
  output logic [7:0]      root_vc_o,
  output logic            root_adapted_o,
  output logic [CntW-1:0] crossed_o
);
  typedef enum logic [1:0] {
    StIdle = 2'd0,
    StWait = 2'd1,
    StRoot = 2'd2
  } state_e;

  if (P < 1 || P > 64) begin : g_check_p
    $error("congestion_detector: P must be in 1..64");
  end
  if (Lcdth > Hcdth || Hcdth > 65535 || Fcth > 65535) begin : g_check_thresholds
    $error("congestion_detector: need Lcdth <= Hcdth <= 65535 and Fcth <= 65535");
  end
  if (Crt < 1 || Crt > 24'hFF_FFFF) begin : g_check_crt
    $error("congestion_detector: Crt must be in 1..2^24-1");
  end

  localparam logic [23:0] CrtV = 24'(Crt);

  state_e          state_q, state_d;
  logic [23:0]     crt_q, crt_d;
  logic [P-1:0]    over_q, over_d;
  logic [IdxW-1:0] root_in_q, root_in_d;

  // Root condition and offending VOQ.
  logic            cond_any;
  logic [IdxW-1:0] off_idx;
  logic [15:0]     off_occ, off_dest;
  logic [7:0]      off_vc;
  logic            off_adapted;

  always_comb begin
    cond_any    = 1'b0;
    off_idx     = '0;
    off_occ     = '0;
    off_dest    = '0;
    off_vc      = '0;
    off_adapted = 1'b0;
    for (int i = 0; i < P; i++) begin
      if (32'(voq_occ_i[i]) > Hcdth && head_valid_i[i] && 32'(head_fc_i[i]) > Fcth &&
          (!cond_any || voq_occ_i[i] > off_occ)) begin
        cond_any    = 1'b1;
        off_idx     = IdxW'(i);
        off_occ     = voq_occ_i[i];
        off_dest    = head_dest_i[i];
        off_vc      = head_vc_i[i];
        off_adapted = head_adapted_i[i];
      end
    end
  end

  // Next state: crossed set with hysteresis, then the FSM.
  always_comb begin
    logic declare;
    state_d    = state_q;
    crt_d      = crt_q;
    over_d     = over_q;
    root_in_d  = root_in_q;
    declare    = 1'b0;
    root_rel_o = 1'b0;
    for (int i = 0; i < P; i++) begin
      over_d[i] = over_q[i] ? (32'(voq_occ_i[i]) >= Lcdth) : (32'(voq_occ_i[i]) > Hcdth);
    end
    unique case (state_q)
      StIdle: begin
        if (cond_any) begin
          if (CrtV == 24'd1) begin
            declare = 1'b1;
          end else begin
            state_d = StWait;
            crt_d   = CrtV - 24'd1;
          end
        end
      end
      StWait: begin
        if (!cond_any) begin
          state_d = StIdle;
          crt_d   = '0;
        end else if (crt_q == 24'd1) begin
          declare = 1'b1;
        end else begin
          crt_d = crt_q - 24'd1;
        end
      end
      StRoot: begin
        if (over_d == '0) begin
          state_d    = StIdle;
          root_rel_o = 1'b1;
        end
      end
      default: begin
        state_d = StIdle;
        crt_d   = '0;
      end
    endcase
    if (declare) begin
      state_d   = StRoot;
      crt_d     = '0;
      root_in_d = off_idx;
    end
    root_det_o     = declare;
    root_o         = (state_q == StRoot);
    root_in_o      = declare ? off_idx : root_in_q;
    root_dest_o    = declare ? off_dest : '0;
    root_vc_o      = declare ? off_vc : '0;
    root_adapted_o = declare && off_adapted;
    crossed_o      = CntW'($countones(over_q));
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q   <= StIdle;
      crt_q     <= '0;
      over_q    <= '0;
      root_in_q <= '0;
    end else begin
      state_q   <= state_d;
      crt_q     <= crt_d;
      over_q    <= over_d;
      root_in_q <= root_in_d;
    end
  end

  // Invariants.
  a_state_valid:        assert property (@(posedge clk_i) disable iff (!rst_ni)
                                         state_q inside {StIdle, StWait, StRoot});
  a_crt_runs_in_wait:   assert property (@(posedge clk_i) disable iff (!rst_ni)
                                         (state_q == StWait) == (crt_q != '0));
  a_crt_below_crt:      assert property (@(posedge clk_i) disable iff (!rst_ni) crt_q < CrtV);
  a_root_has_crossed:   assert property (@(posedge clk_i) disable iff (!rst_ni)
                                         (state_q != StRoot) || (over_q != '0));
  a_root_in_range:      assert property (@(posedge clk_i) disable iff (!rst_ni)
                                         32'(root_in_q) < P);
  a_no_root_to_wait:    assert property (@(posedge clk_i) disable iff (!rst_ni)
                                         !(state_q == StRoot && state_d == StWait));
  a_det_rel_exclusive:  assert property (@(posedge clk_i) disable iff (!rst_ni)
                                         !(root_det_o && root_rel_o));
  a_det_not_in_root:    assert property (@(posedge clk_i) disable iff (!rst_ni)
                                         !(root_det_o && state_q == StRoot));
  a_rel_only_when_clear: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                          !root_rel_o || (over_d == '0));
endmodule
