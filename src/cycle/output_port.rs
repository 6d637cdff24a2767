//! `output_port.sv`: one output port: a credit counter per VC of the buffer at the far end of
//! its link, the two-level round-robin arbitration (an input-level arbiter over the inputs, and
//! per input a VC-level arbiter over its VCs) among the (input, VC) heads whose packet fits whole
//! in the downstream credits (virtual cut-through; under FCFS only those whose head joined its
//! FIFO first, by the 32-bit stamp it took), the packet being sent one flit per cycle from
//! head to tail (its head marked FECN when the output's InfiniBand congestion control says so,
//! [`FecnMarking`](crate::blocks::fecn_marker::FecnMarking)), the congestion detector of the output and its root register. The switch's
//! phase 5 (`CycleSwitch::transmit`: sending and arbitration) is here too; the detector's phase
//! is in `detection.rs`.

use super::input_port_ctrl::ArrivalWrite;
use super::{CycleSwitch, LinkFlit, PortIn, PortOut};
use crate::blocks::Block;
use crate::blocks::congestion_detector::DetectorConfig;
use crate::blocks::credit_counter::CreditCounterIn;
use crate::blocks::rr_arbiter::RrArbiterIn;
use crate::blocks::{CongestionDetector, CreditCounter, RrArbiter};
use crate::switch::{OutputArbitration, SwitchFault, keep_oldest};
use crate::wire::{ArnInfo, PacketFlags};

/// The packet the output sends (`tx_q`): one flit per cycle from its head.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// Its head leaves with FECN (InfiniBand congestion control,
    /// [`FecnMarking`](crate::blocks::fecn_marker::FecnMarking)).
    #[serde(default)]
    pub fecn: bool,
}

/// The root register of a congested output (`root_q`): the ARN it files, and the cycles to its
/// next refresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Root {
    /// The ARN of the root.
    pub info: ArnInfo,
    /// Cycles before the root refreshes its entry again (0: this cycle).
    pub refresh: u32,
}

/// One output port.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// FECN marking's counter (`mark_cnt_q`): eligible packets to let pass before the next
    /// mark.
    #[serde(default)]
    pub(super) mark_count: u16,
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
            mark_count: 0,
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

    /// FECN marking's counter.
    pub fn mark_count(&self) -> u16 {
        self.mark_count
    }

    /// The congestion detector.
    pub fn detector(&self) -> &CongestionDetector {
        &self.detector
    }
}

