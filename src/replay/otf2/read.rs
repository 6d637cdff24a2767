//! OTF2 definitions and events into a [`Trace`]: the [`Sink`] the library's reader calls.
//!
//! - **Ranks.** The MPI ranks are the members of the MPI `COMM_LOCATIONS` group (member `i` is
//!   rank `i`); without one, each process location group is a rank (in id order), its first
//!   CPU-thread location running it. Enter/Leave on other locations (threads) are ignored; MPI
//!   events there are errors.
//! - **Communicators.** Peers and roots are ranks in the event's communicator; only
//!   communicators whose ranks are the world's in order are read (the world group itself, or a
//!   group of ranks `0..p`); any other is an error naming it.
//! - **Compute** is the time from leaving one MPI call (a region of paradigm MPI, or named
//!   `MPI_*`) to entering the next on the same location, converted with the clock's resolution
//!   to picoseconds (rounded to nearest); time before the first MPI call is not counted.
//! - **Requests.** A non-blocking receive's source and tag come with its completion
//!   (`MpiIrecv`), so its operation is filled in then. Each completion is a `wait`; the
//!   completions of an `MPI_Waitall` that leave nothing pending are one `waitall`. A rank that
//!   ends with sends never completed (freed requests) gets a final `waitall`; sends are eager,
//!   so it costs nothing.
//! - **Collectives** use the sizes Score-P records: `bcast` B from what each rank received,
//!   `allreduce`, `alltoall` and `allgather` B from the bytes sent divided by the number of ranks
//!   (rounded up; at least 1 byte). Handle creation and destruction (`MPI_Comm_dup`, window
//!   creation) carry no data and are skipped; other collectives are errors.

use super::ffi::{self, Def, Event, Sink};
use super::requests::{Pending, Requests};
use crate::replay::error::{MAX_ERRORS, TraceError};
use crate::replay::trace::{MAX_BYTES, MAX_COMPUTE_PS, MAX_OPS, MAX_RANKS, Trace, TraceOp};
use std::collections::HashMap;

/// OTF2 collective operations that are read (`OTF2_CollectiveOp`).
pub const OP_BARRIER: u8 = 0;
pub const OP_BCAST: u8 = 1;
pub const OP_ALLGATHER: u8 = 6;
pub const OP_ALLTOALL: u8 = 8;
pub const OP_ALLREDUCE: u8 = 11;
/// `CREATE_HANDLE` to `DESTROY_HANDLE_AND_DEALLOCATE`: skipped.
const OPS_HANDLES: std::ops::RangeInclusive<u8> = 17..=22;

/// Names of `OTF2_CollectiveOp` values, for errors.
const OP_NAMES: [&str; 23] = [
    "BARRIER",
    "BCAST",
    "GATHER",
    "GATHERV",
    "SCATTER",
    "SCATTERV",
    "ALLGATHER",
    "ALLGATHERV",
    "ALLTOALL",
    "ALLTOALLV",
    "ALLTOALLW",
    "ALLREDUCE",
    "REDUCE",
    "REDUCE_SCATTER",
    "SCAN",
    "EXSCAN",
    "REDUCE_SCATTER_BLOCK",
    "CREATE_HANDLE",
    "DESTROY_HANDLE",
    "ALLOCATE",
    "DEALLOCATE",
    "CREATE_HANDLE_AND_ALLOCATE",
    "DESTROY_HANDLE_AND_DEALLOCATE",
];

struct Group {
    name: u32,
    kind: u8,
    paradigm: u8,
    members: Vec<u64>,
}

#[derive(Default)]
struct Rank {
    location: u64,
    ops: Vec<TraceOp>,
    /// Nesting of MPI regions.
    depth: u32,
    last_leave: Option<u64>,
    /// The outermost MPI call in progress: its region and where its operations start.
    call: Option<(u32, usize)>,
    pending: Requests,
}

