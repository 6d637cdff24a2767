//! A recorded switch's link records as they reach the fabric's recorder: in one process straight
//! from the part that steps the switch, on MPI ranks as words gathered from the rank that steps
//! it, so that every rank makes the frames a process makes. State kept for the split; it models
//! no hardware.

use super::record::PortRecords;
use super::*;
use crate::fabric::ranks::{bytes_to_words, words_to_bytes};
use crate::wire::packet::PacketFlags;
use crate::wire::{ArnInfo, Cnm};

/// One port's records in one cycle: (switch, cycle, port, received, sent).
type PortCycle<const V: usize> = (u32, u64, usize, PortRecords<V>, PortRecords<V>);

/// Appends what port `p` of switch `s` received and sent in cycle `c` to `w`, unless it is
/// nothing: the cycle, then the switch, the port and which of the four records follow, then
/// each of them.
fn encode_port<const V: usize>((s, c, p, got, sent): PortCycle<V>, w: &mut Vec<u64>) {
    let present = [
        got.0.is_some(),
        got.1.is_some(),
        sent.0.is_some(),
        sent.1.is_some(),
    ];
    if !present.contains(&true) {
        return;
    }
    let bits = (0..4).fold(0u64, |b, i| b | (present[i] as u64) << i);
    w.extend([c, s as u64 | (p as u64) << 32 | bits << 56]);
    for (flit, back) in [got, sent] {
        if let Some(f) = flit {
            encode_packet(&f.pkt, w);
        }
        if let Some(b) = back {
            encode_back(&b, w);
        }
    }
}

fn encode_packet(p: &Packet, w: &mut Vec<u64>) {
    w.extend([
        p.injected,
        p.id as u64 | (p.src as u64) << 32 | (p.dlid as u64) << 48,
        p.len as u64
            | (p.flow as u64) << 16
            | (p.sl as u64) << 32
            | (p.vc as u64) << 40
            | (p.orig_vc as u64) << 48
            | (p.flags.bits() as u64) << 56,
    ]);
}

fn encode_back<const V: usize>(b: &Backward<V>, w: &mut Vec<u64>) {
    for bytes in [&b.start, &b.stop] {
        w.extend(bytes_to_words(bytes));
    }
    for pair in b.start_flits.chunks(2) {
        w.push(pair.iter().rev().fold(0u64, |x, &v| x << 32 | v as u64));
    }
    match b.arn {
        Some(a) => w.extend([
            1 | (a.dest as u64) << 8
                | (a.port as u64) << 24
                | (a.vc as u64) << 32
                | (a.root_info as u64) << 40,
            a.arn_id as u64,
        ]),
        None => w.extend([0, 0]),
    }
    w.push(b.cnm.map_or(0, |c| 1 | c.bits() << 1));
}

/// Reads the words of [`encode_port`] back, appending each port's records to `out`.
fn decode_ports<const V: usize>(w: &[u64], out: &mut Vec<PortCycle<V>>) {
    let mut w = w.iter().copied();
    while let Some(c) = w.next() {
        let mut next = || w.next().expect("a port's records are whole");
        let head = next();
        let (s, p, bits) = (head as u32, (head >> 32) as u16 as usize, head >> 56);
        let mut side = |flit: bool, back: bool| -> PortRecords<V> {
            let flit = flit.then(|| Flit {
                pkt: decode_packet([next(), next(), next()]),
                index: 0,
            });
            let back = back.then(|| decode_back(&mut next));
            (flit, back)
        };
        let got = side(bits & 1 != 0, bits & 2 != 0);
        let sent = side(bits & 4 != 0, bits & 8 != 0);
        out.push((s, c, p, got, sent));
    }
}

fn decode_back<const V: usize>(next: &mut impl FnMut() -> u64) -> Backward<V> {
    let mut b = Backward::<V>::default();
    for bytes in [&mut b.start, &mut b.stop] {
        let words: Vec<u64> = (0..V.div_ceil(8)).map(|_| next()).collect();
        for (v, x) in bytes.iter_mut().zip(words_to_bytes(&words)) {
            *v = x;
        }
    }
    for pair in b.start_flits.chunks_mut(2) {
        let x = next();
        for (i, v) in pair.iter_mut().enumerate() {
            *v = (x >> (32 * i)) as u32;
        }
    }
    let (a, id) = (next(), next());
    b.arn = (a & 1 == 1).then_some(ArnInfo {
        dest: (a >> 8) as u16,
        port: (a >> 24) as u8,
        vc: (a >> 32) as u8,
        arn_id: id as u32,
        root_info: (a >> 40) as u8,
    });
    let c = next();
    b.cnm = (c & 1 == 1).then(|| Cnm::of_bits(c >> 1));
    b
}

