//! Switch recordings (`docs/recording.md`): the text file of what one switch of a fabric received
//! and drove on its ports in every cycle, with the parameters and LFT that rebuild it. Written by
//! `arnsim run --record-switch`, read by `arnsim replay` and the HDL replay testbench.

use crate::blocks::LftBanks;
use crate::blocks::lft_banks::NO_ROUTE;
use crate::config::text_lines::{LineError, MAX_LINE, read_line_capped};
use crate::cycle::{LinkFlit, MAX_LINK_VCS, PortIn, PortOut};
use crate::fabric::{Fabric, SwitchUnit};
use crate::switch::{QueuingScheme, RoutingMode, SlToVl, SwitchParams, SwitchWiring};
use crate::wire::{ArnInfo, Packet, PacketFlags};
use std::io::{self, BufRead, Write};

/// First line of every recording.
pub const MAGIC: &str = "arnsim-switch-recording 1";

/// What a recording's header holds: the switch to rebuild and the cycles compared.
#[derive(Clone, Debug)]
pub struct RecordingHeader {
    /// The switch's name in the fabric (`s2_0`).
    pub name: String,
    /// Parameters.
    pub params: SwitchParams,
    /// Position and far-end capacities (channels are not recorded: 0).
    pub wiring: SwitchWiring,
    /// The programmed LFT.
    pub lft: LftBanks,
    /// The fabric's seed.
    pub seed: u64,
    /// First cycle compared.
    pub from: u64,
    /// Last cycle recorded.
    pub to: u64,
}

impl RecordingHeader {
    /// The header of switch `sw`, named `name`, recorded from cycle 0 through `to`, compared from
    /// `from`.
    pub fn of<const V: usize>(sw: &SwitchUnit<V>, name: &str, from: u64, to: u64) -> Self {
        RecordingHeader {
            name: name.to_string(),
            params: sw.params().clone(),
            wiring: sw.wiring().clone(),
            lft: sw.lft().clone(),
            seed: sw.seed(),
            from,
            to,
        }
    }

    /// Writes the header lines.
    /// The programmed LFT entries, `(lid, port)` in LID order: the header's `lft` lines.
    pub fn lft_lines(&self) -> impl Iterator<Item = (usize, u8)> + '_ {
        (0..self.lft.entries()).filter_map(|lid| {
            self.lft
                .entry(lid as u16)
                .filter(|&p| p != NO_ROUTE)
                .map(|p| (lid, p))
        })
    }

    /// How many `lft` and `sl2vl` lines the header has (one clock cycle each in the Verilated
    /// replay, before recording cycle 0).
    pub fn setup_writes(&self) -> usize {
        self.lft_lines().count() + self.wiring.sl_to_vl.entries().count()
    }

    pub fn write(&self, w: &mut impl Write) -> io::Result<()> {
        let (p, wi) = (&self.params, &self.wiring);
        let ports = wi.out_capacity.len();
        let (qvcs, qarg) = match p.queuing {
            QueuingScheme::OneQ => (1, 0),
            QueuingScheme::Dbbm { vcs } => (vcs as u32, 0),
            QueuingScheme::VFtree {
                vcs,
                nodes_per_leaf,
            } => (vcs as u32, nodes_per_leaf),
            QueuingScheme::Flow2Sl { vcs, nodes } => (vcs as u32, nodes),
            QueuingScheme::PathSl { vcs } => (vcs as u32, 0),
        };
        writeln!(w, "{MAGIC}")?;
        writeln!(
            w,
            "switch {} id {} stage {} up_ports {:x} seed {}",
            self.name, wi.id, wi.stage, wi.up_ports, self.seed
        )?;
        writeln!(
            w,
            "param ports {ports} vcs {} vc_capacity {} max_packets {} lmc {} banks {} rows {}",
            p.vcs(),
            p.vc_capacity,
            p.max_packets,
            p.lmc,
            self.lft.banks(),
            self.lft.rows()
        )?;
        writeln!(
            w,
            "param routing {} queuing {} qvcs {qvcs} qarg {qarg}",
            p.routing.name(),
            p.queuing.name()
        )?;
        writeln!(
            w,
            "param arn_entries {} arn_ttl {} arn_gap {} hcdth {} lcdth {} fcth {} crt {} adaptive_threshold {} adapted_refresh {}",
            p.arn_entries,
            p.arn_ttl,
            p.arn_gap,
            p.hcdth,
            p.lcdth,
            p.fcth,
            p.crt,
            p.adaptive_threshold,
            p.adapted_refresh as u8
        )?;
        for (port, cap) in wi.out_capacity.iter().enumerate() {
            writeln!(w, "out_capacity {port} {cap}")?;
        }
        for (lid, port) in self.lft_lines() {
            writeln!(w, "lft {lid} {port}")?;
        }
        for (out, input, sl, vl) in self.wiring.sl_to_vl.entries() {
            writeln!(w, "sl2vl {out} {input} {sl} {vl}")?;
        }
        writeln!(w, "from {} to {}", self.from, self.to)?;
        writeln!(w, "end-header")
    }
}

