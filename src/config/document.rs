//! A scenario document: TOML flattened into dotted keys, each remembering its file and line,
//! with command-line overrides on top. Readers take keys one by one and record what is wrong
//! without stopping, so one reading reports every error of a file; keys nobody took are
//! reported as unknown, with the closest key a reader asked for as a suggestion.
//!
//! Reading is linear in the size of the file: lines come from a table of line starts (binary
//! search), the number of elements of each array of tables is counted while flattening.

use super::keys::{Lines, distance, generic, specific};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use toml::de::{DeTable, DeValue};

pub use super::errors::{ScenarioError, ScenarioErrors};

mod read;

/// Where a value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Line `line` (1-based) of a file.
    File {
        /// File path as given.
        path: String,
        /// 1-based line.
        line: usize,
    },
    /// A `--set key=value` option.
    CommandLine,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { path, line } => write!(f, "{path}:{line}"),
            Origin::CommandLine => f.write_str("--set"),
        }
    }
}

/// A scalar or array value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// String.
    Str(String),
    /// Integer (wide enough for every `u64` and `i64`).
    Int(i128),
    /// Float.
    Float(f64),
    /// Boolean.
    Bool(bool),
    /// Array of scalars.
    Array(Vec<Value>),
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Str(_) => "a string",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Bool(_) => "a boolean",
            Value::Array(_) => "an array",
        }
    }
}

/// Where a message sorts: (unknown key first, place: file line, file without line, `--set`).
type Rank = (u8, u8, usize);
/// The flattened document.
#[derive(Debug)]
pub struct Document {
    path: String,
    entries: BTreeMap<String, (Value, Origin)>,
    /// Where each table starts (`topology`, `topology.link[3]`): its header line.
    headers: HashMap<String, Origin>,
    /// Elements of each array of tables (`topology.link` -> 3).
    counts: HashMap<String, usize>,
    /// Tables written with no key in them.
    empty_tables: Vec<String>,
    /// Keys written with a value no scenario uses (already reported; not also "missing").
    refused: BTreeSet<String>,
    overrides: usize,
    taken: RefCell<BTreeSet<String>>,
    /// Every key a reader asked for, indices written `[]`.
    asked: RefCell<BTreeSet<String>>,
    errors: RefCell<Vec<(Rank, ScenarioError)>>,
    warnings: RefCell<Vec<(Rank, ScenarioError)>>,
}

/// Whether `--set` text starts like a TOML array or quoted string (`[3, 5`, `"abc`), so a parse
/// error in it is reported rather than the text taken as a bare string.
fn looks_toml(raw: &str) -> bool {
    raw.starts_with(['[', '"', '\''])
}

