//! Planted bugs in the switch in SystemVerilog (`hdl-ref/switch.sv` and its ports): each bug is
//! written into a copy of `hdl-ref/` under `target/sv-planted/`, the copy is built with
//! `testbenches/hdl/replay_switch.sh` (`ARNSIM_HDL_DIR`) and replays a seeded random-link
//! recording of the cycle engine (`switch_hdl/random_link.rs`) in which the bug shows. The
//! replay must fail, by a mismatch (the first differing cycle, port, signal, expected and got
//! values) or by a named assertion (`--assert`); the test reports which one caught each bug and
//! at which recording cycle. A bug that is not caught, or whose text to alter is not found
//! exactly once, fails the test. Four recordings: a 4-port ARN+AFI switch for most bugs, an
//! FA one (escape queues) with two regular VCs, remapped SL-to-VL entries, first come, first
//! served arbitration, FECN marking and QCN congestion points for the bugs in the tables, in FA,
//! in FCFS, in FECN and in QCN; a third, under snooped AR, for the bugs of the congestion table's
//! use; a fourth, under flow routing, for the bugs of the route caches and port selection. The
//! unaltered copy replays each with 0 mismatches, so every failure is the bug's.
//!
//! The models are built with `ARNSIM_HDL_OPT=-O0` (the replays are short, the builds dominate;
//! `docs/switch_rtl.md` has the measurement), two at a time, the longest replay first. A copy's
//! files are rewritten only when their text changes, so an unchanged copy reuses its build.

#[path = "harness/jobs.rs"]
mod jobs;
#[path = "switch_hdl/random_link.rs"]
mod random_link;

use jobs::{at_a_time, target};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One alteration: in `file` (under `hdl-ref/`), the text `find` (exactly once) becomes
/// `replace`.
struct Edit {
    file: &'static str,
    find: &'static str,
    replace: &'static str,
}

/// One planted bug: its alterations, applied together, and the recording it is replayed on.
struct Bug {
    slug: &'static str,
    name: &'static str,
    edits: &'static [Edit],
    /// Replays the second recording (FA, SL-to-VL entries remapped).
    sl2vl: bool,
}

/// The bugs of snooped AR, replayed on [`SNOOP_RECORDING`].
const SNOOP_BUGS: &[Bug] = &[
    Bug {
        slug: "snoop_absorbs_without_alternative",
        name: "snooped AR: a CNM on the routed port absorbed even with every other option \
               congested (the source is never slowed)",
        edits: &[Edit {
            file: "cnm_unit.sv",
            find: "\n                     && first_free(row, ct_mask[P + c] | (P'(1) << p[PortW-1:0])) != NoRoute;",
            replace: ";",
        }],
        sl2vl: false,
    },
    Bug {
        slug: "snoop_rr_stuck",
        name: "snooped AR: the round-robin pointer among congested options never moves",
        edits: &[Edit {
            file: "cnm_unit.sv",
            find: "rr_d[i]     = 4'((b + 1) & (Banks - 1));",
            replace: "rr_d[i]     = rr_q[i];",
        }],
        sl2vl: false,
    },
];

/// The bugs of flow routing, replayed on [`FLOW_RECORDING`].
const FLOW_BUGS: &[Bug] = &[
    Bug {
        slug: "flow_psu_tie_to_alternate",
        name: "flow routing: the port selection unit breaks a tie with the default port toward \
               the alternate",
        edits: &[Edit {
            file: "flow_unit.sv",
            find: "if (f < best_f) begin",
            replace: "if (f <= best_f) begin",
        }],
        sl2vl: false,
    },
    Bug {
        slug: "flow_teardown_keeps_entry",
        name: "flow routing: a teardown leaves its flow's route-cache entry",
        edits: &[Edit {
            file: "flow_unit.sv",
            find: "flags[FlagTeardown]) begin\n        cmd_op[i] = OpErase;",
            replace: "flags[FlagTeardown]) begin\n        cmd_op[i] = OpIdle;",
        }],
        sl2vl: false,
    },
];

/// A case: slug, name, alterations, and the recording with its writes before cycle 0.
type Case<'a> = (&'a str, &'a str, &'a [Edit], &'a (PathBuf, u64));

