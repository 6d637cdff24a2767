//! Congestion detector of one switch output port (`congestion_detector.sv`): decides whether the
//! output is the root of a congestion tree (Rocher-Gonzalez et al., section 3.3).
//!
//! The detector watches, at every input port, the occupancy of the VOQ that feeds this output,
//! the header of the packet at the head of that VOQ, and the free credits of the downstream VC
//! that packet would use. A VOQ above HCDTh makes the output a potential root; if the downstream
//! VC of its head packet still has more than FCTh free credits, the output is a root rather than
//! a branch of a tree (a branch has its downstream credits exhausted by back-pressure). The
//! condition must hold for CRT consecutive cycles before the root is declared; the header of the
//! head packet of the fullest qualifying VOQ is then emitted for one cycle (the ARN is built from
//! it). The root is released when every VOQ that crossed HCDTh is back under LCDTh.
//!
//! FSM: [`DetectorState`] `Idle` → `Wait` (timer `crt_q` running) → `Root` → `Idle`; every
//! transition goes through one function. Widths: occupancies, thresholds, credits and
//! destinations 16 bits, VC 8 bits, timer 24 bits (`u24`), `root_in_o`/`root_in_q`
//! `max(1, clog2 P)` bits, `crossed_o` `clog2(P+1)` bits, `P` from 1 to 64.
//!
//! ```
//! use arnsim::blocks::Block;
//! use arnsim::blocks::congestion_detector::{
//!     CongestionDetector, CongestionDetectorIn, DetectorConfig,
//! };
//!
//! let cfg = DetectorConfig::new(2, 80, 63, 15, 3);
//! let mut det = CongestionDetector::new(cfg);
//! let mut hot = CongestionDetectorIn::default();
//! hot.voq_occ[1] = 90; // above HCDTh
//! hot.head_valid = 0b10;
//! hot.head_fc[1] = 20; // downstream VC has room: a root, not a branch
//! hot.head_dest[1] = 0x1234;
//! let det_pulses: Vec<bool> = (0..4).map(|_| det.step(&hot).root_det).collect();
//! assert_eq!(det_pulses, [false, false, true, false]); // declared in the CRT-th cycle
//! let idle = CongestionDetectorIn::default();
//! assert!(det.step(&idle).root_rel); // VOQ 1 back under LCDTh: released
//! ```

use super::Block;
use super::probe::{Visit, index_width};
use arbitrary_int::prelude::*;

/// Largest supported number of input ports `P`.
pub const MAX_INPUTS: usize = 64;

/// HCDTh as a percentage of the input buffer (Rocher-Gonzalez et al., section 4.1).
pub const HCDTH_PERCENT: u32 = 81;
/// LCDTh as a percentage of the input buffer (Rocher-Gonzalez et al., section 4.1).
pub const LCDTH_PERCENT: u32 = 63;
/// FCTh as a percentage of the downstream VC's credits (Rocher-Gonzalez et al., section 4.1).
pub const FCTH_PERCENT: u32 = 78;
/// The paper's CRT, 5 ms, in cycles of 5.12 ns (976,562.5 rounded to nearest).
pub const PAPER_CRT_CYCLES: u32 = 976_563;

/// Thresholds and timer of one detector (the HDL parameters `P`, `Hcdth`, `Lcdth`, `Fcth`, `Crt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DetectorConfig {
    /// `P`: number of input ports watched, 1 to [`MAX_INPUTS`].
    pub inputs: usize,
    /// `Hcdth`: a VOQ with more than this many flits has crossed the high threshold.
    pub hcdth: u16,
    /// `Lcdth`: a crossed VOQ leaves the crossed set when it holds fewer flits than this.
    pub lcdth: u16,
    /// `Fcth`: more free credits than this downstream means root, not branch.
    pub fcth: u16,
    /// `Crt`: cycles the root condition must hold before a root is declared, 1 to 2^24-1.
    pub crt: u24,
}

