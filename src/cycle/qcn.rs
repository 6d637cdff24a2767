//! IEEE 802.1Qau in `switch.sv` (the `cnm_*` registers): each output's congestion point
//! ([`QcnPoint`]) sampling the packets its routing stages place in its VOQs, and the switch's
//! notification path: the CNMs arriving on the reverse directions of the output links and those
//! the congestion points make, each looked up in the LFT (the unit's own read port) for its
//! source's LID and queued at that port for the reverse direction of its input link, the oldest
//! one a cycle per port.
//!
//! Under snooped AR the path also writes the switch's congestion table
//! ([`crate::switch::snoop`]): each CNM, arriving or made, naming a port that is an option of its
//! destination here joins the snoop queue (`sn_fifo_q`), whose oldest entry the table takes at
//! each clock edge; a CNM the switch reroutes around is absorbed instead of queued upstream.
//!
//! In a cycle, the arrivals are queued first, by the port they arrive on, then the CNMs of the
//! samples, by the input whose packet was sampled; a CNM finding its queue full (or its source
//! unrouted) is dropped and counted. A queued CNM leaves from the cycle after it was queued.

use super::*;
use crate::blocks::CongestionTable;
use crate::blocks::congestion_point::{QcnPoint, QcnRegs};
use crate::blocks::congestion_table::Snoop;
use crate::blocks::lft_banks::NO_ROUTE;
use crate::switch::snoop::on_cnm;
use crate::wire::Cnm;

/// CNMs a port holds waiting for the reverse direction of its input link.
pub const CNM_FIFO_DEPTH: usize = 8;
/// Snooped notifications waiting for the congestion table.
pub const SNOOP_FIFO_DEPTH: usize = 16;

/// Snooped AR's part of the path: the congestion table, the queue of notifications waiting for
/// it, and each input's round-robin pointer among congested options.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct SnoopUnit {
    /// `ct_*_q`.
    pub(super) table: CongestionTable,
    /// `sn_fifo_q`.
    queue: Deque<Snoop, SNOOP_FIFO_DEPTH>,
    /// `snoop_rr_q`, per input.
    pub(super) rr: Vec<u8>,
}

/// The notification path's registers.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CnmUnit {
    /// Per output: its congestion point's registers (`cp_q`).
    cp: Vec<QcnRegs>,
    /// Per port: the CNMs waiting to go upstream (`cnm_fifo_q`).
    fifo: Vec<Deque<Cnm, CNM_FIFO_DEPTH>>,
    /// Snooped AR's congestion table, when the switch routes on it.
    pub(super) snoop: Option<SnoopUnit>,
}

/// What the notification path writes at the clock edge.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(super) struct CnmWrites {
    /// Per output, its congestion point's registers after the cycle.
    cp: Vec<QcnRegs>,
    /// The CNMs queued, in order: (port, message).
    push: heapless::Vec<(u8, Cnm), { 2 * MAX_PORTS }>,
    /// Per port, whether its oldest CNM left.
    pop: Vec<bool>,
    /// The notifications snooped, in order.
    snoops: heapless::Vec<Snoop, { 2 * MAX_PORTS }>,
}

impl CnmUnit {
    /// The reset state of a `ports`-port switch.
    pub(super) fn new(ports: usize, sp: &SwitchParams) -> Self {
        CnmUnit {
            cp: vec![QcnRegs::default(); ports],
            fifo: vec![Deque::new(); ports],
            snoop: sp.snoop.on().then(|| SnoopUnit {
                table: CongestionTable::new(sp.snoop.entries as usize, 1, ports, sp.snoop.ttl),
                queue: Deque::new(),
                rr: vec![0; ports],
            }),
        }
    }

    /// CNMs waiting, over the ports.
    pub(super) fn waiting(&self) -> usize {
        let snooped = self
            .snoop
            .as_ref()
            .map_or(0, |s| s.queue.len() + s.table.count());
        self.fifo.iter().map(|f| f.len()).sum::<usize>() + snooped
    }
}

impl CnmWrites {
    pub(super) fn new(ports: usize) -> Self {
        CnmWrites {
            cp: vec![QcnRegs::default(); ports],
            push: heapless::Vec::new(),
            pop: vec![false; ports],
            snoops: heapless::Vec::new(),
        }
    }
}

