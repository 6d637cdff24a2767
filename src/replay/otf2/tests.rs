//! OTF2 tests. Those through the library fail, naming what to install, when it is missing: CI
//! installs it (`testbenches/run_all.sh`). The reader's rules are also tested without the
//! library, on record streams shaped like Score-P's.

use super::ffi::{self, Def, Event, Sink};
use super::read::{Collector, OP_ALLREDUCE, OP_BCAST};
use super::*;
use crate::replay::trace::TraceOp::{self, *};
use std::path::PathBuf;
use std::process::Command;

/// Fails the test unless the library loads.
fn need_library() {
    if let Err(e) = library_available() {
        panic!("this test needs the OTF2 library: {e}");
    }
}

/// A fresh, empty folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("arnsim-otf2-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every operation kind on three ranks, rank by rank: computes (leading, inner, trailing, sub-ns),
/// blocking and non-blocking point-to-point with tags, `wait` and `waitall` (also with nothing
/// pending), and every collective.
fn every_op() -> Trace {
    let mut t = Trace::new(3);
    let collectives = [
        Allreduce { bytes: 1 << 20 },
        Alltoall { bytes: 64 },
        Bcast {
            root: 1,
            bytes: 300,
        },
        Barrier,
        Allgather { bytes: 10 },
    ];
    let rank0 = [
        Compute { ps: 1_500_000 },
        Send {
            dst: 1,
            bytes: 4096,
            tag: 7,
        },
        Isend {
            dst: 2,
            bytes: 100,
            req: 1,
            tag: 0,
        },
        Irecv {
            src: 1,
            req: 2,
            tag: 3,
        },
        Wait { req: 1 },
        Waitall,
    ];
    let rank1 = [
        Recv { src: 0, tag: 7 },
        Isend {
            dst: 0,
            bytes: 50,
            req: 5,
            tag: 3,
        },
        Compute { ps: 3_000_000 },
        Waitall,
        Irecv {
            src: 2,
            req: 9,
            tag: 0,
        },
        Wait { req: 9 },
    ];
    let rank2 = [
        Irecv {
            src: 0,
            req: 1,
            tag: 0,
        },
        Waitall,
        Isend {
            dst: 1,
            bytes: 8,
            req: 4,
            tag: 0,
        },
        Wait { req: 4 },
    ];
    let tails: [&[TraceOp]; 3] = [&[Compute { ps: 2_500 }], &[], &[Waitall]];
    for (r, ops) in [&rank0[..], &rank1[..], &rank2[..]].into_iter().enumerate() {
        for &op in ops.iter().chain(&collectives).chain(tails[r]) {
            t.push(r as u32, op);
        }
    }
    t
}

/// MPI records of [`every_op`] by hand: rank 0 has send, isend, irecv request, two completions;
/// rank 1 recv, isend, irecv request, two completions; rank 2 irecv request, isend, two
/// completions (the last `waitall` has none); and each collective has a begin and an end.
const EVERY_OP_MPI_RECORDS: usize = 5 + 5 + 4 + 3 * 5 * 2;

