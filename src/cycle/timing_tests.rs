//! The pipeline timing of one packet through one idle switch on the cycle engine, cycle by cycle:
//! the diagram of `docs/switch.md` ("One packet through the cycle engine") is rendered here from
//! what the switch does and must appear in the page as it is, so the page cannot drift from the
//! code.

use super::*;
use crate::blocks::LftBanks;
use crate::switch::{RoutingMode, SwitchParams, SwitchWiring};
use crate::wire::Packet;

/// Ports of the switch.
const PORTS: usize = 4;
/// Flits per VC, in the switch's buffers and in the buffer at the far end of every output.
const CAP: u16 = 8;
/// The packet: `LEN` flits, from input `IN` to output `OUT` (LID `OUT` is routed to port `OUT`).
const LEN: u16 = 4;
const IN: usize = 0;
const OUT: usize = 3;
/// Latency of the output link: the far end frees each flit as it arrives (an end node sinking at
/// line rate) and its credit comes back over the same latency.
const L: u64 = 2;
/// Cycles shown.
const CYCLES: u64 = 12;

/// What was seen in one cycle: registers as they stand at the start of the cycle, and the wires
/// of the cycle.
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    /// Flit on input `IN`'s link: `H`, `B`, `T`.
    flit_in: Option<char>,
    /// `occ_q[0]` of input `IN`.
    occ: u16,
    /// `route_q` of input `IN` holds a head: the routing stage works on it this cycle.
    routing: bool,
    /// `voq_occ_q[OUT]` of input `IN`.
    voq: u16,
    /// Output `OUT` grants a packet this cycle (`tx_q` is loaded at the clock edge).
    grant: bool,
    /// `tx_q.sent` of output `OUT`, when it holds a packet.
    sent: Option<u16>,
    /// Flit on output `OUT`'s link.
    flit_out: Option<char>,
    /// Credits input `IN` sends upstream on VC 0 (`credit_o`).
    credit_up: u8,
    /// `cnt_q` of output `OUT`'s VC 0.
    cnt: u16,
    /// Credits coming back to output `OUT` on VC 0 (`credit_i`).
    credit_back: u8,
}

fn flit_mark(f: &LinkFlit) -> Option<char> {
    f.valid.then_some(if f.head {
        'H'
    } else if f.tail {
        'T'
    } else {
        'B'
    })
}

/// A `PORTS`-port switch under ARN+AFI, reset, LID `p` routed to port `p`.
fn idle_switch() -> CycleSwitch {
    switch_of(
        SwitchParams::with_paper_ratios(RoutingMode::ArnAfi, CAP, 1000),
        PORTS,
        CAP,
    )
}

/// A `ports`-port switch of `params` (LMC 0), reset, LID `p` routed to port `p`, every far
/// buffer of `cap` flits per VC.
pub(super) fn switch_of(mut params: SwitchParams, ports: usize, cap: u16) -> CycleSwitch {
    params.lmc = 0;
    let mut lft = LftBanks::new(0, ports);
    for p in 0..ports {
        lft.program(p as u16, p as u8);
    }
    let wiring = SwitchWiring {
        id: 0,
        stage: 1,
        up_ports: 0,
        smodk_div: 0,
        in_ch: vec![0; ports],
        out_ch: vec![0; ports],
        out_capacity: vec![cap; ports],
        sl_to_vl: crate::switch::SlToVl::identity(),
    };
    CycleSwitch::new(params, wiring, lft, 1)
}

/// Steps the switch from reset with one packet whose head arrives on input `IN` in cycle 0.
fn run() -> Vec<Seen> {
    let mut sw = idle_switch();
    let pkt = Packet {
        id: 7,
        src: 1,
        dlid: OUT as u16,
        len: LEN,
        ..Packet::default()
    };
    let mut inp = vec![PortIn::default(); PORTS];
    let mut out = vec![PortOut::default(); PORTS];
    let mut sent_at = Vec::new();
    let mut seen = Vec::new();
    for c in 0..CYCLES {
        inp[IN].flit = match c {
            0 => LinkFlit::head_of(pkt),
            k if k < LEN as u64 => LinkFlit::body(0, k as u16, LEN),
            _ => LinkFlit::default(),
        };
        // Each flit sent in `s` reaches the far end in `s + L`, whose credit is back in `s + 2L`.
        let back = sent_at.iter().filter(|&&s| s + 2 * L == c).count() as u8;
        inp[OUT].credit[0] = back;
        let before = (
            sw.input(IN).occupancy(0),
            sw.input(IN).route_q().is_some(),
            sw.input(IN).voq_occupancy(OUT),
            sw.output(OUT).tx().map(|t| t.sent),
            sw.output(OUT).credits(0),
        );
        sw.step(&inp, &mut out, &mut ()).expect("steps");
        if out[OUT].flit.valid {
            sent_at.push(c);
        }
        seen.push(Seen {
            flit_in: flit_mark(&inp[IN].flit),
            occ: before.0,
            routing: before.1,
            voq: before.2,
            grant: before.3.is_none() && sw.output(OUT).tx().is_some_and(|t| t.sent == 0),
            sent: before.3,
            flit_out: flit_mark(&out[OUT].flit),
            credit_up: out[IN].credit[0],
            cnt: before.4,
            credit_back: back,
        });
    }
    seen
}

