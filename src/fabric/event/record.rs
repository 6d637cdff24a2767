//! Recording a switch on the event engine: what the switch's ports receive and send, as the
//! fabric's link records (a head per packet, a credit-stream record per cycle and link direction
//! with the ARN it carries), noted where the event engine takes them in and gives them out; the
//! fabric's recorder expands them into the wires of every cycle (`fabric/record.rs`), as it
//! does the records of a switch stepped by the cycle engine.

use super::*;

/// The link records the recorded switches' ports received and sent, not yet made into frames:
/// per (cycle, flat port), a head arriving or leaving, and the return record arriving or
/// leaving.
pub(in crate::fabric) struct LinkLog<const V: usize> {
    /// Per switch: whether it is recorded.
    recorded: Vec<bool>,
    heads_in: Vec<(u64, u32, Packet)>,
    heads_out: Vec<(u64, u32, Packet)>,
    backs_in: Vec<(u64, u32, Backward<V>)>,
    backs_out: Vec<(u64, u32, Backward<V>)>,
}

/// What a port receives or sends in a cycle: the head on its link, the return record on the
/// other.
pub(in crate::fabric) type PortRecords<const V: usize> = (Option<Flit>, Option<Backward<V>>);

impl<const V: usize> LinkLog<V> {
    /// The return record of `(cycle, j)` in `list`, made if there is none yet (the records of a
    /// cycle are noted in that cycle or shortly before, so the search starts at the end).
    fn back(list: &mut Vec<(u64, u32, Backward<V>)>, cycle: u64, j: u32) -> &mut Backward<V> {
        let k = match list.iter().rposition(|e| e.0 == cycle && e.1 == j) {
            Some(k) => k,
            None => {
                list.push((cycle, j, Backward::default()));
                list.len() - 1
            }
        };
        &mut list[k].2
    }

    /// Hands on what each port of switch `s` (its flat ports `ports`) received and sent in every
    /// cycle of `from..upto`, in cycle order, and forgets it: `each(cycle, port, received,
    /// sent)`.
    pub(in crate::fabric) fn drain(
        &mut self,
        ports: std::ops::Range<u32>,
        (from, upto): (u64, u64),
        mut each: impl FnMut(u64, usize, PortRecords<V>, PortRecords<V>),
    ) {
        fn take<T>(l: &mut Vec<(u64, u32, T)>, c: u64, j: u32) -> Option<T> {
            l.iter()
                .position(|e| e.0 == c && e.1 == j)
                .map(|k| l.swap_remove(k).2)
        }
        let flit = |pkt| Flit { pkt, index: 0 };
        for c in from..upto {
            for j in ports.clone() {
                let got = (
                    take(&mut self.heads_in, c, j).map(flit),
                    take(&mut self.backs_in, c, j),
                );
                let sent = (
                    take(&mut self.heads_out, c, j).map(flit),
                    take(&mut self.backs_out, c, j),
                );
                each(c, (j - ports.start) as usize, got, sent);
            }
        }
    }
}

impl<const V: usize> EventCore<V> {
    /// From now on, notes what switch `s`'s ports receive and send (beside those noted
    /// already).
    pub(in crate::fabric) fn record(&mut self, s: u32) {
        let switches = self.first.len();
        let log = self.rec.get_or_insert_with(|| {
            Box::new(LinkLog {
                recorded: vec![false; switches],
                heads_in: Vec::new(),
                heads_out: Vec::new(),
                backs_in: Vec::new(),
                backs_out: Vec::new(),
            })
        });
        log.recorded[s as usize] = true;
    }

    /// The flat ports of switch `s`.
    pub(in crate::fabric) fn ports_of(&self, s: u32) -> std::ops::Range<u32> {
        let first = self.first[s as usize];
        first..first + self.ins[first as usize].place.ports as u32
    }

    /// The link log of the recorded switches, if any.
    pub(super) fn link_log(&mut self) -> Option<&mut LinkLog<V>> {
        self.rec.as_deref_mut()
    }

    /// The log, if flat port `j`'s switch is recorded.
    #[inline(always)]
    fn log_of(&mut self, j: u32) -> Option<&mut LinkLog<V>> {
        let s = self.ins[j as usize].place.switch as usize;
        self.rec.as_deref_mut().filter(|r| r.recorded[s])
    }

    /// A head reaches flat input `j` in `now`.
    #[inline(always)]
    pub(super) fn note_head_in(&mut self, j: u32, pkt: Packet, now: u64) {
        if self.rec.is_some()
            && let Some(r) = self.log_of(j)
        {
            r.heads_in.push((now, j, pkt));
        }
    }

    /// Flat output `j` sends the head of `pkt` in cycle `at`.
    #[inline(always)]
    pub(super) fn note_head_out(&mut self, j: u32, pkt: Packet, at: u64) {
        if self.rec.is_some()
            && let Some(r) = self.log_of(j)
        {
            r.heads_out.push((at, j, pkt));
        }
    }

    /// Flat output `j` takes in `count` credit streams on `vc` in `now`: starting with `flits`
    /// credits in all, or stopping (`flits` `None`).
    #[inline(always)]
    pub(super) fn note_credits_in(
        &mut self,
        j: u32,
        vc: u8,
        count: u8,
        flits: Option<u32>,
        now: u64,
    ) {
        if self.rec.is_some()
            && let Some(r) = self.log_of(j)
        {
            let b = LinkLog::back(&mut r.backs_in, now, j);
            match flits {
                Some(f) => {
                    b.start[vc as usize] += count;
                    b.start_flits[vc as usize] += f;
                }
                None => b.stop[vc as usize] += count,
            }
        }
    }

    /// Flat input `j` sends upstream, in cycle `at`, the start of a credit stream of `len`
    /// flits on `vc` (or its stop, `len` 0).
    #[inline(always)]
    pub(super) fn note_credits_out(&mut self, j: u32, vc: u8, len: u16, at: u64) {
        if self.rec.is_some()
            && let Some(r) = self.log_of(j)
        {
            let b = LinkLog::back(&mut r.backs_out, at, j);
            match len {
                0 => b.stop_stream(vc as usize),
                _ => b.start_stream(vc as usize, len),
            }
        }
    }

    /// An ARN reaches flat output `j` in `now` (`arriving`), or flat input `j` sends one
    /// upstream in `now`.
    #[inline(always)]
    pub(super) fn note_arn(
        &mut self,
        j: u32,
        info: crate::wire::ArnInfo,
        now: u64,
        arriving: bool,
    ) {
        self.note_back(j, now, arriving, |b| b.arn = Some(info));
    }

    /// A CNM reaches flat output `j` in `now` (`arriving`), or flat input `j` sends one
    /// upstream in `now`.
    #[inline(always)]
    pub(super) fn note_cnm(&mut self, j: u32, c: crate::wire::Cnm, now: u64, arriving: bool) {
        self.note_back(j, now, arriving, |b| b.cnm = Some(c));
    }

    /// Writes `set` into the return record flat port `j` takes in (`arriving`) or sends in
    /// `now`, if its switch is recorded.
    #[inline(always)]
    fn note_back(&mut self, j: u32, now: u64, arriving: bool, set: impl FnOnce(&mut Backward<V>)) {
        if self.rec.is_some()
            && let Some(r) = self.log_of(j)
        {
            let list = if arriving {
                &mut r.backs_in
            } else {
                &mut r.backs_out
            };
            set(LinkLog::back(list, now, j));
        }
    }
}
