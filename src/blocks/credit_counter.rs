//! Credit counter (`credit_counter.sv`): free flit slots of one downstream VC buffer.
//!
//! Models the credit counter of a link controller, one per (output port, VC), for credit-based,
//! lossless flow control (Rocher-Gonzalez et al., section 3.2). `cnt_q` counts the flit slots still free in the
//! VC buffer of the next switch: it starts at the buffer capacity `Cap`, goes down by one for every
//! flit sent on the VC (`dec_i`) and up by the credits the link brings back (`inc_i`, one per flit
//! freed downstream, 0 to 255 per cycle). The count feeds the virtual cut-through check (`enough_o`:
//! a packet of `need_i` flits may start only when the downstream VC has room for all of it), the
//! congestion detector (free credits against FCTh, section 3.3) and `selectAlternativeOport`
//! (the output with most credits, pseudo-code 3).
//!
//! Two protocol errors are detected and latched in sticky flags until reset: a flit sent with no
//! credit at the start of the cycle (underflow; the decrement is ignored) and a count that would
//! exceed `Cap` (overflow; the count saturates at `Cap`).
//!
//! Widths: `cnt_q`, `cnt_o` and `need_i` are 16 bits, `inc_i` 8 bits, the internal sum 17 bits
//! (it never wraps). `Cap` is 1 to 65535.

use super::Block;
use super::probe::Visit;
use arbitrary_int::prelude::*;
use bitflags::bitflags;

/// Largest supported capacity `Cap` (the counter is 16 bits wide).
pub const MAX_CAP: usize = 65535;
/// Width of `cnt_q`, `cnt_o` and `need_i`.
pub const CNT_W: u32 = 16;
/// Width of `inc_i`.
pub const INC_W: u32 = 8;

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreditCounterIn {
    /// `dec_i`: one flit is sent on this VC this cycle (it uses one credit).
    pub dec: bool,
    /// `inc_i[7:0]`: credits returned by the link this cycle.
    pub inc: u8,
    /// `need_i[15:0]`: credits the candidate packet needs (its length in flits).
    pub need: u16,
}

/// Outputs of one cycle (combinational from the registers and `need_i`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreditCounterOut {
    /// `cnt_o[15:0]` = `cnt_q`: free credits at the start of the cycle.
    pub cnt: u16,
    /// `enough_o` = `cnt_q >= need_i`: the candidate packet fits downstream (virtual cut-through).
    pub enough: bool,
    /// `ovf_o` = `ovf_q`: an overflow has happened since reset.
    pub ovf: bool,
    /// `udf_o` = `udf_q`: an underflow has happened since reset.
    pub udf: bool,
}

bitflags! {
    /// The sticky error flags `ovf_q` and `udf_q`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
    pub struct CreditErrors: u8 {
        /// `ovf_q`: credits came back beyond `Cap` (the count saturated).
        const OVERFLOW = 1 << 0;
        /// `udf_q`: a flit was sent with no credit (the decrement was ignored).
        const UNDERFLOW = 1 << 1;
    }
}

/// Registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CreditCounterRegs {
    /// `cnt_q`: free credits. Reset: `Cap`.
    pub cnt: u16,
    /// `ovf_q` and `udf_q`. Reset: both clear.
    pub err: CreditErrors,
}

/// The credit counter of one (output port, VC).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CreditCounter {
    cap: u16,
    q: CreditCounterRegs,
    d: CreditCounterRegs,
}

impl CreditCounter {
    /// A counter for a downstream VC buffer of `cap` flits (1 to 65535), in its reset state.
    pub fn new(cap: usize) -> Self {
        assert!(
            (1..=MAX_CAP).contains(&cap),
            "credit_counter: Cap = {cap} is outside 1..=65535"
        );
        let q = Self::reset_regs(cap as u16);
        CreditCounter {
            cap: cap as u16,
            q,
            d: q,
        }
    }

    fn reset_regs(cap: u16) -> CreditCounterRegs {
        CreditCounterRegs {
            cnt: cap,
            err: CreditErrors::empty(),
        }
    }

