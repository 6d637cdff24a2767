//! The fabric: switches and end nodes tied together by links, all on one clock.
//!
//! Every link direction (`crate::wire::link::Channel`) has at least one cycle of latency, so in
//! cycle `t` a switch only sees what its neighbours registered in `t - latency` or earlier: the order in
//! which switches and nodes are stepped within a cycle does not change any result. Each unit puts
//! what it sends into its outbox, written into the channels once all have stepped; so the units
//! of a cycle can step on several threads ([`Fabric::set_threads`], [`parallel`]) with the same
//! results. For the same reason each unit can step a window of up to `latency` cycles in a row
//! before anyone reads what it sent ([`Fabric::run`]): its registers stay in cache, and the
//! results are those of a cycle-by-cycle run, bit for bit.
//!
//! Invariants (checked after every window in debug builds, and by [`Fabric::check`] at any time):
//! - `flit_conservation`: flits injected = flits delivered + flits in buffers + flits on links;
//! - `credit_conservation`: per link direction and VC, the sender's credits + the receiver's
//!   buffered flits + flits on the link + credits on their way back = the VC's capacity;
//! - `in_order`: under deterministic routing, no packet of a (source, destination) flow overtakes
//!   an earlier one;
//! - `progress`: while flits are in the network, some packet starts or finishes a hop at least
//!   once every `watchdog_cycles` (longer than two packets, so that is "some flit moves");
//!   otherwise the run stops with a deadlock report naming the blocked ports and VCs.

pub mod node;
pub mod parallel;
pub mod subnet_manager;
pub mod topology;

use crate::switch::{Observer, Switch, SwitchEvent, SwitchParams, SwitchStats, SwitchWiring};
use crate::wire::Packet;
use crate::wire::link::{Arrivals, Channel, MAX_WINDOW, SharedChannels};
use node::{EndNode, Flow, NodeStats};
use parallel::{MAX_THREADS, Pool};
use std::fmt;
use std::ops::Range;
use std::sync::Mutex;
use topology::{Endpoint, Topology};

/// Parameters of a fabric beyond the switches'.
#[derive(Clone, Debug)]
pub struct FabricParams {
    /// Switch parameters (shared by all switches).
    pub switch: SwitchParams,
    /// Latency of every link, in cycles (at least 1).
    pub link_latency: u32,
    /// MTU in flits.
    pub mtu_flits: u16,
    /// Credits per VC of an end node's receive buffer.
    pub node_vc_capacity: u16,
    /// Seed of every random choice (traffic, oblivious routing).
    pub seed: u64,
    /// Cycles without any flit moving, with flits in the network, that count as a deadlock.
    pub watchdog_cycles: u64,
    /// Check per-flow packet order (meaningful under deterministic routing only).
    pub check_order: bool,
    /// End nodes consume the ARNs that reach them and, under ARN+AFI, inject matching packets
    /// into the AFC (see `node`).
    pub node_consumes_arns: bool,
}

/// A broken invariant: where and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Cycle in which it was seen.
    pub cycle: u64,
    /// Invariant name.
    pub invariant: &'static str,
    /// Where (switch, port, VC, link, node).
    pub place: String,
    /// What was seen.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cycle {}: invariant {} broken at {}: {}",
            self.cycle, self.invariant, self.place, self.detail
        )
    }
}

impl std::error::Error for Violation {}

/// Totals over the fabric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FabricTotals {
    /// Summed switch counters.
    pub switches: SwitchStats,
    /// Summed node counters.
    pub nodes: NodeStats,
}

/// What sits at the far end of a channel.
#[derive(Clone, Copy, Debug)]
enum Far {
    Switch { sw: u32, port: u16 },
    Node(u32),
}

/// One recorded value of a tapped signal: (cycle, signal index, value).
pub type Sample = (u64, u32, u128);

/// Chosen signals of switches and nodes, recorded by each unit after every cycle it steps, so that
/// a waveform dump keeps the speed of stepping in windows: the window's samples are then handed
/// on in cycle order (`Fabric::run_tapped`). Each signal belongs to one switch or one node. A tap
/// may record only the values that changed since it last recorded the signal, as long as it
/// records every signal in the first cycle it sees.
pub trait Tap: Sync {
    /// Number of signals; they are numbered from 0.
    fn signals(&self) -> usize;
    /// Whether switch `id` has signals here (a switch without any keeps skipping quiet windows).
    fn taps_switch(&self, id: u32) -> bool;
    /// Whether node `id` has signals here.
    fn taps_node(&self, id: u32) -> bool;
    /// Appends `(cycle, signal, value)` for the signals of switch `s` after it stepped `cycle`.
    fn switch_signals(&self, s: &Switch, cycle: u64, out: &mut Vec<Sample>);
    /// Appends `(cycle, signal, value)` for the signals of node `n` after it stepped `cycle`.
    fn node_signals(&self, n: &EndNode, cycle: u64, out: &mut Vec<Sample>);
}

