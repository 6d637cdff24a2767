use super::*;

#[test]
fn staged_files_appear_only_when_committed() {
    let (_tmp, dir) = crate::scratch::folder("staged");
    let dest = dir.join("a.txt");
    std::fs::write(&dest, "old").unwrap();
    let mut s = Staged::open(&dest).unwrap();
    s.write(b"new").unwrap();
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), "old");
    assert!(partial_name(&dest).is_file());
    drop(s);
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), "old", "dropped");
    assert!(!partial_name(&dest).exists(), "temporary file removed");
    let mut s = Staged::open(&dest).unwrap();
    s.write(b"new").unwrap();
    s.commit().unwrap();
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "nothing left beside"
    );
    assert!(Staged::open(&dir).unwrap_err().ends_with("is a folder"));
}

/// A plot names a run by its routing mode and queuing scheme, then what sets it apart from
/// the paper's switch.
#[test]
fn a_label_names_arbitration_and_congestion_control() {
    let mut s = Summary {
        routing: "dmodk".into(),
        queuing: "1q".into(),
        output_arbitration: "round_robin".into(),
        ..Summary::default()
    };
    assert_eq!(s.label(), "dmodk + 1q");
    s.congestion_control = Some(CcSummary {
        fecns_received: 1,
        fecns_unanswered: 0,
        cnps_sent: 1,
        becns_received: 1,
        becns_dropped: 0,
    });
    assert_eq!(s.label(), "dmodk + 1q + ib_cca");
    s.output_arbitration = "fcfs".into();
    assert_eq!(s.label(), "dmodk + 1q + fcfs + ib_cca");
    s.congestion_control = None;
    s.qcn = Some(QcnSummary {
        cnms_made: 1,
        cnms_dropped_by_switches: 0,
        cnms_received_by_nodes: 1,
        cnms_dropped_by_nodes: 0,
        snooped: None,
    });
    assert_eq!(s.label(), "dmodk + 1q + fcfs + qcn");
}

#[test]
fn rounding_keeps_the_decimal_text() {
    assert_eq!(rounded(0.698_129_384_7, 6), 0.698129);
    assert_eq!(
        serde_json::to_string(&rounded(135.111_680_4, 6)).unwrap(),
        "135.11168"
    );
    assert_eq!(
        serde_json::to_string(&rounded(200.0031, 3)).unwrap(),
        "200.003"
    );
}
