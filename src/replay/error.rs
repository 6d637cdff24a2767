//! Trace errors: each names its place (`file:line`, or the file alone for what no line holds),
//! the offending token when there is one, and what is wrong; a failed load gives all of them.

use std::fmt;

/// Most errors one load reports; the rest are counted in a last error.
pub const MAX_ERRORS: usize = 50;

/// An error in a trace or a rank map: where, which token, what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// `file:line`, or the file alone.
    pub at: String,
    /// The offending token, if one is to blame.
    pub token: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl TraceError {
    /// An error at `file:line`.
    pub fn at_line(file: &str, line: u32, token: Option<&str>, message: impl Into<String>) -> Self {
        TraceError {
            at: format!("{file}:{line}"),
            token: token.map(str::to_string),
            message: message.into(),
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.token {
            Some(t) => write!(
                f,
                "{}: `{}`: {}",
                self.at,
                Visible(t),
                Visible(&self.message)
            ),
            None => write!(f, "{}: {}", self.at, Visible(&self.message)),
        }
    }
}

/// Text with its invisible characters written out (`\u{0}`, `\u{feff}`), so that a NUL byte or
/// a byte-order mark in a trace shows in the error that blames it.
struct Visible<'a>(&'a str);

impl fmt::Display for Visible<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            let invisible = (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{feff}');
            match invisible {
                true => write!(f, "{}", c.escape_unicode())?,
                false => write!(f, "{c}")?,
            }
        }
        Ok(())
    }
}

impl std::error::Error for TraceError {}

/// Every error of a load, in file order where they have a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceErrors(pub Vec<TraceError>);

impl TraceErrors {
    /// The first error reported.
    pub fn first(&self) -> &TraceError {
        &self.0[0]
    }

    /// Keeps at most [`MAX_ERRORS`] errors, the last one placed at the first left out and
    /// saying how many were left out.
    pub(crate) fn capped(errors: Vec<TraceError>) -> Self {
        Self::capped_beyond(errors, 0)
    }

    /// [`capped`](Self::capped) of `errors` followed by `unkept` more, counted but not kept
    /// (`errors` holds at least the first [`MAX_ERRORS`] when `unkept` is not 0).
    pub(crate) fn capped_beyond(mut errors: Vec<TraceError>, unkept: usize) -> Self {
        if errors.len() + unkept > MAX_ERRORS {
            let more = errors.len() + unkept - (MAX_ERRORS - 1);
            let at = errors[MAX_ERRORS - 1].at.clone();
            errors.truncate(MAX_ERRORS - 1);
            errors.push(TraceError {
                at,
                token: None,
                message: format!("and {more} more errors"),
            });
        }
        TraceErrors(errors)
    }
}

/// Keeps `e` among the first [`MAX_ERRORS`] errors, else only counts it in `unkept` (for
/// [`TraceErrors::capped_beyond`]): a file of bad lines costs no memory for its errors.
pub(crate) fn keep(errors: &mut Vec<TraceError>, unkept: &mut usize, e: TraceError) {
    match errors.len() {
        n if n < MAX_ERRORS => errors.push(e),
        _ => *unkept += 1,
    }
}

impl From<TraceError> for TraceErrors {
    fn from(e: TraceError) -> Self {
        TraceErrors(vec![e])
    }
}

impl fmt::Display for TraceErrors {
    /// One error per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::config::errors::one_per_line(f, &self.0)
    }
}

impl std::error::Error for TraceErrors {}
