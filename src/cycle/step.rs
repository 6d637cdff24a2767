//! One clock cycle of the cycle engine: *evaluate* (phases 1 to 6 of the module documentation)
//! reading the registers of the start of the cycle, then the clock edge. The routing stages are
//! in `routing_stage.rs`.

use super::*;
use crate::blocks::arn_table::ArnProcess;
use crate::blocks::credit_counter::CreditCounterIn;
use crate::blocks::lft_banks::NO_ROUTE;
use crate::blocks::rr_arbiter::RrArbiterIn;
use crate::switch::routing_stage::alternative;
use crate::switch::{Observer, SwitchEvent, SwitchFault};
use crate::wire::Packet;

impl CycleSwitch {
    /// Steps one cycle: `inp[p]` is what port `p` receives, `out[p]` gets what it drives.
    pub fn step<O: Observer>(
        &mut self,
        inp: &[PortIn],
        out: &mut [PortOut],
        obs: &mut O,
    ) -> Result<(), SwitchFault> {
        debug_assert!(inp.len() == self.ports && out.len() == self.ports);
        for o in out.iter_mut() {
            *o = PortOut::default();
        }
        let now = self.cycle;
        let uses_arn = self.params.routing.uses_arn();
        self.w.new_cmds.clear();
        self.w.cmd_taken = false;
        self.w.arn_seq = self.arn_seq;
        for (c, p) in self.inputs.iter_mut().zip(inp) {
            c.evaluate_lft(&p.flit);
        }
        if uses_arn {
            self.detect(now, obs);
        }
        self.receive_arns(now, inp, obs);
        self.process_arn(now, obs);
        self.route(now, obs);
        self.receive_flits(inp)?;
        self.transmit(inp, out)?;
        // 6. The oldest waiting ARN of each input goes upstream.
        for (i, o) in out.iter_mut().enumerate() {
            let arn = self.inputs[i].arn_front(self.w.arn_push[i].map(|(a, _)| a));
            self.w.arn_pop[i] = arn.is_some();
            if let Some(info) = arn {
                self.stats.arns_sent += 1;
                obs.event(
                    now,
                    self.wiring.id,
                    SwitchEvent::ArnSent {
                        port: i as u8,
                        info,
                    },
                );
            }
            o.arn = arn;
        }
        self.commit(uses_arn);
        Ok(())
    }

    /// A processARN command joins the queue at the clock edge (after the older ones).
    pub(super) fn file_arn(&mut self, info: ArnInfo, adapted: bool) {
        if self.w.new_cmds.push((info, adapted)).is_err() {
            self.stats.arn_commands_dropped += 1;
        }
    }

