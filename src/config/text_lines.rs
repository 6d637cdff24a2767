//! Reading the text files a run is given (traces, rank maps, switch recordings) one line at a
//! time, with a bound on a line's length, so a file that is no text (`/dev/zero`, a binary) is
//! refused at its first long line rather than read whole into memory.

use std::io::{self, BufRead, Read};

/// The longest line a text input may hold, in bytes, its newline not counted.
pub const MAX_LINE: u64 = 1 << 20;

/// Opens the input file at `path` for reading, refusing what is not a regular file: a named
/// pipe would block the run until something writes to it, and a device or socket is no input.
pub fn open_input(path: &std::path::Path) -> io::Result<std::fs::File> {
    let m = std::fs::metadata(path)?;
    if m.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a folder, not a file",
        ));
    }
    if !m.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a pipe, device or socket is not read)",
        ));
    }
    std::fs::File::open(path)
}

/// Why a line could not be read.
#[derive(Debug)]
pub enum LineError {
    /// The line runs past [`MAX_LINE`] bytes.
    TooLong,
    /// The reader failed, or the line is not UTF-8.
    Io(io::Error),
}

/// Appends the next line of `r` (its newline included) to `buf` and returns its length in bytes,
/// 0 at the end of the input.
pub fn read_line_capped<R: BufRead>(r: &mut R, buf: &mut String) -> Result<usize, LineError> {
    let at = buf.len();
    let n = r.take(MAX_LINE + 1).read_line(buf).map_err(LineError::Io)?;
    if n as u64 > MAX_LINE && !buf[at..].ends_with('\n') {
        return Err(LineError::TooLong);
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn lines(text: &[u8]) -> Result<Vec<String>, LineError> {
        let mut r = Cursor::new(text);
        let mut out = Vec::new();
        loop {
            let mut s = String::new();
            if read_line_capped(&mut r, &mut s)? == 0 {
                return Ok(out);
            }
            out.push(s);
        }
    }

    #[test]
    fn a_line_of_the_limit_is_read_and_one_byte_more_is_refused() {
        let mut text = vec![b'a'; MAX_LINE as usize];
        text.extend_from_slice(b"\nb\n");
        let got = lines(&text).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), MAX_LINE as usize + 1);
        assert_eq!(got[1], "b\n");

        let mut long = vec![b'a'; MAX_LINE as usize + 1];
        long.push(b'\n');
        assert!(matches!(lines(&long), Err(LineError::TooLong)));
    }

    #[test]
    fn a_last_line_without_newline_and_bad_utf8_are_told_apart() {
        assert_eq!(lines(b"x\ny").unwrap(), ["x\n", "y"]);
        match lines(b"ok\n\xff\xfe\n") {
            Err(LineError::Io(e)) => assert_eq!(e.kind(), io::ErrorKind::InvalidData),
            other => panic!("{other:?}"),
        }
    }
}
