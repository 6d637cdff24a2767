//! Switch keys: the queuing scheme's VC count, buffers, MTU, detector thresholds, ARN-table and
//! timer settings, each range-checked against the register or table that holds it (16 VCs per
//! port, 16-bit credit counters, 24-bit timers, a 64-entry CAM).

use super::qcn_keys;
use super::scenario::Reader;
use super::units::MAX_CYCLES;
use crate::blocks::congestion_table::MAX_ENTRIES as CONGESTION_TABLE_ENTRIES;
use crate::blocks::fecn_marker::{
    FecnMarking, OPENSM_MARKING_RATE, OPENSM_PACKET_SIZE, OPENSM_THRESHOLD,
};
use crate::blocks::route_cache::MAX_ENTRIES;
use crate::fabric::node::{CaCongestion, LIMITERS, QcnReaction};
use crate::switch::config::{DEFAULT_ROUTE_CACHE_ENTRIES, SnoopTable};
use crate::switch::{OutputArbitration, QueuingScheme, RoutingMode, SwitchParams};
use crate::wire::link::MAX_VCS;

/// `queuing_vcs`: the regular VCs of the queuing scheme `scheme` (3 by default; `1q` has one and
/// takes no other value), at most [`MAX_VCS`] per port with the AFC under AFI.
pub(super) fn queuing_vcs(r: &Reader, scheme: Option<&str>, afi: bool) -> Option<u8> {
    const KEY: &str = "queuing_vcs";
    let most = (MAX_VCS - afi as usize) as u64;
    let why = if afi {
        format!("regular VCs; with the AFC at most {MAX_VCS} VCs per port, InfiniBand's data VLs")
    } else {
        format!("regular VCs; at most {MAX_VCS} VCs per port, InfiniBand's data VLs")
    };
    let one_queue = scheme == Some("1q");
    let default = if one_queue { 1 } else { 3 };
    let v = r.uint_in(KEY, Some(default), (1, most), &why)?;
    if one_queue && v != 1 {
        return r.doc.fail(
            KEY,
            format!("{v}: `1q` has one regular VC (choose `dbbm`, `vftree` or `flow2sl` for more)"),
        );
    }
    Some(v as u8)
}

