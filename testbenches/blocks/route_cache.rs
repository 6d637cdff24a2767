//! Cross-check cases of the port route cache (flow routing).

use super::{first_difference, scaled};
use crate::harness::case::{Case, Expect};
use crate::harness::{HdlConfig, RtlAlteration};
use arnsim::blocks::Block;
use arnsim::blocks::route_cache::{Gcid, RouteCache, RouteCacheCmd, RouteCacheIn, RouteCacheOut};
use arnsim::stimulus::route_cache::RandomFlows;
use arnsim::trace::Visit;

fn config(entries: usize) -> HdlConfig {
    HdlConfig {
        block: "route_cache",
        params: vec![("Entries", entries as u64)],
        alter: None,
    }
}

fn g(slid: u16, dlid: u16, cid: u16) -> Gcid {
    Gcid { slid, dlid, cid }
}

/// A cycle with `cmd`, looking `look` up.
fn cy(look: Gcid, cmd: RouteCacheCmd) -> RouteCacheIn {
    RouteCacheIn {
        lookup: Some(look),
        cmd,
    }
}

/// Directed sequences: a flow set up, used and torn down; a cache filled past its size; one
/// GCID's port moved; lookups differing from a stored GCID in one field only.
fn directed(entries: usize) -> Vec<(&'static str, Vec<RouteCacheIn>)> {
    let f = g(3, 7, 1);
    let life = vec![
        cy(f, RouteCacheCmd::Insert(f, 4)),
        cy(f, RouteCacheCmd::Idle),
        cy(f, RouteCacheCmd::Erase(f)),
        cy(f, RouteCacheCmd::Idle),
        cy(f, RouteCacheCmd::Erase(f)),
    ];
    let mut fill: Vec<_> = (0..entries as u16 + 3)
        .map(|k| cy(g(k, 0, 0), RouteCacheCmd::Insert(g(k, 0, 0), k as u8)))
        .collect();
    fill.push(cy(g(0, 0, 0), RouteCacheCmd::Erase(g(1, 0, 0))));
    fill.push(cy(g(1, 0, 0), RouteCacheCmd::Insert(g(99, 0, 0), 9)));
    let moved = vec![
        cy(f, RouteCacheCmd::Insert(f, 1)),
        cy(f, RouteCacheCmd::Insert(f, 2)),
        cy(f, RouteCacheCmd::Idle),
    ];
    let near = vec![
        cy(f, RouteCacheCmd::Insert(f, 6)),
        cy(g(3, 7, 2), RouteCacheCmd::Idle),
        cy(g(3, 8, 1), RouteCacheCmd::Idle),
        cy(g(4, 7, 1), RouteCacheCmd::Idle),
        cy(f, RouteCacheCmd::Idle),
    ];
    vec![
        ("directed setup, use, teardown", life),
        ("directed fill past the size", fill),
        ("directed port moved", moved),
        ("directed one field off", near),
    ]
}

/// A cache with a planted bug: an erase is ignored.
#[derive(Clone)]
struct EraseIgnored {
    inner: RouteCache,
}

impl Block for EraseIgnored {
    type In = RouteCacheIn;
    type Out = RouteCacheOut;
    const NAME: &'static str = "route_cache";

    fn reset(&mut self) {
        self.inner.reset();
    }

    fn evaluate(&mut self, inp: &RouteCacheIn) -> RouteCacheOut {
        let mut inp = *inp;
        if let RouteCacheCmd::Erase(_) = inp.cmd {
            inp.cmd = RouteCacheCmd::Idle;
        }
        self.inner.evaluate(&inp)
    }

    fn commit(&mut self) {
        self.inner.commit();
    }

    fn probe_inputs(&self, inp: &RouteCacheIn, v: &mut dyn Visit) {
        self.inner.probe_inputs(inp, v);
    }

    fn probe_outputs(&self, out: &RouteCacheOut, v: &mut dyn Visit) {
        self.inner.probe_outputs(out, v);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        self.inner.probe_regs(v);
    }
}

/// Every cross-check case of the route cache: three depths with their directed cases and seeded
/// random runs, one altered Rust block and three altered RTL ones.
pub fn cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    let plan: [(usize, u64, u64); 3] = [(8, 2, 250_000), (32, 2, 200_000), (1, 1, 100_000)];
    for (entries, seeds, cycles) in plan {
        for (name, seq) in directed(entries) {
            let len = seq.len() as u64;
            v.push(Case::new(
                config(entries),
                name,
                false,
                len,
                move || RouteCache::new(entries),
                move || seq.clone().into_iter(),
            ));
        }
        for k in 0..seeds {
            let seed = 0x9C0_0000 + ((entries as u64) << 8) + k;
            v.push(Case::new(
                config(entries),
                format!("random seed {seed:#x}"),
                true,
                scaled(cycles, scale),
                move || RouteCache::new(entries),
                move || RandomFlows::new(seed),
            ));
        }
    }
    let (entries, seed) = (8usize, 0xBAD);
    let at = first_difference(
        RouteCache::new(entries),
        EraseIgnored {
            inner: RouteCache::new(entries),
        },
        RandomFlows::new(seed),
    );
    v.push(
        Case::new(
            config(entries),
            "altered: an erase is ignored",
            false,
            at + 1000,
            move || EraseIgnored {
                inner: RouteCache::new(entries),
            },
            move || RandomFlows::new(seed),
        )
        .expecting(Expect::Mismatch(Some(at))),
    );
    let altered: [(RtlAlteration, &'static [&'static str]); 3] = [
        (
            RtlAlteration {
                name: "insert_never_finds",
                find: "    cmd_hit_o  = (cmd_op_i == OpInsert || cmd_op_i == OpErase) && found;\n",
                replace: "    cmd_hit_o  = (cmd_op_i == OpInsert || cmd_op_i == OpErase) && found;\n    \
                          if (cmd_op_i == OpInsert) found = 1'b0;\n",
            },
            &["a_gcid_unique"],
        ),
        (
            RtlAlteration {
                name: "erase_ignored",
                find: "if (cmd_op_i == OpErase && found && e == slot) valid_d[e] = 1'b0;",
                replace: "if (cmd_op_i == OpErase && found && e == slot) valid_d[e] = valid_q[e];",
            },
            &["a_erase_frees"],
        ),
        (
            RtlAlteration {
                name: "port_off_by_one",
                find: "port_d[e]  = cmd_port_i;",
                replace: "port_d[e]  = cmd_port_i + 8'd1;",
            },
            &["a_insert_lands"],
        ),
    ];
    for (alter, names) in altered {
        v.push(Case::altered_rtl(
            config(entries),
            alter,
            names,
            20_000,
            move || RouteCache::new(entries),
            move || RandomFlows::new(seed),
        ));
    }
    v
}
