//! Snooped AR on the event engine: each switch's congestion table and snoop queue, and each
//! input's round-robin pointer, as the cycle engine keeps them (`src/cycle/qcn.rs`). The queue
//! gives the table one notification a clock edge, so it is kept as the first cycle its next
//! entry is taken (a notification queued in cycle `t` is written at the edge of
//! `max(t + 1, free)`). A table is brought to the start of a cycle only when a routing stage or
//! the notification path reads it: the edges between age its entries, and the queued
//! notifications due are written at their edges.

use super::*;
use crate::blocks::CongestionTable;
use crate::blocks::congestion_table::Snoop;
use crate::cycle::SNOOP_FIFO_DEPTH;
use crate::switch::SwitchParams;
use crate::switch::snoop::on_cnm;
use crate::wire::Cnm;
use std::collections::VecDeque;

/// A part's congestion tables (those of the other parts' switches stay at reset).
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct SnoopState {
    /// Per switch: its table, the first cycle whose clock edge it has not taken, the
    /// notifications queued for it with the edge each is written at, and the first edge free.
    tables: Vec<CongestionTable>,
    next: Vec<u64>,
    queued: Vec<VecDeque<(u64, Snoop)>>,
    free: Vec<u64>,
    /// Per flat input: the round-robin pointer among congested options.
    pub(super) rr: Vec<u8>,
}

impl SnoopState {
    /// The tables of switches of `ports[s]` ports, `inputs` flat inputs in all.
    pub(super) fn new(sp: &SwitchParams, ports: &[usize], inputs: usize) -> Self {
        SnoopState {
            tables: ports
                .iter()
                .map(|&p| CongestionTable::new(sp.snoop.entries as usize, 1, p, sp.snoop.ttl))
                .collect(),
            next: vec![0; ports.len()],
            queued: (0..ports.len())
                .map(|_| VecDeque::with_capacity(SNOOP_FIFO_DEPTH + 2))
                .collect(),
            free: vec![0; ports.len()],
            rr: vec![0; inputs],
        }
    }

    /// Switch `s`'s table as registered at the start of cycle `r`.
    pub(super) fn table_at(&mut self, s: usize, r: u64) -> &CongestionTable {
        let t = &mut self.tables[s];
        debug_assert!(self.next[s] <= r, "a table is read in time order");
        while let Some(&(c, sn)) = self.queued[s].front() {
            if c >= r {
                break;
            }
            t.age(c - self.next[s]);
            t.edge(Some(sn));
            self.next[s] = c + 1;
            self.queued[s].pop_front();
        }
        if r > self.next[s] {
            t.age(r - self.next[s]);
            self.next[s] = r;
        }
        t
    }

    /// Switch `s`'s table as last brought up to date ([`SnoopState::table_at`]).
    #[inline]
    pub(super) fn table_now(&self, s: usize) -> &CongestionTable {
        &self.tables[s]
    }

    /// Queues `sn` for switch `s`'s table in cycle `now`: whether there was room.
    fn queue(&mut self, s: usize, sn: Snoop, now: u64) -> bool {
        if self.free[s].saturating_sub(now + 1) >= SNOOP_FIFO_DEPTH as u64 {
            return false;
        }
        let at = self.free[s].max(now + 1);
        self.free[s] = at + 1;
        self.queued[s].push_back((at, sn));
        true
    }
}

impl<const V: usize> EventCore<V> {
    /// Snooped AR in cycle `now`: the CNM `c`, arrived at flat output `at` or made by its
    /// congestion point (`local`), is queued for the switch's table when the port is an option
    /// of its destination; whether the switch absorbs it.
    pub(super) fn snoop(&mut self, env: &Env<V>, at: u32, c: Cnm, local: bool, now: u64) -> bool {
        let Some(sn) = self.snoops.as_mut() else {
            return false;
        };
        let Place {
            switch,
            port,
            ports,
        } = self.ins[at as usize].place;
        let s = switch as usize;
        let lft = env.switches[s].lft();
        let table = sn.table_at(s, now);
        let (snoop, kept) = on_cnm(
            &env.params.switch,
            lft,
            ports as usize,
            port as u8,
            c,
            local,
            |d| table.mask(d),
        );
        if let Some(entry) = snoop
            && !sn.queue(s, entry, now)
        {
            self.stats.snoops_dropped += 1;
        }
        if kept {
            self.stats.cnms_absorbed += 1;
        }
        kept
    }
}
