//! The congestion detectors' side of `output_port.sv` (Rocher-Gonzalez et al., section 3.3 and
//! pseudo-code 1): each output's detector sees every input's VOQ occupancy for it and the head of
//! that input's fullest VC for it, with the credits that head would need downstream; a declared
//! root loads the root register and files a processARN command, a standing root refreshes it.

use super::*;
use crate::switch::{Observer, SwitchEvent};

impl CycleSwitch {
    /// The detector inputs of output `o`: per input, its VOQ occupancy and the head of its
    /// fullest VC for `o` (the lowest such VC on a tie).
    fn fill_detector_input(&mut self, o: usize) {
        let d = &mut *self.w.det_in;
        for (i, inp) in self.inputs.iter().enumerate() {
            d.voq_occ[i] = inp.voq_occupancy(o);
            let mut best: Option<(u16, usize)> = None;
            for v in 0..self.vcs {
                let occ = inp.vc_voq_occupancy(v, o);
                if occ > 0 && best.is_none_or(|(b, _)| occ > b) {
                    best = Some((occ, v));
                }
            }
            match best.and_then(|(_, v)| inp.head(v, o)) {
                Some(s) => {
                    let slot = inp.slot(s);
                    d.set_head(
                        i,
                        self.params.base_lid(slot.pkt.dlid),
                        slot.pkt.orig_vc,
                        slot.pkt.adapted(),
                        self.outputs[o].credits(slot.next_vc as usize),
                    );
                }
                None => d.clear_head(i),
            }
        }
    }

    /// 1. The congestion detectors and the root registers.
    pub(super) fn detect<O: Observer>(&mut self, now: u64, obs: &mut O) {
        let gap = self.params.arn_gap;
        for o in 0..self.ports {
            self.fill_detector_input(o);
            let d = self.outputs[o].detector.evaluate(&self.w.det_in);
            self.w.roots[o] = RootWrite::Keep;
            if d.root_det {
                let stage = self.wiring.stage;
                let root_info = if self.is_up(o) {
                    stage
                } else {
                    stage.saturating_sub(1)
                };
                self.w.arn_seq = self.w.arn_seq.wrapping_add(1) & 0xF_FFFF;
                let info = ArnInfo {
                    dest: d.root_dest,
                    port: o as u8,
                    vc: d.root_vc,
                    arn_id: (self.wiring.id << 20) | self.w.arn_seq,
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
                self.w.roots[o] = RootWrite::Set(Root {
                    info,
                    refresh: gap.saturating_sub(1),
                });
                self.file_arn(info, d.root_adapted);
            } else if d.root_rel {
                self.w.roots[o] = RootWrite::Clear;
                obs.event(
                    now,
                    self.wiring.id,
                    SwitchEvent::RootReleased { port: o as u8 },
                );
            } else if let Some(r) = self.outputs[o].root
                && r.refresh == 0
            {
                self.w.roots[o] = RootWrite::Set(Root {
                    info: r.info,
                    refresh: gap.saturating_sub(1),
                });
                self.file_arn(r.info, false);
            }
        }
    }
}
