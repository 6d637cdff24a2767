//! Congestion points (`congestion_point.sv`): IEEE 802.1Qau (QCN) at a switch's outputs.
//!
//! Each output samples the packets that join its queue, one every `sample_i` flits, and on each
//! sample computes the standard's feedback `Fb = -((Q - Qeq) + w (Q - Qold))` from the flits
//! queued for it at the start of the cycle (`queue_i[o]`) and the queue at its sample before
//! (`qold_q[o]`). A negative `Fb` makes a notification (`cnm_o[i]`) carrying `|Fb|` quantised to
//! 6 bits against `(1 + 2w) Qeq` (`fb_o[i]`); the switch sends it to the sampled packet's source.
//!
//! Up to one arrival per input a cycle (`arr_*_i[i]`: the packet its routing stage places in a
//! VOQ), taken in input order: two arrivals at one output in a cycle see the registers as the
//! first left them. Off while `qeq_i` is 0 (nothing sampled, registers held). The decision is
//! [`QcnPoint::arrive`] and [`QcnPoint::feedback`], which both engines call on their own copies
//! of these registers ([`QcnRegs`], one per output); this block is that decision stepped a cycle
//! at a time for the lockstep with its SystemVerilog twin.
//!
//! Widths: `left_q`, `qold_q`, `queue_i`, `qeq_i`, `sample_i` 32 bits, `w_i` 8, `arr_out_i` 8,
//! `arr_len_i` 16, `fb_o` 6.

use super::Block;
use super::probe::Visit;

/// Largest quantised |Fb| (6 bits).
pub const FB_MAX: u8 = 63;

/// A switch's congestion point settings, the same at every output (`cfg_t.qcn_*`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct QcnPoint {
    /// `Qeq`, the equilibrium queue, in flits; 0 turns the congestion points off.
    pub qeq: u32,
    /// `w`, the weight of the queue's growth (the standard's 2).
    pub w: u8,
    /// Flits joining the queue between two samples.
    pub sample: u32,
}

/// One output's congestion point registers.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct QcnRegs {
    /// Flits still to join the queue before the next sample (0 at reset: the first packet is
    /// sampled).
    pub left: u32,
    /// `Qold`: the queue at the last sample.
    pub qold: u32,
}

impl QcnPoint {
    /// Whether the outputs are congestion points.
    #[inline]
    pub fn on(&self) -> bool {
        self.qeq != 0
    }

    /// A packet of `len` flits joins the queue of an output whose registers are `r`: whether it
    /// is sampled, i.e. carries the last of the `sample` flits counted since the last sample.
    /// A sampled packet reloads the count with `sample` (the rest of its flits are not carried);
    /// any other counts its flits down.
    #[inline]
    pub fn arrive(&self, len: u16, r: &mut QcnRegs) -> bool {
        if r.left <= len as u32 {
            r.left = self.sample;
            true
        } else {
            r.left -= len as u32;
            false
        }
    }

    /// The feedback of a sample taken while `queue` flits wait for the output: the quantised
    /// |Fb| (1 to 63) when Fb is negative, else `None`; `Qold` becomes `queue` either way.
    #[inline]
    pub fn feedback(&self, queue: u32, r: &mut QcnRegs) -> Option<u8> {
        let (q, qeq, qold) = (queue as i64, self.qeq as i64, r.qold as i64);
        r.qold = queue;
        let fb = -((q - qeq) + self.w as i64 * (q - qold));
        if fb >= 0 {
            return None;
        }
        let fb_max = (1 + 2 * self.w as i64) * qeq;
        // Rounded up: any negative feedback asks for some decrease.
        let quantised = (-fb * FB_MAX as i64 + fb_max - 1) / fb_max;
        Some(quantised.clamp(1, FB_MAX as i64) as u8)
    }
}

/// Largest number of ports `P` (inputs and outputs).
pub const MAX_PORTS: usize = 64;

/// A packet joining an output's queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arrival {
    /// `arr_out_i`: its output (one at `P` or beyond joins none).
    pub out: u8,
    /// `arr_len_i`: its length in flits.
    pub len: u16,
}

