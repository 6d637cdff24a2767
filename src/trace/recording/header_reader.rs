//! Reading a switch recording's header (`docs/recording.md`): the parameters, wiring, LFT and
//! SL-to-VL tables that rebuild the switch. A value outside its register, a key unknown or given
//! twice, a line given twice or missing, or sizes that disagree are refused with file and line.

use super::reader::{field, field_count};
use super::{MAGIC, RecordingHeader, RecordingReader};
use crate::blocks::LftBanks;
use crate::blocks::lft_banks::NO_ROUTE;
use crate::cycle::{MAX_LINK_VCS, PortIn, PortOut};
use crate::switch::{
    OutputArbitration, QueuingScheme, RoutingMode, SlToVl, SwitchParams, SwitchWiring,
};
use std::collections::HashMap;
use std::io::BufRead;
use std::str::FromStr;

/// The header lines that come once, each holding `key value` pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum HeaderLine {
    Switch,
    Sizes,
    Routing,
    Arn,
    Fecn,
    Qcn,
    Snoop,
    RouteCache,
    Span,
}

impl HeaderLine {
    const ALL: [HeaderLine; 9] = [
        HeaderLine::Switch,
        HeaderLine::Sizes,
        HeaderLine::Routing,
        HeaderLine::Arn,
        HeaderLine::Fecn,
        HeaderLine::Qcn,
        HeaderLine::Snoop,
        HeaderLine::RouteCache,
        HeaderLine::Span,
    ];

    /// The line `words` is, if it is one of these: a `param` line by its first key.
    fn of(words: &[&str]) -> Option<HeaderLine> {
        match words[0] {
            "switch" => Some(HeaderLine::Switch),
            "from" => Some(HeaderLine::Span),
            "param" => [
                HeaderLine::Sizes,
                HeaderLine::Routing,
                HeaderLine::Arn,
                HeaderLine::Fecn,
                HeaderLine::Qcn,
                HeaderLine::Snoop,
                HeaderLine::RouteCache,
            ]
            .into_iter()
            .find(|l| words.get(1).is_some_and(|k| l.keys().contains(k))),
            _ => None,
        }
    }

    /// Its keys, in the order they are written.
    fn keys(self) -> &'static [&'static str] {
        match self {
            HeaderLine::Switch => &["id", "stage", "up_ports", "seed", "smodk_div"],
            HeaderLine::Sizes => &[
                "ports",
                "vcs",
                "vc_capacity",
                "max_packets",
                "lmc",
                "banks",
                "rows",
            ],
            HeaderLine::Routing => &["routing", "queuing", "qvcs", "qarg", "arbitration"],
            HeaderLine::Arn => &[
                "arn_entries",
                "arn_ttl",
                "arn_gap",
                "hcdth",
                "lcdth",
                "fcth",
                "crt",
                "adaptive_threshold",
                "adapted_refresh",
            ],
            HeaderLine::Fecn => &[
                "fecn_threshold",
                "fecn_rate",
                "fecn_min_len",
                "fecn_victims",
            ],
            HeaderLine::Qcn => &["qcn_qeq", "qcn_w", "qcn_sample"],
            HeaderLine::Snoop => &["snoop_entries", "snoop_ttl"],
            HeaderLine::RouteCache => &["route_cache_entries"],
            HeaderLine::Span => &["from", "to"],
        }
    }

    /// The words before its pairs (`switch <name>`, `param`).
    fn lead(self) -> usize {
        match self {
            HeaderLine::Switch => 2,
            HeaderLine::Span => 0,
            _ => 1,
        }
    }

    /// How `docs/recording.md` shows it, and what it holds.
    fn spelled(self) -> (&'static str, &'static str) {
        match self {
            HeaderLine::Switch => ("switch", "the switch's name and place"),
            HeaderLine::Sizes => ("param ports", "the sizes"),
            HeaderLine::Routing => ("param routing", "the routing mode"),
            HeaderLine::Arn => ("param arn_entries", "the ARN and detector parameters"),
            HeaderLine::Fecn => ("param fecn_threshold", "the FECN marking settings"),
            HeaderLine::Qcn => ("param qcn_qeq", "the QCN congestion point settings"),
            HeaderLine::Snoop => ("param snoop_entries", "snooped AR's congestion table"),
            HeaderLine::RouteCache => ("param route_cache_entries", "flow routing's route caches"),
            HeaderLine::Span => ("from", "the cycles recorded"),
        }
    }
}

