//! Which dumped switches a part of the event engine reads at the end of a cycle, and which of
//! their values (`view.rs` reads them). Between the cycles something happens at its port, a
//! dumped value moves at a steady rate (flits of a packet arriving or leaving one a cycle,
//! credits coming back one a cycle per stream), so it changes only in a cycle in which
//! something happens at its port (a head arrives at an input; an output is visited, its
//! detector evaluated, a credit stream starts or stops at it; an output's visit starts or ends
//! a packet from an input), in the cycle after one, in the cycle the packet arriving at an
//! input has all come in, or while it moves (it changed in the cycle before). The part looks at
//! the dumped ports in every cycle of the window through marks the engine leaves anyway
//! (`sampler/look.rs`), and reads and records only the values that may have changed
//! (`sampler/read.rs`): in the other cycles a value is the one recorded last, which the dump,
//! made of changes, shows already. State kept for speed; it models no hardware.

mod look;
mod read;

use super::*;
use crate::fabric::{SwitchValue, ViewSignal};
use look::{Happened, Watched, leaving};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

/// A set of values of a switch: its ARN table's count of entries, and per port (bit `p` for port
/// `p`; a switch has at most 64) its input's occupancies, its output's probe (the packet it
/// sends and its detector) and its output's credits.
#[derive(Clone, Copy, Debug, Default)]
struct Values {
    entries: bool,
    inputs: u64,
    probes: u64,
    credits: u64,
}

/// Of the values of a switch, those that move by themselves (see [`Values`]): its inputs'
/// occupancies and its outputs' credits.
#[derive(Clone, Copy, Debug, Default)]
struct Moves {
    inputs: u64,
    credits: u64,
}

/// Where the signals of one port of a dumped switch are in the list of its signals: those of its
/// input's occupancies, of its output's probe fields and of its output's credits.
#[derive(Clone, Debug, Default)]
struct PortSignals {
    occupancy: Range<usize>,
    probe: Range<usize>,
    credits: Range<usize>,
}

/// One dumped switch of a part: its index and flat port 0, its signals, the values they show,
/// where its ports' [`PortSignals`] are in [`Sampler::ports`] (`slot`: per port, its entry
/// there), where its outputs' entries of [`Sampler::sending`] start (when its inputs are
/// dumped), and, when its ARN table's count is dumped, what that count hangs on as last read
/// (`ArnState::entries_key`).
struct Dumped<'t> {
    switch: u32,
    first: u32,
    signals: &'t [ViewSignal],
    values: Values,
    ports: u32,
    slot: [u8; 64],
    sending: u32,
    table: (u64, u64),
    /// Its values with something happening at their port in the cycle being sampled, and in the
    /// cycle before; those that moved when last read (by themselves, until something happens).
    hit: Values,
    prev: Moves,
    moving: Moves,
}

/// The dumped switches and nodes of a part, and what it keeps between cycles to tell, in each
/// cycle, which dumped values of a switch may differ from the cycle before (see the module's
/// note): those
///
/// - at whose port something happens in that cycle or the one before (at an input, a head
///   arrives, or an output's visit starts or ends a packet from it; at an output, a visit or a
///   credit stream starting or stopping; the probe only in the cycle of a visit or of an
///   evaluation of the detector, which holds between them): every signal of theirs is read;
/// - the occupancy of an input whose arriving packet has all come in, in that cycle: every
///   signal is read;
/// - the values that changed in the cycle before: only their signals that did are read;
/// - the ARN table's count, when the table steps (a command, or catching up before a lookup) or
///   its first entry to expire expires.
///
/// A switch with none is not read at all. A run's first cycle reads every dumped value (nothing
/// is known of the cycle before).
pub(super) struct Sampler<'t> {
    switches: Vec<Dumped<'t>>,
    ports: Vec<PortSignals>,
    /// The outputs looked at: those dumped, and every output of a switch with inputs dumped
    /// (their packets leave from those inputs).
    outputs: Vec<Watched>,
    /// Per output looked at: its flat index, and the count of credit records it had taken in
    /// when last looked at; per flat port, the entry of its output there (`NIL`: none); those
    /// with something happening in the cycle being sampled.
    flats: Vec<u32>,
    records: Vec<u64>,
    watched: Vec<u32>,
    hits: Vec<(u32, Happened)>,
    /// The dumped inputs: (flat index, entry of its switch).
    inputs: Vec<(u32, u32)>,
    /// The dumped switches to look at in the cycle being sampled, and those to look at in the
    /// next one (bit `k % 64` of word `k / 64` for entry `k` of `switches`: they are read in
    /// order, so that their samples come by signal).
    pending: Vec<u64>,
    next: Vec<u64>,
    /// The dumped switches whose ARN table's count is dumped.
    tables: Vec<u32>,
    /// The cycles in which the packet arriving at a dumped input has all come in, with the
    /// input (`64 k + p`: port `p` of entry `k` of `switches`).
    stops: BinaryHeap<Reverse<(u64, u32)>>,
    nodes: Vec<u32>,
    /// Per output of a dumped switch with inputs dumped: the input of the packet it sends, as
    /// last seen.
    sending: Vec<Option<u8>>,
    /// The run's first cycle.
    from: u64,
    /// Room for the flits leaving the inputs of a switch read, `V` lanes per input.
    leaving: Vec<u64>,
}

