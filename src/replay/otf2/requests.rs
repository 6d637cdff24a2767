//! Numbering an OTF2 rank's pending requests for the trace: a request's OTF2 id (64 bits) as
//! its number when that fits in 32 bits and is free, else the lowest free number. Posting and
//! completing cost O(log n) in the number of pending requests.

use crate::replay::trace::MAX_PENDING;
use std::collections::{BTreeSet, HashMap, HashSet};

/// A request posted and not yet completed.
pub struct Pending {
    /// Its number in the trace.
    pub req: u32,
    /// For a non-blocking receive, the index of its operation, filled in at completion.
    pub irecv_op: Option<usize>,
}

/// One rank's pending requests by OTF2 id, and the trace numbers they hold.
#[derive(Default)]
pub struct Requests {
    by_id: HashMap<u64, Pending>,
    taken: HashSet<u32>,
    /// Every number below `mark` is taken, except those in `free_below`.
    mark: u64,
    free_below: BTreeSet<u32>,
}

impl Requests {
    /// Whether no request is pending.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The pending requests, in no order.
    pub fn values(&self) -> impl Iterator<Item = &Pending> {
        self.by_id.values()
    }

    /// Posts OTF2 request `id` (for a non-blocking receive, with its operation's index); its
    /// trace number, or an error when `id` is already pending.
    pub fn post(&mut self, id: u64, irecv_op: Option<usize>) -> Result<u32, String> {
        if self.by_id.contains_key(&id) {
            return Err(format!("request {id} is posted again while pending"));
        }
        if self.by_id.len() == MAX_PENDING {
            return Err(format!(
                "request {id} is posted with {MAX_PENDING} pending; a rank has at most 2^21 \
                 pending at once"
            ));
        }
        let req = match u32::try_from(id) {
            Ok(n) if !self.taken.contains(&n) => n,
            _ => self.lowest_free(),
        };
        self.take(req);
        self.by_id.insert(id, Pending { req, irecv_op });
        Ok(req)
    }

    /// Completes OTF2 request `id`, freeing its number; `None` when it is not pending.
    pub fn complete(&mut self, id: u64) -> Option<Pending> {
        let p = self.by_id.remove(&id)?;
        self.taken.remove(&p.req);
        if u64::from(p.req) < self.mark {
            self.free_below.insert(p.req);
        }
        Some(p)
    }

    fn take(&mut self, n: u32) {
        self.taken.insert(n);
        if u64::from(n) < self.mark {
            self.free_below.remove(&n);
        }
    }

    /// The lowest number no pending request holds. The mark only rises past taken numbers, so
    /// its walk costs at most one step per number ever taken.
    fn lowest_free(&mut self) -> u32 {
        if let Some(&n) = self.free_below.first() {
            return n;
        }
        while self.mark <= u64::from(u32::MAX) && self.taken.contains(&(self.mark as u32)) {
            self.mark += 1;
        }
        // 2^32 requests pending at once cannot be held in memory; 0 is never reached.
        let n = u32::try_from(self.mark).unwrap_or(0);
        self.mark += 1;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_past_its_pending_requests_is_refused() {
        let mut r = Requests::default();
        for id in 0..MAX_PENDING as u64 {
            r.post(id, None).unwrap();
        }
        assert_eq!(
            r.post(1 << 40, None),
            Err(format!(
                "request {} is posted with 2097152 pending; a rank has at most 2^21 pending \
                 at once",
                1u64 << 40
            ))
        );
        // One completed, one more may be posted.
        r.complete(7).unwrap();
        assert_eq!(r.post(1 << 40, None), Ok(7));
    }

    #[test]
    fn ids_that_fit_keep_their_number_others_take_the_lowest_free() {
        let mut r = Requests::default();
        assert_eq!(r.post(5, None), Ok(5));
        assert_eq!(r.post(1 << 40, None), Ok(0));
        assert_eq!(r.post((1 << 40) + 1, None), Ok(1));
        assert_eq!(r.post(1, None), Ok(2), "1 is taken: the lowest free");
        assert!(r.post(5, None).is_err());
        assert_eq!(r.complete(1 << 40).map(|p| p.req), Some(0));
        assert_eq!(r.post(3, None), Ok(3));
        assert_eq!(r.post(1 << 41, None), Ok(0), "0 freed");
        assert_eq!(r.post(1 << 42, None), Ok(4));
        assert_eq!(r.post(1 << 43, None), Ok(6), "5 is taken");
        assert!(r.complete(77).is_none());
    }

    /// The same numbers as a search from 0 over every pending request (the former reader),
    /// on a mix of posts and completions.
    #[test]
    fn matches_a_search_from_zero() {
        let mut r = Requests::default();
        let mut model: HashMap<u64, u32> = HashMap::new();
        let mut x = 12345u64;
        for step in 0..4000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let id = if x >> 63 == 0 {
                (x >> 40) % 64
            } else {
                (1 << 33) + (x >> 50) % 64
            };
            if (x >> 20).is_multiple_of(3) {
                assert_eq!(
                    r.complete(id).map(|p| p.req),
                    model.remove(&id),
                    "step {step}"
                );
            } else if !model.contains_key(&id) {
                let taken = |n: u32| model.values().any(|&v| v == n);
                let want = match u32::try_from(id) {
                    Ok(n) if !taken(n) => n,
                    _ => (0..).find(|&n| !taken(n)).unwrap(),
                };
                assert_eq!(r.post(id, None), Ok(want), "step {step}");
                model.insert(id, want);
            }
        }
    }

    /// 200,000 requests with ids above 32 bits: each post walks the mark one step, not every
    /// pending request.
    #[test]
    fn wide_ids_cost_one_step_each() {
        let mut r = Requests::default();
        for i in 0..200_000u64 {
            assert_eq!(r.post((1 << 32) + i, None), Ok(i as u32));
        }
        assert_eq!(r.mark, 200_000);
        assert!(r.free_below.is_empty());
    }
}
