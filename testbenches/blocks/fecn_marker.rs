//! Cross-check cases of the FECN marker (InfiniBand congestion control).

use super::{first_difference, scaled};
use crate::harness::case::{Case, Expect};
use crate::harness::{HdlConfig, RtlAlteration};
use arnsim::blocks::Block;
use arnsim::blocks::fecn_marker::FecnMarking;
use arnsim::blocks::fecn_marker::{FecnMarker, FecnMarkerIn, FecnMarkerOut, Grant};
use arnsim::stimulus::fecn_marker::RandomGrants;
use arnsim::trace::Visit;

fn config() -> HdlConfig {
    HdlConfig {
        block: "fecn_marker",
        params: vec![],
        alter: None,
    }
}

/// A cycle granting a `len`-flit packet while `queue` flits wait (`short`: only a victim).
fn cy(m: FecnMarking, victim: bool, queue: u32, short: bool, len: u16) -> FecnMarkerIn {
    FecnMarkerIn {
        marking: m,
        victim,
        grant: Some(Grant { queue, short, len }),
    }
}

/// Directed sequences: every third eligible grant marked; the threshold and the minimum length
/// met and missed by one; a victim with and without its mask bit; marking off.
fn directed() -> Vec<(&'static str, Vec<FecnMarkerIn>)> {
    let m = FecnMarking {
        threshold: 10,
        rate: 2,
        min_len: 4,
        victims: 0,
    };
    let rate: Vec<_> = (0..7).map(|_| cy(m, false, 10, false, 4)).collect();
    let edges = vec![
        cy(m, false, 9, false, 4),
        cy(m, false, 10, false, 3),
        cy(m, false, 10, false, 4),
        cy(m, false, 11, false, 5),
        FecnMarkerIn {
            marking: m,
            victim: false,
            grant: None,
        },
    ];
    let victims = vec![
        cy(m, false, 50, true, 8),
        cy(m, true, 50, true, 8),
        cy(m, true, 50, true, 8),
        cy(m, false, 50, true, 8),
    ];
    let off = FecnMarking { threshold: 0, ..m };
    let off = vec![
        cy(off, true, 1000, false, 100),
        cy(m, false, 1000, false, 100),
    ];
    vec![
        ("directed every rate + 1-th eligible grant", rate),
        ("directed threshold and length edges", edges),
        ("directed victim mask", victims),
        ("directed off", off),
    ]
}

/// A marker with a planted bug: every port marks as a victim.
#[derive(Clone, Default)]
struct VictimsMark {
    inner: FecnMarker,
}

impl Block for VictimsMark {
    type In = FecnMarkerIn;
    type Out = FecnMarkerOut;
    const NAME: &'static str = "fecn_marker";

    fn reset(&mut self) {
        self.inner.reset();
    }

    fn evaluate(&mut self, inp: &FecnMarkerIn) -> FecnMarkerOut {
        self.inner.evaluate(&FecnMarkerIn {
            victim: true,
            ..*inp
        })
    }

    fn commit(&mut self) {
        self.inner.commit();
    }

    fn probe_inputs(&self, inp: &FecnMarkerIn, v: &mut dyn Visit) {
        self.inner.probe_inputs(inp, v);
    }

    fn probe_outputs(&self, out: &FecnMarkerOut, v: &mut dyn Visit) {
        self.inner.probe_outputs(out, v);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        self.inner.probe_regs(v);
    }
}

/// Every cross-check case of the FECN marker: its directed cases, four seeded random runs, one
/// altered Rust block and three altered RTL ones.
pub fn cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    for (name, seq) in directed() {
        let len = seq.len() as u64;
        v.push(Case::new(
            config(),
            name,
            false,
            len,
            FecnMarker::default,
            move || seq.clone().into_iter(),
        ));
    }
    for k in 0..4u64 {
        let seed = 0xFEC_0000 + k;
        v.push(Case::new(
            config(),
            format!("random seed {seed:#x}"),
            true,
            scaled(250_000, scale),
            FecnMarker::default,
            move || RandomGrants::new(seed),
        ));
    }
    let seed = 0xBAD;
    let at = first_difference(
        FecnMarker::default(),
        VictimsMark::default(),
        RandomGrants::new(seed),
    );
    v.push(
        Case::new(
            config(),
            "altered: victims mark",
            false,
            at + 1000,
            VictimsMark::default,
            move || RandomGrants::new(seed),
        )
        .expecting(Expect::Mismatch(Some(at))),
    );
    let altered: [(RtlAlteration, &'static [&'static str]); 3] = [
        (
            RtlAlteration {
                name: "victim_mask_ignored",
                find: "(!short_i || victim_i)",
                replace: "1'b1",
            },
            &["a_victim_only_in_mask"],
        ),
        (
            RtlAlteration {
                name: "marks_below_threshold",
                find: "queue_i >= 32'(thr_i) && len_i",
                replace: "queue_i + 32'd2 >= 32'(thr_i) && len_i",
            },
            &["a_mark_only_congested"],
        ),
        (
            RtlAlteration {
                name: "count_moves_on_any_grant",
                find: "if (elig_o) count_d =",
                replace: "if (gnt_i) count_d =",
            },
            &["a_count_only_on_eligible"],
        ),
    ];
    for (alter, names) in altered {
        v.push(Case::altered_rtl(
            config(),
            alter,
            names,
            20_000,
            FecnMarker::default,
            move || RandomGrants::new(seed),
        ));
    }
    v
}