/// What the switches and nodes of one part produced in a window, besides their outboxes.
#[derive(Default)]
struct PartLog {
    /// How much the progress count of the part's switches and nodes grew in the window.
    moved: u64,
    /// Tapped signals' values, unit by unit (each unit's in cycle order).
    samples: Vec<Sample>,
    /// Switch events, unit by unit (each unit's in cycle order).
    events: Vec<(u64, u32, SwitchEvent)>,
    /// (cycle, node, packet) for every packet whose tail reached a node, node by node.
    delivered: Vec<(u64, u32, Packet)>,
    /// The part's first fault as a cycle-by-cycle run meets them: earliest cycle, then lowest
    /// switch.
    fault: Option<(u64, u32, Violation)>,
}

impl PartLog {
    fn with_room(nodes: usize) -> Self {
        PartLog {
            moved: 0,
            events: Vec::with_capacity(1024 * MAX_WINDOW),
            delivered: Vec::with_capacity(nodes * MAX_WINDOW),
            samples: Vec::new(),
            fault: None,
        }
    }

    fn note_fault(&mut self, cycle: u64, sw: u32, v: Violation) {
        if self
            .fault
            .as_ref()
            .is_none_or(|&(c, s, _)| (cycle, sw) < (c, s))
        {
            self.fault = Some((cycle, sw, v));
        }
    }

    /// Steps switch `s` through the window `t0..t0 + w`, from an empty outbox,
    /// recording its signals when `u.tap` taps it; a fault ends its window. A switch that has
    /// nothing arriving, is not due and is not tapped is not visited at all ([`visits`]); it
    /// passes the cycles it missed when it is next visited (see [`Pace`]).
    fn step_switch(&mut self, s: &mut Switch, pace: &mut Pace, t0: u64, w: u64, u: Units<'_>) {
        let end = t0 + w;
        let tap = u.tap.filter(|_| pace.tapped);
        s.clear_outbox();
        if pace.next < t0 {
            s.skip_through(pace.next, t0 - 1);
        }
        let before = s.progress();
        for c in t0..end {
            if let Err(f) = s.step(c, u.channels, u.arrivals, &mut self.events) {
                self.note_fault(c, s.id(), switch_fault(c, s, f));
                break;
            }
            if let Some(tap) = tap {
                tap.switch_signals(s, c, &mut self.samples);
            }
        }
        pace.due = s.due_after(end - 1);
        pace.next = end;
        self.moved += s.progress() - before;
    }

    /// Steps node `n` through the window `t0..t0 + w`, from an empty outbox, as
    /// [`PartLog::step_switch`] does a switch.
    fn step_node(&mut self, n: &mut EndNode, pace: &mut Pace, t0: u64, w: u64, u: Units<'_>) {
        let end = t0 + w;
        let tap = u.tap.filter(|_| pace.tapped);
        n.clear_outbox();
        if pace.next < t0 {
            n.skip_to(t0 - 1);
        }
        let before = n.progress();
        for c in t0..end {
            if let Some(pkt) = n.step(c, u.channels, u.arrivals) {
                self.delivered.push((c, n.id(), pkt));
            }
            if let Some(tap) = tap {
                tap.node_signals(n, c, &mut self.samples);
            }
        }
        pace.due = n.due_after(end - 1);
        pace.next = end;
        self.moved += n.progress() - before;
    }
}

/// Whether unit `unit` has to be visited in the window `t0..t0 + w`: it is tapped, due, or
/// something arrives for it.
#[inline(always)]
fn visits(pace: &Pace, unit: u32, t0: u64, w: u64, arrivals: &Arrivals) -> bool {
    pace.tapped || pace.due < t0 + w || !arrivals.none_in(unit, t0, w)
}

/// When a switch or node next has to be visited, and how far it has stepped. A unit with nothing
/// arriving before `due` would change no register but for counting cycles down (the ARN table's
/// TTLs), so the fabric does not touch it until then; it passes the cycles it missed when next
/// visited, or when the fabric brings every unit up to date at the end of a run.
#[derive(Clone, Copy, Debug, Default)]
struct Pace {
    /// The first cycle the unit has to step if nothing arrives for it.
    due: u64,
    /// The first cycle the unit has not stepped or passed.
    next: u64,
    /// The unit has signals in the tap of the current [`Fabric::run_tapped`].
    tapped: bool,
}

/// What every unit reads while it steps a window: the channels, the arrival masks and the tap.
#[derive(Clone, Copy)]
struct Units<'a> {
    channels: &'a [Channel],
    arrivals: &'a Arrivals,
    tap: Option<&'a dyn Tap>,
}

