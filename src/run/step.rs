//! Stepping a [`Run`]: one chunk at a time (at most [`CHUNK`] cycles, never across the end of a
//! bin), a bin closed at its end, and the end of the run: the bin it stopped in, whether it is
//! complete and why not, the final invariant check, the replay's finish cycles and the totals.

use super::{Bins, CHUNK, Run};
use crate::fabric::{Engine, Fabric, FabricTotals, Violation};
use crate::metrics::Series;
use crate::trace::fabric_waves::FabricWaves;
use std::time::Instant;

/// Why a run ended before its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// A broken invariant stopped the stepping (the deadlock watchdog among them).
    Violation,
    /// A stop request, as this signal makes it.
    Signal(i32),
}

/// An output written while the run steps could not be written.
#[derive(Debug)]
pub enum WriteError {
    /// The dump (its error names the file's format, VCD or FST).
    Dump(std::io::Error),
    /// The switch recording.
    Recording(std::io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Dump(e) => write!(f, "{e}"),
            WriteError::Recording(e) => write!(f, "recording: {e}"),
        }
    }
}

/// What a run's outputs are made of, once it is over.
pub struct Ended {
    /// The bins, the last one cut where the run stopped.
    pub series: Series,
    /// The fabric's counters.
    pub totals: FabricTotals,
    /// Cycles stepped.
    pub reached: u64,
    /// Whether the run reached its end (or its trace replay finished) without a stop request or
    /// a broken invariant.
    pub complete: bool,
    /// Why it stopped early, when it did.
    pub stopped: Option<Stopped>,
    /// The broken invariant that stopped it, or else the final check of every invariant.
    pub invariants: Result<(), Violation>,
    /// With a trace replay, per rank the cycle it finished in (`None`: not within the cycles
    /// stepped).
    pub rank_finishes: Option<Vec<Option<u64>>>,
    /// With a communication phase, per flow the cycle the tail of its last packet arrived in
    /// (`None`: not within the cycles stepped).
    pub phase_ends: Option<Vec<Option<u64>>>,
    /// The engine, the threads (per rank) and the MPI ranks it stepped on.
    pub engine: Engine,
    pub threads: usize,
    pub ranks: usize,
    /// On MPI ranks, what this rank exchanged with the others.
    pub exchanged: Option<crate::fabric::event::Exchanged>,
    /// Seconds of stepping.
    pub wall: f64,
    /// The dump it fed, to be finished (with a note when `stopped`).
    pub waves: Option<FabricWaves>,
}

