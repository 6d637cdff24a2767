//! One input-queued switch, assembled from the blocks, stepped one cycle at a time.
//!
//! Per port: an input buffer with VOQs ([`voq_buffer`]), the input port controller (Rocher-Gonzalez et al.
//! pseudo-code 4), per-VC credit counters of the downstream buffer, an input-level round-robin
//! arbiter and per-input VC-level arbiters at every output, and a congestion detector per output.
//! One interleaved LFT and one ARN table serve every port.
//!
//! Order of work inside one cycle `t` (all of it reads only what links delivered in `t` and the
//! registers of `t`; everything it writes is seen from `t+1`, or by neighbours from `t+latency`):
//! 1. detectors evaluate on the VOQ occupancies and credits as registered at the start of `t`;
//!    a declared root files a processARN command (pseudo-code 1);
//! 2. credits and ARNs arriving on the reverse direction of each output's link are taken in;
//!    ARNs file processARN commands;
//! 3. the routing stage decides, for each head flit that arrived in `t-1` (the LFT's read
//!    latency), the output port, the adapted bit and the next VC, using the ARN table's lookups
//!    (combinational on its registers of `t`), and may send an ARN upstream; the packet enters its
//!    VOQ and may request its output from `t+1`;
//! 4. flits arriving on each input link are stored; a head flit issues its LFT read;
//! 5. every output sends the next flit of its current packet, and, when idle or sending a tail,
//!    arbitrates over (input, VC) pairs whose head packet fits in the downstream credits
//!    (virtual cut-through); the winner's head flit leaves in `t+1`;
//! 6. one processARN command from the queue is applied to the ARN table; freed credits and at most
//!    one ARN per input go back upstream; every block commits.
//!
//! A packet that wins its output leaves one flit per cycle from head to tail, so the switch does
//! its work at the head and the tail: the flits in between, and the credits spent and returned
//! meanwhile, are closed forms of the start cycles ([`voq_buffer`], [`output_credits`]), read
//! wherever something looks at them. Every count read is the one the per-cycle pipeline holds.

pub mod config;
pub mod output_credits;
pub mod voq_buffer;

pub use config::{QueuingScheme, RoutingMode, SwitchParams, packet_slots};

use crate::blocks::arn_table::{ArnLookup, ArnLookupResult, ArnProcess, ArnTableIn, ArnTableOut};
use crate::blocks::congestion_detector::{CongestionDetectorIn, MAX_INPUTS};
use crate::blocks::lft_banks::NO_ROUTE;
use crate::blocks::rr_arbiter::RrArbiterIn;
use crate::blocks::{ArnTable, Block, CongestionDetector, LftBanks, RrArbiter};
use crate::stimulus::SplitMix64;
use crate::wire::link::{Arrivals, Backward, Channel, Flit, MAX_VCS, Outbox, streamed, tail_cycle};
use crate::wire::{ArnInfo, Packet, PacketFlags};
use heapless::Deque;
use output_credits::OutputCredits;
use voq_buffer::{ArrivalFault, VoqBuffer};

/// Largest switch radix.
pub const MAX_PORTS: usize = 64;

/// Index of a VC in a fixed per-VC array. VC numbers are checked against the port's VC count
/// where they enter the switch; the mask only lets the compiler drop the bounds check.
#[inline]
pub(crate) fn vc_ix(vc: usize) -> usize {
    debug_assert!(vc < MAX_VCS);
    vc & (MAX_VCS - 1)
}

/// Index of a port in a fixed per-port array (see [`vc_ix`]).
#[inline]
pub(crate) fn port_ix(port: usize) -> usize {
    debug_assert!(port < MAX_PORTS);
    port & (MAX_PORTS - 1)
}

/// The mask with one bit per port of a `ports`-port switch.
fn port_mask(ports: usize) -> u64 {
    if ports >= 64 {
        u64::MAX
    } else {
        (1u64 << ports) - 1
    }
}

/// Something noteworthy inside a switch, for directed tests and logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchEvent {
    /// The detector of `port` declared a congestion root (pseudo-code 1).
    RootDetected {
        /// Output port.
        port: u8,
        /// ARN describing it.
        info: ArnInfo,
    },
    /// The detector of `port` released its root.
    RootReleased {
        /// Output port.
        port: u8,
    },
    /// processARN added an entry to the ARN table.
    EntryAdded {
        /// The entry's fields.
        info: ArnInfo,
        /// Whether it was consumed here.
        consumed: bool,
        /// Alternative output port for consumed entries.
        alt_port: u8,
    },
    /// An ARN arrived on the reverse direction of output `port`.
    ArnReceived {
        /// Output port it arrived on.
        port: u8,
        /// Its fields.
        info: ArnInfo,
    },
    /// An ARN left upstream through input `port`.
    ArnSent {
        /// Input port.
        port: u8,
        /// Its fields.
        info: ArnInfo,
    },
    /// A packet was re-routed (adapted) to `out` instead of `det`.
    Adapted {
        /// Packet id.
        id: u32,
        /// Deterministic port it avoided.
        det: u8,
        /// Port it took.
        out: u8,
    },
}

/// Receives switch events; the unit observer `()` ignores them at no cost.
pub trait Observer {
    /// One event in `cycle` at switch `sw`.
    fn event(&mut self, cycle: u64, sw: u32, ev: SwitchEvent);
}

impl Observer for () {
    #[inline(always)]
    fn event(&mut self, _cycle: u64, _sw: u32, _ev: SwitchEvent) {}
}

impl Observer for Vec<(u64, u32, SwitchEvent)> {
    fn event(&mut self, cycle: u64, sw: u32, ev: SwitchEvent) {
        self.push((cycle, sw, ev));
    }
}

/// Counters of one switch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwitchStats {
    /// Congestion roots declared.
    pub roots_detected: u64,
    /// ARNs sent upstream.
    pub arns_sent: u64,
    /// ARNs received from downstream.
    pub arns_received: u64,
    /// ARNs consumed here (entry added as consumed).
    pub arns_consumed: u64,
    /// Packets re-routed away from their deterministic port.
    pub packets_adapted: u64,
    /// processARN commands dropped because the command queue was full.
    pub arn_commands_dropped: u64,
    /// Flits sent on output links.
    pub flits_sent: u64,
}

impl SwitchStats {
    /// Adds another switch's counters to these.
    pub fn accumulate(&mut self, x: &SwitchStats) {
        self.roots_detected += x.roots_detected;
        self.arns_sent += x.arns_sent;
        self.arns_received += x.arns_received;
        self.arns_consumed += x.arns_consumed;
        self.packets_adapted += x.packets_adapted;
        self.arn_commands_dropped += x.arn_commands_dropped;
        self.flits_sent += x.flits_sent;
    }
}

/// The state of one output port, as waveforms show it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputProbe {
    /// A packet is being sent.
    pub busy: bool,
    /// Id of the packet being sent (0 when idle).
    pub packet: u32,
    /// Congestion detector state (0 idle, 1 wait, 2 root).
    pub det_state: u8,
    /// VOQs in the detector's crossed set.
    pub crossed: u8,
}

/// A breach of an invariant inside a switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchFault {
    /// Port concerned.
    pub port: u8,
    /// What went wrong.
    pub what: String,
}

