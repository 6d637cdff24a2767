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
use std::cell::Cell;

/// Channel heads: (channel, place in the send memory, isolated), in posting order.
type Heads = heapless::Vec<(u8, u16, bool), 16>;

/// The (destination, VC) keys of the ARN entries live in one cycle, gathered once for a scan of
/// the send memory (state kept for speed: each packet is then checked against the live entries
/// only, not against every entry and its expiry).
type LiveKeys = heapless::Vec<(u16, u8), NODE_ARN_ENTRIES>;

/// The channel heads as of the cycles `from .. until`, in which the ARN entries isolate the
/// same destinations (state kept for speed: `EndNode::pick` would scan the send memory every
/// cycle an entry lives, and every time a packet leaves). Posting and taking a packet keep them;
/// a new entry empties the range (`until` 0) and the first expiry ends it: they are then
/// scanned again.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct ChannelHeads {
    from: u64,
    until: u64,
    pub(super) list: Heads,
}

impl ChannelHeads {
    /// Whether the heads hold in cycle `now`.
    #[inline]
    pub(super) fn hold(&self, now: u64) -> bool {
        (self.from..self.until).contains(&now)
    }
}

/// One queue pair's packets in the send memory, kept up to date as packets are posted and taken:
/// a message waiting for room in a queue pair asks every cycle the node steps, and counting the
/// send memory each time cost a fifth of a replay's run time (state kept for speed).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct QpCount(Cell<(u32, u16)>);

impl Default for QpCount {
    fn default() -> Self {
        QpCount(Cell::new((u32::MAX, 0)))
    }
}

impl QpCount {
    /// A packet to `dest` entered (`grew`) or left the send memory.
    #[inline]
    fn note(&self, dest: u32, grew: bool) {
        let (d, n) = self.0.get();
        if d == dest {
            self.0.set((d, if grew { n + 1 } else { n - 1 }));
        }
    }
}

/// Packets one queue pair's send queue holds: a message that would take it beyond this is not
/// posted (counted in `generation_stalls`).
pub const QP_DEPTH: usize = 128;

/// How the HCA's send memory ([`SOURCE_QUEUE`] packets) is shared among the regular VCs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SendMemory {
    /// One memory for every VC: a message is posted when the memory as a whole has room.
    #[default]
    Shared,
    /// An equal part per regular VC (`SOURCE_QUEUE / VCs` packets, rounded down): a message is
    /// posted when the part of its VC has room, so packets waiting on one VC never hold back
    /// the posting of messages on another.
    PerVc,
}