    /// Capacity `Cap` of the downstream VC buffer, in flits.
    pub fn cap(&self) -> u16 {
        self.cap
    }

    /// Current registers.
    pub fn regs(&self) -> CreditCounterRegs {
        self.q
    }

    /// Free credits now (`cnt_q`).
    pub fn credits(&self) -> u16 {
        self.q.cnt
    }

    /// The virtual cut-through check for a packet of `need` flits, without touching any state.
    #[inline]
    pub fn enough(&self, need: u16) -> bool {
        self.q.cnt >= need
    }

    /// The outputs for `need_i` under the current registers.
    #[inline]
    pub fn outputs(&self, need: u16) -> CreditCounterOut {
        CreditCounterOut {
            cnt: self.q.cnt,
            enough: self.enough(need),
            ovf: self.q.err.contains(CreditErrors::OVERFLOW),
            udf: self.q.err.contains(CreditErrors::UNDERFLOW),
        }
    }
}

impl Block for CreditCounter {
    type In = CreditCounterIn;
    type Out = CreditCounterOut;
    const NAME: &'static str = "credit_counter";

    fn reset(&mut self) {
        self.q = Self::reset_regs(self.cap);
        self.d = self.q;
    }

    #[inline]
    fn evaluate(&mut self, inp: &CreditCounterIn) -> CreditCounterOut {
        let out = self.outputs(inp.need);
        // A flit sent with no credit at the start of the cycle; a credit returned in the same
        // cycle does not excuse it. The illegal decrement is ignored.
        let underflow = inp.dec && self.q.cnt == 0;
        let take = inp.dec && !underflow;
        let sum = u17::from(self.q.cnt) + u17::from(inp.inc) - u17::from(take as u8);
        let overflow = sum > u17::from(self.cap);
        self.d = self.q;
        self.d.cnt = if overflow {
            self.cap
        } else {
            sum.value() as u16
        };
        self.d.err.set(CreditErrors::OVERFLOW, overflow);
        self.d.err.set(CreditErrors::UNDERFLOW, underflow);
        self.d.err |= self.q.err;
        debug_assert!(
            !self.q.err.contains(CreditErrors::OVERFLOW)
                || self.d.err.contains(CreditErrors::OVERFLOW),
            "a_ovf_sticky"
        );
        debug_assert!(
            !self.q.err.contains(CreditErrors::UNDERFLOW)
                || self.d.err.contains(CreditErrors::UNDERFLOW),
            "a_udf_sticky"
        );
        out
    }

    #[inline]
    fn commit(&mut self) {
        self.q = self.d;
        debug_assert!(self.q.cnt <= self.cap, "a_cnt_le_cap");
    }

    fn probe_inputs(&self, inp: &CreditCounterIn, v: &mut dyn Visit) {
        v.bit("dec_i", inp.dec);
        v.bits("inc_i", INC_W, inp.inc as u128);
        v.bits("need_i", CNT_W, inp.need as u128);
    }

    fn probe_outputs(&self, out: &CreditCounterOut, v: &mut dyn Visit) {
        v.bits("cnt_o", CNT_W, out.cnt as u128);
        v.bit("enough_o", out.enough);
        v.bit("ovf_o", out.ovf);
        v.bit("udf_o", out.udf);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        v.bits("cnt_q", CNT_W, self.q.cnt as u128);
        v.bit("ovf_q", self.q.err.contains(CreditErrors::OVERFLOW));
        v.bit("udf_q", self.q.err.contains(CreditErrors::UNDERFLOW));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cycle(c: &mut CreditCounter, dec: bool, inc: u8, need: u16) -> CreditCounterOut {
        c.step(&CreditCounterIn { dec, inc, need })
    }

    /// The timing diagram of `docs/blocks/credit_counter.md`, Cap = 3.
    #[test]
    fn timing_diagram_of_the_doc() {
        let dec = [1, 1, 1, 1, 1, 0, 1, 0, 1, 0];
        let inc = [0, 0, 0, 1, 1, 2, 0, 4, 1, 0];
        let need = [2, 2, 2, 1, 1, 2, 2, 3, 3, 3];
        let cnt = [3, 2, 1, 0, 1, 1, 3, 2, 3, 3];
        let enough = [1, 1, 0, 0, 1, 0, 1, 0, 1, 1];
        let ovf = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1];
        let udf = [0, 0, 0, 0, 1, 1, 1, 1, 1, 1];
        let mut c = CreditCounter::new(3);
        for t in 0..dec.len() {
            let o = cycle(&mut c, dec[t] == 1, inc[t], need[t]);
            assert_eq!(o.cnt, cnt[t], "cnt_o at cycle {t}");
            assert_eq!(o.enough as u8, enough[t], "enough_o at cycle {t}");
            assert_eq!(o.ovf as u8, ovf[t], "ovf_o at cycle {t}");
            assert_eq!(o.udf as u8, udf[t], "udf_o at cycle {t}");
        }
    }