/// Cabling and position of one switch.
#[derive(Clone, Debug)]
pub struct SwitchWiring {
    /// Index in the fabric.
    pub id: u32,
    /// Stage in the fat tree (1 = leaf).
    pub stage: u8,
    /// Bit p: port p goes up.
    pub up_ports: u64,
    /// Per port: the channel whose flits arrive at this input (we send credits back on it).
    pub in_ch: Vec<u32>,
    /// Per port: the channel this output sends flits on (credits come back on it).
    pub out_ch: Vec<u32>,
    /// Per port: capacity in flits of each VC of the buffer at the far end of the output link.
    pub out_capacity: Vec<u16>,
}

/// What an output's arbitration sees (see `Switch::requests`).
struct Requests {
    inputs: u128,
    /// Per input, [`MAX_VCS`] bits: the VCs whose head may win (input i in bits `4i..4i + 4` of
    /// the whole array).
    vcs: [u64; MAX_PORTS * MAX_VCS / 64],
    unready: bool,
}

impl Requests {
    /// The VCs of input `i` whose head may win.
    #[inline]
    fn vcs_of(&self, i: usize) -> u8 {
        let bit = port_ix(i) * MAX_VCS;
        (self.vcs[bit / 64] >> (bit % 64)) as u8 & ((1 << MAX_VCS) - 1)
    }
}

const _: () = assert!(MAX_VCS <= 8 && 64 % MAX_VCS == 0);

/// The packet an output sends: one flit per cycle from `start` (its head) to its tail.
#[derive(Clone, Copy, Debug)]
struct Tx {
    input: u8,
    slot: u16,
    next_vc: u8,
    len: u16,
    start: u64,
}

impl Tx {
    /// The cycle its tail leaves.
    #[inline]
    fn end(&self) -> u64 {
        tail_cycle(self.start, self.len)
    }

