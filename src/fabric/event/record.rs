//! Recording a switch on the event engine: what the switch's ports receive and send, as the
//! fabric's link records (a head per packet, a credit-stream record per cycle and link direction
//! with the ARN it carries), noted where the event engine takes them in and gives them out; the
//! fabric's recorder expands them into the wires of every cycle (`fabric/record.rs`), as it
//! does the records of a switch stepped by the cycle engine.

use super::*;

/// The link records one switch's ports received and sent, not yet made into frames: per
/// (cycle, port), a head arriving or leaving, and the return record arriving or leaving.
pub(in crate::fabric) struct LinkLog<const V: usize> {
    switch: u32,
    first: u32,
    ports: u32,
    heads_in: Vec<(u64, u16, Packet)>,
    heads_out: Vec<(u64, u16, Packet)>,
    backs_in: Vec<(u64, u16, Backward<V>)>,
    backs_out: Vec<(u64, u16, Backward<V>)>,
}

/// What a port receives or sends in a cycle: the head on its link, the return record on the
/// other.
pub(in crate::fabric) type PortRecords<const V: usize> = (Option<Flit>, Option<Backward<V>>);

impl<const V: usize> LinkLog<V> {
    pub(super) fn new(switch: u32, first: u32, ports: u32) -> Self {
        LinkLog {
            switch,
            first,
            ports,
            heads_in: Vec::new(),
            heads_out: Vec::new(),
            backs_in: Vec::new(),
            backs_out: Vec::new(),
        }
    }

    /// The port of flat port `j`, if it is the recorded switch's.
    #[inline(always)]
    fn port(&self, j: u32) -> Option<u16> {
        j.checked_sub(self.first)
            .filter(|&p| p < self.ports)
            .map(|p| p as u16)
    }

    /// The return record of `(cycle, port)` in `list`, made if there is none yet.
    fn back(list: &mut Vec<(u64, u16, Backward<V>)>, cycle: u64, port: u16) -> &mut Backward<V> {
        let k = match list.iter().rposition(|e| e.0 == cycle && e.1 == port) {
            Some(k) => k,
            None => {
                list.push((cycle, port, Backward::default()));
                list.len() - 1
            }
        };
        &mut list[k].2
    }

    /// Hands on, in cycle order, what each port received and sent in every cycle before `upto`,
    /// and forgets it: `each(cycle, port, received, sent)`.
    pub(in crate::fabric) fn drain(
        &mut self,
        from: u64,
        upto: u64,
        mut each: impl FnMut(u64, usize, PortRecords<V>, PortRecords<V>),
    ) {
        let take = |l: &mut Vec<(u64, u16, Packet)>, c: u64, p: u16| {
            l.iter().position(|e| e.0 == c && e.1 == p).map(|k| Flit {
                pkt: l.swap_remove(k).2,
                index: 0,
            })
        };
        let take_back = |l: &mut Vec<(u64, u16, Backward<V>)>, c: u64, p: u16| {
            l.iter()
                .position(|e| e.0 == c && e.1 == p)
                .map(|k| l.swap_remove(k).2)
        };
        for c in from..upto {
            for p in 0..self.ports as u16 {
                let got = (
                    take(&mut self.heads_in, c, p),
                    take_back(&mut self.backs_in, c, p),
                );
                let sent = (
                    take(&mut self.heads_out, c, p),
                    take_back(&mut self.backs_out, c, p),
                );
                each(c, p as usize, got, sent);
            }
        }
        debug_assert!(
            self.heads_in
                .iter()
                .chain(&self.heads_out)
                .all(|e| e.0 >= upto),
            "a record of switch {} before cycle {upto} was left",
            self.switch
        );
    }
}

impl<const V: usize> EventCore<V> {
    /// From now on, notes what switch `s`'s ports receive and send.
    pub(in crate::fabric) fn record(&mut self, s: u32) {
        let first = self.first[s as usize];
        let ports = self.ins[first as usize].place.ports as u32;
        self.rec = Some(Box::new(LinkLog::new(s, first, ports)));
    }

    /// The link log of the recorded switch, if any.
    pub(super) fn link_log(&mut self) -> Option<&mut LinkLog<V>> {
        self.rec.as_deref_mut()
    }

    /// A head reaches flat input `j` in `now`.
    #[inline(always)]
    pub(super) fn note_head_in(&mut self, j: u32, pkt: Packet, now: u64) {
        if let Some(r) = self.rec.as_deref_mut()
            && let Some(p) = r.port(j)
        {
            r.heads_in.push((now, p, pkt));
        }
    }

    /// Flat output `j` sends the head of `pkt` in cycle `at`.
    #[inline(always)]
    pub(super) fn note_head_out(&mut self, j: u32, pkt: Packet, at: u64) {
        if let Some(r) = self.rec.as_deref_mut()
            && let Some(p) = r.port(j)
        {
            r.heads_out.push((at, p, pkt));
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
        if let Some(r) = self.rec.as_deref_mut()
            && let Some(p) = r.port(j)
        {
            let b = LinkLog::back(&mut r.backs_in, now, p);
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
        if let Some(r) = self.rec.as_deref_mut()
            && let Some(p) = r.port(j)
        {
            let b = LinkLog::back(&mut r.backs_out, at, p);
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
        if let Some(r) = self.rec.as_deref_mut()
            && let Some(p) = r.port(j)
        {
            let list = if arriving {
                &mut r.backs_in
            } else {
                &mut r.backs_out
            };
            LinkLog::back(list, now, p).arn = Some(info);
        }
    }
}
