//! What a switch reports outside its registers: events for directed tests and logs (roots,
//! ARNs, adapted packets), its counters, an output's probe for waveforms, and faults.

use crate::wire::ArnInfo;

/// Something noteworthy inside a switch, for directed tests and logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SwitchEvent {
    /// The detector of `port` declared a congestion root (pseudo-code 1).
    RootDetected {
        /// Output port.
        port: u8,
        /// ARN describing it.
        info: ArnInfo,
    },
    /// The detector of `port` released its root.
    RootReleased {
        /// Output port.
        port: u8,
    },
    /// processARN added an entry to the ARN table.
    EntryAdded {
        /// The entry's fields.
        info: ArnInfo,
        /// Whether it was consumed here.
        consumed: bool,
        /// Alternative output port for consumed entries.
        alt_port: u8,
    },
    /// An ARN arrived on the reverse direction of output `port`.
    ArnReceived {
        /// Output port it arrived on.
        port: u8,
        /// Its fields.
        info: ArnInfo,
    },
    /// An ARN left upstream through input `port`.
    ArnSent {
        /// Input port.
        port: u8,
        /// Its fields.
        info: ArnInfo,
    },
    /// A packet was re-routed (adapted) to `out` instead of `det`.
    Adapted {
        /// Packet id.
        id: u32,
        /// Deterministic port it avoided.
        det: u8,
        /// Port it took.
        out: u8,
    },
}

/// Receives switch events; the unit observer `()` ignores them at no cost.
pub trait Observer {
    /// One event in `cycle` at switch `sw`.
    fn event(&mut self, cycle: u64, sw: u32, ev: SwitchEvent);
}

impl Observer for () {
    #[inline(always)]
    fn event(&mut self, _cycle: u64, _sw: u32, _ev: SwitchEvent) {}
}

impl Observer for Vec<(u64, u32, SwitchEvent)> {
    fn event(&mut self, cycle: u64, sw: u32, ev: SwitchEvent) {
        self.push((cycle, sw, ev));
    }
}

/// Counters of one switch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SwitchStats {
    /// Congestion roots declared.
    pub roots_detected: u64,
    /// ARNs sent upstream.
    pub arns_sent: u64,
    /// ARNs received from downstream.
    pub arns_received: u64,
    /// ARNs consumed here (entry added as consumed).
    pub arns_consumed: u64,
    /// Packets re-routed away from their deterministic port.
    pub packets_adapted: u64,
    /// FA: adaptive packets that left their queue for their escape route, short of room in the
    /// adaptive half of the next VC.
    pub packets_escaped: u64,
    /// Packets an output marked with FECN (InfiniBand congestion control).
    #[serde(default)]
    pub packets_marked: u64,
    /// QCN: congestion notifications the outputs' congestion points made.
    #[serde(default)]
    pub cnms_made: u64,
    /// QCN: congestion notifications that arrived from downstream.
    #[serde(default)]
    pub cnms_received: u64,
    /// QCN: congestion notifications sent upstream (made here or passed on).
    #[serde(default)]
    pub cnms_sent: u64,
    /// QCN: congestion notifications dropped, their port's queue full.
    #[serde(default)]
    pub cnms_dropped: u64,
    /// Snooped AR: congestion notifications the switch kept from their sources, rerouting
    /// their destination around the port they named.
    #[serde(default)]
    pub cnms_absorbed: u64,
    /// Snooped AR: notifications lost to the congestion table, its snoop queue full.
    #[serde(default)]
    pub snoops_dropped: u64,
    /// processARN commands dropped because the command queue was full.
    pub arn_commands_dropped: u64,
    /// Flits sent on output links.
    pub flits_sent: u64,
    /// Packets whose heads left on output links: one per packet and switch it crossed (a
    /// packet still on its way counts the switches it has left).
    pub packets_sent: u64,
}

impl SwitchStats {
    /// Adds another switch's counters to these.
    pub fn accumulate(&mut self, x: &SwitchStats) {
        self.roots_detected += x.roots_detected;
        self.arns_sent += x.arns_sent;
        self.arns_received += x.arns_received;
        self.arns_consumed += x.arns_consumed;
        self.packets_adapted += x.packets_adapted;
        self.packets_escaped += x.packets_escaped;
        self.packets_marked += x.packets_marked;
        self.cnms_made += x.cnms_made;
        self.cnms_received += x.cnms_received;
        self.cnms_sent += x.cnms_sent;
        self.cnms_dropped += x.cnms_dropped;
        self.cnms_absorbed += x.cnms_absorbed;
        self.snoops_dropped += x.snoops_dropped;
        self.arn_commands_dropped += x.arn_commands_dropped;
        self.flits_sent += x.flits_sent;
        self.packets_sent += x.packets_sent;
    }
}

/// The state of one output port, as waveforms show it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputProbe {
    /// A packet is being sent.
    pub busy: bool,
    /// Id of the packet being sent (0 when idle).
    pub packet: u32,
    /// Its header, 0 when idle: source end node, destination LID, length in flits, the VC it
    /// takes on the link, and the AFI adapted bit.
    pub src: u16,
    /// Destination LID of the packet being sent.
    pub dlid: u16,
    /// Length in flits of the packet being sent.
    pub len: u16,
    /// VC of the next buffer the packet being sent goes into.
    pub vc: u8,
    /// The packet being sent has the AFI adapted bit.
    pub adapted: bool,
    /// Congestion detector state (0 idle, 1 wait, 2 root).
    pub det_state: u8,
    /// VOQs in the detector's crossed set.
    pub crossed: u8,
}

/// A breach of an invariant inside a switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchFault {
    /// Port concerned.
    pub port: u8,
    /// What went wrong.
    pub what: String,
}
