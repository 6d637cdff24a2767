//! Cross-check cases of the congestion detector.

use super::scaled;
use crate::harness::case::{Case, Expect};
use crate::harness::{HdlConfig, RtlAlteration};
use arnsim::blocks::Block;
use arnsim::blocks::congestion_detector::{
    CongestionDetector, CongestionDetectorIn, CongestionDetectorOut, CongestionDetectorRegs,
    DetectorConfig,
};
use arnsim::stimulus::Stimulus;
use arnsim::stimulus::congestion_detector::RandomCongestion;
use arnsim::trace::Visit;

fn config(cfg: &DetectorConfig) -> HdlConfig {
    HdlConfig {
        block: "congestion_detector",
        params: vec![
            ("P", cfg.inputs as u64),
            ("Hcdth", cfg.hcdth as u64),
            ("Lcdth", cfg.lcdth as u64),
            ("Fcth", cfg.fcth as u64),
            ("Crt", cfg.crt.value() as u64),
        ],
        alter: None,
    }
}

/// The configurations cross-checked, with the random cycles of each at scale 1 and the number
/// of seeds they are split into.
fn configs() -> Vec<(DetectorConfig, u64, u64)> {
    vec![
        (DetectorConfig::new(4, 80, 63, 15, 16), 400_000, 2),
        // The paper's thresholds on a 5376-flit buffer; the downstream VC is half of it (one
        // regular VC and the AFC).
        (
            DetectorConfig::from_percent(12, 5376, 2688, 200),
            500_000,
            4,
        ),
        // One input, CRT of one cycle: declared in the first cycle of the condition.
        (DetectorConfig::new(1, 5, 2, 3, 1), 100_000, 1),
        // LCDTh = HCDTh, FCTh = 0, CRT of two cycles.
        (DetectorConfig::new(3, 10, 10, 0, 2), 100_000, 1),
    ]
}

/// A builder of directed input sequences over `P` inputs.
struct Seq {
    p: usize,
    cur: CongestionDetectorIn,
    out: Vec<CongestionDetectorIn>,
}

impl Seq {
    fn new(p: usize) -> Self {
        let mut cur = CongestionDetectorIn::default();
        for i in 0..p {
            cur.head_dest[i] = 0x1000 + 0x11 * i as u16;
            cur.head_vc[i] = i as u8;
            cur.head_adapted |= ((i % 2) as u64) << i;
        }
        Seq {
            p,
            cur,
            out: Vec::new(),
        }
    }

    /// Input `i`: occupancy, free credits downstream, head valid (the head valid when occupied).
    fn set(&mut self, i: usize, occ: u16, fc: u16) -> &mut Self {
        let i = i % self.p;
        self.cur.voq_occ[i] = occ;
        self.cur.head_fc[i] = fc;
        self.valid(i, occ > 0)
    }

    fn valid(&mut self, i: usize, v: bool) -> &mut Self {
        let i = i % self.p;
        self.cur.head_valid = (self.cur.head_valid & !(1 << i)) | ((v as u64) << i);
        self
    }

    fn head(&mut self, i: usize, dest: u16, vc: u8, adapted: bool) -> &mut Self {
        let i = i % self.p;
        self.cur.head_dest[i] = dest;
        self.cur.head_vc[i] = vc;
        self.cur.head_adapted = (self.cur.head_adapted & !(1 << i)) | ((adapted as u64) << i);
        self
    }

    /// Every input empty.
    fn drain(&mut self) -> &mut Self {
        for i in 0..self.p {
            self.set(i, 0, 0);
        }
        self
    }

    /// Holds the current inputs for `n` cycles.
    fn hold(&mut self, n: u64) -> &mut Self {
        for _ in 0..n {
            self.out.push(self.cur);
        }
        self
    }

    fn done(&mut self) -> Vec<CongestionDetectorIn> {
        self.drain().hold(4);
        std::mem::take(&mut self.out)
    }
}

