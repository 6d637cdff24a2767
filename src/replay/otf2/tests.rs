//! OTF2 through the library: these tests fail, naming what to install, when it is missing (CI
//! installs it, `testbenches/run_all.sh`). `read_tests.rs` tests the reader's rules without it.

use super::ffi::{self, Def, Event};
use super::read::OP_ALLREDUCE;
use super::*;
use crate::replay::trace::TraceOp::{self, *};
use std::process::Command;

/// Fails the test unless the library loads.
fn need_library() {
    if let Err(e) = library_available() {
        panic!("this test needs the OTF2 library: {e}");
    }
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
    let (_tmp, dir) = crate::scratch::folder("otf2-round-trip");
    let anchor = dir.join("traces.otf2");
    let trace = every_op();
    write(&trace, &anchor).unwrap_or_else(|e| panic!("{e}"));
    assert!(anchor.is_file() && dir.join("traces.def").is_file() && dir.join("traces").is_dir());
    let back = read(&anchor).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, trace);
    // And it is a valid replay program.
    let program = load(&anchor).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(program.ranks(), 3);
}

#[test]
fn otf2_print_lists_the_written_records() {
    need_library();
    let (_tmp, dir) = crate::scratch::folder("otf2-print");
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
}

#[test]
fn otf2_missing_archive_names_the_file() {
    let (_tmp, dir) = crate::scratch::folder("otf2-missing");
    let anchor = dir.join("nothing-here.otf2");
    let err = read(&anchor).unwrap_err().to_string();
    assert!(
        err.contains("nothing-here.otf2") && err.contains("no such OTF2 anchor file"),
        "{err}"
    );
}

#[test]
fn otf2_corrupt_anchor_names_the_file() {
    need_library();
    let (_tmp, dir) = crate::scratch::folder("otf2-corrupt");
    let anchor = dir.join("broken.otf2");
    std::fs::write(&anchor, "this is not an OTF2 anchor file\n").unwrap();
    let err = read(&anchor).unwrap_err();
    let text = err.to_string();
    assert_eq!(err.first().at, anchor.display().to_string());
    assert!(text.contains("not a readable OTF2 archive"), "{text}");
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
    let (_tmp, dir) = crate::scratch::folder("otf2-refuse");
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
}

#[test]
fn otf2_reads_a_scorep_like_archive_through_the_library() {
    need_library();
    let lib = library().unwrap();
    let (_tmp, dir) = crate::scratch::folder("otf2-scorep-like");
    // A 1 ns clock; rank 0 on location 5, rank 1 on location 2 with a thread (location 9);
    // regions: MPI_Init, MPI_Send, MPI_Allreduce, a user function, MPI_Recv.
    let names = [
        "MPI_Init",
        "MPI_Send",
        "MPI_Allreduce",
        "solve",
        "MPI_Recv",
        "MPI_COMM_WORLD",
        "rank",
    ];
    let mut defs = vec![Def::Clock {
        resolution: 1_000_000_000,
        offset: 12_345,
        length: 2000,
    }];
    defs.extend(
        names
            .iter()
            .enumerate()
            .map(|(i, &text)| Def::String { id: i as u32, text }),
    );
    for id in 0..5 {
        let paradigm = if id == 3 { 1 } else { ffi::PARADIGM_MPI };
        defs.push(Def::Region {
            id,
            name: id,
            role: 0,
            paradigm,
        });
    }
    defs.push(Def::SystemTreeNode {
        id: 0,
        name: 6,
        class: 6,
    });
    for g in 0..2 {
        defs.push(Def::LocationGroup {
            id: g,
            name: 6,
            kind: ffi::LOCATION_GROUP_PROCESS,
            parent: 0,
        });
    }
    let mut events: Vec<(u64, Vec<(u64, Event)>)> = Vec::new();
    let (enter, leave) = (
        |region| Event::Enter { region },
        |region| Event::Leave { region },
    );
    let coll = |t| {
        let end = Event::MpiCollectiveEnd {
            op: OP_ALLREDUCE,
            comm: 0,
            root: u32::MAX,
            sent: 16,
            received: 16,
        };
        [
            (t, enter(2)),
            (t, Event::MpiCollectiveBegin),
            (t + 100, end),
            (t + 100, leave(2)),
        ]
    };
    let mut rank0 = vec![
        (0, enter(0)),
        (10, leave(0)),
        (10, enter(3)),
        (1010, enter(1)),
    ];
    rank0.extend([
        (
            1011,
            Event::MpiSend {
                receiver: 1,
                comm: 0,
                tag: 5,
                bytes: 256,
            },
        ),
        (1012, leave(1)),
        (1012, leave(3)),
    ]);
    rank0.extend(coll(1500));
    let mut rank1 = vec![(0, enter(0)), (20, leave(0)), (20, enter(4))];
    rank1.extend([
        (
            30,
            Event::MpiRecv {
                sender: 0,
                comm: 0,
                tag: 5,
                bytes: 256,
            },
        ),
        (40, leave(4)),
    ]);
    rank1.extend(coll(41));
    events.push((5, rank0));
    events.push((2, rank1));
    events.push((9, vec![(5, enter(3)), (6, leave(3))]));
    for (loc, group) in [(5, 0), (2, 1), (9, 1)] {
        let n = events.iter().find(|e| e.0 == loc).unwrap().1.len() as u64;
        defs.push(Def::Location {
            id: loc,
            name: 6,
            kind: ffi::LOCATION_CPU_THREAD,
            events: n,
            group,
        });
    }
    let (world, ranks) = ([5u64, 2], [0u64, 1]);
    defs.push(Def::Group {
        id: 0,
        name: 6,
        kind: ffi::GROUP_COMM_LOCATIONS,
        paradigm: ffi::PARADIGM_MPI,
        flags: 0,
        members: &world,
    });
    defs.push(Def::Group {
        id: 1,
        name: 5,
        kind: ffi::GROUP_COMM_GROUP,
        paradigm: ffi::PARADIGM_MPI,
        flags: 0,
        members: &ranks,
    });
    defs.push(Def::Comm {
        id: 0,
        name: 5,
        group: 1,
    });
    lib.write(&dir, "app", &defs, &events).unwrap();

    let trace = read(&dir.join("app.otf2")).unwrap_or_else(|e| panic!("{e}"));
    let mut expected = Trace::new(2);
    // 1000 ns in the user function before the send, 488 ns before the allreduce, of 16 bytes
    // sent over 2 ranks; rank 1's receive starts as MPI_Init ends, then 1 ns of compute.
    for op in [
        Compute { ps: 1_000_000 },
        Send {
            dst: 1,
            bytes: 256,
            tag: 5,
        },
        Compute { ps: 488_000 },
        Allreduce { bytes: 8 },
    ] {
        expected.push(0, op);
    }
    for op in [
        Recv { src: 0, tag: 5 },
        Compute { ps: 1_000 },
        Allreduce { bytes: 8 },
    ] {
        expected.push(1, op);
    }
    assert_eq!(trace, expected);

    // The same archive with a clock of no resolution: refused, and the message says why.
    defs[0] = Def::Clock {
        resolution: 0,
        offset: 0,
        length: 2000,
    };
    lib.write(&dir, "zero", &defs, &events).unwrap();
    let err = read(&dir.join("zero.otf2")).unwrap_err().to_string();
    assert!(err.contains("timer resolution of 0"), "{err}");
}
