//! The dumped window of a fabric run fed to a waveform writer (the VCD or the FST) from the
//! changes the run's tap recorded: before the window's first cycle only each signal's current
//! value is kept; that cycle shows every signal; every later cycle up to the window's end
//! writes the recorded changes. Both formats take the same cycles and values from here.

use crate::fabric::Sample;
use std::io;
use std::ops::Range;

/// A waveform file as [`DumpWindow::feed`] writes it, one cycle's sample at a time.
pub(super) trait WaveSink {
    /// Opens cycle `c`'s sample (its time, the clock's rising edge, the cycle counter).
    fn open_cycle(&mut self, c: u64) -> io::Result<()>;
    /// Signal `k` shows `v` in the window's first cycle.
    fn show(&mut self, k: usize, v: u64) -> io::Result<()>;
    /// Signal `k` changed to `v` (the tap records changes only).
    fn change(&mut self, k: usize, v: u64) -> io::Result<()>;
    /// Closes cycle `c`'s sample (the clock's falling edge).
    fn close_cycle(&mut self, c: u64) -> io::Result<()>;
}

/// Where a dump stands in its window.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct DumpWindow {
    /// Per signal, until the first cycle is written: its value after the last cycle fed.
    current: Vec<Option<u64>>,
    /// Whether a cycle has been written.
    started: bool,
}

impl DumpWindow {
    /// A window of `signals` signals, before its first cycle.
    pub(super) fn new(signals: usize) -> Self {
        DumpWindow {
            current: vec![None; signals],
            started: false,
        }
    }

    /// Records that a cycle has been written by other means (a sample read from the fabric).
    pub(super) fn mark_started(&mut self) {
        self.started = true;
    }

    /// Writes the `cycles` of a window of [`crate::fabric::Fabric::run_tapped`] from its
    /// `changes` (sorted by cycle, then signal; every signal changes in the first cycle its tap
    /// records) into `sink`, keeping the cycles in `from..=to`.
    pub(super) fn feed(
        &mut self,
        sink: &mut impl WaveSink,
        cycles: Range<u64>,
        changes: &[Sample],
        from: u64,
        to: u64,
    ) -> io::Result<()> {
        let mut rest = changes;
        for c in cycles {
            let n = rest.iter().take_while(|s| s.0 == c).count();
            let (now, later) = rest.split_at(n);
            rest = later;
            if self.started {
                if c <= to {
                    sink.open_cycle(c)?;
                    for &(_, k, v) in now {
                        sink.change(k as usize, v)?;
                    }
                    sink.close_cycle(c)?;
                }
                continue;
            }
            for &(_, k, v) in now {
                if let Some(slot) = self.current.get_mut(k as usize) {
                    *slot = Some(v);
                }
            }
            if !(from..=to).contains(&c) {
                continue;
            }
            // The first cycle written shows every signal.
            sink.open_cycle(c)?;
            for (k, v) in self.current.iter().enumerate() {
                debug_assert!(v.is_some(), "signal {k} never recorded");
                if let Some(v) = *v {
                    sink.show(k, v)?;
                }
            }
            self.started = true;
            sink.close_cycle(c)?;
        }
        debug_assert!(rest.is_empty(), "changes outside the window's cycles");
        Ok(())
    }
}
