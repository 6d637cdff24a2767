//! The output arbitrations on one switch, packet by packet: two heads wait for an output busy
//! with a third packet; round robin serves the input after the one it served last, first come,
//! first served the head that joined its FIFO first.

use super::*;
use crate::switch::{OutputArbitration, RoutingMode, SwitchParams, stamp_older};
use crate::wire::Packet;

/// Ports of the switch; every packet goes to output `OUT`.
const PORTS: usize = 4;
const OUT: usize = 3;
/// Flits per VC, in the switch's buffers and in the far buffer of every output (room for all).
const CAP: u16 = 64;

/// A `PORTS`-port d-mod-k switch with one VC arbitrating by `arbitration`, LID `p` routed to
/// port `p`.
fn switch(arbitration: OutputArbitration) -> CycleSwitch {
    let mut params = SwitchParams::with_paper_ratios(RoutingMode::DModK, CAP, 1000);
    params.arbitration = arbitration;
    super::timing_tests::switch_of(params, PORTS, CAP)
}

/// Packets (input, head's arrival cycle, length) sent to `OUT`: the ids in the order their
/// heads leave it.
fn order(arbitration: OutputArbitration, packets: &[(usize, u64, u16)]) -> Vec<u32> {
    let mut sw = switch(arbitration);
    let mut inp = vec![PortIn::default(); PORTS];
    let mut out = vec![PortOut::default(); PORTS];
    let mut left = Vec::new();
    for c in 0..200u64 {
        for (p, port) in inp.iter_mut().enumerate() {
            port.flit = LinkFlit::default();
            for (id, &(i, at, len)) in packets.iter().enumerate() {
                if i == p && (at..at + len as u64).contains(&c) {
                    let pkt = Packet {
                        id: id as u32,
                        dlid: OUT as u16,
                        len,
                        ..Packet::default()
                    };
                    port.flit = match c - at {
                        0 => LinkFlit::head_of(pkt),
                        k => LinkFlit::body(0, k as u16, len),
                    };
                }
            }
        }
        sw.step(&inp, &mut out, &mut ()).expect("steps");
        if out[OUT].flit.valid && out[OUT].flit.head {
            left.push(out[OUT].flit.desc.id);
        }
    }
    left
}

/// Input 0's long packet holds the output while input 2's head (cycle 1) and then input 1's
/// (cycle 3) join their FIFOs. Round robin's pointer stands past input 0: input 1 goes first.
/// FCFS serves input 2, whose head joined first.
#[test]
fn fcfs_serves_the_older_head_where_round_robin_serves_the_next_input() {
    let packets = [(0, 0, 12), (2, 1, 2), (1, 3, 2)];
    assert_eq!(order(OutputArbitration::RoundRobin, &packets), [0, 2, 1]);
    assert_eq!(order(OutputArbitration::Fcfs, &packets), [0, 1, 2]);
}

/// Heads that joined in the same cycle go by round robin under FCFS too: inputs 2 and 1 both
/// behind input 0's packet are served from input 1 on (the pointer past input 0), and behind
/// input 2's, from input 0 on (the pointer wrapped past input 3).
#[test]
fn fcfs_breaks_ties_by_round_robin() {
    let packets = [(0, 0, 12), (2, 3, 2), (1, 3, 2)];
    assert_eq!(order(OutputArbitration::Fcfs, &packets), [0, 2, 1]);
    let packets = [(2, 0, 12), (0, 3, 2), (1, 3, 2)];
    assert_eq!(order(OutputArbitration::Fcfs, &packets), [0, 1, 2]);
}

/// Stamps compare as serial numbers: across the counter's wrap, and never a stamp older than
/// itself.
#[test]
fn stamps_order_across_the_wrap() {
    assert!(stamp_older(5, 6) && !stamp_older(6, 5) && !stamp_older(7, 7));
    assert!(stamp_older(u32::MAX, 0) && !stamp_older(0, u32::MAX));
    assert!(stamp_older(u32::MAX - 10, 20));
}