    /// Flits sent by the end of cycle `through`.
    #[inline]
    fn sent(&self, through: u64) -> u16 {
        streamed(self.start, self.len, through)
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct RootReg {
    info: ArnInfo,
    next_refresh: u64,
}

struct InputPort {
    buf: VoqBuffer,
    /// Head flit registered for the routing stage (slot), one cycle after arrival.
    route_q: Option<u16>,
    /// Credit streams started and stopped this cycle (packets leaving the buffer), to go back
    /// upstream.
    freed: Backward,
    arn_out: Deque<ArnInfo, 8>,
    /// Per ARN-table entry: the first cycle this input may send an ARN for it again.
    arn_ok_at: Vec<u64>,
}

struct OutputPort {
    /// Per VC of the next buffer.
    credits: OutputCredits,
    tx: Option<Tx>,
    next: Option<Tx>,
    in_arb: RrArbiter,
    vc_arb: Vec<RrArbiter>,
    detector: CongestionDetector,
    root: Option<RootReg>,
}

/// One switch.
pub struct Switch {
    params: SwitchParams,
    wiring: SwitchWiring,
    ports: usize,
    /// One bit per port.
    all_ports: u64,
    vcs: usize,
    lft: LftBanks,
    arn: ArnTable,
    arn_in: Box<ArnTableIn>,
    /// The ARN table's outputs of the cycle (lookup results only for the ports that looked up).
    arn_res: Box<ArnTableOut>,
    arn_cmds: Deque<(ArnInfo, bool), 64>,
    arn_seq: u32,
    inputs: Vec<InputPort>,
    outputs: Vec<OutputPort>,
    /// Per output: bit i set when input i holds a routed packet for it, in any VC (activity
    /// tracking: arbitration looks only at these inputs).
    waiting: [u64; MAX_PORTS],
    /// Per output: bit i set when input i's VOQ for it may hold more than HCDTh flits before its
    /// next change: its occupancy plus the flits still to come of a packet arriving for it is
    /// above HCDTh. Set at every event that can raise the VOQ; leaving flits clear bits only when
    /// the detectors' skip test refreshes them.
    above_hcdth: [u64; MAX_PORTS],
    /// Bit o set when the detector of output o is idle, with an empty crossed set and no root
    /// (updated after every detector step).
    det_quiet: u64,
    /// Activity masks, so that idle ports cost nothing (each skip is exact; debug builds check
    /// it). Bit o: output o sends or holds the next packet.
    out_busy: u64,
    /// Per output: the next cycle it needs a visit: its packet's head or tail, or, idle with
    /// packets waiting, the first cycle one of them could win its arbitration (`u64::MAX`: not
    /// before a packet is routed to it or credits come back).
    wake: [u64; MAX_PORTS],
    /// The earliest `wake` of the outputs that are busy, or idle with packets waiting and not
    /// blocked: no output has anything to do before it.
    next_wake: u64,
    /// Bit o: `waiting[o]` is not empty.
    waiting_any: u64,
    /// Bit o: output o, idle, found no request it could grant, and since then no packet was
    /// routed to it and no credit came back to it, so it would still find none.
    arb_blocked: u64,
    /// Bit i: input i has credits to return or an ARN to send upstream.
    in_pending: u64,
    /// Bit i: input i holds a head for the routing stage (`route_q`).
    route_pending: u64,
    /// Bit i: input i's ARN-table lookup port was enabled last cycle (cleared before the next).
    lookups_set: u64,
    /// Per output: bit i set when input i's arriving packet was routed to the output, and so
    /// may still be adding flits to its VOQ (cleared lazily once the tail is in).
    filling: [u64; MAX_PORTS],
    /// Bit o: `above_hcdth[o]` is not empty.
    hot_outputs: u64,
    /// Per output: the detector's inputs as last filled, and which inputs' entries are stale
    /// (bit i: input i's VOQ for the output changed, or all bits when the output's credits did).
    det_in: Vec<CongestionDetectorIn>,
    det_stale: [u64; MAX_PORTS],
    /// Bit o: output o's credits changed since its detector's inputs were last filled.
    det_credits_stale: u64,
    /// Per output and input: the next-buffer VC of the head the detector sees (its `head_fc` is
    /// that VC's credits).
    det_head_vc: Box<[[u8; MAX_PORTS]; MAX_PORTS]>,
    rng: SplitMix64,
    stats: SwitchStats,
    /// Flits, credits and ARNs sent in the current window, written into the channels by the
    /// fabric once every unit has stepped the window.
    outbox: Outbox,
    /// The last cycle stepped: what the accessors read the state as of.
    now: u64,
    /// Packets whose heads have left (with `stats.flits_sent`, the progress count).
    heads_sent: u64,
}

impl Switch {
    /// A switch with its LFT already programmed.
    pub fn new(params: SwitchParams, wiring: SwitchWiring, lft: LftBanks, seed: u64) -> Self {
        let ports = wiring.in_ch.len();
        assert!((1..=MAX_PORTS).contains(&ports) && ports <= MAX_INPUTS);
        let vcs = params.vcs();
        assert!((1..=MAX_VCS).contains(&vcs));
        let inputs = (0..ports)
            .map(|_| InputPort {
                buf: VoqBuffer::new(vcs, ports, params.vc_capacity, params.max_packets),
                route_q: None,
                freed: Backward::default(),
                arn_out: Deque::new(),
                arn_ok_at: vec![0; params.arn_entries],
            })
            .collect();
        let outputs = (0..ports)
            .map(|p| OutputPort {
                credits: OutputCredits::new(wiring.out_capacity[p]),
                tx: None,
                next: None,
                in_arb: RrArbiter::new(ports),
                vc_arb: (0..ports).map(|_| RrArbiter::new(vcs)).collect(),
                detector: CongestionDetector::new(params.detector(ports)),
                root: None,
            })
            .collect();
        Switch {
            arn: ArnTable::new(params.arn_entries, ports, params.arn_ttl),
            arn_in: Box::default(),
            arn_res: Box::default(),
            arn_cmds: Deque::new(),
            arn_seq: 0,
            det_in: vec![CongestionDetectorIn::default(); ports],
            det_stale: [u64::MAX; MAX_PORTS],
            det_credits_stale: 0,
            det_head_vc: Box::new([[0; MAX_PORTS]; MAX_PORTS]),
            rng: SplitMix64::new(seed ^ (wiring.id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            stats: SwitchStats::default(),
            outbox: Outbox::new(ports),
            ports,
            vcs,
            lft,
            inputs,
            outputs,
            waiting: [0; MAX_PORTS],
            above_hcdth: [0; MAX_PORTS],
            out_busy: 0,
            waiting_any: 0,
            arb_blocked: 0,
            in_pending: 0,
            route_pending: 0,
            filling: [0; MAX_PORTS],
            wake: [u64::MAX; MAX_PORTS],
            next_wake: u64::MAX,
            lookups_set: 0,
            hot_outputs: 0,
            det_quiet: port_mask(ports),
            all_ports: port_mask(ports),
            now: 0,
            heads_sent: 0,
            params,
            wiring,
        }
    }

    /// Index in the fabric.
    pub fn id(&self) -> u32 {
        self.wiring.id
    }

    /// Cabling.
    pub fn wiring(&self) -> &SwitchWiring {
        &self.wiring
    }

    /// Counters.
    pub fn stats(&self) -> SwitchStats {
        let mut s = self.stats;
        s.flits_sent += self
            .outputs
            .iter()
            .filter_map(|o| o.tx)
            .map(|t| t.sent(self.now) as u64)
            .sum::<u64>();
        s
    }

    /// A count that grows whenever a packet starts or finishes leaving the switch (the
    /// fabric's deadlock watchdog reads it; cheaper than [`Switch::stats`]).
    pub fn progress(&self) -> u64 {
        self.stats.flits_sent + self.heads_sent
    }

    /// The ARN table.
    pub fn arn_table(&self) -> &ArnTable {
        &self.arn
    }

    /// The input buffer of `port`.
    pub fn input_buffer(&self, port: usize) -> &VoqBuffer {
        &self.inputs[port].buf
    }

    /// Flits in input `port`'s VC `vc`.
    pub fn buffered(&self, port: usize, vc: usize) -> u16 {
        self.inputs[port].buf.occupancy(vc, self.now)
    }

    /// Flits in input `port`'s buffer, over all VCs.
    pub fn buffered_flits(&self, port: usize) -> u32 {
        self.inputs[port].buf.flits(self.now)
    }

    /// Flits in input `port`'s VOQ for output `out`, over all VCs.
    pub fn voq_occupancy(&self, port: usize, out: usize) -> u16 {
        self.inputs[port].buf.voq_occupancy(out, self.now)
    }

    /// Free credits of (output `port`, `vc`).
    pub fn credits(&self, port: usize, vc: usize) -> u16 {
        self.outputs[port].credits.credits(vc, self.now)
    }

    /// Credits of (output `port`, `vc`) whose return has started but not yet arrived.
    pub fn credits_returning(&self, port: usize, vc: usize) -> u64 {
        self.outputs[port].credits.pending(vc, self.now)
    }

    /// Flits of input `port`'s VC `vc` whose credit streams have started (their packets are
    /// leaving) but that have not left yet: announced upstream, still in the buffer.
    pub fn credits_announced(&self, port: usize, vc: usize) -> u64 {
        let buf = &self.inputs[port].buf;
        self.outputs
            .iter()
            .filter_map(|o| o.tx)
            // A packet that won its output in this cycle starts leaving in the next.
            .filter(|t| t.sent(self.now) > 0 && t.input as usize == port)
            .filter(|t| buf.slot(t.slot).pkt.vc as usize == vc)
            .map(|t| (t.len - t.sent(self.now)) as u64)
            .sum()
    }

    /// Flits output `port` sent on VC `vc` (of the next buffer) since the start.
    pub fn flits_sent(&self, port: usize, vc: usize) -> u64 {
        self.outputs[port].credits.sent(vc, self.now)
    }

    /// Flits input `port` received on VC `vc` since the start.
    pub fn flits_received(&self, port: usize, vc: usize) -> u64 {
        self.inputs[port].buf.received(vc, self.now)
    }

    /// What a waveform shows of output `port`: busy, packet id, detector state and crossed set.
    pub fn output_probe(&self, port: usize) -> OutputProbe {
        let o = &self.outputs[port];
        let r = o.detector.regs();
        OutputProbe {
            busy: o.tx.is_some(),
            packet: o
                .tx
                .map_or(0, |t| self.inputs[t.input as usize].buf.slot(t.slot).pkt.id),
            det_state: r.state as u8,
            // Usually empty; the test spares the bit count (a long sequence on baseline x86-64).
            crossed: if r.over == 0 {
                0
            } else {
                r.over.count_ones() as u8
            },
        }
    }

    /// Stage of the switch.
    pub fn stage(&self) -> u8 {
        self.wiring.stage
    }

    /// Number of VCs per port.
    pub fn vcs(&self) -> usize {
        self.vcs
    }

    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.ports
    }

    /// Whether the detector of output `port` holds a root.
    pub fn is_root(&self, port: usize) -> bool {
        self.outputs[port].root.is_some()
    }

    /// Whether nothing is stored, in flight inside, or pending.
    pub fn is_idle(&self) -> bool {
        self.inputs
            .iter()
            .all(|i| i.buf.packets() == 0 && i.arn_out.is_empty())
            && self
                .outputs
                .iter()
                .all(|o| o.tx.is_none() && o.next.is_none())
    }

    /// Records whether input `i`'s VOQ for output `o` is above HCDTh after a change.
    #[inline]
    fn note_voq(&mut self, i: usize, o: usize, through: u64) {
        let buf = &self.inputs[i].buf;
        let due = buf.due_for(o, through);
        if due > 0 {
            self.filling[o] |= 1 << i;
        }
        let bound = buf.voq_occupancy(o, through) + due;
        self.note_voq_bound(i, o, bound);
    }

    /// [`Switch::note_voq`] with the VOQ's bound already computed.
    #[inline]
    fn note_voq_bound(&mut self, i: usize, o: usize, occ: u16) {
        let bit = 1u64 << i;
        self.det_stale[o] |= bit;
        if occ > self.params.hcdth {
            self.above_hcdth[o] |= bit;
            self.hot_outputs |= 1 << o;
        } else {
            self.above_hcdth[o] &= !bit;
            if self.above_hcdth[o] == 0 {
                self.hot_outputs &= !(1 << o);
            }
        }
    }

    fn is_up(&self, port: usize) -> bool {
        self.wiring.up_ports >> port & 1 == 1
    }

    fn base_lid(&self, dlid: u16) -> u16 {
        dlid >> self.params.lmc << self.params.lmc
    }

    /// Steps one cycle. `channels` are the fabric's link directions, read only (only those that
    /// `arrivals` marks for this switch, unit `id`); what the switch sends is added to its outbox
    /// (emptied by [`Switch::clear_outbox`] at the start of each window).
    pub fn step<O: Observer>(
        &mut self,
        now: u64,
        channels: &[Channel],
        arrivals: &Arrivals,
        obs: &mut O,
    ) -> Result<(), SwitchFault> {
        let (flits, back) = arrivals.take(self.wiring.id, now);
        if flits == 0 && self.quiet(now) && !self.arns_back(now, channels, back) {
            // A quiet cycle in which nothing but credit records arrives: they change the output
            // credits alone, since the outputs they wake arbitrate from the next cycle on and the
            // detectors they mark stale are quiet, so the other phases would keep every register.
            self.receive_back(now, channels, back, obs)?;
            debug_assert!(
                self.next_wake > now,
                "a credit record woke an output for its own cycle"
            );
            self.arn.age_idle(1);
            self.now = now;
            return Ok(());
        }
        if self.params.routing.uses_arn() {
            self.detect(now, obs);
        }
        self.receive_back(now, channels, back, obs)?;
        self.route(now, obs);
        self.receive_flits(now, channels, flits)?;
        self.transmit(now)?;
        self.finish_cycle(now, obs);
        self.now = now;
        Ok(())
    }

    /// Whether, with nothing arriving, cycle `now` would change no register but for the ARN
    /// table's TTLs counting down: every detector is quiet with no VOQ that may be above HCDTh,
    /// nothing is to be routed, the ARN table has no command and no entry expiring, no output
    /// has anything to do before `next_wake`, and no input has credits or an ARN to send back.
    /// The table owes such cycles' ageing until its next evaluation
    /// ([`ArnTable::age_idle`]).
    #[inline]
    fn quiet(&self, now: u64) -> bool {
        self.still()
            && (!self.params.routing.uses_arn() || self.arn.idle_for() >= 1)
            && now < self.next_wake
    }

    /// Whether one of the returns arriving in cycle `now` on the outputs in `ports` carries an
    /// ARN.
    #[inline]
    fn arns_back(&self, now: u64, channels: &[Channel], ports: u64) -> bool {
        let mut scan = ports;
        while scan != 0 {
            let o = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            if channels[self.wiring.out_ch[o] as usize]
                .recv_back(now)
                .is_some_and(|b| b.arn.is_some())
            {
                return true;
            }
        }
        false
    }

    /// The part of [`Switch::quiet`] that no passing cycle changes: detectors, routing stage,
    /// ARN commands and credits or ARNs to send back are all at rest.
    #[inline]
    fn still(&self) -> bool {
        // The masks first: under load one of them mostly settles it.
        self.route_pending == 0
            && self.lookups_set == 0
            && self.in_pending == 0
            && (!self.params.routing.uses_arn()
                || ((!self.det_quiet | self.hot_outputs) & self.all_ports == 0
                    && self.arn_cmds.is_empty()))
    }

    /// Whether, with nothing arriving, the cycles `from ..= to` would change no register (see
    /// [`Switch::quiet`]: nothing in it changes without an arrival, but for `next_wake`).
    #[inline]
    pub fn quiet_through(&self, from: u64, to: u64) -> bool {
        self.quiet(from) && to < self.next_wake && self.arn.idle_for() as u64 > to - from
    }

    /// After stepping cycle `last`: the first cycle the switch has to step if nothing arrives
    /// for it, so that the cycles `last + 1 .. due` are [`Switch::quiet_through`] (each of them
    /// may be passed with [`Switch::skip_through`], in one call or several).
    #[inline]
    pub fn due_after(&self, last: u64) -> u64 {
        if !self.still() {
            return last + 1;
        }
        self.next_wake
            .min(last + 1 + self.arn.idle_for() as u64)
            .max(last + 1)
    }

    /// Passes the quiet cycles `from ..= to` (see [`Switch::quiet_through`]).
    #[inline]
    pub fn skip_through(&mut self, from: u64, to: u64) {
        // Only the live entries' TTLs count, and they never owe more than `u32` cycles.
        self.arn
            .age_idle(u32::try_from(to - from + 1).unwrap_or(u32::MAX));
        self.now = to;
    }

    /// What the switch sent since its outbox was last cleared, to be written into the channels
    /// after every switch and node of the window has stepped.
    #[inline]
    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    /// Empties the outbox, at the start of a window.
    #[inline]
    pub fn clear_outbox(&mut self) {
        self.outbox.clear();
    }

    /// The detector inputs of output `o`: every input's VOQ occupancy for `o`, and the head
    /// packet of each VOQ (the head of the VC holding most of its flits) with the free credits of
    /// the VC it would use downstream.
    /// Only the stale entries are recomputed; debug builds compare with a full fill.
    fn fill_detector_input(&mut self, o: usize, now: u64) {
        let all = self.all_ports;
        let prev = now.saturating_sub(1);
        let mut stale = std::mem::take(&mut self.det_stale[o]) & all;
        // Flits arriving and leaving, and credits coming back, move the counts between a
        // packet's head and tail: the input the output sends from, the inputs receiving a packet
        // for it (read once more after its tail is in), and every head's credits.
        let out = &self.outputs[o];
        let mut credits_stale = self.det_credits_stale >> o & 1 == 1 || out.credits.arriving(prev);
        self.det_credits_stale &= !(1 << o);
        if let Some(tx) = out.tx {
            stale |= 1 << tx.input;
            credits_stale = true;
        }
        let mut scan = self.filling[o];
        stale |= scan;
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            if self.inputs[i].buf.due_for(o, prev) == 0 {
                self.filling[o] &= !(1 << i);
            }
        }
        self.fill_detector_entries(o, stale, prev);
        if credits_stale {
            let det_in = &mut self.det_in[o];
            let mut scan = det_in.head_valid & !stale;
            while scan != 0 {
                let i = scan.trailing_zeros() as usize;
                scan &= scan - 1;
                let vc = self.det_head_vc[o][i] as usize;
                det_in.head_fc[i] = self.outputs[o].credits.credits(vc, prev);
            }
        }
        #[cfg(debug_assertions)]
        {
            let incremental = self.det_in[o];
            self.fill_detector_entries(o, all, prev);
            debug_assert!(
                incremental == self.det_in[o],
                "detector inputs of output {o} were stale"
            );
        }
    }

    fn fill_detector_entries(&mut self, o: usize, inputs: u64, through: u64) {
        let det_in = &mut self.det_in[o];
        let mut scan = inputs;
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let buf = &self.inputs[i].buf;
            det_in.voq_occ[i] = buf.voq_occupancy(o, through);
            // The VOQ's head: the head packet of the VC holding most of its flits.
            let mut best: Option<(u16, usize)> = None;
            for v in 0..self.vcs {
                let occ = buf.vc_voq_occupancy(v, o, through);
                if occ > 0 && best.is_none_or(|(b, _)| occ > b) {
                    best = Some((occ, v));
                }
            }
            let bit = 1u64 << i;
            match best.and_then(|(_, v)| buf.head(v, o)) {
                Some((_, slot)) => {
                    det_in.head_valid |= bit;
                    det_in.head_dest[i] = slot.pkt.dlid >> self.params.lmc << self.params.lmc;
                    det_in.head_vc[i] = slot.pkt.orig_vc;
                    if slot.pkt.adapted() {
                        det_in.head_adapted |= bit;
                    } else {
                        det_in.head_adapted &= !bit;
                    }
                    det_in.head_fc[i] = self.outputs[o]
                        .credits
                        .credits(slot.next_vc as usize, through);
                    self.det_head_vc[o][i] = slot.next_vc;
                }
                None => {
                    det_in.head_valid &= !bit;
                    det_in.head_adapted &= !bit;
                    det_in.head_dest[i] = 0;
                    det_in.head_vc[i] = 0;
                    det_in.head_fc[i] = 0;
                }
            }
        }
    }

    /// Phase 1: congestion detectors on the registered occupancies and credits.
    fn detect<O: Observer>(&mut self, now: u64, obs: &mut O) {
        // Outputs whose detector may change: not quiet, or with a VOQ above HCDTh. Debug builds
        // visit every output and check the skips.
        let all = self.all_ports;
        let visit = if cfg!(debug_assertions) {
            all
        } else {
            (!self.det_quiet | self.hot_outputs) & all
        };
        let mut scan = visit;
        while scan != 0 {
            let o = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            debug_assert_eq!(
                self.hot_outputs >> o & 1 == 1,
                self.above_hcdth[o] != 0,
                "hot-output mask of output {o}"
            );
            let prev = now.saturating_sub(1);
            let bound_above = |sw: &Self| {
                (0..sw.ports)
                    .filter(|&i| sw.voq_bound(i, o, prev) > sw.params.hcdth)
                    .fold(0u64, |m, i| m | 1 << i)
            };
            // The mask holds every VOQ that may be above HCDTh, and may still hold some that
            // leaving flits have since taken below it (flits are not counted cycle by cycle);
            // a quiet detector's skip test needs the current set, so it is refreshed first.
            debug_assert_eq!(
                self.above_hcdth[o] & bound_above(self),
                bound_above(self),
                "above-HCDTh mask of output {o} misses a VOQ"
            );
            if self.det_quiet >> o & 1 == 1 && self.above_hcdth[o] != 0 {
                self.refresh_above_hcdth(o, prev);
                debug_assert_eq!(self.above_hcdth[o], bound_above(self));
            }
            // A detector that is idle with an empty crossed set, while no VOQ of its output is
            // above HCDTh, keeps every register and raises no output: its step is skipped
            // (its next state provably equals its current one). `det_quiet` holds the first
            // three conditions per output, so the test does not touch the detector.
            debug_assert_eq!(
                self.det_quiet >> o & 1 == 1,
                self.detector_quiet(o),
                "quiet mask of detector {o}"
            );
            if self.det_quiet >> o & 1 == 1 && self.above_hcdth[o] == 0 {
                debug_assert!(
                    (0..self.ports).all(|i| {
                        self.inputs[i].buf.voq_occupancy(o, prev) <= self.params.hcdth
                    })
                );
                #[cfg(debug_assertions)]
                {
                    let r = self.outputs[o].detector.regs();
                    self.fill_detector_input(o, now);
                    let mut check = self.outputs[o].detector.clone();
                    let out = check.step(&self.det_in[o]);
                    debug_assert!(
                        !out.root_det && !out.root_rel && check.regs() == r,
                        "skipped detector of output {o} would have changed"
                    );
                }
                continue;
            }
            self.fill_detector_input(o, now);
            let out = self.outputs[o].detector.step(&self.det_in[o]);
            if out.root_det {
                // Pseudo-code 1: congestionRootDetected.
                let stage = self.wiring.stage;
                let root_info = if self.is_up(o) {
                    stage
                } else {
                    stage.saturating_sub(1)
                };
                self.arn_seq = self.arn_seq.wrapping_add(1) & 0xF_FFFF;
                let info = ArnInfo {
                    dest: out.root_dest,
                    port: o as u8,
                    vc: out.root_vc,
                    arn_id: (self.wiring.id << 20) | self.arn_seq,
                    root_info,
                };
                self.stats.roots_detected += 1;
                obs.event(
                    now,
                    self.wiring.id,
                    SwitchEvent::RootDetected {
                        port: o as u8,
                        info,
                    },
                );
                self.outputs[o].root = Some(RootReg {
                    info,
                    next_refresh: now + self.params.arn_gap as u64,
                });
                self.file_arn(info, out.root_adapted);
            } else if out.root_rel {
                self.outputs[o].root = None;
                obs.event(
                    now,
                    self.wiring.id,
                    SwitchEvent::RootReleased { port: o as u8 },
                );
            } else if let Some(r) = self.outputs[o].root
                && now >= r.next_refresh
            {
                // While the root holds, it keeps its own entry alive.
                self.outputs[o].root = Some(RootReg {
                    info: r.info,
                    next_refresh: now + self.params.arn_gap as u64,
                });
                self.file_arn(r.info, false);
            }
            if self.detector_quiet(o) {
                self.det_quiet |= 1 << o;
            } else {
                self.det_quiet &= !(1 << o);
            }
        }
    }

    /// Clears from `above_hcdth[o]` the VOQs that cannot be above HCDTh after cycle `through`
    /// until their next change.
    fn refresh_above_hcdth(&mut self, o: usize, through: u64) {
        let mut scan = self.above_hcdth[o];
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            if self.voq_bound(i, o, through) <= self.params.hcdth {
                self.above_hcdth[o] &= !(1 << i);
            }
        }
        if self.above_hcdth[o] == 0 {
            self.hot_outputs &= !(1 << o);
        }
    }