/// Switch keys: the switch's parameters (packet slots not yet sized), the MTU in flits and the
/// node's VC capacity.
pub(super) fn read(
    r: &Reader,
    routing: Option<RoutingMode>,
    queuing: Option<QueuingScheme>,
    ib_cca: bool,
    qcn: bool,
) -> Option<(SwitchParams, u64, u16)> {
    let doc = r.doc;
    let mtu = r.size("switch.mtu", "4KB").filter(|&m| {
        doc.holds("switch.mtu", (1..=4096).contains(&m), || {
            format!("{m} flits: an MTU is 1 to 4096 flits")
        })
    });
    let buffer = r.size("switch.buffer", "344KB");
    let node_buffer = if doc.has("node.buffer") {
        r.size("node.buffer", "344KB")
    } else {
        buffer
    };
    let afi = routing.is_none_or(|m| m.afi());
    let vcs = queuing.map(|q| (q.regular_vcs() + afi as usize) as u64);
    let per_vc = |key: &str, b: Option<u64>| -> Option<u64> {
        let (b, vcs) = (b?, vcs?);
        let cap = b / vcs;
        if cap > u16::MAX as u64 {
            return doc.fail(key, format!("{b} flits over {vcs} VCs is {cap} flits per VC, beyond the 16-bit credit counters (65535)"));
        }
        if let Some(m) = mtu
            && cap < m
        {
            return doc.fail(
                key,
                format!("{b} flits over {vcs} VCs leaves {cap} per VC, less than one MTU ({m})"),
            );
        }
        Some(cap)
    };
    let vc_cap = per_vc("switch.buffer", buffer);
    // FA: each half of a VC, adaptive and escape, holds a whole packet (Martínez et al.).
    let halves = |key: &str, cap: Option<u64>, b: Option<u64>| {
        if let (Some(RoutingMode::Fa), Some(cap), Some(m), Some(b), Some(v)) =
            (routing, cap, mtu, b, vcs)
            && cap / 2 < m
        {
            doc.fail::<()>(
                key,
                format!(
                    "{b} flits over {v} VCs leaves {cap} per VC: under `fa` each half of a VC, \
                     adaptive and escape, must hold an MTU ({m} flits), so at least {} per VC",
                    2 * m
                ),
            );
        }
    };
    halves("switch.buffer", vc_cap, buffer);
    let node_vc = if doc.has("node.buffer") {
        let node_vc = per_vc("node.buffer", node_buffer);
        halves("node.buffer", node_vc, node_buffer);
        node_vc
    } else {
        vc_cap
    };
    let (h, l, f) = (
        r.percent("switch.hcdth", 81.0),
        r.percent("switch.lcdth", 63.0),
        r.percent("switch.fcth", 78.0),
    );
    if let (Some(h), Some(l)) = (h, l)
        && l > h
    {
        doc.fail::<()>("switch.lcdth", format!("{l} % is above HCDTh ({h} %)"));
    }
    let max24 = (1u64 << 24) - 1;
    let timer = |key: &str, default: &str| {
        r.time(key, default).filter(|&v| {
            doc.holds(key, (1..=max24).contains(&v), || {
                // A default too long for the timer comes from the link's cycle time.
                let given = if doc.has(key) {
                    String::new()
                } else {
                    format!(" ({default}, the default, at this link's rate and flit size)")
                };
                let fix = if v == 0 { "longer" } else { "shorter" };
                format!(
                    "{v} cycles{given}: the timer is 24 bits (1 to {max24} cycles); set `{key}` {fix}"
                )
            })
        })
    };
    let crt = timer("switch.crt", "5ms");
    let ttl = timer("switch.arn_ttl", "1ms");
    let gap = r.time("switch.arn_gap", "1us").filter(|&v| {
        doc.holds("switch.arn_gap", (1..=u32::MAX as u64).contains(&v), || {
            format!("{v} cycles: the gap is 1 to 2^32 - 1 cycles (32-bit)")
        })
    });
    let arn_entries = r.uint_in(
        "switch.arn_entries",
        Some(16),
        (1, 64),
        "ARN-table CAM entries",
    );
    let adaptive = r.percent("switch.adaptive_threshold", 75.0);
    let adapted_refresh = doc.bool("switch.adapted_refresh").unwrap_or(true);
    let arbitration = r
        .choice(
            "switch.output_arbitration",
            Some("round_robin"),
            &OutputArbitration::ALL.map(OutputArbitration::name),
        )
        .map(|n| OutputArbitration::named(&n).expect("a listed name"));
    let cc = fecn_keys(r, ib_cca);
    let cp = qcn_keys::point(r, qcn);
    let snoop = snoop_keys(r, routing, qcn, &timer);
    let route_cache = route_cache_keys(r, routing);
    let (vc_cap, node_vc) = (vc_cap?, node_vc?);
    let pct = |p: f64| ((p * vc_cap as f64) / 100.0).floor() as u16;
    let switch = SwitchParams {
        routing: routing?,
        queuing: queuing?,
        vc_capacity: vc_cap as u16,
        max_packets: 0, // sized from the traffic's smallest packet
        lmc: 0,
        arn_entries: arn_entries? as usize,
        arn_ttl: ttl? as u32,
        arn_gap: gap? as u32,
        hcdth: pct(h?),
        lcdth: pct(l?),
        fcth: pct(f?),
        crt: crt? as u32,
        adaptive_threshold: pct(adaptive?),
        adapted_refresh,
        arbitration: arbitration?,
        fecn: cc?.marking(vc_cap as u16, r.tb.flit_bytes),
        qcn: cp?,
        snoop: snoop?,
        route_cache_entries: route_cache? as usize,
    };
    debug_assert!(MAX_CYCLES > max24);
    Some((switch, mtu?, node_vc as u16))
}

/// Flow routing's route caches (`switch.route_cache_entries`, 1 to 64, 16 by default), under
/// `routing = "flow"`.
fn route_cache_keys(r: &Reader, routing: Option<RoutingMode>) -> Option<u64> {
    const KEY: &str = "switch.route_cache_entries";
    if routing != Some(RoutingMode::Flow) {
        r.doc.ignore(
            KEY,
            "it sizes flow routing's route caches, and `routing` is not `flow`",
        );
        return Some(DEFAULT_ROUTE_CACHE_ENTRIES as u64);
    }
    r.uint_in(
        KEY,
        Some(DEFAULT_ROUTE_CACHE_ENTRIES as u64),
        (1, MAX_ENTRIES as u64),
        "route-cache CAM entries",
    )
}

/// Snooped AR's congestion table (`switch.snoop_entries`, `switch.snoop_ttl`), under
/// `routing = "snoop_ar"`, which needs QCN's notifications (refused at `routing` without them).
fn snoop_keys(
    r: &Reader,
    routing: Option<RoutingMode>,
    qcn: bool,
    timer: &dyn Fn(&str, &str) -> Option<u64>,
) -> Option<SnoopTable> {
    const KEYS: [&str; 2] = ["switch.snoop_entries", "switch.snoop_ttl"];
    let doc = r.doc;
    if routing != Some(RoutingMode::SnoopAr) {
        for key in KEYS {
            doc.ignore(
                key,
                "it sets snooped AR's table, and `routing` is not `snoop_ar`",
            );
        }
        return Some(SnoopTable::default());
    }
    doc.holds("routing", qcn, || {
        "`snoop_ar` reroutes on IEEE 802.1Qau's congestion notifications: set \
         `rate_control = \"qcn\"`"
            .into()
    });
    let entries = r.uint_in(
        "switch.snoop_entries",
        Some(16),
        (1, CONGESTION_TABLE_ENTRIES as u64),
        "congestion-table CAM entries",
    );
    let ttl = timer("switch.snoop_ttl", "50us");
    Some(SnoopTable {
        entries: entries? as u8,
        ttl: ttl? as u32,
    })
}

