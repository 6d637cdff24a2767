//! End node: a host channel adapter (HCA) with its traffic source and sink.
//!
//! The source generates messages per flow (a Bernoulli process per cycle at the flow's rate),
//! segments them into MTU packets in a bounded source queue, and injects one flit per cycle under
//! credit-based flow control with virtual cut-through. The sink takes one flit per cycle at line
//! rate and returns its credit at once. As in the switch, a packet is worked on at its head and
//! its tail; the flits in between and the credits are closed forms of those cycles.
//!
//! ARNs that reach the node come from an incast root (figure 1 of Rocher-Gonzalez et al., flow C: "the ARNs will
//! not be consumed until endnode S_C"). When the fabric lets nodes consume them, the HCA keeps
//! them in a small table of (destination, VC) entries with the switches' TTL, and under ARN+AFI
//! injects the packets that match into the AFC with the adapted bit set: there is no other route
//! from a node, but the congesting flow is isolated from its first hop on (`docs/switch.md`).
//! The send side is an HCA's: a queue pair per destination, so that a destination isolated into
//! the AFC, or a VC without credits, holds back only its own queue pairs (`node::send`).

use crate::blocks::rng::SplitMix64;
use crate::switch::SwitchParams;
use crate::switch::output_credits::OutputCredits;
use crate::wire::link::{Arriving, Backward, Channel, Flit, LinkSend, streamed, tail_cycle};
use crate::wire::{ArnInfo, Packet, PacketFlags};
use std::collections::VecDeque;
use std::sync::Arc;

/// Packets the HCA's send memory holds: the send queues of all its queue pairs together.
pub const SOURCE_QUEUE: usize = 256;

/// Where a flow's messages go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Destination {
    /// Always this node.
    Node(u32),
    /// A node drawn uniformly among the others, per message.
    Uniform,
}

/// One traffic process of a node.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Flow {
    /// Destination.
    pub dest: Destination,
    /// Offered load in flits per cycle (1.0 is the link's full rate).
    pub rate: f64,
    /// Message size in flits (segmented into MTU packets).
    pub message_flits: u32,
    /// First cycle of generation.
    pub start: u64,
    /// First cycle without generation.
    pub stop: u64,
    /// Marks the packets as hot-spot traffic in the statistics.
    pub hot: bool,
}

/// Entries of an end node's ARN table.
pub const NODE_ARN_ENTRIES: usize = 16;

/// One consumed ARN at an end node: packets to `dest` (base LID) on regular VC `vc` are isolated
/// until cycle `expires` (exclusive; 0 is an empty entry).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct NodeArnEntry {
    dest: u16,
    vc: u8,
    expires: u64,
}

/// Cycles the source draws ahead in one go when no message comes.
const DRAW_AHEAD: u64 = 4096;

/// When the source next has something to do. Every flow active in a cycle takes one Bernoulli
/// draw per cycle, in flow order; the source takes the draws ahead of time, up to the first that
/// makes a message, so that the node need not step the cycles in between. The draws and their
/// order are those of drawing cycle by cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum NextMessage {
    /// In cycle `at`, flow `flow` makes a message: the draws of the cycles before `at`, and of
    /// the flows before and including `flow` in `at`, are taken.
    At { at: u64, flow: usize },
    /// No message up to cycle `at`, whose draws are not taken yet.
    DrawFrom(u64),
    /// No flow is active from here on.
    Never,
}

impl NextMessage {
    fn cycle(&self) -> u64 {
        match *self {
            NextMessage::At { at, .. } | NextMessage::DrawFrom(at) => at,
            NextMessage::Never => u64::MAX,
        }
    }
}

/// A packet on a link end: one flit per cycle from `start` (its head) to its tail.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct Stream {
    pkt: Packet,
    start: u64,
}

impl Stream {
    /// The cycle of its tail.
    #[inline]
    fn end(&self) -> u64 {
        tail_cycle(self.start, self.pkt.len)
    }

    /// Flits through by the end of cycle `through`.
    #[inline]
    fn done(&self, through: u64) -> u16 {
        streamed(self.start, self.pkt.len, through)
    }
}