/// Whether `raw` is written as a number only (sign, digits, `_`, a radix prefix, a fraction or an
/// exponent), as opposed to a number followed by a unit.
fn looks_numeric(raw: &str) -> bool {
    let t = raw.trim_start_matches(['+', '-']).replace('_', "");
    let digits = t
        .strip_prefix("0x")
        .map(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
        .or_else(|| {
            t.strip_prefix("0o")
                .map(|o| !o.is_empty() && o.chars().all(|c| ('0'..='7').contains(&c)))
        })
        .or_else(|| {
            t.strip_prefix("0b")
                .map(|b| !b.is_empty() && b.chars().all(|c| c == '0' || c == '1'))
        });
    digits.unwrap_or_else(|| t.parse::<f64>().is_ok())
}

fn scalar(v: &DeValue<'_>) -> Result<Value, String> {
    Ok(match v {
        DeValue::String(s) => Value::Str(s.to_string()),
        DeValue::Integer(i) => {
            let s: String = i.as_str().chars().filter(|&c| c != '_').collect();
            let digits = s
                .trim_start_matches("0x")
                .trim_start_matches("0o")
                .trim_start_matches("0b");
            Value::Int(
                i128::from_str_radix(digits, i.radix())
                    .ok()
                    .filter(|x| (i64::MIN as i128..=u64::MAX as i128).contains(x))
                    .ok_or_else(|| format!("{} is beyond a 64-bit integer", i.as_str()))?,
            )
        }
        DeValue::Float(f) => Value::Float(
            f.as_str()
                .replace('_', "")
                .parse()
                .map_err(|_| format!("`{}` is not a number", f.as_str()))?,
        ),
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Array(a) => Value::Array(
            a.iter()
                .map(|x| scalar(x.get_ref()))
                .collect::<Result<_, _>>()?,
        ),
        DeValue::Datetime(_) => return Err("datetime values are not used in scenarios".into()),
        DeValue::Table(_) => return Err("tables inside arrays are not used in scenarios".into()),
    })
}

/// Where a message sorts: unknown keys first, then file lines, the file alone, `--set`.
fn rank_of(origin: Option<&Origin>, unknown: bool, set_index: usize) -> Rank {
    let u = if unknown { 0 } else { 1 };
    match origin {
        Some(Origin::File { line, .. }) => (u, 0, *line),
        None => (u, 1, 0),
        Some(Origin::CommandLine) => (u, 2, set_index),
    }
}

/// Largest index `--set` may give an array of tables beyond those of the file: the next one.
const MAX_NEW_TABLES: usize = 1;

impl Document {
    /// Parses `text` (the content of `path`). Broken TOML is one error (the parser stops there);
    /// values the scenarios never use are recorded and the rest is read.
    pub fn parse(path: &str, text: &str) -> Result<Self, ScenarioError> {
        let lines = Lines::new(text);
        let table = DeTable::parse(text).map_err(|e| {
            // Without a place (the reader's nesting limit), the line of the deepest key.
            let line = e.span().map_or_else(
                || {
                    text.lines()
                        .enumerate()
                        .max_by_key(|(i, l)| {
                            let key = l.split(['=', '#']).next().unwrap_or("");
                            (key.matches('.').count(), usize::MAX - i)
                        })
                        .map_or(1, |(i, _)| i + 1)
                },
                |s| lines.line(s.start),
            );
            ScenarioError {
                at: format!("{path}:{line}"),
                key: None,
                message: match e.message().trim_end() {
                    "recursion limit" => {
                        "not valid TOML: keys or tables nested more deeply than the reader allows"
                            .to_string()
                    }
                    // A key given twice: its name, as the parser's place holds it.
                    "duplicate key" => match e.span().and_then(|s| text.get(s)).map(str::trim) {
                        Some(k) if !k.is_empty() && k.len() <= 80 && !k.contains('\n') => {
                            format!("not valid TOML: `{k}` is given twice")
                        }
                        _ => "not valid TOML: duplicate key".to_string(),
                    },
                    m => format!("not valid TOML: {m}"),
                },
            }
        })?;
        let mut doc = Document {
            path: path.to_string(),
            entries: BTreeMap::new(),
            headers: HashMap::new(),
            counts: HashMap::new(),
            empty_tables: Vec::new(),
            refused: BTreeSet::new(),
            overrides: 0,
            taken: RefCell::new(BTreeSet::new()),
            asked: RefCell::new(BTreeSet::new()),
            errors: RefCell::new(Vec::new()),
            warnings: RefCell::new(Vec::new()),
        };
        doc.flatten(&lines, "", table.get_ref());
        Ok(doc)
    }

    fn file_origin(&self, lines: &Lines, offset: usize) -> Origin {
        Origin::File {
            path: self.path.clone(),
            line: lines.line(offset),
        }
    }

    /// Flattens table `t` under `prefix`; returns the first line it holds (for implicit tables,
    /// which have no header of their own).
    fn flatten(&mut self, lines: &Lines, prefix: &str, t: &DeTable<'_>) -> Option<Origin> {
        let mut first: Option<Origin> = None;
        for (k, v) in t.iter() {
            let key = if prefix.is_empty() {
                k.get_ref().to_string()
            } else {
                format!("{prefix}.{}", k.get_ref())
            };
            let origin = self.file_origin(lines, k.span().start);
            let here = match v.get_ref() {
                DeValue::Table(sub) => {
                    let header =
                        (v.span().end > 0).then(|| self.file_origin(lines, v.span().start));
                    let inner = self.flatten(lines, &key, sub);
                    let at = header.or(inner.clone()).unwrap_or_else(|| origin.clone());
                    if sub.is_empty() {
                        self.empty_tables.push(key.clone());
                    }
                    self.headers.insert(key, at.clone());
                    at
                }
                DeValue::Array(a) if a.iter().any(|x| x.get_ref().is_table()) => {
                    self.counts.insert(key.clone(), a.len());
                    for (i, x) in a.iter().enumerate() {
                        let element = format!("{key}[{i}]");
                        let at = if x.span().end > 0 {
                            self.file_origin(lines, x.span().start)
                        } else {
                            origin.clone()
                        };
                        match x.get_ref().as_table() {
                            Some(sub) => {
                                self.flatten(lines, &element, sub);
                                if sub.is_empty() {
                                    self.empty_tables.push(element.clone());
                                }
                            }
                            None => self.record(
                                Some(&at),
                                Some(&key),
                                "mixes tables and values".into(),
                                false,
                            ),
                        }
                        self.headers.insert(element, at);
                    }
                    origin
                }
                other => {
                    match scalar(other) {
                        Ok(value) => {
                            self.entries.insert(key, (value, origin.clone()));
                        }
                        Err(m) => {
                            // Taken, so it is not also unknown.
                            self.taken.borrow_mut().insert(key.clone());
                            self.record(Some(&origin), Some(&key), m, false);
                            self.refused.insert(key);
                        }
                    }
                    origin
                }
            };
            if first.as_ref().is_none_or(|f| line_of(f) > line_of(&here)) {
                first = Some(here);
            }
        }
        first
    }

    fn record(&self, at: Option<&Origin>, key: Option<&str>, message: String, unknown: bool) {
        let rank = rank_of(at, unknown, self.overrides);
        let e = ScenarioError {
            at: at.map_or_else(|| self.path.clone(), |o| o.to_string()),
            key: key.map(str::to_string),
            message,
        };
        self.errors.borrow_mut().push((rank, e));
    }

    /// Applies `key=value` (the value read as TOML, or as a plain string when it is not).
    pub fn set(&mut self, assignment: &str) -> Result<(), ScenarioError> {
        let bad = |key: Option<&str>, message: String| ScenarioError {
            at: "--set".into(),
            key: key.map(str::to_string),
            message,
        };
        let Some((k, v)) = assignment.split_once('=') else {
            return Err(bad(None, format!("`{assignment}` is not key=value")));
        };
        let key = k.trim().to_string();
        if key.is_empty() {
            return Err(bad(None, format!("`{assignment}` has an empty key")));
        }
        let well_formed = !key.is_empty()
            && key.split('.').all(|part| {
                let name = part.split('[').next().unwrap_or("");
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            });
        if !well_formed {
            return Err(bad(
                Some(&key),
                format!("`{assignment}`: a key is dotted names such as `switch.crt`"),
            ));
        }
        // An index into an array of tables: an existing table, or the next one.
        let mut table = String::new();
        for (i, part) in key.split('.').enumerate() {
            if i > 0 {
                table.push('.');
            }
            let Some((name, rest)) = part.split_once('[') else {
                table.push_str(part);
                continue;
            };
            table.push_str(name);
            let index = rest
                .strip_suffix(']')
                .and_then(|x| x.parse::<usize>().ok())
                .ok_or_else(|| bad(Some(&key), format!("`{part}`: an index is `name[3]`")))?;
            let have = self.counts.get(&table).copied().unwrap_or(0);
            if index >= have + MAX_NEW_TABLES {
                return Err(bad(
                    Some(&key),
                    format!(
                        "index {index}: `{table}` has {have} tables, so `--set` may name [0] to [{have}]"
                    ),
                ));
            }
            self.counts.insert(table.clone(), have.max(index + 1));
            table.push_str(&format!("[{index}]"));
        }
        let raw = v.trim();
        let value = match DeValue::parse(raw) {
            Ok(x) if matches!(x.get_ref(), DeValue::Datetime(_)) => Value::Str(raw.to_string()),
            Ok(x) => match scalar(x.get_ref()) {
                Ok(v) => v,
                // Text that only starts like a number (`1_000ns`) is a string such as a time;
                // a number out of range stays an error.
                Err(m) if looks_numeric(raw) || looks_toml(raw) => return Err(bad(Some(&key), m)),
                Err(_) => Value::Str(raw.to_string()),
            },
            // Text that starts like an array or a quoted string is meant as TOML: its syntax
            // error is the one to report, not a type mismatch later.
            Err(e) if looks_toml(raw) => {
                let e = e.to_string();
                let mut lines = e.lines().map(str::trim).filter(|l| !l.is_empty());
                let column = lines.next().and_then(|l| l.split_once("column "));
                let what = lines.next_back().unwrap_or("");
                let column = column
                    .map(|(_, c)| format!(" (column {c})"))
                    .unwrap_or_default();
                return Err(bad(
                    Some(&key),
                    format!("`{raw}` is not a TOML value: {what}{column}"),
                ));
            }
            Err(_) => Value::Str(raw.to_string()),
        };
        self.overrides += 1;
        self.taken.borrow_mut().remove(&key);
        self.entries.insert(key, (value, Origin::CommandLine));
        Ok(())
    }

    /// Records an error found outside the document (a `--set` that could not be applied).
    pub fn push(&self, e: ScenarioError) {
        let rank = if e.at == "--set" {
            (1, 2, self.overrides)
        } else {
            (1, 1, 0)
        };
        self.errors.borrow_mut().push((rank, e));
    }

    /// Errors recorded so far.
    pub fn error_count(&self) -> usize {
        self.errors.borrow().len()
    }

    /// Where `key` is written (`file:line`, `--set`, or the file alone), for messages.
    pub fn place(&self, key: &str) -> String {
        self.origin(key)
            .map_or_else(|| self.path.clone(), |o| o.to_string())
    }

    /// The file path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Where `key` was written; for a key that is absent, the header of its table.
    fn origin(&self, key: &str) -> Option<Origin> {
        if let Some((_, o)) = self.entries.get(key) {
            return Some(o.clone());
        }
        let mut k = key;
        loop {
            if let Some(o) = self.headers.get(k) {
                return Some(o.clone());
            }
            // A table with no header of its own, made by a key written into it (`--set
            // traffic.flow[2].src=0`): where that key was written.
            if k.ends_with(']') {
                let inside = format!("{k}.");
                if let Some((_, (_, o))) = self
                    .entries
                    .range(inside.clone()..)
                    .next()
                    .filter(|(e, _)| e.starts_with(&inside))
                {
                    return Some(o.clone());
                }
            }
            k = &k[..k.rfind(['.', '['])?];
        }
    }

    /// An error about `key`, located where it was written (or where its table starts).
    pub fn error(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            at: self
                .origin(key)
                .map_or_else(|| self.path.clone(), |o| o.to_string()),
            key: Some(key.to_string()),
            message: message.into(),
        }
    }

    /// Records an error about `key` and goes on reading. Returns `None`, the value a reader
    /// gives for a key in error.
    pub fn fail<T>(&self, key: &str, message: impl Into<String>) -> Option<T> {
        let o = self.origin(key);
        self.record(o.as_ref(), Some(key), message.into(), false);
        None
    }

    /// Whether `ok` holds; when it does not, records `message()` about `key`.
    pub fn holds(&self, key: &str, ok: bool, message: impl FnOnce() -> String) -> bool {
        if !ok {
            self.fail::<()>(key, message());
        }
        ok
    }

    /// Records a warning about `key`: legal, but surely not what was meant.
    pub fn warn(&self, key: &str, message: impl Into<String>) {
        let o = self.origin(key);
        let e = self.error(key, message);
        self.warnings
            .borrow_mut()
            .push((rank_of(o.as_ref(), false, 0), e));
    }

    /// Records "missing" for `key`, unless it is present (then its error is already recorded).
    pub fn missing(&self, key: &str, what: &str) {
        self.asked.borrow_mut().insert(generic(key));
        if !self.has(key) && !self.refused.contains(key) {
            self.fail::<()>(key, format!("missing ({what})"));
        }
    }

    /// The key a misspelt or misplaced `key` most likely meant, among those the readers asked
    /// for: the closest within two edits (and at most a third of the key's length), else a key
    /// of the same name in another table (`kind` for `topology.kind`).
    fn suggestion(&self, key: &str, cache: &mut HashMap<String, Option<String>>) -> Option<String> {
        let g = generic(key);
        let last = |k: &str| k.rsplit('.').next().unwrap_or("").to_string();
        let best = cache
            .entry(g.clone())
            .or_insert_with(|| {
                let asked = self.asked.borrow();
                let candidates = || asked.iter().filter(|a| **a != g && !a.ends_with("[]"));
                candidates()
                    .filter_map(|a| distance(&g, a, 2).map(|d| (d, a)))
                    .filter(|&(d, _)| 3 * d <= g.len())
                    .min()
                    .map(|(_, a)| a.clone())
                    .or_else(|| candidates().find(|a| last(a) == last(&g)).cloned())
            })
            .clone()?;
        Some(specific(&best, key))
    }

    /// Records every key nobody read, and every table with no key that nobody asked for.
    fn record_unknown(&self) {
        let mut cache = HashMap::new();
        let unread: Vec<String> = {
            let taken = self.taken.borrow();
            self.entries
                .keys()
                .filter(|k| !taken.contains(*k))
                .cloned()
                .collect()
        };
        for k in unread {
            // A key read as an array of tables (`[[k]]`) but given as a plain value.
            let g = generic(&k);
            let found = || self.entries.get(&k).map_or("a value", |(v, _)| v.kind());
            let tables = self.asked.borrow().contains(&format!("{g}[]"));
            // A key the readers asked into: a table given a plain value (`switch = 5`).
            let table = self
                .asked
                .borrow()
                .iter()
                .any(|a| a.starts_with(&g) && a[g.len()..].starts_with(['.', '[']));
            let message = if tables {
                format!("expected tables `[[{k}]]`, found {}", found())
            } else if table {
                format!("expected a table, found {}", found())
            } else {
                match self.suggestion(&k, &mut cache) {
                    Some(s) => format!("unknown key; did you mean `{s}`?"),
                    None => "unknown key".to_string(),
                }
            };
            let o = self.origin(&k);
            self.record(o.as_ref(), Some(&k), message, true);
        }
        for t in &self.empty_tables {
            let g = generic(t);
            let known = self
                .asked
                .borrow()
                .iter()
                .any(|a| a.starts_with(&g) && a[g.len()..].starts_with(['.', '[']));
            if !known {
                let o = self.headers.get(t).cloned();
                self.record(o.as_ref(), Some(t), "unknown table".into(), true);
            }
        }
    }

    /// Ends the reading: every error recorded (unknown keys first, then by place), or the
    /// warnings (each `place: key `k`: what`).
    pub fn finish(&self) -> Result<Vec<String>, ScenarioErrors> {
        self.record_unknown();
        let mut errors = std::mem::take(&mut *self.errors.borrow_mut());
        if errors.is_empty() {
            let mut w = std::mem::take(&mut *self.warnings.borrow_mut());
            w.sort_by_key(|(r, _)| *r);
            return Ok(w.into_iter().map(|(_, e)| e.to_string()).collect());
        }
        errors.sort_by_key(|(r, _)| *r);
        Err(ScenarioErrors(errors.into_iter().map(|(_, e)| e).collect()))
    }

    /// Every key with its value as written, for the run summary.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Value, &Origin)> {
        self.entries.iter().map(|(k, (v, o))| (k.as_str(), v, o))
    }
}

fn line_of(o: &Origin) -> usize {
    match o {
        Origin::File { line, .. } => *line,
        Origin::CommandLine => usize::MAX,
    }
}
