//! The dump of `arnsim run`: its files (VCD, FST or both) and save files reserved under
//! temporary names and their headers written before the first cycle, its window (with
//! `--trigger-before`, from a first pass of the run), a dump continued from a checkpoint, and
//! the files finished once the run is over.

use super::dump::{self, DumpPlan, SaveFile};
use super::outputs::{NewFolders, Staged};
use super::run::How;
use super::run_summary::stop_reason;
use crate::config::Scenario;
use crate::run::checkpoint::SavedDump;
use crate::run::{Ended, Run, Stepping};
use crate::trace::DETECTOR_STATES;
use crate::trace::fabric_fst::FabricFst;
use crate::trace::fabric_vcd::{FabricSignal, FabricVcd, write_fabric_gtkw};
use crate::trace::fabric_waves::FabricWaves;
use std::path::{Path, PathBuf};

/// A dump being written (VCD, FST or both) and its save files, under temporary names (the dump
/// itself is fed by the run).
pub(super) struct Dump {
    plan: DumpPlan,
    chosen: Vec<FabricSignal>,
    /// The dump files, streamed into by the run.
    files: Vec<Staged>,
    /// Each save file, its file and the file of its translate filter for detector states, when
    /// one is dumped.
    saves: Vec<(SaveFile, Staged, Option<Staged>)>,
    /// The cycles dumped, first and last.
    window: (u64, u64),
}

/// The cycles `plan` dumps of `run`: with `--trigger-before`, from a first pass of the run on its
/// engine, threads and ranks (see [`dump::window`]).
pub(super) fn dump_window<const V: usize>(
    run: &Run<'_, V>,
    plan: &DumpPlan,
    how: &How<'_>,
) -> Result<Option<(u64, u64)>, String> {
    let first = Stepping {
        engine: run.fabric().engine(),
        threads: run.threads(),
        ..how.step
    };
    dump::window::<V>(run.scenario(), plan, &first)
}

/// Reserves the dump's files (making their folders, added to `folders`) and writes the headers
/// of the VCD and FST; once its window is known (with `--trigger-before`, from a first pass of
/// the run) has `run` feed them. No dump when no congestion root was detected (said on stdout) or
/// the first pass was stopped (the run then stops before its first cycle).
pub(super) fn start_dump<const V: usize>(
    run: &mut Run<'_, V>,
    plan: DumpPlan,
    chosen: Vec<FabricSignal>,
    folders: &mut NewFolders,
    how: &How<'_>,
) -> Result<Option<Dump>, String> {
    let mut files = Vec::new();
    let (mut vcd, mut fst) = (None, None);
    for (flag, path) in plan.dumps() {
        let named = |e: String| format!("{flag} {e}");
        folders.add(NewFolders::make(path.parent().unwrap_or(Path::new(""))).map_err(named)?);
        let mut file = Staged::open(path).map_err(named)?;
        let on_file = |e: std::io::Error| format!("{}: {e}", path.display());
        match flag {
            "--fst" => fst = Some(FabricFst::new(file.take_file()?, &chosen).map_err(on_file)?),
            _ => vcd = Some(FabricVcd::new(file.take_file()?, &chosen).map_err(on_file)?),
        }
        files.push(file);
    }
    let saves = reserve_saves(&plan, &chosen)?;
    let waves = FabricWaves::new(&chosen, vcd, fst);
    let stop = how.step.stop;
    let Some(window) = dump_window(run, &plan, how)? else {
        if stop.requested(0).is_none() {
            let paths: Vec<_> = plan.dumps().map(|(_, p)| p).collect();
            let earlier = if paths.iter().any(|p| p.exists()) {
                " (a file there is an earlier one, left as it was)"
            } else {
                ""
            };
            let names: Vec<_> = paths.iter().map(|p| p.display().to_string()).collect();
            crate::outln!(
                "no congestion root was detected: nothing to dump; {} not written{earlier}",
                names.join(", ")
            );
        }
        return Ok(None);
    };
    run.dump(waves, window);
    let dump = Dump {
        plan,
        chosen,
        files,
        saves,
        window,
    };
    Ok(Some(dump))
}

