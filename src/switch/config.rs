//! Parameters of a switch: radix, VCs, buffers, routing mode, queuing scheme, ARN and detector
//! settings. All in cycles and flits.

use crate::blocks::congestion_detector::DetectorConfig;
use crate::wire::Packet;

/// Routing algorithm of a run (Rocher-Gonzalez et al., section 4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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
    /// ARN + AFI (the proposal of Rocher-Gonzalez et al.).
    ArnAfi,
    /// Fully adaptive with escape queues (Martínez et al., section 4.4): LFT options 1.. are
    /// adaptive, taken only while the adaptive half of the next VC has room for the packet;
    /// option 0 is the escape route (a deadlock-free routing), always allowed.
    Fa,
    /// Deterministic S-mod-K on fat trees: a hop toward the roots takes the up port the
    /// packet's source selects, up port `(source / smodk_div) mod (up ports)` in ascending order
    /// (`smodk_div` the product of the up-port counts of the levels below, which the subnet
    /// manager programs with the LFT; D-mod-K uses the destination the same way), a hop toward
    /// the leaves option 0 (the one way down). The routing stage reads the source from the
    /// header (`docs/routing_options.md` says what an InfiniBand fabric has instead).
    SModK,
    /// Adaptive routing on snooped congestion notifications (Gusat et al.): a head leaves its
    /// deterministic port for the first uncongested option while the switch's congestion table
    /// marks the port congested for its destination (`crate::switch::snoop`). Needs QCN's
    /// notifications.
    SnoopAr,
    /// Flow routing (Birk and Zdornov, section 4): a flow's setup packet chooses, at every
    /// switch, the option of its destination with the fewest flows through it (the port
    /// selection unit, the default port on a tie) and stores an alternate in the input's route
    /// cache; the flow's packets take their cached port, else the default port (option 0); its
    /// teardown packet erases the entries (`crate::switch::flow`).
    Flow,
}

impl RoutingMode {
    /// Every mode: the six of Rocher-Gonzalez et al. in their order, then FA, S-mod-K, snooped
    /// AR and flow routing.
    pub const ALL: [RoutingMode; 10] = [
        RoutingMode::DModK,
        RoutingMode::Oblivious,
        RoutingMode::AdaptiveTh,
        RoutingMode::AdaptiveThAfi,
        RoutingMode::Arn,
        RoutingMode::ArnAfi,
        RoutingMode::Fa,
        RoutingMode::SModK,
        RoutingMode::SnoopAr,
        RoutingMode::Flow,
    ];

    /// Whether adapted packets are marked and moved to the AFC.
    pub fn afi(self) -> bool {
        matches!(self, RoutingMode::AdaptiveThAfi | RoutingMode::ArnAfi)
    }

    /// Whether the congestion detectors, the ARN table and ARNs are active.
    pub fn uses_arn(self) -> bool {
        matches!(self, RoutingMode::Arn | RoutingMode::ArnAfi)
    }

    /// Whether sources ask for every routing option (DLID LSB set). Not under flow routing,
    /// whose flows keep one DLID (part of their GCID) and whose setups read the alternates
    /// themselves.
    pub fn multipath(self) -> bool {
        !matches!(
            self,
            RoutingMode::DModK | RoutingMode::SModK | RoutingMode::Flow
        )
    }

    /// Whether packets wait in the adaptive or the escape half of a VC (FA).
    pub fn escape_queues(self) -> bool {
        self == RoutingMode::Fa
    }

    /// Stable lower-case name (`dmodk`, `oblivious`, `adaptive_th`, `adaptive_th_afi`, `arn`,
    /// `arn_afi`, `fa`, `smodk`, `snoop_ar`, `flow`).
    pub fn name(self) -> &'static str {
        match self {
            RoutingMode::DModK => "dmodk",
            RoutingMode::Oblivious => "oblivious",
            RoutingMode::AdaptiveTh => "adaptive_th",
            RoutingMode::AdaptiveThAfi => "adaptive_th_afi",
            RoutingMode::Arn => "arn",
            RoutingMode::ArnAfi => "arn_afi",
            RoutingMode::Fa => "fa",
            RoutingMode::SModK => "smodk",
            RoutingMode::SnoopAr => "snoop_ar",
            RoutingMode::Flow => "flow",
        }
    }

    /// The mode of that name, if any.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Static queuing scheme: the VC a non-adapted packet uses (the SL-to-VL mapping), from its
