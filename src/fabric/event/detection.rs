//! The congestion detectors on the event engine (Rocher-Gonzalez et al., section 3.3): each
//! switch output's detector (`blocks::congestion_detector`) fed every input's VOQ occupancy for
//! it, the head of each VOQ and the downstream credits of the VC that head would use, as of the
//! cycle before; a declared root files a processARN command (pseudo-code 1) and, while it holds,
//! refreshes its own entry every `arn_gap` cycles.
//!
//! A detector is evaluated only in the cycles it could change in: after each evaluation it files
//! its next one for the first cycle in which its inputs, moving at their current rates, could
//! change its state ([`detector_wake`], `switch/detection.rs`: a VOQ filling or draining a flit a cycle towards HCDTh or LCDTh, a head's
//! credits towards FCTh, the CRT timer's last cycle; or a root's refresh), and what changes them
//! sooner than it expects (a packet routed to its output, a grant there, a credit stream starting
//! there; a tail or a stream stopping changes nothing it does not expect) files one for the next
//! cycle. Between evaluations it holds (only the CRT timer counts). A detector that is idle with
//! an empty crossed set, whose output has no VOQ above HCDTh (the packets routed to it counted
//! whole), is not tracked until a packet routed there takes a VOQ above HCDTh.

use super::arn::ArnState;
use super::*;
use crate::blocks::Block;
use crate::blocks::congestion_detector::DetectorState;
use crate::switch::detector_wake;
use crate::wire::arn::ArnInfo;
use crate::wire::link::streamed;

impl<const V: usize> EventCore<V> {
    /// Output `out`'s detector inputs change after cycle `at - 1`: a tracked detector is
    /// evaluated in `at` at the latest; `hot` (a VOQ of its output above HCDTh) tracks it.
    #[inline(always)]
    pub(super) fn det_stale(&mut self, out: u32, at: u64, hot: bool) {
        let Some(arn) = &mut self.arn else {
            return;
        };
        let o = out as usize;
        if hot {
            arn.tracked[o] = true;
        }
        if arn.tracked[o] && at < arn.det_due[o] {
            arn.det_due[o] = at;
            self.cal.push(at, Ev::new(Kind::Detect, out));
        }
    }

    /// The detectors due in cycle `now` (the `Detect` events of `list`), in output order per
    /// switch, on the occupancies and credits through `now - 1`.
    pub(super) fn detect(&mut self, env: &Env<V>, list: &[Ev], now: u64) {
        let Some(mut arn) = self.arn.take() else {
            return;
        };
        let due = &arn.det_due;
        let mut outs = std::mem::take(&mut arn.due_now);
        outs.clear();
        outs.extend(
            list.iter()
                .filter(|ev| ev.kind == Kind::Detect && due[ev.unit as usize] == now)
                .map(|ev| ev.unit),
        );
        outs.sort_unstable();
        outs.dedup();
        for &out in &outs {
            arn.det_due[out as usize] = u64::MAX;
            self.detect_output(env, &mut arn, out, now);
        }
        arn.due_now = outs;
        self.arn = Some(arn);
    }

