//! Lockstep of a cycle-engine switch against recorded port traffic: the recorded inputs of each
//! cycle drive the switch, and what it drives is compared with the recorded outputs, signal by
//! signal. The first difference is reported with its cycle, port, signal and both values.

use super::{CycleSwitch, LinkFlit, MAX_LINK_VCS, PortIn, PortOut};
use crate::switch::SwitchFault;
use std::fmt;

/// The first difference between a recording and the switch replaying it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Cycle.
    pub cycle: u64,
    /// Port.
    pub port: usize,
    /// Signal name, as in `switch.sv`.
    pub signal: String,
    /// Recorded value.
    pub expected: String,
    /// The replaying switch's value.
    pub got: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cycle {}, port {}, {}: recorded {}, replayed {}",
            self.cycle, self.port, self.signal, self.expected, self.got
        )
    }
}

/// Why a replay stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayError {
    /// The outputs differ.
    Mismatch(Mismatch),
    /// The replaying switch met a protocol fault.
    Fault {
        /// Cycle.
        cycle: u64,
        /// What and where.
        fault: SwitchFault,
    },
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Mismatch(m) => m.fmt(f),
            ReplayError::Fault { cycle, fault } => {
                write!(f, "cycle {cycle}, port {}: {}", fault.port, fault.what)
            }
        }
    }
}

/// The first signal of port `p` on which `want` and `got` differ.
pub fn first_difference(cycle: u64, p: usize, want: &PortOut, got: &PortOut) -> Option<Mismatch> {
    let m = |signal: String, e: String, g: String| Mismatch {
        cycle,
        port: p,
        signal,
        expected: e,
        got: g,
    };
    let flit = |f: &LinkFlit| {
        if f.valid {
            format!(
                "vc {} head {} tail {} desc {:?}",
                f.vc, f.head as u8, f.tail as u8, f.desc
            )
        } else {
            "idle".to_string()
        }
    };
    if want.flit != got.flit {
        return Some(m(
            format!("out_flit[{p}]"),
            flit(&want.flit),
            flit(&got.flit),
        ));
    }
    for v in 0..MAX_LINK_VCS {
        if want.credit[v] != got.credit[v] {
            return Some(m(
                format!("out_credit[{p}][{v}]"),
                want.credit[v].to_string(),
                got.credit[v].to_string(),
            ));
        }
    }
    if want.arn != got.arn {
        return Some(m(
            format!("out_arn[{p}]"),
            format!("{:?}", want.arn),
            format!("{:?}", got.arn),
        ));
    }
    if want.cnm != got.cnm {
        return Some(m(
            format!("out_cnm[{p}]"),
            format!("{:?}", want.cnm),
            format!("{:?}", got.cnm),
        ));
    }
    None
}

/// Most idle cycles between two looks at whether a replaying switch has settled.
const SETTLE_CHECK: u64 = 4096;

/// Fewest idle cycles in a row worth a look at whether a replaying switch has settled.
const SETTLE_MIN: u64 = 256;

/// A cycle-engine switch replaying recorded traffic.
pub struct Replay {
    sw: CycleSwitch,
    got: Vec<PortOut>,
    cycles: u64,
    /// Whether the last idle cycle left every register as it was (and drove nothing): the idle
    /// cycles that follow would too, so they are skipped until an input comes.
    settled: bool,
    skipped: u64,
}

impl Replay {
    /// Replays into `sw` (in its reset state).
    pub fn new(sw: CycleSwitch) -> Self {
        let ports = sw.ports();
        Replay {
            sw,
            got: vec![PortOut::default(); ports],
            cycles: 0,
            settled: false,
            skipped: 0,
        }
    }

    /// Steps the switch through the recorded `cycle` (cycles with nothing recorded in between
    /// are idle ones) and compares its outputs with `want`.
    pub fn check(
        &mut self,
        cycle: u64,
        ins: &[PortIn],
        want: &[PortOut],
    ) -> Result<(), ReplayError> {
        self.idle_until(cycle)?;
        self.settled = false;
        self.step(cycle, Some(ins), Some(want))
    }

    fn step(
        &mut self,
        cycle: u64,
        ins: Option<&[PortIn]>,
        want: Option<&[PortOut]>,
    ) -> Result<(), ReplayError> {
        let ports = self.sw.ports();
        let none = [PortIn::default(); crate::switch::MAX_PORTS];
        let ins = ins.unwrap_or(&none[..ports]);
        self.sw
            .step(ins, &mut self.got, &mut ())
            .map_err(|fault| ReplayError::Fault { cycle, fault })?;
        self.cycles += 1;
        let idle = PortOut::default();
        for p in 0..ports {
            let w = want.map_or(&idle, |w| &w[p]);
            if let Some(m) = first_difference(cycle, p, w, &self.got[p]) {
                return Err(ReplayError::Mismatch(m));
            }
        }
        Ok(())
    }

    /// Steps the switch through the idle cycles before `end`, checking that it drives nothing.
    pub fn idle_until(&mut self, end: u64) -> Result<(), ReplayError> {
        while self.sw.cycle() < end {
            let c = self.sw.cycle();
            self.step(c, None, None)?;
        }
        Ok(())
    }

    /// [`Replay::idle_until`], skipping the idle cycles that cannot change anything: once an
    /// idle cycle drives nothing and leaves every register as it was, the switch has settled and
    /// every idle cycle after it would do the same. A stretch of at least [`SETTLE_MIN`] idle
    /// cycles is looked at (a copy of the registers, which allocates, unlike the stepping) in its
    /// first cycle, then after 64, 128, ... cycles, at most [`SETTLE_CHECK`] apart, until the
    /// switch settles.
    pub fn idle_until_settled(&mut self, end: u64) -> Result<(), ReplayError> {
        let start = self.sw.cycle();
        let mut next = if end.saturating_sub(start) >= SETTLE_MIN {
            start
        } else {
            u64::MAX
        };
        let mut wait = 32;
        while self.sw.cycle() < end {
            let c = self.sw.cycle();
            if self.settled {
                self.skipped += end - c;
                self.sw.set_cycle(end);
                break;
            }
            if c == next {
                let before = self.sw.registers();
                self.step(c, None, None)?;
                self.settled = self.sw.registers() == before;
                wait = (2 * wait).min(SETTLE_CHECK);
                next = c + wait;
            } else {
                self.step(c, None, None)?;
            }
        }
        Ok(())
    }

    /// Cycles replayed (stepped).
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Idle cycles skipped once the switch had settled (see [`Replay::idle_until_settled`]).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// What the switch drove in the last cycle replayed, per port.
    pub fn outputs(&self) -> &[PortOut] {
        &self.got
    }

    /// The replaying switch.
    pub fn switch(&self) -> &CycleSwitch {
        &self.sw
    }
}
