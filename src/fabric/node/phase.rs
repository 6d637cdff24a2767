//! The end node's part in a communication phase (`crate::traffic::phase`): the finite flows it
//! sends, posted packet by packet as its injection scheme spaces them (`Injection`: each flow
//! at its own pace, periodic selection or shaped virtual clock) while the send memory has room,
//! and the flows it receives, each counted down to the cycle its last flit arrives.
//!
//! A packet of a phase flow carries the flow's tag at its destination in `Packet::flow` (the
//! flow's index among the phase's flows into that node, plus one): all the receiver needs to
//! count it in, whatever order its packets arrive in.

use super::handshake::Handshake;
use super::*;
use crate::traffic::phase::Injection;

/// One finite flow the node sends.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct Sending {
    dst: u32,
    tag: u16,
    start: u64,
    /// Rate as a 32-bit fraction of the link (2^32: line rate), above 0.
    pace: u64,
    message_flits: u32,
    /// Flits posted so far, and flits not yet posted.
    posted: u64,
    left: u64,
    /// Flits of the message being cut that are not yet posted.
    in_message: u32,
    /// The first cycle the next packet may be posted: under `Paced`, `start + posted / rate`
    /// rounded up; under `Svc`, the last packet's post plus its length over the rate.
    due: u64,
    /// Flow routing's handshakes (`node::handshake`); `Open` without flow routing.
    #[serde(default)]
    pub(super) step: Handshake,
}

/// `flits` at `pace` (a 32-bit fraction of the link), in cycles, rounded up.
fn cycles_at(flits: u64, pace: u64) -> u64 {
    u64::try_from(((flits as u128) << 32).div_ceil(pace.max(1) as u128)).unwrap_or(u64::MAX)
}

impl Sending {
    /// The first cycle a packet may be posted after `posted` flits.
    fn due_after(start: u64, posted: u64, pace: u64) -> u64 {
        start.saturating_add(cycles_at(posted, pace))
    }

    /// Whether this flow has sent less for its rate than `o`: `D(f, t) / r(f)` below `o`'s.
    fn behind(&self, o: &Sending) -> bool {
        (self.posted as u128) * (o.pace as u128) < (o.posted as u128) * (self.pace as u128)
    }
}

/// One finite flow the node receives: flits still to come, and the cycle its last one came.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Receiving {
    /// Flits not yet received.
    pub left: u64,
    /// The cycle the tail of its last packet arrived, once it has.
    pub end: Option<u64>,
}

/// The phase flows of one node: those it sends and those it receives (by tag).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct NodePhase {
    injection: Injection,
    /// Under `Ps`, the first cycle of the next period.
    next: u64,
    sending: Vec<Sending>,
    receiving: Vec<Receiving>,
    /// Flow routing: the acknowledgements to send, (the flow's source, its tag).
    #[serde(default)]
    pub(super) acks: VecDeque<(u32, u16)>,
}

impl NodePhase {
    /// No flows yet, spaced by `injection`.
    pub fn new(injection: Injection) -> Self {
        NodePhase {
            injection,
            ..NodePhase::default()
        }
    }

    /// A flow of `flits` flits to `dst`, tagged `tag` there, from cycle `start` at `rate` of the
    /// link (0 excluded, to 1), in messages of `message_flits`.
    pub fn send(
        &mut self,
        dst: u32,
        tag: u16,
        (flits, message_flits): (u64, u32),
        start: u64,
        rate: f64,
    ) {
        let pace = ((rate.clamp(0.0, 1.0) * 4_294_967_296.0).round() as u64).max(1);
        self.sending.push(Sending {
            dst,
            tag,
            start,
            pace,
            message_flits: message_flits.max(1),
            posted: 0,
            left: flits,
            in_message: 0,
            due: start,
            step: Handshake::Open,
        });
    }

