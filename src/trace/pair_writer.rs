//! The merged dump of a [`Pair`] and its GTKWave save file: one VCD whose top scopes `rust` and
//! `hdl` each hold the paired signals under the hierarchy of their dump (`rust.tb_switch.u_dut.
//! in_flit_desc_i[0]`) and the same interface split per port (`rust.p0.in_flit_desc_i.dlid`,
//! [`port_rows`]); the save file shows, port by port, each row of the Rust model directly above
//! the same row of the Verilated one, named by model, port and signal (`rust/p0/in_flit_vc_i`,
//! `hdl/p0/in_flit_vc_i`).

use super::gtkw::{BIN, DEC, write_group, write_trace, write_view};
use super::vcd_pair::{CUR, Dump, Pair, PortRow, port_rows, slice};
use std::io::{self, Write};
use vcd::{IdCode, Value};

/// The two models, as the top scopes of the merged dump name them.
pub const MODELS: [&str; 2] = ["rust", "hdl"];

/// One signal of the merged dump: where it is, and where its values come from.
struct Out {
    /// Name below the model's scope, levels parted by `.`.
    name: String,
    width: u32,
    /// The dumped signal and the slice of it.
    src: String,
    lsb: u32,
}

/// A scope of the merged dump: its signals (index into the signal list) and sub-scopes, in
/// the order they were added.
#[derive(Default)]
struct Scope {
    vars: Vec<usize>,
    kids: Vec<(String, Scope)>,
}

impl Scope {
    fn add(&mut self, path: &[&str], k: usize) {
        match path {
            [] | [_] => self.vars.push(k),
            [first, rest @ ..] => {
                let i = match self.kids.iter().position(|(n, _)| n == first) {
                    Some(i) => i,
                    None => {
                        self.kids.push((first.to_string(), Scope::default()));
                        self.kids.len() - 1
                    }
                };
                self.kids[i].1.add(rest, k);
            }
        }
    }

    fn declare<W: Write>(
        &self,
        w: &mut vcd::Writer<W>,
        outs: &[Out],
        ids: &mut [Option<IdCode>],
    ) -> io::Result<()> {
        for &k in &self.vars {
            let o = &outs[k];
            let leaf = o.name.rsplit('.').next().unwrap_or(&o.name);
            let index = (o.width > 1).then(|| vcd::ReferenceIndex::Range(o.width as i32 - 1, 0));
            ids[k] = Some(w.add_var(vcd::VarType::Wire, o.width, leaf, index)?);
        }
        for (name, kid) in &self.kids {
            w.add_module(name)?;
            kid.declare(w, outs, ids)?;
            w.upscope()?;
        }
        Ok(())
    }
}

/// The signals of one model's scope: the paired signals as dumped, then the per-port rows.
fn model_signals(pair: &Pair, rows: &[PortRow]) -> Vec<Out> {
    let mut outs: Vec<Out> = pair
        .names
        .iter()
        .map(|(n, w)| Out {
            name: n.clone(),
            width: *w,
            src: n.clone(),
            lsb: 0,
        })
        .collect();
    for r in rows {
        outs.push(Out {
            name: r.name.clone(),
            width: r.width,
            src: r.src.clone(),
            lsb: r.lsb,
        });
    }
    outs
}

