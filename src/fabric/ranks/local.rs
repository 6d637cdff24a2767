//! Ranks as threads of one process, for the tests: every collective operation is one gathering
//! of each rank's words, under a lock. It shows a split run's logic without MPI.

use super::Ranks;
use std::sync::{Arc, Condvar, Mutex};

/// One rank of a job of threads.
pub(crate) struct LocalRanks {
    rank: usize,
    hub: Arc<Hub>,
}

struct Hub {
    size: usize,
    /// A rank has failed: the others stop waiting for it.
    failed: std::sync::atomic::AtomicBool,
    round: Mutex<Round>,
    done: Condvar,
}

struct Round {
    generation: u64,
    arrived: usize,
    slots: Vec<Vec<u64>>,
    gathered: Arc<Vec<Vec<u64>>>,
}

impl LocalRanks {
    /// The `size` ranks of one job, by rank.
    pub(crate) fn job(size: usize) -> Vec<Arc<LocalRanks>> {
        let hub = Arc::new(Hub {
            size,
            failed: Default::default(),
            round: Mutex::new(Round {
                generation: 0,
                arrived: 0,
                slots: vec![Vec::new(); size],
                gathered: Arc::default(),
            }),
            done: Condvar::new(),
        });
        (0..size)
            .map(|rank| {
                Arc::new(LocalRanks {
                    rank,
                    hub: Arc::clone(&hub),
                })
            })
            .collect()
    }
}

impl LocalRanks {
    /// Runs `f` as each rank of a job of `size`, each on a thread of its own: what each returned,
    /// by rank.
    pub(crate) fn each<T: Send>(size: usize, f: impl Fn(&Arc<LocalRanks>) -> T + Sync) -> Vec<T> {
        let job = LocalRanks::job(size);
        let f = &f;
        std::thread::scope(|s| {
            let hs: Vec<_> = job
                .iter()
                .map(|r| s.spawn(move || r.as_rank(|| f(r))))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    /// Runs `f` as this rank: a panic in it makes the other ranks' collective operations panic
    /// rather than wait for this one (as MPI's abort ends a job).
    pub(crate) fn as_rank<T>(&self, f: impl FnOnce() -> T) -> T {
        struct Failed<'a>(&'a Hub);
        impl Drop for Failed<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0
                        .failed
                        .store(true, std::sync::atomic::Ordering::SeqCst);
                }
            }
        }
        let _f = Failed(&self.hub);
        f()
    }
}

impl Ranks for LocalRanks {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.hub.size
    }

    fn min(&self, v: &mut [u64]) {
        for w in self.gather(v) {
            v.iter_mut().zip(w).for_each(|(x, y)| *x = (*x).min(y));
        }
    }

    fn sum(&self, v: &mut [u64]) {
        let all = self.gather(v);
        v.iter_mut().for_each(|x| *x = 0);
        for w in all {
            v.iter_mut()
                .zip(w)
                .for_each(|(x, y)| *x = x.wrapping_add(y));
        }
    }

    fn swap(&self, peers: &[usize], out: &[Vec<u64>]) -> Vec<Vec<u64>> {
        // Each rank's lists for every rank, one after another, each after its length (empty for
        // a rank not its peer).
        let mut mine = Vec::new();
        for r in 0..self.hub.size {
            let list = peers
                .iter()
                .position(|&p| p == r)
                .map_or(&[][..], |i| &out[i][..]);
            mine.push(list.len() as u64);
            mine.extend_from_slice(list);
        }
        let all = self.gather(&mine);
        peers
            .iter()
            .map(|&from| {
                let words = &all[from];
                let mut at = 0;
                for _ in 0..self.rank {
                    at += 1 + words[at] as usize;
                }
                words[at + 1..at + 1 + words[at] as usize].to_vec()
            })
            .collect()
    }

    fn gather(&self, mine: &[u64]) -> Vec<Vec<u64>> {
        let hub = &*self.hub;
        let mut r = hub.round.lock().unwrap_or_else(|e| e.into_inner());
        let generation = r.generation;
        r.slots[self.rank] = mine.to_vec();
        r.arrived += 1;
        if r.arrived == hub.size {
            let slots = std::mem::replace(&mut r.slots, vec![Vec::new(); hub.size]);
            r.gathered = Arc::new(slots);
            r.arrived = 0;
            r.generation += 1;
            hub.done.notify_all();
        }
        while r.generation == generation {
            assert!(
                !hub.failed.load(std::sync::atomic::Ordering::SeqCst),
                "another rank failed"
            );
            let wait = std::time::Duration::from_millis(50);
            r = hub
                .done
                .wait_timeout(r, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        r.gathered.as_ref().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_as_ranks_reduce_and_exchange() {
        let got = LocalRanks::each(3, |r| {
            let me = r.rank() as u64;
            let mut m = [10 - me, me];
            r.min(&mut m);
            let mut t = [me, 1];
            r.sum(&mut t);
            let peers: Vec<usize> = (0..3).filter(|&p| p != r.rank()).collect();
            let out: Vec<Vec<u64>> = peers.iter().map(|&to| vec![me * 10 + to as u64]).collect();
            (m, t, peers.clone(), r.swap(&peers, &out))
        });
        for (me, (m, t, peers, ex)) in got.into_iter().enumerate() {
            assert_eq!(m, [8, 0]);
            assert_eq!(t, [3, 3]);
            for (from, l) in peers.iter().zip(&ex) {
                assert_eq!(*l, vec![*from as u64 * 10 + me as u64]);
            }
        }
    }
}