    /// The acknowledgement of the setup or teardown of the flow this node sends to `dst`,
    /// tagged `tag` there, arrived in cycle `now`: a flow set up paces its data from now. False
    /// when the node sends no such flow.
    pub(super) fn acknowledged(&mut self, dst: u32, tag: u16, now: u64) -> bool {
        let Some(s) = self
            .sending
            .iter_mut()
            .find(|s| s.dst == dst && s.tag == tag)
        else {
            return false;
        };
        match s.step {
            Handshake::AwaitSetup => {
                s.step = Handshake::Open;
                s.start = s.start.max(now);
                s.due = s.due.max(now);
            }
            Handshake::AwaitTeardown => s.step = Handshake::Closed,
            _ => {}
        }
        true
    }

    /// Whether flow `k` may post its setup in cycle `now`: started, and every earlier flow of
    /// its connection torn down (whose last acknowledgement wakes the node).
    fn may_set_up(&self, k: usize, now: u64) -> bool {
        let s = &self.sending[k];
        now >= s.start
            && self.sending[..k]
                .iter()
                .all(|e| e.dst != s.dst || e.step == Handshake::Closed)
    }

    /// A flow of `flits` flits the node receives, tagged `tag` (the next tag: tags are given in
    /// order from 1).
    pub fn receive(&mut self, tag: u16, flits: u64) {
        debug_assert_eq!(tag as usize, self.receiving.len() + 1);
        self.receiving.push(Receiving {
            left: flits,
            end: (flits == 0).then_some(0),
        });
    }

    /// The flows the node receives, by tag (tag 1 first).
    pub fn received(&self) -> &[Receiving] {
        &self.receiving
    }
}

impl<const V: usize> EndNode<V> {
    /// Gives the node its phase flows (before the first cycle); under flow routing each starts
    /// with its setup.
    pub fn attach_phase(&mut self, mut phase: NodePhase) {
        if self.handshakes_on() {
            for s in &mut phase.sending {
                s.step = Handshake::Setup;
            }
        }
        self.phase = Some(Box::new(phase));
        self.wake = 0;
    }

    /// The node's phase flows, if it has any.
    pub fn phase(&self) -> Option<&NodePhase> {
        self.phase.as_deref()
    }

    /// A packet reached this node in cycle `now` (its tail): counted in its phase flow.
    pub(super) fn phase_received(&mut self, pkt: &Packet, now: u64) {
        if pkt.flow_control() {
            self.handshake_received(pkt, now);
            return;
        }
        if pkt.flow == 0 {
            return;
        }
        let Some(r) = self
            .phase
            .as_deref_mut()
            .and_then(|p| p.receiving.get_mut(pkt.flow as usize - 1))
        else {
            debug_assert!(false, "node {}: a packet of an unknown flow", self.id);
            return;
        };
        r.left = r.left.saturating_sub(pkt.len as u64);
        if r.left == 0 && r.end.is_none() {
            r.end = Some(now);
        }
    }