/// This cycle's inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongestionPointIn {
    /// `qeq_i`, `w_i`, `sample_i`: the switch's settings (`qeq` 0: off).
    pub cp: QcnPoint,
    /// `arr_valid_i` and the arrival, per input.
    pub arrivals: [Option<Arrival>; MAX_PORTS],
    /// `queue_i`: per output, the flits queued for it at the start of the cycle.
    pub queue: [u32; MAX_PORTS],
}

impl Default for CongestionPointIn {
    fn default() -> Self {
        CongestionPointIn {
            cp: QcnPoint::default(),
            arrivals: [None; MAX_PORTS],
            queue: [0; MAX_PORTS],
        }
    }
}

/// This cycle's outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongestionPointOut {
    /// `sampled_o`: bit i, input i's arrival was sampled.
    pub sampled: u64,
    /// `cnm_o`: bit i, its sample made a notification.
    pub cnm: u64,
    /// `fb_o`: per input, the notification's quantised |Fb| (0 without one).
    pub fb: [u8; MAX_PORTS],
}

impl Default for CongestionPointOut {
    fn default() -> Self {
        CongestionPointOut {
            sampled: 0,
            cnm: 0,
            fb: [0; MAX_PORTS],
        }
    }
}

/// The congestion points of a `P`-port switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CongestionPoint {
    ports: u8,
    /// Per output: `left_q`, `qold_q`.
    q: [QcnRegs; MAX_PORTS],
    d: [QcnRegs; MAX_PORTS],
}

impl CongestionPoint {
    /// The congestion points of a switch of `ports` ports (1 to 64), in their reset state.
    pub fn new(ports: usize) -> Self {
        assert!((1..=MAX_PORTS).contains(&ports), "a_param_ports");
        CongestionPoint {
            ports: ports as u8,
            q: [QcnRegs::default(); MAX_PORTS],
            d: [QcnRegs::default(); MAX_PORTS],
        }
    }

    /// Output `o`'s registers.
    pub fn regs(&self, o: usize) -> QcnRegs {
        self.q[o]
    }

    /// Sets output `o`'s registers (a test's planted bug starts here).
    pub fn set_regs(&mut self, o: usize, r: QcnRegs) {
        self.q[o] = r;
    }
}

impl Block for CongestionPoint {
    type In = CongestionPointIn;
    type Out = CongestionPointOut;
    const NAME: &'static str = "congestion_point";

    fn reset(&mut self) {
        self.q = [QcnRegs::default(); MAX_PORTS];
        self.d = self.q;
    }

    fn evaluate(&mut self, inp: &CongestionPointIn) -> CongestionPointOut {
        let mut out = CongestionPointOut::default();
        self.d = self.q;
        if !inp.cp.on() {
            return out;
        }
        let p = self.ports as usize;
        for (i, a) in inp.arrivals[..p].iter().enumerate() {
            let Some(a) = a else { continue };
            let o = a.out as usize;
            if o >= p || !inp.cp.arrive(a.len, &mut self.d[o]) {
                continue;
            }
            out.sampled |= 1 << i;
            if let Some(fb) = inp.cp.feedback(inp.queue[o], &mut self.d[o]) {
                out.cnm |= 1 << i;
                out.fb[i] = fb;
            }
        }
        out
    }

    fn commit(&mut self) {
        self.q = self.d;
    }

    fn probe_inputs(&self, inp: &CongestionPointIn, v: &mut dyn Visit) {
        let p = self.ports as usize;
        v.bits("qeq_i", 32, inp.cp.qeq as u128);
        v.bits("w_i", 8, inp.cp.w as u128);
        v.bits("sample_i", 32, inp.cp.sample as u128);
        let valid = (0..p).fold(0u128, |m, i| m | (inp.arrivals[i].is_some() as u128) << i);
        v.bits("arr_valid_i", p as u32, valid);
        for i in 0..p {
            v.elem(
                "arr_out_i",
                i,
                8,
                inp.arrivals[i].unwrap_or_default().out as u128,
            );
        }
        for i in 0..p {
            v.elem(
                "arr_len_i",
                i,
                16,
                inp.arrivals[i].unwrap_or_default().len as u128,
            );
        }
        for o in 0..p {
            v.elem("queue_i", o, 32, inp.queue[o] as u128);
        }
    }

