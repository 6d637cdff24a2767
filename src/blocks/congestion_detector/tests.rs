//! Unit tests of `congestion_detector`.

use super::*;
use proptest::prelude::*;

const H: u16 = 80;
const L: u16 = 63;
const F: u16 = 15;

/// Inputs with every head valid, occupancies `occ` and credits `fc`.
fn inputs(occ: &[u16], fc: &[u16]) -> CongestionDetectorIn {
    let mut x = CongestionDetectorIn::default();
    for (i, (&o, &f)) in occ.iter().zip(fc).enumerate() {
        x.voq_occ[i] = o;
        x.head_fc[i] = f;
        x.head_valid |= 1 << i;
        x.head_dest[i] = 0x100 + i as u16;
        x.head_vc[i] = i as u8;
    }
    x
}

fn hot(p: usize, who: usize) -> CongestionDetectorIn {
    let mut occ = vec![0u16; p];
    let fc = vec![F + 1; p];
    occ[who] = H + 1;
    inputs(&occ, &fc)
}

/// The timing diagram of docs/blocks/congestion_detector.md, cycle by cycle.
#[test]
fn doc_timing_diagram() {
    use DetectorState::{Idle, Root, Wait};
    let mut d = CongestionDetector::new(DetectorConfig::new(2, H, L, F, 3));
    let occ0 = [40, 40, 85, 85, 85, 62, 50, 50, 50];
    let occ1 = [50, 90, 95, 99, 70, 64, 63, 62, 40];
    let fc0 = [20, 20, 9, 9, 9, 9, 9, 9, 9];
    let state = [Idle, Idle, Wait, Wait, Root, Root, Root, Root, Idle];
    let crt = [0, 0, 2, 1, 0, 0, 0, 0, 0];
    let over = [0b00, 0b00, 0b10, 0b11, 0b11, 0b11, 0b10, 0b10, 0b00];
    let crossed = [0, 0, 1, 2, 2, 2, 1, 1, 0];
    let det = [0, 0, 0, 1, 0, 0, 0, 0, 0];
    let root = [0, 0, 0, 0, 1, 1, 1, 1, 0];
    let rel = [0, 0, 0, 0, 0, 0, 0, 1, 0];
    let root_in = [0, 0, 0, 1, 1, 1, 1, 1, 1];
    let dest = [0, 0, 0, 0xa7, 0, 0, 0, 0, 0];
    let vc = [0, 0, 0, 2, 0, 0, 0, 0, 0];
    for c in 0..9 {
        let mut x = inputs(&[occ0[c], occ1[c]], &[fc0[c], 30]);
        x.head_dest[1] = 0xa7;
        x.head_vc[1] = 2;
        let r = d.regs();
        assert_eq!(r.state, state[c], "state_q in cycle {c}");
        assert_eq!(r.crt.value(), crt[c], "crt_q in cycle {c}");
        assert_eq!(r.over, over[c], "over_q in cycle {c}");
        let o = d.step(&x);
        assert_eq!(o.crossed, crossed[c], "crossed_o in cycle {c}");
        assert_eq!(o.root_det as u8, det[c], "root_det_o in cycle {c}");
        assert_eq!(o.root as u8, root[c], "root_o in cycle {c}");
        assert_eq!(o.root_rel as u8, rel[c], "root_rel_o in cycle {c}");
        assert_eq!(o.root_in, root_in[c], "root_in_o in cycle {c}");
        assert_eq!(o.root_dest, dest[c], "root_dest_o in cycle {c}");
        assert_eq!(o.root_vc, vc[c], "root_vc_o in cycle {c}");
        assert!(!o.root_adapted, "root_adapted_o in cycle {c}");
    }
}

#[test]
fn crt_one_declares_in_the_first_cycle() {
    let mut d = CongestionDetector::new(DetectorConfig::new(3, H, L, F, 1));
    let o = d.step(&hot(3, 2));
    assert!(o.root_det && !o.root);
    assert_eq!(o.root_in, 2);
    assert_eq!(d.regs().state, DetectorState::Root);
    assert_eq!(d.regs().crt.value(), 0);
    assert!(d.step(&hot(3, 2)).root);
}

#[test]
fn a_gap_cancels_the_timer() {
    let crt = 5;
    let mut d = CongestionDetector::new(DetectorConfig::new(2, H, L, F, crt));
    for _ in 0..crt - 1 {
        assert!(!d.step(&hot(2, 0)).root_det);
    }
    // One cycle without room downstream: a branch, not a root.
    let mut gap = hot(2, 0);
    gap.head_fc[0] = F;
    assert!(!d.step(&gap).root_det);
    assert_eq!(d.regs().state, DetectorState::Idle);
    assert_eq!(d.regs().crt.value(), 0);
    for c in 0..crt {
        assert_eq!(d.step(&hot(2, 0)).root_det, c == crt - 1, "cycle {c}");
    }
}