/// The state of one read: definitions first, then events rank by rank.
pub struct Collector {
    file: String,
    resolution: Option<u64>,
    strings: HashMap<u32, String>,
    /// Region id to (name, is an MPI call).
    regions: HashMap<u32, (u32, bool)>,
    locations: Vec<(u64, u8, u32)>,
    location_groups: Vec<(u32, u8)>,
    groups: HashMap<u32, Group>,
    comms: HashMap<u32, (u32, u32)>,
    /// Filled when the first event arrives.
    ranks: Option<Vec<Rank>>,
    rank_of: HashMap<u64, u32>,
    /// Per communicator: readable (its ranks are the world's) or why not.
    comm_ok: HashMap<u32, Result<(), String>>,
    /// Operations read so far, every rank's.
    ops: usize,
    errors: Vec<TraceError>,
}

impl Collector {
    /// A read of the archive `file` (named in errors).
    pub fn new(file: &str) -> Self {
        Collector {
            file: file.to_string(),
            resolution: None,
            strings: HashMap::new(),
            regions: HashMap::new(),
            locations: Vec::new(),
            location_groups: Vec::new(),
            groups: HashMap::new(),
            comms: HashMap::new(),
            ranks: None,
            rank_of: HashMap::new(),
            comm_ok: HashMap::new(),
            ops: 0,
            errors: Vec::new(),
        }
    }

