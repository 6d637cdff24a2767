//! The HCA's half of InfiniBand congestion control (IBTA annex A10; the CA congestion setting and
//! congestion control table that OpenSM programs): a destination answers each packet that
//! arrives marked with FECN by a congestion notification packet (CNP, one flit carrying BECN) to
//! its source, sent ahead of its data; a source keeps, per destination it was told about, a
//! congestion control table index (CCTI) that each BECN raises by `CCTI_Increase` (up to
//! `CCTI_Limit`) and each expiry of the `CCTI_Timer` lowers by one, and spaces the packets of
//! that queue pair by the table's inter-packet delay at that index. `docs/ib_cc.md` has the
//! decisions the annex leaves to the implementation.

use super::*;

/// The channel adapters' congestion control settings (the same on every HCA of a fabric).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CaCongestion {
    /// `CCTI_Increase`: what a BECN adds to its queue pair's index.
    pub ccti_increase: u16,
    /// `CCTI_Limit`: the largest index (the table has `CCTI_Limit + 1` entries).
    pub ccti_limit: u16,
    /// `CCTI_Timer` in cycles: at every multiple of it, every index falls by one.
    pub ccti_timer: u64,
    /// The table is linear: entry i delays a queue pair's next packet by `i * ipd_step` cycles
    /// after the end of its last one.
    pub ipd_step: u64,
    /// Rate limiters per HCA: queue pairs it can slow at once. A BECN for another destination
    /// while every limiter still slows its own is dropped and counted.
    #[serde(default = "default_limiters")]
    pub limiters: u16,
}

/// Rate limiters per HCA by default.
pub const LIMITERS: u16 = 64;

fn default_limiters() -> u16 {
    LIMITERS
}

impl CaCongestion {
    /// The inter-packet delay, in cycles, of table entry `ccti`.
    #[inline]
    pub fn ipd(&self, ccti: u16) -> u64 {
        ccti as u64 * self.ipd_step
    }
}

/// A rate limiter entry as the send scheduler reads it: the queue pair it is for (by
/// destination) and the first cycle that queue pair's next packet may start.
pub(super) trait Hold {
    fn dest(&self) -> u32;
    fn next(&self) -> u64;
}

/// A source's table of per-destination rate limiters, InfiniBand CC's ([`NodeCc`]) or QCN's
/// reaction points (`node::qcn`).
pub(super) trait Table {
    type Entry: Hold;
    /// The entries in use.
    fn entries(&self) -> &[Self::Entry];
}

/// What the send scheduler reads of a source's rate limiters, the same for every [`Table`].
pub(super) trait Limiters {
    /// Whether the queue pair to `dest` may not start a packet in cycle `now`.
    fn holds(&self, dest: u32, now: u64) -> bool;
    /// Whether some queue pair may not start a packet in cycle `now`.
    fn holds_any(&self, now: u64) -> bool;
    /// The first cycle after `now` in which a queue pair held in `now` may start again.
    fn next_release(&self, now: u64) -> u64;
}

impl<T: Table> Limiters for T {
    #[inline]
    fn holds(&self, dest: u32, now: u64) -> bool {
        self.entries()
            .iter()
            .any(|l| l.dest() == dest && l.next() > now)
    }

    #[inline]
    fn holds_any(&self, now: u64) -> bool {
        self.entries().iter().any(|l| l.next() > now)
    }

    fn next_release(&self, now: u64) -> u64 {
        self.entries()
            .iter()
            .map(|l| l.next())
            .filter(|&n| n > now)
            .min()
            .unwrap_or(u64::MAX)
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

impl Table for NodeCc {
    type Entry = Limiter;
    fn entries(&self) -> &[Limiter] {
        &self.limiters
    }
}

/// CNPs a destination holds waiting for its link: a FECN beyond them is not answered (counted).
pub const CNP_QUEUE: usize = 32;

/// One rate limiter entry: the queue pair to `dest` is at index `ccti` as of timer tick `tick`
/// (cycle `tick * CCTI_Timer`), and its next packet may start from cycle `next`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Limiter {
    dest: u32,
    ccti: u16,
    tick: u64,
    next: u64,
}

/// One HCA's congestion control state.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct NodeCc {
    cfg: CaCongestion,
    /// At most `cfg.limiters`, room made when built (stepping allocates nothing).
    limiters: Vec<Limiter>,
    /// Sources to send a CNP to, oldest first.
    cnps: heapless::Vec<u32, CNP_QUEUE>,
}

impl NodeCc {
    pub(super) fn new(cfg: CaCongestion) -> Self {
        NodeCc {
            cfg,
            limiters: Vec::with_capacity(cfg.limiters as usize),
            cnps: heapless::Vec::new(),
        }
    }

    /// Entry `l`'s index in cycle `now`: lowered by one at each timer expiry since its tick.
    #[inline]
    fn ccti(&self, l: &Limiter, now: u64) -> u16 {
        let ticks = (now / self.cfg.ccti_timer).saturating_sub(l.tick);
        l.ccti.saturating_sub(ticks.min(u16::MAX as u64) as u16)
    }

