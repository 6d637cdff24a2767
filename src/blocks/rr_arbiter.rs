//! Round-robin arbiter (`rr_arbiter.sv`): N requests in, at most one one-hot grant out.
//!
//! Models the per-output-port arbiter of an input-queued switch: requesters are (input port, VC)
//! pairs, all at the same priority. The priority pointer `ptr_q` names the requester that wins
//! first; the search runs upward from it and wraps. The grant is combinational. When the grant is
//! accepted (`ack_i` high in the same cycle), the pointer moves just past the granted requester,
//! so the requester just served becomes the lowest priority; without `ack_i` it holds.
//!
//! Widths: `N` from 1 to 128 requesters, `ptr_q` and `idx_o` are `max(1, clog2 N)` bits.
//!
//! ```
//! use arnsim::blocks::{Block, RrArbiter};
//! use arnsim::blocks::rr_arbiter::RrArbiterIn;
//!
//! let mut arb = RrArbiter::new(4);
//! let req = RrArbiterIn { req: 0b1011, ack: true };
//! let winners: Vec<u8> = (0..4).map(|_| arb.step(&req).idx).collect();
//! assert_eq!(winners, [0, 1, 3, 0]); // each winner drops to the lowest priority
//! ```

use super::Block;
use super::probe::{Visit, index_width};

/// Largest supported number of requesters.
pub const MAX_REQUESTERS: usize = 128;

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RrArbiterIn {
    /// `req_i[N-1:0]`: bit i is requester i.
    pub req: u128,
    /// `ack_i`: the grant of this cycle is accepted; the pointer moves.
    pub ack: bool,
}

/// Outputs of one cycle (combinational).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RrArbiterOut {
    /// `gnt_o[N-1:0]`: one-hot grant, zero when nobody requests.
    pub gnt: u128,
    /// `valid_o`: some requester is granted.
    pub valid: bool,
    /// `idx_o`: index of the granted requester (zero when `valid` is low).
    pub idx: u8,
}

/// Registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RrArbiterRegs {
    /// `ptr_q`: highest-priority requester. Reset: 0.
    pub ptr: u8,
}

/// The arbiter: three bytes, so that a switch's arbiters (one per output and one per (output,
/// input) pair for the VCs) take a few cache lines.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RrArbiter {
    n: u8,
    q: RrArbiterRegs,
    d: RrArbiterRegs,
}

const _: () = assert!(std::mem::size_of::<RrArbiter>() == 3);

impl RrArbiter {
    /// An arbiter over `n` requesters (1 to 128), in its reset state.
    pub fn new(n: usize) -> Self {
        assert!(
            (1..=MAX_REQUESTERS).contains(&n),
            "rr_arbiter: N = {n} is outside 1..=128"
        );
        RrArbiter {
            // Stored minus one so that 128 fits in a byte.
            n: (n - 1) as u8,
            q: RrArbiterRegs::default(),
            d: RrArbiterRegs::default(),
        }
    }

    /// An arbiter over `n` requesters whose pointer register holds `ptr`: for a bank of
    /// arbiters of one size kept as their pointer registers alone.
    #[inline]
    pub fn with_ptr(n: usize, ptr: u8) -> Self {
        debug_assert!((1..=MAX_REQUESTERS).contains(&n) && (ptr as usize) < n);
        let q = RrArbiterRegs { ptr };
        RrArbiter {
            n: (n - 1) as u8,
            q,
            d: q,
        }
    }

    /// Number of requesters N.
    pub fn requesters(&self) -> usize {
        self.n as usize + 1
    }

    /// The requesters' bits: the low N.
    #[inline]
    fn mask(&self) -> u128 {
        u128::MAX >> (127 - self.n)
    }

    /// Current registers.
    pub fn regs(&self) -> RrArbiterRegs {
        self.q
    }

    /// The grant for `req` under the current pointer, without touching any state.
    #[inline]
    pub fn decide(&self, req: u128) -> RrArbiterOut {
        let req = req & self.mask();
        if req == 0 {
            return RrArbiterOut::default();
        }
        let upper = req & (u128::MAX << self.q.ptr);
        let pick = if upper != 0 { upper } else { req };
        let idx = pick.trailing_zeros() as u8;
        RrArbiterOut {
            gnt: 1u128 << idx,
            valid: true,
            idx,
        }
    }
}

impl Block for RrArbiter {
    type In = RrArbiterIn;
    type Out = RrArbiterOut;
    const NAME: &'static str = "rr_arbiter";

    fn reset(&mut self) {
        self.q = RrArbiterRegs::default();
        self.d = self.q;
    }

    #[inline]
    fn evaluate(&mut self, inp: &RrArbiterIn) -> RrArbiterOut {
        let out = self.decide(inp.req);
        debug_assert!(out.gnt.count_ones() <= 1, "a_gnt_onehot0");
        debug_assert_eq!(out.gnt & !inp.req, 0, "a_gnt_subset_req");
        self.d = self.q;
        if inp.ack && out.valid {
            self.d.ptr = if out.idx == self.n { 0 } else { out.idx + 1 };
        }
        out
    }

