//! A [`Trace`] as OTF2 definitions and events, the way Score-P records an MPI program.
//!
//! Each rank is one location (id = rank) in a process location group of its own, and the
//! member of that index in the MPI `COMM_LOCATIONS` group; `MPI_COMM_WORLD` (communicator 0) is
//! the group of ranks `0..p`. The timer counts picoseconds ([`TICKS_PER_SECOND`]), so compute
//! times are written exactly. Every rank starts with an empty `MPI_Init` at tick 0 and ends with
//! an empty `MPI_Finalize`, so a leading or trailing compute is kept. Each operation is one MPI
//! call (an Enter and a Leave of its region at the same tick) holding its records:
//!
//! | operation | records |
//! |---|---|
//! | `send`, `recv` | `MpiSend`, `MpiRecv` (the size of the matched send) |
//! | `isend`, `irecv` | `MpiIsend`, `MpiIrecvRequest` (request id = the trace's request) |
//! | `wait`, `waitall` | per request completed: `MpiIsendComplete`, or `MpiIrecv` with source, tag and size |
//! | collectives | `MpiCollectiveBegin`, `MpiCollectiveEnd` with Score-P's sizes |
//!
//! Score-P's collective sizes (not in place): `allreduce`, `alltoall` and `allgather` of B send
//! and receive p·B; `bcast` receives B at every rank and sends p·B at the root, 0 elsewhere.

use super::ffi::{self, Def, Event};
use super::read::{OP_ALLGATHER, OP_ALLREDUCE, OP_ALLTOALL, OP_BARRIER, OP_BCAST};
use crate::replay::error::{TraceError, TraceErrors};
use crate::replay::trace::{Trace, TraceOp};
use std::collections::{HashMap, VecDeque};

/// Timer resolution of written archives: 1 ps ticks.
pub const TICKS_PER_SECOND: u64 = 1_000_000_000_000;

const ROLE_FUNCTION: u8 = 1;
const ROLE_BARRIER: u8 = 15;
const ROLE_COLL_ONE2ALL: u8 = 23;
const ROLE_COLL_ALL2ALL: u8 = 25;
const ROLE_POINT2POINT: u8 = 28;

/// The regions written (id = index) and their roles.
const REGIONS: [(&str, u8); 13] = [
    ("MPI_Init", ROLE_FUNCTION),
    ("MPI_Finalize", ROLE_FUNCTION),
    ("MPI_Send", ROLE_POINT2POINT),
    ("MPI_Recv", ROLE_POINT2POINT),
    ("MPI_Isend", ROLE_POINT2POINT),
    ("MPI_Irecv", ROLE_POINT2POINT),
    ("MPI_Wait", ROLE_POINT2POINT),
    ("MPI_Waitall", ROLE_POINT2POINT),
    ("MPI_Allreduce", ROLE_COLL_ALL2ALL),
    ("MPI_Alltoall", ROLE_COLL_ALL2ALL),
    ("MPI_Bcast", ROLE_COLL_ONE2ALL),
    ("MPI_Barrier", ROLE_BARRIER),
    ("MPI_Allgather", ROLE_COLL_ALL2ALL),
];
const INIT: u32 = 0;
const FINALIZE: u32 = 1;
const COMM_WORLD: u32 = 0;

/// A request posted and not yet waited for: its line, and for a receive its source, tag, size.
struct Pending {
    req: u32,
    line: u32,
    recv: Option<(u32, u32, u64)>,
}

