//! The event engine: the fabric stepped from a calendar of events, so that a switch port or an
//! end node is touched only in the cycles something happens at it: a head reaching an input (its
//! routing stage runs in the cycle after), an output's tail or first cycle it may grant a waiting
//! packet (a grant also files what the packet's head does when it leaves in the next cycle), a
//! credit stream starting or stopping at an output, an end node's step, and under ARN routing an
//! ARN reaching an output and a congestion detector's evaluation.
//!
//! It models the switch of the cycle engine (`src/cycle/`, `docs/switch.md`): input buffers with
//! a FIFO per (VC, output), the routing stage one cycle after the head, two-level round-robin
//! arbitration (input, then VC) under virtual cut-through in the cycle a packet's tail leaves or
//! any cycle the output is idle, one flit per cycle, credit counters per output and VC in closed
//! form ([`OutputCredits`], the same block), FA's escape queues (an adaptive head short of room
//! leaves for its escape route at the arbitration), and under ARN routing the congestion
//! detectors, ARN tables and ARNs (`event/detection.rs`, `event/arn.rs`, the same blocks); and it
//! steps the same end nodes ([`EndNode`](super::node::EndNode), through their links' delay
//! lines). Every routing mode and queuing scheme on every fabric; a deadlock is found by the
//! watchdog (`event/watchdog.rs`), dumped switches are read in closed form (`event/view.rs`) and
//! recorded ones through their link records (`event/record.rs`). Its outputs are the cycle
//! engine's byte for byte, on any number of threads (`event/parts.rs`: the
//! switches dealt out to parts that exchange events once per link latency plus a cycle), and
//! each switch is held to its cycle-engine twin cycle by cycle (`cycle/tests.rs`). Switch links
//! carry 12-byte events instead of delay lines; the routing stage reads the LFT of the fabric's
//! switches.

mod arn;
mod build;
mod calendar;
mod checks;
mod crossing;
mod detection;
mod env;
mod flow;
mod input_port_ctrl;
mod nodes;
mod output_port;
mod parts;
mod qcn;
mod record;
mod record_words;
mod routing_stage;
mod sampler;
mod snoop;
#[cfg(test)]
mod tests;
mod view;
mod watchdog;

use super::{Fabric, Far, Sample, Tap, Violation, Wing};
use crate::blocks::lft_banks::NO_ROUTE;
use crate::blocks::rng::SplitMix64;
use crate::blocks::rr_arbiter::RrArbiter;
use crate::switch::output_credits::OutputCredits;
use crate::switch::{RoutingMode, SwitchStats};
use crate::wire::Packet;
use crate::wire::link::{Arriving, Backward, Flit, LinkSend};
use calendar::{Calendar, Ev, Kind};
use crossing::Crossing;
use env::Env;
use input_port_ctrl::Voq;
use nodes::NodeSteps;
pub(super) use parts::EventEngine;
pub use parts::Exchanged;
pub(super) use record::PortRecords;
use watchdog::Halt;

/// No slot, no port.
const NIL: u32 = u32::MAX;

/// Whether the end node of `steps` belongs to part `part`: that of the switch port it is cabled
/// to (`owner`: per flat port, its part), or the first part for a node cabled to a node.
#[inline]
fn node_of_part(steps: &NodeSteps, owner: &[u8], part: u8) -> bool {
    match steps.port {
        NIL => part == 0,
        p => owner[p as usize] == part,
    }
}

/// A packet in a switch's input buffer (or on its way to one).
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Slot {
    /// As stored (its `vc` is the VC of this buffer).
    pkt: Packet,
    /// First cycle it may request its output: the cycle after the clock edge it joined its VOQ
    /// FIFO at, which is also its FCFS stamp (the hardware's, taken then), so the two must not
    /// part.
    ready: u64,
    /// The next slot of its VOQ FIFO (or of the free list).
    next: u32,
    /// Its VC in the next buffer.
    next_vc: u8,
    /// FA: routed to an adaptive option, the credits its next VC keeps for the escape half
    /// (0 otherwise), and its escape route (option 0).
    reserve: u16,
    escape: u8,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 40);

