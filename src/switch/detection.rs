//! When a congestion detector (Rocher-Gonzalez et al., section 3.3) next has to be evaluated:
//! between events its inputs change at known rates, so an engine that skips cycles knows the
//! first one in which its root condition or crossed set could turn.

use super::set_bits;
use crate::blocks::CongestionDetector;
use crate::blocks::congestion_detector::CongestionDetectorIn;

/// After a detector was evaluated in cycle `now` on `det_in` (through `now - 1`; `head_vc`: each
/// head's VC downstream, `running(vc)`: the credit streams coming back on it): the first cycle in
/// which, with no event marking an input stale, it must be evaluated again. Until then a later
/// cycle's inputs give the same root condition and crossed set, so the detector holds
/// ([`CongestionDetector::hold`]):
/// - in `Wait`, the timer's last cycle is evaluated (it declares the root);
/// - a VOQ changes by itself only while a packet arrives for the output (one flit a cycle up) or
///   leaves through it (one down): those in `moving.0`; their comparisons with HCDTh and LCDTh
///   cannot turn before they have moved as many flits as they are away from them; while one
///   holds flits of more than one VC (in `moving.1`) its head (the fullest VC's) may change, so
///   it is evaluated at once;
/// - a head's downstream credits fall by at most one a cycle (the flit sent) and rise by at most
///   the streams running back on its VC, so its comparison with FCTh turns no earlier than its
///   distance at those rates; it counts only for VOQs above HCDTh.
///
/// Everything else the inputs hold changes only at events, which mark them stale. The event
/// engine uses it.
pub(crate) fn detector_wake(
    det: &CongestionDetector,
    det_in: &CongestionDetectorIn,
    head_vc: &[u8],
    running: impl Fn(usize) -> u64,
    (moving, mixed): (u64, u64),
    now: u64,
) -> u64 {
    if moving & mixed != 0 {
        return now + 1;
    }
    let cfg = det.config();
    let r = det.regs();
    let mut k = match r.state {
        crate::blocks::congestion_detector::DetectorState::Wait => r.crt.value() as u64,
        _ => u64::MAX,
    };
    let inputs = u64::MAX >> (64 - cfg.inputs);
    for i in set_bits(det_in.head_valid & inputs) {
        // Only a VOQ above HCDTh makes the root condition, and none crosses it before the wake.
        if det_in.voq_occ[i] <= cfg.hcdth {
            continue;
        }
        let fc = det_in.head_fc[i];
        let turn = if fc > cfg.fcth {
            (fc - cfg.fcth) as u64
        } else {
            match running(head_vc[i] as usize) {
                0 => u64::MAX,
                n => ((cfg.fcth - fc) as u64 + 1).div_ceil(n),
            }
        };
        k = k.min(turn);
    }
    for i in set_bits(moving) {
        let occ = det_in.voq_occ[i];
        let high = if occ > cfg.hcdth {
            occ - cfg.hcdth
        } else {
            cfg.hcdth + 1 - occ
        };
        let low = if occ >= cfg.lcdth {
            occ - cfg.lcdth + 1
        } else {
            cfg.lcdth - occ
        };
        k = k.min(high.min(low) as u64);
    }
    now.saturating_add(k.max(1))
}
