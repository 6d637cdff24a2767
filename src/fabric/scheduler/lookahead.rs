//! Prefetching for the units ahead of the one stepping (`wire::prefetch`): on fabrics larger than
//! the caches, the lines a switch or node reads first in a window are asked for while the units
//! before it step, so that their misses overlap.

use super::Arrivals;
use crate::fabric::node::EndNode;
use crate::fabric::switch_unit::SwitchUnit;
use crate::switch::set_bits;
use crate::wire::link::Channel;

/// Prefetching for the units ahead of the one stepping (see `wire::prefetch`): which cycles of
/// the window bring something to each of the next units, found once per unit, three units ahead.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Lookahead {
    cycles: [u64; 4],
}

impl Lookahead {
    /// Before unit `k` of a run of `n` units (`unit0 + k` in the fabric) steps the window
    /// `t0..t0 + w`: the units of the three stages, each as (index in the run, unit, cycles of
    /// the window with something arriving as bits from `t0`), `None` past the run's end or where
    /// nothing arrives: unit `k + 3`, whose lines found from its own address and arrival masks
    /// are asked for; unit `k + 2`, whose ports with something arriving are; unit `k + 1`, whose
    /// delay-line registers are.
    #[inline(always)]
    fn stages(
        &mut self,
        n: usize,
        k: usize,
        unit0: u32,
        (t0, w): (u64, u64),
        arrivals: &Arrivals,
    ) -> [Option<(usize, u32, u64)>; 3] {
        if k + 3 < n {
            self.cycles[(k + 3) & 3] = arrivals.cycles_in(unit0 + (k + 3) as u32, t0, w);
        }
        [3, 2, 1].map(|d| {
            let cycles = self.cycles[(k + d) & 3];
            (k + d < n && cycles != 0).then_some((k + d, unit0 + (k + d) as u32, cycles))
        })
    }

    /// [`Lookahead::stages`] for switches.
    #[inline(always)]
    pub(super) fn switches<const V: usize>(
        &mut self,
        switches: &[SwitchUnit<V>],
        k: usize,
        unit0: u32,
        (t0, w): (u64, u64),
        arrivals: &Arrivals,
        channels: &[Channel<V>],
    ) {
        let [head, ports, registers] = self.stages(switches.len(), k, unit0, (t0, w), arrivals);
        if let Some((i, unit, _)) = head {
            arrivals.prefetch_window(unit, t0, w);
            switches[i].prefetch_head();
        }
        if let Some((i, unit, cycles)) = ports {
            let (mut f, mut b) = (0, 0);
            for c in window_cycles(t0, cycles) {
                let (cf, cb) = arrivals.peek(unit, c);
                (f, b) = (f | cf, b | cb);
            }
            switches[i].prefetch_ports(f, b, channels);
        }
        if let Some((i, unit, cycles)) = registers {
            for c in window_cycles(t0, cycles) {
                let (f, b) = arrivals.peek(unit, c);
                switches[i].prefetch_registers(c, f, b, channels);
            }
        }
    }

    /// [`Lookahead::stages`] for end nodes.
    #[inline(always)]
    pub(super) fn nodes<const V: usize>(
        &mut self,
        nodes: &[EndNode<V>],
        k: usize,
        unit0: u32,
        (t0, w): (u64, u64),
        arrivals: &Arrivals,
        channels: &[Channel<V>],
    ) {
        let [head, links, registers] = self.stages(nodes.len(), k, unit0, (t0, w), arrivals);
        if let Some((i, unit, _)) = head {
            arrivals.prefetch_window(unit, t0, w);
            nodes[i].prefetch_head();
        }
        if let Some((i, _, _)) = links {
            nodes[i].prefetch_links(channels);
        }
        if let Some((i, unit, cycles)) = registers {
            for c in window_cycles(t0, cycles) {
                let (f, b) = arrivals.peek(unit, c);
                nodes[i].prefetch_registers(c, f != 0, b != 0, channels);
            }
        }
    }
}

/// The cycles `t0 + i` for the bits `i` set in `bits`, in order.
#[inline(always)]
fn window_cycles(t0: u64, bits: u64) -> impl Iterator<Item = u64> {
    set_bits(bits).map(move |i| t0 + i as u64)
}
