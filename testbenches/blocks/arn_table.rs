//! Cross-check cases of the ARN table.

use super::{first_difference, scaled};
use crate::harness::case::{Case, Expect};
use crate::harness::{HdlConfig, RtlAlteration};
use arnsim::blocks::Block;
use arnsim::blocks::arn_table::{
    ArnLookup, ArnProcess, ArnRemove, ArnTable, ArnTableIn, ArnTableOut, MAX_PORTS,
};
use arnsim::stimulus::arn_table::RandomArnOps;
use arnsim::trace::Visit;

/// One HDL parameterisation: (Entries, Ports, Ttl).
type Params = (usize, usize, u32);

fn config((entries, ports, ttl): Params) -> HdlConfig {
    HdlConfig {
        block: "arn_table",
        params: vec![
            ("Entries", entries as u64),
            ("Ports", ports as u64),
            ("Ttl", ttl as u64),
        ],
        alter: None,
    }
}

/// A processARN command that adds when not existing.
fn cmd(dest: u16, port: u8, vc: u8, arn_id: u32, consumed: bool, alt_port: u8) -> ArnProcess {
    ArnProcess {
        en: true,
        dest,
        port,
        vc,
        arn_id,
        root_info: (arn_id as u8) ^ 0x5a,
        consumed,
        alt_port,
        add: true,
    }
}

/// A remove command.
fn rm(dest: u16, port: u8, vc: u8) -> ArnRemove {
    ArnRemove {
        en: true,
        dest,
        port,
        vc,
    }
}

/// Builds a directed sequence cycle by cycle. Every cycle has the same lookups, set by
/// `look`, unless changed.
struct Seq {
    ports: usize,
    lk: [ArnLookup; MAX_PORTS],
    v: Vec<ArnTableIn>,
}

impl Seq {
    fn new(ports: usize) -> Self {
        Seq {
            ports,
            lk: [ArnLookup::default(); MAX_PORTS],
            v: Vec::new(),
        }
    }

    /// From now on, port p looks up `keys[p % keys.len()]` (`None`: disabled, with a key that
    /// would hit, to check the enable).
    fn look(&mut self, keys: &[Option<(u16, u8)>]) -> &mut Self {
        for p in 0..self.ports {
            self.lk[p] = match keys[p % keys.len()] {
                Some((dest, vc)) => ArnLookup { en: true, dest, vc },
                None => ArnLookup {
                    en: false,
                    ..self.lk[p]
                },
            };
        }
        self
    }

    fn push(&mut self, pr: ArnProcess, rm: ArnRemove) -> &mut Self {
        let mut inp = ArnTableIn {
            pr,
            rm,
            ..ArnTableIn::default()
        };
        inp.lk[..self.ports].copy_from_slice(&self.lk[..self.ports]);
        self.v.push(inp);
        self
    }

    fn pr(&mut self, pr: ArnProcess) -> &mut Self {
        self.push(pr, ArnRemove::default())
    }

    fn rm(&mut self, rm: ArnRemove) -> &mut Self {
        self.push(ArnProcess::default(), rm)
    }

    fn idle(&mut self, n: u64) -> &mut Self {
        for _ in 0..n {
            self.push(ArnProcess::default(), ArnRemove::default());
        }
        self
    }

    fn done(&mut self) -> Vec<ArnTableIn> {
        std::mem::take(&mut self.v)
    }
}

