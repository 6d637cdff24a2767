//! An event one part of the event engine files for a port of another: as it goes between the
//! threads of one process, and as words between the ranks of an MPI job. State kept for the
//! split; it models no hardware.

use super::calendar::{Ev, Kind};
use crate::wire::Packet;
use crate::wire::arn::ArnInfo;
use crate::wire::packet::PacketFlags;

/// An event filed for a port of another part: its cycle, and the packet of a head or the
/// fields of an ARN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Crossing {
    pub at: u64,
    pub ev: Ev,
    pub pkt: Packet,
    pub arn: ArnInfo,
}

/// Words a crossing takes between ranks.
pub(super) const WORDS: usize = 7;

const KINDS: [Kind; 9] = [
    Kind::Head,
    Kind::Output,
    Kind::CreditsStart,
    Kind::CreditsStop,
    Kind::Node,
    Kind::Arn,
    Kind::Detect,
    Kind::Cnm,
    Kind::CnmOut,
];

impl Crossing {
    /// Appends this crossing, for part `part`, to `words`.
    pub fn encode(&self, part: u8, words: &mut Vec<u64>) {
        let (e, p, a) = (&self.ev, &self.pkt, &self.arn);
        let kind = KINDS.iter().position(|&k| k == e.kind).unwrap_or(0) as u64;
        words.extend([
            self.at,
            part as u64
                | kind << 8
                | (e.vc as u64) << 16
                | (e.count as u64) << 24
                | (e.unit as u64) << 32,
            e.arg as u64 | (p.id as u64) << 32,
            p.injected,
            p.src as u64 | (p.dlid as u64) << 16 | (p.len as u64) << 32 | (p.flow as u64) << 48,
            p.sl as u64
                | (p.vc as u64) << 8
                | (p.orig_vc as u64) << 16
                | (p.flags.bits() as u64) << 24
                | (a.port as u64) << 32
                | (a.vc as u64) << 40
                | (a.root_info as u64) << 48,
            a.dest as u64 | (a.arn_id as u64) << 16,
        ]);
    }

    /// The crossing of [`WORDS`] words, and the part it is for.
    pub fn decode(w: &[u64]) -> (u8, Crossing) {
        let b = |x: u64, at: u32| (x >> at) as u8;
        let h = |x: u64, at: u32| (x >> at) as u16;
        let ev = Ev {
            kind: KINDS[(b(w[1], 8) as usize).min(KINDS.len() - 1)],
            vc: b(w[1], 16),
            count: b(w[1], 24),
            unit: (w[1] >> 32) as u32,
            arg: w[2] as u32,
        };
        let pkt = Packet {
            injected: w[3],
            id: (w[2] >> 32) as u32,
            src: h(w[4], 0),
            dlid: h(w[4], 16),
            len: h(w[4], 32),
            sl: b(w[5], 0),
            vc: b(w[5], 8),
            orig_vc: b(w[5], 16),
            flags: PacketFlags::from_bits_retain(b(w[5], 24)),
            flow: h(w[4], 48),
        };
        let arn = ArnInfo {
            dest: h(w[6], 0),
            port: b(w[5], 32),
            vc: b(w[5], 40),
            arn_id: (w[6] >> 16) as u32,
            root_info: b(w[5], 48),
        };
        let c = Crossing {
            at: w[0],
            ev,
            pkt,
            arn,
        };
        (b(w[1], 0), c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_crossing_goes_between_ranks_whole(
            at: u64, kind in 0usize..9, vc: u8, count: u8, unit: u32, arg: u32,
            injected: u64, id: u32, src: u16, dlid: u16, len: u16, sl: u8, pvc: u8, orig: u8,
            flags: u8, flow: u16, dest: u16, port: u8, avc: u8, arn_id: u32, root: u8, part in 0u8..128,
        ) {
            let c = Crossing {
                at,
                ev: Ev { kind: KINDS[kind], vc, count, unit, arg },
                pkt: Packet {
                    injected, id, src, dlid, len, sl, vc: pvc, orig_vc: orig,
                    flags: PacketFlags::from_bits_retain(flags), flow,
                },
                arn: ArnInfo { dest, port, vc: avc, arn_id, root_info: root },
            };
            let mut w = Vec::new();
            c.encode(part, &mut w);
            prop_assert_eq!(w.len(), WORDS);
            prop_assert_eq!(Crossing::decode(&w), (part, c));
        }
    }
}
