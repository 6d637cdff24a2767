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

/// What the checks read, per flat port and VC (`port * vcs + vc`) and per end node and VC, each
/// entry written by the part that steps its port or node (0 elsewhere): summed over the parts
/// and ranks, the whole fabric's.
struct Seen {
    /// Per input: flits arrived, flits left and flits announced (see [`Departures`]).
    arrived: Vec<u64>,
    left: Vec<u64>,
    announced: Vec<u64>,
    /// Per output: credits of streams on their way back, flits sent, credits held, credits
    /// pending; per input from a node, the credit records filed for the next cycle.
    back_to: Vec<u64>,
    sent: Vec<u64>,
    credits: Vec<u64>,
    pending: Vec<u64>,
    next: Vec<u64>,
    /// Per node and VC: [`NODE_WORDS`] values, see [`Seen::node`].
    nodes: Vec<u64>,
}

/// Per node and VC: flits received, credits announced, flits sent, credits, credits returning,
/// credits in flight on its output channel.
const NODE_WORDS: usize = 6;

impl Seen {
    fn lists(&mut self) -> [&mut Vec<u64>; 9] {
        [
            &mut self.arrived,
            &mut self.left,
            &mut self.announced,
            &mut self.back_to,
            &mut self.sent,
            &mut self.credits,
            &mut self.pending,
            &mut self.next,
            &mut self.nodes,
        ]
    }

    /// Node `n`'s value `k` on `vc`.
    fn node(&self, n: u32, vc: usize, k: usize, vcs: usize) -> u64 {
        self.nodes[(n as usize * vcs + vc) * NODE_WORDS + k]
    }
}

impl<const V: usize> EventEngine<V> {
    /// What the checks read as of the end of cycle `now`, from this rank's parts and nodes,
    /// summed over the ranks.
    fn seen(&self, f: &Fabric<V>, now: u64) -> Seen {
        let parts = self.locked();
        let vcs = parts[0].vcs;
        let n = parts[0].outputs.len() * vcs;
        let mut s = Seen {
            arrived: vec![0; n],
            left: vec![0; n],
            announced: vec![0; n],
            back_to: vec![0; n],
            sent: vec![0; n],
            credits: vec![0; n],
            pending: vec![0; n],
            next: vec![0; n],
            nodes: vec![0; f.nodes.len() * vcs * NODE_WORDS],
        };
        let add = |a: &mut Vec<u64>, b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        for p in parts.iter() {
            let d = p.departures(now);
            add(&mut s.left, &d.left);
            add(&mut s.announced, &d.announced);
            add(&mut s.back_to, &p.credits_on_the_way());
            for j in (0..p.outputs.len()).filter(|&j| p.owner[j] == p.part) {
                let out = &p.outputs[j].credits;
                for v in 0..vcs {
                    let k = j * vcs + v;
                    s.arrived[k] = p.arrived(j, v, now);
                    s.sent[k] = out.sent(v, now);
                    s.credits[k] = out.credits(v, now) as u64;
                    s.pending[k] = out.pending(v, now);
                    if let Peer::Node(n) = p.ins[j].up.peer() {
                        let back = &p.node_back[((now + 1) & 1) as usize][n as usize];
                        s.next[k] = back.start_flits[v] as u64;
                    }
                }
            }
        }
        for (n, node) in f
            .nodes
            .iter()
            .enumerate()
            .filter(|&(n, _)| self.owns_node(n))
        {
            let ch = &f.channels[node.out_channel() as usize];
            for v in 0..vcs {
                let at = (n * vcs + v) * NODE_WORDS;
                s.nodes[at..at + NODE_WORDS].copy_from_slice(&[
                    node.flits_received(v),
                    node.credits_announced(v),
                    node.flits_sent(v),
                    node.credits(v) as u64,
                    node.credits_returning(v),
                    ch.credits_in_flight(now + 1, v),
                ]);
            }
        }
        if let Some(r) = self.ranks() {
            let mut all: Vec<u64> = s.lists().iter().flat_map(|l| l.iter().copied()).collect();
            r.sum(&mut all);
            let mut at = 0;
            for l in s.lists() {
                let n = l.len();
                l.copy_from_slice(&all[at..at + n]);
                at += n;
            }
        }
        s
    }

    /// The checks as of the end of cycle `now` (the last cycle stepped), over every part of
    /// every rank (each holds the state of its own ports and nodes).
    pub(in crate::fabric) fn check(&self, f: &Fabric<V>, now: u64) -> Result<(), Violation> {
        // Before the parts are locked: the totals read their counters.
        let t = f.totals();
        let s = self.seen(f, now);
        let parts = self.locked();
        let one = &parts[0];
        let vcs = one.vcs;
        let node = |n: u32, v: usize, k: usize| s.node(n, v, k, vcs);
        let arrived = |j: usize, v: usize| s.arrived[j * vcs + v];
        let buffered = |j: usize, v: usize| arrived(j, v) - s.left[j * vcs + v];
        let mut in_buffers = 0u64;
        let mut on_links = 0u64;
        for j in 0..one.outputs.len() {
            for v in 0..vcs {
                in_buffers += buffered(j, v);
                let sent = s.sent[j * vcs + v];
                on_links += sent.wrapping_sub(match one.down[j].peer() {
                    Peer::Port(k) => arrived(k as usize, v),
                    Peer::Node(n) => node(n, v, 0),
                });
                if let Peer::Node(n) = one.ins[j].up.peer() {
                    on_links += node(n, v, 2).wrapping_sub(arrived(j, v));
                }
            }
        }
        flit_conservation(now, &t.nodes, in_buffers, on_links)?;
        for j in 0..one.outputs.len() {
            let Place {
                switch: sw, port, ..
            } = one.ins[j].place;
            let cap = one.outputs[j].credits.cap() as u64;
            for v in 0..vcs {
                let k = j * vcs + v;
                let sent = s.sent[k];
                let (buffered, link, announced) = match one.down[j].peer() {
                    Peer::Port(i) => {
                        let i = i as usize;
                        (
                            buffered(i, v),
                            sent.wrapping_sub(arrived(i, v)),
                            s.announced[i * vcs + v],
                        )
                    }
                    Peer::Node(n) => (0, sent.wrapping_sub(node(n, v, 0)), node(n, v, 1)),
                };
                let back = (s.back_to[k] + s.pending[k])
                    .checked_sub(announced)
                    .unwrap_or(u64::MAX / 2);
                let place = || format!("switch {sw} output {port}, VC {v}");
                let parts = [s.credits[k], buffered, link, back];
                credit_conservation(now, place, parts, cap)?;
            }
            if let Peer::Node(n) = one.ins[j].up.peer() {
                for v in 0..vcs {
                    let link = node(n, v, 2).wrapping_sub(arrived(j, v));
                    // Records of the next cycle, filed at a grant, not yet on the link.
                    let on_the_way = node(n, v, 5) + s.next[j * vcs + v];
                    let back = (on_the_way + node(n, v, 4))
                        .checked_sub(s.announced[j * vcs + v])
                        .unwrap_or(u64::MAX / 2);
                    let place = || format!("node {n} output, VC {v}");
                    let parts = [node(n, v, 3), buffered(j, v), link, back];
                    let cap = f.params.switch.vc_capacity as u64;
                    credit_conservation(now, place, parts, cap)?;
                }
            }
        }
        Ok(())
    }
}
