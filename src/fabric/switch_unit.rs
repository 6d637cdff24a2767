//! A switch of the fabric: what it is built from (cabling, LFT, the stream of Oblivious routing's
//! draws), read by both engines, and the cycle engine's switch ([`crate::cycle`]) behind the
//! adapter that speaks the fabric's link records. The event engine (`fabric/event.rs`, the
//! default) keeps the state of every switch itself. Both engines give the same outputs in every
//! cycle (`docs/switch.md`, "Three views, one switch").

use super::scheduler::Arrivals;
use crate::blocks::LftBanks;
use crate::blocks::rng::SplitMix64;
use crate::cycle::link_adapter::PortWires;
use crate::cycle::{CycleSwitch, PortIn, PortOut};
use crate::switch::{Observer, SwitchFault, SwitchParams, SwitchStats, SwitchWiring};
use crate::wire::link::{Backward, Channel, Flit, LinkSend};

/// Which engine steps the switches of a fabric. Every output is the same on each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// One clock cycle per step, module for module as the HDL (`src/cycle/`).
    Cycle,
    /// The fabric stepped from a calendar of port and node events (`src/fabric/event.rs`).
    #[default]
    Event,
}

impl Engine {
    /// Its name in `summary.json` and on the command line (`cycle`, `event`).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Cycle => "cycle",
            Engine::Event => "event",
        }
    }
}

/// What a switch of the fabric is built from, whatever steps it: its cabling and position, its
/// programmed LFT, and the random stream of Oblivious routing's draws in its reset state.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SwitchSetup {
    wiring: SwitchWiring,
    /// `None` in a process that does not step the switch ([`SwitchSetup::forget_lft`]).
    lft: Option<LftBanks>,
    rng: SplitMix64,
}

impl SwitchSetup {
    /// Switch `wiring.id` of a fabric seeded with `seed`, its LFT programmed.
    pub fn new(wiring: SwitchWiring, lft: LftBanks, seed: u64) -> Self {
        SwitchSetup {
            rng: CycleSwitch::route_rng_of(seed, wiring.id),
            wiring,
            lft: Some(lft),
        }
    }

    /// A cycle-engine switch in its reset state built from it: the switch of a fabric stepped
    /// by the cycle engine, or the twin of one in a lockstep.
    pub fn cycle_switch(&self, params: &SwitchParams, seed: u64) -> CycleSwitch {
        CycleSwitch::new(
            params.clone(),
            self.wiring.clone(),
            self.lft().clone(),
            seed,
        )
    }

    /// Index in the fabric.
    pub fn id(&self) -> u32 {
        self.wiring.id
    }

    /// Cabling and position.
    pub fn wiring(&self) -> &SwitchWiring {
        &self.wiring
    }

    /// The programmed LFT (of a switch this process steps).
    #[inline]
    pub fn lft(&self) -> &LftBanks {
        self.lft
            .as_ref()
            .expect("the LFT of a switch another MPI rank steps is not kept")
    }

    /// The programmed LFT, if this process keeps it.
    pub fn kept_lft(&self) -> Option<&LftBanks> {
        self.lft.as_ref()
    }

    /// Forgets its LFT: another MPI rank steps the switch, and only that rank reads it.
    pub fn forget_lft(&mut self) {
        self.lft = None;
    }

    /// The random stream of Oblivious routing's draws, in its reset state.
    pub fn route_rng(&self) -> &SplitMix64 {
        &self.rng
    }

    /// Stage in the fat tree.
    pub fn stage(&self) -> u8 {
        self.wiring.stage
    }

    /// Ports.
    pub fn ports(&self) -> usize {
        self.wiring.out_capacity.len()
    }
}

/// A cycle-engine switch in the fabric: the link records arriving become the wires of its ports,
/// and what it drives becomes link records again (a head record per packet, a credit-stream
/// record when a packet starts and stops leaving an input). It reads as its switch
/// ([`CycleSwitch`]) wherever the fabric looks at it.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct CycleUnit<const V: usize> {
    sw: CycleSwitch,
    ins: Vec<PortIn>,
    outs: Vec<PortOut>,
    /// Per port: its input link, and the reverse direction of its output link.
    wires: Vec<PortWires<V>>,
    backs: Vec<Backward<V>>,
    /// Packets whose heads have left, and flits of packets whose tails have (the progress count).
    heads_sent: u64,
    tails_flits: u64,
}

impl<const V: usize> std::ops::Deref for CycleUnit<V> {
    type Target = CycleSwitch;

    fn deref(&self) -> &CycleSwitch {
        &self.sw
    }
}

impl<const V: usize> CycleUnit<V> {
    /// `sw` in the fabric (in its reset state).
    pub fn new(sw: CycleSwitch) -> Self {
        let ports = sw.ports();
        CycleUnit {
            sw,
            ins: vec![PortIn::default(); ports],
            outs: vec![PortOut::default(); ports],
            wires: vec![PortWires::default(); ports],
            backs: vec![Backward::default(); ports],
            heads_sent: 0,
            tails_flits: 0,
        }
    }

    /// Steps cycle `now` (the switch's next cycle), reading every port (the marks of `arrivals`
    /// for it are taken); what it sends goes to `link`.
    pub fn step<O: Observer, S: LinkSend<V>>(
        &mut self,
        now: u64,
        channels: &[Channel<V>],
        arrivals: &Arrivals,
        link: &mut S,
        obs: &mut O,
    ) -> Result<(), SwitchFault> {
        debug_assert_eq!(self.sw.cycle(), now);
        let w = self.sw.wiring();
        arrivals.take(w.id, now);
        for p in 0..self.ins.len() {
            let head = channels[w.in_ch[p] as usize].recv_flit(now);
            let back = channels[w.out_ch[p] as usize].recv_back(now);
            self.ins[p] = self.wires[p].receive(head.as_ref(), back);
        }
        self.sw.step(&self.ins, &mut self.outs, obs)?;
        let w = self.sw.wiring();
        for (o, out) in self.outs.iter().enumerate() {
            if out.flit.valid && out.flit.head {
                let flit = Flit {
                    pkt: out.flit.desc,
                    index: 0,
                };
                link.send_flit(now, w.out_ch[o], flit);
                self.heads_sent += 1;
            }
        }
        for (_, tx, tail) in self.sw.last_sends() {
            let b = &mut self.backs[tx.input as usize];
            if tx.sent == 0 {
                b.start_stream(tx.in_vc as usize, tx.len);
            }
            if tail {
                b.stop_stream(tx.in_vc as usize);
                self.tails_flits += tx.len as u64;
            }
        }
        for (i, b) in self.backs.iter_mut().enumerate() {
            b.arn = self.outs[i].arn;
            b.cnm = self.outs[i].cnm;
            if !b.is_empty() {
                link.send_back(now, w.in_ch[i], *b);
            }
            *b = Backward::default();
        }
        Ok(())
    }

    /// A count that grows whenever a packet's head or tail leaves.
    pub fn progress(&self) -> u64 {
        self.heads_sent + self.tails_flits
    }

    /// Event counters.
    pub fn stats(&self) -> SwitchStats {
        self.sw.stats()
    }

    /// Credits of output `port`'s `vc` whose streams have started and not come back.
    pub fn credits_returning(&self, port: usize, vc: usize) -> u64 {
        self.wires[port].pending(vc)
    }

    /// Flits of input `port`, over its VCs.
    pub fn buffered_flits(&self, port: usize) -> u32 {
        (0..self.sw.vcs())
            .map(|v| self.sw.buffered(port, v) as u32)
            .sum()
    }
}
