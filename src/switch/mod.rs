//! One input-queued switch, assembled from the blocks, stepped one cycle at a time.
//!
//! Per port: an input buffer with VOQs ([`voq_buffer`]), the input port controller (Rocher-Gonzalez et al.
//! pseudo-code 4), per-VC credit counters of the downstream buffer, an input-level round-robin
//! arbiter and per-input VC-level arbiters at every output, and a congestion detector per output.
//! One interleaved LFT and one ARN table serve every port; the output ports' SL-to-VL tables
//! ([`sl_to_vl`]) give a routed packet its next VC.
//!
//! Order of work inside one cycle `t` (all of it reads only what links delivered in `t` and the
//! registers of `t`; everything it writes is seen from `t+1`, or by neighbours from `t+latency`):
//! 1. detectors evaluate on the VOQ occupancies and credits as registered at the start of `t`;
//!    a declared root files a processARN command (pseudo-code 1);
//! 2. credits and ARNs arriving on the reverse direction of each output's link are taken in;
//!    ARNs file processARN commands;
//! 3. the routing stage decides, for each head flit that arrived in `t-1` (the LFT's read
//!    latency), the output port, the adapted bit and the next VC, using the ARN table's lookups
//!    (combinational on its registers of `t`), and may send an ARN upstream; the packet enters its
//!    VOQ and may request its output from `t+1`;
//! 4. flits arriving on each input link are stored; a head flit issues its LFT read;
//! 5. every output sends the next flit of its current packet, and, when idle or sending a tail,
//!    arbitrates over (input, VC) pairs whose head packet fits in the downstream credits
//!    (virtual cut-through); the winner's head flit leaves in `t+1`;
//! 6. one processARN command from the queue is applied to the ARN table; freed credits and at most
//!    one ARN per input go back upstream; every block commits.
//!
//! A packet that wins its output leaves one flit per cycle from head to tail, so the switch does
//! its work at the head and the tail: the flits in between, and the credits spent and returned
//! meanwhile, are closed forms of the start cycles ([`voq_buffer`], [`output_credits`]), read
//! wherever something looks at them. Every count read is the one the per-cycle pipeline holds.

mod accessors;
pub mod config;
mod detection;
mod events;
mod input_port_ctrl;
pub mod output_credits;
mod output_port;
mod prefetch;
pub mod routing_stage;
mod skip;
pub mod sl_to_vl;
pub mod voq_buffer;

pub use config::{QueuingScheme, RoutingMode, SwitchParams, packet_slots};
pub(crate) use detection::detector_wake;
pub use events::{Observer, OutputProbe, SwitchEvent, SwitchFault, SwitchStats};
pub use routing_stage::{fa_choice, most_credits, oblivious_choice};
pub use sl_to_vl::SlToVl;

use crate::blocks::arn_table::{ArnLookup, ArnLookupResult, ArnProcess, ArnTableIn, ArnTableOut};
use crate::blocks::congestion_detector::{CongestionDetectorIn, MAX_INPUTS};
use crate::blocks::lft_banks::NO_ROUTE;
use crate::blocks::rng::SplitMix64;
use crate::blocks::rr_arbiter::RrArbiterIn;
use crate::blocks::{ArnTable, Block, CongestionDetector, LftBanks, RrArbiter};
use crate::wire::link::{Arriving, Backward, Channel, Flit, Lanes, LinkSend, streamed, tail_cycle};
use crate::wire::{ArnInfo, Packet, PacketFlags};
use heapless::Deque;
use output_credits::OutputCredits;
use skip::SkipState;
use voq_buffer::{ArrivalFault, VoqBuffer};

/// Largest switch radix.
pub const MAX_PORTS: usize = 64;

/// Index of a VC in a fixed per-VC array of `V` lanes (a power of two). VC numbers are checked
/// against the port's VC count where they enter the switch; the mask only lets the compiler
/// drop the bounds check.
#[inline]
pub(crate) fn vc_ix<const V: usize>(vc: usize) -> usize {
    debug_assert!(vc < V);
    vc & (V - 1)
}

/// Index of a port in a fixed per-port array (see [`vc_ix`]).
#[inline]
pub(crate) fn port_ix(port: usize) -> usize {
    debug_assert!(port < MAX_PORTS);
    port & (MAX_PORTS - 1)
}

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

/// The mask with one bit per port of a `ports`-port switch.
fn port_mask(ports: usize) -> u64 {
    if ports >= 64 {
        u64::MAX
    } else {
        (1u64 << ports) - 1
    }
}

