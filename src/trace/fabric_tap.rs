//! Which unit records which dumped signal of a fabric: the plan a [`FabricTap`] hands to
//! [`Fabric::run_tapped`], so that each switch and node records its own signals after every cycle
//! it steps (see `fabric_vcd` for the names and the VCD text).

use super::fabric_vcd::{Owner, Src, probe_field, probe_index, read_node};
use crate::cycle::CycleSwitch;
use crate::fabric::CycleUnit;
use crate::fabric::node::EndNode;
use crate::fabric::{Fabric, Sample, SwitchValue, Tap, UNRECORDED, ViewSignal};
use crate::switch::OutputProbe;
use std::sync::atomic::{AtomicU64, Ordering};

/// One dumped signal of a unit's plan: its number and the value recorded last (or
/// [`UNRECORDED`]). Each signal belongs to one unit, which one thread steps in a window; the
/// windows are ordered by the fabric's barrier.
#[derive(Debug)]
struct Field {
    k: u32,
    last: AtomicU64,
}

impl Field {
    fn new(k: u32) -> Self {
        Field {
            k,
            last: AtomicU64::new(UNRECORDED),
        }
    }

    /// Records `value` in `cycle` if it differs from the value recorded last.
    #[inline]
    fn record(&self, value: u64, cycle: u64, out: &mut Vec<Sample>) {
        if self.last.load(Ordering::Relaxed) != value {
            self.last.store(value, Ordering::Relaxed);
            out.push((cycle, self.k, value));
        }
    }
}

/// A cycle-engine switch as its plan reads it: every read below is the engine's own accessor,
/// inlined into [`SwitchPlan::record`]. The event engine reads its switches itself, from the
/// list of their signals ([`FabricTap::view_signals`]).
trait Probed {
    fn entries(&self) -> u64;
    /// The occupancy of input `port`'s VCs.
    fn occupancy(&self, port: usize) -> impl Fn(usize) -> u64 + '_;
    /// Free credits of output `port`'s `vc`.
    fn credit(&self, port: usize, vc: usize) -> u64;
    /// Words that differ whenever the probe of output `port` does (never [`UNRECORDED`] all
    /// three: the second is below 2^57), and the output's credits per VC: by default the probe
    /// itself, packed.
    #[inline(always)]
    fn output(&self, port: usize) -> ([u64; 3], impl Fn(usize) -> u64 + '_) {
        let [a, b] = packed_probe(&self.probe(port));
        ([a, b, 0], move |vc| self.credit(port, vc))
    }
    fn probe(&self, port: usize) -> OutputProbe;
}

impl Probed for CycleSwitch {
    #[inline(always)]
    fn entries(&self) -> u64 {
        self.arn_table().count() as u64
    }
    #[inline(always)]
    fn occupancy(&self, port: usize) -> impl Fn(usize) -> u64 + '_ {
        move |vc| self.buffered(port, vc) as u64
    }
    #[inline(always)]
    fn credit(&self, port: usize, vc: usize) -> u64 {
        self.credits(port, vc) as u64
    }
    #[inline(always)]
    fn probe(&self, port: usize) -> OutputProbe {
        self.output_probe(port)
    }
}

/// The dumped signals of one port of a switch, in the order of their numbers: the input's
/// occupancy per VC, the output's probe fields
/// ([`OUTPUT_FIELDS`](super::fabric_vcd::OUTPUT_FIELDS)), the output's credits per VC.
/// Each list holds only the dumped signals, with their VC or probe field, so that a port of a
/// few dumped VCs is not visited over every VC lane.
#[derive(Debug)]
struct PortPlan {
    port: u16,
    occupancy: Vec<(usize, Field)>,
    probe: Vec<(usize, Field)>,
    credits: Vec<(usize, Field)>,
    /// The key of the output's probe as last recorded ([`Probed::probe_key`]): most cycles it
    /// is unchanged, and then the probe is not read and none of its fields is visited.
    probe_last: [AtomicU64; 3],
}

