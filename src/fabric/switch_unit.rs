//! A switch of the fabric as the fabric's scheduler steps it: on the fast engine
//! ([`crate::switch`]) or the cycle engine ([`crate::cycle`]) behind the adapter that speaks the
//! fabric's link records. The event engine (`fabric/event.rs`, the default) reads only what the
//! switch is built from (wiring, LFT, parameters) and keeps its state itself. Every engine gives
//! the same outputs in every cycle (`docs/switch.md`, "Three engines, one switch").

use super::scheduler::Arrivals;
use crate::blocks::{ArnTable, LftBanks};
use crate::cycle::link_adapter::PortWires;
use crate::cycle::{CycleSwitch, PortIn, PortOut};
use crate::switch::{
    Observer, OutputProbe, Switch, SwitchFault, SwitchParams, SwitchStats, SwitchWiring,
};
use crate::wire::link::{Arriving, Backward, Channel, Flit, LinkSend};

/// Which engine steps the switches of a fabric. Every output is the same on each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// Work at heads, tails and credit records (`src/switch/`).
    Fast,
    /// One clock cycle per step, module for module as the HDL (`src/cycle/`).
    Cycle,
    /// The fabric stepped from a calendar of port and node events (`src/fabric/event.rs`).
    #[default]
    Event,
}

impl Engine {
    /// Its name in `summary.json` and on the command line (`fast`, `cycle`, `event`).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Fast => "fast",
            Engine::Cycle => "cycle",
            Engine::Event => "event",
        }
    }
}

/// A cycle-engine switch in the fabric: the link records arriving become the wires of its ports,
/// and what it drives becomes link records again (a head record per packet, a credit-stream
/// record when a packet starts and stops leaving an input).
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

    /// The switch.
    pub fn switch(&self) -> &CycleSwitch {
        &self.sw
    }

    /// Steps cycle `now` (the switch's next cycle); what it sends goes to `link`.
    pub fn step<O: Observer, S: LinkSend<V>>(
        &mut self,
        now: u64,
        channels: &[Channel<V>],
        _arriving: Arriving,
        link: &mut S,
        obs: &mut O,
    ) -> Result<(), SwitchFault> {
        debug_assert_eq!(self.sw.cycle(), now);
        let w = self.sw.wiring();
        // The marks only tell which links to read; this unit reads them all.
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
            if !b.is_empty() {
                link.send_back(now, w.in_ch[i], *b);
            }
            *b = Backward::default();
        }
        Ok(())
    }

    /// Event counters.
    pub fn stats(&self) -> SwitchStats {
        self.sw.stats()
    }

    /// Credits of output `port`'s `vc` whose streams have started and not come back.
    pub fn credits_returning(&self, port: usize, vc: usize) -> u64 {
        self.wires[port].pending(vc)
    }
}

/// A switch of the fabric.
#[allow(clippy::large_enum_variant)] // the fast engine's switches stay in place in the fabric's array
pub enum SwitchUnit<const V: usize> {
    /// On the fast engine.
    Fast(Switch<V>),
    /// On the cycle engine.
    Cycle(Box<CycleUnit<V>>),
}

/// The same expression on either engine.
macro_rules! either {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            SwitchUnit::Fast($s) => $e,
            SwitchUnit::Cycle($s) => $e,
        }
    };
}

impl<const V: usize> SwitchUnit<V> {
    /// Steps cycle `now`, reading the ports `arrivals` marks for it; what it sends goes to
    /// `link` (see [`Switch::step`]). The marks are taken here, in the function the switch's step
    /// is inlined into, rather than in the scheduler's loop: taken there, a run of configuration
    /// 1 cost 1.4 % more instructions.
    ///
    /// Always inlined, as is [`Switch::step`], so that the fast engine's whole cycle sits in the
    /// scheduler's loop over a window (`PartLog::step_switch`). Left to the compiler, one or the
    /// other stays a call once a unit may be either engine: that call per switch and cycle cost a
    /// run of configuration 1 (30 us, one thread) 848.0 M instructions against 798.7 M inlined.
    #[inline(always)]
    pub fn step<O: Observer, S: LinkSend<V>>(
        &mut self,
        now: u64,
        channels: &[Channel<V>],
        arrivals: &Arrivals,
        link: &mut S,
        obs: &mut O,
    ) -> Result<(), SwitchFault> {
        match self {
            SwitchUnit::Fast(s) => {
                let arriving = arrivals.take(s.wiring().id, now);
                s.step(now, channels, arriving, link, obs)
            }
            SwitchUnit::Cycle(s) => {
                let arriving = arrivals.take(s.sw.wiring().id, now);
                s.step(now, channels, arriving, link, obs)
            }
        }
    }