    /// 2. ARNs arriving on the reverse direction of the output links.
    fn receive_arns<O: Observer>(&mut self, now: u64, inp: &[PortIn], obs: &mut O) {
        for (o, p) in inp.iter().enumerate() {
            if let Some(mut info) = p.arn {
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
    }

    /// Phase 3, the ARN unit: the oldest processARN command, this cycle's included, applied to
    /// the ARN table (pseudo-code 2; a consumed entry gets the alternative port with the most
    /// credits, pseudo-code 3), with the lookups of the inputs' routing stages.
    fn process_arn<O: Observer>(&mut self, now: u64, obs: &mut O) {
        let uses_arn = self.params.routing.uses_arn();
        let cmd = if uses_arn {
            self.cmds
                .front()
                .copied()
                .or_else(|| self.w.new_cmds.first().copied())
        } else {
            None
        };
        self.w.cmd_taken = cmd.is_some();
        let pr = match cmd {
            Some((info, adapted)) => {
                let consumed = !adapted && self.wiring.stage == info.root_info;
                let alt_port = if consumed {
                    // The LFT's read port of the ARN unit.
                    let row = self.lft.options(info.dest | 1);
                    alternative(
                        &self.params,
                        &row,
                        self.ports,
                        info.port,
                        info.vc,
                        |p, vc| self.outputs[p as usize].credits(vc),
                    )
                } else {
                    NO_ROUTE
                };
                ArnProcess::of(&info, consumed, alt_port, adapted)
            }
            None => ArnProcess::default(),
        };
        self.arn_in.pr = pr;
        self.lookups(uses_arn);
        if uses_arn {
            *self.arn_out = self.arn.evaluate(&self.arn_in);
            if let Some((info, _)) = cmd
                && pr.add
                && !self.arn_out.pr_hit
            {
                if pr.consumed {
                    self.stats.arns_consumed += 1;
                }
                obs.event(
                    now,
                    self.wiring.id,
                    SwitchEvent::EntryAdded {
                        info,
                        consumed: pr.consumed,
                        alt_port: pr.alt_port,
                    },
                );
            }
        }
    }

    /// 4. Link receive.
    fn receive_flits(&mut self, inp: &[PortIn]) -> Result<(), SwitchFault> {
        for (i, p) in inp.iter().enumerate() {
            self.w.arrivals[i] = None;
            let f = p.flit;
            if !f.valid {
                continue;
            }
            let c = &self.inputs[i];
            let fault = |what: String| SwitchFault {
                port: i as u8,
                what,
            };
            if f.vc as usize >= self.vcs {
                return Err(fault(format!(
                    "flit on VC {} of a {}-VC port",
                    f.vc, self.vcs
                )));
            }
            if c.occupancy(f.vc as usize) >= c.capacity() {
                return Err(fault(format!(
                    "VC {} overflow: a flit arrived with the buffer full (negative credit upstream)",
                    f.vc
                )));
            }
            if f.head {
                if let Some(rx) = c.rx() {
                    return Err(fault(format!(
                        "head of packet {} while {} flits of packet {} are still due",
                        f.desc.id,
                        rx.left,
                        c.slot(rx.slot).pkt.id
                    )));
                }
                let Some(slot) = c.free_slot() else {
                    return Err(fault("packet descriptor pool full".into()));
                };
                if f.tail != (f.desc.len <= 1) || f.desc.len == 0 {
                    return Err(fault(format!(
                        "head of packet {} with a wrong tail bit",
                        f.desc.id
                    )));
                }
                let pkt = Packet { vc: f.vc, ..f.desc };
                self.w.arrivals[i] = Some(ArrivalWrite::Head { slot, pkt });
            } else {
                let Some(rx) = c.rx() else {
                    return Err(fault("a body flit with no packet arriving".into()));
                };
                let pkt = &c.slot(rx.slot).pkt;
                if f.vc != pkt.vc || f.tail != (rx.left == 1) {
                    return Err(fault(format!(
                        "a body flit of packet {} out of step",
                        pkt.id
                    )));
                }
                self.w.arrivals[i] = Some(ArrivalWrite::Body);
            }
        }
        Ok(())
    }

    /// 5. The output ports: the next flit of each packet being sent, and arbitration.
    fn transmit(&mut self, inp: &[PortIn], out: &mut [PortOut]) -> Result<(), SwitchFault> {
        for o in 0..self.ports {
            self.w.sends[o] = None;
            self.w.grants[o] = None;
            let mut sending_vc = None;
            let mut finishing = true;
            if let Some(tx) = self.outputs[o].tx {
                let c = &self.inputs[tx.input as usize];
                let arriving = match self.w.arrivals[tx.input as usize] {
                    Some(ArrivalWrite::Body) => c.rx().is_some_and(|r| r.slot == tx.slot) as u16,
                    _ => 0,
                };
                if c.slot(tx.slot).arrived + arriving <= tx.sent {
                    return Err(SwitchFault {
                        port: o as u8,
                        what: format!(
                            "cut-through underrun: packet {} leaves faster than it arrives",
                            c.slot(tx.slot).pkt.id
                        ),
                    });
                }
                let tail = tx.sent + 1 == tx.len;
                out[o].flit = if tx.sent == 0 {
                    let mut pkt = c.slot(tx.slot).pkt;
                    pkt.vc = tx.next_vc;
                    LinkFlit::head_of(pkt)
                } else {
                    LinkFlit::body(tx.next_vc, tx.sent, tx.len)
                };
                out[tx.input as usize].credit[tx.in_vc as usize] += 1;
                sending_vc = Some(tx.next_vc);
                finishing = tail;
                self.w.sends[o] = Some((tx, tail));
            }
            let port = &mut self.outputs[o];
            for (v, cc) in port.credits.iter_mut().enumerate() {
                let dec = sending_vc == Some(v as u8);
                let inc = inp[o].credit[v];
                if cc.credits() as u32 + inc as u32 > cc.cap() as u32 + dec as u32 {
                    return Err(SwitchFault {
                        port: o as u8,
                        what: format!(
                            "credit counter of VC {v}: more credits back than flits sent (overflow)"
                        ),
                    });
                }
                cc.evaluate(&CreditCounterIn { dec, inc, need: 0 });
            }
            let ports = self.ports;
            self.w.escapes[o * ports..(o + 1) * ports].fill(0);
            if !finishing {
                continue;
            }
            // Requests: per input, the VCs whose head packet fits in the credits of the start of
            // the cycle, less the one this cycle's flit spends. FA's adaptive heads that do not
            // fit in the adaptive half leave for their escape route at the clock edge.
            let mut req_inputs = 0u128;
            for i in 0..ports {
                let (req, escapes) = self.vc_requests(i, o, sending_vc);
                if req != 0 {
                    req_inputs |= 1 << i;
                }
                self.w.escapes[o * ports + i] = escapes;
            }
            let g = self.outputs[o].in_arb.evaluate(&RrArbiterIn {
                req: req_inputs,
                ack: true,
            });
            if !g.valid {
                continue;
            }
            let i = g.idx as usize;
            let (req_vcs, _) = self.vc_requests(i, o, sending_vc);
            let gv = self.outputs[o].vc_arb[i].evaluate(&RrArbiterIn {
                req: req_vcs,
                ack: true,
            });
            let v = gv.idx as usize;
            let Some(s) = self.inputs[i].head(v, o) else {
                unreachable!("a granted VC has a head");
            };
            let slot = self.inputs[i].slot(s);
            let tx = Tx {
                input: i as u8,
                slot: s,
                in_vc: v as u8,
                next_vc: slot.next_vc,
                len: slot.pkt.len,
                sent: 0,
            };
            self.w.grants[o] = Some((i as u8, v as u8, tx));
        }
        Ok(())
    }

    /// The VCs of input `i` whose head packet for output `o` may win it this cycle, and (FA)
    /// those whose adaptive head is short of room in the adaptive half of its next VC.
    fn vc_requests(&self, i: usize, o: usize, sending_vc: Option<u8>) -> (u128, u16) {
        let c = &self.inputs[i];
        let (mut vcs, mut escapes) = (0u128, 0u16);
        for v in 0..self.vcs {
            let Some(s) = c.head(v, o) else { continue };
            let slot = c.slot(s);
            let spent = (sending_vc == Some(slot.next_vc)) as u16;
            let credits = self.outputs[o].credits(slot.next_vc as usize);
            let need = slot.pkt.len as u32 + slot.reserve as u32;
            if credits.saturating_sub(spent) as u32 >= need {
                vcs |= 1 << v;
            } else if slot.reserve > 0 {
                escapes |= 1 << v;
            }
        }
        (vcs, escapes)
    }
    /// The clock edge.
    fn commit(&mut self, uses_arn: bool) {
        let ports = self.ports;
        if uses_arn {
            for o in 0..ports {
                self.outputs[o].detector.commit();
                let root = &mut self.outputs[o].root;
                match self.w.roots[o] {
                    RootWrite::Keep => {
                        if let Some(r) = root {
                            r.refresh = r.refresh.saturating_sub(1);
                        }
                    }
                    RootWrite::Set(r) => *root = Some(r),
                    RootWrite::Clear => *root = None,
                }
            }
            self.arn.commit();
        }
        self.arn_seq = self.w.arn_seq;
        for &c in &self.w.new_cmds {
            if self.cmds.push_back(c).is_err() {
                self.stats.arn_commands_dropped += 1;
            }
        }
        if self.w.cmd_taken {
            self.cmds.pop_front();
        }
        for i in 0..ports {
            if let Some(r) = self.w.routes[i] {
                self.inputs[i].apply_route(r);
            }
            self.inputs[i].apply_arrival(self.w.arrivals[i]);
        }
        for o in 0..ports {
            let port = &mut self.outputs[o];
            if let Some((tx, tail)) = self.w.sends[o] {
                self.inputs[tx.input as usize].apply_departure(tx.slot, o, tail);
                port.sent[tx.next_vc as usize] += 1;
                self.stats.flits_sent += 1;
                self.stats.packets_sent += (tx.sent == 0) as u64;
                port.tx = (!tail).then_some(Tx {
                    sent: tx.sent + 1,
                    ..tx
                });
            }
            if let Some((i, v, tx)) = self.w.grants[o] {
                self.inputs[i as usize].apply_pop(v as usize, o);
                port.tx = Some(tx);
            }
            for cc in &mut port.credits {
                cc.commit();
            }
            port.in_arb.commit();
            for a in &mut port.vc_arb {
                a.commit();
            }
        }
        // FA's escapes, output by output, then input by input and VC by VC.
        for o in 0..ports {
            for i in 0..ports {
                let mut vcs = self.w.escapes[o * ports + i];
                while vcs != 0 {
                    let v = vcs.trailing_zeros() as usize;
                    vcs &= vcs - 1;
                    let c = &mut self.inputs[i];
                    let Some(s) = c.head(v, o) else {
                        debug_assert!(false, "an escaping head is gone");
                        continue;
                    };
                    let slot = c.slot(s);
                    let vl = self
                        .wiring
                        .sl_to_vl
                        .vl(slot.escape as usize, i, slot.pkt.sl);
                    let next_vc = self.params.next_vc(&slot.pkt, vl);
                    c.apply_escape(v, o, next_vc);
                    self.stats.packets_escaped += 1;
                }
            }
        }
        for i in 0..ports {
            self.inputs[i].apply_arn(self.w.arn_push[i], self.w.arn_pop[i], self.params.arn_gap);
        }
        self.cycle += 1;
    }
}
