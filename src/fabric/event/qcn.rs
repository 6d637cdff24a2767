//! IEEE 802.1Qau on the event engine: the outputs' congestion points and the switches'
//! notification path of the cycle engine (`src/cycle/qcn.rs`, whose order this keeps). The
//! samples of a cycle are taken at its start, once its routing stages have run (under D-mod-K a
//! head is routed as it arrives, a cycle early, and waits in `routed` for its cycle): the CNMs
//! arriving at a switch's outputs in the cycle are queued first, by port, then those of its
//! samples, by input. A port's queue sends one CNM a cycle, so it is kept as the first cycle its
//! lane is free: a CNM queued in cycle `t` leaves in `max(t + 1, free)`, and `free - t - 1` are
//! waiting after `t`'s. A CNM leaving is an event at its port (`CnmOut`), which counts it and
//! hands it to the node at the far end of the link in the link's return record; one going to a
//! switch arrives at its output (`Cnm`) a link latency later, an event filed when the CNM is
//! queued (a cycle or more ahead, as other parts take their events).

use super::*;
use crate::blocks::congestion_point::QcnRegs;
use crate::cycle::CNM_FIFO_DEPTH;
use crate::wire::Cnm;

/// A part's congestion points and notification lanes.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct QcnState {
    /// Per flat output: its congestion point's registers.
    cp: Vec<QcnRegs>,
    /// Per flat port: the first cycle its upstream lane is free.
    free: Vec<u64>,
    /// The packets routed for a cycle's samples: (routing cycle, flat input, flat output, slot).
    routed: Vec<(u64, u32, u32, u32)>,
    /// The CNMs arriving in the cycle being stepped: (flat output, message).
    arrivals: Vec<(u32, Cnm)>,
}

impl QcnState {
    pub(super) fn new(ports: usize) -> Self {
        QcnState {
            cp: vec![QcnRegs::default(); ports],
            free: vec![0; ports],
            routed: Vec::with_capacity(ports),
            arrivals: Vec::with_capacity(ports),
        }
    }

    /// Whether cycle `now` has samples to take.
    #[inline]
    pub(super) fn busy(&self, now: u64) -> bool {
        self.routed.iter().any(|r| r.0 == now)
    }
}

/// A CNM as an event's payload: source and destination in `arg`, feedback in `vc`.
fn cnm_event(kind: Kind, unit: u32, c: Cnm) -> Ev {
    let mut ev = Ev::new(kind, unit);
    ev.arg = c.bits() as u32;
    ev.vc = c.fb;
    ev
}

fn cnm_of(ev: &Ev) -> Cnm {
    Cnm::of_bits(ev.arg as u64 | (ev.vc as u64) << 32)
}

impl<const V: usize> EventCore<V> {
    /// The routing stage of cycle `r` placed the packet in slot `k` of flat input `input` in
    /// the VOQ of flat output `out`: a sample candidate of `r`.
    #[inline]
    pub(super) fn note_routed(&mut self, r: u64, input: u32, out: u32, k: u32) {
        if let Some(q) = self.qcn.as_mut() {
            q.routed.push((r, input, out, k));
        }
    }

    /// The congestion points and notification path of cycle `now`, after its routing stages:
    /// `list` is the cycle's events.
    pub(super) fn notify(&mut self, env: &Env<V>, list: &[Ev], now: u64) {
        let Some(mut q) = self.qcn.take() else {
            return;
        };
        q.arrivals.clear();
        for ev in list.iter().filter(|e| e.kind == Kind::Cnm) {
            q.arrivals.push((ev.unit, cnm_of(ev)));
        }
        q.arrivals.sort_unstable_by_key(|a| a.0);
        for k in 0..q.arrivals.len() {
            let (out, c) = q.arrivals[k];
            self.stats.cnms_received += 1;
            self.note_cnm(out, c, now, true);
            if !self.snoop(env, out, c, false, now) {
                self.queue_cnm(env, &mut q, out, c, now);
            }
        }
        let cp = env.params.switch.qcn;
        q.routed.sort_unstable_by_key(|r| (r.0, r.1));
        let taken = q.routed.iter().take_while(|r| r.0 <= now).count();
        for k in 0..taken {
            let (r, _, out, slot) = q.routed[k];
            debug_assert_eq!(r, now);
            let pkt = self.slots[slot as usize].pkt;
            let regs = &mut q.cp[out as usize];
            if !cp.arrive(pkt.len, regs) {
                continue;
            }
            let queue = self.queued_for(out, now);
            if let Some(fb) = cp.feedback(queue, &mut q.cp[out as usize]) {
                self.stats.cnms_made += 1;
                let c = Cnm {
                    src: pkt.src,
                    dest: pkt.dlid,
                    fb,
                };
                if !self.snoop(env, out, c, true, now) {
                    self.queue_cnm(env, &mut q, out, c, now);
                }
            }
        }
        q.routed.drain(..taken);
        self.qcn = Some(q);
    }

    /// Queues `c`, made or received at flat port `at`, at the port of its switch the LFT gives
    /// its source's LID: it leaves when the port's lane is free.
    fn queue_cnm(&mut self, env: &Env<V>, q: &mut QcnState, at: u32, c: Cnm, now: u64) {
        let Place {
            switch,
            port,
            ports,
        } = self.ins[at as usize].place;
        let lid = ((c.src as u32) << env.params.switch.lmc) as u16;
        let unit = &env.switches[switch as usize];
        let p = unit.lft().options(lid).deterministic().unwrap_or(NO_ROUTE);
        if p as u16 >= ports {
            self.stats.cnms_dropped += 1;
            return;
        }
        let lane = (at - port as u32 + p as u32) as usize;
        if q.free[lane].saturating_sub(now + 1) >= CNM_FIFO_DEPTH as u64 {
            self.stats.cnms_dropped += 1;
            return;
        }
        let leave = q.free[lane].max(now + 1);
        q.free[lane] = leave + 1;
        self.cal
            .push(leave, cnm_event(Kind::CnmOut, lane as u32, c));
        // Filed now, a cycle or more before it leaves, as every event another part takes.
        let up = self.ins[lane].up;
        if let Peer::Port(out) = up.peer() {
            let at = leave + self.latency;
            self.file(up.part(), at, cnm_event(Kind::Cnm, out, c), None);
        }
    }

    /// A CNM leaves flat port `lane` upstream in `now` (its arrival at a switch upstream was
    /// filed when it was queued); a node takes it with the link's return record of `now`.
    pub(super) fn cnm_leaves(&mut self, ev: &Ev, now: u64) {
        let c = cnm_of(ev);
        self.stats.cnms_sent += 1;
        self.note_cnm(ev.unit, c, now, false);
        if let Peer::Node(n) = self.ins[ev.unit as usize].up.peer() {
            let odd = (now & 1) as usize;
            let b = &mut self.node_back[odd][n as usize];
            if b.is_empty() {
                self.backs_due[odd].push(n);
            }
            b.cnm = Some(c);
        }
    }
}