/// source and destination end nodes (section 2.3 of Rocher-Gonzalez et al.; mapping written in docs/queuing.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum QueuingScheme {
    /// One regular VC: every non-adapted packet uses VC 0.
    OneQ,
    /// Destination-based buffer management: VC = destination mod `vcs`.
    Dbbm {
        /// Regular VCs.
        vcs: u8,
    },
    /// vFtree: VC = destination leaf switch mod `vcs`, so packets to consecutive leaf switches
    /// are shuffled over the queues.
    VFtree {
        /// Regular VCs.
        vcs: u8,
        /// End nodes per leaf switch.
        nodes_per_leaf: u32,
    },
    /// Flow2SL: `vcs` groups of consecutive destinations; VC = group of the destination.
    Flow2Sl {
        /// Regular VCs.
        vcs: u8,
        /// End nodes in the fabric.
        nodes: u32,
    },
    /// The routing engine's VLs: to keep its routes deadlock-free the subnet manager layers them
    /// over `vcs` VLs, by an SL per path (source switch, destination: D3R, LASH, DFSSSP) that the
    /// HCAs hold (`fabric::subnet_manager::path_sl`), or by the switches' SL-to-VL tables
    /// (`dfly_vl_hops`, every SL 0); [`QueuingScheme::vc_for`] cannot tell a path's SL.
    PathSl {
        /// VLs the paths are layered over.
        vcs: u8,
    },
}

impl QueuingScheme {
    /// Number of regular VCs the scheme needs.
    pub fn regular_vcs(self) -> usize {
        match self {
            QueuingScheme::OneQ => 1,
            QueuingScheme::Dbbm { vcs }
            | QueuingScheme::VFtree { vcs, .. }
            | QueuingScheme::Flow2Sl { vcs, .. }
            | QueuingScheme::PathSl { vcs } => vcs.max(1) as usize,
        }
    }

    /// The regular VC of a packet from end node `src` to end node `dst` (0 under
    /// [`QueuingScheme::PathSl`], whose SLs only the subnet manager's table holds).
    pub fn vc_for(self, _src: u32, dst: u32) -> u8 {
        match self {
            QueuingScheme::OneQ | QueuingScheme::PathSl { .. } => 0,
            QueuingScheme::Dbbm { vcs } => (dst % vcs.max(1) as u32) as u8,
            QueuingScheme::VFtree {
                vcs,
                nodes_per_leaf,
            } => ((dst / nodes_per_leaf.max(1)) % vcs.max(1) as u32) as u8,
            QueuingScheme::Flow2Sl { vcs, nodes } => {
                let v = vcs.max(1) as u64;
                ((dst as u64 * v) / nodes.max(1) as u64).min(v - 1) as u8
            }
        }
    }

    /// Stable lower-case name (`1q`, `dbbm`, `vftree`, `flow2sl`, `path_sl`).
    pub fn name(self) -> &'static str {
        match self {
            QueuingScheme::OneQ => "1q",
            QueuingScheme::PathSl { .. } => "path_sl",
            QueuingScheme::Dbbm { .. } => "dbbm",
            QueuingScheme::VFtree { .. } => "vftree",
            QueuingScheme::Flow2Sl { .. } => "flow2sl",
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

/// How an output port chooses among the (input, VC) heads that request it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum OutputArbitration {
    /// Two-level round robin: the input-level arbiter picks the input, that input's VC-level
    /// arbiter its VC (Rocher-Gonzalez et al., section 2.2).
    #[default]
    RoundRobin,
    /// First come, first served: only the heads that joined their VOQ FIFO earliest (the
    /// 32-bit cycle stamp each packet takes on joining, compared within a 2^31-cycle window)
    /// request; the two round-robin arbiters choose among those that joined in the same cycle
    /// (Birk and Zdornov's baseline, "NC", section 7).
    Fcfs,
}

impl OutputArbitration {
    /// Both, in the order of `cfg_t.fcfs` (0, 1).
    pub const ALL: [Self; 2] = [OutputArbitration::RoundRobin, OutputArbitration::Fcfs];

