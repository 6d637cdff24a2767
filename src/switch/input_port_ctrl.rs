//! The input port controller (Rocher-Gonzalez et al., pseudo-codes 2 to 4): link receive of head
//! flits into the VOQ buffer, the routing stage with its LFT read and ARN-table lookups (consume
//! or forward, alternative port with the most AFC credits, the adapted bit), processARN commands,
//! and what each input sends back upstream: freed credits and at most one ARN per cycle.

use super::*;

impl<const V: usize> Switch<V> {
    pub(super) fn file_arn(&mut self, info: ArnInfo, adapted: bool) {
        if self.arn_cmds.push_back((info, adapted)).is_err() {
            self.stats.arn_commands_dropped += 1;
        }
    }

    /// pseudo-code 3: the option of `dest` with the most credits in the VC the packet would use,
    /// other than `avoid`. `NO_ROUTE` when there is none.
    pub(super) fn select_alternative(&self, dest: u16, vc: u8, avoid: u8, now: u64) -> u8 {
        let next_vc = self.params.afc().unwrap_or(vc) as usize;
        most_credits(&self.lft.options(dest | 1), self.ports, avoid, |p| {
            self.outputs[p as usize]
                .credits
                .credits(next_vc, now.saturating_sub(1))
        })
    }

    /// sendARN(inputPortID, ARNInfo) for `pkt` at input `i`, which hit the non-consumed entry of
    /// `r`: at most one ARN per entry and input per `arn_gap` cycles. An adapted packet's ARN
    /// names its original VC.
    pub(super) fn send_arn(&mut self, i: usize, r: &ArnLookupResult, pkt: &Packet, now: u64) {
        let e = r.idx as usize;
        let info = ArnInfo {
            dest: self.base_lid(pkt.dlid),
            port: r.port,
            vc: if pkt.adapted() { pkt.orig_vc } else { pkt.vc },
            arn_id: r.arn_id,
            root_info: r.root_info,
        };
        let inp = &mut self.inputs[i];
        if now >= inp.arn_ok_at[e] && inp.arn_out.push_back(info).is_ok() {
            inp.arn_ok_at[e] = now + self.params.arn_gap as u64;
            self.skip.in_pending |= 1 << i;
            self.skip.arn_queued |= 1 << i;
        }
    }

    /// Phase 3: routing stage (input port controller, pseudo-code 4).
    pub(super) fn route<O: Observer>(&mut self, now: u64, obs: &mut O) {
        let routing = self.params.routing;
        // Nothing to route, no command, no lookup to clear, and a table that is empty or only
        // counts its TTLs down this cycle: the stage keeps every register.
        if self.skip.route_pending == 0
            && self.skip.lookups_set == 0
            && self.arn_cmds.is_empty()
            && (!routing.uses_arn() || self.arn.count() == 0 || self.arn.age_idle_cycle())
        {
            return;
        }
        // processARN command for this cycle (pseudo-code 2), decided on current state.
        let cmd = self.arn_cmds.pop_front().filter(|_| routing.uses_arn());
        let pr = match cmd {
            Some((info, adapted)) => {
                let consumed = !adapted && self.wiring.stage == info.root_info;
                let alt_port = if consumed {
                    self.select_alternative(info.dest, info.vc, info.port, now)
                } else {
                    NO_ROUTE
                };
                ArnProcess::of(&info, consumed, alt_port, adapted)
            }
            None => ArnProcess::default(),
        };
        if pr.en || self.arn_in.pr.en {
            self.arn_in.pr = pr;
        }
        // Lookup ports: disabled, but for the inputs holding a head for the routing stage (only
        // the ports enabled last cycle need clearing).
        let mut scan = std::mem::take(&mut self.skip.lookups_set);
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            self.arn_in.lk[i] = ArnLookup::default();
        }
        if routing.uses_arn() {
            let mut scan = self.skip.route_pending;
            while scan != 0 {
                let i = scan.trailing_zeros() as usize;
                scan &= scan - 1;
                if let Some(s) = self.route_q[port_ix(i)] {
                    let p = &self.inputs[i].buf.slot(s).pkt;
                    // Adapted packets look up by their original VC, only to notify upstream.
                    self.arn_in.lk[i] = ArnLookup {
                        en: !p.adapted() || self.params.adapted_refresh,
                        dest: self.base_lid(p.dlid),
                        vc: if p.adapted() { p.orig_vc } else { p.vc },
                    };
                    self.skip.lookups_set |= 1 << i;
                }
            }
        }
        debug_assert!((0..self.ports).all(|i| {
            let set = self.skip.lookups_set >> i & 1 == 1;
            set || self.arn_in.lk[i] == ArnLookup::default()
        }));
        // An empty table with no command keeps its state and misses every lookup: skip it. So
        // does a table with no command and no lookup in a cycle where no entry expires, but for
        // its TTLs counting down, which it owes until its next evaluation.
        let arn_active = routing.uses_arn()
            && (pr.en || self.arn.count() > 0)
            && (pr.en || self.skip.lookups_set != 0 || !self.arn.age_idle_cycle());
        if arn_active {
            self.arn
                .evaluate_into(&self.arn_in, self.skip.lookups_set, &mut self.arn_res);
        }
        // Lookup result of input `i` (a miss when the table did not evaluate).
        let lookup = |sw: &Self, i: usize| {
            if arn_active {
                sw.arn_res.lk[i]
            } else {
                ArnLookupResult::default()
            }
        };
        if let Some((info, _)) = cmd
            && pr.add
            && arn_active
            && !self.arn_res.pr_hit
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

