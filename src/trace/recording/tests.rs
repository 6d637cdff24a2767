//! A recording's header is refused, with its line and key, when a parameter is outside what the
//! switch's registers and tables hold, or when a line is not text of a sane length.

use super::{MAGIC, RecordingReader};
use std::io::Cursor;

/// A valid header of a 2-port switch under ARN+AFI (1Q plus the AFC).
fn header() -> String {
    format!(
        "{MAGIC}\n\
         switch s1_0 id 0 stage 1 up_ports 2 seed 1\n\
         param ports 2 vcs 2 vc_capacity 128 max_packets 200 lmc 0 banks 1 rows 4\n\
         param routing arn_afi queuing 1q qvcs 1 qarg 0 arbitration round_robin\n\
         param arn_entries 16 arn_ttl 9766 arn_gap 195 hcdth 103 lcdth 80 fcth 99 crt 977 \
         adaptive_threshold 96 adapted_refresh 1\n\
         out_capacity 0 128\n\
         out_capacity 1 128\n\
         lft 1 0\n\
         from 0 to 10\n\
         end-header\n"
    )
}

fn open(text: &[u8]) -> Result<(), String> {
    RecordingReader::open("h.rec", Cursor::new(text.to_vec())).map(|_| ())
}

#[test]
fn a_header_out_of_the_registers_ranges_is_refused_with_its_line_and_key() {
    open(header().as_bytes()).unwrap();
    let cases = [
        (
            "max_packets 200",
            "max_packets 65536",
            "h.rec:3: key `max_packets`",
        ),
        (
            "max_packets 200",
            "max_packets 0",
            "h.rec:3: key `max_packets`",
        ),
        (
            "arn_entries 16",
            "arn_entries 0",
            "h.rec:5: key `arn_entries`",
        ),
        (
            "arn_entries 16",
            "arn_entries 4294967295",
            "h.rec:5: key `arn_entries`",
        ),
        ("arn_ttl 9766", "arn_ttl 0", "h.rec:5: key `arn_ttl`"),
        ("arn_ttl 9766", "arn_ttl 16777216", "h.rec:5: key `arn_ttl`"),
        ("arn_gap 195", "arn_gap 0", "h.rec:5: key `arn_gap`"),
        ("crt 977", "crt 16777216", "h.rec:5: key `crt`"),
        (
            "hcdth 103",
            "hcdth 10",
            "h.rec:5: key `lcdth`: 80 flits is above HCDTh (10)",
        ),
        (
            "vc_capacity 128",
            "vc_capacity 0",
            "h.rec:3: key `vc_capacity`",
        ),
        (
            "vc_capacity 128",
            "vc_capacity 65536",
            "h.rec:3: key `vc_capacity`: `65536`",
        ),
        (
            "out_capacity 1 128",
            "out_capacity 1 0",
            "h.rec:7: out_capacity of port 1 is 0",
        ),
        (
            "lft 1 0",
            "lft 1 2",
            "h.rec:8: `lft 1 2`: port 2 of a 2-port switch",
        ),
        ("from 0 to 10", "from 9 to 3", "h.rec:9: `from 9 to 3`"),
        (
            "up_ports 2 ",
            "up_ports 4 ",
            "h.rec:2: key `up_ports`: 4 names a port beyond the switch's 2",
        ),
        (
            "param routing arn_afi queuing 1q qvcs 1 qarg 0 arbitration round_robin",
            "param routing arn_afi queuing dbbm qvcs 0 qarg 0 arbitration round_robin",
            "h.rec:4: key `qvcs`: 0",
        ),
        (
            "param routing arn_afi queuing 1q qvcs 1 qarg 0 arbitration round_robin",
            "param routing arn_afi queuing 1q qvcs 3 qarg 0 arbitration round_robin",
            "h.rec:4: key `qvcs`: 3 contradicts `queuing 1q`",
        ),
        (
            "param routing arn_afi queuing 1q qvcs 1 qarg 0 arbitration round_robin",
            "param routing arn_afi queuing 1q qvcs 1 qarg 16 arbitration round_robin",
            "h.rec:4: key `qarg`: 16 contradicts `queuing 1q`",
        ),
        (
            "param routing arn_afi queuing 1q qvcs 1 qarg 0 arbitration round_robin",
            "param routing arn_afi queuing vftree qvcs 1 qarg 0 arbitration round_robin",
            "h.rec:4: key `qarg`: 0 contradicts `queuing vftree`",
        ),
        (
            "arbitration round_robin",
            "arbitration oldest",
            "h.rec:4: key `arbitration`: `oldest` is not round_robin or fcfs",
        ),
        (
            "from 0 to 10",
            "from 0 to 18446744073709551614",
            "h.rec:9: `to 18446744073709551614`: past the longest run, 2^40 cycles",
        ),
        (
            "from 0 to 10\n",
            "",
            "h.rec:9: the header has no `from` line",
        ),
    ];
    for (from, to, want) in cases {
        let text = header().replace(from, to);
        assert_ne!(text, header(), "{from}");
        let e = open(text.as_bytes()).unwrap_err();
        assert!(e.contains(want), "{to}: {e}");
    }
}

