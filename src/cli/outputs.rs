//! How the commands write files: never in place. Each output is written under a temporary name in
//! its own folder, `.<name>.<pid>.partial`, and renamed over `<name>` once it is complete, so a
//! command that fails or is killed leaves every file that existed before it as it was (a killed
//! one leaves its `.partial` files behind, which nothing reads). Also the run's `summary.json`,
//! written and read back with serde.

use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// An output being written under a temporary name beside its destination; dropped without
/// [`Staged::commit`], it removes the temporary file.
#[derive(Debug)]
pub struct Staged {
    tmp: PathBuf,
    dest: PathBuf,
    file: Option<File>,
    committed: bool,
}

/// The temporary name of `dest`: `.<file name>.<pid>.partial` in the same folder.
pub fn partial_name(dest: &Path) -> PathBuf {
    partial_name_of(dest, std::process::id())
}

/// The temporary name of `dest` in process `pid`.
pub fn partial_name_of(dest: &Path, pid: u32) -> PathBuf {
    let name = dest.file_name().unwrap_or_default().to_string_lossy();
    dest.with_file_name(format!(".{name}.{pid}.partial"))
}

impl Staged {
    /// Creates the temporary file of `dest` (its folder must exist): this is where a folder that
    /// cannot be written is found, before any work is done.
    pub fn open(dest: &Path) -> Result<Self, String> {
        if dest.file_name().is_none() {
            return Err(format!("{}: not a file name", dest.display()));
        }
        if dest.is_dir() {
            return Err(format!("{}: is a folder", dest.display()));
        }
        if let Ok(m) = std::fs::symlink_metadata(dest)
            && !m.file_type().is_file()
            && !m.file_type().is_symlink()
        {
            return Err(format!(
                "{}: not a regular file (a device, pipe or socket is never replaced by an output)",
                dest.display()
            ));
        }
        let tmp = partial_name(dest);
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| {
                format!(
                    "{}: cannot write here (its temporary file {}): {e}",
                    dest.display(),
                    tmp.display()
                )
            })?;
        Ok(Staged {
            tmp,
            dest: dest.to_path_buf(),
            file: Some(file),
            committed: false,
        })
    }

    /// An output continued from an earlier run's: the first `bytes` bytes of `earlier` (the
    /// temporary file a killed run left) or, when there is none, of `dest` (put in place by a
    /// run that was stopped), copied under this process's temporary name; the file is
    /// positioned at their end. `earlier` and `dest` are left as they are.
    pub fn resumed(dest: &Path, earlier: &Path, bytes: u64) -> Result<Self, String> {
        let source = if earlier.is_file() { earlier } else { dest };
        if !source.is_file() {
            return Err(format!(
                "{}: the dump the checkpoint continues is gone (neither the stopped run's temporary file {} nor the file itself is there)",
                dest.display(),
                earlier.display()
            ));
        }
        let mut staged = Staged::open(dest)?;
        let on = |e: std::io::Error| format!("{}: {e}", source.display());
        let mut from = File::open(source).map_err(on)?;
        let to = staged.file.as_mut().ok_or("closed")?;
        let copied = std::io::copy(&mut std::io::Read::take(&mut from, bytes), to).map_err(on)?;
        if copied < bytes {
            return Err(format!(
                "{}: holds {copied} bytes, fewer than the {bytes} the checkpoint had written: not the dump it continues",
                source.display()
            ));
        }
        Ok(staged)
    }

    /// Where the output goes when complete.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// The temporary file it is written into.
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// The temporary file, handed over to a writer that streams into it (once).
    pub fn take_file(&mut self) -> Result<File, String> {
        self.file
            .take()
            .ok_or_else(|| format!("{}: already handed over", self.tmp.display()))
    }

    /// Writes the whole content into the temporary file.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        let tmp = self.tmp.display().to_string();
        let f = self.file.as_mut().ok_or_else(|| format!("{tmp}: closed"))?;
        f.write_all(bytes)
            .and_then(|_| f.flush())
            .map_err(|e| format!("{tmp}: {e}"))
    }

    /// Renames the temporary file over the destination.
    pub fn commit(mut self) -> Result<(), String> {
        self.file = None;
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| {
            format!(
                "{}: cannot rename {} into place: {e}",
                self.dest.display(),
                self.tmp.display()
            )
        })?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            self.file = None;
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `dest` through a temporary file, creating the folder when missing.
pub fn write_atomically(dest: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = dest.parent() {
        make_folder(dir)?;
    }
    let mut s = Staged::open(dest)?;
    s.write(bytes)?;
    s.commit()
}

