//! A fabric dump fed by a run: its VCD, its FST or both, written from the same samples (the
//! run's tap records each dumped signal once, and each file writes the window's cycles).

use super::fabric_fst::FabricFst;
use super::fabric_tap::FabricTap;
use super::fabric_vcd::{FabricSignal, FabricVcd, Src};
use crate::fabric::{Fabric, Sample};
use std::io;
use std::ops::Range;

/// The files of a fabric dump, each written from the same changes.
pub struct FabricWaves {
    /// The VCD, with `--vcd`.
    pub vcd: Option<FabricVcd>,
    /// The FST, with `--fst`.
    pub fst: Option<FabricFst>,
    srcs: Vec<Src>,
}

/// `e` with the format of the file it happened in.
fn tagged(format: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{format}: {e}"))
}

impl FabricWaves {
    /// The dump of `chosen` (both writers, when given, made for the same signals).
    pub fn new(chosen: &[FabricSignal], vcd: Option<FabricVcd>, fst: Option<FabricFst>) -> Self {
        FabricWaves {
            vcd,
            fst,
            srcs: chosen.iter().map(|s| s.src).collect(),
        }
    }

    /// The dumped signals grouped per switch and node of `f`, for [`Fabric::run_tapped`].
    pub fn tap<const V: usize>(&self, f: &Fabric<V>) -> FabricTap {
        FabricTap::new(f, self.srcs.iter().copied())
    }

    /// Writes the `cycles` of a window of [`Fabric::run_tapped`] into each file (see
    /// [`FabricVcd::samples`]); an error names the format it happened in.
    pub fn samples(
        &mut self,
        cycles: Range<u64>,
        changes: &[Sample],
        from: u64,
        to: u64,
    ) -> io::Result<()> {
        if let Some(v) = &mut self.vcd {
            v.samples(cycles.clone(), changes, from, to)
                .map_err(|e| tagged("VCD", e))?;
        }
        if let Some(f) = &mut self.fst {
            f.samples(cycles, changes, from, to)
                .map_err(|e| tagged("FST", e))?;
        }
        Ok(())
    }
}