impl DetectorConfig {
    /// A configuration from explicit values; panics outside the documented ranges.
    pub fn new(inputs: usize, hcdth: u16, lcdth: u16, fcth: u16, crt: u32) -> Self {
        assert!(
            (1..=MAX_INPUTS).contains(&inputs),
            "congestion_detector: P = {inputs} is outside 1..=64"
        );
        assert!(
            lcdth <= hcdth,
            "congestion_detector: Lcdth {lcdth} above Hcdth {hcdth}"
        );
        assert!(
            (1..=u24::MAX.value()).contains(&crt),
            "congestion_detector: Crt = {crt} is outside 1..=2^24-1"
        );
        DetectorConfig {
            inputs,
            hcdth,
            lcdth,
            fcth,
            crt: u24::new(crt),
        }
    }

    /// The paper's configuration: HCDTh 81 % and LCDTh 63 % of an input buffer of
    /// `buffer_flits`, FCTh 78 % of a downstream VC of `downstream_vc_flits` credits, CRT
    /// `crt_cycles`. Each threshold is the integer floor of `pct * size / 100` (5376 flits give
    /// HCDTh 4354 and LCDTh 3386). Panics when a threshold does not fit in 16 bits.
    pub fn from_percent(
        inputs: usize,
        buffer_flits: u32,
        downstream_vc_flits: u32,
        crt_cycles: u32,
    ) -> Self {
        let th = |pct: u32, size: u32| -> u16 {
            let v = percent_floor(pct, size);
            u16::try_from(v).unwrap_or_else(|_| {
                panic!("congestion_detector: {pct} % of {size} = {v} does not fit in 16 bits")
            })
        };
        Self::new(
            inputs,
            th(HCDTH_PERCENT, buffer_flits),
            th(LCDTH_PERCENT, buffer_flits),
            th(FCTH_PERCENT, downstream_vc_flits),
            crt_cycles,
        )
    }
}

/// `floor(pct * size / 100)`, computed exactly.
pub const fn percent_floor(pct: u32, size: u32) -> u32 {
    (pct as u64 * size as u64 / 100) as u32
}

/// State of the detector FSM (`state_q`, 2 bits; the HDL encoding is the discriminant).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum DetectorState {
    /// `StIdle` (2'd0): no root condition seen.
    #[default]
    Idle = 0,
    /// `StWait` (2'd1): the root condition holds; the CRT timer runs.
    Wait = 1,
    /// `StRoot` (2'd2): this output is a congestion root.
    Root = 2,
}

/// Inputs of one cycle: element i of each array is input port i (elements at or above `P` are
/// ignored).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CongestionDetectorIn {
    /// `voq_occ_i[i]`: flits in input i's VOQ for this output.
    #[serde(with = "serde_big_array::BigArray")]
    pub voq_occ: [u16; MAX_INPUTS],
    /// `head_valid_i[i]` at bit i: that VOQ has a head packet.
    pub head_valid: u64,
    /// `head_dest_i[i]`: destination (DLID) of the head packet.
    #[serde(with = "serde_big_array::BigArray")]
    pub head_dest: [u16; MAX_INPUTS],
    /// `head_vc_i[i]`: original VC of the head packet.
    #[serde(with = "serde_big_array::BigArray")]
    pub head_vc: [u8; MAX_INPUTS],
    /// `head_adapted_i[i]` at bit i: the head packet is adapted.
    pub head_adapted: u64,
    /// `head_fc_i[i]`: free credits downstream in the VC the head packet would use.
    #[serde(with = "serde_big_array::BigArray")]
    pub head_fc: [u16; MAX_INPUTS],
}

impl CongestionDetectorIn {
    /// Drives input `i`'s head ports with its VOQ's head packet: destination `dest`, original VC
    /// `vc`, adapted bit and the free credits `fc` of the VC it would use downstream.
    #[inline]
    pub fn set_head(&mut self, i: usize, dest: u16, vc: u8, adapted: bool, fc: u16) {
        let bit = 1u64 << i;
        self.head_valid |= bit;
        self.head_dest[i] = dest;
        self.head_vc[i] = vc;
        if adapted {
            self.head_adapted |= bit;
        } else {
            self.head_adapted &= !bit;
        }
        self.head_fc[i] = fc;
    }