    fn string(&self, id: u32) -> String {
        self.strings
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("string {id}"))
    }

    fn error_at(&mut self, at: String, token: Option<String>, message: String) {
        self.errors.push(TraceError { at, token, message });
    }

    /// Ranks from the definitions, at the first event.
    fn resolve_ranks(&mut self) {
        let world = self
            .groups
            .values()
            .find(|g| g.kind == ffi::GROUP_COMM_LOCATIONS && g.paradigm == ffi::PARADIGM_MPI);
        let locations: Vec<u64> = match world {
            Some(g) => g.members.clone(),
            None => {
                let mut groups: Vec<u32> = self
                    .location_groups
                    .iter()
                    .filter(|g| g.1 == ffi::LOCATION_GROUP_PROCESS)
                    .map(|g| g.0)
                    .collect();
                groups.sort_unstable();
                let mut locs = self.locations.clone();
                locs.sort_unstable();
                groups
                    .iter()
                    .filter_map(|&g| {
                        locs.iter()
                            .find(|l| l.2 == g && l.1 == ffi::LOCATION_CPU_THREAD)
                            .map(|l| l.0)
                    })
                    .collect()
            }
        };
        for (r, &loc) in locations.iter().enumerate() {
            self.rank_of.insert(loc, r as u32);
        }
        self.ranks = Some(
            locations
                .iter()
                .map(|&location| Rank {
                    location,
                    ..Rank::default()
                })
                .collect(),
        );
    }

    fn world_size(&self) -> u32 {
        self.ranks.as_ref().map_or(0, |r| r.len() as u32)
    }

    /// Whether communicator `comm` has the world's ranks in order.
    fn check_comm(&mut self, comm: u32) -> Result<(), String> {
        if let Some(r) = self.comm_ok.get(&comm) {
            return r.clone();
        }
        let p = self.world_size() as u64;
        let result = match self.comms.get(&comm) {
            None => Err(format!("communicator {comm} is not defined")),
            Some(&(name, group)) => {
                let name = self.string(name);
                match self.groups.get(&group) {
                    None => Err(format!("communicator `{name}` has undefined group {group}")),
                    Some(g) if g.kind == ffi::GROUP_COMM_LOCATIONS => Ok(()),
                    Some(g) if g.kind == ffi::GROUP_COMM_SELF && p == 1 => Ok(()),
                    Some(g)
                        if g.kind == ffi::GROUP_COMM_GROUP
                            && g.members.iter().copied().eq(0..p) =>
                    {
                        Ok(())
                    }
                    Some(g) => Err(format!(
                        "communicator `{name}` (group `{}`, {} ranks) is not MPI_COMM_WORLD; only communicators \
                         whose ranks are the world's {p} in order are read",
                        self.string(g.name),
                        if g.kind == ffi::GROUP_COMM_SELF {
                            1
                        } else {
                            g.members.len()
                        }
                    )),
                }
            }
        };
        self.comm_ok.insert(comm, result.clone());
        result
    }

    /// The read's result: the trace, ranks one after another, or its errors.
    pub fn finish(mut self) -> Result<Trace, Vec<TraceError>> {
        if self.ranks.is_none() {
            self.resolve_ranks();
        }
        let ranks = self.ranks.take().unwrap_or_default();
        if ranks.is_empty() {
            self.error_at(
                self.file.clone(),
                None,
                "the archive defines no MPI rank (no MPI locations group and no process)".into(),
            );
        } else if ranks.len() > MAX_RANKS as usize {
            let msg = format!("{} ranks; at most {MAX_RANKS} are read", ranks.len());
            self.error_at(self.file.clone(), None, msg);
        }
        let mut trace = Trace::new(ranks.len() as u32);
        for (r, rank) in ranks.into_iter().enumerate() {
            if let Some(p) = rank.pending.values().find(|p| p.irecv_op.is_some()) {
                let at = format!("{}: location {} (rank {r})", self.file, rank.location);
                self.error_at(
                    at,
                    None,
                    format!("non-blocking receive request {} is never completed", p.req),
                );
            }
            for op in rank.ops {
                trace.push(r as u32, op);
            }
            if !rank.pending.is_empty() {
                // Sends never waited for (freed requests): eager, so a wait costs nothing.
                trace.push(r as u32, TraceOp::Waitall);
            }
        }
        if self.errors.is_empty() {
            Ok(trace)
        } else {
            Err(self.errors)
        }
    }

    /// One event of location `loc`; errors name it.
    fn on_event(&mut self, loc: u64, time: u64, event: Event) -> Result<(), String> {
        if self.ranks.is_none() {
            self.resolve_ranks();
        }
        let Some(&r) = self.rank_of.get(&loc) else {
            return match event {
                Event::Enter { .. } | Event::Leave { .. } => Ok(()),
                _ => Err("an MPI event on a location that is not an MPI rank".into()),
            };
        };
        let p = self.world_size();
        let comm_rank = |peer: u32, what: &str| {
            if peer < p {
                Ok(peer)
            } else {
                Err(format!("{what} {peer} is not a rank of the {p}"))
            }
        };
        let size = |bytes: u64| {
            if bytes <= MAX_BYTES {
                Ok(bytes)
            } else {
                Err(format!("{bytes} bytes: at most {MAX_BYTES} are read"))
            }
        };
        let op = match event {
            Event::Enter { region } => return self.enter(r, time, region),
            Event::Leave { region } => return self.leave(r, time, region),
            Event::MpiCollectiveBegin => return Ok(()),
            Event::MpiSend {
                receiver,
                comm,
                tag,
                bytes,
            } => {
                self.check_comm(comm)?;
                TraceOp::Send {
                    dst: comm_rank(receiver, "receiver")?,
                    bytes: size(bytes)?,
                    tag,
                }
            }
            Event::MpiRecv {
                sender, comm, tag, ..
            } => {
                self.check_comm(comm)?;
                TraceOp::Recv {
                    src: comm_rank(sender, "sender")?,
                    tag,
                }
            }
            Event::MpiIsend {
                receiver,
                comm,
                tag,
                bytes,
                request,
            } => {
                self.check_comm(comm)?;
                let (dst, bytes) = (comm_rank(receiver, "receiver")?, size(bytes)?);
                let req = self.post(r, request, false)?;
                TraceOp::Isend {
                    dst,
                    bytes,
                    req,
                    tag,
                }
            }
            Event::MpiIrecvRequest { request } => {
                let req = self.post(r, request, true)?;
                TraceOp::Irecv {
                    src: u32::MAX,
                    req,
                    tag: 0,
                }
            }
            Event::MpiIsendComplete { request } => {
                let rank = self.rank_mut(r);
                match rank.pending.complete(request) {
                    Some(Pending {
                        req,
                        irecv_op: None,
                    }) => TraceOp::Wait { req },
                    _ => {
                        return Err(format!(
                            "request {request} is not a pending non-blocking send"
                        ));
                    }
                }
            }
            Event::MpiIrecv {
                sender,
                comm,
                tag,
                request,
                ..
            } => {
                self.check_comm(comm)?;
                let src = comm_rank(sender, "sender")?;
                let rank = self.rank_mut(r);
                match rank.pending.complete(request) {
                    Some(Pending {
                        req,
                        irecv_op: Some(i),
                    }) => {
                        rank.ops[i] = TraceOp::Irecv { src, req, tag };
                        TraceOp::Wait { req }
                    }
                    // A receive completed where it was posted.
                    None => TraceOp::Recv { src, tag },
                    Some(_) => {
                        return Err(format!(
                            "request {request} is a non-blocking send, not a receive"
                        ));
                    }
                }
            }
            Event::MpiRequestCancelled { request } => {
                return Err(format!(
                    "request {request} is cancelled; cancelled requests are not modelled"
                ));
            }
            Event::MpiCollectiveEnd {
                op,
                comm,
                root,
                sent,
                received,
            } => {
                self.check_comm(comm)?;
                let per_rank = |total: u64| size(total.div_ceil(p as u64).max(1));
                match op {
                    OP_BARRIER => TraceOp::Barrier,
                    OP_BCAST => TraceOp::Bcast {
                        root: comm_rank(root, "root")?,
                        bytes: size(received.max(1))?,
                    },
                    OP_ALLREDUCE => TraceOp::Allreduce {
                        bytes: per_rank(sent)?,
                    },
                    OP_ALLTOALL => TraceOp::Alltoall {
                        bytes: per_rank(sent)?,
                    },
                    OP_ALLGATHER => TraceOp::Allgather {
                        bytes: per_rank(sent)?,
                    },
                    op if OPS_HANDLES.contains(&op) => return Ok(()),
                    op => {
                        let name = OP_NAMES.get(op as usize).copied().unwrap_or("unknown");
                        return Err(format!(
                            "collective {name} (OTF2 collective op {op}) is not modelled; allreduce, alltoall, \
                             bcast, barrier and allgather are"
                        ));
                    }
                }
            }
        };
        self.count_op()?;
        self.rank_mut(r).ops.push(op);
        Ok(())
    }

    /// Counts one more operation, refusing the archive past [`MAX_OPS`] (computes are not
    /// counted: one at most precedes each call, so they at most double the operations).
    fn count_op(&mut self) -> Result<(), String> {
        if self.ops == MAX_OPS {
            return Err(format!(
                "more than {MAX_OPS} operations; at most 2^26 are read"
            ));
        }
        self.ops += 1;
        Ok(())
    }

    fn rank_mut(&mut self, r: u32) -> &mut Rank {
        &mut self
            .ranks
            .as_mut()
            .expect("ranks are resolved at the first event")[r as usize]
    }

    /// A request posted on rank `r`: its OTF2 id as the trace's number when that fits and is
    /// free, else the lowest free number ([`Requests`]).
    fn post(&mut self, r: u32, request: u64, irecv: bool) -> Result<u32, String> {
        let rank = self.rank_mut(r);
        let irecv_op = irecv.then_some(rank.ops.len());
        rank.pending.post(request, irecv_op)
    }

    fn enter(&mut self, r: u32, time: u64, region: u32) -> Result<(), String> {
        let Some(&(_, true)) = self.regions.get(&region) else {
            return Ok(());
        };
        let resolution = self
            .resolution
            .ok_or("the archive has no clock properties")?;
        let rank = self.rank_mut(r);
        rank.depth += 1;
        if rank.depth > 1 {
            return Ok(());
        }
        if let Some(left) = rank.last_leave {
            let ticks = time.checked_sub(left).ok_or("time goes backwards")?;
            let ps =
                (ticks as u128 * 1_000_000_000_000 + resolution as u128 / 2) / resolution as u128;
            // Calls that record no operation (MPI_Comm_rank, say) leave computes that add up.
            let ps = match rank.ops.last() {
                Some(&TraceOp::Compute { ps: before }) => {
                    rank.ops.pop();
                    ps + before as u128
                }
                _ => ps,
            };
            if ps > MAX_COMPUTE_PS as u128 {
                return Err(format!(
                    "{ps} ps of compute before this call; at most 1000 s is read"
                ));
            }
            if ps > 0 {
                rank.ops.push(TraceOp::Compute { ps: ps as u64 });
            }
        }
        rank.call = Some((region, rank.ops.len()));
        Ok(())
    }

    fn leave(&mut self, r: u32, time: u64, region: u32) -> Result<(), String> {
        let Some(&(name, true)) = self.regions.get(&region) else {
            return Ok(());
        };
        let waitall = self
            .strings
            .get(&name)
            .is_some_and(|n| n.eq_ignore_ascii_case("MPI_Waitall"));
        let rank = self.rank_mut(r);
        if rank.depth == 0 {
            return Err("leaving an MPI call never entered".into());
        }
        rank.depth -= 1;
        if rank.depth > 0 {
            return Ok(());
        }
        rank.last_leave = Some(time);
        if let Some((_, start)) = rank.call.take()
            && waitall
            && rank.pending.is_empty()
            && rank.ops[start..]
                .iter()
                .all(|op| matches!(op, TraceOp::Wait { .. }))
        {
            rank.ops.truncate(start);
            rank.ops.push(TraceOp::Waitall);
        }
        Ok(())
    }
}