/// One end node.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct EndNode<const V: usize> {
    id: u32,
    nodes: u32,
    out_ch: u32,
    in_ch: u32,
    lmc: u32,
    multipath: bool,
    /// Of the packets, the share (a 32-bit fraction, 2^32 = all) whose DLID asks for every
    /// routing option when `multipath`.
    adaptive_share: u64,
    mtu: u16,
    params: SwitchParams,
    flows: Vec<(Flow, u64)>,
    rng: SplitMix64,
    next_message: NextMessage,
    /// The next cycle the node must step even with nothing arriving: a message, a packet's
    /// tail arriving or leaving (see [`EndNode::step`]).
    wake: u64,
    seq: u32,
    /// The send memory: every queue pair's packets, in posting order (`node::send`); room for
    /// [`SOURCE_QUEUE`] packets, made by [`EndNode::reserve_send_memory`] for the nodes a process
    /// steps (the others, stepped by other MPI ranks, hold none).
    queue: VecDeque<Packet>,
    /// The last packet started went in the AFC (the scheduler then tries a regular one first).
    afc_last: bool,
    /// The oldest packet of each channel (state kept for speed, `node::send`).
    heads: send::ChannelHeads,
    /// Packets in the send memory per regular VC, and the part of the memory each VC may fill
    /// (0: the memory is shared, [`SendMemory`]).
    #[serde(with = "serde_big_array::BigArray")]
    vc_queued: [u16; V],
    vc_part: u16,
    /// The queue pair last counted and its packets in the send memory (state kept for speed,
    /// `node::send`).
    qp_counted: send::QpCount,
    /// Credits toward the switch, per VC (spent by `tx`, returned by the switch's streams).
    credits: OutputCredits<V>,
    tx: Option<Stream>,
    /// Credit streams started and stopped this cycle (packets being sunk), to go back upstream.
    freed: Backward<V>,
    /// Counters of the packets whose tails have passed.
    stats: NodeStats,
    /// The packet being received: only its head travels on the link, and the body follows in
    /// consecutive cycles (`wire::link`).
    rx: Option<Stream>,
    /// Flits received per VC, of the packets whose tails have arrived (the invariant checks
    /// count the links with it).
    #[serde(with = "serde_big_array::BigArray")]
    flits_in: [u64; V],
    /// Extra flits counted as sent, per VC (a test loses a flit on the link with it).
    #[cfg(test)]
    #[serde(with = "serde_big_array::BigArray")]
    lost: [u64; V],
    /// The last cycle stepped: what the accessors read the state as of.
    now: u64,
    /// Whether ARNs reaching the node are consumed (ARN modes with `node.consume_arns`).
    consume_arns: bool,
    /// Consumed ARNs; an entry lives `params.arn_ttl` cycles after its last ARN.
    arn: [NodeArnEntry; NODE_ARN_ENTRIES],
    /// The latest expiry in `arn` (no entry is live from this cycle on).
    arn_live_until: u64,
    /// The ranks of an MPI trace the node runs, if any (`node::replay`).
    replay: Option<Box<NodeReplay>>,
    /// The finite flows of a communication phase it sends and receives, if any (`node::phase`).
    phase: Option<Box<NodePhase>>,
    /// InfiniBand congestion control's HCA half, when on (`node::cc`).
    #[serde(default)]
    cc: Option<Box<cc::NodeCc>>,
    /// IEEE 802.1Qau's reaction points, when on (`node::qcn`).
    qcn: Option<Box<qcn::NodeQcn>>,
    /// The SL of its packets to each destination, when the routing engine chooses SLs per path
    /// (the subnet manager's answer to the HCA's path queries); otherwise the queuing scheme's.
    #[serde(skip)]
    path_sls: Option<Arc<[u8]>>,
}

