//! `output_port.sv`: one output port: a credit counter per VC of the buffer at the far end of
//! its link, the two-level round-robin arbitration (an input-level arbiter over the inputs, and
//! per input a VC-level arbiter over its VCs) among the (input, VC) heads whose packet fits whole
//! in the downstream credits (virtual cut-through), the packet being sent one flit per cycle from
//! head to tail, the congestion detector of the output and its root register.

use crate::blocks::congestion_detector::DetectorConfig;
use crate::blocks::{CongestionDetector, CreditCounter, RrArbiter};
use crate::wire::ArnInfo;

/// The packet the output sends (`tx_q`): one flit per cycle from its head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tx {
    /// Input port it comes from.
    pub input: u8,
    /// Its slot in that input's pool.
    pub slot: u16,
    /// Its VC in that input's buffer.
    pub in_vc: u8,
    /// Its VC in the next buffer.
    pub next_vc: u8,
    /// Its length in flits.
    pub len: u16,
    /// Flits sent so far.
    pub sent: u16,
}

/// The root register of a congested output (`root_q`): the ARN it files, and the cycles to its
/// next refresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Root {
    /// The ARN of the root.
    pub info: ArnInfo,
    /// Cycles before the root refreshes its entry again (0: this cycle).
    pub refresh: u32,
}

/// One output port.
#[derive(Clone, PartialEq, Eq)]
pub struct OutputPort {
    /// Per VC of the far buffer.
    pub(super) credits: Vec<CreditCounter>,
    /// `tx_q`.
    pub(super) tx: Option<Tx>,
    /// Input-level arbiter.
    pub(super) in_arb: RrArbiter,
    /// Per input, the VC-level arbiter.
    pub(super) vc_arb: Vec<RrArbiter>,
    /// The congestion detector.
    pub(super) detector: CongestionDetector,
    /// `root_q`.
    pub(super) root: Option<Root>,
    /// Flits sent per VC (a performance counter).
    pub(super) sent: Vec<u64>,
}

impl OutputPort {
    /// An output of a `ports`-port switch with `vcs` VCs, the far buffer holding `cap` flits per
    /// VC.
    pub fn new(ports: usize, vcs: usize, cap: u16, detector: DetectorConfig) -> Self {
        OutputPort {
            credits: (0..vcs)
                .map(|_| CreditCounter::new(cap.max(1) as usize))
                .collect(),
            tx: None,
            in_arb: RrArbiter::new(ports),
            vc_arb: (0..ports).map(|_| RrArbiter::new(vcs)).collect(),
            detector: CongestionDetector::new(detector),
            root: None,
            sent: vec![0; vcs],
        }
    }

    /// Free credits of `vc` at the start of the cycle (`cnt_q`); 0 for a VC the port lacks.
    pub fn credits(&self, vc: usize) -> u16 {
        self.credits.get(vc).map_or(0, |c| c.credits())
    }

    /// The packet being sent.
    pub fn tx(&self) -> Option<Tx> {
        self.tx
    }

    /// The root register.
    pub fn root(&self) -> Option<Root> {
        self.root
    }

    /// Flits sent on `vc`.
    pub fn flits_sent(&self, vc: usize) -> u64 {
        self.sent[vc]
    }

    /// The congestion detector.
    pub fn detector(&self) -> &CongestionDetector {
        &self.detector
    }
}
