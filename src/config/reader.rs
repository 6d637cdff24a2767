//! Typed reads of scenario keys: times, sizes, percentages, bounded integers and choices, each
//! converted with the scenario's time base and refused at its key and line when wrong.

use super::document::{Document, Value};
use super::units::{TimeBase, UnitError, shown};

/// Reads keys through the document, converting units with the scenario's time base. Every
/// reader returns `None` for a key in error, after recording the error.
pub(super) struct Reader<'a> {
    pub(super) doc: &'a Document,
    pub(super) tb: TimeBase,
}

impl Reader<'_> {
    /// A quantity with its unit (`default` when absent), converted by `convert`; `example` says
    /// how one is written, for a bare number.
    fn quantity(
        &self,
        key: &str,
        default: &str,
        example: &str,
        convert: impl Fn(&str) -> Result<u64, UnitError>,
    ) -> Option<u64> {
        let text = match self.doc.get(key) {
            None => default.to_string(),
            Some(Value::Int(_) | Value::Float(_)) => {
                return self
                    .doc
                    .fail(key, format!("a bare number; write {example}"));
            }
            Some(_) => self.doc.str(key)?,
        };
        convert(&text)
            .map_err(|e| self.doc.fail::<()>(key, e.0))
            .ok()
    }

    /// A time in cycles, `default` when absent.
    pub(super) fn time(&self, key: &str, default: &str) -> Option<u64> {
        let example = "a time with its unit, such as `30ns`, `5us` or `3ms`";
        self.quantity(key, default, example, |t| self.tb.cycles(t))
    }

    /// A time in cycles that must be given.
    pub(super) fn time_required(&self, key: &str, what: &str) -> Option<u64> {
        if !self.doc.has(key) {
            self.doc.missing(key, what);
            return None;
        }
        self.time(key, "0ns")
    }

    /// A size in flits, `default` when absent.
    pub(super) fn size(&self, key: &str, default: &str) -> Option<u64> {
        let example = "a size with its unit, such as `4KB`, `64B` or `84flits`";
        self.quantity(key, default, example, |t| self.tb.flits(t))
    }

    /// A rate below the link's (`5Mb/s`, `1Gb/s`), `default` when absent, as a fraction of the
    /// link rate in units of `one`; refused at 0 and above the link rate.
    pub(super) fn rate(&self, key: &str, default: &str, one: u32) -> Option<u32> {
        let example = "a rate with its unit, such as `50Mb/s` or `1Gb/s`";
        let link = self.tb.link_gbps;
        self.quantity(key, default, example, |t| {
            let gbps = TimeBase::parse_rate(t)?;
            let units = (gbps / link * one as f64).round();
            if !(gbps > 0.0 && units >= 1.0) {
                return Err(UnitError(format!(
                    "`{t}` is no rate a limiter can keep (above 0)"
                )));
            }
            if units > one as f64 {
                return Err(UnitError(format!(
                    "`{t}` is above the link rate ({link} Gb/s)"
                )));
            }
            Ok(units as u64)
        })
        .map(|u| u as u32)
    }

    /// The size of a phase flow in bytes, 1 B to 2^40 B; `what` says what it is, when missing.
    pub(super) fn flow_bytes(&self, key: &str, what: &str) -> Option<u64> {
        if !self.doc.has(key) {
            self.doc.missing(key, what);
            return None;
        }
        let example = "a size with its unit, such as `12.5MB`, `4KB` or `100B`";
        let b = self.quantity(key, "0B", example, TimeBase::flow_bytes)?;
        if b == 0 {
            return self
                .doc
                .fail(key, "0 bytes: a flow of a phase carries at least one byte");
        }
        Some(b)
    }

    /// A percentage, 0 to 100.
    pub(super) fn percent(&self, key: &str, default: f64) -> Option<f64> {
        let v = match self.doc.get(key) {
            None => default,
            Some(_) => self.doc.number(key)?,
        };
        if !(0.0..=100.0).contains(&v) {
            return self
                .doc
                .fail(key, format!("{} is not a percentage (0 to 100)", shown(v)));
        }
        Some(v)
    }

    /// An integer in `lo..=hi` (`why` says where the limits come from), `default` when absent
    /// (required when `default` is `None`).
    pub(super) fn uint_in(
        &self,
        key: &str,
        default: Option<u64>,
        (lo, hi): (u64, u64),
        why: &str,
    ) -> Option<u64> {
        let v = match (self.doc.get(key), default) {
            (Some(_), _) => self.doc.uint(key)?,
            (None, Some(v)) => v,
            (None, None) => {
                self.doc.missing(key, &format!("an integer, {lo} to {hi}"));
                return None;
            }
        };
        if !(lo..=hi).contains(&v) {
            return self
                .doc
                .fail(key, format!("{v} is outside {lo}..={hi} ({why})"));
        }
        Some(v)
    }

    /// One of `names`, `default` when absent (required when `None`).
    pub(super) fn choice(
        &self,
        key: &str,
        default: Option<&str>,
        names: &[&str],
    ) -> Option<String> {
        let list = names.join(", ");
        let v = match (self.doc.get(key), default) {
            (Some(_), _) => self.doc.str(key)?,
            (None, Some(d)) => d.to_string(),
            (None, None) => {
                self.doc.missing(key, &format!("one of {list}"));
                return None;
            }
        };
        if names.contains(&v.as_str()) {
            Some(v)
        } else {
            self.doc.fail(key, format!("`{v}` is not one of {list}"))
        }
    }
}