/// Every rank's records, (tick, record) in order; errors name the trace's lines.
pub fn events(trace: &Trace, file: &str) -> Result<Vec<Vec<(u64, Event)>>, TraceErrors> {
    let p = trace.ranks as u64;
    let mut sends: HashMap<(u32, u32, u32), VecDeque<u64>> = HashMap::new();
    for rop in &trace.ops {
        if let TraceOp::Send { dst, bytes, tag }
        | TraceOp::Isend {
            dst, bytes, tag, ..
        } = rop.op
        {
            sends
                .entry((rop.rank, dst, tag))
                .or_default()
                .push_back(bytes);
        }
    }
    let mut out: Vec<Vec<(u64, Event)>> = (0..trace.ranks)
        .map(|_| {
            vec![
                (0, Event::Enter { region: INIT }),
                (0, Event::Leave { region: INIT }),
            ]
        })
        .collect();
    let mut now = vec![0u64; trace.ranks as usize];
    let mut pending: Vec<Vec<Pending>> = (0..trace.ranks).map(|_| Vec::new()).collect();
    let mut errors = Vec::new();
    for (i, rop) in trace.ops.iter().enumerate() {
        let (r, line) = (rop.rank as usize, trace.line(i));
        let token = format!("{} {}", rop.rank, rop.op);
        let mut fail =
            |msg: String| errors.push(TraceError::at_line(file, line, Some(&token), msg));
        let t = now[r];
        let mut size_of_recv = |src: u32, tag: u32| {
            sends
                .get_mut(&(src, rop.rank, tag))
                .and_then(VecDeque::pop_front)
        };
        if let TraceOp::Isend { req, .. } | TraceOp::Irecv { req, .. } = rop.op
            && pending[r].iter().any(|q| q.req == req)
        {
            fail(format!("request {req} is still pending"));
            continue;
        }
        let recs: Vec<Event> = match rop.op {
            TraceOp::Compute { ps } => {
                match t.checked_add(ps) {
                    Some(t) => now[r] = t,
                    None => fail("the rank's time passes 2^64 ps".into()),
                }
                continue;
            }
            TraceOp::Send { dst, bytes, tag } => vec![Event::MpiSend {
                receiver: dst,
                comm: COMM_WORLD,
                tag,
                bytes,
            }],
            TraceOp::Recv { src, tag } => match size_of_recv(src, tag) {
                Some(bytes) => vec![Event::MpiRecv {
                    sender: src,
                    comm: COMM_WORLD,
                    tag,
                    bytes,
                }],
                None => {
                    fail(format!(
                        "no send from rank {src} with tag {tag} matches this receive"
                    ));
                    continue;
                }
            },
            TraceOp::Isend {
                dst,
                bytes,
                req,
                tag,
            } => {
                pending[r].push(Pending {
                    req,
                    line,
                    recv: None,
                });
                vec![Event::MpiIsend {
                    receiver: dst,
                    comm: COMM_WORLD,
                    tag,
                    bytes,
                    request: req as u64,
                }]
            }
            TraceOp::Irecv { src, req, tag } => {
                let Some(bytes) = size_of_recv(src, tag) else {
                    fail(format!(
                        "no send from rank {src} with tag {tag} matches this receive"
                    ));
                    continue;
                };
                pending[r].push(Pending {
                    req,
                    line,
                    recv: Some((src, tag, bytes)),
                });
                vec![Event::MpiIrecvRequest {
                    request: req as u64,
                }]
            }
            TraceOp::Wait { req } => match pending[r].iter().position(|q| q.req == req) {
                Some(k) => vec![completion(&pending[r].remove(k))],
                None => {
                    fail(format!("request {req} is not pending"));
                    continue;
                }
            },
            TraceOp::Waitall => pending[r].drain(..).map(|q| completion(&q)).collect(),
            op => {
                let (op, root, sent, received) = match op {
                    TraceOp::Allreduce { bytes } => {
                        (OP_ALLREDUCE, ffi::UNDEFINED_U32, p * bytes, p * bytes)
                    }
                    TraceOp::Alltoall { bytes } => {
                        (OP_ALLTOALL, ffi::UNDEFINED_U32, p * bytes, p * bytes)
                    }
                    TraceOp::Allgather { bytes } => {
                        (OP_ALLGATHER, ffi::UNDEFINED_U32, p * bytes, p * bytes)
                    }
                    TraceOp::Bcast { root, bytes } => (
                        OP_BCAST,
                        root,
                        if root == rop.rank { p * bytes } else { 0 },
                        bytes,
                    ),
                    _ => (OP_BARRIER, ffi::UNDEFINED_U32, 0, 0),
                };
                vec![
                    Event::MpiCollectiveBegin,
                    Event::MpiCollectiveEnd {
                        op,
                        comm: COMM_WORLD,
                        root,
                        sent,
                        received,
                    },
                ]
            }
        };
        let region = region(&rop.op);
        out[r].push((t, Event::Enter { region }));
        out[r].extend(recs.into_iter().map(|e| (t, e)));
        out[r].push((t, Event::Leave { region }));
    }
    for (r, left) in pending.iter().enumerate() {
        for q in left {
            let token = format!("{r} req={}", q.req);
            errors.push(TraceError::at_line(
                file,
                q.line,
                Some(&token),
                "the request is never waited for",
            ));
        }
    }
    if !errors.is_empty() {
        errors.sort_by_key(|e| e.at.rsplit(':').next().and_then(|l| l.parse::<u32>().ok()));
        return Err(TraceErrors::capped(errors));
    }
    for (r, evs) in out.iter_mut().enumerate() {
        evs.push((now[r], Event::Enter { region: FINALIZE }));
        evs.push((now[r], Event::Leave { region: FINALIZE }));
    }
    Ok(out)
}

