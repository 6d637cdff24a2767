//! Tests of `arnsim replay --vcd` and `arnsim waves-pair`: the Rust dump of a replay names and
//! times the port interface as the Verilated replay does (against the header of a real Verilator
//! dump, `src/trace/testdata/`), the merged dump's save file shows every row of both models,
//! each Rust row above its Verilated twin, named by model and port, and dumps that differ in
//! names, alignment or values are told apart. The Verilated replay itself runs in
//! `testbenches/run_all.sh`.

use super::gtkw_tests::check_fabric_save_file;
use super::interrupt::Stop;
use super::record::{RecordRequest, ReplayDump, replay};
use super::run::{How, run};
use super::waves_pair;
use crate::trace::cycle_time_ps;
use crate::trace::gtkw_check::{shown_name, vcd_names};
use crate::trace::vcd_pair::{CUR, read_file, show};
use std::path::{Path, PathBuf};

/// Records switch s2_1 of `default` (4 ports, 2 VCs) for 20 us into `dir`.
fn record(dir: &Path) -> PathBuf {
    let rec = Some(RecordRequest {
        switch: "s2_1".into(),
        from: None,
        to: None,
    });
    let set = vec!["sim_time=20us".to_string()];
    run(
        "default",
        Some(dir.join("run")),
        &set,
        None,
        rec,
        &How::new(1, &Stop::never()),
    )
    .unwrap();
    dir.join("run/s2_1.rec")
}

/// Replays `rec` on the cycle engine, dumping recording cycles `from..=to` into `vcd`.
fn dump(rec: &Path, vcd: &Path, from: &str, to: &str) {
    let d = ReplayDump {
        vcd: Some(vcd.to_path_buf()),
        fst: None,
        from: Some(from.into()),
        to: Some(to.into()),
    };
    replay(rec, Some(&d), &Stop::never()).unwrap();
}

/// A replay's FST holds its VCD's scopes, names and value changes (read back by `wellen`); one
/// file named for both is refused.
#[test]
fn a_replays_fst_holds_the_changes_of_its_vcd() {
    let (_tmp, dir) = crate::scratch::folder("replay-fst");
    let rec = record(&dir);
    let (vcd, fst) = (dir.join("rust.vcd"), dir.join("rust.fst"));
    let d = ReplayDump {
        vcd: Some(vcd.clone()),
        fst: Some(fst.clone()),
        from: Some("1000".into()),
        to: Some("1100".into()),
    };
    replay(&rec, Some(&d), &Stop::never()).unwrap();
    let compared = super::fst_tests::assert_same_waves(&vcd, &fst);
    assert!(compared > 500, "{compared} changes compared");
    let same = ReplayDump {
        vcd: Some(vcd.clone()),
        fst: Some(vcd.clone()),
        from: None,
        to: None,
    };
    let e = replay(&rec, Some(&same), &Stop::never()).unwrap_err();
    assert!(
        e.message.contains("the same file as the output of --vcd"),
        "{}",
        e.message
    );
}

const VERILATOR_HEADER: &str = include_str!("../trace/testdata/tb_switch_p4_v2_header.vcd");

#[test]
fn a_replay_dumps_the_port_interface_as_the_verilated_replay_names_and_times_it() {
    let (_tmp, dir) = crate::scratch::folder("replay-vcd");
    let rec = record(&dir);
    let vcd = dir.join("rust.vcd");
    dump(&rec, &vcd, "1000", "1100");
    let text = std::fs::read_to_string(&vcd).unwrap();
    // Every signal, width included, as Verilator names it; the LFT write port is not dumped.
    let verilator: Vec<String> = vcd_names(VERILATOR_HEADER)
        .into_iter()
        .filter(|n| !n.contains(".lft_wr_"))
        .collect();
    let ours: Vec<String> = vcd_names(&text).into_iter().collect();
    assert_eq!(ours, verilator);
    assert_eq!(ours.len(), 2 + 3 + 2 + 2 * (4 + 4 * 3 + 4 * 2));
    // Recording cycle 1000 on the Verilated replay's clock cycle 1 + LFT entries + 1000, the
    // testbench's counter at 1000.
    let lft = std::fs::read_to_string(&rec)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("lft "))
        .count() as u64;
    assert!(lft > 0);
    let d = read_file(&vcd, None).unwrap();
    assert_eq!(d.first, cycle_time_ps(1 + lft + 1000));
    assert_eq!(d.last, cycle_time_ps(1 + lft + 1100) + 2560);
    assert_eq!(d.value_at(CUR, d.first).map(show).as_deref(), Some("1000"));
    assert_eq!(d.value_at(CUR, d.last).map(show).as_deref(), Some("1100"));
    // Traffic in the window: flits on the outputs.
    let valid = d.window("tb_switch.u_dut.out_flit_valid_o", d.first, d.last);
    assert!(valid.len() > 2, "{valid:?}");
    // A time reads as `arnsim run` reads it: 5.12 us is cycle 1000 at 5.12 ns a cycle.
    let again = dir.join("again.vcd");
    dump(&rec, &again, "5.12us", "5632ns");
    assert_eq!(std::fs::read(&again).unwrap(), text.as_bytes());
}

