//! A run of a scenario as one object, [`Run`]: the fabric built from a loaded scenario (its MPI
//! trace attached when it replays one) on the engine and threads asked, stepped chunk by chunk
//! into efficiency and latency bins, a stop request honoured at every chunk boundary, a VCD dump
//! fed through the fabric's tap and one switch recorded when asked, and at the end what the
//! outputs are made of ([`Ended`]). `arnsim run`, each load of `arnsim sweep`, the first pass of
//! `--trigger-before` ([`Run::first_root`]), `--record-switch` and trace replays all step through
//! it; the command line checks arguments, stages the output files and writes them from [`Ended`].
//!
//! ```no_run
//! # fn main() -> Result<(), String> {
//! use arnsim::run::{Stepping, Stop, run_whole};
//! let s = arnsim::cli::scenarios::load("default", &["sim_time=50us".into()])?;
//! let ended = run_whole(&s, &Stepping::new(1, &Stop::never()))?;
//! assert!(ended.complete && ended.invariants.is_ok());
//! println!("{}", ended.series.efficiency_csv(s.time_base.cycle_ns()));
//! # Ok(())
//! # }
//! ```

pub mod checkpoint;
#[cfg(test)]
mod checkpoint_tests;
#[cfg(test)]
mod ranks_tests;
mod record;
mod step;
mod stop;
#[cfg(test)]
mod tests;

pub use step::{Ended, Stopped, WriteError};
pub use stop::Stop;

use crate::config::Scenario;
use crate::fabric::{Engine, Fabric, Violation};
use crate::replay::Replayer;
use crate::switch::{Observer, SwitchEvent};
use crate::trace::fabric_vcd::FabricTap;
use crate::trace::fabric_waves::FabricWaves;
use record::SwitchRecording;
use std::time::Instant;

/// Switches below which `threads: 0` steps on one thread.
pub const SMALL_FABRIC: usize = 32;

/// Most cycles stepped between two looks at the stop request: a bin is stepped in chunks of this
/// many cycles (the outputs do not depend on it).
pub const CHUNK: u64 = 1024;

/// How a run steps: the switches' engine, the threads (0: one per core, or one for a fabric of
/// fewer than [`SMALL_FABRIC`] switches or for each of several MPI ranks), the stop request it
/// watches and the MPI ranks it is split over.
#[derive(Clone, Copy, Debug)]
pub struct Stepping<'a> {
    /// The engine.
    pub engine: Engine,
    /// Threads.
    pub threads: usize,
    /// Stop request.
    pub stop: &'a Stop,
    /// The MPI ranks the fabric is split over (`None`: one process).
    pub ranks: Option<&'a std::sync::Arc<dyn crate::fabric::ranks::Ranks>>,
}

impl<'a> Stepping<'a> {
    /// The default engine on `threads` threads, watching `stop`, on the ranks of this
    /// process's MPI job when it is one of several.
    pub fn new(threads: usize, stop: &'a Stop) -> Self {
        Stepping {
            engine: Engine::default(),
            threads,
            stop,
            ranks: crate::fabric::ranks::world(),
        }
    }

    /// The threads a run of `s` steps on: those asked, or for 0 one per core (one for a fabric
    /// of fewer than [`SMALL_FABRIC`] switches).
    pub fn threads_for(&self, s: &Scenario) -> usize {
        match self.threads {
            0 if s.topology.switches.len() < SMALL_FABRIC || self.ranks.is_some() => 1,
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }
}

/// A dump fed while the run steps: its files (VCD, FST), its tap on the fabric and the cycles
/// dumped.
struct Dump {
    waves: FabricWaves,
    tap: FabricTap,
    window: (u64, u64),
}

/// The bins gathered so far, and where the open one starts.
#[derive(serde::Serialize, serde::Deserialize)]
struct Bins {
    series: crate::metrics::Series,
    /// The nodes' counters at the start of the open bin.
    last: crate::fabric::node::NodeStats,
    /// First cycle of the open bin.
    start: u64,
}

/// A run of a scenario on a fabric of `V` VC lanes (see [`crate::with_lanes`]), stepped by
/// [`Run::step_chunk`] until it returns `false`, then closed by [`Run::finish`].
pub struct Run<'a, const V: usize> {
    s: &'a Scenario,
    stop: &'a Stop,
    threads: usize,
    fabric: Fabric<V>,
    bins: Bins,
    dump: Option<Dump>,
    recording: Option<SwitchRecording>,
    /// The signal that stopped the run, once one has.
    signal: Option<i32>,
    /// The broken invariant that stopped the stepping, once one has.
    stepped: Result<(), Violation>,
    /// When the first chunk was asked for.
    started: Option<Instant>,
}