    /// The first cycle after `last` it has to step if nothing arrives (every cycle on the cycle
    /// engine).
    #[inline]
    pub fn due_after(&self, last: u64) -> u64 {
        match self {
            SwitchUnit::Fast(s) => s.due_after(last),
            SwitchUnit::Cycle(_) => last + 1,
        }
    }

    /// Asks for the lines the switch reads first in a window, from its own address (see
    /// `wire::prefetch`).
    #[inline]
    pub fn prefetch_head(&self) {
        if let SwitchUnit::Fast(s) = self {
            s.prefetch_head();
        }
    }

    /// Asks for the lines of the ports with something arriving in the window.
    #[inline]
    pub fn prefetch_ports(&self, flits: u64, back: u64, channels: &[Channel<V>]) {
        if let SwitchUnit::Fast(s) = self {
            s.prefetch_ports(flits, back, channels);
        }
    }

    /// Asks for the delay-line registers read in cycle `c` by the ports `flits` and `back`.
    #[inline]
    pub fn prefetch_registers(&self, c: u64, flits: u64, back: u64, channels: &[Channel<V>]) {
        if let SwitchUnit::Fast(s) = self {
            s.prefetch_registers(c, flits, back, channels);
        }
    }

    /// Passes the cycles `from..=to` in which nothing arrived and nothing was due.
    #[inline]
    pub fn skip_through(&mut self, from: u64, to: u64) {
        match self {
            SwitchUnit::Fast(s) => s.skip_through(from, to),
            SwitchUnit::Cycle(_) => unreachable!("a cycle-engine switch is stepped every cycle"),
        }
    }

    /// Whether cycles `from..=to` would change nothing but counters.
    pub fn quiet_through(&self, from: u64, to: u64) -> bool {
        match self {
            SwitchUnit::Fast(s) => s.quiet_through(from, to),
            SwitchUnit::Cycle(_) => false,
        }
    }

    /// A count that grows whenever a packet's head or tail leaves.
    #[inline]
    pub fn progress(&self) -> u64 {
        match self {
            SwitchUnit::Fast(s) => s.progress(),
            SwitchUnit::Cycle(s) => s.heads_sent + s.tails_flits,
        }
    }

    /// A cycle-engine switch in its reset state built as this one was (parameters, wiring, LFT,
    /// seed): its twin for a lockstep, or its replacement on the cycle engine.
    pub fn cycle_twin(&self) -> CycleSwitch {
        CycleSwitch::new(
            self.params().clone(),
            self.wiring().clone(),
            self.lft().clone(),
            self.seed(),
        )
    }

    /// The fast-engine switch, when it is one.
    pub fn as_fast(&self) -> Option<&Switch<V>> {
        match self {
            SwitchUnit::Fast(s) => Some(s),
            SwitchUnit::Cycle(_) => None,
        }
    }

    /// Event counters.
    pub fn stats(&self) -> SwitchStats {
        either!(self, s => s.stats())
    }

    /// Index in the fabric.
    pub fn id(&self) -> u32 {
        self.wiring().id
    }

    /// Cabling and position.
    pub fn wiring(&self) -> &SwitchWiring {
        match self {
            SwitchUnit::Fast(s) => s.wiring(),
            SwitchUnit::Cycle(s) => s.sw.wiring(),
        }
    }

    /// Parameters.
    pub fn params(&self) -> &SwitchParams {
        match self {
            SwitchUnit::Fast(s) => s.params(),
            SwitchUnit::Cycle(s) => s.sw.params(),
        }
    }

    /// The random stream of Oblivious routing's draws, as it stands.
    pub fn route_rng(&self) -> &crate::blocks::rng::SplitMix64 {
        match self {
            SwitchUnit::Fast(s) => s.route_rng(),
            SwitchUnit::Cycle(s) => s.sw.route_rng(),
        }
    }