/// Cabling and position of one switch.
#[derive(Clone, Debug)]
pub struct SwitchWiring {
    /// Index in the fabric.
    pub id: u32,
    /// Stage in the fat tree (1 = leaf).
    pub stage: u8,
    /// Bit p: port p goes up.
    pub up_ports: u64,
    /// Per port: the channel whose flits arrive at this input (we send credits back on it).
    pub in_ch: Vec<u32>,
    /// Per port: the channel this output sends flits on (credits come back on it).
    pub out_ch: Vec<u32>,
    /// Per port: capacity in flits of each VC of the buffer at the far end of the output link.
    pub out_capacity: Vec<u16>,
    /// The output ports' SL-to-VL tables, as the subnet manager wrote them.
    pub sl_to_vl: SlToVl,
}

/// What an output's arbitration sees (see `Switch::requests`).
struct Requests<const V: usize> {
    inputs: u128,
    /// Per input, `V` bits: the VCs whose head may win (input i in bits `V i .. V i + V` of the
    /// whole array, whose [`MAX_PORTS`] inputs fill `V` words).
    vcs: [u64; V],
    unready: bool,
    /// FA: per input, the VCs whose ready head is adaptive and short of room in the adaptive
    /// half of its next VC (same layout as `vcs`): they leave for their escape route.
    escapes: [u64; V],
    /// Whether `escapes` has any bit.
    any_escape: bool,
}

const _: () = assert!(MAX_PORTS == 64);

impl<const V: usize> Requests<V> {
    /// The VCs of input `i` whose head may win.
    #[inline]
    fn vcs_of(&self, i: usize) -> u16 {
        let bit = port_ix(i) * V;
        (self.vcs[bit / 64] >> (bit % 64)) as u16 & (u16::MAX >> (16 - V))
    }

    /// The VCs of input `i` whose adaptive head leaves for its escape route.
    #[inline]
    fn escapes_of(&self, i: usize) -> u16 {
        let bit = port_ix(i) * V;
        (self.escapes[bit / 64] >> (bit % 64)) as u16 & (u16::MAX >> (16 - V))
    }
}

/// The packet an output sends: one flit per cycle from `start` (its head) to its tail.
#[derive(Clone, Copy, Debug)]
struct Tx {
    input: u8,
    slot: u16,
    next_vc: u8,
    len: u16,
    start: u64,
}

impl Tx {
    /// The cycle its tail leaves.
    #[inline]
    fn end(&self) -> u64 {
        tail_cycle(self.start, self.len)
    }