impl<'a, const V: usize> Run<'a, V> {
    /// Builds the fabric of `s` (with its trace's replayers attached when it replays one) on the
    /// engine and threads of `how`, before its first cycle.
    pub fn new(s: &'a Scenario, how: &Stepping<'a>) -> Result<Self, String> {
        let threads = how.threads_for(s);
        let mut fabric = Fabric::<V>::build_on(
            &s.topology,
            s.params.clone(),
            &s.flows,
            how.engine,
            threads,
            how.ranks.map(std::sync::Arc::clone),
        )?;
        if let Some(t) = &s.replay {
            fabric.attach_replay(Replayer::build_all(&t.program, &t.mapping, &s.time_base)?)?;
        }
        if let Some(p) = &s.phase {
            fabric.attach_phase(p, s.phase_injection)?;
        }
        let threads = match how.ranks {
            Some(_) => fabric.threads(),
            None => threads,
        };
        let bins = Bins {
            series: Default::default(),
            last: fabric.totals().nodes,
            start: fabric.now(),
        };
        Ok(Run {
            s,
            stop: how.stop,
            threads,
            fabric,
            bins,
            dump: None,
            recording: None,
            signal: None,
            stepped: Ok(()),
            started: None,
        })
    }

    /// The fabric, as of the last cycle stepped.
    pub fn fabric(&self) -> &Fabric<V> {
        &self.fabric
    }

    /// The scenario.
    pub fn scenario(&self) -> &'a Scenario {
        self.s
    }

    /// Cycles stepped.
    pub fn now(&self) -> u64 {
        self.fabric.now()
    }

    /// The threads it steps on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Seconds since the first chunk was asked for (0 before).
    pub fn elapsed(&self) -> f64 {
        self.started.map_or(0.0, |t| t.elapsed().as_secs_f64())
    }

    /// Why the run stopped early, once a stop request or a broken invariant has stopped it.
    pub fn stopped(&self) -> Option<Stopped> {
        match (self.signal, &self.stepped) {
            (_, Err(_)) => Some(Stopped::Violation),
            (Some(sig), _) => Some(Stopped::Signal(sig)),
            _ => None,
        }
    }

    /// Dumps the cycles `window` (first and last, inclusive) into `waves`, whose signals are the
    /// fabric's (made with [`crate::trace::fabric_vcd::select`] on it); asked before the first
    /// cycle. [`Ended::waves`] gives it back to be finished.
    pub fn dump(&mut self, waves: FabricWaves, window: (u64, u64)) {
        let tap = waves.tap(&self.fabric);
        self.dump = Some(Dump { waves, tap, window });
    }

    /// [`Run::dump`] continued from a checkpoint whose dump stood at `saved` (the files of
    /// `waves` continued from it too).
    pub fn dump_resumed(
        &mut self,
        waves: FabricWaves,
        saved: &checkpoint::SavedDump,
    ) -> Result<(), String> {
        let tap = waves.tap(&self.fabric);
        tap.set_state(&saved.tap)?;
        self.dump = Some(Dump {
            waves,
            tap,
            window: saved.window,
        });
        Ok(())
    }

    /// Records switch `id`, named `name` in the header, into `file`: the cycles up to `cycles.1`,
    /// compared from `cycles.0` on replay (`docs/recording.md`). Asked before the first cycle;
    /// writes the header.
    pub fn record(
        &mut self,
        id: usize,
        name: &str,
        cycles: (u64, u64),
        file: Box<dyn std::io::Write>,
    ) -> std::io::Result<()> {
        let r = SwitchRecording::start(&mut self.fabric, id, name, cycles, file)?;
        self.recording = Some(r);
        Ok(())
    }

    /// The first pass of a dump triggered by a congestion root: steps window by window until a
    /// switch detects the first root, and returns its cycle; `None` when none is detected by the
    /// end of the run, or when a stop request is seen (a request at a cycle counts cycles of the
    /// run proper: only one for cycle 0 stops this pass).
    pub fn first_root(&mut self) -> Result<Option<u64>, Violation> {
        let mut first = FirstRoot(None);
        // Window by window, the observer records the cycle of the first root exactly; the
        // event engine notes it itself, so it steps whole chunks.
        let chunk = match self.fabric.engine() {
            Engine::Event => CHUNK,
            _ => self.fabric.window(),
        };
        while first.0.is_none() && self.fabric.now() < self.s.sim_cycles {
            if self.stop_requested(0).is_some() {
                return Ok(None);
            }
            let n = chunk.min(self.s.sim_cycles - self.fabric.now());
            self.fabric.run(n, &mut first)?;
            first.0 = first.0.or(self.fabric.first_root().map(|(c, _)| c));
        }
        Ok(first.0)
    }
}

/// Records the cycle of the first congestion root.
struct FirstRoot(Option<u64>);

impl Observer for FirstRoot {
    fn event(&mut self, cycle: u64, _sw: u32, ev: SwitchEvent) {
        if self.0.is_none() && matches!(ev, SwitchEvent::RootDetected { .. }) {
            self.0 = Some(cycle);
        }
    }
}

/// Builds a run of `s` on a fabric sized for its VC lanes, steps it to its end (or to a stop
/// request or a broken invariant) and returns what its outputs are made of.
pub fn run_whole(s: &Scenario, how: &Stepping<'_>) -> Result<Ended, String> {
    crate::with_lanes!(s.params.switch.vcs(), |V| {
        let mut run = Run::<V>::new(s, how)?;
        while run.step_chunk().map_err(|e| e.to_string())? {}
        run.finish().map_err(|e| e.to_string())
    })
}