fn write_flit(w: &mut impl Write, t: u64, side: char, p: usize, f: &LinkFlit) -> io::Result<()> {
    let d = &f.desc;
    writeln!(
        w,
        "{t} {side} {p} F {} {} {} {} {} {} {} {} {} {} {}",
        f.vc,
        f.head as u8,
        f.tail as u8,
        d.injected,
        d.id,
        d.src,
        d.dlid,
        d.len,
        d.sl,
        d.orig_vc,
        d.flags.bits()
    )
}

/// Writes the lines of cycle `t` (nothing for an idle cycle).
pub fn write_frame(w: &mut impl Write, t: u64, ins: &[PortIn], outs: &[PortOut]) -> io::Result<()> {
    for (p, i) in ins.iter().enumerate() {
        if i.flit.valid {
            write_flit(w, t, 'I', p, &i.flit)?;
        }
        for (v, &c) in i.credit.iter().enumerate().filter(|(_, c)| **c != 0) {
            writeln!(w, "{t} I {p} C {v} {c}")?;
        }
        if let Some(a) = i.arn {
            writeln!(
                w,
                "{t} I {p} A {} {} {} {}",
                a.dest, a.vc, a.arn_id, a.root_info
            )?;
        }
    }
    for (p, o) in outs.iter().enumerate() {
        if o.flit.valid {
            write_flit(w, t, 'O', p, &o.flit)?;
        }
        for (v, &c) in o.credit.iter().enumerate().filter(|(_, c)| **c != 0) {
            writeln!(w, "{t} O {p} C {v} {c}")?;
        }
        if let Some(a) = o.arn {
            writeln!(
                w,
                "{t} O {p} A {} {} {} {} {}",
                a.dest, a.port, a.vc, a.arn_id, a.root_info
            )?;
        }
    }
    Ok(())
}

/// Runs `f` from its first cycle for `cycles` cycles, writing into `w` the whole recording of its
/// switch `sw` (header, every cycle, `end`); `each` sees every cycle's frame as it is written.
pub fn record_run<const V: usize>(
    f: &mut Fabric<V>,
    sw: u32,
    cycles: u64,
    w: &mut impl Write,
    mut each: impl FnMut(u64, &[PortIn], &[PortOut]),
) -> Result<RecordingHeader, String> {
    let name = f.switch_names()[sw as usize].clone();
    let header = RecordingHeader::of(
        &f.switches()[sw as usize],
        &name,
        0,
        cycles.saturating_sub(1),
    );
    header.write(w).map_err(|e| e.to_string())?;
    let mut err = Ok(());
    f.run_recorded(cycles, &mut (), &[sw], &mut |_, c, i, o| {
        if err.is_ok() {
            err = write_frame(w, c, i, o);
        }
        each(c, i, o);
        Ok(())
    })
    .map_err(|v| v.to_string())?;
    err.map_err(|e| e.to_string())?;
    writeln!(w, "end {cycles}").map_err(|e| e.to_string())?;
    Ok(header)
}

