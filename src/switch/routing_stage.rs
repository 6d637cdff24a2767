//! `routing_stage.sv`: the routing stage of an input port controller (Rocher-Gonzalez et al.,
//! pseudo-code 4), what it decides whatever steps the switch. In the cycle after a head arrives,
//! with its LFT row read, the routing mode picks its output from what the stage reads of its
//! switch at the start of the cycle ([`StageInputs`]): D-mod-K keeps option 0; Oblivious draws
//! a usable option; Adaptive-Th(AFI) takes the alternative with the most credits when the VOQ of
//! option 0 is above the threshold (pseudo-code 3); ARN(AFI) takes the alternative of a consumed
//! ARN-table entry, and a hit on a non-consumed one sends an ARN upstream; FA takes the adaptive
//! option with the most credits beyond the escape half (Martínez et al., section 4.4); S-mod-K
//! takes, toward the roots, the up port its source selects; snooped AR leaves a port its
//! congestion table marks congested for the destination (`super::snoop`); flow routing takes the
//! port its route cache holds for the flow, and a setup packet the port the port selection unit
//! chooses (`super::flow`).
//!
//! [`choose`] is that decision, called by the cycle engine (`src/cycle/routing_stage.rs`) and
//! the event engine (`src/fabric/event/routing_stage.rs`), each reading its own state through
//! [`StageInputs`]. Where the packet then goes, its next VC and what the engine counts stay
//! with each engine.

use super::config::{RoutingMode, SwitchParams};
use super::flow::flow_choice;
use super::snoop::snoop_choice;
use crate::blocks::arn_table::{ArnLookup, ArnLookupResult};
use crate::blocks::lft_banks::{LftOptions, NO_ROUTE};
use crate::blocks::rng::SplitMix64;
use crate::wire::{ArnInfo, Packet, PacketFlags};

/// What the routing stage of one input reads of its switch while routing one head: everything
/// as registered at the start of the cycle. Only the reads the mode needs are made.
pub trait StageInputs {
    /// Ports of the switch.
    fn ports(&self) -> usize;
    /// The head's LFT row (the options of its DLID), read in the cycle it arrived (Oblivious,
    /// FA).
    fn row(&self) -> LftOptions;
    /// The options of `dlid` on the switch's own read port of the LFT (Adaptive-Th's
    /// alternatives, the row of `dest | 1`).
    fn options(&self, dlid: u16) -> LftOptions;
    /// Flits in this input's VOQ for output `out` (Adaptive-Th).
    fn voq(&self, out: u8) -> u32;
    /// Credits of VC `vc` of the buffer at the far end of output `out`.
    fn credits(&self, out: u8, vc: usize) -> u16;
    /// Flits per VC of the buffer at the far end of output `out` (FA's escape half).
    fn capacity(&self, out: u8) -> u16;
    /// The VL output `out`'s SL-to-VL table gives `sl` from this input (FA's next VC).
    fn vl(&self, out: u8, sl: u8) -> u8;
    /// The ARN table's lookup of the head (ARN, ARN + AFI).
    fn lookup(&self) -> ArnLookupResult;
    /// The switch's random stream (Oblivious).
    fn rng(&mut self) -> &mut SplitMix64;
    /// The switch's up ports, bit p for port p (S-mod-K).
    fn up_ports(&self) -> u64;
    /// S-mod-K's divisor of the source (0: the switch does not route S-mod-K).
    fn smodk_div(&self) -> u32;
    /// The ports the congestion table marks congested for destination `dest` (snooped AR).
    fn congested(&self, dest: u16) -> u64;
    /// This input's round-robin pointer among congested options (snooped AR).
    fn snoop_rr(&mut self) -> &mut u8;
    /// The port this input's route cache holds for the head's GCID, if any (flow routing).
    fn cached(&self) -> Option<u8>;
    /// Whether this input's route cache is full (flow routing).
    fn cache_full(&self) -> bool;
    /// The flows the port selection unit counts through output `out` (flow routing).
    fn flows(&self, out: u8) -> u16;
}

/// The routing stage's decision for one head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// Option 0 of its row, when usable (`NO_ROUTE` otherwise), as the caller gave it.
    pub det: u8,
    /// The output: `det` unless the mode re-routed the packet.
    pub out: u8,
    /// FA: on an adaptive option, the credits its next VC keeps for the escape half (its escape
    /// route is `det`); 0 otherwise.
    pub reserve: u16,
}

impl Route {
    /// Whether the mode sent the packet off `det` (counted as adapted).
    #[inline(always)]
    pub fn rerouted(&self) -> bool {
        self.out != self.det
    }

    /// The flags of the packet as it leaves the stage: a re-routed packet is marked adapted
    /// under AFI.
    #[inline(always)]
    pub fn flags(&self, sp: &SwitchParams, flags: PacketFlags) -> PacketFlags {
        if self.rerouted() && sp.routing.afi() {
            flags | PacketFlags::ADAPTED
        } else {
            flags
        }
    }
}

