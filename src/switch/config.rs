//! Parameters of a switch: radix, VCs, buffers, routing mode, queuing scheme, ARN and detector
//! settings. All in cycles and flits.

use crate::blocks::congestion_detector::DetectorConfig;
use crate::wire::Packet;

/// Routing algorithm of a run (seed 000, section 4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoutingMode {
    /// Deterministic D-mod-K: always option 0 of the LFT.
    DModK,
    /// A random minimal option, whatever the traffic.
    Oblivious,
    /// Threshold adaptive: when the VOQ toward the deterministic port is above the threshold,
    /// the minimal option with the most credits downstream.
    AdaptiveTh,
    /// Adaptive-Th with AFI: adapted packets are marked and isolated in the AFC.
    AdaptiveThAfi,
    /// ARN: re-route only the flows named by consumed ARN-table entries.
    Arn,
    /// ARN + AFI (the proposal of seed 000).
    ArnAfi,
}

impl RoutingMode {
    /// Every mode, in the paper's order.
    pub const ALL: [RoutingMode; 6] = [
        RoutingMode::DModK,
        RoutingMode::Oblivious,
        RoutingMode::AdaptiveTh,
        RoutingMode::AdaptiveThAfi,
        RoutingMode::Arn,
        RoutingMode::ArnAfi,
    ];

    /// Whether adapted packets are marked and moved to the AFC.
    pub fn afi(self) -> bool {
        matches!(self, RoutingMode::AdaptiveThAfi | RoutingMode::ArnAfi)
    }

    /// Whether the congestion detectors, the ARN table and ARNs are active.
    pub fn uses_arn(self) -> bool {
        matches!(self, RoutingMode::Arn | RoutingMode::ArnAfi)
    }

    /// Whether sources ask for every routing option (DLID LSB set).
    pub fn multipath(self) -> bool {
        self != RoutingMode::DModK
    }

    /// Stable lower-case name (`dmodk`, `oblivious`, `adaptive_th`, `adaptive_th_afi`, `arn`,
    /// `arn_afi`).
    pub fn name(self) -> &'static str {
        match self {
            RoutingMode::DModK => "dmodk",
            RoutingMode::Oblivious => "oblivious",
            RoutingMode::AdaptiveTh => "adaptive_th",
            RoutingMode::AdaptiveThAfi => "adaptive_th_afi",
            RoutingMode::Arn => "arn",
            RoutingMode::ArnAfi => "arn_afi",
        }
    }
}

/// Static queuing scheme: the VC a non-adapted packet uses (the SL-to-VL mapping).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueuingScheme {
    /// One regular VC: every non-adapted packet uses VC 0.
    OneQ,
}

impl QueuingScheme {
    /// Number of regular VCs the scheme needs.
    pub fn regular_vcs(self) -> usize {
        match self {
            QueuingScheme::OneQ => 1,
        }
    }

    /// The regular VC of a packet.
    pub fn vc_of(self, _pkt: &Packet) -> u8 {
        match self {
            QueuingScheme::OneQ => 0,
        }
    }
}

/// Default ARN-table entry lifetime: 1 ms at 5.12 ns per cycle. Long against the ARN gap (about
/// a thousand refreshes per lifetime, so the entries of a live root never lapse), short against
/// the paper's 90 ms hot spot (routes return to deterministic within 1 ms after it ends).
pub const DEFAULT_ARN_TTL: u32 = 195_313;

/// Default least gap between two ARNs of one table entry through one input port, and the
/// period at which a root refreshes its own entry: 1 us (195 cycles). An ARN is one flit, so an
/// entry costs at most 0.5 % of the reverse link, and upstream tables hear about a root within
/// 1 us of the first matching packet.
pub const DEFAULT_ARN_GAP: u32 = 195;

/// Parameters shared by every switch of a fabric.
#[derive(Clone, Debug)]
pub struct SwitchParams {
    /// Routing mode.
    pub routing: RoutingMode,
    /// Queuing scheme for non-adapted packets.
    pub queuing: QueuingScheme,
    /// Flits per VC in every input buffer (the credits of each VC upstream).
    pub vc_capacity: u16,
    /// Packet descriptors an input port can hold at once.
    pub max_packets: usize,
    /// LMC of the LID assignment (routing options per destination: 2^LMC).
    pub lmc: u32,
    /// ARN table entries.
    pub arn_entries: usize,
    /// Cycles an ARN-table entry lives after its last refresh.
    pub arn_ttl: u32,
    /// Least number of cycles between two ARNs sent upstream by one table entry through one
    /// input port; also the period at which a root refreshes its own entry.
    pub arn_gap: u32,
    /// Congestion detector thresholds (flits, credits, cycles). `inputs` is set per switch.
    pub hcdth: u16,
    /// Low congestion detection threshold (flits).
    pub lcdth: u16,
    /// Free-credits threshold (credits).
    pub fcth: u16,
    /// Congestion root timer (cycles).
    pub crt: u32,
    /// Adaptive-Th: VOQ occupancy (flits) above which a packet is re-routed.
    pub adaptive_threshold: u16,
}

impl SwitchParams {
    /// Number of VCs per port: the scheme's regular VCs, plus the AFC when AFI is on.
    pub fn vcs(&self) -> usize {
        self.queuing.regular_vcs() + self.routing.afi() as usize
    }

    /// The adapted-flow channel (the last VC), when AFI is on.
    pub fn afc(&self) -> Option<u8> {
        self.routing.afi().then(|| (self.vcs() - 1) as u8)
    }

    /// The VC a packet uses in the next buffer: the AFC when adapted under AFI, otherwise the
    /// queuing scheme's VC (the SL-to-VL table at the output port, seed 000 section 3.5).
    pub fn next_vc(&self, pkt: &Packet) -> u8 {
        match self.afc() {
            Some(afc) if pkt.adapted() => afc,
            _ => self.queuing.vc_of(pkt),
        }
    }

    /// The detector configuration of a switch with `inputs` ports.
    pub fn detector(&self, inputs: usize) -> DetectorConfig {
        DetectorConfig::new(inputs, self.hcdth, self.lcdth, self.fcth, self.crt.max(1))
    }

    /// Parameters with the paper's ratios for a VC buffer of `vc_capacity` flits: HCDTh 81 %,
    /// LCDTh 63 % of the buffer, FCTh 78 % of the downstream VC, Adaptive-Th at 75 %.
    pub fn with_paper_ratios(routing: RoutingMode, vc_capacity: u16, crt: u32) -> Self {
        let pct = |p: u32| (p * vc_capacity as u32 / 100) as u16;
        SwitchParams {
            routing,
            queuing: QueuingScheme::OneQ,
            vc_capacity,
            max_packets: vc_capacity as usize,
            lmc: 0,
            arn_entries: 16,
            arn_ttl: DEFAULT_ARN_TTL,
            arn_gap: DEFAULT_ARN_GAP,
            hcdth: pct(81),
            lcdth: pct(63),
            fcth: pct(78),
            crt,
            adaptive_threshold: pct(75),
        }
    }
}