/// A recording being read: its header, then its cycles one by one.
pub struct RecordingReader<R: BufRead> {
    path: String,
    r: R,
    line: usize,
    /// The header.
    pub header: RecordingHeader,
    pending: Option<(u64, String)>,
    ins: Vec<PortIn>,
    outs: Vec<PortOut>,
    /// The cycle after the last one recorded, once the `end` line is read.
    pub end: Option<u64>,
    /// The last cycle a line was read for.
    last: Option<u64>,
}

/// A field of a line, parsed, or an error naming the file and line.
fn field<T: std::str::FromStr>(
    path: &str,
    line: usize,
    words: &[&str],
    i: usize,
) -> Result<T, String> {
    words.get(i).and_then(|w| w.parse().ok()).ok_or_else(|| {
        format!(
            "{path}:{line}: field {} of `{}` is missing, not a number, or too large for its \
             register",
            i + 1,
            words.join(" ")
        )
    })
}

/// The value after `key` in `words` (`key value` pairs).
fn keyed<T: std::str::FromStr>(
    path: &str,
    line: usize,
    words: &[&str],
    key: &str,
) -> Result<T, String> {
    let i = words
        .iter()
        .position(|w| *w == key)
        .ok_or_else(|| format!("{path}:{line}: key `{key}` is missing"))?;
    let v = words
        .get(i + 1)
        .ok_or_else(|| format!("{path}:{line}: key `{key}` has no value"))?;
    v.parse().map_err(|_| {
        format!("{path}:{line}: key `{key}`: `{v}` is not a number, or too large for its register")
    })
}

impl<R: BufRead> RecordingReader<R> {
    fn next_line(&mut self) -> Result<Option<String>, String> {
        loop {
            let mut s = String::new();
            let at = self.line + 1;
            let n = read_line_capped(&mut self.r, &mut s).map_err(|e| match e {
                LineError::TooLong => format!(
                    "{}:{at}: the line is longer than {MAX_LINE} bytes (not a switch recording)",
                    self.path
                ),
                LineError::Io(e) => format!("{}:{at}: {e}", self.path),
            })?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            let s = s.trim_end().to_string();
            if !s.is_empty() && !s.starts_with('#') {
                return Ok(Some(s));
            }
        }
    }

