//! Cross-check cases of the round-robin arbiter.

use super::scaled;
use crate::harness::case::{Case, Expect};
use crate::harness::{HdlConfig, RtlAlteration};
use arnsim::blocks::rr_arbiter::{RrArbiterIn, RrArbiterOut};
use arnsim::blocks::{Block, RrArbiter};
use arnsim::stimulus::Stimulus;
use arnsim::stimulus::rr_arbiter::RandomRequests;
use arnsim::trace::Visit;

fn config(n: usize) -> HdlConfig {
    HdlConfig {
        block: "rr_arbiter",
        params: vec![("N", n as u64)],
        alter: None,
    }
}

fn all(n: usize) -> u128 {
    if n == 128 {
        u128::MAX
    } else {
        (1u128 << n) - 1
    }
}

/// Directed sequences for an arbiter of `n` requesters.
fn directed(n: usize) -> Vec<(&'static str, Vec<RrArbiterIn>)> {
    let every = all(n);
    let rotation = (0..3 * n)
        .map(|_| RrArbiterIn {
            req: every,
            ack: true,
        })
        .collect();
    let hold = (0..4 * n)
        .map(|c| RrArbiterIn {
            req: every,
            ack: c % 4 == 3,
        })
        .collect();
    let walking = (0..2 * n)
        .map(|c| RrArbiterIn {
            req: 1u128 << (c % n),
            ack: true,
        })
        .collect();
    let top_and_bottom = (0..2 * n)
        .map(|c| RrArbiterIn {
            req: (1u128 << (n - 1)) | 1 | if c % 3 == 0 { every } else { 0 },
            ack: c % 2 == 0,
        })
        .collect();
    let idle = (0..16).map(|_| RrArbiterIn { req: 0, ack: true }).collect();
    vec![
        ("directed rotation", rotation),
        ("directed ack hold", hold),
        ("directed walking one", walking),
        ("directed top and bottom", top_and_bottom),
        ("directed idle", idle),
    ]
}

/// An arbiter with a planted bug: the first accepted grant at or after cycle `from` that would
/// move the priority pointer does not move it.
#[derive(Clone)]
struct PointerStuck {
    inner: RrArbiter,
    from: u64,
    cycle: u64,
    fired: bool,
}

impl PointerStuck {
    /// The cycle at which the bug first changes the pointer, for a stimulus.
    fn first_effect(n: usize, mut stim: impl Stimulus<RrArbiterIn>, from: u64) -> u64 {
        let mut a = RrArbiter::new(n);
        for c in 0.. {
            let before = a.regs();
            a.step(&stim.next(c));
            if c >= from && a.regs() != before {
                return c;
            }
        }
        unreachable!()
    }
}

impl Block for PointerStuck {
    type In = RrArbiterIn;
    type Out = RrArbiterOut;
    const NAME: &'static str = RrArbiter::NAME;

    fn reset(&mut self) {
        self.inner.reset();
        self.cycle = 0;
        self.fired = false;
    }

    fn evaluate(&mut self, inp: &RrArbiterIn) -> RrArbiterOut {
        let out = self.inner.evaluate(inp);
        if !self.fired && self.cycle >= self.from {
            let mut look = self.inner.clone();
            look.commit();
            if look.regs() != self.inner.regs() {
                self.fired = true;
                self.inner.evaluate(&RrArbiterIn { ack: false, ..*inp });
            }
        }
        self.cycle += 1;
        out
    }

    fn commit(&mut self) {
        self.inner.commit();
    }

    fn probe_inputs(&self, inp: &RrArbiterIn, v: &mut dyn Visit) {
        self.inner.probe_inputs(inp, v);
    }

    fn probe_outputs(&self, out: &RrArbiterOut, v: &mut dyn Visit) {
        self.inner.probe_outputs(out, v);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        self.inner.probe_regs(v);
    }
}

pub fn cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    for (n, cycles) in [
        (1usize, 20_000u64),
        (5, 300_000),
        (96, 300_000),
        (128, 400_000),
    ] {
        for (name, seq) in directed(n) {
            let len = seq.len() as u64;
            v.push(Case::new(
                config(n),
                name,
                false,
                len,
                move || RrArbiter::new(n),
                move || seq.clone().into_iter(),
            ));
        }
        let seed = 0xA4B1_0000 + n as u64;
        v.push(Case::new(
            config(n),
            format!("random seed {seed:#x}"),
            true,
            scaled(cycles, scale),
            move || RrArbiter::new(n),
            move || RandomRequests::new(n, seed),
        ));
    }
    // The harness must catch a real difference: a pointer that fails to move once.
    let (n, seed, from) = (5usize, 0xBAD, 3000u64);
    let effect = PointerStuck::first_effect(n, RandomRequests::new(n, seed), from);
    v.push(
        Case::new(
            config(n),
            "altered: pointer stuck once",
            false,
            10_000,
            move || PointerStuck {
                inner: RrArbiter::new(n),
                from,
                cycle: 0,
                fired: false,
            },
            move || RandomRequests::new(n, seed),
        )
        .expecting(Expect::Mismatch(Some(effect + 1))),
    );
    // The RTL's assertions must catch a real bug in the RTL.
    let altered: [(RtlAlteration, &'static [&'static str]); 3] = [
        (
            RtlAlteration {
                name: "ptr_moves_without_grant",
                find: "if (ack_i && valid_o) begin\n      ptr_d",
                replace: "if (ack_i) begin\n      ptr_d",
            },
            &["a_ptr_holds"],
        ),
        (
            RtlAlteration {
                name: "winner_keeps_priority",
                find: "ptr_d = (idx_o == IdxW'(N - 1)) ? '0 : idx_o + 1'b1;",
                replace: "ptr_d = idx_o;",
            },
            &["a_ptr_moves", "a_fair_bounded"],
        ),
        (
            RtlAlteration {
                name: "search_skips_pointer",
                find: "if (IdxW'(i) >= ptr_q) begin",
                replace: "if (IdxW'(i) > ptr_q) begin",
            },
            &["a_rr_order"],
        ),
    ];
    let n = 5usize;
    for (alter, names) in altered {
        v.push(Case::altered_rtl(
            config(n),
            alter,
            names,
            20_000,
            move || RrArbiter::new(n),
            move || RandomRequests::new(n, 0xBAD),
        ));
    }
    v
}
