`include "arnsim_assert.svh"

// What an input port sends upstream of ARNs (Rocher-Gonzalez et al., sendARN): the 8-deep ARN
// FIFO waiting for the reverse direction of the input link, and a gap timer per ARN-table entry
// so that one entry sends at most one ARN per ArnGap cycles.
//
// Contract
// - may_send_o: the entry idx_i (the one the routing stage's lookup hit) has its gap timer at 0
//   and the FIFO has room; the routing stage sends (push_i) only then.
// - A push joins the back of the FIFO and loads the entry's timer with ArnGap - 1; every other
//   timer counts down to 0.
// - arn_valid_o/arn_o: the FIFO's front leaves upstream, or this cycle's push when the FIFO is
//   empty (it does not then join the FIFO's count beyond the cycle).
// - Synchronous active-low reset: the FIFO empty, every timer 0. The FIFO's memory is not reset
//   (an element is written when pushed).
// Parameters: Entries (of the ARN table), ArnGap.
// Twin: src/cycle/routing_stage.rs (send_arn), src/cycle/input_port_ctrl.rs (the ARN FIFO and
// gap timers of the clock edge)
module arn_sender
  import switch_pkg::*;
#(
  parameter  int unsigned Entries   = 8,
  parameter  int unsigned ArnGap    = 40,
  localparam int unsigned EIdxW     = (Entries > 1) ? $clog2(Entries) : 1,
  localparam int unsigned FifoDepth = 8
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic [EIdxW-1:0] idx_i,
  output logic             may_send_o,
  input  logic             push_i,
  input  arn_t             push_arn_i,
  output logic             arn_valid_o,
  output arn_t             arn_o
);
  localparam logic [31:0] GapLoad = (ArnGap > 0) ? 32'(ArnGap - 1) : 32'd0;

  arn_t        af_q  [FifoDepth];
  logic [2:0]  af_rd_q, af_rd_d;
  logic [3:0]  af_cnt_q, af_cnt_d;
  logic [31:0] gap_q [Entries], gap_d [Entries];

  assign may_send_o  = gap_q[idx_i] == '0 && af_cnt_q != 4'(FifoDepth);
  assign arn_valid_o = af_cnt_q != '0 || push_i;
  assign arn_o       = (af_cnt_q != '0) ? af_q[af_rd_q] : (push_i ? push_arn_i : '0);

  // The push joins at the back, the front leaves when sent.
  always_comb begin
    af_rd_d  = af_rd_q;
    af_cnt_d = af_cnt_q;
    if (push_i) af_cnt_d = af_cnt_d + 4'd1;
    if (arn_valid_o) begin
      af_rd_d  = af_rd_q + 3'd1;
      af_cnt_d = af_cnt_d - 4'd1;
    end
    for (int e = 0; e < Entries; e++) begin
      gap_d[e] = (gap_q[e] != '0) ? gap_q[e] - 32'd1 : '0;
    end
    if (push_i) gap_d[idx_i] = GapLoad;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      af_rd_q  <= '0;
      af_cnt_q <= '0;
      gap_q    <= '{default: '0};
    end else begin
      af_rd_q  <= af_rd_d;
      af_cnt_q <= af_cnt_d;
      gap_q    <= gap_d;
      if (push_i) af_q[af_rd_q + af_cnt_q[2:0]] <= push_arn_i;
    end
  end

  // The FIFO never holds more than its depth.
  `ASSERT(a_arn_fifo_depth, 32'(af_cnt_q) <= FifoDepth)
  // A push only when allowed.
  `ASSERT(a_push_when_may, push_i |-> may_send_o)
endmodule