impl CycleSwitch {
    /// The notification path's part of a cycle, after the routing stages: the CNMs arriving,
    /// the samples of the packets routed, and the oldest CNM of each port sent upstream.
    pub(super) fn notify(&mut self, inp: &[PortIn], out: &mut [PortOut]) {
        let cp: QcnPoint = self.params.qcn;
        self.w.cnm.push.clear();
        self.w.cnm.snoops.clear();
        if cp.on() {
            self.w.cnm.cp.copy_from_slice(&self.cnm.cp);
        }
        for (o, p) in inp.iter().enumerate() {
            if let Some(c) = p.cnm {
                self.stats.cnms_received += 1;
                if !self.snoop(o as u8, c, false) {
                    self.queue_cnm(c);
                }
            }
        }
        if cp.on() {
            for i in 0..self.ports {
                let Some(r) = self.w.routes[i] else {
                    continue;
                };
                let o = r.out as usize;
                if r.out == NO_ROUTE || o >= self.ports {
                    continue;
                }
                let pkt = self.inputs[i].slot(r.slot).pkt;
                if !cp.arrive(pkt.len, &mut self.w.cnm.cp[o]) {
                    continue;
                }
                let queue = self.inputs.iter().map(|c| c.voq_occupancy(o) as u32).sum();
                if let Some(fb) = cp.feedback(queue, &mut self.w.cnm.cp[o]) {
                    self.stats.cnms_made += 1;
                    let c = Cnm {
                        src: pkt.src,
                        dest: pkt.dlid,
                        fb,
                    };
                    if !self.snoop(o as u8, c, true) {
                        self.queue_cnm(c);
                    }
                }
            }
        }
        for (p, o) in out.iter_mut().enumerate() {
            o.cnm = self.cnm.fifo[p].front().copied();
            self.w.cnm.pop[p] = o.cnm.is_some();
        }
    }

    /// Snooped AR: the CNM `c` naming port `p` (arrived on it, or made by its congestion point
    /// when `local`) joins the snoop queue when `p` is an option of its destination; whether the
    /// switch absorbs it (on the table as registered).
    fn snoop(&mut self, p: u8, c: Cnm, local: bool) -> bool {
        let Some(u) = &self.cnm.snoop else {
            return false;
        };
        let (snoop, kept) = on_cnm(&self.params, &self.lft, self.ports, p, c, local, |d| {
            u.table.mask(d)
        });
        if let Some(s) = snoop {
            // Room for every port's arrival and every input's sample.
            let _ = self.w.cnm.snoops.push(s);
        }
        if kept {
            self.stats.cnms_absorbed += 1;
        }
        kept
    }

    /// Queues `c` at the port the LFT gives its source's LID.
    fn queue_cnm(&mut self, c: Cnm) {
        let lid = ((c.src as u32) << self.params.lmc) as u16;
        let port = self.lft.options(lid).deterministic().unwrap_or(NO_ROUTE);
        if (port as usize) < self.ports && self.w.cnm.push.push((port, c)).is_ok() {
            return;
        }
        self.stats.cnms_dropped += 1;
    }

    /// The clock edge of the notification path.
    pub(super) fn commit_cnms(&mut self) {
        let u = &mut self.cnm;
        if self.params.qcn.on() {
            u.cp.copy_from_slice(&self.w.cnm.cp);
        }
        for (p, f) in u.fifo.iter_mut().enumerate() {
            if self.w.cnm.pop[p] {
                f.pop_front();
                self.stats.cnms_sent += 1;
            }
        }
        for &(p, c) in &self.w.cnm.push {
            if u.fifo[p as usize].push_back(c).is_err() {
                self.stats.cnms_dropped += 1;
            }
        }
        if let Some(s) = u.snoop.as_mut() {
            let head = s.queue.pop_front();
            s.table.edge(head);
            for &sn in &self.w.cnm.snoops {
                if s.queue.push_back(sn).is_err() {
                    self.stats.snoops_dropped += 1;
                }
            }
        }
    }
}
