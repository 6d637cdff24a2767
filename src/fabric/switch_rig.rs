//! One switch on its own, its ports driven from a recording (`docs/recording.md`) through link
//! directions of one cycle, on the cycle engine: the work the replay bench sets beside the
//! Verilated `switch.sv`.
//!
//! The recording's wires are turned back into the fabric's link records: a head flit becomes a
//! head record; the per-cycle credits of a VC become credit streams (a rise starts streams, a fall
//! stops the oldest ones the cycle before, each stream's length known from its stop).

use super::switch_unit::CycleUnit;
use crate::cycle::{CycleSwitch, PortIn, PortOut};
use crate::fabric::scheduler::{Arrivals, Outbox};
use crate::switch::SwitchFault;
use crate::trace::recording::RecordingHeader;
use crate::wire::link::{Backward, Channel, Flit, LinkSend};
use std::collections::VecDeque;

/// The link records a recording's inputs become, by the cycle they arrive.
#[derive(Clone, Debug, Default)]
pub struct RigStimulus<const V: usize> {
    /// (arrival cycle, port, head record).
    flits: Vec<(u64, u8, Flit)>,
    /// (arrival cycle, port, return record).
    backs: Vec<(u64, u8, Backward<V>)>,
    /// Cycles recorded.
    cycles: u64,
    /// Packets the switch sent in the recording.
    heads_out: u64,
}

impl<const V: usize> RigStimulus<V> {
    /// Gathers the records of `frames` (cycle, inputs, outputs), in cycle order, of a switch of
    /// `ports` ports recorded for `cycles` cycles.
    pub fn from_frames<'a>(
        ports: usize,
        cycles: u64,
        frames: impl IntoIterator<Item = (u64, &'a [PortIn], &'a [PortOut])>,
    ) -> Self {
        let mut st = RigStimulus {
            cycles,
            ..Default::default()
        };
        // Per port and VC: the credits of the last cycle seen, and the open streams (index of
        // their start record, start cycle).
        let mut last = vec![[0u8; V]; ports];
        let mut open: Vec<[VecDeque<(usize, u64)>; V]> = (0..ports)
            .map(|_| std::array::from_fn(|_| VecDeque::new()))
            .collect();
        // The record of cycle `t` at port `p`, made when missing (records are made for the
        // cycle being read and the one before, so only the end of the list is searched).
        let back_at = |st: &mut RigStimulus<V>, t: u64, p: usize| -> usize {
            let found = st
                .backs
                .iter()
                .enumerate()
                .rev()
                .take_while(|(_, (c, _, _))| *c + 1 >= t)
                .find(|(_, (c, q, _))| *c == t && *q as usize == p)
                .map(|(i, _)| i);
            found.unwrap_or_else(|| {
                st.backs.push((t, p as u8, Backward::default()));
                st.backs.len() - 1
            })
        };
        let mut change = |st: &mut RigStimulus<V>, t: u64, p: usize, v: usize, now: u8| {
            let before = last[p][v];
            if now < before {
                // The oldest streams returned their last credit in the cycle before.
                let i = back_at(st, t - 1, p);
                st.backs[i].2.stop[v] += before - now;
                for _ in now..before {
                    if let Some((k, start)) = open[p][v].pop_front() {
                        st.backs[k].2.start_flits[v] += (t - start) as u32;
                    }
                }
            } else if now > before {
                let i = back_at(st, t, p);
                st.backs[i].2.start[v] += now - before;
                for _ in before..now {
                    open[p][v].push_back((i, t));
                }
            }
            last[p][v] = now;
        };
        let mut next = 0u64;
        for (t, ins, outs) in frames {
            // The idle cycles in between have no credits.
            if t > next {
                for p in 0..ports {
                    for v in 0..V {
                        change(&mut st, next, p, v, 0);
                    }
                }
            }
            for (p, i) in ins.iter().enumerate() {
                if i.flit.valid && i.flit.head {
                    st.flits.push((
                        t,
                        p as u8,
                        Flit {
                            pkt: i.flit.desc,
                            index: 0,
                        },
                    ));
                }
                for v in 0..V {
                    change(&mut st, t, p, v, i.credit[v]);
                }
                if let Some(a) = i.arn {
                    let k = back_at(&mut st, t, p);
                    st.backs[k].2.arn = Some(a);
                }
                if let Some(c) = i.cnm {
                    let k = back_at(&mut st, t, p);
                    st.backs[k].2.cnm = Some(c);
                }
            }
            st.heads_out += outs.iter().filter(|o| o.flit.valid && o.flit.head).count() as u64;
            next = t + 1;
        }
        for port in &mut open {
            for (v, streams) in port.iter_mut().enumerate() {
                while let Some((k, start)) = streams.pop_front() {
                    st.backs[k].2.start_flits[v] += (cycles - start) as u32;
                }
            }
        }
        st.backs.sort_by_key(|&(c, p, _)| (c, p));
        st
    }

    /// Cycles recorded.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Packets the switch sent in the recording.
    pub fn heads_out(&self) -> u64 {
        self.heads_out
    }
}

