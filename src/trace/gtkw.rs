//! GTKWave save files (`.gtkw`) that open a dump on its whole window, signals grouped, counts in
//! decimal and every row named so that it can be told from the others.
//!
//! What GTKWave 3.3 does with these lines: `[savefile]` names the save file itself, so that the
//! relative `[dumpfile]` is looked up beside the save file whatever the working folder; `[size]`,
//! `[sst_width]` and `[signals_width]` fix the window and its panes; the `*<zoom> <marker> ...`
//! line sets the zoom, `2^-zoom` time units per 200 pixels (negative: zoomed in), and the
//! primary marker, whose values the signal pane shows; `[timestart]` is the time at the left edge.
//! A trace line is `<full name>[msb:0]` after an `@<flags>` line (hexadecimal bits: 0x2 hex,
//! 0x4 decimal, 0x8 binary, 0x20 right-justified, 0x200 blank row, 0x800000 group start,
//! 0x1000000 group end); `+{alias} <full name>` shows the row as `alias`. GTKWave shows a row,
//! aliased or not, by the last `.`-level of its name (its `hier_max_level` is 1 when no rc file
//! sets it), so rows of the fabric carry an alias naming the switch, port and VC with `/`.
//! `^1 <file>` before a row flagged 0x2000 shows its values through a translate filter file
//! (value, then text, a line each), looked up beside the save file as the dump is.

use super::fabric_vcd::FabricSignal;
use super::{SignalList, Visit, cycle_time_ps};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The window GTKWave opens, in pixels (fits a 1440 x 900 screen).
pub const WINDOW: (u32, u32) = (1400, 860);
/// The hierarchy pane's width.
const SST_WIDTH: u32 = 220;
/// The signal name pane's width.
const SIGNALS_WIDTH: u32 = 340;
/// The width the zoom is computed for: what is left for the waves less the panes' borders and the
/// scroll bar (GTKWave 3.3.118 draws 760 pixels of waves in this window), and a little to spare so
/// that the last sample is on screen.
pub const WAVE_PIXELS: u32 = WINDOW.0 - SST_WIDTH - SIGNALS_WIDTH - 90;

/// Trace flags: right-justified binary, decimal, hexadecimal.
pub const BIN: &str = "28";
/// Right-justified decimal shown through the translate filter named before the row (0x2000).
pub const DEC_FILTERED: &str = "2024";
/// Right-justified decimal.
pub const DEC: &str = "24";
/// Right-justified hexadecimal.
pub const HEX: &str = "22";

/// GTKWave's zoom for `span` time units across [`WAVE_PIXELS`]: the log2 of the time units in a
/// frame of 200 pixels, negated, and never above 0 (one time unit per frame).
pub fn zoom_for(span: u64) -> f64 {
    let per_frame = span.max(1) as f64 * 200.0 / WAVE_PIXELS as f64;
    (-per_frame.log2()).min(0.0)
}

/// Writes the lines that place the view: the dump and save file (names beside each other), the
/// window, `[timestart] start` and the zoom that shows `start..end` (time units), the primary
/// marker at `start`.
pub fn write_view(
    o: &mut dyn Write,
    vcd_name: &str,
    gtkw_name: &str,
    start: u64,
    end: u64,
) -> io::Result<()> {
    writeln!(o, "[dumpfile] \"{vcd_name}\"")?;
    writeln!(o, "[savefile] \"{gtkw_name}\"")?;
    writeln!(o, "[timestart] {start}")?;
    writeln!(o, "[size] {} {}", WINDOW.0, WINDOW.1)?;
    writeln!(o, "[pos] -1 -1")?;
    write!(o, "*{:.6} {start}", zoom_for(end.saturating_sub(start)))?;
    // The 26 named markers, unset.
    writeln!(o, "{}", " -1".repeat(26))?;
    writeln!(o, "[sst_width] {SST_WIDTH}")?;
    writeln!(o, "[signals_width] {SIGNALS_WIDTH}")?;
    writeln!(o, "[sst_expanded] 1")?;
    Ok(())
}

/// A GTKWave translate filter for the congestion detector's state (`detector_state` of a fabric
/// dump, `state_q` of the block, both the HDL encoding): each line a value as the row prints it
/// (decimal) and the text shown instead.
pub const DETECTOR_STATES: &str =
    "# arnsim: congestion detector states (GTKWave translate filter)\n0 idle\n1 wait\n2 root\n";