/// Calls `f` on the entries of every log's `list` in the order a cycle-by-cycle run makes them:
/// by cycle, then part, then position (each part's list is unit by unit, each unit's in cycle
/// order). A window of one cycle is already in that order.
fn in_cycle_order<T>(
    logs: &[PartLog],
    list: impl Fn(&PartLog) -> &[(u64, u32, T)],
    cycles: Range<u64>,
    mut f: impl FnMut(&(u64, u32, T)) -> Result<(), Violation>,
) -> Result<(), Violation> {
    if cycles.end - cycles.start == 1 {
        return logs.iter().flat_map(&list).try_for_each(f);
    }
    for c in cycles {
        for l in logs {
            list(l).iter().filter(|e| e.0 == c).try_for_each(&mut f)?;
        }
    }
    Ok(())
}

/// Gathers the logs' samples of cycles `t0..upto` into `window`, sorted by cycle, then signal,
/// and empties the logs. The samples go into one bucket per cycle, keeping their order (each
/// log's are unit by unit, each unit's in cycle order); a cycle whose samples are not then in
/// signal order already is sorted. One sample per signal and cycle at most.
fn by_cycle_then_signal(logs: &mut [PartLog], t0: u64, upto: u64, window: &mut Vec<Sample>) {
    let mut starts = [0usize; MAX_WINDOW + 1];
    for log in logs.iter() {
        for s in log.samples.iter().filter(|s| s.0 < upto) {
            starts[(s.0 - t0) as usize + 1] += 1;
        }
    }
    for c in 1..starts.len() {
        starts[c] += starts[c - 1];
    }
    window.clear();
    window.resize(starts[MAX_WINDOW], (0, 0, 0));
    let mut at = starts;
    for log in logs.iter_mut() {
        for &s in log.samples.iter().filter(|s| s.0 < upto) {
            let i = &mut at[(s.0 - t0) as usize];
            window[*i] = s;
            *i += 1;
        }
        log.samples.clear();
    }
    for c in 0..(upto - t0) as usize {
        let cycle = &mut window[starts[c]..starts[c + 1]];
        if !cycle.is_sorted_by_key(|s| s.1) {
            cycle.sort_unstable_by_key(|s| s.1);
        }
    }
}

/// One part's switches and nodes, lent to a thread for one window.
struct PartRef<'a> {
    switches: &'a mut [Switch],
    nodes: &'a mut [EndNode],
    switch_pace: &'a mut [Pace],
    node_pace: &'a mut [Pace],
    /// Unit numbers of the first switch and the first node.
    first: (u32, u32),
    log: &'a mut PartLog,
}

/// A whole fabric.
pub struct Fabric {
    now: u64,
    params: FabricParams,
    channels: Vec<Channel>,
    /// Which delay lines hold something for each unit (switches, then nodes) in each cycle.
    arrivals: Arrivals,
    /// Per channel: sender and receiver.
    ends: Vec<(Far, Far)>,
    switches: Vec<Switch>,
    nodes: Vec<EndNode>,
    /// Per switch and per node: when it is next due, and how far it has stepped.
    switch_pace: Vec<Pace>,
    node_pace: Vec<Pace>,
    last_progress: u64,
    flits_moved: u64,
    order: Option<Vec<u32>>,
    /// Cycles every unit steps in a row before the sends are written (1 to the link latency).
    window: u64,
    /// Contiguous ranges of switches and of nodes, one pair per thread.
    parts: Vec<(Range<usize>, Range<usize>)>,
    logs: Vec<PartLog>,
    /// The samples of the window being handed on by [`Fabric::run_tapped`] (kept for its room).
    samples: Vec<Sample>,
    pool: Pool,
}