    #[inline]
    fn commit(&mut self) {
        self.q = self.d;
        debug_assert!(self.q.ptr <= self.n, "a_ptr_in_range");
    }

    fn probe_inputs(&self, inp: &RrArbiterIn, v: &mut dyn Visit) {
        v.bits("req_i", self.requesters() as u32, inp.req & self.mask());
        v.bit("ack_i", inp.ack);
    }

    fn probe_outputs(&self, out: &RrArbiterOut, v: &mut dyn Visit) {
        let w = index_width(self.requesters());
        v.bits("gnt_o", self.requesters() as u32, out.gnt);
        v.bit("valid_o", out.valid);
        v.bits("idx_o", w, out.idx as u128);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        v.bits("ptr_q", index_width(self.requesters()), self.q.ptr as u128);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cycle(a: &mut RrArbiter, req: u128, ack: bool) -> RrArbiterOut {
        a.step(&RrArbiterIn { req, ack })
    }

    #[test]
    fn rotates_over_persistent_requesters() {
        let mut a = RrArbiter::new(4);
        let order: Vec<u8> = (0..8).map(|_| cycle(&mut a, 0b1011, true).idx).collect();
        assert_eq!(order, vec![0, 1, 3, 0, 1, 3, 0, 1]);
    }

    /// The timing diagram of docs/blocks/rr_arbiter.md, cycle by cycle.
    #[test]
    fn doc_timing_diagram() {
        let mut a = RrArbiter::new(4);
        let rows = [
            (0b1011, true, 0, 0),
            (0b1011, true, 1, 1),
            (0b1011, false, 2, 3),
            (0b1011, true, 2, 3),
            (0b0110, true, 0, 1),
            (0b0110, true, 2, 2),
        ];
        for (c, (req, ack, ptr, idx)) in rows.into_iter().enumerate() {
            assert_eq!(a.regs().ptr, ptr, "ptr_q in cycle {c}");
            let o = cycle(&mut a, req, ack);
            assert_eq!(o.idx, idx, "idx_o in cycle {c}");
            assert_eq!(o.gnt, 1 << idx, "gnt_o in cycle {c}");
        }
    }

    #[test]
    fn pointer_holds_without_ack() {
        let mut a = RrArbiter::new(4);
        assert_eq!(cycle(&mut a, 0b0110, false).idx, 1);
        assert_eq!(cycle(&mut a, 0b0110, false).idx, 1);
        assert_eq!(a.regs().ptr, 0);
        assert_eq!(cycle(&mut a, 0b0110, true).idx, 1);
        assert_eq!(a.regs().ptr, 2);
        assert_eq!(cycle(&mut a, 0b0110, true).idx, 2);
        assert_eq!(a.regs().ptr, 3);
    }

    #[test]
    fn full_width_128_wraps() {
        let mut a = RrArbiter::new(128);
        let top = 1u128 << 127;
        assert_eq!(cycle(&mut a, top | 1, true).idx, 0);
        assert_eq!(cycle(&mut a, top | 1, true).idx, 127);
        assert_eq!(a.regs().ptr, 0);
        assert_eq!(cycle(&mut a, top | 1, true).idx, 0);
    }

    #[test]
    fn requests_beyond_n_are_ignored() {
        let mut a = RrArbiter::new(3);
        let o = cycle(&mut a, 0b1000, true);
        assert!(!o.valid);
        assert_eq!(o.gnt, 0);
    }

    fn arb_and_stream() -> impl Strategy<Value = (usize, Vec<(u128, bool)>)> {
        (1usize..=128).prop_flat_map(|n| {
            let mask = if n == 128 {
                u128::MAX
            } else {
                (1u128 << n) - 1
            };
            (
                Just(n),
                proptest::collection::vec(
                    (any::<u128>().prop_map(move |r| r & mask), any::<bool>()),
                    1..200,
                ),
            )
        })
    }

    proptest! {
        /// At most one grant, only to a requester, and a grant whenever someone requests.
        #[test]
        fn grants_one_requester_only((n, stream) in arb_and_stream()) {
            let mut a = RrArbiter::new(n);
            for (req, ack) in stream {
                let o = cycle(&mut a, req, ack);
                prop_assert!(o.gnt.count_ones() <= 1);
                prop_assert_eq!(o.gnt & !req, 0);
                prop_assert_eq!(o.valid, req != 0);
                if o.valid {
                    prop_assert_eq!(o.gnt, 1u128 << o.idx);
                }
            }
        }

        /// A requester that keeps requesting is granted within N accepted grants.
        #[test]
        fn persistent_requester_served_within_n_grants(
            (n, stream) in arb_and_stream(),
            who in 0usize..128,
        ) {
            let who = who % n;
            let mut a = RrArbiter::new(n);
            let mut grants_since_served = 0usize;
            for (req, _) in stream {
                let o = cycle(&mut a, req | (1u128 << who), true);
                if o.idx as usize == who {
                    grants_since_served = 0;
                } else {
                    grants_since_served += 1;
                    prop_assert!(grants_since_served < n, "requester {} waited {} grants", who, grants_since_served);
                }
            }
        }
    }
}