#[test]
fn the_merged_dump_shows_each_rust_row_above_its_hdl_row_named_by_model_and_port() {
    let (_tmp, dir) = crate::scratch::folder("waves-pair");
    let rec = record(&dir);
    let (rust, hdl) = (dir.join("rust.vcd"), dir.join("hdl.vcd"));
    dump(&rec, &rust, "1000", "1100");
    // The Verilated side: a dump with the same names and values (the Verilated replay itself
    // runs in testbenches/run_all.sh).
    std::fs::copy(&rust, &hdl).unwrap();
    let both = dir.join("both.vcd");
    waves_pair::run(&rust, &hdl, &both, true).unwrap();
    let gtkw = std::fs::read_to_string(dir.join("both.gtkw")).unwrap();
    let vcd = std::fs::read_to_string(&both).unwrap();
    assert!(gtkw.contains("[dumpfile] \"both.vcd\"\n[savefile] \"both.gtkw\"\n"));
    // The whole window on opening, no row dropped, rows named apart, binary or decimal.
    let rows = check_fabric_save_file(&gtkw, &vcd, None);
    // Clock and recording cycle of each model, then per port, inputs and outputs: valid, VC,
    // head, tail, 11 descriptor fields, 2 VCs of credits, ARN valid, 5 ARN fields.
    assert_eq!(rows.len(), 2 * 2 + 4 * 2 * 2 * (4 + 11 + 2 + 1 + 5));
    for pair in rows.chunks(2) {
        let (r, h) = (shown_name(&pair[0]), shown_name(&pair[1]));
        let rest = r.strip_prefix("rust/").unwrap_or_else(|| panic!("{r}"));
        assert_eq!(h, format!("hdl/{rest}"), "the Rust row above its twin");
        assert_eq!(pair[0].flags, pair[1].flags);
        assert_eq!(
            pair[0].name.strip_prefix("rust."),
            pair[1].name.strip_prefix("hdl.")
        );
        let levels: Vec<&str> = pair[0].name.split('.').collect();
        if let Some(port) = levels.get(1).filter(|l| l.starts_with('p')) {
            assert!(rest.starts_with(&format!("{port}/")), "{r} hides its port");
        }
    }
    for want in [
        "rust/p0/in_flit_desc_i/dlid",
        "hdl/p3/out_flit_desc_i/adapted",
        "rust/p2/in_credit_i/vc1",
        "hdl/p1/out_arn_o/root_info",
    ] {
        let want = want.replace("out_flit_desc_i", "out_flit_desc_o");
        assert!(rows.iter().any(|r| shown_name(r) == want), "{want}");
    }
    // The split rows hold the slices of the dumped signals: a descriptor's DLID on a head
    // flit of the Rust side, the same on the HDL side.
    let merged = read_file(&both, None).unwrap();
    let heads = merged.window("rust.tb_switch.u_dut.out_flit_head_o", 0, u64::MAX);
    assert!(!heads.is_empty());
    for p in 0..4 {
        let name = format!("p{p}.out_flit_desc_o.dlid");
        let desc = format!("tb_switch.u_dut.out_flit_desc_o[{p}]");
        for (t, dlid) in merged.window(&format!("rust.{name}"), 0, u64::MAX) {
            let full = merged.value_at(&format!("rust.{desc}"), t).unwrap();
            assert_eq!(dlid, &full[192 - 128..192 - 112], "{name} at {t}");
            assert_eq!(merged.value_at(&format!("hdl.{name}"), t), Some(dlid));
        }
    }
}

