//! Credit counters of one output port, per VC of the buffer at the far end of its link.
//!
//! The counter an RTL output keeps (`blocks::credit_counter`) moves every cycle a flit leaves
//! (one credit spent) or a credit comes back. Both happen in streams: a packet that wins the
//! output sends one flit per cycle from head to tail, and the far buffer frees a packet's flits
//! one per cycle, announcing each such credit stream by a record when it starts and one when it
//! returns its last credit (`wire::link::Backward`). So the count is a closed form of the streams:
//!
//! `credits(through t) = Cap − flits sent by the end of t + credits returned by the end of t`,
//!
//! which the switch evaluates only where something reads it (an arbitration, a detector, a
//! waveform, an invariant check) instead of stepping a counter every cycle. The values are those
//! the per-cycle counter holds; a property test steps both side by side.

use crate::wire::link::{Backward, Lanes, streamed};

/// The credit streams coming back on one VC, summed in closed form.
///
/// With `n` streams running, started in cycles `r_1..r_n`, the credits returned by the end of
/// cycle `t` are `K + n (t + 1) − Σ r_i`, where `K` collects the streams that stopped: a stream
/// that started in `r` and returned its last credit in `e` gave `e + 1 − r`, which is `K += e + 1`
/// with its `r` left in the sum. The streams that stopped in the latest stop cycle still count as
/// running for a read of the cycle before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Returns {
    running: u32,
    last_stop_count: u32,
    stopped: u64,
    start_sum: u64,
    last_stop: u64,
    announced: u64,
}

impl Returns {
    fn returned(&self, through: u64) -> u64 {
        let mut r =
            (self.stopped + self.running as u64 * (through + 1)).wrapping_sub(self.start_sum);
        if through < self.last_stop {
            r = r.wrapping_sub(self.last_stop_count as u64 * (self.last_stop - through));
        }
        r
    }

    /// Whether a credit comes back in cycle `now`.
    fn arriving(&self, now: u64) -> bool {
        self.running > 0 || (self.last_stop == now && self.last_stop_count > 0)
    }
}

/// One VC's counters: the flits of whole packets sent on it, the packet sending on it (one flit
/// per cycle from `send_start`; `send_len` 0 when none), the credit streams coming back and the
/// far buffer's capacity, in one cache line, as a credit read touches them all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[repr(align(64))]
struct VcCredits {
    /// Flits of whole packets sent.
    sent: u64,
    send_start: u64,
    send_len: u16,
    cap: u16,
    returns: Returns,
}

const _: () = assert!(
    size_of::<VcCredits>() == 64,
    "a VC's counters fill one cache line"
);

/// The credit counters of one output, per VC lane (`V`, see `wire::link::FEW_VCS`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OutputCredits<const V: usize> {
    #[serde(with = "serde_big_array::BigArray")]
    vcs: [VcCredits; V],
}

/// The credit streams of a return record do not add up: more stopped than were running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamsOutOfStep {
    /// VC of the far buffer.
    pub vc: usize,
}

impl<const V: usize> OutputCredits<V> {
    /// Counters for a far buffer of `cap` flits per VC, all credits free.
    pub fn new(cap: u16) -> Self {
        let () = Lanes::<V>::OK;
        OutputCredits {
            vcs: [VcCredits {
                cap,
                ..VcCredits::default()
            }; V],
        }
    }

    /// Capacity of each VC of the far buffer.
    pub fn cap(&self) -> u16 {
        self.vcs[0].cap
    }

    /// Flits sent on `vc` by the end of cycle `through`.
    #[inline]
    pub fn sent(&self, vc: usize, through: u64) -> u64 {
        let c = &self.vcs[vc & (V - 1)];
        c.sent + streamed(c.send_start, c.send_len, through) as u64
    }

    /// Credits returned on `vc` by the end of cycle `through`.
    #[inline]
    pub fn returned(&self, vc: usize, through: u64) -> u64 {
        self.vcs[vc & (V - 1)].returns.returned(through)
    }

    /// Credits on `vc` whose streams have started and that have not come back by the end of
    /// cycle `through`.
    pub fn pending(&self, vc: usize, through: u64) -> u64 {
        let r = &self.vcs[vc & (V - 1)].returns;
        r.announced - r.returned(through)
    }