    /// The index of the queue pair to `dest` in cycle `now` (0 when it has no entry).
    pub(super) fn index(&self, dest: u32, now: u64) -> u16 {
        self.limiters
            .iter()
            .find(|l| l.dest == dest)
            .map_or(0, |l| self.ccti(l, now))
    }

    /// A BECN from `dest` arrives in cycle `now`: its queue pair's index rises. Returns false
    /// when every entry still slows another queue pair (the BECN is dropped).
    pub(super) fn becn(&mut self, dest: u32, now: u64) -> bool {
        let k = match self.limiters.iter().position(|l| l.dest == dest) {
            Some(k) => k,
            None => {
                // An entry back at index 0 whose delay has passed slows nothing: reuse it.
                let free = self
                    .limiters
                    .iter()
                    .position(|l| self.ccti(l, now) == 0 && l.next <= now);
                let fresh = Limiter {
                    dest,
                    ccti: 0,
                    tick: now / self.cfg.ccti_timer,
                    next: 0,
                };
                match free {
                    Some(k) => {
                        self.limiters[k] = fresh;
                        k
                    }
                    None if self.limiters.len() < self.cfg.limiters as usize => {
                        self.limiters.push(fresh);
                        self.limiters.len() - 1
                    }
                    None => return false,
                }
            }
        };
        let l = self.limiters[k];
        let ccti = self
            .ccti(&l, now)
            .saturating_add(self.cfg.ccti_increase)
            .min(self.cfg.ccti_limit);
        self.limiters[k] = Limiter {
            ccti,
            tick: now / self.cfg.ccti_timer,
            ..l
        };
        true
    }

    /// A packet of `len` flits to `dest` starts in cycle `now`: its queue pair's next one waits
    /// for its tail and the delay of its index. Whether a limiter slows the queue pair (it is
    /// then held back from the next cycle).
    pub(super) fn started(&mut self, dest: u32, len: u16, now: u64) -> bool {
        let cfg = self.cfg;
        let Some(k) = self.limiters.iter().position(|l| l.dest == dest) else {
            return false;
        };
        let l = self.limiters[k];
        let delay = cfg.ipd(self.ccti(&l, now));
        self.limiters[k].next = now + len as u64 + delay;
        true
    }

    /// A packet marked FECN from `src` arrived: a CNP to it waits. False when the CNPs waiting
    /// fill their queue (the FECN is not answered).
    pub(super) fn answer(&mut self, src: u32) -> bool {
        self.cnps.push(src).is_ok()
    }

    /// The source the oldest CNP waiting goes to.
    #[inline]
    pub(super) fn cnp_due(&self) -> Option<u32> {
        self.cnps.first().copied()
    }

    /// The oldest CNP waiting left.
    pub(super) fn cnp_sent(&mut self) {
        if !self.cnps.is_empty() {
            self.cnps.remove(0);
        }
    }
}

impl<const V: usize> EndNode<V> {
    /// A packet's tail arrived in cycle `now` under congestion control: a CNP is taken by the
    /// HCA (its BECN raises the index of the queue pair to its sender; true), a data packet
    /// marked FECN is answered by a CNP and delivered (false).
    pub(super) fn cc_received(&mut self, pkt: &Packet, now: u64) -> bool {
        let Some(cc) = self.cc.as_deref_mut() else {
            return false;
        };
        if pkt.flags.contains(PacketFlags::BECN) {
            self.stats.becns_received += 1;
            if !cc.becn(pkt.src as u32, now) {
                self.stats.becns_dropped += 1;
            }
            return true;
        }
        if pkt.flags.contains(PacketFlags::FECN) {
            self.stats.fecns_received += 1;
            if !cc.answer(pkt.src as u32) {
                self.stats.fecns_unanswered += 1;
            }
        }
        false
    }

    /// Data packet `pkt` starts in cycle `now` under congestion control: a queue pair a limiter
    /// slows is held back from the next cycle, which changes the channel heads.
    pub(super) fn cc_started(&mut self, pkt: &Packet, now: u64) {
        let dest = (pkt.dlid >> self.lmc) as u32;
        let slowed = match (self.cc.as_deref_mut(), self.qcn.as_deref_mut()) {
            (Some(cc), _) => cc.started(dest, pkt.len, now),
            (None, Some(q)) => q.started(dest, pkt.len, now),
            (None, None) => false,
        };
        if slowed {
            self.forget_heads();
        }
    }

    /// The CNP to start in cycle `now`, if one waits and its VC has a credit: one flit, BECN
    /// set, to the deterministic route of its destination, ahead of any data.
    pub(super) fn cnp_to_start(&self, now: u64) -> Option<Packet> {
        let dest = self.cc.as_deref()?.cnp_due()?;
        self.control_packet(dest, (PacketFlags::BECN, 0), now)
    }
}

#[cfg(test)]
#[path = "cc_tests.rs"]
mod tests;
