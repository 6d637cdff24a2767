//! Which ports of each unit receive something in a cycle ([`Arrivals`]). No hardware: the
//! scheduler's marks, set when the outboxes are written and read by the receiving units, so that
//! a unit reads only the delay lines that hold something for it and idle links cost nothing.

use super::ring_len;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which ports of each unit (switch or end node) receive something in a cycle: per unit and
/// cycle (modulo the delay lines' length) one mask of ports with a flit arriving, one of ports
/// with credits or an ARN coming back.
///
/// Marked when an outbox is written, read and cleared by the receiving unit in the arrival cycle,
/// so a unit only reads the delay lines that hold something for it: idle links cost nothing. Units
/// of several threads may mark one mask at once, hence the atomics (relaxed: the fabric's phases
/// order them).
#[derive(Debug, Default)]
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
#[derive(Debug, Default)]
#[repr(align(64))]
struct SummaryLine(AtomicU64);

/// Eight cycles of one unit's arrival masks, on a cache line of their own (units stepped on
/// different threads do not share lines).
#[derive(Debug, Default)]
#[repr(align(64))]
struct MaskLine([AtomicU64; 8]);

impl Arrivals {
    /// Masks for `units` units and delay lines of `latency` cycles (rings as in [`Channel`](super::Channel)).
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

    /// Marks a flit arriving at `to` (unit, port) in cycle `at` (see [`Arrivals::mark`]).
    #[inline]
    pub(super) fn mark_flit(&self, to: (u32, u8), at: u64, shared: bool) {
        self.mark(&self.fwd, to, at, shared);
    }

    /// Marks credits or an ARN coming back to `to` (unit, port) in cycle `at`.
    #[inline]
    pub(super) fn mark_back(&self, to: (u32, u8), at: u64, shared: bool) {
        self.mark(&self.bwd, to, at, shared);
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
    /// ARN come back; clears both masks (called once per unit and cycle, by the unit). A unit
    /// with nothing arriving reads one word.
    #[inline]
    pub fn take(&self, unit: u32, now: u64) -> (u64, u64) {
        if let Some(any) = self.any.get(unit as usize) {
            let any = &any.0;
            let cycle_bit = 1u64 << (now & (self.ring - 1));
            if any.load(Ordering::Relaxed) & cycle_bit == 0 {
                return (0, 0);
            }
            // Marks for this cycle were made in an earlier phase; none is made for a cycle
            // that shares its bit meanwhile (sends land a latency later, within the ring).
            any.fetch_and(!cycle_bit, Ordering::Relaxed);
        }
        (
            self.take_mask(&self.fwd, unit, now),
            self.take_mask(&self.bwd, unit, now),
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