/// The arbitration the routing line names; a line without it (a recording made before the
/// key) arbitrates round robin.
#[test]
fn the_routing_line_names_the_arbitration_or_leaves_round_robin() {
    use crate::switch::OutputArbitration;
    let read = |text: String| {
        RecordingReader::open("h.rec", Cursor::new(text.into_bytes()))
            .unwrap()
            .header
            .params
            .arbitration
    };
    let h = header();
    assert_eq!(read(h.clone()), OutputArbitration::RoundRobin);
    let fcfs = h.replace("arbitration round_robin", "arbitration fcfs");
    assert_eq!(read(fcfs), OutputArbitration::Fcfs);
    let before = h.replace(" arbitration round_robin", "");
    assert_eq!(read(before), OutputArbitration::RoundRobin);
}

/// The FECN line sets the output ports' marking registers; a recording without it (made before
/// switches marked FECN) marks nothing; a value beyond its register is refused at its key.
#[test]
fn the_fecn_line_sets_the_marking_registers_or_leaves_them_off() {
    use crate::blocks::fecn_marker::FecnMarking;
    let read = |text: String| {
        RecordingReader::open("h.rec", Cursor::new(text.into_bytes())).map(|r| r.header.params.fecn)
    };
    assert_eq!(read(header()), Ok(FecnMarking::default()));
    let line = "param fecn_threshold 10 fecn_rate 2 fecn_min_len 8 fecn_victims 3\nout_capacity 0";
    let on = header().replacen("out_capacity 0", line, 1);
    let want = FecnMarking {
        threshold: 10,
        rate: 2,
        min_len: 8,
        victims: 3,
    };
    assert_eq!(read(on.clone()), Ok(want));
    let wide = on.replace("fecn_rate 2", "fecn_rate 70000");
    let e = read(wide).unwrap_err();
    assert!(e.contains("h.rec:6: key `fecn_rate`: `70000`"), "{e}");
    let bad = on.replace("fecn_victims 3", "fecn_victims 0xg");
    let e = read(bad).unwrap_err();
    assert!(
        e.contains("h.rec:6: key `fecn_victims`: not a hexadecimal mask"),
        "{e}"
    );
}

/// A header without the QCN line samples nothing; with it, the congestion points' registers;
/// a value wider than its register is refused with its line and key.
#[test]
fn the_qcn_line_sets_the_congestion_points_or_leaves_them_off() {
    use crate::blocks::congestion_point::QcnPoint;
    let read = |text: String| {
        RecordingReader::open("h.rec", Cursor::new(text.into_bytes())).map(|r| r.header.params.qcn)
    };
    assert_eq!(read(header()), Ok(QcnPoint::default()));
    let line = "param qcn_qeq 528 qcn_w 2 qcn_sample 2400\nout_capacity 0";
    let on = header().replacen("out_capacity 0", line, 1);
    let want = QcnPoint {
        qeq: 528,
        w: 2,
        sample: 2400,
    };
    assert_eq!(read(on.clone()), Ok(want));
    let e = read(on.replace("qcn_w 2", "qcn_w 300")).unwrap_err();
    assert!(e.contains("h.rec:6: key `qcn_w`: `300`"), "{e}");
    let e = read(on.replace(" qcn_sample 2400", "")).unwrap_err();
    assert!(e.contains("h.rec:6") && e.contains("qcn_sample"), "{e}");
}