    /// Reads the header of the recording `path`.
    pub fn open(path: &str, r: R) -> Result<Self, String> {
        let mut me = RecordingReader {
            path: path.to_string(),
            r,
            line: 0,
            header: RecordingHeader {
                name: String::new(),
                params: SwitchParams::with_paper_ratios(RoutingMode::DModK, 1, 1),
                wiring: SwitchWiring {
                    id: 0,
                    stage: 0,
                    up_ports: 0,
                    in_ch: Vec::new(),
                    out_ch: Vec::new(),
                    out_capacity: Vec::new(),
                    sl_to_vl: SlToVl::identity(),
                },
                lft: LftBanks::new(0, 1),
                seed: 0,
                from: 0,
                to: 0,
            },
            pending: None,
            last: None,
            ins: Vec::new(),
            outs: Vec::new(),
            end: None,
        };
        if me.next_line()?.as_deref() != Some(MAGIC) {
            return Err(format!(
                "{path}:1: not a switch recording (the first line must be `{MAGIC}`)"
            ));
        }
        let (mut ports, mut vcs, mut lmc, mut rows) = (0usize, 0usize, 0u32, 0usize);
        let mut lft_lines = Vec::new();
        let mut from_given = false;
        let mut sl2vl_lines = Vec::new();
        // The lines of the `param` lines that size the buffers and set the ARN machinery.
        let (mut size_line, mut arn_line) = (0, 0);
        loop {
            let Some(l) = me.next_line()? else {
                return Err(format!("{path}: the header has no `end-header`"));
            };
            let w: Vec<&str> = l.split(' ').collect();
            let (p, n) = (path, me.line);
            let h = &mut me.header;
            match w[0] {
                "switch" => {
                    h.name = w.get(1).unwrap_or(&"").to_string();
                    h.wiring.id = keyed(p, n, &w, "id")?;
                    h.wiring.stage = keyed(p, n, &w, "stage")?;
                    let up: String = keyed(p, n, &w, "up_ports")?;
                    h.wiring.up_ports = u64::from_str_radix(&up, 16)
                        .map_err(|_| format!("{p}:{n}: key `up_ports`: not a hexadecimal mask"))?;
                    h.seed = keyed(p, n, &w, "seed")?;
                }
                "param" if w.get(1) == Some(&"ports") => {
                    size_line = n;
                    ports = keyed(p, n, &w, "ports")?;
                    vcs = keyed(p, n, &w, "vcs")?;
                    h.params.vc_capacity = keyed(p, n, &w, "vc_capacity")?;
                    h.params.max_packets = keyed(p, n, &w, "max_packets")?;
                    lmc = keyed(p, n, &w, "lmc")?;
                    rows = keyed(p, n, &w, "rows")?;
                    h.params.lmc = lmc;
                }
                "param" if w.get(1) == Some(&"routing") => {
                    let r: String = keyed(p, n, &w, "routing")?;
                    h.params.routing = RoutingMode::ALL
                        .into_iter()
                        .find(|m| m.name() == r)
                        .ok_or_else(|| format!("{p}:{n}: key `routing`: unknown mode `{r}`"))?;
                    let q: String = keyed(p, n, &w, "queuing")?;
                    let qvcs: u8 = keyed(p, n, &w, "qvcs")?;
                    let qarg: u32 = keyed(p, n, &w, "qarg")?;
                    h.params.queuing = match q.as_str() {
                        "1q" => QueuingScheme::OneQ,
                        "dbbm" => QueuingScheme::Dbbm { vcs: qvcs },
                        "vftree" => QueuingScheme::VFtree {
                            vcs: qvcs,
                            nodes_per_leaf: qarg,
                        },
                        "flow2sl" => QueuingScheme::Flow2Sl {
                            vcs: qvcs,
                            nodes: qarg,
                        },
                        "path_sl" => QueuingScheme::PathSl { vcs: qvcs },
                        _ => return Err(format!("{p}:{n}: key `queuing`: unknown scheme `{q}`")),
                    };
                }
                "param" => {
                    arn_line = n;
                    h.params.arn_entries = keyed(p, n, &w, "arn_entries")?;
                    h.params.arn_ttl = keyed(p, n, &w, "arn_ttl")?;
                    h.params.arn_gap = keyed(p, n, &w, "arn_gap")?;
                    h.params.hcdth = keyed(p, n, &w, "hcdth")?;
                    h.params.lcdth = keyed(p, n, &w, "lcdth")?;
                    h.params.fcth = keyed(p, n, &w, "fcth")?;
                    h.params.crt = keyed(p, n, &w, "crt")?;
                    h.params.adaptive_threshold = keyed(p, n, &w, "adaptive_threshold")?;
                    h.params.adapted_refresh = keyed::<u8>(p, n, &w, "adapted_refresh")? == 1;
                }
                "out_capacity" => {
                    let port: usize = field(p, n, &w, 1)?;
                    let cap: u16 = field(p, n, &w, 2)?;
                    if port >= 64 {
                        return Err(format!(
                            "{p}:{n}: out_capacity of port {port} (at most 64 ports)"
                        ));
                    }
                    if cap == 0 {
                        return Err(format!(
                            "{p}:{n}: out_capacity of port {port} is 0 (a VC holds at least one flit)"
                        ));
                    }
                    if h.wiring.out_capacity.len() <= port {
                        h.wiring.out_capacity.resize(port + 1, 0);
                    }
                    h.wiring.out_capacity[port] = cap;
                }
                "lft" => lft_lines.push((field::<u16>(p, n, &w, 1)?, field::<u8>(p, n, &w, 2)?, n)),
                "sl2vl" => sl2vl_lines.push((
                    [
                        field::<u8>(p, n, &w, 1)?,
                        field::<u8>(p, n, &w, 2)?,
                        field::<u8>(p, n, &w, 3)?,
                        field::<u8>(p, n, &w, 4)?,
                    ],
                    n,
                )),
                "from" => {
                    h.from = keyed(p, n, &w, "from")?;
                    h.to = keyed(p, n, &w, "to")?;
                    if h.from > h.to {
                        return Err(format!(
                            "{p}:{n}: `from {} to {}`: the first cycle compared is after the last",
                            h.from, h.to
                        ));
                    }
                    from_given = true;
                }
                "end-header" => break,
                other => return Err(format!("{p}:{n}: unknown header line `{other}`")),
            }
        }
        let h = &mut me.header;
        if !from_given {
            return Err(format!(
                "{path}: the header has no `from` line (the cycles recorded)"
            ));
        }
        if let Some((key, why)) = h.params.out_of_range() {
            let n = match key {
                "vc_capacity" | "max_packets" => size_line,
                _ => arn_line,
            };
            return Err(format!("{path}:{n}: key `{key}`: {why}"));
        }
        if !(1..=64).contains(&ports) || h.wiring.out_capacity.len() != ports {
            return Err(format!(
                "{path}: the header gives {ports} ports and {} out_capacity lines",
                h.wiring.out_capacity.len()
            ));
        }
        if h.params.vcs() != vcs || !(1..=MAX_LINK_VCS).contains(&vcs) {
            return Err(format!(
                "{path}: `vcs {vcs}` does not match the routing mode and queuing scheme"
            ));
        }
        if !crate::blocks::lft_banks::shape_fits(lmc, rows) {
            return Err(format!(
                "{path}: LFT of LMC {lmc} and {rows} rows is outside LMC 0..=4, rows 1..=49152, \
                 rows * 2^LMC <= 65536"
            ));
        }
        h.lft = LftBanks::new(lmc, rows);
        for (lid, port, n) in lft_lines {
            if !h.lft.in_range(lid) {
                return Err(format!("{path}:{n}: LID {lid} is beyond the LFT"));
            }
            if port as usize >= ports && port != NO_ROUTE {
                return Err(format!(
                    "{path}:{n}: `lft {lid} {port}`: port {port} of a {ports}-port switch"
                ));
            }
            h.lft.program(lid, port);
        }
        for ([out, input, sl, vl], n) in sl2vl_lines {
            if out as usize >= ports || input as usize >= ports || sl > 15 || vl as usize >= vcs {
                return Err(format!(
                    "{path}:{n}: `sl2vl {out} {input} {sl} {vl}`: ports below {ports}, SL below \
                     16, VL below the {vcs} VCs"
                ));
            }
            h.wiring
                .sl_to_vl
                .set(ports, out as usize, input as usize, sl, vl);
        }
        h.wiring.in_ch = vec![0; ports];
        h.wiring.out_ch = vec![0; ports];
        me.ins = vec![PortIn::default(); ports];
        me.outs = vec![PortOut::default(); ports];
        Ok(me)
    }