/// Refuses a command whose outputs would replace one of its inputs, or one another: `outputs`
/// are (flag, path) pairs, `inputs` the files read. Spellings and links of one place are one.
pub fn refuse_overwriting_inputs(
    outputs: &[(&str, PathBuf)],
    inputs: &[PathBuf],
) -> Result<(), String> {
    let inputs: Vec<PathBuf> = inputs.iter().map(|p| resolved(p)).collect();
    let mut seen: Vec<(PathBuf, &str, &Path)> = Vec::new();
    for (flag, out) in outputs {
        let r = resolved(out);
        if let Some(i) = inputs.iter().position(|i| *i == r) {
            return Err(format!(
                "{flag} {}: would replace the input {}; give the output another name",
                out.display(),
                inputs[i].display()
            ));
        }
        if let Some((_, other, first)) = seen.iter().find(|(p, ..)| *p == r) {
            return Err(format!(
                "{flag} {}: the same file as the output of {other} ({}); give one of them another name",
                out.display(),
                first.display()
            ));
        }
        seen.push((r, flag, out));
    }
    Ok(())
}

/// `p` made absolute with its symbolic links and `..` resolved as far as it exists (the rest
/// appended as written, `.` and `..` folded), so that two spellings of one place compare equal.
pub fn resolved(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut head = abs.as_path();
    let mut tail = Vec::new();
    loop {
        if let Ok(c) = head.canonicalize() {
            let mut out = c;
            for part in tail.iter().rev() {
                match part {
                    std::path::Component::ParentDir => {
                        out.pop();
                    }
                    std::path::Component::CurDir => {}
                    other => out.push(other.as_os_str()),
                }
            }
            return out;
        }
        match (head.parent(), head.components().next_back()) {
            (Some(up), Some(last)) => {
                tail.push(last);
                head = up;
            }
            _ => return abs,
        }
    }
}

