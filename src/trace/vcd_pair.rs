//! Two dumps of one switch replay, the Rust cycle engine's (`arnsim replay --vcd`) and the
//! Verilated `hdl-ref/switch.sv`'s (`testbenches/hdl/replay_switch.sh -- +vcd=...`), read with the
//! `vcd` crate, paired signal by signal and compared value change by value change.
//!
//! Both dumps are rooted at `TOP`; a signal is named below it (`tb_switch.u_dut.in_credit_i[0][1]`,
//! the bit range left out; a dump rooted elsewhere, such as the merged one, by its full name). Every signal of the Rust dump must be in the Verilated one with the
//! same width (the Verilated dump holds the switch's internals too, which are left out). The
//! pair is compared on the window both dumps cover: for each signal, its value when the window
//! opens and every change within it, a change to the value already held not counted.
//!
//! The port interface is also split per port for viewing ([`port_rows`]): a bit of a `[P-1:0]`
//! vector, an element of an unpacked array, a field of a descriptor or an ARN, each a slice of
//! one dumped signal (`p0.in_flit_desc_i.dlid` is bits 127:112 of `in_flit_desc_i[0]`).

use super::switch_ports::{ARN_FIELDS, DESC_FIELDS};
use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;

/// Where the switch's ports are, below `TOP`.
pub const DUT: &str = "tb_switch.u_dut";

/// The testbench's recording-cycle counter, below `TOP`.
pub const CUR: &str = "tb_switch.cur";

/// One dump: its signals and their value changes.
#[derive(Clone, Debug, Default)]
pub struct Dump {
    /// Signals by name below `TOP` (in full when not rooted there): width and slot in `changes`.
    pub sigs: BTreeMap<String, (u32, usize)>,
    /// Per slot (one per identifier code), the changes: time and bits, most significant first
    /// (`0`, `1`, `x`, `z`), as wide as the signal.
    pub changes: Vec<Vec<(u64, String)>>,
    /// First and last time stamp.
    pub first: u64,
    /// Last time stamp.
    pub last: u64,
    /// The `$timescale`: its number and unit.
    pub timescale: Option<(u32, vcd::TimescaleUnit)>,
}

impl Dump {
    /// The value changes of signal `name` within `from..=to`: its value at `from` (when it has
    /// one), then each change to another value.
    pub fn window(&self, name: &str, from: u64, to: u64) -> Vec<(u64, &str)> {
        let Some(&(_, slot)) = self.sigs.get(name) else {
            return Vec::new();
        };
        let ch = &self.changes[slot];
        let start = ch.partition_point(|c| c.0 <= from);
        let mut out: Vec<(u64, &str)> = Vec::new();
        if start > 0 {
            out.push((from, ch[start - 1].1.as_str()));
        }
        for (t, v) in ch[start..].iter().take_while(|c| c.0 <= to) {
            if out.last().is_none_or(|l| l.1 != v) {
                out.push((*t, v));
            }
        }
        out
    }

    /// The value of `name` at time `t` (the last change at or before it).
    pub fn value_at(&self, name: &str, t: u64) -> Option<&str> {
        let &(_, slot) = self.sigs.get(name)?;
        let ch = &self.changes[slot];
        let k = ch.partition_point(|c| c.0 <= t);
        (k > 0).then(|| ch[k - 1].1.as_str())
    }
}

/// The widest signal compared, in bits (the switch's widest port signal, a flit bus, is some 200).
const MAX_WIDTH: u32 = 4096;

/// Bits of a vector change, `width` wide: a shorter one extended on the left with 0 (or with its
/// leading `x`/`z`), as VCD readers do.
fn bits_of(v: &vcd::Vector, width: u32) -> String {
    let given: String = v.iter().map(|b| b.to_string()).collect();
    let lead = given
        .chars()
        .next()
        .filter(|c| matches!(c, 'x' | 'z'))
        .unwrap_or('0');
    let pad = (width as usize).saturating_sub(given.len());
    let mut s: String = std::iter::repeat_n(lead, pad).collect();
    s.push_str(&given[given.len().saturating_sub(width as usize)..]);
    s
}

/// A parse failure as `file:line: what` (the parser's own errors carry their line; a cut-off
/// file is reported at the line where it ends).
fn parse_error(name: &str, line: u64, e: &std::io::Error) -> String {
    match e
        .get_ref()
        .and_then(|i| i.downcast_ref::<vcd::ParseError>())
    {
        Some(p) => format!("{name}:{}: {}", p.line(), p.kind()),
        None => format!("{name}:{line}: {e}"),
    }
}

