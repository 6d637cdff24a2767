//! `arnsim run --checkpoint-every TIME` and `arnsim resume DIR` (`docs/checkpoints.md`): the
//! run's state written into `<out>/checkpoint.bin` every TIME of simulated time and when a signal
//! stops it, and a run continued from the last one, with its own command line, in the folder it
//! was started in, by the build that wrote it; the checkpoint is removed once the run's outputs
//! are complete.

use super::dump::{DumpPlan, flag_cycles};
use super::outputs::{partial_name_of, refuse_overwriting_inputs, resolved};
use super::record::RecordRequest;
use super::run::{How, inputs_of, outputs_of};
use super::{Cli, Command, Failure};
use crate::config::Scenario;
use crate::run::checkpoint::{self, FILE, Header, Loaded, SavedDump};
use crate::run::{Run, Stopped};
use clap::Parser;
use std::path::{Path, PathBuf};

/// Checkpoints asked of `arnsim run`: how often, the command line they continue, and the
/// checkpoint the run continues from, when it is resumed.
pub struct Checkpoints {
    every: String,
    command: Vec<String>,
    resumed: Option<Loaded>,
}

/// The checkpoints of a run given `--checkpoint-every` (`every`), or resumed from `resumed`.
pub fn asked(
    every: Option<String>,
    resumed: Option<Loaded>,
) -> Result<Option<Checkpoints>, String> {
    match (every, resumed) {
        (None, None) => Ok(None),
        (None, Some(l)) => Err(format!(
            "{}: its command line has no --checkpoint-every",
            l.path.display()
        )),
        (Some(every), resumed) => {
            let command = match &resumed {
                Some(l) => l.header.command.clone(),
                None => std::env::args().skip(1).collect(),
            };
            Ok(Some(Checkpoints {
                every,
                command,
                resumed,
            }))
        }
    }
}

/// Checkpoints being taken of a run as it steps.
pub(super) struct Checkpointing {
    /// Cycles between two, and the cycle from which the next is due.
    every: u64,
    next: u64,
    path: PathBuf,
    /// The header of the next (its cycle and dump files set as it is written).
    header: Header,
    resumed: Option<Loaded>,
    /// Temporary dump files of the run continued, removed once a checkpoint no longer needs
    /// them.
    stale: Vec<PathBuf>,
}

/// `arnsim resume DIR`: the run whose checkpoint `DIR` holds, continued.
pub fn resume(dir: &Path) -> Result<(), Failure> {
    let path = resolved(&dir.join(FILE));
    let loaded = checkpoint::read(&path)?;
    let h = &loaded.header;
    if h.build != checkpoint::build_id()? {
        return Err(format!(
            "{}: taken by another build of arnsim (a build steps and lays out its state its own way): resume it with the build that started the run, or start the run again",
            path.display()
        )
        .into());
    }
    std::env::set_current_dir(&h.cwd).map_err(|e| {
        format!(
            "{}: the run was started in {}, which cannot be entered: {e}",
            path.display(),
            h.cwd.display()
        )
    })?;
    let args = std::iter::once("arnsim".to_string()).chain(h.command.iter().cloned());
    let cli = Cli::try_parse_from(args).map_err(|e| {
        format!(
            "{}: its command line ({}) is not one of this build's: {e}",
            path.display(),
            h.command.join(" ")
        )
    })?;
    if !matches!(cli.command, Command::Run { .. }) {
        return Err(format!(
            "{}: its command line ({}) is not an `arnsim run`",
            path.display(),
            h.command.join(" ")
        )
        .into());
    }
    let shown: Vec<String> = h.command.iter().map(|a| shell_quoted(a)).collect();
    crate::outln!(
        "resuming `arnsim {}` at cycle {} of {} (in {})",
        shown.join(" "),
        h.cycle,
        h.cycles,
        h.cwd.display()
    );
    super::run_parsed(cli, Some(loaded))
}

