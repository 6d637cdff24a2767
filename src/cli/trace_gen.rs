//! `arnsim trace ptrans|inception|cg|ft`: writes the MPI trace of one of the generated workloads
//! (`replay::workloads`, docs/workloads.md) in the text format of docs/traces.md. Flags out of
//! range are refused by the parser, parameters a trace cannot hold by the generator, both
//! before anything is written; the file is written through a temporary name
//! (`outputs::write_atomically`), so a failure leaves an existing file as it was.

use super::outputs::write_atomically;
use crate::replay::program::{MAX_MESSAGES, check_message_count};
use crate::replay::workloads::inception::MIB;
use crate::replay::workloads::{Cg, Ft, Inception, Ptrans};
use clap::Subcommand;
use std::path::{Path, PathBuf};

/// `arnsim trace` workloads.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum Workload {
    /// HPCC's PTRANS: five transposes of an N x N matrix on a P x Q grid (P <= Q, as square as
    /// the rank count allows: 432 gives 18 x 24), each on a random placement of the ranks.
    Ptrans {
        /// MPI ranks (the grid is P x Q = ranks).
        #[arg(long, default_value_t = 432, value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
        ranks: u32,
        /// Matrix order N.
        #[arg(long, default_value_t = 161_280, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
        n: u64,
        /// Block size NB.
        #[arg(long, default_value_t = 80, value_parser = clap::value_parser!(u64).range(1..=100_000))]
        nb: u64,
        /// Transposes timed (HPCC runs 5).
        #[arg(long, visible_alias = "steps", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
        reps: u32,
        /// Seed of the placements of the ranks on the grid.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The trace file to write.
        #[arg(long)]
        out: PathBuf,
    },
    /// Data-parallel training of Inception-v3: a broadcast of the model, then per step the
    /// forward and backward compute and one ring allreduce per gradient bucket.
    Inception {
        /// MPI ranks (data-parallel workers).
        #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
        ranks: u32,
        /// Training steps.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
        steps: u32,
        /// Images per rank and step.
        #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        batch: u64,
        /// Training throughput of one worker, images per second (128: a P100 at batch 32).
        #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
        images_per_s: u64,
        /// Gradient bucket cap in MiB (PyTorch DDP's `bucket_cap_mb`).
        #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u64).range(1..=4096))]
        bucket_mb: u64,
        /// The trace file to write.
        #[arg(long)]
        out: PathBuf,
    },
    /// NAS CG's communication (NPB 3.x, MPI): per CG iteration the matrix-vector product's
    /// row reduction and transpose exchange, then two dot products. Class D on 128 ranks by
    /// default: 5 sub-phases of 750,000-byte messages.
    Cg {
        /// MPI ranks (a power of two).
        #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(2..=1_048_576))]
        ranks: u32,
        /// Matrix order na (class C 150000, class D 1500000).
        #[arg(long, default_value_t = 1_500_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000_000))]
        na: u64,
        /// CG iterations (NPB runs 25 per outer iteration).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        iterations: u32,
        /// The trace file to write.
        #[arg(long)]
        out: PathBuf,
    },
    /// NAS FT's communication (NPB 3.x, MPI, 1-D layout): one all-to-all transpose per FFT as
    /// ranks - 1 pairwise exchanges. Class C on 128 ranks by default: 127 sub-phases of
    /// 131,072-byte messages.
    Ft {
        /// MPI ranks (a power of two, at most nz).
        #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(2..=1_048_576))]
        ranks: u32,
        /// Grid points along x (class C 512).
        #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        nx: u64,
        /// Grid points along y (class C 512).
        #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        ny: u64,
        /// Grid points along z (class C 512).
        #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        nz: u64,
        /// Transposes (NPB runs one per FFT: 1 + 20 for class C).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        iterations: u32,
        /// The trace file to write.
        #[arg(long)]
        out: PathBuf,
    },
}

