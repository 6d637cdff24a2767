//! The InfiniBand congestion control keys: `rate_control`, the switches' `switch.cc_*` and the
//! HCAs' `node.cc*`.

use super::tests::SMALL;
use super::*;

/// `rate_control = "ib_cca"` turns on FECN marking (OpenSM's threshold 15 by default) and the
/// HCAs' half with its keys; marking alone is a switch key; values beyond their registers are
/// refused at their key, and the HCA keys without `ib_cca` are ignored with a warning.
#[test]
fn infiniband_congestion_control_keys() {
    use crate::blocks::fecn_marker::FecnMarking;
    let s = Scenario::from_text("s.toml", SMALL, &[]).unwrap();
    assert!(!s.params.switch.fecn.on() && s.params.ca_congestion.is_none());
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let s = Scenario::from_text("s.toml", SMALL, &set(&["rate_control=\"ib_cca\""])).unwrap();
    // 64 KB over 4 VCs of 64-byte flits: 256 flits per VC, a sixteenth of it.
    let want = FecnMarking {
        threshold: 16,
        rate: 10,
        min_len: 8,
        victims: 0,
    };
    assert_eq!(s.params.switch.fecn, want);
    let cc = s.params.ca_congestion.expect("HCA half on");
    assert_eq!((cc.ccti_increase, cc.ccti_limit, cc.ipd_step), (1, 127, 32));
    assert_eq!(cc.limiters, 64);
    assert!(cc.ccti_timer > 1000, "50 us");
    // Marking alone.
    let s = Scenario::from_text("s.toml", SMALL, &set(&["switch.cc_threshold=8"])).unwrap();
    assert_eq!(s.params.switch.fecn.threshold, 128);
    assert!(s.params.ca_congestion.is_none());
    let refused = [
        (
            "switch.cc_threshold=16",
            "switch.cc_threshold",
            "outside 0..=15",
        ),
        (
            "switch.cc_marking_rate=70000",
            "switch.cc_marking_rate",
            "16 bits",
        ),
        (
            "switch.cc_packet_size=256",
            "switch.cc_packet_size",
            "8 bits",
        ),
        (
            "rate_control=\"dcqcn\"",
            "rate_control",
            "none, ib_cca, qcn",
        ),
    ];
    for (set_, key, why) in refused {
        let e = Scenario::from_text("s.toml", SMALL, &set(&[set_]))
            .unwrap_err()
            .0;
        let e = e.iter().find(|e| e.key.as_deref() == Some(key)).expect(key);
        assert!(e.message.contains(why), "{e}");
    }
    let cca = "rate_control=\"ib_cca\"";
    for (set_, key, why) in [
        (
            "node.ccti_timer=\"0ns\"",
            "node.ccti_timer",
            "at least one cycle",
        ),
        ("node.ccti_limit=20000", "node.ccti_limit", "16,384"),
        (
            "node.ccti_increase=200",
            "node.ccti_increase",
            "up to CCTI_Limit",
        ),
        (
            "node.rate_limiters=0",
            "node.rate_limiters",
            "outside 1..=4096",
        ),
    ] {
        let e = Scenario::from_text("s.toml", SMALL, &set(&[cca, set_]))
            .unwrap_err()
            .0;
        let e = e.iter().find(|e| e.key.as_deref() == Some(key)).expect(key);
        assert!(e.message.contains(why), "{e}");
    }
    let s = Scenario::from_text("s.toml", SMALL, &set(&["node.ccti_timer=\"9us\""])).unwrap();
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("node.ccti_timer") && w.contains("ib_cca")),
        "{:?}",
        s.warnings
    );
}

/// Under D-mod-K the in-order check numbers packets in 32 bits; under InfiniBand congestion
/// control a node also numbers a CNP per packet it receives, so a run half as long reaches the
/// limit.
#[test]
fn cnps_count_in_the_packet_ids_of_the_in_order_check() {
    let long = |cca: bool| {
        let mut set = vec![
            "routing=\"dmodk\"".to_string(),
            "sim_time=\"128s\"".into(),
            "bin=\"1s\"".into(),
        ];
        if cca {
            set.push("rate_control=\"ib_cca\"".into());
        }
        Scenario::from_text("s.toml", SMALL, &set)
    };
    assert!(long(false).is_ok());
    let e = long(true).unwrap_err().0;
    let e = e
        .iter()
        .find(|e| e.key.as_deref() == Some("sim_time"))
        .expect("sim_time");
    assert!(e.message.contains("beyond 2^32 ids"), "{e}");
}
