//! `flow_unit.sv`: flow routing's route caches, one per input ([`RouteCache`], the block), and
//! the port selection unit's flow counts, one per output (`crate::switch::flow` says what they
//! decide). The routing stages read the caches as registered at the start of the cycle and the
//! counts with the changes of the lower inputs' heads of the cycle; the commands and the
//! changes are applied at the clock edge.

use crate::blocks::Block;
use crate::blocks::route_cache::{RouteCache, RouteCacheCmd, RouteCacheIn};
use crate::switch::flow::counted;

/// The route caches and flow counts of a switch under flow routing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FlowUnit {
    /// Per input, its PRC.
    pub caches: Vec<RouteCache>,
    /// `flows_q[o]`: per output, the flows routed through it.
    pub counts: Vec<u16>,
}

impl FlowUnit {
    /// Caches of `entries` for `ports` inputs, every count 0.
    pub fn new(ports: usize, entries: usize) -> Self {
        FlowUnit {
            caches: vec![RouteCache::new(entries); ports],
            counts: vec![0; ports],
        }
    }

    /// Output `out`'s count as input `i`'s routing stage reads it: as registered, with the
    /// changes `delta` of the lower inputs' heads of this cycle. A port beyond the switch counts
    /// 65,535 (never the least).
    #[inline]
    pub fn seen(&self, out: u8, delta: &[i32]) -> u16 {
        match self.counts.get(out as usize) {
            Some(&c) => counted(c, delta[out as usize]),
            None => u16::MAX,
        }
    }

    /// The clock edge: each input's command (`cmds[i]`), every count changed by the cycle's
    /// setups and teardowns through it (`delta`).
    pub fn commit(&mut self, cmds: &[RouteCacheCmd], delta: &[i32]) {
        for (cache, &cmd) in self.caches.iter_mut().zip(cmds) {
            if cmd != RouteCacheCmd::Idle {
                cache.evaluate(&RouteCacheIn { lookup: None, cmd });
                cache.commit();
            }
        }
        for (count, &d) in self.counts.iter_mut().zip(delta) {
            *count = counted(*count, d);
        }
    }
}
