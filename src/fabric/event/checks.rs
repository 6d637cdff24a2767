//! The invariants of `docs/switch.md` on the event engine: flit conservation over the fabric and
//! credit conservation per link direction and VC, read from its ports, the end nodes and the
//! events still in the calendar (heads and credit records on their way).

use super::*;
use crate::fabric::invariants::{credit_conservation, flit_conservation};
use crate::wire::link::streamed;

/// Per flat input and VC: flits that have left by the end of the cycle checked, and flits of
/// departing packets not yet left (their credit streams announced upstream).
struct Departures {
    left: Vec<u64>,
    announced: Vec<u64>,
}

impl<const V: usize> EventCore<V> {
    /// Flits of flat input `input` on `vc` arrived by the end of cycle `now`.
    pub(super) fn arrived(&self, input: usize, vc: usize, now: u64) -> u64 {
        let mut n = self.got[input * self.vcs + vc];
        let a = self.ins[input].arrival;
        if a.len > 0 && a.vc as usize == vc {
            n += streamed(a.start, a.len, now) as u64;
        }
        n
    }

    /// Flits in flat input `j`'s buffer per VC after cycle `now`: arrived, less those of the
    /// packets gone and of the one leaving through an output of its switch, if any (read by the
    /// watchdog's report and the dumps).
    pub(super) fn buffered(&self, j: usize, now: u64) -> impl Fn(usize) -> u64 + '_ {
        let Place { port, .. } = self.ins[j].place;
        let mut leaving = [0u64; 16];
        self.leaving(j - port as usize, now, |i, vc, flits| {
            if i == port as usize {
                leaving[vc & 15] += flits;
            }
        });
        move |vc| self.held(j, vc, now, leaving[vc & 15])
    }

    /// For each packet an output of the switch of flat port 0 `first` is sending:
    /// `each(input port, its VC there, its flits gone out by the end of cycle now)`.
    #[inline(always)]
    pub(super) fn leaving(&self, first: usize, now: u64, mut each: impl FnMut(usize, usize, u64)) {
        let ports = self.ins[first].place.ports as usize;
        for tx in self.outputs[first..first + ports]
            .iter()
            .filter_map(|o| o.tx)
        {
            let flits = streamed(tx.start, tx.len, now) as u64;
            each(tx.input as usize - first, tx.vc as usize, flits);
        }
    }

    /// Flits in flat input `j`'s buffer on `vc` after cycle `now`, `leaving` of them in the
    /// packet (or packets) leaving through outputs of its switch: arrived, less those of the
    /// packets gone and those.
    #[inline(always)]
    pub(super) fn held(&self, j: usize, vc: usize, now: u64, leaving: u64) -> u64 {
        self.arrived(j, vc, now) - self.gone[j * self.vcs + vc] - leaving
    }

    fn departures(&self, now: u64) -> Departures {
        let mut d = Departures {
            left: self.gone.clone(),
            announced: vec![0; self.gone.len()],
        };
        // A packet granted in `now` leaves from `now + 1`: the record of its stream, filed at
        // the grant, counts as announced (its far end counts it on its way back).
        for tx in self.outputs.iter().filter_map(|o| o.tx) {
            let vc = tx.vc as usize;
            let k = tx.input as usize * self.vcs + vc;
            let done = streamed(tx.start, tx.len, now) as u64;
            d.left[k] += done;
            d.announced[k] += tx.len as u64 - done;
        }
        d
    }

    /// Per flat output and VC: credits of streams on their way back to it (filed, not arrived).
    fn credits_on_the_way(&self) -> Vec<u64> {
        let mut c = vec![0u64; self.outputs.len() * self.vcs];
        for ev in self.cal.all() {
            if ev.kind == Kind::CreditsStart {
                c[ev.unit as usize * self.vcs + ev.vc as usize] += ev.arg as u64;
            }
        }
        c
    }
}