impl Fabric {
    /// Builds a fabric: cables, LFTs (D-mod-K on fat trees, minimal paths otherwise), switches
    /// and nodes with their flows (`flows[n]` for node `n`).
    pub fn build(
        topo: &Topology,
        params: FabricParams,
        flows: &[Vec<Flow>],
    ) -> Result<Self, String> {
        if flows.len() != topo.nodes as usize {
            return Err(format!(
                "traffic names {} nodes, the topology has {}",
                flows.len(),
                topo.nodes
            ));
        }
        let mut sp = params.switch.clone();
        let (lmc, tables) = if topo.xgft.is_some() {
            subnet_manager::program_fat_tree(topo)
        } else {
            subnet_manager::program_minimal(topo)?
        };
        sp.lmc = lmc;
        let mut channels = Vec::with_capacity(topo.links.len() * 2);
        let mut ends = Vec::with_capacity(topo.links.len() * 2);
        let ns = topo.switches.len();
        let mut in_ch = vec![vec![u32::MAX; 0]; ns];
        let mut out_ch = vec![vec![u32::MAX; 0]; ns];
        for (s, spec) in topo.switches.iter().enumerate() {
            in_ch[s] = vec![u32::MAX; spec.ports as usize];
            out_ch[s] = vec![u32::MAX; spec.ports as usize];
        }
        let mut node_ch = vec![(u32::MAX, u32::MAX); topo.nodes as usize];
        let far = |e: Endpoint| match e {
            Endpoint::Switch { sw, port } => Far::Switch { sw, port },
            Endpoint::Node(n) => Far::Node(n),
        };
        for &(a, b) in &topo.links {
            for (from, to) in [(a, b), (b, a)] {
                let c = channels.len() as u32;
                channels.push(Channel::new(params.link_latency));
                ends.push((far(from), far(to)));
                match from {
                    Endpoint::Switch { sw, port } => out_ch[sw as usize][port as usize] = c,
                    Endpoint::Node(n) => node_ch[n as usize].0 = c,
                }
                match to {
                    Endpoint::Switch { sw, port } => in_ch[sw as usize][port as usize] = c,
                    Endpoint::Node(n) => node_ch[n as usize].1 = c,
                }
            }
        }
        let mut switches = Vec::with_capacity(ns);
        for (s, (spec, lft)) in topo.switches.iter().zip(tables).enumerate() {
            if in_ch[s].contains(&u32::MAX) {
                return Err(format!("switch {s} has an uncabled port"));
            }
            let out_capacity = out_ch[s]
                .iter()
                .map(|&c| match ends[c as usize].1 {
                    Far::Node(_) => params.node_vc_capacity,
                    Far::Switch { .. } => sp.vc_capacity,
                })
                .collect();
            let wiring = SwitchWiring {
                id: s as u32,
                stage: spec.stage,
                up_ports: spec.up_ports,
                in_ch: in_ch[s].clone(),
                out_ch: out_ch[s].clone(),
                out_capacity,
            };
            switches.push(Switch::new(sp.clone(), wiring, lft, params.seed));
        }
        let nodes = (0..topo.nodes)
            .map(|n| {
                let (o, i) = node_ch[n as usize];
                if o == u32::MAX {
                    return Err(format!("node {n} is not cabled"));
                }
                let mut node = EndNode::new(
                    n,
                    topo.nodes,
                    o,
                    i,
                    &sp,
                    params.mtu_flits,
                    &flows[n as usize],
                    params.seed,
                    params.node_consumes_arns,
                );
                node.set_unit(ns as u32 + n);
                Ok(node)
            })
            .collect::<Result<Vec<_>, _>>()?;
        // Units: switches 0..ns, then nodes; each channel names who receives in each direction.
        let unit = |e: Far| match e {
            Far::Switch { sw, port } => (sw, port as u8),
            Far::Node(n) => (ns as u32 + n, 0),
        };
        for (c, &(from, to)) in ends.iter().enumerate() {
            channels[c].set_ends(unit(to), unit(from));
        }
        let arrivals = Arrivals::new(ns + topo.nodes as usize, params.link_latency);
        let order = params
            .check_order
            .then(|| vec![u32::MAX; (topo.nodes as usize).pow(2)]);
        let mut params = params;
        params.switch = sp;
        let window = longest_window(params.link_latency);
        let mut fabric = Fabric {
            now: 0,
            params,
            channels,
            arrivals,
            ends,
            switch_pace: vec![Pace::default(); switches.len()],
            node_pace: vec![Pace::default(); nodes.len()],
            switches,
            nodes,
            last_progress: 0,
            flits_moved: 0,
            order,
            window,
            parts: Vec::new(),
            logs: Vec::new(),
            samples: Vec::new(),
            pool: Pool::new(1),
        };
        fabric.set_threads(1);
        Ok(fabric)
    }

    /// Steps the fabric on `threads` threads from now on (1 to [`MAX_THREADS`]; more threads
    /// than switches are not used). Every output is the same for any number of threads.
    pub fn set_threads(&mut self, threads: usize) {
        let threads = threads
            .clamp(1, MAX_THREADS)
            .min(self.switches.len().max(1));
        // Switches split by ports (their work), nodes split evenly.
        let total: usize = self.switches.iter().map(|s| s.ports()).sum();
        let mut parts = Vec::with_capacity(threads);
        let (mut s0, mut acc) = (0, 0);
        let nn = self.nodes.len();
        for k in 0..threads {
            let mut s1 = s0;
            let goal = total * (k + 1) / threads;
            while s1 < self.switches.len() && (acc < goal || k + 1 == threads) {
                acc += self.switches[s1].ports();
                s1 += 1;
            }
            parts.push((s0..s1, nn * k / threads..nn * (k + 1) / threads));
            s0 = s1;
        }
        self.logs = (0..threads).map(|_| PartLog::with_room(nn)).collect();
        self.parts = parts;
        if self.pool.threads() != threads {
            self.pool = Pool::new(threads);
        }
    }