/// An output's probe in two words: every field, the first word `packet`, `src` and `dlid`, the
/// second the rest (28 bits, so never [`UNRECORDED`]).
fn packed_probe(pr: &OutputProbe) -> [u64; 2] {
    [
        pr.packet as u64 | (pr.src as u64) << 32 | (pr.dlid as u64) << 48,
        pr.busy as u64
            | (pr.len as u64 & 0x1fff) << 1
            | (pr.vc as u64 & 0xf) << 14
            | (pr.adapted as u64) << 18
            | (pr.det_state as u64 & 0x3) << 19
            | (pr.crossed as u64 & 0x7f) << 21,
    ]
}

/// The dumped signals of one switch, in the order of their numbers: the ARN table's entry count,
/// then port by port.
#[derive(Debug, Default)]
struct SwitchPlan {
    entries: Option<Field>,
    ports: Vec<PortPlan>,
}

impl SwitchPlan {
    fn is_empty(&self) -> bool {
        self.entries.is_none() && self.ports.is_empty()
    }

    /// Adds signal `k` of `src` (signals come in the order of their numbers).
    fn add(&mut self, k: u32, src: Src) {
        let p = match src {
            Src::ArnEntries(_) => {
                self.entries = Some(Field::new(k));
                return;
            }
            Src::InOcc(_, p, _) | Src::Credits(_, p, _) => p,
            _ => match probe_index(src) {
                Some((p, _)) => p,
                None => return,
            },
        };
        if self.ports.last().is_none_or(|pp| pp.port != p) {
            self.ports.push(PortPlan {
                port: p,
                occupancy: Vec::new(),
                probe: Vec::new(),
                credits: Vec::new(),
                probe_last: std::array::from_fn(|_| AtomicU64::new(UNRECORDED)),
            });
        }
        if let Some(pp) = self.ports.last_mut() {
            let f = Field::new(k);
            match src {
                Src::InOcc(_, _, v) => pp.occupancy.push((v as usize, f)),
                Src::Credits(_, _, v) => pp.credits.push((v as usize, f)),
                _ => {
                    if let Some((_, j)) = probe_index(src) {
                        pp.probe.push((j, f));
                    }
                }
            }
        }
    }

    /// Records the signals of `s` after it stepped `cycle`, in the order of their numbers.
    #[inline(always)]
    fn record<S: Probed>(&self, s: &S, cycle: u64, out: &mut Vec<Sample>) {
        if let Some(f) = &self.entries {
            f.record(s.entries(), cycle, out);
        }
        for pp in &self.ports {
            let p = pp.port as usize;
            if !pp.occupancy.is_empty() {
                let occupancy = s.occupancy(p);
                for (v, f) in &pp.occupancy {
                    f.record(occupancy(*v), cycle, out);
                }
            }
            if pp.probe.is_empty() && pp.credits.is_empty() {
                continue;
            }
            let (key, credits) = s.output(p);
            if !pp.probe.is_empty() {
                let [a, b, c] = &pp.probe_last;
                if a.load(Ordering::Relaxed) != key[0]
                    || b.load(Ordering::Relaxed) != key[1]
                    || c.load(Ordering::Relaxed) != key[2]
                {
                    a.store(key[0], Ordering::Relaxed);
                    b.store(key[1], Ordering::Relaxed);
                    c.store(key[2], Ordering::Relaxed);
                    let pr = s.probe(p);
                    for (j, f) in &pp.probe {
                        f.record(probe_field(pr, *j), cycle, out);
                    }
                }
            }
            for (v, f) in &pp.credits {
                f.record(credits(*v), cycle, out);
            }
        }
    }
}

/// The dumped signals grouped by the switch or node they belong to, for [`Fabric::run_tapped`]:
/// each unit records its own after every cycle it steps, in the order of their numbers.
///
/// A unit records a signal only when its value differs from the one it recorded last (every
/// signal the first time), so a window's samples are the changes the VCD shows.
pub struct FabricTap {
    switches: Vec<SwitchPlan>,
    /// Per switch, its signals as the event engine records them.
    views: Vec<Vec<ViewSignal>>,
    nodes: Vec<Vec<(Field, Src)>>,
    signals: usize,
}

impl<const V: usize> Tap<V> for FabricTap {
    fn signals(&self) -> usize {
        self.signals
    }