impl<const V: usize> EventEngine<V> {
    /// The checks as of the end of cycle `now` (the last cycle stepped), over every part (each
    /// holds the state of its own ports; the others' entries stay empty).
    pub(in crate::fabric) fn check(&self, f: &Fabric<V>, now: u64) -> Result<(), Violation> {
        // Before the parts are locked: the totals read their counters.
        let t = f.totals();
        let parts = self.locked();
        let one = &parts[0];
        let vcs = one.vcs;
        let at = |j: usize| &*parts[one.owner[j] as usize];
        let arrived = |j: usize, v: usize| at(j).arrived(j, v, now);
        let mut d = one.departures(now);
        let mut back_to = one.credits_on_the_way();
        for p in &parts[1..] {
            let e = p.departures(now);
            let sum = |a: &mut Vec<u64>, b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            sum(&mut d.left, &e.left);
            sum(&mut d.announced, &e.announced);
            sum(&mut back_to, &p.credits_on_the_way());
        }
        let buffered = |j: usize, v: usize| arrived(j, v) - d.left[j * vcs + v];
        let mut in_buffers = 0u64;
        let mut on_links = 0u64;
        for j in 0..one.outputs.len() {
            for v in 0..vcs {
                in_buffers += buffered(j, v);
                let sent = at(j).outputs[j].credits.sent(v, now);
                on_links += sent.wrapping_sub(match one.down[j].peer() {
                    Peer::Port(k) => arrived(k as usize, v),
                    Peer::Node(n) => f.nodes[n as usize].flits_received(v),
                });
                if let Peer::Node(n) = one.ins[j].up.peer() {
                    let node = &f.nodes[n as usize];
                    on_links += node.flits_sent(v).wrapping_sub(arrived(j, v));
                }
            }
        }
        flit_conservation(now, &t.nodes, in_buffers, on_links)?;
        for j in 0..one.outputs.len() {
            let Place {
                switch: s, port, ..
            } = one.ins[j].place;
            let out = &at(j).outputs[j].credits;
            for v in 0..vcs {
                let sent = out.sent(v, now);
                let (buffered, link, announced) = match one.down[j].peer() {
                    Peer::Port(k) => {
                        let k = k as usize;
                        (
                            buffered(k, v),
                            sent.wrapping_sub(arrived(k, v)),
                            d.announced[k * vcs + v],
                        )
                    }
                    Peer::Node(n) => {
                        let node = &f.nodes[n as usize];
                        let got = node.flits_received(v);
                        (0, sent.wrapping_sub(got), node.credits_announced(v))
                    }
                };
                let back = (back_to[j * vcs + v] + out.pending(v, now))
                    .checked_sub(announced)
                    .unwrap_or(u64::MAX / 2);
                let place = || format!("switch {s} output {port}, VC {v}");
                let parts = [out.credits(v, now) as u64, buffered, link, back];
                credit_conservation(now, place, parts, out.cap() as u64)?;
            }
            if let Peer::Node(n) = one.ins[j].up.peer() {
                let node = &f.nodes[n as usize];
                let ch = &f.channels[node.out_channel() as usize];
                for v in 0..vcs {
                    let link = node.flits_sent(v).wrapping_sub(arrived(j, v));
                    // Records of the next cycle, filed at a grant, not yet on the link.
                    let next = at(j).node_back[((now + 1) & 1) as usize][n as usize].start_flits[v];
                    let on_the_way = ch.credits_in_flight(now + 1, v) + next as u64;
                    let back = (on_the_way + node.credits_returning(v))
                        .checked_sub(d.announced[j * vcs + v])
                        .unwrap_or(u64::MAX / 2);
                    let place = || format!("node {n} output, VC {v}");
                    let parts = [node.credits(v) as u64, buffered(j, v), link, back];
                    let cap = f.params.switch.vc_capacity as u64;
                    credit_conservation(now, place, parts, cap)?;
                }
            }
        }
        Ok(())
    }
}
