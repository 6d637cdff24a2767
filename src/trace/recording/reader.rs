//! Reading a switch recording's cycles (`docs/recording.md`): what the ports received and drove.
//! Every field is read at the width of the register it drives; a value that does not fit, a
//! field too many, or a port's signal given twice in one cycle is refused with its file and line.

use super::RecordingHeader;
use crate::config::text_lines::{LineError, MAX_LINE, read_line_capped};
use crate::cycle::{LinkFlit, PortIn, PortOut};
use crate::wire::{ArnInfo, Packet, PacketFlags};
use std::io::BufRead;
use std::str::FromStr;

/// A recording being read: its header, then its cycles one by one.
pub struct RecordingReader<R: BufRead> {
    pub(super) path: String,
    pub(super) r: R,
    pub(super) line: usize,
    /// The header.
    pub header: RecordingHeader,
    pub(super) pending: Option<(u64, String)>,
    pub(super) ins: Vec<PortIn>,
    pub(super) outs: Vec<PortOut>,
    /// The first line of the current cycle for each port's inputs and outputs (0: none).
    pub(super) lines: Vec<[usize; 2]>,
    /// The cycle after the last one recorded, once the `end` line is read.
    pub end: Option<u64>,
    /// The last cycle a line was read for.
    pub(super) last: Option<u64>,
}

/// Field `i` of a line, parsed at its register's width, or an error naming the file and line.
pub(super) fn field<T: FromStr>(
    path: &str,
    line: usize,
    words: &[&str],
    i: usize,
) -> Result<T, String> {
    words.get(i).and_then(|w| w.parse().ok()).ok_or_else(|| {
        format!(
            "{path}:{line}: field {} of `{}` is missing, not a number, or too large for its \
             register",
            i + 1,
            words.join(" ")
        )
    })
}

/// A line of `fields` words after its first: one more is refused.
pub(super) fn field_count(
    path: &str,
    line: usize,
    words: &[&str],
    fields: usize,
) -> Result<(), String> {
    match words.get(fields + 1) {
        Some(w) => Err(format!(
            "{path}:{line}: `{w}` after the last field of a `{}` line",
            words[0]
        )),
        None => Ok(()),
    }
}

/// A 0 or 1 field (a one-bit signal).
pub(super) fn bit(path: &str, line: usize, words: &[&str], i: usize) -> Result<bool, String> {
    match field::<u8>(path, line, words, i)? {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(format!(
            "{path}:{line}: field {} of `{}` is {v}, a one-bit signal is 0 or 1",
            i + 1,
            words.join(" ")
        )),
    }
}

impl<R: BufRead> RecordingReader<R> {
    pub(super) fn next_line(&mut self) -> Result<Option<String>, String> {
        loop {
            let mut s = String::new();
            let at = self.line + 1;
            let n = read_line_capped(&mut self.r, &mut s).map_err(|e| match e {
                LineError::TooLong => format!(
                    "{}:{at}: the line is longer than {MAX_LINE} bytes (not a switch recording)",
                    self.path
                ),
                LineError::Io(e) => format!("{}:{at}: {e}", self.path),
            })?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            let s = s.trim_end().to_string();
            if !s.is_empty() && !s.starts_with('#') {
                return Ok(Some(s));
            }
        }
    }

    /// The next recorded cycle: its number, and what the ports received and drove (idle cycles
    /// in between are not returned). `None` at the end.
    #[allow(clippy::type_complexity)]
    pub fn next_frame(&mut self) -> Result<Option<(u64, &[PortIn], &[PortOut])>, String> {
        self.ins.fill(PortIn::default());
        self.outs.fill(PortOut::default());
        self.lines.fill([0; 2]);
        let mut cycle = None;
        loop {
            let (t, l) = match self.pending.take() {
                Some(x) => x,
                None => {
                    let Some(l) = self.next_line()? else { break };
                    if l.starts_with("end ") {
                        let w: Vec<&str> = l.split(' ').collect();
                        field_count(&self.path, self.line, &w, 1)?;
                        let end: u64 = w[1].parse().map_err(|_| {
                            format!(
                                "{}:{}: `end` needs the cycle after the last",
                                self.path, self.line
                            )
                        })?;
                        let at = format!("{}:{}: `end {end}`", self.path, self.line);
                        if end > self.header.to.saturating_add(1) {
                            let to = self.header.to;
                            return Err(format!("{at} is past the header's last cycle ({to})"));
                        }
                        if let Some(c) = self.last.filter(|&c| end <= c) {
                            return Err(format!("{at} is not after the last cycle recorded ({c})"));
                        }
                        if let Some(more) = self.next_line()? {
                            return Err(format!(
                                "{}:{}: `{}` after the `end` line",
                                self.path,
                                self.line,
                                more.split(' ').take(3).collect::<Vec<_>>().join(" ")
                            ));
                        }
                        self.end = Some(end);
                        break;
                    }
                    let t = l
                        .split(' ')
                        .next()
                        .and_then(|w| w.parse().ok())
                        .ok_or_else(|| {
                            format!(
                                "{}:{}: a line must start with its cycle",
                                self.path, self.line
                            )
                        })?;
                    if t > self.header.to {
                        return Err(format!(
                            "{}:{}: cycle {t} is after the last cycle the header gives ({})",
                            self.path, self.line, self.header.to
                        ));
                    }
                    self.last = Some(t);
                    (t, l)
                }
            };
            match cycle {
                None => cycle = Some(t),
                Some(c) if c != t => {
                    if t < c {
                        return Err(format!(
                            "{}:{}: cycle {t} after cycle {c}",
                            self.path, self.line
                        ));
                    }
                    self.pending = Some((t, l));
                    break;
                }
                _ => {}
            }
            self.parse_line(&l)?;
        }
        Ok(cycle.map(|c| (c, &self.ins[..], &self.outs[..])))
    }

