//! Reading a switch recording's header (`docs/recording.md`): the parameters, wiring, LFT and
//! SL-to-VL tables that rebuild the switch. A value outside its register, a key unknown or given
//! twice, a line given twice or missing, or sizes that disagree are refused with file and line.

use super::reader::{field, field_count};
use super::{MAGIC, RecordingHeader, RecordingReader};
use crate::blocks::LftBanks;
use crate::blocks::lft_banks::NO_ROUTE;
use crate::cycle::{MAX_LINK_VCS, PortIn, PortOut};
use crate::switch::{QueuingScheme, RoutingMode, SlToVl, SwitchParams, SwitchWiring};
use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::str::FromStr;

/// The value after `key` in `words` (`key value` pairs).
fn keyed<T: FromStr>(path: &str, line: usize, words: &[&str], key: &str) -> Result<T, String> {
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

/// `words[skip..]` are `key value` pairs of the keys `known`, each once.
fn known_keys(
    path: &str,
    line: usize,
    words: &[&str],
    skip: usize,
    known: &[&str],
) -> Result<(), String> {
    let mut seen = HashSet::new();
    for pair in words[skip.min(words.len())..].chunks(2) {
        let key = pair[0];
        if !known.contains(&key) {
            return Err(format!(
                "{path}:{line}: `{key}` is not a key of this line (its keys: {})",
                known.join(" ")
            ));
        }
        if !seen.insert(key) {
            return Err(format!("{path}:{line}: key `{key}` given twice"));
        }
    }
    Ok(())
}

/// Records that the header line `kind` (or entry) was read on line `n`; a second one is refused.
fn once<K: std::hash::Hash + Eq>(
    seen: &mut HashMap<K, usize>,
    key: K,
    path: &str,
    n: usize,
    what: &str,
) -> Result<(), String> {
    match seen.insert(key, n) {
        Some(first) => Err(format!(
            "{path}:{n}: {what} given twice (first on line {first})"
        )),
        None => Ok(()),
    }
}

const SWITCH_KEYS: [&str; 4] = ["id", "stage", "up_ports", "seed"];
const SIZE_KEYS: [&str; 7] = [
    "ports",
    "vcs",
    "vc_capacity",
    "max_packets",
    "lmc",
    "banks",
    "rows",
];
const ROUTING_KEYS: [&str; 4] = ["routing", "queuing", "qvcs", "qarg"];
const ARN_KEYS: [&str; 9] = [
    "arn_entries",
    "arn_ttl",
    "arn_gap",
    "hcdth",
    "lcdth",
    "fcth",
    "crt",
    "adaptive_threshold",
    "adapted_refresh",
];
const SPAN_KEYS: [&str; 2] = ["from", "to"];

impl<R: BufRead> RecordingReader<R> {
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
            vcs: 0,
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
        let (mut ports, mut vcs, mut lmc, mut banks, mut rows) = (0usize, 0usize, 0u32, 0usize, 0);
        let mut lft_lines = Vec::new();
        let mut sl2vl_lines = Vec::new();
        // Which line each header line (and each port's, LID's, SL-to-VL entry's) came on.
        let mut lines = HashMap::new();
        let mut entries = HashMap::new();
        let mut capacities = HashMap::new();
        loop {
            let Some(l) = me.next_line()? else {
                return Err(format!(
                    "{path}:{}: the file ends before the header's `end-header`",
                    me.line
                ));
            };
            let w: Vec<&str> = l.split(' ').collect();
            let (p, n) = (path, me.line);
            let h = &mut me.header;
            let kind: &'static str = match (w[0], w.get(1)) {
                ("param", Some(&"ports")) => "param ports",
                ("param", Some(&"routing")) => "param routing",
                ("param", _) => "param arn_entries",
                ("switch", _) => "switch",
                ("from", _) => "from",
                ("end-header", _) => "end-header",
                ("out_capacity", _) => "out_capacity",
                ("lft", _) => "lft",
                ("sl2vl", _) => "sl2vl",
                _ => return Err(format!("{p}:{n}: unknown header line `{}`", w[0])),
            };
            if matches!(w[0], "switch" | "param" | "from" | "end-header") {
                once(&mut lines, kind, p, n, &format!("the `{kind}` line"))?;
            }
            match kind {
                "switch" => {
                    h.name = w.get(1).unwrap_or(&"").to_string();
                    if h.name.is_empty() {
                        return Err(format!("{p}:{n}: the `switch` line has no name"));
                    }
                    known_keys(p, n, &w, 2, &SWITCH_KEYS)?;
                    h.wiring.id = keyed(p, n, &w, "id")?;
                    h.wiring.stage = keyed(p, n, &w, "stage")?;
                    let up: String = keyed(p, n, &w, "up_ports")?;
                    h.wiring.up_ports = u64::from_str_radix(&up, 16)
                        .map_err(|_| format!("{p}:{n}: key `up_ports`: not a hexadecimal mask"))?;
                    h.seed = keyed(p, n, &w, "seed")?;
                }
                "param ports" => {
                    known_keys(p, n, &w, 1, &SIZE_KEYS)?;
                    ports = keyed(p, n, &w, "ports")?;
                    vcs = keyed(p, n, &w, "vcs")?;
                    h.params.vc_capacity = keyed(p, n, &w, "vc_capacity")?;
                    h.params.max_packets = keyed(p, n, &w, "max_packets")?;
                    lmc = keyed(p, n, &w, "lmc")?;
                    banks = keyed(p, n, &w, "banks")?;
                    rows = keyed(p, n, &w, "rows")?;
                    h.params.lmc = lmc;
                }
                "param routing" => {
                    known_keys(p, n, &w, 1, &ROUTING_KEYS)?;
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
                "param arn_entries" => {
                    known_keys(p, n, &w, 1, &ARN_KEYS)?;
                    h.params.arn_entries = keyed(p, n, &w, "arn_entries")?;
                    h.params.arn_ttl = keyed(p, n, &w, "arn_ttl")?;
                    h.params.arn_gap = keyed(p, n, &w, "arn_gap")?;
                    h.params.hcdth = keyed(p, n, &w, "hcdth")?;
                    h.params.lcdth = keyed(p, n, &w, "lcdth")?;
                    h.params.fcth = keyed(p, n, &w, "fcth")?;
                    h.params.crt = keyed(p, n, &w, "crt")?;
                    h.params.adaptive_threshold = keyed(p, n, &w, "adaptive_threshold")?;
                    h.params.adapted_refresh = match keyed::<u8>(p, n, &w, "adapted_refresh")? {
                        0 => false,
                        1 => true,
                        v => {
                            return Err(format!(
                                "{p}:{n}: key `adapted_refresh`: {v} is not 0 or 1"
                            ));
                        }
                    };
                }
                "out_capacity" => {
                    field_count(p, n, &w, 2)?;
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
                    once(
                        &mut capacities,
                        port,
                        p,
                        n,
                        &format!("out_capacity of port {port}"),
                    )?;
                    if h.wiring.out_capacity.len() <= port {
                        h.wiring.out_capacity.resize(port + 1, 0);
                    }
                    h.wiring.out_capacity[port] = cap;
                }
                "lft" => {
                    field_count(p, n, &w, 2)?;
                    let lid = field::<u16>(p, n, &w, 1)?;
                    once(&mut entries, (0, lid, 0), p, n, &format!("LID {lid}"))?;
                    lft_lines.push((lid, field::<u8>(p, n, &w, 2)?, n));
                }
                "sl2vl" => {
                    field_count(p, n, &w, 4)?;
                    let e = [
                        field::<u8>(p, n, &w, 1)?,
                        field::<u8>(p, n, &w, 2)?,
                        field::<u8>(p, n, &w, 3)?,
                        field::<u8>(p, n, &w, 4)?,
                    ];
                    let what = format!(
                        "the SL-to-VL entry of output {} input {} SL {}",
                        e[0], e[1], e[2]
                    );
                    once(
                        &mut entries,
                        (1 + e[0] as u16, e[1] as u16, e[2]),
                        p,
                        n,
                        &what,
                    )?;
                    sl2vl_lines.push((e, n));
                }
                "from" => {
                    known_keys(p, n, &w, 0, &SPAN_KEYS)?;
                    h.from = keyed(p, n, &w, "from")?;
                    h.to = keyed(p, n, &w, "to")?;
                    if h.from > h.to {
                        return Err(format!(
                            "{p}:{n}: `from {} to {}`: the first cycle compared is after the last",
                            h.from, h.to
                        ));
                    }
                }
                "end-header" => {
                    field_count(p, n, &w, 0)?;
                    break;
                }
                _ => unreachable!("every header line kind is matched above"),
            }
        }
        let at = |kind: &str| lines.get(kind).copied();
        let end_line = me.line;
        let h = &mut me.header;
        for (kind, what) in [
            ("switch", "the switch's name and place"),
            ("param ports", "the sizes"),
            ("param routing", "the routing mode"),
            ("param arn_entries", "the ARN and detector parameters"),
            ("from", "the cycles recorded"),
        ] {
            if at(kind).is_none() {
                return Err(format!(
                    "{path}:{end_line}: the header has no `{kind}` line ({what})"
                ));
            }
        }
        let size_line = at("param ports").unwrap_or(end_line);
        if let Some((key, why)) = h.params.out_of_range() {
            let n = match key {
                "vc_capacity" | "max_packets" => size_line,
                _ => at("param arn_entries").unwrap_or(end_line),
            };
            return Err(format!("{path}:{n}: key `{key}`: {why}"));
        }
        if !(1..=64).contains(&ports) || h.wiring.out_capacity.len() != ports {
            return Err(format!(
                "{path}:{size_line}: the header gives {ports} ports and out_capacity lines up to \
                 port {} (one per port, 1 to 64 ports)",
                h.wiring.out_capacity.len() as i64 - 1
            ));
        }
        if let Some(port) = h.wiring.out_capacity.iter().position(|&c| c == 0) {
            return Err(format!(
                "{path}:{size_line}: port {port} has no out_capacity line"
            ));
        }
        if h.params.vcs() != vcs || !(1..=MAX_LINK_VCS).contains(&vcs) {
            return Err(format!(
                "{path}:{size_line}: `vcs {vcs}` does not match the routing mode and queuing scheme \
                 (they give {})",
                h.params.vcs()
            ));
        }
        if !crate::blocks::lft_banks::shape_fits(lmc, rows) {
            return Err(format!(
                "{path}:{size_line}: LFT of LMC {lmc} and {rows} rows is outside LMC 0..=4, rows \
                 1..=49152, rows * 2^LMC <= 65536"
            ));
        }
        if banks != 1 << lmc {
            return Err(format!(
                "{path}:{size_line}: key `banks`: {banks}, where LMC {lmc} gives {} banks",
                1 << lmc
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
        me.vcs = vcs;
        me.ins = vec![PortIn::default(); ports];
        me.outs = vec![PortOut::default(); ports];
        Ok(me)
    }
}