/// One row of the diagram: its name, and its cell in a cycle.
type Row<'a> = (&'a str, &'a dyn Fn(&Seen) -> String);

/// The diagram: one row per signal, one column per cycle (blank: nothing on the wire, or the
/// register empty).
fn render(seen: &[Seen]) -> String {
    let mark = |f: Option<char>| f.map(String::from).unwrap_or_default();
    let count = |n: u8| if n > 0 { n.to_string() } else { String::new() };
    let rows: [Row<'_>; 10] = [
        ("input 0 link", &|s| mark(s.flit_in)),
        ("  occ_q[0]", &|s| s.occ.to_string()),
        ("  route_q (LFT, ARN)", &|s| mark(s.routing.then_some('R'))),
        ("  voq_occ_q[3]", &|s| s.voq.to_string()),
        ("  credit_o[0]", &|s| count(s.credit_up)),
        ("output 3 grant", &|s| mark(s.grant.then_some('G'))),
        ("  tx_q.sent", &|s| {
            s.sent.map(|n| n.to_string()).unwrap_or_default()
        }),
        ("output 3 link", &|s| mark(s.flit_out)),
        ("  cnt_q[0]", &|s| s.cnt.to_string()),
        ("  credit_i[0]", &|s| count(s.credit_back)),
    ];
    let mut text = String::from("cycle                 ");
    for c in 0..seen.len() {
        text += &format!("{c:>4}");
    }
    text += "\n";
    for (name, cell) in rows {
        let mut line = format!("{name:<22}");
        for s in seen {
            line += &format!("{:>4}", cell(s));
        }
        text += line.trim_end();
        text += "\n";
    }
    text
}

/// Head in on cycle t = 0: routed in t+1, granted in t+2, head out in t+3, tail in t+2+len; a
/// credit goes upstream with every flit that leaves; the output's counter drops one per flit and
/// climbs back as the far end's credits return 2L cycles after each flit left.
#[test]
fn one_packet_crosses_an_idle_switch_in_the_cycles_the_page_states() {
    let seen = run();
    let cycles = |f: &dyn Fn(&Seen) -> bool| -> Vec<u64> {
        (0..seen.len() as u64)
            .filter(|&c| f(&seen[c as usize]))
            .collect()
    };
    assert_eq!(cycles(&|s| s.routing), [1], "routing stage");
    assert_eq!(
        seen[2].voq, 2,
        "in the VOQ from the edge of t+1, with the flits so far"
    );
    assert_eq!(cycles(&|s| s.grant), [2], "arbitration");
    assert_eq!(cycles(&|s| s.flit_out == Some('H')), [3], "head out");
    assert_eq!(
        cycles(&|s| s.flit_out == Some('T')),
        [2 + LEN as u64],
        "tail out"
    );
    assert_eq!(cycles(&|s| s.flit_out.is_some()), [3, 4, 5, 6]);
    assert_eq!(
        cycles(&|s| s.credit_up > 0),
        [3, 4, 5, 6],
        "credits upstream"
    );
    let cnt: Vec<u16> = seen.iter().map(|s| s.cnt).collect();
    assert_eq!(cnt, [8, 8, 8, 8, 7, 6, 5, 4, 5, 6, 7, 8], "output credits");
    let occ: Vec<u16> = seen.iter().map(|s| s.occ).collect();
    assert_eq!(occ, [0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 0, 0], "input VC");

    let doc = include_str!("../../docs/switch.md");
    let diagram = render(&seen);
    assert!(
        doc.contains(&diagram),
        "docs/switch.md should show the diagram as the switch steps it:\n{diagram}"
    );
}