    /// Free credits on `vc` at the end of cycle `through` (`cnt_q` of the cycle after). More
    /// credits back than flits sent saturates at `Cap` here, as in the counter; the switch checks
    /// for it with [`OutputCredits::overflow`].
    #[inline]
    pub fn credits(&self, vc: usize, through: u64) -> u16 {
        let sent = self.sent(vc, through);
        let back = self.returned(vc, through);
        let cap = self.vcs[vc & (V - 1)].cap;
        if back >= sent {
            cap
        } else {
            (cap as u64).saturating_sub(sent - back) as u16
        }
    }

    /// The first VC with more credits back than flits sent by the end of `through`.
    pub fn overflow(&self, vcs: usize, through: u64) -> Option<usize> {
        (0..vcs).find(|&v| self.overflows(v, through))
    }

    /// Whether `vc` has more credits back than flits sent by the end of `through`.
    #[inline]
    pub fn overflows(&self, vc: usize, through: u64) -> bool {
        self.returned(vc, through) > self.sent(vc, through)
    }

    /// A packet of `len` flits starts leaving on `vc`, one flit per cycle from `start`.
    pub fn start_sending(&mut self, vc: usize, start: u64, len: u16) {
        debug_assert!(self.vcs.iter().all(|c| c.send_len == 0));
        let c = &mut self.vcs[vc & (V - 1)];
        (c.send_start, c.send_len) = (start, len);
    }

    /// The packet being sent on `vc` has sent its tail.
    pub fn finish_sending(&mut self, vc: usize) {
        let c = &mut self.vcs[vc & (V - 1)];
        c.sent += c.send_len as u64;
        c.send_len = 0;
    }

    /// The first cycle after `now` whose arbitration (which reads the credits through the cycle
    /// before) could find `len` credits on `vc`, if the streams coming back keep their current
    /// rate; `None` when fewer are free and none is coming back.
    #[inline]
    pub fn first_fit(&self, vc: usize, len: u16, now: u64) -> Option<u64> {
        let have = self.credits(vc, now);
        if have >= len {
            return Some(now + 1);
        }
        let rate = self.running(vc);
        (rate > 0).then(|| now + 1 + ((len - have) as u64).div_ceil(rate))
    }

    /// Takes in the credit streams of a record arriving in cycle `now`.
    pub fn arrive(&mut self, b: &Backward<V>, now: u64) -> Result<(), StreamsOutOfStep> {
        for v in 0..V {
            self.arrive_on(v, b.start[v], b.start_flits[v], b.stop[v], now)?;
        }
        Ok(())
    }

    /// The part of a record that concerns VC `v`: `starts` streams start (of `flits` flits in
    /// all) and `stops` stop in `now`.
    #[inline]
    pub fn arrive_on(
        &mut self,
        v: usize,
        starts: u8,
        flits: u32,
        stops: u8,
        now: u64,
    ) -> Result<(), StreamsOutOfStep> {
        let r = &mut self.vcs[v & (V - 1)].returns;
        let (start, stop) = (starts as u64, stops as u64);
        if start > 0 {
            r.running += start as u32;
            r.start_sum += start * now;
            r.announced += flits as u64;
        }
        if stop > 0 {
            if stop > r.running as u64 {
                return Err(StreamsOutOfStep { vc: v });
            }
            r.running -= stop as u32;
            r.stopped += stop * (now + 1);
            // Several records of one cycle (the event engine files them stream by stream)
            // count as one.
            if r.last_stop == now && r.last_stop_count > 0 {
                r.last_stop_count += stop as u32;
            } else {
                r.last_stop = now;
                r.last_stop_count = stop as u32;
            }
        }
        Ok(())
    }

    /// Credit streams running on `vc` after the records taken in so far: credits that come back
    /// per cycle from the next cycle on, until a record changes it.
    pub fn running(&self, vc: usize) -> u64 {
        self.vcs[vc & (V - 1)].returns.running as u64
    }

    /// A number that grows with every record taken in on the first `vcs` VCs (a stream that
    /// starts announces at least a flit, one that stops adds its last cycle plus one) and
    /// changes with nothing else: a reader that saw it unchanged knows no stream started or
    /// stopped in between.
    #[inline]
    pub fn records(&self, vcs: usize) -> u64 {
        let lane = |c: &VcCredits| c.returns.announced + c.returns.stopped;
        // The first two lanes read whatever `vcs` (a lane past it takes in no record).
        let (two, rest) = self.vcs.split_at(V.min(2));
        two.iter().map(lane).sum::<u64>()
            + rest[..vcs.saturating_sub(2).min(rest.len())]
                .iter()
                .map(lane)
                .sum::<u64>()
    }