    /// Threads stepping the fabric.
    pub fn threads(&self) -> usize {
        self.parts.len()
    }

    /// The current cycle (the next one to be stepped).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// The switches.
    pub fn switches(&self) -> &[Switch] {
        &self.switches
    }

    /// The end nodes.
    pub fn nodes(&self) -> &[EndNode] {
        &self.nodes
    }

    /// Parameters as built (LMC filled in).
    pub fn params(&self) -> &FabricParams {
        &self.params
    }

    /// Summed counters.
    pub fn totals(&self) -> FabricTotals {
        let mut t = FabricTotals::default();
        for s in &self.switches {
            t.switches.accumulate(&s.stats());
        }
        for n in &self.nodes {
            t.nodes.accumulate(&n.stats());
        }
        t
    }

    /// Cycles every unit steps in a row before the sends are written (see [`Fabric::run`]).
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Sets the window, clamped to 1 ..= the link latency (and [`MAX_WINDOW`]). Every output is
    /// the same for any window; only the speed changes.
    pub fn set_window(&mut self, cycles: u64) {
        self.window = cycles.clamp(1, longest_window(self.params.link_latency));
    }

    /// Steps one cycle, reporting switch events to `obs`.
    pub fn step<O: Observer>(&mut self, obs: &mut O) -> Result<(), Violation> {
        let r = self.step_window(1, obs, None);
        self.catch_up(self.now);
        r
    }

    /// Runs `cycles` cycles, in windows of up to [`Fabric::window`] cycles.
    ///
    /// A flit or credit sent in cycle `t` is read from `t + latency` on, so every switch and node
    /// can step the cycles of a window one after the other (while its registers are in cache)
    /// before any of them writes what it sent: this gives the same channels, registers and
    /// outputs as stepping the whole fabric cycle by cycle.
    pub fn run<O: Observer>(&mut self, cycles: u64, obs: &mut O) -> Result<(), Violation> {
        let end = self.now + cycles;
        let mut r = Ok(());
        while self.now < end && r.is_ok() {
            r = self.step_window((end - self.now).min(self.window), obs, None);
        }
        // Every unit as of the last cycle stepped, for whoever reads them now.
        self.catch_up(self.now);
        r
    }

    /// [`Fabric::run`], recording `tap`'s signals after every cycle: after each window, `sink`
    /// gets the window's cycles and their samples sorted by cycle, then signal. On a fault, the
    /// faulting cycle and later are left out, as a cycle-by-cycle run stops before sampling the
    /// faulting cycle.
    pub fn run_tapped<O: Observer>(
        &mut self,
        cycles: u64,
        obs: &mut O,
        tap: &dyn Tap,
        sink: &mut dyn FnMut(Range<u64>, &[Sample]),
    ) -> Result<(), Violation> {
        let end = self.now + cycles;
        self.mark_tapped(Some(tap));
        let mut window = std::mem::take(&mut self.samples);
        while self.now < end {
            let (t0, w) = (self.now, (end - self.now).min(self.window));
            let r = self.step_window(w, obs, Some(tap));
            let upto = r
                .as_ref()
                .err()
                .map_or(t0 + w, |v| v.cycle.clamp(t0, t0 + w));
            by_cycle_then_signal(&mut self.logs, t0, upto, &mut window);
            sink(t0..upto, &window);
            if let Err(v) = r {
                self.samples = window;
                self.catch_up(self.now);
                self.mark_tapped(None);
                return Err(v);
            }
        }
        self.samples = window;
        self.catch_up(self.now);
        self.mark_tapped(None);
        Ok(())
    }

    /// Notes in every unit's [`Pace`] whether `tap` has signals of it.
    fn mark_tapped(&mut self, tap: Option<&dyn Tap>) {
        for (k, pace) in self.switch_pace.iter_mut().enumerate() {
            pace.tapped = tap.is_some_and(|t| t.taps_switch(k as u32));
        }
        for (k, pace) in self.node_pace.iter_mut().enumerate() {
            pace.tapped = tap.is_some_and(|t| t.taps_node(k as u32));
        }
    }

