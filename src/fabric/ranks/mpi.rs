//! The ranks of an MPI job (rsmpi over Open MPI), behind the `mpi` feature: reductions and
//! gatherings are MPI's collectives on the world communicator; each round of a window's
//! exchange is one non-blocking message to each peer (empty ones included, so a receiver waits
//! for exactly one message from each peer). MPI is called only from the thread that initialised it, the one
//! stepping the rank's first part.

use super::Ranks;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::{Threading, Universe};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::sync::Arc;

/// The tag of a window's events (messages between two ranks arrive in the order sent).
const EVENTS: i32 = 7;

/// This process's rank of the world communicator.
pub struct MpiRanks {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
}

// SAFETY: the communicator is a handle MPI itself owns; it is used only from the thread that
// initialised MPI with `Threading::Funneled` (the caller of every collective: the thread of the
// rank's first part, the main thread).
unsafe impl Send for MpiRanks {}
unsafe impl Sync for MpiRanks {}

/// Initialises MPI when this process was started by `mpirun` (Open MPI's environment says so):
/// the universe (MPI is finalised when it is dropped) and, for a job of more than one rank, its
/// ranks. A panic on any rank then aborts the whole job rather than leave the others waiting.
pub fn init() -> Option<(Universe, Option<Arc<dyn Ranks>>)> {
    std::env::var_os("OMPI_COMM_WORLD_SIZE")?;
    let (universe, _) = mpi::initialize_with_threading(Threading::Funneled)?;
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        hook(info);
        SimpleCommunicator::world().abort(101);
    }));
    let ranks = (size > 1).then(|| Arc::new(MpiRanks { world, rank, size }) as Arc<dyn Ranks>);
    Some((universe, ranks))
}

impl Ranks for MpiRanks {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn min(&self, v: &mut [u64]) {
        let mine = v.to_vec();
        self.world
            .all_reduce_into(&mine[..], v, SystemOperation::min());
    }

    fn sum(&self, v: &mut [u64]) {
        let mine = v.to_vec();
        self.world
            .all_reduce_into(&mine[..], v, SystemOperation::sum());
    }

    fn swap(&self, peers: &[usize], out: &[Vec<u64>]) -> Vec<Vec<u64>> {
        let mut got = vec![Vec::new(); peers.len()];
        mpi::request::scope(|scope| {
            let sends: Vec<_> = peers
                .iter()
                .zip(out)
                .map(|(&r, m)| {
                    self.world
                        .process_at_rank(r as i32)
                        .immediate_send_with_tag(scope, &m[..], EVENTS)
                })
                .collect();
            for (&r, m) in peers.iter().zip(&mut got) {
                *m = self
                    .world
                    .process_at_rank(r as i32)
                    .receive_vec_with_tag::<u64>(EVENTS)
                    .0;
            }
            for s in sends {
                s.wait();
            }
        });
        got
    }

    fn gather(&self, mine: &[u64]) -> Vec<Vec<u64>> {
        let mut counts = vec![0i32; self.size];
        self.world
            .all_gather_into(&(mine.len() as i32), &mut counts[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let total = counts.iter().sum::<i32>() as usize;
        let mut all = vec![0u64; total];
        {
            let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(mine, &mut part);
        }
        counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec())
            .collect()
    }
}