    /// The programmed LFT.
    pub fn lft(&self) -> &LftBanks {
        match self {
            SwitchUnit::Fast(s) => s.lft(),
            SwitchUnit::Cycle(s) => s.sw.lft(),
        }
    }

    /// The fabric's seed.
    pub fn seed(&self) -> u64 {
        match self {
            SwitchUnit::Fast(s) => s.seed(),
            SwitchUnit::Cycle(s) => s.sw.seed(),
        }
    }

    /// Stage in the fat tree.
    pub fn stage(&self) -> u8 {
        self.wiring().stage
    }

    /// Ports.
    pub fn ports(&self) -> usize {
        self.wiring().out_capacity.len()
    }

    /// VCs per port.
    pub fn vcs(&self) -> usize {
        self.params().vcs()
    }

    /// Flits of input `port`'s `vc`.
    pub fn buffered(&self, port: usize, vc: usize) -> u16 {
        match self {
            SwitchUnit::Fast(s) => s.buffered(port, vc),
            SwitchUnit::Cycle(s) => s.sw.buffered(port, vc),
        }
    }

    /// Flits of input `port`, over its VCs.
    pub fn buffered_flits(&self, port: usize) -> u32 {
        (0..self.vcs()).map(|v| self.buffered(port, v) as u32).sum()
    }

    /// Flits of input `port`'s VOQ for `out`.
    pub fn voq_occupancy(&self, port: usize, out: usize) -> u16 {
        match self {
            SwitchUnit::Fast(s) => s.voq_occupancy(port, out),
            SwitchUnit::Cycle(s) => s.sw.voq_occupancy(port, out),
        }
    }

    /// Free credits of output `port` on `vc`.
    pub fn credits(&self, port: usize, vc: usize) -> u16 {
        match self {
            SwitchUnit::Fast(s) => s.credits(port, vc),
            SwitchUnit::Cycle(s) => s.sw.credits(port, vc),
        }
    }

    /// Credits of output `port`'s `vc` on their way back.
    pub fn credits_returning(&self, port: usize, vc: usize) -> u64 {
        either!(self, s => s.credits_returning(port, vc))
    }

    /// Credits of input `port`'s `vc` announced upstream and not returned yet.
    pub fn credits_announced(&self, port: usize, vc: usize) -> u64 {
        match self {
            SwitchUnit::Fast(s) => s.credits_announced(port, vc),
            SwitchUnit::Cycle(s) => s.sw.credits_announced(port, vc),
        }
    }

    /// Flits sent by output `port` on `vc`.
    pub fn flits_sent(&self, port: usize, vc: usize) -> u64 {
        match self {
            SwitchUnit::Fast(s) => s.flits_sent(port, vc),
            SwitchUnit::Cycle(s) => s.sw.flits_sent(port, vc),
        }
    }

    /// Flits received by input `port` on `vc`.
    pub fn flits_received(&self, port: usize, vc: usize) -> u64 {
        match self {
            SwitchUnit::Fast(s) => s.flits_received(port, vc),
            SwitchUnit::Cycle(s) => s.sw.flits_received(port, vc),
        }
    }

    /// What an output's waveform shows.
    pub fn output_probe(&self, port: usize) -> OutputProbe {
        match self {
            SwitchUnit::Fast(s) => s.output_probe(port),
            SwitchUnit::Cycle(s) => s.sw.output_probe(port),
        }
    }

    /// The ARN table.
    pub fn arn_table(&self) -> &ArnTable {
        match self {
            SwitchUnit::Fast(s) => s.arn_table(),
            SwitchUnit::Cycle(s) => s.sw.arn_table(),
        }
    }

    /// Whether output `port` is a congestion root.
    pub fn is_root(&self, port: usize) -> bool {
        match self {
            SwitchUnit::Fast(s) => s.is_root(port),
            SwitchUnit::Cycle(s) => s.sw.is_root(port),
        }
    }

    /// Whether it holds nothing.
    pub fn is_idle(&self) -> bool {
        match self {
            SwitchUnit::Fast(s) => s.is_idle(),
            SwitchUnit::Cycle(s) => s.sw.is_idle(),
        }
    }
}
