`include "arnsim_assert.svh"

// Flow routing in the switch (Birk and Zdornov, section 4): every input's port route cache (PRC,
// route_cache.sv) and the port selection unit (PSU) with its flow count per output.
//
// Contract
// - ERT: a DLID's default port is option 0 of its LFT row, its alternates the usable options of
//   the row of dest | 1 (lft_i, the switch's combinational copy).
// - Per input i, while fl_req_i[i] (its routing stage holds a head, not adapted, with a default
//   port, under RtFlow; route_desc_i[i] its descriptor), fl_out_o[i] is the head's port: a setup
//   packet (flags bit FlagSetup) takes, of its default port and the alternates below P, the port
//   with the fewest flows, the default port on a tie and otherwise the first option in row order,
//   or the default port when the input's PRC is full; any other packet takes its GCID's PRC entry
//   (GCID = src, dlid, cid), else the default port.
// - The PSU takes the inputs in order: input i reads each count as flows_q plus the changes of
//   inputs 0..i-1 this cycle (a port beyond P counts 65535), clamped to 0..65535. A head taking a
//   port below P changes its count by +1 (setup) or -1 (teardown, FlagTeardown).
// - At the clock edge: a setup inserts (GCID, port) in its input's PRC when the port is not the
//   default, else erases the GCID's entry; a teardown erases it; each count becomes flows_q plus
//   every change of the cycle, clamped.
// - Synchronous active-low reset: the PRCs empty, every count 0.
// Twin: src/cycle/flow.rs, src/switch/flow.rs (the decision both Rust engines share)
module flow_unit
  import switch_pkg::*;
#(
  parameter  int unsigned P          = 4,
  parameter  int unsigned Lmc        = 1,
  parameter  int unsigned Rows       = 16,
  parameter  int unsigned PrcEntries = 16,
  localparam int unsigned Banks      = 1 << Lmc,
  localparam int unsigned PortW      = (P > 1) ? $clog2(P) : 1,
  localparam int unsigned CntW       = $clog2(PrcEntries + 1)
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // The routing mode is RtFlow.
  input  logic               on_i,
  // The LFT's combinational copy (switch.sv's lft_q).
  input  logic [8*Banks-1:0] lft_i          [Rows],
  // Per input: the head its routing stage holds, and whether flow routing routes it.
  input  desc_t              route_desc_i   [P],
  input  logic [P-1:0]       fl_req_i,
  // Per input: the port flow routing gives the head.
  output logic [7:0]         fl_out_o       [P]
);
  localparam int unsigned RowW = (Rows > 1) ? $clog2(Rows) : 1;
  localparam logic [1:0] OpIdle = 2'd0, OpInsert = 2'd1, OpErase = 2'd2;

  function automatic logic [8*Banks-1:0] row_of(logic [15:0] lid, logic [8*Banks-1:0] lft [Rows]);
    if ((32'(lid) >> Lmc) >= Rows) return '1;
    return lft[RowW'(32'(lid) >> Lmc)];
  endfunction

  // ---------------------------------------------------------------------------------------------
  // The PSU's flow counts.
  logic [15:0] flows_q [P], flows_d [P];

  // A count with changes, clamped to 0..65535.
  function automatic logic [15:0] clamp(logic [15:0] n, logic signed [23:0] d);
    logic signed [24:0] x;
    x = 25'(n) + 25'(d);
    if (x < 0) return '0;
    if (x > 25'sd65535) return 16'hFFFF;
    return 16'(x);
  endfunction
  // Port p's count as an input reads it, with the changes delta of the inputs before it.
  function automatic logic [15:0] seen(logic [7:0] p, logic [15:0] flows [P],
                                       logic signed [23:0] delta [P]);
    if (32'(p) >= P) return 16'hFFFF;
    return clamp(flows[PortW'(p)], delta[PortW'(p)]);
  endfunction

  // Per input: its default port, its PRC's lookup and fullness, its command.
  logic [7:0]      det      [P];
  logic [P-1:0]    hit, full, act;
  logic [7:0]      hit_port [P];
  logic [CntW-1:0] count    [P];
  logic [1:0]      cmd_op   [P];
  // What the PRCs tell of their commands: not needed here.
  logic [P-1:0]    cmd_hit, cmd_full;
  logic            unused_cmd;
  assign unused_cmd = ^{cmd_hit, cmd_full};

  for (genvar i = 0; i < P; i++) begin : g_prc
    route_cache #(.Entries(PrcEntries)) u_prc (
      .clk_i,
      .rst_ni,
      .lk_en_i    (on_i),
      .lk_slid_i  (route_desc_i[i].src),
      .lk_dlid_i  (route_desc_i[i].dlid),
      .lk_cid_i   (route_desc_i[i].cid),
      .cmd_op_i   (cmd_op[i]),
      .cmd_slid_i (route_desc_i[i].src),
      .cmd_dlid_i (route_desc_i[i].dlid),
      .cmd_cid_i  (route_desc_i[i].cid),
      .cmd_port_i (fl_out_o[i]),
      .lk_hit_o   (hit[i]),
      .lk_port_o  (hit_port[i]),
      .cmd_hit_o  (cmd_hit[i]),
      .cmd_full_o (cmd_full[i]),
      .count_o    (count[i])
    );
    assign full[i] = 32'(count[i]) == PrcEntries;
  end

  // The choice of each input's head, in input order, and the commands and counts of the clock
  // edge.
  always_comb begin
    logic [8*Banks-1:0] row;
    logic [7:0]         p, best;
    logic [15:0]        best_f, f;
    logic signed [23:0] delta [P];
    row    = '1;
    p      = '0;
    best   = NoRoute;
    best_f = '0;
    f      = '0;
    delta  = '{default: '0};
    for (int i = 0; i < P; i++) begin
      row    = row_of(route_desc_i[i].dlid, lft_i);
      det[i] = row[7:0];
      if (route_desc_i[i].flags[FlagSetup]) begin
        best   = det[i];
        best_f = seen(det[i], flows_q, delta);
        if (!full[i]) begin
          row = row_of(16'(((32'(route_desc_i[i].dlid) >> Lmc) << Lmc) | 1), lft_i);
          for (int b = 0; b < Banks; b++) begin
            p = row[8*b +: 8];
            if (p != NoRoute && 32'(p) < P && p != det[i]) begin
              f = seen(p, flows_q, delta);
              if (f < best_f) begin
                best   = p;
                best_f = f;
              end
            end
          end
        end
        fl_out_o[i] = best;
      end else begin
        fl_out_o[i] = hit[i] ? hit_port[i] : det[i];
      end
      act[i]    = fl_req_i[i] && 32'(fl_out_o[i]) < P;
      cmd_op[i] = OpIdle;
      if (act[i] && route_desc_i[i].flags[FlagSetup]) begin
        cmd_op[i] = (fl_out_o[i] != det[i]) ? OpInsert : OpErase;
        delta[PortW'(fl_out_o[i])] = delta[PortW'(fl_out_o[i])] + 24'sd1;
      end else if (act[i] && route_desc_i[i].flags[FlagTeardown]) begin
        cmd_op[i] = OpErase;
        delta[PortW'(fl_out_o[i])] = delta[PortW'(fl_out_o[i])] - 24'sd1;
      end
    end
    for (int o = 0; o < P; o++) flows_d[o] = clamp(flows_q[o], delta[o]);
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      flows_q <= '{default: '0};
    end else begin
      flows_q <= flows_d;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Checks.
  `ASSERT_INIT(a_param_ports, P >= 1 && P <= 64 && PrcEntries >= 1 && PrcEntries <= 64)
  // Only flow routing writes the route caches or counts flows.
  `ASSERT(a_off_idle, on_i || (act == '0))

  // A setup never takes a port beyond the switch when its default port is one of them.
  logic [P-1:0] setup_out_of_range;
  always_comb begin
    for (int i = 0; i < P; i++) begin
      setup_out_of_range[i] = route_desc_i[i].flags[FlagSetup] && 32'(det[i]) < P
                              && 32'(fl_out_o[i]) >= P;
    end
  end
  `ASSERT(a_setup_in_range, setup_out_of_range == '0)
endmodule
