//! `routing_stage.sv` on the event engine, the routing stage of every switch input: in the cycle
//! after a head reaches an input, its LFT row is read and the routing mode picks the output
//! ([`crate::switch::routing_stage::choose`], the cycle engine's choice, on what the switch
//! registered at the start of the cycle: `docs/switch.md`, "Stages and latencies"); the packet
//! joins the FIFO of its (VC, output) with its next VC.
//!
//! Under D-mod-K the stage reads nothing that changes, so a head is routed as it arrives. Under
//! Oblivious it draws from the switch's random stream, and under Adaptive-Th and FA it reads the
//! VOQ occupancy and the credits as of the cycle before: a switch's heads of one cycle are then
//! routed together at the start of the next, before its events, in input order (the order of
//! the draws). Under ARN the head's lookup and the ARN it sends upstream are decided as it
//! arrives (`arn.rs`).

use super::*;
use crate::blocks::arn_table::ArnLookupResult;
use crate::blocks::lft_banks::{LftOptions, NO_ROUTE};
use crate::blocks::route_cache::Gcid;
use crate::fabric::SwitchSetup;
use crate::switch::flow::{cache_command, count_change, gcid};
use crate::switch::routing_stage::{StageInputs, choose};
use crate::wire::link::streamed;

/// What the routing stage of flat input `input` reads of its switch in cycle `r`: its registers
/// as of the end of `r - 1`.
struct Stage<'a, 'e, const V: usize> {
    core: &'a mut EventCore<V>,
    env: &'a Env<'e, V>,
    input: u32,
    r: u64,
    /// The head's DLID. Oblivious and FA read its row again rather than keep the read that gave
    /// its deterministic port: keeping it measured slower in every mode.
    dlid: u16,
    /// The head's GCID (flow routing).
    gcid: Gcid,
}

impl<const V: usize> Stage<'_, '_, V> {
    #[inline(always)]
    fn place(&self) -> Place {
        self.core.ins[self.input as usize].place
    }

    #[inline(always)]
    fn unit(&self) -> &SwitchSetup {
        &self.env.switches[self.place().switch as usize]
    }

    /// The flat index of output `out` of the switch.
    #[inline(always)]
    fn flat(&self, out: u8) -> usize {
        (self.input - self.place().port as u32 + out as u32) as usize
    }
}

impl<const V: usize> StageInputs for Stage<'_, '_, V> {
    #[inline(always)]
    fn ports(&self) -> usize {
        self.place().ports as usize
    }

    #[inline(always)]
    fn row(&self) -> LftOptions {
        self.unit().lft().options(self.dlid)
    }

    #[inline(always)]
    fn options(&self, dlid: u16) -> LftOptions {
        self.unit().lft().options(dlid)
    }

    #[inline(always)]
    fn voq(&self, out: u8) -> u32 {
        self.core
            .voq_occupancy(self.input, out as usize, self.r - 1)
    }

    #[inline(always)]
    fn credits(&self, out: u8, vc: usize) -> u16 {
        self.core.outputs[self.flat(out)]
            .credits
            .credits(vc, self.r - 1)
    }

    #[inline(always)]
    fn capacity(&self, out: u8) -> u16 {
        self.core.outputs[self.flat(out)].credits.cap()
    }

    #[inline(always)]
    fn vl(&self, out: u8, sl: u8) -> u8 {
        let i = self.place().port as usize;
        self.unit().wiring().sl_to_vl.vl(out as usize, i, sl)
    }

    #[inline(always)]
    fn lookup(&self) -> ArnLookupResult {
        self.core
            .arn
            .as_ref()
            .map_or_else(ArnLookupResult::default, |a| a.lookups[self.input as usize])
    }

    #[inline(always)]
    fn rng(&mut self) -> &mut SplitMix64 {
        let s = self.place().switch as usize;
        &mut self.core.rngs[s]
    }