impl CycleSwitch {
    /// 5. The output ports: the next flit of each packet being sent, and arbitration.
    pub(super) fn transmit(
        &mut self,
        inp: &[PortIn],
        out: &mut [PortOut],
    ) -> Result<(), SwitchFault> {
        for o in 0..self.ports {
            self.w.sends[o] = None;
            self.w.grants[o] = None;
            let mut sending_vc = None;
            let mut finishing = true;
            if let Some(tx) = self.outputs[o].tx {
                let c = &self.inputs[tx.input as usize];
                let arriving = match self.w.arrivals[tx.input as usize] {
                    Some(ArrivalWrite::Body) => c.rx().is_some_and(|r| r.slot == tx.slot) as u16,
                    _ => 0,
                };
                if c.slot(tx.slot).arrived + arriving <= tx.sent {
                    return Err(SwitchFault {
                        port: o as u8,
                        what: format!(
                            "cut-through underrun: packet {} leaves faster than it arrives",
                            c.slot(tx.slot).pkt.id
                        ),
                    });
                }
                let tail = tx.sent + 1 == tx.len;
                out[o].flit = if tx.sent == 0 {
                    let mut pkt = c.slot(tx.slot).pkt;
                    pkt.vc = tx.next_vc;
                    if tx.fecn {
                        pkt.flags |= PacketFlags::FECN;
                    }
                    LinkFlit::head_of(pkt)
                } else {
                    LinkFlit::body(tx.next_vc, tx.sent, tx.len)
                };
                out[tx.input as usize].credit[tx.in_vc as usize] += 1;
                sending_vc = Some(tx.next_vc);
                finishing = tail;
                self.w.sends[o] = Some((tx, tail));
            }
            let port = &mut self.outputs[o];
            for (v, cc) in port.credits.iter_mut().enumerate() {
                let dec = sending_vc == Some(v as u8);
                let inc = inp[o].credit[v];
                if cc.credits() as u32 + inc as u32 > cc.cap() as u32 + dec as u32 {
                    return Err(SwitchFault {
                        port: o as u8,
                        what: format!(
                            "credit counter of VC {v}: more credits back than flits sent (overflow)"
                        ),
                    });
                }
                cc.evaluate(&CreditCounterIn { dec, inc, need: 0 });
            }
            let ports = self.ports;
            self.w.escapes[o * ports..(o + 1) * ports].fill(0);
            if !finishing {
                continue;
            }
            // Requests: per input, the VCs whose head packet fits in the credits of the start of
            // the cycle, less the one this cycle's flit spends. FA's adaptive heads that do not
            // fit in the adaptive half leave for their escape route at the clock edge.
            let mut req_inputs = 0u128;
            // Some head waiting for `o` lacks the credits to request (FECN: `o` is a victim).
            let mut short = false;
            for i in 0..ports {
                let (req, escapes, heads) = self.vc_requests(i, o, sending_vc);
                self.w.requests[i] = req;
                if req != 0 {
                    req_inputs |= 1 << i;
                }
                short |= heads & !req != 0;
                self.w.escapes[o * ports + i] = escapes;
            }
            if req_inputs != 0 && self.params.arbitration == OutputArbitration::Fcfs {
                let inputs = &self.inputs;
                req_inputs = keep_oldest(req_inputs, &mut self.w.requests, |i, v| {
                    let c = &inputs[i];
                    c.slot(c.head(v, o).expect("a requesting VC has a head"))
                        .stamp
                });
            }
            let g = self.outputs[o].in_arb.evaluate(&RrArbiterIn {
                req: req_inputs,
                ack: true,
            });
            if !g.valid {
                continue;
            }
            let i = g.idx as usize;
            let req_vcs = self.w.requests[i];
            let gv = self.outputs[o].vc_arb[i].evaluate(&RrArbiterIn {
                req: req_vcs,
                ack: true,
            });
            let v = gv.idx as usize;
            let Some(s) = self.inputs[i].head(v, o) else {
                unreachable!("a granted VC has a head");
            };
            let slot = self.inputs[i].slot(s);
            let mut count = self.outputs[o].mark_count;
            let fecn = self.params.fecn.on() && {
                let queue = self.inputs.iter().map(|c| c.voq_occupancy(o) as u32).sum();
                self.params
                    .fecn
                    .grant(o, queue, short, slot.pkt.len, &mut count)
            };
            let tx = Tx {
                input: i as u8,
                slot: s,
                in_vc: v as u8,
                next_vc: slot.next_vc,
                len: slot.pkt.len,
                sent: 0,
                fecn,
            };
            self.w.grants[o] = Some((i as u8, v as u8, tx, count));
        }
        Ok(())
    }

    /// The VCs of input `i` whose head packet for output `o` may win it this cycle, (FA) those
    /// whose adaptive head is short of room in the adaptive half of its next VC, and those with
    /// a head for `o`.
    fn vc_requests(&self, i: usize, o: usize, sending_vc: Option<u8>) -> (u128, u16, u128) {
        let c = &self.inputs[i];
        let (mut vcs, mut escapes, mut heads) = (0u128, 0u16, 0u128);
        for v in 0..self.vcs {
            let Some(s) = c.head(v, o) else { continue };
            heads |= 1 << v;
            let slot = c.slot(s);
            let spent = (sending_vc == Some(slot.next_vc)) as u16;
            let credits = self.outputs[o].credits(slot.next_vc as usize);
            let need = slot.pkt.len as u32 + slot.reserve as u32;
            if credits.saturating_sub(spent) as u32 >= need {
                vcs |= 1 << v;
            } else if slot.reserve > 0 {
                escapes |= 1 << v;
            }
        }
        (vcs, escapes, heads)
    }
}