    /// The first line of the cycle last returned that gives port `p`'s inputs (`input`) or its
    /// outputs; `None` when the port was idle on that side.
    pub fn line_of(&self, p: usize, input: bool) -> Option<usize> {
        let l = self.lines.get(p)?[usize::from(!input)];
        (l != 0).then_some(l)
    }

    fn parse_line(&mut self, l: &str) -> Result<(), String> {
        let (path, n, vcs) = (self.path.as_str(), self.line, self.header.params.vcs());
        let ports = self.ins.len();
        let w: Vec<&str> = l.split(' ').collect();
        let p: usize = field(path, n, &w, 2)?;
        if p >= ports {
            return Err(format!("{path}:{n}: port {p} of a {ports}-port switch"));
        }
        let (input, side) = match w.get(1) {
            Some(&"I") => (true, "input"),
            Some(&"O") => (false, "output"),
            _ => return Err(format!("{path}:{n}: the side must be `I` or `O`")),
        };
        let first = &mut self.lines[p][usize::from(!input)];
        if *first == 0 {
            *first = n;
        }
        let twice = |what: &str| {
            Err(format!(
                "{path}:{n}: {side} {p} has a second {what} in cycle {}",
                w[0]
            ))
        };
        let vc = |i: usize| -> Result<u8, String> {
            let v: u8 = field(path, n, &w, i)?;
            if v as usize >= vcs {
                return Err(format!(
                    "{path}:{n}: VC {v} of a switch of {vcs} VCs (field {})",
                    i + 1
                ));
            }
            Ok(v)
        };
        let port = |i: usize| -> Result<u8, String> {
            let q: u8 = field(path, n, &w, i)?;
            if q as usize >= ports {
                return Err(format!(
                    "{path}:{n}: ARN port {q} of a {ports}-port switch (field {})",
                    i + 1
                ));
            }
            Ok(q)
        };
        // `F` has 12 fields after the kind, `C` 2, an input's `A` 4 and an output's 5, `Q` 3.
        let kind = w.get(3).copied().unwrap_or("");
        let fields = match kind {
            "F" => 12,
            "C" => 2,
            "A" if input => 4,
            "A" => 5,
            "Q" => 3,
            _ => return Err(format!("{path}:{n}: the kind must be `F`, `C`, `A` or `Q`")),
        };
        field_count(path, n, &w[3..], fields)?;
        let (pin, pout) = (&mut self.ins[p], &mut self.outs[p]);
        match kind {
            "F" => {
                let (flit_vc, head, tail) = (vc(4)?, bit(path, n, &w, 5)?, bit(path, n, &w, 6)?);
                let flit = LinkFlit {
                    valid: true,
                    vc: flit_vc,
                    head,
                    tail,
                    desc: Packet {
                        injected: field(path, n, &w, 7)?,
                        id: field(path, n, &w, 8)?,
                        src: field(path, n, &w, 9)?,
                        dlid: field(path, n, &w, 10)?,
                        len: field(path, n, &w, 11)?,
                        sl: field(path, n, &w, 12)?,
                        vc: if head { flit_vc } else { 0 },
                        orig_vc: field(path, n, &w, 13)?,
                        // All eight bits are defined.
                        flags: PacketFlags::from_bits_retain(field(path, n, &w, 14)?),
                        flow: field(path, n, &w, 15)?,
                    },
                };
                let slot = if input { &mut pin.flit } else { &mut pout.flit };
                if slot.valid {
                    return twice("flit");
                }
                *slot = flit;
            }
            "C" => {
                let v = vc(4)? as usize;
                let c: u8 = field(path, n, &w, 5)?;
                if c == 0 {
                    return Err(format!(
                        "{path}:{n}: 0 credits (an idle signal has no line)"
                    ));
                }
                let slot = if input {
                    &mut pin.credit[v]
                } else {
                    &mut pout.credit[v]
                };
                if *slot != 0 {
                    return twice(&format!("credit line for VC {v}"));
                }
                *slot = c;
            }
            "Q" => {
                let fb: u8 = field(path, n, &w, 6)?;
                if !(1..=crate::blocks::congestion_point::FB_MAX).contains(&fb) {
                    return Err(format!(
                        "{path}:{n}: CNM feedback {fb}: |Fb| is 1 to 63 (field 7)"
                    ));
                }
                let cnm = crate::wire::Cnm {
                    src: field(path, n, &w, 4)?,
                    dest: field(path, n, &w, 5)?,
                    fb,
                };
                let slot = if input { &mut pin.cnm } else { &mut pout.cnm };
                if slot.is_some() {
                    return twice("CNM");
                }
                *slot = Some(cnm);
            }
            _ => {
                let at = if input { 5 } else { 6 };
                let arn = ArnInfo {
                    dest: field(path, n, &w, 4)?,
                    port: if input { 0 } else { port(5)? },
                    vc: vc(at)?,
                    arn_id: field(path, n, &w, at + 1)?,
                    root_info: field(path, n, &w, at + 2)?,
                };
                let slot = if input { &mut pin.arn } else { &mut pout.arn };
                if slot.is_some() {
                    return twice("ARN");
                }
                *slot = Some(arn);
            }
        }
        Ok(())
    }
}