/// Reads dump `name`, keeping the changes of the signals `keep` accepts (all without it).
pub fn read_dump(
    name: &str,
    r: impl BufRead,
    keep: Option<&dyn Fn(&str) -> bool>,
) -> Result<Dump, String> {
    let mut p = vcd::Parser::new(r);
    let mut scopes: Vec<String> = Vec::new();
    let mut slots: HashMap<vcd::IdCode, (usize, u32)> = HashMap::new();
    let mut d = Dump::default();
    let mut now: Option<u64> = None;
    let mut kept: Vec<bool> = Vec::new();
    // The name each identifier code was first declared with.
    let mut names: Vec<String> = Vec::new();
    while let Some(cmd) = p.next() {
        let cmd = cmd.map_err(|e| parse_error(name, p.line(), &e))?;
        let line = p.line();
        let at = || format!("{name}:{line}");
        let undeclared = |id: vcd::IdCode| {
            format!(
                "{}: a value change of `{id}`, an identifier code no $var declares",
                at()
            )
        };
        match cmd {
            vcd::Command::ScopeDef(_, s) => scopes.push(s),
            vcd::Command::Upscope => {
                scopes.pop();
            }
            vcd::Command::VarDef(_, width, id, reference, _) => {
                let below = usize::from(scopes.first().is_some_and(|s| s == "TOP"));
                let mut full = scopes[below..].join(".");
                if !full.is_empty() {
                    full.push('.');
                }
                full.push_str(&reference);
                let n = slots.len();
                let (slot, _) = *slots.entry(id).or_insert((n, width));
                if slot == n {
                    d.changes.push(Vec::new());
                    kept.push(false);
                    names.push(full.clone());
                }
                if keep.is_none_or(|k| k(&full)) {
                    if width > MAX_WIDTH {
                        return Err(format!(
                            "{}: `{full}` is declared {width} bits wide; a port signal of the \
                             switch is at most {MAX_WIDTH}",
                            at()
                        ));
                    }
                    kept[slot] = true;
                    d.sigs.insert(full, (width, slot));
                }
            }
            vcd::Command::Timescale(n, unit) => d.timescale = Some((n, unit)),
            vcd::Command::Timestamp(t) => {
                if now.is_none() {
                    d.first = t;
                } else if now.is_some_and(|n| t < n) {
                    return Err(format!(
                        "{}: time #{t} after #{}: time goes back",
                        at(),
                        d.last
                    ));
                }
                now = Some(t);
                d.last = t;
            }
            vcd::Command::ChangeScalar(id, v) => {
                let &(slot, _) = slots.get(&id).ok_or_else(|| undeclared(id))?;
                if let Some(t) = now.filter(|_| kept[slot]) {
                    d.changes[slot].push((t, v.to_string()));
                }
            }
            vcd::Command::ChangeVector(id, v) => {
                let &(slot, width) = slots.get(&id).ok_or_else(|| undeclared(id))?;
                if v.len() > width as usize {
                    return Err(format!(
                        "{}: a value of {} bits for `{}`, declared {width} bits wide",
                        at(),
                        v.len(),
                        names[slot]
                    ));
                }
                if let Some(t) = now.filter(|_| kept[slot]) {
                    d.changes[slot].push((t, bits_of(&v, width)));
                }
            }
            _ => {}
        }
    }
    if now.is_none() {
        return Err(format!("{name}: no time stamp: an empty dump"));
    }
    Ok(d)
}

/// Reads the dump at `path` (see [`read_dump`]).
pub fn read_file(
    path: &std::path::Path,
    keep: Option<&dyn Fn(&str) -> bool>,
) -> Result<Dump, String> {
    let name = path.display().to_string();
    let f = crate::config::text_lines::open_input(path).map_err(|e| format!("{name}: {e}"))?;
    read_dump(&name, std::io::BufReader::new(f), keep)
}

/// The two dumps of one replay, their signals paired by name.
#[derive(Clone, Debug)]
pub struct Pair {
    /// The Rust cycle engine's dump.
    pub rust: Dump,
    /// The Verilated switch's dump, restricted to the signals of the Rust one.
    pub hdl: Dump,
    /// The paired signals, name and width, in name order.
    pub names: Vec<(String, u32)>,
}