impl<const V: usize> EndNode<V> {
    /// A node with its flows; `params.vc_capacity` is the credit count per VC of the switch
    /// input it feeds. `consume_arns`: the node consumes the ARNs that reach it (in ARN modes).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: u32,
        nodes: u32,
        out_ch: u32,
        in_ch: u32,
        params: &SwitchParams,
        mtu: u16,
        flows: &[Flow],
        seed: u64,
        consume_arns: bool,
    ) -> Self {
        let flows = flows
            .iter()
            .map(|f| {
                // Per-cycle message probability as a 32-bit fraction, fixed at build.
                let p = (f.rate / f.message_flits.max(1) as f64).clamp(0.0, 1.0);
                (*f, (p * 4_294_967_296.0).round() as u64)
            })
            .collect();
        EndNode {
            id,
            nodes,
            out_ch,
            in_ch,
            lmc: params.lmc,
            multipath: params.routing.multipath(),
            adaptive_share: 1 << 32,
            mtu: mtu.max(1),
            params: params.clone(),
            flows,
            rng: SplitMix64::new(seed ^ 0x5eed_0000_0000 ^ (id as u64) << 16),
            next_message: NextMessage::DrawFrom(0),
            wake: 0,
            seq: 0,
            queue: VecDeque::new(),
            afc_last: false,
            heads: send::ChannelHeads::default(),
            vc_queued: [0; V],
            vc_part: 0,
            qp_counted: send::QpCount::default(),
            credits: OutputCredits::new(params.vc_capacity),
            tx: None,
            freed: Backward::default(),
            stats: NodeStats::default(),
            rx: None,
            flits_in: [0; V],
            #[cfg(test)]
            lost: [0; V],
            now: 0,
            consume_arns: consume_arns && params.routing.uses_arn(),
            arn: [NodeArnEntry::default(); NODE_ARN_ENTRIES],
            arn_live_until: 0,
            replay: None,
            phase: None,
            cc: None,
            qcn: None,
            path_sls: None,
        }
    }

    /// The share of its packets whose DLID asks for every routing option (0 to 1; the rest take
    /// the deterministic route). Which packets is a hash of the packet's id, so the share draws
    /// nothing from the traffic's random stream.
    pub fn set_adaptive_share(&mut self, share: f64) {
        self.adaptive_share = (share.clamp(0.0, 1.0) * 4_294_967_296.0).round() as u64;
    }

    /// Gives the node the SL of its packets to each destination (`path_sls[d]`), as the subnet
    /// manager chose them for the paths from its switch.
    pub fn set_path_sls(&mut self, path_sls: Arc<[u8]>) {
        self.path_sls = Some(path_sls);
    }

    /// A packet delivered arrived after a later one of its flow: resequenced.
    pub(crate) fn count_resequenced(&mut self) {
        self.stats.packets_resequenced += 1;
    }

    /// Counters, as of the last cycle stepped.
    pub fn stats(&self) -> NodeStats {
        let mut s = self.stats;
        if let Some(tx) = self.tx {
            s.injected_flits += tx.done(self.now) as u64;
        }
        if let Some(rx) = self.rx {
            s.delivered_flits += rx.done(self.now) as u64;
        }
        s
    }

    /// A count that grows whenever a packet starts or finishes leaving the node (the fabric's
    /// deadlock watchdog reads it).
    pub fn progress(&self) -> u64 {
        self.stats.injected_flits
            + self.stats.injected_packets
            + self.stats.cnps_sent
            + self.tx.is_some() as u64
    }

    /// Turns InfiniBand congestion control's HCA half on (`node::cc`).
    pub fn set_congestion_control(&mut self, cfg: CaCongestion) {
        self.cc = Some(Box::new(cc::NodeCc::new(cfg)));
    }

    /// Under congestion control, the index of the queue pair to `dest` in cycle `now`.
    pub fn ccti(&self, dest: u32, now: u64) -> Option<u16> {
        self.cc.as_deref().map(|c| c.index(dest, now))
    }

    /// Free credits toward the switch on `vc`.
    pub fn credits(&self, vc: usize) -> u16 {
        self.credits.credits(vc, self.now)
    }

    /// Credits toward the switch on `vc` whose return has started but not yet arrived.
    pub fn credits_returning(&self, vc: usize) -> u64 {
        self.credits.pending(vc, self.now)
    }

    /// Flits on `vc` whose credit stream has started (the packet being sunk) but that have not
    /// arrived yet: announced upstream, still on the link.
    pub fn credits_announced(&self, vc: usize) -> u64 {
        match self.rx {
            Some(rx) if rx.pkt.vc as usize == vc => (rx.pkt.len - rx.done(self.now)) as u64,
            _ => 0,
        }
    }

    /// Makes the send memory's room for [`SOURCE_QUEUE`] packets, so that stepping allocates
    /// nothing.
    pub fn reserve_send_memory(&mut self) {
        self.queue
            .reserve_exact(SOURCE_QUEUE.saturating_sub(self.queue.len()));
    }

    /// Packets waiting in the send memory (all queue pairs).
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Flits sent on VC `vc` since the start.
    pub fn flits_sent(&self, vc: usize) -> u64 {
        let n = self.credits.sent(vc, self.now);
        #[cfg(test)]
        let n = n + self.lost[vc];
        n
    }

    /// Flits received on VC `vc` since the start.
    pub fn flits_received(&self, vc: usize) -> u64 {
        match self.rx {
            Some(rx) if rx.pkt.vc as usize == vc => self.flits_in[vc] + rx.done(self.now) as u64,
            _ => self.flits_in[vc],
        }
    }

    /// Test hook: counts one more flit sent on VC `vc` than the node sent, as if a flit had been
    /// lost on its link.
    #[cfg(test)]
    pub(crate) fn lose_flit_for_test(&mut self, vc: usize) {
        self.lost[vc] += 1;
    }

    /// The oldest packet in the send memory, if any.
    pub fn head(&self) -> Option<&Packet> {
        self.queue.front()
    }

    /// Whether the source has packets to send or is sending.
    pub fn is_busy(&self) -> bool {
        self.tx.is_some() || !self.queue.is_empty()
    }

    /// Index of the node (its LID base).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Channel it sends on.
    pub fn out_channel(&self) -> u32 {
        self.out_ch
    }

    /// Channel it receives on.
    pub fn in_channel(&self) -> u32 {
        self.in_ch
    }

    /// Live entries of the node's ARN table in cycle `now`: (destination base LID, VC, expiry).
    pub fn arn_entries(&self, now: u64) -> impl Iterator<Item = (u16, u8, u64)> + '_ {
        self.arn
            .iter()
            .filter(move |e| e.expires > now)
            .map(|e| (e.dest, e.vc, e.expires))
    }

    /// Takes in an ARN that reached the node in cycle `now`: refreshes the entry of its
    /// (destination, VC), or fills the entry that expires first (an expired one before any live
    /// one; the lowest index among equals).
    fn consume_arn(&mut self, info: ArnInfo, now: u64) {
        self.stats.arns_consumed += 1;
        let expires = now + self.params.arn_ttl as u64;
        let live = self
            .arn
            .iter()
            .position(|e| e.expires > now && e.dest == info.dest && e.vc == info.vc);
        let k = live.unwrap_or_else(|| {
            (0..NODE_ARN_ENTRIES)
                .min_by_key(|&k| (self.arn[k].expires, k))
                .unwrap_or(0)
        });
        // A live entry refreshed isolates what it did: the channel heads hold until the expiry
        // they were scanned for. Any other change scans them again.
        if live.is_none() {
            self.forget_heads();
        }
        self.arn[k] = NodeArnEntry {
            dest: info.dest,
            vc: info.vc,
            expires,
        };
        self.arn_live_until = self.arn_live_until.max(expires);
    }

    /// Steps one cycle, reading the channels that `arriving` marks (its link's forward direction
    /// when a head arrives, the reverse when credits or an ARN come back); what it sends in the
    /// cycle goes to `link`. Returns the packet whose tail arrived this cycle, if any.
    pub fn step<S: LinkSend<V>>(
        &mut self,
        now: u64,
        channels: &[Channel<V>],
        arriving: Arriving,
        link: &mut S,
    ) -> Option<Packet> {
        let (rx, tx) = (
            &channels[self.in_ch as usize],
            &channels[self.out_ch as usize],
        );
        self.step_on(now, rx, tx, arriving, link)
    }

    /// [`EndNode::step`] given the node's two channels: the one it receives on and the one it
    /// sends on.
    pub fn step_on<S: LinkSend<V>>(
        &mut self,
        now: u64,
        rx_channel: &Channel<V>,
        tx_channel: &Channel<V>,
        arriving: Arriving,
        link: &mut S,
    ) -> Option<Packet> {
        let (head, back) = (arriving.flits != 0, arriving.back != 0);
        // Nothing arrives, no message, no tail, and nothing to decide: every register keeps its
        // value (the source's draws for this cycle are taken already).
        if !back && !head && now < self.wake {
            self.now = now;
            return None;
        }
        // Credits and ARNs from the switch.
        debug_assert!(back || tx_channel.recv_back(now).is_none());
        if back && let Some(b) = tx_channel.recv_back(now) {
            // A corrupted return path shows in the credit conservation check.
            let ok = self.credits.arrive(b, now).is_ok();
            debug_assert!(ok, "node {}: credit return streams out of step", self.id);
            if let Some(c) = b.cnm {
                self.qcn_received(c, now);
            }
            if let Some(info) = b.arn {
                self.stats.arns_received += 1;
                if self.consume_arns {
                    self.consume_arn(info, now);
                }
            }
        }
        // Sink at line rate: a head from the link; the packet's tail arrives `len - 1` cycles
        // later.
        let mut delivered = None;
        debug_assert!(head || rx_channel.recv_flit(now).is_none());
        if head && let Some(f) = rx_channel.recv_flit(now) {
            debug_assert!(
                f.is_head() && self.rx.is_none(),
                "{f:?} while {:?}",
                self.rx
            );
            self.rx = Some(Stream {
                pkt: f.pkt,
                start: now,
            });
            // Sunk at line rate: the packet frees one flit per cycle from now to its tail.
            self.freed.start_stream(f.pkt.vc as usize, f.pkt.len);
        }
        // A tail: the link's VC is free of the packet; a CNP the HCA takes (`cc_received`), a
        // data packet is delivered.
        if let Some(rx) = self.rx.filter(|rx| rx.end() == now) {
            let pkt = rx.pkt;
            self.freed.stop_stream(pkt.vc as usize);
            self.flits_in[pkt.vc as usize] += pkt.len as u64;
            self.rx = None;
            if !self.cc_received(&pkt, now) {
                self.stats.delivered_flits += pkt.len as u64;
                self.stats.delivered_packets += 1;
                self.stats.delivered_adapted += pkt.adapted() as u64;
                let lat = now - pkt.injected;
                self.stats.latency_sum += lat;
                self.stats.latency_max = self.stats.latency_max.max(lat);
                self.replay_received(&pkt, now);
                self.phase_received(&pkt, now);
                delivered = Some(pkt);
            }
        }
        self.generate(now);
        self.phase_post(now);
        self.replay_step(now);
        // Inject one flit per cycle, a packet only when the switch has room for all of it
        // (`node::send`).
        if self.tx.is_none()
            && let Some(mut cnp) = self.cnp_to_start(now).or_else(|| self.ack_to_start(now))
        {
            cnp.id = self.seq.wrapping_mul(self.nodes).wrapping_add(self.id);
            self.seq = self.seq.wrapping_add(1);
            if cnp.flags.contains(PacketFlags::ACK) {
                self.ack_sent();
            } else {
                if let Some(cc) = self.cc.as_deref_mut() {
                    cc.cnp_sent();
                }
                self.stats.cnps_sent += 1;
            }
            link.send_flit(now, self.out_ch, Flit { pkt: cnp, index: 0 });
            self.credits.start_sending(cnp.vc as usize, now, 1);
            self.tx = Some(Stream {
                pkt: cnp,
                start: now,
            });
        } else if self.tx.is_none()
            && let Some((i, from_afc)) = self.pick(now)
        {
            let mut pkt = self.take(i, now);
            self.cc_started(&pkt, now);
            if from_afc {
                // The header keeps the original VC; the packet travels in the AFC.
                pkt.flags |= PacketFlags::ADAPTED;
                pkt.vc = self.params.afc().unwrap_or(pkt.vc);
                self.stats.packets_adapted += 1;
            }
            self.afc_last = from_afc;
            // Only the head travels on the link; the body follows it cycle by cycle.
            link.send_flit(now, self.out_ch, Flit { pkt, index: 0 });
            self.credits.start_sending(pkt.vc as usize, now, pkt.len);
            self.tx = Some(Stream { pkt, start: now });
        }
        if let Some(tx) = self.tx
            && tx.end() == now
        {
            self.credits.finish_sending(tx.pkt.vc as usize);
            // A CNP is not data (counted when it started).
            if !tx.pkt.flags.contains(PacketFlags::BECN) {
                self.stats.injected_flits += tx.pkt.len as u64;
                self.stats.injected_packets += 1;
            }
            self.tx = None;
        }
        if self.freed.has_credits() {
            link.send_back(now, self.in_ch, self.freed);
            self.freed.clear_credits();
        }
        self.now = now;
        self.wake = self
            .next_message
            .cycle()
            .min(self.replay_wake(now))
            .min(self.phase_wake(now));
        if let Some(rx) = self.rx {
            self.wake = self.wake.min(rx.end());
        }
        match self.tx {
            Some(tx) => self.wake = self.wake.min(tx.end()),
            None => self.wake = self.wake.min(self.start_possible(now)),
        }
        delivered
    }
}

mod cc;
mod handshake;
mod phase;
mod qcn;
#[cfg(test)]
mod qcn_tests;
mod replay;
mod send;
mod skip;
mod source;
mod stats;

pub use cc::{CNP_QUEUE, CaCongestion, LIMITERS};
pub use phase::{NodePhase, Receiving};
pub use qcn::{QcnReaction, RATE_ONE};
pub use replay::NodeReplay;
pub use send::{QP_DEPTH, SendMemory};
pub use stats::NodeStats;

#[cfg(test)]
mod tests;
