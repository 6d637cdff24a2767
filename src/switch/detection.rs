//! The congestion detectors' side of the switch (Rocher-Gonzalez et al., section 3.3): each
//! output's detector is fed every input's VOQ occupancy for it and the credits of the VC its head
//! packet would use downstream; a declared root files a processARN command (pseudo-code 1).
//! Only the inputs whose VOQs changed are recomputed, and outputs whose VOQs are all below HCDTh
//! with an idle detector are not evaluated.

use super::*;

impl<const V: usize> Switch<V> {
    /// Records whether input `i`'s VOQ for output `o` is above HCDTh after a change.
    #[inline]
    pub(super) fn note_voq(&mut self, i: usize, o: usize, through: u64) {
        let buf = &self.inputs[i].buf;
        let due = buf.due_for(o, through);
        if due > 0 {
            self.skip.filling[o] |= 1 << i;
        }
        let bound = buf.voq_occupancy(o, through) + due;
        self.note_voq_bound(i, o, bound);
    }

    /// [`Switch::note_voq`] with the VOQ's bound already computed.
    #[inline]
    pub(super) fn note_voq_bound(&mut self, i: usize, o: usize, occ: u16) {
        let bit = 1u64 << i;
        self.skip.det_stale[o] |= bit;
        if occ > self.params.hcdth {
            self.skip.above_hcdth[o] |= bit;
            self.skip.hot_outputs |= 1 << o;
        } else {
            self.skip.above_hcdth[o] &= !bit;
            if self.skip.above_hcdth[o] == 0 {
                self.skip.hot_outputs &= !(1 << o);
            }
        }
    }

