//! The end node's part in a communication phase (`crate::traffic::phase`): the finite flows it
//! sends, posted packet by packet at their pace as the send memory has room, and the flows it
//! receives, each counted down to the cycle its last flit arrives.
//!
//! A packet of a phase flow carries the flow's tag at its destination in `Packet::flow` (the
//! flow's index among the phase's flows into that node, plus one): all the receiver needs to
//! count it in, whatever order its packets arrive in.

use super::*;

/// One finite flow the node sends.
#[derive(Clone, Copy, Debug)]
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
    /// The first cycle the next packet may be posted: `start + posted / rate`, rounded up.
    due: u64,
}

impl Sending {
    /// The first cycle a packet may be posted after `posted` flits.
    fn due_after(start: u64, posted: u64, pace: u64) -> u64 {
        let d = ((posted as u128) << 32).div_ceil(pace as u128);
        start.saturating_add(u64::try_from(d).unwrap_or(u64::MAX))
    }
}

/// One finite flow the node receives: flits still to come, and the cycle its last one came.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Receiving {
    /// Flits not yet received.
    pub left: u64,
    /// The cycle the tail of its last packet arrived, once it has.
    pub end: Option<u64>,
}

/// The phase flows of one node: those it sends and those it receives (by tag).
#[derive(Clone, Debug, Default)]
pub struct NodePhase {
    sending: Vec<Sending>,
    receiving: Vec<Receiving>,
}

impl NodePhase {
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
        });
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
    /// Gives the node its phase flows (before the first cycle).
    pub fn attach_phase(&mut self, phase: NodePhase) {
        self.phase = Some(Box::new(phase));
        self.wake = 0;
    }

    /// The node's phase flows, if it has any.
    pub fn phase(&self) -> Option<&NodePhase> {
        self.phase.as_deref()
    }

    /// A packet reached this node in cycle `now` (its tail): counted in its phase flow.
    pub(super) fn phase_received(&mut self, pkt: &Packet, now: u64) {
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

    /// Posts the packets of the phase flows that are due in cycle `now`, while the send memory
    /// and their queue pairs have room: the flow due earliest first (ties: the flow listed
    /// first), one packet at a time.
    pub(super) fn phase_post(&mut self, now: u64) {
        let Some(mut p) = self.phase.take() else {
            return;
        };
        loop {
            let mut best: Option<usize> = None;
            for (k, s) in p.sending.iter().enumerate() {
                if s.left == 0 || s.due > now || best.is_some_and(|b| p.sending[b].due <= s.due) {
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
            if s.in_message == 0 {
                s.in_message = (s.message_flits as u64).min(s.left) as u32;
            }
            let len = s.in_message.min(self.mtu as u32) as u16;
            s.in_message -= len as u32;
            s.left -= len as u64;
            s.posted += len as u64;
            s.due = Sending::due_after(s.start, s.posted, s.pace);
            let (dst, tag) = (s.dst, s.tag);
            let id = self.seq.wrapping_mul(self.nodes).wrapping_add(self.id);
            self.post(dst, len, id, (PacketFlags::empty(), tag), now);
            self.seq = self.seq.wrapping_add(1);
        }
        self.phase = Some(p);
    }

    /// The first cycle after `now` the phase needs the node: a flow's next packet falls due, or
    /// one that is due finds room (room comes only when a packet starts, in a cycle the node
    /// steps).
    pub(super) fn phase_wake(&self, now: u64) -> u64 {
        let Some(p) = self.phase.as_deref() else {
            return u64::MAX;
        };
        p.sending
            .iter()
            .filter(|s| s.left > 0)
            .map(|s| match s.due > now {
                true => s.due,
                false if self.has_room(s.dst, 1) => now + 1,
                false => u64::MAX,
            })
            .min()
            .unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_flow_ends_when_its_last_flit_arrives() {
        let mut p = NodePhase::default();
        p.receive(1, 100);
        p.receive(2, 0);
        assert_eq!(p.received()[1].end, Some(0), "an empty flow has ended");
        assert_eq!(p.received()[0].end, None);
    }
}
