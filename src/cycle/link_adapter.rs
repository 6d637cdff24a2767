//! The fabric's link records as the wires of a real link: a head record becomes the packet's flits
//! from head to tail, one per cycle, and credit-stream records become the credits of each cycle per
//! VC (see `wire::link`, "One record per packet").

use super::port::{LinkFlit, PortIn, PortOut};
use crate::wire::ArnInfo;
use crate::wire::link::{Backward, Flit};

/// A packet crossing a link one flit per cycle: the next flit's index.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct Crossing {
    vc: u8,
    len: u16,
    next: u16,
}

/// One direction of a link as wires: body flits and credit streams under way, per VC lane of
/// the fabric's records (`V`).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LinkWires<const V: usize> {
    crossing: Option<Crossing>,
    /// Credit streams running per VC, and those that stop after this cycle.
    #[serde(with = "serde_big_array::BigArray")]
    rate: [u8; V],
    #[serde(with = "serde_big_array::BigArray")]
    stopping: [u8; V],
    /// Credits of the started streams not returned yet, per VC.
    #[serde(with = "serde_big_array::BigArray")]
    pending: [u64; V],
}

impl<const V: usize> Default for LinkWires<V> {
    fn default() -> Self {
        LinkWires {
            crossing: None,
            rate: [0; V],
            stopping: [0; V],
            pending: [0; V],
        }
    }
}

impl<const V: usize> LinkWires<V> {
    /// The flit on the wires this cycle, given the head record arriving now, if any.
    pub fn flit(&mut self, head: Option<&Flit>) -> LinkFlit {
        if let Some(f) = head {
            self.crossing = (f.pkt.len > 1).then_some(Crossing {
                vc: f.pkt.vc,
                len: f.pkt.len,
                next: 1,
            });
            return LinkFlit::head_of(f.pkt);
        }
        let Some(c) = &mut self.crossing else {
            return LinkFlit::default();
        };
        let f = LinkFlit::body(c.vc, c.next, c.len);
        c.next += 1;
        if c.next == c.len {
            self.crossing = None;
        }
        f
    }

    /// The credits on the wires this cycle per VC, given the return record arriving now.
    pub fn credits(&mut self, back: Option<&Backward<V>>, out: &mut [u8]) {
        for v in 0..V {
            self.rate[v] -= self.stopping[v];
            self.stopping[v] = 0;
        }
        if let Some(b) = back {
            for v in 0..V {
                self.rate[v] += b.start[v];
                self.stopping[v] = b.stop[v];
                self.pending[v] += b.start_flits[v] as u64;
            }
        }
        for v in 0..V {
            self.pending[v] -= self.rate[v] as u64;
        }
        out[..V].copy_from_slice(&self.rate);
    }

    /// Credits on `vc` whose streams have started and that have not come back by this cycle.
    pub fn pending(&self, vc: usize) -> u64 {
        self.pending[vc]
    }
}

/// One side of a switch port as wires: the flits of one link, and the credits and ARN of the
/// other link's reverse direction.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PortWires<const V: usize> {
    flits: LinkWires<V>,
    back: LinkWires<V>,
}

impl<const V: usize> PortWires<V> {
    /// What the port receives this cycle, given the head record arriving on its input link and
    /// the return record arriving on its output link's reverse direction. An ARN's port field is
    /// left 0: the receiver fills it.
    pub fn receive(&mut self, head: Option<&Flit>, back: Option<&Backward<V>>) -> PortIn {
        let mut p = PortIn {
            flit: self.flits.flit(head),
            arn: back.and_then(|b| b.arn).map(|a| ArnInfo { port: 0, ..a }),
            cnm: back.and_then(|b| b.cnm),
            ..PortIn::default()
        };
        self.back.credits(back, &mut p.credit);
        p
    }

    /// What the port drives this cycle, given the head record it sent on its output link and
    /// the return record it sent on its input link's reverse direction.
    pub fn drive(&mut self, head: Option<&Flit>, back: Option<&Backward<V>>) -> PortOut {
        let mut p = PortOut {
            flit: self.flits.flit(head),
            arn: back.and_then(|b| b.arn),
            cnm: back.and_then(|b| b.cnm),
            ..PortOut::default()
        };
        self.back.credits(back, &mut p.credit);
        p
    }

    /// Credits on `vc` whose streams have started on the return direction and not come back.
    pub fn pending(&self, vc: usize) -> u64 {
        self.back.pending(vc)
    }
}
