//! `output_port.sv` on the event engine, every switch output: the credit streams coming back to
//! its counters, its packet's head and tail leaving, and the two-level round-robin arbitration
//! among the heads routed to it, under FCFS among the oldest of them (virtual cut-through; under
//! FA, adaptive heads short of room sent on to their escape routes), the grant marked with FECN
//! when the output's InfiniBand congestion control says so. The timing is the cycle
//! engine's (`docs/switch.md`, "Stages and latencies").

use super::*;
use crate::blocks::Block;
use crate::blocks::rr_arbiter::RrArbiterIn;
use crate::switch::{OutputArbitration, keep_oldest};
use crate::wire::PacketFlags;
use crate::wire::link::streamed;

/// What an output's arbitration did: the packet granted, whether some head was not ready yet,
/// and whether heads left for their escape routes (FA).
struct Arbitration {
    grant: Option<Tx>,
    unready: bool,
    escaped: bool,
}

impl<const V: usize> EventCore<V> {
    /// Idle output `out` with packets waiting has to arbitrate again by cycle `at`.
    #[inline(always)]
    pub(super) fn wake_output(&mut self, out: u32, at: u64) {
        let o = &mut self.outputs[out as usize];
        if o.tx.is_none() && o.waiting != 0 && (at < o.wake || o.wake == u64::MAX) {
            o.wake = at;
            self.cal.push(at, Ev::new(Kind::Output, out));
        }
    }

    /// Credit streams come back to output `ev.unit` in `now`.
    pub(super) fn credits_arrive(&mut self, ev: &Ev, now: u64) -> Result<(), Violation> {
        let out = ev.unit;
        let starts = ev.kind == Kind::CreditsStart;
        self.note_credits_in(out, ev.vc, ev.count, starts.then_some(ev.arg), now);
        let o = &mut self.outputs[out as usize];
        let ok = if starts {
            o.credits
                .arrive_on(ev.vc as usize, ev.count, ev.arg, 0, now)
        } else {
            o.credits.arrive_on(ev.vc as usize, 0, 0, ev.count, now)
        }
        .is_ok();
        // The counter of the record's VC, checked as each record arrives (a stream that returns
        // more than was sent is seen at its stop record at the latest).
        let v = ev.vc as usize;
        let overflow = o.credits.overflows(v, now).then_some(v);
        if !ok || overflow.is_some() {
            let Place {
                switch: s, port, ..
            } = self.ins[out as usize].place;
            let what = match overflow {
                Some(v) if ok => format!(
                    "credit counter of VC {v}: more credits back than flits sent (overflow)"
                ),
                _ => "credit return streams out of step (more stopped or returned than started)"
                    .to_string(),
            };
            return Err(Violation {
                cycle: now,
                invariant: "switch",
                place: format!("switch {s} port {port}"),
                detail: what,
            });
        }
        if starts {
            // The arbitration of a cycle reads the credits through the cycle before.
            self.wake_output(out, now + 1);
        }
        // A stream that starts may raise a head's credits above FCTh sooner than the detector
        // expects; one that stops only lowers them, later than it expects.
        if starts {
            self.det_stale(out, now + 1, false);
        }
        Ok(())
    }

