// Replay testbench of switch.sv: drives the switch with the inputs of a recording
// (docs/recording.md, +rec=FILE) and compares every port output with the recorded ones, cycle by
// cycle.
//
// The switch's parameters are this module's, set with -G at the Verilator build (one build per
// parameter set: testbenches/hdl/replay_switch.sh reads them from the recording's header); the
// header is checked against them and a recording made for other parameters is refused. The
// switch's configuration (routing mode, queuing scheme, id, stage, up ports, seed, adapted
// refresh, output arbitration, FECN marking, QCN congestion points) is not a parameter: the testbench drives cfg_i from
// the header before reset, so one build replays every switch of a fabric and every routing mode.
//
// Time base (testbenches/hdl/tb_switch_main.cpp): the first rising edge has rst_ni low; after
// it the LFT is written from the `lft` lines and then the SL-to-VL tables from the `sl2vl` lines,
// one entry per cycle with the links idle; then
// recording cycle t takes one clock cycle: its inputs are applied after the edge that ends t-1
// (non-blocking, as tb_common.svh does), and the outputs the switch drives during t are compared
// at the edge that ends t, before the registers change. Comparison starts at the header's
// `from` cycle; the replay ends after its `to` cycle with
//   switch replay: <cycles> cycles, 0 mismatches
// The first cycle with a difference prints, for each differing signal, the cycle, port, signal,
// expected and got values; the testbench then reports the cycle to the C++ driver (which
// re-runs the replay to write a VCD around it) and finishes with a non-zero exit.
// The replay logic is testbench code: blocking assignments in its clocked process, and scanf
// scratch variables wider than the fields they fill.
/* verilator lint_off BLKSEQ */
/* verilator lint_off UNUSEDSIGNAL */
module tb_switch
  import switch_pkg::*;