const BUGS: &[Bug] = &[
    Bug {
        slug: "afc_credit_off_by_one",
        name: "AFC credit check off by one (an adapted packet sent with one credit too few)",
        edits: &[Edit {
            file: "output_port.sv",
            find: "vc_req[i][v] = hd_valid_i[i][v] && 17'(c) >= need;",
            replace: "vc_req[i][v] = hd_valid_i[i][v]\n                       \
                      && 17'(c) + 17'(32'(hd_nvc_i[i][v]) == V - 1) >= need;",
        }],
        sl2vl: false,
    },
    Bug {
        slug: "vct_head_only",
        name: "virtual cut-through checked against the head only",
        edits: &[Edit {
            file: "output_port.sv",
            find: "vc_req[i][v] = hd_valid_i[i][v] && 17'(c) >= need;",
            replace: "vc_req[i][v] = hd_valid_i[i][v] && c >= 16'd1;",
        }],
        sl2vl: false,
    },
    Bug {
        slug: "arn_not_consumed",
        name: "ARN forwarded where it must be consumed (table entries never consumed)",
        edits: &[Edit {
            file: "switch.sv",
            find: ".pr_consumed_i  (pr_consumed),",
            replace: ".pr_consumed_i  (1'b0),",
        }],
        sl2vl: false,
    },
    Bug {
        slug: "voq_wrong_output",
        name: "VOQ counted on the wrong output (a routed head counts on the next output)",
        edits: &[Edit {
            file: "input_port_ctrl.sv",
            find: "voq_d[rt_oi]           = voq_d[rt_oi] + 16'd1;",
            replace: "voq_d[PortW'(32'(rt_oi) + 1)] = voq_d[PortW'(32'(rt_oi) + 1)] + 16'd1;",
        }],
        sl2vl: false,
    },
    Bug {
        slug: "arbiter_no_ack",
        name: "input arbiter pointer that does not move (acknowledge never given)",
        edits: &[Edit {
            file: "output_port.sv",
            find: ".ack_i   (finishing),",
            replace: ".ack_i   (1'b0),",
        }],
        sl2vl: false,
    },
    Bug {
        slug: "credit_late",
        name: "credit returned upstream one cycle late",
        edits: &[
            Edit {
                file: "input_port_ctrl.sv",
                find: "  // Upstream: one credit per flit that left this cycle, per VC.\n",
                replace: "  logic [P-1:0] late_dep_q;\n  logic [3:0]   late_vc_q [P];\n  \
                          always_ff @(posedge clk_i) begin\n    late_dep_q <= dep_valid_i;\n    \
                          late_vc_q  <= dep_vc_i;\n  end\n  \
                          // Upstream: one credit per flit that left this cycle, per VC.\n",
            },
            Edit {
                file: "input_port_ctrl.sv",
                find: "if (dep_valid_i[o] && 32'(dep_vc_i[o]) == v) credit_o[v] = credit_o[v] + 8'd1;",
                replace: "if (late_dep_q[o] && 32'(late_vc_q[o]) == v) credit_o[v] = credit_o[v] + 8'd1;",
            },
        ],
        sl2vl: false,
    },
    Bug {
        slug: "arn_gap_short",
        name: "ARN gap timer one short",
        edits: &[Edit {
            file: "arn_sender.sv",
            find: "if (push_i) gap_d[idx_i] = GapLoad;",
            replace: "if (push_i) gap_d[idx_i] = (GapLoad != '0) ? GapLoad - 32'd1 : '0;",
        }],
        sl2vl: false,
    },
    Bug {
        slug: "arn_gap_ignored",
        name: "sendARN ignores the entry's gap timer and the ARN FIFO's room",
        edits: &[Edit {
            file: "routing_stage.sv",
            find: "arn_push_o = (arn1 || arn2) && may_send_arn_i;",
            replace: "arn_push_o = arn1 || arn2;",
        }],
        sl2vl: false,
    },
    Bug {
        slug: "sl2vl_other_inputs",
        name: "each input keeps the SL-to-VL entries of the other inputs instead of its own",
        edits: &[Edit {
            file: "input_port_ctrl.sv",
            find: "sl2vl_wr_in_i == port_idx_i",
            replace: "sl2vl_wr_in_i != port_idx_i",
        }],
        sl2vl: true,
    },
    Bug {
        slug: "fa_escape_half_ignored",
        name: "FA: an adaptive head granted without the escape half free (and never escaping)",
        edits: &[Edit {
            file: "output_port.sv",
            find: "need         = 17'(hd_len_i[i][v]) + 17'(hd_res_i[i][v]);",
            replace: "need         = 17'(hd_len_i[i][v]);",
        }],
        sl2vl: true,
    },
    Bug {
        slug: "fcfs_newest_first",
        name: "FCFS: the newest head wins (stamps compared the wrong way round)",
        edits: &[Edit {
            file: "output_port.sv",
            find: "stamp_older(hd_stamp_i[i][v], oldest)",
            replace: "stamp_older(oldest, hd_stamp_i[i][v])",
        }],
        sl2vl: true,
    },
    Bug {
        slug: "fecn_victims_marked",
        name: "FECN: the victim mask read inverted (victims mark where they must not, and not \
               where they must)",
        edits: &[Edit {
            file: "fecn_marker.sv",
            find: "(!short_i || victim_i)",
            replace: "(!short_i || !victim_i)",
        }],
        sl2vl: true,
    },
    Bug {
        slug: "qcn_qold_stuck",
        name: "QCN: a congestion point's Qold never takes the sampled queue (the queue's growth \
               read against reset)",
        edits: &[Edit {
            file: "congestion_point.sv",
            find: "qold_d[o]    = q;",
            replace: "qold_d[o]    = qold;",
        }],
        sl2vl: true,
    },
    Bug {
        slug: "cnm_to_destination",
        name: "QCN: CNMs queued at the port toward the sampled packet's destination, not its \
               source",
        edits: &[Edit {
            file: "cnm_unit.sv",
            find: "port = port_of(cand[c].src, lft_i);",
            replace: "port = port_of(cand[c].dest >> Lmc, lft_i);",
        }],
        sl2vl: true,
    },
];