    /// The next recorded cycle: its number, and what the ports received and drove (idle cycles
    /// in between are not returned). `None` at the end.
    #[allow(clippy::type_complexity)]
    pub fn next_frame(&mut self) -> Result<Option<(u64, &[PortIn], &[PortOut])>, String> {
        self.ins.fill(PortIn::default());
        self.outs.fill(PortOut::default());
        let mut cycle = None;
        loop {
            let (t, l) = match self.pending.take() {
                Some(x) => x,
                None => {
                    let Some(l) = self.next_line()? else { break };
                    if let Some(e) = l.strip_prefix("end ") {
                        let end: u64 = e.trim().parse().map_err(|_| {
                            format!(
                                "{}:{}: `end` needs the cycle after the last",
                                self.path, self.line
                            )
                        })?;
                        let at = format!("{}:{}: `end {end}`", self.path, self.line);
                        if end > self.header.to.saturating_add(1) {
                            let to = self.header.to;
                            return Err(format!("{at} is past the header's last cycle ({to})"));
                        }
                        if let Some(c) = self.last.filter(|&c| end <= c) {
                            return Err(format!("{at} is not after the last cycle recorded ({c})"));
                        }
                        if let Some(more) = self.next_line()? {
                            return Err(format!(
                                "{}:{}: `{}` after the `end` line",
                                self.path,
                                self.line,
                                more.split(' ').take(3).collect::<Vec<_>>().join(" ")
                            ));
                        }
                        self.end = Some(end);
                        break;
                    }
                    let t = l
                        .split(' ')
                        .next()
                        .and_then(|w| w.parse().ok())
                        .ok_or_else(|| {
                            format!(
                                "{}:{}: a line must start with its cycle",
                                self.path, self.line
                            )
                        })?;
                    if t > self.header.to {
                        return Err(format!(
                            "{}:{}: cycle {t} is after the last cycle the header gives ({})",
                            self.path, self.line, self.header.to
                        ));
                    }
                    self.last = Some(t);
                    (t, l)
                }
            };
            match cycle {
                None => cycle = Some(t),
                Some(c) if c != t => {
                    if t < c {
                        return Err(format!(
                            "{}:{}: cycle {t} after cycle {c}",
                            self.path, self.line
                        ));
                    }
                    self.pending = Some((t, l));
                    break;
                }
                _ => {}
            }
            self.parse_line(&l)?;
        }
        Ok(cycle.map(|c| (c, &self.ins[..], &self.outs[..])))
    }