    /// Steps the `w` cycles from `now` on (`w` at most the link latency).
    ///
    /// Every switch and node first steps through the window reading the channels only (in
    /// parallel when the fabric has several threads); then their sends are written into the
    /// channels, and their events and delivered packets are handed on in the order of a
    /// cycle-by-cycle run: by cycle, then switch or node.
    fn step_window<O: Observer>(
        &mut self,
        w: u64,
        obs: &mut O,
        tap: Option<&dyn Tap>,
    ) -> Result<(), Violation> {
        debug_assert!(w >= 1 && w <= longest_window(self.params.link_latency));
        let t0 = self.now;
        let last = t0 + w - 1;
        self.step_parts(t0, w, tap);
        let fault = self
            .logs
            .iter_mut()
            .filter_map(|l| l.fault.take())
            .min_by_key(|&(c, s, _)| (c, s));
        let until = fault.as_ref().map_or(last, |f| f.0);
        in_cycle_order(
            &self.logs,
            |l| &l.events,
            t0..until + 1,
            |&(c, sw, ev)| {
                obs.event(c, sw, ev);
                Ok(())
            },
        )?;
        for log in &mut self.logs {
            log.events.clear();
        }
        if let Some((_, _, v)) = fault {
            return Err(v);
        }
        self.write_outboxes(t0 + w);
        if let Some(order) = self.order.as_mut() {
            let nodes = self.nodes.len();
            in_cycle_order(
                &self.logs,
                |l| &l.delivered,
                t0..last + 1,
                |&(c, n, pkt)| {
                    let flow = pkt.src as usize * nodes + n as usize;
                    let seq = pkt.id / nodes as u32;
                    let prev = order[flow];
                    if prev != u32::MAX && seq <= prev {
                        return Err(Violation {
                            cycle: c,
                            invariant: "in_order",
                            place: format!("node {n}"),
                            detail: format!(
                                "packet {} of flow {}->{n} arrived after a later one (seq {seq} after {prev})",
                                pkt.id, pkt.src
                            ),
                        });
                    }
                    order[flow] = seq;
                    Ok(())
                },
            )?;
        }
        for log in &mut self.logs {
            log.delivered.clear();
        }
        // Progress so far (a count that grows whenever a packet starts or finishes a hop);
        // `flits_moved` holds the count after the previous window.
        let grown: u64 = self.logs.iter().map(|l| l.moved).sum();
        debug_assert_eq!(self.flits_moved + grown, self.flits_moved_now());
        if grown != 0 {
            self.last_progress = last;
        }
        self.flits_moved += grown;
        if cfg!(debug_assertions) {
            self.catch_up(last + 1);
            self.check_after(last)?;
        } else if self.check_progress(last).is_err() {
            // Whether the fabric is stuck does not depend on units being up to date, but the
            // deadlock report reads every unit as of `last`: made again once they are.
            self.catch_up(last + 1);
            self.check_progress(last)?;
        }
        self.now += w;
        Ok(())
    }

    /// The second half of a window: every outbox is written into the channels, each part's on
    /// its thread.
    fn write_outboxes(&mut self, end: u64) {
        if self.parts.len() == 1 {
            // Written as each unit stepped (`step_parts`).
            return;
        }
        let (switches, nodes, parts) = (&self.switches[..], &self.nodes[..], &self.parts[..]);
        let (switch_pace, node_pace) = (&self.switch_pace[..], &self.node_pace[..]);
        let channels = SharedChannels::new(&mut self.channels);
        let arrivals = &self.arrivals;
        self.pool.broadcast(&|k| {
            let (srange, nrange) = &parts[k];
            // SAFETY: every channel direction has exactly one sender and one receiver (`build`
            // cables each port and node once); a switch or node queues flits only on the channels
            // it sends on and returns only on those it receives from, and each belongs to one
            // part. So no ring is written by two threads, and no one reads the channels until
            // `broadcast` returns, while `self.channels` stays mutably borrowed.
            // Units not visited in the window (not stepped through `end - 1`) sent nothing.
            unsafe {
                for (s, pace) in switches[srange.clone()]
                    .iter()
                    .zip(&switch_pace[srange.clone()])
                {
                    if pace.next == end {
                        s.outbox().write_shared(channels, arrivals);
                    }
                }
                for (n, pace) in nodes[nrange.clone()].iter().zip(&node_pace[nrange.clone()]) {
                    if pace.next == end {
                        n.outbox().write_shared(channels, arrivals);
                    }
                }
            }
        });
    }

