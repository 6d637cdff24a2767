//! Block-level demo: each block on its seeded random stimulus, dumped to VCD for GTKWave. The
//! files are written under temporary names and renamed into place once every block is done.

use super::outputs::{Staged, make_folder};
use crate::blocks::congestion_detector::DetectorConfig;
use crate::blocks::congestion_table::CongestionTable;
use crate::blocks::route_cache::RouteCache;
use crate::blocks::{ArnTable, Block, CongestionDetector, CreditCounter, LftBanks, RrArbiter};
use crate::blocks::{CongestionPoint, FecnMarker};
use crate::stimulus::Stimulus;
use crate::stimulus::arn_table::RandomArnOps;
use crate::stimulus::congestion_detector::RandomCongestion;
use crate::stimulus::congestion_point::RandomArrivals;
use crate::stimulus::congestion_table::RandomSnoops;
use crate::stimulus::credit_counter::RandomCredits;
use crate::stimulus::fecn_marker::RandomGrants;
use crate::stimulus::lft_banks::RandomLft;
use crate::stimulus::route_cache::RandomFlows;
use crate::stimulus::rr_arbiter::RandomRequests;
use crate::trace::{
    BlockVcd, DETECTOR_STATES, VcdWindow, signals_of, states_path, write_block_gtkw,
};
use std::io::BufWriter;
use std::path::Path;
use std::time::Instant;

/// Turns an I/O error on `p` into a message naming the file.
fn err(p: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{}: {e}", p.display())
}

/// The file name of `p`, as a save file names the files beside it.
fn file_name(p: &Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap_or_default()
}

/// Runs `block` on `stim` for `cycles` cycles, writing `dir/<name>.vcd` and `dir/<name>.gtkw`
/// (and for the congestion detector the translate filter `dir/<name>.states.txt`) under their
/// temporary names. Returns the number of signals dumped and the files, to be committed.
pub fn dump_block<B: Block, S: Stimulus<B::In>>(
    mut block: B,
    mut stim: S,
    cycles: u64,
    dir: &Path,
    name: &str,
) -> Result<(usize, Vec<Staged>), String> {
    let vcd_path = dir.join(format!("{name}.vcd"));
    let gtkw_path = dir.join(format!("{name}.gtkw"));
    let mut vcd_file = Staged::open(&vcd_path)?;
    let mut gtkw_file = Staged::open(&gtkw_path)?;
    // The congestion detector's state register is shown through a translate filter.
    let states_path = states_path(&vcd_path);
    let mut states_file = match B::NAME == CongestionDetector::NAME {
        true => Some(Staged::open(&states_path)?),
        false => None,
    };
    let file = vcd_file.take_file()?;
    block.reset();
    let (i0, o0) = (B::In::default(), B::Out::default());
    let inputs = signals_of(|v| block.probe_inputs(&i0, v));
    let outputs = signals_of(|v| block.probe_outputs(&o0, v));
    let regs = signals_of(|v| block.probe_regs(v));
    let mut vcd = BlockVcd::new(BufWriter::new(file), B::NAME, VcdWindow::ALL, |v| {
        block.probe_inputs(&i0, v);
        block.probe_outputs(&o0, v);
        block.probe_regs(v);
    })
    .map_err(err(&vcd_path))?;
    for c in 0..cycles {
        let inp = stim.next(c);
        let out = block.evaluate(&inp);
        vcd.sample(c, |v| {
            block.probe_inputs(&inp, v);
            block.probe_outputs(&out, v);
            block.probe_regs(v);
        })
        .map_err(err(&vcd_path))?;
        block.commit();
    }
    vcd.finish().map_err(err(&vcd_path))?;
    let mut g = Vec::new();
    let vcd_name = Path::new(vcd_path.file_name().unwrap_or_default());
    write_block_gtkw(
        &mut g,
        vcd_name,
        B::NAME,
        &[
            ("inputs", &inputs),
            ("outputs", &outputs),
            ("registers", &regs),
        ],
        cycles,
        states_file.as_ref().map(|_| file_name(&states_path)),
    )
    .map_err(err(&gtkw_path))?;
    gtkw_file.write(&g)?;
    let n = inputs.signals.len() + outputs.signals.len() + regs.signals.len();
    let mut files = vec![vcd_file, gtkw_file];
    if let Some(mut f) = states_file.take() {
        f.write(DETECTOR_STATES.as_bytes())?;
        files.push(f);
    }
    Ok((n, files))
}

