//! The fabric's scheduler: how the units (switches and end nodes) of one clock are stepped.
//!
//! Units step a window of up to a link latency of cycles in a row, each unit skipping the cycles
//! in which nothing arrives for it and it has nothing due (`Pace`); the fabric's parts (contiguous
//! ranges of switches and nodes) step on the thread pool; then every outbox is written into the
//! channels. What the parts logged in the window (events, delivered packets, tapped samples,
//! faults) is handed on in cycle order, then unit order, as a cycle-by-cycle run makes it.
//!
//! The scheduler owns what makes this work and what the units themselves never see: each unit's
//! [`Outbox`] (what it sends in the window: the unit writes it through
//! [`LinkSend`](crate::wire::link::LinkSend)), the writing of the outboxes into the channels on
//! one thread or several ([`SharedChannels`]), and the [`Arrivals`] masks, from which a unit is
//! handed, before each cycle it steps, the ports that receive something
//! ([`Arriving`](crate::wire::link::Arriving)).

mod arrivals;
mod order;
mod outbox;

pub use arrivals::Arrivals;
pub(super) use order::{in_order, in_order_of_flow, order_counts};
pub use outbox::{Outbox, SharedChannels};

use super::invariants::switch_fault;
use super::record::SwitchRecorder;
use super::*;

/// Longest window: the most cycles a unit steps in a row before its sends are written.
pub const MAX_WINDOW: usize = 16;

/// What the switches and nodes of one part produced in a window, besides their outboxes.
#[derive(Default)]
pub(super) struct PartLog {
    /// How much the progress count of the part's switches and nodes grew in the window.
    pub(super) moved: u64,
    /// The last cycle of the window in which one of them made progress (a packet's head or
    /// tail left), if any did.
    pub(super) last_moved: Option<u64>,
    /// Tapped signals' values, unit by unit (each unit's in cycle order).
    pub(super) samples: Vec<Sample>,
    /// Switch events, unit by unit (each unit's in cycle order).
    pub(super) events: Vec<(u64, u32, SwitchEvent)>,
    /// (cycle, node, packet) for every packet whose tail reached a node, node by node.
    pub(super) delivered: Vec<(u64, u32, Packet)>,
    /// The part's first fault as a cycle-by-cycle run meets them: earliest cycle, then lowest
    /// switch.
    pub(super) fault: Option<(u64, u32, Violation)>,
}

impl PartLog {
    pub(super) fn with_room(nodes: usize) -> Self {
        PartLog {
            moved: 0,
            last_moved: None,
            events: Vec::with_capacity(1024 * MAX_WINDOW),
            delivered: Vec::with_capacity(nodes * MAX_WINDOW),
            samples: Vec::new(),
            fault: None,
        }
    }

    /// A unit made progress in `cycle`.
    #[inline(always)]
    fn note_moved(&mut self, cycle: u64) {
        self.last_moved = Some(self.last_moved.map_or(cycle, |c| c.max(cycle)));
    }

    pub(super) fn note_fault(&mut self, cycle: u64, sw: u32, v: Violation) {
        if self
            .fault
            .as_ref()
            .is_none_or(|&(c, s, _)| (cycle, sw) < (c, s))
        {
            self.fault = Some((cycle, sw, v));
        }
    }