    /// Stable lower-case name (`round_robin`, `fcfs`).
    pub fn name(self) -> &'static str {
        match self {
            OutputArbitration::RoundRobin => "round_robin",
            OutputArbitration::Fcfs => "fcfs",
        }
    }

    /// The arbitration of that name, if any.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Whether the VOQ stamp `a` is older than `b`: 32-bit cycle stamps compared as serial
/// numbers, so that the order holds across the counter's wrap while no two requesting heads
/// joined their FIFOs 2^31 cycles or more apart.
#[inline]
pub fn stamp_older(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// FCFS's filter of an output's requests, in both engines: of the inputs in `inputs`, each
/// requesting with the VCs of `vcs[i]`, only the requests whose head has the oldest stamp
/// (`stamp(i, v)`, looked at in input, then VC order) stand; returns the inputs left.
pub fn keep_oldest<M>(inputs: u128, vcs: &mut [M], stamp: impl Fn(usize, usize) -> u32) -> u128
where
    M: Copy + Into<u128> + TryFrom<u128>,
{
    let each = |mut m: u128| {
        std::iter::from_fn(move || {
            (m != 0).then(|| {
                let v = m.trailing_zeros() as usize;
                m &= m - 1;
                v
            })
        })
    };
    let mut oldest: Option<u32> = None;
    for i in each(inputs) {
        for v in each(vcs[i].into()) {
            let t = stamp(i, v);
            if oldest.is_none_or(|b| stamp_older(t, b)) {
                oldest = Some(t);
            }
        }
    }
    let Some(t) = oldest else { return inputs };
    let mut left = inputs;
    for i in each(inputs) {
        let keep = each(vcs[i].into())
            .filter(|&v| stamp(i, v) == t)
            .fold(0u128, |k, v| k | 1 << v);
        vcs[i] = M::try_from(keep).unwrap_or_else(|_| unreachable!("a subset of the VCs"));
        if keep == 0 {
            left &= !(1 << i);
        }
    }
    left
}

/// Descriptor slots an input port needs when no packet is shorter than `min_packet` flits: every
/// VC full of the shortest packets, plus one packet per output still leaving (its slot is held
/// until its tail leaves, while its freed credits already admit new packets) and one arriving.
pub fn packet_slots(vcs: usize, vc_capacity: u16, min_packet: u16) -> usize {
    vcs * (vc_capacity as usize).div_ceil(min_packet.max(1) as usize) + super::MAX_PORTS + 1
}

/// Parameters shared by every switch of a fabric.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SwitchParams {
    /// Routing mode.
    pub routing: RoutingMode,
    /// Queuing scheme for non-adapted packets.
    pub queuing: QueuingScheme,
    /// Flits per VC in every input buffer (the credits of each VC upstream).
    pub vc_capacity: u16,
    /// Packet descriptors an input port can hold at once (see [`packet_slots`]).
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
    /// An adapted packet that matches a non-consumed entry sends the ARN upstream like a regular
    /// one (its original VC names the entry), so the entries along an isolated congestion tree
    /// live as long as its root holds. Off: adapted packets never look up (pseudo-code 4).
    pub adapted_refresh: bool,
    /// How each output chooses among its requests.
    pub arbitration: OutputArbitration,
    /// InfiniBand congestion control's FECN marking at the outputs (off by default).
    #[serde(default)]
    pub fecn: crate::blocks::fecn_marker::FecnMarking,
    /// IEEE 802.1Qau's congestion points at the outputs (off by default).
    #[serde(default)]
    pub qcn: crate::blocks::congestion_point::QcnPoint,
    /// Snooped AR's congestion table (off unless `routing = "snoop_ar"`).
    #[serde(default)]
    pub snoop: SnoopTable,
    /// Flow routing: entries of each input's route cache (1 to 64).
    #[serde(default = "default_route_cache_entries")]
    pub route_cache_entries: usize,
}

/// Route-cache entries per input when a scenario does not say (`switch.route_cache_entries`).
pub const DEFAULT_ROUTE_CACHE_ENTRIES: usize = 16;

fn default_route_cache_entries() -> usize {
    DEFAULT_ROUTE_CACHE_ENTRIES
}

/// The size and timer of a switch's congestion table (snooped AR).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct SnoopTable {
    /// Entries of the CAM; 0: no table.
    pub entries: u8,
    /// Cycles an entry stays congested after its last notification.
    pub ttl: u32,
}