/// Creates `dir` (and its parents) when missing; an error when it is not a folder.
pub fn make_folder(dir: &Path) -> Result<(), String> {
    if dir.as_os_str().is_empty() {
        return Ok(());
    }
    // A file (or a device, pipe or socket) where the folder or one of its parents would go:
    // said so, not as the OS's error.
    if let Some((f, link)) = dir.ancestors().find_map(|p| {
        let m = std::fs::symlink_metadata(p).ok()?;
        (!p.is_dir()).then_some((p, m.file_type().is_symlink()))
    }) {
        let what = if f.is_file() {
            "a file"
        } else if link {
            "a symbolic link to nothing"
        } else {
            "a device, pipe or socket"
        };
        return Err(match f == dir {
            true => format!("{}: {what}, not a folder", dir.display()),
            false => format!("{}: {} is {what}, not a folder", dir.display(), f.display()),
        });
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !dir.is_dir() {
        return Err(format!("{}: not a folder", dir.display()));
    }
    Ok(())
}

/// The folders [`NewFolders::make`] created for a command's outputs. Unless kept, they are removed
/// again when dropped (those still empty), so a command that fails before it has anything to
/// write leaves no folder behind.
#[must_use]
pub struct NewFolders(Vec<PathBuf>);

impl NewFolders {
    /// [`make_folder`], remembering which of `dir` and its parents were missing.
    pub fn make(dir: &Path) -> Result<Self, String> {
        let mut missing = Vec::new();
        let mut p = dir;
        while !p.as_os_str().is_empty() && std::fs::symlink_metadata(p).is_err() {
            missing.push(p.to_path_buf());
            match p.parent() {
                Some(up) => p = up,
                None => break,
            }
        }
        let made = NewFolders(missing);
        make_folder(dir)?;
        Ok(made)
    }

    /// Adds the folders of `later` (made after these, so removed first).
    pub fn add(&mut self, mut later: NewFolders) {
        later.0.append(&mut self.0);
        self.0 = std::mem::take(&mut later.0);
    }

    /// Keeps the folders: the command has started writing into them.
    pub fn keep(mut self) {
        self.0.clear();
    }
}

impl Drop for NewFolders {
    fn drop(&mut self) {
        for d in &self.0 {
            // Deepest first; a folder something was written into stays.
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// `summary.json` of a run: what was run, how far it got, and its counters. Written by
/// `arnsim run` (fields in this order, two-space indented) and read back by `arnsim plot`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Scenario file (or the bundled scenario's path).
    pub file: String,
    /// `--set` overrides, in order.
    pub overrides: Vec<String>,
    /// Seed.
    pub seed: u64,
    /// Routing mode.
    pub routing: String,
    /// Queuing scheme.
    pub queuing: String,
    /// How the switches' outputs arbitrate (`round_robin`, `fcfs`); round robin in a summary
    /// written before the key.
    #[serde(default = "round_robin")]
    pub output_arbitration: String,
    /// Traffic pattern.
    pub traffic: String,
    /// End nodes.
    pub nodes: u32,
    /// Switches.
    pub switches: u64,
    /// Cycles simulated: the cycle the run reached.
    pub simulated_cycles: u64,
    /// The same in microseconds (3 decimals).
    pub simulated_us: f64,
    /// Whether the run simulated every cycle the scenario asks for, without a violated invariant
    /// (a summary of an older version, without the field, counts as complete).
    #[serde(default = "older_is_complete")]
    pub complete: bool,
    /// The cycle the run stopped at, when it did not complete.
    #[serde(default)]
    pub stopped_at_cycle: Option<u64>,
    /// Why it stopped (`SIGINT`, `SIGTERM`, `invariant violated`, ...), when it did not complete.
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Wall-clock time of the run in seconds (3 decimals); differs from run to run.
    pub wall_seconds: f64,
    /// Threads that stepped the fabric.
    pub threads: u64,
    /// The engine that stepped the switches (`event`, `cycle` or `fast`): every output is the
    /// same on each (a summary of an older version, without the field, was stepped by `fast`).
    #[serde(default = "older_engine")]
    pub engine: String,
    /// Packets the sources generated.
    pub packets_generated: u64,
    /// Packets injected into the fabric.
    pub packets_injected: u64,
    /// Packets delivered.
    pub packets_delivered: u64,
    /// Flits injected.
    pub flits_injected: u64,
    /// Flits delivered.
    pub flits_delivered: u64,
    /// Switch traversals: packets whose heads left a switch, summed over the switches (a
    /// delivered packet counts once per switch it crossed; a summary of an older version,
    /// without the field, reads as 0).
    #[serde(default)]
    pub switch_traversals: u64,
    /// Mean network efficiency (6 decimals).
    pub mean_efficiency: f64,
    /// Mean packet latency in microseconds (6 decimals).
    pub mean_latency_us: f64,
    /// Largest packet latency in microseconds (6 decimals).
    pub max_latency_us: f64,
    /// Congestion roots detected.
    pub roots_detected: u64,
    /// ARNs sent by switches.
    pub arns_sent: u64,
    /// ARNs received by switches.
    pub arns_received_by_switches: u64,
    /// ARNs consumed by switches.
    pub arns_consumed: u64,
    /// ARNs received by end nodes.
    pub arns_received_by_nodes: u64,
    /// ARNs consumed by end nodes.
    pub arns_consumed_by_nodes: u64,
    /// Packets adapted by switches.
    pub packets_adapted: u64,
    /// Packets end nodes injected into the AFC.
    pub packets_isolated_by_nodes: u64,
    /// Adapted packets delivered.
    pub packets_delivered_adapted: u64,
    /// FA: adaptive packets sent to their escape route by a switch (absent in other modes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_escaped: Option<u64>,
    /// Packets switch outputs marked with FECN, once per switch that marked one (absent without
    /// FECN marking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_marked_fecn: Option<u64>,
    /// InfiniBand congestion control at the HCAs (absent without `rate_control = "ib_cca"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion_control: Option<CcSummary>,
    /// IEEE 802.1Qau (absent without `rate_control = "qcn"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qcn: Option<QcnSummary>,
    /// A communication phase: its flows (absent without a phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase_flows: Option<u64>,
    /// The phase's flows that ended within the run (absent without a phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase_flows_ended: Option<u64>,
    /// The phase's completion, the last flow's end, in microseconds (3 decimals); null when a
    /// flow did not end within the run (absent without a phase).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub phase_completion_us: Option<Option<f64>>,
    /// `ok`, or the violated invariant.
    pub invariants: String,
    /// The MPI trace the nodes replayed, when they did (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplaySummary>,
}

/// What QCN's congestion and reaction points did in a run (`docs/qcn.md`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QcnSummary {
    /// Congestion notifications the switches' congestion points made.
    pub cnms_made: u64,
    /// Notifications the switches dropped (a port's queue full).
    pub cnms_dropped_by_switches: u64,
    /// Notifications that reached their sources.
    pub cnms_received_by_nodes: u64,
    /// Notifications the sources dropped, every rate limiter slowing another flow.
    pub cnms_dropped_by_nodes: u64,
    /// Snooped AR (absent otherwise): what the congestion tables did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snooped: Option<SnoopSummary>,
}

/// What snooped AR's congestion tables did in a run (`docs/snoop_ar.md`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SnoopSummary {
    /// Notifications the switches kept from their sources, rerouting around the port named.
    pub cnms_absorbed_by_switches: u64,
    /// Notifications lost to a congestion table, its snoop queue full.
    pub snoops_dropped_by_switches: u64,
    /// Packets rerouted off their deterministic port.
    pub packets_rerouted: u64,
    /// Packets that arrived after a later one of their flow and were resequenced (absent under
    /// trace replay, whose packet ids name messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets_resequenced: Option<u64>,
}

/// What the HCAs' congestion control did in a run (`docs/ib_cc.md`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CcSummary {
    /// Data packets that arrived marked with FECN.
    pub fecns_received: u64,
    /// FECNs not answered (the destination's CNP queue full).
    pub fecns_unanswered: u64,
    /// CNPs the destinations sent.
    pub cnps_sent: u64,
    /// CNPs (BECNs) the sources received.
    pub becns_received: u64,
    /// BECNs dropped (every rate limiter of the source slowing another queue pair).
    pub becns_dropped: u64,
}

