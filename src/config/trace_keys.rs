//! Trace keys: the MPI trace an end node's ranks replay (`traffic.trace`: a file in the text
//! format of `docs/traces.md`, or the `.otf2` anchor file of an OTF2 archive) and how ranks are
//! placed on nodes (`traffic.mapping`: `linear`, `random` from the scenario's seed, or a map
//! file). Paths are taken relative to the scenario's folder; a bundled scenario finds its trace
//! among the bundled traces. A trace that does not load is an error at `traffic.trace` carrying
//! the trace's own place (`file:line`, or the OTF2 location and event).

use super::scenario::Reader;
use super::text_lines::{LineError, MAX_LINE, open_input, read_line_capped};
use crate::replay::{self, Mapping, Program};
use std::path::Path;

/// The traces shipped in `scenarios/traces/`, by the path a bundled scenario gives.
pub const BUNDLED_TRACES: &[(&str, &str)] = &[(
    "traces/halo_allreduce_16.txt",
    include_str!("../../scenarios/traces/halo_allreduce_16.txt"),
)];

/// A loaded trace and the placement of its ranks.
#[derive(Clone, Debug)]
pub struct TraceReplay {
    /// The trace's file as named in errors.
    pub file: String,
    /// Its operations, resolved and matched.
    pub program: Program,
    /// Which node runs each rank.
    pub mapping: Mapping,
    /// The map file the mapping was read from, if any.
    pub map_file: Option<String>,
}

/// Largest text trace or map file, in bytes: 4 GiB, 64 bytes for each of the most operations a
/// trace may have (2^26; a line such as `12 isend 13 64KB req=3` is 22). The text is held whole
/// while it is read.
pub const MAX_TEXT_BYTES: u64 = 4 << 30;

/// The text of `path`, read line by line: a line that is not UTF-8 or is longer than
/// [`MAX_LINE`] bytes is an error naming it.
fn read_lines(path: &Path) -> std::io::Result<String> {
    use std::io::{BufReader, Error, ErrorKind, Read};
    let f = open_input(path)?;
    let size = f.metadata()?.len();
    if size > MAX_TEXT_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("{size} bytes; a trace or map file is at most {MAX_TEXT_BYTES} bytes (4 GiB)"),
        ));
    }
    // A file that grows while it is read stops at the limit, and fails as unfinished text.
    let mut r = BufReader::new(f.take(MAX_TEXT_BYTES));
    let mut text = String::new();
    for line in 1.. {
        let n = read_line_capped(&mut r, &mut text).map_err(|e| match e {
            LineError::TooLong => Error::new(
                ErrorKind::InvalidData,
                format!("line {line} is longer than {MAX_LINE} bytes (not a text file)"),
            ),
            LineError::Io(e) => Error::new(e.kind(), format!("line {line}: {e}")),
        })?;
        if n == 0 {
            break;
        }
    }
    Ok(text)
}

/// Reads the text of `name` given in the scenario `scenario`: beside it on disk, or bundled.
fn read_text(scenario: &str, name: &str) -> Result<(String, String), String> {
    let beside = Path::new(scenario)
        .parent()
        .unwrap_or(Path::new(""))
        .join(name);
    match read_lines(&beside) {
        Ok(t) => Ok((beside.display().to_string(), t)),
        // A bundled scenario's trace is bundled too, unless a file of that name is beside it.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BUNDLED_TRACES
            .iter()
            .find(|(n, _)| *n == name && scenario.starts_with("scenarios/"))
            .map(|(n, t)| (format!("scenarios/{n}"), t.to_string()))
            .ok_or_else(|| {
                format!(
                    "cannot read `{}`: {e} (a relative path is read beside the scenario; give \
                     an absolute one for a file elsewhere)",
                    beside.display()
                )
            }),
        Err(e) => Err(format!("cannot read `{}`: {e}", beside.display())),
    }
}

/// Reads `traffic.trace` and `traffic.mapping` for a fabric of `nodes` end nodes.
pub(super) fn read(r: &Reader, nodes: Option<u32>, seed: Option<u64>) -> Option<TraceReplay> {
    let doc = r.doc;
    if !doc.has("traffic.trace") {
        doc.missing("traffic.trace", "the trace file the ranks replay");
        return None;
    }
    // Both read before either can end the reading, so a bad trace key leaves the mapping known.
    let name = doc.str("traffic.trace");
    let mapping = doc
        .str("traffic.mapping")
        .unwrap_or_else(|| "linear".into());
    let name = name?;
    let (file, program) = if name.ends_with(".otf2") {
        // An OTF2 archive's anchor file, read through the OTF2 library.
        let anchor = Path::new(doc.path())
            .parent()
            .unwrap_or(Path::new(""))
            .join(&name);
        let program = replay::otf2::load(&anchor)
            .map_err(|e| doc.fail::<()>("traffic.trace", e.to_string()))
            .ok()?;
        (anchor.display().to_string(), program)
    } else {
        let (file, text) = read_text(doc.path(), &name)
            .map_err(|e| doc.fail::<()>("traffic.trace", e))
            .ok()?;
        let program = replay::load(&text, &file)
            .map_err(|e| doc.fail::<()>("traffic.trace", e.to_string()))
            .ok()?;
        (file, program)
    };
    let (nodes, seed) = (nodes?, seed?);
    let ranks = program.ranks();
    let mut map_file = None;
    let mapping = match mapping.as_str() {
        "linear" => Mapping::linear(ranks, nodes),
        "random" => Mapping::random(ranks, nodes, seed),
        path => match read_text(doc.path(), path) {
            Ok((f, t)) => {
                let m = Mapping::from_file(&t, &f, ranks, nodes).map_err(|e| e.to_string());
                map_file = Some(f);
                m
            }
            Err(e) => Err(format!("not `linear` or `random`, and as a map file: {e}")),
        },
    }
    .map_err(|e| doc.fail::<()>("traffic.mapping", e))
    .ok()?;
    Some(TraceReplay {
        file,
        program,
        mapping,
        map_file,
    })
}