/// Snooped AR's line sets the congestion table; it goes with `routing snoop_ar` and only with
/// it, and a table the hardware cannot hold is refused with its line.
#[test]
fn the_snoop_line_goes_with_snooped_ar_and_only_with_it() {
    let read = |text: String| {
        RecordingReader::open("h.rec", Cursor::new(text.into_bytes())).map(|r| r.header.params)
    };
    let snoop_ar = header()
        .replace("routing arn_afi", "routing snoop_ar")
        .replace("vcs 2", "vcs 1");
    let line = "param snoop_entries 8 snoop_ttl 500\nout_capacity 0";
    let on = snoop_ar.replacen("out_capacity 0", line, 1);
    let p = read(on.clone()).expect("a snooped-AR header");
    assert_eq!((p.snoop.entries, p.snoop.ttl), (8, 500));
    let e = read(snoop_ar).unwrap_err();
    assert!(e.contains("h.rec:4") && e.contains("snoop_entries"), "{e}");
    let e = read(header().replacen("out_capacity 0", line, 1)).unwrap_err();
    assert!(e.contains("h.rec:6") && e.contains("only with it"), "{e}");
    let e = read(on.replace("snoop_entries 8", "snoop_entries 40")).unwrap_err();
    assert!(
        e.contains("h.rec:6") && e.contains("1 to 32 entries"),
        "{e}"
    );
}

#[test]
fn a_recording_that_is_not_lines_of_text_is_refused_with_its_line() {
    let e = open(&vec![0u8; 3 << 20]).unwrap_err();
    assert!(e.contains("h.rec:1: the line is longer than"), "{e}");
    let mut text = header().into_bytes();
    text.extend_from_slice(b"12 O 0 \xff\xfe\n");
    let mut r = RecordingReader::open("h.rec", Cursor::new(text)).unwrap();
    let e = r.next_frame().unwrap_err();
    assert!(e.contains("h.rec:11:"), "{e}");
}

#[test]
fn cycles_and_the_end_line_stay_within_the_header() {
    let frames = |body: &str| -> Result<Option<u64>, String> {
        let text = header() + body;
        let mut r = RecordingReader::open("h.rec", Cursor::new(text.into_bytes())).unwrap();
        while r.next_frame()?.is_some() {}
        Ok(r.end)
    };
    assert_eq!(frames("3 I 0 C 0 1\nend 11\n"), Ok(Some(11)));
    let cases = [
        (
            "11 I 0 C 0 1\nend 12\n",
            "h.rec:11: cycle 11 is after the last cycle the header gives (10)",
        ),
        (
            "3 I 0 C 0 1\nend 100000000000\n",
            "h.rec:12: `end 100000000000` is past the header's last cycle (10)",
        ),
        (
            "3 I 0 C 0 1\nend 3\n",
            "h.rec:12: `end 3` is not after the last cycle recorded (3)",
        ),
        (
            "3 I 0 C 0 1\nend 11 x\n",
            "h.rec:12: `x` after the last field of a `end` line",
        ),
        (
            "end 4\n3 I 0 C 0 1\n",
            "h.rec:12: `3 I 0` after the `end` line",
        ),
    ];
    for (body, want) in cases {
        assert_eq!(frames(body), Err(want.to_string()), "{body}");
    }
}