    /// Drives input `i`'s head ports low: its VOQ has no head packet.
    #[inline]
    pub fn clear_head(&mut self, i: usize) {
        let bit = 1u64 << i;
        self.head_valid &= !bit;
        self.head_adapted &= !bit;
        self.head_dest[i] = 0;
        self.head_vc[i] = 0;
        self.head_fc[i] = 0;
    }
}

impl Default for CongestionDetectorIn {
    fn default() -> Self {
        CongestionDetectorIn {
            voq_occ: [0; MAX_INPUTS],
            head_valid: 0,
            head_dest: [0; MAX_INPUTS],
            head_vc: [0; MAX_INPUTS],
            head_adapted: 0,
            head_fc: [0; MAX_INPUTS],
        }
    }
}

/// Outputs of one cycle (combinational).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CongestionDetectorOut {
    /// `root_o`: this output is a congestion root (`state_q == StRoot`).
    pub root: bool,
    /// `root_det_o`: a root is declared in this cycle (one-cycle pulse).
    pub root_det: bool,
    /// `root_rel_o`: the root is released in this cycle (one-cycle pulse).
    pub root_rel: bool,
    /// `root_in_o`: the offending input: this cycle's choice during `root_det`, else `root_in_q`.
    pub root_in: u8,
    /// `root_dest_o`: destination of the offending head packet during `root_det`, else 0.
    pub root_dest: u16,
    /// `root_vc_o`: original VC of the offending head packet during `root_det`, else 0.
    pub root_vc: u8,
    /// `root_adapted_o`: adapted bit of the offending head packet during `root_det`, else 0.
    pub root_adapted: bool,
    /// `crossed_o`: number of VOQs in the crossed set, `popcount(over_q)`.
    pub crossed: u8,
}

/// Registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CongestionDetectorRegs {
    /// `state_q`. Reset: `Idle`.
    pub state: DetectorState,
    /// `crt_q`: cycles left before the root is declared, non-zero only in `Wait`. Reset: 0.
    pub crt: u24,
    /// `over_q`: bit i set while VOQ i is in the crossed set. Reset: 0.
    pub over: u64,
    /// `root_in_q`: input of the last declared root. Reset: 0.
    pub root_in: u8,
}

/// The root condition of this cycle: whether some VOQ qualifies and the offending one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RootChoice {
    /// `C`: some VOQ is above HCDTh with a head packet whose downstream VC has more than FCTh
    /// free credits.
    pub any: bool,
    /// The qualifying VOQ with the most flits (lowest index on ties); 0 when `any` is low.
    pub input: u8,
}

/// The detector of one output port.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CongestionDetector {
    cfg: DetectorConfig,
    mask: u64,
    q: CongestionDetectorRegs,
    d: CongestionDetectorRegs,
}

