//! The fabric's invariants: flit and credit conservation, in-order delivery under deterministic
//! routing, and progress (the deadlock watchdog). A breach is reported as a [`Violation`] naming
//! the cycle, the invariant and the place (switch, port, VC or link).

use super::*;

impl<const V: usize> Fabric<V> {
    /// Checks every invariant on the state after the last stepped cycle.
    pub fn check(&self) -> Result<(), Violation> {
        self.check_after(self.now.saturating_sub(1))
    }

    pub(super) fn check_after(&self, now: u64) -> Result<(), Violation> {
        if let Some(core) = &self.event {
            return core.check(self, now);
        }
        let t = self.totals();
        let buffered: u64 = self
            .switches
            .iter()
            .map(|s| {
                (0..s.wiring().in_ch.len())
                    .map(|p| s.buffered_flits(p) as u64)
                    .sum::<u64>()
            })
            .sum();
        let vcs = self.params.switch.vcs();
        let on_links: u64 = (0..self.channels.len())
            .map(|c| (0..vcs).map(|v| self.flits_on_link(c, v)).sum::<u64>())
            .sum();
        flit_conservation(now, &t.nodes, buffered, on_links)?;
        for (c, ch) in self.channels.iter().enumerate() {
            let (from, to) = self.ends[c];
            for v in 0..vcs {
                let (credits, returning) = match from {
                    Far::Switch { sw, port } => {
                        let s = &self.switches[sw as usize];
                        (
                            s.credits(port as usize, v),
                            s.credits_returning(port as usize, v),
                        )
                    }
                    Far::Node(n) => {
                        let n = &self.nodes[n as usize];
                        (n.credits(v), n.credits_returning(v))
                    }
                };
                let (buffered, cap, announced) = match to {
                    Far::Switch { sw, port } => {
                        let s = &self.switches[sw as usize];
                        (
                            s.buffered(port as usize, v),
                            s.params().vc_capacity,
                            s.credits_announced(port as usize, v),
                        )
                    }
                    Far::Node(n) => (
                        0,
                        self.params.node_vc_capacity,
                        self.nodes[n as usize].credits_announced(v),
                    ),
                };
                let in_flight = self.flits_on_link(c, v);
                // Credits freed and not yet counted: the streams started (on the link or arrived
                // at the near end), less the flits of those streams not yet freed at the far end.
                let back = (ch.credits_in_flight(now + 1, v) + returning)
                    .checked_sub(announced)
                    .unwrap_or(u64::MAX / 2);
                let place = || match from {
                    Far::Switch { sw, port } => format!("switch {sw} output {port}, VC {v}"),
                    Far::Node(n) => format!("node {n} output, VC {v}"),
                };
                let parts = [credits as u64, buffered as u64, in_flight, back];
                credit_conservation(now, place, parts, cap as u64)?;
            }
        }
        self.check_progress(now)
    }

    /// Flits on channel `c`'s link on VC `vc` (of the receiving buffer): sent by its near end
    /// and not yet received by its far end. Only heads travel in the delay lines, so the two ends'
    /// counts are what says how many flits the link holds.
    pub(super) fn flits_on_link(&self, c: usize, vc: usize) -> u64 {
        let (from, to) = self.ends[c];
        let sent = match from {
            Far::Switch { sw, port } => self.switches[sw as usize].flits_sent(port as usize, vc),
            Far::Node(n) => self.nodes[n as usize].flits_sent(vc),
        };
        let received = match to {
            Far::Switch { sw, port } => {
                self.switches[sw as usize].flits_received(port as usize, vc)
            }
            Far::Node(n) => self.nodes[n as usize].flits_received(vc),
        };
        sent.wrapping_sub(received)
    }

    pub(super) fn check_progress(&self, now: u64) -> Result<(), Violation> {
        if now - self.last_progress < self.params.watchdog_cycles {
            return Ok(());
        }
        let stuck =
            self.switches.iter().any(|s| !s.is_idle()) || self.nodes.iter().any(|n| n.is_busy());
        if !stuck {
            return Ok(());
        }
        let mut blocked = Vec::new();
        for s in &self.switches {
            for p in 0..s.wiring().in_ch.len() {
                for v in 0..s.vcs() {
                    if s.buffered(p, v) > 0 {
                        blocked.push(format!(
                            "switch {} input {p} VC {v} ({} flits)",
                            s.id(),
                            s.buffered(p, v)
                        ));
                    }
                }
            }
        }
        let more = blocked.len().saturating_sub(32);
        blocked.truncate(32);
        if more > 0 {
            blocked.push(format!("and {more} more"));
        }
        Err(Violation {
            cycle: now,
            invariant: "progress",
            place: "fabric".into(),
            detail: format!(
                "no packet started or finished a hop for {} cycles (deadlock); blocked: {}",
                now - self.last_progress,
                blocked.join("; ")
            ),
        })
    }
}

pub(super) fn switch_fault<const V: usize>(
    now: u64,
    s: &SwitchUnit<V>,
    f: crate::switch::SwitchFault,
) -> Violation {
    Violation {
        cycle: now,
        invariant: "switch",
        place: format!("switch {} port {}", s.id(), f.port),
        detail: f.what,
    }
}

/// The `flit_conservation` check: the flits the nodes injected are those they received, those
/// in the switches' buffers and those on the links.
pub(super) fn flit_conservation(
    now: u64,
    nodes: &NodeStats,
    buffered: u64,
    on_links: u64,
) -> Result<(), Violation> {
    if nodes.injected_flits == nodes.delivered_flits + buffered + on_links {
        return Ok(());
    }
    Err(Violation {
        cycle: now,
        invariant: "flit_conservation",
        place: "fabric".into(),
        detail: format!(
            "injected {} != delivered {} + buffered {} + on links {}",
            nodes.injected_flits, nodes.delivered_flits, buffered, on_links
        ),
    })
}

/// The `credit_conservation` check of one link direction and VC (named by `place`): the
/// sender's credits, the receiver's buffered flits, the flits on the link and the credits on
/// their way back (`parts`, in that order) make the VC's capacity.
pub(super) fn credit_conservation(
    now: u64,
    place: impl FnOnce() -> String,
    parts: [u64; 4],
    cap: u64,
) -> Result<(), Violation> {
    let [credits, buffered, link, back] = parts;
    let sum = credits + buffered + link + back;
    if sum == cap {
        return Ok(());
    }
    Err(Violation {
        cycle: now,
        invariant: "credit_conservation",
        place: place(),
        detail: format!(
            "credits {credits} + buffered {buffered} + flits on link {link} + credits returning {back} = {sum}, capacity {cap}"
        ),
    })
}