/// The packet an output sends: one flit per cycle from `start` (its head).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct Tx {
    input: u32,
    slot: u32,
    len: u16,
    /// Its VC in this buffer and in the next.
    vc: u8,
    next_vc: u8,
    start: u64,
    /// Its head leaves with FECN (`blocks::fecn_marker`).
    fecn: bool,
}

impl Tx {
    fn end(&self) -> u64 {
        self.start + self.len as u64 - 1
    }
}

/// One switch output port.
#[derive(serde::Serialize, serde::Deserialize)]
struct OutPort<const V: usize> {
    credits: OutputCredits<V>,
    in_arb: RrArbiter,
    tx: Option<Tx>,
    /// Inputs (of its switch) with a packet routed to it.
    waiting: u64,
    /// The cycle it is next visited (`u64::MAX`: when something wakes it).
    wake: u64,
    /// The last cycle it was visited.
    last: u64,
    /// FECN marking's counter (`blocks::fecn_marker`).
    mark_count: u16,
}

/// Where a flat port is: its switch, its index there, and its switch's port count.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Place {
    switch: u32,
    port: u16,
    ports: u16,
}

/// The packet arriving at a switch input: its first cycle, its length (0 before the first) and
/// its VC.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Arrival {
    start: u64,
    /// Its slot, while its routing stage is due.
    slot: u32,
    len: u16,
    vc: u8,
    /// The output whose VOQ holds it (`NO_ROUTE` before its routing stage; FA's escape route
    /// once it joined its queue).
    out: u8,
}

/// A flat port as its input works: where the port is, the far end of its input link, the packet
/// arriving and, under ARN, its deterministic port as read at its arrival (32 bytes, what a head
/// reads and writes on arriving and being routed, together).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct InPort {
    arrival: Arrival,
    place: Place,
    up: PeerCode,
    det: u8,
}

const _: () = assert!(std::mem::size_of::<InPort>() == 32);

/// Where a port leads: the flat index of the port at the far end of its link, or an end node.
#[derive(Clone, Copy, Debug)]
enum Peer {
    Port(u32),
    Node(u32),
}

/// A [`Peer`] in four bytes, with the part that steps it: an end node's index or a flat port's
/// in the low 24 bits, the part in the next 7, the top bit set for a node.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct PeerCode(u32);

impl PeerCode {
    const NODE: u32 = 1 << 31;
    const INDEX: u32 = (1 << 24) - 1;
    /// Parts a code can name.
    pub(super) const PARTS: usize = crate::fabric::ranks::MOST_PARTS;

    fn new(p: Peer, part: usize) -> Self {
        let part = (part as u32) << 24;
        match p {
            Peer::Port(k) => PeerCode(k | part),
            Peer::Node(n) => PeerCode(n | part | Self::NODE),
        }
    }

    #[inline(always)]
    fn peer(self) -> Peer {
        if self.0 & Self::NODE != 0 {
            Peer::Node(self.0 & Self::INDEX)
        } else {
            Peer::Port(self.0 & Self::INDEX)
        }
    }

    /// The part that steps the peer.
    #[inline(always)]
    fn part(self) -> u8 {
        ((self.0 >> 24) & 0x7f) as u8
    }
}