    fn probe_outputs(&self, out: &CongestionPointOut, v: &mut dyn Visit) {
        let p = self.ports as usize;
        v.bits("sampled_o", p as u32, out.sampled as u128);
        v.bits("cnm_o", p as u32, out.cnm as u128);
        for i in 0..p {
            v.elem("fb_o", i, 6, out.fb[i] as u128);
        }
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        let p = self.ports as usize;
        for o in 0..p {
            v.elem("left_q", o, 32, self.q[o].left as u128);
        }
        for o in 0..p {
            v.elem("qold_q", o, 32, self.q[o].qold as u128);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_arrivals_at_one_output_in_a_cycle_are_taken_in_input_order() {
        let mut b = CongestionPoint::new(4);
        let mut inp = CongestionPointIn {
            cp: QcnPoint {
                qeq: 10,
                w: 2,
                sample: 8,
            },
            ..Default::default()
        };
        inp.arrivals[1] = Some(Arrival { out: 2, len: 4 });
        inp.arrivals[3] = Some(Arrival { out: 2, len: 4 });
        inp.queue[2] = 30;
        // Input 1 finds left 0 (reset): sampled, Fb = -((30 - 10) + 2 * 30) = -80, beyond
        // Fb_max = 50: 63; left 8. Input 3 counts it down to 4.
        let out = b.step(&inp);
        assert_eq!((out.sampled, out.cnm, out.fb[1]), (0b10, 0b10, 63));
        assert_eq!(b.regs(2), QcnRegs { left: 4, qold: 30 });
        // Off: nothing moves.
        inp.cp.qeq = 0;
        let out = b.step(&inp);
        assert_eq!(out.sampled, 0);
        assert_eq!(b.regs(2), QcnRegs { left: 4, qold: 30 });
        // An output beyond the ports joins nothing.
        inp.cp.qeq = 10;
        inp.arrivals = [None; MAX_PORTS];
        inp.arrivals[0] = Some(Arrival { out: 4, len: 100 });
        assert_eq!(b.step(&inp).sampled, 0);
    }

    #[test]
    fn one_packet_in_every_sample_flits_is_sampled() {
        let cp = QcnPoint {
            qeq: 100,
            w: 2,
            sample: 20,
        };
        let mut r = QcnRegs::default();
        let got: Vec<bool> = [8u16, 8, 8, 8, 8, 30, 1]
            .iter()
            .map(|&len| cp.arrive(len, &mut r))
            .collect();
        // Sampled at reset (left 0); then the packet carrying the 20th flit after it: 8 + 8
        // leave 4, so the fourth; then 8 leaves 12, and the 30-flit packet carries the 20th;
        // the last one counts 1 of the next 20.
        assert_eq!(got, [true, false, false, true, false, true, false]);
        assert_eq!(r.left, 19);
    }

    #[test]
    fn the_feedback_is_the_standards_sign_and_quantisation() {
        let cp = QcnPoint {
            qeq: 100,
            w: 2,
            sample: 1,
        };
        let mut r = QcnRegs::default();
        // Q 50 from 0: Fb = -((50 - 100) + 2 * 50) = -50; Fb_max = 500: 50 * 63 / 500 = 6.3 -> 7.
        assert_eq!(cp.feedback(50, &mut r), Some(7));
        assert_eq!(r.qold, 50);
        // Q 40 from 50: Fb = -((-60) + 2 * (-10)) = 80, positive: no message.
        assert_eq!(cp.feedback(40, &mut r), None);
        // Q 300 from 40: Fb = -(200 + 520) = -720, beyond Fb_max: 63.
        assert_eq!(cp.feedback(300, &mut r), Some(63));
        // Q 100 steady at Qeq: Fb = -(0 + 2 * -200) = 400 > 0; then steady: Fb = 0, none.
        assert_eq!(cp.feedback(100, &mut r), None);
        assert_eq!(cp.feedback(100, &mut r), None);
        // Q 101 from 100: Fb = -(1 + 2) = -3 -> 3 * 63 / 500 rounded up = 1.
        assert_eq!(cp.feedback(101, &mut r), Some(1));
    }
}