    #[inline(always)]
    fn up_ports(&self) -> u64 {
        self.unit().wiring().up_ports
    }

    #[inline(always)]
    fn smodk_div(&self) -> u32 {
        self.unit().wiring().smodk_div
    }

    #[inline(always)]
    fn congested(&self, dest: u16) -> u64 {
        // Brought to the start of `r` before the stage ran.
        let s = self.place().switch as usize;
        self.core
            .snoops
            .as_ref()
            .map_or(0, |t| t.table_now(s).mask(dest))
    }

    #[inline(always)]
    fn snoop_rr(&mut self) -> &mut u8 {
        let t = self
            .core
            .snoops
            .as_mut()
            .expect("snooped AR has its tables");
        &mut t.rr[self.input as usize]
    }

    #[inline(always)]
    fn cached(&self) -> Option<u8> {
        let f = self.core.flows.as_ref()?;
        f.cached(self.input, self.gcid)
    }

    #[inline(always)]
    fn cache_full(&self) -> bool {
        self.core.flows.as_ref().is_some_and(|f| f.full(self.input))
    }

    #[inline(always)]
    fn flows(&self, out: u8) -> u16 {
        let flat = self.flat(out) as u32;
        self.core
            .flows
            .as_ref()
            .map_or(0, |f| f.count(flat, self.r))
    }
}

impl<const V: usize> EventCore<V> {
    /// The head in slot `k` reached flat input `input` in `now`: routed now (D-mod-K, S-mod-K:
    /// what they read does not change), or left
    /// for its switch's routing stage at the start of `now + 1`.
    #[inline(always)]
    pub(super) fn route_later(
        &mut self,
        env: &Env<V>,
        input: u32,
        k: u32,
        now: u64,
    ) -> Result<(), Violation> {
        if matches!(
            env.params.switch.routing,
            RoutingMode::DModK | RoutingMode::SModK
        ) {
            return self.route(env, input, k, now + 1);
        }
        let Place {
            switch,
            port,
            ports,
        } = self.ins[input as usize].place;
        if self.arn.is_some() {
            let dlid = self.slots[k as usize].pkt.dlid;
            let det = deterministic(&env.switches[switch as usize].lft().options(dlid), ports);
            self.look_up(env, input, k, det, now);
            self.ins[input as usize].det = det;
        }
        let heads = &mut self.route_heads[switch as usize];
        if *heads == 0 {
            self.routes_due[((now + 1) & 1) as usize].push(input - port as u32);
        }
        *heads |= 1 << port;
        Ok(())
    }

    /// The routing stages of cycle `now`: each switch with heads that arrived in `now - 1`
    /// routes them, in input order.
    pub(super) fn route_stage(&mut self, env: &Env<V>, now: u64) -> Result<(), Violation> {
        self.routed_now.retain(|r| r.0 >= now);
        let odd = (now & 1) as usize;
        // Routing files nothing for this parity: the list stays as it is while it is read.
        for j in 0..self.routes_due[odd].len() {
            let base = self.routes_due[odd][j];
            let s = self.ins[base as usize].place.switch as usize;
            let mut scan = std::mem::take(&mut self.route_heads[s]);
            while scan != 0 {
                let input = base + scan.trailing_zeros();
                scan &= scan - 1;
                self.route(env, input, self.ins[input as usize].arrival.slot, now)?;
            }
        }
        self.routes_due[odd].clear();
        Ok(())
    }

    /// Whether a routing stage is due in `now`.
    #[inline]
    pub(super) fn routes_due(&self, now: u64) -> bool {
        !self.routes_due[(now & 1) as usize].is_empty()
    }

    /// Flits of flat input `input` routed to output `o` of its switch, as of the end of cycle
    /// `through` (the VOQ occupancy Adaptive-Th reads): the packets routed there, less the flits
    /// of the one leaving gone by then. Every packet but the last arrived is whole.
    fn voq_occupancy(&self, input: u32, o: usize, through: u64) -> u32 {
        let i = self.ins[input as usize].place.port as usize;
        let out = input - i as u32 + o as u32;
        let mut occ = self.voq_flits(out, i);
        if let Some(tx) = self.outputs[out as usize].tx
            && tx.input == input
        {
            occ -= streamed(tx.start, tx.len, through) as u32;
        }
        occ
    }