    /// The detector inputs of output `o`: every input's VOQ occupancy for `o`, and the head
    /// packet of each VOQ (the head of the VC holding most of its flits) with the free credits of
    /// the VC it would use downstream.
    /// Only the stale entries are recomputed; debug builds compare with a full fill.
    pub(super) fn fill_detector_input(&mut self, o: usize, now: u64) {
        let all = self.all_ports;
        let prev = now.saturating_sub(1);
        let mut stale = std::mem::take(&mut self.skip.det_stale[o]) & all;
        // Flits arriving and leaving, and credits coming back, move the counts between a
        // packet's head and tail: the input the output sends from, the inputs receiving a packet
        // for it (read once more after its tail is in), and every head's credits.
        let out = &self.outputs[o];
        let mut credits_stale =
            self.skip.det_credits_stale >> o & 1 == 1 || out.credits.arriving(prev);
        self.skip.det_credits_stale &= !(1 << o);
        if let Some(tx) = out.tx {
            stale |= 1 << tx.input;
            credits_stale = true;
        }
        let mut scan = self.skip.filling[o];
        stale |= scan;
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            if self.inputs[i].buf.due_for(o, prev) == 0 {
                self.skip.filling[o] &= !(1 << i);
            }
        }
        self.fill_detector_entries(o, stale, prev);
        if credits_stale {
            let det_in = &mut self.skip.det_in[o];
            let mut scan = det_in.head_valid & !stale;
            while scan != 0 {
                let i = scan.trailing_zeros() as usize;
                scan &= scan - 1;
                let vc = self.skip.det_head_vc[o][i] as usize;
                det_in.head_fc[i] = self.outputs[o].credits.credits(vc, prev);
            }
        }
        #[cfg(debug_assertions)]
        {
            let incremental = self.skip.det_in[o];
            self.fill_detector_entries(o, all, prev);
            debug_assert!(
                incremental == self.skip.det_in[o],
                "detector inputs of output {o} were stale"
            );
        }
    }

    pub(super) fn fill_detector_entries(&mut self, o: usize, inputs: u64, through: u64) {
        let det_in = &mut self.skip.det_in[o];
        let mut scan = inputs;
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            let buf = &self.inputs[i].buf;
            det_in.voq_occ[i] = buf.voq_occupancy(o, through);
            // The VOQ's head: the head packet of the VC holding most of its flits.
            let mut best: Option<(u16, usize)> = None;
            for v in 0..self.vcs {
                let occ = buf.vc_voq_occupancy(v, o, through);
                if occ > 0 && best.is_none_or(|(b, _)| occ > b) {
                    best = Some((occ, v));
                }
            }
            match best.and_then(|(_, v)| buf.head(v, o)) {
                Some((_, slot)) => {
                    det_in.set_head(
                        i,
                        self.params.base_lid(slot.pkt.dlid),
                        slot.pkt.orig_vc,
                        slot.pkt.adapted(),
                        self.outputs[o]
                            .credits
                            .credits(slot.next_vc as usize, through),
                    );
                    self.skip.det_head_vc[o][i] = slot.next_vc;
                }
                None => det_in.clear_head(i),
            }
        }
    }

    /// Phase 1: congestion detectors on the registered occupancies and credits.
    pub(super) fn detect<O: Observer>(&mut self, now: u64, obs: &mut O) {
        // Outputs whose detector may change: not quiet, or with a VOQ above HCDTh. Debug builds
        // visit every output and check the skips.
        let all = self.all_ports;
        let visit = if cfg!(debug_assertions) {
            all
        } else {
            (!self.skip.det_quiet | self.skip.hot_outputs) & all
        };
        let mut scan = visit;
        while scan != 0 {
            let o = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            debug_assert_eq!(
                self.skip.hot_outputs >> o & 1 == 1,
                self.skip.above_hcdth[o] != 0,
                "hot-output mask of output {o}"
            );
            let prev = now.saturating_sub(1);
            let bound_above = |sw: &Self| {
                (0..sw.ports)
                    .filter(|&i| sw.voq_bound(i, o, prev) > sw.params.hcdth)
                    .fold(0u64, |m, i| m | 1 << i)
            };
            // The mask holds every VOQ that may be above HCDTh, and may still hold some that
            // leaving flits have since taken below it (flits are not counted cycle by cycle);
            // a quiet detector's skip test needs the current set, so it is refreshed first.
            debug_assert_eq!(
                self.skip.above_hcdth[o] & bound_above(self),
                bound_above(self),
                "above-HCDTh mask of output {o} misses a VOQ"
            );
            if self.skip.det_quiet >> o & 1 == 1 && self.skip.above_hcdth[o] != 0 {
                self.refresh_above_hcdth(o, prev);
                debug_assert_eq!(self.skip.above_hcdth[o], bound_above(self));
            }
            // A detector that is idle with an empty crossed set, while no VOQ of its output is
            // above HCDTh, keeps every register and raises no output: its step is skipped
            // (its next state provably equals its current one). `det_quiet` holds the first
            // three conditions per output, so the test does not touch the detector.
            debug_assert_eq!(
                self.skip.det_quiet >> o & 1 == 1,
                self.detector_quiet(o),
                "quiet mask of detector {o}"
            );
            if self.skip.det_quiet >> o & 1 == 1 && self.skip.above_hcdth[o] == 0 {
                debug_assert!(
                    (0..self.ports).all(|i| {
                        self.inputs[i].buf.voq_occupancy(o, prev) <= self.params.hcdth
                    })
                );
                #[cfg(debug_assertions)]
                {
                    let r = self.outputs[o].detector.regs();
                    self.fill_detector_input(o, now);
                    let mut check = self.outputs[o].detector.clone();
                    let out = check.step(&self.skip.det_in[o]);
                    debug_assert!(
                        !out.root_det && !out.root_rel && check.regs() == r,
                        "skipped detector of output {o} would have changed"
                    );
                }
                continue;
            }
            if now < self.skip.det_wake[o] && !self.detector_inputs_stale(o) {
                // Nothing its inputs' moving flits and credits can do before `det_wake`
                // changes its next state: it holds.
                #[cfg(debug_assertions)]
                self.check_hold(o, now);
                self.outputs[o].detector.hold();
                self.refresh_root(o, now);
                continue;
            }
            self.fill_detector_input(o, now);
            let out = self.outputs[o].detector.step(&self.skip.det_in[o]);
            if out.root_det {
                // Pseudo-code 1: congestionRootDetected.
                let stage = self.wiring.stage;
                let root_info = if self.is_up(o) {
                    stage
                } else {
                    stage.saturating_sub(1)
                };
                self.arn_seq = self.arn_seq.wrapping_add(1) & 0xF_FFFF;
                let info = ArnInfo {
                    dest: out.root_dest,
                    port: o as u8,
                    vc: out.root_vc,
                    arn_id: (self.wiring.id << 20) | self.arn_seq,
                    root_info,
                };
                self.stats.roots_detected += 1;
                obs.event(
                    now,
                    self.wiring.id,
                    SwitchEvent::RootDetected {
                        port: o as u8,
                        info,
                    },
                );
                self.outputs[o].root = Some(RootReg {
                    info,
                    next_refresh: now + self.params.arn_gap as u64,
                });
                self.file_arn(info, out.root_adapted);
            } else if out.root_rel {
                self.outputs[o].root = None;
                obs.event(
                    now,
                    self.wiring.id,
                    SwitchEvent::RootReleased { port: o as u8 },
                );
            } else {
                self.refresh_root(o, now);
            }
            if self.detector_quiet(o) {
                self.skip.det_quiet |= 1 << o;
            } else {
                self.skip.det_quiet &= !(1 << o);
            }
            self.skip.det_wake[o] = self.detector_wake(o, now);
        }
    }

    /// Whether an event marked one of output `o`'s detector inputs stale since its last
    /// evaluation (a VOQ moved, or its credits changed): then it cannot hold.
    #[inline]
    fn detector_inputs_stale(&self, o: usize) -> bool {
        self.skip.det_stale[o] & self.all_ports != 0 || self.skip.det_credits_stale >> o & 1 == 1
    }

    /// The first cycle in which [`Switch::detect`] must visit a detector again if no event marks
    /// an input stale: before it every detector that is not quiet, or whose output has a VOQ
    /// that may be above HCDTh, would hold (its `det_wake` is ahead, its inputs are not stale,
    /// a root's refresh is not due), so the cycle can pass as a quiet one with
    /// [`Switch::hold_detectors`]. 0 when an input is stale (the next cycle evaluates),
    /// `u64::MAX` when every detector is quiet and no VOQ is above HCDTh.
    #[inline]
    pub(super) fn detectors_hold_until(&self) -> u64 {
        let all = self.all_ports;
        let mut scan = (!self.skip.det_quiet | self.skip.hot_outputs) & all;
        let mut until = u64::MAX;
        while scan != 0 {
            let o = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            if self.detector_inputs_stale(o) {
                return 0;
            }
            until = until.min(self.skip.det_wake[o]);
            if let Some(r) = self.outputs[o].root {
                until = until.min(r.next_refresh);
            }
        }
        until
    }

    /// Passes `cycles` cycles before [`Switch::detectors_hold_until`] on the detectors: each
    /// that is not quiet holds (only a timer in `Wait` counts down).
    #[inline]
    pub(super) fn hold_detectors(&mut self, cycles: u32) {
        let mut scan = !self.skip.det_quiet & self.all_ports;
        while scan != 0 {
            let o = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            self.outputs[o].detector.hold_for(cycles);
        }
    }

    /// While output `o` is a root, it keeps its own ARN-table entry alive.
    #[inline]
    fn refresh_root(&mut self, o: usize, now: u64) {
        if let Some(r) = self.outputs[o].root
            && now >= r.next_refresh
        {
            self.outputs[o].root = Some(RootReg {
                info: r.info,
                next_refresh: now + self.params.arn_gap as u64,
            });
            self.file_arn(r.info, false);
        }
    }

    /// After output `o`'s detector was evaluated in cycle `now`: the first cycle it must be
    /// evaluated again if no event marks an input stale ([`detector_wake`], with the inputs
    /// receiving a packet for it or sending one through it moving).
    fn detector_wake(&self, o: usize, now: u64) -> u64 {
        let mut moving = self.skip.filling[o];
        if let Some(tx) = self.outputs[o].tx {
            moving |= 1 << tx.input;
        }
        moving &= self.all_ports;
        let prev = now.saturating_sub(1);
        let mixed = set_bits(moving)
            .filter(|&i| self.inputs[i].buf.vcs_holding(o, self.vcs, prev) > 1)
            .fold(0u64, |m, i| m | 1 << i);
        let credits = &self.outputs[o].credits;
        detector_wake(
            &self.outputs[o].detector,
            &self.skip.det_in[o],
            &self.skip.det_head_vc[o],
            |vc| credits.running(vc),
            (moving, mixed),
            now,
        )
    }

    /// Debug builds, on a cycle output `o`'s detector holds: the detector stepped on inputs
    /// filled in full gives the held registers and no pulse.
    #[cfg(debug_assertions)]
    fn check_hold(&mut self, o: usize, now: u64) {
        let (kept_in, kept_vc) = (self.skip.det_in[o], self.skip.det_head_vc[o]);
        self.fill_detector_entries(o, self.all_ports, now.saturating_sub(1));
        let mut stepped = self.outputs[o].detector.clone();
        let out = stepped.step(&self.skip.det_in[o]);
        let mut held = self.outputs[o].detector.clone();
        held.hold();
        assert!(
            !out.root_det && !out.root_rel && stepped.regs() == held.regs(),
            "switch {}: the detector of output {o} held in cycle {now} but would have changed",
            self.wiring.id
        );
        self.skip.det_in[o] = kept_in;
        self.skip.det_head_vc[o] = kept_vc;
    }

    /// Clears from `above_hcdth[o]` the VOQs that cannot be above HCDTh after cycle `through`
    /// until their next change.
    pub(super) fn refresh_above_hcdth(&mut self, o: usize, through: u64) {
        let mut scan = self.skip.above_hcdth[o];
        while scan != 0 {
            let i = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            if self.voq_bound(i, o, through) <= self.params.hcdth {
                self.skip.above_hcdth[o] &= !(1 << i);
            }
        }
        if self.skip.above_hcdth[o] == 0 {
            self.skip.hot_outputs &= !(1 << o);
        }
    }

    /// Input `i`'s VOQ for output `o` after cycle `through`, plus the flits still to come of a
    /// packet arriving for it: what it may reach before its next change.
    pub(super) fn voq_bound(&self, i: usize, o: usize, through: u64) -> u16 {
        let buf = &self.inputs[i].buf;
        buf.voq_occupancy(o, through) + buf.due_for(o, through)
    }

    /// Whether the detector of output `o` is idle with an empty crossed set and holds no root.
    pub(super) fn detector_quiet(&self, o: usize) -> bool {
        let r = self.outputs[o].detector.regs();
        r.state == crate::blocks::congestion_detector::DetectorState::Idle
            && r.over == 0
            && self.outputs[o].root.is_none()
    }
}

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
/// Everything else the inputs hold changes only at events, which mark them stale. The fast
/// switch and the event engine both use it.
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
