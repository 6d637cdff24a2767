//! The cycle engine: `switch.sv`, module for module, one clock cycle per step.
//!
//! [`CycleSwitch`] is the switch a hardware designer would draw: per port an input port
//! controller ([`input_port_ctrl`]) with its routing stage (`routing_stage.rs`, the choice of the
//! routing modes being [`crate::switch::routing_stage`]) and an output port ([`output_port`])
//! with its congestion detector (`detection.rs`), one ARN table and a queue of processARN
//! commands shared by all ports (`step.rs`), all built from the blocks of [`crate::blocks`]. Its
//! files are named after the modules of `hdl-ref/`. Its ports speak the link protocol of
//! [`port`]: a flit per cycle each way, per-VC credit returns and ARN control flits on the
//! reverse directions.
//!
//! Every step is one clock cycle in two halves, as in the HDL:
//! - *evaluate* reads only the registers as they stand at the start of the cycle and this cycle's
//!   port inputs, and decides every register write and every port output;
//! - *commit* is the clock edge: the writes are applied, the blocks commit.
//!
//! What is decided in a cycle `t`, in the order the decisions feed each other:
//! 1. each output's congestion detector evaluates on the VOQ occupancies, heads and credits of
//!    the start of `t`; a declared root files a processARN command (pseudo-code 1), a standing
//!    root refreshes its command every `arn_gap` cycles;
//! 2. ARNs arriving on the reverse direction of the output links file processARN commands
//!    (their `port` field is the port they arrived on);
//! 3. the oldest processARN command, this cycle's included, is applied to the ARN table
//!    (pseudo-code 2; a consumed entry gets the alternative port with the most credits,
//!    pseudo-code 3); each input's routing stage routes the head that arrived in `t-1`, its LFT
//!    read being ready now, looking the ARN table up (pseudo-code 4); a routed packet joins its
//!    VOQ at the clock edge and may request its output from `t+1`;
//! 4. each input takes the flit on its link; a head takes a descriptor and issues its LFT read;
//! 5. each output sends the next flit of its packet and, when idle or sending a tail, arbitrates
//!    among the (input, VC) heads whose packet fits whole in the credits of the start of `t`, less
//!    the one spent now (virtual cut-through): the winner's head leaves in `t+1`;
//! 6. each input sends upstream the credits of the flits that left it and the oldest waiting ARN.
//!
//! The event engine (`src/fabric/event.rs`) computes the same outputs in the same cycles, working
//! only where something happens; the lockstep tests hold the two (and the HDL) equal.

pub mod compare;
mod detection;
pub mod flow;
pub mod input_port_ctrl;
pub mod link_adapter;
pub mod output_port;
pub mod port;
mod qcn;
mod routing_stage;
mod step;

use crate::blocks::arn_table::{ArnTableIn, ArnTableOut};
use crate::blocks::congestion_detector::{CongestionDetectorIn, MAX_INPUTS};
use crate::blocks::rng::SplitMix64;
use crate::blocks::{ArnTable, Block, LftBanks};
use crate::switch::{MAX_PORTS, OutputProbe, RoutingMode, SwitchParams, SwitchStats, SwitchWiring};
use crate::wire::ArnInfo;
use heapless::Deque;
use input_port_ctrl::{ArrivalWrite, InputPortCtrl, RouteWrite};
use output_port::{OutputPort, Root, Tx};
pub use port::{LinkFlit, MAX_LINK_VCS, PortIn, PortOut};
pub use qcn::{CNM_FIFO_DEPTH, SNOOP_FIFO_DEPTH};

/// Depth of the queue of processARN commands.
pub const ARN_CMD_DEPTH: usize = 64;

/// What a root register does at the clock edge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum RootWrite {
    /// Keep it, its refresh timer counting down.
    #[default]
    Keep,
    /// Load it.
    Set(Root),
    /// Clear it.
    Clear,
}

/// The writes of one cycle, decided by *evaluate* and applied at the clock edge (sized at build,
/// so a cycle allocates nothing).
#[derive(serde::Serialize, serde::Deserialize)]
struct Writes {
    det_in: Box<CongestionDetectorIn>,
    roots: Vec<RootWrite>,
    new_cmds: heapless::Vec<(ArnInfo, bool), { 2 * MAX_PORTS }>,
    cmd_taken: bool,
    arn_seq: u32,
    routes: Vec<Option<RouteWrite>>,
    arrivals: Vec<Option<ArrivalWrite>>,
    arn_push: Vec<Option<(ArnInfo, u8)>>,
    arn_pop: Vec<bool>,
    /// Per output: the packet a flit left from, and whether it was the tail.
    sends: Vec<Option<(Tx, bool)>>,
    /// Per output: the packet that won it (input, VC of the input, its register, and FECN
    /// marking's counter after it).
    grants: Vec<Option<(u8, u8, Tx, u16)>>,
    /// FA, per output and input (`o * ports + i`): the VCs whose adaptive head leaves for its
    /// escape route.
    escapes: Vec<u16>,
    /// Per input, the VCs whose head requests the output arbitrating (scratch of `transmit`).
    requests: Vec<u128>,
    /// The notification path's (QCN).
    cnm: qcn::CnmWrites,
    /// Flow routing: per input, the command its routed head gives its route cache; per output,
    /// the change of its flow count by the heads routed so far in the cycle.
    flow_cmds: Vec<crate::blocks::route_cache::RouteCacheCmd>,
    flow_delta: Vec<i32>,
}