    #[test]
    fn underflow_is_not_excused_by_a_same_cycle_credit() {
        let mut c = CreditCounter::new(4);
        for _ in 0..4 {
            cycle(&mut c, true, 0, 0);
        }
        assert_eq!(c.credits(), 0);
        assert!(!c.regs().err.contains(CreditErrors::UNDERFLOW));
        // Send at zero with a credit arriving: the decrement is ignored, the credit counts.
        cycle(&mut c, true, 1, 0);
        assert_eq!(c.credits(), 1);
        assert_eq!(c.regs().err, CreditErrors::UNDERFLOW);
        // Sticky, and a later legal send works.
        let o = cycle(&mut c, true, 0, 0);
        assert!(o.udf && !o.ovf);
        assert_eq!(c.credits(), 0);
        let o = cycle(&mut c, false, 0, 0);
        assert!(o.udf);
    }

    #[test]
    fn overflow_saturates_and_sticks() {
        let mut c = CreditCounter::new(20);
        cycle(&mut c, true, 0, 0);
        cycle(&mut c, true, 0, 0);
        assert_eq!(c.credits(), 18);
        // Exactly back to Cap: no overflow.
        cycle(&mut c, false, 2, 0);
        assert_eq!(c.credits(), 20);
        assert!(c.regs().err.is_empty());
        // A send and a return of one at Cap: net zero, no overflow.
        cycle(&mut c, true, 1, 0);
        assert_eq!(c.credits(), 20);
        assert!(c.regs().err.is_empty());
        // One beyond: saturate and flag.
        cycle(&mut c, true, 2, 0);
        assert_eq!(c.credits(), 20);
        assert_eq!(c.regs().err, CreditErrors::OVERFLOW);
        cycle(&mut c, true, 0, 0);
        assert_eq!(c.credits(), 19);
        assert_eq!(c.regs().err, CreditErrors::OVERFLOW);
    }

    #[test]
    fn both_flags_in_one_cycle_with_cap_one() {
        let mut c = CreditCounter::new(1);
        cycle(&mut c, true, 0, 0);
        assert_eq!(c.credits(), 0);
        // Send at zero (underflow, ignored) and two credits back (1 + 2 = 2 > 1: overflow).
        cycle(&mut c, true, 2, 0);
        assert_eq!(c.credits(), 1);
        assert_eq!(
            c.regs().err,
            CreditErrors::OVERFLOW | CreditErrors::UNDERFLOW
        );
        c.reset();
        assert_eq!(c.credits(), 1);
        assert!(c.regs().err.is_empty());
    }

    #[test]
    fn full_width_sum_does_not_wrap() {
        let mut c = CreditCounter::new(MAX_CAP);
        let o = cycle(&mut c, false, 255, 0xffff);
        assert!(o.enough);
        assert_eq!(c.credits(), 65535);
        assert_eq!(c.regs().err, CreditErrors::OVERFLOW);
        let mut c = CreditCounter::new(MAX_CAP);
        cycle(&mut c, true, 0, 0);
        cycle(&mut c, false, 1, 0);
        assert_eq!(c.credits(), 65535);
        assert!(c.regs().err.is_empty());
    }

    #[test]
    #[should_panic(expected = "outside 1..=65535")]
    fn cap_zero_is_rejected() {
        let _ = CreditCounter::new(0);
    }

