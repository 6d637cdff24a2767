//! The congestion point of IEEE 802.1Qau (QCN) at a switch output: the output samples the
//! packets that join its queue (routed into a VOQ for it), one every `sample` flits, and on each
//! sample computes the feedback `Fb = -((Q - Qeq) + w (Q - Qold))` from the flits queued for it
//! (`Q`, summed over its inputs' VOQs at the start of the cycle, the queue FECN marking reads)
//! and the queue at the sample before (`Qold`). A negative `Fb` (a queue above its equilibrium or
//! growing) sends a congestion notification ([`crate::wire::Cnm`]) to the sampled packet's
//! source with `|Fb|` quantised to 6 bits against `Fb_max = (1 + 2w) Qeq`. `docs/qcn.md` says
//! where the model departs from the standard.
//!
//! Both engines call [`QcnPoint::arrive`] and [`QcnPoint::feedback`].

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

#[cfg(test)]
mod tests {
    use super::*;

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
