//! Scenario errors: each names its place (`file:line`, `--set`, or the file alone), the key
//! and what is wrong; a failed load gives all of them.

use std::fmt;

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

/// Every error of a scenario, in the order they are reported: unknown keys first, then the
/// others by place (file lines in order, keys without a line, then `--set` options).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

impl ScenarioErrors {
    /// The first error reported.
    pub fn first(&self) -> &ScenarioError {
        &self.0[0]
    }
}

impl From<ScenarioError> for ScenarioErrors {
    fn from(e: ScenarioError) -> Self {
        ScenarioErrors(vec![e])
    }
}

impl fmt::Display for ScenarioErrors {
    /// One error per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        one_per_line(f, &self.0)
    }
}

/// Writes `items` one per line (no newline after the last): how a list of errors reads.
pub fn one_per_line<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    for (i, e) in items.iter().enumerate() {
        if i > 0 {
            f.write_str("\n")?;
        }
        write!(f, "{e}")?;
    }
    Ok(())
}

impl std::error::Error for ScenarioErrors {}
