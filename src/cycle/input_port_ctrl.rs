//! `input_port_ctrl.sv`: the input port controller of one port (Rocher-Gonzalez et al.,
//! pseudo-code 4): link receive into a VC-partitioned buffer whose packets are descriptors in a
//! pool, VOQ accounting per output and per (VC, output), the FIFO of each (VC, output) as a linked
//! list over the pool, the LFT read of each head, the routing stage's registers, and what the port
//! sends back upstream: the credits it frees and at most one ARN per cycle (an eight-deep FIFO,
//! one gap timer per ARN-table entry).
//!
//! Registers only change in [`InputPortCtrl`]'s `apply_*` methods, which the switch calls at the
//! clock edge in the order of its phases; everything else reads them. The switch's phase 4, link
//! receive (`CycleSwitch::receive_flits`), is here too; the routing stage is in
//! `routing_stage.rs`.

use super::port::LinkFlit;
use super::{CycleSwitch, PortIn};
use crate::blocks::lft_banks::{LftBanksIn, LftBanksOut, LftOptions, MAX_OPTIONS, NO_ROUTE};
use crate::blocks::{Block, LftBanks};
use crate::switch::SwitchFault;
use crate::wire::{ArnInfo, Packet, PacketFlags};
use heapless::Deque;

/// End of a list, and "no slot".
pub const NIL: u16 = u16::MAX;

/// Depth of the FIFO of ARNs waiting to go upstream.
pub const ARN_FIFO_DEPTH: usize = 8;

/// One packet descriptor of the pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Slot {
    /// The packet as stored (its `vc` is the VC of this buffer; the routing stage sets its
    /// adapted bit).
    pub pkt: Packet,
    /// Output chosen by the routing stage.
    pub out: u8,
    /// VC in the next buffer (the SL-to-VL table's answer), set when routed.
    pub next_vc: u8,
    /// Flits received so far.
    pub arrived: u16,
    /// Placed in a VOQ by the routing stage.
    pub routed: bool,
    /// FA: the credits an adaptive packet leaves free beyond its own length, the escape half of
    /// its next VC (0: not adaptive).
    pub reserve: u16,
    /// FA: the escape route (option 0) of an adaptive packet.
    pub escape: u8,
    /// FCFS: the stamp it took joining its FIFO (the number of the cycle from which it
    /// requests its output, 32 bits).
    pub stamp: u32,
}

/// The packet whose flits are arriving.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Rx {
    /// Its slot.
    pub slot: u16,
    /// Flits still due.
    pub left: u16,
}

/// What the routing stage decided for the head it holds (written at the clock edge).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RouteWrite {
    /// The slot routed.
    pub slot: u16,
    /// Its output (`NO_ROUTE`: it stays unrouted).
    pub out: u8,
    /// Its VC in the next buffer.
    pub next_vc: u8,
    /// Its header flags (the adapted bit).
    pub flags: PacketFlags,
    /// FA: routed to an adaptive option: the escape route behind it and the escape half of the
    /// option's next VC.
    pub adaptive: Option<(u8, u16)>,
}

/// A flit taken in from the link (written at the clock edge).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ArrivalWrite {
    /// A head: the packet takes slot `slot` (the first free one).
    Head {
        /// Slot taken.
        slot: u16,
        /// Its descriptor.
        pkt: Packet,
    },
    /// The next flit of the packet arriving.
    Body,
}

/// The controller of one input port.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InputPortCtrl {
    vcs: usize,
    ports: usize,
    cap: u16,
    /// `slot_used_q`: slots holding a packet.
    used: Vec<bool>,
    /// `slot_q`: the descriptor pool.
    slots: Vec<Slot>,
    /// `next_q`: list links of the VOQ FIFOs.
    next: Vec<u16>,
    /// `head_q[vc][out]`, `tail_q[vc][out]`: ends of each FIFO.
    head: Vec<u16>,
    tail: Vec<u16>,
    /// `occ_q[vc]`: flits stored per VC (the credits spent upstream).
    occ: Vec<u16>,
    /// `voq_occ_q[out]`: flits of routed packets for each output, over all VCs.
    voq: Vec<u16>,
    /// `vc_voq_occ_q[vc][out]`.
    vc_voq: Vec<u16>,
    /// `rcvd_q[vc]`: flits received per VC (a performance counter).
    received: Vec<u64>,
    /// `rx_q`: the packet arriving.
    rx: Option<Rx>,
    /// `route_q`: the head registered for the routing stage (its LFT read is under way).
    route_q: Option<u16>,
    /// The LFT, read once per head.
    pub(super) lft: LftBanks,
    /// The LFT's registered read of this cycle (issued by the head of last cycle).
    lft_out: LftBanksOut,
    /// `arn_fifo_q`: ARNs waiting to go upstream.
    arn_out: Deque<ArnInfo, ARN_FIFO_DEPTH>,
    /// `gap_q[entry]`: cycles before this port may send an ARN for that ARN-table entry again.
    gap: Vec<u32>,
    packets: usize,
}

