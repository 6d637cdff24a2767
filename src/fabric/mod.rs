//! The fabric: switches and end nodes tied together by links, all on one clock.
//!
//! Every link direction (`crate::wire::link::Channel`) has at least one cycle of latency, so in
//! cycle `t` a switch only sees what its neighbours registered in `t - latency` or earlier: the order in
//! which switches and nodes are stepped within a cycle does not change any result. What a unit
//! sends goes into its outbox, which the scheduler ([`scheduler`]) writes into the channels once
//! all have stepped; so the units of a cycle can step on several threads ([`Fabric::set_threads`], [`parallel`]) with the same
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
//!   otherwise the run stops with a deadlock report naming the blocked ports and VCs. The
//!   watchdog looks at the end of every [`invariants::WATCH_EVERY`]-th cycle, whatever steps
//!   the fabric, so that every engine reports a deadlock in the same cycle.

pub mod event;
pub mod flow_routes;
pub mod invariants;
mod layout;
pub mod node;
pub mod parallel;
mod params;
mod phase;
pub mod ranks;
pub mod record;
mod resume;
pub mod scheduler;
pub mod subnet_manager;
pub mod switch_rig;
pub mod switch_unit;
mod tap;
pub mod topology;

use crate::switch::{Observer, QueuingScheme, SlToVl, SwitchEvent, SwitchWiring};
use crate::wire::Packet;
use crate::wire::link::Channel;
pub use crate::wire::link::lanes_for;
pub use invariants::Violation;
use node::{EndNode, Flow, NodeStats};
use parallel::{MAX_THREADS, Pool};
pub use params::{FabricParams, FabricTotals};
use scheduler::{Arrivals, Outbox, Pace, PartLog, by_cycle_then_signal, longest_window};
use std::ops::Range;
use std::sync::Mutex;
pub use switch_unit::{CycleUnit, Engine, SwitchSetup};
pub use tap::{Sample, SwitchValue, Tap, UNRECORDED, ViewSignal, probe_value};
use topology::{Endpoint, Topology};

/// Evaluates `$body` with the constant `$v` set to the VC lanes of a fabric whose ports have
/// `$vcs` VCs ([`lanes_for`]): where a run chooses, once, which instance of the fabric's types
/// it steps (`with_lanes!(vcs, |V| Fabric::<V>::build(..)..)`).
#[macro_export]
macro_rules! with_lanes {
    ($vcs:expr, |$v:ident| $body:expr) => {
        match $crate::wire::link::lanes_for($vcs) {
            $crate::wire::link::FEW_VCS => {
                const $v: usize = $crate::wire::link::FEW_VCS;
                $body
            }
            _ => {
                const $v: usize = $crate::wire::link::MAX_VCS;
                $body
            }
        }
    };
}

/// What sits at the far end of a channel.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
enum Far {
    Switch { sw: u32, port: u16 },
    Node(u32),
}

/// A whole fabric, its links, switches and nodes sized for `V` VC lanes (4 or 16, see
/// [`crate::wire::link::FEW_VCS`]; [`lanes_for`] chooses them from the ports' VC count). The
/// outputs do not depend on `V`, only the speed does.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Fabric<const V: usize> {
    now: u64,
    params: FabricParams,
    channels: Vec<Channel<V>>,
    /// Which delay lines hold something for each unit (switches, then nodes) in each cycle.
    arrivals: Arrivals,
    /// Per channel: sender and receiver.
    ends: Vec<(Far, Far)>,
    /// What each switch is built from (both engines read it).
    switches: Vec<SwitchSetup>,
    nodes: Vec<EndNode<V>>,
    /// The engine stepping the switches.
    wing: Wing<V>,
    /// Per switch and per node: when it is next due, and how far it has stepped.
    switch_pace: Vec<Pace>,
    node_pace: Vec<Pace>,
    /// Per switch and per node: what it sent in the window being stepped.
    #[serde(skip)]
    switch_out: Vec<Outbox<V>>,
    #[serde(skip)]
    node_out: Vec<Outbox<V>>,
    last_progress: u64,
    flits_moved: u64,
    order: Option<Vec<u32>>,
    /// Cycles every unit steps in a row before the sends are written (1 to the link latency).
    window: u64,
    /// Contiguous ranges of switches and of nodes, one pair per thread.
    parts: Vec<(Range<usize>, Range<usize>)>,
    #[serde(skip)]
    logs: Vec<PartLog>,
    /// The samples of the window being handed on by [`Fabric::run_tapped`] (kept for its room).
    #[serde(skip)]
    samples: Vec<Sample>,
    /// Per switch, its recorder during [`Fabric::run_recorded`] (empty otherwise).
    #[serde(skip)]
    recorders: Vec<Option<Box<record::SwitchRecorder<V>>>>,
    /// Threads asked for by [`Fabric::set_threads`].
    threads: usize,
    #[serde(skip)]
    pool: Pool,
    /// The ranks it is split over (`ranks.rs`; `None`: one process).
    #[serde(skip)]
    ranks: Option<std::sync::Arc<dyn ranks::Ranks>>,
}