    /// Output `out`'s detector in cycle `now`: pseudo-code 1 on a root, then its next
    /// evaluation filed.
    fn detect_output(&mut self, env: &Env<V>, arn: &mut ArnState, out: u32, now: u64) {
        let Place {
            switch: s,
            port: o,
            ports,
        } = self.ins[out as usize].place;
        let (o, ports) = (o as usize, ports as usize);
        let unit = &env.switches[s as usize];
        let sp = &env.params.switch;
        let t = now.saturating_sub(1);
        let base = out - o as u32;
        let det = &mut arn.dets[out as usize];
        // The cycles since its last evaluation, held.
        let last = arn.det_last[out as usize];
        if now > last + 1 {
            det.hold_for(u32::try_from(now - last - 1).unwrap_or(u32::MAX));
        }
        arn.det_last[out as usize] = now;
        let det_in = &mut *arn.det_in;
        // Inputs whose VOQ for `o` moves by itself (a packet arriving for it or leaving through
        // it), and those of them whose flits are on more than one VC (whose head may change).
        let (mut moving, mut mixed) = (0u64, 0u64);
        for i in 0..ports {
            let input = base + i as u32;
            let bit = 1u64 << i;
            let a = self.ins[input as usize].arrival;
            let residual = if a.out as usize == o && a.len > 0 {
                (a.len - streamed(a.start, a.len, t)) as u32
            } else {
                0
            };
            let (gone, gone_vc) = match self.outputs[out as usize].tx {
                Some(tx) if tx.input == input => {
                    moving |= bit;
                    (streamed(tx.start, tx.len, t) as u32, tx.vc as usize)
                }
                _ => (0, usize::MAX),
            };
            if residual > 0 {
                moving |= bit;
            }
            // The VOQ's occupancy, and its head: the head packet of the VC holding most of its
            // flits.
            let mut best: Option<(u32, usize)> = None;
            let (mut holding, mut total) = (0, 0);
            for v in 0..self.vcs {
                let mut occ = self.voqs[self.voq(out, i, v)].flits;
                if a.vc as usize == v {
                    occ -= residual;
                }
                if gone_vc == v {
                    occ -= gone;
                }
                total += occ;
                if occ > 0 {
                    holding += 1;
                    if best.is_none_or(|(b, _)| occ > b) {
                        best = Some((occ, v));
                    }
                }
            }
            det_in.voq_occ[i] = total as u16;
            if holding > 1 {
                mixed |= bit;
            }
            let head = best
                .map(|(_, v)| self.voqs[self.voq(out, i, v)].head)
                .filter(|&k| k != NIL);
            match head {
                Some(k) => {
                    let slot = &self.slots[k as usize];
                    det_in.set_head(
                        i,
                        sp.base_lid(slot.pkt.dlid),
                        slot.pkt.orig_vc,
                        slot.pkt.adapted(),
                        self.outputs[out as usize]
                            .credits
                            .credits(slot.next_vc as usize, t),
                    );
                    arn.head_vc[i] = slot.next_vc;
                }
                None => det_in.clear_head(i),
            }
        }
        let res = det.step(det_in);
        let gap = sp.arn_gap as u64;
        if res.root_det {
            let w = unit.wiring();
            let root_info = if w.up_ports >> o & 1 == 1 {
                w.stage
            } else {
                w.stage.saturating_sub(1)
            };
            let seq = &mut arn.seq[s as usize];
            *seq = seq.wrapping_add(1) & 0xF_FFFF;
            let info = ArnInfo {
                dest: res.root_dest,
                port: o as u8,
                vc: res.root_vc,
                arn_id: (w.id << 20) | *seq,
                root_info,
            };
            self.stats.roots_detected += 1;
            self.first_root = self.first_root.min((now, s));
            arn.roots[out as usize] = Some((info, now + gap));
            arn.file_cmd(s, info, res.root_adapted, &mut self.stats);
        } else if res.root_rel {
            arn.roots[out as usize] = None;
        } else if let Some((info, next)) = arn.roots[out as usize]
            && now >= next
        {
            // While a root, the output keeps its own entry alive.
            arn.roots[out as usize] = Some((info, now + gap));
            arn.file_cmd(s, info, false, &mut self.stats);
        }
        let r = arn.dets[out as usize].regs();
        let root = arn.roots[out as usize];
        if r.state == DetectorState::Idle
            && r.over == 0
            && root.is_none()
            && (0..ports).all(|i| self.voq_flits(out, i) <= sp.hcdth as u32)
        {
            arn.tracked[out as usize] = false;
            return;
        }
        let credits = &self.outputs[out as usize].credits;
        let mut wake = detector_wake(
            &arn.dets[out as usize],
            &arn.det_in,
            &arn.head_vc,
            |vc| credits.running(vc),
            (moving, mixed),
            now,
        );
        if let Some((_, next)) = root {
            wake = wake.min(next);
        }
        if wake < arn.det_due[out as usize] {
            arn.det_due[out as usize] = wake;
            self.cal.push(wake, Ev::new(Kind::Detect, out));
        }
    }
}