    /// Whether credits come back in cycle `now` (on any VC).
    pub fn arriving(&self, now: u64) -> bool {
        self.vcs.iter().any(|c| c.returns.arriving(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::Block;
    use crate::blocks::credit_counter::{CreditCounter, CreditCounterIn};
    use crate::wire::link::{CreditReturns, FEW_VCS};
    use proptest::prelude::*;

    proptest! {
        /// Packets leave one after the other on two VCs; the far buffer frees each after a
        /// random delay, so streams on one VC overlap and stop in any order. Against the
        /// per-cycle counter block fed by the per-cycle returns, cycle by cycle, both the value
        /// after each cycle and the value of the cycle before, read after this cycle's events.
        #[test]
        fn closed_form_matches_the_per_cycle_counter(
            sends in prop::collection::vec((0usize..2, 1u16..6, 0u64..4, 1u64..12), 1..14),
        ) {
            let cap = 40u16;
            let mut lazy = OutputCredits::<FEW_VCS>::new(cap);
            let mut counters: Vec<CreditCounter> =
                (0..2).map(|_| CreditCounter::new(cap as usize)).collect();
            let mut per_cycle = CreditReturns::<FEW_VCS>::default();
            let mut plan = Vec::new();
            let mut streams = Vec::new();
            let mut t = 1u64;
            for &(vc, len, gap, delay) in &sends {
                t += gap;
                plan.push((vc, t, len));
                streams.push((vc, t + delay, len));
                t += len as u64;
            }
            let end = streams.iter().map(|&(_, s, len)| s + len as u64).max().unwrap() + 3;
            let mut returned_so_far = [0u64; 2];
            for now in 1..end {
                let before: Vec<u16> = counters.iter().map(|c| c.credits()).collect();
                let mut b = Backward::default();
                for &(vc, s, len) in &streams {
                    if s == now {
                        b.start_stream(vc, len);
                    }
                    if s + len as u64 - 1 == now {
                        b.stop_stream(vc);
                    }
                }
                if b.has_credits() {
                    per_cycle.arrive(&b);
                    prop_assert!(lazy.arrive(&b, now).is_ok());
                }
                let sending = plan.iter().find(|&&(_, s, len)| now >= s && now < s + len as u64);
                if let Some(&(vc, s, len)) = plan.iter().find(|&&(_, s, _)| s == now) {
                    lazy.start_sending(vc, s, len);
                }
                for (v, &c) in before.iter().enumerate() {
                    prop_assert_eq!(lazy.credits(v, now - 1), c, "VC {} before cycle {}", v, now);
                }
                prop_assert_eq!(lazy.arriving(now), per_cycle.any());
                for (v, c) in counters.iter_mut().enumerate() {
                    let dec = sending.is_some_and(|&(vc, _, _)| vc == v);
                    let inc = per_cycle.now(v);
                    returned_so_far[v] += inc as u64;
                    c.step(&CreditCounterIn { dec, inc, need: 0 });
                    prop_assert!(c.regs().err.is_empty());
                }
                if per_cycle.any() {
                    prop_assert!(per_cycle.end_cycle().is_some());
                }
                prop_assert_eq!(lazy.overflow(2, now), None);
                for (v, c) in counters.iter().enumerate() {
                    prop_assert_eq!(lazy.credits(v, now), c.credits(), "VC {} after cycle {}", v, now);
                    prop_assert_eq!(lazy.returned(v, now), returned_so_far[v]);
                    prop_assert_eq!(lazy.pending(v, now), per_cycle.pending(v));
                }
                if let Some(&(vc, s, len)) = sending
                    && s + len as u64 - 1 == now
                {
                    lazy.finish_sending(vc);
                }
            }
        }
    }

    #[test]
    fn credits_back_beyond_those_spent_and_streams_out_of_step_are_caught() {
        let mut c = OutputCredits::<FEW_VCS>::new(8);
        let mut b = Backward::default();
        b.start_stream(1, 3);
        c.arrive(&b, 5).unwrap();
        assert_eq!(c.overflow(2, 4), None);
        assert_eq!(c.overflow(2, 5), Some(1), "a credit back with none spent");
        assert_eq!(c.credits(1, 7), 8, "saturates at Cap");
        let mut stop = Backward::default();
        stop.stop_stream(0);
        assert_eq!(c.arrive(&stop, 6), Err(StreamsOutOfStep { vc: 0 }));
    }
}
