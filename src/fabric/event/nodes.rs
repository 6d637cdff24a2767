//! The end nodes on the event engine: each HCA (`src/fabric/node.rs`) steps in the cycles
//! something reaches it or it has something to do, through its link's two channels. What the
//! switch port facing it sends (heads, credit records and ARNs) is written to the channels as on
//! the cycle engine and marked per node by the cycle it arrives, so that a step reads a channel
//! only in a cycle something arrives on it.

use super::*;

/// What the event engine keeps per end node (32 bytes): the cycle it last stepped (`u64::MAX`
/// before its first), its own next due cycle as filed in the calendar, the flat switch port its
/// link is cabled to (`NIL`: another node), and the cycles (modulo 32) in which a head, or a
/// credit record or ARN, reaches it on its link and has not been read yet.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct NodeSteps {
    pub(super) last: u64,
    due: u64,
    pub(super) port: u32,
    heads: u32,
    backs: u32,
}

impl NodeSteps {
    pub(super) fn new(port: u32) -> Self {
        NodeSteps {
            last: u64::MAX,
            due: 0,
            port,
            heads: 0,
            backs: 0,
        }
    }
}

const _: () = assert!(std::mem::size_of::<NodeSteps>() == 32);

/// The bit of cycle `at` in a node's marks.
#[inline(always)]
fn mark(at: u64) -> u32 {
    1 << (at & 31)
}

/// What a node sends in a cycle, turned into events and records of the event engine.
struct NodeLink<'a, const V: usize> {
    core: &'a mut EventCore<V>,
    /// The flat switch port the node is cabled to.
    port: u32,
}

impl<const V: usize> LinkSend<V> for NodeLink<'_, V> {
    fn send_flit(&mut self, now: u64, _ch: u32, flit: Flit) {
        let c = &mut *self.core;
        c.file(
            c.part,
            now + c.latency,
            Ev::new(Kind::Head, self.port),
            Some(flit.pkt),
        );
    }

    fn send_back(&mut self, now: u64, _ch: u32, b: Backward<V>) {
        let c = &mut *self.core;
        c.file_credits(self.port, &b, now + c.latency);
    }
}

impl<const V: usize> EventCore<V> {
    /// Whether a node's marks can tell its arrivals apart: all of a link's records on their way
    /// arrive within 32 cycles (else a step reads its channels).
    #[inline(always)]
    fn marks_arrivals(&self) -> bool {
        self.latency < 31
    }

    /// Files the credit streams of record `b` for output `port`, arriving in cycle `at`.
    fn file_credits(&mut self, port: u32, b: &Backward<V>, at: u64) {
        for v in 0..V {
            if b.start[v] > 0 {
                let mut ev = Ev::new(Kind::CreditsStart, port);
                ev.vc = v as u8;
                ev.count = b.start[v];
                ev.arg = b.start_flits[v];
                self.cal.push(at, ev);
            }
        }
        for v in 0..V {
            if b.stop[v] > 0 {
                let mut ev = Ev::new(Kind::CreditsStop, port);
                ev.vc = v as u8;
                ev.count = b.stop[v];
                self.cal.push(at, ev);
            }
        }
    }

    /// Sends the head of `pkt` to node `n` in cycle `now`.
    #[inline]
    pub(super) fn send_head_to_node(&mut self, env: &Env<V>, n: u32, pkt: Packet, now: u64) {
        // SAFETY: a node belongs to the part of the port it is cabled to, this one.
        unsafe {
            let ch = env.node(n).in_channel();
            env.channel(ch).send_flit(now, Flit { pkt, index: 0 });
        }
        let at = now + self.latency;
        self.node_steps[n as usize].heads |= mark(at);
        self.cal.push(at, Ev::new(Kind::Node, n));
    }

    /// End node `n` steps cycle `now` (once, however many events ask for it).
    pub(super) fn step_node(&mut self, env: &Env<V>, n: u32, now: u64) -> Result<(), Violation> {
        let k = n as usize;
        let steps = self.node_steps[k];
        let last = steps.last;
        if last != u64::MAX && last >= now {
            return Ok(());
        }
        // SAFETY: this part owns node `n` (its events are filed only here) and its channels,
        // and holds no other reference to them.
        let (node, rx, tx) = unsafe {
            let node = env.node(n);
            let (i, o) = (node.in_channel(), node.out_channel());
            (node, &*env.channel(i), &*env.channel(o))
        };
        if now > 0 && (last == u64::MAX || last + 1 < now) {
            node.skip_to(now - 1);
        }
        let arriving = if self.marks_arrivals() {
            let bit = mark(now);
            Arriving {
                flits: (steps.heads & bit != 0) as u64,
                back: (steps.backs & bit != 0) as u64,
            }
        } else {
            Arriving {
                flits: rx.recv_flit(now).is_some() as u64,
                back: tx.recv_back(now).is_some() as u64,
            }
        };
        let port = steps.port;
        let before = node.progress();
        let mut link = NodeLink { core: self, port };
        let delivered = node.step_on(now, rx, tx, arriving, &mut link);
        if node.progress() != before {
            self.moved(now);
        }
        let due = node.due_after(now);
        let steps = &mut self.node_steps[k];
        let bit = mark(now);
        steps.heads &= !bit;
        steps.backs &= !bit;
        steps.last = now;
        if due != u64::MAX && due != steps.due {
            steps.due = due;
            self.cal.push(due, Ev::new(Kind::Node, n));
        }
        let Some(pkt) = delivered else {
            return Ok(());
        };
        let resequence = env.params.resequence;
        if !resequence && !crate::fabric::scheduler::order_counts(env.params.switch.lmc > 0, &pkt) {
            return Ok(());
        }
        // SAFETY: the entries of flows to node `n` belong to its part.
        if let Some(last) = unsafe { env.order(pkt.src as u32, n) } {
            let nodes = env.node_count();
            if crate::fabric::scheduler::in_order_of_flow(last, nodes, now, n, &pkt, resequence)? {
                node.count_resequenced();
            }
        }
        Ok(())
    }

    /// Writes the credit records the switch inputs facing this part's nodes send back in `now`.
    pub(super) fn send_node_backs(&mut self, env: &Env<V>, now: u64) {
        let odd = (now & 1) as usize;
        let at = now + self.latency;
        for k in 0..self.backs_due[odd].len() {
            let n = self.backs_due[odd][k];
            let b = std::mem::take(&mut self.node_back[odd][n as usize]);
            // SAFETY: node `n` and its channels belong to this part.
            unsafe {
                let ch = env.node(n).out_channel();
                env.channel(ch).send_back(now, b);
            }
            self.node_steps[n as usize].backs |= mark(at);
            self.cal.push(at, Ev::new(Kind::Node, n));
        }
        self.backs_due[odd].clear();
    }
}
