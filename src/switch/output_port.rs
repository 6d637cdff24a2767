//! The output port: credits and ARNs returning on the reverse direction of its link, the
//! two-level round-robin arbitration over (input, VC) pairs whose head packet fits in the
//! downstream credits (virtual cut-through), and one flit per cycle from head to tail.

use super::*;

impl<const V: usize> Switch<V> {
    /// Phase 2: credits and ARNs coming back on the output links.
    /// `ports`: the outputs where something comes back in `now`.
    /// Inlined at both call sites (the quiet cycles' short path and the full step): as a call it
    /// costs more than the short path saves.
    #[inline(always)]
    pub(super) fn receive_back<O: Observer>(
        &mut self,
        now: u64,
        channels: &[Channel<V>],
        ports: u64,
        obs: &mut O,
    ) -> Result<(), SwitchFault> {
        debug_assert!(
            (0..self.ports).all(|o| ports >> o & 1 == 1
                || channels[self.wiring.out_ch[o] as usize]
                    .recv_back(now)
                    .is_none()),
            "a return arrived unmarked"
        );
        let mut scan = ports;
        while scan != 0 {
            let o = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let Some(b) = channels[self.wiring.out_ch[o] as usize].recv_back(now) else {
                debug_assert!(false, "a marked return is missing");
                continue;
            };
            if b.has_credits() {
                let out = &mut self.outputs[o];
                if out.credits.arrive(b, now).is_err() {
                    return Err(SwitchFault {
                        port: o as u8,
                        what: "credit return streams out of step (more stopped or returned than started)".into(),
                    });
                }
                if let Some(v) = out.credits.overflow(self.vcs, now) {
                    return Err(SwitchFault {
                        port: o as u8,
                        what: format!(
                            "credit counter of VC {v}: more credits back than flits sent (overflow)"
                        ),
                    });
                }
                // Streams that start raise the credits of the cycles to come, so an idle output
                // may grant earlier than it expected. Streams that stop only lower them: the
                // output's wake stays as early as it was (an output is blocked only while no
                // stream runs, so a stop never finds it blocked).
                if b.starts_streams() {
                    if out.credits.arriving(now) {
                        self.skip.arb_blocked &= !(1 << o);
                    }
                    // The arbitration of a cycle reads the credits through the cycle before.
                    self.wake_output(o, now + 1);
                }
                debug_assert!(self.skip.arb_blocked >> o & 1 == 0 || b.starts_streams());
                // The detector's view of the credits changes from the next cycle on.
                self.skip.det_credits_stale |= 1 << o;
            }
            if let Some(mut info) = b.arn {
                info.port = o as u8;
                self.stats.arns_received += 1;
                obs.event(
                    now,
                    self.wiring.id,
                    SwitchEvent::ArnReceived {
                        port: o as u8,
                        info,
                    },
                );
                if self.params.routing.uses_arn() {
                    self.file_arn(info, false);
                }
            }
        }
        Ok(())
    }

    /// The requests output `o` sees: per input, the VCs whose head packet is ready and fits in
    /// the downstream credits (virtual cut-through), less the credit the output spends this cycle
    /// on `sending_vc`. Also whether some head was routed but is not ready yet.
    pub(super) fn requests(&self, o: usize, now: u64, sending_vc: Option<u8>) -> Requests<V> {
        if self.params.routing.escape_queues() {
            self.requests_of::<true>(o, now, sending_vc)
        } else {
            self.requests_of::<false>(o, now, sending_vc)
        }
    }