impl SendMemory {
    /// The packets of the send memory one of `vcs` regular VCs may fill when it is split, or
    /// `None` when it is shared.
    pub fn part(self, vcs: usize) -> Option<usize> {
        match self {
            SendMemory::Shared => None,
            SendMemory::PerVc => Some(SOURCE_QUEUE / vcs.max(1)),
        }
    }
}

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

    /// Whether `pkt` matches a live entry in cycle `now` and so leaves in the AFC (ARN+AFI only):
    /// the definition the scans by [`EndNode::live_keys`] are checked against.
    #[cfg(test)]
    pub(super) fn isolates(&self, pkt: &Packet, now: u64) -> bool {
        if !self.isolating(now) {
            return false;
        }
        let dest = pkt.dlid >> self.lmc << self.lmc;
        self.arn
            .iter()
            .any(|e| e.expires > now && e.dest == dest && e.vc == pkt.orig_vc)
    }

    /// The keys of the entries live in cycle `now` (none unless a live entry may isolate).
    fn live_keys(&self, now: u64) -> LiveKeys {
        let mut keys = LiveKeys::new();
        if self.isolating(now) {
            for e in self.arn.iter().filter(|e| e.expires > now) {
                let _ = keys.push((e.dest, e.vc));
            }
        }
        keys
    }

    /// The channel `pkt` would leave on in the cycle whose live entries are `keys`, and whether
    /// that is the AFC because one of them isolates it ([`EndNode::isolates`]).
    #[inline]
    fn channel(&self, pkt: &Packet, keys: &LiveKeys) -> (u8, bool) {
        let dest = pkt.dlid >> self.lmc << self.lmc;
        match keys.iter().any(|&(d, v)| d == dest && v == pkt.orig_vc) {
            true => (self.params.afc().unwrap_or(0), true),
            false => (pkt.vc, false),
        }
    }

    /// Whether the switch has room on `vc` for all of `pkt`, with the credits of the start of
    /// cycle `now`.
    #[inline]
    pub(super) fn fits(&self, vc: u8, len: u16, now: u64) -> bool {
        self.credits.credits(vc as usize, now.saturating_sub(1)) >= len
    }

    /// The oldest queued packet of each channel it would leave on in cycle `now`, in posting
    /// order, among the queue pairs free to start (congestion control holds back those its rate
    /// limiters slow): (channel, place in the send memory, isolated).
    pub(super) fn scan_heads(&self, now: u64) -> Heads {
        let lmc = self.lmc;
        match self.limiters().filter(|c| c.holds_any(now)) {
            Some(cc) => self.scan_heads_where(now, |p| !cc.holds((p.dlid >> lmc) as u32, now)),
            None => self.scan_heads_where(now, |_| true),
        }
    }

    /// Whether congestion control holds back `pkt`'s queue pair in cycle `now`.
    #[inline]
    fn held(&self, pkt: &Packet, now: u64) -> bool {
        self.limiters()
            .is_some_and(|cc| cc.holds((pkt.dlid >> self.lmc) as u32, now))
    }

    /// [`EndNode::scan_heads`] among the packets `free` lets start.
    fn scan_heads_where(&self, now: u64, free: impl Fn(&Packet) -> bool) -> Heads {
        let keys = self.live_keys(now);
        let afc = self.params.afc().unwrap_or(0);
        let all = self.regular_channels() | if keys.is_empty() { 0 } else { 1u32 << afc };
        let mut seen = 0u32;
        let mut heads = Heads::new();
        for (i, p) in self.queue.iter().enumerate() {
            let (ch, iso) = self.channel(p, &keys);
            let bit = 1u32 << ch;
            if seen & bit != 0 || !free(p) {
                continue;
            }
            seen |= bit;
            let _ = heads.push((ch, i as u16, iso));
            if seen & all == all {
                break;
            }
        }
        heads
    }

    /// Brings the channel heads up to cycle `now`: kept while the send memory and the ARN
    /// entries stay as they were and no entry expires (state kept for speed; debug builds check
    /// it against a scan).
    fn refresh_heads(&mut self, now: u64) {
        if self.heads.hold(now) {
            debug_assert_eq!(
                self.heads.list,
                self.scan_heads(now),
                "channel heads at {now}"
            );
            return;
        }
        self.heads.list = self.scan_heads(now);
        self.heads.from = now;
        // Nothing isolates until an entry is added; a queue pair held back is free again at
        // its limiter's release.
        let release = self.limiters().map_or(u64::MAX, |cc| cc.next_release(now));
        self.heads.until = self.isolation_ends(now).min(release);
    }

    /// While isolating in cycle `now`, the first cycle an ARN entry expires after it (when the
    /// channels' heads may change); `u64::MAX` when nothing isolates.
    fn isolation_ends(&self, now: u64) -> u64 {
        match self.isolating(now) {
            true => self
                .arn
                .iter()
                .filter(|e| e.expires > now)
                .map(|e| e.expires)
                .min()
                .unwrap_or(u64::MAX),
            false => u64::MAX,
        }
    }

    /// A packet was appended to the send memory in cycle `now`: it heads its channel if the
    /// channel had no packet.
    pub(super) fn note_posted(&mut self, now: u64) {
        if !self.heads.hold(now) {
            self.heads.until = 0;
            return;
        }
        let i = self.queue.len() - 1;
        let Some(&p) = self.queue.get(i) else {
            return;
        };
        let (ch, iso) = self.channel(&p, &self.live_keys(now));
        if !self.held(&p, now) && !self.heads.list.iter().any(|h| h.0 == ch) {
            let _ = self.heads.list.push((ch, i as u16, iso));
        }
    }

    /// The ARN entries changed: the channel heads are scanned again.
    pub(super) fn forget_heads(&mut self) {
        self.heads.until = 0;
    }

    /// The packet to start in cycle `now`, if any: its place in the send memory and whether it
    /// leaves in the AFC.
    pub(super) fn pick(&mut self, now: u64) -> Option<(usize, bool)> {
        self.refresh_heads(now);
        self.choose(&self.heads.list, now)
    }

    /// Of the channel heads `heads`, the packet to start in cycle `now` (see [`EndNode::pick`]).
    fn choose(&self, heads: &Heads, now: u64) -> Option<(usize, bool)> {
        let (mut regular, mut isolated) = (None, None);
        for &(ch, i, iso) in heads {
            let len = self.queue.get(i as usize).map_or(0, |p| p.len);
            if self.fits(ch, len, now) {
                if iso {
                    isolated.get_or_insert(i as usize);
                } else {
                    regular.get_or_insert(i as usize);
                }
            }
        }
        match (regular, isolated) {
            (Some(r), Some(_)) if self.afc_last => Some((r, false)),
            (_, Some(a)) => Some((a, true)),
            (Some(r), None) => Some((r, false)),
            (None, None) => None,
        }
    }

    /// Takes the packet at place `i` out of the send memory in cycle `now`, the others keeping
    /// their order. When it heads its channel in heads that hold in `now`, the heads stay up to
    /// date: the others move up a place and the channel's next packet, the first of it after
    /// place `i`, heads it (the older packets are on other channels); else they are scanned
    /// again at the next pick.
    pub(super) fn take(&mut self, i: usize, now: u64) -> Packet {
        for j in (1..=i).rev() {
            self.queue.swap(j, j - 1);
        }
        let head = self.heads.list.iter().position(|h| h.1 as usize == i);
        match head.filter(|_| self.heads.hold(now)) {
            Some(k) => {
                let ch = self.heads.list.remove(k).0;
                for h in self.heads.list.iter_mut().filter(|h| h.1 as usize > i) {
                    h.1 -= 1;
                }
                let keys = self.live_keys(now);
                // The pop below moves what is now at place `j` to `j - 1`.
                let next = self
                    .queue
                    .iter()
                    .enumerate()
                    .skip(i + 1)
                    .filter(|(_, p)| !self.held(p, now))
                    .map(|(j, p)| (j, self.channel(p, &keys)))
                    .find(|&(_, (c, _))| c == ch);
                if let Some((j, (_, iso))) = next {
                    let at = self
                        .heads
                        .list
                        .iter()
                        .position(|h| h.1 as usize >= j)
                        .unwrap_or(self.heads.list.len());
                    let _ = self.heads.list.insert(at, (ch, (j - 1) as u16, iso));
                }
            }
            None => self.forget_heads(),
        }
        let pkt = self.queue.pop_front().unwrap_or_default();
        self.qp_counted.note((pkt.dlid >> self.lmc) as u32, false);
        self.vc_queued[pkt.orig_vc as usize] -= 1;
        self.debug_check_vc_counts();
        pkt
    }

    /// Whether the send memory (the part of the destination's VC, when it is split) and the
    /// queue pair to `dest` have room for `packets` more (the queue pair is counted only when
    /// it could be short of room).
    pub(super) fn has_room(&self, dest: u32, packets: usize) -> bool {
        let len = self.queue.len();
        SOURCE_QUEUE - len >= packets
            && (self.vc_part == 0
                || self.vc_queued[self.vc_to(dest) as usize] as usize + packets
                    <= self.vc_part as usize)
            && (len + packets <= QP_DEPTH || self.qp_len(dest) + packets <= QP_DEPTH)
    }

    /// The regular VC of this node's packets to `dest`: the routing engine's SL of the path, or
    /// else the queuing scheme's. The HCA sends on the VL of the same number; each switch's
    /// SL-to-VL tables choose the next.
    pub(super) fn vc_to(&self, dest: u32) -> u8 {
        match &self.path_sls {
            Some(sls) => sls[dest as usize],
            None => self.params.queuing.vc_for(self.id, dest),
        }
    }

    /// Debug builds: the per-VC counts add up to the packets in the send memory.
    #[inline]
    fn debug_check_vc_counts(&self) {
        debug_assert_eq!(
            self.vc_queued.iter().map(|&n| n as usize).sum::<usize>(),
            self.queue.len(),
            "per-VC counts of node {}'s send memory",
            self.id
        );
    }

    /// Splits the send memory per regular VC, or shares it ([`SendMemory`]).
    pub fn set_send_memory(&mut self, memory: SendMemory) {
        self.vc_part = memory.part(self.params.queuing.regular_vcs()).unwrap_or(0) as u16;
    }

    /// Appends a packet of `len` flits to `dest` to the send memory in cycle `now`: the queue
    /// pair of `dest` has room (see [`EndNode::has_room`]). `flow`: the phase flow it carries
    /// part of (`Packet::flow`), 0 for none.
    pub(super) fn post(
        &mut self,
        dest: u32,
        len: u16,
        id: u32,
        (flags, flow): (PacketFlags, u16),
        now: u64,
    ) {
        let vc = self.vc_to(dest);
        let pkt = Packet {
            injected: now,
            id,
            src: self.id as u16,
            dlid: ((dest << self.lmc)
                | (self.multipath && self.lmc > 0 && self.adaptive(id)) as u32)
                as u16,
            len,
            sl: vc,
            vc,
            orig_vc: vc,
            flags,
            flow,
        };
        if self.queue.len() < SOURCE_QUEUE {
            self.queue.push_back(pkt);
        }
        self.qp_counted.note(dest, true);
        self.vc_queued[vc as usize] += 1;
        self.debug_check_vc_counts();
        self.note_posted(now);
        self.stats.generated_packets += 1;
    }

    /// Whether packet `id` asks for every routing option: all of them at a share of 1, else
    /// those whose hashed id falls below the share.
    fn adaptive(&self, id: u32) -> bool {
        self.adaptive_share >= 1 << 32
            || SplitMix64::new(id as u64).next_u64() >> 32 < self.adaptive_share
    }

    /// A one-flit control packet to node `dest` with `flags` and CID `flow`, to start in cycle
    /// `now` ahead of the send memory (a CNP, an acknowledgement), if the link has a credit for
    /// it on the destination's VC.
    pub(super) fn control_packet(
        &self,
        dest: u32,
        (flags, flow): (PacketFlags, u16),
        now: u64,
    ) -> Option<Packet> {
        let vc = self.vc_to(dest);
        if !self.fits(vc, 1, now) {
            return None;
        }
        Some(Packet {
            injected: now,
            id: 0,
            src: self.id as u16,
            dlid: (dest << self.lmc) as u16,
            len: 1,
            sl: vc,
            vc,
            orig_vc: vc,
            flags,
            flow,
        })
    }

    /// Packets queued for destination node `dest`: its queue pair's send queue.
    fn qp_len(&self, dest: u32) -> usize {
        let count = || {
            self.queue
                .iter()
                .filter(|p| (p.dlid >> self.lmc) as u32 == dest)
                .count()
        };
        let (d, n) = self.qp_counted.0.get();
        if d == dest {
            debug_assert_eq!(n as usize, count());
            return n as usize;
        }
        let n = count();
        self.qp_counted.0.set((dest, n as u16));
        n
    }

    /// With the injector free after cycle `now`: the first cycle after it in which a packet
    /// could start, if nothing arrives meanwhile (credit records and ARNs wake the node): the
    /// credits coming back at their current rate reach a channel head's length. Not later than
    /// the next expiry of a live ARN entry (the entries decide which channel a packet takes).
    pub(super) fn start_possible(&mut self, now: u64) -> u64 {
        // The heads hold until an ARN entry expires or a held queue pair is free again (an entry
        // added or a packet posted or started wakes the node).
        self.refresh_heads(now + 1);
        let until = self.heads.until;
        // Congestion control: a CNP waiting goes first.
        let cnp = self.cc.as_deref().and_then(|cc| cc.cnp_due());
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
        // Flow routing: then an acknowledgement.
        let cnp = cnp
            .or_else(|| self.ack_due())
            .map_or(u64::MAX, |dest| fit(self.vc_to(dest), 1));
        self.heads
            .list
            .iter()
            .map(|&(ch, i, _)| fit(ch, self.queue.get(i as usize).map_or(0, |p| p.len)))
            .min()
            .unwrap_or(u64::MAX)
            .min(until)
            .min(cnp)
    }
}