/// A header line's `key value` pairs: every key one of its line's, each given once.
struct Keys<'a> {
    at: String,
    pairs: HashMap<&'a str, &'a str>,
}

impl<'a> Keys<'a> {
    fn of(at: String, words: &[&'a str], line: HeaderLine) -> Result<Self, String> {
        let mut pairs = HashMap::new();
        for pair in words[line.lead().min(words.len())..].chunks(2) {
            let key = pair[0];
            if !line.keys().contains(&key) {
                return Err(format!(
                    "{at}: `{key}` is not a key of this line (its keys: {})",
                    line.keys().join(" ")
                ));
            }
            let value = *pair
                .get(1)
                .ok_or_else(|| format!("{at}: key `{key}` has no value"))?;
            if pairs.insert(key, value).is_some() {
                return Err(format!("{at}: key `{key}` given twice"));
            }
        }
        Ok(Keys { at, pairs })
    }

    /// The value of `key`, at its register's width.
    fn get<T: FromStr>(&self, key: &str) -> Result<T, String> {
        let at = &self.at;
        let v = self
            .pairs
            .get(key)
            .ok_or_else(|| format!("{at}: key `{key}` is missing"))?;
        v.parse().map_err(|_| {
            format!("{at}: key `{key}`: `{v}` is not a number, or too large for its register")
        })
    }

    /// A one-bit value.
    fn bit(&self, key: &str) -> Result<bool, String> {
        match self.get::<u8>(key)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(format!("{}: key `{key}`: {v} is not 0 or 1", self.at)),
        }
    }
}