    /// [`Switch::requests`], with FA's adaptive heads (`FA`) or without.
    #[inline(always)]
    fn requests_of<const FA: bool>(
        &self,
        o: usize,
        now: u64,
        sending_vc: Option<u8>,
    ) -> Requests<V> {
        let mut r = Requests {
            inputs: 0,
            vcs: [0; V],
            unready: false,
            escapes: [0; V],
            any_escape: false,
        };
        let mut scan = self.skip.waiting[o];
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let buf = &self.inputs[i].buf;
            let mut vcs = 0u64;
            let mut escapes = 0u64;
            for v in 0..self.vcs {
                let Some((_, slot)) = buf.head(v, o) else {
                    continue;
                };
                if slot.ready > now {
                    r.unready = true;
                    continue;
                }
                let c = self.outputs[o]
                    .credits
                    .credits(slot.next_vc as usize, now.saturating_sub(1));
                let spent = (sending_vc == Some(slot.next_vc)) as u16;
                // An adaptive head also needs the escape half of the VC free (FA).
                let need = slot.pkt.len + if FA { slot.reserve } else { 0 };
                if c.saturating_sub(spent) >= need {
                    vcs |= 1 << v;
                } else if FA && slot.reserve != 0 {
                    escapes |= 1 << v;
                }
            }
            let bit = port_ix(i) * V;
            if vcs != 0 {
                r.vcs[bit / 64] |= vcs << (bit % 64);
                r.inputs |= 1 << i;
            }
            if FA && escapes != 0 {
                r.escapes[bit / 64] |= escapes << (bit % 64);
                r.any_escape = true;
            }
        }
        r
    }

    /// Phase 5: transmission and arbitration at every output that has something to do: its
    /// packet's head or tail leaves now, or it is idle and packets wait for it and it is not
    /// blocked. Between a packet's head and tail an output only sends the next flit, which the
    /// closed forms count; the others keep every register.
    pub(super) fn transmit<S: LinkSend<V>>(
        &mut self,
        now: u64,
        link: &mut S,
    ) -> Result<(), SwitchFault> {
        let candidates = self.candidates();
        let mut active = 0u64;
        // The earliest wake of the candidates not visited now: the visits below change only the
        // visited outputs' wakes and masks.
        let mut rest = u64::MAX;
        // The earliest wake FA's escapes give other outputs in this cycle.
        let mut escape_wake = u64::MAX;
        if now >= self.skip.next_wake {
            let mut scan = candidates;
            while scan != 0 {
                let o = scan.trailing_zeros() as usize;
                scan &= scan - 1;
                if self.skip.wake[o] <= now {
                    active |= 1 << o;
                } else {
                    rest = rest.min(self.skip.wake[o]);
                }
            }
        }
        #[cfg(debug_assertions)]
        for o in 0..self.ports {
            let out = &self.outputs[o];
            debug_assert!(out.next.is_none());
            debug_assert_eq!(self.skip.out_busy >> o & 1 == 1, out.tx.is_some());
            if let Some(tx) = out.tx {
                let event = if tx.start >= now { tx.start } else { tx.end() };
                debug_assert_eq!(self.skip.wake[o], event, "output {o} missed its packet");
            }
            if candidates >> o & 1 == 1 {
                debug_assert!(self.skip.next_wake <= self.skip.wake[o]);
            } else if out.tx.is_none() {
                debug_assert_eq!(self.skip.wake[o], u64::MAX, "output {o} idle with a wake");
            }
            if active >> o & 1 == 0 && out.tx.is_none() {
                debug_assert!(
                    self.requests(o, now, None).inputs == 0,
                    "output {o} skipped with a request"
                );
            }
        }
        let mut scan_outputs = active;
        while scan_outputs != 0 {
            let o = scan_outputs.trailing_zeros() as usize;
            scan_outputs &= scan_outputs - 1;
            let mut sending_vc: Option<u8> = None;
            let mut finishing = self.outputs[o].tx.is_none();
            let mut retry = u64::MAX;
            if let Some(tx) = self.outputs[o].tx {
                // A flit of the packet leaves in every cycle from its head to its tail.
                sending_vc = Some(tx.next_vc);
                let inp = &mut self.inputs[tx.input as usize];
                let underrun = |inp: &InputPort<V>| SwitchFault {
                    port: o as u8,
                    what: format!(
                        "cut-through underrun: packet {} leaves faster than it arrives",
                        inp.buf.slot(tx.slot).pkt.id
                    ),
                };
                if tx.start == now {
                    // The head: only it travels on the link, the body follows it cycle by cycle.
                    // The buffer frees one flit per cycle from head to tail: a credit stream.
                    let Some(vc) = inp.buf.start_departure(tx.slot, now) else {
                        return Err(underrun(inp));
                    };
                    self.freed[port_ix(tx.input as usize)].start_stream(vc, tx.len);
                    self.skip.in_pending |= 1 << tx.input;
                    let mut pkt = inp.buf.slot(tx.slot).pkt;
                    pkt.vc = tx.next_vc;
                    link.send_flit(now, self.wiring.out_ch[o], Flit { pkt, index: 0 });
                    self.skip.det_stale[o] |= 1 << tx.input;
                    self.skip.det_credits_stale |= 1 << o;
                    self.stats.packets_sent += 1;
                }
                if tx.end() == now {
                    let Some(vc) = inp.buf.finish_departure(o, now) else {
                        return Err(underrun(inp));
                    };
                    self.freed[port_ix(tx.input as usize)].stop_stream(vc);
                    self.skip.in_pending |= 1 << tx.input;
                    self.note_voq(tx.input as usize, o, now);
                    self.skip.det_credits_stale |= 1 << o;
                    self.stats.flits_sent += tx.len as u64;
                    self.outputs[o].tx = None;
                    finishing = true;
                }
            }
            // Arbitrate for the packet that follows (its head leaves next cycle).
            if finishing
                && self.outputs[o].next.is_none()
                && self.skip.waiting[o] != 0
                && self.skip.arb_blocked >> o & 1 == 0
            {
                let req = self.requests(o, now, sending_vc);
                let granted = req.inputs != 0;
                if granted {
                    let out = &mut self.outputs[o];
                    let gi = out.in_arb.step(&RrArbiterIn {
                        req: req.inputs,
                        ack: true,
                    });
                    let i = gi.idx as usize;
                    let ptr = &mut out.vc_ptr[port_ix(i)];
                    let mut vc_arb = RrArbiter::with_ptr(self.vcs, *ptr);
                    let gv = vc_arb.step(&RrArbiterIn {
                        req: req.vcs_of(i) as u128,
                        ack: true,
                    });
                    *ptr = vc_arb.regs().ptr;
                    let v = gv.idx as usize;
                    let buf = &mut self.inputs[i].buf;
                    let s = buf.pop(v, o);
                    self.skip.det_stale[o] |= 1 << i;
                    if (0..self.vcs).all(|w| buf.head(w, o).is_none()) {
                        self.skip.waiting[o] &= !(1 << i);
                        if self.skip.waiting[o] == 0 {
                            self.skip.waiting_any &= !(1 << o);
                        }
                    }
                    let slot = buf.slot(s);
                    out.next = Some(Tx {
                        input: i as u8,
                        slot: s,
                        next_vc: slot.next_vc,
                        len: slot.pkt.len,
                        start: now + 1,
                    });
                } else if sending_vc.is_none()
                    && !req.unready
                    && !self.outputs[o].credits.arriving(now)
                {
                    // Nothing can change this until a packet is routed here or credits return
                    // (credits that came back this cycle count from the next one).
                    self.skip.arb_blocked |= 1 << o;
                } else {
                    retry = self.retry_at(o, now);
                }
                if req.any_escape {
                    self.escape_heads(o, now, &req, &mut escape_wake);
                    // The heads behind them are looked at next cycle.
                    self.skip.arb_blocked &= !(1 << o);
                    if self.skip.waiting[o] == 0 {
                        retry = u64::MAX;
                    } else if !granted {
                        retry = now + 1;
                    }
                }
            }
            // The credits this cycle's arbitration read (through the cycle before) are settled
            // only now.
            let out = &mut self.outputs[o];
            if finishing && let Some(vc) = sending_vc {
                out.credits.finish_sending(vc as usize);
            }
            if let Some(next) = out.next.take() {
                out.credits
                    .start_sending(next.next_vc as usize, next.start, next.len);
                out.tx = Some(next);
            }
            match out.tx {
                Some(tx) => {
                    self.skip.out_busy |= 1 << o;
                    self.skip.wake[o] = if tx.start > now { tx.start } else { tx.end() };
                }
                None => {
                    self.skip.out_busy &= !(1 << o);
                    self.skip.wake[o] = retry;
                }
            }
        }
        if active != 0 {
            let mut next = rest;
            let mut scan = self.candidates() & active;
            while scan != 0 {
                let o = scan.trailing_zeros() as usize;
                scan &= scan - 1;
                next = next.min(self.skip.wake[o]);
            }
            self.skip.next_wake = next.min(escape_wake);
        }
        Ok(())
    }

    /// FA, at the arbitration of output `o`: every adaptive head that `req` found short of room
    /// in the adaptive half of its next VC leaves its queue for the tail of its escape route's,
    /// ready from the next cycle (in input, then VC order). `wake`: the earliest wake this gives
    /// another output.
    fn escape_heads(&mut self, o: usize, now: u64, req: &Requests<V>, wake: &mut u64) {
        for i in 0..self.ports {
            let mut vcs = req.escapes_of(i);
            while vcs != 0 {
                let v = vcs.trailing_zeros() as usize;
                vcs &= vcs - 1;
                let buf = &self.inputs[i].buf;
                let Some((_, slot)) = buf.head(v, o) else {
                    debug_assert!(false, "an escaping head is gone");
                    continue;
                };
                let pkt = slot.pkt;
                let e = slot.escape as usize;
                let next_vc = self
                    .params
                    .next_vc(&pkt, self.wiring.sl_to_vl.vl(e, i, pkt.sl));
                let buf = &mut self.inputs[i].buf;
                buf.escape(v, o, next_vc, now + 1);
                if (0..self.vcs).all(|w| buf.head(w, o).is_none()) {
                    self.skip.waiting[o] &= !(1 << i);
                    if self.skip.waiting[o] == 0 {
                        self.skip.waiting_any &= !(1 << o);
                    }
                }
                self.stats.packets_escaped += 1;
                self.note_voq(i, o, now);
                self.note_voq(i, e, now);
                self.skip.waiting[e] |= 1 << i;
                self.skip.waiting_any |= 1 << e;
                self.skip.arb_blocked &= !(1 << e);
                self.wake_output(e, now + 1);
                if e != o {
                    *wake = (*wake).min(self.skip.wake[e]);
                }
            }
        }
    }

    /// The first cycle after `now` in which idle output `o` could grant one of the packets
    /// waiting for it, if nothing else happens meanwhile (no packet routed to it, no credit
    /// record coming back: both wake the output at once): a head becomes ready, or the credits
    /// coming back at their current rate reach its length. `u64::MAX` when none could.
    pub(super) fn retry_at(&self, o: usize, now: u64) -> u64 {
        let credits = &self.outputs[o].credits;
        let mut best = u64::MAX;
        let mut scan = self.skip.waiting[o];
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let buf = &self.inputs[i].buf;
            for v in 0..self.vcs {
                let Some((_, slot)) = buf.head(v, o) else {
                    continue;
                };
                if slot.reserve != 0 {
                    // Granted or sent to its escape route as soon as it is looked at.
                    best = best.min((now + 1).max(slot.ready));
                    continue;
                }
                if let Some(at) = credits.first_fit(slot.next_vc as usize, slot.pkt.len, now) {
                    best = best.min(at.max(slot.ready));
                }
            }
        }
        best
    }

    /// Outputs with something to do: sending, or idle with packets waiting and not blocked.
    #[inline]
    pub(super) fn candidates(&self) -> u64 {
        self.skip.out_busy | (self.skip.waiting_any & !self.skip.arb_blocked)
    }

    /// Idle output `o`, with packets waiting and not blocked, has to arbitrate again by cycle
    /// `at`: a packet routed to it is ready then, or credits that came back count from then.
    /// Nothing else changed for it, so no earlier cycle could grant what its wake already did
    /// not. An idle output that is not such a candidate keeps its wake at `u64::MAX`.
    pub(super) fn wake_output(&mut self, o: usize, at: u64) {
        if (self.candidates() & !self.skip.out_busy) >> o & 1 == 1 {
            self.skip.wake[o] = self.skip.wake[o].min(at);
            self.skip.next_wake = self.skip.next_wake.min(at);
        }
    }
}
