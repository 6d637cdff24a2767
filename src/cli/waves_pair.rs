//! `arnsim waves-pair --rust R.vcd --hdl H.vcd --out BOTH.vcd [--check]`: the Rust cycle
//! engine's and the Verilated switch's dumps of one replay window in one GTKWave window (a
//! merged VCD and its save file, `trace::pair_writer`), and their value changes compared signal
//! by signal (`trace::vcd_pair`).

use super::outputs::{Staged, resolved};
use crate::trace::CLOCK_PERIOD_PS;
use crate::trace::pair_writer::{write_pair_gtkw, write_pair_vcd};
use crate::trace::vcd_pair::{CUR, Comparison, Pair, pair, read_file, show};
use std::collections::BTreeSet;
use std::io::BufWriter;
use std::path::Path;

/// The file name of `p`, as a save file names the dump beside it.
fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Reads and pairs the two dumps.
pub fn read_pair(rust: &Path, hdl: &Path) -> Result<Pair, String> {
    let r = read_file(rust, None)?;
    let names: BTreeSet<String> = r.sigs.keys().cloned().collect();
    let keep = |n: &str| names.contains(n);
    let h = read_file(hdl, Some(&keep))?;
    pair(r, h).map_err(|e| format!("{} and {}: {e}", rust.display(), hdl.display()))
}

/// The comparison in words: one line, and a line per differing signal (at most 12).
pub fn report(pair: &Pair, c: &Comparison) -> String {
    let (ports, vcs) = pair.ports_vcs();
    let cycles = |t: u64| {
        pair.rust
            .value_at(CUR, t)
            .map(show)
            .unwrap_or_else(|| "?".into())
    };
    let mut s = format!(
        "{} signals of a {ports}-port {vcs}-VC switch compared from {} ps to {} ps (recording cycles {}..={}): ",
        c.signals,
        c.from,
        c.to,
        cycles(c.from),
        cycles(c.to)
    );
    if c.differences.is_empty() {
        s.push_str("every value change alike");
        return s;
    }
    s.push_str(&format!("{} differ", c.differences.len()));
    for d in c.differences.iter().take(12) {
        let v = |x: &Option<String>| x.as_deref().map_or("none".into(), show);
        s.push_str(&format!(
            "\n  {} from {} ps (recording cycle {}): rust {}, hdl {}",
            d.name,
            d.time,
            cycles(d.time),
            v(&d.rust),
            v(&d.hdl)
        ));
    }
    s
}

/// Merges, compares, and writes `out` with its `.gtkw` beside it. With `check`, a difference
/// is an error and nothing is written.
pub fn run(rust: &Path, hdl: &Path, out: &Path, check: bool) -> Result<(), String> {
    let gtkw = out.with_extension("gtkw");
    if gtkw == out {
        return Err(format!(
            "--out {}: the GTKWave save file beside the pair is named `.gtkw`: give the pair \
             another extension (.vcd)",
            out.display()
        ));
    }
    let inputs = [resolved(rust), resolved(hdl)];
    for (flag, p) in [("--out", out), ("--out's save file", gtkw.as_path())] {
        if inputs.contains(&resolved(p)) {
            return Err(format!(
                "{flag} {}: is one of the dumps read (--rust, --hdl)",
                p.display()
            ));
        }
    }
    // Both outputs can be written, tried before the dumps are read and compared.
    let mut vcd_file = Staged::open(out).map_err(|e| format!("--out {e}"))?;
    let mut gtkw_file = Staged::open(&gtkw).map_err(|e| format!("--out's save file {e}"))?;
    let pair = read_pair(rust, hdl)?;
    let c = pair.compare()?;
    let text = report(&pair, &c);
    if check && !c.differences.is_empty() {
        return Err(format!("waves-pair: {text}"));
    }
    crate::outln!("waves-pair: {text}");
    if rust_window(&pair) != hdl_window(&pair) {
        crate::errln!(
            "arnsim: warning: the dumps cover different windows (rust {:?} ps, hdl {:?} ps): compared on the common one",
            rust_window(&pair),
            hdl_window(&pair)
        );
    }
    write_pair_vcd(BufWriter::new(vcd_file.take_file()?), &pair).map_err(io(out))?;
    let start = pair.rust.first.min(pair.hdl.first);
    let end = pair.rust.last.max(pair.hdl.last) + CLOCK_PERIOD_PS / 2;
    let mut g = Vec::new();
    write_pair_gtkw(
        &mut g,
        &file_name(out),
        &file_name(&gtkw),
        &pair,
        start,
        end,
    )
    .map_err(io(&gtkw))?;
    gtkw_file.write(&g)?;
    vcd_file.commit()?;
    gtkw_file.commit()?;
    crate::outln!(
        "waves-pair: {} and {} written: gtkwave {}",
        out.display(),
        gtkw.display(),
        gtkw.display()
    );
    Ok(())
}

/// An I/O error on `p`, as a message naming the file.
fn io(p: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{}: {e}", p.display())
}

fn rust_window(p: &Pair) -> (u64, u64) {
    (p.rust.first, p.rust.last)
}

fn hdl_window(p: &Pair) -> (u64, u64) {
    (p.hdl.first, p.hdl.last)
}