/// Directed sequences for configuration `cfg`.
fn directed(cfg: &DetectorConfig) -> Vec<(&'static str, Vec<CongestionDetectorIn>)> {
    let p = cfg.inputs;
    let (h, l, f) = (cfg.hcdth, cfg.lcdth, cfg.fcth);
    let crt = cfg.crt.value() as u64;
    let last = p - 1;
    let mut v = Vec::new();

    // C for exactly CRT cycles, then hysteresis on the way down: between the thresholds, at
    // LCDTh (still crossed), under LCDTh (released).
    let mut s = Seq::new(p);
    s.hold(2).set(last, h + 1, f + 1).hold(crt);
    s.set(last, h, f + 1).hold(3).set(last, l, 0).hold(2);
    s.set(last, l.saturating_sub(1), 0).hold(3);
    v.push(("directed declare at crt and release", s.done()));

    // C for CRT - 1 cycles, one cycle of each way to lose it, then CRT cycles.
    let mut s = Seq::new(p);
    s.hold(1);
    for gap in 0..4 {
        s.set(0, h + 1, f + 1).hold(crt - 1);
        match gap {
            0 => s.set(0, h, f + 1), // at HCDTh, not above
            1 => s.set(0, h + 1, f), // at FCTh: a branch
            2 => s.valid(0, false),  // no head packet
            _ => s.set(0, 0, f + 1), // emptied
        };
        s.hold(1);
    }
    s.set(0, h + 1, f + 1).hold(crt + 2);
    v.push(("directed timer cancelled", s.done()));

    // A branch: above HCDTh with credits at FCTh for long, then room downstream.
    let mut s = Seq::new(p);
    s.set(0, h.saturating_add(20), f).hold(3 * crt + 4);
    s.set(0, h.saturating_add(20), f + 1).hold(crt + 2);
    v.push(("directed branch then root", s.done()));

    // Offending input: the fullest qualifying VOQ, the lowest index on ties; a fuller VOQ
    // without room downstream or without a head does not count.
    let mut s = Seq::new(p);
    for i in 0..p {
        s.set(i, h + 5, f + 1);
        s.head(i, 0xA000 + i as u16, 0x80 | i as u8, i % 3 == 0);
    }
    if p > 1 {
        s.set(last, h + 9, f).set(0, h + 9, f + 1).valid(0, false);
    }
    s.hold(crt + 2).drain().hold(2);
    for i in 0..p {
        s.set(i, h + 5 + (i as u16 % 2), f + 1);
    }
    s.hold(crt + 2);
    v.push(("directed offending input and ties", s.done()));

    // Several VOQs cross; the root is held until the last one is under LCDTh; a new VOQ above
    // HCDTh (even without credits) also holds it.
    let mut s = Seq::new(p);
    for i in 0..p {
        s.set(i, h + 1 + i as u16, if i == 0 { f + 1 } else { 0 });
    }
    s.hold(crt + 1);
    for i in 0..p {
        s.set(i, l.saturating_sub(1), 0).hold(2);
        if i + 1 < p {
            s.set(i, h + 1, 0)
                .hold(1)
                .set(i, l, 0)
                .hold(1)
                .set(i, 0, 0)
                .hold(1);
        }
    }
    s.hold(2);
    v.push(("directed release waits for every crossed VOQ", s.done()));

    // Released and declared again at once; CRT of the new root counted from Idle.
    let mut s = Seq::new(p);
    s.set(0, h + 1, f + 1).hold(crt + 1).drain().hold(1);
    s.set(last, h + 2, f + 1)
        .head(last, 0xBEEF, 7, true)
        .hold(crt + 1);
    s.drain().hold(1).set(0, h + 1, f + 1).hold(crt);
    v.push(("directed back to back roots", s.done()));

    // Extremes of the 16-bit fields.
    let mut s = Seq::new(p);
    for i in 0..p {
        s.set(i, 0xFFFF, 0xFFFF).head(i, 0xFFFF, 0xFF, true);
    }
    s.hold(crt + 3);
    for i in 0..p {
        s.set(i, 0xFFFF, 0);
    }
    s.hold(3).drain().hold(2);
    v.push(("directed extremes", s.done()));
    v
}

/// A detector with a planted bug: the hysteresis comparator keeps a crossed VOQ only while it
/// is strictly above LCDTh (`>` instead of `>=`), so a VOQ sitting exactly at LCDTh leaves the
/// crossed set one step early.
#[derive(Clone)]
struct LowThresholdOffByOne {
    inner: CongestionDetector,
}

impl LowThresholdOffByOne {
    fn new(cfg: DetectorConfig) -> Self {
        LowThresholdOffByOne {
            inner: CongestionDetector::new(cfg),
        }
    }