/// Writes the merged dump of `pair` to `o`: both models' signals, every change each dump holds
/// (each dump's own window), sliced for the per-port rows.
pub fn write_pair_vcd(o: impl Write, pair: &Pair) -> io::Result<()> {
    let (ports, vcs) = pair.ports_vcs();
    let rows = port_rows(ports, vcs);
    let sigs = model_signals(pair, &rows);
    let mut w = vcd::Writer::new(o);
    w.version("arnsim waves-pair: the Rust cycle engine (rust) and the Verilated switch.sv (hdl)")?;
    w.timescale(1, vcd::TimescaleUnit::PS)?;
    let mut ids: Vec<Vec<Option<IdCode>>> = Vec::new();
    for model in MODELS {
        let mut top = Scope::default();
        for (k, s) in sigs.iter().enumerate() {
            let path: Vec<&str> = s.name.split('.').collect();
            top.add(&path, k);
        }
        let mut model_ids = vec![None; sigs.len()];
        w.add_module(model)?;
        top.declare(&mut w, &sigs, &mut model_ids)?;
        w.upscope()?;
        ids.push(model_ids);
    }
    w.enddefinitions()?;
    // Every change of both models, in time order.
    let mut events: Vec<(u64, IdCode, String)> = Vec::new();
    for (m, dump) in [&pair.rust, &pair.hdl].into_iter().enumerate() {
        for (k, s) in sigs.iter().enumerate() {
            let id = ids[m][k].expect("declared");
            events.extend(changes(dump, s).into_iter().map(|(t, v)| (t, id, v)));
        }
    }
    events.sort_by_key(|e| e.0);
    let mut now = None;
    for (t, id, v) in events {
        if now != Some(t) {
            w.timestamp(t)?;
            now = Some(t);
        }
        let bit = |c: char| match c {
            '0' => Value::V0,
            '1' => Value::V1,
            'z' => Value::Z,
            _ => Value::X,
        };
        if v.len() == 1 {
            w.change_scalar(id, bit(v.chars().next().unwrap_or('x')))?;
        } else {
            w.change_vector(id, v.chars().map(bit))?;
        }
    }
    w.flush()
}

/// The changes of `s` in `dump` (each to a new value).
fn changes(dump: &Dump, s: &Out) -> Vec<(u64, String)> {
    let Some(&(_, slot)) = dump.sigs.get(&s.src) else {
        return Vec::new();
    };
    let mut out: Vec<(u64, String)> = Vec::new();
    for (t, v) in &dump.changes[slot] {
        let v = slice(v, s.lsb, s.width);
        if out.last().is_none_or(|l| l.1 != v) {
            out.push((*t, v.to_string()));
        }
    }
    out
}

/// The name a row shows: model, then the levels of its name parted by `/`
/// (`rust/p0/in_flit_desc_i/dlid`).
pub fn pair_alias(model: &str, name: &str) -> String {
    format!("{model}/{}", name.replace('.', "/"))
}

/// Writes the save file of the merged dump of `pair` named `vcd_name` (the save file
/// `gtkw_name` beside it), opening on `start..end` (times): the clock and the recording cycle of
/// both models, then a group per port and side (`p0 in`, `p0 out`) in which each row of the
/// Rust model sits directly above the same row of the Verilated one. One-bit rows binary, the
/// others (VCs, credits, descriptor and ARN fields) decimal.
pub fn write_pair_gtkw(
    o: &mut dyn Write,
    vcd_name: &str,
    gtkw_name: &str,
    pair: &Pair,
    start: u64,
    end: u64,
) -> io::Result<()> {
    write_view(o, vcd_name, gtkw_name, start, end)?;
    for model in MODELS {
        write_trace(
            o,
            BIN,
            Some(&pair_alias(model, "clk_i")),
            &format!("{model}.clk_i"),
            1,
        )?;
    }
    if pair.names.iter().any(|(n, _)| n == CUR) {
        for model in MODELS {
            write_trace(
                o,
                DEC,
                Some(&pair_alias(model, "cur")),
                &format!("{model}.{CUR}"),
                64,
            )?;
        }
    }
    let (ports, vcs) = pair.ports_vcs();
    let rows = port_rows(ports, vcs);
    let mut group: Option<String> = None;
    for r in rows
        .iter()
        .filter(|r| pair.names.iter().any(|(n, _)| *n == r.src))
    {
        // `p0.in_...` belongs to group `p0 in`.
        let (port, rest) = r.name.split_once('.').unwrap_or((&r.name, ""));
        let side = rest.split('_').next().unwrap_or(rest);
        let g = format!("{port} {side}");
        if group.as_deref() != Some(&g) {
            if let Some(old) = group.take() {
                write_group(o, false, &old)?;
            }
            write_group(o, true, &g)?;
            group = Some(g);
        }
        let flags = if r.width == 1 { BIN } else { DEC };
        for model in MODELS {
            let alias = pair_alias(model, &r.name);
            write_trace(
                o,
                flags,
                Some(&alias),
                &format!("{model}.{}", r.name),
                r.width,
            )?;
        }
    }
    if let Some(old) = group {
        write_group(o, false, &old)?;
    }
    Ok(())
}