/// The translate filter written beside the dump `vcd`: `fabric.vcd` gives `fabric.states.txt`.
pub fn states_path(vcd: &Path) -> PathBuf {
    vcd.with_extension("states.txt")
}

/// Writes a row shown through the translate filter file `filter` (a name GTKWave looks up beside
/// the save file), or a decimal row without one.
fn write_states(
    o: &mut dyn Write,
    filter: Option<&str>,
    alias: Option<&str>,
    name: &str,
    width: u32,
) -> io::Result<()> {
    match filter {
        Some(f) => {
            writeln!(o, "^1 {f}")?;
            write_trace(o, DEC_FILTERED, alias, name, width)
        }
        None => write_trace(o, DEC, alias, name, width),
    }
}

/// Writes one row: `flags`, then the signal `name` (with `[msb:0]` when wider than one bit),
/// shown as `alias` when given.
pub fn write_trace(
    o: &mut dyn Write,
    flags: &str,
    alias: Option<&str>,
    name: &str,
    width: u32,
) -> io::Result<()> {
    writeln!(o, "@{flags}")?;
    if let Some(a) = alias {
        write!(o, "+{{{a}}} ")?;
    }
    if width > 1 {
        writeln!(o, "{name}[{}:0]", width - 1)
    } else {
        writeln!(o, "{name}")
    }
}

/// Opens (`open`) or closes a group titled `title`.
pub fn write_group(o: &mut dyn Write, open: bool, title: &str) -> io::Result<()> {
    let flags = if open { "800200" } else { "1000200" };
    writeln!(o, "@{flags}\n-{title}")
}

/// How many cycles a block save file shows on opening (the reset and the first cycles of the
/// stimulus, about 8 pixels a cycle), or the whole run when it is shorter.
pub const BLOCK_VIEW_CYCLES: u64 = 100;

/// Block signals whose bits are masks or packed fields, shown in hexadecimal (by the name's
/// stem: request and grant vectors, port masks and packed port lists, the detector's set of
/// VOQs above threshold, the ARN root-information bits).
const BLOCK_HEX: &[&str] = &["req_", "gnt_", "_mask_", "_ports_", "over_", "root_info_"];

/// The flags of a block signal: binary for one bit, hexadecimal for masks, decimal otherwise
/// (counts, ids, ports, VCs, destinations, states).
fn block_flags(name: &str, width: u32) -> &'static str {
    if width == 1 {
        BIN
    } else if BLOCK_HEX.iter().any(|h| name.contains(h)) {
        HEX
    } else {
        DEC
    }
}

/// Writes a save file for the VCD at `vcd_path` of block `block`, run for `cycles` cycles: the
/// clock and cycle counter, then one group each for inputs, outputs and registers; the view
/// opens at time 0 on the first [`BLOCK_VIEW_CYCLES`] cycles. A register `state_q` is shown through
/// the translate filter file `states` ([`DETECTOR_STATES`]) when one is given.
pub fn write_block_gtkw(
    out: &mut dyn Write,
    vcd_path: &Path,
    block: &str,
    groups: &[(&str, &SignalList)],
    cycles: u64,
    states: Option<&str>,
) -> io::Result<()> {
    let gtkw = vcd_path.with_extension("gtkw");
    let end = cycle_time_ps(cycles.clamp(1, BLOCK_VIEW_CYCLES));
    write_view(
        out,
        &vcd_path.display().to_string(),
        &gtkw.display().to_string(),
        0,
        end,
    )?;
    let tb = format!("TOP.tb_{block}");
    write_trace(out, BIN, None, &format!("{tb}.clk_i"), 1)?;
    write_trace(out, DEC, None, &format!("{tb}.cycle_q"), 64)?;
    for (name, list) in groups {
        write_group(out, true, name)?;
        for (sig, width) in &list.signals {
            let name = format!("{tb}.u_dut.{sig}");
            if sig == "state_q" && states.is_some() {
                write_states(out, states, None, &name, *width)?;
            } else {
                write_trace(out, block_flags(sig, *width), None, &name, *width)?;
            }
        }
        write_group(out, false, name)?;
    }
    Ok(())
}