    /// Input `i`'s VOQ for output `o` after cycle `through`, plus the flits still to come of a
    /// packet arriving for it: what it may reach before its next change.
    fn voq_bound(&self, i: usize, o: usize, through: u64) -> u16 {
        let buf = &self.inputs[i].buf;
        buf.voq_occupancy(o, through) + buf.due_for(o, through)
    }

    /// Whether the detector of output `o` is idle with an empty crossed set and holds no root.
    fn detector_quiet(&self, o: usize) -> bool {
        let r = self.outputs[o].detector.regs();
        r.state == crate::blocks::congestion_detector::DetectorState::Idle
            && r.over == 0
            && self.outputs[o].root.is_none()
    }

    fn file_arn(&mut self, info: ArnInfo, adapted: bool) {
        if self.arn_cmds.push_back((info, adapted)).is_err() {
            self.stats.arn_commands_dropped += 1;
        }
    }

    /// Phase 2: credits and ARNs coming back on the output links.
    /// `ports`: the outputs where something comes back in `now`.
    /// Inlined at both call sites (the quiet cycles' short path and the full step): as a call it
    /// costs more than the short path saves.
    #[inline(always)]
    fn receive_back<O: Observer>(
        &mut self,
        now: u64,
        channels: &[Channel],
        ports: u64,
        obs: &mut O,
    ) -> Result<(), SwitchFault> {
        debug_assert!(
            (0..self.ports).all(|o| ports >> o & 1 == 1
                || channels[self.wiring.out_ch[o] as usize]
                    .recv_back(now)
                    .is_none()),
            "a return arrived unmarked"
        );
        let mut scan = ports;
        while scan != 0 {
            let o = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let Some(b) = channels[self.wiring.out_ch[o] as usize].recv_back(now) else {
                debug_assert!(false, "a marked return is missing");
                continue;
            };
            if b.has_credits() {
                let out = &mut self.outputs[o];
                if out.credits.arrive(b, now).is_err() {
                    return Err(SwitchFault {
                        port: o as u8,
                        what: "credit return streams out of step (more stopped or returned than started)".into(),
                    });
                }
                if let Some(v) = out.credits.overflow(self.vcs, now) {
                    return Err(SwitchFault {
                        port: o as u8,
                        what: format!(
                            "credit counter of VC {v}: more credits back than flits sent (overflow)"
                        ),
                    });
                }
                // Streams that start raise the credits of the cycles to come, so an idle output
                // may grant earlier than it expected. Streams that stop only lower them: the
                // output's wake stays as early as it was (an output is blocked only while no
                // stream runs, so a stop never finds it blocked).
                if b.starts_streams() {
                    if out.credits.arriving(now) {
                        self.arb_blocked &= !(1 << o);
                    }
                    // The arbitration of a cycle reads the credits through the cycle before.
                    self.wake_output(o, now + 1);
                }
                debug_assert!(self.arb_blocked >> o & 1 == 0 || b.starts_streams());
                // The detector's view of the credits changes from the next cycle on.
                self.det_credits_stale |= 1 << o;
            }
            if let Some(mut info) = b.arn {
                info.port = o as u8;
                self.stats.arns_received += 1;
                obs.event(
                    now,
                    self.wiring.id,
                    SwitchEvent::ArnReceived {
                        port: o as u8,
                        info,
                    },
                );
                if self.params.routing.uses_arn() {
                    self.file_arn(info, false);
                }
            }
        }
        Ok(())
    }