/// What steps a fabric's switches, behind the same calls of [`Fabric`]: the cycle engine's
/// switches, each stepped every cycle by the scheduler ([`scheduler`]) with the end nodes, or the
/// event engine, which steps the switches and the end nodes itself ([`event`]).
#[derive(serde::Serialize, serde::Deserialize)]
enum Wing<const V: usize> {
    Event(Box<event::EventEngine<V>>),
    Cycle(Vec<CycleUnit<V>>),
}

impl<const V: usize> Fabric<V> {
    /// Builds a fabric: cables, LFTs (by the routing engine of `params`), switches
    /// and nodes with their flows (`flows[n]` for node `n`), stepped on the default engine and
    /// one thread. Refused when the ports have more VCs than `V` lanes.
    pub fn build(
        topo: &Topology,
        params: FabricParams,
        flows: &[Vec<Flow>],
    ) -> Result<Self, String> {
        Self::build_on(topo, params, flows, Engine::default(), 1, None)
    }

    /// [`Fabric::build`], stepped on engine `on` and `threads` threads and, with `ranks`, split
    /// over those MPI ranks (this process being one of them; `ranks.rs`): the engine is laid out
    /// once, for them, so that a process holds only what it steps.
    pub fn build_on(
        topo: &Topology,
        params: FabricParams,
        flows: &[Vec<Flow>],
        on: Engine,
        threads: usize,
        ranks: Option<std::sync::Arc<dyn ranks::Ranks>>,
    ) -> Result<Self, String> {
        let vcs = params.switch.vcs();
        if vcs > V {
            return Err(format!(
                "{vcs} VCs per port, more than the fabric's {V} VC lanes"
            ));
        }
        if flows.len() != topo.nodes as usize {
            return Err(format!(
                "traffic names {} nodes, the topology has {}",
                flows.len(),
                topo.nodes
            ));
        }
        let mut sp = params.switch.clone();
        let engine = params
            .routing_engine
            .unwrap_or_else(|| subnet_manager::RoutingEngine::default_for(topo));
        let subnet_manager::Routing {
            lmc,
            tables,
            sls,
            sl_to_vl,
        } = subnet_manager::program_with(topo, engine, &params.routing_phases)?;
        sp.lmc = lmc;
        if let Some(vls) = sls.as_ref().map(|s| s.vls()).or(engine.vls())
            && sp.queuing != (QueuingScheme::PathSl { vcs: vls })
        {
            return Err(format!(
                "routing engine {} layers its paths over {vls} VLs: the queuing scheme must be \
                 `path_sl` over as many, not {}",
                engine.name(),
                sp.queuing.name()
            ));
        }
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
                channels.push(Channel::closed(params.link_latency));
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
        let smodk_divs = subnet_manager::smodk_divisors(topo);
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
                smodk_div: smodk_divs.get(s).copied().unwrap_or(0),
                in_ch: in_ch[s].clone(),
                out_ch: out_ch[s].clone(),
                out_capacity,
                sl_to_vl: sl_to_vl
                    .as_ref()
                    .map_or_else(SlToVl::identity, |t| t[s].clone()),
            };
            switches.push(SwitchSetup::new(wiring, lft, params.seed));
        }
        // Room for every node at once: grown by doubling, the vector of nodes (kilobytes each)
        // would leave its earlier copies in the resident memory.
        let mut nodes = Vec::with_capacity(topo.nodes as usize);
        for n in 0..topo.nodes {
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
            if let (Some(sls), Far::Switch { sw, .. }) = (&sls, ends[i as usize].0) {
                node.set_path_sls(sls.row(sw as usize));
            }
            node.set_adaptive_share(params.adaptive_share);
            node.set_send_memory(params.node_send_memory);
            if let Some(cc) = params.ca_congestion {
                node.set_congestion_control(cc);
            }
            if let Some(q) = params.qcn_reaction {
                node.set_qcn(q);
            }
            nodes.push(node);
        }
        // Units: switches 0..ns, then nodes; each channel names who receives in each direction.
        let unit = |e: Far| match e {
            Far::Switch { sw, port } => (sw, port as u8),
            Far::Node(n) => (ns as u32 + n, 0),
        };
        for (c, &(from, to)) in ends.iter().enumerate() {
            channels[c].set_ends(unit(to), unit(from));
        }
        let arrivals = Arrivals::new(ns + topo.nodes as usize, params.link_latency);
        let order = (params.check_order || params.resequence)
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
            switch_out: Vec::new(),
            node_out: Vec::new(),
            switches,
            nodes,
            last_progress: 0,
            flits_moved: 0,
            order,
            window,
            parts: Vec::new(),
            logs: Vec::new(),
            samples: Vec::new(),
            recorders: Vec::new(),
            threads: 1,
            pool: Pool::new(1),
            ranks: None,
            // The default engine, once the fabric it reads is whole.
            wing: Wing::Cycle(Vec::new()),
        };
        fabric.set_threads(threads);
        if let Some(r) = ranks {
            fabric.join_ranks(r, on)?;
        }
        fabric.set_engine(on);
        Ok(fabric)
    }

    /// A cycle-engine switch in its reset state built as switch `sw` is (parameters, wiring,
    /// LFT, seed): its twin for a lockstep.
    pub fn cycle_twin(&self, sw: usize) -> crate::cycle::CycleSwitch {
        self.switches[sw].cycle_switch(&self.params.switch, self.params.seed)
    }

    /// The first cycle from now on in which something happens on the event engine (a port or
    /// node has an event), `now` on the cycle engine: the cycles before it change nothing but
    /// the cycle count.
    pub fn idle_until(&self) -> u64 {
        match &self.wing {
            Wing::Event(e) => e.next_cycle(self.now),
            Wing::Cycle(_) => self.now,
        }
    }

    /// The switch port at the far end of switch `sw`'s port `port`, if a switch is cabled there
    /// (not an end node).
    pub fn switch_peer(&self, sw: u32, port: usize) -> Option<(u32, usize)> {
        let out = self.switches[sw as usize].wiring().out_ch[port];
        match self.ends[out as usize].1 {
            Far::Switch { sw, port } => Some((sw, port as usize)),
            Far::Node(_) => None,
        }
    }

    /// The engine stepping the switches.
    pub fn engine(&self) -> Engine {
        match self.wing {
            Wing::Cycle(_) => Engine::Cycle,
            Wing::Event(_) => Engine::Event,
        }
    }

    /// The cycle engine's switches, when it steps the fabric (`None` on the event engine, which
    /// shows a switch's state only in dumps and recordings).
    pub fn cycle_units(&self) -> Option<&[CycleUnit<V>]> {
        match &self.wing {
            Wing::Cycle(units) => Some(units),
            Wing::Event(_) => None,
        }
    }

    /// Steps the fabric on `threads` threads from now on (1 to [`MAX_THREADS`]; more threads
    /// than switches are not used). Every output is the same for any number of threads.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads;
        // A recording fabric steps on one thread (`record.rs`).
        let threads = if self.recorders.is_empty() {
            threads
        } else {
            1
        };
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
        // The event engine's parts are dealt out before its first cycle (after it, a fabric
        // that stops recording keeps stepping on one).
        if let Wing::Event(e) = &self.wing
            && self.now == 0
            && e.parts() != threads
        {
            self.renew_event_engine();
        }
    }

    /// On the event engine, the cycle the first congestion root was detected in, among the
    /// cycles stepped, and the lowest switch that detected one then (`None` before one is; the
    /// cycle engine reports roots to the observer of [`Fabric::run`] as
    /// [`SwitchEvent::RootDetected`]).
    pub fn first_root(&self) -> Option<(u64, u32)> {
        match &self.wing {
            Wing::Event(e) => e.first_root(),
            Wing::Cycle(_) => None,
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

    /// The switches' names in waveforms and recordings: `s<stage>_<k>`, the `k`-th switch of
    /// its stage.
    pub fn switch_names(&self) -> Vec<String> {
        let mut per_stage = std::collections::BTreeMap::<u8, u32>::new();
        self.switches
            .iter()
            .map(|s| {
                let k = per_stage.entry(s.stage()).or_default();
                *k += 1;
                format!("s{}_{}", s.stage(), *k - 1)
            })
            .collect()
    }

    /// What each switch is built from.
    pub fn switches(&self) -> &[SwitchSetup] {
        &self.switches
    }

    /// The end nodes.
    pub fn nodes(&self) -> &[EndNode<V>] {
        &self.nodes
    }

    /// Gives every node the ranks of a trace it runs (`ranks[n]` for node `n`), before the first
    /// cycle (`node::replay`). The in-order check is left off: a replayed packet's id names its
    /// message, not its place in its flow.
    pub fn attach_replay(&mut self, ranks: Vec<crate::replay::Replayer>) -> Result<(), String> {
        if ranks.len() != self.nodes.len() || self.now != 0 {
            return Err(format!(
                "{} replayers for {} nodes at cycle {}",
                ranks.len(),
                self.nodes.len(),
                self.now
            ));
        }
        for (n, r) in self.nodes.iter_mut().zip(ranks) {
            n.attach_replay(r);
        }
        for p in &mut self.node_pace {
            p.due = 0;
        }
        self.order = None;
        Ok(())
    }

    /// Whether every node runs a trace and all their ranks have finished in the cycles stepped.
    pub fn replay_finished(&self) -> bool {
        self.on_every_rank(self.local_nodes().all(|(_, n)| {
            n.replay()
                .is_some_and(|r| r.ranks().finished_before(self.now))
        }))
    }

    /// Parameters as built (LMC filled in).
    pub fn params(&self) -> &FabricParams {
        &self.params
    }

    /// Summed counters.
    pub fn totals(&self) -> FabricTotals {
        let mut t = FabricTotals::default();
        match &self.wing {
            Wing::Event(engine) => t.switches = engine.stats(self.now.saturating_sub(1)),
            Wing::Cycle(units) => {
                for s in units {
                    t.switches.accumulate(&s.stats());
                }
            }
        }
        for (_, n) in self.local_nodes() {
            t.nodes.accumulate(&n.stats());
        }
        if let Some(r) = &self.ranks {
            ranks::node_stats(&**r, &mut t.nodes);
        }
        t
    }

    /// Cycles every unit steps in a row before the sends are written (see [`Fabric::run`]).
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Sets the window, clamped to 1 ..= the link latency (and [`scheduler::MAX_WINDOW`]). Every
    /// output is the same for any window; only the speed changes.
    pub fn set_window(&mut self, cycles: u64) {
        self.window = cycles.clamp(1, longest_window(self.params.link_latency));
    }

    /// The cycles of the next window of a run to `end`: a window ends by `end` and at the
    /// watchdog's next look ([`invariants::WATCH_EVERY`]).
    fn window_from(&self, end: u64) -> u64 {
        let look = invariants::next_look(self.now);
        (end - self.now).min(self.window).min(look - self.now)
    }

    /// Steps one cycle, reporting switch events to `obs`.
    pub fn step<O: Observer>(&mut self, obs: &mut O) -> Result<(), Violation> {
        self.run(1, obs)
    }

    /// Runs `cycles` cycles, in windows of up to [`Fabric::window`] cycles.
    ///
    /// A flit or credit sent in cycle `t` is read from `t + latency` on, so every switch and node
    /// can step the cycles of a window one after the other (while its registers are in cache)
    /// before any of them writes what it sent: this gives the same channels, registers and
    /// outputs as stepping the whole fabric cycle by cycle.
    pub fn run<O: Observer>(&mut self, cycles: u64, obs: &mut O) -> Result<(), Violation> {
        if let Wing::Event(_) = self.wing {
            return self.run_events(cycles, None);
        }
        let end = self.now + cycles;
        let mut r = Ok(());
        while self.now < end && r.is_ok() {
            r = self.step_window(self.window_from(end), obs, None);
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
        tap: &dyn Tap<V>,
        sink: &mut dyn FnMut(Range<u64>, &[Sample]),
    ) -> Result<(), Violation> {
        if let Wing::Event(_) = self.wing {
            return self.run_events(cycles, Some((tap, sink)));
        }
        let end = self.now + cycles;
        self.mark_tapped(Some(tap));
        let mut window = std::mem::take(&mut self.samples);
        while self.now < end {
            let (t0, w) = (self.now, self.window_from(end));
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
}

#[cfg(test)]
mod arn_cases;
#[cfg(test)]
mod fa_tests;
#[cfg(test)]
mod replay_tests;
#[cfg(test)]
mod tests;
