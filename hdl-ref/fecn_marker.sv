`include "arnsim_assert.svh"

// FECN marking of one switch output (InfiniBand congestion control, IBTA annex A10; the
// SwitchCongestionSetting OpenSM programs): which packets the output grants leave with FECN.
//
// Contract
// - A grant (gnt_i) is eligible when marking is on (thr_i != 0), the flits queued for the output
//   at the start of the cycle reach the threshold (queue_i >= thr_i), the packet is at least
//   min_len_i flits (len_i), and the output is not only a victim (short_i: some head waiting
//   for it lacks the credits to request) unless victim_i (its bit of the victim mask).
// - An eligible grant finding count_q at 0 is marked (mark_o) and reloads it with rate_i; any
//   other eligible grant counts it down by one; nothing else moves it.
// - Synchronous active-low reset: count_q 0 (the first eligible grant is marked).
// Assertions at the end of the module; hdl-ref/arnsim_assert.svh has the macros.
// Twin: src/blocks/fecn_marker.rs (FecnMarking::grant, which both engines call)
module fecn_marker (
  input  logic        clk_i,
  input  logic        rst_ni,
  // The switch's configuration: threshold (flits, 0: off), Marking_Rate, Packet_Size (flits),
  // and this port's bit of the victim mask.
  input  logic [15:0] thr_i,
  input  logic [15:0] rate_i,
  input  logic [15:0] min_len_i,
  input  logic        victim_i,
  // This cycle's grant: the output's queue, whether it is only a victim, the packet's length.
  input  logic        gnt_i,
  input  logic [31:0] queue_i,
  input  logic        short_i,
  input  logic [15:0] len_i,
  output logic        elig_o,
  output logic        mark_o
);
  logic [15:0] count_q, count_d;

  always_comb begin
    elig_o  = gnt_i && thr_i != '0 && queue_i >= 32'(thr_i) && len_i >= min_len_i
              && (!short_i || victim_i);
    mark_o  = elig_o && count_q == '0;
    count_d = count_q;
    if (elig_o) count_d = mark_o ? rate_i : count_q - 16'd1;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) count_q <= '0;
    else         count_q <= count_d;
  end

  // ---------------------------------------------------------------------------------------------
  // Checks.
  // A marked packet is a granted one over the threshold, never a short one.
  `ASSERT(a_mark_only_congested, mark_o |-> gnt_i && thr_i != '0 && queue_i >= 32'(thr_i)
                                            && len_i >= min_len_i)
  // A victim marks only when its bit of the mask is set.
  `ASSERT(a_victim_only_in_mask, mark_o && short_i |-> victim_i)
  // The counter moves only on an eligible grant.
  `ASSERT(a_count_only_on_eligible, !elig_o |-> count_d == count_q)
endmodule