#[test]
fn a_header_line_or_key_given_twice_unknown_or_inconsistent_is_refused_with_its_line() {
    let cases = [
        (
            "banks 1",
            "banks 2",
            "h.rec:3: key `banks`: 2, where LMC 0 gives 1 banks",
        ),
        (
            "adapted_refresh 1",
            "adapted_refresh 2",
            "h.rec:5: key `adapted_refresh`: 2 is not 0 or 1",
        ),
        (
            "rows 4",
            "rows 4 lanes 2",
            "h.rec:3: `lanes` is not a key of this line",
        ),
        ("seed 1", "seed 1 seed 2", "h.rec:2: key `seed` given twice"),
        (
            "out_capacity 1 128\n",
            "out_capacity 1 128\nout_capacity 1 64\n",
            "h.rec:8: out_capacity of port 1 given twice (first on line 7)",
        ),
        (
            "lft 1 0\n",
            "lft 1 0\nlft 1 1\n",
            "h.rec:9: LID 1 given twice (first on line 8)",
        ),
        (
            "lft 1 0",
            "lft 1 0 0",
            "h.rec:8: `0` after the last field of a `lft` line",
        ),
        (
            "from 0 to 10\n",
            "from 0 to 10\nfrom 0 to 10\n",
            "h.rec:10: the `from` line given twice (first on line 9)",
        ),
        (
            "out_capacity 1 128\n",
            "",
            "h.rec:3: the header gives 2 ports and out_capacity lines up to port 0",
        ),
        ("vcs 2", "vcs 3", "h.rec:3: `vcs 3` does not match"),
        (
            "vcs 2",
            "vcs 17",
            "h.rec:3: key `vcs`: 17, a switch has 1 to 16 VCs",
        ),
        (
            "param ports 2",
            "param port 2",
            "h.rec:3: a `param` line must start with `ports`, `routing`, `arn_entries`, `fecn_threshold`, `qcn_qeq`, `snoop_entries` or `route_cache_entries`, not `port`",
        ),
        (
            "switch s1_0 id",
            "switch id",
            "h.rec:2: `0` is not a key of this line",
        ),
        (
            MAGIC,
            "# a comment\nnot-magic",
            "h.rec:2: not a switch recording",
        ),
        (
            "out_capacity 0 128\nout_capacity 1 128\n",
            "",
            "h.rec:3: the header gives 2 ports and no out_capacity line",
        ),
        (
            "switch s1_0 ",
            "switch  ",
            "h.rec:2: the `switch` line has no name",
        ),
        (
            "end-header\n",
            "",
            "h.rec:9: the file ends before the header's `end-header`",
        ),
        (
            "routing arn_afi",
            "routing flow",
            "h.rec:4: the `param route_cache_entries` line (flow routing's route caches) goes \
             with `routing flow` and only with it",
        ),
        (
            "lft 1 0\n",
            "lft 1 0\nparam route_cache_entries 8\n",
            "h.rec:9: the `param route_cache_entries` line",
        ),
        (
            "routing arn_afi queuing 1q qvcs 1 qarg 0 arbitration round_robin\n",
            "routing flow queuing 1q qvcs 1 qarg 0 arbitration round_robin\n\
             param route_cache_entries 65\n",
            "h.rec:5: key `route_cache_entries`: 65: a route cache holds 1 to 64 entries",
        ),
    ];
    for (from, to, want) in cases {
        let text = header().replace(from, to);
        assert_ne!(text, header(), "{from}");
        let e = open(text.as_bytes()).expect_err(to);
        assert!(e.starts_with(want), "{to}: {e}");
    }
}

