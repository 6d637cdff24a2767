//! The points of `arnsim sweep`: the varied keys and their values (`--vary KEY=V1,V2,...`, and
//! `--loads` as `--vary traffic.load=...`), the grid of their combinations (the first key
//! varying fastest), the seeds of each point's replications (`--seeds N`), and the folder of
//! each run.

use super::sweep::{Load, parse_loads};
use crate::metrics::LOAD_COLUMN;
use std::path::{Path, PathBuf};

/// The key `--loads` varies.
pub const LOAD_KEY: &str = "traffic.load";

/// One value of a varied key.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    /// As given (the override `KEY=text`; the loads of `traffic.load` in their shortest form).
    pub text: String,
    /// In folder names and in `sweep.csv` (a load's two decimals, `0.30`).
    pub label: String,
}

/// A varied key and its values, in the order they are run and written.
#[derive(Clone, Debug, PartialEq)]
pub struct Vary {
    /// The scenario key, e.g. `switch.buffer`.
    pub key: String,
    /// Its values.
    pub values: Vec<Value>,
}

impl Vary {
    /// The loads of `--loads` (checked as `parse_loads` checks them).
    pub fn loads(loads: &[Load]) -> Self {
        Vary {
            key: LOAD_KEY.into(),
            values: loads
                .iter()
                .map(|l| Value {
                    text: l.value.to_string(),
                    label: l.label.clone(),
                })
                .collect(),
        }
    }

    /// The column of the key in `sweep.csv`.
    pub fn column(&self) -> &str {
        match self.key.as_str() {
            LOAD_KEY => LOAD_COLUMN,
            k => k,
        }
    }
}

/// Reads `--vary KEY=V1,V2,...`: a key and values given once each. Values that are all
/// numbers are run in increasing order, others in the order given. `traffic.load`'s values
/// are checked as `--loads`.
pub fn parse_vary(arg: &str) -> Result<Vary, String> {
    let flag = |e: &str| format!("--vary {arg}: {e}");
    let Some((key, list)) = arg.split_once('=') else {
        return Err(flag(
            "expected KEY=V1,V2,... (e.g. switch.buffer=32KB,64KB)",
        ));
    };
    let key = key.trim();
    if key.is_empty() || key.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(flag("the key is empty or holds a space"));
    }
    if key == LOAD_KEY {
        let loads = parse_loads(list).map_err(|e| match e.strip_prefix("--loads ") {
            Some(rest) => format!("--vary traffic.load={rest}"),
            None => e.replacen("--loads", "--vary traffic.load=", 1),
        })?;
        return Ok(Vary::loads(&loads));
    }
    if key == "seed" {
        return Err(flag(
            "replications of a point run on seeds one after the other: give --seeds N (and \
             --seed for the first)",
        ));
    }
    let mut values: Vec<String> = Vec::new();
    for item in list.split(',') {
        let t = item.trim();
        if t.is_empty() {
            return Err(flag("an empty value (give values between commas)"));
        }
        if t.chars().any(char::is_control) {
            return Err(flag("a value holds a control character"));
        }
        values.push(t.to_string());
    }
    let numbers: Option<Vec<f64>> = values.iter().map(|v| v.parse::<f64>().ok()).collect();
    if let Some(n) = &numbers {
        if let Some(v) = values.iter().zip(n).find(|(_, x)| !x.is_finite()) {
            return Err(flag(&format!("`{}` is not a finite number", v.0)));
        }
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| n[a].total_cmp(&n[b]));
        if let Some(w) = order.windows(2).find(|w| n[w[0]] == n[w[1]]) {
            return Err(flag(&format!(
                "`{}` and `{}` are the same number",
                values[w[0]], values[w[1]]
            )));
        }
        values = order.into_iter().map(|i| values[i].clone()).collect();
    }
    let mut labels: Vec<String> = Vec::new();
    for v in &values {
        // A folder name: letters, digits and `.`, `-`, `+`, `_`; anything else becomes `_`.
        let label: String = v
            .chars()
            .map(|c| match c.is_ascii_alphanumeric() || ".-+_".contains(c) {
                true => c,
                false => '_',
            })
            .collect();
        if let Some(i) = labels.iter().position(|l| *l == label) {
            return Err(flag(&format!(
                "`{}` and `{v}` name the same folder (`{label}`): give values that differ in \
                 letters or digits",
                values[i]
            )));
        }
        labels.push(label);
    }
    Ok(Vary {
        key: key.to_string(),
        values: values
            .into_iter()
            .zip(labels)
            .map(|(text, label)| Value { text, label })
            .collect(),
    })
}