        debug_assert!(
            (0..self.ports)
                .all(|i| (self.skip.route_pending >> i & 1 == 1) == self.route_q[i].is_some())
        );
        let mut scan = std::mem::take(&mut self.skip.route_pending);
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let Some(s) = self.route_q[port_ix(i)].take() else {
                continue;
            };
            let mut pkt = self.inputs[i].buf.slot(s).pkt;
            let opts = self.lft.options(pkt.dlid);
            let det = opts.deterministic().unwrap_or(NO_ROUTE);
            let mut out = det;
            let mut adaptive = false;
            if !pkt.adapted() && det != NO_ROUTE {
                match routing {
                    RoutingMode::DModK => {}
                    RoutingMode::Oblivious => out = oblivious_choice(&opts, &mut self.rng, det),
                    RoutingMode::AdaptiveTh | RoutingMode::AdaptiveThAfi => {
                        if self.inputs[i]
                            .buf
                            .voq_occupancy(det as usize, now.saturating_sub(1))
                            > self.params.adaptive_threshold
                        {
                            let alt =
                                self.select_alternative(self.base_lid(pkt.dlid), pkt.vc, det, now);
                            if alt != NO_ROUTE {
                                out = alt;
                            }
                        }
                    }
                    RoutingMode::Arn | RoutingMode::ArnAfi => {
                        let r = lookup(self, i);
                        if r.consumed && r.alt_port != NO_ROUTE {
                            out = r.alt_port;
                        } else if r.hit && !r.consumed {
                            self.send_arn(i, &r, &pkt, now);
                        }
                    }
                    RoutingMode::Fa => {
                        let credits = |p: usize, nv: u8| {
                            self.outputs[p]
                                .credits
                                .credits(nv as usize, now.saturating_sub(1))
                        };
                        let a = fa_choice(&opts, self.ports, &pkt, |p| {
                            let vl = self.wiring.sl_to_vl.vl(p, i, pkt.sl);
                            let c = credits(p, self.params.next_vc(&pkt, vl));
                            (c, self.params.escape_credits(self.wiring.out_capacity[p]))
                        });
                        if a != NO_ROUTE {
                            out = a;
                            adaptive = true;
                        }
                    }
                }
                if out != det {
                    self.stats.packets_adapted += 1;
                    obs.event(
                        now,
                        self.wiring.id,
                        SwitchEvent::Adapted {
                            id: pkt.id,
                            det,
                            out,
                        },
                    );
                    if routing.afi() {
                        pkt.flags |= PacketFlags::ADAPTED;
                    }
                }
            }
            if pkt.adapted() && routing.uses_arn() && self.params.adapted_refresh {
                // An isolated packet keeps its tree's entries alive upstream; its route stays.
                let r = lookup(self, i);
                if r.hit && !r.consumed {
                    self.send_arn(i, &r, &pkt, now);
                }
            }
            if out == NO_ROUTE || out as usize >= self.ports {
                // No route: the packet stays unrouted; the watchdog reports it.
                continue;
            }
            let sl_vl = self.wiring.sl_to_vl.vl(out as usize, i, pkt.sl);
            let next_vc = self.params.next_vc(&pkt, sl_vl);
            let buf = &mut self.inputs[i].buf;
            buf.set_flags(s, pkt.flags);
            buf.route(s, out, next_vc, now + 1);
            if adaptive {
                let reserve = self
                    .params
                    .escape_credits(self.wiring.out_capacity[out as usize]);
                buf.set_adaptive(s, det, reserve);
            }
            self.note_voq(i, out as usize, now.saturating_sub(1));
            self.skip.waiting[out as usize] |= 1 << i;
            self.skip.waiting_any |= 1 << out;
            self.skip.arb_blocked &= !(1 << out);
            // Its head may win from the cycle it is ready (the next one).
            self.wake_output(out as usize, now + 1);
        }
        if arn_active {
            self.arn.commit();
        }
    }

    /// Phase 4: flits arriving on the input links. `heads`: the inputs where a packet's head
    /// arrives in `now`; the inputs receiving a packet's body take its next flit.
    pub(super) fn receive_flits(
        &mut self,
        now: u64,
        channels: &[Channel<V>],
        heads: u64,
    ) -> Result<(), SwitchFault> {
        debug_assert!(
            (0..self.ports).all(|i| heads >> i & 1 == 1
                || channels[self.wiring.in_ch[i] as usize]
                    .recv_flit(now)
                    .is_none()),
            "a head arrived unmarked"
        );
        let mut scan = heads;
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let Some(f) = channels[self.wiring.in_ch[i] as usize].recv_flit(now) else {
                debug_assert!(false, "a marked head is missing");
                continue;
            };
            let inp = &mut self.inputs[i];
            match inp.buf.arrive_head(f.pkt, now) {
                Ok(s) => {
                    self.route_q[port_ix(i)] = Some(s);
                    self.skip.route_pending |= 1 << i;
                }
                Err(fault) => {
                    let what = match fault {
                        ArrivalFault::StillArriving { id, left } => format!(
                            "head of packet {} while {left} flits of packet {id} are still due",
                            f.pkt.id
                        ),
                        ArrivalFault::PoolFull => "packet descriptor pool full".into(),
                        ArrivalFault::NoSuchVc => {
                            format!("flit on VC {} of a {}-VC port", f.pkt.vc, self.vcs)
                        }
                        ArrivalFault::Overflow => format!(
                            "VC {} overflow: a flit arrived with the buffer full (negative credit upstream)",
                            f.pkt.vc
                        ),
                    };
                    return Err(SwitchFault {
                        port: i as u8,
                        what,
                    });
                }
            }
        }
        Ok(())
    }

    /// Phase 6: credits and ARNs back upstream, from the inputs that have any.
    pub(super) fn finish_cycle<O: Observer, S: LinkSend<V>>(
        &mut self,
        now: u64,
        link: &mut S,
        obs: &mut O,
    ) {
        debug_assert!((0..self.ports).all(|i| self.skip.in_pending >> i & 1 == 1
            || (!self.freed[i].has_credits() && self.inputs[i].arn_out.is_empty())));
        let mut scan = self.skip.in_pending;
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let inp = &mut self.inputs[i];
            let queued = self.skip.arn_queued >> i & 1 == 1;
            debug_assert_eq!(queued, !inp.arn_out.is_empty());
            let arn = if queued {
                inp.arn_out.pop_front()
            } else {
                None
            };
            let freed = &mut self.freed[port_ix(i)];
            let b = Backward { arn, ..*freed };
            freed.clear_credits();
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
            if !b.is_empty() {
                link.send_back(now, self.wiring.in_ch[i], b);
            }
            if !queued || inp.arn_out.is_empty() {
                self.skip.in_pending &= !(1 << i);
                self.skip.arn_queued &= !(1 << i);
            }
        }
    }
}
