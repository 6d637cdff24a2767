//! GTKWave save files (`.gtkw`) that open a block VCD with its signals grouped.

use super::{SignalList, Visit};
use std::io::{self, Write};
use std::path::Path;

/// Writes a save file for the VCD at `vcd_path` of block `block`: the clock and cycle counter,
/// then one group each for inputs, outputs and registers, vectors shown in hexadecimal.
pub fn write_block_gtkw(
    out: &mut dyn Write,
    vcd_path: &Path,
    block: &str,
    groups: &[(&str, &SignalList)],
) -> io::Result<()> {
    writeln!(out, "[dumpfile] \"{}\"", vcd_path.display())?;
    writeln!(out, "[timestart] 0")?;
    // Zoom: about thirty cycles across a normal window.
    writeln!(
        out,
        "*-16.000000 {} -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1",
        super::cycle_time_ps(0)
    )?;
    writeln!(out, "[sst_expanded] 1")?;
    writeln!(out, "@28")?;
    writeln!(out, "TOP.tb_{block}.clk_i")?;
    writeln!(out, "@24")?;
    writeln!(out, "TOP.tb_{block}.cycle_q[63:0]")?;
    for (name, list) in groups {
        writeln!(out, "@800200")?;
        writeln!(out, "-{name}")?;
        for (sig, width) in &list.signals {
            if *width == 1 {
                writeln!(out, "@28")?;
                writeln!(out, "TOP.tb_{block}.u_dut.{sig}")?;
            } else {
                writeln!(out, "@22")?;
                writeln!(out, "TOP.tb_{block}.u_dut.{sig}[{}:0]", width - 1)?;
            }
        }
        writeln!(out, "@1000200")?;
        writeln!(out, "-{name}")?;
    }
    Ok(())
}

/// A [`SignalList`] filled by one probe call.
pub fn signals_of(probe: impl FnOnce(&mut dyn Visit)) -> SignalList {
    let mut l = SignalList::default();
    probe(&mut l);
    l
}