/// One part of the fabric's switches, ports and links as the event engine steps them (all of
/// them on one thread): its own ports' state, the others' left empty.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct EventCore<const V: usize> {
    cal: Calendar,
    latency: u64,
    vcs: usize,
    /// FA: adaptive heads short of room leave for their escape routes.
    escape_queues: bool,
    /// Per flat port: its input, and the far end of its output link.
    ins: Vec<InPort>,
    down: Vec<PeerCode>,
    outputs: Vec<OutPort<V>>,
    /// Per switch: the flat index of its port 0.
    first: Vec<u32>,
    /// Detectors, ARN tables and ARNs, under ARN routing.
    arn: Option<Box<arn::ArnState>>,
    /// Per flat port: its row among this part's outputs (`NIL` for another part's), the row of
    /// its VC pointers and VOQs.
    out_row: Vec<u32>,
    /// VC-level round-robin pointers: per output of this part, per input of its switch.
    vc_ptr: Vec<u8>,
    /// VOQ FIFOs: per output of this part, per input of its switch, per VC (an output's side
    /// by side for its arbitration).
    voqs: Vec<Voq>,
    /// The widest switch's port count (the stride of `vc_ptr` and the VOQs).
    stride: usize,
    /// The routing stage: per switch, its random stream and the inputs whose heads it routes
    /// in the next cycle; per cycle parity, the switches (by their first flat port) with heads
    /// to route.
    rngs: Vec<SplitMix64>,
    route_heads: Vec<u64>,
    routes_due: [Vec<u32>; 2],
    slots: Vec<Slot>,
    free: u32,
    /// Per flat input and VC: flits of the packets whose tails have arrived, and of those whose
    /// tails have left.
    got: Vec<u64>,
    gone: Vec<u64>,
    stats: SwitchStats,
    /// Per node: its steps, the switch port it is cabled to and what its link brings it
    /// (`event/nodes.rs`).
    node_steps: Vec<NodeSteps>,
    /// Per cycle parity, per node: the credit record its switch input sends back in that cycle
    /// (the cycle being processed, or the next one: a grant starts its packet's stream then),
    /// and the nodes that have one.
    node_back: [Vec<Backward<V>>; 2],
    backs_due: [Vec<u32>; 2],
    /// This part, and per flat port the part that steps it (its switch's); a node belongs to
    /// the part of the port it is cabled to.
    part: u8,
    owner: Vec<u8>,
    /// Per part: the events this part files for the other's ports in the window being stepped.
    outbox: Vec<Vec<Crossing>>,
    /// How this part's last run on several threads stopped early, if it did.
    #[serde(skip)]
    halt: Option<Halt>,
    /// The last cycle a packet's head or tail left one of this part's outputs or nodes, and
    /// the cycle the head of the packet granted last leaves (`watchdog.rs`).
    last_progress: u64,
    head_progress: u64,
    /// The values of dumped signals this part's switches and nodes recorded in the run being
    /// stepped (`sampler.rs`, `view.rs`).
    #[serde(skip)]
    samples: Vec<Sample>,
    /// The link records of the switch being recorded, if this part steps it (`record.rs`).
    #[serde(skip)]
    rec: Option<Box<record::LinkLog<V>>>,
    /// The cycle the first congestion root of this part's switches was detected in, and the
    /// lowest of the switches that detected one then (`u64::MAX`: none yet).
    first_root: (u64, u32),
    /// FA: the heads that left for their escape routes in this cycle, (flat output they left,
    /// flat escape output, input, VC, slot), joined to their new queues at the cycle's end in
    /// output, input and VC order, as at the cycle engine's clock edge.
    escapes_due: Vec<(u32, u32, u16, u16, u32)>,
    /// FECN marking: the packets routed in this cycle or, under D-mod-K, at their heads'
    /// arrival for the next one, (routing cycle, flat output, flits): the outputs' queues count
    /// them from the cycle after their routing (`output_port::queued_for`).
    routed_now: Vec<(u64, u32, u16)>,
    /// QCN's congestion points and notification lanes, when on (`event/qcn.rs`).
    qcn: Option<Box<qcn::QcnState>>,
    /// Snooped AR's congestion tables, when on (`event/snoop.rs`).
    snoops: Option<Box<snoop::SnoopState>>,
    /// Flow routing's route caches and flow counts, under flow routing (`event/flow.rs`).
    #[serde(default)]
    flows: Option<Box<flow::FlowState>>,
}

