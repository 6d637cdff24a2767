//! The cross-check cases of every block: HDL configurations, directed cases, seeded random runs
//! and deliberately altered blocks.

mod arn_table;
mod congestion_detector;
mod congestion_point;
mod congestion_table;
mod credit_counter;
mod fecn_marker;
mod lft_banks;
mod route_cache;
mod rr_arbiter;

use crate::harness::HdlConfig;
use crate::harness::case::Case;
use arnsim::blocks::Block;
use arnsim::stimulus::Stimulus;
use arnsim::trace::TraceLine;

/// Random cycles for a case whose nominal length is `cycles`, scaled by `scale`.
pub fn scaled(cycles: u64, scale: f64) -> u64 {
    ((cycles as f64 * scale).round() as u64).max(1)
}

/// The first cycle whose trace line (outputs and registers) differs between two blocks driven by
/// the same stimulus: where a deliberately altered block must be caught.
pub fn first_difference<A, B>(mut a: A, mut b: B, mut stim: impl Stimulus<A::In>) -> u64
where
    A: Block,
    B: Block<In = A::In, Out = A::Out>,
{
    a.reset();
    b.reset();
    let (mut la, mut lb) = (TraceLine::default(), TraceLine::default());
    for c in 0..10_000_000 {
        let inp = stim.next(c);
        let (oa, ob) = (a.evaluate(&inp), b.evaluate(&inp));
        la.clear();
        lb.clear();
        a.probe_outputs(&oa, &mut la);
        a.probe_regs(&mut la);
        b.probe_outputs(&ob, &mut lb);
        b.probe_regs(&mut lb);
        if la.line != lb.line {
            return c;
        }
        a.commit();
        b.commit();
    }
    panic!("the altered {} never differs from the real one", A::NAME);
}

/// Every case of every block.
pub fn all_cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    v.extend(rr_arbiter::cases(scale));
    v.extend(credit_counter::cases(scale));
    v.extend(lft_banks::cases(scale));
    v.extend(arn_table::cases(scale));
    v.extend(congestion_detector::cases(scale));
    v.extend(congestion_table::cases(scale));
    v.extend(route_cache::cases(scale));
    v.extend(congestion_point::cases(scale));
    v.extend(fecn_marker::cases(scale));
    v
}

/// Out-of-range parameterisations that the named `ASSERT_INIT` check of the block must reject
/// at elaboration (the Verilator build fails naming it).
pub fn param_checks() -> Vec<(HdlConfig, &'static str)> {
    let cfg = |block: &'static str, params: Vec<(&'static str, u64)>| HdlConfig {
        block,
        params,
        alter: None,
    };
    vec![
        (cfg("rr_arbiter", vec![("N", 129)]), "a_param_n"),
        (cfg("credit_counter", vec![("Cap", 0)]), "a_param_cap"),
        (
            cfg("lft_banks", vec![("Lmc", 5), ("Rows", 8)]),
            "a_param_lmc",
        ),
        (
            cfg("lft_banks", vec![("Lmc", 1), ("Rows", 32_769)]),
            "a_param_rows",
        ),
        (
            cfg(
                "arn_table",
                vec![("Entries", 65), ("Ports", 4), ("Ttl", 64)],
            ),
            "a_param_entries",
        ),
        (
            cfg("arn_table", vec![("Entries", 8), ("Ports", 4), ("Ttl", 0)]),
            "a_param_ttl",
        ),
        (
            cfg(
                "congestion_detector",
                vec![
                    ("P", 4),
                    ("Hcdth", 60),
                    ("Lcdth", 63),
                    ("Fcth", 15),
                    ("Crt", 16),
                ],
            ),
            "a_param_thresholds",
        ),
        (
            cfg(
                "congestion_detector",
                vec![
                    ("P", 4),
                    ("Hcdth", 80),
                    ("Lcdth", 63),
                    ("Fcth", 15),
                    ("Crt", 0),
                ],
            ),
            "a_param_crt",
        ),
        (
            cfg(
                "congestion_table",
                vec![("Entries", 33), ("Lk", 1), ("Ports", 8), ("Ttl", 8)],
            ),
            "a_param_entries",
        ),
        (cfg("route_cache", vec![("Entries", 65)]), "a_param_entries"),
        (cfg("congestion_point", vec![("P", 65)]), "a_param_ports"),
    ]
}
