//! The recording of one switch's ports during a run (`docs/recording.md`): the header written
//! before the first cycle, the frames the fabric recorded drained after every chunk, recording
//! stopped past its last cycle, and the `end` line once the run is over.

use crate::fabric::Fabric;
use crate::trace::recording::{RecordingHeader, write_frame};
use std::io::{self, BufWriter, Write};

/// A recording being written.
pub(super) struct SwitchRecording {
    w: BufWriter<Box<dyn Write>>,
    /// Last cycle recorded.
    to: u64,
    /// Whether the fabric still records (until the run passes `to`).
    recording: bool,
}

impl SwitchRecording {
    /// Writes the header of switch `id` of `fabric`, named `name`, recording cycles up to `to`
    /// and compared from `from`, into `file`, and starts recording (before the first cycle).
    pub(super) fn start<const V: usize>(
        fabric: &mut Fabric<V>,
        id: usize,
        name: &str,
        (from, to): (u64, u64),
        file: Box<dyn Write>,
    ) -> io::Result<Self> {
        let mut w = BufWriter::new(file);
        RecordingHeader::of(fabric, id as u32, name, from, to).write(&mut w)?;
        fabric.record(&[id as u32]);
        Ok(SwitchRecording {
            w,
            to,
            recording: true,
        })
    }

    /// Writes the frames the fabric recorded since the last call; stops recording past `to`.
    pub(super) fn drain<const V: usize>(&mut self, fabric: &mut Fabric<V>) -> io::Result<()> {
        let (w, to) = (&mut self.w, self.to);
        let mut err = None;
        let _ = fabric.drain_recordings(&mut |_, c, ins, outs| {
            if c <= to
                && err.is_none()
                && let Err(e) = write_frame(w, c, ins, outs)
            {
                err = Some(e);
            }
            Ok(())
        });
        if let Some(e) = err {
            return Err(e);
        }
        if self.recording && fabric.now() > self.to {
            fabric.stop_recording();
            self.recording = false;
        }
        Ok(())
    }

    /// Closes the recording at the last cycle stepped.
    pub(super) fn finish<const V: usize>(mut self, fabric: &mut Fabric<V>) -> io::Result<()> {
        self.drain(fabric)?;
        let end = fabric.now().min(self.to + 1);
        writeln!(self.w, "end {end}")?;
        self.w.flush()
    }
}