/// Directed sequences for one configuration.
fn directed((entries, ports, ttl): Params) -> Vec<(&'static str, Vec<ArnTableIn>)> {
    let t = ttl as u64;
    let e = entries as u64;
    let mut out = Vec::new();
    let mut s = Seq::new(ports);

    // Insert, then look up from every port: hits, a disabled port, a wrong VC, a wrong dest.
    s.look(&[Some((5, 2))]).idle(1);
    s.pr(cmd(5, 1, 2, 7, false, 9))
        .look(&[Some((5, 2)), None, Some((5, 3)), Some((4, 2))])
        .idle(3);
    out.push(("directed insert and lookup", s.done()));

    // An entry is visible for exactly Ttl cycles after the insert.
    s.look(&[Some((3, 0))])
        .pr(cmd(3, 2, 0, 1, true, 4))
        .idle(t + 3);
    out.push(("directed expiry", s.done()));

    // Refreshes: on the last cycle of the life (saves it), one cycle before it, and one cycle
    // too late (the entry is added again, not refreshed).
    let a = cmd(6, 0, 1, 42, false, 0);
    s.look(&[Some((6, 1))]).pr(a).idle(t - 1).pr(a);
    if t > 1 {
        s.idle(t - 2).pr(a);
    }
    s.idle(t).pr(a).idle(t + 2);
    out.push(("directed refresh on the boundary", s.done()));

    // The congestion root moves: same (dest, port, vc), new id; then with add cleared the stale
    // entry is only removed; a refresh ignores the add bit.
    s.look(&[Some((2, 3))]);
    s.pr(cmd(2, 1, 3, 10, false, 0))
        .pr(cmd(9, 1, 3, 10, false, 0));
    s.pr(cmd(2, 1, 3, 11, true, 5)).idle(2);
    s.pr(ArnProcess {
        add: false,
        ..cmd(2, 1, 3, 12, false, 0)
    })
    .idle(2);
    s.pr(cmd(2, 1, 3, 13, true, 6)).pr(ArnProcess {
        add: false,
        ..cmd(2, 1, 3, 13, true, 6)
    });
    s.pr(ArnProcess {
        add: false,
        ..cmd(7, 0, 0, 1, false, 0)
    })
    .idle(3);
    out.push(("directed moved root", s.done()));

    // Removes: by exact key only, disabled removes, and a remove and processARN on the same key
    // in the same cycle (the entry is dropped, then added again as new).
    s.look(&[Some((8, 0)), Some((8, 1))]);
    s.pr(cmd(8, 0, 0, 1, false, 0)).pr(cmd(8, 1, 0, 2, true, 3));
    s.pr(cmd(8, 2, 1, 3, false, 0));
    s.rm(rm(8, 3, 0)).rm(rm(8, 0, 1)).rm(ArnRemove {
        en: false,
        ..rm(8, 1, 0)
    });
    s.rm(rm(8, 1, 0)).idle(1);
    s.push(cmd(8, 0, 0, 1, true, 7), rm(8, 0, 0)).idle(1);
    s.push(cmd(8, 2, 1, 9, false, 0), rm(8, 2, 1)).idle(2);
    out.push(("directed remove", s.done()));

    // Fill the table, then keep adding: each add evicts the entry nearest expiry. A refresh
    // makes an old entry young again, so the next victim is another one.
    s.look(&[Some((0, 0)), Some((3, 0)), Some((4, 0))]);
    for k in 0..e + 3 {
        s.pr(cmd(k as u16, 0, 0, 1, k % 2 == 1, k as u8));
    }
    s.pr(cmd(3, 0, 0, 1, true, 3));
    s.pr(cmd(100, 0, 0, 1, false, 0))
        .pr(cmd(101, 0, 0, 1, false, 0));
    s.idle(2);
    out.push(("directed fill and evict", s.done()));

    // A full table where the oldest entry expires in the cycle of an add: the add takes its
    // slot without evicting.
    if e <= t {
        s.look(&[Some((20, 0))]);
        for k in 0..e {
            s.pr(cmd(20 + k as u16, 1, 0, 1, false, 0));
        }
        s.idle(t - e);
        s.pr(cmd(50, 1, 0, 1, false, 0))
            .pr(cmd(51, 1, 0, 1, false, 0));
        s.idle(3);
        out.push(("directed add on expiry when full", s.done()));
    }

    // Several matches on (dest, vc): a consumed one wins over a lower-index unconsumed one,
    // the lowest-index consumed one among several.
    s.look(&[Some((4, 1)), Some((4, 2)), None]);
    s.pr(cmd(4, 0, 1, 1, false, 1)).pr(cmd(4, 1, 1, 1, true, 7));
    s.pr(cmd(4, 2, 1, 1, true, 8))
        .pr(cmd(4, 3, 2, 1, false, 2))
        .idle(1);
    s.rm(rm(4, 1, 1))
        .idle(1)
        .rm(rm(4, 2, 1))
        .idle(1)
        .rm(rm(4, 0, 1))
        .idle(2);
    out.push(("directed consumed priority", s.done()));

    // Every field at its extreme values.
    s.look(&[Some((0xffff, 0xff)), Some((0x8000, 0x80)), Some((0, 0))]);
    s.pr(ArnProcess {
        root_info: 0xff,
        ..cmd(0xffff, 0xff, 0xff, 0xffff_ffff, true, 0xff)
    });
    s.pr(ArnProcess {
        root_info: 0x80,
        ..cmd(0x8000, 0x80, 0x80, 0x8000_0000, false, 0x80)
    });
    s.pr(cmd(0, 0, 0, 0, false, 0)).idle(2);
    s.rm(rm(0xffff, 0xff, 0xff)).idle(2);
    out.push(("directed extreme fields", s.done()));

    // Nothing at all: the reset state.
    s.look(&[None]).idle(8);
    out.push(("directed idle", s.done()));
    out
}

/// An ARN table with a planted bug: expiry wins over a refresh arriving in the last cycle of
/// an entry's life (`ttl_q == 1`), so the refreshed entry is dropped instead of kept.
#[derive(Clone)]
struct ExpiryBeatsRefresh {
    inner: ArnTable,
}