/// The record completing a request.
fn completion(q: &Pending) -> Event {
    let request = q.req as u64;
    match q.recv {
        Some((sender, tag, bytes)) => Event::MpiIrecv {
            sender,
            comm: COMM_WORLD,
            tag,
            bytes,
            request,
        },
        None => Event::MpiIsendComplete { request },
    }
}

/// The region of an operation's call.
fn region(op: &TraceOp) -> u32 {
    match op {
        // Not a call: never asked.
        TraceOp::Compute { .. } => INIT,
        TraceOp::Send { .. } => 2,
        TraceOp::Recv { .. } => 3,
        TraceOp::Isend { .. } => 4,
        TraceOp::Irecv { .. } => 5,
        TraceOp::Wait { .. } => 6,
        TraceOp::Waitall => 7,
        TraceOp::Allreduce { .. } => 8,
        TraceOp::Alltoall { .. } => 9,
        TraceOp::Bcast { .. } => 10,
        TraceOp::Barrier => 11,
        TraceOp::Allgather { .. } => 12,
    }
}

/// The strings of an archive of `ranks` ranks: the region names, then these, then one
/// `MPI Rank r` per rank.
const NAMES: [&str; 5] = [
    "MPI_COMM_WORLD",
    "MPI ranks",
    "arnsim",
    "machine",
    "Master thread",
];

/// Writes the definitions (strings, clock, system tree, a location group and a location per
/// rank, the MPI groups, `MPI_COMM_WORLD`) and the records through the library.
pub fn archive(
    lib: &ffi::Otf2,
    dir: &std::path::Path,
    name: &str,
    ranks: u32,
    events: Vec<Vec<(u64, Event)>>,
) -> Result<(), String> {
    let first = REGIONS.len() as u32;
    let [s_world, s_ranks, s_tree, s_class, s_thread] = [0, 1, 2, 3, 4].map(|k| first + k);
    let rank_names: Vec<String> = (0..ranks).map(|r| format!("MPI Rank {r}")).collect();
    let rank_string = |r: u32| first + NAMES.len() as u32 + r;
    let locations: Vec<u64> = (0..ranks as u64).collect();
    let length = events
        .iter()
        .filter_map(|e| e.last().map(|l| l.0))
        .max()
        .unwrap_or(0);
    let mut defs = vec![Def::Clock {
        resolution: TICKS_PER_SECOND,
        offset: 0,
        length,
    }];
    let strings = REGIONS
        .iter()
        .map(|r| r.0)
        .chain(NAMES)
        .chain(rank_names.iter().map(String::as_str));
    defs.extend(strings.enumerate().map(|(id, text)| Def::String {
        id: id as u32,
        text,
    }));
    defs.extend(
        REGIONS
            .iter()
            .enumerate()
            .map(|(id, &(_, role))| Def::Region {
                id: id as u32,
                name: id as u32,
                role,
                paradigm: ffi::PARADIGM_MPI,
            }),
    );
    defs.push(Def::SystemTreeNode {
        id: 0,
        name: s_tree,
        class: s_class,
    });
    for r in 0..ranks {
        defs.push(Def::LocationGroup {
            id: r,
            name: rank_string(r),
            kind: ffi::LOCATION_GROUP_PROCESS,
            parent: 0,
        });
    }
    for (r, evs) in events.iter().enumerate() {
        let events = evs.len() as u64;
        defs.push(Def::Location {
            id: r as u64,
            name: s_thread,
            kind: ffi::LOCATION_CPU_THREAD,
            events,
            group: r as u32,
        });
    }
    let (mpi, flags) = (ffi::PARADIGM_MPI, 0);
    defs.push(Def::Group {
        id: 0,
        name: s_ranks,
        kind: ffi::GROUP_COMM_LOCATIONS,
        paradigm: mpi,
        flags,
        members: &locations,
    });
    defs.push(Def::Group {
        id: 1,
        name: s_world,
        kind: ffi::GROUP_COMM_GROUP,
        paradigm: mpi,
        flags,
        members: &locations,
    });
    defs.push(Def::Comm {
        id: COMM_WORLD,
        name: s_world,
        group: 1,
    });
    let located: Vec<(u64, Vec<(u64, Event)>)> = events
        .into_iter()
        .enumerate()
        .map(|(r, e)| (r as u64, e))
        .collect();
    lib.write(dir, name, &defs, &located)
}