impl Sampler<'_> {
    /// Lists dumped switch `k` to look at in the cycle being sampled.
    #[inline(always)]
    fn list(&mut self, k: u32) {
        self.pending[k as usize / 64] |= 1 << (k % 64);
    }
}

/// The values of a switch that its signals `signals` show (in the order of their numbers: a
/// port's together), and where the signals of each port are, added to `ports` (`slot`: per
/// port, its entry there, counted from the first added).
fn port_signals(
    signals: &[ViewSignal],
    ports: &mut Vec<PortSignals>,
    slot: &mut [u8; 64],
) -> Values {
    let mut values = Values::default();
    let base = ports.len();
    let mut last = None;
    for (i, s) in signals.iter().enumerate() {
        let (p, set) = match s.value {
            SwitchValue::Entries => {
                values.entries = true;
                continue;
            }
            SwitchValue::Occupancy { port, .. } => (port, &mut values.inputs),
            SwitchValue::Probe { port, .. } => (port, &mut values.probes),
            SwitchValue::Credits { port, .. } => (port, &mut values.credits),
        };
        *set |= 1 << p;
        if last != Some(p) {
            last = Some(p);
            slot[p as usize] = (ports.len() - base) as u8;
            ports.push(PortSignals::default());
        }
        if let Some(ps) = ports.last_mut() {
            let r = match s.value {
                SwitchValue::Occupancy { .. } => &mut ps.occupancy,
                SwitchValue::Probe { .. } => &mut ps.probe,
                _ => &mut ps.credits,
            };
            if r.start == r.end {
                *r = i..i + 1;
            } else {
                r.end = i + 1;
            }
        }
    }
    values
}

