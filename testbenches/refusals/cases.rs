//! The cases of the `refusals` testbench: each a command line, the scenario files it needs, and
//! what it must give (refused naming a key or flag, warned, or accepted).

use std::path::Path;
use std::time::Duration;

/// What a case must give.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A non-zero exit (not a panic) whose message contains every listed text.
    Refused,
    /// Exit 0 with every listed text among the messages (a warning).
    Warned,
    /// Exit 0 (a value that must be taken as written).
    Accepted,
}

pub struct Case {
    pub label: &'static str,
    /// Scenario files to write first: (name, text).
    pub files: Vec<(&'static str, String)>,
    pub args: Vec<String>,
    pub expect: Expect,
    /// Texts the message must contain (the key or flag named).
    pub names: &'static [&'static str],
}

pub const HANG: Duration = Duration::from_secs(120);

/// A file text that stands for a named pipe (made with `mkfifo`).
pub const FIFO: &str = "<fifo>";

fn default_text() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/default.toml"))
        .unwrap()
}

fn figure4_text() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/figure4.toml"))
        .unwrap()
}

/// `text` with the line that sets `key` (at the start of a line) replaced by `key = value`.
fn with(text: &str, key: &str, value: &str) -> String {
    let mut done = false;
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            if !done && l.starts_with(&format!("{key} =")) {
                done = true;
                format!("{key} = {value}")
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(done, "no line sets {key}");
    out.join("\n") + "\n"
}

pub fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

pub fn cases() -> Vec<Case> {
    let d = default_text();
    let f4 = figure4_text();
    let halo = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/trace_halo.toml"),
    )
    .unwrap();
    let rlft = d
        .replace("kind = \"kary_ntree\"", "kind = \"rlft\"")
        .replace("k = 4\n", "ports = 28\n")
        .replace("stages = 2", "stages = 4");
    let refused = |label, files, a: &[&str], names| Case {
        label,
        files,
        args: args(a),
        expect: Expect::Refused,
        names,
    };
    vec![
        refused(
            "a time beyond any cycle count",
            vec![("huge.toml", with(&d, "sim_time", "\"1e30s\""))],
            &["run", "huge.toml", "--out", "out_huge"],
            &["huge.toml:", "sim_time"],
        ),
        refused(
            "a link rate too small to mean anything",
            vec![],
            &["check", "default", "--set", "link.rate=1e-300Gb/s"],
            &["link.rate"],
        ),
        refused(
            "a NaN in a float key",
            vec![],
            &["check", "default", "--set", "link.ns_per_metre=nan"],
            &["link.ns_per_metre"],
        ),
        refused(
            "a fabric of more end nodes than unicast LIDs",
            vec![("big.toml", rlft.clone())],
            &[
                "run",
                "big.toml",
                "--out",
                "out_big",
                "--set",
                "sim_time=1us",
            ],
            &["big.toml:", "topology"],
        ),
        refused(
            "a message larger than a VC's part of a split send memory",
            vec![],
            &[
                "check",
                "default",
                "--set",
                "queuing=dbbm",
                "--set",
                "traffic.message=400KB",
                "--set",
                "node.send_memory=per_vc",
            ],
            &["node.send_memory", "85 packets", "100 packets"],
        ),
        refused(
            "a misspelt key is named first",
            vec![("misspelt.toml", d.replace("sim_time", "sim_tme"))],
            &["check", "misspelt.toml"],
            &["sim_tme", "sim_time"],
        ),
        refused(
            "every error of a file at once",
            vec![(
                "many.toml",
                with(&with(&d, "routing", "\"fast\""), "load", "7")
                    .replace("crt = \"5us\"", "crt = \"5 parsecs\""),
            )],
            &["check", "many.toml"],
            &["routing", "traffic.load", "switch.crt"],
        ),
        refused(
            "a self-loop in a custom topology",
            vec![(
                "selfloop.toml",
                f4.clone() + "\n[[topology.link]]\na = \"s2:1\"\nb = \"s2:1\"\n",
            )],
            &["check", "selfloop.toml"],
            &["selfloop.toml:", "topology.link"],
        ),
        refused(
            "a port cabled twice",
            vec![(
                "twice.toml",
                f4.replace("a = \"s2:1\"\nb = \"s3:1\"", "a = \"s2:1\"\nb = \"s3:2\""),
            )],
            &["check", "twice.toml"],
            &["twice.toml:", "topology.link"],
        ),
        refused(
            "a name that would write outside the output root",
            vec![("escape.toml", with(&d, "name", "\"../../escape\""))],
            &["run", "escape.toml", "--set", "sim_time=5us"],
            &["name"],
        ),
        refused(
            "a dump that selects no signal does not touch the file it names",
            vec![],
            &[
                "run",
                "default",
                "--out",
                "out_scope",
                "--vcd",
                "precious.txt",
                "--scope",
                "nothing.*",
                "--set",
                "sim_time=5us",
            ],
            &["--scope"],
        ),
        refused(
            "an output folder that is a file",
            vec![],
            &[
                "run",
                "default",
                "--out",
                "precious.txt",
                "--set",
                "sim_time=5us",
            ],
            &["precious.txt"],
        ),
        refused(
            "a dump window that makes no sense",
            vec![],
            &[
                "run",
                "default",
                "--out",
                "out_window",
                "--vcd",
                "out_window/a.vcd",
                "--from",
                "soon",
            ],
            &["--from"],
        ),
        refused(
            "a dump named by another spelling of one of the run's own outputs",
            vec![],
            &[
                "run",
                "default",
                "--out",
                "o",
                "--set",
                "sim_time=5us",
                "--vcd",
                "o/../o/efficiency.svg",
            ],
            &["--vcd", "efficiency.svg"],
        ),
        refused(
            "a dump onto a pipe is never replaced by a file",
            vec![("pipe.vcd", FIFO.to_string())],
            &[
                "run",
                "default",
                "--out",
                "o",
                "--set",
                "sim_time=5us",
                "--vcd",
                "pipe.vcd",
            ],
            &["--vcd", "not a regular file"],
        ),
        refused(
            "a run into a file",
            vec![],
            &[
                "run",
                "default",
                "--set",
                "sim_time=2us",
                "--out",
                "precious.txt",
            ],
            &["--out precious.txt", "a file, not a folder"],
        ),
        refused(
            "a dump pair into a folder",
            vec![("w/keep.txt", "kept\n".to_string())],
            &[
                "waves-pair",
                "--rust",
                "a.vcd",
                "--hdl",
                "b.vcd",
                "--out",
                "w",
            ],
            &["--out w", "is a folder"],
        ),
        refused(
            "a trace that is a pipe",
            vec![
                (
                    "t.toml",
                    halo.replace("traces/halo_allreduce_16.txt", "pipe.txt"),
                ),
                ("pipe.txt", FIFO.to_string()),
            ],
            &["check", "t.toml"],
            &["traffic.trace", "pipe.txt", "not a regular file"],
        ),
        refused(
            "a map file that is a pipe",
            vec![
                (
                    "t.toml",
                    halo.replace("\"linear\"", "\"pipe.map\"").replace(
                        "traces/halo_allreduce_16.txt",
                        concat!(
                            env!("CARGO_MANIFEST_DIR"),
                            "/scenarios/traces/halo_allreduce_16.txt"
                        ),
                    ),
                ),
                ("pipe.map", FIFO.to_string()),
            ],
            &["check", "t.toml"],
            &["traffic.mapping", "pipe.map", "not a regular file"],
        ),
        refused(
            "a recording that is a pipe",
            vec![("s.rec", FIFO.to_string())],
            &["replay", "s.rec"],
            &["s.rec", "not a regular file"],
        ),
        refused(
            "a run folder whose files are pipes",
            vec![
                ("r/efficiency.csv", FIFO.to_string()),
                ("r/summary.json", FIFO.to_string()),
            ],
            &["plot", "--out", "p.svg", "r"],
            &["r/", "not a regular file"],
        ),
        refused(
            "a switch to record that the fabric does not have",
            vec![],
            &[
                "run",
                "default",
                "--out",
                "new/run",
                "--record-switch",
                "s9_9",
            ],
            &["--record-switch s9_9", "no such switch"],
        ),
        refused(
            "a dump where no file can be made",
            vec![],
            &["run", "default", "--out", "new/run", "--vcd", "/proc/a.vcd"],
            &["--vcd /proc/a.vcd"],
        ),
        refused(
            "a dump onto the scenario it runs",
            vec![("s.toml", d.clone())],
            &[
                "run",
                "s.toml",
                "--out",
                "o",
                "--set",
                "sim_time=5us",
                "--vcd",
                "./s.toml",
            ],
            &["--vcd ./s.toml", "would replace the input"],
        ),
        refused(
            "a dump onto the switch recording of the same run",
            vec![],
            &[
                "run",
                "default",
                "--out",
                "o",
                "--set",
                "sim_time=5us",
                "--vcd",
                "o/s1_0.rec",
                "--record-switch",
                "s1_0",
            ],
            &["--record-switch", "the same file as the output of --vcd"],
        ),
        refused(
            "a flit of a fraction of a byte",
            vec![],
            &["check", "default", "--set", "link.flit=0.5B"],
            &["link.flit", "whole number of bytes"],
        ),
        refused(
            "a name longer than a folder name may be",
            vec![(
                "long.toml",
                with(&d, "name", &format!("\"{}\"", "n".repeat(300))),
            )],
            &["run", "long.toml", "--set", "sim_time=5us"],
            &["long.toml:", "name"],
        ),
        refused(
            "links whose delay lines cannot fit in memory",
            vec![],
            &[
                "check",
                "default",
                "--set",
                "link.latency=335us",
                "--set",
                "topology.k=16",
                "--set",
                "traffic.hot_spots=[5]",
            ],
            &["link.latency", "GiB"],
        ),
        refused(
            "a plot written over a run's own data",
            vec![
                (
                    "r/efficiency.csv",
                    "time_us,efficiency\n5,0.5\n".to_string(),
                ),
                ("r/summary.json", String::new()),
            ],
            &["plot", "--out", "r/efficiency.csv", "r"],
            &["--out"],
        ),
        refused(
            "a sweep load that is not a number",
            vec![],
            &["sweep", "default", "--loads", "0.1,abc", "--out", "sw"],
            &["--loads", "abc"],
        ),
        refused(
            "a sweep load outside (0, 1]",
            vec![],
            &["sweep", "default", "--loads", "0.5,1.5", "--out", "sw"],
            &["--loads", "1.5", "(0, 1]"],
        ),
        refused(
            "a sweep without loads",
            vec![],
            &["sweep", "default", "--loads", "", "--out", "sw"],
            &["--loads", "empty"],
        ),
        refused(
            "a sweep given traffic.load",
            vec![],
            &[
                "sweep",
                "default",
                "--loads",
                "0.1",
                "--set",
                "traffic.load=0.2",
                "--out",
                "sw",
            ],
            &["--set traffic.load=0.2"],
        ),
        refused(
            "a sweep into a file",
            vec![],
            &[
                "sweep",
                "default",
                "--loads",
                "0.1",
                "--out",
                "precious.txt",
            ],
            &["--out", "precious.txt"],
        ),
        refused(
            "a sweep whose table would replace its scenario",
            vec![("sw/sweep.csv", d.clone())],
            &[
                "sweep",
                "sw/sweep.csv",
                "--loads",
                "0.1",
                "--set",
                "sim_time=2us",
                "--out",
                "sw",
            ],
            &["--out sw/sweep.csv", "would replace the input"],
        ),
        refused(
            "a sweep whose second load's summary would replace its scenario",
            vec![
                (
                    "sw/load-0.10/summary.json",
                    "an earlier run's\n".to_string(),
                ),
                ("sw/load-0.20/summary.json", d.clone()),
            ],
            &[
                "sweep",
                "sw/load-0.20/summary.json",
                "--loads",
                "0.1,0.2",
                "--jobs",
                "1",
                "--set",
                "sim_time=2us",
                "--out",
                "sw",
            ],
            &["--out sw/load-0.20/summary.json", "would replace the input"],
        ),
        refused(
            "bit reversal on 9 nodes",
            vec![],
            &[
                "check",
                "default",
                "--set",
                "traffic.pattern=bitrev",
                "--set",
                "topology.k=3",
            ],
            &["traffic.pattern", "power-of-two", "has 9"],
        ),
        refused(
            "an irregular fabric of one link per switch that cannot connect",
            vec![],
            &[
                "check",
                "default",
                "--set",
                "topology.kind=irregular",
                "--set",
                "topology.switches=4096",
                "--set",
                "topology.links=1",
                "--set",
                "traffic.pattern=uniform",
            ],
            &["topology.links", "4096 switches cannot all be connected"],
        ),
        refused(
            "a default timer too long for a fast link",
            vec![(
                "timers.toml",
                d.replace("crt = \"5us\"\n", "")
                    .replace("arn_ttl = \"50us\"\n", ""),
            )],
            &["check", "timers.toml", "--set", "link.rate=10Tb/s"],
            &["switch.crt", "the default", "24 bits"],
        ),
        refused(
            "a timer of no cycle",
            vec![],
            &["check", "default", "--set", "switch.crt=0ns"],
            &["switch.crt", "0 cycles", "set `switch.crt` longer"],
        ),
        refused(
            "an output folder that is a device",
            vec![],
            &[
                "run",
                "default",
                "--set",
                "sim_time=5us",
                "--out",
                "/dev/null",
            ],
            &["/dev/null", "a device, pipe or socket, not a folder"],
        ),
        refused(
            "PTRANS blocks too large whatever the matrix order",
            vec![],
            &[
                "trace", "ptrans", "--ranks", "1024", "--n", "1", "--nb", "100000", "--out",
                "p.txt",
            ],
            &["NB = 100000", "choose a smaller NB"],
        ),
        refused(
            "a trace named .OTF2 in upper case",
            vec![],
            &[
                "trace",
                "inception",
                "--ranks",
                "4",
                "--steps",
                "1",
                "--out",
                "t.OTF2",
            ],
            &["--out t.OTF2", "lower case"],
        ),
        Case {
            label: "a time written with digit separators on the command line",
            files: vec![],
            args: args(&["check", "default", "--set", "sim_time=1_000ns"]),
            expect: Expect::Accepted,
            names: &["195 cycles"],
        },
        Case {
            label: "a hot window after the end of the run",
            files: vec![],
            args: args(&["check", "default", "--set", "traffic.hot_start=1ms"]),
            expect: Expect::Warned,
            names: &["traffic.hot_start"],
        },
        Case {
            label: "dump options without a dump",
            files: vec![],
            args: args(&[
                "run",
                "default",
                "--out",
                "out_noscope",
                "--scope",
                "fabric.*",
                "--set",
                "sim_time=5us",
            ]),
            expect: Expect::Warned,
            names: &["--scope"],
        },
    ]
}
