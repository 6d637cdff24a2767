//! Checkpoints of a run (`docs/checkpoints.md`): the whole model's state (every switch's and end
//! node's registers, buffers and counters, the links, the event engine's calendars, the traffic
//! generators and trace replays, the statistics bins and where the VCD stands) written at a chunk
//! boundary into one file, and a run that takes it back and steps on as if never stopped: its
//! outputs are byte for byte those of a run that was not.
//!
//! The file: a magic line, a header (what the run is: the build, a fingerprint of its inputs,
//! its command line; read first, so that a checkpoint of another build or scenario is refused
//! before its state is decoded), the state, and a checksum of the header and the state. State kept for resuming;
//! it models no hardware.

use super::{Bins, Run};
use crate::fabric::Fabric;
use crate::trace::fabric_tap::TapState;
use crate::trace::fabric_vcd::VcdState;
use serde::{Deserialize, Serialize};
use std::hash::Hasher;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The checkpoint's file in the run's output folder.
pub const FILE: &str = "checkpoint.bin";

/// The first bytes of a checkpoint (the number is the format's).
const MAGIC: &[u8] = b"arnsim checkpoint 1\n";

/// What a checkpoint says about the run it was taken of, read before its state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The executable that took it (a hash of its bytes).
    pub build: u64,
    /// The run's inputs: a hash of its scenario, trace and map files and its command line.
    pub inputs: u64,
    /// The arguments `arnsim` was started with, the folder it was started in, and the process
    /// (which names its outputs' temporary files).
    pub command: Vec<String>,
    pub cwd: PathBuf,
    pub pid: u32,
    /// Threads and VC lanes the fabric steps on.
    pub threads: usize,
    pub lanes: usize,
    /// The cycle it was taken at (the next one to step), and the run's cycles in all.
    pub cycle: u64,
    pub cycles: u64,
    /// The dump files being written: where each goes, and its temporary name.
    pub dumps: Vec<(PathBuf, PathBuf)>,
}

/// Where the run's dump stood: its window and, with a VCD, the VCD's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedDump {
    pub window: (u64, u64),
    pub vcd: Option<VcdState>,
    /// What the run's tap recorded last.
    pub tap: TapState,
}

/// A checkpoint read from its file: its header, and its state to be decoded by
/// [`Run::restore`].
pub struct Loaded {
    /// The file it was read from.
    pub path: PathBuf,
    pub header: Header,
    pub state: Vec<u8>,
}

/// A writer that hashes what passes through it.
struct Hashing<W> {
    w: W,
    hash: std::hash::DefaultHasher,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.w.write(buf)?;
        self.hash.write(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// A hash of `bytes`.
fn hash_of(bytes: &[u8]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    h.write(bytes);
    h.finish()
}

/// A hash of the running executable's bytes: a checkpoint is taken back only by the build that
/// took it (another build may lay its state out otherwise, or step it otherwise).
/// Read once per process.
pub fn build_id() -> Result<u64, String> {
    static ID: std::sync::OnceLock<Result<u64, String>> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let exe = std::env::current_exe().map_err(|e| format!("the running executable: {e}"))?;
        let bytes = std::fs::read(&exe).map_err(|e| format!("{}: {e}", exe.display()))?;
        Ok(hash_of(&bytes))
    })
    .clone()
}

/// A hash of a run's inputs: the contents of `files` (a file that cannot be read counts as
/// missing) and the `command` line.
pub fn inputs_id(files: &[PathBuf], command: &[String]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    for f in files {
        match std::fs::read(f) {
            Ok(bytes) => {
                h.write_u8(1);
                h.write_u64(hash_of(&bytes));
            }
            Err(_) => h.write_u8(0),
        }
    }
    for a in command {
        h.write_usize(a.len());
        h.write(a.as_bytes());
    }
    h.finish()
}