    /// Steps switch `s` through the window `t0..t0 + w`, its sends going to `out` (emptied
    /// first), recording its signals when `u.tap` taps it; a fault ends its window. A cycle-engine
    /// switch steps every cycle.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn step_switch<const V: usize>(
        &mut self,
        s: &mut CycleUnit<V>,
        pace: &mut Pace,
        out: &mut Outbox<V>,
        t0: u64,
        w: u64,
        u: Units<'_, V>,
        mut rec: Option<&mut SwitchRecorder<V>>,
    ) {
        let end = t0 + w;
        let tap = u.tap.filter(|_| pace.tapped);
        out.clear();
        let before = s.progress();
        let mut seen = before;
        for c in t0..end {
            if let Some(r) = rec.as_deref_mut() {
                r.capture_inputs(s, c, u.channels);
            }
            if let Err(f) = s.step(c, u.channels, u.arrivals, out, &mut self.events) {
                self.note_fault(c, s.id(), switch_fault(c, s, f));
                break;
            }
            let now = s.progress();
            if now != seen {
                seen = now;
                self.note_moved(c);
            }
            if let Some(r) = rec.as_deref_mut() {
                r.capture_outputs(s, out, c);
            }
            if let Some(tap) = tap {
                tap.switch_signals(s, c, &mut self.samples);
            }
        }
        pace.due = end;
        pace.next = end;
        self.moved += s.progress() - before;
    }

    /// Steps node `n`, unit `unit`, through the window `t0..t0 + w`, its sends going to `out`
    /// (emptied first), as [`PartLog::step_switch`] does a switch.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn step_node<const V: usize>(
        &mut self,
        n: &mut EndNode<V>,
        unit: u32,
        pace: &mut Pace,
        out: &mut Outbox<V>,
        t0: u64,
        w: u64,
        u: Units<'_, V>,
    ) {
        let end = t0 + w;
        let tap = u.tap.filter(|_| pace.tapped);
        out.clear();
        if pace.next < t0 {
            n.skip_to(t0 - 1);
        }
        let before = n.progress();
        let mut seen = before;
        for c in t0..end {
            let arriving = u.arrivals.take(unit, c);
            if let Some(pkt) = n.step(c, u.channels, arriving, out) {
                self.delivered.push((c, n.id(), pkt));
            }
            let now = n.progress();
            if now != seen {
                seen = now;
                self.note_moved(c);
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
pub(super) fn visits(pace: &Pace, unit: u32, t0: u64, w: u64, arrivals: &Arrivals) -> bool {
    pace.tapped || pace.due < t0 + w || !arrivals.none_in(unit, t0, w)
}

/// One part's units step the window `t0..t0 + w` on the thread given the part.
fn step_part<const V: usize>(part: &mut PartRef<'_, V>, t0: u64, w: u64, u: Units<'_, V>) {
    part.log.moved = 0;
    let n0 = part.first_node;
    for (j, pace) in part.switch_pace.iter_mut().enumerate() {
        let (s, out) = (&mut part.switches[j], &mut part.switch_out[j]);
        part.log.step_switch(s, pace, out, t0, w, u, None);
    }
    for (j, pace) in part.node_pace.iter_mut().enumerate() {
        let unit = n0 + j as u32;
        if visits(pace, unit, t0, w, u.arrivals) {
            let (n, out) = (&mut part.nodes[j], &mut part.node_out[j]);
            part.log.step_node(n, unit, pace, out, t0, w, u);
        }
    }
}

/// When a switch or node next has to be visited, and how far it has stepped. A node with nothing
/// arriving before `due` would change nothing, so the fabric does not touch it until then; it
/// passes the cycles it missed when next visited, or when the fabric brings every unit up to date
/// at the end of a run. A switch is due every cycle.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Pace {
    /// The first cycle the unit has to step if nothing arrives for it.
    pub(super) due: u64,
    /// The first cycle the unit has not stepped or passed.
    pub(super) next: u64,
    /// The unit has signals in the tap of the current [`Fabric::run_tapped`].
    pub(super) tapped: bool,
}

/// What every unit reads while it steps a window: the channels, the arrival masks and the tap.
#[derive(Clone, Copy)]
pub(super) struct Units<'a, const V: usize> {
    pub(super) channels: &'a [Channel<V>],
    pub(super) arrivals: &'a Arrivals,
    pub(super) tap: Option<&'a dyn Tap<V>>,
}

/// Calls `f` on the entries of every log's `list` in the order a cycle-by-cycle run makes them:
/// by cycle, then part, then position (each part's list is unit by unit, each unit's in cycle
/// order). A window of one cycle is already in that order.
pub(super) fn in_cycle_order<T>(
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
pub(super) fn by_cycle_then_signal(
    logs: &mut [PartLog],
    t0: u64,
    upto: u64,
    window: &mut Vec<Sample>,
) {
    let mut starts = [0usize; MAX_WINDOW + 1];
    for log in logs.iter() {
        for s in log.samples.iter().filter(|s| s.0 < upto) {
            starts[(s.0 - t0) as usize + 1] += 1;
        }
    }
    for c in 1..starts.len() {
        starts[c] += starts[c - 1];
    }
    // Every place is written once below, so what the window held before may stay: only the
    // places beyond it are filled first.
    let n = starts[MAX_WINDOW];
    window.truncate(n);
    window.resize(n, (0, 0, 0));
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
pub(super) struct PartRef<'a, const V: usize> {
    pub(super) switches: &'a mut [CycleUnit<V>],
    pub(super) nodes: &'a mut [EndNode<V>],
    pub(super) switch_pace: &'a mut [Pace],
    pub(super) node_pace: &'a mut [Pace],
    pub(super) switch_out: &'a mut [Outbox<V>],
    pub(super) node_out: &'a mut [Outbox<V>],
    /// Unit number of the first node.
    pub(super) first_node: u32,
    pub(super) log: &'a mut PartLog,
}

/// The longest window links of `latency` cycles allow (and [`MAX_WINDOW`]).
pub(super) fn longest_window(latency: u32) -> u64 {
    (latency.max(1) as u64).min(MAX_WINDOW as u64)
}

impl<const V: usize> Fabric<V> {
    /// Notes in every unit's [`Pace`] whether `tap` has signals of it.
    pub(super) fn mark_tapped(&mut self, tap: Option<&dyn Tap<V>>) {
        for k in 0..self.switch_pace.len() {
            self.switch_pace[k].tapped =
                tap.is_some_and(|t| t.taps_switch(k as u32)) || self.recorded(k);
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
    pub(super) fn step_window<O: Observer>(
        &mut self,
        w: u64,
        obs: &mut O,
        tap: Option<&dyn Tap<V>>,
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
            let multipath_lid = self.params.switch.lmc > 0;
            let resequence = self.params.resequence;
            let units = &mut self.nodes;
            in_cycle_order(
                &self.logs,
                |l| &l.delivered,
                t0..last + 1,
                |&(c, n, pkt)| {
                    if in_order(order, nodes, multipath_lid, resequence, c, n, &pkt)? {
                        units[n as usize].count_resequenced();
                    }
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
        for log in &mut self.logs {
            if let Some(c) = log.last_moved.take() {
                self.last_progress = self.last_progress.max(c);
            }
        }
        self.flits_moved += grown;
        let checked = if cfg!(debug_assertions) {
            self.catch_up(last + 1);
            self.check_after(last)
        } else if self.check_progress(last).is_err() {
            // Whether the fabric is stuck does not depend on units being up to date, but the
            // deadlock report reads every unit as of `last`: made again once they are.
            self.catch_up(last + 1);
            self.check_progress(last)
        } else {
            Ok(())
        };
        // The window is stepped whole, a breach found at its end included: a run stopped by
        // one reaches `last + 1`, the cycle after the one the report names.
        self.now += w;
        checked
    }

    /// The second half of a window: every outbox is written into the channels, each part's on
    /// its thread.
    pub(super) fn write_outboxes(&mut self, end: u64) {
        if self.parts.len() == 1 {
            // Written as each unit stepped (`step_parts`).
            return;
        }
        let (switch_out, node_out) = (&self.switch_out[..], &self.node_out[..]);
        let parts = &self.parts[..];
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
                for (out, pace) in switch_out[srange.clone()]
                    .iter()
                    .zip(&switch_pace[srange.clone()])
                {
                    if pace.next == end {
                        out.write_shared(channels, arrivals);
                    }
                }
                for (out, pace) in node_out[nrange.clone()]
                    .iter()
                    .zip(&node_pace[nrange.clone()])
                {
                    if pace.next == end {
                        out.write_shared(channels, arrivals);
                    }
                }
            }
        });
    }

    /// The cycle engine's switches.
    pub(super) fn units(&self) -> &[CycleUnit<V>] {
        match &self.wing {
            Wing::Cycle(units) => units,
            Wing::Event(_) => unreachable!("the scheduler steps the cycle engine's switches"),
        }
    }

    /// [`Fabric::step_parts`] on one thread.
    fn step_one_thread(&mut self, t0: u64, w: u64, tap: Option<&dyn Tap<V>>) {
        let node_base = self.switches.len() as u32;
        let Wing::Cycle(units) = &mut self.wing else {
            unreachable!("the scheduler steps the cycle engine's switches")
        };
        // One thread: each unit's sends are written as soon as it has stepped the window,
        // while they are still in cache. This gives the same channels as writing them all
        // afterwards, since what is sent in the window is read from its first cycle plus the
        // latency on, after the window.
        let log = &mut self.logs[0];
        log.moved = 0;
        let channels = &mut self.channels;
        let arrivals = &self.arrivals;
        for (k, pace) in self.switch_pace.iter_mut().enumerate() {
            let u = Units {
                channels: &channels[..],
                arrivals,
                tap,
            };
            let (s, out) = (&mut units[k], &mut self.switch_out[k]);
            let rec = self.recorders.get_mut(k).and_then(|r| r.as_deref_mut());
            log.step_switch(s, pace, out, t0, w, u, rec);
            out.write_into(channels, arrivals);
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
            let (n, out) = (&mut self.nodes[k], &mut self.node_out[k]);
            log.step_node(n, unit, pace, out, t0, w, u);
            out.write_into(channels, arrivals);
        }
    }

    /// The first half of a window: every part's switches and nodes step through it on its
    /// thread, each unit through all `w` cycles before the next.
    pub(super) fn step_parts(&mut self, t0: u64, w: u64, tap: Option<&dyn Tap<V>>) {
        let node_base = self.switches.len() as u32;
        if self.parts.len() == 1 {
            self.step_one_thread(t0, w, tap);
            return;
        }
        let Wing::Cycle(units) = &mut self.wing else {
            unreachable!("the scheduler steps the cycle engine's switches")
        };
        let u = Units {
            channels: &self.channels[..],
            arrivals: &self.arrivals,
            tap,
        };
        let mut refs: heapless::Vec<Mutex<PartRef<'_, V>>, MAX_THREADS> = heapless::Vec::new();
        let (mut sw, mut nd, mut lg) = (&mut units[..], &mut self.nodes[..], &mut self.logs[..]);
        let (mut sp, mut np) = (&mut self.switch_pace[..], &mut self.node_pace[..]);
        let (mut so, mut no) = (&mut self.switch_out[..], &mut self.node_out[..]);
        for (srange, nrange) in &self.parts {
            let (s, rest) = std::mem::take(&mut sw).split_at_mut(srange.len());
            sw = rest;
            let (n, rest) = std::mem::take(&mut nd).split_at_mut(nrange.len());
            nd = rest;
            let (spc, rest) = std::mem::take(&mut sp).split_at_mut(srange.len());
            sp = rest;
            let (npc, rest) = std::mem::take(&mut np).split_at_mut(nrange.len());
            np = rest;
            let (soc, rest) = std::mem::take(&mut so).split_at_mut(srange.len());
            so = rest;
            let (noc, rest) = std::mem::take(&mut no).split_at_mut(nrange.len());
            no = rest;
            let (l, rest) = std::mem::take(&mut lg).split_at_mut(1);
            lg = rest;
            let part = PartRef {
                switches: s,
                nodes: n,
                switch_pace: spc,
                node_pace: npc,
                switch_out: soc,
                node_out: noc,
                first_node: node_base + nrange.start as u32,
                log: &mut l[0],
            };
            if refs.push(Mutex::new(part)).is_err() {
                unreachable!("at most MAX_THREADS parts");
            }
        }
        self.pool.broadcast(&|k| {
            let mut guard = refs[k].lock().unwrap_or_else(|e| e.into_inner());
            step_part::<V>(&mut guard, t0, w, u);
        });
    }

    /// Brings every node up to date through cycle `upto - 1`: those not visited since they were
    /// last due pass the cycles they missed (see [`Pace`]).
    pub(super) fn catch_up(&mut self, upto: u64) {
        for (n, pace) in self.nodes.iter_mut().zip(&mut self.node_pace) {
            if pace.next < upto {
                n.skip_to(upto - 1);
                pace.next = upto;
            }
        }
    }

    pub(super) fn flits_moved_now(&self) -> u64 {
        self.units().iter().map(|s| s.progress()).sum::<u64>()
            + self.nodes.iter().map(|n| n.progress()).sum::<u64>()
    }
}

#[cfg(test)]
mod tests;