impl<const V: usize> Run<'_, V> {
    /// Steps one chunk, unless the run is over or a stop request is seen first; `false` once
    /// nothing more will be stepped (end reached, trace replay finished, stop request, broken
    /// invariant). The frames recorded are written after the chunk.
    pub fn step_chunk(&mut self) -> Result<bool, WriteError> {
        let s = self.s;
        if self.signal.is_some()
            || self.stepped.is_err()
            || self.fabric.now() >= s.sim_cycles
            || (s.replay.is_some() && self.fabric.replay_finished())
            || self.phase_over()
        {
            return Ok(false);
        }
        self.started.get_or_insert_with(Instant::now);
        if let Some(sig) = self.stop_requested(self.fabric.now()) {
            self.signal = Some(sig);
            return Ok(false);
        }
        let bin_end = (self.bins.start + s.bin_cycles).min(s.sim_cycles);
        // Cycles in which nothing happens (a rank's compute phase) pass in one stride, up to the
        // dumped window (whose every cycle is sampled).
        let now = self.fabric.now();
        let mut idle = self.fabric.idle_until().saturating_sub(now);
        if let Some(d) = self.dump.as_ref().filter(|d| now <= d.window.1) {
            idle = idle.min(d.window.0.saturating_sub(now));
        }
        let n = (bin_end - now).min(CHUNK.max(idle));
        let stepped = self.step_cycles(n)?;
        if let Some(r) = &mut self.recording {
            r.drain(&mut self.fabric).map_err(WriteError::Recording)?;
        }
        if let Err(v) = stepped {
            self.stepped = Err(v);
            return Ok(false);
        }
        if self.fabric.now() == bin_end {
            self.bins.close(&self.fabric, s.topology.nodes);
        }
        Ok(true)
    }

    /// Whether the run ends here for its phase: every flow of the traffic is a phase flow, every
    /// one has ended, and a statistics bin has just closed (the run stops at the end of the bin
    /// in which the phase completes, whatever engine and chunks step it).
    fn phase_over(&self) -> bool {
        let s = self.s;
        s.phase.is_some()
            && s.flows.iter().all(|f| f.is_empty())
            && self.fabric.now() == self.bins.start
            && self.fabric.now() > 0
            && self.fabric.phase_complete()
    }

    /// The stop request as of cycle `at` (see [`super::Stop::requested`]); on MPI ranks, the
    /// one any rank has seen (the lowest signal number), so that every rank stops at the same
    /// chunk.
    pub(super) fn stop_requested(&self, at: u64) -> Option<i32> {
        let mut sig = [self.stop.requested(at).map(|sig| sig as u64)];
        crate::fabric::ranks::least_of_each(self.fabric.ranks(), &mut sig);
        sig[0].map(|sig| sig as i32)
    }

    /// Steps `n` cycles, feeding the dump when they reach into its window.
    fn step_cycles(&mut self, n: u64) -> Result<Result<(), Violation>, WriteError> {
        let start = self.fabric.now();
        let Some(d) = self
            .dump
            .as_mut()
            .filter(|d| start + n > d.window.0 && start <= d.window.1)
        else {
            return Ok(self.fabric.run(n, &mut ()));
        };
        // Units record the dumped signals at every cycle of a window (no stepping cycle by
        // cycle); the samples are written in cycle order.
        let (from, to) = d.window;
        let mut written = Ok(());
        let waves = &mut d.waves;
        let r = self
            .fabric
            .run_tapped(n, &mut (), &d.tap, &mut |cycles, samples| {
                if written.is_ok() {
                    written = waves.samples(cycles, samples, from, to);
                }
            });
        written.map_err(WriteError::Dump)?;
        Ok(r)
    }

    /// Closes the run: the bin it stopped in, as far as it got; whether it is complete; the
    /// invariants checked once more when stepping broke none; the recording's end. A run
    /// stopped before its first cycle has gathered nothing (see [`Run::stopped`]).
    pub fn finish(mut self) -> Result<Ended, WriteError> {
        let s = self.s;
        let reached = self.fabric.now();
        if reached > self.bins.start {
            self.bins.close(&self.fabric, s.topology.nodes);
        }
        let finished = (s.replay.is_some() && self.fabric.replay_finished()) || self.phase_over();
        let complete =
            self.signal.is_none() && self.stepped.is_ok() && (reached == s.sim_cycles || finished);
        let stopped = self.stopped();
        let invariants = match std::mem::replace(&mut self.stepped, Ok(())) {
            Ok(()) => self.fabric.check(),
            Err(v) => Err(v),
        };
        let wall = self.elapsed();
        if let Some(r) = self.recording.take() {
            r.finish(&mut self.fabric).map_err(WriteError::Recording)?;
        }
        Ok(Ended {
            series: self.bins.series,
            totals: self.fabric.totals(),
            reached,
            complete,
            stopped,
            invariants,
            rank_finishes: rank_finishes(s, &self.fabric),
            phase_ends: s.phase.as_ref().map(|p| self.fabric.phase_ends(p)),
            engine: self.fabric.engine(),
            threads: self.threads,
            ranks: self.fabric.ranks().map_or(1, |r| r.size()),
            exchanged: self.fabric.exchanged(),
            wall,
            waves: self.dump.map(|d| d.waves),
        })
    }
}

impl Bins {
    /// Closes the open bin at the fabric's cycle: efficiency (over `nodes` end nodes) and
    /// latency of what the nodes received since it opened.
    fn close<const V: usize>(&mut self, fabric: &Fabric<V>, nodes: u32) {
        let t = fabric.totals().nodes;
        self.series.push(
            fabric.now(),
            fabric.now() - self.start,
            nodes,
            t.delivered_flits - self.last.delivered_flits,
            t.delivered_packets - self.last.delivered_packets,
            t.latency_sum - self.last.latency_sum,
        );
        self.last = t;
        self.start = fabric.now();
    }
}

/// With a trace replay, per rank of its program the cycle it finished in, if within the cycles
/// stepped.
fn rank_finishes<const V: usize>(
    s: &crate::config::Scenario,
    fabric: &Fabric<V>,
) -> Option<Vec<Option<u64>>> {
    let t = s.replay.as_ref()?;
    let mut finish = vec![None; t.program.ranks() as usize];
    for (_, n) in fabric.local_nodes() {
        for (rank, f) in n
            .replay()
            .map(|r| r.ranks().rank_finishes())
            .into_iter()
            .flatten()
        {
            // A rank whose last compute ends after the cycles stepped has not finished.
            finish[rank as usize] = f.filter(|&at| at < fabric.now());
        }
    }
    crate::fabric::ranks::least_of_each(fabric.ranks(), &mut finish);
    Some(finish)
}