#[test]
fn boundaries_of_the_root_condition() {
    let d = CongestionDetector::new(DetectorConfig::new(2, H, L, F, 4));
    let mut x = hot(2, 1);
    assert!(d.choose(&x).any);
    x.voq_occ[1] = H; // at HCDTh, not above
    assert!(!d.choose(&x).any);
    x.voq_occ[1] = H + 1;
    x.head_fc[1] = F; // at FCTh, not above: a branch
    assert!(!d.choose(&x).any);
    x.head_fc[1] = F + 1;
    x.head_valid = 0b01; // no head packet
    assert!(!d.choose(&x).any);
}

#[test]
fn offending_is_the_fullest_lowest_on_ties() {
    let d = CongestionDetector::new(DetectorConfig::new(4, H, L, F, 4));
    let x = inputs(&[90, 95, 95, 200], &[20, 20, 20, 5]);
    // Input 3 is the fullest but has no room downstream; 1 and 2 tie.
    assert_eq!(d.choose(&x).input, 1);
    let x = inputs(&[90, 95, 96, 200], &[20, 20, 20, 5]);
    assert_eq!(d.choose(&x).input, 2);
}

#[test]
fn release_waits_for_every_crossed_voq() {
    let mut d = CongestionDetector::new(DetectorConfig::new(3, H, L, F, 1));
    assert!(d.step(&inputs(&[90, 85, 0], &[20, 0, 0])).root_det);
    // Input 1 crossed without credits: it still counts for the release.
    assert!(!d.step(&inputs(&[10, 70, 0], &[20, 0, 0])).root_rel);
    assert_eq!(d.regs().over, 0b010);
    assert!(!d.step(&inputs(&[10, L, 0], &[20, 0, 0])).root_rel);
    // A new VOQ above HCDTh blocks the release too.
    assert!(!d.step(&inputs(&[10, 10, 81], &[20, 0, 0])).root_rel);
    assert!(!d.step(&inputs(&[10, 10, L], &[20, 0, 0])).root_rel);
    let o = d.step(&inputs(&[10, 10, L - 1], &[20, 0, 0]));
    assert!(o.root_rel && o.root);
    assert_eq!(d.regs().state, DetectorState::Idle);
    // The input of the last root is kept.
    assert_eq!(d.step(&CongestionDetectorIn::default()).root_in, 0);
}

#[test]
fn redeclares_right_after_a_release() {
    let mut d = CongestionDetector::new(DetectorConfig::new(2, H, L, F, 2));
    d.step(&hot(2, 1));
    assert!(d.step(&hot(2, 1)).root_det);
    assert!(d.step(&CongestionDetectorIn::default()).root_rel);
    assert!(!d.step(&hot(2, 0)).root_det);
    let o = d.step(&hot(2, 0));
    assert!(o.root_det);
    assert_eq!(o.root_in, 0);
    assert_eq!(o.root_dest, 0x100);
}

#[test]
fn sixty_four_inputs_and_extreme_values() {
    let cfg = DetectorConfig::new(64, 0xFFFE, 0, 0xFFFE, 2);
    let mut d = CongestionDetector::new(cfg);
    assert_eq!(d.index_bits(), 6);
    assert_eq!(d.count_bits(), 7);
    let mut x = CongestionDetectorIn {
        voq_occ: [0xFFFF; MAX_INPUTS],
        head_fc: [0xFFFF; MAX_INPUTS],
        head_valid: 1 << 63,
        head_adapted: 1 << 63,
        ..CongestionDetectorIn::default()
    };
    x.head_dest[63] = 0xFFFF;
    x.head_vc[63] = 0xFF;
    d.step(&x);
    let o = d.step(&x);
    assert!(o.root_det && o.root_adapted);
    assert_eq!((o.root_in, o.root_dest, o.root_vc), (63, 0xFFFF, 0xFF));
    assert_eq!(d.regs().over, u64::MAX);
    assert_eq!(d.step(&x).crossed, 64);
    // LCDTh 0: a crossed VOQ never leaves the crossed set.
    assert!(!d.step(&CongestionDetectorIn::default()).root_rel);
    assert!(d.regs().state == DetectorState::Root);
}