/// Builds the workload's trace and writes it to its `--out`; prints what was written.
pub fn run(workload: &Workload) -> Result<(), String> {
    // The output's kind is settled before the trace is built.
    let (Workload::Ptrans { out, .. }
    | Workload::Inception { out, .. }
    | Workload::Cg { out, .. }
    | Workload::Ft { out, .. }) = workload;
    let otf2 = otf2_name(out)?;
    let (what, trace, out) = match *workload {
        Workload::Ptrans {
            ranks,
            n,
            nb,
            reps,
            seed,
            ref out,
        } => {
            let p = Ptrans {
                n,
                nb,
                reps,
                seed,
                ..Ptrans::with_ranks(ranks)
            };
            let what = format!("PTRANS on {} x {}, N = {n}, NB = {nb}", p.p, p.q);
            (what, p.trace(), out)
        }
        Workload::Inception {
            ranks,
            steps,
            batch,
            images_per_s,
            bucket_mb,
            ref out,
        } => {
            let inc = Inception {
                ranks,
                steps,
                batch,
                images_per_s,
                bucket_bytes: bucket_mb * MIB,
            };
            let what = format!("Inception-v3 training, {steps} steps");
            (what, inc.trace(), out)
        }
        Workload::Cg {
            ranks,
            na,
            iterations,
            ref out,
        } => {
            let cg = Cg {
                ranks,
                na,
                iterations,
            };
            let what = format!("NAS CG, na = {na}, {iterations} iterations");
            (what, cg.trace(), out)
        }
        Workload::Ft {
            ranks,
            nx,
            ny,
            nz,
            iterations,
            ref out,
        } => {
            let ft = Ft {
                ranks,
                nx,
                ny,
                nz,
                iterations,
            };
            let what = format!("NAS FT, {nx} x {ny} x {nz}, {iterations} transposes");
            (what, ft.trace(), out)
        }
    };
    let trace = trace.map_err(|e| format!("{}: {e}", out.display()))?;
    let file = out.display().to_string();
    trace.check(&file).map_err(|e| e.to_string())?;
    // Collectives expanded, the messages a run would load.
    check_message_count(&trace, &file).map_err(|_| {
        format!(
            "{file}: the trace would send more than {MAX_MESSAGES} messages once its collectives \
             are expanded, more than a run loads: take fewer ranks or steps"
        )
    })?;
    if otf2 {
        // An OTF2 archive, written through the OTF2 library (never over an existing one).
        crate::replay::otf2::write(&trace, out).map_err(|e| e.to_string())?;
    } else {
        write(out, &trace.to_string())?;
    }
    crate::outln!(
        "{}: {what}: {} ranks, {} operations",
        out.display(),
        trace.ranks,
        trace.ops.len()
    );
    Ok(())
}

/// Whether `--out` names an OTF2 archive's anchor file (`NAME.otf2`, as `traffic.trace` reads
/// it) rather than a text trace; a name ending in `.otf2` in another case is refused, since it
/// would be read back as a text trace.
fn otf2_name(out: &Path) -> Result<bool, String> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if name.ends_with(".otf2") {
        Ok(true)
    } else if name.to_ascii_lowercase().ends_with(".otf2") {
        Err(format!(
            "--out {}: an OTF2 archive is named NAME.otf2, in lower case (a text trace takes \
             another name)",
            out.display()
        ))
    } else {
        Ok(false)
    }
}

