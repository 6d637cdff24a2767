//! `input_port_ctrl.sv` on the event engine, every switch input: a head reaching it (link
//! receive; its routing stage, `routing_stage.rs`, runs in the cycle after), the FIFO of each
//! (VC, output) its routed packets wait in, kept beside the output's other FIFOs for its
//! arbitration, and the credits it frees going back upstream as streams. The timing is the
//! cycle engine's (`docs/switch.md`, "Stages and latencies").

use super::*;
use crate::blocks::lft_banks::NO_ROUTE;

/// A VOQ FIFO, kept beside the output's other VOQs: its first and last slots (`NIL` when it
/// is empty), the flits of its packets not yet gone (whole packets; the one leaving counted
/// whole until its tail leaves), and a copy of what the arbitration reads of its head packet.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Voq {
    pub(super) ready: u64,
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) flits: u32,
    pub(super) len: u16,
    pub(super) next_vc: u8,
}

impl Voq {
    pub(super) const EMPTY: Voq = Voq {
        ready: u64::MAX,
        head: NIL,
        tail: NIL,
        flits: 0,
        len: 0,
        next_vc: 0,
    };

    /// Slot `k` (holding `s`) becomes the head.
    #[inline]
    fn set_head(&mut self, k: u32, s: &Slot) {
        self.head = k;
        self.ready = s.ready;
        self.len = s.pkt.len;
        self.next_vc = s.next_vc;
    }

    /// Slot `k` (holding `s`, its next slot `NIL`) joins the FIFO; `prev` is the slot of its
    /// last packet, if any.
    #[inline]
    fn push(&mut self, k: u32, s: &Slot) -> Option<u32> {
        self.flits += s.pkt.len as u32;
        let prev = (self.tail != NIL).then_some(self.tail);
        if prev.is_none() {
            self.set_head(k, s);
        }
        self.tail = k;
        prev
    }

    /// The head leaves the FIFO (its flits stay counted until its tail leaves); its copy as it
    /// was. `slots` holds the FIFO's packets.
    #[inline]
    pub(super) fn pop(&mut self, slots: &[Slot]) -> Voq {
        let popped = *self;
        match slots[self.head as usize].next {
            NIL => (self.head, self.tail, self.ready) = (NIL, NIL, u64::MAX),
            next => self.set_head(next, &slots[next as usize]),
        }
        popped
    }
}

impl<const V: usize> EventCore<V> {
    /// Slot `k`, routed (its next slot `NIL`), joins the tail of VOQ `q`.
    #[inline]
    pub(super) fn enqueue(&mut self, q: usize, k: u32) {
        if let Some(prev) = self.voqs[q].push(k, &self.slots[k as usize]) {
            self.slots[prev as usize].next = k;
        }
    }

    /// The index of (flat output `out` of this part, input `i` of its switch) in `vc_ptr`.
    #[inline]
    pub(super) fn pair(&self, out: u32, i: usize) -> usize {
        self.out_row[out as usize] as usize * self.stride + i
    }

    /// Flits of the packets input `i` routed to flat output `out` and not yet gone, on every VC
    /// (whole packets; the one leaving counted whole until its tail leaves).
    #[inline]
    pub(super) fn voq_flits(&self, out: u32, i: usize) -> u32 {
        let q = self.voq(out, i, 0);
        self.voqs[q..q + self.vcs].iter().map(|v| v.flits).sum()
    }

    /// The index of the VOQ of (flat output `out`, input `i` of its switch, VC `vc`).
    #[inline]
    pub(super) fn voq(&self, out: u32, i: usize, vc: usize) -> usize {
        self.pair(out, i) * self.vcs + vc
    }

    /// A head reaches flat input `input` in `now`; the routing stage (in `now + 1`, `routing_stage.rs`)
    /// places it in the FIFO of its (VC, output), ready to request from `now + 2`.
    pub(super) fn head_arrives(
        &mut self,
        env: &Env<V>,
        input: u32,
        k: u32,
        now: u64,
    ) -> Result<(), Violation> {
        let Place {
            switch: s, port: i, ..
        } = self.ins[input as usize].place;
        let pkt = self.slots[k as usize].pkt;
        self.note_head_in(input, pkt, now);
        let Arrival { start, len, vc, .. } = self.ins[input as usize].arrival;
        if len > 0 {
            if start + len as u64 > now {
                return Err(Violation {
                    cycle: now,
                    invariant: "switch",
                    place: format!("switch {s} port {i}"),
                    detail: format!(
                        "head of packet {} while {} flits of the packet before are still due",
                        pkt.id,
                        start + len as u64 - now
                    ),
                });
            }
            self.got[input as usize * self.vcs + vc as usize] += len as u64;
        }
        self.ins[input as usize].arrival = Arrival {
            start: now,
            slot: k,
            len: pkt.len,
            vc: pkt.vc,
            out: NO_ROUTE,
        };
        self.route_later(env, input, k, now)
    }

    /// Input `input` frees a packet's flits from cycle `now` (a stream of `len` starting on `vc`)
    /// or returns the last of them (`len` 0: the stream stops); the record reaches the far end
    /// of its link `latency` cycles later. `now` is the cycle being processed or a later one (the
    /// next one at most towards a node).
    #[inline(always)]
    pub(super) fn credits_up(&mut self, input: u32, vc: u8, len: u16, now: u64) {
        self.note_credits_out(input, vc, len, now);
        let up = self.ins[input as usize].up;
        match up.peer() {
            Peer::Port(out) => {
                let kind = if len > 0 {
                    Kind::CreditsStart
                } else {
                    Kind::CreditsStop
                };
                let mut ev = Ev::new(kind, out);
                ev.vc = vc;
                ev.count = 1;
                ev.arg = len as u32;
                self.file(up.part(), now + self.latency, ev, None);
            }
            Peer::Node(n) => {
                let odd = (now & 1) as usize;
                let b = &mut self.node_back[odd][n as usize];
                if b.is_empty() {
                    self.backs_due[odd].push(n);
                }
                if len > 0 {
                    b.start_stream(vc as usize, len);
                } else {
                    b.stop_stream(vc as usize);
                }
            }
        }
    }
}