impl SnoopTable {
    /// Whether the switch has a congestion table.
    #[inline]
    pub fn on(&self) -> bool {
        self.entries != 0
    }
}

impl SwitchParams {
    /// Number of VCs per port: the scheme's regular VCs, plus the AFC when AFI is on.
    pub fn vcs(&self) -> usize {
        self.queuing.regular_vcs() + self.routing.afi() as usize
    }

    /// The base LID of `dlid`: its low LMC bits cleared (the destination whatever the path).
    pub fn base_lid(&self, dlid: u16) -> u16 {
        dlid >> self.lmc << self.lmc
    }

    /// The adapted-flow channel (the last VC), when AFI is on.
    pub fn afc(&self) -> Option<u8> {
        self.routing.afi().then(|| (self.vcs() - 1) as u8)
    }

    /// The VC a packet uses in the next buffer: the AFC when adapted under AFI, otherwise
    /// `sl_vl`, the VL the output port's SL-to-VL table gives its service level and input port
    /// ([`super::SlToVl`]; VL = SL at reset). The HCAs set the SL by the queuing scheme, their SL
    /// policy ([`QueuingScheme::vc_for`]), or by the routing engine's path SL (section 3.5 of
    /// Rocher-Gonzalez et al.).
    pub fn next_vc(&self, pkt: &Packet, sl_vl: u8) -> u8 {
        match self.afc() {
            Some(afc) if pkt.adapted() => afc,
            _ => sl_vl,
        }
    }