/// The group of a fabric signal: its switch and port (`fabric.s1_0.out3`, `fabric.s1_0.arn_table`)
/// or its end node (`fabric.n4`).
fn fabric_group(name: &str) -> &str {
    let levels = if name.starts_with("fabric.s") { 3 } else { 2 };
    let end = name
        .match_indices('.')
        .nth(levels - 1)
        .map_or(name.len(), |(i, _)| i);
    &name[..end]
}

/// The name a fabric row shows: the full name below `fabric`, levels parted by `/`
/// (`s1_0/out3/vc0/credits`). GTKWave cuts a row's name, alias or not, to the part after its
/// last `.` (`hier_max_level` 1), which would leave `credits` on every VC's row.
pub fn fabric_alias(name: &str) -> String {
    name.strip_prefix("fabric.")
        .unwrap_or(name)
        .replace('.', "/")
}

/// Writes a GTKWave save file for a dump of `sigs` named `vcd_name` (the VCD's file name, the
/// save file `gtkw_name` sitting beside it) whose samples are those of cycles `first..=last`:
/// the clock and cycle counter, then the signals grouped per switch and port, each row named by
/// its switch, port and VC (`s1_0/out3/vc0/credits`), one-bit signals in binary and every other
/// (counts, credits, ids, header fields) in decimal, detector states through the translate filter
/// file `states` ([`DETECTOR_STATES`], decimal without one). The view opens on the whole window.
pub fn write_fabric_gtkw(
    o: &mut dyn Write,
    vcd_name: &str,
    gtkw_name: &str,
    states: Option<&str>,
    sigs: &[FabricSignal],
    first: u64,
    last: u64,
) -> io::Result<()> {
    // The sample of cycle c sits at the edge that opens cycle c + 1; the last one lasts a period.
    let start = cycle_time_ps(first + 1);
    let end = cycle_time_ps(last.max(first) + 2);
    write_view(o, vcd_name, gtkw_name, start, end)?;
    write_trace(o, BIN, None, "fabric.clk", 1)?;
    write_trace(o, DEC, None, "fabric.cycle", 64)?;
    let mut group: Option<&str> = None;
    for s in sigs {
        let g = fabric_group(&s.name);
        if group != Some(g) {
            if let Some(old) = group {
                write_group(o, false, old)?;
            }
            write_group(o, true, g)?;
            group = Some(g);
        }
        let alias = fabric_alias(&s.name);
        if s.name.ends_with(".detector_state") {
            write_states(o, states, Some(&alias), &s.name, s.width)?;
        } else {
            let flags = if s.width == 1 { BIN } else { DEC };
            write_trace(o, flags, Some(&alias), &s.name, s.width)?;
        }
    }
    if let Some(old) = group {
        write_group(o, false, old)?;
    }
    Ok(())
}

/// A [`SignalList`] filled by one probe call.
pub fn signals_of(probe: impl FnOnce(&mut dyn Visit)) -> SignalList {
    let mut l = SignalList::default();
    probe(&mut l);
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoom_shows_the_span_across_the_waves() {
        // 2^-zoom time units per 200 pixels.
        for span in [5120u64, 512_000, 40_000_000, 120_000_000_000] {
            let z = zoom_for(span);
            let shown = 2f64.powf(-z) / 200.0 * WAVE_PIXELS as f64;
            assert!((shown / span as f64 - 1.0).abs() < 1e-9, "{span}: {z}");
        }
        assert_eq!(zoom_for(0), 0.0);
        // 40 us across 750 pixels: about 2^23.3 ps per 200 pixels.
        assert!((-23.5..-23.2).contains(&zoom_for(40_000_000)));
    }

    #[test]
    fn block_masks_in_hex_counts_in_decimal() {
        assert_eq!(block_flags("req_i", 24), HEX);
        assert_eq!(block_flags("gnt_o", 24), HEX);
        assert_eq!(block_flags("rd_mask_q", 4), HEX);
        assert_eq!(block_flags("rd_ports_o", 32), HEX);
        assert_eq!(block_flags("over_q", 4), HEX);
        assert_eq!(block_flags("lk_root_info_o[2]", 8), HEX);
        assert_eq!(block_flags("cnt_q", 16), DEC);
        assert_eq!(block_flags("voq_occ_i[0]", 16), DEC);
        assert_eq!(block_flags("arn_id_q[3]", 32), DEC);
        assert_eq!(block_flags("idx_o", 5), DEC);
        assert_eq!(block_flags("ack_i", 1), BIN);
    }
}