/// The routing stage of one head, `pkt` as stored, whose deterministic port (option 0 of its
/// row) is `det`: the output by the routing mode, and FA's escape reserve. A packet already
/// adapted, or with no deterministic port, keeps `det`. Under ARN, whether the head sends an ARN
/// upstream is [`sends_arn`], on the same lookup.
#[inline(always)]
pub fn choose<S: StageInputs>(sp: &SwitchParams, pkt: &Packet, det: u8, s: &mut S) -> Route {
    let mut route = Route {
        det,
        out: det,
        reserve: 0,
    };
    if pkt.adapted() || det == NO_ROUTE {
        return route;
    }
    match sp.routing {
        RoutingMode::DModK => {}
        RoutingMode::Oblivious => {
            let row = s.row();
            route.out = oblivious_choice(&row, s.rng(), det);
        }
        RoutingMode::AdaptiveTh | RoutingMode::AdaptiveThAfi => {
            if s.voq(det) > sp.adaptive_threshold as u32 {
                let row = s.options(sp.base_lid(pkt.dlid) | 1);
                let alt = alternative(sp, &row, s.ports(), det, pkt.vc, |p, vc| s.credits(p, vc));
                if alt != NO_ROUTE {
                    route.out = alt;
                }
            }
        }
        RoutingMode::Arn | RoutingMode::ArnAfi => {
            let lk = s.lookup();
            if lk.consumed && lk.alt_port != NO_ROUTE {
                route.out = lk.alt_port;
            }
        }
        RoutingMode::Fa => {
            let row = s.row();
            let fa = fa_choice(&row, s.ports(), pkt, |p| {
                let vc = sp.next_vc(pkt, s.vl(p as u8, pkt.sl));
                let escape = sp.escape_credits(s.capacity(p as u8));
                (s.credits(p as u8, vc as usize), escape)
            });
            if fa != NO_ROUTE {
                route.out = fa;
                route.reserve = sp.escape_credits(s.capacity(fa));
            }
        }
        RoutingMode::SModK => {
            let up = s.up_ports();
            if det < 64 && up >> det & 1 == 1 {
                let p = smodk_port(up, s.smodk_div(), pkt.src);
                if p != NO_ROUTE {
                    // S-mod-K's port is the packet's deterministic route: not counted adapted.
                    route.det = p;
                    route.out = p;
                }
            }
        }
        RoutingMode::SnoopAr => {
            let dest = sp.base_lid(pkt.dlid);
            let mask = s.congested(dest);
            if mask != 0 {
                let row = s.options(dest | 1);
                let ports = s.ports();
                route.out = snoop_choice(&row, ports, mask, det, s.snoop_rr());
            }
        }
        RoutingMode::Flow => {
            let alts = s.options(sp.base_lid(pkt.dlid) | 1);
            let (cached, full) = (s.cached(), s.cache_full());
            route.out = flow_choice(pkt, det, cached, full, (&alts, s.ports()), |p| s.flows(p));
        }
    }
    route
}

/// S-mod-K's up port for a packet from end node `src` at a switch whose up ports are `up`:
/// up port `(src / div) mod n` of the `n` in ascending order; `NO_ROUTE` without up ports or
/// with `div` 0.
#[inline]
pub fn smodk_port(up: u64, div: u32, src: u16) -> u8 {
    let n = up.count_ones();
    if n == 0 || div == 0 {
        return NO_ROUTE;
    }
    let mut k = (src as u32 / div) % n;
    let mut rest = up;
    while k > 0 {
        rest &= rest - 1;
        k -= 1;
    }
    rest.trailing_zeros() as u8
}

/// The ARN-table lookup of the head `pkt` (`lk_*_o`): by its destination's base LID and its VC,
/// the original one once adapted; an adapted packet looks up only to refresh upstream.
#[inline(always)]
pub fn arn_lookup(sp: &SwitchParams, pkt: &Packet) -> ArnLookup {
    ArnLookup {
        en: !pkt.adapted() || sp.adapted_refresh,
        dest: sp.base_lid(pkt.dlid),
        vc: if pkt.adapted() { pkt.orig_vc } else { pkt.vc },
    }
}

/// sendARN (pseudo-code 4), under ARN routing: whether the head `pkt`, whose deterministic port
/// is `det`, hit with lookup `lk` an entry it does not consume and sends an ARN upstream, gap
/// timer and FIFO permitting: a packet not yet adapted with a route notifies upstream, an
/// adapted one (its route staying) when adapted packets refresh their trees.
#[inline(always)]
pub fn sends_arn(sp: &SwitchParams, pkt: &Packet, det: u8, lk: &ArnLookupResult) -> bool {
    let notify = if pkt.adapted() {
        sp.adapted_refresh
    } else {
        det != NO_ROUTE
    };
    notify && lk.hit && !lk.consumed
}