    /// The first half of a window: every part's switches and nodes step through it on its
    /// thread, each unit through all `w` cycles before the next.
    fn step_parts(&mut self, t0: u64, w: u64, tap: Option<&dyn Tap>) {
        let node_base = self.switches.len() as u32;
        if self.parts.len() == 1 {
            // One thread: each unit's sends are written as soon as it has stepped the window,
            // while they are still in cache. This gives the same channels as writing them all
            // afterwards, since what is sent in the window is read from its first cycle plus the
            // latency on, after the window.
            let log = &mut self.logs[0];
            log.moved = 0;
            let channels = &mut self.channels;
            let arrivals = &self.arrivals;
            for (k, pace) in self.switch_pace.iter_mut().enumerate() {
                let unit = k as u32;
                if !visits(pace, unit, t0, w, arrivals) {
                    debug_assert!(self.switches[k].quiet_through(t0, t0 + w - 1) || pace.next < t0);
                    continue;
                }
                let u = Units {
                    channels: &channels[..],
                    arrivals,
                    tap,
                };
                let s = &mut self.switches[k];
                log.step_switch(s, pace, t0, w, u);
                s.outbox().write_into(channels, arrivals);
            }
            for (k, pace) in self.node_pace.iter_mut().enumerate() {
                let unit = node_base + k as u32;
                if !visits(pace, unit, t0, w, arrivals) {
                    debug_assert!(self.nodes[k].quiet_through(t0, t0 + w - 1) || pace.next < t0);
                    continue;
                }
                let u = Units {
                    channels: &channels[..],
                    arrivals,
                    tap,
                };
                let n = &mut self.nodes[k];
                log.step_node(n, pace, t0, w, u);
                n.outbox().write_into(channels, arrivals);
            }
            return;
        }
        let u = Units {
            channels: &self.channels[..],
            arrivals: &self.arrivals,
            tap,
        };
        let mut refs: heapless::Vec<Mutex<PartRef<'_>>, MAX_THREADS> = heapless::Vec::new();
        let (mut sw, mut nd, mut lg) = (
            &mut self.switches[..],
            &mut self.nodes[..],
            &mut self.logs[..],
        );
        let (mut sp, mut np) = (&mut self.switch_pace[..], &mut self.node_pace[..]);
        for (srange, nrange) in &self.parts {
            let (s, rest) = std::mem::take(&mut sw).split_at_mut(srange.len());
            sw = rest;
            let (n, rest) = std::mem::take(&mut nd).split_at_mut(nrange.len());
            nd = rest;
            let (spc, rest) = std::mem::take(&mut sp).split_at_mut(srange.len());
            sp = rest;
            let (npc, rest) = std::mem::take(&mut np).split_at_mut(nrange.len());
            np = rest;
            let (l, rest) = std::mem::take(&mut lg).split_at_mut(1);
            lg = rest;
            let part = PartRef {
                switches: s,
                nodes: n,
                switch_pace: spc,
                node_pace: npc,
                first: (srange.start as u32, node_base + nrange.start as u32),
                log: &mut l[0],
            };
            if refs.push(Mutex::new(part)).is_err() {
                unreachable!("at most MAX_THREADS parts");
            }
        }
        self.pool.broadcast(&|k| {
            let mut guard = refs[k].lock().unwrap_or_else(|e| e.into_inner());
            let part = &mut *guard;
            part.log.moved = 0;
            let (s0, n0) = part.first;
            for (j, pace) in part.switch_pace.iter_mut().enumerate() {
                let unit = s0 + j as u32;
                if visits(pace, unit, t0, w, u.arrivals) {
                    part.log.step_switch(&mut part.switches[j], pace, t0, w, u);
                }
            }
            for (j, pace) in part.node_pace.iter_mut().enumerate() {
                let unit = n0 + j as u32;
                if visits(pace, unit, t0, w, u.arrivals) {
                    part.log.step_node(&mut part.nodes[j], pace, t0, w, u);
                }
            }
        });
    }

    /// Brings every switch and node up to date through cycle `upto - 1`: those not visited
    /// since they were last due pass the cycles they missed (see [`Pace`]).
    fn catch_up(&mut self, upto: u64) {
        for (s, pace) in self.switches.iter_mut().zip(&mut self.switch_pace) {
            if pace.next < upto {
                s.skip_through(pace.next, upto - 1);
                pace.next = upto;
            }
        }
        for (n, pace) in self.nodes.iter_mut().zip(&mut self.node_pace) {
            if pace.next < upto {
                n.skip_to(upto - 1);
                pace.next = upto;
            }
        }
    }

    fn flits_moved_now(&self) -> u64 {
        self.switches.iter().map(|s| s.progress()).sum::<u64>()
            + self.nodes.iter().map(|n| n.progress()).sum::<u64>()
    }

    /// Checks every invariant on the state after the last stepped cycle.
    pub fn check(&self) -> Result<(), Violation> {
        self.check_after(self.now.saturating_sub(1))
    }