/// The sweep's grid: the varied keys, every combination of their values (the first key varying
/// fastest) and the seeds each is run on.
#[derive(Clone, Debug)]
pub struct Grid {
    /// The varied keys, `--loads` first when given, then `--vary` in order.
    pub keys: Vec<Vary>,
    /// Each point: the index of its value for each key.
    pub points: Vec<Vec<usize>>,
    /// The seeds of each point's runs; `None` for a single run on the scenario's seed.
    pub seeds: Option<Vec<u64>>,
}

/// The most runs a sweep takes (points times replications).
pub const MOST_RUNS: usize = 10_000;

impl Grid {
    /// The grid of `keys`, each point run `replications` times from seed `first_seed` on.
    pub fn new(keys: Vec<Vary>, replications: usize, first_seed: u64) -> Result<Self, String> {
        if let Some(k) = keys
            .iter()
            .enumerate()
            .find_map(|(i, k)| keys[..i].iter().any(|o| o.key == k.key).then_some(k))
        {
            return Err(format!(
                "--vary {}: the key is varied twice (--loads varies traffic.load)",
                k.key
            ));
        }
        let total = keys
            .iter()
            .fold(1usize, |t, k| t.saturating_mul(k.values.len()));
        if total.saturating_mul(replications) > MOST_RUNS {
            return Err(format!(
                "--vary/--seeds: {total} points x {replications} seeds is more than {MOST_RUNS} runs"
            ));
        }
        // Counting in mixed radix, the first key the fastest digit.
        let points = (0..total)
            .map(|mut n| {
                keys.iter()
                    .map(|k| {
                        let i = n % k.values.len();
                        n /= k.values.len();
                        i
                    })
                    .collect()
            })
            .collect();
        let seeds = (replications > 1).then(|| {
            (0..replications as u64)
                .map(|r| first_seed.wrapping_add(r))
                .collect()
        });
        Ok(Grid {
            keys,
            points,
            seeds,
        })
    }

    /// Runs per point.
    pub fn replications(&self) -> usize {
        self.seeds.as_ref().map_or(1, Vec::len)
    }

    /// The overrides of run `rep` of point `p`: `set`, then each varied key, then the seed.
    pub fn overrides(&self, set: &[String], p: usize, rep: usize) -> Vec<String> {
        let mut v = set.to_vec();
        for (k, &i) in self.keys.iter().zip(&self.points[p]) {
            v.push(format!("{}={}", k.key, k.values[i].text));
        }
        if let Some(s) = &self.seeds {
            v.push(format!("seed={}", s[rep]));
        }
        v
    }

    /// The values of point `p`, as labelled.
    pub fn labels(&self, p: usize) -> Vec<&str> {
        self.keys
            .iter()
            .zip(&self.points[p])
            .map(|(k, &i)| k.values[i].label.as_str())
            .collect()
    }

    /// The folder of run `rep` of point `p`: `<key>-<value>` per key, joined by commas, with
    /// `seed-<seed>` for a replicated point; a key is named by its last part (`traffic.load`:
    /// `load`), in full when two varied keys share it.
    pub fn dir(&self, out: &Path, p: usize, rep: usize) -> PathBuf {
        let mut parts: Vec<String> = Vec::new();
        for (k, &i) in self.keys.iter().zip(&self.points[p]) {
            let last = |key: &str| key.rsplit('.').next().unwrap_or(key).to_string();
            let short = last(&k.key);
            let shared = self.keys.iter().filter(|o| last(&o.key) == short).count() > 1;
            let name = match shared {
                true => k.key.clone(),
                false => short,
            };
            parts.push(format!("{name}-{}", k.values[i].label));
        }
        if let Some(s) = &self.seeds {
            parts.push(format!("seed-{}", s[rep]));
        }
        out.join(parts.join(","))
    }

    /// A point's name in messages: `key=value` per key.
    pub fn name(&self, p: usize) -> String {
        self.keys
            .iter()
            .zip(self.labels(p))
            .map(|(k, l)| format!("{}={l}", k.key))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