impl<const V: usize> EventCore<V> {
    /// The switches and nodes of this part that `tap` has signals of, for a run from cycle
    /// `from`.
    pub(super) fn tapped<'t>(&self, env: &Env<V>, tap: &'t dyn Tap<V>, from: u64) -> Sampler<'t> {
        let (mut outputs, mut flats, mut records) = (Vec::new(), Vec::new(), Vec::new());
        let mut watched = vec![NIL; self.outputs.len()];
        let mut inputs = Vec::new();
        let mut sending = Vec::new();
        let mut ports = Vec::new();
        let switches: Vec<Dumped> = (0..self.first.len() as u32)
            .filter(|&s| {
                self.owner[self.first[s as usize] as usize] == self.part && tap.taps_switch(s)
            })
            .enumerate()
            .map(|(k, s)| {
                let (k, first) = (k as u32, self.first[s as usize]);
                let count = self.ins[first as usize].place.ports;
                let signals = tap.view_signals(s);
                let mut slot = [0; 64];
                let at = ports.len() as u32;
                let values = port_signals(signals, &mut ports, &mut slot);
                let dumped = values.probes | values.credits;
                for p in 0..count as u8 {
                    let flat = first + p as u32;
                    if values.inputs >> p & 1 != 0 {
                        inputs.push((flat, k));
                    }
                    if values.inputs != 0 || dumped >> p & 1 != 0 {
                        outputs.push(Watched {
                            at: k,
                            port: p,
                            dumped: dumped >> p & 1 != 0,
                        });
                        watched[flat as usize] = flats.len() as u32;
                        flats.push(flat);
                        records.push(self.outputs[flat as usize].credits.records(self.vcs));
                    }
                }
                let at_sending = sending.len() as u32;
                if values.inputs != 0 {
                    let flat = first as usize..first as usize + count as usize;
                    sending.extend(self.outputs[flat].iter().map(|o| leaving(o.tx, first)));
                }
                Dumped {
                    switch: s,
                    first,
                    signals,
                    values,
                    ports: at,
                    slot,
                    sending: at_sending,
                    table: (u64::MAX, 0),
                    hit: Values::default(),
                    prev: Moves::default(),
                    moving: Moves::default(),
                }
            })
            .collect();
        let nodes = (0..env.node_count() as u32)
            .filter(|&n| self.owns_node(n) && tap.taps_node(n))
            .collect();
        let n = switches.len();
        Sampler {
            tables: (0..n as u32)
                .filter(|&k| switches[k as usize].values.entries)
                .collect(),
            switches,
            ports,
            pending: vec![0; n.div_ceil(64)],
            next: vec![0; n.div_ceil(64)],
            // An input has at most two: its packet's, and that of the next arriving as it ends.
            stops: BinaryHeap::with_capacity(2 * inputs.len()),
            // An output has at most two: what its state shows, and its detector's evaluation.
            hits: Vec::with_capacity(2 * outputs.len()),
            outputs,
            flats,
            records,
            watched,
            inputs,
            nodes,
            sending,
            from,
            leaving: vec![0; 64 * V],
        }
    }

    /// Records the signals `tap` has of this part's switches and nodes (`w`) as of the end of
    /// each cycle of `cycles` (cycles stepped, with no event of this part after them), of each
    /// switch only those that may have changed ([`Sampler`]).
    pub(super) fn sample(
        &mut self,
        env: &Env<V>,
        tap: &dyn Tap<V>,
        w: &mut Sampler<'_>,
        cycles: std::ops::Range<u64>,
    ) {
        let mut out = std::mem::take(&mut self.samples);
        for c in cycles {
            let first = c == w.from;
            if first {
                self.start(w, c);
            }
            self.look(w, c);
            for i in 0..w.pending.len() {
                let mut m = std::mem::take(&mut w.pending[i]);
                while m != 0 {
                    let k = i * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    let d = &w.switches[k];
                    let want = d.values;
                    let (hit, prev, moving) = (d.hit, d.prev, d.moving);
                    let mut touched = Values {
                        entries: hit.entries,
                        inputs: (hit.inputs | prev.inputs) & want.inputs,
                        probes: hit.probes & want.probes,
                        credits: (hit.credits | prev.credits) & want.credits,
                    };
                    let mut changed = Values {
                        inputs: touched.inputs | moving.inputs,
                        credits: touched.credits | moving.credits,
                        ..touched
                    };
                    if first {
                        (touched, changed) = (want, want);
                    }
                    let moved = if changed.entries || (changed.inputs | changed.probes) != 0 {
                        let (ports, leaving) = (&w.ports, &mut w.leaving);
                        self.read(d, ports, leaving, (changed, touched), c, &mut out)
                    } else {
                        let (m, all) = (changed.credits, touched.credits);
                        Moves {
                            inputs: 0,
                            credits: self.read_switch_credits(d, &w.ports, m, all, c, &mut out),
                        }
                    };
                    let d = &mut w.switches[k];
                    if changed.entries
                        && let Some(arn) = &self.arn
                    {
                        d.table = arn.entries_key(d.switch as usize);
                    }
                    // What happened in `c` has every signal of its port read again in the next
                    // cycle; of the values that moved, the signals that did.
                    let hit = Moves {
                        inputs: hit.inputs & want.inputs,
                        credits: hit.credits & want.credits,
                    };
                    (d.hit, d.prev, d.moving) = (Values::default(), hit, moved);
                    if (hit.inputs | hit.credits | moved.inputs | moved.credits) != 0 {
                        w.next[i] |= 1 << (k % 64);
                    }
                }
            }
            std::mem::swap(&mut w.pending, &mut w.next);
            for &n in &w.nodes {
                // SAFETY: read only, by the part owning the node, holding no other reference.
                tap.node_signals(unsafe { env.node(n) }, c, &mut out);
            }
        }
        self.samples = out;
    }
}
