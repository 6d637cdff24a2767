//! What a waveform dump asks of the fabric: chosen signals of switches and nodes, recorded by the
//! units themselves as they step (the scheduler's units after every cycle they step, the event
//! engine's parts at the end of every cycle of the dumped window in which a dumped value may
//! have changed), handed on in cycle order.

use super::node::EndNode;
use super::switch_unit::CycleUnit;
use crate::switch::OutputProbe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// One recorded value of a tapped signal: (cycle, signal index, value).
pub type Sample = (u64, u32, u64);

/// No value recorded yet (no signal is wider than 32 bits).
pub const UNRECORDED: u64 = u64::MAX;

/// Chosen signals of switches and nodes, recorded by each unit after every cycle it steps, so that
/// a waveform dump keeps the speed of stepping in windows: the window's samples are then handed
/// on in cycle order (`Fabric::run_tapped`). Each signal belongs to one switch or one node. A tap
/// may record only the values that changed since it last recorded the signal, as long as it
/// records every signal in the first cycle it sees.
pub trait Tap<const V: usize>: Sync {
    /// Number of signals; they are numbered from 0.
    fn signals(&self) -> usize;
    /// Whether switch `id` has signals here.
    fn taps_switch(&self, id: u32) -> bool;
    /// Whether node `id` has signals here.
    fn taps_node(&self, id: u32) -> bool;
    /// Appends `(cycle, signal, value)` for the signals of cycle-engine switch `s` after it
    /// stepped `cycle`.
    fn switch_signals(&self, s: &CycleUnit<V>, cycle: u64, out: &mut Vec<Sample>);
    /// Appends `(cycle, signal, value)` for the signals of node `n` after it stepped `cycle`.
    fn node_signals(&self, n: &EndNode<V>, cycle: u64, out: &mut Vec<Sample>);
    /// The signals of switch `id`, in the order of their numbers, as the event engine records
    /// them itself (reading only the values that may have changed, `event/sampler.rs`).
    fn view_signals(&self, id: u32) -> &[ViewSignal];
}

/// What a dumped signal of a switch shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchValue {
    /// Valid entries of the ARN table.
    Entries,
    /// Flits in VC `vc` of input `port`.
    Occupancy { port: u8, vc: u8 },
    /// Field `field` of output `port`'s probe ([`probe_value`]).
    Probe { port: u8, field: u8 },
    /// Free credits of VC `vc` of output `port`.
    Credits { port: u8, vc: u8 },
}

/// A dumped signal of a switch as the event engine records it: its number, what it shows, the
/// value recorded last ([`UNRECORDED`] before the first) and whether that value differed from
/// the one before. The part that steps the switch records it; the windows are ordered by the
/// fabric's barrier.
#[derive(Debug)]
pub struct ViewSignal {
    pub k: u32,
    pub value: SwitchValue,
    last: AtomicU64,
    moved: AtomicBool,
}

impl ViewSignal {
    /// The value recorded last, and whether it moved when last read (for a checkpoint).
    pub fn state(&self) -> (u64, bool) {
        (
            self.last.load(Ordering::Relaxed),
            self.moved.load(Ordering::Relaxed),
        )
    }

    /// Takes back [`ViewSignal::state`].
    pub fn set_state(&self, (last, moved): (u64, bool)) {
        self.last.store(last, Ordering::Relaxed);
        self.moved.store(moved, Ordering::Relaxed);
    }

    /// Signal `k` showing `value`, not recorded yet.
    pub fn new(k: u32, value: SwitchValue) -> Self {
        ViewSignal {
            k,
            value,
            last: AtomicU64::new(UNRECORDED),
            moved: AtomicBool::new(false),
        }
    }

    /// Records `value` in `cycle` if it differs from the value recorded last; whether it did.
    #[inline(always)]
    pub fn record(&self, value: u64, cycle: u64, out: &mut Vec<Sample>) -> bool {
        let moved = self.last.load(Ordering::Relaxed) != value;
        if moved {
            self.last.store(value, Ordering::Relaxed);
            out.push((cycle, self.k, value));
        }
        self.moved.store(moved, Ordering::Relaxed);
        moved
    }

    /// Whether the value recorded last differed from the one before.
    #[inline(always)]
    pub fn moved(&self) -> bool {
        self.moved.load(Ordering::Relaxed)
    }
}

/// Field `field` of an output's probe, in the order of the dump's output fields (`busy`,
/// `packet`, `pkt.src`, `pkt.dlid`, `pkt.len`, `pkt.vc`, `pkt.adapted`, `detector_state`,
/// `crossed`).
#[inline]
pub fn probe_value(pr: &OutputProbe, field: usize) -> u64 {
    match field {
        0 => pr.busy as u64,
        1 => pr.packet as u64,
        2 => pr.src as u64,
        3 => pr.dlid as u64,
        4 => pr.len as u64,
        5 => pr.vc as u64,
        6 => pr.adapted as u64,
        7 => pr.det_state as u64,
        _ => pr.crossed as u64,
    }
}