/// Finishes the VCD (with a note when the run stopped early) and the FST, and writes their save
/// files and translate filters; returns their files, to be put in place.
pub(super) fn finish_dump(
    s: &Scenario,
    d: Dump,
    waves: FabricWaves,
    e: &Ended,
) -> Result<Vec<Staged>, String> {
    let reached = e.reached;
    let on = |p: &Option<PathBuf>| {
        let p = p.clone().unwrap_or_default();
        move |err: std::io::Error| format!("{}: {err}", p.display())
    };
    if let Some(vcd) = waves.vcd {
        match stop_reason(e) {
            None => vcd.finish().map_err(on(&d.plan.vcd))?,
            Some(why) => vcd
                .finish_early(&format!(
                    "arnsim: the run stopped at cycle {reached} of {} ({why}): no later cycle is dumped",
                    s.sim_cycles
                ))
                .map_err(on(&d.plan.vcd))?,
        }
    }
    if let Some(fst) = waves.fst {
        fst.finish().map_err(on(&d.plan.fst))?;
    }
    let name = |p: &Path| {
        p.file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    // The cycles dumped: the window, up to the last cycle stepped.
    let (from, to) = d.window;
    let last = to.min(reached.saturating_sub(1));
    let mut files = d.files;
    for (sv, mut gtkw_file, states_file) in d.saves {
        let mut g = Vec::new();
        let (dump, gtkw) = (name(&sv.dump), name(&sv.gtkw));
        let states = states_file.as_ref().map(|_| name(&sv.states));
        write_fabric_gtkw(
            &mut g,
            &dump,
            &gtkw,
            states.as_deref(),
            &d.chosen,
            from,
            last,
        )
        .map_err(|err| format!("{}: {err}", sv.gtkw.display()))?;
        gtkw_file.write(&g)?;
        files.push(gtkw_file);
        if let Some(mut f) = states_file {
            f.write(DETECTOR_STATES.as_bytes())?;
            files.push(f);
        }
    }
    Ok(files)
}

/// Reserves the save files of `plan` (and their translate filters for detector states, when one
/// of `chosen` is dumped).
fn reserve_saves(
    plan: &DumpPlan,
    chosen: &[FabricSignal],
) -> Result<Vec<(SaveFile, Staged, Option<Staged>)>, String> {
    let states = chosen.iter().any(|s| s.name.ends_with(".detector_state"));
    let mut saves = Vec::new();
    for sv in &plan.saves {
        let named = |e: String| format!("{} {e}", sv.flag);
        let gtkw = Staged::open(&sv.gtkw).map_err(named)?;
        let filter = match states {
            true => Some(Staged::open(&sv.states).map_err(named)?),
            false => None,
        };
        saves.push((sv.clone(), gtkw, filter));
    }
    Ok(saves)
}

/// The dump of `plan` continued from a checkpoint that left it at `saved`: each dump file's
/// first bytes (from the file `earlier` names for it: the earlier run's temporary file, or the
/// file it put in place), its writer where the checkpoint left it, its window; the save files
/// reserved anew. Only a VCD is continued.
pub(super) fn resume_dump<const V: usize>(
    run: &mut Run<'_, V>,
    plan: DumpPlan,
    chosen: Vec<FabricSignal>,
    folders: &mut NewFolders,
    saved: SavedDump,
    earlier: &[(PathBuf, PathBuf)],
) -> Result<Dump, String> {
    let mut files = Vec::new();
    let mut vcd = None;
    for (flag, path) in plan.dumps() {
        let named = |e: String| format!("{flag} {e}");
        let (Some(state), "--vcd") = (&saved.vcd, flag) else {
            return Err(named(
                "cannot be continued from a checkpoint (it holds where a VCD stood, no other dump)"
                    .into(),
            ));
        };
        let Some((_, tmp)) = earlier.iter().find(|(dest, _)| dest == path) else {
            return Err(named(format!(
                "{}: the checkpoint names no such dump",
                path.display()
            )));
        };
        folders.add(NewFolders::make(path.parent().unwrap_or(Path::new(""))).map_err(named)?);
        let mut file = Staged::resumed(path, tmp, state.bytes).map_err(named)?;
        let on_file = |e: std::io::Error| format!("{}: {e}", path.display());
        vcd = Some(FabricVcd::resume(file.take_file()?, &chosen, state.clone()).map_err(on_file)?);
        files.push(file);
    }
    let saves = reserve_saves(&plan, &chosen)?;
    run.dump_resumed(FabricWaves::new(&chosen, vcd, None), &saved)?;
    Ok(Dump {
        plan,
        chosen,
        files,
        saves,
        window: saved.window,
    })
}

impl Dump {
    /// Each dump file: where it goes, and its temporary name.
    pub(super) fn files(&self) -> Vec<(PathBuf, PathBuf)> {
        self.files
            .iter()
            .map(|f| (f.dest().to_path_buf(), f.tmp().to_path_buf()))
            .collect()
    }
}
