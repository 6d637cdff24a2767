//! Flow routing at a switch (`routing = "flow"`; Birk and Zdornov, section 4), what it decides
//! whatever steps the switch: `flow_unit.sv` in the HDL.
//!
//! - **ERT.** A DLID's default port is option 0 of its LFT row (what D-mod-K takes); its
//!   alternates are the usable options of the row of `dest | 1`, as the adaptive modes read them.
//! - **Route cache (PRC).** Per input a CAM ([`crate::blocks::route_cache`]) keyed by the flow's
//!   GCID = (source node, DLID, CID), the CID being the header's `flow` field.
//! - **Port selection unit (PSU).** Per output a count of the flows routed through it: a setup
//!   packet adds one to the output it takes, a teardown takes one off its own. The PSU takes the
//!   heads of a cycle in input order, like one port selection after the other: input `i` reads
//!   each count as registered at the start of the cycle plus the changes of inputs `0..i` in
//!   this cycle, and the clock edge writes the count plus every change of the cycle (both
//!   clamped to 0 ..= 65,535). Only heads the mode routes (not adapted, with a default port
//!   among the switch's) change counts and caches.
//!
//! The routing stage of a head under flow routing:
//! - a **setup** packet (`PacketFlags::SETUP`) takes, of its default port and its alternates,
//!   the port with the fewest flows, the default port on a tie and otherwise the first option in
//!   row order; when its input's PRC is full it takes the default port (the paper's full PRC).
//!   On an alternate it inserts its GCID and port in the PRC; on the default port it erases its
//!   GCID's entry, if any (no stale entry outlives a setup);
//! - every other packet takes its GCID's PRC entry, else its default port; a **teardown**
//!   (`PacketFlags::TEARDOWN`) also erases the entry.
//!
//! [`flow_choice`], [`cache_command`], [`count_change`] and [`counted`] are called by both
//! engines' routing stages (through [`super::routing_stage::choose`] for the port) and mirrored
//! by `hdl-ref/flow_unit.sv`.

use crate::blocks::lft_banks::{LftOptions, NO_ROUTE};
use crate::blocks::route_cache::{Gcid, RouteCacheCmd};
use crate::wire::{Packet, PacketFlags};

/// The GCID a packet's header names: (source node, DLID, CID).
#[inline(always)]
pub fn gcid(pkt: &Packet) -> Gcid {
    Gcid {
        slid: pkt.src,
        dlid: pkt.dlid,
        cid: pkt.flow,
    }
}

/// The port selection unit: of `det` (the default port) and the usable options of `alts` below
/// `ports`, the port whose `flows(port)` is the least; `det` on a tie, else the first option in
/// row order.
#[inline]
pub fn psu_choice(alts: &LftOptions, ports: usize, det: u8, flows: impl Fn(u8) -> u16) -> u8 {
    let mut best = (det, flows(det));
    for p in alts.usable_ports() {
        if p as usize >= ports || p == det {
            continue;
        }
        let f = flows(p);
        if f < best.1 {
            best = (p, f);
        }
    }
    best.0
}

/// The output of head `pkt` under flow routing, whose default port is `det` (not `NO_ROUTE`):
/// `cached` is its GCID's PRC entry, `full` whether its input's PRC is full, `alts` its
/// destination's options and `flows` the PSU's counts at the start of the cycle.
#[inline]
pub fn flow_choice(
    pkt: &Packet,
    det: u8,
    cached: Option<u8>,
    full: bool,
    (alts, ports): (&LftOptions, usize),
    flows: impl Fn(u8) -> u16,
) -> u8 {
    debug_assert_ne!(det, NO_ROUTE);
    if pkt.flags.contains(PacketFlags::SETUP) {
        if full {
            det
        } else {
            psu_choice(alts, ports, det, flows)
        }
    } else {
        cached.unwrap_or(det)
    }
}

/// The command head `pkt`, routed to `out` with default port `det`, gives its input's PRC.
#[inline]
pub fn cache_command(pkt: &Packet, det: u8, out: u8) -> RouteCacheCmd {
    if pkt.flags.contains(PacketFlags::SETUP) {
        if out != det {
            RouteCacheCmd::Insert(gcid(pkt), out)
        } else {
            RouteCacheCmd::Erase(gcid(pkt))
        }
    } else if pkt.flags.contains(PacketFlags::TEARDOWN) {
        RouteCacheCmd::Erase(gcid(pkt))
    } else {
        RouteCacheCmd::Idle
    }
}