#[test]
fn a_port_signal_wider_than_its_register_or_given_twice_in_a_cycle_is_refused() {
    let frame = |body: &str| -> Result<(), String> {
        let text = header() + body + "end 11\n";
        let mut r = RecordingReader::open("h.rec", Cursor::new(text.into_bytes())).unwrap();
        while r.next_frame()?.is_some() {}
        Ok(())
    };
    let flit = "3 I 0 F 1 1 1 0 7 1 1 64 0 1 5 2\n";
    assert_eq!(frame(flit), Ok(()));
    assert_eq!(frame("3 I 0 A 1 0 9 2\n3 O 1 A 1 0 1 9 2\n"), Ok(()));
    assert_eq!(frame("3 I 0 Q 4 9 63\n3 O 1 Q 4 9 1\n"), Ok(()));
    let cases = [
        (
            flit.replace("F 1 1", "F 5 1"),
            "h.rec:11: VC 5 of a switch of 2 VCs (field 5)",
        ),
        (
            flit.replace("F 1 1 1", "F 1 2 1"),
            "h.rec:11: field 6 of `3 I 0 F 1 2 1",
        ),
        (
            flit.replace("7 1 1 64", "7 70000 1 64"),
            "h.rec:11: field 10 of",
        ),
        (flit.replace("0 1 5", "0 1 256"), "h.rec:11: field 15 of"),
        (
            flit.replace("5 2\n", "5 2 0\n"),
            "h.rec:11: `0` after the last field of a `F` line",
        ),
        (
            format!("{flit}{flit}"),
            "h.rec:12: input 0 has a second flit in cycle 3",
        ),
        (
            "3 I 0 C 0 1\n3 I 0 C 0 2\n".into(),
            "h.rec:12: input 0 has a second credit line for VC 0 in cycle 3",
        ),
        ("3 O 1 C 0 0\n".into(), "h.rec:11: 0 credits"),
        (
            "3 O 1 C 2 1\n".into(),
            "h.rec:11: VC 2 of a switch of 2 VCs",
        ),
        (
            "3 O 1 A 1 0 1 9 2\n3 O 1 A 1 0 1 9 2\n".into(),
            "h.rec:12: output 1 has a second ARN in cycle 3",
        ),
        (
            "3 I 0 A 1 0 9 2 7\n".into(),
            "h.rec:11: `7` after the last field",
        ),
        ("3 I 0 A 70000 0 9 2\n".into(), "h.rec:11: field 5 of"),
        (
            "3 I 0 A 1 2 9 2\n".into(),
            "h.rec:11: VC 2 of a switch of 2 VCs (field 6)",
        ),
        (
            "3 O 1 A 1 0 2 9 2\n".into(),
            "h.rec:11: VC 2 of a switch of 2 VCs (field 7)",
        ),
        (
            "3 O 1 A 1 2 1 9 2\n".into(),
            "h.rec:11: ARN port 2 of a 2-port switch (field 6)",
        ),
        ("3 I 0 F 1 1 1 0 7\n".into(), "h.rec:11: field 10 of"),
        (
            "3 O 1 Q 4 9 0\n".into(),
            "h.rec:11: CNM feedback 0: |Fb| is 1 to 63",
        ),
        ("3 I 0 Q 4 9 64\n".into(), "h.rec:11: CNM feedback 64"),
        ("3 I 0 Q 70000 9 5\n".into(), "h.rec:11: field 5 of"),
        ("3 I 0 Q 4 9\n".into(), "h.rec:11: field 7 of"),
        (
            "3 O 1 Q 4 9 5\n3 O 1 Q 4 9 5\n".into(),
            "h.rec:12: output 1 has a second CNM in cycle 3",
        ),
        (
            "3 O 1 X 4 9 5\n".into(),
            "h.rec:11: the kind must be `F`, `C`, `A` or `Q`",
        ),
    ];
    for (body, want) in cases {
        let e = frame(&body).unwrap_err();
        assert!(e.starts_with(want), "{body}: {e}");
    }
}

#[test]
fn a_frame_reads_back_as_written() {
    use crate::cycle::{LinkFlit, PortIn, PortOut};
    use crate::wire::{ArnInfo, Packet, PacketFlags};
    let pkt = Packet {
        injected: 1 << 40,
        id: 70_000,
        src: 300,
        dlid: 1,
        len: 64,
        sl: 3,
        vc: 1,
        orig_vc: 1,
        flags: PacketFlags::ADAPTED | PacketFlags::MESSAGE,
        flow: 0,
    };
    let arn = |port| ArnInfo {
        dest: 1,
        port,
        vc: 1,
        arn_id: 123_456,
        root_info: 7,
    };
    let mut ins = [PortIn::default(); 2];
    let mut outs = [PortOut::default(); 2];
    ins[0].flit = LinkFlit::head_of(pkt);
    ins[1].credit[1] = 255;
    ins[1].arn = Some(arn(0));
    outs[1].flit = LinkFlit::body(1, 5, 64);
    outs[0].credit[0] = 3;
    outs[0].arn = Some(arn(1));
    let mut text = header().into_bytes();
    super::write_frame(&mut text, 4, &ins, &outs).unwrap();
    text.extend_from_slice(b"end 11\n");
    let mut r = RecordingReader::open("h.rec", Cursor::new(text)).unwrap();
    let (c, i, o) = r.next_frame().unwrap().unwrap();
    assert_eq!((c, i, o), (4, &ins[..], &outs[..]));
    assert!(r.next_frame().unwrap().is_none());
}