/// Pairs the signals of `rust` with those of `hdl`: each must be in both with one width.
pub fn pair(rust: Dump, hdl: Dump) -> Result<Pair, String> {
    // Seconds per tick, compared exactly: n / divisor.
    let tick = |d: &Dump| {
        d.timescale
            .map(|(n, u)| (u128::from(n), u128::from(u.divisor())))
    };
    let same_tick = match (tick(&rust), tick(&hdl)) {
        (Some((a, da)), Some((b, db))) => a * db == b * da,
        (a, b) => a.is_none() && b.is_none(),
    };
    if !same_tick {
        let shown = |d: &Dump| {
            d.timescale
                .map_or("none".to_string(), |(n, u)| format!("{n} {u}"))
        };
        return Err(format!(
            "the dumps' time scales differ: {} in the Rust dump, {} in the Verilated one",
            shown(&rust),
            shown(&hdl)
        ));
    }
    let mut missing = Vec::new();
    let mut names = Vec::new();
    for (n, &(w, _)) in &rust.sigs {
        match hdl.sigs.get(n) {
            Some(&(hw, _)) if hw == w => names.push((n.clone(), w)),
            Some(&(hw, _)) => missing.push(format!(
                "{n} is {w} bits wide in the Rust dump, {hw} in the Verilated one"
            )),
            None => missing.push(format!("{n} ({w} bits) is not in the Verilated dump")),
        }
    }
    if !missing.is_empty() {
        let more = missing.len().saturating_sub(8);
        missing.truncate(8);
        return Err(format!(
            "the dumps do not name the same signals: {}{}",
            missing.join("; "),
            if more > 0 {
                format!(" (and {more} more)")
            } else {
                String::new()
            }
        ));
    }
    if !names.iter().any(|(n, _)| n.starts_with(DUT)) {
        return Err(format!(
            "no signal of {DUT} in the Rust dump: not a switch replay"
        ));
    }
    Ok(Pair { rust, hdl, names })
}

/// A signal whose value changes differ between the models.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// Name below `TOP`.
    pub name: String,
    /// The first time they differ.
    pub time: u64,
    /// The Rust model's value from then (none: no more changes).
    pub rust: Option<String>,
    /// The Verilated model's.
    pub hdl: Option<String>,
}

/// What the comparison of a pair found.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The window both dumps cover (times).
    pub from: u64,
    /// Its end.
    pub to: u64,
    /// Signals compared.
    pub signals: usize,
    /// Those whose changes differ, earliest first.
    pub differences: Vec<Difference>,
}

/// A number of bits as decimal when it has neither `x` nor `z` and fits 128 bits, else as is.
pub fn show(bits: &str) -> String {
    match u128::from_str_radix(bits, 2) {
        Ok(v) if bits.len() <= 128 => v.to_string(),
        _ => format!("b{bits}"),
    }
}

impl Pair {
    /// Compares every paired signal on the window both dumps cover. An error when they cover
    /// no common time, or when the recording cycles (`tb_switch.cur`) at its start differ: the
    /// dumps are then not aligned, and every signal would differ.
    pub fn compare(&self) -> Result<Comparison, String> {
        let from = self.rust.first.max(self.hdl.first);
        let to = self.rust.last.min(self.hdl.last);
        if from > to {
            return Err(format!(
                "the dumps cover no common time: the Rust one {}..{} ps, the Verilated one {}..{} ps",
                self.rust.first, self.rust.last, self.hdl.first, self.hdl.last
            ));
        }
        let (rc, hc) = (self.rust.value_at(CUR, from), self.hdl.value_at(CUR, from));
        if let (Some(r), Some(h)) = (rc, hc)
            && r != h
        {
            return Err(format!(
                "the dumps are not aligned: at {from} ps the Rust dump plays recording cycle {}, the Verilated one {} (the Rust dump expects the Verilated replay to spend one clock cycle in reset and one per LFT entry before recording cycle 0)",
                show(r),
                show(h)
            ));
        }
        let mut differences = Vec::new();
        for (n, _) in &self.names {
            let (r, h) = (self.rust.window(n, from, to), self.hdl.window(n, from, to));
            let k = r.iter().zip(&h).take_while(|(a, b)| a == b).count();
            if k == r.len() && k == h.len() {
                continue;
            }
            let (ra, ha) = (r.get(k), h.get(k));
            let time = ra
                .map_or(u64::MAX, |c| c.0)
                .min(ha.map_or(u64::MAX, |c| c.0));
            differences.push(Difference {
                name: n.clone(),
                time,
                rust: self.rust.value_at(n, time).map(str::to_string),
                hdl: self.hdl.value_at(n, time).map(str::to_string),
            });
        }
        differences.sort_by_key(|d| d.time);
        Ok(Comparison {
            from,
            to,
            signals: self.names.len(),
            differences,
        })
    }

