//! HDL cross-check: every block in lockstep against its Verilated SystemVerilog twin.
//!
//! Runs every case of `testbenches/blocks/`: directed cases, at least 1,000,000 seeded random
//! cycles per block, deliberately altered blocks that must be caught, and deliberately altered
//! RTL whose named assertions must fire. A named assertion of the RTL that fails in any other
//! case fails that case, with the assertion's name and cycle. Prints per block the cycles
//! compared, the mismatches and the assertion failures, and exits non-zero on any failure.
//!
//! Environment: `ARNSIM_XCHECK_SCALE` multiplies the random cycle counts (default 1),
//! `ARNSIM_XCHECK_FILTER` keeps the blocks whose name contains it, `ARNSIM_XCHECK_JOBS` sets
//! the number of cases run at once (default: available cores).

mod blocks;
mod harness;

use harness::case::{Case, Expect};
use harness::jobs;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

struct Done {
    case: usize,
    result: Result<harness::Outcome, String>,
}

fn main() {
    let t0 = Instant::now();
    let scale: f64 = std::env::var("ARNSIM_XCHECK_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let filter = std::env::var("ARNSIM_XCHECK_FILTER").unwrap_or_default();
    let threads: usize = std::env::var("ARNSIM_XCHECK_JOBS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let cases: Vec<Case> = blocks::all_cases(scale)
        .into_iter()
        .filter(|c| c.config.block.contains(&filter))
        .collect();

    // Build every HDL configuration once, `threads` at a time.
    let mut configs: Vec<&Case> = Vec::new();
    for c in &cases {
        if !configs.iter().any(|d| d.config.tag() == c.config.tag()) {
            configs.push(c);
        }
    }
    let built = jobs::at_a_time(threads, &configs, |c| {
        let tb = Instant::now();
        let built = c.config.build();
        if built.is_ok() {
            println!(
                "built  {:<40} {:>6.1} s",
                c.config.label(),
                tb.elapsed().as_secs_f64()
            );
        }
        built
    });
    let mut exes: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut failed = 0usize;
    for (c, built) in configs.iter().zip(built) {
        match built {
            Ok(exe) => {
                exes.insert(c.config.tag(), exe);
            }
            Err(e) => {
                eprintln!("{e}");
                println!("0 passed, 1 failed");
                std::process::exit(1);
            }
        }
    }
    let t_build = t0.elapsed();

    // Run the cases, `threads` at a time, longest first.
    let mut order: Vec<usize> = (0..cases.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cases[i].cycles));
    let out_root = jobs::target().join("crosscheck");
    let results = jobs::at_a_time(threads, &order, |&i| {
        let c = &cases[i];
        let exe = &exes[&c.config.tag()];
        c.run(exe, &out_root.join(c.config.tag()).join(c.slug()))
    });
    let mut done: Vec<Done> = order
        .iter()
        .zip(results)
        .map(|(&case, result)| Done { case, result })
        .collect();
    done.sort_by_key(|d| d.case);

    // Report.
    let mut per_block: BTreeMap<&str, (u64, u64, u64, u64)> = BTreeMap::new();
    let mut passed = 0usize;
    for d in &done {
        let c = &cases[d.case];
        let label = c.config.label();
        let entry = per_block.entry(c.config.block).or_default();
        match (&d.result, c.expect) {
            (Err(e), _) => {
                failed += 1;
                println!("FAIL   {label} {}: {e}", c.name);
            }
            (Ok(o), Expect::Assertions(names)) => {
                let missing: Vec<&str> = names
                    .iter()
                    .copied()
                    .filter(|n| !o.assertions.iter().any(|a| a.name == *n))
                    .collect();
                let mut fired: Vec<String> = Vec::new();
                for a in &o.assertions {
                    if !fired
                        .iter()
                        .any(|f| f.starts_with(&format!("assertion {} ", a.name)))
                    {
                        fired.push(a.to_string());
                    }
                }
                if missing.is_empty() {
                    passed += 1;
                    println!(
                        "ok     {label:<32} {:<28} altered RTL caught by its assertions:\n         {}",
                        c.name,
                        fired.join("\n         ")
                    );
                } else {
                    failed += 1;
                    println!(
                        "FAIL   {label} {}: expected assertions {missing:?} to fire; fired: {}",
                        c.name,
                        if fired.is_empty() {
                            "none".to_string()
                        } else {
                            fired.join("; ")
                        }
                    );
                }
            }
            (Ok(o), _) if !o.assertions.is_empty() => {
                failed += 1;
                entry.3 += 1;
                let a = &o.assertions[0];
                println!("FAIL   {label} {}: {a}\n       {}", c.name, a.message);
            }
            (Ok(o), Expect::Agree) => {
                let mismatches = o.mismatch.is_some() as u64;
                entry.0 += o.cycles;
                entry.1 += if c.random { o.cycles } else { 0 };
                entry.2 += mismatches;
                match &o.mismatch {
                    None => {
                        passed += 1;
                        println!(
                            "ok     {label:<32} {:<28} {:>9} cycles  0 mismatches  {:>3} waves agree  {:>6.2} s",
                            c.name,
                            o.cycles,
                            o.wave_signals,
                            o.wall.as_secs_f64()
                        );
                    }
                    Some(m) => {
                        failed += 1;
                        println!("FAIL   {}", harness::mismatch_report(&label, &c.name, m));
                    }
                }
            }
            (Ok(o), Expect::Mismatch(at)) => match &o.mismatch {
                Some(m)
                    if at.is_none_or(|a| a == m.cycle)
                        && m.rust_vcd.exists()
                        && m.hdl_vcd.exists() =>
                {
                    passed += 1;
                    println!(
                        "ok     {label:<32} {:<28} altered block caught:\n       {}",
                        c.name,
                        harness::mismatch_report(&label, &c.name, m).replace('\n', "\n       ")
                    );
                }
                Some(m) => {
                    failed += 1;
                    println!(
                        "FAIL   {label} {}: expected a mismatch at cycle {at:?}, got:\n{}",
                        c.name,
                        harness::mismatch_report(&label, &c.name, m)
                    );
                }
                None => {
                    failed += 1;
                    println!(
                        "FAIL   {label} {}: the altered block was not caught ({} cycles agreed)",
                        c.name, o.cycles
                    );
                }
            },
        }
    }
    // Out-of-range parameters must be rejected at elaboration by the named ASSERT_INIT check.
    for (config, name) in blocks::param_checks()
        .into_iter()
        .filter(|(c, _)| c.block.contains(&filter))
    {
        let label = config.label();
        match config.build() {
            Ok(_) => {
                failed += 1;
                println!("FAIL   {label}: built, although {name} must reject it");
            }
            Err(e) if e.contains(&format!("ASSERT_INIT {name} failed")) => {
                passed += 1;
                println!("ok     {label:<32} rejected at elaboration by {name}");
            }
            Err(e) => {
                failed += 1;
                println!("FAIL   {label}: expected {name} to reject it, got:\n{e}");
            }
        }
    }
    // The wave comparison must be able to fail.
    if let Some(d) = done
        .iter()
        .find(|d| matches!(&d.result, Ok(o) if o.wave_signals > 0))
    {
        let dir = out_root
            .join(cases[d.case].config.tag())
            .join(cases[d.case].slug());
        match harness::waves::self_check(&dir.join("rust.vcd"), &dir.join("hdl.vcd")) {
            Ok(()) => {
                passed += 1;
                println!(
                    "ok     wave comparison catches an altered VCD ({})",
                    dir.display()
                );
            }
            Err(e) => {
                failed += 1;
                println!("FAIL   wave comparison self-check: {e}");
            }
        }
    }
    println!();
    println!(
        "{:<22} {:>16} {:>16} {:>11} {:>18}",
        "block", "cycles compared", "random cycles", "mismatches", "assertion failures"
    );
    for (block, (cycles, random, mismatches, assertions)) in &per_block {
        println!("{block:<22} {cycles:>16} {random:>16} {mismatches:>11} {assertions:>18}");
        if scale >= 1.0 && *random < 1_000_000 {
            failed += 1;
            println!("FAIL   {block}: only {random} random cycles (at least 1,000,000 required)");
        }
    }
    println!(
        "cross-check wall time: {:.1} s (HDL builds {:.1} s)",
        t0.elapsed().as_secs_f64(),
        t_build.as_secs_f64()
    );
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}
