//! What a waveform dump asks of the fabric: chosen signals of switches and nodes, recorded by the
//! units themselves as they step (the scheduler's units after every cycle they step, the event
//! engine's parts at the end of every cycle of the dumped window), handed on in cycle order.

use super::event::SwitchView;
use super::node::EndNode;
use super::switch_unit::CycleUnit;

/// One recorded value of a tapped signal: (cycle, signal index, value).
pub type Sample = (u64, u32, u64);

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
    /// Appends `(cycle, signal, value)` for the signals of a switch of the event engine as of
    /// the end of `cycle`.
    fn view_signals(&self, s: &SwitchView<'_, V>, cycle: u64, out: &mut Vec<Sample>);
}