/// A 4-port FA switch (escape queues) with two regular VCs (DBBM), 30 % of its SL-to-VL
/// entries remapped, first come, first served arbitration, FECN marking (queue threshold 8
/// flits, every second eligible packet, ports 0 and 2 marking as victims) and QCN congestion
/// points (Qeq 6 flits, w 2, a sample every 10 flits, CNMs arriving); the same build
/// parameters as
/// [`RECORDING`]'s; `switch_hdl` replays the like of it on the unaltered switch with 0
/// mismatches).
const SL2VL_RECORDING: &[&str] = &[
    "--ports",
    "4",
    "--routing",
    "fa",
    "--queuing",
    "dbbm",
    "--qvcs",
    "2",
    "--sl2vl",
    "30",
    "--cycles",
    "20000",
    "--seed",
    "3",
    "--arbitration",
    "fcfs",
    "--fecn",
    "8:1:2:5",
    "--qcn",
    "6:2:10",
];

/// A 4-port switch under snooped AR (1Q) with QCN congestion points (Qeq 6 flits, w 2, a sample
/// every 10 flits, CNMs arriving) and a four-entry congestion table whose entries live 300
/// cycles; `switch_hdl` replays the like of it (`random_p4_v2_snoop_ar_qcn`).
const SNOOP_RECORDING: &[&str] = &[
    "--ports",
    "4",
    "--routing",
    "snoop_ar",
    "--queuing",
    "1q",
    "--qcn",
    "6:2:10",
    "--snoop",
    "4:300",
    "--cycles",
    "20000",
    "--seed",
    "2",
];

/// A 4-port switch under flow routing (DBBM over two VCs, first come, first served) with
/// four-entry route caches, setups and teardowns of four connections per pair;
/// `switch_hdl` replays the like of it (`random_p4_v2_flow_fcfs`).
const FLOW_RECORDING: &[&str] = &[
    "--ports",
    "4",
    "--routing",
    "flow",
    "--queuing",
    "dbbm",
    "--qvcs",
    "2",
    "--route-cache",
    "4",
    "--arbitration",
    "fcfs",
    "--cycles",
    "20000",
    "--seed",
    "2",
];

/// The recording every case replays (`random_link.rs` options, `--out` added).
/// A 4-port ARN+AFI switch (1Q and the AFC), 20,000 cycles; ARNs come back on the outputs ten
/// times as often as by default (3 in 100 cycles per output), so the ARN table has entries, some
/// not consumed, within the first hundred cycles. Every bug of `BUGS` shows before cycle 1,000.
const RECORDING: &[&str] = &[
    "--ports",
    "4",
    "--cycles",
    "20000",
    "--arn-rate",
    "30",
    "--seed",
    "2",
];

