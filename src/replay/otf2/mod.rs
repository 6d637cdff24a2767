//! OTF2 traces, the format Score-P writes: read into a [`Trace`] and written from one, through
//! the OTF2 C library (`docs/traces.md`, "OTF2 traces").
//!
//! The library is loaded when first needed (`libloading`), so neither building nor running the
//! model needs it; without it, reading and writing OTF2 are errors that name the libraries
//! looked for and the Debian packages to install. An archive is named by its anchor file
//! (`traces.otf2`), beside which OTF2 keeps `traces.def` and a `traces/` folder.
//!
//! - [`read`]: definitions and events into a trace whose ranks' operations come one rank after
//!   another (OTF2 keeps no order between locations); `read.rs` says how ranks, communicators,
//!   compute times, requests and collectives are found. Errors name the anchor file and, for an
//!   event, its location, rank, record and tick. [`load`] also resolves and checks the trace.
//! - [`write`]: a trace as an archive with a 1 ps timer ([`TICKS_PER_SECOND`]); reading it
//!   back gives the same operations, rank by rank, as long as no two computes of a rank follow
//!   each other and none is 0 (those add up, and a 0 is dropped).
//!
//! `ffi.rs` holds all the unsafe code, with the C types of `ctypes.rs`; `records.rs` the records it passes as plain values;
//! `read.rs` and `write.rs` turn records into operations and back.

mod anchor;
mod ctypes;
mod ffi;
mod read;
mod records;
mod requests;
mod write;

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod read_tests;
#[cfg(test)]
mod tests;

use super::error::{TraceError, TraceErrors};
use super::program::Program;
use super::trace::Trace;
use std::path::Path;
use std::sync::OnceLock;

pub use write::TICKS_PER_SECOND;

/// Libraries tried in order: the development link, then the run-time library's soname.
pub const LIBRARY_NAMES: [&str; 2] = ["libotf2.so", "libopen-trace-format2.so.10"];
/// Environment variable naming the library file to load instead (an OTF2 3 of one's own).
pub const LIBRARY_ENV: &str = "ARNSIM_OTF2_LIB";
/// Debian packages that provide the library and `otf2-print`.
pub const PACKAGES: &str = "libotf2-trace-dev otf2-tools";

/// The library, loaded once per process: [`LIBRARY_ENV`]'s file if set, else
/// [`LIBRARY_NAMES`] in order.
fn library() -> Result<&'static ffi::Otf2, String> {
    static LIB: OnceLock<Result<ffi::Otf2, String>> = OnceLock::new();
    let names: Vec<String> = match std::env::var(LIBRARY_ENV) {
        Ok(path) if !path.is_empty() => vec![path],
        _ => LIBRARY_NAMES.iter().map(|s| s.to_string()).collect(),
    };
    LIB.get_or_init(|| ffi::load(&names))
        .as_ref()
        .map_err(Clone::clone)
}

/// Whether the OTF2 library loads; the error names what was tried and what to install.
pub fn library_available() -> Result<(), String> {
    library().map(|_| ())
}

/// An error at the archive as a whole.
fn at_file(file: &str, message: impl Into<String>) -> TraceErrors {
    TraceError {
        at: file.to_string(),
        token: None,
        message: message.into(),
    }
    .into()
}

/// Reads the OTF2 archive whose anchor file is `anchor`.
pub fn read(anchor: &Path) -> Result<Trace, TraceErrors> {
    let file = anchor.display().to_string();
    if !anchor.is_file() {
        return Err(at_file(&file, "no such OTF2 anchor file"));
    }
    anchor::check(anchor).map_err(|e| at_file(&file, e))?;
    refuse_special_members(anchor).map_err(|e| at_file(&file, e))?;
    let lib = library().map_err(|e| at_file(&file, e))?;
    let mut collector = read::Collector::new(&file);
    lib.read(anchor, &mut collector)
        .map_err(|e| at_file(&file, format!("not a readable OTF2 archive: {e}")))?;
    collector.finish().map_err(TraceErrors::capped)
}

/// Refuses an archive whose definitions (`NAME.def`) or a member of its folder (`NAME/`, the
/// locations' `.evt` and `.def` files) is not a regular file: the library would block forever
/// opening a named pipe, and a device or socket is no trace. What is missing is left to the
/// library to name.
fn refuse_special_members(anchor: &Path) -> Result<(), String> {
    let Some(name) = anchor
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".otf2"))
    else {
        return Ok(());
    };
    let dir = match anchor.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let special = |p: &Path| std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir());
    let refuse = |p: &Path| {
        format!(
            "{}: not a regular file (a pipe, device or socket is not read)",
            p.display()
        )
    };
    let defs = dir.join(format!("{name}.def"));
    if special(&defs) {
        return Err(refuse(&defs));
    }
    if let Ok(entries) = std::fs::read_dir(dir.join(name)) {
        for entry in entries.flatten() {
            let p = entry.path();
            if special(&p) {
                return Err(refuse(&p));
            }
        }
    }
    Ok(())
}

/// Reads, resolves and checks an OTF2 trace, as [`load`](super::load) does a text one. Errors
/// found after reading name an operation by its line in the trace's text form (`Display`).
pub fn load(anchor: &Path) -> Result<Program, TraceErrors> {
    let file = anchor.display().to_string();
    let trace = read(anchor)?;
    let program = Program::build(&trace, &file)?;
    program.check_progress(&file)?;
    Ok(program)
}

/// Writes `trace` as the OTF2 archive with anchor file `anchor` (`NAME.otf2`), making its
/// folder if needed; an existing archive of that name is an error, never overwritten.
pub fn write(trace: &Trace, anchor: &Path) -> Result<(), TraceErrors> {
    let file = anchor.display().to_string();
    let name = anchor
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".otf2"))
        .filter(|n| !n.is_empty())
        .ok_or_else(|| at_file(&file, "an OTF2 anchor file is named NAME.otf2"))?;
    let dir = match anchor.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    for taken in [
        anchor.to_path_buf(),
        dir.join(name),
        dir.join(format!("{name}.def")),
    ] {
        if taken.exists() {
            let msg = format!(
                "{} already exists; remove the archive first",
                taken.display()
            );
            return Err(at_file(&file, msg));
        }
    }
    trace.check(&file)?;
    let events = write::events(trace, &file)?;
    let lib = library().map_err(|e| at_file(&file, e))?;
    std::fs::create_dir_all(dir)
        .map_err(|e| at_file(&file, format!("making {}: {e}", dir.display())))?;
    write::archive(lib, dir, name, trace.ranks, events)
        .map_err(|e| at_file(&file, format!("writing the archive: {e}")))
}
