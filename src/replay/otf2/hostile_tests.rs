//! Hostile archives through the library: members that are no regular files, anchors with
//! something after their end.

use super::*;
use crate::replay::trace::TraceOp;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

fn need_library() {
    if let Err(e) = library_available() {
        panic!("this test needs the OTF2 library: {e}");
    }
}

/// A two-rank archive `traces.otf2` written in a scratch folder: (guard, anchor).
fn small_archive(label: &str) -> (tempfile::TempDir, PathBuf) {
    need_library();
    let (tmp, dir) = crate::scratch::folder(label);
    let anchor = dir.join("traces.otf2");
    let mut t = Trace::new(2);
    t.push(
        0,
        TraceOp::Send {
            dst: 1,
            bytes: 64,
            tag: 0,
        },
    );
    t.push(1, TraceOp::Recv { src: 0, tag: 0 });
    write(&t, &anchor).unwrap_or_else(|e| panic!("{e}"));
    (tmp, anchor)
}

/// `read(anchor)` on another thread, given 30 s: a read blocked on a pipe fails the test
/// instead of hanging it.
fn read_within(anchor: PathBuf) -> Result<Trace, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read(&anchor).map_err(|e| e.to_string()));
    });
    rx.recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("the read is still blocked after 30 s"))
}

fn mkfifo(path: &std::path::Path) {
    std::fs::remove_file(path).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {path:?}");
}

#[test]
fn otf2_definitions_or_events_in_a_pipe_are_refused_not_waited_for() {
    let (_tmp, anchor) = small_archive("otf2-fifo-def");
    let defs = anchor.with_extension("def");
    assert!(read_within(anchor.clone()).is_ok());
    mkfifo(&defs);
    let err = read_within(anchor).unwrap_err();
    assert!(
        err.contains(&defs.display().to_string()) && err.contains("not a regular file"),
        "{err}"
    );

    let (_tmp, anchor) = small_archive("otf2-fifo-evt");
    let evt = std::fs::read_dir(anchor.with_extension(""))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "evt"))
        .expect("an event file");
    mkfifo(&evt);
    let err = read_within(anchor).unwrap_err();
    assert!(
        err.contains(&evt.display().to_string()) && err.contains("not a regular file"),
        "{err}"
    );
}

#[test]
fn otf2_an_anchor_with_bytes_after_its_end_is_refused() {
    let (_tmp, anchor) = small_archive("otf2-anchor-tail");
    let mut bytes = std::fs::read(&anchor).unwrap();
    let len = bytes.len();
    assert!(read(&anchor).is_ok());
    let mut garbage = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..100_000 {
        garbage = garbage.wrapping_mul(6364136223846793005).wrapping_add(1);
        bytes.push((garbage >> 56) as u8);
    }
    std::fs::write(&anchor, &bytes).unwrap();
    let err = read(&anchor).unwrap_err();
    assert_eq!(err.first().at, anchor.display().to_string());
    let text = err.to_string();
    assert!(
        text.contains("bytes follow the anchor's end-of-file record"),
        "{text}"
    );
    // Past the largest anchor read: refused before it is read whole.
    bytes.resize(len + anchor::MAX_ANCHOR_BYTES as usize, 7);
    std::fs::write(&anchor, &bytes).unwrap();
    let text = read(&anchor).unwrap_err().to_string();
    assert!(text.contains("larger than 1048576 bytes"), "{text}");
}