    fn parse_line(&mut self, l: &str) -> Result<(), String> {
        let (path, n) = (self.path.as_str(), self.line);
        let w: Vec<&str> = l.split(' ').collect();
        let p: usize = field(path, n, &w, 2)?;
        if p >= self.ins.len() {
            return Err(format!(
                "{path}:{n}: port {p} of a {}-port switch",
                self.ins.len()
            ));
        }
        let f = |i| field::<u64>(path, n, &w, i);
        let input = match w.get(1) {
            Some(&"I") => true,
            Some(&"O") => false,
            _ => return Err(format!("{path}:{n}: the side must be `I` or `O`")),
        };
        match w.get(3) {
            Some(&"F") => {
                let flit = LinkFlit {
                    valid: true,
                    vc: f(4)? as u8,
                    head: f(5)? == 1,
                    tail: f(6)? == 1,
                    desc: Packet {
                        injected: f(7)?,
                        id: f(8)? as u32,
                        src: f(9)? as u16,
                        dlid: f(10)? as u16,
                        len: f(11)? as u16,
                        sl: f(12)? as u8,
                        vc: if f(5)? == 1 { f(4)? as u8 } else { 0 },
                        orig_vc: f(13)? as u8,
                        flags: PacketFlags::from_bits_truncate(f(14)? as u8),
                    },
                };
                if input {
                    self.ins[p].flit = flit;
                } else {
                    self.outs[p].flit = flit;
                }
            }
            Some(&"C") => {
                let v = f(4)? as usize;
                if v >= MAX_LINK_VCS {
                    return Err(format!("{path}:{n}: VC {v} (at most {MAX_LINK_VCS})"));
                }
                let c = f(5)? as u8;
                if input {
                    self.ins[p].credit[v] = c;
                } else {
                    self.outs[p].credit[v] = c;
                }
            }
            Some(&"A") if input => {
                self.ins[p].arn = Some(ArnInfo {
                    dest: f(4)? as u16,
                    port: 0,
                    vc: f(5)? as u8,
                    arn_id: f(6)? as u32,
                    root_info: f(7)? as u8,
                });
            }
            Some(&"A") => {
                self.outs[p].arn = Some(ArnInfo {
                    dest: f(4)? as u16,
                    port: f(5)? as u8,
                    vc: f(6)? as u8,
                    arn_id: f(7)? as u32,
                    root_info: f(8)? as u8,
                });
            }
            _ => return Err(format!("{path}:{n}: the kind must be `F`, `C` or `A`")),
        }
        Ok(())
    }
}