impl InputPortCtrl {
    /// A controller with `vcs` VCs of `cap` flits, `ports` outputs, a pool of `pool` descriptors,
    /// a copy of the programmed LFT and one gap timer per ARN-table entry.
    pub fn new(
        vcs: usize,
        ports: usize,
        cap: u16,
        pool: usize,
        lft: LftBanks,
        arn_entries: usize,
    ) -> Self {
        assert!(pool < NIL as usize);
        InputPortCtrl {
            vcs,
            ports,
            cap,
            used: vec![false; pool],
            slots: vec![Slot::default(); pool],
            next: vec![NIL; pool],
            head: vec![NIL; vcs * ports],
            tail: vec![NIL; vcs * ports],
            occ: vec![0; vcs],
            voq: vec![0; ports],
            vc_voq: vec![0; vcs * ports],
            received: vec![0; vcs],
            rx: None,
            route_q: None,
            lft,
            lft_out: LftBanksOut::default(),
            arn_out: Deque::new(),
            gap: vec![0; arn_entries],
            packets: 0,
        }
    }

    fn q(&self, vc: usize, out: usize) -> usize {
        vc * self.ports + out
    }

    /// Flits stored in `vc`.
    pub fn occupancy(&self, vc: usize) -> u16 {
        self.occ[vc]
    }

    /// Flits of routed packets waiting for `out` (the VOQ occupancy).
    pub fn voq_occupancy(&self, out: usize) -> u16 {
        self.voq[out]
    }

    /// Flits of routed packets in `vc` waiting for `out`.
    pub fn vc_voq_occupancy(&self, vc: usize, out: usize) -> u16 {
        self.vc_voq[self.q(vc, out)]
    }

    /// Flits received on `vc`.
    pub fn received(&self, vc: usize) -> u64 {
        self.received[vc]
    }

    /// Packets held.
    pub fn packets(&self) -> usize {
        self.packets
    }

    /// ARNs waiting to go upstream.
    pub fn arns_waiting(&self) -> usize {
        self.arn_out.len()
    }

    /// The slot at the head of the (VC, output) FIFO.
    pub fn head(&self, vc: usize, out: usize) -> Option<u16> {
        let s = self.head[self.q(vc, out)];
        (s != NIL).then_some(s)
    }

    /// A descriptor by slot.
    pub fn slot(&self, s: u16) -> &Slot {
        &self.slots[s as usize]
    }

    /// The head held for the routing stage.
    pub fn route_q(&self) -> Option<u16> {
        self.route_q
    }

    /// What the LFT read issued for that head returned (this cycle's registered read).
    pub fn lft_options(&self) -> LftOptions {
        let banks = self.lft.banks();
        let mut o = LftOptions {
            ports: [NO_ROUTE; MAX_OPTIONS],
            mask: self.lft_out.rd_mask,
            count: banks as u8,
        };
        for (b, p) in o.ports.iter_mut().enumerate().take(banks) {
            *p = (self.lft_out.rd_ports >> (8 * b)) as u8;
        }
        o
    }

    /// Whether an ARN for table entry `e` may go upstream this cycle (its gap has passed and the
    /// FIFO has room).
    pub fn may_send_arn(&self, e: usize) -> bool {
        self.gap.get(e).is_some_and(|&g| g == 0) && !self.arn_out.is_full()
    }

    /// The first free slot of the pool.
    pub fn free_slot(&self) -> Option<u16> {
        self.used.iter().position(|u| !u).map(|s| s as u16)
    }