    /// Ports and VCs of the switch (from `in_flit_vc_i[p]` and `in_credit_i[0][v]`).
    pub fn ports_vcs(&self) -> (usize, usize) {
        let count = |prefix: &str| {
            self.names
                .iter()
                .filter(|(n, _)| n.strip_prefix(prefix).is_some_and(|r| !r.contains('.')))
                .count()
        };
        (
            count(&format!("{DUT}.in_flit_vc_i[")),
            count(&format!("{DUT}.in_credit_i[0][")),
        )
    }
}

/// A row of the per-port view: a slice of one dumped signal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortRow {
    /// Its name below the model's scope (`p0.in_flit_desc_i.dlid`).
    pub name: String,
    /// The dumped signal it is cut from, below `TOP`.
    pub src: String,
    /// Lowest bit.
    pub lsb: u32,
    /// Width.
    pub width: u32,
}

/// The per-port rows of a switch of `ports` ports and `vcs` VCs, port by port, the inputs of a
/// port before its outputs, each side in the order of `switch.sv`'s port list: flit valid, VC,
/// head, tail, the descriptor's fields (its flags as the bits `adapted` and `hot`), the credits
/// per VC (`vc<v>`), ARN valid and the ARN's fields.
pub fn port_rows(ports: usize, vcs: usize) -> Vec<PortRow> {
    let mut rows = Vec::new();
    for p in 0..ports {
        for (d, s) in [("in", "i"), ("out", "o")] {
            let mut row = |name: String, src: String, lsb: u32, width: u32| {
                rows.push(PortRow {
                    name: format!("p{p}.{name}"),
                    src: format!("{DUT}.{src}"),
                    lsb,
                    width,
                })
            };
            let sig = |base: &str| format!("{d}_{base}_{s}");
            row(sig("flit_valid"), sig("flit_valid"), p as u32, 1);
            row(sig("flit_vc"), format!("{}[{p}]", sig("flit_vc")), 0, 4);
            row(sig("flit_head"), sig("flit_head"), p as u32, 1);
            row(sig("flit_tail"), sig("flit_tail"), p as u32, 1);
            let desc = format!("{}[{p}]", sig("flit_desc"));
            for (f, lsb, w) in DESC_FIELDS {
                if f == "flags" {
                    row(
                        format!("{}.adapted", sig("flit_desc")),
                        desc.clone(),
                        lsb,
                        1,
                    );
                    row(
                        format!("{}.hot", sig("flit_desc")),
                        desc.clone(),
                        lsb + 1,
                        1,
                    );
                } else {
                    row(format!("{}.{f}", sig("flit_desc")), desc.clone(), lsb, w);
                }
            }
            for v in 0..vcs {
                let src = format!("{}[{p}][{v}]", sig("credit"));
                row(format!("{}.vc{v}", sig("credit")), src, 0, 8);
            }
            row(sig("arn_valid"), sig("arn_valid"), p as u32, 1);
            let arn = format!("{}[{p}]", sig("arn"));
            for (f, lsb, w) in ARN_FIELDS {
                row(format!("{}.{f}", sig("arn")), arn.clone(), lsb, w);
            }
        }
    }
    rows
}

/// The bits `lsb..lsb + width` of `bits` (most significant first).
pub fn slice(bits: &str, lsb: u32, width: u32) -> &str {
    let n = bits.len();
    let (lsb, width) = (lsb as usize, width as usize);
    &bits[n.saturating_sub(lsb + width)..n.saturating_sub(lsb)]
}

#[cfg(test)]
mod tests {
    use super::*;

    const VCD: &str = "$timescale 1ps $end\n$scope module TOP $end\n$var wire 1 ! clk_i $end\n\
$scope module tb_switch $end\n$var wire 8 \" v [7:0] $end\n$var wire 8 \" w [7:0] $end\n\
$upscope $end\n$upscope $end\n$enddefinitions $end\n\
#10\n0!\nb1 \"\n#20\n1!\nbx1 \"\n#30\n0!\nbx1 \"\n#40\nb101 \"\n";

