//! What the save file of a fabric dump shows when GTKWave opens it, read as GTKWave reads it
//! (`trace::gtkw_check`): the whole dumped window across the waves, every row told from the others
//! by its switch, port and VC, counts and header fields in decimal, detector states in words.

use super::dump::WaveRequest;
use super::interrupt::Stop;
use super::run::{How, run};
use crate::trace::gtkw_check::{
    DRAWN_WAVE_PIXELS, Row, filters, missing, radix, rows, shown_name, view,
};
use std::collections::BTreeSet;

/// The checks every fabric save file `gtkw` passes against its dump `vcd`; returns its rows.
///
/// - The view opens on the first sample, marker included, and the wave pane GTKWave draws shows
///   the whole window (to the end of the last sample's period) with at most 5% to spare.
/// - No row is dropped: each names a signal of the dump.
/// - Each row reads differently in the names column, as GTKWave cuts names; a row of a switch
///   shows the switch, its port and VC.
/// - One-bit rows are binary; every other row decimal (never hexadecimal), detector states
///   through the translate filter `states` named just before them.
pub(super) fn check_fabric_save_file(gtkw: &str, vcd: &str, states: Option<&str>) -> Vec<Row> {
    let stamps: Vec<u64> = vcd
        .lines()
        .filter_map(|l| l.strip_prefix('#')?.parse().ok())
        .collect();
    let (first, last) = (stamps[0], stamps[stamps.len() - 1]);
    let end = last + crate::trace::CLOCK_PERIOD_PS / 2;
    let v = view(gtkw);
    assert_eq!((v.start, v.marker), (first, first as i64), "{gtkw}");
    let (a, b) = v.shown(DRAWN_WAVE_PIXELS);
    assert!(
        a == first && b >= end && (b - end) as f64 <= 0.05 * (end - first) as f64,
        "shows {a}..{b} of the window {first}..{end}"
    );
    assert_eq!(missing(gtkw, vcd), Vec::<String>::new(), "rows dropped");
    let rows = rows(gtkw);
    let mut shown = BTreeSet::new();
    for r in &rows {
        let s = shown_name(r);
        assert!(shown.insert(s.clone()), "two rows read {s}");
        let leaf = r.name.split('[').next().unwrap();
        let levels: Vec<&str> = leaf.split('.').collect();
        if levels[1].starts_with('s') {
            // Switch, port and VC, as many as the name has, all on the row.
            for l in &levels[1..levels.len() - 1] {
                assert!(s.split('/').any(|p| p == *l), "{s} hides {l} of {leaf}");
            }
        }
        let detector = leaf.ends_with(".detector_state");
        let want = match (r.name.ends_with(']'), detector, states) {
            (false, _, _) => ("bin", false),
            (true, true, Some(_)) => ("dec", true),
            _ => ("dec", false),
        };
        assert_eq!(radix(r), want, "{}", r.name);
        if let (true, Some(f)) = (detector, states) {
            let row = format!("^1 {f}\n@2024\n+{{{s}}} {}\n", r.name);
            assert!(gtkw.contains(&row), "{row}");
        }
    }
    assert_eq!(filters(gtkw), states.into_iter().collect::<Vec<_>>());
    rows
}

/// The dump a user asks for first: two stages' outputs and one leaf switch whole, 40 us to 80 us.
#[test]
fn a_fabric_window_opens_whole_with_named_decimal_rows() {
    let (_tmp, dir) = crate::scratch::folder("gtkw");
    let waves = WaveRequest {
        vcd: Some(dir.join("x/f.vcd")),
        fst: None,
        scopes: vec!["fabric.s2_*.out*".into(), "fabric.s1_0.*".into()],
        from: Some("40us".into()),
        to: Some("80us".into()),
        trigger_before: None,
    };
    let set = ["sim_time=100us".to_string()];
    let stop = Stop::never();
    run(
        "default",
        Some(dir.join("r")),
        &set,
        Some(waves),
        None,
        &How::new(1, &stop),
    )
    .unwrap();
    let read = |n: &str| std::fs::read_to_string(dir.join("x").join(n)).unwrap();
    let (gtkw, vcd) = (read("f.gtkw"), read("f.vcd"));
    assert_eq!(read("f.states.txt"), crate::trace::DETECTOR_STATES);
    let rows = check_fabric_save_file(&gtkw, &vcd, Some("f.states.txt"));
    // 1. The whole window: 40 us, not a few cycles of it.
    let (a, b) = view(&gtkw).shown(DRAWN_WAVE_PIXELS);
    assert!((a as f64 - 40e6).abs() < 20e3 && (b as f64 - 80e6) < 2e6 && b as f64 > 80e6);
    let by_shown = |s: &str| {
        rows.iter()
            .find(|r| shown_name(r) == s)
            .unwrap_or_else(|| panic!("no row reads {s}"))
    };
    // 2. The VCs of a port, and the same VC of two ports, read differently.
    for (s, name) in [
        (
            "s1_0/in0/vc0/occupancy",
            "fabric.s1_0.in0.vc0.occupancy[15:0]",
        ),
        (
            "s1_0/in0/vc1/occupancy",
            "fabric.s1_0.in0.vc1.occupancy[15:0]",
        ),
        (
            "s1_0/in1/vc1/occupancy",
            "fabric.s1_0.in1.vc1.occupancy[15:0]",
        ),
        (
            "s2_1/out3/vc1/credits",
            "fabric.s2_1.out3.vc1.credits[15:0]",
        ),
    ] {
        assert_eq!(by_shown(s).name, name);
    }
    // 3. Counts, occupancies, credits and ids in decimal.
    for s in [
        "s1_0/in0/vc1/occupancy",
        "s2_1/out3/vc1/credits",
        "s2_1/out3/crossed",
        "s2_1/out3/packet",
        "s1_0/arn_table/entries",
    ] {
        assert_eq!(radix(by_shown(s)), ("dec", false), "{s}");
    }
    // 4. The header of the packet on a link, field by field, in decimal; detector states in words.
    for f in ["src", "dlid", "len", "vc"] {
        assert_eq!(
            radix(by_shown(&format!("s2_0/out2/pkt/{f}"))),
            ("dec", false)
        );
    }
    assert_eq!(radix(by_shown("s2_0/out2/pkt/adapted")), ("bin", false));
    assert_eq!(radix(by_shown("s2_0/out2/detector_state")), ("dec", true));
    let groups: Vec<&str> = gtkw
        .lines()
        .zip(gtkw.lines().skip(1))
        .filter(|(f, _)| *f == "@800200")
        .map(|(_, g)| g)
        .collect();
    assert_eq!(
        &groups[..3],
        [
            "-fabric.s1_0.arn_table",
            "-fabric.s1_0.in0",
            "-fabric.s1_0.out0"
        ],
        "a group per switch and port"
    );
}
