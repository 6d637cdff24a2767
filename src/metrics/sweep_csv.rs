//! `sweep.csv`, the table of a sweep: one row per point of the grid, the varied keys' values
//! first, then the number of runs, each metric's mean and the half-width of its 95 % confidence
//! interval, and how the point's runs ended. Read back by `arnsim plot`, which names the line
//! and field of anything a sweep cannot have written.

/// The column after the varied keys' values: the runs the point's figures are taken over.
pub const RUNS: &str = "runs";

/// The metrics, in the order of their columns; each is followed by `<metric>_ci95`.
pub const METRICS: [&str; 5] = [
    "accepted_load",
    "accepted_bytes_per_ns_per_switch",
    "mean_latency_ns",
    "max_latency_ns",
    "packets_delivered",
];

/// The column of `traffic.load` (its values are offered loads).
pub const LOAD_COLUMN: &str = "offered_load";

/// How the runs of a point ended (the `status` column of `sweep.csv`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStatus {
    /// Every cycle simulated, every invariant held.
    Complete,
    /// The progress watchdog stopped it.
    Deadlock,
    /// Another invariant broke.
    Invariant,
    /// Stopped before its last cycle (a signal, a time limit), or not run: the sweep stopped.
    Stopped,
}

impl RunStatus {
    /// Every status, in the order the column's values are listed.
    pub const ALL: [RunStatus; 4] = [
        RunStatus::Complete,
        RunStatus::Deadlock,
        RunStatus::Invariant,
        RunStatus::Stopped,
    ];

    /// Its name in `sweep.csv`.
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Complete => "complete",
            RunStatus::Deadlock => "deadlock",
            RunStatus::Invariant => "invariant",
            RunStatus::Stopped => "stopped",
        }
    }

    /// The status of that name, if any.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// A metric of a point: its mean and the half-width of its 95 % interval (none for one run).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measure {
    /// The mean over the point's runs.
    pub mean: f64,
    /// Half-width of the 95 % confidence interval.
    pub ci95: Option<f64>,
}

/// One row of `sweep.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRow {
    /// Its line in the file.
    pub line: usize,
    /// The varied keys' values, as written.
    pub values: Vec<String>,
    /// Accepted load, 0 to 1; none for a point the sweep did not finish.
    pub accepted: Option<Measure>,
    /// Mean packet latency in ns; none when no packet was delivered.
    pub mean_latency_ns: Option<Measure>,
    /// How its runs ended.
    pub status: RunStatus,
}

/// A `sweep.csv` read back.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepTable {
    /// The varied keys' columns (`offered_load` for `traffic.load`).
    pub keys: Vec<String>,
    /// The rows, in the file's order.
    pub rows: Vec<SweepRow>,
}

/// Splits a CSV line into fields: plain text without a comma or quote, or quoted whole with its
/// quotes doubled (as `arnsim sweep` writes them). An error gives the broken field's index and
/// what is broken.
pub fn split_fields(line: &str) -> Result<Vec<String>, (usize, String)> {
    let mut fields = Vec::new();
    let mut rest = line;
    loop {
        if let Some(q) = rest.strip_prefix('"') {
            // A quoted field ends at a quote that is not doubled, followed by a comma or the end.
            let mut text = String::new();
            let mut chars = q.char_indices();
            let end = loop {
                match chars.next() {
                    Some((i, '"')) if q[i + 1..].starts_with('"') => {
                        text.push('"');
                        chars.next();
                    }
                    Some((i, '"')) => break Some(i + 1),
                    Some((_, c)) => text.push(c),
                    None => break None,
                }
            };
            let broken =
                || format!("`{rest}`: a quoted field that is not closed, or has a lone quote");
            let end = end.ok_or_else(|| (fields.len(), broken()))?;
            let next = match &q[end..] {
                "" => None,
                t if t.starts_with(',') => Some(&t[1..]),
                _ => return Err((fields.len(), broken())),
            };
            fields.push(text);
            match next {
                Some(n) => rest = n,
                None => return Ok(fields),
            }
        } else {
            let (f, next) = match rest.split_once(',') {
                Some((f, next)) => (f, Some(next)),
                None => (rest, None),
            };
            if f.contains('"') {
                return Err((
                    fields.len(),
                    format!("`{f}`: a quote in a field that is not quoted"),
                ));
            }
            fields.push(f.to_string());
            match next {
                Some(n) => rest = n,
                None => return Ok(fields),
            }
        }
    }
}

/// A CSV field as the sweep writes one: quoted when it holds a comma, a quote or a line break.
pub fn csv_field(t: &str) -> String {
    match t.contains([',', '"', '\n', '\r']) {
        true => format!("\"{}\"", t.replace('"', "\"\"")),
        false => t.to_string(),
    }
}