    /// FA: the credits of a downstream VC of `capacity` flits kept for its escape half, half
    /// the VC (Martínez et al.'s equal split), at least one. A packet takes an adaptive option only when the
    /// next VC has its length and these credits free; the escape option needs its length only.
    pub fn escape_credits(&self, capacity: u16) -> u16 {
        if self.routing.escape_queues() {
            (capacity / 2).max(1)
        } else {
            0
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
        let mut p = SwitchParams {
            routing,
            queuing: QueuingScheme::OneQ,
            vc_capacity,
            max_packets: 0,
            lmc: 0,
            arn_entries: 16,
            arn_ttl: DEFAULT_ARN_TTL,
            arn_gap: DEFAULT_ARN_GAP,
            hcdth: pct(81),
            lcdth: pct(63),
            fcth: pct(78),
            crt,
            adaptive_threshold: pct(75),
            adapted_refresh: true,
            arbitration: OutputArbitration::RoundRobin,
            fecn: Default::default(),
            qcn: Default::default(),
            snoop: Default::default(),
            route_cache_entries: DEFAULT_ROUTE_CACHE_ENTRIES,
        };
        p.max_packets = packet_slots(p.vcs(), vc_capacity, 1);
        p
    }

    /// The first parameter outside what its register or table holds, as (field name, why): a
    /// switch is built only from parameters that pass (the blocks assert these ranges). The
    /// scenario reader checks the same ranges key by key; this check serves parameters read
    /// from elsewhere, such as a recording's header.
    pub fn out_of_range(&self) -> Option<(&'static str, String)> {
        use crate::blocks::arn_table::{MAX_ENTRIES, MAX_TTL};
        let fail = |name, why: String| Some((name, why));
        if self.vc_capacity == 0 {
            return fail("vc_capacity", "0 flits: a VC holds at least one".into());
        }
        if !(1..u16::MAX as usize).contains(&self.max_packets) {
            return fail(
                "max_packets",
                format!(
                    "{} descriptors: an input port holds 1 to {} (16-bit slot indices)",
                    self.max_packets,
                    u16::MAX - 1
                ),
            );
        }
        if !(1..=MAX_ENTRIES).contains(&self.arn_entries) {
            return fail(
                "arn_entries",
                format!(
                    "{}: the ARN table holds 1 to {MAX_ENTRIES} entries",
                    self.arn_entries
                ),
            );
        }
        if !(1..=MAX_TTL).contains(&self.arn_ttl) {
            return fail(
                "arn_ttl",
                format!(
                    "{} cycles: the TTL timers count 1 to {MAX_TTL}",
                    self.arn_ttl
                ),
            );
        }
        if self.arn_gap == 0 {
            return fail("arn_gap", "0 cycles: the gap is at least one cycle".into());
        }
        if !(1..=MAX_TTL).contains(&self.crt) {
            return fail(
                "crt",
                format!("{} cycles: the CRT timer counts 1 to {MAX_TTL}", self.crt),
            );
        }
        if self.lcdth > self.hcdth {
            return fail(
                "lcdth",
                format!("{} flits is above HCDTh ({})", self.lcdth, self.hcdth),
            );
        }
        let prc = crate::blocks::route_cache::MAX_ENTRIES;
        if !(1..=prc).contains(&self.route_cache_entries) {
            return fail(
                "route_cache_entries",
                format!(
                    "{}: a route cache holds 1 to {prc} entries",
                    self.route_cache_entries
                ),
            );
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::PacketFlags;

    #[test]
    fn dbbm_is_destination_modulo() {
        let q = QueuingScheme::Dbbm { vcs: 3 };
        let v: Vec<u8> = (0..7).map(|d| q.vc_for(5, d)).collect();
        assert_eq!(v, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn vftree_shuffles_consecutive_leaves() {
        // Configuration 1: 6 nodes per leaf switch.
        let q = QueuingScheme::VFtree {
            vcs: 3,
            nodes_per_leaf: 6,
        };
        let v: Vec<u8> = [0, 5, 6, 11, 12, 18, 431]
            .iter()
            .map(|&d| q.vc_for(0, d))
            .collect();
        assert_eq!(v, [0, 0, 1, 1, 2, 0, 71 % 3]);
    }

    #[test]
    fn flow2sl_groups_consecutive_destinations() {
        let q = QueuingScheme::Flow2Sl { vcs: 3, nodes: 432 };
        assert_eq!(q.vc_for(7, 0), 0);
        assert_eq!(q.vc_for(7, 143), 0);
        assert_eq!(q.vc_for(7, 144), 1);
        assert_eq!(q.vc_for(7, 287), 1);
        assert_eq!(q.vc_for(7, 288), 2);
        assert_eq!(q.vc_for(7, 431), 2);
    }

    #[test]
    fn adapted_packets_go_to_the_afc_only_under_afi() {
        let mut p = SwitchParams::with_paper_ratios(RoutingMode::ArnAfi, 100, 10);
        p.queuing = QueuingScheme::Dbbm { vcs: 3 };
        p.lmc = 1;
        assert_eq!(p.vcs(), 4);
        // The HCA gives a packet to destination 5 the SL of DBBM's VC, 5 mod 3.
        let sl = p.queuing.vc_for(0, 5);
        assert_eq!(sl, 2);
        let mut pkt = Packet {
            dlid: 5 << 1 | 1,
            sl,
            ..Packet::default()
        };
        assert_eq!(p.next_vc(&pkt, pkt.sl), 2, "VL = SL");
        assert_eq!(p.next_vc(&pkt, 1), 1, "the table's VL");
        pkt.flags |= PacketFlags::ADAPTED;
        assert_eq!(p.next_vc(&pkt, 1), 3, "the AFC is the last VC");
        p.routing = RoutingMode::Arn;
        assert_eq!(p.vcs(), 3);
        assert_eq!(p.next_vc(&pkt, 1), 1, "no AFC without AFI");
    }
}
