`include "arnsim_assert.svh"

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
// - Inputs: every combination is legal (occupancies and credits anywhere in 16 bits, header
//   fields of invalid heads are ignored); the inputs must be known (m_inputs_known).
// - Synchronous active-low reset: state_q = StIdle, crt_q = 0, over_q = 0, root_in_q = 0.
// Assertions at the end of the module; hdl-ref/arnsim_assert.svh has the macros.
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

  // Parameters (checked at elaboration).
  // P is in 1..64.
  `ASSERT_INIT(a_param_p, P >= 1 && P <= 64)
  // The thresholds are ordered and fit in 16 bits: Lcdth <= Hcdth <= 65535.
  `ASSERT_INIT(a_param_thresholds, Lcdth <= Hcdth && Hcdth <= 65535)
  // Fcth fits in 16 bits.
  `ASSERT_INIT(a_param_fcth, Fcth <= 65535)
  // Crt is in 1..2^24-1 (the timer is 24 bits).
  `ASSERT_INIT(a_param_crt, Crt >= 1 && Crt <= 24'hFF_FFFF)

`ifndef SYNTHESIS
  // Packed copy of the per-input inputs ($isunknown needs packed values).
  logic [P-1:0][57:0] chk_in;
  always_comb begin
    for (int i = 0; i < P; i++) begin
      chk_in[i] = {voq_occ_i[i], head_valid_i[i], head_dest_i[i], head_vc_i[i],
                   head_adapted_i[i], head_fc_i[i]};
    end
  end
`endif

  // Input contract.
  // Every input is known outside reset.
  `ASSUME(m_inputs_known, !$isunknown(chk_in))

  // Outputs.
  // Every output is known outside reset.
  `ASSERT_KNOWN(a_outputs_known, {root_o, root_det_o, root_rel_o, root_in_o, root_dest_o,
                                  root_vc_o, root_adapted_o, crossed_o})

  // Invariants.
  // state_q is one of the three states.
  `ASSERT(a_state_valid, state_q inside {StIdle, StWait, StRoot})
  // The CRT timer runs exactly in StWait.
  `ASSERT(a_crt_runs_in_wait, (state_q == StWait) == (crt_q != '0))
  // The timer stays below Crt.
  `ASSERT(a_crt_below_crt, crt_q < CrtV)
  // A root has a non-empty crossed set.
  `ASSERT(a_root_has_crossed, (state_q != StRoot) || (over_q != '0))
  // root_in_q names an input.
  `ASSERT(a_root_in_range, 32'(root_in_q) < P)
  // StRoot never goes to StWait.
  `ASSERT_NEVER(a_no_root_to_wait, state_q == StRoot && state_d == StWait)
  // Never a declaration and a release in the same cycle.
  `ASSERT_NEVER(a_det_rel_exclusive, root_det_o && root_rel_o)
  // No declaration while already a root.
  `ASSERT_NEVER(a_det_not_in_root, root_det_o && state_q == StRoot)
  // A release only when the next crossed set is empty.
  `ASSERT(a_rel_only_when_clear, !root_rel_o || (over_d == '0))

`ifndef SYNTHESIS
  // The contract recomputed from the inputs, beside the FSM:
  // - chk_cond[i]: VOQ i above HCDTh with a head whose downstream VC has more than FCTh credits;
  // - chk_off: the offending input (largest occupancy among chk_cond, lowest index on ties) and
  //   its head's header;
  // - chk_over_d: the next crossed set by the hysteresis rule; chk_clear: it is empty;
  // - chk_run: consecutive cycles of the root condition outside StRoot, this one included.
  localparam int unsigned RunW = 25;
  logic [P-1:0]    chk_cond, chk_over_d;
  logic            chk_clear;
  logic [IdxW-1:0] chk_off;
  logic [15:0]     chk_off_occ, chk_off_dest;
  logic [7:0]      chk_off_vc;
  logic            chk_off_adapted;
  logic [RunW-1:0] chk_run, chk_run_q;
  always_comb begin
    chk_off         = '0;
    chk_off_occ     = '0;
    chk_off_dest    = '0;
    chk_off_vc      = '0;
    chk_off_adapted = 1'b0;
    for (int i = 0; i < P; i++) begin
      chk_cond[i]   = 32'(voq_occ_i[i]) > Hcdth && head_valid_i[i] && 32'(head_fc_i[i]) > Fcth;
      chk_over_d[i] = over_q[i] ? 32'(voq_occ_i[i]) >= Lcdth : 32'(voq_occ_i[i]) > Hcdth;
    end
    for (int i = P - 1; i >= 0; i--) begin
      if (chk_cond[i] && voq_occ_i[i] >= chk_off_occ) begin
        chk_off         = IdxW'(i);
        chk_off_occ     = voq_occ_i[i];
        chk_off_dest    = head_dest_i[i];
        chk_off_vc      = head_vc_i[i];
        chk_off_adapted = head_adapted_i[i];
      end
    end
    chk_clear = chk_over_d == '0;
    chk_run   = (state_q != StRoot && chk_cond != '0)
                ? ((chk_run_q == '1) ? chk_run_q : chk_run_q + 1'b1) : '0;
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      chk_run_q <= '0;
    end else begin
      chk_run_q <= chk_run;
    end
  end
`endif

  // Behaviour.
  // A root is declared exactly when the root condition (HCDTh and FCTh) has held for Crt
  // consecutive cycles outside StRoot: never before the CRT expires, always when it does.
  `ASSERT(a_det_iff_crt_run, root_det_o == (32'(chk_run) == Crt))
  // A declaration names the offending input and its head's header.
  `ASSERT(a_det_offending, root_det_o |-> root_in_o == chk_off && root_dest_o == chk_off_dest
                                          && root_vc_o == chk_off_vc
                                          && root_adapted_o == chk_off_adapted)
  // Outside a declaration the header outputs are 0 and root_in_o shows root_in_q.
  `ASSERT(a_header_zero_outside_det, !root_det_o |-> root_dest_o == '0 && root_vc_o == '0
                                                     && !root_adapted_o && root_in_o == root_in_q)
  // The crossed set follows the hysteresis rule (enter above HCDTh, stay while >= LCDTh).
  `ASSERT(a_crossed_hysteresis, 1'b1 |=> over_q == $past(chk_over_d))
  // A root is released exactly when every crossed VOQ is back under LCDTh and none is above
  // HCDTh.
  `ASSERT(a_rel_iff_clear, root_rel_o == (state_q == StRoot && chk_clear))
  // root_o is StRoot; crossed_o counts the crossed set.
  `ASSERT(a_root_o_and_crossed, root_o == (state_q == StRoot)
                                && 32'(crossed_o) == $countones(over_q))
endmodule