    /// The packet arriving.
    pub fn rx(&self) -> Option<Rx> {
        self.rx
    }

    /// Clock edge of the routing stage: the packet in `w.slot` joins the FIFO of its VC and
    /// output, bringing the flits it has received into the VOQ counts, with `stamp`.
    pub fn apply_route(&mut self, w: RouteWrite, stamp: u32) {
        let slot = &mut self.slots[w.slot as usize];
        slot.pkt.flags = w.flags;
        if w.out == NO_ROUTE || w.out as usize >= self.ports {
            return;
        }
        slot.routed = true;
        slot.out = w.out;
        slot.next_vc = w.next_vc;
        (slot.escape, slot.reserve) = w.adaptive.unwrap_or((0, 0));
        slot.stamp = stamp;
        self.push(w.slot);
    }

    /// Slot `s`, routed to `out`, joins the tail of its (VC, output) FIFO, bringing the flits
    /// it has received into the VOQ counts.
    fn push(&mut self, s: u16) {
        let slot = &self.slots[s as usize];
        let (vc, out, arrived) = (slot.pkt.vc as usize, slot.out as usize, slot.arrived);
        let q = self.q(vc, out);
        self.voq[out] += arrived;
        self.vc_voq[q] += arrived;
        let last = self.tail[q];
        self.tail[q] = s;
        if last == NIL {
            self.head[q] = s;
        } else {
            self.next[last as usize] = s;
        }
        self.next[s as usize] = NIL;
    }

    /// Clock edge of FA's escape: the adaptive head of the (VC, `out`) FIFO leaves it for the
    /// tail of its escape route's FIFO (`next_vc` there), its flits moving with it, with
    /// `stamp`.
    pub fn apply_escape(&mut self, vc: usize, out: usize, next_vc: u8, stamp: u32) {
        let q = self.q(vc, out);
        let s = self.head[q];
        debug_assert!(s != NIL && self.slots[s as usize].reserve > 0);
        self.apply_pop(vc, out);
        let slot = &mut self.slots[s as usize];
        let arrived = slot.arrived;
        slot.reserve = 0;
        slot.out = slot.escape;
        slot.next_vc = next_vc;
        slot.stamp = stamp;
        self.voq[out] -= arrived;
        self.vc_voq[q] -= arrived;
        self.push(s);
    }

    /// The LFT's combinational phase: a head arriving issues its read (the result shows next
    /// cycle); this cycle's output is the read of the head that arrived last cycle.
    pub fn evaluate_lft(&mut self, flit: &LinkFlit) {
        self.lft_out = self.lft.evaluate(&LftBanksIn {
            rd_en: flit.valid && flit.head,
            rd_dlid: if flit.valid && flit.head {
                flit.desc.dlid
            } else {
                0
            },
            ..LftBanksIn::default()
        });
    }

    /// Clock edge of link receive: the flit joins its VC; a head takes its slot and goes to the
    /// routing stage. The LFT's registers take the read issued this cycle.
    pub fn apply_arrival(&mut self, w: Option<ArrivalWrite>) {
        let slot = match w {
            Some(ArrivalWrite::Head { slot, pkt }) => {
                self.used[slot as usize] = true;
                self.packets += 1;
                self.slots[slot as usize] = Slot {
                    pkt,
                    ..Slot::default()
                };
                self.next[slot as usize] = NIL;
                self.rx = Some(Rx {
                    slot,
                    left: pkt.len,
                });
                self.route_q = Some(slot);
                Some(slot)
            }
            Some(ArrivalWrite::Body) => {
                self.route_q = None;
                self.rx.map(|r| r.slot)
            }
            None => {
                self.route_q = None;
                None
            }
        };
        self.lft.commit();
        let Some(s) = slot else { return };
        let slot = &mut self.slots[s as usize];
        slot.arrived += 1;
        let vc = slot.pkt.vc as usize;
        self.occ[vc] += 1;
        self.received[vc] += 1;
        if slot.routed {
            let (out, q) = (slot.out as usize, vc * self.ports + slot.out as usize);
            self.voq[out] += 1;
            self.vc_voq[q] += 1;
        }
        if let Some(r) = &mut self.rx {
            r.left -= 1;
            if r.left == 0 {
                self.rx = None;
            }
        }
    }

