//! The IEEE 802.1Qau keys: `rate_control = "qcn"`, the switches' `switch.qcn_*` and the HCAs'
//! `node.qcn_*`; and the tables of the routing modes that have their own (snooped AR's congestion
//! table, flow routing's route caches).

use super::tests::SMALL;
use super::*;
use crate::blocks::congestion_point::QcnPoint;

fn set(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// `rate_control = "qcn"` turns on the congestion points and the reaction points with the
/// documented defaults at 100 Gb/s and 64-byte flits; without it both are off.
#[test]
fn qcn_turns_on_both_halves_with_their_defaults() {
    let s = Scenario::from_text("s.toml", SMALL, &[]).unwrap();
    assert!(!s.params.switch.qcn.on() && s.params.qcn_reaction.is_none());
    let s = Scenario::from_text("s.toml", SMALL, &set(&["rate_control=\"qcn\""])).unwrap();
    // 33 KB and 150 KB of 64-byte flits.
    let cp = QcnPoint {
        qeq: 528,
        w: 2,
        sample: 2400,
    };
    assert_eq!(s.params.switch.qcn, cp);
    assert!(!s.params.switch.fecn.on() && s.params.ca_congestion.is_none());
    let rp = s.params.qcn_reaction.expect("reaction points on");
    // Gd 1/128 in 1/65536ths; 1.5 ms of 5.12 ns cycles; 50 Mb/s, 500 Mb/s and 100 Mb/s of
    // 100 Gb/s in 2^20ths.
    assert_eq!((rp.gd, rp.bc_limit, rp.timer), (512, 2400, 292_969));
    assert_eq!((rp.r_ai, rp.r_hai, rp.min_rate), (524, 5243, 1049));
    assert_eq!((rp.fast_recovery, rp.limiters), (5, 64));
}

/// Values no register or limiter can hold are refused at their key; the keys without `qcn`
/// are ignored with a warning.
#[test]
fn qcn_keys_are_refused_at_their_key_and_ignored_without_qcn() {
    let qcn = "rate_control=\"qcn\"";
    for (set_, key, why) in [
        ("switch.qcn_qeq=\"0B\"", "switch.qcn_qeq", "Qeq is 1 flit"),
        ("switch.qcn_w=17", "switch.qcn_w", "outside 0..=16"),
        (
            "switch.qcn_sample=\"0B\"",
            "switch.qcn_sample",
            "samples every 1",
        ),
        ("node.qcn_gd=0.02", "node.qcn_gd", "below 1/63"),
        ("node.qcn_gd=0", "node.qcn_gd", "above 0"),
        (
            "node.qcn_timer=\"5ns\"",
            "node.qcn_timer",
            "at least 2 cycles",
        ),
        (
            "node.qcn_r_ai=\"200Gb/s\"",
            "node.qcn_r_ai",
            "above the link rate",
        ),
        (
            "node.qcn_min_rate=\"0Mb/s\"",
            "node.qcn_min_rate",
            "above 0",
        ),
        ("node.qcn_r_hai=\"5GB\"", "node.qcn_r_hai", "not a rate"),
        (
            "node.qcn_fast_recovery=0",
            "node.qcn_fast_recovery",
            "outside 1..=255",
        ),
        (
            "node.rate_limiters=5000",
            "node.rate_limiters",
            "outside 1..=4096",
        ),
    ] {
        let e = Scenario::from_text("s.toml", SMALL, &set(&[qcn, set_]))
            .unwrap_err()
            .0;
        let e = e.iter().find(|e| e.key.as_deref() == Some(key)).expect(key);
        assert!(e.message.contains(why), "{e}");
    }
    for key in ["switch.qcn_qeq=\"9KB\"", "node.qcn_timer=\"9us\""] {
        let s = Scenario::from_text("s.toml", SMALL, &set(&[key])).unwrap();
        let name = key.split('=').next().unwrap();
        assert!(
            s.warnings
                .iter()
                .any(|w| w.contains(name) && w.contains("qcn")),
            "{:?}",
            s.warnings
        );
    }
    // Under QCN the InfiniBand CC keys but the shared limiter count are ignored.
    let s = Scenario::from_text("s.toml", SMALL, &set(&[qcn, "node.ccti_limit=9"])).unwrap();
    assert!(s.warnings.iter().any(|w| w.contains("node.ccti_limit")));
    let s = Scenario::from_text("s.toml", SMALL, &set(&[qcn, "node.rate_limiters=9"])).unwrap();
    assert_eq!(s.params.qcn_reaction.unwrap().limiters, 9);
    assert!(!s.warnings.iter().any(|w| w.contains("rate_limiters")));
}

/// `routing = "snoop_ar"` takes QCN's notifications: refused at `routing` without them; its
/// table's keys with their defaults (16 entries, 50 µs of 5.12 ns cycles), refused out of range
/// and ignored under another routing; no order check but the destinations' resequencing count.
#[test]
fn snoop_ar_needs_qcn_and_reads_its_table_keys() {
    let qcn = "rate_control=\"qcn\"";
    let e = Scenario::from_text("s.toml", SMALL, &set(&["routing=snoop_ar"]))
        .unwrap_err()
        .0;
    let e = e
        .iter()
        .find(|e| e.key.as_deref() == Some("routing"))
        .expect("routing");
    assert!(e.message.contains("rate_control = \"qcn\""), "{e}");
    let s = Scenario::from_text("s.toml", SMALL, &set(&[qcn, "routing=snoop_ar"])).unwrap();
    let t = s.params.switch.snoop;
    assert_eq!((t.entries, t.ttl), (16, 9766));
    assert!(!s.params.check_order && s.params.resequence);
    for (set_, key, why) in [
        (
            "switch.snoop_entries=33",
            "switch.snoop_entries",
            "outside 1..=32",
        ),
        ("switch.snoop_ttl=\"1s\"", "switch.snoop_ttl", "24 bits"),
    ] {
        let e = Scenario::from_text("s.toml", SMALL, &set(&[qcn, "routing=snoop_ar", set_]))
            .unwrap_err()
            .0;
        let e = e.iter().find(|e| e.key.as_deref() == Some(key)).expect(key);
        assert!(e.message.contains(why), "{e}");
    }
    let s = Scenario::from_text("s.toml", SMALL, &set(&[qcn, "switch.snoop_entries=4"])).unwrap();
    assert!(!s.params.switch.snoop.on() && !s.params.resequence);
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("switch.snoop_entries"))
    );
}

