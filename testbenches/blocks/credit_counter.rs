//! Cross-check cases of the credit counter.

use super::scaled;
use crate::harness::case::{Case, Expect};
use crate::harness::{HdlConfig, RtlAlteration};
use arnsim::blocks::Block;
use arnsim::blocks::credit_counter::{CreditCounter, CreditCounterIn, CreditCounterOut};
use arnsim::stimulus::Stimulus;
use arnsim::stimulus::credit_counter::RandomCredits;
use arnsim::trace::Visit;

fn config(cap: usize) -> HdlConfig {
    HdlConfig {
        block: "credit_counter",
        params: vec![("Cap", cap as u64)],
        alter: None,
    }
}

fn send(need: u16) -> CreditCounterIn {
    CreditCounterIn {
        dec: true,
        inc: 0,
        need,
    }
}

fn ret(inc: u8, need: u16) -> CreditCounterIn {
    CreditCounterIn {
        dec: false,
        inc,
        need,
    }
}

fn both(inc: u8, need: u16) -> CreditCounterIn {
    CreditCounterIn {
        dec: true,
        inc,
        need,
    }
}

fn idle(n: usize) -> Vec<CreditCounterIn> {
    vec![CreditCounterIn::default(); n]
}

/// `cap` sends in a row, asking each time for exactly the credits left (the count runs to zero).
fn drain(cap: usize) -> Vec<CreditCounterIn> {
    (0..cap).map(|k| send((cap - k) as u16)).collect()
}

/// Returns `total` credits in chunks of at most 255, the last one exact.
fn refill(total: usize, need: u16) -> Vec<CreditCounterIn> {
    let mut v = Vec::new();
    let mut left = total;
    while left > 0 {
        let k = left.min(255);
        v.push(ret(k as u8, need));
        left -= k;
    }
    v
}

/// Directed sequences for a counter of capacity `cap`.
fn directed(cap: usize) -> Vec<(&'static str, Vec<CreditCounterIn>)> {
    let c16 = cap as u16;
    let mut v = Vec::new();

    // Empty the buffer, then give every credit back: exact refill, no error.
    let mut s = drain(cap);
    s.extend(idle(3));
    s.extend(refill(cap, c16));
    s.extend(idle(3));
    // Then one credit at a time after a short drain.
    let k = cap.min(40);
    s.extend(
        drain(k)
            .into_iter()
            .map(|i| CreditCounterIn { need: 1, ..i }),
    );
    s.extend((0..k).map(|_| ret(1, c16)));
    s.extend(idle(2));
    v.push(("directed drain and refill", s));

    // A send at zero with no credit: underflow, the decrement is ignored; sticky afterwards.
    let mut s = drain(cap);
    s.push(send(0));
    s.push(send(1));
    s.push(ret(1, 1));
    s.push(send(1));
    s.push(send(0));
    s.extend(idle(3));
    v.push(("directed underflow", s));

    // A send at zero with a credit arriving in the same cycle is still an underflow.
    let mut s = drain(cap);
    s.push(both(1, 1));
    s.push(both(1, 1));
    s.push(send(1));
    s.push(both(2.min(cap) as u8, 2));
    s.extend(idle(3));
    v.push(("directed underflow with a credit back", s));

    // At Cap: a send and one credit back is net zero; any more credit overflows (saturates).
    let mut s = vec![both(1, c16), both(1, c16), ret(0, c16)];
    s.push(both(2, c16));
    s.push(ret(1, c16));
    s.push(ret(255, 0xffff));
    s.push(send(c16));
    s.extend(idle(3));
    v.push(("directed overflow at cap", s));

    // The sum lands exactly on Cap (no overflow), with and without a send in the same cycle,
    // then one beyond it (overflow).
    let k = cap.min(255);
    let mut s: Vec<CreditCounterIn> = (0..k).map(|_| send(0)).collect();
    s.push(ret(k as u8, c16));
    s.extend(idle(1));
    if cap >= 2 {
        let k = (cap - 1).min(254);
        s.extend((0..k).map(|_| send(0)));
        s.push(both(k as u8 + 1, c16));
        s.extend(idle(1));
    }
    s.push(send(c16));
    s.push(ret(2, c16));
    s.extend(idle(2));
    v.push(("directed exact cap then one over", s));

    // Both events in one cycle: a send at zero and more credits back than Cap.
    if cap < 255 {
        let mut s = drain(cap);
        s.push(both((cap + 1) as u8, 0));
        s.extend(idle(3));
        v.push(("directed both flags in one cycle", s));
    }

    // The virtual cut-through check at the boundary, at several counts.
    let mut s = Vec::new();
    let levels = [cap, cap - cap / 2, 1, 0];
    let mut cnt = cap;
    for &lvl in &levels {
        while cnt > lvl {
            s.push(send(cnt as u16));
            cnt -= 1;
        }
        for need in [
            lvl.saturating_sub(1),
            lvl,
            lvl + 1,
            0,
            0xffff,
            (lvl + 64).min(0xffff),
        ] {
            s.push(ret(0, need as u16));
        }
    }
    v.push(("directed enough boundary", s));

    // Full-size returns: 255 credits in one cycle, with and without a send.
    if cap >= 255 {
        let mut s = drain(cap.min(600));
        s.push(ret(255, 255));
        s.push(both(255, 255));
        s.push(ret(255, 0xffff));
        s.push(ret(255, c16));
        s.extend(idle(2));
        v.push(("directed 255-credit returns", s));
    }
    v
}