/// Reads a `sweep.csv` written by `arnsim sweep`; `path` names the file in errors, which give
/// its line and field. The columns are found by their names: the varied keys' are those before
/// `runs` (or, in a table without it, before `accepted_load`).
pub fn read_sweep_csv(path: &str, text: &str) -> Result<SweepTable, String> {
    let mut lines = text.lines().enumerate();
    let header = match lines.next() {
        Some((_, h)) => split_fields(h).map_err(|(_, e)| format!("{path}:1: {e}"))?,
        None => Vec::new(),
    };
    let col = |name: &str| header.iter().position(|h| h == name);
    let (Some(accepted_at), Some(latency_at), Some(status_at)) =
        (col(METRICS[0]), col(METRICS[2]), col("status"))
    else {
        return Err(format!(
            "{path}:1: expected the header of a sweep.csv (columns `{}`, `{}` and `status`)",
            METRICS[0], METRICS[2]
        ));
    };
    let nkeys = col(RUNS).unwrap_or(accepted_at);
    if nkeys == 0 {
        return Err(format!(
            "{path}:1: no varied key's column before `{}`",
            header[nkeys]
        ));
    }
    let ci = |name: &str| col(&format!("{name}_ci95"));
    let (accepted_ci, latency_ci) = (ci(METRICS[0]), ci(METRICS[2]));
    let mut rows = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        let f = split_fields(line).map_err(|(k, e)| match header.get(k) {
            Some(name) => format!("{path}:{n}: field `{name}`: {e}"),
            None => format!("{path}:{n}: field {}: {e}", k + 1),
        })?;
        if f.len() != header.len() {
            return Err(format!(
                "{path}:{n}: {} fields where the header has {}",
                f.len(),
                header.len()
            ));
        }
        let num = |k: usize| -> Result<Option<f64>, String> {
            match f[k].as_str() {
                "" => Ok(None),
                v => v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .map(Some)
                    .ok_or_else(|| {
                        format!(
                            "{path}:{n}: field `{}`: `{v}` is not a number 0 or above",
                            header[k]
                        )
                    }),
            }
        };
        let measure = |k: usize, c: Option<usize>| -> Result<Option<Measure>, String> {
            let ci95 = match c {
                Some(c) => num(c)?,
                None => None,
            };
            Ok(num(k)?.map(|mean| Measure { mean, ci95 }))
        };
        let status_text = &f[status_at];
        let status = RunStatus::named(status_text).ok_or_else(|| {
            let names: Vec<&str> = RunStatus::ALL.iter().map(|s| s.name()).collect();
            format!(
                "{path}:{n}: field `status`: `{status_text}` is not one of {}",
                names.join(", ")
            )
        })?;
        let accepted = measure(accepted_at, accepted_ci)?;
        match accepted {
            Some(a) if a.mean > 1.0 => {
                return Err(format!(
                    "{path}:{n}: field `{}`: loads are fractions of the links' capacity, 0 to 1",
                    METRICS[0]
                ));
            }
            None if status != RunStatus::Stopped => {
                return Err(format!(
                    "{path}:{n}: field `{}` is empty, and only a point the sweep did not finish \
                     (status `stopped`) has no figures",
                    METRICS[0]
                ));
            }
            _ => {}
        }
        if header[0] == LOAD_COLUMN {
            match num(0)? {
                Some(v) if v <= 1.0 => {}
                _ => {
                    return Err(format!(
                        "{path}:{n}: field `{LOAD_COLUMN}`: loads are fractions of the links' \
                         capacity, 0 to 1"
                    ));
                }
            }
        }
        rows.push(SweepRow {
            line: n,
            values: f[..nkeys].to_vec(),
            accepted,
            mean_latency_ns: measure(latency_at, latency_ci)?,
            status,
        });
    }
    if rows.is_empty() {
        return Err(format!(
            "{path}: no rows after the header: the sweep ran no point (nothing to plot)"
        ));
    }
    check_order(path, &header[0], &rows)?;
    Ok(SweepTable {
        keys: header[..nkeys].to_vec(),
        rows,
    })
}