    fn check_after(&self, now: u64) -> Result<(), Violation> {
        let t = self.totals();
        let buffered: u64 = self
            .switches
            .iter()
            .map(|s| {
                (0..s.wiring().in_ch.len())
                    .map(|p| s.buffered_flits(p) as u64)
                    .sum::<u64>()
            })
            .sum();
        let vcs = self.params.switch.vcs();
        let on_links: u64 = (0..self.channels.len())
            .map(|c| (0..vcs).map(|v| self.flits_on_link(c, v)).sum::<u64>())
            .sum();
        if t.nodes.injected_flits != t.nodes.delivered_flits + buffered + on_links {
            return Err(Violation {
                cycle: now,
                invariant: "flit_conservation",
                place: "fabric".into(),
                detail: format!(
                    "injected {} != delivered {} + buffered {} + on links {}",
                    t.nodes.injected_flits, t.nodes.delivered_flits, buffered, on_links
                ),
            });
        }
        for (c, ch) in self.channels.iter().enumerate() {
            let (from, to) = self.ends[c];
            for v in 0..vcs {
                let (credits, returning) = match from {
                    Far::Switch { sw, port } => {
                        let s = &self.switches[sw as usize];
                        (
                            s.credits(port as usize, v),
                            s.credits_returning(port as usize, v),
                        )
                    }
                    Far::Node(n) => {
                        let n = &self.nodes[n as usize];
                        (n.credits(v), n.credits_returning(v))
                    }
                };
                let (buffered, cap, announced) = match to {
                    Far::Switch { sw, port } => {
                        let s = &self.switches[sw as usize];
                        let b = s.input_buffer(port as usize);
                        (
                            s.buffered(port as usize, v),
                            b.capacity(v),
                            s.credits_announced(port as usize, v),
                        )
                    }
                    Far::Node(n) => (
                        0,
                        self.params.node_vc_capacity,
                        self.nodes[n as usize].credits_announced(v),
                    ),
                };
                let in_flight = self.flits_on_link(c, v);
                // Credits freed and not yet counted: the streams started (on the link or arrived
                // at the near end), less the flits of those streams not yet freed at the far end.
                let back = (ch.credits_in_flight(now + 1, v) + returning)
                    .checked_sub(announced)
                    .unwrap_or(u64::MAX / 2);
                let sum = credits as u64 + buffered as u64 + in_flight + back;
                if sum != cap as u64 {
                    return Err(Violation {
                        cycle: now,
                        invariant: "credit_conservation",
                        place: match from {
                            Far::Switch { sw, port } => {
                                format!("switch {sw} output {port}, VC {v}")
                            }
                            Far::Node(n) => format!("node {n} output, VC {v}"),
                        },
                        detail: format!(
                            "credits {credits} + buffered {buffered} + flits on link {in_flight} + credits returning {back} = {sum}, capacity {cap}"
                        ),
                    });
                }
            }
        }
        self.check_progress(now)
    }

    /// Flits on channel `c`'s link on VC `vc` (of the receiving buffer): sent by its near end
    /// and not yet received by its far end. Only heads travel in the delay lines, so the two ends'
    /// counts are what says how many flits the link holds.
    fn flits_on_link(&self, c: usize, vc: usize) -> u64 {
        let (from, to) = self.ends[c];
        let sent = match from {
            Far::Switch { sw, port } => self.switches[sw as usize].flits_sent(port as usize, vc),
            Far::Node(n) => self.nodes[n as usize].flits_sent(vc),
        };
        let received = match to {
            Far::Switch { sw, port } => {
                self.switches[sw as usize].flits_received(port as usize, vc)
            }
            Far::Node(n) => self.nodes[n as usize].flits_received(vc),
        };
        sent.wrapping_sub(received)
    }

    fn check_progress(&self, now: u64) -> Result<(), Violation> {
        if now - self.last_progress < self.params.watchdog_cycles {
            return Ok(());
        }
        let stuck =
            self.switches.iter().any(|s| !s.is_idle()) || self.nodes.iter().any(|n| n.is_busy());
        if !stuck {
            return Ok(());
        }
        let mut blocked = Vec::new();
        for s in &self.switches {
            for p in 0..s.wiring().in_ch.len() {
                let b = s.input_buffer(p);
                for v in 0..b.vcs() {
                    if s.buffered(p, v) > 0 {
                        blocked.push(format!(
                            "switch {} input {p} VC {v} ({} flits)",
                            s.id(),
                            s.buffered(p, v)
                        ));
                    }
                }
            }
        }
        blocked.truncate(32);
        Err(Violation {
            cycle: now,
            invariant: "progress",
            place: "fabric".into(),
            detail: format!(
                "no packet started or finished a hop for {} cycles (deadlock); blocked: {}",
                now - self.last_progress,
                blocked.join("; ")
            ),
        })
    }
}

/// The longest window links of `latency` cycles allow (and [`MAX_WINDOW`]).
fn longest_window(latency: u32) -> u64 {
    (latency.max(1) as u64).min(MAX_WINDOW as u64)
}

fn switch_fault(now: u64, s: &Switch, f: crate::switch::SwitchFault) -> Violation {
    Violation {
        cycle: now,
        invariant: "switch",
        place: format!("switch {} port {}", s.id(), f.port),
        detail: f.what,
    }
}

#[cfg(test)]
mod arn_cases;
#[cfg(test)]
mod tests;