#[test]
fn waves_pair_tells_dumps_that_differ_in_names_alignment_or_values() {
    let (_tmp, dir) = crate::scratch::folder("waves-pair-differ");
    let rec = record(&dir);
    let rust = dir.join("rust.vcd");
    dump(&rec, &rust, "1000", "1100");
    let text = std::fs::read_to_string(&rust).unwrap();
    let out = dir.join("both.vcd");
    let try_hdl = |hdl_text: String| {
        let hdl = dir.join("hdl.vcd");
        std::fs::write(&hdl, hdl_text).unwrap();
        waves_pair::run(&rust, &hdl, &out, true).unwrap_err()
    };
    // A signal the other dump does not have.
    let e = try_hdl(text.replace(" in_arn_i[2] ", " in_arn_q[2] "));
    assert!(
        e.contains("tb_switch.u_dut.in_arn_i[2] (72 bits) is not in the Verilated dump"),
        "{e}"
    );
    // One cycle later: the recording-cycle counters disagree.
    let (head, body) = text.split_at(text.find("$enddefinitions").unwrap());
    let shifted: String = body
        .lines()
        .map(|l| match l.strip_prefix('#') {
            Some(t) => format!("#{}\n", t.parse::<u64>().unwrap() + 5120),
            None => format!("{l}\n"),
        })
        .collect();
    let e = try_hdl(format!("{head}{shifted}"));
    assert!(e.contains("the dumps are not aligned"), "{e}");
    // One output flit's valid bit off: named with its time and recording cycle, nothing written.
    let id = text
        .lines()
        .find_map(|l| l.strip_suffix(" out_flit_valid_o [3:0] $end"))
        .and_then(|l| l.split(' ').nth(3))
        .unwrap();
    let body_at = text.find("$enddefinitions").unwrap();
    let second = body_at + text[body_at..].find("\n#").unwrap() + 1;
    let second = second + text[second..].find("\n#").unwrap();
    let at = second + text[second..].find(&format!(" {id}\n")).unwrap() - 4;
    let mut changed = text.clone();
    let flipped = if &text[at..at + 1] == "0" { "1" } else { "0" };
    changed.replace_range(at..at + 1, flipped);
    let e = try_hdl(changed);
    assert!(e.contains("1 differ"), "{e}");
    assert!(e.contains("tb_switch.u_dut.out_flit_valid_o from "), "{e}");
    assert!(e.contains("(recording cycle 10"), "{e}");
    assert!(!out.exists() && !dir.join("both.gtkw").exists());
}

#[test]
fn waves_pair_refuses_an_output_named_like_its_save_file_or_its_inputs_and_changes_nothing() {
    let (_tmp, dir) = crate::scratch::folder("waves-pair-out");
    let (rust, hdl) = (dir.join("r.vcd"), dir.join("h.vcd"));
    std::fs::write(&rust, "rust dump").unwrap();
    std::fs::write(&hdl, "hdl dump").unwrap();
    let kept = dir.join("m.gtkw");
    std::fs::write(&kept, "precious").unwrap();
    let e = waves_pair::run(&rust, &hdl, &kept, false).unwrap_err();
    assert!(e.contains("--out") && e.contains("named `.gtkw`"), "{e}");
    let e = waves_pair::run(&rust, &hdl, &dir.join("./h.vcd"), false).unwrap_err();
    assert!(e.contains("is one of the dumps read"), "{e}");
    // Unreadable dumps: refused before anything is written.
    let e = waves_pair::run(&rust, &hdl, &dir.join("x.vcd"), false).unwrap_err();
    assert!(!e.is_empty());
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "precious");
    assert_eq!(std::fs::read_to_string(&hdl).unwrap(), "hdl dump");
    let mut left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["h.vcd", "m.gtkw", "r.vcd"]);
}
