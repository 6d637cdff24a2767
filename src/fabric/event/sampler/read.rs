//! How a part of the event engine reads and records the dumped values of a switch that may have
//! changed in a cycle (`sampler.rs`), port by port so that they come by signal, through the
//! switch as a waveform reads it (`view.rs`). State kept for speed; it models no hardware.

use super::super::view::SwitchView;
use super::*;
use crate::fabric::probe_value;

impl<const V: usize> EventCore<V> {
    /// Reads and records, as of the end of cycle `c`, the signals of dumped switch `d` whose
    /// values are `changed`, port by port (so that they come by signal): all of them for the
    /// values `touched`, the ones that moved when last read for the others (`leaving`: room for
    /// the flits leaving its inputs, `V` lanes per input). The values that move by themselves
    /// with a signal that changed.
    #[inline(never)]
    pub(super) fn read(
        &self,
        d: &Dumped<'_>,
        ports: &[PortSignals],
        leaving: &mut [u64],
        (changed, touched): (Values, Values),
        c: u64,
        out: &mut Vec<Sample>,
    ) -> Moves {
        let view = SwitchView::new(self, d.switch, d.first, c);
        let mut moved = Moves::default();
        if changed.entries {
            d.signals[0].record(view.arn_entries(), c, out);
        }
        if changed.inputs != 0 {
            // The flits leaving the inputs read, in one pass over the outputs.
            let mut m = changed.inputs;
            while m != 0 {
                let p = m.trailing_zeros() as usize;
                m &= m - 1;
                leaving[p * V..(p + 1) * V].fill(0);
            }
            view.leaving(|i, vc, flits| {
                if changed.inputs >> i & 1 != 0 {
                    leaving[i * V + (vc & (V - 1))] += flits;
                }
            });
        }
        let mut todo = changed.inputs | changed.probes | changed.credits;
        while todo != 0 {
            let p = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let bit = 1u64 << p;
            let ps = &ports[d.ports as usize + d.slot[p] as usize];
            if changed.inputs & bit != 0 {
                let every = touched.inputs & bit != 0;
                let any = read_occupancy(&view, d, ps, p, every, &leaving[p * V..], out);
                moved.inputs |= (any as u64) << p;
            }
            if changed.probes & bit != 0 {
                let pr = view.output_probe(p);
                for s in &d.signals[ps.probe.clone()] {
                    if let SwitchValue::Probe { field, .. } = s.value {
                        s.record(probe_value(&pr, field as usize), c, out);
                    }
                }
            }
            if changed.credits & bit != 0 {
                let every = touched.credits & bit != 0;
                let any = read_credits(&view, d, ps, p, every, out);
                moved.credits |= (any as u64) << p;
            }
        }
        moved
    }

    /// Reads and records, as of the end of cycle `c`, the credits of dumped switch `d`'s outputs
    /// `credits`: every signal of those `all`, the ones that moved when last read of the
    /// others. The outputs with a signal that changed.
    #[inline(never)]
    pub(super) fn read_switch_credits(
        &self,
        d: &Dumped<'_>,
        ports: &[PortSignals],
        credits: u64,
        all: u64,
        c: u64,
        out: &mut Vec<Sample>,
    ) -> u64 {
        let view = SwitchView::new(self, d.switch, d.first, c);
        let mut moved = 0;
        let mut m = credits;
        while m != 0 {
            let p = m.trailing_zeros() as usize;
            m &= m - 1;
            let ps = &ports[d.ports as usize + d.slot[p] as usize];
            let any = read_credits(&view, d, ps, p, all >> p & 1 != 0, out);
            moved |= (any as u64) << p;
        }
        moved
    }
}

/// Reads and records the occupancies of input `p` of dumped switch `d` (its signals `ps`) as of
/// the end of `view`'s cycle: all of them when `every`, else those that moved when last read
/// (`leaving`: per VC lane, the flits of its packets leaving through outputs of the switch gone
/// out). Whether one changed.
#[inline(always)]
fn read_occupancy<const V: usize>(
    view: &SwitchView<'_, V>,
    d: &Dumped<'_>,
    ps: &PortSignals,
    p: usize,
    every: bool,
    leaving: &[u64],
    out: &mut Vec<Sample>,
) -> bool {
    let mut any = false;
    for s in &d.signals[ps.occupancy.clone()] {
        if let SwitchValue::Occupancy { vc, .. } = s.value
            && (every || s.moved())
        {
            let vc = vc as usize;
            let v = view.occupancy(p, vc, leaving[vc & (V - 1)]);
            any |= s.record(v, view.now(), out);
        }
    }
    any
}

/// Reads and records the credits of output `p` of dumped switch `d` (its signals `ps`) as of the
/// end of `view`'s cycle: all of them when `every`, else those that moved when last read.
/// Whether one changed.
#[inline(always)]
fn read_credits<const V: usize>(
    view: &SwitchView<'_, V>,
    d: &Dumped<'_>,
    ps: &PortSignals,
    p: usize,
    every: bool,
    out: &mut Vec<Sample>,
) -> bool {
    let (counters, now) = (view.credits(p), view.now());
    let mut any = false;
    for s in &d.signals[ps.credits.clone()] {
        if let SwitchValue::Credits { vc, .. } = s.value
            && (every || s.moved())
        {
            any |= s.record(counters.credits(vc as usize, now) as u64, now, out);
        }
    }
    any
}