/// A counter with a planted bug: a credit returned in the same cycle excuses a send at zero
/// (the credit is used by the send instead of flagging an underflow).
#[derive(Clone)]
struct CreditExcusesUnderflow {
    inner: CreditCounter,
}

impl CreditExcusesUnderflow {
    /// The first cycle in which the bug changes the next state, for a stimulus.
    fn first_effect(cap: usize, mut stim: impl Stimulus<CreditCounterIn>) -> u64 {
        let mut c = CreditCounter::new(cap);
        for t in 0.. {
            let i = stim.next(t);
            if i.dec && c.credits() == 0 && i.inc > 0 {
                return t;
            }
            c.step(&i);
        }
        unreachable!()
    }
}

impl Block for CreditExcusesUnderflow {
    type In = CreditCounterIn;
    type Out = CreditCounterOut;
    const NAME: &'static str = CreditCounter::NAME;

    fn reset(&mut self) {
        self.inner.reset();
    }

    fn evaluate(&mut self, inp: &CreditCounterIn) -> CreditCounterOut {
        let at_zero = self.inner.credits() == 0;
        let out = self.inner.evaluate(inp);
        if inp.dec && at_zero && inp.inc > 0 {
            self.inner.evaluate(&CreditCounterIn {
                dec: false,
                inc: inp.inc - 1,
                ..*inp
            });
        }
        out
    }

    fn commit(&mut self) {
        self.inner.commit();
    }

    fn probe_inputs(&self, inp: &CreditCounterIn, v: &mut dyn Visit) {
        self.inner.probe_inputs(inp, v);
    }

    fn probe_outputs(&self, out: &CreditCounterOut, v: &mut dyn Visit) {
        self.inner.probe_outputs(out, v);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        self.inner.probe_regs(v);
    }
}

pub fn cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    // (Cap, legal random cycles, random cycles with errors)
    for (cap, legal, errors) in [
        (1usize, 100_000u64, 150_000u64),
        (20, 150_000, 200_000),
        (5376, 200_000, 250_000),
        (65535, 50_000, 150_000),
    ] {
        for (name, seq) in directed(cap) {
            let len = seq.len() as u64;
            v.push(Case::new(
                config(cap),
                name,
                false,
                len,
                move || CreditCounter::new(cap),
                move || seq.clone().into_iter(),
            ));
        }
        let seed = 0xC4ED_0000 + cap as u64;
        v.push(Case::new(
            config(cap),
            format!("random legal seed {seed:#x}"),
            true,
            scaled(legal, scale),
            move || CreditCounter::new(cap),
            move || RandomCredits::new(cap, seed, false),
        ));
        // One long run with errors, and short ones so that the flags rise in varied states.
        for k in 0..4u64 {
            let seed = 0xC4ED_E000 + (cap as u64) * 16 + k;
            let cycles = if k == 0 { errors } else { 4_000 };
            v.push(Case::new(
                config(cap),
                format!("random errors seed {seed:#x}"),
                true,
                scaled(cycles, scale),
                move || CreditCounter::new(cap),
                move || RandomCredits::new(cap, seed, true),
            ));
        }
    }
    // The harness must catch a real difference: a same-cycle credit excusing an underflow.
    let (cap, seed) = (20usize, 0xBAD);
    let effect = CreditExcusesUnderflow::first_effect(cap, RandomCredits::new(cap, seed, true));
    v.push(
        Case::new(
            config(cap),
            "altered: credit excuses underflow",
            false,
            effect + 2_000,
            move || CreditExcusesUnderflow {
                inner: CreditCounter::new(cap),
            },
            move || RandomCredits::new(cap, seed, true),
        )
        .expecting(Expect::Mismatch(Some(effect + 1))),
    );
    // The RTL's assertions must catch a real bug in the RTL.
    let altered: [(RtlAlteration, &'static [&'static str]); 2] = [
        (
            RtlAlteration {
                name: "credit_excuses_underflow",
                find: "udf_ev = dec_i && (cnt_q == '0);",
                replace: "udf_ev = dec_i && (cnt_q == '0) && (inc_i == '0);",
            },
            &["a_udf_on_send_at_zero"],
        ),
        (
            RtlAlteration {
                name: "count_wraps_past_cap",
                find: "cnt_d  = ovf_ev ? CapCnt : sum[15:0];",
                replace: "cnt_d  = sum[15:0];",
            },
            &["a_ovf_saturates", "a_cnt_le_cap"],
        ),
    ];
    for (alter, names) in altered {
        v.push(Case::altered_rtl(
            config(cap),
            alter,
            names,
            effect + 2_000,
            move || CreditCounter::new(cap),
            move || RandomCredits::new(cap, seed, true),
        ));
    }
    v
}