    /// Output `out` in `now`: its packet's tail leaves, and an idle output (or one sending its
    /// tail) grants the next packet, whose head leaves in `now + 1` (what the head does then is
    /// done at the grant: nothing can change it).
    pub(super) fn visit_output(&mut self, env: &Env<V>, out: u32, now: u64) {
        let o = &self.outputs[out as usize];
        if o.wake != now || o.last == now {
            return;
        }
        self.outputs[out as usize].last = now;
        let p = self.ins[out as usize].place.port;
        // FECN: the flits queued for the output at the start of the cycle, before its tail
        // leaves.
        let queue = if env.params.switch.fecn.on() && self.outputs[out as usize].waiting != 0 {
            self.queued_for(out, now)
        } else {
            0
        };
        let mut sending_vc = None;
        if let Some(tx) = self.outputs[out as usize].tx {
            debug_assert_eq!(tx.end(), now, "an output is visited at its tail");
            sending_vc = Some(tx.next_vc);
            let in_vc = tx.vc;
            // Towards a switch the stream's stop was filed at the grant.
            if let Peer::Node(_) = self.ins[tx.input as usize].up.peer() {
                self.credits_up(tx.input, in_vc, 0, now);
            }
            self.gone[tx.input as usize * self.vcs + in_vc as usize] += tx.len as u64;
            let i = (tx.input + p as u32 - out) as usize;
            let q = self.voq(out, i, in_vc as usize);
            self.voqs[q].flits -= tx.len as u32;
            self.release(tx.slot);
            self.stats.flits_sent += tx.len as u64;
            self.outputs[out as usize].tx = None;
            self.moved(now);
        }
        let mut next = None;
        let mut retry = u64::MAX;
        if self.outputs[out as usize].waiting != 0 {
            let arb = if self.escape_queues {
                self.arbitrate::<true>(env, p as usize, out, now, sending_vc, queue)
            } else {
                self.arbitrate::<false>(env, p as usize, out, now, sending_vc, queue)
            };
            next = arb.grant;
            if next.is_none() {
                let blocked = sending_vc.is_none()
                    && !arb.unready
                    && !self.outputs[out as usize].credits.arriving(now);
                if !blocked {
                    retry = self.retry_at(out, now);
                }
            }
            if arb.escaped {
                // The heads behind the ones that left are looked at in the next cycle.
                retry = match (self.outputs[out as usize].waiting, next) {
                    (0, _) => u64::MAX,
                    (_, None) => now + 1,
                    (_, Some(_)) => retry,
                };
            }
        }
        let o = &mut self.outputs[out as usize];
        if let Some(vc) = sending_vc {
            o.credits.finish_sending(vc as usize);
        }
        if let Some(n) = next {
            o.credits.start_sending(n.next_vc as usize, n.start, n.len);
            o.tx = Some(n);
        }
        o.wake = match o.tx {
            Some(tx) => tx.end(),
            None => retry,
        };
        if let Some(tx) = next {
            // Nothing can change what the head does when it leaves in the next cycle: the input
            // starts freeing its flits then and the head goes on the link.
            let mut pkt = self.slots[tx.slot as usize].pkt;
            if tx.fecn {
                pkt.flags |= PacketFlags::FECN;
                self.stats.packets_marked += 1;
            }
            self.credits_up(tx.input, pkt.vc, tx.len, tx.start);
            // Its last credit leaves with its tail; towards a switch the record is filed now,
            // so that whatever a part files for another lands at least a link latency plus one
            // cycle later (`parts.rs`).
            if let Peer::Port(_) = self.ins[tx.input as usize].up.peer() {
                self.credits_up(tx.input, pkt.vc, 0, tx.end());
            }
            pkt.vc = tx.next_vc;
            self.send_head(env, out, pkt, tx.start);
            self.stats.packets_sent += 1;
            self.moves_next(now);
        }
        let o = &self.outputs[out as usize];
        if o.wake != u64::MAX {
            let at = o.wake;
            self.cal.push(at, Ev::new(Kind::Output, out));
        }
        // A head popped and a packet leaving: the detector sees it from the next cycle (a tail
        // alone changes nothing it does not expect).
        if next.is_some() {
            self.det_stale(out, now + 1, false);
        }
    }

    /// Sends the head of `pkt` on output `out` in cycle `now` (the next one).
    #[inline]
    fn send_head(&mut self, env: &Env<V>, out: u32, pkt: Packet, now: u64) {
        self.note_head_out(out, pkt, now);
        let down = self.down[out as usize];
        match down.peer() {
            Peer::Port(input) => {
                let head = Ev::new(Kind::Head, input);
                self.file(down.part(), now + self.latency, head, Some(pkt));
            }
            Peer::Node(n) => self.send_head_to_node(env, n, pkt, now),
        }
    }