/// Along each curve (the rows that share the values of every key but the first) the first key's
/// values are given once each and, when they are numbers, in increasing order, as a sweep writes
/// them.
fn check_order(path: &str, key: &str, rows: &[SweepRow]) -> Result<(), String> {
    for (k, r) in rows.iter().enumerate() {
        let Some(before) = rows[..k]
            .iter()
            .rev()
            .find(|b| b.values[1..] == r.values[1..])
        else {
            continue;
        };
        let whose = match before.line + 1 == r.line {
            true => "the row before's".to_string(),
            false => format!("line {}'s", before.line),
        };
        let (x, last) = (&r.values[0], &before.values[0]);
        let says = match (x.parse::<f64>(), last.parse::<f64>()) {
            (Ok(a), Ok(b)) if a == b => Some(format!("{a} repeats {whose} {b}")),
            (Ok(a), Ok(b)) if a < b => Some(format!("{a} is below {whose} {b}")),
            (Ok(_), Ok(_)) => None,
            _ if x == last => Some(format!("`{x}` repeats {whose}")),
            _ => None,
        };
        if let Some(says) = says {
            return Err(format!(
                "{path}:{}: field `{key}`: {says}; a sweep runs each point once, its values in \
                 increasing order",
                r.line
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_split_as_a_sweep_writes_them() {
        assert_eq!(split_fields("a,,b").unwrap(), ["a", "", "b"]);
        assert_eq!(
            split_fields("1,\"x, \"\"y\"\"\",2").unwrap(),
            ["1", "x, \"y\"", "2"]
        );
        assert_eq!(split_fields("\"\"").unwrap(), [""]);
        for (bad, says) in [
            ("1,\"open", "not closed"),
            ("1,\"a\"b\"", "lone quote"),
            ("1,a\"b", "a quote in a field that is not quoted"),
        ] {
            let (k, e) = split_fields(bad).unwrap_err();
            assert!(e.contains(says) && k == 1, "{bad}: {k} {e}");
        }
        for t in ["plain", "x, y", "say \"hi\"", ""] {
            assert_eq!(split_fields(&csv_field(t)).unwrap(), [t]);
        }
    }

    #[test]
    fn a_sweep_table_reads_back_by_column_names() {
        let text = "offered_load,switch.hcdth,runs,accepted_load,accepted_load_ci95,accepted_bytes_per_ns_per_switch,accepted_bytes_per_ns_per_switch_ci95,mean_latency_ns,mean_latency_ns_ci95,max_latency_ns,max_latency_ns_ci95,packets_delivered,packets_delivered_ci95,status,reason\n\
                    0.50,8,3,0.499000,0.002000,1.0,0.1,700.5,12.5,900.0,3.0,10.0,1.0,complete,\n\
                    0.90,8,3,0.400000,,1.0,,,,,,0,,deadlock,\"seed 2: deadlock, at cycle 5\"\n\
                    0.50,16,0,,,,,,,,,,,stopped,not finished\n";
        let t = read_sweep_csv("s.csv", text).unwrap();
        assert_eq!(t.keys, ["offered_load", "switch.hcdth"]);
        assert_eq!(t.rows.len(), 3);
        assert_eq!(
            t.rows[0].accepted,
            Some(Measure {
                mean: 0.499,
                ci95: Some(0.002)
            })
        );
        assert_eq!(t.rows[0].mean_latency_ns.unwrap().ci95, Some(12.5));
        assert_eq!(t.rows[1].mean_latency_ns, None);
        assert_eq!(t.rows[1].status, RunStatus::Deadlock);
        assert_eq!((t.rows[2].accepted, t.rows[2].line), (None, 4));
        // The older table without `runs` and intervals reads too.
        let old = "offered_load,accepted_load,accepted_bytes_per_ns_per_switch,mean_latency_ns,max_latency_ns,packets_delivered,status,reason\n\
                   0.50,0.499000,1.0,700.5,900.0,10,complete,\n";
        let t = read_sweep_csv("o.csv", old).unwrap();
        assert_eq!((t.keys.len(), t.rows[0].accepted.unwrap().ci95), (1, None));
    }

    #[test]
    fn broken_tables_name_line_and_field() {
        let head = "offered_load,switch.hcdth,runs,accepted_load,mean_latency_ns,status,reason\n";
        for (rows, says) in [
            (
                "0.5,8,1,0.4,7,complete,\n0.5,8,1,0.4,7,complete,\n",
                "s.csv:3: field `offered_load`: 0.5 repeats the row before's 0.5",
            ),
            (
                "0.5,8,1,0.4,7,complete,\n0.5,9,1,0.4,7,complete,\n0.2,8,1,0.4,7,complete,\n",
                "s.csv:4: field `offered_load`: 0.2 is below line 2's 0.5",
            ),
            (
                "0.5,8,1,,7,complete,\n",
                "s.csv:2: field `accepted_load` is empty",
            ),
            (
                "0.5,8,1,1.5,7,complete,\n",
                "fractions of the links' capacity",
            ),
            (
                "1.5,8,1,0.5,7,complete,\n",
                "s.csv:2: field `offered_load`: loads are fractions",
            ),
            (
                "0.5,8,1,0.4,-7,complete,\n",
                "field `mean_latency_ns`: `-7` is not a number 0 or above",
            ),
            (
                "0.5,8,1,0.4,7,done,\n",
                "field `status`: `done` is not one of",
            ),
            (
                "0.5,8,1,0.4,7,complete,two, fields\n",
                "s.csv:2: 8 fields where the header has 7",
            ),
            (
                "0.5,8,1,0.4,7,complete,\"open\n",
                "s.csv:2: field `reason`: `\"open`: a quoted field that is not closed",
            ),
            ("", "no rows after the header"),
        ] {
            let e = read_sweep_csv("s.csv", &format!("{head}{rows}")).unwrap_err();
            assert!(e.contains(says), "{rows}: {e}");
        }
        let e = read_sweep_csv("s.csv", "a,b\n").unwrap_err();
        assert!(
            e.contains("s.csv:1: expected the header of a sweep.csv"),
            "{e}"
        );
    }
}
