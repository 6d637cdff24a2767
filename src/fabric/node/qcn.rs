//! The reaction point (RP) of IEEE 802.1Qau quantized congestion notification (QCN) at an HCA:
//! the source's half of QCN. A congestion point that samples a packet of a congested queue sends
//! its source a congestion notification message (CNM) carrying the quantised feedback |Fb|
//! (6 bits); the source's rate limiter for that flow then cuts its current rate CR by
//! `Gd * |Fb|`, remembers the rate before the cut as its target rate TR, and recovers towards it
//! on events of a byte counter (every `BC_LIMIT` sent) and a timer (every `T`): fast recovery
//! (CR halves its distance to TR), then active increase (TR grows by `R_AI`), then hyper-active
//! increase (TR grows by multiples of `R_HAI`). A limiter is released when CR is back at line
//! rate. The flow is the queue pair: the model's HCA has one queue pair per destination, so the
//! limiters are kept per destination, in a table like InfiniBand CC's (`node::cc`): the send
//! scheduler reads both through `cc::Table`, and `started` means the same in both.
//!
//! Where this departs from the standard:
//! - The byte counter and timer periods are not randomised (the standard draws them from 85% to
//!   115% of their nominal values): the model is deterministic.
//! - Rates are fixed-point fractions of the line rate ([`RATE_ONE`] is one flit per cycle), not
//!   bits per second, and the byte counter counts flits.
//! - The pseudo-code's cut of TR to TR / 8 when TR exceeds 10 CR at the first recovery event
//!   (kept by some reference implementations) is not modelled.
//! - A CNM beyond the table's limiters (all slowing other flows) is dropped.

use super::EndNode;
use super::cc::{Hold, Limiters, Table};
use crate::wire::Cnm;

/// The line rate in rate units: one flit per cycle. Rates are fractions of it.
pub const RATE_ONE: u32 = 1 << 20;

/// The denominator of [`QcnReaction::gd`].
const GD_ONE: u64 = 1 << 16;

/// The reaction points' settings (the same on every HCA of a fabric).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QcnReaction {
    /// Gd, the decrease gain, in 1/65536ths (the standard's 1/128 is 512).
    pub gd: u32,
    /// BC_LIMIT in flits: what a flow sends between two byte-counter events in fast recovery
    /// (half of it in active increase). 0 acts as 1.
    pub bc_limit: u64,
    /// T in cycles: the timer period in fast recovery (half of it in active increase). 0 acts
    /// as 1.
    pub timer: u64,
    /// F: the stage (byte-counter or timer events since the last CNM) from which that counter's
    /// events are active increase (standard 5).
    pub fast_recovery: u8,
    /// R_AI in [`RATE_ONE`] units: what an event of active increase adds to the target rate.
    pub r_ai: u32,
    /// R_HAI in [`RATE_ONE`] units: the step of hyper-active increase.
    pub r_hai: u32,
    /// The least rate a limiter lowers a flow to, [`RATE_ONE`] units (0 acts as 1).
    pub min_rate: u32,
    /// Rate limiters per HCA: flows it can slow at once.
    pub limiters: u16,
}

/// One rate limiter: the queue pair to `dest`, slowed while `active`, its next packet may start
/// from cycle `next` (which holds even after the limiter is released, until it passes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Limiter {
    dest: u32,
    active: bool,
    /// CR, the current rate.
    cr: u32,
    /// TR, the target rate.
    tr: u32,
    /// Flits to the next byte-counter event.
    bc_left: u64,
    /// Byte-counter events since the last CNM.
    bc_stage: u32,
    /// Timer expiries since the last CNM.
    timer_stage: u32,
    /// The cycle of the next timer expiry.
    timer_at: u64,
    /// The first cycle the queue pair's next packet may start.
    next: u64,
}

impl Limiter {
    /// An entry for `dest` at line rate, its timer not running, holding until `next`.
    fn fresh(dest: u32, next: u64) -> Self {
        Limiter {
            dest,
            active: true,
            cr: RATE_ONE,
            tr: RATE_ONE,
            bc_left: 0,
            bc_stage: 0,
            timer_stage: 0,
            timer_at: u64::MAX,
            next,
        }
    }

