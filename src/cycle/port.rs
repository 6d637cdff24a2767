//! The link interface of one switch port, cycle by cycle, as `switch.sv` has it: on the forward
//! direction one flit per cycle (valid, VC, head and tail, the packet's descriptor on its head
//! flit), on the reverse direction per-VC credit returns and at most one ARN control flit.
//!
//! A port's input side is what the link brings to the switch in a cycle ([`PortIn`]): a flit on
//! the input link, and the credits and ARN coming back on the reverse direction of the output
//! link. Its output side is what the switch drives ([`PortOut`]): a flit on the output link, and
//! the credits and ARN it sends back upstream on the reverse direction of the input link.

use crate::wire::{ArnInfo, Cnm, Packet};

/// Largest number of VCs per port (InfiniBand's data VLs 0 to 15).
pub const MAX_LINK_VCS: usize = 16;

/// One flit on a link in one cycle (`flit_valid`, `flit_vc`, `flit_head`, `flit_tail`,
/// `flit_desc`). Body flits carry a zero descriptor: only the head's is meaningful.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LinkFlit {
    /// `flit_valid`: a flit is on the link this cycle.
    pub valid: bool,
    /// `flit_vc`: the VC of the receiving buffer it goes to.
    pub vc: u8,
    /// `flit_head`: the first flit of its packet.
    pub head: bool,
    /// `flit_tail`: the last flit of its packet (a one-flit packet is head and tail).
    pub tail: bool,
    /// `flit_desc`: the packet's descriptor, on the head flit.
    pub desc: Packet,
}

impl LinkFlit {
    /// The head flit of `pkt` (on its `vc`).
    pub fn head_of(pkt: Packet) -> Self {
        LinkFlit {
            valid: true,
            vc: pkt.vc,
            head: true,
            tail: pkt.len <= 1,
            desc: pkt,
        }
    }

    /// Flit `index` (> 0) of a packet of `len` flits on `vc`.
    pub fn body(vc: u8, index: u16, len: u16) -> Self {
        LinkFlit {
            valid: true,
            vc,
            head: false,
            tail: index + 1 == len,
            desc: Packet::default(),
        }
    }
}

/// What one port of the switch receives in one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PortIn {
    /// The flit arriving on the input link.
    pub flit: LinkFlit,
    /// `credit_i[vc]`: credits the far buffer of the output link returns this cycle, per VC.
    pub credit: [u8; MAX_LINK_VCS],
    /// `arn_valid_i`, `arn_i`: an ARN arriving on the reverse direction of the output link (its
    /// `port` field is ignored: the receiver fills it).
    pub arn: Option<ArnInfo>,
    /// `cnm_valid_i`, `cnm_i`: a QCN congestion notification arriving on the reverse direction
    /// of the output link.
    #[serde(default)]
    pub cnm: Option<Cnm>,
}

/// What one port of the switch drives in one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PortOut {
    /// The flit leaving on the output link.
    pub flit: LinkFlit,
    /// `credit_o[vc]`: credits this input's buffer frees this cycle, per VC, sent upstream.
    pub credit: [u8; MAX_LINK_VCS],
    /// `arn_valid_o`, `arn_o`: an ARN sent upstream on the reverse direction of the input link.
    pub arn: Option<ArnInfo>,
    /// `cnm_valid_o`, `cnm_o`: a QCN congestion notification sent upstream on the reverse
    /// direction of the input link.
    #[serde(default)]
    pub cnm: Option<Cnm>,
}
