//! Test support, no hardware: each test's own scratch folder under the system's temporary folder,
//! removed when its guard is dropped (at the test's end, passed or failed), so no two tests running
//! at once share one and none is left behind.

use std::path::PathBuf;

/// A fresh, empty folder whose name starts `arnsim-{tag}-`, and the guard that removes it.
pub(crate) fn folder(tag: &str) -> (tempfile::TempDir, PathBuf) {
    let guard = tempfile::Builder::new()
        .prefix(&format!("arnsim-{tag}-"))
        .tempdir()
        .expect("a scratch folder under the temporary folder");
    let path = guard.path().to_path_buf();
    (guard, path)
}