#(
  parameter int unsigned   P              = 4,
  parameter int unsigned   V              = 2,
  parameter int unsigned   Cap            = 16,
  parameter int unsigned   Pool           = 37,
  parameter int unsigned   Lmc            = 1,
  parameter int unsigned   Rows           = 16,
  parameter logic [1023:0] OutCaps        = {64{16'd16}},
  parameter int unsigned   Entries        = 8,
  parameter int unsigned   Ttl            = 3000,
  parameter int unsigned   ArnGap         = 40,
  parameter int unsigned   Hcdth          = 12,
  parameter int unsigned   Lcdth          = 10,
  parameter int unsigned   Fcth           = 12,
  parameter int unsigned   Crt            = 24,
  parameter int unsigned   AdaptiveTh     = 12,
  parameter int unsigned   SnEntries      = 16,
  parameter int unsigned   SnTtl          = 64,
  parameter int unsigned   PrcEntries     = 16
) (
  input logic clk_i,
  input logic rst_ni
);
  import "DPI-C" function void tb_switch_mismatch(input longint cycle);

  // ---------------------------------------------------------------------------------------------
  // The switch.
  cfg_t           cfg;
  logic           lft_wr_en;
  logic [15:0]    lft_wr_lid;
  logic [7:0]     lft_wr_port;
  logic           sl2vl_wr_en;
  logic [7:0]     sl2vl_wr_out, sl2vl_wr_in;
  logic [3:0]     sl2vl_wr_sl, sl2vl_wr_vl;
  logic [P-1:0]   in_flit_valid, in_flit_head, in_flit_tail, in_arn_valid, in_cnm_valid;
  logic [3:0]     in_flit_vc   [P];
  desc_t          in_flit_desc [P];
  logic [7:0]     in_credit    [P][V];
  arn_t           in_arn       [P];
  cnm_t           in_cnm       [P];
  logic [P-1:0]   out_flit_valid, out_flit_head, out_flit_tail, out_arn_valid, out_cnm_valid;
  logic [3:0]     out_flit_vc   [P];
  desc_t          out_flit_desc [P];
  logic [7:0]     out_credit    [P][V];
  arn_t           out_arn       [P];
  cnm_t           out_cnm       [P];

  switch #(
    .P(P), .V(V), .Cap(Cap), .Pool(Pool), .Lmc(Lmc), .Rows(Rows), .OutCaps(OutCaps),
    .Entries(Entries), .Ttl(Ttl), .ArnGap(ArnGap), .Hcdth(Hcdth), .Lcdth(Lcdth), .Fcth(Fcth),
    .Crt(Crt), .AdaptiveTh(AdaptiveTh), .SnEntries(SnEntries), .SnTtl(SnTtl),
    .PrcEntries(PrcEntries)
  ) u_dut (
    .clk_i,
    .rst_ni,
    .cfg_i            (cfg),
    .lft_wr_en_i      (lft_wr_en),
    .lft_wr_lid_i     (lft_wr_lid),
    .lft_wr_port_i    (lft_wr_port),
    .sl2vl_wr_en_i    (sl2vl_wr_en),
    .sl2vl_wr_out_i   (sl2vl_wr_out),
    .sl2vl_wr_in_i    (sl2vl_wr_in),
    .sl2vl_wr_sl_i    (sl2vl_wr_sl),
    .sl2vl_wr_vl_i    (sl2vl_wr_vl),
    .in_flit_valid_i  (in_flit_valid),
    .in_flit_vc_i     (in_flit_vc),
    .in_flit_head_i   (in_flit_head),
    .in_flit_tail_i   (in_flit_tail),
    .in_flit_desc_i   (in_flit_desc),
    .in_credit_i      (in_credit),
    .in_arn_valid_i   (in_arn_valid),
    .in_arn_i         (in_arn),
    .in_cnm_valid_i   (in_cnm_valid),
    .in_cnm_i         (in_cnm),
    .out_flit_valid_o (out_flit_valid),
    .out_flit_vc_o    (out_flit_vc),
    .out_flit_head_o  (out_flit_head),
    .out_flit_tail_o  (out_flit_tail),
    .out_flit_desc_o  (out_flit_desc),
    .out_credit_o     (out_credit),
    .out_arn_valid_o  (out_arn_valid),
    .out_arn_o        (out_arn),
    .out_cnm_valid_o  (out_cnm_valid),
    .out_cnm_o        (out_cnm)
  );

  // ---------------------------------------------------------------------------------------------
  // The recording: header.
  integer      fd;
  string       path, line, name, rname, qname, aname;
  int          lft_lid [$];
  int          lft_port [$];
  int          sl2vl_out [$];
  int          sl2vl_in  [$];
  int          sl2vl_sl  [$];
  int          sl2vl_vl  [$];
  longint      from_cycle, to_cycle;
  int          n;

  function automatic int unsigned routing_code(string s);
    case (s)
      "dmodk":           return RtDModK;
      "oblivious":       return RtOblivious;
      "adaptive_th":     return RtAdaptiveTh;
      "adaptive_th_afi": return RtAdaptiveThAfi;
      "arn":             return RtArn;
      "arn_afi":         return RtArnAfi;
      "fa":              return RtFa;
      "smodk":           return RtSModK;
      "snoop_ar":        return RtSnoopAr;
      "flow":            return RtFlow;
      default:           return 99;
    endcase
  endfunction

  function automatic int unsigned queuing_code(string s);
    case (s)
      "1q":      return QuOneQ;
      "dbbm":    return QuDbbm;
      "vftree":  return QuVFtree;
      "flow2sl": return QuFlow2Sl;
      // The routing engine's path SLs: the switch reads only the VL count (qvcs), as it does
      // for DBBM, whose code stands in for it.
      "path_sl": return QuDbbm;
      default:   return 99;
    endcase
  endfunction

  // Whether s begins with prefix.
  function automatic logic starts(string s, string prefix);
    return s.len() >= prefix.len() && s.substr(0, prefix.len() - 1) == prefix;
  endfunction

  // Refuses a header value that differs from the build's parameter.
  task automatic check(string what, longint got, longint built);
    if (got != built) begin
      $display("switch replay: the recording has %s %0d, this build %0d (rebuild with the \
recording's parameters: testbenches/hdl/replay_switch.sh)", what, got, built);
      $fatal(1, "parameter mismatch");
    end
  endtask

  initial begin
    logic [63:0] up, seed;
    int a, b, c, d, e, f, g, h, k;
    logic [63:0] fecn_victims;
    // The header lines every recording has, seen so far.
    logic seen_switch, seen_ports, seen_routing, seen_arn;
    seen_switch  = 1'b0;
    seen_ports   = 1'b0;
    seen_routing = 1'b0;
    seen_arn     = 1'b0;
    from_cycle = 0;
    to_cycle   = -1;
    cfg        = '0;
    if (!$value$plusargs("rec=%s", path)) $fatal(1, "missing +rec=FILE");
    fd = $fopen(path, "r");
    if (fd == 0) $fatal(1, "cannot open recording %s", path);
    n = $fgets(line, fd);
    if (!starts(line, "arnsim-switch-recording 2")) begin
      $fatal(1, "%s: not a switch recording (format 2)", path);
    end
    forever begin
      if ($fgets(line, fd) == 0) $fatal(1, "%s: no end-header", path);
      if (line.len() == 0 || line.getc(0) == "#") continue;
      if (starts(line, "end-header")) begin
        if (!(seen_switch && seen_ports && seen_routing && seen_arn)) begin
          $fatal(1, "%s: the header lacks a switch, param ports, param routing or param \
arn_entries line", path);
        end
        break;
      end
      if (starts(line, "lft ")) begin
        n = $sscanf(line, "lft %d %d", a, b);
        lft_lid.push_back(a);
        lft_port.push_back(b);
      end else if (starts(line, "sl2vl ")) begin
        n = $sscanf(line, "sl2vl %d %d %d %d", a, b, c, d);
        if (n != 4 || a < 0 || a >= P || b < 0 || b >= P || c < 0 || c > 15 || d < 0 || d >= V)
          $fatal(1, "%s: unreadable sl2vl line: %s", path, line);
        sl2vl_out.push_back(a);
        sl2vl_in.push_back(b);
        sl2vl_sl.push_back(c);
        sl2vl_vl.push_back(d);
      end else if (starts(line, "switch ")) begin
        // S-mod-K's divisor is written for S-mod-K only.
        c = 0;
        n = $sscanf(line, "switch %s id %d stage %d up_ports %h seed %d smodk_div %d", name, a, b,
                    up, seed, c);
        if (n < 5 || b < 0 || b > 255 || c < 0)
          $fatal(1, "%s: unreadable switch line: %s", path, line);
        cfg.smodk_div = 32'(c);
        cfg.id       = 32'(a);
        cfg.stage    = 8'(b);
        cfg.up_ports = up;
        cfg.seed     = seed;
        seen_switch  = 1'b1;
      end else if (starts(line, "param ports")) begin
        n = $sscanf(line, "param ports %d vcs %d vc_capacity %d max_packets %d lmc %d banks %d rows %d",
                    a, b, c, d, e, f, g);
        check("ports", longint'(a), longint'(P));
        check("vcs", longint'(b), longint'(V));
        check("vc_capacity", longint'(c), longint'(Cap));
        check("max_packets", longint'(d), longint'(Pool));
        check("lmc", longint'(e), longint'(Lmc));
        check("rows", longint'(g), longint'(Rows));
        seen_ports = 1'b1;
      end else if (starts(line, "param routing")) begin
        // A recording without `arbitration` (made before the key) arbitrates round robin.
        aname = "round_robin";
        n = $sscanf(line, "param routing %s queuing %s qvcs %d qarg %d arbitration %s", rname,
                    qname, a, b, aname);
        if (n < 4 || routing_code(rname) > RtFlow || queuing_code(qname) > QuFlow2Sl
            || a < 0 || a > 15 || b < 0 || b > 65535
            || (aname != "round_robin" && aname != "fcfs")) begin
          $fatal(1, "%s: unreadable routing line: %s", path, line);
        end
        cfg.fcfs    = aname == "fcfs";
        cfg.routing = 4'(routing_code(rname));
        cfg.queuing = 2'(queuing_code(qname));
        cfg.qvcs    = 5'(a);
        cfg.qarg    = 16'(b);
        // The build's VCs are the scheme's regular VCs and the AFC under AFI.
        c = (queuing_code(qname) == QuOneQ || a == 0) ? 1 : a;
        if (routing_afi(routing_code(rname))) c = c + 1;
        check("vcs for this routing and queuing", longint'(c), longint'(V));
        seen_routing = 1'b1;
      end else if (starts(line, "param arn_entries")) begin
        n = $sscanf(line, "param arn_entries %d arn_ttl %d arn_gap %d hcdth %d lcdth %d fcth %d crt %d adaptive_threshold %d adapted_refresh %d",
                    a, b, c, d, e, f, g, h, k);
        check("arn_entries", longint'(a), longint'(Entries));
        check("arn_ttl", longint'(b), longint'(Ttl));
        check("arn_gap", longint'(c), longint'(ArnGap));
        check("hcdth", longint'(d), longint'(Hcdth));
        check("lcdth", longint'(e), longint'(Lcdth));
        check("fcth", longint'(f), longint'(Fcth));
        check("crt", (g == 0) ? 64'd1 : 64'(g), longint'(Crt));
        check("adaptive_threshold", longint'(h), longint'(AdaptiveTh));
        cfg.adapted_refresh = k[0];
        seen_arn            = 1'b1;
      end else if (starts(line, "param fecn_threshold")) begin
        // A recording without this line (made before switches marked FECN) marks nothing.
        n = $sscanf(line, "param fecn_threshold %d fecn_rate %d fecn_min_len %d fecn_victims %h",
                    a, b, c, fecn_victims);
        if (n != 4 || a < 0 || a > 65535 || b < 0 || b > 65535 || c < 0 || c > 65535)
          $fatal(1, "%s: unreadable FECN line: %s", path, line);
        cfg.fecn_threshold = 16'(a);
        cfg.fecn_rate      = 16'(b);
        cfg.fecn_min_len   = 16'(c);
        cfg.fecn_victims   = fecn_victims;
      end else if (starts(line, "param qcn_qeq")) begin
        // A recording without this line (congestion points off) samples nothing.
        n = $sscanf(line, "param qcn_qeq %d qcn_w %d qcn_sample %d", a, b, c);
        if (n != 3 || a < 0 || b < 0 || b > 255 || c < 0)
          $fatal(1, "%s: unreadable QCN line: %s", path, line);
        cfg.qcn_qeq    = 32'(a);
        cfg.qcn_w      = 8'(b);
        cfg.qcn_sample = 32'(c);
      end else if (starts(line, "param snoop_entries")) begin
        // Snooped AR's table: its size and timer are the build's.
        n = $sscanf(line, "param snoop_entries %d snoop_ttl %d", a, b);
        if (n != 2) $fatal(1, "%s: unreadable snoop line: %s", path, line);
        check("snoop_entries", longint'(a), longint'(SnEntries));
        check("snoop_ttl", longint'(b), longint'(SnTtl));
      end else if (starts(line, "param route_cache_entries")) begin
        // Flow routing's route caches: their size is the build's.
        n = $sscanf(line, "param route_cache_entries %d", a);
        if (n != 1) $fatal(1, "%s: unreadable route cache line: %s", path, line);
        check("route_cache_entries", longint'(a), longint'(PrcEntries));
      end else if (starts(line, "out_capacity")) begin
        n = $sscanf(line, "out_capacity %d %d", a, b);
        check("out_capacity", longint'(b), longint'(OutCaps[16*a +: 16]));
      end else if (starts(line, "from ")) begin
        n = $sscanf(line, "from %d to %d", from_cycle, to_cycle);
      end
    end
    // The cycle lines are the driver's to read.
    $fclose(fd);
  end

  // ---------------------------------------------------------------------------------------------
  // The recording: cycle lines, parsed by the driver (tb_switch_line in tb_switch_main.cpp: one
  // line per call, its numbers in f[0..15]: cycle, 0 input / 1 output, port, kind 0 flit,
  // 1 credits, 2 ARN, 3 the end line, 4 CNM, then the kind's fields in file order). pf holds the first
  // line of a later cycle.
  import "DPI-C" function int tb_switch_line(output longint f[16]);
  localparam longint KindFlit = 0, KindCredit = 1, KindArn = 2, KindEnd = 3, KindCnm = 4;
  longint      pf [16];
  logic        pend_valid = 1'b0;
  longint      pend_t;
  logic        at_end = 1'b0;
  // What the switch must drive in the cycle being compared.
  logic [P-1:0] exp_flit_valid, exp_flit_head, exp_flit_tail, exp_arn_valid, exp_cnm_valid;
  logic [3:0]   exp_flit_vc   [P];
  desc_t        exp_flit_desc [P];
  logic [7:0]   exp_credit    [P][V];
  arn_t         exp_arn       [P];
  cnm_t         exp_cnm       [P];

  // A head's descriptor from a flit line's fields (vc, head, tail, injected, id, src, dlid, len,
  // sl, orig_vc, flags, cid from f[4]); a body flit's fields are all 0.
  function automatic desc_t line_desc(longint f[16]);
    return '{cid: 16'(f[15]), flags: 8'(f[14]), orig_vc: 8'(f[13]), vc: (f[5] != 0) ? 8'(f[4]) : 8'd0,
             sl: 8'(f[12]), len: 16'(f[11]), dlid: 16'(f[10]), src: 16'(f[9]), id: 32'(f[8]),
             injected: 64'(f[7])};
  endfunction

  // Reads the lines of cycle t: its inputs go to the switch (non-blocking: after this edge), its
  // outputs to the expectation.
  task automatic load_cycle(longint t);
    int           st, p, vc;
    logic         out;
    logic [P-1:0] fv, fh, ft, av, cv;
    logic [3:0]   fvc  [P];
    desc_t        fd_d [P];
    logic [7:0]   cred [P][V];
    arn_t         arn  [P];
    cnm_t         cnm  [P];
    fv = '0;
    cv = '0;
    fh = '0;
    ft = '0;
    av = '0;
    for (int i = 0; i < P; i++) begin
      fvc[i]  = '0;
      fd_d[i] = '0;
      arn[i]  = '0;
      cnm[i]  = '0;
      exp_cnm[i] = '0;
      for (int v = 0; v < V; v++) cred[i][v] = '0;
      exp_flit_vc[i]   = '0;
      exp_flit_desc[i] = '0;
      exp_arn[i]       = '0;
      for (int v = 0; v < V; v++) exp_credit[i][v] = '0;
    end
    exp_flit_valid = '0;
    exp_flit_head  = '0;
    exp_flit_tail  = '0;
    exp_arn_valid  = '0;
    exp_cnm_valid  = '0;
    forever begin
      if (!pend_valid) begin
        st = tb_switch_line(pf);
        if (st == 0) $fatal(1, "%s: ends before cycle %0d", path, t);
        if (st < 0) $fatal(1, "%s: unreadable line (printed above)", path);
        pend_t     = (pf[3] == KindEnd) ? to_cycle + 1 : pf[0];
        pend_valid = 1'b1;
      end
      if (pend_t > t) break;
      if (pend_t < t) $fatal(1, "%s: cycle %0d after cycle %0d", path, pend_t, t);
      pend_valid = 1'b0;
      if (pf[2] < 0 || pf[2] >= longint'(P)) $fatal(1, "%s: cycle %0d: port %0d of %0d", path, t, pf[2], P);
      p   = int'(pf[2]);
      out = pf[1] != 0;
      if (pf[3] == KindFlit) begin
        if (!out) begin
          fv[p]   = 1'b1;
          fvc[p]  = 4'(pf[4]);
          fh[p]   = pf[5] != 0;
          ft[p]   = pf[6] != 0;
          fd_d[p] = line_desc(pf);
        end else begin
          exp_flit_valid[p] = 1'b1;
          exp_flit_vc[p]    = 4'(pf[4]);
          exp_flit_head[p]  = pf[5] != 0;
          exp_flit_tail[p]  = pf[6] != 0;
          exp_flit_desc[p]  = line_desc(pf);
        end
      end else if (pf[3] == KindCredit) begin
        if (pf[4] < 0 || pf[4] >= longint'(V)) begin
          $fatal(1, "%s: cycle %0d: credits of VC %0d", path, t, pf[4]);
        end
        vc = int'(pf[4]);
        if (!out) cred[p][vc] = 8'(pf[5]);
        else exp_credit[p][vc] = 8'(pf[5]);
      end else if (pf[3] == KindArn) begin
        // An input ARN has no port field: dest, vc, arn_id, root_info.
        if (!out) begin
          av[p]  = 1'b1;
          arn[p] = '{root_info: 8'(pf[7]), arn_id: 32'(pf[6]), vc: 8'(pf[5]), port: 8'd0,
                     dest: 16'(pf[4])};
        end else begin
          exp_arn_valid[p] = 1'b1;
          exp_arn[p]       = '{root_info: 8'(pf[8]), arn_id: 32'(pf[7]), vc: 8'(pf[6]),
                               port: 8'(pf[5]), dest: 16'(pf[4])};
        end
      end else if (pf[3] == KindCnm) begin
        // src, dest, fb.
        if (!out) begin
          cv[p]  = 1'b1;
          cnm[p] = '{fb: 8'(pf[6]), dest: 16'(pf[5]), src: 16'(pf[4])};
        end else begin
          exp_cnm_valid[p] = 1'b1;
          exp_cnm[p]       = '{fb: 8'(pf[6]), dest: 16'(pf[5]), src: 16'(pf[4])};
        end
      end else begin
        $fatal(1, "%s: cycle %0d: a line after the end line", path, t);
      end
    end
    in_flit_valid <= fv;
    in_flit_head  <= fh;
    in_flit_tail  <= ft;
    in_flit_vc    <= fvc;
    in_flit_desc  <= fd_d;
    in_credit     <= cred;
    in_arn_valid  <= av;
    in_arn        <= arn;
    in_cnm_valid  <= cv;
    in_cnm        <= cnm;
  endtask

  // ---------------------------------------------------------------------------------------------
  // Comparison of the outputs the switch drives now with the expectation of cycle t.
  int unsigned mismatches;
  task automatic report(longint t, int p, string sig, logic [191:0] exp_v, logic [191:0] got_v);
    if (mismatches < 32) begin
      $display("switch replay: mismatch at cycle %0d port %0d %s: expected %0d got %0d", t, p, sig,
               exp_v, got_v);
    end
    mismatches++;
  endtask

  task automatic compare(longint t);
    for (int p = 0; p < P; p++) begin
      if (out_flit_valid[p] != exp_flit_valid[p]) begin
        report(t, p, "out_flit_valid", 192'(exp_flit_valid[p]), 192'(out_flit_valid[p]));
      end else if (exp_flit_valid[p]) begin
        if (out_flit_vc[p] != exp_flit_vc[p])
          report(t, p, "out_flit_vc", 192'(exp_flit_vc[p]), 192'(out_flit_vc[p]));
        if (out_flit_head[p] != exp_flit_head[p])
          report(t, p, "out_flit_head", 192'(exp_flit_head[p]), 192'(out_flit_head[p]));
        if (out_flit_tail[p] != exp_flit_tail[p])
          report(t, p, "out_flit_tail", 192'(exp_flit_tail[p]), 192'(out_flit_tail[p]));
        if (out_flit_desc[p].injected != exp_flit_desc[p].injected)
          report(t, p, "out_flit_desc.injected", 192'(exp_flit_desc[p].injected),
                 192'(out_flit_desc[p].injected));
        if (out_flit_desc[p].id != exp_flit_desc[p].id)
          report(t, p, "out_flit_desc.id", 192'(exp_flit_desc[p].id), 192'(out_flit_desc[p].id));
        if (out_flit_desc[p].src != exp_flit_desc[p].src)
          report(t, p, "out_flit_desc.src", 192'(exp_flit_desc[p].src),
                 192'(out_flit_desc[p].src));
        if (out_flit_desc[p].dlid != exp_flit_desc[p].dlid)
          report(t, p, "out_flit_desc.dlid", 192'(exp_flit_desc[p].dlid),
                 192'(out_flit_desc[p].dlid));
        if (out_flit_desc[p].len != exp_flit_desc[p].len)
          report(t, p, "out_flit_desc.len", 192'(exp_flit_desc[p].len),
                 192'(out_flit_desc[p].len));
        if (out_flit_desc[p].sl != exp_flit_desc[p].sl)
          report(t, p, "out_flit_desc.sl", 192'(exp_flit_desc[p].sl), 192'(out_flit_desc[p].sl));
        if (out_flit_desc[p].vc != exp_flit_desc[p].vc)
          report(t, p, "out_flit_desc.vc", 192'(exp_flit_desc[p].vc), 192'(out_flit_desc[p].vc));
        if (out_flit_desc[p].orig_vc != exp_flit_desc[p].orig_vc)
          report(t, p, "out_flit_desc.orig_vc", 192'(exp_flit_desc[p].orig_vc),
                 192'(out_flit_desc[p].orig_vc));
        if (out_flit_desc[p].flags != exp_flit_desc[p].flags)
          report(t, p, "out_flit_desc.flags", 192'(exp_flit_desc[p].flags),
                 192'(out_flit_desc[p].flags));
        if (out_flit_desc[p].cid != exp_flit_desc[p].cid)
          report(t, p, "out_flit_desc.cid", 192'(exp_flit_desc[p].cid),
                 192'(out_flit_desc[p].cid));
      end
      for (int v = 0; v < V; v++) begin
        if (out_credit[p][v] != exp_credit[p][v]) begin
          report(t, p, $sformatf("out_credit[%0d]", v), 192'(exp_credit[p][v]),
                 192'(out_credit[p][v]));
        end
      end
      if (out_arn_valid[p] != exp_arn_valid[p]) begin
        report(t, p, "out_arn_valid", 192'(exp_arn_valid[p]), 192'(out_arn_valid[p]));
      end else if (exp_arn_valid[p]) begin
        if (out_arn[p].dest != exp_arn[p].dest)
          report(t, p, "out_arn.dest", 192'(exp_arn[p].dest), 192'(out_arn[p].dest));
        if (out_arn[p].port != exp_arn[p].port)
          report(t, p, "out_arn.port", 192'(exp_arn[p].port), 192'(out_arn[p].port));
        if (out_arn[p].vc != exp_arn[p].vc)
          report(t, p, "out_arn.vc", 192'(exp_arn[p].vc), 192'(out_arn[p].vc));
        if (out_arn[p].arn_id != exp_arn[p].arn_id)
          report(t, p, "out_arn.arn_id", 192'(exp_arn[p].arn_id), 192'(out_arn[p].arn_id));
        if (out_arn[p].root_info != exp_arn[p].root_info)
          report(t, p, "out_arn.root_info", 192'(exp_arn[p].root_info),
                 192'(out_arn[p].root_info));
      end
      if (out_cnm_valid[p] != exp_cnm_valid[p]) begin
        report(t, p, "out_cnm_valid", 192'(exp_cnm_valid[p]), 192'(out_cnm_valid[p]));
      end else if (exp_cnm_valid[p] && out_cnm[p] != exp_cnm[p]) begin
        if (out_cnm[p].src != exp_cnm[p].src)
          report(t, p, "out_cnm.src", 192'(exp_cnm[p].src), 192'(out_cnm[p].src));
        if (out_cnm[p].dest != exp_cnm[p].dest)
          report(t, p, "out_cnm.dest", 192'(exp_cnm[p].dest), 192'(out_cnm[p].dest));
        if (out_cnm[p].fb != exp_cnm[p].fb)
          report(t, p, "out_cnm.fb", 192'(exp_cnm[p].fb), 192'(out_cnm[p].fb));
      end
    end
  endtask

  // ---------------------------------------------------------------------------------------------
  // The sequence: reset, LFT and SL-to-VL writes, then the recording's cycles.
  int     lft_next = 0;
  logic   running = 1'b0;
  longint cur;

  always @(posedge clk_i) begin
    if (!rst_ni) begin
      lft_wr_en     <= 1'b0;
      lft_wr_lid    <= '0;
      lft_wr_port   <= '0;
      sl2vl_wr_en   <= 1'b0;
      sl2vl_wr_out  <= '0;
      sl2vl_wr_in   <= '0;
      sl2vl_wr_sl   <= '0;
      sl2vl_wr_vl   <= '0;
      in_flit_valid <= '0;
      in_flit_head  <= '0;
      in_flit_tail  <= '0;
      in_arn_valid  <= '0;
      in_cnm_valid  <= '0;
      for (int i = 0; i < P; i++) begin
        in_flit_vc[i]   <= '0;
        in_flit_desc[i] <= '0;
        in_arn[i]       <= '0;
        in_cnm[i]       <= '0;
        for (int v = 0; v < V; v++) in_credit[i][v] <= '0;
      end
      mismatches = 0;
    end else if (!running) begin
      if (lft_next < lft_lid.size()) begin
        lft_wr_en   <= 1'b1;
        lft_wr_lid  <= 16'(lft_lid[lft_next]);
        lft_wr_port <= 8'(lft_port[lft_next]);
        lft_next++;
      end else if (lft_next < lft_lid.size() + sl2vl_out.size()) begin
        lft_wr_en    <= 1'b0;
        sl2vl_wr_en  <= 1'b1;
        sl2vl_wr_out <= 8'(sl2vl_out[lft_next - lft_lid.size()]);
        sl2vl_wr_in  <= 8'(sl2vl_in[lft_next - lft_lid.size()]);
        sl2vl_wr_sl  <= 4'(sl2vl_sl[lft_next - lft_lid.size()]);
        sl2vl_wr_vl  <= 4'(sl2vl_vl[lft_next - lft_lid.size()]);
        lft_next++;
      end else begin
        lft_wr_en   <= 1'b0;
        sl2vl_wr_en <= 1'b0;
        running = 1'b1;
        cur = 0;
        load_cycle(0);
      end
    end else if (!at_end) begin
      if (cur >= from_cycle) compare(cur);
      if (mismatches != 0) begin
        $display("switch replay: %0d mismatches at cycle %0d (%0d cycles matched before)",
                 mismatches, cur, cur - from_cycle);
        tb_switch_mismatch(cur);
        at_end = 1'b1;
        $finish;
      end else if (cur == to_cycle) begin
        $display("switch replay: %0d cycles, 0 mismatches", to_cycle + 1 - from_cycle);
        at_end = 1'b1;
        $finish;
      end else begin
        cur = cur + 1;
        load_cycle(cur);
      end
    end
  end

endmodule