    /// The inputs the buggy comparator effectively sees.
    fn seen(&self, inp: &CongestionDetectorIn) -> CongestionDetectorIn {
        let cfg = self.inner.config();
        let over = self.inner.regs().over;
        let mut x = *inp;
        for i in 0..cfg.inputs {
            if (over >> i) & 1 == 1 && cfg.lcdth > 0 && x.voq_occ[i] == cfg.lcdth {
                x.voq_occ[i] = cfg.lcdth - 1;
            }
        }
        x
    }

    /// The first cycle at which the altered block's trace differs from the real one's.
    fn first_effect(cfg: DetectorConfig, mut stim: impl Stimulus<CongestionDetectorIn>) -> u64 {
        let mut good = CongestionDetector::new(cfg);
        let mut bad = LowThresholdOffByOne::new(cfg);
        for c in 0.. {
            let inp = stim.next(c);
            let regs: (CongestionDetectorRegs, CongestionDetectorRegs) =
                (good.regs(), bad.inner.regs());
            let (a, b) = (good.step(&inp), bad.step(&inp));
            if a != b || regs.0 != regs.1 {
                return c;
            }
        }
        unreachable!()
    }
}

impl Block for LowThresholdOffByOne {
    type In = CongestionDetectorIn;
    type Out = CongestionDetectorOut;
    const NAME: &'static str = CongestionDetector::NAME;

    fn reset(&mut self) {
        self.inner.reset();
    }

    fn evaluate(&mut self, inp: &CongestionDetectorIn) -> CongestionDetectorOut {
        let x = self.seen(inp);
        self.inner.evaluate(&x)
    }

    fn commit(&mut self) {
        self.inner.commit();
    }

    fn probe_inputs(&self, inp: &CongestionDetectorIn, v: &mut dyn Visit) {
        self.inner.probe_inputs(inp, v);
    }

    fn probe_outputs(&self, out: &CongestionDetectorOut, v: &mut dyn Visit) {
        self.inner.probe_outputs(out, v);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        self.inner.probe_regs(v);
    }
}

pub fn cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    for (cfg, cycles, seeds) in configs() {
        for (name, seq) in directed(&cfg) {
            let len = seq.len() as u64;
            v.push(Case::new(
                config(&cfg),
                name,
                false,
                len,
                move || CongestionDetector::new(cfg),
                move || seq.clone().into_iter(),
            ));
        }
        for k in 0..seeds {
            let seed = 0xC0DE_0000 + ((cfg.inputs as u64) << 8) + k;
            v.push(Case::new(
                config(&cfg),
                format!("random seed {seed:#x}"),
                true,
                scaled(cycles / seeds, scale),
                move || CongestionDetector::new(cfg),
                move || RandomCongestion::new(cfg, seed),
            ));
        }
    }
    // The harness must catch a real difference: a hysteresis comparator off by one.
    let (cfg, seed) = (configs()[0].0, 0xBAD);
    let effect = LowThresholdOffByOne::first_effect(cfg, RandomCongestion::new(cfg, seed));
    v.push(
        Case::new(
            config(&cfg),
            "altered: LCDTh compare off by one",
            false,
            effect + 1000,
            move || LowThresholdOffByOne::new(cfg),
            move || RandomCongestion::new(cfg, seed),
        )
        .expecting(Expect::Mismatch(Some(effect))),
    );
    // The RTL's assertions must catch a real bug in the RTL.
    let altered: [(RtlAlteration, &'static [&'static str]); 3] = [
        (
            RtlAlteration {
                name: "crt_one_short",
                find: "crt_d   = CrtV - 24'd1;",
                replace: "crt_d   = CrtV - 24'd2;",
            },
            &["a_det_iff_crt_run"],
        ),
        (
            RtlAlteration {
                name: "fcth_ignored",
                find: "head_valid_i[i] && 32'(head_fc_i[i]) > Fcth &&\n          (!cond_any",
                replace: "head_valid_i[i] &&\n          (!cond_any",
            },
            &["a_det_iff_crt_run"],
        ),
        (
            RtlAlteration {
                name: "lcdth_off_by_one",
                find: "over_d[i] = over_q[i] ? (32'(voq_occ_i[i]) >= Lcdth)",
                replace: "over_d[i] = over_q[i] ? (32'(voq_occ_i[i]) > Lcdth)",
            },
            &["a_crossed_hysteresis"],
        ),
    ];
    for (alter, names) in altered {
        v.push(Case::altered_rtl(
            config(&cfg),
            alter,
            names,
            (effect + 1000).max(20_000),
            move || CongestionDetector::new(cfg),
            move || RandomCongestion::new(cfg, seed),
        ));
    }
    v
}
