//! `arnsim run`, `arnsim check` and `arnsim scenarios`: scenario-driven fabric runs and their
//! outputs (summary.json, efficiency.csv, latency.csv, efficiency.svg).

use crate::config::Scenario;
use crate::fabric::Fabric;
use crate::metrics::Series;
use crate::trace::fabric_vcd::FabricVcd;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The scenarios shipped in `scenarios/`, by name.
pub const BUNDLED: &[(&str, &str)] = &[
    ("default", include_str!("../../scenarios/default.toml")),
    ("figure4", include_str!("../../scenarios/figure4.toml")),
    (
        "paper/config1_h10-4",
        include_str!("../../scenarios/paper/config1_h10-4.toml"),
    ),
    (
        "paper/config1_h10",
        include_str!("../../scenarios/paper/config1_h10.toml"),
    ),
    (
        "paper/config1_h25-4",
        include_str!("../../scenarios/paper/config1_h25-4.toml"),
    ),
    (
        "paper/config1_h25",
        include_str!("../../scenarios/paper/config1_h25.toml"),
    ),
    (
        "paper/config1_rnd",
        include_str!("../../scenarios/paper/config1_rnd.toml"),
    ),
    (
        "paper/config2_h10-4",
        include_str!("../../scenarios/paper/config2_h10-4.toml"),
    ),
    (
        "paper/config2_h10",
        include_str!("../../scenarios/paper/config2_h10.toml"),
    ),
    (
        "paper/config2_h25-4",
        include_str!("../../scenarios/paper/config2_h25-4.toml"),
    ),
    (
        "paper/config2_h25",
        include_str!("../../scenarios/paper/config2_h25.toml"),
    ),
    (
        "paper/config2_rnd",
        include_str!("../../scenarios/paper/config2_rnd.toml"),
    ),
];

/// Loads `name_or_path`: a file, or a bundled scenario name.
pub fn load(name_or_path: &str, overrides: &[String]) -> Result<Scenario, String> {
    if Path::new(name_or_path).is_file() {
        return Scenario::load(name_or_path, overrides).map_err(|e| e.to_string());
    }
    let key = name_or_path
        .trim_end_matches(".toml")
        .trim_start_matches("scenarios/");
    match BUNDLED.iter().find(|(n, _)| *n == key) {
        Some((n, text)) => Scenario::from_text(&format!("scenarios/{n}.toml"), text, overrides)
            .map_err(|e| e.to_string()),
        None => Err(format!(
            "{name_or_path}: no such file, and no bundled scenario of that name (see `arnsim scenarios`)"
        )),
    }
}

/// `arnsim scenarios`.
pub fn list() -> Result<(), String> {
    for (name, text) in BUNDLED {
        let s = Scenario::from_text(&format!("scenarios/{name}.toml"), text, &[])
            .map_err(|e| e.to_string())?;
        println!("{name:<22} {}", s.description);
    }
    Ok(())
}