/// Every register of a switch, the programmed LFT and the cycle count aside: what a clock edge
/// may change. Two equal sets step alike (the cycle count matters only to FCFS stamps, compared
/// with one another, and none is taken while nothing joins a FIFO), so an idle cycle that leaves
/// them as they were leaves them so for good.
#[derive(Clone, PartialEq, Eq)]
pub struct Registers {
    inputs: Vec<InputPortCtrl>,
    outputs: Vec<OutputPort>,
    arn: ArnTable,
    cmds: Deque<(ArnInfo, bool), ARN_CMD_DEPTH>,
    arn_seq: u32,
    rng: SplitMix64,
    cnm: qcn::CnmUnit,
    flow: Option<flow::FlowUnit>,
}

/// One switch, stepped one clock cycle at a time.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct CycleSwitch {
    params: SwitchParams,
    wiring: SwitchWiring,
    ports: usize,
    vcs: usize,
    inputs: Vec<InputPortCtrl>,
    outputs: Vec<OutputPort>,
    /// The LFT's read port of the ARN unit (pseudo-code 3's alternatives).
    lft: LftBanks,
    arn: ArnTable,
    arn_in: Box<ArnTableIn>,
    arn_out: Box<ArnTableOut>,
    /// `cmd_fifo_q`: processARN commands waiting (the ARN, and whether its packet was adapted).
    cmds: Deque<(ArnInfo, bool), ARN_CMD_DEPTH>,
    /// `arn_seq_q`: the low 20 bits of the next ARNid this switch makes.
    arn_seq: u32,
    /// `lfsr_q` of oblivious routing.
    rng: SplitMix64,
    /// QCN's congestion points and notification path.
    cnm: qcn::CnmUnit,
    /// Flow routing's route caches and flow counts (under `RoutingMode::Flow` only).
    flow: Option<flow::FlowUnit>,
    stats: SwitchStats,
    /// The cycle being stepped (for events and faults).
    cycle: u64,
    /// The seed it was built with.
    seed: u64,
    w: Writes,
}

impl CycleSwitch {
    /// A switch in its reset state, with `lft` programmed, seeded as the event engine seeds the
    /// same switch ([`CycleSwitch::route_rng_of`]).
    pub fn new(params: SwitchParams, wiring: SwitchWiring, lft: LftBanks, seed: u64) -> Self {
        let ports = wiring.out_capacity.len();
        let vcs = params.vcs();
        assert!((1..=MAX_PORTS).contains(&ports) && ports <= MAX_INPUTS);
        assert!((1..=MAX_LINK_VCS).contains(&vcs));
        let inputs = (0..ports)
            .map(|_| {
                InputPortCtrl::new(
                    vcs,
                    ports,
                    params.vc_capacity,
                    params.max_packets,
                    lft.clone(),
                    params.arn_entries,
                )
            })
            .collect();
        let outputs = (0..ports)
            .map(|p| OutputPort::new(ports, vcs, wiring.out_capacity[p], params.detector(ports)))
            .collect();
        CycleSwitch {
            arn: ArnTable::new(params.arn_entries, ports, params.arn_ttl),
            arn_in: Box::default(),
            arn_out: Box::default(),
            cmds: Deque::new(),
            arn_seq: 0,
            rng: Self::route_rng_of(seed, wiring.id),
            stats: SwitchStats::default(),
            cycle: 0,
            seed,
            w: Writes {
                det_in: Box::default(),
                roots: vec![RootWrite::Keep; ports],
                new_cmds: heapless::Vec::new(),
                cmd_taken: false,
                arn_seq: 0,
                routes: vec![None; ports],
                arrivals: vec![None; ports],
                arn_push: vec![None; ports],
                arn_pop: vec![false; ports],
                sends: vec![None; ports],
                grants: vec![None; ports],
                escapes: vec![0; ports * ports],
                requests: vec![0; ports],
                cnm: qcn::CnmWrites::new(ports),
                flow_cmds: vec![Default::default(); ports],
                flow_delta: vec![0; ports],
            },
            cnm: qcn::CnmUnit::new(ports, &params),
            flow: (params.routing == RoutingMode::Flow)
                .then(|| flow::FlowUnit::new(ports, params.route_cache_entries)),
            inputs,
            outputs,
            lft,
            ports,
            vcs,
            params,
            wiring,
        }
    }

    /// Sets the cycle the next step is (a switch built to join a run under way, or a replay).
    pub fn set_cycle(&mut self, cycle: u64) {
        self.cycle = cycle;
    }

