// Types and pure functions shared by switch.sv, input_port_ctrl.sv and output_port.sv.
//
// Contract
// - desc_t: the packet descriptor of a head flit, 192 bits, LSB first as in docs/recording.md:
//   injected 64, id 32, src 16, dlid 16, len 16, sl 8, vc 8, orig_vc 8, flags 8 (bit 0 adapted,
//   1 hot-spot traffic, 2 MPI message, 3 FECN, 4 BECN, 5 setup, 6 teardown, 7 acknowledgement),
//   cid 16 (flow routing's connection identifier). A packed struct lists its first member at the
//   MSB, so the fields are declared from cid down to injected.
// - arn_t: an ARN control flit, 72 bits, LSB first as in src/wire/arn.rs: dest 16, port 8, vc 8,
//   arn_id 32, root_info 8.
// - cnm_t: a QCN congestion notification, 40 bits, LSB first as in src/wire/cnm.rs: src 16,
//   dest 16, fb 8.
// - cfg_t: the configuration registers of one switch, programmed (like the LFT) before traffic
//   and held while the links run: routing mode and queuing scheme (RtDModK .. RtFlow,
//   QuOneQ .. QuFlow2Sl, numbered in the order of src/switch/config.rs), the scheme's regular
//   VCs and argument, the switch's id, stage and up ports, the seed of oblivious routing, and
//   whether adapted packets refresh ARN-table entries upstream; whether the outputs
//   arbitrate first come, first served (OutputArbitration::Fcfs) rather than round robin; the
//   outputs' FECN marking settings (src/blocks/fecn_marker.rs, FecnMarking; threshold 0: off); the
//   QCN congestion points' settings (src/blocks/congestion_point.rs, QcnPoint; Qeq 0: off).
// - scheme_vc: the regular VC of a packet to end node dst (QueuingScheme::vc_for);
//   splitmix_mix: the output function of SplitMix64 (src/blocks/rng.rs) on a state already
//   advanced by the golden gamma.
// Twin: src/switch/config.rs (RoutingMode, QueuingScheme), src/wire/packet.rs,
// src/wire/arn.rs, src/wire/cnm.rs, src/blocks/rng.rs
package switch_pkg;

  typedef struct packed {
    logic [15:0] cid;
    logic [7:0]  flags;
    logic [7:0]  orig_vc;
    logic [7:0]  vc;
    logic [7:0]  sl;
    logic [15:0] len;
    logic [15:0] dlid;
    logic [15:0] src;
    logic [31:0] id;
    logic [63:0] injected;
  } desc_t;

  typedef struct packed {
    logic [7:0]  root_info;
    logic [31:0] arn_id;
    logic [7:0]  vc;
    logic [7:0]  port;
    logic [15:0] dest;
  } arn_t;

  typedef struct packed {
    logic [3:0]  routing;          // Rt*
    logic [1:0]  queuing;          // Qu*
    logic [4:0]  qvcs;             // regular VCs of the scheme (0 counts as 1)
    logic [15:0] qarg;             // vFtree: nodes per leaf; Flow2SL: nodes
    logic [31:0] id;               // ARNid's upper 12 bits; mixed into the seed
    logic [7:0]  stage;            // an ARN's root_info is compared with it
    logic [63:0] up_ports;         // bit p: port p goes up
    logic [63:0] seed;             // SplitMix64 starts at seed ^ id * Golden
    logic        adapted_refresh;  // adapted packets refresh entries upstream
    logic        fcfs;             // outputs arbitrate first come, first served
    logic [15:0] fecn_threshold;   // FECN: queue (flits) from which an output marks; 0 off
    logic [15:0] fecn_rate;        // FECN: eligible packets left unmarked between two marks
    logic [15:0] fecn_min_len;     // FECN: shorter packets are never marked
    logic [63:0] fecn_victims;     // FECN: bit p, output p marks even as a victim
    logic [31:0] qcn_qeq;          // QCN: the congestion points' Qeq (flits); 0 off
    logic [7:0]  qcn_w;            // QCN: the weight w of the queue's growth
    logic [31:0] qcn_sample;       // QCN: flits joining an output's queue between two samples
    logic [31:0] smodk_div;        // S-mod-K: the source's divisor (0: not a fat-tree switch)
  } cfg_t;

  typedef struct packed {
    logic [7:0]  fb;
    logic [15:0] dest;
    logic [15:0] src;
  } cnm_t;

  // Port number of an unprogrammed LFT entry and of "no route".
  localparam logic [7:0] NoRoute = 8'hFF;

  // Flags bit of an adapted packet (AFI).
  localparam int unsigned FlagAdapted = 0;
  // Flags bit of a packet marked by an output over its congestion threshold (FECN).
  localparam int unsigned FlagFecn = 3;
  // Flags bits of flow routing's setup and teardown packets.
  localparam int unsigned FlagSetup    = 5;
  localparam int unsigned FlagTeardown = 6;

  // Routing modes (cfg_t.routing).
  localparam int unsigned RtDModK         = 0;
  localparam int unsigned RtOblivious     = 1;
  localparam int unsigned RtAdaptiveTh    = 2;
  localparam int unsigned RtAdaptiveThAfi = 3;
  localparam int unsigned RtArn           = 4;
  localparam int unsigned RtArnAfi        = 5;
  localparam int unsigned RtFa            = 6;
  localparam int unsigned RtSModK         = 7;
  localparam int unsigned RtSnoopAr       = 8;
  localparam int unsigned RtFlow          = 9;

  // Queuing schemes (cfg_t.queuing).
  localparam int unsigned QuOneQ    = 0;
  localparam int unsigned QuDbbm    = 1;
  localparam int unsigned QuVFtree  = 2;
  localparam int unsigned QuFlow2Sl = 3;

  // SplitMix64's increment (the golden gamma).
  localparam logic [63:0] Golden = 64'h9e37_79b9_7f4a_7c15;

  function automatic logic routing_afi(int unsigned routing);
    return routing == RtAdaptiveThAfi || routing == RtArnAfi;
  endfunction

  function automatic logic routing_uses_arn(int unsigned routing);
    return routing == RtArn || routing == RtArnAfi;
  endfunction

  // The regular VC of a packet to end node dst under the queuing scheme: 1Q VC 0; DBBM
  // dst mod qvcs; vFtree (dst / qarg) mod qvcs (qarg: nodes per leaf); Flow2SL
  // min(dst * qvcs / qarg, qvcs - 1) (qarg: nodes). qvcs and qarg count as at least 1.
  function automatic logic [7:0] scheme_vc(int unsigned queuing, int unsigned qvcs,
                                           int unsigned qarg, logic [15:0] dst);
    int unsigned v, a, x;
    v = (qvcs == 0) ? 1 : qvcs;
    a = (qarg == 0) ? 1 : qarg;
    case (queuing)
      QuDbbm:   x = 32'(dst) % v;
      QuVFtree: x = (32'(dst) / a) % v;
      QuFlow2Sl: begin
        x = (32'(dst) * v) / a;
        if (x > v - 1) x = v - 1;
      end
      default:  x = 0;
    endcase
    return 8'(x);
  endfunction

  // Whether FIFO stamp a is older than b: 32-bit cycle stamps compared as serial numbers
  // (src/switch/config.rs, stamp_older).
  function automatic logic stamp_older(logic [31:0] a, logic [31:0] b);
    logic signed [31:0] d;
    d = signed'(a - b);
    return d < 0;
  endfunction

  // SplitMix64's output for the advanced state s.
  function automatic logic [63:0] splitmix_mix(logic [63:0] s);
    logic [63:0] z;
    z = s;
    z = (z ^ (z >> 30)) * 64'hbf58_476d_1ce4_e5b9;
    z = (z ^ (z >> 27)) * 64'h94d0_49bb_1331_11eb;
    return z ^ (z >> 31);
  endfunction

endpackage
