//! The reader's rules without the library: record streams shaped like Score-P's fed to the
//! [`Collector`] as the library's reader would.

use super::ffi::{self, Def, Event, Sink};
use super::read::{Collector, OP_ALLREDUCE, OP_BCAST};
use crate::replay::trace::TraceOp::{self, *};

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

/// 20,000 non-blocking sends pending at once, their OTF2 ids above 32 bits: numbered 0, 1, ...
/// as they are posted, in time linear in their number (a search from 0 over every pending
/// request took minutes).
#[test]
fn otf2_reader_numbers_many_wide_requests_at_once() {
    let mut c = scorep_like();
    let n = 20_000u64;
    c.event(7, 1, Event::Enter { region: 7 });
    for i in 0..n {
        let isend = Event::MpiIsend {
            receiver: 1,
            comm: 0,
            tag: 0,
            bytes: 8,
            request: (1 << 40) + i,
        };
        assert!(c.event(7, 2, isend));
    }
    for i in 0..n {
        let done = Event::MpiIsendComplete {
            request: (1 << 40) + i,
        };
        assert!(c.event(7, 3, done));
    }
    c.event(7, 4, Event::Leave { region: 7 });
    let trace = c.finish().unwrap_or_else(|e| panic!("{e:?}"));
    let reqs: Vec<u32> = trace
        .ops
        .iter()
        .filter_map(|o| match o.op {
            Isend { req, .. } => Some(req),
            _ => None,
        })
        .collect();
    assert_eq!(reqs, (0..n as u32).collect::<Vec<_>>());
}