impl Sink for Collector {
    fn definition(&mut self, def: Def<'_>) -> bool {
        match def {
            Def::Clock { resolution, .. } if resolution > 0 => self.resolution = Some(resolution),
            Def::Clock { .. } => {
                let at = self.file.clone();
                self.error_at(
                    at,
                    None,
                    "the clock properties give a timer resolution of 0".into(),
                );
                return false;
            }
            Def::String { id, text } => {
                self.strings.insert(id, text.to_string());
            }
            Def::Region {
                id, name, paradigm, ..
            } => {
                let mpi = paradigm == ffi::PARADIGM_MPI
                    || self
                        .strings
                        .get(&name)
                        .is_some_and(|n| n.starts_with("MPI_"));
                self.regions.insert(id, (name, mpi));
            }
            Def::Location {
                id, kind, group, ..
            } => self.locations.push((id, kind, group)),
            Def::LocationGroup { id, kind, .. } => self.location_groups.push((id, kind)),
            Def::Group {
                id,
                name,
                kind,
                paradigm,
                members,
                ..
            } => {
                self.groups.insert(
                    id,
                    Group {
                        name,
                        kind,
                        paradigm,
                        members: members.to_vec(),
                    },
                );
            }
            Def::Comm { id, name, group } => {
                self.comms.insert(id, (name, group));
            }
            Def::SystemTreeNode { .. } => {}
        }
        true
    }

