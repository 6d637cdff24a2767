//! A scenario document's readers: each takes one key as a value of its type (string, integer,
//! number, boolean, array), marks it used, and records an error naming the key's file and line
//! when the value has another type.

use super::{Document, Value};
use crate::config::keys::generic;

impl Document {
    /// The raw value of `key`, marking it used.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.asked.borrow_mut().insert(generic(key));
        let e = self.entries.get(key)?;
        self.taken.borrow_mut().insert(key.to_string());
        Some(&e.0)
    }

    /// Whether `key` is present.
    pub fn has(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// Marks the keys `keys` (each with what is under it) as used, without a word: for the
    /// keys of a table whose kind is in error, which would otherwise all be reported unknown.
    /// Keys of the table that no kind reads stay unknown (a misspelt kind key among them).
    pub fn skip(&self, keys: &[&str]) {
        let mut taken = self.taken.borrow_mut();
        for prefix in keys {
            for (k, _) in self
                .entries
                .range(prefix.to_string()..)
                .take_while(|(k, _)| k.starts_with(prefix))
                .filter(|(k, _)| {
                    k.len() == prefix.len() || matches!(k.as_bytes()[prefix.len()], b'.' | b'[')
                })
            {
                taken.insert(k.clone());
            }
        }
    }

    /// Marks every key under `prefix` as used, with one warning that it is ignored and `why`.
    pub fn ignore(&self, prefix: &str, why: &str) {
        self.asked.borrow_mut().insert(generic(prefix));
        let under: Vec<&String> = self
            .entries
            .range(prefix.to_string()..)
            .map(|(k, _)| k)
            .take_while(|k| k.starts_with(prefix))
            .filter(|k| {
                k.len() == prefix.len() || matches!(k.as_bytes()[prefix.len()], b'.' | b'[')
            })
            .collect();
        let mut taken = self.taken.borrow_mut();
        let fresh: Vec<&&String> = under.iter().filter(|k| !taken.contains(**k)).collect();
        if let Some(first) = fresh.first() {
            let first = first.to_string();
            for k in &fresh {
                taken.insert(k.to_string());
            }
            drop(taken);
            self.warn(&first, format!("ignored: {why}"));
        }
    }

    /// A string.
    pub fn str(&self, key: &str) -> Option<String> {
        match self.get(key)? {
            Value::Str(s) => Some(s.clone()),
            v => self.fail(key, format!("expected a string, found {}", v.kind())),
        }
    }

    /// A non-negative integer.
    pub fn uint(&self, key: &str) -> Option<u64> {
        match self.get(key)? {
            Value::Int(i) if *i < 0 => self.fail(key, format!("{i} is negative")),
            Value::Int(i) => Some(*i as u64),
            v => self.fail(key, format!("expected an integer, found {}", v.kind())),
        }
    }

    /// A finite number (integer or float).
    pub fn number(&self, key: &str) -> Option<f64> {
        match self.get(key)? {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) if f.is_finite() => Some(*f),
            Value::Float(f) => self.fail(key, format!("{f} is not a finite number")),
            v => self.fail(key, format!("expected a number, found {}", v.kind())),
        }
    }

    /// A boolean.
    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.get(key)? {
            Value::Bool(b) => Some(*b),
            v => self.fail(key, format!("expected true or false, found {}", v.kind())),
        }
    }

    /// An array of non-negative integers.
    pub fn uints(&self, key: &str) -> Option<Vec<u64>> {
        match self.get(key)? {
            Value::Array(a) => {
                let v: Option<Vec<u64>> = a
                    .iter()
                    .map(|x| match x {
                        Value::Int(i) if (0..=u64::MAX as i128).contains(i) => Some(*i as u64),
                        _ => None,
                    })
                    .collect();
                v.or_else(|| self.fail(key, "expected an array of non-negative integers"))
            }
            v => self.fail(key, format!("expected an array, found {}", v.kind())),
        }
    }

    /// Number of elements of the array of tables `key` (`key[0]`, `key[1]`, ...).
    pub fn table_count(&self, key: &str) -> usize {
        self.asked.borrow_mut().insert(format!("{key}[]"));
        self.counts.get(key).copied().unwrap_or(0)
    }
}