    /// pseudo-code 3: the option of `dest` with the most credits in the VC the packet would use,
    /// other than `avoid`. `NO_ROUTE` when there is none.
    fn select_alternative(&self, dest: u16, vc: u8, avoid: u8, now: u64) -> u8 {
        let next_vc = self.params.afc().unwrap_or(vc) as usize;
        let opts = self.lft.options(dest | 1);
        let mut best = (NO_ROUTE, 0u16);
        for p in opts.usable_ports() {
            if p == avoid || p as usize >= self.ports {
                continue;
            }
            let c = self.outputs[p as usize]
                .credits
                .credits(next_vc, now.saturating_sub(1));
            if best.0 == NO_ROUTE || c > best.1 {
                best = (p, c);
            }
        }
        best.0
    }

    /// sendARN(inputPortID, ARNInfo) for `pkt` at input `i`, which hit the non-consumed entry of
    /// `r`: at most one ARN per entry and input per `arn_gap` cycles. An adapted packet's ARN
    /// names its original VC.
    fn send_arn(&mut self, i: usize, r: &ArnLookupResult, pkt: &Packet, now: u64) {
        let e = r.idx as usize;
        let info = ArnInfo {
            dest: self.base_lid(pkt.dlid),
            port: r.port,
            vc: if pkt.adapted() { pkt.orig_vc } else { pkt.vc },
            arn_id: r.arn_id,
            root_info: r.root_info,
        };
        let inp = &mut self.inputs[i];
        if now >= inp.arn_ok_at[e] && inp.arn_out.push_back(info).is_ok() {
            inp.arn_ok_at[e] = now + self.params.arn_gap as u64;
            self.in_pending |= 1 << i;
        }
    }