#[test]
fn paper_thresholds_round_down() {
    let cfg = DetectorConfig::from_percent(12, 5376, 2688, PAPER_CRT_CYCLES);
    assert_eq!((cfg.hcdth, cfg.lcdth, cfg.fcth), (4354, 3386, 2096));
    assert_eq!(cfg.crt.value(), 976_563);
    assert_eq!(percent_floor(81, 99), 80);
    assert_eq!(percent_floor(78, 0xFFFF_FFFF), 3_350_074_490);
}

#[test]
#[should_panic(expected = "Lcdth")]
fn rejects_lcdth_above_hcdth() {
    DetectorConfig::new(4, 10, 11, 0, 1);
}

#[test]
#[should_panic(expected = "Crt")]
fn rejects_zero_crt() {
    DetectorConfig::new(4, 10, 10, 0, 0);
}

/// A configuration and a stream of inputs concentrated around its thresholds.
fn config_and_stream(
    max_p: usize,
    max_len: usize,
) -> impl Strategy<Value = (DetectorConfig, Vec<CongestionDetectorIn>)> {
    (1..=max_p, 0u16..12, 0u16..12, 0u16..6, 1u32..=6).prop_flat_map(move |(p, a, b, f, crt)| {
        let (l, h) = (a.min(b), a.max(b));
        let cfg = DetectorConfig::new(p, h, l, f, crt);
        // Per cycle: a "regime" level for all inputs, then per-input noise.
        let cycle = (
            0u16..=h + 4,
            proptest::collection::vec((0u16..=4, any::<bool>(), 0u16..=f + 3), p),
            any::<u64>(),
            any::<u16>(),
        )
            .prop_map(move |(level, per, valid_noise, dest)| {
                let mut x = CongestionDetectorIn::default();
                for (i, (n, up, fc)) in per.into_iter().enumerate() {
                    x.voq_occ[i] = if up {
                        level + n
                    } else {
                        level.saturating_sub(n)
                    };
                    x.head_fc[i] = fc;
                    x.head_dest[i] = dest.wrapping_add(i as u16);
                    x.head_vc[i] = (dest >> 8) as u8 ^ i as u8;
                }
                // Heads mostly valid: one in eight missing.
                x.head_valid = !(valid_noise & (valid_noise >> 1) & (valid_noise >> 2));
                x.head_adapted = valid_noise >> 3;
                x
            });
        (Just(cfg), proptest::collection::vec(cycle, 1..max_len))
    })
}

/// What the properties watch, cycle by cycle, computed from the inputs alone.
struct Watch {
    cfg: DetectorConfig,
    run: u32,
    root: bool,
    over: u64,
    last: CongestionDetectorOut,
}

impl Watch {
    fn new(cfg: DetectorConfig) -> Self {
        Watch {
            cfg,
            run: 0,
            root: false,
            over: 0,
            last: CongestionDetectorOut::default(),
        }
    }

    /// `C` of this cycle.
    fn c(&self, x: &CongestionDetectorIn) -> bool {
        (0..self.cfg.inputs).any(|i| {
            x.voq_occ[i] > self.cfg.hcdth
                && (x.head_valid >> i) & 1 == 1
                && x.head_fc[i] > self.cfg.fcth
        })
    }