    #[test]
    fn a_dump_reads_as_its_values_extended_and_windowed() {
        let d = read_dump("t", VCD.as_bytes(), None).unwrap();
        assert_eq!((d.first, d.last), (10, 40));
        assert_eq!(
            d.sigs["tb_switch.v"], d.sigs["tb_switch.w"],
            "aliases share changes"
        );
        assert_eq!(d.value_at("tb_switch.v", 15), Some("00000001"));
        assert_eq!(d.value_at("tb_switch.v", 20), Some("xxxxxxx1"));
        assert_eq!(d.value_at("tb_switch.v", 5), None);
        // The value when the window opens, then each change to a new value.
        assert_eq!(
            d.window("tb_switch.v", 15, 40),
            [(15, "00000001"), (20, "xxxxxxx1"), (40, "00000101")]
        );
        assert_eq!(d.window("clk_i", 25, 30), [(25, "1"), (30, "0")]);
        assert_eq!(slice("00000101", 0, 3), "101");
        assert_eq!(slice("00000101", 2, 2), "01");
        assert_eq!(show("00000101"), "5");
        assert_eq!(show("x1"), "bx1");
        let keep = |n: &str| n == "clk_i";
        let k = read_dump("t", VCD.as_bytes(), Some(&keep)).unwrap();
        assert_eq!(k.sigs.len(), 1);
        assert!(
            read_dump(
                "t",
                "$scope module X $end\n$var wire 1 ! a $end\n".as_bytes(),
                None
            )
            .is_err()
        );
        // A signal declared wider than any port signal is refused before a value is read, unless
        // it is not compared.
        let wide = VCD.replace("$var wire 1 ! clk_i", "$var wire 4294967295 ! clk_i");
        let e = read_dump("t", wide.as_bytes(), None).unwrap_err();
        assert!(
            e.contains("`clk_i` is declared 4294967295 bits wide"),
            "{e}"
        );
        let only_v = |n: &str| n == "tb_switch.v";
        assert!(read_dump("t", wide.as_bytes(), Some(&only_v)).is_ok());
        // Time going back is refused; dumps of two time scales are not compared.
        let back = VCD.replace("#40", "#15");
        let e = read_dump("t", back.as_bytes(), None).unwrap_err();
        assert!(
            e.contains("t:19: time #15 after #30: time goes back"),
            "{e}"
        );
        // A change of an identifier no $var declares, or wider than its signal, is refused.
        let stray = VCD.replace("#40\nb101 \"", "#40\nb101 #");
        let e = read_dump("t", stray.as_bytes(), None).unwrap_err();
        assert!(
            e.contains("t:20: a value change of `#`, an identifier code no"),
            "{e}"
        );
        let stray = VCD.replace("#20\n1!", "#20\n1?");
        let e = read_dump("t", stray.as_bytes(), None).unwrap_err();
        assert!(
            e.starts_with("t:14: "),
            "the parser's error at its line: {e}"
        );
        // A dump cut off inside its header names the line where it ends.
        let cut = &VCD[..VCD.find("$upscope").unwrap() + 3];
        let e = read_dump("t", cut.as_bytes(), None).unwrap_err();
        assert!(e.starts_with("t:7: unexpected end of VCD file"), "{e}");
        let wide = VCD.replace("b101 \"", "b101010101 \"");
        let e = read_dump("t", wide.as_bytes(), None).unwrap_err();
        assert!(
            e.contains("t:20: a value of 9 bits for `tb_switch.v`, declared 8"),
            "{e}"
        );
        let ps = || read_dump("t", VCD.as_bytes(), None).unwrap();
        let other = |scale: &str| {
            let text = VCD.replace("$timescale 1ps $end", &format!("$timescale {scale} $end"));
            read_dump("t", text.as_bytes(), None).unwrap()
        };
        let e = pair(ps(), other("1 s")).unwrap_err();
        assert!(
            e.contains("time scales differ: 1 ps in the Rust dump, 1 s"),
            "{e}"
        );
        let e = pair(ps(), other("1000 fs")).unwrap_err();
        assert!(!e.contains("time scales"), "1000 fs is 1 ps: {e}");
    }

    #[test]
    fn port_rows_cut_every_field_of_every_port() {
        let rows = port_rows(2, 3);
        assert_eq!(rows.len(), 2 * 2 * (4 + 11 + 3 + 1 + 5));
        let find = |n: &str| {
            rows.iter()
                .find(|r| r.name == n)
                .unwrap_or_else(|| panic!("{n}"))
        };
        let r = find("p1.in_flit_valid_i");
        assert_eq!(
            (r.src.as_str(), r.lsb, r.width),
            ("tb_switch.u_dut.in_flit_valid_i", 1, 1)
        );
        let r = find("p0.out_flit_desc_o.dlid");
        assert_eq!(
            (r.src.as_str(), r.lsb, r.width),
            ("tb_switch.u_dut.out_flit_desc_o[0]", 112, 16)
        );
        let r = find("p1.in_flit_desc_i.hot");
        assert_eq!((r.lsb, r.width), (169, 1));
        let r = find("p1.out_credit_o.vc2");
        assert_eq!(r.src, "tb_switch.u_dut.out_credit_o[1][2]");
        let r = find("p0.in_arn_i.root_info");
        assert_eq!(
            (r.src.as_str(), r.lsb, r.width),
            ("tb_switch.u_dut.in_arn_i[0]", 64, 8)
        );
    }
}