    fn cap_and_stream() -> impl Strategy<Value = (usize, Vec<(bool, u8, u16)>)> {
        let cap = prop_oneof![
            1usize..=8,
            9usize..=300,
            Just(5376usize),
            65280usize..=MAX_CAP,
            1usize..=MAX_CAP,
        ];
        // Returns mostly small so that the count wanders over its whole range.
        let inc = prop_oneof![4 => 0u8..=1, 2 => 0u8..=8, 1 => any::<u8>()];
        (
            cap,
            proptest::collection::vec((any::<bool>(), inc, any::<u16>()), 1..400),
        )
    }

    proptest! {
        /// The count never exceeds Cap, for any input stream.
        #[test]
        fn count_never_exceeds_cap((cap, stream) in cap_and_stream()) {
            let mut c = CreditCounter::new(cap);
            for (dec, inc, need) in stream {
                let o = cycle(&mut c, dec, inc, need);
                prop_assert!(o.cnt as usize <= cap);
                prop_assert!(c.credits() as usize <= cap);
            }
        }

        /// While no flag is set, cnt = Cap - flits sent + credits returned, exactly.
        #[test]
        fn conservation_without_errors((cap, stream) in cap_and_stream()) {
            let mut c = CreditCounter::new(cap);
            let (mut sent, mut returned) = (0i64, 0i64);
            for (dec, inc, need) in stream {
                cycle(&mut c, dec, inc, need);
                sent += dec as i64;
                returned += inc as i64;
                if !c.regs().err.is_empty() {
                    break;
                }
                prop_assert_eq!(c.credits() as i64, cap as i64 - sent + returned);
            }
        }

        /// A flag once set stays set until reset, and reset clears it.
        #[test]
        fn flags_are_sticky_until_reset((cap, stream) in cap_and_stream()) {
            let mut c = CreditCounter::new(cap);
            let mut seen = CreditErrors::empty();
            for (dec, inc, need) in stream {
                let o = cycle(&mut c, dec, inc, need);
                prop_assert_eq!(o.ovf, seen.contains(CreditErrors::OVERFLOW));
                prop_assert_eq!(o.udf, seen.contains(CreditErrors::UNDERFLOW));
                prop_assert!(c.regs().err.contains(seen));
                seen = c.regs().err;
            }
            c.reset();
            prop_assert!(c.regs().err.is_empty());
            prop_assert_eq!(c.credits() as usize, cap);
        }

        /// enough_o == (cnt_q >= need_i), and cnt_o == cnt_q.
        #[test]
        fn enough_is_count_at_least_need((cap, stream) in cap_and_stream(), near in -2i32..=2) {
            let mut c = CreditCounter::new(cap);
            for (dec, inc, need) in stream {
                // Half the time ask for a length right at the boundary.
                let need = if need & 1 == 0 {
                    (c.credits() as i32 + near).clamp(0, 0xffff) as u16
                } else {
                    need
                };
                let before = c.credits();
                let o = cycle(&mut c, dec, inc, need);
                prop_assert_eq!(o.cnt, before);
                prop_assert_eq!(o.enough, before >= need);
            }
        }

        /// The next count is the documented rule: ignore an illegal send, saturate at Cap,
        /// flag exactly the events.
        #[test]
        fn next_state_rule((cap, stream) in cap_and_stream()) {
            let mut c = CreditCounter::new(cap);
            for (dec, inc, need) in stream {
                let q = c.regs();
                cycle(&mut c, dec, inc, need);
                let udf = dec && q.cnt == 0;
                let sum = q.cnt as u32 + inc as u32 - (dec && !udf) as u32;
                let ovf = sum > cap as u32;
                prop_assert_eq!(c.credits() as u32, sum.min(cap as u32));
                let mut want = q.err;
                want.set(CreditErrors::OVERFLOW, ovf || q.err.contains(CreditErrors::OVERFLOW));
                want.set(CreditErrors::UNDERFLOW, udf || q.err.contains(CreditErrors::UNDERFLOW));
                prop_assert_eq!(c.regs().err, want);
            }
        }
    }
}