/// Writes `text` to `path` unless the file already holds it (its time stamp then stays, and
/// `replay_switch.sh` reuses the build).
fn write_if_changed(path: &Path, text: &str) {
    if fs::read_to_string(path).ok().as_deref() != Some(text) {
        fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// Copies `hdl-ref/` into `dir` with the bug's edits; an error names an edit whose text is not
/// found exactly once.
fn make_copy(src: &Path, dir: &Path, edits: &[Edit]) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<(String, String)> = Vec::new();
    for e in fs::read_dir(src).map_err(|e| format!("{}: {e}", src.display()))? {
        let e = e.map_err(|e| e.to_string())?;
        if e.file_type().map_err(|e| e.to_string())?.is_file() {
            let name = e.file_name().to_string_lossy().into_owned();
            let text = fs::read_to_string(e.path()).map_err(|e| format!("{name}: {e}"))?;
            files.push((name, text));
        }
    }
    for ed in edits {
        let (_, text) = files
            .iter_mut()
            .find(|(n, _)| n == ed.file)
            .ok_or_else(|| format!("no file hdl-ref/{}", ed.file))?;
        let n = text.matches(ed.find).count();
        if n != 1 {
            return Err(format!(
                "the text to alter occurs {n} times in hdl-ref/{} (must be once): {:?}",
                ed.file, ed.find
            ));
        }
        *text = text.replacen(ed.find, ed.replace, 1);
    }
    for (name, text) in &files {
        write_if_changed(&dir.join(name), text);
    }
    Ok(())
}

/// How a replay ended.
enum Outcome {
    /// Every cycle matched: the replay's summary line.
    Matched(String),
    /// The first mismatch line, with its recording cycle.
    Mismatch(u64, String),
    /// A named assertion, the recording cycle it concerns and where it sits.
    Assertion(u64, String, String),
    /// The build failed, or the replay ended otherwise: the output's last lines.
    Broken(String),
}

/// Reads the replay's output. `lft_lines`: the LFT writes before recording cycle 0; an
/// assertion reported at time `t` concerns driver clock `(t - 2560) / 5120 - 1`
/// (`arnsim_assert.svh`), and recording cycle 0 is driver clock `lft_lines + 1`.
fn outcome(ok: bool, text: &str, lft_lines: u64) -> Outcome {
    let first = |pat: &str| text.lines().find(|l| l.contains(pat)).map(str::trim);
    if let Some(l) = first("Assertion failed in ") {
        let time = l
            .strip_prefix('[')
            .and_then(|r| r.split(']').next())
            .and_then(|t| t.trim().parse::<u64>().ok());
        let path = l
            .split("Assertion failed in ")
            .nth(1)
            .and_then(|r| r.split(':').next())
            .unwrap_or("?");
        let name = path.rsplit('.').next().unwrap_or("?").to_string();
        let scope = path
            .trim_start_matches("TOP.")
            .trim_end_matches(name.as_str())
            .trim_end_matches('.')
            .to_string();
        let cycle = time.map_or(u64::MAX, |t| {
            ((t.saturating_sub(2560)) / 5120).saturating_sub(2 + lft_lines)
        });
        return Outcome::Assertion(cycle, name, scope);
    }
    if let Some(l) = first("switch replay: mismatch at cycle ") {
        let cycle = l
            .split("at cycle ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|c| c.parse().ok())
            .unwrap_or(u64::MAX);
        // "port P SIGNAL: expected E got G"
        let what = l
            .split("at cycle ")
            .nth(1)
            .and_then(|r| r.split_once(' '))
            .map_or(l, |(_, w)| w)
            .to_string();
        return Outcome::Mismatch(cycle, what);
    }
    if ok && let Some(l) = first(" cycles, 0 mismatches") {
        return Outcome::Matched(l.to_string());
    }
    let tail: Vec<&str> = text.lines().rev().take(12).collect();
    Outcome::Broken(tail.into_iter().rev().collect::<Vec<_>>().join("\n"))
}

/// Builds the copy in `hdl` (when needed) and replays `rec`: the outcome, the build's seconds
/// (None when reused) and the whole time.
fn replay(hdl: &Path, rec: &Path, lft_lines: u64) -> (Outcome, Option<u64>, f64) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let t0 = Instant::now();
    let out = Command::new("bash")
        .arg(root.join("testbenches/hdl/replay_switch.sh"))
        .arg(rec)
        .env("ARNSIM_HDL_DIR", hdl)
        .env(
            "ARNSIM_HDL_OPT",
            std::env::var("ARNSIM_HDL_OPT").unwrap_or_else(|_| "-O0".into()),
        )
        .output();
    let secs = t0.elapsed().as_secs_f64();
    let o = match out {
        Ok(o) => o,
        Err(e) => {
            return (
                Outcome::Broken(format!("replay_switch.sh: {e}")),
                None,
                secs,
            );
        }
    };
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    let built = text
        .lines()
        .find_map(|l| l.split("built in ").nth(1))
        .and_then(|r| r.split(' ').next())
        .and_then(|s| s.parse().ok());
    (outcome(o.status.success(), &text, lft_lines), built, secs)
}

fn main() {
    let t_all = Instant::now();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let base = target().join("sv-planted");
    fs::create_dir_all(&base).expect("folder");
    // Each recording made once: its path and the LFT and SL-to-VL writes before its cycle 0.
    let record = |name: &str, opts: &[&str]| -> (PathBuf, u64) {
        let rec = base.join(name);
        let out = rec.to_string_lossy().into_owned();
        let mut args = opts.to_vec();
        args.extend(["--out", &out]);
        match random_link::record(&args) {
            Ok(what) => println!("recording {}: {what}", rec.display()),
            Err(e) => panic!("recording failed: {e}"),
        }
        let setup = fs::read_to_string(&rec)
            .expect("recording")
            .lines()
            .take_while(|l| *l != "end-header")
            .filter(|l| l.starts_with("lft ") || l.starts_with("sl2vl "))
            .count() as u64;
        (rec, setup)
    };
    let main_rec = record("random_p4_arn_afi.rec", RECORDING);
    let sl2vl_rec = record("random_p4_fa_sl2vl.rec", SL2VL_RECORDING);
    let snoop_rec = record("random_p4_snoop_ar.rec", SNOOP_RECORDING);
    let flow_rec = record("random_p4_flow.rec", FLOW_RECORDING);

    // The unaltered copy first (its replay of the main recording runs it whole, the longest),
    // on each recording.
    let cases: Vec<Case> = [
        ("pristine", "unaltered", &[][..], &main_rec),
        ("pristine_sl2vl", "unaltered", &[][..], &sl2vl_rec),
        ("pristine_snoop", "unaltered", &[][..], &snoop_rec),
        ("pristine_flow", "unaltered", &[][..], &flow_rec),
    ]
    .into_iter()
    .chain(BUGS.iter().map(|b| {
        let rec = if b.sl2vl { &sl2vl_rec } else { &main_rec };
        (b.slug, b.name, b.edits, rec)
    }))
    .chain(
        SNOOP_BUGS
            .iter()
            .map(|b| (b.slug, b.name, b.edits, &snoop_rec)),
    )
    .chain(
        FLOW_BUGS
            .iter()
            .map(|b| (b.slug, b.name, b.edits, &flow_rec)),
    )
    .collect();
    let results = at_a_time(2, &cases, |&(slug, _, edits, (rec, setup))| {
        let hdl = base.join(slug).join("hdl");
        match make_copy(&root.join("hdl-ref"), &hdl, edits) {
            Ok(()) => replay(&hdl, rec, *setup),
            Err(e) => (Outcome::Broken(e), None, 0.0),
        }
    });

    let (mut caught, mut failed) = (0, 0);
    for (&(_, name, edits, _), (o, built, secs)) in cases.iter().zip(results) {
        let time = match built {
            Some(b) => format!("built in {b} s, {secs:.0} s in all"),
            None if secs == 0.0 => "not built".to_string(),
            None => format!("build reused, {secs:.0} s"),
        };
        match (edits.is_empty(), o) {
            (true, Outcome::Matched(l)) => println!("ok      unaltered copy: {l} ({time})"),
            (true, Outcome::Mismatch(c, l) | Outcome::Assertion(c, l, _)) => {
                failed += 1;
                println!("FAILED  unaltered copy: at cycle {c}, {l} ({time})");
            }
            (false, Outcome::Mismatch(c, l)) => {
                caught += 1;
                println!("caught  {name}: at cycle {c}, mismatch on {l} ({time})");
            }
            (false, Outcome::Assertion(c, a, scope)) => {
                caught += 1;
                println!("caught  {name}: at cycle {c}, assertion {a} in {scope} ({time})");
            }
            (false, Outcome::Matched(_)) => {
                failed += 1;
                println!("MISSED  {name}: the replay matched with the bug ({time})");
            }
            (_, Outcome::Broken(t)) => {
                failed += 1;
                println!("FAILED  {name}: no replay result ({time}):\n{t}");
            }
        }
    }
    println!(
        "planted bugs in the HDL switch: {caught} caught, {failed} failed ({:.0} s)",
        t_all.elapsed().as_secs_f64()
    );
    if failed > 0 {
        std::process::exit(1);
    }
}
