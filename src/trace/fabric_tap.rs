//! Which unit records which dumped signal of a fabric: the plan a [`FabricTap`] hands to
//! [`Fabric::run_tapped`], so that each switch and node records its own signals after every cycle
//! it steps (see `fabric_vcd` for the names and the VCD text).

use super::fabric_vcd::{OUTPUT_FIELDS, Owner, Src, probe_field, probe_index, read_node};
use crate::fabric::SwitchUnit;
use crate::fabric::node::EndNode;
use crate::fabric::{Fabric, Sample, Tap};
use crate::switch::OutputProbe;
use crate::wire::link::MAX_VCS;
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
            out.push((cycle, self.k, value as u128));
        }
    }
}

/// Where a port's signals sit in its [`PortPlan`], in the order of their names: the input's
/// occupancy per VC, the output's probe fields ([`OUTPUT_FIELDS`]), the output's credits per VC.
const OCC: usize = 0;
const PROBE: usize = MAX_VCS;
const CREDITS: usize = MAX_VCS + OUTPUT_FIELDS.len();
const PORT_FIELDS: usize = 2 * MAX_VCS + OUTPUT_FIELDS.len();
/// [`PortPlan::groups`] bits.
const GROUP_OCC: u8 = 1;
const GROUP_PROBE: u8 = 2;
const GROUP_CREDITS: u8 = 4;

/// The dumped signals of one port of a switch, in the order of their numbers.
#[derive(Debug)]
struct PortPlan {
    port: u16,
    /// Bit 0, 1, 2: an occupancy, a probe field, a credit count is dumped.
    groups: u8,
    /// Per position (see [`PORT_FIELDS`]): the field, if dumped.
    fields: [Option<Field>; PORT_FIELDS],
    /// The output's probe as last recorded, packed in two words ([`packed_probe`]): most cycles
    /// it is unchanged, and then none of its fields is visited.
    probe_last: [AtomicU64; 2],
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
        let (p, at) = match src {
            Src::ArnEntries(_) => {
                self.entries = Some(Field::new(k));
                return;
            }
            Src::InOcc(_, p, v) => (p, OCC + v as usize),
            Src::Credits(_, p, v) => (p, CREDITS + v as usize),
            _ => match probe_index(src) {
                Some((p, j)) => (p, PROBE + j),
                None => return,
            },
        };
        if self.ports.last().is_none_or(|pp| pp.port != p) {
            self.ports.push(PortPlan {
                port: p,
                groups: 0,
                fields: std::array::from_fn(|_| None),
                probe_last: [AtomicU64::new(UNRECORDED), AtomicU64::new(UNRECORDED)],
            });
        }
        if let Some(pp) = self.ports.last_mut() {
            pp.fields[at] = Some(Field::new(k));
            pp.groups |= match at {
                OCC..PROBE => GROUP_OCC,
                PROBE..CREDITS => GROUP_PROBE,
                _ => GROUP_CREDITS,
            };
        }
    }

    /// Records the signals of `s` after it stepped `cycle`, in the order of their numbers.
    fn record<const V: usize>(&self, s: &SwitchUnit<V>, cycle: u64, out: &mut Vec<Sample>) {
        if let Some(f) = &self.entries {
            f.record(s.arn_table().count() as u64, cycle, out);
        }
        for pp in &self.ports {
            let p = pp.port as usize;
            if pp.groups & GROUP_OCC != 0 {
                for (v, f) in pp.fields[OCC..PROBE].iter().enumerate() {
                    if let Some(f) = f {
                        f.record(s.buffered(p, v) as u64, cycle, out);
                    }
                }
            }
            if pp.groups & GROUP_PROBE != 0 {
                let pr = s.output_probe(p);
                let packed = packed_probe(&pr);
                let [a, b] = &pp.probe_last;
                if a.load(Ordering::Relaxed) != packed[0] || b.load(Ordering::Relaxed) != packed[1]
                {
                    a.store(packed[0], Ordering::Relaxed);
                    b.store(packed[1], Ordering::Relaxed);
                    for (j, f) in pp.fields[PROBE..CREDITS].iter().enumerate() {
                        if let Some(f) = f {
                            f.record(probe_field(pr, j), cycle, out);
                        }
                    }
                }
            }
            if pp.groups & GROUP_CREDITS != 0 {
                for (v, f) in pp.fields[CREDITS..].iter().enumerate() {
                    if let Some(f) = f {
                        f.record(s.credits(p, v) as u64, cycle, out);
                    }
                }
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
    nodes: Vec<Vec<(Field, Src)>>,
    signals: usize,
}

/// No value recorded yet (no signal is wider than 32 bits).
const UNRECORDED: u64 = u64::MAX;

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

    fn switch_signals(&self, s: &SwitchUnit<V>, cycle: u64, out: &mut Vec<Sample>) {
        self.switches[s.id() as usize].record(s, cycle, out);
    }

    fn node_signals(&self, n: &EndNode<V>, cycle: u64, out: &mut Vec<Sample>) {
        for (f, src) in &self.nodes[n.id() as usize] {
            f.record(read_node(n, *src), cycle, out);
        }
    }
}

impl FabricTap {
    /// The plan of the signals `srcs` (numbered in order) of `f`.
    pub(super) fn new<const V: usize>(f: &Fabric<V>, srcs: impl Iterator<Item = Src>) -> Self {
        let mut tap = FabricTap {
            switches: (0..f.switches().len())
                .map(|_| SwitchPlan::default())
                .collect(),
            nodes: (0..f.nodes().len()).map(|_| Vec::new()).collect(),
            signals: 0,
        };
        for (k, src) in srcs.enumerate() {
            match src.owner() {
                Owner::Node(n) => tap.nodes[n as usize].push((Field::new(k as u32), src)),
                Owner::Switch(s) => tap.switches[s as usize].add(k as u32, src),
            }
            tap.signals += 1;
        }
        tap
    }
}