fn write(out: &Path, text: &str) -> Result<(), String> {
    if out.is_dir() {
        return Err(format!("{}: is a folder", out.display()));
    }
    write_atomically(out, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::super::{Cli, Command};
    use super::*;
    use clap::Parser;

    fn parse(args: &[&str]) -> Result<Workload, String> {
        let mut all = vec!["arnsim", "trace"];
        all.extend_from_slice(args);
        match Cli::try_parse_from(all).map_err(|e| e.to_string())?.command {
            Command::Trace { workload } => Ok(workload),
            other => panic!("{other:?}"),
        }
    }

    /// Every entry of `d` with its content.
    fn listing(d: &Path) -> Vec<(String, String)> {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                (p.file_name().unwrap().to_string_lossy().into_owned(), text)
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn trace_command_writes_a_loadable_trace_the_same_every_time() {
        let (_tmp, d) = crate::scratch::folder("trace-gen-ok");
        let out = d.join("inc.trace");
        let o = out.to_str().unwrap();
        let args = ["inception", "--ranks", "8", "--steps", "2", "--out", o];
        run(&parse(&args).unwrap()).unwrap();
        let first = std::fs::read_to_string(&out).unwrap();
        let program = crate::replay::load(&first, o).unwrap();
        assert_eq!(program.ranks(), 8);
        run(&parse(&args).unwrap()).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), first);
        let p = d.join("p.trace");
        let pargs = ["ptrans", "--ranks", "12", "--n", "480", "--nb", "8"];
        let mut pargs = pargs.to_vec();
        pargs.extend(["--steps", "2", "--out", p.to_str().unwrap()]);
        run(&parse(&pargs).unwrap()).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        crate::replay::load(&text, "p.trace").unwrap();
        assert!(text.starts_with("ranks 12\n"));
        for (name, args, ranks) in [
            ("cg.trace", ["cg", "--ranks", "32", "--na", "4000"], 32),
            ("ft.trace", ["ft", "--ranks", "16", "--nx", "32"], 16),
        ] {
            let f = d.join(name);
            let mut a = args.to_vec();
            a.extend(["--out", f.to_str().unwrap()]);
            run(&parse(&a).unwrap()).unwrap();
            let text = std::fs::read_to_string(&f).unwrap();
            let program = crate::replay::load(&text, name).unwrap();
            assert_eq!(program.ranks(), ranks, "{name}");
        }
        assert_eq!(listing(&d).len(), 4, "no temporary file left");
    }

    #[test]
    fn trace_command_refuses_bad_flags_and_writes_nothing() {
        let (_tmp, d) = crate::scratch::folder("trace-gen-bad");
        let out = d.join("keep.trace");
        std::fs::write(&out, "ranks 1\n").unwrap();
        let o = out.to_str().unwrap();
        for (args, says) in [
            (vec!["ptrans", "--ranks", "0", "--out", o], "--ranks"),
            (vec!["ptrans", "--nb", "0", "--out", o], "--nb"),
            (vec!["ptrans", "--reps", "x", "--out", o], "--reps"),
            (vec!["inception", "--steps", "0", "--out", o], "--steps"),
            (
                vec!["inception", "--bucket-mb", "5000", "--out", o],
                "--bucket-mb",
            ),
            (vec!["inception", "--ranks", "4"], "--out"),
            (vec!["resnet", "--out", o], "resnet"),
            (vec!["cg", "--ranks", "1", "--out", o], "--ranks"),
            (vec!["ft", "--nz", "0", "--out", o], "--nz"),
        ] {
            let e = parse(&args).unwrap_err();
            assert!(e.contains(says), "{args:?}: {e}");
        }
        // Parsed, but beyond what a trace holds: 2 x 2 ranks swap 52 GB buffers.
        let w = parse(&["ptrans", "--ranks", "4", "--out", o]).unwrap();
        let e = run(&w).unwrap_err();
        assert!(e.contains("choose a smaller N"), "{e}");
        // Parsed, but not a grid NPB runs on.
        let w = parse(&["cg", "--ranks", "96", "--out", o]).unwrap();
        assert!(run(&w).unwrap_err().contains("power of two"));
        let w = parse(&["ft", "--ranks", "256", "--nz", "128", "--out", o]).unwrap();
        assert!(run(&w).unwrap_err().contains("1-D layout"));
        // Parsed, but more messages than a run loads: refused before the trace is built.
        let w = parse(&[
            "inception",
            "--ranks",
            "1048576",
            "--steps",
            "1000",
            "--out",
            o,
        ])
        .unwrap();
        let e = run(&w).unwrap_err();
        assert!(e.contains("more than a trace may hold (67108864)"), "{e}");
        // A folder is never replaced.
        let w = parse(&["inception", "--ranks", "2", "--out", d.to_str().unwrap()]).unwrap();
        assert!(run(&w).unwrap_err().contains("is a folder"));
        assert_eq!(
            listing(&d),
            [("keep.trace".to_string(), "ranks 1\n".to_string())]
        );
    }
}
