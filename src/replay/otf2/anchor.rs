//! The anchor file's own layout, checked before the library reads it: the library stops at the
//! anchor's end-of-file record and never looks further, so anything appended to an anchor (a
//! second file concatenated, a transfer gone wrong) would be read as if it were not there.
//!
//! An anchor (format 3, what OTF2 2.x and 3.x write) is one unchunked buffer: a chunk header
//! (record 3 and the byte order, `0x42` little-endian or `0x23` big-endian), the string `OTF2`,
//! the anchor format, the trace format, the library's version (3 bytes), the event and definition
//! chunk sizes (8 bytes each), the substrate and compression (a byte each), the numbers of
//! locations and global definitions (8 bytes each), three strings (machine, creator,
//! description), the number of properties (4 bytes) and as many name and value strings, the
//! trace id (8 bytes), the numbers of snapshots and thumbnails (4 bytes each), then the
//! end-of-file record (2). After it the buffer ends with at most a few end-of-buffer (1) and
//! end-of-chunk (0) bytes. Anchors of another format are left to the library (formats 1 and 2 are
//! prefixes of 3; later formats may append fields this check does not know).

use std::io::Read;
use std::path::Path;

/// The largest anchor read: a real one is under a kilobyte (Score-P's properties included).
pub const MAX_ANCHOR_BYTES: u64 = 1 << 20;

/// Bytes an anchor may hold after its end-of-file record (the buffer's end markers).
const MAX_TAIL: usize = 16;

const END_OF_FILE: u8 = 2;
const CHUNK_HEADER: u8 = 3;
const LITTLE_ENDIAN: u8 = 0x42;

/// Refuses an anchor with bytes after its end, or larger than [`MAX_ANCHOR_BYTES`]; a malformed
/// one before its end is left to the library to name.
pub fn check(anchor: &Path) -> Result<(), String> {
    let mut bytes = Vec::new();
    std::fs::File::open(anchor)
        .and_then(|f| f.take(MAX_ANCHOR_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("reading the anchor file: {e}"))?;
    if bytes.len() as u64 > MAX_ANCHOR_BYTES {
        return Err(format!(
            "the anchor file is larger than {MAX_ANCHOR_BYTES} bytes; an OTF2 anchor holds a \
             few hundred"
        ));
    }
    let Some(end) = end_of_file(&bytes) else {
        return Ok(());
    };
    let tail = &bytes[end + 1..];
    if tail.len() > MAX_TAIL || tail.iter().any(|&b| b > 1) {
        return Err(format!(
            "{} bytes follow the anchor's end-of-file record at byte {end}; an anchor ends there \
             (something was appended to it)",
            tail.len()
        ));
    }
    Ok(())
}

/// The offset of the end-of-file record of a format-3 anchor, `None` when it is not one or is
/// cut short (the library names what is wrong with those).
fn end_of_file(b: &[u8]) -> Option<usize> {
    let mut r = Reader { b, at: 0 };
    if r.byte()? != CHUNK_HEADER {
        return None;
    }
    let little = r.byte()? == LITTLE_ENDIAN;
    if r.string()? != b"OTF2" || r.byte()? != 3 {
        return None;
    }
    // Trace format, version, chunk sizes, substrate, compression, locations, definitions.
    r.skip(1 + 3 + 8 + 8 + 1 + 1 + 8 + 8)?;
    for _ in 0..3 {
        r.string()?;
    }
    let properties = r.u32(little)?;
    for _ in 0..2 * u64::from(properties) {
        r.string()?;
    }
    // Trace id, snapshots, thumbnails.
    r.skip(8 + 4 + 4)?;
    let at = r.at;
    (r.byte()? == END_OF_FILE).then_some(at)
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let v = *self.b.get(self.at)?;
        self.at += 1;
        Some(v)
    }

    fn skip(&mut self, n: usize) -> Option<()> {
        self.at = self.at.checked_add(n).filter(|&e| e <= self.b.len())?;
        Some(())
    }

    /// A NUL-terminated string, without its NUL.
    fn string(&mut self) -> Option<&'a [u8]> {
        let rest = self.b.get(self.at..)?;
        let len = rest.iter().position(|&c| c == 0)?;
        self.at += len + 1;
        Some(&rest[..len])
    }

    fn u32(&mut self, little: bool) -> Option<u32> {
        let s: [u8; 4] = self.b.get(self.at..self.at + 4)?.try_into().ok()?;
        self.at += 4;
        Some(if little {
            u32::from_le_bytes(s)
        } else {
            u32::from_be_bytes(s)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The anchor `arnsim trace ptrans --ranks 4` writes through OTF2 3.0.2.
    const WRITTEN: [u8; 72] = [
        0x03, 0x42, 0x4f, 0x54, 0x46, 0x32, 0x00, 0x03, 0x02, 0x03, 0x00, 0x02, 0x00, 0x00, 0x10,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01,
        0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x88, 0x21, 0xef, 0x03, 0x45, 0x72, 0x41,
        0xb1, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x00,
    ];

    #[test]
    fn the_end_of_file_record_of_a_written_anchor_is_found() {
        assert_eq!(end_of_file(&WRITTEN), Some(69));
        let mut cut = WRITTEN.to_vec();
        cut.truncate(60);
        assert_eq!(end_of_file(&cut), None, "cut short: left to the library");
        let mut other = WRITTEN.to_vec();
        other[7] = 4;
        assert_eq!(
            end_of_file(&other),
            None,
            "another format: left to the library"
        );
    }
}