impl<const V: usize> EventCore<V> {
    /// Whether node `n` belongs to this part.
    #[inline]
    fn owns_node(&self, n: u32) -> bool {
        node_of_part(&self.node_steps[n as usize], &self.owner, self.part)
    }

    /// Files `ev` for cycle `at` with part `to`, which owns its unit: in this part's calendar,
    /// or in the outbox to that part (`pkt`: the packet of a head).
    #[inline(always)]
    fn file(&mut self, to: u8, at: u64, ev: Ev, pkt: Option<Packet>) {
        if to == self.part {
            let mut ev = ev;
            if let Some(p) = pkt {
                ev.arg = self.alloc(p);
            }
            self.cal.push(at, ev);
        } else {
            self.outbox[to as usize].push(Crossing {
                at,
                ev,
                pkt: pkt.unwrap_or_default(),
                arn: Default::default(),
            });
        }
    }

    /// Takes in the events another part filed for this one's ports.
    fn take_in(&mut self, crossings: &mut Vec<Crossing>) {
        for c in crossings.drain(..) {
            if c.ev.kind == Kind::Arn {
                self.file_arn(c.at, c.ev.unit, c.arn);
                continue;
            }
            let pkt = (c.ev.kind == Kind::Head).then_some(c.pkt);
            self.file(self.part, c.at, c.ev, pkt);
        }
    }

    /// Counters of all switches together, as of the end of cycle `last`.
    pub(super) fn stats(&self, last: u64) -> SwitchStats {
        let mut s = self.stats;
        // A packet granted in `last` is counted when granted; its head leaves in `last + 1`.
        s.packets_sent -= self
            .outputs
            .iter()
            .filter(|o| o.tx.is_some_and(|t| t.start > last))
            .count() as u64;
        s.flits_sent += self
            .outputs
            .iter()
            .filter_map(|o| o.tx)
            .map(|t| crate::wire::link::streamed(t.start, t.len, last) as u64)
            .sum::<u64>();
        // An ARN decided as its head arrived in `last` leaves in `last + 1`.
        if let Some(arn) = &self.arn {
            s.arns_sent -= arn.sent_after(last);
        }
        s
    }

    /// A free slot holding `pkt`.
    #[inline]
    fn alloc(&mut self, pkt: Packet) -> u32 {
        let slot = Slot {
            pkt,
            ready: 0,
            next: NIL,
            next_vc: 0,
            reserve: 0,
            escape: 0,
        };
        if self.free == NIL {
            self.slots.push(slot);
            (self.slots.len() - 1) as u32
        } else {
            let k = self.free;
            self.free = self.slots[k as usize].next;
            self.slots[k as usize] = slot;
            k
        }
    }

    #[inline]
    fn release(&mut self, k: u32) {
        self.slots[k as usize].next = self.free;
        self.free = k;
    }
}

impl<const V: usize> EventCore<V> {
    /// One part alone steps cycles `from..end`, passing the cycles with nothing to do, the
    /// watchdog looking at the end of its look cycles (`watchdog.rs`).
    fn run(
        &mut self,
        env: &Env<V>,
        (from, end): (u64, u64),
        tap: Option<&dyn Tap<V>>,
    ) -> Result<(), Halt> {
        let watch = env.params.watchdog_cycles;
        let mut tapped = tap.map(|t| (t, self.tapped(env, t, from)));
        // The first cycle at whose end the watchdog has not looked yet.
        let mut look_from = from;
        let mut now = from;
        loop {
            // A cycle with no event but credit records to send (a grant in the cycle before
            // started a stream in it) is not skipped.
            let next = self.next_cycle(now, end);
            if let Some((tap, sampler)) = &mut tapped {
                self.sample(env, *tap, sampler, now..next);
            }
            // Nothing changes from the cycle before `next` to it: the first look in between
            // sees what the others would.
            let progress = self.progress_through(now);
            if let Some(c) = watchdog::first_look(look_from, next, progress, watch)
                && self.stuck(env, c)
            {
                return Err(Halt::Deadlock(c));
            }
            look_from = next;
            if next >= end {
                return Ok(());
            }
            self.cycle(env, next)?;
            if let Some((tap, sampler)) = &mut tapped {
                self.sample(env, *tap, sampler, next..next + 1);
            }
            now = next + 1;
        }
    }