    /// A copy of its registers (the statistics and the writes of a cycle are not registers of
    /// the hardware; the cycle count, `switch.sv`'s `cyc_q` up to a constant, is left out as
    /// [`Registers`] says).
    pub fn registers(&self) -> Registers {
        Registers {
            inputs: self.inputs.clone(),
            outputs: self.outputs.clone(),
            arn: self.arn.clone(),
            cmds: self.cmds.clone(),
            arn_seq: self.arn_seq,
            rng: self.rng.clone(),
            cnm: self.cnm.clone(),
            flow: self.flow.clone(),
        }
    }

    /// Flow routing's route caches and flow counts, under `RoutingMode::Flow`.
    pub fn flow_unit(&self) -> Option<&flow::FlowUnit> {
        self.flow.as_ref()
    }

    /// The cycle the next step is.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// The seed it was built with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The random stream of Oblivious routing's draws of switch `id` of a fabric seeded with
    /// `seed`, in its reset state.
    pub fn route_rng_of(seed: u64, id: u32) -> SplitMix64 {
        SplitMix64::new(seed ^ (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    /// The random stream of Oblivious routing's draws, as it stands.
    pub fn route_rng(&self) -> &SplitMix64 {
        &self.rng
    }

    /// The LFT as programmed.
    pub fn lft(&self) -> &LftBanks {
        &self.lft
    }

    /// The flits the outputs sent in the last cycle stepped: per output, the packet (its
    /// register as of that cycle: `sent` is the flit's index) and whether the flit was its tail.
    pub fn last_sends(&self) -> impl Iterator<Item = (usize, Tx, bool)> + '_ {
        self.w
            .sends
            .iter()
            .enumerate()
            .filter_map(|(o, s)| s.map(|(tx, tail)| (o, tx, tail)))
    }

    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.ports
    }

    /// VCs per port.
    pub fn vcs(&self) -> usize {
        self.vcs
    }

    /// Index in the fabric.
    pub fn id(&self) -> u32 {
        self.wiring.id
    }

    /// Cabling and position.
    pub fn wiring(&self) -> &SwitchWiring {
        &self.wiring
    }

    /// Parameters.
    pub fn params(&self) -> &SwitchParams {
        &self.params
    }

    /// Event counters.
    pub fn stats(&self) -> SwitchStats {
        self.stats
    }

    /// An input port's controller.
    pub fn input(&self, port: usize) -> &InputPortCtrl {
        &self.inputs[port]
    }

    /// An output port.
    pub fn output(&self, port: usize) -> &OutputPort {
        &self.outputs[port]
    }

    /// The ARN table.
    pub fn arn_table(&self) -> &ArnTable {
        &self.arn
    }

    /// Flits stored in `vc` of input `port`.
    pub fn buffered(&self, port: usize, vc: usize) -> u16 {
        self.inputs[port].occupancy(vc)
    }

    /// Flits of input `port`'s VOQ for `out`.
    pub fn voq_occupancy(&self, port: usize, out: usize) -> u16 {
        self.inputs[port].voq_occupancy(out)
    }

    /// Free credits of output `port`'s far buffer on `vc`.
    pub fn credits(&self, port: usize, vc: usize) -> u16 {
        self.outputs[port].credits(vc)
    }

    /// Flits sent by output `port` on `vc`.
    pub fn flits_sent(&self, port: usize, vc: usize) -> u64 {
        self.outputs[port].flits_sent(vc)
    }

    /// Flits received by input `port` on `vc`.
    pub fn flits_received(&self, port: usize, vc: usize) -> u64 {
        self.inputs[port].received(vc)
    }

    /// Credits of input `port`'s `vc` for flits of packets that have started leaving but not
    /// left yet.
    pub fn credits_announced(&self, port: usize, vc: usize) -> u64 {
        self.outputs
            .iter()
            .filter_map(|o| o.tx)
            .filter(|t| t.sent > 0 && t.input as usize == port && t.in_vc as usize == vc)
            .map(|t| (t.len - t.sent) as u64)
            .sum()
    }

    /// Whether output `port` is a congestion root.
    pub fn is_root(&self, port: usize) -> bool {
        self.outputs[port].root.is_some()
    }

    /// Whether nothing is held: no packet, no ARN or CNM waiting, no packet being sent.
    pub fn is_idle(&self) -> bool {
        self.inputs
            .iter()
            .all(|i| i.packets() == 0 && i.arns_waiting() == 0)
            && self.outputs.iter().all(|o| o.tx.is_none())
            && self.cnm.waiting() == 0
    }

    /// What an output's waveform shows.
    pub fn output_probe(&self, port: usize) -> OutputProbe {
        let o = &self.outputs[port];
        let r = o.detector.regs();
        let (p, vc) = o.tx.map_or_else(Default::default, |t| {
            (self.inputs[t.input as usize].slot(t.slot).pkt, t.next_vc)
        });
        OutputProbe {
            busy: o.tx.is_some(),
            packet: p.id,
            src: p.src,
            dlid: p.dlid,
            len: p.len,
            vc,
            adapted: p.adapted(),
            det_state: r.state as u8,
            crossed: r.over.count_ones() as u8,
        }
    }

    fn is_up(&self, port: usize) -> bool {
        self.wiring.up_ports >> port & 1 == 1
    }
}

#[cfg(test)]
mod arbitration_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod timing_tests;