    /// The routing stage of flat input `input` in cycle `r` for the head in slot `k`: its LFT
    /// row, the routing mode's choice, and the packet placed in the FIFO of its (VC, output),
    /// ready to request from `r + 1`. A packet sent off its deterministic port is counted, and
    /// marked adapted under AFI; under FA a packet on an adaptive option keeps the escape half's
    /// credits and its escape route in its slot, for the arbitration (`output_port.rs`).
    #[inline(always)]
    fn route(&mut self, env: &Env<V>, input: u32, k: u32, r: u64) -> Result<(), Violation> {
        let Place {
            switch: s,
            port: i,
            ports,
        } = self.ins[input as usize].place;
        let i = i as usize;
        let sp = &env.params.switch;
        let unit = &env.switches[s as usize];
        let pkt = self.slots[k as usize].pkt;
        // Under ARN the row was read at the head's arrival for the ARN table's lookup.
        let det = match self.arn {
            Some(_) => self.ins[input as usize].det,
            None => deterministic(&unit.lft().options(pkt.dlid), ports),
        };
        if let Some(t) = self.snoops.as_mut() {
            t.table_at(s as usize, r);
        }
        let mut stage = Stage {
            core: self,
            env,
            input,
            r,
            dlid: pkt.dlid,
            gcid: gcid(&pkt),
        };
        let route = choose(sp, &pkt, det, &mut stage);
        let out = route.out;
        if let Some(f) = self.flows.as_mut()
            && !pkt.adapted()
            && det != NO_ROUTE
            && (out as u16) < ports
        {
            let flat = input - i as u32 + out as u32;
            f.routed(
                input,
                cache_command(&pkt, det, out),
                flat,
                count_change(&pkt),
                r,
            );
        }
        let slot = &mut self.slots[k as usize];
        if route.rerouted() {
            self.stats.packets_adapted += 1;
            slot.pkt.flags = route.flags(sp, slot.pkt.flags);
        }
        if route.reserve != 0 {
            slot.reserve = route.reserve;
            slot.escape = det;
        }
        let pkt = slot.pkt;
        if out == NO_ROUTE || out as u16 >= ports {
            return Err(Violation {
                cycle: r,
                invariant: "switch",
                place: format!("switch {s} port {i}"),
                detail: format!("packet {} to LID {} has no route", pkt.id, pkt.dlid),
            });
        }
        let o = out as usize;
        let vl = unit.wiring().sl_to_vl.vl(o, i, pkt.sl);
        slot.ready = r + 1;
        slot.next_vc = sp.next_vc(&pkt, vl);
        slot.next = NIL;
        let flat = input - i as u32 + o as u32;
        let q = self.voq(flat, i, pkt.vc as usize);
        self.enqueue(q, k);
        self.ins[input as usize].arrival.out = out;
        if sp.fecn.on() || sp.qcn.on() {
            self.routed_now.push((r, flat, pkt.len));
        }
        self.note_routed(r, input, flat, k);
        if self.arn.is_some() {
            let hot = self.voq_flits(flat, i) > sp.hcdth as u32;
            self.det_stale(flat, r + 1, hot);
        }
        self.outputs[flat as usize].waiting |= 1 << i;
        self.wake_output(flat, r + 1);
        Ok(())
    }
}

/// Option 0 of an LFT row when it names one of the switch's `ports`, else `NO_ROUTE`.
#[inline(always)]
fn deterministic(opts: &LftOptions, ports: u16) -> u8 {
    opts.deterministic()
        .filter(|&p| (p as u16) < ports)
        .unwrap_or(NO_ROUTE)
}