impl CongestionDetector {
    /// A detector with configuration `cfg`, in its reset state. Panics when `cfg` is outside
    /// the documented ranges.
    pub fn new(cfg: DetectorConfig) -> Self {
        let DetectorConfig {
            inputs,
            hcdth,
            lcdth,
            fcth,
            crt,
        } = cfg;
        // Re-validate fields that may have been written directly.
        let _ = DetectorConfig::new(inputs, hcdth, lcdth, fcth, crt.value());
        let mask = if inputs == 64 {
            u64::MAX
        } else {
            (1u64 << inputs) - 1
        };
        CongestionDetector {
            cfg,
            mask,
            q: CongestionDetectorRegs::default(),
            d: CongestionDetectorRegs::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> DetectorConfig {
        self.cfg
    }

    /// Current registers.
    pub fn regs(&self) -> CongestionDetectorRegs {
        self.q
    }

    /// Width of `root_in_o` and `root_in_q`: `max(1, clog2 P)`.
    pub fn index_bits(&self) -> u32 {
        index_width(self.cfg.inputs)
    }

    /// Width of `crossed_o`: `clog2(P + 1)`.
    pub fn count_bits(&self) -> u32 {
        index_width(self.cfg.inputs + 1)
    }

    /// The root condition `C` and the offending input for `inp`, without touching any state.
    #[inline]
    pub fn choose(&self, inp: &CongestionDetectorIn) -> RootChoice {
        let c = &self.cfg;
        let mut choice = RootChoice::default();
        let mut best = 0u16;
        for i in 0..c.inputs {
            let occ = inp.voq_occ[i];
            let cond = occ > c.hcdth && (inp.head_valid >> i) & 1 == 1 && inp.head_fc[i] > c.fcth;
            if cond && (!choice.any || occ > best) {
                choice = RootChoice {
                    any: true,
                    input: i as u8,
                };
                best = occ;
            }
        }
        choice
    }

    /// Next crossed set: a VOQ enters above HCDTh and stays while at or above LCDTh.
    #[inline]
    pub fn next_over(&self, inp: &CongestionDetectorIn) -> u64 {
        let c = &self.cfg;
        let mut over = 0u64;
        for i in 0..c.inputs {
            let occ = inp.voq_occ[i];
            let stay = if (self.q.over >> i) & 1 == 1 {
                occ >= c.lcdth
            } else {
                occ > c.hcdth
            };
            over |= (stay as u64) << i;
        }
        over
    }

    /// One cycle whose root condition and crossed set are those of the cycle before, evaluated
    /// (for a switch that knows its inputs cannot have moved them): every register keeps its
    /// value but the CRT timer, which counts down in `Wait`, and no pulse is raised. This is
    /// exactly [`Block::step`] on such inputs: after one evaluation the crossed set is a fixed
    /// point of the same inputs (a VOQ above HCDTh is at or above LCDTh), `Idle` is only left on
    /// the root condition, `Wait` only on its end or the timer's last cycle (which must be
    /// evaluated: the caller keeps `crt_q` above 1), `Root` only when the crossed set empties.
    #[inline]
    pub fn hold(&mut self) {
        self.hold_for(1);
    }

    /// [`CongestionDetector::hold`] for `cycles` cycles in a row (the timer's last cycle, which
    /// declares the root, not among them).
    #[inline]
    pub fn hold_for(&mut self, cycles: u32) {
        if self.q.state == DetectorState::Wait {
            debug_assert!(
                self.q.crt.value() > cycles,
                "a held cycle would declare the root"
            );
            self.q.crt = u24::new(self.q.crt.value().saturating_sub(cycles));
        }
    }

    /// The one place where the FSM changes state. The timer runs only in `Wait`, so it is
    /// cleared on every other destination.
    #[inline]
    fn set_state(&mut self, next: DetectorState) {
        debug_assert!(
            !(self.q.state == DetectorState::Root && next == DetectorState::Wait),
            "a_no_root_to_wait"
        );
        self.d.state = next;
        if next != DetectorState::Wait {
            self.d.crt = u24::new(0);
        }
    }
}

impl Block for CongestionDetector {
    type In = CongestionDetectorIn;
    type Out = CongestionDetectorOut;
    const NAME: &'static str = "congestion_detector";

    fn reset(&mut self) {
        self.q = CongestionDetectorRegs::default();
        self.d = self.q;
    }

    #[inline]
    fn evaluate(&mut self, inp: &CongestionDetectorIn) -> CongestionDetectorOut {
        let choice = self.choose(inp);
        let one = u24::new(1);
        self.d = self.q;
        self.d.over = self.next_over(inp);
        let mut out = CongestionDetectorOut {
            root: self.q.state == DetectorState::Root,
            root_in: self.q.root_in,
            crossed: self.q.over.count_ones() as u8,
            ..CongestionDetectorOut::default()
        };
        let declare = match self.q.state {
            DetectorState::Idle if choice.any => {
                if self.cfg.crt == one {
                    true
                } else {
                    self.set_state(DetectorState::Wait);
                    self.d.crt = self.cfg.crt - one;
                    false
                }
            }
            DetectorState::Idle => false,
            DetectorState::Wait if !choice.any => {
                // The root situation must persist: a gap cancels the timer.
                self.set_state(DetectorState::Idle);
                false
            }
            DetectorState::Wait if self.q.crt == one => true,
            DetectorState::Wait => {
                self.d.crt = self.q.crt - one;
                false
            }
            DetectorState::Root => {
                if self.d.over == 0 {
                    self.set_state(DetectorState::Idle);
                    out.root_rel = true;
                }
                false
            }
        };
        if declare {
            let i = choice.input as usize;
            self.set_state(DetectorState::Root);
            self.d.root_in = choice.input;
            out.root_det = true;
            out.root_in = choice.input;
            out.root_dest = inp.head_dest[i];
            out.root_vc = inp.head_vc[i];
            out.root_adapted = (inp.head_adapted >> i) & 1 == 1;
        }
        debug_assert!(!(out.root_det && out.root_rel), "a_det_rel_exclusive");
        debug_assert!(
            !out.root_det || self.q.state != DetectorState::Root,
            "a_det_not_in_root"
        );
        debug_assert!(!out.root_rel || self.d.over == 0, "a_rel_only_when_clear");
        out
    }

    #[inline]
    fn commit(&mut self) {
        self.q = self.d;
        debug_assert!(
            (self.q.state == DetectorState::Wait) == (self.q.crt.value() != 0),
            "a_crt_runs_in_wait"
        );
        debug_assert!(self.q.crt < self.cfg.crt, "a_crt_below_crt");
        debug_assert!(
            self.q.state != DetectorState::Root || self.q.over != 0,
            "a_root_has_crossed"
        );
        debug_assert_eq!(self.q.over & !self.mask, 0, "a_over_in_range");
        debug_assert!(
            (self.q.root_in as usize) < self.cfg.inputs,
            "a_root_in_range"
        );
    }

    fn probe_inputs(&self, inp: &CongestionDetectorIn, v: &mut dyn Visit) {
        let p = self.cfg.inputs;
        for i in 0..p {
            v.elem("voq_occ_i", i, 16, inp.voq_occ[i] as u128);
        }
        for i in 0..p {
            v.elem("head_valid_i", i, 1, ((inp.head_valid >> i) & 1) as u128);
        }
        for i in 0..p {
            v.elem("head_dest_i", i, 16, inp.head_dest[i] as u128);
        }
        for i in 0..p {
            v.elem("head_vc_i", i, 8, inp.head_vc[i] as u128);
        }
        for i in 0..p {
            v.elem(
                "head_adapted_i",
                i,
                1,
                ((inp.head_adapted >> i) & 1) as u128,
            );
        }
        for i in 0..p {
            v.elem("head_fc_i", i, 16, inp.head_fc[i] as u128);
        }
    }

    fn probe_outputs(&self, out: &CongestionDetectorOut, v: &mut dyn Visit) {
        v.bit("root_o", out.root);
        v.bit("root_det_o", out.root_det);
        v.bit("root_rel_o", out.root_rel);
        v.bits("root_in_o", self.index_bits(), out.root_in as u128);
        v.bits("root_dest_o", 16, out.root_dest as u128);
        v.bits("root_vc_o", 8, out.root_vc as u128);
        v.bit("root_adapted_o", out.root_adapted);
        v.bits("crossed_o", self.count_bits(), out.crossed as u128);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        v.bits("state_q", 2, self.q.state as u128);
        v.bits("crt_q", 24, self.q.crt.value() as u128);
        v.bits("over_q", self.cfg.inputs as u32, self.q.over as u128);
        v.bits("root_in_q", self.index_bits(), self.q.root_in as u128);
    }
}

#[cfg(test)]
mod tests;