    fn taps_switch(&self, id: u32) -> bool {
        !self.switches[id as usize].is_empty()
    }

    fn taps_node(&self, id: u32) -> bool {
        !self.nodes[id as usize].is_empty()
    }

    fn switch_signals(&self, s: &CycleUnit<V>, cycle: u64, out: &mut Vec<Sample>) {
        let s: &CycleSwitch = s;
        self.switches[s.id() as usize].record(s, cycle, out)
    }

    fn view_signals(&self, id: u32) -> &[ViewSignal] {
        &self.views[id as usize]
    }

    fn node_signals(&self, n: &EndNode<V>, cycle: u64, out: &mut Vec<Sample>) {
        for (f, src) in &self.nodes[n.id() as usize] {
            f.record(read_node(n, *src), cycle, out);
        }
    }
}

/// What a tap has recorded last of each signal (and, of the event engine's, whether it moved),
/// as a checkpoint keeps it: the dump continued from it records the same changes.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TapState {
    lasts: Vec<u64>,
    views: Vec<(u64, bool)>,
}

impl FabricTap {
    /// Every value recorded last by a switch's or node's plan, in a fixed order.
    fn each_last(&self, f: &mut dyn FnMut(&AtomicU64)) {
        for sp in &self.switches {
            if let Some(e) = &sp.entries {
                f(&e.last);
            }
            for pp in &sp.ports {
                let fields = pp.occupancy.iter().chain(&pp.probe).chain(&pp.credits);
                fields.for_each(|(_, x)| f(&x.last));
                pp.probe_last.iter().for_each(&mut *f);
            }
        }
        self.nodes.iter().flatten().for_each(|(x, _)| f(&x.last));
    }

    /// What it has recorded last of each signal.
    pub fn state(&self) -> TapState {
        let mut lasts = Vec::new();
        self.each_last(&mut |a| lasts.push(a.load(Ordering::Relaxed)));
        let views = self.views.iter().flatten().map(|v| v.state()).collect();
        TapState { lasts, views }
    }

    /// Takes back `state`, taken of a tap of the same signals of the same fabric.
    pub fn set_state(&self, state: &TapState) -> Result<(), String> {
        let mut n = 0;
        self.each_last(&mut |_| n += 1);
        if n != state.lasts.len() || self.views.iter().flatten().count() != state.views.len() {
            return Err("the checkpoint's dump taps other signals".into());
        }
        let mut next = state.lasts.iter();
        self.each_last(&mut |a| a.store(*next.next().unwrap_or(&UNRECORDED), Ordering::Relaxed));
        for (v, s) in self.views.iter().flatten().zip(&state.views) {
            v.set_state(*s);
        }
        Ok(())
    }

    /// The plan of the signals `srcs` (numbered in order) of `f`.
    pub(super) fn new<const V: usize>(f: &Fabric<V>, srcs: impl Iterator<Item = Src>) -> Self {
        let mut tap = FabricTap {
            switches: (0..f.switches().len())
                .map(|_| SwitchPlan::default())
                .collect(),
            views: (0..f.switches().len()).map(|_| Vec::new()).collect(),
            nodes: (0..f.nodes().len()).map(|_| Vec::new()).collect(),
            signals: 0,
        };
        for (k, src) in srcs.enumerate() {
            match src.owner() {
                Owner::Node(n) => tap.nodes[n as usize].push((Field::new(k as u32), src)),
                Owner::Switch(s) => {
                    tap.switches[s as usize].add(k as u32, src);
                    let value = match src {
                        Src::InOcc(_, p, v) => SwitchValue::Occupancy {
                            port: p as u8,
                            vc: v,
                        },
                        Src::Credits(_, p, v) => SwitchValue::Credits {
                            port: p as u8,
                            vc: v,
                        },
                        Src::Out(_, p, j) => SwitchValue::Probe {
                            port: p as u8,
                            field: j,
                        },
                        Src::ArnEntries(_) | Src::Queued(_) => SwitchValue::Entries,
                    };
                    tap.views[s as usize].push(ViewSignal::new(k as u32, value));
                }
            }
            tap.signals += 1;
        }
        tap
    }
}
