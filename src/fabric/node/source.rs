//! The end node's traffic source: per flow, a Bernoulli process per cycle at the flow's rate
//! (drawn ahead to the next message, so that idle cycles cost nothing), messages cut into MTU
//! packets posted to the queue pair of their destination (`node::send`).

use super::*;

impl<const V: usize> EndNode<V> {
    /// The source's work in cycle `now`: the messages of its flows, if any.
    pub(super) fn generate(&mut self, now: u64) {
        loop {
            match self.next_message {
                NextMessage::DrawFrom(at) if at == now => {
                    self.next_message = self.draw_ahead(now);
                }
                NextMessage::At { at, flow } if at == now => {
                    self.make_message(flow, now);
                    // The flows after it draw in this cycle as well.
                    for k in flow + 1..self.flows.len() {
                        if self.draws(k, now) {
                            self.make_message(k, now);
                        }
                    }
                    self.next_message = self.draw_ahead(now + 1);
                    return;
                }
                _ => {
                    debug_assert!(self.next_message.cycle() > now, "a message was missed");
                    return;
                }
            }
        }
    }

    /// Whether flow `k` is active in cycle `now` and its draw makes a message (one draw when
    /// active).
    #[inline]
    pub(super) fn draws(&mut self, k: usize, now: u64) -> bool {
        let (start, stop, p) = {
            let (f, p) = &self.flows[k];
            (f.start, f.stop, *p)
        };
        if now < start || now >= stop || p == 0 {
            return false;
        }
        (self.rng.next_u64() >> 32) < p
    }

    /// Takes the draws from cycle `from` on, up to the first that makes a message, or for
    /// [`DRAW_AHEAD`] cycles. Between two flow starts or stops the same flows draw every cycle,
    /// so the draws go in a tight loop over them.
    pub(super) fn draw_ahead(&mut self, from: u64) -> NextMessage {
        let mut c = from;
        let until = from.saturating_add(DRAW_AHEAD);
        while c < until {
            let mut active: heapless::Vec<(usize, u64), 8> = heapless::Vec::new();
            let mut crowded = false;
            let mut change = until;
            let mut next_start: Option<u64> = None;
            for (k, (f, p)) in self.flows.iter().enumerate() {
                if *p == 0 || f.stop <= f.start || c >= f.stop {
                    continue;
                }
                if c < f.start {
                    change = change.min(f.start);
                    next_start = Some(next_start.map_or(f.start, |s: u64| s.min(f.start)));
                    continue;
                }
                change = change.min(f.stop);
                crowded |= active.push((k, *p)).is_err();
            }
            if active.is_empty() {
                // No flow draws in `c`: go to the next flow start.
                match next_start {
                    Some(start) => c = start,
                    None => return NextMessage::Never,
                }
                continue;
            }
            if crowded {
                // More flows than the tight loop holds: this cycle one flow at a time.
                for k in 0..self.flows.len() {
                    if self.draws(k, c) {
                        return NextMessage::At { at: c, flow: k };
                    }
                }
                c += 1;
                continue;
            }
            if let [(k, p)] = active[..] {
                // One flow: its draws in a row, the stream's state in a register.
                match self.rng.first_below(p, change - c) {
                    Some(d) => return NextMessage::At { at: c + d, flow: k },
                    None => c = change,
                }
                continue;
            }
            while c < change {
                for &(k, p) in &active {
                    if (self.rng.next_u64() >> 32) < p {
                        return NextMessage::At { at: c, flow: k };
                    }
                }
                c += 1;
            }
        }
        NextMessage::DrawFrom(c)
    }

    /// Flow `k` makes a message in cycle `now` (its draw is taken): draws its destination and
    /// posts its packets, or counts a stall when the send memory or the queue pair has no room
    /// for them all.
    pub(super) fn make_message(&mut self, k: usize, now: u64) {
        let f = self.flows[k].0;
        let dest = match f.dest {
            Destination::Node(d) => d,
            Destination::Uniform => {
                let d = self.rng.below(self.nodes as u64 - 1) as u32;
                if d >= self.id { d + 1 } else { d }
            }
        };
        let packets = f.message_flits.div_ceil(self.mtu as u32) as usize;
        if !self.has_room(dest, packets) {
            self.stats.generation_stalls += 1;
            return;
        }
        let flags = if f.hot {
            PacketFlags::HOT
        } else {
            PacketFlags::empty()
        };
        let mut left = f.message_flits;
        while left > 0 {
            let len = left.min(self.mtu as u32) as u16;
            left -= len as u32;
            let id = self.seq.wrapping_mul(self.nodes).wrapping_add(self.id);
            self.post(dest, len, id, (flags, 0), now);
            self.seq = self.seq.wrapping_add(1);
        }
    }
}
