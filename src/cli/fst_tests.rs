//! Tests of `arnsim run --fst`: the FST, read back by `wellen` (the reader of the Surfer viewer),
//! holds the names, hierarchy and value changes of the VCD written from the same samples, parsed
//! by the `vcd` crate; its save file; its flags refused by name; a stopped run's FST.

use super::interrupt::{SIGINT, Stop};
use super::run::*;
use super::run_tests::{base, snapshot};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A dump read back: every signal's full name with its range, in declaration order, and its
/// width and value changes (time in ps, bits most significant first).
struct Dumped {
    names: Vec<String>,
    changes: BTreeMap<String, Vec<(u64, String)>>,
}

/// The VCD at `path`, parsed by the `vcd` crate.
fn read_vcd(path: &Path) -> Dumped {
    let text = std::fs::read(path).unwrap();
    let mut scopes: Vec<String> = Vec::new();
    // A code declared in several scopes (an alias) changes under each of its names.
    let mut by_code: BTreeMap<vcd::IdCode, Vec<String>> = BTreeMap::new();
    let mut d = Dumped {
        names: Vec::new(),
        changes: BTreeMap::new(),
    };
    let mut now = 0;
    for c in vcd::Parser::new(&text[..]) {
        let mut change = |code: vcd::IdCode, bits: String| {
            for name in &by_code[&code] {
                d.changes.get_mut(name).unwrap().push((now, bits.clone()));
            }
        };
        match c.unwrap() {
            vcd::Command::ScopeDef(_, s) => scopes.push(s),
            vcd::Command::Upscope => {
                scopes.pop();
            }
            vcd::Command::VarDef(_, _, code, reference, index) => {
                let range = index.map(|i| i.to_string()).unwrap_or_default();
                let name = format!("{}.{reference}{range}", scopes.join("."));
                by_code.entry(code).or_default().push(name.clone());
                d.changes.insert(name.clone(), Vec::new());
                d.names.push(name);
            }
            vcd::Command::Timestamp(t) => now = t,
            vcd::Command::ChangeScalar(code, v) => change(code, v.to_string()),
            vcd::Command::ChangeVector(code, v) => change(code, v.to_string()),
            _ => {}
        }
    }
    d
}

/// The FST at `path`, read by `wellen`; the unknown values every signal has at time 0, before
/// the first sample, are left out (a VCD has no value there).
fn read_fst(path: &Path) -> Dumped {
    let mut w = wellen::simple::read(path).unwrap();
    let h = w.hierarchy();
    let mut refs = Vec::new();
    walk(h, h.items(), &mut refs);
    let vars: Vec<_> = refs
        .iter()
        .map(|&r| {
            let v = &h[r];
            let range = v
                .index()
                .map(|i| format!("[{}:{}]", i.msb(), i.lsb()))
                .unwrap_or_default();
            // `wellen` shows an array's element (`credit_o[1]`) as a child of the array
            // (`credit_o.[1]`); a VCD reader as one name.
            let name = v.full_name(h).replace(".[", "[");
            (format!("{name}{range}"), v.signal_ref())
        })
        .collect();
    let refs: Vec<_> = vars.iter().map(|v| v.1).collect();
    w.load_signals(&refs);
    let times = w.time_table().to_vec();
    let mut d = Dumped {
        names: Vec::new(),
        changes: BTreeMap::new(),
    };
    for (name, r) in vars {
        let sig = w.get_signal(r).unwrap();
        let mut changes = Vec::new();
        for (k, v) in sig.iter_changes() {
            let (t, bits) = (times[k as usize], v.to_bit_string().unwrap());
            if changes.is_empty() && t == 0 && bits.bytes().all(|b| b == b'x') {
                continue;
            }
            changes.push((t, bits));
        }
        d.changes.insert(name.clone(), changes);
        d.names.push(name);
    }
    d
}

/// The variables of `items` and of the scopes among them, depth first in declaration order.
fn walk(
    h: &wellen::Hierarchy,
    items: impl Iterator<Item = wellen::ItemRef>,
    out: &mut Vec<wellen::VarRef>,
) {
    for item in items {
        match item {
            wellen::ItemRef::Scope(s) => walk(h, h[s].items(h), out),
            wellen::ItemRef::Var(v) => out.push(v),
        }
    }
}

/// Asserts the FST holds the VCD's names (in order) and every signal's value changes; returns
/// the changes compared.
pub(super) fn assert_same_waves(vcd: &Path, fst: &Path) -> usize {
    let (v, f) = (read_vcd(vcd), read_fst(fst));
    assert_eq!(v.names, f.names, "names and hierarchy");
    let mut compared = 0;
    for name in &v.names {
        let (a, b) = (&v.changes[name], &f.changes[name]);
        assert!(!a.is_empty(), "{name}: no value in the VCD");
        if let Some(k) = (0..a.len().max(b.len())).find(|&k| a.get(k) != b.get(k)) {
            panic!(
                "{name}: change {k} is {:?} in the VCD, {:?} in the FST",
                a.get(k),
                b.get(k)
            );
        }
        compared += a.len();
    }
    compared
}

