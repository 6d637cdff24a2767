//! Arrival masks: which delay lines hold something for each unit in each cycle, marked when the
//! outboxes are written, so that a unit reads only the links that deliver something and a unit
//! with nothing arriving in a window is not visited at all.

use crate::wire::link::{Arriving, ring_len};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which ports of each unit (switch or end node) receive something in a cycle: per unit and
/// cycle (modulo the delay lines' length) one mask of ports with a flit arriving, one of ports
/// with credits or an ARN coming back.
///
/// Marked when an outbox is written, read and cleared for the receiving unit in the arrival cycle
/// (just before it steps it; the unit is handed the two masks as its [`Arriving`]), so a unit only
/// reads the delay lines that hold something for it: idle links cost nothing. Units
/// of several threads may mark one mask at once, hence the atomics (relaxed: the fabric's phases
/// order them).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Arrivals {
    ring: u64,
    /// Cache lines per unit and direction.
    lines: usize,
    fwd: Vec<MaskLine>,
    bwd: Vec<MaskLine>,
    /// Per unit: bit `cycle mod ring` set when anything arrives in that cycle, either way, so
    /// that a unit with nothing arriving reads one word. Empty when the ring is longer than 64
    /// cycles (a unit then reads both masks).
    any: Vec<SummaryLine>,
}

/// One unit's summary of arrival cycles, on a cache line of its own.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[repr(align(64))]
struct SummaryLine(AtomicU64);

/// Eight cycles of one unit's arrival masks, on a cache line of their own (units stepped on
/// different threads do not share lines).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[repr(align(64))]
struct MaskLine([AtomicU64; 8]);

impl Arrivals {
    /// Masks for `units` units and delay lines of `latency` cycles (rings as in [`Channel`](crate::wire::link::Channel)).
    pub fn new(units: usize, latency: u32) -> Self {
        let ring = ring_len(latency as u64);
        let lines = (ring as usize).div_ceil(8);
        let n = units * lines;
        Arrivals {
            ring,
            lines,
            fwd: (0..n).map(|_| MaskLine::default()).collect(),
            bwd: (0..n).map(|_| MaskLine::default()).collect(),
            any: if ring <= 64 {
                (0..units).map(|_| SummaryLine::default()).collect()
            } else {
                Vec::new()
            },
        }
    }

    /// (line, word) of `unit`'s mask for `cycle`.
    #[inline]
    fn index(&self, unit: u32, cycle: u64) -> (usize, usize) {
        let slot = (cycle & (self.ring - 1)) as usize;
        (unit as usize * self.lines + slot / 8, slot % 8)
    }

    #[inline]
    fn word(masks: &[MaskLine], (line, word): (usize, usize)) -> &AtomicU64 {
        &masks[line].0[word]
    }

    /// Marks port `to.1` of unit `to.0` for a flit arriving in cycle `at` (see
    /// [`Arrivals::mark`]).
    #[inline]
    pub(super) fn mark_flit(&self, to: (u32, u8), at: u64, shared: bool) {
        self.mark(&self.fwd, to, at, shared);
    }

    /// Marks port `to.1` of unit `to.0` for credits or an ARN coming back in cycle `at` (see
    /// [`Arrivals::mark`]).
    #[inline]
    pub(super) fn mark_back(&self, to: (u32, u8), at: u64, shared: bool) {
        self.mark(&self.bwd, to, at, shared);
    }

    /// Marks `port` of `unit` in `masks` (forward or reverse) for cycle `at`: an atomic OR when
    /// `shared` (other threads mark at the same time), else a plain read-modify-write.
    #[inline]
    fn mark(&self, masks: &[MaskLine], (unit, port): (u32, u8), at: u64, shared: bool) {
        let m = Self::word(masks, self.index(unit, at));
        if shared {
            m.fetch_or(1 << port, Ordering::Relaxed);
        } else {
            m.store(m.load(Ordering::Relaxed) | 1 << port, Ordering::Relaxed);
        }
        if let Some(any) = self.any.get(unit as usize) {
            let cycle_bit = 1u64 << (at & (self.ring - 1));
            if shared {
                any.0.fetch_or(cycle_bit, Ordering::Relaxed);
            } else {
                any.0
                    .store(any.0.load(Ordering::Relaxed) | cycle_bit, Ordering::Relaxed);
            }
        }
    }

    /// Whether nothing arrives for `unit`, either way, in cycles `t0 .. t0 + w` (`w` at most
    /// the ring). `false` when the masks keep no summary.
    #[inline]
    pub fn none_in(&self, unit: u32, t0: u64, w: u64) -> bool {
        let Some(any) = self.any.get(unit as usize) else {
            return false;
        };
        let bits = any.0.load(Ordering::Relaxed);
        (t0..t0 + w).all(|c| bits >> (c & (self.ring - 1)) & 1 == 0)
    }

    /// The ports of `unit` where a flit arrives in cycle `now`, and those where credits or an
    /// ARN come back; clears both masks (called once per unit and cycle, before the unit steps
    /// it). A unit with nothing arriving reads one word.
    #[inline]
    pub fn take(&self, unit: u32, now: u64) -> Arriving {
        if let Some(any) = self.any.get(unit as usize) {
            let any = &any.0;
            let cycle_bit = 1u64 << (now & (self.ring - 1));
            if any.load(Ordering::Relaxed) & cycle_bit == 0 {
                return Arriving::default();
            }
            // Marks for this cycle were made in an earlier phase; none is made for a cycle
            // that shares its bit meanwhile (sends land a latency later, within the ring).
            any.fetch_and(!cycle_bit, Ordering::Relaxed);
        }
        Arriving {
            flits: self.take_mask(&self.fwd, unit, now),
            back: self.take_mask(&self.bwd, unit, now),
        }
    }

    /// The cycles of `t0 .. t0 + w` in which something arrives for `unit`, as bits from `t0`
    /// (every cycle when the masks keep no summary).
    #[inline]
    pub fn cycles_in(&self, unit: u32, t0: u64, w: u64) -> u64 {
        let Some(any) = self.any.get(unit as usize) else {
            return u64::MAX >> (64 - w);
        };
        let bits = any.0.load(Ordering::Relaxed);
        // The ring's bits from t0's on, wrapped (`w` is at most the ring, itself at most 64).
        let r = self.ring;
        let shift = t0 & (r - 1);
        let ring_mask = if r == 64 { u64::MAX } else { (1 << r) - 1 };
        let rot = ((bits >> shift) | (bits << ((r - shift) % r))) & ring_mask;
        rot & (u64::MAX >> (64 - w))
    }

    /// `unit`'s two masks for cycle `c` (ports with a flit arriving, ports with a return), without
    /// clearing them.
    #[inline]
    pub fn peek(&self, unit: u32, c: u64) -> (u64, u64) {
        let ix = self.index(unit, c);
        (
            Self::word(&self.fwd, ix).load(Ordering::Relaxed),
            Self::word(&self.bwd, ix).load(Ordering::Relaxed),
        )
    }

    /// Reads and clears `unit`'s mask in `masks` for cycle `now`.
    #[inline]
    fn take_mask(&self, masks: &[MaskLine], unit: u32, now: u64) -> u64 {
        let m = Self::word(masks, self.index(unit, now));
        let bits = m.load(Ordering::Relaxed);
        if bits != 0 {
            m.store(0, Ordering::Relaxed);
        }
        bits
    }
}