    /// Phase 3: routing stage (input port controller, pseudo-code 4).
    fn route<O: Observer>(&mut self, now: u64, obs: &mut O) {
        let routing = self.params.routing;
        // Nothing to route, no command, no lookup to clear, and a table that is empty or only
        // counts its TTLs down this cycle: the stage keeps every register.
        if self.route_pending == 0
            && self.lookups_set == 0
            && self.arn_cmds.is_empty()
            && (!routing.uses_arn() || self.arn.count() == 0 || self.arn.age_idle_cycle())
        {
            return;
        }
        // processARN command for this cycle (pseudo-code 2), decided on current state.
        let cmd = self.arn_cmds.pop_front().filter(|_| routing.uses_arn());
        let pr = match cmd {
            Some((info, adapted)) => {
                let consumed = !adapted && self.wiring.stage == info.root_info;
                let alt_port = if consumed {
                    self.select_alternative(info.dest, info.vc, info.port, now)
                } else {
                    NO_ROUTE
                };
                ArnProcess {
                    en: true,
                    dest: info.dest,
                    port: info.port,
                    vc: info.vc,
                    arn_id: info.arn_id,
                    root_info: info.root_info,
                    consumed,
                    alt_port,
                    add: !adapted,
                }
            }
            None => ArnProcess::default(),
        };
        if pr.en || self.arn_in.pr.en {
            self.arn_in.pr = pr;
        }
        // Lookup ports: disabled, but for the inputs holding a head for the routing stage (only
        // the ports enabled last cycle need clearing).
        let mut scan = std::mem::take(&mut self.lookups_set);
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            self.arn_in.lk[i] = ArnLookup::default();
        }
        if routing.uses_arn() {
            let mut scan = self.route_pending;
            while scan != 0 {
                let i = scan.trailing_zeros() as usize;
                scan &= scan - 1;
                if let Some(s) = self.inputs[i].route_q {
                    let p = &self.inputs[i].buf.slot(s).pkt;
                    // Adapted packets look up by their original VC, only to notify upstream.
                    self.arn_in.lk[i] = ArnLookup {
                        en: !p.adapted() || self.params.adapted_refresh,
                        dest: self.base_lid(p.dlid),
                        vc: if p.adapted() { p.orig_vc } else { p.vc },
                    };
                    self.lookups_set |= 1 << i;
                }
            }
        }
        debug_assert!((0..self.ports).all(|i| {
            let set = self.lookups_set >> i & 1 == 1;
            set || self.arn_in.lk[i] == ArnLookup::default()
        }));
        // An empty table with no command keeps its state and misses every lookup: skip it. So
        // does a table with no command and no lookup in a cycle where no entry expires, but for
        // its TTLs counting down, which it owes until its next evaluation.
        let arn_active = routing.uses_arn()
            && (pr.en || self.arn.count() > 0)
            && (pr.en || self.lookups_set != 0 || !self.arn.age_idle_cycle());
        if arn_active {
            self.arn
                .evaluate_into(&self.arn_in, self.lookups_set, &mut self.arn_res);
        }
        // Lookup result of input `i` (a miss when the table did not evaluate).
        let lookup = |sw: &Self, i: usize| {
            if arn_active {
                sw.arn_res.lk[i]
            } else {
                ArnLookupResult::default()
            }
        };
        if let Some((info, _)) = cmd
            && pr.add
            && arn_active
            && !self.arn_res.pr_hit
        {
            if pr.consumed {
                self.stats.arns_consumed += 1;
            }
            obs.event(
                now,
                self.wiring.id,
                SwitchEvent::EntryAdded {
                    info,
                    consumed: pr.consumed,
                    alt_port: pr.alt_port,
                },
            );
        }