    /// Clock edge of an output's arbitration: the head of the (VC, output) FIFO leaves the FIFO
    /// (its flits stay until they leave).
    pub fn apply_pop(&mut self, vc: usize, out: usize) {
        let q = self.q(vc, out);
        let s = self.head[q];
        debug_assert!(s != NIL);
        self.head[q] = self.next[s as usize];
        if self.head[q] == NIL {
            self.tail[q] = NIL;
        }
        self.next[s as usize] = NIL;
    }

    /// Clock edge of a flit leaving for `out` from slot `s`: one flit less in the VC and VOQ
    /// counts; the tail releases the slot.
    pub fn apply_departure(&mut self, s: u16, out: usize, tail: bool) {
        let vc = self.slots[s as usize].pkt.vc as usize;
        let q = self.q(vc, out);
        self.occ[vc] -= 1;
        self.voq[out] -= 1;
        self.vc_voq[q] -= 1;
        if tail {
            self.used[s as usize] = false;
            self.packets -= 1;
        }
    }

    /// Clock edge of the ARN FIFO and the gap timers: `push` joins the FIFO and restarts its
    /// entry's gap; the front leaves when `pop`.
    pub fn apply_arn(&mut self, push: Option<(ArnInfo, u8)>, pop: bool, gap: u32) {
        for g in &mut self.gap {
            *g = g.saturating_sub(1);
        }
        if let Some((info, e)) = push {
            let _ = self.arn_out.push_back(info);
            self.gap[e as usize] = gap.saturating_sub(1);
        }
        if pop {
            self.arn_out.pop_front();
        }
    }

    /// The ARN that leaves upstream this cycle: the FIFO's front, or `push` when it is empty.
    pub fn arn_front(&self, push: Option<ArnInfo>) -> Option<ArnInfo> {
        self.arn_out.front().copied().or(push)
    }

    /// Number of VCs.
    pub fn vcs(&self) -> usize {
        self.vcs
    }

    /// Capacity of each VC.
    pub fn capacity(&self) -> u16 {
        self.cap
    }
}

impl CycleSwitch {
    /// 4. Link receive.
    pub(super) fn receive_flits(&mut self, inp: &[PortIn]) -> Result<(), SwitchFault> {
        for (i, p) in inp.iter().enumerate() {
            self.w.arrivals[i] = None;
            let f = p.flit;
            if !f.valid {
                continue;
            }
            let c = &self.inputs[i];
            let fault = |what: String| SwitchFault {
                port: i as u8,
                what,
            };
            if f.vc as usize >= self.vcs {
                return Err(fault(format!(
                    "flit on VC {} of a {}-VC port",
                    f.vc, self.vcs
                )));
            }
            if c.occupancy(f.vc as usize) >= c.capacity() {
                return Err(fault(format!(
                    "VC {} overflow: a flit arrived with the buffer full (negative credit upstream)",
                    f.vc
                )));
            }
            if f.head {
                if let Some(rx) = c.rx() {
                    return Err(fault(format!(
                        "head of packet {} while {} flits of packet {} are still due",
                        f.desc.id,
                        rx.left,
                        c.slot(rx.slot).pkt.id
                    )));
                }
                let Some(slot) = c.free_slot() else {
                    return Err(fault("packet descriptor pool full".into()));
                };
                if f.tail != (f.desc.len <= 1) || f.desc.len == 0 {
                    return Err(fault(format!(
                        "head of packet {} with a wrong tail bit",
                        f.desc.id
                    )));
                }
                let pkt = Packet { vc: f.vc, ..f.desc };
                self.w.arrivals[i] = Some(ArrivalWrite::Head { slot, pkt });
            } else {
                let Some(rx) = c.rx() else {
                    return Err(fault("a body flit with no packet arriving".into()));
                };
                let pkt = &c.slot(rx.slot).pkt;
                if f.vc != pkt.vc || f.tail != (rx.left == 1) {
                    return Err(fault(format!(
                        "a body flit of packet {} out of step",
                        pkt.id
                    )));
                }
                self.w.arrivals[i] = Some(ArrivalWrite::Body);
            }
        }
        Ok(())
    }
}
