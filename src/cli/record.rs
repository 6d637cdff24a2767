//! `arnsim run --record-switch NAME`: the recording of one switch's ports (`docs/recording.md`),
//! and `arnsim replay FILE`: a recording replayed into the cycle engine, every output compared.

use super::dump::flag_cycles;
use super::outputs::Staged;
use crate::config::Scenario;
use crate::cycle::CycleSwitch;
use crate::cycle::compare::Replay;
use crate::fabric::Fabric;
use crate::trace::recording::{RecordingHeader, RecordingReader, write_frame};
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

/// What `--record-switch`, `--from` and `--to` ask for.
#[derive(Clone, Debug)]
pub struct RecordRequest {
    /// The switch, by its name in the waveforms (`s2_0`).
    pub switch: String,
    /// First cycle compared (a time).
    pub from: Option<String>,
    /// Last cycle recorded (a time).
    pub to: Option<String>,
}

/// A recording being written.
pub struct Recording {
    staged: Staged,
    w: BufWriter<File>,
    to: u64,
    recording: bool,
}

impl Recording {
    /// Checks the request against the scenario and the fabric, reserves `<out>/<NAME>.rec`,
    /// writes the header and starts recording (before the first cycle).
    pub fn start<const V: usize>(
        s: &Scenario,
        req: &RecordRequest,
        fabric: &mut Fabric<V>,
        out: &Path,
    ) -> Result<Self, String> {
        let names = fabric.switch_names();
        let Some(id) = names.iter().position(|n| *n == req.switch) else {
            let some: Vec<&str> = names.iter().take(6).map(|s| s.as_str()).collect();
            return Err(format!(
                "--record-switch {}: no such switch (the fabric's switches are named like {})",
                req.switch,
                some.join(", ")
            ));
        };
        let last = s.sim_cycles.saturating_sub(1);
        let from = req
            .from
            .as_deref()
            .map(|t| flag_cycles(s, "from", t))
            .transpose()?
            .unwrap_or(0);
        let to = req
            .to
            .as_deref()
            .map(|t| flag_cycles(s, "to", t))
            .transpose()?
            .unwrap_or(last)
            .min(last);
        if from > to {
            return Err(format!(
                "--from: cycle {from} is after the last cycle recorded ({to})"
            ));
        }
        let mut staged = Staged::open(&out.join(format!("{}.rec", req.switch)))
            .map_err(|e| format!("--record-switch {e}"))?;
        let mut w = BufWriter::new(staged.take_file()?);
        let header = RecordingHeader::of(&fabric.switches()[id], &req.switch, from, to);
        header
            .write(&mut w)
            .map_err(|e| format!("{}: {e}", staged.dest().display()))?;
        fabric.record(&[id as u32]);
        Ok(Recording {
            staged,
            w,
            to,
            recording: true,
        })
    }

    /// Writes the frames the fabric recorded since the last call; stops recording past `--to`.
    pub fn drain<const V: usize>(&mut self, fabric: &mut Fabric<V>) -> Result<(), String> {
        let (w, to) = (&mut self.w, self.to);
        let mut err = None;
        let _ = fabric.drain_recordings(&mut |_, c, ins, outs| {
            if c <= to
                && err.is_none()
                && let Err(e) = write_frame(w, c, ins, outs)
            {
                err = Some(e);
            }
            Ok(())
        });
        if let Some(e) = err {
            return Err(format!("{}: {e}", self.staged.dest().display()));
        }
        if self.recording && fabric.now() > self.to {
            fabric.stop_recording();
            self.recording = false;
        }
        Ok(())
    }

    /// Closes the recording at the last cycle stepped; the file is renamed into place with the
    /// run's other outputs.
    pub fn finish<const V: usize>(mut self, fabric: &mut Fabric<V>) -> Result<Staged, String> {
        self.drain(fabric)?;
        let end = fabric.now().min(self.to + 1);
        let io = |e: std::io::Error| format!("{}: {e}", self.staged.dest().display());
        writeln!(self.w, "end {end}").map_err(io)?;
        self.w.flush().map_err(io)?;
        Ok(self.staged)
    }
}

/// `arnsim replay FILE`: rebuilds the recorded switch on the cycle engine, drives it with the
/// recorded inputs and compares every output of every cycle with the recorded ones.
pub fn replay(path: &Path) -> Result<(), String> {
    let name = path.display().to_string();
    let f = File::open(path).map_err(|e| format!("{name}: {e}"))?;
    let mut r = RecordingReader::open(&name, BufReader::new(f))?;
    let h = &r.header;
    let sw = CycleSwitch::new(h.params.clone(), h.wiring.clone(), h.lft.clone(), h.seed);
    let (switch, from, to) = (h.name.clone(), h.from, h.to);
    let mut replay = Replay::new(sw);
    let fail = |e: crate::cycle::compare::ReplayError| format!("{name}: switch {switch}: {e}");
    while let Some((c, ins, outs)) = r.next_frame()? {
        replay.check(c, ins, outs).map_err(fail)?;
    }
    let end = r
        .end
        .ok_or_else(|| format!("{name}: the recording has no `end` line (cut short?)"))?;
    replay.idle_until(end).map_err(fail)?;
    println!(
        "{switch}: {} cycles replayed on the cycle engine (compared from cycle {from} to {to}): 0 mismatches",
        replay.cycles()
    );
    Ok(())
}