    /// The rate increase after a byte-counter or timer event (the stages already count it);
    /// releases the limiter when CR is back at line rate.
    fn increase(&mut self, cfg: &QcnReaction) {
        let f = cfg.fast_recovery as u32;
        let step = if self.bc_stage >= f && self.timer_stage >= f {
            // Hyper-active increase. A stage counts the event just taken, so the first event
            // with both stages at F adds one R_HAI: (min - F + 1), not (min - F).
            cfg.r_hai as u64 * (self.bc_stage.min(self.timer_stage) - f + 1) as u64
        } else if self.bc_stage >= f || self.timer_stage >= f {
            cfg.r_ai as u64
        } else {
            0 // Fast recovery: TR holds.
        };
        let tr = self.tr as u64 + step;
        // CR halves its distance to TR, rounded up so that it reaches TR.
        let cr = (self.cr as u64 + tr).div_ceil(2);
        self.tr = tr.min(RATE_ONE as u64) as u32;
        self.cr = cr.min(RATE_ONE as u64) as u32;
        if self.cr == RATE_ONE {
            self.active = false;
        }
    }

    /// The timer's expiries up to cycle `now`, each an event, while the limiter is active.
    fn advance(&mut self, cfg: &QcnReaction, now: u64) {
        while self.active && self.timer_at <= now {
            self.timer_stage = self.timer_stage.saturating_add(1);
            self.increase(cfg);
            let period = period(cfg.timer, self.timer_stage, cfg);
            self.timer_at = self.timer_at.saturating_add(period);
        }
    }
}

/// A counter's period after its `stage`-th event: `full` in fast recovery, half of it from
/// stage F on (at least 1).
#[inline]
fn period(full: u64, stage: u32, cfg: &QcnReaction) -> u64 {
    if stage < cfg.fast_recovery as u32 {
        full.max(1)
    } else {
        (full / 2).max(1)
    }
}

/// One HCA's QCN reaction points.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct NodeQcn {
    cfg: QcnReaction,
    /// At most `cfg.limiters`, room made when built (stepping allocates nothing).
    limiters: Vec<Limiter>,
}

impl NodeQcn {
    /// An HCA's table with no limiter in use.
    pub(super) fn new(cfg: QcnReaction) -> Self {
        NodeQcn {
            cfg,
            limiters: Vec::with_capacity(cfg.limiters as usize),
        }
    }

    /// A CNM with feedback |Fb| = `fb` (1..=63) for the flow to `dest` arrives in cycle `now`:
    /// its rate is cut. Returns false when every limiter still slows another flow (the CNM is
    /// dropped).
    pub(super) fn cnm(&mut self, dest: u32, fb: u8, now: u64) -> bool {
        let cfg = self.cfg;
        let k = match self.limiters.iter().position(|l| l.dest == dest) {
            Some(k) => {
                self.limiters[k].advance(&cfg, now);
                k
            }
            None => {
                // The timers run while nothing is sent: a limiter they have released by now,
                // whose last spacing has passed, slows nothing and is taken.
                for l in &mut self.limiters {
                    l.advance(&cfg, now);
                }
                let free = self
                    .limiters
                    .iter()
                    .position(|l| !l.active && l.next <= now);
                match free {
                    Some(k) => {
                        self.limiters[k] = Limiter::fresh(dest, 0);
                        k
                    }
                    None if self.limiters.len() < cfg.limiters as usize => {
                        self.limiters.push(Limiter::fresh(dest, 0));
                        self.limiters.len() - 1
                    }
                    None => return false,
                }
            }
        };
        let l = &mut self.limiters[k];
        if !l.active {
            // Released: back at line rate, the spacing of its last packet kept.
            *l = Limiter::fresh(dest, l.next);
        }
        let floor = cfg.min_rate.clamp(1, RATE_ONE) as u64;
        let cut = l.cr as u64 * cfg.gd as u64 * fb as u64 / GD_ONE;
        l.tr = l.cr;
        l.cr = (l.cr as u64).saturating_sub(cut).max(floor) as u32;
        l.bc_stage = 0;
        l.timer_stage = 0;
        l.bc_left = cfg.bc_limit.max(1);
        l.timer_at = now.saturating_add(cfg.timer.max(1));
        true
    }

