//! A scenario document: TOML flattened into dotted keys, each remembering its file and line,
//! with command-line overrides on top. Readers take keys one by one; keys nobody took are
//! reported as unknown.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use toml::de::{DeTable, DeValue};

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
    /// Integer.
    Int(i64),
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

/// An error in a scenario: where, which key, what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// File and line, or `--set`, or the file alone.
    pub at: String,
    /// The key concerned (dotted), if any.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(k) => write!(f, "{}: key `{k}`: {}", self.at, self.message),
            None => write!(f, "{}: {}", self.at, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// The flattened document.
#[derive(Debug)]
pub struct Document {
    path: String,
    entries: BTreeMap<String, (Value, Origin)>,
    taken: RefCell<BTreeSet<String>>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

fn scalar(v: &DeValue<'_>) -> Option<Value> {
    Some(match v {
        DeValue::String(s) => Value::Str(s.to_string()),
        DeValue::Integer(i) => {
            let s: String = i.as_str().chars().filter(|&c| c != '_').collect();
            Value::Int(
                i64::from_str_radix(
                    s.trim_start_matches("0x")
                        .trim_start_matches("0o")
                        .trim_start_matches("0b"),
                    i.radix(),
                )
                .ok()?,
            )
        }
        DeValue::Float(f) => Value::Float(f.as_str().replace('_', "").parse().ok()?),
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Array(a) => Value::Array(
            a.iter()
                .map(|x| scalar(x.get_ref()))
                .collect::<Option<_>>()?,
        ),
        DeValue::Datetime(_) | DeValue::Table(_) => return None,
    })
}

impl Document {
    /// Parses `text` (the content of `path`).
    pub fn parse(path: &str, text: &str) -> Result<Self, ScenarioError> {
        let table = DeTable::parse(text).map_err(|e| ScenarioError {
            at: format!("{path}:{}", e.span().map_or(1, |s| line_of(text, s.start))),
            key: None,
            message: format!("not valid TOML: {}", e.message()),
        })?;
        let mut doc = Document {
            path: path.to_string(),
            entries: BTreeMap::new(),
            taken: RefCell::new(BTreeSet::new()),
        };
        doc.flatten(text, "", table.get_ref())?;
        Ok(doc)
    }

    fn flatten(&mut self, text: &str, prefix: &str, t: &DeTable<'_>) -> Result<(), ScenarioError> {
        for (k, v) in t.iter() {
            let key = if prefix.is_empty() {
                k.get_ref().to_string()
            } else {
                format!("{prefix}.{}", k.get_ref())
            };
            let origin = Origin::File {
                path: self.path.clone(),
                line: line_of(text, k.span().start),
            };
            match v.get_ref() {
                DeValue::Table(sub) => self.flatten(text, &key, sub)?,
                DeValue::Array(a) if a.iter().any(|x| x.get_ref().is_table()) => {
                    for (i, x) in a.iter().enumerate() {
                        let Some(sub) = x.get_ref().as_table() else {
                            return Err(ScenarioError {
                                at: origin.to_string(),
                                key: Some(key),
                                message: "mixes tables and values".into(),
                            });
                        };
                        self.flatten(text, &format!("{key}[{i}]"), sub)?;
                    }
                }
                other => {
                    let value = scalar(other).ok_or_else(|| ScenarioError {
                        at: origin.to_string(),
                        key: Some(key.clone()),
                        message: format!("{} values are not used in scenarios", other.type_str()),
                    })?;
                    self.entries.insert(key, (value, origin));
                }
            }
        }
        Ok(())
    }

    /// Applies `key=value` (the value read as TOML, or as a plain string when it is not).
    pub fn set(&mut self, assignment: &str) -> Result<(), ScenarioError> {
        let Some((k, v)) = assignment.split_once('=') else {
            return Err(ScenarioError {
                at: "--set".into(),
                key: None,
                message: format!("`{assignment}` is not key=value"),
            });
        };
        let key = k.trim().to_string();
        let raw = v.trim();
        let value = DeValue::parse(raw)
            .ok()
            .and_then(|x| scalar(x.get_ref()))
            .unwrap_or_else(|| Value::Str(raw.to_string()));
        self.entries.insert(key, (value, Origin::CommandLine));
        Ok(())
    }

    /// The file path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// An error about `key`, located where it was written.
    pub fn error(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        let at = match self.entries.get(key) {
            Some((_, o)) => o.to_string(),
            None => self.path.clone(),
        };
        ScenarioError {
            at,
            key: Some(key.to_string()),
            message: message.into(),
        }
    }

    /// The raw value of `key`, marking it used.
    pub fn get(&self, key: &str) -> Option<&Value> {
        let e = self.entries.get(key)?;
        self.taken.borrow_mut().insert(key.to_string());
        Some(&e.0)
    }

    /// Whether `key` is present.
    pub fn has(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// A string.
    pub fn str(&self, key: &str) -> Result<Option<String>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Str(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.error(key, format!("expected a string, found {}", v.kind()))),
        }
    }

    /// A non-negative integer.
    pub fn uint(&self, key: &str) -> Result<Option<u64>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Int(i)) if *i >= 0 => Ok(Some(*i as u64)),
            Some(Value::Int(i)) => Err(self.error(key, format!("{i} is negative"))),
            Some(v) => Err(self.error(key, format!("expected an integer, found {}", v.kind()))),
        }
    }

    /// A number (integer or float).
    pub fn number(&self, key: &str) -> Result<Option<f64>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Int(i)) => Ok(Some(*i as f64)),
            Some(Value::Float(f)) => Ok(Some(*f)),
            Some(v) => Err(self.error(key, format!("expected a number, found {}", v.kind()))),
        }
    }

    /// A boolean.
    pub fn bool(&self, key: &str) -> Result<Option<bool>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.error(key, format!("expected true or false, found {}", v.kind()))),
        }
    }

    /// An array of non-negative integers.
    pub fn uints(&self, key: &str) -> Result<Option<Vec<u64>>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| match x {
                    Value::Int(i) if *i >= 0 => Ok(*i as u64),
                    _ => Err(self.error(key, "expected an array of non-negative integers")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(v) => Err(self.error(key, format!("expected an array, found {}", v.kind()))),
        }
    }

    /// Number of elements of the array of tables `key` (`key[0]`, `key[1]`, ...).
    pub fn table_count(&self, key: &str) -> usize {
        let prefix = format!("{key}[");
        let mut n = 0;
        for k in self.entries.keys().filter(|k| k.starts_with(&prefix)) {
            if let Some(i) = k[prefix.len()..]
                .split(']')
                .next()
                .and_then(|s| s.parse::<usize>().ok())
            {
                n = n.max(i + 1);
            }
        }
        n
    }

    /// Fails on the first key nobody read.
    pub fn reject_unknown(&self) -> Result<(), ScenarioError> {
        let taken = self.taken.borrow();
        match self.entries.keys().find(|k| !taken.contains(*k)) {
            None => Ok(()),
            Some(k) => Err(self.error(k, "unknown key")),
        }
    }

    /// Every key with its value as written, for the run summary.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Value, &Origin)> {
        self.entries.iter().map(|(k, (v, o))| (k.as_str(), v, o))
    }
}
