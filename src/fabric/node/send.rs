//! The HCA's send side: a queue pair per destination node, their send queues kept in the HCA's
//! send memory in posting order, and the send scheduler that picks the packet the link takes next.
//!
//! A packet leaves on a channel chosen when it starts: the AFC when a live ARN entry isolates its
//! destination (ARN+AFI), its own VC otherwise. Each channel serves its queue pairs in the order
//! their packets were posted, so the oldest packet mapped to a channel is the head of its queue
//! pair, and a queue pair's packets leave in order. The scheduler starts the oldest packet of
//! each channel when the switch has room for all of it; when both a regular channel and the AFC
//! can start one, they take turns. A channel without credits holds back only its own queue pairs
//! (`docs/switch.md`, "The HCA's send side").

use super::*;

/// Packets one queue pair's send queue holds: a message that would take it beyond this is not
/// posted (counted in `generation_stalls`).
pub const QP_DEPTH: usize = 128;

impl<const V: usize> EndNode<V> {
    /// Whether a live entry may isolate a packet in cycle `now` (ARN+AFI with an entry alive).
    #[inline]
    fn isolating(&self, now: u64) -> bool {
        now < self.arn_live_until && self.params.afc().is_some()
    }

    /// The regular VCs a queued packet may be on, as a mask.
    #[inline]
    fn regular_channels(&self) -> u32 {
        (1u32 << self.params.queuing.regular_vcs().min(31)) - 1
    }

    /// Whether `pkt` matches a live entry in cycle `now` and so leaves in the AFC (ARN+AFI only).
    pub(super) fn isolates(&self, pkt: &Packet, now: u64) -> bool {
        if !self.isolating(now) {
            return false;
        }
        let dest = pkt.dlid >> self.lmc << self.lmc;
        self.arn
            .iter()
            .any(|e| e.expires > now && e.dest == dest && e.vc == pkt.orig_vc)
    }

    /// Whether the switch has room on `vc` for all of `pkt`, with the credits of the start of
    /// cycle `now`.
    #[inline]
    fn fits(&self, vc: u8, len: u16, now: u64) -> bool {
        self.credits.credits(vc as usize, now.saturating_sub(1)) >= len
    }

    /// Calls `f(index, channel, isolated)` on the oldest queued packet of each channel it would
    /// leave on in cycle `now`, in posting order, until `f` returns true or every channel has
    /// been met.
    #[inline]
    fn channel_heads(&self, now: u64, mut f: impl FnMut(usize, u8, bool) -> bool) {
        let isolating = self.isolating(now);
        let afc = self.params.afc().unwrap_or(0);
        let all = self.regular_channels() | if isolating { 1u32 << afc } else { 0 };
        let mut seen = 0u32;
        for (i, p) in self.queue.iter().enumerate() {
            let iso = isolating && self.isolates(p, now);
            let ch = if iso { afc } else { p.vc };
            let bit = 1u32 << ch;
            if seen & bit != 0 {
                continue;
            }
            seen |= bit;
            if f(i, ch, iso) || seen & all == all {
                return;
            }
        }
    }

    /// The packet to start in cycle `now`, if any: its place in the send memory and whether it
    /// leaves in the AFC.
    pub(super) fn pick(&self, now: u64) -> Option<(usize, bool)> {
        let isolating = self.isolating(now);
        let (mut regular, mut isolated) = (None, None);
        self.channel_heads(now, |i, ch, iso| {
            if self.fits(ch, self.queue.get(i).map_or(0, |p| p.len), now) {
                if iso {
                    isolated.get_or_insert(i);
                } else {
                    regular.get_or_insert(i);
                }
            }
            regular.is_some() && (isolated.is_some() || !isolating)
        });
        match (regular, isolated) {
            (Some(r), Some(_)) if self.afc_last => Some((r, false)),
            (_, Some(a)) => Some((a, true)),
            (Some(r), None) => Some((r, false)),
            (None, None) => None,
        }
    }

    /// Takes the packet at place `i` out of the send memory, the others keeping their order.
    pub(super) fn take(&mut self, i: usize) -> Packet {
        for j in (1..=i).rev() {
            self.queue.swap(j, j - 1);
        }
        self.queue.pop_front().unwrap_or_default()
    }

    /// Packets queued for destination node `dest`: its queue pair's send queue.
    pub(super) fn qp_len(&self, dest: u32) -> usize {
        self.queue
            .iter()
            .filter(|p| (p.dlid >> self.lmc) as u32 == dest)
            .count()
    }

    /// With the injector free after cycle `now`: the first cycle after it in which a packet
    /// could start, if nothing arrives meanwhile (credit records and ARNs wake the node): the
    /// credits coming back at their current rate reach a channel head's length. Not later than
    /// the next cycle while ARN entries live (they decide which channel a packet takes).
    pub(super) fn start_possible(&self, now: u64) -> u64 {
        if now + 1 < self.arn_live_until {
            return now + 1;
        }
        let fit = |vc: u8, len: u16| {
            let have = self.credits.credits(vc as usize, now);
            if have >= len {
                return now + 1;
            }
            match self.credits.running(vc as usize) {
                0 => u64::MAX,
                rate => now + 1 + ((len - have) as u64).div_ceil(rate),
            }
        };
        let mut first = u64::MAX;
        self.channel_heads(now + 1, |i, ch, _| {
            first = first.min(fit(ch, self.queue.get(i).map_or(0, |p| p.len)));
            first == now + 1
        });
        first
    }
}
