//! IEEE 802.1Qau keys (`rate_control = "qcn"`): the switches' congestion points
//! (`switch.qcn_*`) and the HCAs' reaction points (`node.qcn_*`, `node.rate_limiters`), each by
//! the standard's name with its default (`docs/qcn.md`).

use super::scenario::Reader;
use crate::blocks::congestion_point::QcnPoint;
use crate::fabric::node::{LIMITERS, QcnReaction, RATE_ONE};

/// The keys of the congestion points.
const CP_KEYS: [&str; 3] = ["switch.qcn_qeq", "switch.qcn_w", "switch.qcn_sample"];
/// The keys of the reaction points (`node.rate_limiters` is shared with InfiniBand CC).
const RP_KEYS: [&str; 8] = [
    "node.qcn_gd",
    "node.qcn_bc_limit",
    "node.qcn_timer",
    "node.qcn_fast_recovery",
    "node.qcn_r_ai",
    "node.qcn_r_hai",
    "node.qcn_min_rate",
    "node.rate_limiters",
];

/// The congestion points' settings under QCN (off otherwise, their keys ignored with a
/// warning). The outer `None` is a key in error.
pub(super) fn point(r: &Reader, on: bool) -> Option<QcnPoint> {
    let doc = r.doc;
    if !on {
        for key in CP_KEYS {
            doc.ignore(key, "it sets QCN, and `rate_control` is not `qcn`");
        }
        return Some(QcnPoint::default());
    }
    let qeq = r.size("switch.qcn_qeq", "33KB").filter(|&q| {
        doc.holds("switch.qcn_qeq", (1..=u32::MAX as u64).contains(&q), || {
            format!("{q} flits: Qeq is 1 flit to 2^32 - 1 flits")
        })
    });
    let w = r.uint_in("switch.qcn_w", Some(2), (0, 16), "the standard's w is 2");
    let sample = r.size("switch.qcn_sample", "150KB").filter(|&n| {
        doc.holds(
            "switch.qcn_sample",
            (1..=u32::MAX as u64).contains(&n),
            || format!("{n} flits: a congestion point samples every 1 to 2^32 - 1 flits"),
        )
    });
    Some(QcnPoint {
        qeq: qeq? as u32,
        w: w? as u8,
        sample: sample? as u32,
    })
}

/// The reaction points' settings under QCN (`None` inside otherwise, their keys ignored). The
/// outer `None` is a key in error.
pub(super) fn reaction(r: &Reader, on: bool) -> Option<Option<QcnReaction>> {
    let doc = r.doc;
    if !on {
        for key in &RP_KEYS[..7] {
            doc.ignore(key, "it sets QCN, and `rate_control` is not `qcn`");
        }
        return Some(None);
    }
    let gd = match doc.get("node.qcn_gd") {
        None => Some(1.0 / 128.0),
        Some(_) => doc.number("node.qcn_gd"),
    }
    .filter(|&g| {
        doc.holds("node.qcn_gd", g > 0.0 && g * 63.0 < 1.0, || {
            format!("{g}: Gd is above 0 and below 1/63, so that |Fb| = 63 leaves some rate")
        })
    });
    let bc_limit = r.size("node.qcn_bc_limit", "150KB").filter(|&b| {
        doc.holds("node.qcn_bc_limit", b >= 1, || {
            "0 flits: the byte counter counts at least one flit".into()
        })
    });
    let timer = r.time("node.qcn_timer", "1.5ms").filter(|&t| {
        doc.holds("node.qcn_timer", t >= 2, || {
            format!("{t} cycles: the timer's period is at least 2 cycles (half of it in active increase)")
        })
    });
    let fast = r.uint_in(
        "node.qcn_fast_recovery",
        Some(5),
        (1, 255),
        "F: byte-counter or timer events of fast recovery, the standard's 5",
    );
    let r_ai = r.rate("node.qcn_r_ai", "50Mb/s", RATE_ONE);
    let r_hai = r.rate("node.qcn_r_hai", "500Mb/s", RATE_ONE);
    let min_rate = r.rate("node.qcn_min_rate", "100Mb/s", RATE_ONE);
    let limiters = r.uint_in(
        "node.rate_limiters",
        Some(LIMITERS as u64),
        (1, 4096),
        "flows an HCA can slow at once",
    );
    Some(Some(QcnReaction {
        gd: ((gd? * 65536.0).round() as u32).max(1),
        bc_limit: bc_limit?,
        timer: timer?,
        fast_recovery: fast? as u8,
        r_ai: r_ai?,
        r_hai: r_hai?,
        min_rate: min_rate?,
        limiters: limiters? as u16,
    }))
}