    /// The heads of the VOQ FIFOs of input `i` for flat output `out`: (VC, head).
    #[inline]
    fn heads(&self, out: u32, i: usize) -> impl Iterator<Item = (usize, &Voq)> + '_ {
        let q = self.voq(out, i, 0);
        self.voqs[q..q + self.vcs]
            .iter()
            .enumerate()
            .filter(|(_, h)| h.head != NIL)
    }

    /// The two-level round-robin arbitration of output `p` of its switch (flat `out`) in `now`
    /// (under FCFS among the oldest, [`keep_oldest`]) over the ready heads that fit
    /// in the credits of their next VC (read through `now - 1`,
    /// less the flit sent now on `sending_vc`): the grant, whether some head was not ready, and
    /// under FA (`FA`) whether adaptive heads short of room in their next VC's adaptive half
    /// left for their escape routes (after the grant, [`EventCore::escape_heads`]). Under FECN
    /// marking the grant is marked by `blocks::fecn_marker` with the output's `queue` at the start of
    /// the cycle and whether some ready head lacked the credits to request.
    fn arbitrate<const FA: bool>(
        &mut self,
        env: &Env<V>,
        p: usize,
        out: u32,
        now: u64,
        sending_vc: Option<u8>,
        queue: u32,
    ) -> Arbitration {
        let base = out - p as u32;
        let o = &self.outputs[out as usize];
        let mut inputs = 0u64;
        // Per input, the VCs whose heads request, and under FA those that escape.
        let mut vcs = [0u16; 64];
        let mut escapes = [0u16; 64];
        let mut any_escape = false;
        let mut unready = false;
        let mut short = false;
        let mut scan = o.waiting;
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            for (v, head) in self.heads(out, i) {
                if head.ready > now {
                    unready = true;
                    continue;
                }
                let c = o
                    .credits
                    .credits(head.next_vc as usize, now.saturating_sub(1));
                let spent = (sending_vc == Some(head.next_vc)) as u16;
                // An adaptive head also needs the escape half of the VC free (FA).
                let reserve = if FA {
                    self.slots[head.head as usize].reserve
                } else {
                    0
                };
                if c.saturating_sub(spent) >= head.len + reserve {
                    vcs[i] |= 1 << v;
                    inputs |= 1 << i;
                } else {
                    short = true;
                    if FA && reserve != 0 {
                        escapes[i] |= 1 << v;
                        any_escape = true;
                    }
                }
            }
        }
        if inputs != 0 && env.params.switch.arbitration == OutputArbitration::Fcfs {
            // A head's stamp is its `ready` cycle.
            let stamp = |i, v| self.voqs[self.voq(out, i, v)].ready as u32;
            inputs = keep_oldest(inputs as u128, &mut vcs, stamp) as u64;
        }
        let grant = (inputs != 0).then(|| {
            let o = &mut self.outputs[out as usize];
            let i = o
                .in_arb
                .step(&RrArbiterIn {
                    req: inputs as u128,
                    ack: true,
                })
                .idx as usize;
            let pair = self.pair(out, i);
            let ptr = &mut self.vc_ptr[pair];
            let mut vc_arb = RrArbiter::with_ptr(self.vcs, *ptr);
            let v = vc_arb
                .step(&RrArbiterIn {
                    req: vcs[i] as u128,
                    ack: true,
                })
                .idx as usize;
            *ptr = vc_arb.regs().ptr;
            let q = self.voq(out, i, v);
            let head = self.voqs[q].pop(&self.slots);
            if self.voqs[q].head == NIL {
                self.leave_if_empty(out, i);
            }
            let fecn = &env.params.switch.fecn;
            let o = &mut self.outputs[out as usize];
            Tx {
                input: base + i as u32,
                slot: head.head,
                len: head.len,
                vc: v as u8,
                next_vc: head.next_vc,
                start: now + 1,
                fecn: fecn.on() && fecn.grant(p, queue, short, head.len, &mut o.mark_count),
            }
        });
        if FA && any_escape {
            self.escape_heads(env, out, p, now, &escapes);
        }
        Arbitration {
            grant,
            unready,
            escaped: FA && any_escape,
        }
    }

    /// Input `i` of flat output `out`'s switch no longer waits for it once its VOQs for it are
    /// empty.
    #[inline]
    fn leave_if_empty(&mut self, out: u32, i: usize) {
        if self.heads(out, i).next().is_none() {
            self.outputs[out as usize].waiting &= !(1 << i);
        }
    }

    /// FA, at the arbitration of output `p` (flat `out`) in `now`: every adaptive head in
    /// `escapes` (per input, its VCs), short of room in the adaptive half of its next VC, leaves
    /// its queue for the tail of its escape route's with its flits, ready from `now + 1`, in
    /// input, then VC order (Martínez et al., section 4.4); it joins that queue at the cycle's
    /// end ([`EventCore::join_escapes`]).
    fn escape_heads(&mut self, env: &Env<V>, out: u32, p: usize, now: u64, escapes: &[u16; 64]) {
        let base = out - p as u32;
        let s = self.ins[out as usize].place.switch as usize;
        let sl_to_vl = &env.switches[s].wiring().sl_to_vl;
        for (i, &mask) in escapes.iter().enumerate() {
            let mut vcs = mask;
            while vcs != 0 {
                let v = vcs.trailing_zeros() as usize;
                vcs &= vcs - 1;
                let q = self.voq(out, i, v);
                let k = self.voqs[q].pop(&self.slots).head;
                let slot = &mut self.slots[k as usize];
                debug_assert!(slot.reserve != 0, "an escaping head is adaptive");
                let (e, pkt) = (slot.escape, slot.pkt);
                slot.reserve = 0;
                slot.ready = now + 1;
                slot.next_vc = env
                    .params
                    .switch
                    .next_vc(&pkt, sl_to_vl.vl(e as usize, i, pkt.sl));
                slot.next = NIL;
                self.voqs[q].flits -= pkt.len as u32;
                if self.voqs[q].head == NIL {
                    self.leave_if_empty(out, i);
                }
                let flat = base + e as u32;
                self.escapes_due.push((out, flat, i as u16, v as u16, k));
                self.stats.packets_escaped += 1;
            }
        }
    }

    /// FA, at the end of cycle `now`: the heads that left for their escape routes in it join
    /// the tails of their new queues in the order of the outputs they left, then input and VC
    /// (the cycle engine's clock edge), ready from `now + 1`.
    pub(super) fn join_escapes(&mut self, now: u64) {
        let mut due = std::mem::take(&mut self.escapes_due);
        // Stable: the heads that left one output are already in input, then VC order.
        due.sort_by_key(|d| d.0);
        for &(_, flat, i, v, k) in &due {
            self.enqueue(self.voq(flat, i as usize, v as usize), k);
            // The rest of a packet still arriving comes to its new queue.
            let e = self.ins[flat as usize].place.port;
            let input = flat - e as u32 + i as u32;
            let a = &mut self.ins[input as usize].arrival;
            if a.slot == k {
                a.out = e as u8;
            }
            self.outputs[flat as usize].waiting |= 1 << i;
            self.wake_output(flat, now + 1);
        }
        due.clear();
        self.escapes_due = due;
    }

    /// FECN and QCN: the flits queued for flat output `out` at the start of cycle `now`, summed over its
    /// inputs as the cycle engine's VOQ registers hold them: the packets routed there, less the
    /// flits still due of the one arriving, the flits of the one leaving already gone, and the
    /// packets routed in `now` or later (they count from the cycle after their routing; under
    /// D-mod-K a head is placed at its arrival, a cycle before its routing, and a one-flit
    /// packet's input may have a new head by then, so they are listed apart, `routed_now`).
    pub(super) fn queued_for(&self, out: u32, now: u64) -> u32 {
        let Place { port, ports, .. } = self.ins[out as usize].place;
        let base = out - port as u32;
        let t = now.saturating_sub(1);
        let tx = self.outputs[out as usize].tx;
        let mut queue = 0;
        for i in 0..ports as usize {
            let input = base + i as u32;
            let mut occ = self.voq_flits(out, i);
            let a = self.ins[input as usize].arrival;
            // A head is routed in the cycle after it arrives.
            if a.out as u16 == port && a.len > 0 && a.start + 1 < now {
                occ -= (a.len - streamed(a.start, a.len, t)) as u32;
            }
            if let Some(tx) = tx
                && tx.input == input
            {
                occ -= streamed(tx.start, tx.len, t) as u32;
            }
            queue += occ;
        }
        let routed: u32 = self
            .routed_now
            .iter()
            .filter(|r| r.0 >= now && r.1 == out)
            .map(|r| r.2 as u32)
            .sum();
        queue - routed
    }

    /// The first cycle after `now` in which idle flat output `out` could grant one of the
    /// packets waiting for it if nothing else happened meanwhile (a head becomes ready, or the
    /// credits coming back at their current rate reach its length); `u64::MAX` when none could.
    fn retry_at(&self, out: u32, now: u64) -> u64 {
        let o = &self.outputs[out as usize];
        let mut best = u64::MAX;
        let mut scan = o.waiting;
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            for (_, head) in self.heads(out, i) {
                if self.escape_queues && self.slots[head.head as usize].reserve != 0 {
                    // FA: granted or sent to its escape route as soon as it is looked at.
                    best = best.min((now + 1).max(head.ready));
                    continue;
                }
                let fits = o.credits.first_fit(head.next_vc as usize, head.len, now);
                if let Some(at) = fits {
                    best = best.min(at.max(head.ready));
                }
            }
        }
        best
    }
}