    /// Whether cycle `now` has something to do.
    #[inline]
    fn busy(&self, now: u64) -> bool {
        self.cal.due(now)
            || self.routes_due(now)
            || !self.backs_due[(now & 1) as usize].is_empty()
            || self.arn.as_ref().is_some_and(|a| a.busy())
            || self.qcn.as_ref().is_some_and(|q| q.busy(now))
    }

    /// Steps cycle `now`: under ARN routing the detectors and the ARNs arriving; the routing
    /// stages; its events; then the credit records the inputs facing nodes send.
    fn cycle(&mut self, env: &Env<V>, now: u64) -> Result<(), Violation> {
        let list = self.cal.take(now);
        if self.arn.is_some() {
            self.detect(env, &list, now);
            self.take_arns(&list, now);
            self.process_cmds(env, now);
        }
        self.route_stage(env, now)?;
        self.notify(env, &list, now);
        for ev in &list {
            match ev.kind {
                Kind::Head => self.head_arrives(env, ev.unit, ev.arg, now)?,
                Kind::Output => self.visit_output(env, ev.unit, now),
                Kind::CreditsStart | Kind::CreditsStop => self.credits_arrive(ev, now)?,
                Kind::Node => self.step_node(env, ev.unit, now)?,
                Kind::CnmOut => self.cnm_leaves(ev, now),
                Kind::Arn | Kind::Detect | Kind::Cnm => {}
            }
        }
        self.cal.give_back(now, list);
        if !self.escapes_due.is_empty() {
            self.join_escapes(now);
        }
        self.send_node_backs(env, now);
        Ok(())
    }
}

/// Where a dumping run hands the samples of the cycles it stepped, by cycle, then signal.
pub(super) type SampleSink<'a> = dyn FnMut(std::ops::Range<u64>, &[Sample]) + 'a;

impl<const V: usize> Fabric<V> {
    /// [`Fabric::run`] on the event engine.
    pub(super) fn run_events(
        &mut self,
        cycles: u64,
        tap: Option<(&dyn Tap<V>, &mut SampleSink<'_>)>,
    ) -> Result<(), Violation> {
        let (from, end) = (self.now, self.now + cycles);
        // Lent out of the fabric while it steps what the fabric holds besides.
        let mut engine = match std::mem::replace(&mut self.wing, Wing::Cycle(Vec::new())) {
            Wing::Event(e) => e,
            cycle => {
                self.wing = cycle;
                return Ok(());
            }
        };
        let (reached, r) = {
            let (env, pool) = Env::new(self);
            engine.run(&env, pool, (from, end), tap.as_ref().map(|t| t.0))
        };
        if !self.recorders.is_empty() {
            self.capture_records(&mut engine, (from, reached));
        }
        if let Some((_, sink)) = tap {
            // A stop leaves out the cycle it names and the later ones, as a cycle-by-cycle
            // run stops before sampling the cycle it fails in.
            let upto = r.as_ref().err().map_or(end, |v| v.cycle.clamp(from, end));
            let samples = engine.samples(upto);
            sink(from..upto, samples);
        }
        // Every node (of this rank) as of the last cycle stepped.
        for n in 0..self.nodes.len() {
            if !engine.owns_node(n) {
                continue;
            }
            let last = engine.node_last(n);
            if last == u64::MAX || last < reached - 1 {
                self.nodes[n].skip_to(reached - 1);
            }
        }
        self.wing = Wing::Event(engine);
        self.now = reached;
        r
    }
}