#[test]
fn otf2_round_trip_every_op_kind() {
    need_library();
    let dir = scratch("round-trip");
    let anchor = dir.join("traces.otf2");
    let trace = every_op();
    write(&trace, &anchor).unwrap_or_else(|e| panic!("{e}"));
    assert!(anchor.is_file() && dir.join("traces.def").is_file() && dir.join("traces").is_dir());
    let back = read(&anchor).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, trace);
    // And it is a valid replay program.
    let program = load(&anchor).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(program.ranks(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn otf2_print_lists_the_written_records() {
    need_library();
    let dir = scratch("print");
    let anchor = dir.join("traces.otf2");
    write(&every_op(), &anchor).unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new("otf2-print")
        .arg(&anchor)
        .output()
        .unwrap_or_else(|e| {
            panic!("otf2-print could not run ({e}); install it with `apt-get install {PACKAGES}`")
        });
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "otf2-print failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let count = |prefix: &str| text.lines().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(
        count("MPI_"),
        EVERY_OP_MPI_RECORDS,
        "otf2-print listed:\n{text}"
    );
    assert_eq!(count("MPI_COLLECTIVE_END"), 15);
    assert_eq!(count("MPI_SEND "), 1);
    assert_eq!(count("MPI_IRECV_REQUEST"), 3);
    // Every call is an Enter and a Leave: the 10 operations per rank that are calls, MPI_Init
    // and MPI_Finalize on each rank.
    assert_eq!(count("ENTER"), 3 * 10 + 3 * 2);
    assert_eq!(count("ENTER"), count("LEAVE"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn otf2_missing_archive_names_the_file() {
    let anchor = scratch("missing").join("nothing-here.otf2");
    let err = read(&anchor).unwrap_err().to_string();
    assert!(
        err.contains("nothing-here.otf2") && err.contains("no such OTF2 anchor file"),
        "{err}"
    );
}

#[test]
fn otf2_corrupt_anchor_names_the_file() {
    need_library();
    let dir = scratch("corrupt");
    let anchor = dir.join("broken.otf2");
    std::fs::write(&anchor, "this is not an OTF2 anchor file\n").unwrap();
    let err = read(&anchor).unwrap_err();
    let text = err.to_string();
    assert_eq!(err.first().at, anchor.display().to_string());
    assert!(text.contains("not a readable OTF2 archive"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn otf2_missing_library_names_it_and_the_package() {
    let err = ffi::load(&["libotf2-not-installed.so.99".to_string()])
        .err()
        .expect("no such library");
    assert!(err.contains("libotf2-not-installed.so.99"), "{err}");
    assert!(
        err.contains("apt-get install libotf2-trace-dev otf2-tools"),
        "{err}"
    );
    assert!(err.contains(LIBRARY_ENV), "{err}");
    // A library that is not OTF2 3 is named with the first function it lacks.
    let err = ffi::load(&["libc.so.6".to_string()])
        .err()
        .expect("libc is not OTF2");
    assert!(
        err.contains("libc.so.6 is not the OTF2 3 library (missing OTF2_Error_RegisterCallback"),
        "{err}"
    );
}

#[test]
fn otf2_write_refuses_bad_traces_and_existing_archives() {
    need_library();
    let dir = scratch("refuse");
    let mut t = Trace::new(2);
    t.push(1, Recv { src: 0, tag: 4 });
    t.push(
        0,
        Isend {
            dst: 1,
            bytes: 1,
            req: 3,
            tag: 0,
        },
    );
    let err = write(&t, &dir.join("a.otf2")).unwrap_err().to_string();
    assert!(
        err.contains(":2: `1 recv 0 tag=4`: no send from rank 0 with tag 4"),
        "{err}"
    );
    assert!(
        err.contains(":3: `0 req=3`: the request is never waited for"),
        "{err}"
    );
    assert!(!dir.join("a.otf2").exists());
    let err = write(&t, &dir.join("a.txt")).unwrap_err().to_string();
    assert!(err.contains("NAME.otf2"), "{err}");
    let anchor = dir.join("b.otf2");
    let trace = every_op();
    write(&trace, &anchor).unwrap_or_else(|e| panic!("{e}"));
    let err = write(&trace, &anchor).unwrap_err().to_string();
    assert!(err.contains("already exists"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Definitions of a two-rank MPI program as Score-P writes them: a 2 GHz clock, MPI regions
/// (one nested call, one user function), MPI ranks on locations 7 and 3 (rank 0 is location 7),
/// a thread location 8 outside MPI, `MPI_COMM_WORLD` (comm 0), a dup of it (comm 1) and a
/// communicator of rank 1 alone (comm 2).
fn scorep_like() -> Collector {
    let mut c = Collector::new("app.otf2");
    let strings = [
        "MPI_Send",
        "MPI_Recv",
        "MPI_Waitall",
        "solve",
        "MPI_COMM_WORLD",
        "sub",
        "MPI_Irecv",
        "MPI_Isend",
    ];
    let mut defs = vec![Def::Clock {
        resolution: 2_000_000_000,
        offset: 5,
        length: 1000,
    }];
    defs.extend(
        strings
            .iter()
            .enumerate()
            .map(|(i, &text)| Def::String { id: i as u32, text }),
    );
    for (id, paradigm) in [
        (0, ffi::PARADIGM_MPI),
        (1, ffi::PARADIGM_MPI),
        (2, ffi::PARADIGM_MPI),
        (3, 1),
        (6, 0),
        (7, 0),
    ] {
        defs.push(Def::Region {
            id,
            name: id,
            role: 0,
            paradigm,
        });
    }
    let world = [7u64, 3];
    let ranks = [0u64, 1];
    let one = [1u64];
    for (id, kind, members) in [
        (0, ffi::GROUP_COMM_LOCATIONS, &world[..]),
        (1, ffi::GROUP_COMM_GROUP, &ranks[..]),
        (2, ffi::GROUP_COMM_GROUP, &one[..]),
    ] {
        let name = if id == 2 { 5 } else { 4 };
        defs.push(Def::Group {
            id,
            name,
            kind,
            paradigm: ffi::PARADIGM_MPI,
            flags: 0,
            members,
        });
    }
    defs.extend([
        Def::Comm {
            id: 0,
            name: 4,
            group: 1,
        },
        Def::Comm {
            id: 1,
            name: 4,
            group: 0,
        },
        Def::Comm {
            id: 2,
            name: 5,
            group: 2,
        },
    ]);
    for d in defs {
        assert!(c.definition(d));
    }
    c
}

fn feed(c: &mut Collector, events: &[(u64, u64, Event)]) {
    for &(loc, t, e) in events {
        c.event(loc, t, e);
    }
}

#[test]
fn otf2_reader_rules_on_a_scorep_like_stream() {
    let mut c = scorep_like();
    let (enter, leave) = (
        |region| Event::Enter { region },
        |region| Event::Leave { region },
    );
    feed(
        &mut c,
        &[
            (7, 100, enter(3)), // a user function: not MPI, no compute counted yet
            (7, 100, enter(0)),
            (7, 100, enter(1)), // nested MPI call: no compute inside
            (
                7,
                101,
                Event::MpiSend {
                    receiver: 1,
                    comm: 0,
                    tag: 2,
                    bytes: 64,
                },
            ),
            (7, 102, leave(1)),
            (7, 103, leave(0)),
            (8, 150, enter(0)),  // a thread: ignored
            (7, 2103, enter(2)), // 2000 ticks at 2 GHz: 1 us
            (7, 2103, Event::MpiCollectiveBegin),
            (
                7,
                2104,
                Event::MpiCollectiveEnd {
                    op: OP_ALLREDUCE,
                    comm: 1,
                    root: u32::MAX,
                    sent: 2 * 96,
                    received: 192,
                },
            ),
            (
                7,
                2105,
                Event::MpiCollectiveEnd {
                    op: 17,
                    comm: 0,
                    root: u32::MAX,
                    sent: 0,
                    received: 0,
                },
            ),
            (7, 2106, leave(2)),
            (7, 2107, enter(7)), // 1 tick: 500 ps
            (
                7,
                2108,
                Event::MpiIsend {
                    receiver: 1,
                    comm: 0,
                    tag: 0,
                    bytes: 3,
                    request: 1 << 40,
                },
            ),
            (7, 2109, leave(7)),
            (3, 10, enter(6)),
            (3, 10, Event::MpiIrecvRequest { request: 17 }),
            (3, 11, leave(6)),
            (3, 15, enter(2)), // 4 ticks: 2 ns
            (
                3,
                16,
                Event::MpiIrecv {
                    sender: 0,
                    comm: 0,
                    tag: 2,
                    bytes: 64,
                    request: 17,
                },
            ),
            (3, 17, leave(2)),
            (3, 17, enter(2)), // no time since the last call: no compute
            (
                3,
                18,
                Event::MpiCollectiveEnd {
                    op: OP_BCAST,
                    comm: 0,
                    root: 0,
                    sent: 0,
                    received: 1000,
                },
            ),
            (3, 19, leave(2)),
        ],
    );
    let trace = c.finish().unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(trace.ranks, 2);
    let ops: Vec<(u32, TraceOp)> = trace.ops.iter().map(|o| (o.rank, o.op)).collect();
    assert_eq!(
        ops,
        vec![
            (
                0,
                Send {
                    dst: 1,
                    bytes: 64,
                    tag: 2
                }
            ),
            (0, Compute { ps: 1_000_000 }),
            (0, Allreduce { bytes: 96 }),
            (0, Compute { ps: 500 }),
            (
                0,
                Isend {
                    dst: 1,
                    bytes: 3,
                    req: 0,
                    tag: 0
                }
            ),
            (0, Waitall), // the send never completed
            (
                1,
                Irecv {
                    src: 0,
                    req: 17,
                    tag: 2
                }
            ),
            (1, Compute { ps: 2_000 }),
            (1, Waitall),
            (
                1,
                Bcast {
                    root: 0,
                    bytes: 1000
                }
            ),
        ]
    );
}

#[test]
fn otf2_reader_refusals_name_location_event_and_what() {
    let mut c = scorep_like();
    feed(
        &mut c,
        &[
            (
                7,
                1,
                Event::MpiCollectiveEnd {
                    op: 2,
                    comm: 0,
                    root: 0,
                    sent: 8,
                    received: 0,
                },
            ),
            (
                3,
                2,
                Event::MpiSend {
                    receiver: 0,
                    comm: 2,
                    tag: 0,
                    bytes: 1,
                },
            ),
            (
                8,
                3,
                Event::MpiRecv {
                    sender: 0,
                    comm: 0,
                    tag: 0,
                    bytes: 1,
                },
            ),
            (3, 4, Event::MpiIsendComplete { request: 5 }),
            (7, 5, Event::MpiIrecvRequest { request: 9 }),
        ],
    );
    let errors = c.finish().unwrap_err();
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 5, "{text:#?}");
    assert!(
        text[0].starts_with(
            "app.otf2: location 7 (rank 0): `MpiCollectiveEnd at tick 1`: collective GATHER"
        ),
        "{}",
        text[0]
    );
    assert!(
        text[1]
            .starts_with("app.otf2: location 3 (rank 1): `MpiSend at tick 2`: communicator `sub`"),
        "{}",
        text[1]
    );
    assert!(text[1].contains("not MPI_COMM_WORLD"), "{}", text[1]);
    assert!(
        text[2].contains(
            "location 8: `MpiRecv at tick 3`: an MPI event on a location that is not an MPI rank"
        ),
        "{}",
        text[2]
    );
    assert!(
        text[3].contains("request 5 is not a pending non-blocking send"),
        "{}",
        text[3]
    );
    assert!(
        text[4].starts_with(
            "app.otf2: location 7 (rank 0): non-blocking receive request 9 is never completed"
        ),
        "{}",
        text[4]
    );
}
