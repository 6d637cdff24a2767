//! The routing stage of the switches on the event engine: in the cycle after a head reaches an
//! input, its LFT row is read and the routing mode picks the output (`docs/switch.md`, "Stages
//! and latencies"; `src/switch/input_port_ctrl.rs` is the same stage on the fast engine).
//!
//! Under D-mod-K the stage reads nothing that changes, so a head is routed as it arrives. Under
//! Oblivious it draws from the switch's random stream, and under Adaptive-Th it reads the VOQ
//! occupancy and the credits as of the cycle before: a switch's heads of one cycle are then
//! routed together at the start of the next, before its events, in input order (the order of
//! the draws).

use super::*;
use crate::blocks::lft_banks::{LftOptions, NO_ROUTE};
use crate::switch::{SwitchParams, fa_choice, most_credits, oblivious_choice};
use crate::wire::PacketFlags;
use crate::wire::link::streamed;

impl<const V: usize> EventCore<V> {
    /// The head in slot `k` reached flat input `input` in `now`: routed now (D-mod-K), or left
    /// for its switch's routing stage at the start of `now + 1`.
    #[inline(always)]
    pub(super) fn route_later(
        &mut self,
        env: &Env<V>,
        input: u32,
        k: u32,
        now: u64,
    ) -> Result<(), Violation> {
        if env.params.switch.routing == RoutingMode::DModK {
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
    /// ready to request from `r + 1`.
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
        let pkt = &self.slots[k as usize].pkt;
        // Under D-mod-K only option 0 of the row is read; under ARN it was read at the head's
        // arrival for the ARN table's lookup.
        let out = match (sp.routing, &self.arn) {
            (RoutingMode::DModK, _) => deterministic(&unit.lft().options(pkt.dlid), ports),
            (RoutingMode::Arn | RoutingMode::ArnAfi, Some(arn)) => {
                let det = self.ins[input as usize].det;
                let lk = arn.lookups[input as usize];
                if pkt.adapted() || det == NO_ROUTE || !lk.consumed || lk.alt_port == NO_ROUTE {
                    det
                } else {
                    self.adapted(sp, k, lk.alt_port, det)
                }
            }
            _ => {
                let opts = unit.lft().options(pkt.dlid);
                let det = deterministic(&opts, ports);
                if pkt.adapted() || det == NO_ROUTE {
                    det
                } else {
                    self.adapt(env, input, k, &opts, det, r)
                }
            }
        };
        let pkt = self.slots[k as usize].pkt;
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
        let slot = &mut self.slots[k as usize];
        slot.ready = r + 1;
        slot.next_vc = sp.next_vc(&pkt, vl);
        slot.next = NIL;
        let flat = input - i as u32 + o as u32;
        let q = self.voq(flat, i, pkt.vc as usize);
        self.enqueue(q, k);
        if self.arn.is_some() {
            self.ins[input as usize].arrival.out = out;
            let hot = self.voq_flits(flat, i) > sp.hcdth as u32;
            self.det_stale(flat, r + 1, hot);
        }
        self.outputs[flat as usize].waiting |= 1 << i;
        self.wake_output(flat, r + 1);
        Ok(())
    }

    /// The choice of Oblivious, Adaptive-Th or FA in cycle `r` for the packet in slot `k` at flat
    /// input `input`, whose row is `opts` and deterministic port `det`; a packet sent off `det`
    /// is counted, and marked adapted under AFI. FA ([`fa_choice`], Martínez et al., section
    /// 4.4) takes the adaptive option with the most credits in its next VC, provided they cover
    /// the packet and the VC's escape half, read through `r - 1`, else `det`, its escape route;
    /// a packet on an adaptive option keeps the escape half's credits and its escape route in its
    /// slot, for the arbitration (`ports.rs`).
    fn adapt(
        &mut self,
        env: &Env<V>,
        input: u32,
        k: u32,
        opts: &LftOptions,
        det: u8,
        r: u64,
    ) -> u8 {
        let Place {
            switch: s,
            port,
            ports,
        } = self.ins[input as usize].place;
        let base = input - port as u32;
        let sp = &env.params.switch;
        let pkt = &self.slots[k as usize].pkt;
        let out = match sp.routing {
            RoutingMode::Oblivious => oblivious_choice(opts, &mut self.rngs[s as usize], det),
            RoutingMode::AdaptiveTh | RoutingMode::AdaptiveThAfi
                if self.voq_occupancy(input, det as usize, r - 1)
                    > sp.adaptive_threshold as u32 =>
            {
                let lft = env.switches[s as usize].lft();
                let vc = sp.afc().unwrap_or(pkt.vc) as usize;
                let credits = |p: u8| {
                    let o = &self.outputs[(base + p as u32) as usize];
                    o.credits.credits(vc, r - 1)
                };
                let dest = sp.base_lid(pkt.dlid);
                match most_credits(&lft.options(dest | 1), ports as usize, det, credits) {
                    NO_ROUTE => det,
                    alt => alt,
                }
            }
            RoutingMode::Fa => {
                let (i, pkt) = (port as usize, *pkt);
                let sl_to_vl = &env.switches[s as usize].wiring().sl_to_vl;
                let fa = fa_choice(opts, ports as usize, &pkt, |p| {
                    let o = &self.outputs[base as usize + p].credits;
                    let next_vc = sp.next_vc(&pkt, sl_to_vl.vl(p, i, pkt.sl));
                    (
                        o.credits(next_vc as usize, r - 1),
                        sp.escape_credits(o.cap()),
                    )
                });
                if fa != NO_ROUTE {
                    let cap = self.outputs[(base + fa as u32) as usize].credits.cap();
                    let slot = &mut self.slots[k as usize];
                    slot.reserve = sp.escape_credits(cap);
                    slot.escape = det;
                }
                if fa == NO_ROUTE { det } else { fa }
            }
            _ => det,
        };
        self.adapted(sp, k, out, det)
    }

    /// `out` for the packet in slot `k`, whose deterministic port is `det`: a packet sent off
    /// `det` is counted, and marked adapted under AFI.
    #[inline(always)]
    fn adapted(&mut self, sp: &SwitchParams, k: u32, out: u8, det: u8) -> u8 {
        if out != det {
            self.stats.packets_adapted += 1;
            if sp.routing.afi() {
                self.slots[k as usize].pkt.flags |= PacketFlags::ADAPTED;
            }
        }
        out
    }
}

/// Option 0 of an LFT row when it names one of the switch's `ports`, else `NO_ROUTE`.
#[inline(always)]
fn deterministic(opts: &LftOptions, ports: u16) -> u8 {
    opts.deterministic()
        .filter(|&p| (p as u16) < ports)
        .unwrap_or(NO_ROUTE)
}