    /// Checks the outputs `o` on `x`, given the registers `q` before the edge.
    fn check(
        &mut self,
        c: usize,
        q: CongestionDetectorRegs,
        x: &CongestionDetectorIn,
        o: &CongestionDetectorOut,
    ) -> Result<(), TestCaseError> {
        let cfg = self.cfg;
        let crt = cfg.crt.value();
        let cond = self.c(x);
        prop_assert_eq!(q.over, self.over, "over_q in cycle {}", c);
        prop_assert_eq!(o.root, self.root, "root_o in cycle {}", c);
        prop_assert_eq!(o.root, q.state == DetectorState::Root);
        prop_assert_eq!(o.crossed as u32, q.over.count_ones());
        // Pulses.
        prop_assert!(
            !(o.root_det && self.last.root_det),
            "root_det_o twice, cycle {}",
            c
        );
        prop_assert!(
            !(o.root_rel && self.last.root_rel),
            "root_rel_o twice, cycle {}",
            c
        );
        // Consecutive cycles of C while not a root, ending in this one.
        if !self.root {
            self.run = if cond { self.run + 1 } else { 0 };
        }
        // Never before CRT consecutive cycles of C; exactly at the CRT-th from Idle.
        if o.root_det {
            prop_assert!(
                self.run >= crt,
                "declared after {} cycles of C, cycle {}",
                self.run,
                c
            );
        }
        prop_assert_eq!(
            o.root_det,
            !self.root && self.run == crt,
            "root_det_o in cycle {}",
            c
        );
        // The crossed set of the next cycle.
        let mut next = 0u64;
        for i in 0..cfg.inputs {
            let occ = x.voq_occ[i];
            let was = (self.over >> i) & 1 == 1;
            if (was && occ >= cfg.lcdth) || occ > cfg.hcdth {
                next |= 1 << i;
            }
        }
        // Release only when every crossed VOQ is under LCDTh and none above HCDTh.
        if o.root_rel {
            for i in 0..cfg.inputs {
                let occ = x.voq_occ[i];
                prop_assert!(occ <= cfg.hcdth, "released with VOQ {} above HCDTh", i);
                prop_assert!(
                    (self.over >> i) & 1 == 0 || occ < cfg.lcdth,
                    "released with crossed VOQ {} at {}",
                    i,
                    occ
                );
            }
        }
        prop_assert_eq!(
            o.root_rel,
            self.root && next == 0,
            "root_rel_o in cycle {}",
            c
        );
        // The offending input and its header.
        if o.root_det {
            let i = o.root_in as usize;
            let best = (0..cfg.inputs)
                .filter(|&j| {
                    x.voq_occ[j] > cfg.hcdth
                        && (x.head_valid >> j) & 1 == 1
                        && x.head_fc[j] > cfg.fcth
                })
                .max_by_key(|&j| (x.voq_occ[j], std::cmp::Reverse(j)));
            prop_assert_eq!(Some(i), best);
            prop_assert_eq!(o.root_dest, x.head_dest[i]);
            prop_assert_eq!(o.root_vc, x.head_vc[i]);
            prop_assert_eq!(o.root_adapted, (x.head_adapted >> i) & 1 == 1);
            self.root = true;
            self.run = 0;
        } else {
            prop_assert_eq!((o.root_dest, o.root_vc, o.root_adapted), (0, 0, false));
            prop_assert_eq!(o.root_in, q.root_in);
        }
        if o.root_rel {
            self.root = false;
        }
        self.over = next;
        self.last = *o;
        Ok(())
    }
}

fn run_watch(
    cfg: DetectorConfig,
    stream: &[CongestionDetectorIn],
) -> Result<(u32, u32), TestCaseError> {
    let mut d = CongestionDetector::new(cfg);
    let mut w = Watch::new(cfg);
    let (mut dets, mut rels) = (0, 0);
    for (c, x) in stream.iter().enumerate() {
        let q = d.regs();
        let o = d.step(x);
        w.check(c, q, x, &o)?;
        dets += o.root_det as u32;
        rels += o.root_rel as u32;
    }
    Ok((dets, rels))
}

/// The streams of the properties do declare and release roots, often.
#[test]
fn property_streams_declare_and_release() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = config_and_stream(8, 300);
    let (mut dets, mut rels, mut cycles) = (0, 0, 0);
    for _ in 0..200 {
        let (cfg, stream) = strategy.new_tree(&mut runner).unwrap().current();
        let (d, r) = run_watch(cfg, &stream).unwrap();
        dets += d;
        rels += r;
        cycles += stream.len();
    }
    eprintln!("{dets} roots declared, {rels} released in {cycles} cycles");
    assert!(dets > 500 && rels > 500, "{dets} declared, {rels} released");
}

proptest! {
    /// Every property of the spec on small configurations and threshold-heavy streams.
    #[test]
    fn detector_properties((cfg, stream) in config_and_stream(8, 300)) {
        run_watch(cfg, &stream)?;
    }

    /// A cycle on the inputs of the cycle before gives what `hold` gives, whenever the timer
    /// is not in its last cycle: the same registers and no pulse.
    #[test]
    fn holding_is_stepping_on_the_same_inputs((cfg, stream) in config_and_stream(8, 200)) {
        let mut det = CongestionDetector::new(cfg);
        for x in &stream {
            det.step(x);
            let r = det.regs();
            if r.state == DetectorState::Wait && r.crt.value() == 1 {
                continue;
            }
            let mut stepped = det.clone();
            let out = stepped.step(x);
            let mut held = det.clone();
            held.hold();
            prop_assert!(!out.root_det && !out.root_rel, "a pulse on repeated inputs");
            prop_assert_eq!(stepped.regs(), held.regs());
        }
    }

    /// The same on up to 64 inputs.
    #[test]
    fn detector_properties_wide((cfg, stream) in config_and_stream(64, 60)) {
        run_watch(cfg, &stream)?;
    }
}
