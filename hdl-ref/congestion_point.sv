`include "arnsim_assert.svh"

// Congestion points of IEEE 802.1Qau (QCN) at a switch's outputs: each output samples the
// packets that join its queue and, on each sample, computes the feedback of the standard.
//
// Contract
// - Off while qeq_i is 0: nothing is sampled and the registers hold.
// - Arrivals (arr_valid_i[i], one per input, taken in input order i = 0..P-1): a packet of
//   arr_len_i[i] flits joins the queue of output arr_out_i[i] (one at P or beyond joins none).
//   With left (left_q[o] as the arrivals before it in the cycle left it) <= arr_len_i[i] it is
//   sampled (sampled_o[i]) and left reloads with sample_i; otherwise left counts down by
//   arr_len_i[i].
// - A sample computes, from queue_i[o] (the flits queued for o at the start of the cycle) and
//   qold (qold_q[o], or the value a sample before it in the cycle left), Fb = -((Q - Qeq) +
//   w (Q - Qold)), and qold becomes Q. A negative Fb makes a notification (cnm_o[i]) with
//   fb_o[i] = ceil(|Fb| * 63 / ((1 + 2w) Qeq)), at most 63; fb_o[i] is 0 without one.
// - Synchronous active-low reset: every left_q and qold_q 0 (the first packet is sampled).
// Assertions at the end of the module; hdl-ref/arnsim_assert.svh has the macros.
// Parameters
// - P: inputs and outputs, 1..64.
// Twin: src/blocks/congestion_point.rs (QcnPoint::arrive and feedback, which both engines call)
module congestion_point #(
  parameter  int unsigned P     = 4,
  localparam int unsigned PortW = (P > 1) ? $clog2(P) : 1
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  // The switch's configuration: Qeq (flits, 0: off), w, the sample interval (flits).
  input  logic [31:0] qeq_i,
  input  logic [7:0]  w_i,
  input  logic [31:0] sample_i,
  // Per input: the packet placed in a VOQ this cycle, its output and length.
  input  logic [P-1:0] arr_valid_i,
  input  logic [7:0]  arr_out_i   [P],
  input  logic [15:0] arr_len_i   [P],
  // Per output: the flits queued for it at the start of the cycle.
  input  logic [31:0] queue_i     [P],
  output logic [P-1:0] sampled_o,
  output logic [P-1:0] cnm_o,
  output logic [5:0]  fb_o        [P]
);
  logic [31:0] left_q [P], left_d [P];
  logic [31:0] qold_q [P], qold_d [P];
  logic on;
  assign on = qeq_i != '0;

  always_comb begin
    logic [PortW-1:0]   o;
    logic [31:0]        q, qold;
    logic signed [63:0] fb, fb_max, quant;
    o         = '0;
    q         = '0;
    qold      = '0;
    fb        = '0;
    fb_max    = '0;
    quant     = '0;
    left_d    = left_q;
    qold_d    = qold_q;
    sampled_o = '0;
    cnm_o     = '0;
    for (int i = 0; i < P; i++) fb_o[i] = '0;
    for (int i = 0; i < P; i++) begin
      if (on && arr_valid_i[i] && 32'(arr_out_i[i]) < P) begin
        o = PortW'(arr_out_i[i]);
        if (left_d[o] <= 32'(arr_len_i[i])) begin
          sampled_o[i] = 1'b1;
          left_d[o]    = sample_i;
          q            = queue_i[o];
          qold         = qold_d[o];
          qold_d[o]    = q;
          fb = -((64'(q) - 64'(qeq_i)) + 64'(w_i) * (64'(q) - 64'(qold)));
          if (fb < 0) begin
            fb_max = (64'd1 + 64'd2 * 64'(w_i)) * 64'(qeq_i);
            quant  = (-fb * 64'sd63 + fb_max - 64'sd1) / fb_max;
            if (quant > 64'sd63) quant = 64'sd63;
            if (quant < 64'sd1) quant = 64'sd1;
            cnm_o[i] = 1'b1;
            fb_o[i]  = 6'(quant);
          end
        end else begin
          left_d[o] = left_d[o] - 32'(arr_len_i[i]);
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      left_q <= '{default: '0};
      qold_q <= '{default: '0};
    end else begin
      left_q <= left_d;
      qold_q <= qold_d;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Checks.
  `ASSERT_INIT(a_param_ports, P >= 1 && P <= 64)
  logic [P-1:0] fb_outside, moved_unsampled;
  always_comb begin
    for (int i = 0; i < P; i++) fb_outside[i] = cnm_o[i] ? fb_o[i] == '0 : fb_o[i] != '0;
    for (int o = 0; o < P; o++) begin
      moved_unsampled[o] = qold_d[o] != qold_q[o];
      for (int i = 0; i < P; i++) begin
        if (sampled_o[i] && 32'(arr_out_i[i]) == o) moved_unsampled[o] = 1'b0;
      end
    end
  end
  // A notification asks for some decrease (1 to 63); none, fb 0.
  `ASSERT_NEVER(a_fb_range, |fb_outside)
  // Only a sampled packet makes a notification.
  `ASSERT_NEVER(a_cnm_only_sampled, |(cnm_o & ~sampled_o))
  // Nothing is sampled while off.
  `ASSERT_NEVER(a_off_samples_nothing, !on && |sampled_o)
  // Qold changes only at an output that sampled in the cycle.
  `ASSERT_NEVER(a_qold_only_on_sample, |moved_unsampled)
endmodule