/// `arnsim check`.
pub fn check(name_or_path: &str, overrides: &[String]) -> Result<(), String> {
    let s = load(name_or_path, overrides)?;
    for w in &s.warnings {
        eprintln!("arnsim: warning: {w}");
    }
    println!(
        "{}: ok: {} nodes, {} switches, {} links, {} cycles ({:.3} ms) of {} traffic, routing {}, queuing {}, {} VCs of {} flits",
        s.doc.path(),
        s.topology.nodes,
        s.topology.switches.len(),
        s.topology.links.len(),
        s.sim_cycles,
        s.sim_cycles as f64 * s.time_base.cycle_ns() / 1e6,
        s.pattern,
        s.params.switch.routing.name(),
        s.params.switch.queuing.name(),
        s.params.switch.vcs(),
        s.params.switch.vc_capacity
    );
    Ok(())
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// What to dump to VCD during a run.
#[derive(Clone, Debug, Default)]
pub struct WaveRequest {
    /// VCD file.
    pub path: PathBuf,
    /// Glob patterns over signal names (all signals when empty).
    pub scopes: Vec<String>,
    /// Start time (text with unit).
    pub from: Option<String>,
    /// End time.
    pub to: Option<String>,
    /// Start this long before the first congestion root.
    pub trigger_before: Option<String>,
}

/// Records the first congestion root.
struct FirstRoot(Option<u64>);

impl crate::switch::Observer for FirstRoot {
    fn event(&mut self, cycle: u64, _sw: u32, ev: crate::switch::SwitchEvent) {
        if self.0.is_none() && matches!(ev, crate::switch::SwitchEvent::RootDetected { .. }) {
            self.0 = Some(cycle);
        }
    }
}

/// The window of cycles to dump, from the request (a first pass finds the trigger).
fn wave_window(
    s: &Scenario,
    w: &WaveRequest,
    threads: usize,
) -> Result<Option<(u64, u64)>, String> {
    let time = |flag: &str, t: &str| s.time_base.cycles(t).map_err(|e| format!("--{flag}: {e}"));
    let mut from = w
        .from
        .as_deref()
        .map(|t| time("from", t))
        .transpose()?
        .unwrap_or(0);
    let to =
        w.to.as_deref()
            .map(|t| time("to", t))
            .transpose()?
            .unwrap_or(u64::MAX);
    if let Some(before) = &w.trigger_before {
        let before = time("trigger-before", before)?;
        let mut f = Fabric::build(&s.topology, s.params.clone(), &s.flows)?;
        f.set_threads(threads);
        let mut first = FirstRoot(None);
        // Window by window: the observer records the cycle of the first root exactly.
        while first.0.is_none() && f.now() < s.sim_cycles {
            f.run(f.window().min(s.sim_cycles - f.now()), &mut first)
                .map_err(|v| format!("run stopped: {v}"))?;
        }
        match first.0 {
            Some(c) => from = from.max(c.saturating_sub(before)),
            None => return Ok(None),
        }
    }
    if to < from {
        return Err("--to is before --from".into());
    }
    Ok(Some((from, to)))
}

/// Switches below which `--threads 0` steps on one thread.
const SMALL_FABRIC: usize = 32;

/// `arnsim run`: runs the scenario on `threads` threads (0: one per core, or one for a fabric of
/// fewer than [`SMALL_FABRIC`] switches), writes the outputs into `out` (default `waves/<name>`).
pub fn run(
    name_or_path: &str,
    out: Option<PathBuf>,
    overrides: &[String],
    waves: Option<WaveRequest>,
    threads: usize,
) -> Result<(), String> {
    let s = load(name_or_path, overrides)?;
    let threads = match threads {
        0 if s.topology.switches.len() < SMALL_FABRIC => 1,
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let out = out.unwrap_or_else(|| PathBuf::from("waves").join(&s.name));
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let window = match &waves {
        Some(w) => wave_window(&s, w, threads)?,
        None => None,
    };
    if waves.is_some() && window.is_none() {
        println!("no congestion root was detected: nothing to dump");
    }
    let mut fabric = Fabric::build(&s.topology, s.params.clone(), &s.flows)?;
    fabric.set_threads(threads);
    let mut vcd = match (&waves, window) {
        (Some(w), Some((from, _))) => {
            let (v, n) = FabricVcd::create(&w.path, &fabric, &w.scopes, from)
                .map_err(|e| format!("{}: {e}", w.path.display()))?;
            if n == 0 {
                return Err(format!(
                    "--scope {:?} selects no signal (names look like fabric.s1_0.out3.vc0.credits)",
                    w.scopes
                ));
            }
            Some(v)
        }
        _ => None,
    };
    let tap = vcd.as_ref().map(|v| v.tap(&fabric));
    let nodes = s.topology.nodes;
    let cycle_ns = s.time_base.cycle_ns();
    let progress = std::io::stderr().is_terminal();
    let t0 = Instant::now();
    let mut series = Series::default();
    let mut last = fabric.totals().nodes;
    let mut result = Ok(());
    while fabric.now() < s.sim_cycles {
        let n = s.bin_cycles.min(s.sim_cycles - fabric.now());
        let start = fabric.now();
        let stepped = match (&mut vcd, &tap, window) {
            (Some(v), Some(tap), Some((from, to))) if start + n > from && start <= to => {
                // Units record the dumped signals at every cycle of a window (no stepping cycle
                // by cycle); the samples are written in cycle order.
                let mut written = Ok(());
                let r = fabric.run_tapped(n, &mut (), tap, &mut |cycles, samples| {
                    if written.is_ok() {
                        written = v.samples(cycles, samples, from, to);
                    }
                });
                written.map_err(|e| format!("VCD: {e}"))?;
                r
            }
            _ => fabric.run(n, &mut ()),
        };
        if let Err(v) = stepped {
            result = Err(v);
            break;
        }
        let t = fabric.totals().nodes;
        series.push(
            fabric.now(),
            n,
            nodes,
            t.delivered_flits - last.delivered_flits,
            t.delivered_packets - last.delivered_packets,
            t.latency_sum - last.latency_sum,
        );
        last = t;
        if progress {
            let done = fabric.now() as f64 / s.sim_cycles as f64;
            let bar = (done * 30.0) as usize;
            eprint!(
                "\r[{}{}] {:5.1}%  {:.3}/{:.3} ms simulated  {:.0} cycles/s ",
                "#".repeat(bar),
                " ".repeat(30 - bar),
                done * 100.0,
                fabric.now() as f64 * cycle_ns / 1e6,
                s.sim_cycles as f64 * cycle_ns / 1e6,
                fabric.now() as f64 / t0.elapsed().as_secs_f64().max(1e-9)
            );
        }
    }
    if progress {
        eprintln!();
    }
    if let Some(v) = vcd {
        v.finish().map_err(|e| format!("VCD: {e}"))?;
    }
    if result.is_ok() {
        result = fabric.check();
    }
    let wall = t0.elapsed().as_secs_f64();
    let t = fabric.totals();
    let invariants = match &result {
        Ok(()) => "ok".to_string(),
        Err(v) => v.to_string(),
    };
    let mut j = String::from("{\n");
    let mut field = |k: &str, v: String| {
        let _ = writeln!(j, "  {}: {v},", json_str(k));
    };
    field("scenario", json_str(&s.name));
    field("file", json_str(s.doc.path()));
    field(
        "overrides",
        format!(
            "[{}]",
            overrides
                .iter()
                .map(|o| json_str(o))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    field("seed", s.seed.to_string());
    field("routing", json_str(s.params.switch.routing.name()));
    field("queuing", json_str(s.params.switch.queuing.name()));
    field("traffic", json_str(&s.pattern));
    field("nodes", nodes.to_string());
    field("switches", s.topology.switches.len().to_string());
    field("simulated_cycles", fabric.now().to_string());
    field(
        "simulated_us",
        format!("{:.3}", fabric.now() as f64 * cycle_ns / 1000.0),
    );
    field("wall_seconds", format!("{wall:.3}"));
    field("threads", threads.to_string());
    field("packets_generated", t.nodes.generated_packets.to_string());
    field("packets_injected", t.nodes.injected_packets.to_string());
    field("packets_delivered", t.nodes.delivered_packets.to_string());
    field("flits_injected", t.nodes.injected_flits.to_string());
    field("flits_delivered", t.nodes.delivered_flits.to_string());
    field(
        "mean_efficiency",
        format!("{:.6}", series.mean_efficiency()),
    );
    field(
        "mean_latency_us",
        format!(
            "{:.6}",
            t.nodes.latency_sum as f64 / t.nodes.delivered_packets.max(1) as f64 * cycle_ns
                / 1000.0
        ),
    );
    field(
        "max_latency_us",
        format!("{:.6}", t.nodes.latency_max as f64 * cycle_ns / 1000.0),
    );
    field("roots_detected", t.switches.roots_detected.to_string());
    field("arns_sent", t.switches.arns_sent.to_string());
    field(
        "arns_received_by_switches",
        t.switches.arns_received.to_string(),
    );
    field("arns_consumed", t.switches.arns_consumed.to_string());
    field("arns_received_by_nodes", t.nodes.arns_received.to_string());
    field("arns_consumed_by_nodes", t.nodes.arns_consumed.to_string());
    field("packets_adapted", t.switches.packets_adapted.to_string());
    field(
        "packets_isolated_by_nodes",
        t.nodes.packets_adapted.to_string(),
    );
    field(
        "packets_delivered_adapted",
        t.nodes.delivered_adapted.to_string(),
    );
    let _ = writeln!(j, "  \"invariants\": {}\n}}", json_str(&invariants));
    let write = |name: &str, text: &str| {
        let p = out.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
    };
    write("summary.json", &j)?;
    write("efficiency.csv", &series.efficiency_csv(cycle_ns))?;
    write("latency.csv", &series.latency_csv(cycle_ns))?;
    let title = format!(
        "{}: {} + {}, {} traffic",
        s.name,
        s.params.switch.routing.name(),
        s.params.switch.queuing.name(),
        s.pattern
    );
    write("efficiency.svg", &series.efficiency_svg(cycle_ns, &title))?;
    let _ = std::io::stdout().flush();
    println!(
        "{}: {} cycles ({:.3} ms) in {wall:.2} s on {threads} thread(s) ({:.0} cycles/s); mean efficiency {:.3}; {} packets delivered; {} roots, {} ARNs, {} adapted, {} isolated at sources; invariants {}; outputs in {}",
        s.name,
        fabric.now(),
        fabric.now() as f64 * cycle_ns / 1e6,
        fabric.now() as f64 / wall.max(1e-9),
        series.mean_efficiency(),
        t.nodes.delivered_packets,
        t.switches.roots_detected,
        t.switches.arns_sent,
        t.switches.packets_adapted,
        t.nodes.packets_adapted,
        if result.is_ok() { "ok" } else { "BROKEN" },
        out.display()
    );
    result.map_err(|v| format!("run stopped: {v}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_scenario_checks() {
        for (name, _) in BUNDLED {
            check(name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    /// Every output of two runs, byte for byte, except the summary's wall time and thread count.
    fn assert_same_outputs(a: &Path, b: &Path) {
        let strip = |d: &Path| -> String {
            std::fs::read_to_string(d.join("summary.json"))
                .unwrap()
                .lines()
                .filter(|l| !l.contains("\"wall_seconds\"") && !l.contains("\"threads\""))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(strip(a), strip(b), "summary.json of {a:?} and {b:?}");
        for f in ["efficiency.csv", "latency.csv", "efficiency.svg"] {
            assert!(
                std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(),
                "{f} of {a:?} and {b:?} differ"
            );
        }
    }

    #[test]
    fn outputs_do_not_depend_on_the_thread_count() {
        let base = std::env::temp_dir().join(format!("arnsim-threads-{}", std::process::id()));
        // Incast with ARNs (default), adaptation (figure4), and a paper fabric under uniform load.
        for (name, set) in [
            ("default", vec!["sim_time=60us".to_string()]),
            ("figure4", vec![]),
            ("paper/config1_rnd", vec!["sim_time=6us".to_string()]),
        ] {
            let dir = |t: usize| base.join(format!("{}-{t}", name.replace('/', "_")));
            for t in [1, 2, 3] {
                run(name, Some(dir(t)), &set, None, t).unwrap();
            }
            let summary = std::fs::read_to_string(dir(1).join("summary.json")).unwrap();
            assert!(summary.contains("\"invariants\": \"ok\""), "{summary}");
            assert!(summary.contains("\"threads\": 1"), "{summary}");
            assert_same_outputs(&dir(1), &dir(2));
            assert_same_outputs(&dir(1), &dir(3));
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn run_writes_every_output_and_is_deterministic() {
        let base = std::env::temp_dir().join(format!("arnsim-run-{}", std::process::id()));
        let set = vec!["sim_time=30us".to_string()];
        run("default", Some(base.join("a")), &set, None, 1).unwrap();
        run("default", Some(base.join("b")), &set, None, 1).unwrap();
        for f in [
            "summary.json",
            "efficiency.csv",
            "latency.csv",
            "efficiency.svg",
        ] {
            assert!(base.join("a").join(f).is_file(), "{f}");
        }
        let csv = |d: &str| std::fs::read_to_string(base.join(d).join("efficiency.csv")).unwrap();
        assert!(csv("a").starts_with("time_us,efficiency\n"));
        assert_eq!(csv("a"), csv("b"), "same scenario and seed, same CSV");
        let summary = std::fs::read_to_string(base.join("a/summary.json")).unwrap();
        assert!(summary.contains("\"invariants\": \"ok\""), "{summary}");
        assert!(
            summary.contains("\"overrides\": [\"sim_time=30us\"]"),
            "{summary}"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn windowed_dump_matches_the_cycle_by_cycle_dump() {
        // Configuration 1 has 6-cycle links, so the tapped run steps windows of 6 cycles.
        let s = load("paper/config1_h10", &["sim_time=3us".to_string()]).unwrap();
        let base = std::env::temp_dir().join(format!("arnsim-tap-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        // Units of both halves of the fabric, so that two threads hand on samples out of signal
        // order.
        let scopes: Vec<String> = [
            "fabric.s1_0.*",
            "fabric.n3.*",
            "fabric.s3_0.out1.*",
            "fabric.n300.*",
        ]
        .map(String::from)
        .to_vec();
        let (from, to) = (100, 500);
        let dump = |name: &str, windowed: bool, threads: usize, finished: bool| {
            let mut f = Fabric::build(&s.topology, s.params.clone(), &s.flows).unwrap();
            f.set_threads(threads);
            assert!(f.window() > 1);
            let path = base.join(name);
            let (mut v, n) = FabricVcd::create(&path, &f, &scopes, from).unwrap();
            assert!(n > 20, "{n} signals");
            if windowed {
                let tap = v.tap(&f);
                assert_eq!(crate::fabric::Tap::signals(&tap), n);
                f.run_tapped(s.sim_cycles, &mut (), &tap, &mut |c, w| {
                    v.samples(c, w, from, to).unwrap()
                })
                .unwrap();
            } else {
                for c in 0..s.sim_cycles {
                    f.step(&mut ()).unwrap();
                    if (from..=to).contains(&c) {
                        v.sample(&f, c).unwrap();
                    }
                }
            }
            if finished {
                v.finish().unwrap();
            } else {
                drop(v);
            }
            std::fs::read(&path).unwrap()
        };
        let reference = dump("cycles.vcd", false, 1, true);
        assert!(reference.len() > 10_000);
        assert!(
            dump("windows.vcd", true, 1, true) == reference,
            "one thread"
        );
        assert!(
            dump("windows2.vcd", true, 2, true) == reference,
            "two threads"
        );
        // A dump dropped unfinished (a run cut short) keeps every cycle it was given.
        assert!(dump("dropped.vcd", true, 1, false) == reference, "dropped");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn fabric_vcd_is_chosen_by_scope_and_repeatable() {
        let base = std::env::temp_dir().join(format!("arnsim-vcd-{}", std::process::id()));
        let set = vec!["sim_time=80us".to_string()];
        let waves = |name: &str| {
            Some(WaveRequest {
                path: base.join(name),
                scopes: vec!["fabric.s2_*.out1.*".into(), "fabric.n5.*".into()],
                from: None,
                to: None,
                trigger_before: Some("2us".into()),
            })
        };
        run("default", Some(base.join("r")), &set, waves("a.vcd"), 1).unwrap();
        run("default", Some(base.join("r")), &set, waves("b.vcd"), 1).unwrap();
        run("default", Some(base.join("r")), &set, waves("c.vcd"), 2).unwrap();
        let a = std::fs::read(base.join("a.vcd")).unwrap();
        assert_eq!(
            a,
            std::fs::read(base.join("b.vcd")).unwrap(),
            "same run, same VCD bytes"
        );
        assert!(
            a == std::fs::read(base.join("c.vcd")).unwrap(),
            "one thread and two threads, same VCD bytes"
        );
        let text = String::from_utf8(a).unwrap();
        assert!(text.contains("$scope module s2_3 $end") && text.contains("$scope module n5 $end"));
        assert!(!text.contains("s1_0"), "only the chosen scopes");
        // The dump parses as VCD and starts at most 2 us before the first root.
        let mut p = vcd::Parser::new(text.as_bytes());
        let header = p.parse_header().unwrap();
        assert!(
            header
                .find_var(&["fabric", "s2_0", "out1", "busy"])
                .is_some()
        );
        let first = p
            .find_map(|c| match c.unwrap() {
                vcd::Command::Timestamp(t) => Some(t),
                _ => None,
            })
            .unwrap();
        assert!(first > 0);
        let gtkw = std::fs::read_to_string(base.join("a.gtkw")).unwrap();
        assert!(
            gtkw.contains("-fabric.s2_0.out1")
                && gtkw.contains("fabric.s2_0.out1.vc0.credits[15:0]")
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn figure4_scenario_adapts_the_flow_through_c() {
        let dir = std::env::temp_dir().join(format!("arnsim-fig4-{}", std::process::id()));
        run("figure4", Some(dir.clone()), &[], None, 2).unwrap();
        let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
        let field = |k: &str| -> u64 {
            let at = summary
                .find(&format!("\"{k}\": "))
                .unwrap_or_else(|| panic!("{k}"));
            summary[at + k.len() + 4..]
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        assert!(field("roots_detected") >= 1, "{summary}");
        assert!(field("arns_consumed") >= 1, "{summary}");
        assert!(field("packets_adapted") > 0, "{summary}");
        assert!(field("packets_delivered_adapted") > 0, "{summary}");
        assert!(summary.contains("\"invariants\": \"ok\""), "{summary}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unknown_scenarios_are_named() {
        let e = load("no-such-thing", &[]).unwrap_err();
        assert!(
            e.contains("no-such-thing") && e.contains("arnsim scenarios"),
            "{e}"
        );
    }
}