/// `arnsim demo`.
pub fn run(out: &Path, cycles: u64, seed: u64) -> Result<(), String> {
    if out.as_os_str().is_empty() {
        return Err("--out: an empty path (give a folder)".into());
    }
    make_folder(out).map_err(|e| format!("--out {e}"))?;
    crate::outln!(
        "block-level demo: {cycles} cycles per block, seed {seed}, into {}",
        out.display()
    );
    crate::outln!(
        "(the fabric command line is not there yet; this runs each block on its seeded stimulus)"
    );
    let t0 = Instant::now();
    let mut files = Vec::new();
    let mut row = |name: &str, params: &str, r: Result<(usize, Vec<Staged>), String>| {
        let (n, f) = r?;
        files.extend(f);
        crate::outln!("  {name:<22} {params:<42} {n:>4} signals  {name}.vcd  {name}.gtkw");
        Ok::<(), String>(())
    };
    let n = 24;
    let arb = dump_block(
        RrArbiter::new(n),
        RandomRequests::new(n, seed),
        cycles,
        out,
        RrArbiter::NAME,
    );
    row(RrArbiter::NAME, "N=24 (12 ports x 2 VCs)", arb)?;
    let cc = CreditCounter::new(84);
    let r = dump_block(
        cc,
        RandomCredits::new(84, seed, false),
        cycles,
        out,
        CreditCounter::NAME,
    );
    row(CreditCounter::NAME, "Cap=84 (one VC of 84 flits)", r)?;
    let lft = LftBanks::new(2, 32);
    let r = dump_block(
        lft,
        RandomLft::new(2, 32, cycles, seed),
        cycles,
        out,
        LftBanks::NAME,
    );
    row(LftBanks::NAME, "Lmc=2, Rows=32", r)?;
    let cam = ArnTable::new(8, 4, 64);
    let r = dump_block(
        cam,
        RandomArnOps::new(4, 64, seed),
        cycles,
        out,
        ArnTable::NAME,
    );
    row(ArnTable::NAME, "Entries=8, Ports=4, Ttl=64", r)?;
    let cfg = DetectorConfig::new(4, 80, 63, 15, 16);
    let det = CongestionDetector::new(cfg);
    let r = dump_block(
        det,
        RandomCongestion::new(cfg, seed),
        cycles,
        out,
        CongestionDetector::NAME,
    );
    row(
        CongestionDetector::NAME,
        "P=4, HCDTh=80, LCDTh=63, FCTh=15, CRT=16",
        r,
    )?;
    let table = CongestionTable::new(8, 2, 8, 40);
    let r = dump_block(
        table,
        RandomSnoops::new(2, 8, 40, seed),
        cycles,
        out,
        CongestionTable::NAME,
    );
    row(CongestionTable::NAME, "Entries=8, Lk=2, Ports=8, Ttl=40", r)?;
    let r = dump_block(
        RouteCache::new(8),
        RandomFlows::new(seed),
        cycles,
        out,
        RouteCache::NAME,
    );
    row(RouteCache::NAME, "Entries=8", r)?;
    let r = dump_block(
        CongestionPoint::new(8),
        RandomArrivals::new(8, seed),
        cycles,
        out,
        CongestionPoint::NAME,
    );
    row(CongestionPoint::NAME, "P=8", r)?;
    let r = dump_block(
        FecnMarker::default(),
        RandomGrants::new(seed),
        cycles,
        out,
        FecnMarker::NAME,
    );
    row(FecnMarker::NAME, "(one output)", r)?;
    for f in files {
        f.commit()?;
    }
    crate::outln!(
        "done in {:.2} s; open with: gtkwave {}/<block>.gtkw",
        t0.elapsed().as_secs_f64(),
        out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEMO_FILES: &[&str] = &[
        "rr_arbiter.vcd",
        "rr_arbiter.gtkw",
        "credit_counter.vcd",
        "lft_banks.vcd",
        "arn_table.vcd",
        "congestion_detector.vcd",
        "congestion_table.vcd",
        "route_cache.vcd",
        "congestion_point.vcd",
        "fecn_marker.vcd",
    ];

    #[test]
    fn demo_writes_vcd_and_gtkw_per_block() {
        let (_tmp, dir) = crate::scratch::folder("demo");
        run(&dir, 200, 3).unwrap();
        let vcd = std::fs::read_to_string(dir.join("rr_arbiter.vcd")).unwrap();
        assert!(vcd.contains("$scope module tb_rr_arbiter $end"));
        assert!(vcd.contains("#1021440\n"), "last cycle (199) is dumped");
        for b in [
            "credit_counter",
            "lft_banks",
            "arn_table",
            "congestion_detector",
            "congestion_table",
            "route_cache",
            "congestion_point",
            "fecn_marker",
        ] {
            let v = std::fs::read_to_string(dir.join(format!("{b}.vcd"))).unwrap();
            assert!(v.contains(&format!("$scope module tb_{b} $end")), "{b}");
            assert!(dir.join(format!("{b}.gtkw")).exists(), "{b}");
        }
        let gtkw = std::fs::read_to_string(dir.join("rr_arbiter.gtkw")).unwrap();
        assert!(
            gtkw.contains("@22\nTOP.tb_rr_arbiter.u_dut.req_i[23:0]\n"),
            "a mask in hex"
        );
        assert!(
            gtkw.contains("@24\nTOP.tb_rr_arbiter.u_dut.idx_o[4:0]\n"),
            "an index in decimal"
        );
        // The first 100 cycles of the 200 from time 0, reset included.
        let zoom = crate::trace::zoom_for(crate::trace::cycle_time_ps(100));
        assert!(gtkw.contains("[timestart] 0\n"));
        assert!(gtkw.contains(&format!("\n*{zoom:.6} 0 -1 ")), "{gtkw}");
        let c = std::fs::read_to_string(dir.join("credit_counter.gtkw")).unwrap();
        assert!(
            c.contains("@24\nTOP.tb_credit_counter.u_dut.cnt_q[15:0]\n"),
            "a count in decimal"
        );
        for b in [
            "rr_arbiter",
            "credit_counter",
            "lft_banks",
            "arn_table",
            "congestion_detector",
            "congestion_table",
            "route_cache",
            "congestion_point",
            "fecn_marker",
        ] {
            let g = std::fs::read_to_string(dir.join(format!("{b}.gtkw"))).unwrap();
            let v = std::fs::read_to_string(dir.join(format!("{b}.vcd"))).unwrap();
            assert!(g.starts_with(&format!(
                "[dumpfile] \"{b}.vcd\"\n[savefile] \"{b}.gtkw\"\n"
            )));
            let rows = crate::trace::gtkw_check::rows(&g);
            assert!(rows.len() > 4, "{b}");
            // Each row reads differently in the names column, its index kept.
            let mut shown = std::collections::BTreeSet::new();
            for r in &rows {
                let s = crate::trace::gtkw_check::shown_name(r);
                assert!(shown.insert(s.clone()), "{b}: two rows read {s}");
            }
            // The first 100 of the 200 cycles across the waves GTKWave draws, from time 0.
            let view = crate::trace::gtkw_check::view(&g);
            let (a, z) = view.shown(crate::trace::gtkw_check::DRAWN_WAVE_PIXELS);
            let end = crate::trace::cycle_time_ps(100);
            assert!(
                a == 0 && view.marker == 0 && z >= end && z < end + end / 20,
                "{b}: {a}..{z}"
            );
            let missing = crate::trace::gtkw_check::missing(&g, &v);
            assert!(
                missing.is_empty(),
                "{b}: rows GTKWave would drop: {missing:?}"
            );
        }
        let g = std::fs::read_to_string(dir.join("congestion_detector.gtkw")).unwrap();
        assert!(g.contains(
            "^1 congestion_detector.states.txt\n@2024\nTOP.tb_congestion_detector.u_dut.state_q[1:0]\n"
        ));
        let states = std::fs::read_to_string(dir.join("congestion_detector.states.txt")).unwrap();
        assert_eq!(states, crate::trace::DETECTOR_STATES);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            19,
            "a VCD and a save file per block, the detector's state filter, no temporary file"
        );
        // An output folder that cannot be made changes nothing.
        let blocker = dir.join("rr_arbiter.vcd");
        let e = run(&blocker.join("sub"), 10, 1).unwrap_err();
        assert!(e.contains("rr_arbiter.vcd"), "{e}");
        assert_eq!(std::fs::read_to_string(&blocker).unwrap(), vcd);
    }

    #[test]
    fn same_seed_same_bytes() {
        let (_tmp, dir) = crate::scratch::folder("demo-same");
        let (a, b) = (dir.join("a"), dir.join("b"));
        run(&a, 300, 9).unwrap();
        run(&b, 300, 9).unwrap();
        for f in DEMO_FILES {
            assert_eq!(
                std::fs::read(a.join(f)).unwrap(),
                std::fs::read(b.join(f)).unwrap(),
                "{f}"
            );
        }
    }
}