    /// Flits sent by the end of cycle `through`.
    #[inline]
    fn sent(&self, through: u64) -> u16 {
        streamed(self.start, self.len, through)
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct RootReg {
    info: ArnInfo,
    next_refresh: u64,
}

struct InputPort<const V: usize> {
    buf: VoqBuffer<V>,
    arn_out: Deque<ArnInfo, 8>,
    /// Per ARN-table entry: the first cycle this input may send an ARN for it again.
    arn_ok_at: Vec<u64>,
}

/// The fields are laid out in the order written (`repr(C)`): what a grant touches (the packet
/// sending and the next, the input arbiter, and the VC arbiters' pointer registers, a byte each
/// in one cache line) first and together, then the credits.
#[repr(C)]
struct OutputPort<const V: usize> {
    tx: Option<Tx>,
    next: Option<Tx>,
    in_arb: RrArbiter,
    /// Per input: the pointer register (`ptr_q`) of the round-robin arbiter over its VCs, all of
    /// one size (the switch's VCs).
    vc_ptr: [u8; MAX_PORTS],
    /// Per VC of the next buffer.
    credits: OutputCredits<V>,
    detector: CongestionDetector,
    root: Option<RootReg>,
}

/// One switch, its per-VC state sized for `V` VC lanes (see `wire::link::FEW_VCS`).
pub struct Switch<const V: usize> {
    params: SwitchParams,
    wiring: SwitchWiring,
    ports: usize,
    /// One bit per port.
    all_ports: u64,
    vcs: usize,
    lft: LftBanks,
    arn: ArnTable,
    arn_in: Box<ArnTableIn>,
    /// The ARN table's outputs of the cycle (lookup results only for the ports that looked up).
    arn_res: Box<ArnTableOut>,
    arn_cmds: Deque<(ArnInfo, bool), 64>,
    arn_seq: u32,
    /// Per input: the head registered for the routing stage (its slot), one cycle after its
    /// arrival. One array for all inputs, as every head's arrival and routing touch it.
    route_q: [Option<u16>; MAX_PORTS],
    /// Per input: the credit streams its buffer started and stopped this cycle (packets
    /// leaving it), to go back upstream. One array for all inputs, as every packet's departure
    /// writes it.
    freed: [Backward<V>; MAX_PORTS],
    inputs: Vec<InputPort<V>>,
    outputs: Vec<OutputPort<V>>,
    /// What exists only to skip work (activity masks, wake cycles, the detectors' cached
    /// inputs): derived from the registers above, never read as hardware state.
    skip: SkipState,
    rng: SplitMix64,
    stats: SwitchStats,
    /// The last cycle stepped: what the accessors read the state as of.
    now: u64,
    /// The fabric's seed, as given to [`Switch::new`].
    seed: u64,
}

impl<const V: usize> Switch<V> {
    /// A switch with its LFT already programmed.
    pub fn new(params: SwitchParams, wiring: SwitchWiring, lft: LftBanks, seed: u64) -> Self {
        let ports = wiring.in_ch.len();
        assert!((1..=MAX_PORTS).contains(&ports) && ports <= MAX_INPUTS);
        let vcs = params.vcs();
        let () = Lanes::<V>::OK;
        assert!((1..=V).contains(&vcs));
        let inputs = (0..ports)
            .map(|_| InputPort {
                buf: VoqBuffer::new(vcs, ports, params.vc_capacity, params.max_packets),
                arn_out: Deque::new(),
                arn_ok_at: vec![0; params.arn_entries],
            })
            .collect();
        let outputs = (0..ports)
            .map(|p| OutputPort {
                credits: OutputCredits::new(wiring.out_capacity[p]),
                tx: None,
                next: None,
                in_arb: RrArbiter::new(ports),
                vc_ptr: [0; MAX_PORTS],
                detector: CongestionDetector::new(params.detector(ports)),
                root: None,
            })
            .collect();
        Switch {
            arn: ArnTable::new(params.arn_entries, ports, params.arn_ttl),
            arn_in: Box::default(),
            arn_res: Box::default(),
            arn_cmds: Deque::new(),
            arn_seq: 0,
            skip: SkipState::new(ports),
            rng: SplitMix64::new(seed ^ (wiring.id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            stats: SwitchStats::default(),
            ports,
            vcs,
            lft,
            route_q: [None; MAX_PORTS],
            freed: [Backward::default(); MAX_PORTS],
            inputs,
            outputs,
            all_ports: port_mask(ports),
            now: 0,
            seed,
            params,
            wiring,
        }
    }

    fn is_up(&self, port: usize) -> bool {
        self.wiring.up_ports >> port & 1 == 1
    }

    fn base_lid(&self, dlid: u16) -> u16 {
        self.params.base_lid(dlid)
    }

    /// Steps one cycle. `channels` are the fabric's link directions, read only (only those of the
    /// ports that `arriving` marks); what the switch sends in the cycle (flits on its output
    /// links, credits and ARNs back on its input links) goes to `link`. Always inlined into
    /// the fabric's loop over a window (see `SwitchUnit::step`).
    #[inline(always)]
    pub fn step<O: Observer, S: LinkSend<V>>(
        &mut self,
        now: u64,
        channels: &[Channel<V>],
        arriving: Arriving,
        link: &mut S,
        obs: &mut O,
    ) -> Result<(), SwitchFault> {
        let Arriving { flits, back } = arriving;
        if flits == 0 && self.quiet(now) && !self.arns_back(now, channels, back) {
            // A quiet cycle in which nothing but credit records arrives: they change the output
            // credits alone, since the outputs they wake arbitrate from the next cycle on and the
            // detectors they mark stale are evaluated from the next cycle on, so the other phases
            // would keep every register but the timers of the detectors that hold.
            self.hold_detectors(1);
            self.receive_back(now, channels, back, obs)?;
            debug_assert!(
                self.skip.next_wake > now,
                "a credit record woke an output for its own cycle"
            );
            self.arn.age_idle(1);
            self.now = now;
            return Ok(());
        }
        if self.params.routing.uses_arn() {
            self.detect(now, obs);
        }
        self.receive_back(now, channels, back, obs)?;
        self.route(now, obs);
        self.receive_flits(now, channels, flits)?;
        self.transmit(now, link)?;
        self.finish_cycle(now, link, obs);
        self.now = now;
        Ok(())
    }
}