/// `arg` as a shell reads it back: quoted when it holds anything but letters, digits and
/// `_./=:,+-@%`.
fn shell_quoted(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./=:,+-@%".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

impl Checkpoints {
    /// The threads of the run it continues, when resumed.
    pub fn threads(&self) -> Option<usize> {
        self.resumed.as_ref().map(|l| l.header.threads)
    }

    /// Checks the checkpoints asked of a run of `s` into `out` (with the dump `plan` and the
    /// recording `record`, stepped as `how` says), before a file is touched; for a resumed run,
    /// that the checkpoint is of this scenario and inputs, and written in this folder.
    pub(super) fn check(
        self,
        s: &Scenario,
        out: &Path,
        plan: Option<&DumpPlan>,
        record: Option<&RecordRequest>,
        how: &How<'_>,
    ) -> Result<Checkpointing, String> {
        let every = flag_cycles(s, "checkpoint-every", &self.every)?;
        let refused = if every == 0 {
            Some("less than a cycle")
        } else if how.step.ranks.is_some() {
            Some("not on MPI ranks")
        } else if record.is_some() {
            Some("not with --record-switch")
        } else if plan.is_some_and(|p| p.fst.is_some()) {
            Some("not with --fst (an FST cannot be continued; --vcd can)")
        } else {
            None
        };
        if let Some(why) = refused {
            return Err(format!("--checkpoint-every {}: {why}", self.every));
        }
        let path = out.join(FILE);
        refuse_overwriting_inputs(&[("--checkpoint-every", path.clone())], &inputs_of(s))?;
        let inputs = checkpoint::inputs_id(&inputs_of(s), &self.command);
        if let Some(l) = &self.resumed {
            if resolved(&path) != l.path {
                return Err(format!(
                    "{}: the run's output folder is {}, not this one",
                    l.path.display(),
                    out.display()
                ));
            }
            if l.header.inputs != inputs || l.header.cycles != s.sim_cycles {
                return Err(format!(
                    "{}: taken of another scenario: {} changed since it was written",
                    l.path.display(),
                    inputs_of(s)
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        let header = Header {
            build: checkpoint::build_id()?,
            inputs,
            command: self.command,
            cwd: std::env::current_dir().map_err(|e| format!("the current folder: {e}"))?,
            pid: std::process::id(),
            threads: 0,
            lanes: 0,
            cycle: 0,
            cycles: s.sim_cycles,
            dumps: Vec::new(),
        };
        // The temporary files of the run continued (killed, it left them), removed once this
        // run no longer needs them.
        let stale = match &self.resumed {
            Some(l) if l.header.pid != header.pid => outputs_of(out, plan, record)
                .iter()
                .map(|(_, p)| partial_name_of(p, l.header.pid))
                .collect(),
            _ => Vec::new(),
        };
        Ok(Checkpointing {
            every,
            next: every,
            path,
            header,
            stale,
            resumed: self.resumed,
        })
    }
}

impl Checkpointing {
    /// For a resumed run, takes its checkpoint's state into `run` (built anew, not stepped);
    /// returns where its dump stood, and the dump files the checkpoint names.
    #[allow(clippy::type_complexity)]
    pub(super) fn restore<const V: usize>(
        &mut self,
        run: &mut Run<'_, V>,
    ) -> Result<Option<(Option<SavedDump>, Vec<(PathBuf, PathBuf)>)>, String> {
        let Some(l) = self.resumed.take() else {
            return Ok(None);
        };
        let at = |e: String| format!("{}: {e}", l.path.display());
        if l.header.lanes != V || l.header.threads != run.threads() {
            return Err(at(format!(
                "its fabric steps {} VC lanes on {} threads, this one {V} on {}",
                l.header.lanes,
                l.header.threads,
                run.threads()
            )));
        }
        let dump = run.restore(&l.state).map_err(at)?;
        self.next = (run.now() / self.every + 1) * self.every;
        self.stale
            .extend(l.header.dumps.iter().map(|(_, tmp)| tmp.clone()));
        Ok(Some((dump, l.header.dumps)))
    }

    /// After a chunk: writes a checkpoint when one is due, or when a signal has stopped the
    /// run (not at its end, nor after a broken invariant). `dumps`: the dump files being
    /// written, where each goes and its temporary name.
    pub(super) fn after_chunk<const V: usize>(
        &mut self,
        run: &mut Run<'_, V>,
        dumps: &[(PathBuf, PathBuf)],
    ) -> Result<(), String> {
        let now = run.now();
        let due = match run.stopped() {
            Some(Stopped::Signal(_)) => now > 0,
            Some(Stopped::Violation) => false,
            None => now >= self.next && now < run.scenario().sim_cycles,
        };
        if !due {
            return Ok(());
        }
        self.next = (now / self.every + 1) * self.every;
        self.header.cycle = now;
        self.header.threads = run.threads();
        self.header.lanes = V;
        self.header.dumps = dumps.to_vec();
        checkpoint::write(&self.path, &self.header, |w| run.save(w))?;
        self.forget_stale();
        Ok(())
    }

    /// Once the run's outputs are in place: complete, the checkpoint is of no more use.
    pub(super) fn done(mut self, complete: bool) -> Result<(), String> {
        if complete {
            self.forget_stale();
            match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(format!("{}: {e}", self.path.display()));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Removes the temporary dump files of the run continued (its copies are this run's).
    fn forget_stale(&mut self) {
        for p in self.stale.drain(..) {
            let _ = std::fs::remove_file(p);
        }
    }
}
