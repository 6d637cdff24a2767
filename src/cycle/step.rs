//! One clock cycle of the cycle engine, `switch.sv`'s own part of it: *evaluate* (phases 1 to 6
//! of the module documentation) reading the registers of the start of the cycle, the ARNs
//! arriving, the ARN unit (processARN queue and ARN table), then the clock edge. The ports'
//! phases are in the files of their modules: the detectors in `detection.rs`, the routing stages
//! in `routing_stage.rs`, link receive in `input_port_ctrl.rs`, the outputs in `output_port.rs`.

use super::*;
use crate::blocks::arn_table::ArnProcess;
use crate::blocks::lft_banks::NO_ROUTE;
use crate::switch::routing_stage::alternative;
use crate::switch::{Observer, SwitchEvent, SwitchFault};

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
        self.notify(inp, out);
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

    /// The clock edge.
    fn commit(&mut self, uses_arn: bool) {
        let ports = self.ports;
        // What a packet joining a FIFO now takes: the number of the cycle from which it requests.
        let stamp = (self.cycle + 1) as u32;
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
                self.inputs[i].apply_route(r, stamp);
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
            if let Some((i, v, tx, count)) = self.w.grants[o] {
                self.inputs[i as usize].apply_pop(v as usize, o);
                port.tx = Some(tx);
                port.mark_count = count;
                self.stats.packets_marked += tx.fecn as u64;
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
                    c.apply_escape(v, o, next_vc, stamp);
                    self.stats.packets_escaped += 1;
                }
            }
        }
        for i in 0..ports {
            self.inputs[i].apply_arn(self.w.arn_push[i], self.w.arn_pop[i], self.params.arn_gap);
        }
        if let Some(f) = self.flow.as_mut() {
            f.commit(&self.w.flow_cmds, &self.w.flow_delta);
        }
        self.commit_cnms();
        self.cycle += 1;
    }
}
