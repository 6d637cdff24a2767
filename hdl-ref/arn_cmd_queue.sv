`include "arnsim_assert.svh"

// The switch's queue of processARN commands (Rocher-Gonzalez et al., pseudo-code 2): the commands
// filed in a cycle, the outputs' (declared roots, port order) then the ARNs arriving on the
// outputs' reverse directions (port order, each taking the port it arrived on), and the one
// applied to the ARN table this cycle.
//
// Contract
// - Commands are filed only while the routing mode uses ARNs (uses_arn_i).
// - pr_*_o: the command applied this cycle: the queue's front, else (queue empty) the first
//   filed this cycle; pr_adapted_o: an output's command about an adapted packet (refresh only).
// - At the clock edge this cycle's commands join the queue in filing order while it has room
//   (CmdDepth, a power of two), then the applied front leaves.
// - Synchronous active-low reset: the queue empty.
// Twin: src/cycle/mod.rs (`cmds`, ARN_CMD_DEPTH), src/cycle/step.rs (the ARN unit's commands)
module arn_cmd_queue
  import switch_pkg::*;
#(
  parameter  int unsigned P        = 4,
  parameter  int unsigned CmdDepth = 64,
  localparam int unsigned CmdW     = $clog2(CmdDepth)
) (
  input  logic         clk_i,
  input  logic         rst_ni,
  input  logic         uses_arn_i,
  // The outputs' commands (port order) and the ARNs arriving (their port field ignored).
  input  logic [P-1:0] cmd_valid_i,
  input  arn_t         cmd_i          [P],
  input  logic [P-1:0] cmd_adapted_i,
  input  logic [P-1:0] in_arn_valid_i,
  input  arn_t         in_arn_i       [P],
  // The command applied this cycle.
  output logic         pr_en_o,
  output arn_t         pr_o,
  output logic         pr_adapted_o
);
  // Commands filed this cycle: the outputs' (port order), then the ARNs received (port order).
  logic [2*P-1:0] cand_valid;
  arn_t           cand       [2*P];
  logic [2*P-1:0] cand_adapted;
  always_comb begin
    for (int o = 0; o < P; o++) begin
      cand_valid[o]       = uses_arn_i && cmd_valid_i[o];
      cand[o]             = cmd_i[o];
      cand_adapted[o]     = cmd_adapted_i[o];
      cand_valid[P + o]   = uses_arn_i && in_arn_valid_i[o];
      cand[P + o]         = in_arn_i[o];
      cand[P + o].port    = 8'(o);
      cand_adapted[P + o] = 1'b0;
    end
  end

  arn_t                cmdq_q [CmdDepth];
  logic [CmdDepth-1:0] cmdq_adapted_q;
  logic [CmdW-1:0]     cmd_rd_q;
  logic [CmdW:0]       cmd_cnt_q, cmd_cnt_d;
  always_comb begin
    pr_en_o      = 1'b0;
    pr_o         = '0;
    pr_adapted_o = 1'b0;
    if (uses_arn_i) begin
      if (cmd_cnt_q != '0) begin
        pr_en_o      = 1'b1;
        pr_o         = cmdq_q[cmd_rd_q];
        pr_adapted_o = cmdq_adapted_q[cmd_rd_q];
      end else begin
        for (int j = 2 * P - 1; j >= 0; j--) begin
          if (cand_valid[j]) begin
            pr_en_o      = 1'b1;
            pr_o         = cand[j];
            pr_adapted_o = cand_adapted[j];
          end
        end
      end
    end
  end

  // The queue: this cycle's commands join in order while there is room (cand_pos: the place each
  // one takes behind the queue's back), then the applied front leaves.
  logic [CmdW:0]   cand_pos [2*P];
  logic [2*P-1:0]  cand_we;
  always_comb begin
    cmd_cnt_d = cmd_cnt_q;
    for (int j = 0; j < 2 * P; j++) begin
      cand_pos[j] = cmd_cnt_d;
      cand_we[j]  = cand_valid[j] && 32'(cmd_cnt_d) < CmdDepth;
      if (cand_we[j]) cmd_cnt_d = cmd_cnt_d + 1'b1;
    end
    if (pr_en_o) cmd_cnt_d = cmd_cnt_d - 1'b1;
  end
  arn_t                cmdq_d [CmdDepth];
  logic [CmdDepth-1:0] cmdq_adapted_d;
  always_comb begin
    cmdq_d         = cmdq_q;
    cmdq_adapted_d = cmdq_adapted_q;
    for (int j = 0; j < 2 * P; j++) begin
      if (cand_we[j]) begin
        cmdq_d[cmd_rd_q + cand_pos[j][CmdW-1:0]]         = cand[j];
        cmdq_adapted_d[cmd_rd_q + cand_pos[j][CmdW-1:0]] = cand_adapted[j];
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cmd_rd_q  <= '0;
      cmd_cnt_q <= '0;
    end else begin
      cmdq_q         <= cmdq_d;
      cmdq_adapted_q <= cmdq_adapted_d;
      cmd_cnt_q      <= cmd_cnt_d;
      cmd_rd_q       <= pr_en_o ? cmd_rd_q + 1'b1 : cmd_rd_q;
    end
  end

  // Checks.
  `ASSERT_INIT(a_param_cmd_depth, CmdDepth >= 2 && (1 << CmdW) == CmdDepth)
  // The queue never holds more than its depth.
  `ASSERT(a_cmd_queue_depth, 32'(cmd_cnt_q) <= CmdDepth)
endmodule