/// `routing = "flow"` reads `switch.route_cache_entries` (16 by default), refuses it out of 1 to
/// 64 at its key, and ignores it with a warning under another routing; flow routing's sources
/// keep one DLID per destination (no multipath LSB).
#[test]
fn flow_routing_reads_its_route_cache_size() {
    let s = Scenario::from_text("s.toml", SMALL, &set(&["routing=flow"])).unwrap();
    assert_eq!(s.params.switch.route_cache_entries, 16);
    assert!(!s.params.switch.routing.multipath());
    let s = Scenario::from_text(
        "s.toml",
        SMALL,
        &set(&["routing=flow", "switch.route_cache_entries=3"]),
    )
    .unwrap();
    assert_eq!(s.params.switch.route_cache_entries, 3);
    for v in ["0", "65"] {
        let e = Scenario::from_text(
            "s.toml",
            SMALL,
            &set(&["routing=flow", &format!("switch.route_cache_entries={v}")]),
        )
        .unwrap_err()
        .0;
        let e = e
            .iter()
            .find(|e| e.key.as_deref() == Some("switch.route_cache_entries"))
            .expect("the key");
        assert!(e.message.contains("1..=64"), "{e}");
    }
    let s = Scenario::from_text("s.toml", SMALL, &set(&["switch.route_cache_entries=4"])).unwrap();
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("switch.route_cache_entries"))
    );
}