impl ExpiryBeatsRefresh {
    /// Whether this cycle's command refreshes an entry in its last cycle.
    fn refresh_on_last_cycle(t: &ArnTable, inp: &ArnTableIn) -> bool {
        let (pr, rm) = (&inp.pr, &inp.rm);
        pr.en
            && t.slots().iter().any(|e| {
                e.valid
                    && e.ttl.value() == 1
                    && (e.dest, e.port, e.vc, e.arn_id) == (pr.dest, pr.port, pr.vc, pr.arn_id)
                    && !(rm.en && (e.dest, e.port, e.vc) == (rm.dest, rm.port, rm.vc))
            })
    }
}

impl Block for ExpiryBeatsRefresh {
    type In = ArnTableIn;
    type Out = ArnTableOut;
    const NAME: &'static str = ArnTable::NAME;

    fn reset(&mut self) {
        self.inner.reset();
    }

    fn evaluate(&mut self, inp: &ArnTableIn) -> ArnTableOut {
        let lost = Self::refresh_on_last_cycle(&self.inner, inp);
        let out = self.inner.evaluate(inp);
        if lost {
            let mut without = *inp;
            without.pr.en = false;
            self.inner.evaluate(&without);
        }
        out
    }

    fn commit(&mut self) {
        self.inner.commit();
    }

    fn probe_inputs(&self, inp: &ArnTableIn, v: &mut dyn Visit) {
        self.inner.probe_inputs(inp, v);
    }

    fn probe_outputs(&self, out: &ArnTableOut, v: &mut dyn Visit) {
        self.inner.probe_outputs(out, v);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        self.inner.probe_regs(v);
    }
}

/// Every cross-check case of the ARN table: three configurations, each with its directed cases
/// and seeded random runs, plus one altered block.
pub fn cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    // (parameters, random seeds, cycles per seed)
    let plan: [(Params, u64, u64); 3] = [
        ((8, 4, 64), 2, 200_000),
        ((16, 12, 300), 3, 200_000),
        ((1, 1, 1), 1, 50_000),
    ];
    for (params, seeds, cycles) in plan {
        let (entries, ports, ttl) = params;
        for (name, seq) in directed(params) {
            let len = seq.len() as u64;
            v.push(Case::new(
                config(params),
                name,
                false,
                len,
                move || ArnTable::new(entries, ports, ttl),
                move || seq.clone().into_iter(),
            ));
        }
        for k in 0..seeds {
            let seed = 0xA270_0000 + ((entries as u64) << 8) + k;
            v.push(Case::new(
                config(params),
                format!("random seed {seed:#x}"),
                true,
                scaled(cycles, scale),
                move || ArnTable::new(entries, ports, ttl),
                move || RandomArnOps::new(ports, ttl, seed),
            ));
        }
    }
    // The harness must catch a real difference: a refresh lost to expiry in the same cycle.
    let ((entries, ports, ttl), seed) = ((8usize, 4usize, 64u32), 0xBAD);
    let at = first_difference(
        ArnTable::new(entries, ports, ttl),
        ExpiryBeatsRefresh {
            inner: ArnTable::new(entries, ports, ttl),
        },
        RandomArnOps::new(ports, ttl, seed),
    );
    v.push(
        Case::new(
            config((entries, ports, ttl)),
            "altered: expiry beats refresh",
            false,
            at + 1000,
            move || ExpiryBeatsRefresh {
                inner: ArnTable::new(entries, ports, ttl),
            },
            move || RandomArnOps::new(ports, ttl, seed),
        )
        .expecting(Expect::Mismatch(Some(at))),
    );
    // The RTL's assertions must catch a real bug in the RTL.
    let altered: [(RtlAlteration, &'static [&'static str]); 3] = [
        (
            RtlAlteration {
                name: "ages_by_two",
                find: "ttl_d[e] = ttl_q[e] - 24'd1;",
                replace: "ttl_d[e] = ttl_q[e] - 24'd2;",
            },
            &["a_ttl_counts_down"],
        ),
        (
            RtlAlteration {
                name: "refresh_keeps_ttl",
                find: "          valid_d[e] = 1'b1;\n          ttl_d[e] = 24'(Ttl);\n",
                replace: "          valid_d[e] = 1'b1;\n",
            },
            &["a_refresh_reloads"],
        ),
        (
            RtlAlteration {
                name: "remove_ignored",
                find: "if (removed[e]) valid_d[e] = 1'b0;",
                replace: "if (removed[e]) valid_d[e] = valid_d[e];",
            },
            &["a_remove_drops"],
        ),
    ];
    for (alter, names) in altered {
        v.push(Case::altered_rtl(
            config((entries, ports, ttl)),
            alter,
            names,
            20_000,
            move || ArnTable::new(entries, ports, ttl),
            move || RandomArnOps::new(ports, ttl, seed),
        ));
    }
    v
}