/// The switch's FECN marking keys, with the names of OpenSM's SwitchCongestionSetting.
struct FecnKeys {
    threshold: u8,
    marking_rate: u16,
    packet_size: u8,
    victim_mask: u64,
}

impl FecnKeys {
    /// The output ports' registers, for buffers of `vc_capacity` flits per VC and flits of
    /// `flit_bytes`.
    fn marking(&self, vc_capacity: u16, flit_bytes: u32) -> FecnMarking {
        FecnMarking {
            threshold: FecnMarking::queue_threshold(self.threshold, vc_capacity),
            rate: self.marking_rate,
            min_len: FecnMarking::min_len(self.packet_size, flit_bytes),
            victims: self.victim_mask,
        }
    }
}

/// `switch.cc_threshold` (0 off, to 15; by default 15 under `rate_control = "ib_cca"` and 0
/// otherwise), `switch.cc_marking_rate`, `switch.cc_packet_size` (64-byte credits),
/// `switch.cc_victim_mask` (bit p: port p).
fn fecn_keys(r: &Reader, ib_cca: bool) -> Option<FecnKeys> {
    let threshold = r.uint_in(
        "switch.cc_threshold",
        Some(if ib_cca { OPENSM_THRESHOLD as u64 } else { 0 }),
        (0, 15),
        "Threshold is 4 bits: 0 marks nothing, 1 is loose, 15 aggressive",
    );
    let marking_rate = r.uint_in(
        "switch.cc_marking_rate",
        Some(OPENSM_MARKING_RATE as u64),
        (0, u16::MAX as u64),
        "Marking_Rate is 16 bits",
    );
    let packet_size = r.uint_in(
        "switch.cc_packet_size",
        Some(OPENSM_PACKET_SIZE as u64),
        (0, u8::MAX as u64),
        "Packet_Size is 8 bits, in 64-byte credits",
    );
    let victim_mask = r.uint_in(
        "switch.cc_victim_mask",
        Some(0),
        (0, u64::MAX),
        "one bit per port of a switch of up to 64 ports",
    );
    Some(FecnKeys {
        threshold: threshold? as u8,
        marking_rate: marking_rate? as u16,
        packet_size: packet_size? as u8,
        victim_mask: victim_mask?,
    })
}

/// The HCAs' halves of source congestion control: at most one of them is on.
pub(super) struct RateControl {
    /// InfiniBand congestion control (`rate_control = "ib_cca"`).
    pub ca: Option<CaCongestion>,
    /// IEEE 802.1Qau's reaction points (`rate_control = "qcn"`).
    pub qcn: Option<QcnReaction>,
}

/// `rate_control`: `none` (the default), `ib_cca`, InfiniBand congestion control, whose HCA
/// settings are `node.ccti_increase`, `node.ccti_limit`, `node.ccti_timer`, `node.cct_step` and
/// `node.rate_limiters` (ignored otherwise), or `qcn`, IEEE 802.1Qau (`qcn_keys`). The outer
/// `None` is a key in error.
pub(super) fn rate_control(r: &Reader) -> Option<RateControl> {
    let doc = r.doc;
    let name = r.choice("rate_control", Some("none"), &["none", "ib_cca", "qcn"])?;
    let qcn = qcn_keys::reaction(r, name == "qcn")?;
    if name != "ib_cca" {
        let keys = [
            "node.ccti_increase",
            "node.ccti_limit",
            "node.ccti_timer",
            "node.cct_step",
            "node.rate_limiters",
        ];
        let keys = if qcn.is_some() { &keys[..4] } else { &keys[..] };
        for key in keys {
            doc.ignore(
                key,
                "it sets InfiniBand congestion control, and `rate_control` is not `ib_cca`",
            );
        }
        return Some(RateControl { ca: None, qcn });
    }
    let limit = r.uint_in(
        "node.ccti_limit",
        Some(127),
        (1, 16383),
        "CCTI_Limit: the congestion control table has up to 16,384 entries",
    );
    let increase = r.uint_in(
        "node.ccti_increase",
        Some(1),
        (1, limit.unwrap_or(16383)),
        "CCTI_Increase: 1 up to CCTI_Limit",
    );
    let timer = r.time("node.ccti_timer", "50us").filter(|&t| {
        doc.holds("node.ccti_timer", t >= 1, || {
            "0 cycles: the timer lowers the indices every CCTI_Timer, at least one cycle".into()
        })
    });
    let step = r.size("node.cct_step", "2KB");
    let limiters = r.uint_in(
        "node.rate_limiters",
        Some(LIMITERS as u64),
        (1, 4096),
        "queue pairs an HCA can slow at once",
    );
    let ca = CaCongestion {
        ccti_increase: increase? as u16,
        ccti_limit: limit? as u16,
        ccti_timer: timer?,
        ipd_step: step?,
        limiters: limiters? as u16,
    };
    Some(RateControl {
        ca: Some(ca),
        qcn: None,
    })
}