/// Writes a checkpoint into `dest` atomically (a temporary file beside it, synced, then renamed
/// over it): `header`, then the state `state` writes, then its checksum.
pub fn write(
    dest: &Path,
    header: &Header,
    state: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), String> {
    let name = dest.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dest.with_file_name(format!(".{name}.partial"));
    let on = |e: io::Error| format!("{}: {e}", dest.display());
    let written = (|| {
        let mut f = io::BufWriter::new(std::fs::File::create(&tmp)?);
        let head = postcard::to_stdvec(header).map_err(io::Error::other)?;
        f.write_all(MAGIC)?;
        let mut h = Hashing {
            w: &mut f,
            hash: std::hash::DefaultHasher::new(),
        };
        h.write_all(&(head.len() as u64).to_le_bytes())?;
        h.write_all(&head)?;
        state(&mut h)?;
        let sum = h.hash.finish();
        f.write_all(&sum.to_le_bytes())?;
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, dest)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(on)
}

/// Reads the checkpoint in `path`: refused when it is not one, of another format, or damaged
/// (its checksum does not match its state).
pub fn read(path: &Path) -> Result<Loaded, String> {
    let at = |why: String| format!("{}: {why}", path.display());
    let meta = std::fs::metadata(path).map_err(|e| at(e.to_string()))?;
    if !meta.is_file() {
        return Err(at("not a regular file".into()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| at(e.to_string()))?;
    let Some(rest) = bytes.strip_prefix(MAGIC) else {
        return Err(at(format!(
            "not a checkpoint of this version of arnsim (it does not start with {:?})",
            String::from_utf8_lossy(MAGIC).trim_end()
        )));
    };
    let damaged = |what: &str| at(format!("a damaged checkpoint ({what})"));
    let (body, sum) = rest
        .split_last_chunk::<8>()
        .ok_or_else(|| damaged("cut short"))?;
    if hash_of(body) != u64::from_le_bytes(*sum) {
        return Err(damaged("its checksum does not match its contents"));
    }
    let (len, rest) = body
        .split_first_chunk::<8>()
        .ok_or_else(|| damaged("cut short in its header"))?;
    let len = u64::from_le_bytes(*len);
    if len > rest.len() as u64 {
        return Err(damaged("cut short in its header"));
    }
    let (head, state) = rest.split_at(len as usize);
    let header: Header = postcard::from_bytes(head).map_err(|_| damaged("its header"))?;
    let state = state.to_vec();
    Ok(Loaded {
        path: path.to_path_buf(),
        header,
        state,
    })
}

impl<const V: usize> Run<'_, V> {
    /// Writes the run's state into `w`: the bins, the fabric (on either engine) and where the
    /// dump stands (its VCD flushed). Taken between chunks; refused for what a checkpoint does
    /// not hold (MPI ranks, a switch recording, an FST).
    pub fn save(&mut self, w: &mut dyn Write) -> io::Result<()> {
        let unsupported = if self.fabric.ranks().is_some() {
            Some("MPI ranks")
        } else if self.recording.is_some() {
            Some("a switch recording")
        } else if self.dump.as_ref().is_some_and(|d| d.waves.fst.is_some()) {
            Some("an FST dump")
        } else {
            None
        };
        if let Some(what) = unsupported {
            return Err(io::Error::other(format!(
                "a checkpoint does not hold the state of {what}"
            )));
        }
        let dump = match &mut self.dump {
            Some(d) => Some(SavedDump {
                window: d.window,
                tap: d.tap.state(),
                vcd: match &mut d.waves.vcd {
                    Some(v) => Some(v.state()?),
                    None => None,
                },
            }),
            None => None,
        };
        let w = io::BufWriter::with_capacity(1 << 20, w);
        let mut w =
            postcard::to_io(&(&self.bins, &self.fabric, &dump), w).map_err(io::Error::other)?;
        w.flush()
    }

    /// Takes back the state a checkpoint holds (`state`, as [`Run::save`] wrote it) into this
    /// run, built from the same scenario on the same threads and not yet stepped; returns where
    /// its dump stood, for the dump to be resumed ([`crate::trace::fabric_vcd::FabricVcd::resume`],
    /// then [`Run::dump`]).
    pub fn restore(&mut self, state: &[u8]) -> Result<Option<SavedDump>, String> {
        if self.fabric.now() != 0 {
            return Err("a checkpoint is taken back before the first cycle".into());
        }
        let (bins, fabric, dump): (Bins, Fabric<V>, Option<SavedDump>) =
            postcard::from_bytes(state).map_err(|e| format!("its state cannot be read: {e}"))?;
        self.fabric.resume_from(fabric)?;
        self.bins = bins;
        Ok(dump)
    }
}
