//! `routing_stage.sv`, one per input: in the cycle after a head arrived, its LFT read being
//! ready, the ARN-table lookup it asks for, the routing mode's choice
//! ([`crate::switch::routing_stage::choose`], on what this switch registered at the start of the
//! cycle), the next VC and adapted bit of the packet, and the ARN it sends upstream (sendARN,
//! pseudo-code 4), and under flow routing what the head writes to its route cache and the flow
//! counts (`flow.rs`). What the stage decides is written at the clock edge.

use super::*;
use crate::blocks::arn_table::{ArnLookup, ArnLookupResult};
use crate::blocks::lft_banks::{LftOptions, NO_ROUTE};
use crate::blocks::route_cache::Gcid;
use crate::switch::flow::{cache_command, count_change, gcid};
use crate::switch::routing_stage::{StageInputs, arn_lookup, choose, sends_arn, upstream_arn};
use crate::switch::{Observer, SwitchEvent};
use crate::wire::Packet;

/// What the routing stage of input `i` reads of its switch: its registers at the start of the
/// cycle.
struct Stage<'a> {
    input: &'a InputPortCtrl,
    outputs: &'a [OutputPort],
    wiring: &'a SwitchWiring,
    rng: &'a mut SplitMix64,
    i: usize,
    lookup: ArnLookupResult,
    snoop: Option<&'a mut qcn::SnoopUnit>,
    flow: Option<&'a flow::FlowUnit>,
    flow_delta: &'a [i32],
    gcid: Gcid,
}

impl StageInputs for Stage<'_> {
    fn ports(&self) -> usize {
        self.outputs.len()
    }

    fn row(&self) -> LftOptions {
        self.input.lft_options()
    }

    fn options(&self, dlid: u16) -> LftOptions {
        self.input.lft.options(dlid)
    }

    fn voq(&self, out: u8) -> u32 {
        self.input.voq_occupancy(out as usize) as u32
    }

    fn credits(&self, out: u8, vc: usize) -> u16 {
        self.outputs[out as usize].credits(vc)
    }

    fn capacity(&self, out: u8) -> u16 {
        self.wiring.out_capacity[out as usize]
    }

    fn vl(&self, out: u8, sl: u8) -> u8 {
        self.wiring.sl_to_vl.vl(out as usize, self.i, sl)
    }

    fn lookup(&self) -> ArnLookupResult {
        self.lookup
    }

    fn rng(&mut self) -> &mut SplitMix64 {
        self.rng
    }

    fn up_ports(&self) -> u64 {
        self.wiring.up_ports
    }

    fn smodk_div(&self) -> u32 {
        self.wiring.smodk_div
    }

    fn congested(&self, dest: u16) -> u64 {
        self.snoop.as_ref().map_or(0, |u| u.table.mask(dest))
    }

    fn snoop_rr(&mut self) -> &mut u8 {
        &mut self
            .snoop
            .as_mut()
            .expect("snooped AR has a congestion table")
            .rr[self.i]
    }

    fn cached(&self) -> Option<u8> {
        self.flow.and_then(|f| f.caches[self.i].port(self.gcid))
    }

    fn cache_full(&self) -> bool {
        self.flow
            .is_some_and(|f| f.caches[self.i].count() == self.params_entries())
    }

    fn flows(&self, out: u8) -> u16 {
        self.flow.map_or(0, |f| f.seen(out, self.flow_delta))
    }
}

impl Stage<'_> {
    /// The entries of this input's route cache.
    fn params_entries(&self) -> usize {
        self.flow.map_or(0, |f| f.caches[self.i].slots().len())
    }
}

impl CycleSwitch {
    /// Phase 3: the ARN-table lookup of each input's routing stage (`lk_*_o`), for the head it
    /// routes this cycle, under ARN routing.
    pub(super) fn lookups(&mut self, uses_arn: bool) {
        for i in 0..self.ports {
            self.arn_in.lk[i] = match self.inputs[i].route_q() {
                Some(s) if uses_arn => arn_lookup(&self.params, &self.inputs[i].slot(s).pkt),
                _ => ArnLookup::default(),
            };
        }
    }

    /// Phase 3: the routing stage of every input, on the ARN table's lookups of this cycle.
    pub(super) fn route<O: Observer>(&mut self, now: u64, obs: &mut O) {
        let uses_arn = self.params.routing.uses_arn();
        self.w.flow_delta.fill(0);
        for i in 0..self.ports {
            self.w.routes[i] = None;
            self.w.arn_push[i] = None;
            self.w.flow_cmds[i] = Default::default();
            let Some(s) = self.inputs[i].route_q() else {
                continue;
            };
            let pkt = self.inputs[i].slot(s).pkt;
            let lookup = if uses_arn {
                self.arn_out.lk[i]
            } else {
                ArnLookupResult::default()
            };
            let det = self.inputs[i]
                .lft_options()
                .deterministic()
                .unwrap_or(NO_ROUTE);
            let mut stage = Stage {
                input: &self.inputs[i],
                outputs: &self.outputs,
                wiring: &self.wiring,
                rng: &mut self.rng,
                i,
                lookup,
                snoop: self.cnm.snoop.as_mut(),
                flow: self.flow.as_ref(),
                flow_delta: &self.w.flow_delta,
                gcid: gcid(&pkt),
            };
            let route = choose(&self.params, &pkt, det, &mut stage);
            let out = route.out;
            if self.flow.is_some()
                && !pkt.adapted()
                && det != NO_ROUTE
                && (out as usize) < self.ports
            {
                self.w.flow_cmds[i] = cache_command(&pkt, det, out);
                self.w.flow_delta[out as usize] += count_change(&pkt) as i32;
            }
            if route.rerouted() {
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
            }
            if uses_arn && sends_arn(&self.params, &pkt, det, &lookup) {
                self.send_arn(i, &lookup, &pkt);
            }
            self.w.routes[i] = Some(if out == NO_ROUTE || out as usize >= self.ports {
                // No route: the packet stays unrouted; the watchdog reports it.
                RouteWrite {
                    slot: s,
                    out: NO_ROUTE,
                    next_vc: 0,
                    flags: pkt.flags,
                    adaptive: None,
                }
            } else {
                let pkt = Packet {
                    flags: route.flags(&self.params, pkt.flags),
                    ..pkt
                };
                let vl = self.wiring.sl_to_vl.vl(out as usize, i, pkt.sl);
                RouteWrite {
                    slot: s,
                    out,
                    next_vc: self.params.next_vc(&pkt, vl),
                    flags: pkt.flags,
                    adaptive: (route.reserve != 0).then_some((det, route.reserve)),
                }
            });
        }
    }

    /// sendARN for `pkt` at input `i`, whose lookup hit the non-consumed entry of `r`: at most
    /// one ARN per entry and input per `arn_gap` cycles, while the FIFO has room.
    fn send_arn(&mut self, i: usize, r: &ArnLookupResult, pkt: &Packet) {
        if self.inputs[i].may_send_arn(r.idx as usize) {
            self.w.arn_push[i] = Some((upstream_arn(&self.params, pkt, r), r.idx));
        }
    }
}