    /// Posts the packets of the phase flows in cycle `now` as the injection scheme allows,
    /// while the send memory and their queue pairs have room. `Paced`: every packet due, the
    /// flow due earliest first (ties: the flow listed first), one packet at a time. `Ps` and
    /// `Svc`: at most one packet, only while nothing of the node waits to be sent.
    pub(super) fn phase_post(&mut self, now: u64) {
        let Some(mut p) = self.phase.take() else {
            return;
        };
        self.post_controls(&mut p, now);
        match p.injection {
            Injection::Paced => loop {
                let mut best: Option<usize> = None;
                for (k, s) in p.sending.iter().enumerate() {
                    if s.left == 0
                        || s.step != Handshake::Open
                        || s.due > now
                        || best.is_some_and(|b| p.sending[b].due <= s.due)
                    {
                        continue;
                    }
                    if self.has_room(s.dst, 1) {
                        best = Some(k);
                    }
                }
                let Some(k) = best else {
                    break;
                };
                let s = &mut p.sending[k];
                self.post_next(s, now);
                s.due = Sending::due_after(s.start, s.posted, s.pace);
            },
            Injection::Ps | Injection::Svc => {
                let ps = p.injection == Injection::Ps;
                if self.tx.is_some() || !self.queue.is_empty() || (ps && now < p.next) {
                    self.phase = Some(p);
                    return;
                }
                let mut best: Option<usize> = None;
                for (k, s) in p.sending.iter().enumerate() {
                    let waiting = now < s.start || (!ps && now < s.due);
                    let closed = s.step != Handshake::Open;
                    if s.left == 0
                        || closed
                        || waiting
                        || best.is_some_and(|b| !s.behind(&p.sending[b]))
                    {
                        continue;
                    }
                    if self.has_room(s.dst, 1) {
                        best = Some(k);
                    }
                }
                if let Some(k) = best {
                    // The rate the period spreads: the flows still sending, this one included.
                    let unfinished = p
                        .sending
                        .iter()
                        .filter(|s| s.left > 0 && s.step == Handshake::Open);
                    let aggregate = unfinished.map(|s| s.pace).sum::<u64>().min(1 << 32);
                    let len = self.post_next(&mut p.sending[k], now);
                    let s = &mut p.sending[k];
                    match ps {
                        true => p.next = now + cycles_at(len, aggregate),
                        false => s.due = now + cycles_at(len, s.pace),
                    }
                }
            }
        }
        self.phase = Some(p);
    }

    /// Flow routing: posts the setups and teardowns due in cycle `now`, flow by flow, while the
    /// send memory has room.
    fn post_controls(&mut self, p: &mut NodePhase, now: u64) {
        for k in 0..p.sending.len() {
            let s = p.sending[k];
            let due = match s.step {
                Handshake::Setup => p.may_set_up(k, now),
                Handshake::Teardown => true,
                _ => false,
            };
            if !due || !self.has_room(s.dst, 1) {
                continue;
            }
            let (flags, next) = match s.step {
                Handshake::Setup => (PacketFlags::SETUP, Handshake::AwaitSetup),
                _ => (PacketFlags::TEARDOWN, Handshake::AwaitTeardown),
            };
            let id = self.seq.wrapping_mul(self.nodes).wrapping_add(self.id);
            self.post(s.dst, 1, id, (flags, s.tag), now);
            self.seq = self.seq.wrapping_add(1);
            p.sending[k].step = next;
        }
    }

    /// Posts flow `s`'s next packet (a piece of its message, at most the MTU) in cycle `now`;
    /// its length in flits. Under flow routing its last packet calls for its teardown.
    fn post_next(&mut self, s: &mut Sending, now: u64) -> u64 {
        if s.in_message == 0 {
            s.in_message = (s.message_flits as u64).min(s.left) as u32;
        }
        let len = s.in_message.min(self.mtu as u32) as u16;
        s.in_message -= len as u32;
        s.left -= len as u64;
        s.posted += len as u64;
        let id = self.seq.wrapping_mul(self.nodes).wrapping_add(self.id);
        self.post(s.dst, len, id, (PacketFlags::empty(), s.tag), now);
        self.seq = self.seq.wrapping_add(1);
        if s.left == 0 && s.step == Handshake::Open && self.handshakes_on() {
            s.step = Handshake::Teardown;
        }
        len as u64
    }