    fn event(&mut self, location: u64, time: u64, event: Event) -> bool {
        if let Err(message) = self.on_event(location, time, event) {
            let rank = self
                .rank_of
                .get(&location)
                .map_or(String::new(), |r| format!(" (rank {r})"));
            let at = format!("{}: location {location}{rank}", self.file);
            let token = format!("{} at tick {time}", name(&event));
            self.error_at(at, Some(token), message);
        }
        self.errors.len() < MAX_ERRORS
    }
}

/// The OTF2 name of an event record.
fn name(event: &Event) -> &'static str {
    match event {
        Event::Enter { .. } => "Enter",
        Event::Leave { .. } => "Leave",
        Event::MpiSend { .. } => "MpiSend",
        Event::MpiIsend { .. } => "MpiIsend",
        Event::MpiIsendComplete { .. } => "MpiIsendComplete",
        Event::MpiIrecvRequest { .. } => "MpiIrecvRequest",
        Event::MpiRecv { .. } => "MpiRecv",
        Event::MpiIrecv { .. } => "MpiIrecv",
        Event::MpiRequestCancelled { .. } => "MpiRequestCancelled",
        Event::MpiCollectiveBegin => "MpiCollectiveBegin",
        Event::MpiCollectiveEnd { .. } => "MpiCollectiveEnd",
    }
}

#[cfg(test)]
mod limit_tests;