fn request(vcd: Option<PathBuf>, fst: Option<PathBuf>, scopes: &[&str]) -> WaveRequest {
    WaveRequest {
        vcd,
        fst,
        scopes: scopes.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn run_with(out: &Path, set: &[&str], w: WaveRequest, stop: &Stop) -> Result<(), super::Failure> {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    run(
        "default",
        Some(out.into()),
        &set,
        Some(w),
        None,
        &How::new(1, stop),
    )
}

#[test]
fn the_fst_holds_the_vcds_names_and_value_changes() {
    let (_tmp, base) = base("fst-same");
    let (vcd, fst) = (base.join("w/f.vcd"), base.join("w/f.fst"));
    let mut w = request(
        Some(vcd.clone()),
        Some(fst.clone()),
        &["fabric.s2_*.out1.*", "fabric.s1_0.*", "fabric.n5.*"],
    );
    (w.from, w.to) = (Some("20us".into()), Some("45us".into()));
    run_with(&base.join("r"), &["sim_time=60us"], w, &Stop::never()).unwrap();
    let n = assert_same_waves(&vcd, &fst);
    // Real content: thousands of changes over the window's 4883 cycles.
    assert!(n > 20_000, "{n} changes");
    // One save file beside both, opening the FST; one translate filter.
    let gtkw = std::fs::read_to_string(base.join("w/f.gtkw")).unwrap();
    assert!(
        gtkw.starts_with("[dumpfile] \"f.fst\"\n[savefile] \"f.gtkw\"\n"),
        "{gtkw}"
    );
    let mut files: Vec<_> = std::fs::read_dir(base.join("w"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["f.fst", "f.gtkw", "f.states.txt", "f.vcd"]);

    // Every signal of the fabric, from cycle 0, and an FST alone: its bytes are the same as
    // beside a VCD, and its save file beside it names it.
    let (vcd, fst) = (base.join("all.vcd"), base.join("alone/all.fst"));
    let w = request(Some(vcd.clone()), Some(base.join("all.fst")), &[]);
    run_with(&base.join("r"), &["sim_time=3us"], w, &Stop::never()).unwrap();
    assert!(assert_same_waves(&vcd, &base.join("all.fst")) > 10_000);
    let w = request(None, Some(fst.clone()), &[]);
    run_with(&base.join("r"), &["sim_time=3us"], w, &Stop::never()).unwrap();
    assert!(std::fs::read(&fst).unwrap() == std::fs::read(base.join("all.fst")).unwrap());
    let gtkw = std::fs::read_to_string(base.join("alone/all.gtkw")).unwrap();
    assert!(gtkw.starts_with("[dumpfile] \"all.fst\"\n"), "{gtkw}");
    assert!(base.join("all.gtkw").is_file(), "the VCD's own save file");
}

/// A stop request ends the FST at the last cycle stepped, as the VCD (whose note the FST has no
/// place for).
#[test]
fn a_stopped_runs_fst_ends_with_its_vcd() {
    let (_tmp, base) = base("fst-stop");
    let (vcd, fst) = (base.join("f.vcd"), base.join("f.fst"));
    let w = request(Some(vcd.clone()), Some(fst.clone()), &["fabric.s2_*.out*"]);
    let e = run_with(
        &base.join("out"),
        &["sim_time=100us"],
        w,
        &Stop::at_cycle(5000, SIGINT),
    )
    .unwrap_err();
    assert_eq!(e.code, 130, "{e:?}");
    assert_same_waves(&vcd, &fst);
    let reached = super::run_tests::summary(&base.join("out")).simulated_cycles;
    assert!((5000..19531).contains(&reached), "{reached}");
    let f = wellen::simple::read(&fst).unwrap();
    let edge = crate::trace::cycle_time_ps(reached);
    assert_eq!(
        f.time_table().last(),
        Some(&(edge + crate::trace::CLOCK_PERIOD_PS / 2))
    );
}

/// Bad `--fst` flags are refused, named, before any file changes.
#[test]
fn bad_fst_flags_are_refused_by_name() {
    let (_tmp, base) = base("fst-bad");
    let out = base.join("out");
    run_with(
        &out,
        &["sim_time=5us"],
        request(None, Some(base.join("ok.fst")), &[]),
        &Stop::never(),
    )
    .unwrap();
    std::fs::write(base.join("keep.fst"), "keep me").unwrap();
    let before = snapshot(&base);
    let fail = |w: WaveRequest| {
        let e = run_with(&out, &["sim_time=5us"], w, &Stop::never()).unwrap_err();
        assert_eq!(snapshot(&base), before, "after: {}", e.message);
        e.message
    };
    let e = fail(request(
        Some(base.join("x.vcd")),
        Some(base.join("x.vcd")),
        &[],
    ));
    assert!(e.starts_with("--fst "), "{e}");
    assert!(e.contains("the same file as --vcd"), "{e}");
    let e = fail(request(None, Some(base.clone()), &[]));
    assert!(e.starts_with("--fst ") && e.contains("is a folder"), "{e}");
    let e = fail(request(None, Some(base.join("x.gtkw")), &[]));
    assert!(
        e.starts_with("--fst ") && e.contains("named `.gtkw`"),
        "{e}"
    );
    let e = fail(request(None, Some(out.join("summary.json")), &[]));
    assert!(
        e.starts_with("--fst ") && e.contains("the same file as the output of --out"),
        "{e}"
    );
    let e = fail(request(
        Some(base.join("keep.vcd")),
        Some(base.join("keep.fst")),
        &["nothing.*"],
    ));
    assert!(e.starts_with("--scope nothing.*"), "{e}");
    // A file in the way of the FST's folder.
    let e = fail(request(None, Some(base.join("keep.fst/sub/f.fst")), &[]));
    assert!(e.starts_with("--fst "), "{e}");
}