/// The ARN the head `pkt` sends upstream on the entry `lk` names (`arn_o`): its destination's
/// base LID and its VC (the original one once adapted), with the entry's port, ARN id and root
/// information.
#[inline]
pub fn upstream_arn(sp: &SwitchParams, pkt: &Packet, lk: &ArnLookupResult) -> ArnInfo {
    ArnInfo {
        dest: sp.base_lid(pkt.dlid),
        port: lk.port,
        vc: if pkt.adapted() { pkt.orig_vc } else { pkt.vc },
        arn_id: lk.arn_id,
        root_info: lk.root_info,
    }
}

/// pseudo-code 3: of `row` (the options of a destination's `dest | 1`), the usable port below
/// `ports` other than `avoid` with the most credits in the VC a packet on VC `vc` would use
/// downstream (the AFC under AFI), `credits(port, vc)`; the first on a tie, `NO_ROUTE` when
/// none. Adaptive-Th's alternative, and a consumed ARN-table entry's.
#[inline(always)]
pub fn alternative(
    sp: &SwitchParams,
    row: &LftOptions,
    ports: usize,
    avoid: u8,
    vc: u8,
    credits: impl Fn(u8, usize) -> u16,
) -> u8 {
    let next_vc = sp.afc().unwrap_or(vc) as usize;
    most_credits(row, ports, avoid, |p| credits(p, next_vc))
}

/// Oblivious routing's stage: one of the usable options of `opts` drawn uniformly from `rng`
/// (no draw when there is only one); `det` when the draw names none.
pub fn oblivious_choice(opts: &LftOptions, rng: &mut SplitMix64, det: u8) -> u8 {
    let n = opts.usable_ports().count() as u64;
    if n > 1 {
        let k = rng.below(n) as usize;
        opts.usable_ports().nth(k).unwrap_or(det)
    } else {
        det
    }
}

/// pseudo-code 3 over `opts`: the usable port below `ports`, other than `avoid`, whose
/// `credits(port)` are the most; the first on a tie. `NO_ROUTE` when there is none.
pub fn most_credits(opts: &LftOptions, ports: usize, avoid: u8, credits: impl Fn(u8) -> u16) -> u8 {
    let mut best = (NO_ROUTE, 0u16);
    for p in opts.usable_ports() {
        if p == avoid || p as usize >= ports {
            continue;
        }
        let c = credits(p);
        if best.0 == NO_ROUTE || c > best.1 {
            best = (p, c);
        }
    }
    best.0
}

/// FA's routing stage (Martínez et al., section 4.4): of the adaptive options (1 and up, usable
/// only when the DLID asks for them), the one whose next VC has the most credits, provided they
/// cover the packet and the escape half; the first on a tie. `NO_ROUTE` when none has room: the
/// packet takes option 0, the escape route. `credits(p)`: the credits, at the start of the
/// cycle, of the VC the packet would use through output `p`, and that VC's escape credits.
pub fn fa_choice(
    opts: &LftOptions,
    ports: usize,
    pkt: &Packet,
    credits: impl Fn(usize) -> (u16, u16),
) -> u8 {
    let mut best = (NO_ROUTE, 0u16);
    for b in 1..opts.count as usize {
        let p = opts.ports[b];
        if !opts.usable(b) || p as usize >= ports {
            continue;
        }
        let (c, escape) = credits(p as usize);
        if c as u32 >= pkt.len as u32 + escape as u32 && (best.0 == NO_ROUTE || c > best.1) {
            best = (p, c);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smodk_takes_the_up_port_its_source_selects() {
        // Up ports 4 to 7: the source's low digit (div 1), its second digit (div 4).
        let up = 0xF0;
        let got: Vec<u8> = (0..8).map(|s| smodk_port(up, 1, s)).collect();
        assert_eq!(got, [4, 5, 6, 7, 4, 5, 6, 7]);
        let got: Vec<u8> = [0u16, 3, 4, 8, 12, 16]
            .map(|s| smodk_port(up, 4, s))
            .to_vec();
        assert_eq!(got, [4, 4, 5, 6, 7, 4]);
        // Up ports in ascending order wherever they sit; none, or no divisor: no route.
        let got: Vec<u8> = (0..4).map(|s| smodk_port(0b1010_0100, 1, s)).collect();
        assert_eq!(got, [2, 5, 7, 2]);
        assert_eq!(smodk_port(0, 1, 3), NO_ROUTE);
        assert_eq!(smodk_port(up, 0, 3), NO_ROUTE);
        assert_eq!(smodk_port(1 << 63, 1, 9), 63);
    }
}