fn decode_packet(w: [u64; 3]) -> Packet {
    Packet {
        injected: w[0],
        id: w[1] as u32,
        src: (w[1] >> 32) as u16,
        dlid: (w[1] >> 48) as u16,
        len: w[2] as u16,
        flow: (w[2] >> 16) as u16,
        sl: (w[2] >> 32) as u8,
        vc: (w[2] >> 40) as u8,
        orig_vc: (w[2] >> 48) as u8,
        flags: PacketFlags::from_bits_retain((w[2] >> 56) as u8),
    }
}

impl<const V: usize> Fabric<V> {
    /// Hands the link records the recorded switches' ports received and sent in cycles
    /// `from..upto` to their recorders, and forgets them in `engine`. On MPI ranks every rank
    /// gathers what the others noted, so that each makes the frames of every recorded switch.
    pub(super) fn capture_records(
        &mut self,
        engine: &mut EventEngine<V>,
        (from, upto): (u64, u64),
    ) {
        let recorded: Vec<u32> = self
            .recorders
            .iter()
            .flatten()
            .map(|r| r.switch())
            .collect();
        let recorders = &mut self.recorders;
        let mut capture = |(s, c, p, got, sent): PortCycle<V>| {
            if let Some(r) = recorders[s as usize].as_deref_mut() {
                r.capture_port(c, p, got, sent);
            }
        };
        let Some(ranks) = &self.ranks else {
            engine.drain_records(recorded.into_iter(), (from, upto), |s, c, p, got, sent| {
                capture((s, c, p, got, sent))
            });
            return;
        };
        let mut mine = Vec::new();
        engine.drain_records(
            recorded.iter().copied(),
            (from, upto),
            |s, c, p, got, sent| encode_port((s, c, p, got, sent), &mut mine),
        );
        let mut noted = Vec::new();
        for words in ranks.gather(&mine) {
            decode_ports::<V>(&words, &mut noted);
        }
        // One rank steps each switch, and notes each of its ports' records once.
        noted.sort_by_key(|e| (e.0, e.1, e.2));
        let mut noted = noted.into_iter().peekable();
        let nothing = || ((None, None), (None, None));
        for s in recorded {
            for c in from..upto {
                for p in 0..self.switches[s as usize].ports() {
                    let (got, sent) = match noted.next_if(|e| (e.0, e.1, e.2) == (s, c, p)) {
                        Some((_, _, _, got, sent)) => (got, sent),
                        None => nothing(),
                    };
                    capture((s, c, p, got, sent));
                }
            }
        }
        debug_assert!(noted.next().is_none(), "a record of no recorded port");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn packet() -> impl Strategy<Value = Packet> {
        (
            any::<u64>(),
            any::<u32>(),
            any::<[u16; 4]>(),
            any::<[u8; 4]>(),
        )
            .prop_map(|(injected, id, h, b)| Packet {
                injected,
                id,
                src: h[0],
                dlid: h[1],
                len: h[2],
                flow: h[3],
                sl: b[0],
                vc: b[1],
                orig_vc: b[2],
                flags: PacketFlags::from_bits_retain(b[3]),
            })
    }

    fn back() -> impl Strategy<Value = Backward<16>> {
        (
            any::<[u8; 16]>(),
            any::<[u32; 16]>(),
            any::<[u8; 16]>(),
            proptest::option::of((any::<u16>(), any::<[u8; 3]>(), any::<u32>())),
            proptest::option::of((any::<u16>(), any::<u16>(), 1u8..64)),
        )
            .prop_map(|(start, start_flits, stop, arn, cnm)| Backward {
                start,
                start_flits,
                stop,
                arn: arn.map(|(dest, b, arn_id)| ArnInfo {
                    dest,
                    port: b[0],
                    vc: b[1],
                    arn_id,
                    root_info: b[2],
                }),
                cnm: cnm.map(|(src, dest, fb)| Cnm { src, dest, fb }),
            })
    }

    fn side() -> impl Strategy<Value = PortRecords<16>> {
        (
            proptest::option::of(packet().prop_map(|pkt| Flit { pkt, index: 0 })),
            proptest::option::of(back()),
        )
    }

    proptest! {
        /// What a rank notes of a recorded port reaches the others whole; a port with nothing
        /// takes no words.
        #[test]
        fn a_ports_records_go_between_ranks_whole(
            ports in proptest::collection::vec(
                (any::<u32>(), any::<u64>(), 0..256usize, side(), side()),
                0..8,
            ),
        ) {
            let mut w = Vec::new();
            for &e in &ports {
                encode_port::<16>(e, &mut w);
            }
            let mut back = Vec::new();
            decode_ports::<16>(&w, &mut back);
            let some: Vec<_> = ports
                .into_iter()
                .filter(|e| e.3 != (None, None) || e.4 != (None, None))
                .collect();
            prop_assert_eq!(back, some);
        }
    }
}