/// A switch driven by a [`RigStimulus`].
pub struct SwitchRig<const V: usize> {
    unit: CycleUnit<V>,
    channels: Vec<Channel<V>>,
    arrivals: Arrivals,
    world: Outbox<V>,
    /// What the switch sends in a cycle.
    sent: Outbox<V>,
    heads_out: u64,
}

impl<const V: usize> SwitchRig<V> {
    /// The switch of `h`, in its reset state, its port `p` on channels `2p` (in) and `2p + 1`
    /// (out).
    pub fn new(h: &RecordingHeader) -> Self {
        let ports = h.wiring.out_capacity.len();
        let mut wiring = h.wiring.clone();
        wiring.id = 0;
        wiring.in_ch = (0..ports as u32).map(|p| 2 * p).collect();
        wiring.out_ch = (0..ports as u32).map(|p| 2 * p + 1).collect();
        let unit = CycleUnit::new(CycleSwitch::new(
            h.params.clone(),
            wiring,
            h.lft.clone(),
            h.seed,
        ));
        let mut channels = Vec::with_capacity(2 * ports);
        for p in 0..ports as u8 {
            let mut i = Channel::new(1);
            i.set_ends((0, p), (1, 0));
            let mut o = Channel::new(1);
            o.set_ends((1, 0), (0, p));
            channels.push(i);
            channels.push(o);
        }
        SwitchRig {
            unit,
            channels,
            arrivals: Arrivals::new(2, 1),
            world: Outbox::new(2 * ports),
            sent: Outbox::new(ports),
            heads_out: 0,
        }
    }

    /// Steps the switch through the stimulus, from reset; returns the packets it sent.
    pub fn run(&mut self, st: &RigStimulus<V>) -> Result<u64, SwitchFault> {
        let (mut f, mut b) = (0, 0);
        for t in 0..st.cycles {
            // What arrives in `t + 1` is sent now (one-cycle links).
            self.world.clear();
            while f < st.flits.len() && st.flits[f].0 <= t + 1 {
                let (c, p, flit) = st.flits[f];
                self.world.send_flit(c - 1, 2 * p as u32, flit);
                f += 1;
            }
            while b < st.backs.len() && st.backs[b].0 <= t + 1 {
                let (c, p, back) = st.backs[b];
                self.world.send_back(c - 1, 2 * p as u32 + 1, back);
                b += 1;
            }
            self.sent.clear();
            self.unit
                .step(t, &self.channels, &self.arrivals, &mut self.sent, &mut ())?;
            self.heads_out += self.sent.flits().iter().filter(|x| x.2.is_head()).count() as u64;
            self.world.write_into(&mut self.channels, &self.arrivals);
        }
        Ok(self.heads_out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::scenarios::BUNDLED;
    use crate::config::Scenario;
    use crate::fabric::Fabric;
    use crate::wire::link::FEW_VCS;

    /// The rig gives the switch the inputs it had in the fabric: it sends the packets it sent
    /// there.
    #[test]
    fn a_rigged_switch_sends_what_it_sent_in_the_fabric() {
        let text = BUNDLED[0].1;
        let s = Scenario::from_text("default", text, &[]).expect("loads");
        let mut f =
            Fabric::<FEW_VCS>::build(&s.topology, s.params.clone(), &s.flows).expect("builds");
        let header = RecordingHeader::of(&f, 5, "s2_1", 0, s.sim_cycles - 1);
        let mut frames: Vec<(u64, Vec<PortIn>, Vec<PortOut>)> = Vec::new();
        f.run_recorded(s.sim_cycles, &mut (), &[5], &mut |_, c, i, o| {
            frames.push((c, i.to_vec(), o.to_vec()));
            Ok(())
        })
        .expect("runs");
        let st = RigStimulus::<FEW_VCS>::from_frames(
            4,
            s.sim_cycles,
            frames.iter().map(|(c, i, o)| (*c, &i[..], &o[..])),
        );
        assert!(st.heads_out() > 1000);
        let sent = SwitchRig::new(&header).run(&st).expect("runs");
        assert_eq!(sent, st.heads_out());
    }
}