/// Records that `what` was read on line `n`; a second one is refused.
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
                    smodk_div: 0,
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
            lines: Vec::new(),
            end: None,
        };
        if me.next_line()?.as_deref() != Some(MAGIC) {
            return Err(format!(
                "{path}:{}: not a switch recording (the first line must be `{MAGIC}`)",
                me.line.max(1)
            ));
        }
        let (mut ports, mut vcs, mut lmc, mut banks, mut rows) = (0usize, 0usize, 0u32, 0usize, 0);
        let mut lft_lines = Vec::new();
        let mut sl2vl_lines = Vec::new();
        // The line each header line, port's capacity, LID and SL-to-VL entry came on.
        let mut header_lines = HashMap::new();
        let mut capacity_seen = HashMap::new();
        let mut lft_seen = HashMap::new();
        let mut sl2vl_seen = HashMap::new();
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
            if let Some(line) = HeaderLine::of(&w) {
                let what = format!("the `{}` line", line.spelled().0);
                once(&mut header_lines, line, p, n, &what)?;
                let k = Keys::of(format!("{p}:{n}"), &w, line)?;
                match line {
                    HeaderLine::Switch => {
                        h.name = w.get(1).unwrap_or(&"").to_string();
                        if h.name.is_empty() {
                            return Err(format!("{p}:{n}: the `switch` line has no name"));
                        }
                        h.wiring.id = k.get("id")?;
                        h.wiring.stage = k.get("stage")?;
                        let up: String = k.get("up_ports")?;
                        h.wiring.up_ports = u64::from_str_radix(&up, 16).map_err(|_| {
                            format!("{p}:{n}: key `up_ports`: not a hexadecimal mask")
                        })?;
                        h.seed = k.get("seed")?;
                        // Written for S-mod-K only: 0 (not routing S-mod-K) without it.
                        if k.pairs.contains_key("smodk_div") {
                            h.wiring.smodk_div = k.get("smodk_div")?;
                        }
                    }
                    HeaderLine::Sizes => {
                        ports = k.get("ports")?;
                        vcs = k.get("vcs")?;
                        h.params.vc_capacity = k.get("vc_capacity")?;
                        h.params.max_packets = k.get("max_packets")?;
                        lmc = k.get("lmc")?;
                        banks = k.get("banks")?;
                        rows = k.get("rows")?;
                        h.params.lmc = lmc;
                    }
                    HeaderLine::Routing => {
                        let r: String = k.get("routing")?;
                        h.params.routing = RoutingMode::named(&r)
                            .ok_or_else(|| format!("{p}:{n}: key `routing`: unknown mode `{r}`"))?;
                        let q: String = k.get("queuing")?;
                        let qvcs: u8 = k.get("qvcs")?;
                        let qarg: u32 = k.get("qarg")?;
                        // Recordings made before switches had a choice arbitrate round robin.
                        let a = k.pairs.get("arbitration").copied().unwrap_or("round_robin");
                        h.params.arbitration = OutputArbitration::named(a).ok_or_else(|| {
                            format!("{p}:{n}: key `arbitration`: `{a}` is not round_robin or fcfs")
                        })?;
                        if qvcs == 0 && q != "1q" {
                            return Err(format!(
                                "{p}:{n}: key `qvcs`: 0, a queuing scheme with VCs has at least one"
                            ));
                        }
                        if q == "1q" && qvcs != 1 {
                            return Err(format!(
                                "{p}:{n}: key `qvcs`: {qvcs} contradicts `queuing 1q`, whose one \
                                 queue is one VC (qvcs 1)"
                            ));
                        }
                        let takes_arg = matches!(q.as_str(), "vftree" | "flow2sl");
                        if takes_arg != (qarg != 0) {
                            let want = if takes_arg {
                                "its nodes per leaf (vftree) or end nodes (flow2sl), at least 1"
                            } else {
                                "0 (the scheme takes no argument)"
                            };
                            return Err(format!(
                                "{p}:{n}: key `qarg`: {qarg} contradicts `queuing {q}`: {want}"
                            ));
                        }
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
                            _ => {
                                return Err(format!(
                                    "{p}:{n}: key `queuing`: unknown scheme `{q}`"
                                ));
                            }
                        };
                    }
                    HeaderLine::Arn => {
                        h.params.arn_entries = k.get("arn_entries")?;
                        h.params.arn_ttl = k.get("arn_ttl")?;
                        h.params.arn_gap = k.get("arn_gap")?;
                        h.params.hcdth = k.get("hcdth")?;
                        h.params.lcdth = k.get("lcdth")?;
                        h.params.fcth = k.get("fcth")?;
                        h.params.crt = k.get("crt")?;
                        h.params.adaptive_threshold = k.get("adaptive_threshold")?;
                        h.params.adapted_refresh = k.bit("adapted_refresh")?;
                    }
                    HeaderLine::Fecn => {
                        let m = &mut h.params.fecn;
                        m.threshold = k.get("fecn_threshold")?;
                        m.rate = k.get("fecn_rate")?;
                        m.min_len = k.get("fecn_min_len")?;
                        let v: String = k.get("fecn_victims")?;
                        m.victims = u64::from_str_radix(&v, 16).map_err(|_| {
                            format!("{p}:{n}: key `fecn_victims`: not a hexadecimal mask")
                        })?;
                    }
                    HeaderLine::Qcn => {
                        let q = &mut h.params.qcn;
                        q.qeq = k.get("qcn_qeq")?;
                        q.w = k.get("qcn_w")?;
                        q.sample = k.get("qcn_sample")?;
                    }
                    HeaderLine::Snoop => {
                        let t = &mut h.params.snoop;
                        t.entries = k.get("snoop_entries")?;
                        t.ttl = k.get("snoop_ttl")?;
                        let max = crate::blocks::congestion_table::MAX_ENTRIES as u8;
                        if !(1..=max).contains(&t.entries) || t.ttl == 0 {
                            return Err(format!(
                                "{p}:{n}: `snoop_entries {} snoop_ttl {}`: the table has 1 to \
                                 {max} entries and a TTL of at least one cycle",
                                t.entries, t.ttl
                            ));
                        }
                    }
                    HeaderLine::RouteCache => {
                        h.params.route_cache_entries = k.get("route_cache_entries")?;
                    }
                    HeaderLine::Span => {
                        h.from = k.get("from")?;
                        h.to = k.get("to")?;
                        if h.from > h.to {
                            return Err(format!(
                                "{p}:{n}: `from {} to {}`: the first cycle compared is after the \
                                 last",
                                h.from, h.to
                            ));
                        }
                        if h.to >= crate::config::units::MAX_CYCLES {
                            return Err(format!(
                                "{p}:{n}: `to {}`: past the longest run, 2^40 cycles (no run \
                                 records that far)",
                                h.to
                            ));
                        }
                    }
                }
                continue;
            }
            match w[0] {
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
                    let what = format!("out_capacity of port {port}");
                    once(&mut capacity_seen, port, p, n, &what)?;
                    if h.wiring.out_capacity.len() <= port {
                        h.wiring.out_capacity.resize(port + 1, 0);
                    }
                    h.wiring.out_capacity[port] = cap;
                }
                "lft" => {
                    field_count(p, n, &w, 2)?;
                    let lid = field::<u16>(p, n, &w, 1)?;
                    once(&mut lft_seen, lid, p, n, &format!("LID {lid}"))?;
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
                    once(&mut sl2vl_seen, (e[0], e[1], e[2]), p, n, &what)?;
                    sl2vl_lines.push((e, n));
                }
                "end-header" => {
                    field_count(p, n, &w, 0)?;
                    break;
                }
                "param" => {
                    return Err(format!(
                        "{p}:{n}: a `param` line must start with `ports`, `routing`, \
                         `arn_entries`, `fecn_threshold`, `qcn_qeq`, `snoop_entries` or \
                         `route_cache_entries`, not `{}`",
                        w.get(1).unwrap_or(&"")
                    ));
                }
                other => return Err(format!("{p}:{n}: unknown header line `{other}`")),
            }
        }
        let at = |line: HeaderLine| header_lines.get(&line).copied();
        let end_line = me.line;
        let h = &mut me.header;
        // Recordings made before switches marked FECN (or sampled for QCN) have no FECN (QCN)
        // line: they mark (sample) nothing.
        for line in HeaderLine::ALL {
            if at(line).is_none()
                && !matches!(
                    line,
                    HeaderLine::Fecn | HeaderLine::Qcn | HeaderLine::Snoop | HeaderLine::RouteCache
                )
            {
                let (spelled, what) = line.spelled();
                return Err(format!(
                    "{path}:{end_line}: the header has no `{spelled}` line ({what})"
                ));
            }
        }
        // Snooped AR's table comes with its routing mode and only with it.
        let snoop_ar = h.params.routing == RoutingMode::SnoopAr;
        if snoop_ar != at(HeaderLine::Snoop).is_some() {
            let n = at(HeaderLine::Snoop)
                .or(at(HeaderLine::Routing))
                .unwrap_or(end_line);
            return Err(format!(
                "{path}:{n}: the `param snoop_entries` line (snooped AR's congestion table) goes \
                 with `routing snoop_ar` and only with it"
            ));
        }
        // Flow routing's route caches likewise.
        let flow = h.params.routing == RoutingMode::Flow;
        if flow != at(HeaderLine::RouteCache).is_some() {
            let n = at(HeaderLine::RouteCache)
                .or(at(HeaderLine::Routing))
                .unwrap_or(end_line);
            return Err(format!(
                "{path}:{n}: the `param route_cache_entries` line (flow routing's route caches) \
                 goes with `routing flow` and only with it"
            ));
        }
        let size_line = at(HeaderLine::Sizes).unwrap_or(end_line);
        if let Some((key, why)) = h.params.out_of_range() {
            let n = match key {
                "vc_capacity" | "max_packets" => size_line,
                "route_cache_entries" => at(HeaderLine::RouteCache).unwrap_or(end_line),
                _ => at(HeaderLine::Arn).unwrap_or(end_line),
            };
            return Err(format!("{path}:{n}: key `{key}`: {why}"));
        }
        let given = h.wiring.out_capacity.len();
        if !(1..=64).contains(&ports) || given != ports {
            let lines = match given {
                0 => "no out_capacity line".to_string(),
                _ => format!("out_capacity lines up to port {}", given - 1),
            };
            return Err(format!(
                "{path}:{size_line}: the header gives {ports} ports and {lines} (one per port, 1 \
                 to 64 ports)"
            ));
        }
        if let Some(port) = h.wiring.out_capacity.iter().position(|&c| c == 0) {
            return Err(format!(
                "{path}:{size_line}: port {port} has no out_capacity line"
            ));
        }
        if !(1..=MAX_LINK_VCS).contains(&vcs) {
            return Err(format!(
                "{path}:{size_line}: key `vcs`: {vcs}, a switch has 1 to {MAX_LINK_VCS} VCs"
            ));
        }
        let switch_line = at(HeaderLine::Switch).unwrap_or(end_line);
        if ports < 64 && h.wiring.up_ports >> ports != 0 {
            return Err(format!(
                "{path}:{switch_line}: key `up_ports`: {:x} names a port beyond the switch's \
                 {ports}",
                h.wiring.up_ports
            ));
        }
        if h.params.vcs() != vcs {
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
        me.ins = vec![PortIn::default(); ports];
        me.outs = vec![PortOut::default(); ports];
        me.lines = vec![[0; 2]; ports];
        Ok(me)
    }
}
