//! Compares the Rust VCD with the Verilator VCD of the same case, signal by signal.
//!
//! Every signal the Rust side dumps must exist in the HDL dump under the same hierarchical name
//! (`TOP.tb_<block>.u_dut.<name>`) and go through the same values at the same times. The interval
//! before the reset edge is not compared: the registers hold no defined value there (the Rust dump
//! shows `x`).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use vcd::{Command, IdCode, Value};

/// Value changes of every signal, by hierarchical name.
type Waves = BTreeMap<String, Vec<(u64, Option<u128>)>>;

fn load(path: &Path) -> Result<Waves, String> {
    let f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let parser = vcd::Parser::new(BufReader::new(f));
    let mut scopes: Vec<String> = Vec::new();
    let mut names: BTreeMap<IdCode, Vec<String>> = BTreeMap::new();
    let mut waves = Waves::new();
    let mut now = 0u64;
    let to_u128 = |bits: &mut dyn Iterator<Item = Value>| -> Option<u128> {
        let mut v = 0u128;
        for b in bits {
            v = (v << 1)
                | match b {
                    Value::V0 => 0,
                    Value::V1 => 1,
                    _ => return None,
                };
        }
        Some(v)
    };
    for cmd in parser {
        let cmd = cmd.map_err(|e| format!("{}: {e}", path.display()))?;
        let (code, value) = match cmd {
            Command::ScopeDef(_, name) => {
                scopes.push(name);
                continue;
            }
            Command::Upscope => {
                scopes.pop();
                continue;
            }
            Command::VarDef(_, _, code, reference, _) => {
                let mut full = scopes.join(".");
                full.push('.');
                full.push_str(&reference);
                names.entry(code).or_default().push(full);
                continue;
            }
            Command::Timestamp(t) => {
                now = t;
                continue;
            }
            Command::ChangeScalar(code, v) => (code, to_u128(&mut std::iter::once(v))),
            Command::ChangeVector(code, v) => (code, to_u128(&mut v.iter())),
            _ => continue,
        };
        for name in names.get(&code).into_iter().flatten() {
            let w = waves.entry(name.clone()).or_default();
            if w.last().map(|&(_, last)| last) != Some(value) {
                w.push((now, value));
            }
        }
    }
    Ok(waves)
}

/// The changes of one signal seen from time `from` on: its value at `from`, then later changes.
fn from_time(w: &[(u64, Option<u128>)], from: u64) -> Vec<(u64, Option<u128>)> {
    let mut out = Vec::new();
    let at = w.iter().rev().find(|&&(t, _)| t <= from).map(|&(_, v)| v);
    if let Some(v) = at {
        out.push((from, v));
    }
    for &(t, v) in w.iter().filter(|&&(t, _)| t > from) {
        if out.last().map(|&(_, last)| last) != Some(v) {
            out.push((t, v));
        }
    }
    out
}

/// Checks that every signal of `rust` has the same waveform in `hdl` from time `from` on.
/// Returns the number of signals compared.
pub fn compare_vcds(rust: &Path, hdl: &Path, from: u64) -> Result<usize, String> {
    let r = load(rust)?;
    let h = load(hdl)?;
    let show = |v: Option<u128>| v.map_or("x".to_string(), |v| format!("{v:x}"));
    for (name, rw) in &r {
        let Some(hw) = h.get(name) else {
            return Err(format!(
                "VCD signal {name} is in {} but not in {}",
                rust.display(),
                hdl.display()
            ));
        };
        let a = from_time(rw, from);
        let b = from_time(hw, from);
        if a != b {
            let k = a
                .iter()
                .zip(&b)
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len()));
            let (ta, va) = a.get(k).map_or((u64::MAX, None), |&(t, v)| (t, v));
            let (tb, vb) = b.get(k).map_or((u64::MAX, None), |&(t, v)| (t, v));
            return Err(format!(
                "VCDs differ on {name}: rust changes to {} at {ta} ps, hdl to {} at {tb} ps",
                show(va),
                show(vb)
            ));
        }
    }
    Ok(r.len())
}

/// Shows that the comparison can fail: a copy of `rust` with one extra value change on the last
/// declared signal must be reported as different from `hdl`.
pub fn self_check(rust: &Path, hdl: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(rust).map_err(|e| format!("{}: {e}", rust.display()))?;
    let last_var = text
        .lines()
        .rfind(|l| l.trim_start().starts_with("$var"))
        .ok_or("no $var in VCD")?;
    let f: Vec<&str> = last_var.split_whitespace().collect();
    let (width, code) = (f[2].parse::<usize>().map_err(|e| e.to_string())?, f[3]);
    let last_time = text
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .filter_map(|t| t.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    let change = if width == 1 {
        format!("x{code}")
    } else {
        format!("b{} {code}", "x".repeat(width))
    };
    let altered = rust.with_extension("altered.vcd");
    std::fs::write(&altered, format!("{text}#{}\n{change}\n", last_time + 1))
        .map_err(|e| format!("{}: {e}", altered.display()))?;
    let r = compare_vcds(&altered, hdl, 0);
    let _ = std::fs::remove_file(&altered);
    match r {
        Err(_) => Ok(()),
        Ok(n) => Err(format!(
            "an altered VCD passed the comparison ({n} signals)"
        )),
    }
}
