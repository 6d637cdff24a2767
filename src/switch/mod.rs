//! What the switch is, whatever steps it: its parameters ([`config`]), the events and counters it
//! reports ([`events`]), its cabling ([`SwitchWiring`]), the output ports' SL-to-VL tables
//! ([`sl_to_vl`]), the credit counters of an output in closed form ([`output_credits`]), the
//! routing stage's choices among an LFT entry's options ([`routing_stage`]), when a congestion
//! detector next has to be evaluated ([`detection`]), adaptive routing on snooped notifications
//! ([`snoop`]) and flow routing's route caches and port selection ([`flow`]).
//!
//! The switch itself has three views, held equal cycle by cycle: `hdl-ref/switch.sv`, the cycle
//! engine (`src/cycle/`, module for module as the HDL) and the event engine
//! (`src/fabric/event.rs`, which steps a whole fabric from a calendar of events). `docs/switch.md`
//! says what happens in a cycle.

pub mod config;
mod detection;
mod events;
pub mod flow;
pub mod output_credits;
pub mod routing_stage;
pub mod sl_to_vl;
pub mod snoop;

pub use config::{
    OutputArbitration, QueuingScheme, RoutingMode, SwitchParams, keep_oldest, packet_slots,
    stamp_older,
};
pub(crate) use detection::detector_wake;
pub use events::{Observer, OutputProbe, SwitchEvent, SwitchFault, SwitchStats};
pub use routing_stage::{fa_choice, most_credits, oblivious_choice};
pub use sl_to_vl::SlToVl;

/// Largest switch radix.
pub const MAX_PORTS: usize = 64;

/// The bits set in `mask` (ports of a port mask, cycles of a window), lowest first.
#[inline]
pub(crate) fn set_bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
}

/// Cabling and position of one switch.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SwitchWiring {
    /// Index in the fabric.
    pub id: u32,
    /// Stage in the fat tree (1 = leaf).
    pub stage: u8,
    /// Bit p: port p goes up.
    pub up_ports: u64,
    /// S-mod-K's divisor of the source at this switch (the product of the up-port counts of
    /// the levels below; 0 off a fat tree).
    pub smodk_div: u32,
    /// Per port: the channel whose flits arrive at this input (we send credits back on it).
    pub in_ch: Vec<u32>,
    /// Per port: the channel this output sends flits on (credits come back on it).
    pub out_ch: Vec<u32>,
    /// Per port: capacity in flits of each VC of the buffer at the far end of the output link.
    pub out_capacity: Vec<u16>,
    /// The output ports' SL-to-VL tables, as the subnet manager wrote them.
    pub sl_to_vl: SlToVl,
}