/// What a trace replay came to: its size, and when each rank finished.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplaySummary {
    /// The trace file.
    pub trace: String,
    /// Ranks.
    pub ranks: u32,
    /// Point-to-point messages (collectives expanded).
    pub messages: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Ranks that finished within the run.
    pub ranks_finished: u32,
    /// Execution time: the last rank's finish, in microseconds (3 decimals); null when a rank
    /// did not finish within the run.
    pub execution_time_us: Option<f64>,
    /// Each rank's finish in microseconds (3 decimals), by rank; null for a rank that did not
    /// finish.
    pub rank_finish_us: Vec<Option<f64>>,
}

/// A field that is present, null or not.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<f64>>, D::Error> {
    Option::<f64>::deserialize(d).map(Some)
}

fn older_is_complete() -> bool {
    true
}

fn older_engine() -> String {
    "fast".to_string()
}

/// `v` rounded to `places` decimals, as the decimal text of that many places reads back: the
/// summary shows the same numbers on every machine and thread count.
pub fn rounded(v: f64, places: usize) -> f64 {
    format!("{v:.places$}").parse().unwrap_or(v)
}

/// The arbitration of a summary that names none.
fn round_robin() -> String {
    "round_robin".to_string()
}

impl Summary {
    /// How a plot names the run: its routing mode and queuing scheme, its output arbitration
    /// when not round robin, and `ib_cca` or `qcn` under source congestion control.
    pub fn label(&self) -> String {
        let mut label = match self.output_arbitration.as_str() {
            "round_robin" | "" => format!("{} + {}", self.routing, self.queuing),
            a => format!("{} + {} + {a}", self.routing, self.queuing),
        };
        if self.congestion_control.is_some() {
            label.push_str(" + ib_cca");
        }
        if self.qcn.is_some() {
            label.push_str(" + qcn");
        }
        label
    }

    /// The JSON text, one field a line, with a final newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Reads a summary; `path` names the file in errors.
    pub fn from_json(path: &str, text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| format!("{path}: {e}"))
    }
}

#[cfg(test)]
mod tests;