/// What head `pkt` changes the flow count of its output by: one more for a setup, one less for
/// a teardown.
#[inline]
pub fn count_change(pkt: &Packet) -> i8 {
    if pkt.flags.contains(PacketFlags::SETUP) {
        1
    } else if pkt.flags.contains(PacketFlags::TEARDOWN) {
        -1
    } else {
        0
    }
}

/// A count as registered, `count`, with the changes `delta` of the cycle so far (or of the
/// whole cycle, at the clock edge), clamped to 0 ..= 65,535.
#[inline]
pub fn counted(count: u16, delta: i32) -> u16 {
    (count as i64 + delta as i64).clamp(0, u16::MAX as i64) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ports: &[u8]) -> LftOptions {
        let mut o = LftOptions {
            ports: [NO_ROUTE; crate::blocks::lft_banks::MAX_OPTIONS],
            mask: 0,
            count: 0,
        };
        for (b, &p) in ports.iter().enumerate() {
            o.ports[b] = p;
            o.mask |= ((p != NO_ROUTE) as u16) << b;
        }
        o.count = ports.len() as u8;
        o
    }

    fn packet(flags: PacketFlags) -> Packet {
        Packet {
            src: 3,
            dlid: 9,
            flow: 2,
            len: 1,
            flags,
            ..Packet::default()
        }
    }

    #[test]
    fn the_psu_takes_the_least_loaded_port_the_default_on_a_tie() {
        let alts = row(&[4, 5, 6, 7]);
        let counts = [0u16, 0, 0, 0, 2, 1, 1, 3];
        assert_eq!(psu_choice(&alts, 8, 4, |p| counts[p as usize]), 5);
        // A tie with the default port keeps it; among alternates the first in row order.
        let counts = [0u16, 0, 0, 0, 1, 1, 1, 3];
        assert_eq!(psu_choice(&alts, 8, 4, |p| counts[p as usize]), 4);
        // Options beyond the ports, or unusable, are never taken.
        assert_eq!(psu_choice(&alts, 5, 4, |p| 9 - p as u16), 4);
        let gap = row(&[4, NO_ROUTE, 6, 7]);
        let counts = [0u16, 0, 0, 0, 2, 0, 1, 3];
        assert_eq!(psu_choice(&gap, 8, 4, |p| counts[p as usize]), 6);
    }

    #[test]
    fn setups_choose_others_follow_the_cache() {
        let alts = row(&[4, 5]);
        let flows = |p: u8| if p == 4 { 1 } else { 0 };
        let setup = packet(PacketFlags::SETUP);
        assert_eq!(flow_choice(&setup, 4, Some(7), false, (&alts, 8), flows), 5);
        assert_eq!(
            flow_choice(&setup, 4, None, true, (&alts, 8), flows),
            4,
            "a full PRC: the default port"
        );
        let data = packet(PacketFlags::empty());
        assert_eq!(flow_choice(&data, 4, Some(5), false, (&alts, 8), flows), 5);
        assert_eq!(flow_choice(&data, 4, None, false, (&alts, 8), flows), 4);
        let g = gcid(&setup);
        assert_eq!(cache_command(&setup, 4, 5), RouteCacheCmd::Insert(g, 5));
        assert_eq!(cache_command(&setup, 4, 4), RouteCacheCmd::Erase(g));
        let td = packet(PacketFlags::TEARDOWN);
        assert_eq!(cache_command(&td, 4, 5), RouteCacheCmd::Erase(g));
        assert_eq!(cache_command(&data, 4, 5), RouteCacheCmd::Idle);
        assert_eq!(
            [&setup, &td, &data].map(count_change),
            [1, -1, 0],
            "setups add a flow, teardowns take one off"
        );
    }

    #[test]
    fn counts_saturate() {
        assert_eq!(counted(3, 1), 4);
        assert_eq!(counted(1, -3), 0);
        assert_eq!(counted(u16::MAX, 1), u16::MAX);
    }
}