        debug_assert!(
            (0..self.ports).all(|i| {
                (self.route_pending >> i & 1 == 1) == self.inputs[i].route_q.is_some()
            })
        );
        let mut scan = std::mem::take(&mut self.route_pending);
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let Some(s) = self.inputs[i].route_q.take() else {
                continue;
            };
            let mut pkt = self.inputs[i].buf.slot(s).pkt;
            let opts = self.lft.options(pkt.dlid);
            let det = opts.deterministic().unwrap_or(NO_ROUTE);
            let mut out = det;
            if !pkt.adapted() && det != NO_ROUTE {
                match routing {
                    RoutingMode::DModK => {}
                    RoutingMode::Oblivious => {
                        let n = opts.usable_ports().count() as u64;
                        if n > 1 {
                            let k = self.rng.below(n) as usize;
                            out = opts.usable_ports().nth(k).unwrap_or(det);
                        }
                    }
                    RoutingMode::AdaptiveTh | RoutingMode::AdaptiveThAfi => {
                        if self.inputs[i]
                            .buf
                            .voq_occupancy(det as usize, now.saturating_sub(1))
                            > self.params.adaptive_threshold
                        {
                            let alt =
                                self.select_alternative(self.base_lid(pkt.dlid), pkt.vc, det, now);
                            if alt != NO_ROUTE {
                                out = alt;
                            }
                        }
                    }
                    RoutingMode::Arn | RoutingMode::ArnAfi => {
                        let r = lookup(self, i);
                        if r.consumed && r.alt_port != NO_ROUTE {
                            out = r.alt_port;
                        } else if r.hit && !r.consumed {
                            self.send_arn(i, &r, &pkt, now);
                        }
                    }
                }
                if out != det {
                    self.stats.packets_adapted += 1;
                    obs.event(
                        now,
                        self.wiring.id,
                        SwitchEvent::Adapted {
                            id: pkt.id,
                            det,
                            out,
                        },
                    );
                    if routing.afi() {
                        pkt.flags |= PacketFlags::ADAPTED;
                    }
                }
            }
            if pkt.adapted() && routing.uses_arn() && self.params.adapted_refresh {
                // An isolated packet keeps its tree's entries alive upstream; its route stays.
                let r = lookup(self, i);
                if r.hit && !r.consumed {
                    self.send_arn(i, &r, &pkt, now);
                }
            }
            if out == NO_ROUTE || out as usize >= self.ports {
                // No route: the packet stays unrouted; the watchdog reports it.
                continue;
            }
            let next_vc = self.params.next_vc(&pkt);
            let buf = &mut self.inputs[i].buf;
            buf.set_flags(s, pkt.flags);
            buf.route(s, out, next_vc, now + 1);
            self.note_voq(i, out as usize, now.saturating_sub(1));
            self.waiting[out as usize] |= 1 << i;
            self.waiting_any |= 1 << out;
            self.arb_blocked &= !(1 << out);
            // Its head may win from the cycle it is ready (the next one).
            self.wake_output(out as usize, now + 1);
        }
        if arn_active {
            self.arn.commit();
        }
    }

    /// Phase 4: flits arriving on the input links. `heads`: the inputs where a packet's head
    /// arrives in `now`; the inputs receiving a packet's body take its next flit.
    fn receive_flits(
        &mut self,
        now: u64,
        channels: &[Channel],
        heads: u64,
    ) -> Result<(), SwitchFault> {
        debug_assert!(
            (0..self.ports).all(|i| heads >> i & 1 == 1
                || channels[self.wiring.in_ch[i] as usize]
                    .recv_flit(now)
                    .is_none()),
            "a head arrived unmarked"
        );
        let mut scan = heads;
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let Some(f) = channels[self.wiring.in_ch[i] as usize].recv_flit(now) else {
                debug_assert!(false, "a marked head is missing");
                continue;
            };
            let inp = &mut self.inputs[i];
            match inp.buf.arrive_head(f.pkt, now) {
                Ok(s) => {
                    inp.route_q = Some(s);
                    self.route_pending |= 1 << i;
                }
                Err(fault) => {
                    let what = match fault {
                        ArrivalFault::StillArriving { id, left } => format!(
                            "head of packet {} while {left} flits of packet {id} are still due",
                            f.pkt.id
                        ),
                        ArrivalFault::PoolFull => "packet descriptor pool full".into(),
                        ArrivalFault::NoSuchVc => {
                            format!("flit on VC {} of a {}-VC port", f.pkt.vc, self.vcs)
                        }
                        ArrivalFault::Overflow => format!(
                            "VC {} overflow: a flit arrived with the buffer full (negative credit upstream)",
                            f.pkt.vc
                        ),
                    };
                    return Err(SwitchFault {
                        port: i as u8,
                        what,
                    });
                }
            }
        }
        Ok(())
    }

    /// The requests output `o` sees: per input, the VCs whose head packet is ready and fits in
    /// the downstream credits (virtual cut-through), less the credit the output spends this cycle
    /// on `sending_vc`. Also whether some head was routed but is not ready yet.
    fn requests(&self, o: usize, now: u64, sending_vc: Option<u8>) -> Requests {
        let mut r = Requests {
            inputs: 0,
            vcs: [0; MAX_PORTS * MAX_VCS / 64],
            unready: false,
        };
        let mut scan = self.waiting[o];
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let buf = &self.inputs[i].buf;
            let mut vcs = 0u64;
            for v in 0..self.vcs {
                let Some((_, slot)) = buf.head(v, o) else {
                    continue;
                };
                if slot.ready > now {
                    r.unready = true;
                    continue;
                }
                let c = self.outputs[o]
                    .credits
                    .credits(slot.next_vc as usize, now.saturating_sub(1));
                let spent = (sending_vc == Some(slot.next_vc)) as u16;
                if c.saturating_sub(spent) >= slot.pkt.len {
                    vcs |= 1 << v;
                }
            }
            if vcs != 0 {
                let bit = port_ix(i) * MAX_VCS;
                r.vcs[bit / 64] |= vcs << (bit % 64);
                r.inputs |= 1 << i;
            }
        }
        r
    }

    /// Phase 5: transmission and arbitration at every output that has something to do: its
    /// packet's head or tail leaves now, or it is idle and packets wait for it and it is not
    /// blocked. Between a packet's head and tail an output only sends the next flit, which the
    /// closed forms count; the others keep every register.
    fn transmit(&mut self, now: u64) -> Result<(), SwitchFault> {
        let candidates = self.candidates();
        let mut active = 0u64;
        // The earliest wake of the candidates not visited now: the visits below change only the
        // visited outputs' wakes and masks.
        let mut rest = u64::MAX;
        if now >= self.next_wake {
            let mut scan = candidates;
            while scan != 0 {
                let o = scan.trailing_zeros() as usize;
                scan &= scan - 1;
                if self.wake[o] <= now {
                    active |= 1 << o;
                } else {
                    rest = rest.min(self.wake[o]);
                }
            }
        }
        #[cfg(debug_assertions)]
        for o in 0..self.ports {
            let out = &self.outputs[o];
            debug_assert!(out.next.is_none());
            debug_assert_eq!(self.out_busy >> o & 1 == 1, out.tx.is_some());
            if let Some(tx) = out.tx {
                let event = if tx.start >= now { tx.start } else { tx.end() };
                debug_assert_eq!(self.wake[o], event, "output {o} missed its packet");
            }
            if candidates >> o & 1 == 1 {
                debug_assert!(self.next_wake <= self.wake[o]);
            } else if out.tx.is_none() {
                debug_assert_eq!(self.wake[o], u64::MAX, "output {o} idle with a wake");
            }
            if active >> o & 1 == 0 && out.tx.is_none() {
                debug_assert!(
                    self.requests(o, now, None).inputs == 0,
                    "output {o} skipped with a request"
                );
            }
        }
        let mut scan_outputs = active;
        while scan_outputs != 0 {
            let o = scan_outputs.trailing_zeros() as usize;
            scan_outputs &= scan_outputs - 1;
            let mut sending_vc: Option<u8> = None;
            let mut finishing = self.outputs[o].tx.is_none();
            let mut retry = u64::MAX;
            if let Some(tx) = self.outputs[o].tx {
                // A flit of the packet leaves in every cycle from its head to its tail.
                sending_vc = Some(tx.next_vc);
                let inp = &mut self.inputs[tx.input as usize];
                let underrun = |inp: &InputPort| SwitchFault {
                    port: o as u8,
                    what: format!(
                        "cut-through underrun: packet {} leaves faster than it arrives",
                        inp.buf.slot(tx.slot).pkt.id
                    ),
                };
                if tx.start == now {
                    // The head: only it travels on the link, the body follows it cycle by cycle.
                    // The buffer frees one flit per cycle from head to tail: a credit stream.
                    let Some(vc) = inp.buf.start_departure(tx.slot, now) else {
                        return Err(underrun(inp));
                    };
                    inp.freed.start_stream(vc, tx.len);
                    self.in_pending |= 1 << tx.input;
                    let mut pkt = inp.buf.slot(tx.slot).pkt;
                    pkt.vc = tx.next_vc;
                    self.outbox
                        .send_flit(now, self.wiring.out_ch[o], Flit { pkt, index: 0 });
                    self.det_stale[o] |= 1 << tx.input;
                    self.det_credits_stale |= 1 << o;
                    self.heads_sent += 1;
                }
                if tx.end() == now {
                    let Some(vc) = inp.buf.finish_departure(o, now) else {
                        return Err(underrun(inp));
                    };
                    inp.freed.stop_stream(vc);
                    self.in_pending |= 1 << tx.input;
                    self.note_voq(tx.input as usize, o, now);
                    self.det_credits_stale |= 1 << o;
                    self.stats.flits_sent += tx.len as u64;
                    self.outputs[o].tx = None;
                    finishing = true;
                }
            }
            // Arbitrate for the packet that follows (its head leaves next cycle).
            if finishing
                && self.outputs[o].next.is_none()
                && self.waiting[o] != 0
                && self.arb_blocked >> o & 1 == 0
            {
                let req = self.requests(o, now, sending_vc);
                if req.inputs != 0 {
                    let out = &mut self.outputs[o];
                    let gi = out.in_arb.step(&RrArbiterIn {
                        req: req.inputs,
                        ack: true,
                    });
                    let i = gi.idx as usize;
                    let gv = out.vc_arb[i].step(&RrArbiterIn {
                        req: req.vcs_of(i) as u128,
                        ack: true,
                    });
                    let v = gv.idx as usize;
                    let buf = &mut self.inputs[i].buf;
                    let s = buf.pop(v, o);
                    self.det_stale[o] |= 1 << i;
                    if (0..self.vcs).all(|w| buf.head(w, o).is_none()) {
                        self.waiting[o] &= !(1 << i);
                        if self.waiting[o] == 0 {
                            self.waiting_any &= !(1 << o);
                        }
                    }
                    let slot = buf.slot(s);
                    out.next = Some(Tx {
                        input: i as u8,
                        slot: s,
                        next_vc: slot.next_vc,
                        len: slot.pkt.len,
                        start: now + 1,
                    });
                } else if sending_vc.is_none()
                    && !req.unready
                    && !self.outputs[o].credits.arriving(now)
                {
                    // Nothing can change this until a packet is routed here or credits return
                    // (credits that came back this cycle count from the next one).
                    self.arb_blocked |= 1 << o;
                } else {
                    retry = self.retry_at(o, now);
                }
            }
            // The credits this cycle's arbitration read (through the cycle before) are settled
            // only now.
            let out = &mut self.outputs[o];
            if finishing && sending_vc.is_some() {
                out.credits.finish_sending();
            }
            if let Some(next) = out.next.take() {
                out.credits
                    .start_sending(next.next_vc as usize, next.start, next.len);
                out.tx = Some(next);
            }
            match out.tx {
                Some(tx) => {
                    self.out_busy |= 1 << o;
                    self.wake[o] = if tx.start > now { tx.start } else { tx.end() };
                }
                None => {
                    self.out_busy &= !(1 << o);
                    self.wake[o] = retry;
                }
            }
        }
        if active != 0 {
            let mut next = rest;
            let mut scan = self.candidates() & active;
            while scan != 0 {
                let o = scan.trailing_zeros() as usize;
                scan &= scan - 1;
                next = next.min(self.wake[o]);
            }
            self.next_wake = next;
        }
        Ok(())
    }

    /// The first cycle after `now` in which idle output `o` could grant one of the packets
    /// waiting for it, if nothing else happens meanwhile (no packet routed to it, no credit
    /// record coming back: both wake the output at once): a head becomes ready, or the credits
    /// coming back at their current rate reach its length. `u64::MAX` when none could.
    fn retry_at(&self, o: usize, now: u64) -> u64 {
        let credits = &self.outputs[o].credits;
        let mut best = u64::MAX;
        let mut scan = self.waiting[o];
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let buf = &self.inputs[i].buf;
            for v in 0..self.vcs {
                let Some((_, slot)) = buf.head(v, o) else {
                    continue;
                };
                let mut at = (now + 1).max(slot.ready);
                let nv = slot.next_vc as usize;
                // The arbitration of cycle x reads the credits at the end of x - 1.
                let have = credits.credits(nv, now);
                if have < slot.pkt.len {
                    let rate = credits.running(nv);
                    if rate == 0 {
                        continue;
                    }
                    let cycles = (slot.pkt.len - have) as u64;
                    at = at.max(now + 1 + cycles.div_ceil(rate));
                }
                best = best.min(at);
            }
        }
        best
    }

    /// Outputs with something to do: sending, or idle with packets waiting and not blocked.
    #[inline]
    fn candidates(&self) -> u64 {
        self.out_busy | (self.waiting_any & !self.arb_blocked)
    }

    /// Idle output `o`, with packets waiting and not blocked, has to arbitrate again by cycle
    /// `at`: a packet routed to it is ready then, or credits that came back count from then.
    /// Nothing else changed for it, so no earlier cycle could grant what its wake already did
    /// not. An idle output that is not such a candidate keeps its wake at `u64::MAX`.
    fn wake_output(&mut self, o: usize, at: u64) {
        if (self.candidates() & !self.out_busy) >> o & 1 == 1 {
            self.wake[o] = self.wake[o].min(at);
            self.next_wake = self.next_wake.min(at);
        }
    }

    /// Phase 6: credits and ARNs back upstream, from the inputs that have any.
    fn finish_cycle<O: Observer>(&mut self, now: u64, obs: &mut O) {
        debug_assert!((0..self.ports).all(|i| self.in_pending >> i & 1 == 1
            || (!self.inputs[i].freed.has_credits() && self.inputs[i].arn_out.is_empty())));
        let mut scan = self.in_pending;
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let inp = &mut self.inputs[i];
            let arn = inp.arn_out.pop_front();
            let b = Backward { arn, ..inp.freed };
            if let Some(info) = arn {
                self.stats.arns_sent += 1;
                obs.event(
                    now,
                    self.wiring.id,
                    SwitchEvent::ArnSent {
                        port: i as u8,
                        info,
                    },
                );
            }
            if !b.is_empty() {
                self.outbox.send_back(now, self.wiring.in_ch[i], b);
            }
            inp.freed.clear_credits();
            if inp.arn_out.is_empty() {
                self.in_pending &= !(1 << i);
            }
        }
    }
}
