//! A recording's header is refused, with its line and key, when a parameter is outside what the
//! switch's registers and tables hold, or when a line is not text of a sane length.

use super::recording::{MAGIC, RecordingReader};
use std::io::Cursor;

/// A valid header of a 2-port switch under ARN+AFI (1Q plus the AFC).
fn header() -> String {
    format!(
        "{MAGIC}\n\
         switch s1_0 id 0 stage 1 up_ports 2 seed 1\n\
         param ports 2 vcs 2 vc_capacity 128 max_packets 200 lmc 0 banks 1 rows 4\n\
         param routing arn_afi queuing 1q qvcs 1 qarg 0\n\
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
        ("from 0 to 10\n", "", "h.rec: the header has no `from` line"),
    ];
    for (from, to, want) in cases {
        let text = header().replace(from, to);
        assert_ne!(text, header(), "{from}");
        let e = open(text.as_bytes()).unwrap_err();
        assert!(e.contains(want), "{to}: {e}");
    }
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
            "end 4\n3 I 0 C 0 1\n",
            "h.rec:12: `3 I 0` after the `end` line",
        ),
    ];
    for (body, want) in cases {
        assert_eq!(frames(body), Err(want.to_string()), "{body}");
    }
}