    /// The first cycle after `now` the phase needs the node: a flow's next packet falls due,
    /// or one that is due finds room (room comes only when a packet starts, in a cycle the node
    /// steps). Under `Ps` and `Svc` the node also waits for what it sends to leave: the cycle
    /// its transmission ends wakes it.
    pub(super) fn phase_wake(&self, now: u64) -> u64 {
        let Some(p) = self.phase.as_deref() else {
            return u64::MAX;
        };
        let room = |s: &Sending| self.has_room(s.dst, 1);
        let controls = (0..p.sending.len())
            .filter(|&k| {
                let s = &p.sending[k];
                s.step == Handshake::Teardown
                    || (s.step == Handshake::Setup && p.may_set_up(k, s.start.max(now + 1)))
            })
            .map(|k| {
                let s = &p.sending[k];
                match s.step == Handshake::Setup && s.start > now + 1 {
                    true => s.start,
                    false if room(s) => now + 1,
                    false => u64::MAX,
                }
            })
            .min()
            .unwrap_or(u64::MAX);
        let spaced = p.injection != Injection::Paced;
        if spaced && (self.tx.is_some() || !self.queue.is_empty()) {
            return controls;
        }
        let data = p
            .sending
            .iter()
            .filter(|s| s.left > 0 && s.step == Handshake::Open)
            .map(|s| {
                let due = match p.injection {
                    Injection::Paced | Injection::Svc => s.due.max(s.start),
                    Injection::Ps => p.next.max(s.start),
                };
                match due > now {
                    true => due,
                    false if self.has_room(s.dst, 1) => now + 1,
                    false => u64::MAX,
                }
            })
            .min()
            .unwrap_or(u64::MAX);
        data.min(controls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::phase::Injection;

    #[test]
    fn a_flow_falls_due_at_its_rate() {
        // Line rate: a packet of 64 flits every 64 cycles from the start.
        assert_eq!(Sending::due_after(10, 0, 1 << 32), 10);
        assert_eq!(Sending::due_after(10, 128, 1 << 32), 138);
        // Half the link: twice as long, rounded up.
        assert_eq!(Sending::due_after(0, 64, 1 << 31), 128);
        assert_eq!(
            Sending::due_after(0, 1, 3 << 30),
            2,
            "1 / 0.75 = 1.33: cycle 2"
        );
    }

    #[test]
    fn under_flow_routing_a_flow_sets_up_at_its_start_and_then_waits_for_its_ack() {
        use crate::switch::RoutingMode;
        use crate::wire::link::FEW_VCS;
        let params = SwitchParams::with_paper_ratios(RoutingMode::Flow, 100, 10);
        let mut node = EndNode::<FEW_VCS>::new(1, 8, 0, 1, &params, 64, &[], 1, false);
        let mut p = NodePhase::new(Injection::Paced);
        p.send(3, 1, (256, 64), 100, 1.0);
        p.send(3, 2, (256, 64), 0, 1.0);
        node.attach_phase(p);
        // The first flow's start wakes the node; the second, to the same node, waits for the
        // first's teardown whatever its own start.
        assert_eq!(node.phase_wake(0), 100);
        node.phase_post(100);
        let setup = node.take(0, 100);
        assert!(setup.flags.contains(PacketFlags::SETUP) && setup.len == 1 && setup.flow == 1);
        assert!(node.queue.is_empty(), "no data before the acknowledgement");
        assert_eq!(
            node.phase_wake(100),
            u64::MAX,
            "the acknowledgement wakes it"
        );
        let ack = Packet {
            src: 3,
            flow: 1,
            len: 1,
            flags: PacketFlags::ACK,
            ..Packet::default()
        };
        node.phase_received(&ack, 150);
        let mut got = Vec::new();
        for now in 150..600 {
            node.phase_post(now);
            while !node.queue.is_empty() {
                let p = node.take(0, now);
                got.push((now, p.len, p.flags, p.flow));
            }
        }
        // At line rate from the acknowledgement: four data packets 64 cycles apart, the teardown
        // the cycle after the last; flow 2 stays closed behind it.
        let none = PacketFlags::empty();
        assert_eq!(
            got,
            [
                (150, 64, none, 1),
                (214, 64, none, 1),
                (278, 64, none, 1),
                (342, 64, none, 1),
                (343, 1, PacketFlags::TEARDOWN, 1),
            ]
        );
        let ack = Packet { flow: 1, ..ack };
        node.phase_received(&ack, 600);
        assert_eq!(node.phase_wake(600), 601, "flow 2 may set up");
        node.phase_post(601);
        let setup = node.take(0, 601);
        assert_eq!((setup.flags, setup.flow), (PacketFlags::SETUP, 2));
    }

    #[test]
    fn a_flow_ends_when_its_last_flit_arrives() {
        let mut p = NodePhase::default();
        p.receive(1, 100);
        p.receive(2, 0);
        assert_eq!(p.received()[1].end, Some(0), "an empty flow has ended");
        assert_eq!(p.received()[0].end, None);
    }

    /// Node 1 of 8 sending flow A (rate 1/2, to node 3) and flow B (rate 1/4, to node 5) of 64
    /// flit packets by `injection`, its link taking every packet at once except in the cycles
    /// of `blocked`: the cycle and destination of every packet posted before `until`.
    fn posts(injection: Injection, blocked: std::ops::Range<u64>, until: u64) -> Vec<(u64, u32)> {
        use crate::switch::RoutingMode;
        use crate::wire::link::FEW_VCS;
        let params = SwitchParams::with_paper_ratios(RoutingMode::DModK, 100, 10);
        let mut node = EndNode::<FEW_VCS>::new(1, 8, 0, 1, &params, 64, &[], 1, false);
        let mut p = NodePhase::new(injection);
        p.send(3, 1, (1 << 20, 64), 0, 0.5);
        p.send(5, 1, (1 << 20, 64), 0, 0.25);
        node.attach_phase(p);
        let mut got = Vec::new();
        for now in 0..until {
            node.phase_post(now);
            if blocked.contains(&now) {
                continue;
            }
            while !node.queue.is_empty() {
                let pkt = node.take(0, now);
                got.push((pkt.injected, (pkt.dlid >> node.lmc) as u32));
            }
        }
        got
    }

    #[test]
    fn periodic_selection_sends_one_packet_a_period_to_the_flow_most_behind() {
        let got = posts(Injection::Ps, 0..0, 86 * 30);
        // R = 3/4: a 64-flit packet every 85.3 cycles, rounded up to 86; A, B, A, A, B, A, ...
        // (A's D/r ties B's every third packet, and the tie goes to A, listed first).
        assert_eq!(got.len(), 30);
        for (i, &(t, dst)) in got.iter().enumerate() {
            assert_eq!(t, 86 * i as u64, "packet {i}");
            let want = if i % 3 == 1 { 5 } else { 3 };
            assert_eq!(dst, want, "packet {i} at cycle {t}");
        }
    }

    #[test]
    fn periodic_selection_makes_nothing_up_after_back_pressure() {
        // The link takes nothing from cycle 100 to 999: the packet posted at 172 waits, nothing
        // more is posted, and from cycle 1000 the period counts from the next post, at 1001.
        let got = posts(Injection::Ps, 100..1000, 2000);
        let times: Vec<u64> = got.iter().map(|p| p.0).collect();
        assert_eq!(&times[..4], &[0, 86, 172, 1001]);
        assert!(
            times[3..].windows(2).all(|w| w[1] - w[0] == 86),
            "{times:?}"
        );
        // Paced flows catch up instead: they keep posting while the link takes nothing, and the
        // 12 packets due by cycle 1000 leave together when it takes again.
        let paced = posts(Injection::Paced, 100..1000, 1001);
        let at_1000 = paced.iter().filter(|p| p.0 <= 1000).count();
        // A: 1000 / 128 -> 8 packets due, B: 1000 / 256 -> 4 (from cycle 0: 8 + 4).
        assert_eq!(at_1000, 8 + 4, "{paced:?}");
    }

    #[test]
    fn shaped_virtual_clock_sends_each_flow_at_its_rate_in_bursts() {
        // A eligible every 128 cycles, B every 256; when both are, A (less sent for its rate,
        // or the tie to the first listed); a free link takes the other the next cycle.
        let got = posts(Injection::Svc, 0..0, 600);
        assert_eq!(
            got,
            [
                (0, 3),
                (1, 5),
                (128, 3),
                (256, 3),
                (257, 5),
                (384, 3),
                (512, 3),
                (513, 5)
            ]
        );
    }
}