    /// A packet of `len` flits to `dest` starts in cycle `now`: the next one of its queue pair
    /// waits `len` flit times at the current rate, and the byte counter counts the packet.
    /// Whether a limiter slows the queue pair (it is then held back from the next cycle).
    pub(super) fn started(&mut self, dest: u32, len: u16, now: u64) -> bool {
        let cfg = self.cfg;
        let Some(l) = self
            .limiters
            .iter_mut()
            .find(|l| l.dest == dest && l.active)
        else {
            return false;
        };
        l.advance(&cfg, now);
        if !l.active {
            return false;
        }
        l.next = now + (len as u64 * RATE_ONE as u64).div_ceil(l.cr as u64);
        // Every flit counts once: a packet longer than what is left of the period ends it and
        // its excess counts toward the next ones (several events if it spans several periods).
        let mut sent = len as u64;
        while l.active && sent >= l.bc_left {
            sent -= l.bc_left;
            l.bc_stage = l.bc_stage.saturating_add(1);
            l.increase(&cfg);
            l.bc_left = period(cfg.bc_limit, l.bc_stage, &cfg);
        }
        if l.active {
            l.bc_left -= sent;
        }
        true
    }

    /// The current rate of the active limiter of `dest`, as of its last event (not advanced in
    /// time); `None` when no limiter slows it.
    pub(super) fn rate(&self, dest: u32) -> Option<u32> {
        self.active(dest).map(|l| l.cr)
    }

    /// The target rate of the active limiter of `dest`, like [`NodeQcn::rate`].
    #[cfg(test)]
    pub(super) fn target(&self, dest: u32) -> Option<u32> {
        self.active(dest).map(|l| l.tr)
    }

    /// The active limiter of `dest`.
    fn active(&self, dest: u32) -> Option<&Limiter> {
        self.limiters.iter().find(|l| l.dest == dest && l.active)
    }
}

impl Hold for Limiter {
    fn dest(&self) -> u32 {
        self.dest
    }
    fn next(&self) -> u64 {
        self.next
    }
}

impl Table for NodeQcn {
    type Entry = Limiter;
    fn entries(&self) -> &[Limiter] {
        &self.limiters
    }
}

impl<const V: usize> EndNode<V> {
    /// Turns IEEE 802.1Qau's reaction points on.
    pub fn set_qcn(&mut self, cfg: QcnReaction) {
        self.qcn = Some(Box::new(NodeQcn::new(cfg)));
    }

    /// Under QCN, the rate of the flow to `dest` as its limiter last set it, in [`RATE_ONE`]
    /// units (`None` while no limiter slows it).
    pub fn qcn_rate(&self, dest: u32) -> Option<u32> {
        self.qcn.as_deref().and_then(|q| q.rate(dest))
    }

    /// The rate limiters of source congestion control, InfiniBand's or QCN's, when on.
    #[inline]
    pub(super) fn limiters(&self) -> Option<&dyn Limiters> {
        match (&self.cc, &self.qcn) {
            (Some(c), _) => Some(&**c),
            (None, Some(q)) => Some(&**q),
            (None, None) => None,
        }
    }

    /// A congestion notification reached the HCA in cycle `now` on its link's return
    /// direction: the reaction point of the flow it names slows it (a CNM for which no limiter
    /// is free is dropped and counted).
    pub(super) fn qcn_received(&mut self, c: Cnm, now: u64) {
        self.stats.cnms_received += 1;
        let dest = (c.dest >> self.lmc) as u32;
        if let Some(q) = self.qcn.as_deref_mut()
            && !q.cnm(dest, c.fb, now)
        {
            self.stats.cnms_dropped += 1;
        }
    }
}
