//! Cross-check cases of the congestion table (snooped AR).

use super::{first_difference, scaled};
use crate::harness::case::{Case, Expect};
use crate::harness::{HdlConfig, RtlAlteration};
use arnsim::blocks::Block;
use arnsim::blocks::congestion_table::{
    CongestionTable, CongestionTableIn, CongestionTableOut, Snoop,
};
use arnsim::stimulus::congestion_table::RandomSnoops;
use arnsim::trace::Visit;

/// One HDL parameterisation: (Entries, Lk, Ports, Ttl).
type Params = (usize, usize, usize, u32);

fn config((entries, lk, ports, ttl): Params) -> HdlConfig {
    HdlConfig {
        block: "congestion_table",
        params: vec![
            ("Entries", entries as u64),
            ("Lk", lk as u64),
            ("Ports", ports as u64),
            ("Ttl", ttl as u64),
        ],
        alter: None,
    }
}

fn table((entries, lk, ports, ttl): Params) -> CongestionTable {
    CongestionTable::new(entries, lk, ports, ttl)
}

/// A cycle snooping (dest, port) with feedback `fb`, looking `dest` up on every port.
fn sn(dest: u16, port: u8, fb: u8, local: bool) -> CongestionTableIn {
    CongestionTableIn {
        lk_dest: [dest; 4],
        snoop: Some(Snoop {
            dest,
            port,
            fb,
            local,
        }),
    }
}

/// Idle cycles looking `dest` up.
fn idle(dest: u16, n: usize) -> Vec<CongestionTableIn> {
    vec![
        CongestionTableIn {
            lk_dest: [dest; 4],
            snoop: None,
        };
        n
    ]
}

/// Directed sequences: a refresh on the last cycle of an entry, a table filling and losing a
/// snoop, a count saturating, a port beyond the mask.
fn directed((entries, _, ports, ttl): Params) -> Vec<(&'static str, Vec<CongestionTableIn>)> {
    let t = ttl as usize;
    let mut refresh = vec![sn(5, 1, 9, false)];
    refresh.extend(idle(5, t - 1));
    refresh.push(sn(5, 1, 10, true));
    refresh.extend(idle(5, t + 2));
    let mut fill: Vec<_> = (0..entries as u16 + 2)
        .map(|k| sn(k, (k as usize % ports) as u8, 63, k % 2 == 0))
        .collect();
    fill.extend(idle(0, t + 1));
    let mut saturate: Vec<_> = (0..300).map(|_| sn(3, 2, 1, false)).collect();
    saturate.extend(idle(3, 2));
    let beyond = vec![
        sn(7, 0xff, 4, false),
        sn(7, 0, 4, false),
        sn(7, 0xff, 5, true),
    ];
    vec![
        ("directed refresh at the last cycle", refresh),
        ("directed fill and lose", fill),
        ("directed count saturates", saturate),
        ("directed port beyond the mask", beyond),
    ]
}

/// A table with a planted bug: a hit is taken as a new entry (its count restarts at 1).
#[derive(Clone)]
struct HitRestarts {
    inner: CongestionTable,
}

impl Block for HitRestarts {
    type In = CongestionTableIn;
    type Out = CongestionTableOut;
    const NAME: &'static str = "congestion_table";

    fn reset(&mut self) {
        self.inner.reset();
    }

    fn evaluate(&mut self, inp: &CongestionTableIn) -> CongestionTableOut {
        let out = self.inner.evaluate(inp);
        if out.hit {
            // Replay the cycle on a copy whose hit entry is forgotten first.
            let s = inp.snoop.expect("a hit has a snoop");
            let mut copy = self.inner.clone();
            copy.forget(s.dest, s.port);
            let out = copy.evaluate(inp);
            self.inner = copy;
            return out;
        }
        out
    }

    fn commit(&mut self) {
        self.inner.commit();
    }

    fn probe_inputs(&self, inp: &CongestionTableIn, v: &mut dyn Visit) {
        self.inner.probe_inputs(inp, v);
    }

    fn probe_outputs(&self, out: &CongestionTableOut, v: &mut dyn Visit) {
        self.inner.probe_outputs(out, v);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        self.inner.probe_regs(v);
    }
}

/// Every cross-check case of the congestion table: three configurations with their directed
/// cases and seeded random runs, one altered Rust block and three altered RTL ones.
pub fn cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    let plan: [(Params, u64, u64); 3] = [
        ((8, 2, 8, 40), 2, 250_000),
        ((16, 4, 64, 300), 2, 200_000),
        ((1, 1, 1, 1), 1, 100_000),
    ];
    for (params, seeds, cycles) in plan {
        let (_, lk, ports, ttl) = params;
        if ttl > 1 {
            for (name, seq) in directed(params) {
                let len = seq.len() as u64;
                v.push(Case::new(
                    config(params),
                    name,
                    false,
                    len,
                    move || table(params),
                    move || seq.clone().into_iter(),
                ));
            }
        }
        for k in 0..seeds {
            let seed = 0xC7AB_0000 + ((params.0 as u64) << 8) + k;
            v.push(Case::new(
                config(params),
                format!("random seed {seed:#x}"),
                true,
                scaled(cycles, scale),
                move || table(params),
                move || RandomSnoops::new(lk, ports, ttl, seed),
            ));
        }
    }
    let (params, seed) = ((8, 2, 8, 40), 0xBAD);
    let (_, lk, ports, ttl) = params;
    let at = first_difference(
        table(params),
        HitRestarts {
            inner: table(params),
        },
        RandomSnoops::new(lk, ports, ttl, seed),
    );
    v.push(
        Case::new(
            config(params),
            "altered: a hit restarts the count",
            false,
            at + 1000,
            move || HitRestarts {
                inner: table(params),
            },
            move || RandomSnoops::new(lk, ports, ttl, seed),
        )
        .expecting(Expect::Mismatch(Some(at))),
    );
    let altered: [(RtlAlteration, &'static [&'static str]); 3] = [
        (
            RtlAlteration {
                name: "expiry_keeps_congested",
                find: "congested_d[e] = (ttl_q[e] != 24'd1);",
                replace: "congested_d[e] = 1'b1;",
            },
            &["a_congested_iff_ttl"],
        ),
        (
            RtlAlteration {
                name: "hit_ignored",
                find: "        hit[e]  = 1'b1;\n        any_hit = 1'b1;\n",
                replace: "        hit[e]  = 1'b0;\n",
            },
            &["a_key_unique"],
        ),
        (
            RtlAlteration {
                name: "ttl_overloaded",
                find: "          ttl_d[e]       = 24'(Ttl);",
                replace: "          ttl_d[e]       = 24'(Ttl) + 24'd1;",
            },
            &["a_ttl_in_range"],
        ),
    ];
    for (alter, names) in altered {
        v.push(Case::altered_rtl(
            config(params),
            alter,
            names,
            20_000,
            move || table(params),
            move || RandomSnoops::new(lk, ports, ttl, seed),
        ));
    }
    v
}
