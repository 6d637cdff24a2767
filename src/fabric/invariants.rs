//! The fabric's invariants: flit and credit conservation, in-order delivery under deterministic
//! routing, and progress (the deadlock watchdog). A breach is reported as a [`Violation`] naming
//! the cycle, the invariant and the place (switch, port, VC or link).

use super::*;
use std::fmt;

/// A broken invariant: where and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Cycle in which it was seen.
    pub cycle: u64,
    /// Invariant name.
    pub invariant: &'static str,
    /// Where (switch, port, VC, link, node).
    pub place: String,
    /// What was seen.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cycle {}: invariant {} broken at {}: {}",
            self.cycle, self.invariant, self.place, self.detail
        )
    }
}

impl std::error::Error for Violation {}

impl<const V: usize> Fabric<V> {
    /// Checks every invariant on the state after the last stepped cycle.
    pub fn check(&self) -> Result<(), Violation> {
        self.check_after(self.now.saturating_sub(1))
    }

    pub(super) fn check_after(&self, now: u64) -> Result<(), Violation> {
        let units = match &self.wing {
            Wing::Event(core) => return core.check(self, now),
            Wing::Cycle(units) => units,
        };
        let t = self.totals();
        let buffered: u64 = units
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
                        let s = &units[sw as usize];
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
                        let s = &units[sw as usize];
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
        let units = self.units();
        let (from, to) = self.ends[c];
        let sent = match from {
            Far::Switch { sw, port } => units[sw as usize].flits_sent(port as usize, vc),
            Far::Node(n) => self.nodes[n as usize].flits_sent(vc),
        };
        let received = match to {
            Far::Switch { sw, port } => units[sw as usize].flits_received(port as usize, vc),
            Far::Node(n) => self.nodes[n as usize].flits_received(vc),
        };
        sent.wrapping_sub(received)
    }

    pub(super) fn check_progress(&self, now: u64) -> Result<(), Violation> {
        if !watchdog_looks(now, self.last_progress, self.params.watchdog_cycles) {
            return Ok(());
        }
        let mut blocked = Vec::new();
        for s in self.units() {
            for p in 0..s.wiring().in_ch.len() {
                for v in 0..s.vcs() {
                    let flits = s.buffered(p, v);
                    if flits > 0 {
                        blocked.push((s.id(), p, v, flits as u64));
                    }
                }
            }
        }
        if blocked.is_empty() && !self.nodes.iter().any(|n| n.is_busy()) {
            return Ok(());
        }
        Err(deadlock(now, self.last_progress, &blocked))
    }
}

/// Cycles between two looks of the deadlock watchdog: it looks at the end of cycles `c` with
/// `c + 1` a multiple of this, on every engine and any number of threads.
pub const WATCH_EVERY: u64 = 256;

/// The first cycle after the watchdog's next look at or after cycle `t` (a window of a run ends
/// there at the latest).
pub fn next_look(t: u64) -> u64 {
    (t / WATCH_EVERY + 1) * WATCH_EVERY
}

/// Whether the watchdog looks for a deadlock at the end of cycle `now`: a look's cycle, and no
/// packet started or finished a hop since cycle `last_progress` for `watchdog_cycles` or more.
pub fn watchdog_looks(now: u64, last_progress: u64, watchdog_cycles: u64) -> bool {
    (now + 1).is_multiple_of(WATCH_EVERY) && now.saturating_sub(last_progress) >= watchdog_cycles
}

/// The deadlock report of a look in cycle `now` that found flits in the fabric with no progress
/// since `last_progress`: the input buffers holding flits, `(switch, input, VC, flits)` in switch,
/// port and VC order (the first 32 named).
pub(super) fn deadlock(
    now: u64,
    last_progress: u64,
    blocked: &[(u32, usize, usize, u64)],
) -> Violation {
    let mut names: Vec<String> = blocked
        .iter()
        .take(32)
        .map(|(s, p, v, n)| format!("switch {s} input {p} VC {v} ({n} flits)"))
        .collect();
    if blocked.len() > 32 {
        names.push(format!("and {} more", blocked.len() - 32));
    }
    Violation {
        cycle: now,
        invariant: "progress",
        place: "fabric".into(),
        detail: format!(
            "no packet started or finished a hop for {} cycles (deadlock); blocked: {}",
            now - last_progress,
            names.join("; ")
        ),
    }
}

pub(super) fn switch_fault<const V: usize>(
    now: u64,
    s: &CycleUnit<V>,
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
/// in the switches' buffers and those on the links (congestion control's one-flit CNPs counted
/// apart from the data on both sides).
pub(super) fn flit_conservation(
    now: u64,
    nodes: &NodeStats,
    buffered: u64,
    on_links: u64,
) -> Result<(), Violation> {
    let injected = nodes.injected_flits + nodes.cnps_sent;
    let delivered = nodes.delivered_flits + nodes.becns_received;
    if injected == delivered + buffered + on_links {
        return Ok(());
    }
    Err(Violation {
        cycle: now,
        invariant: "flit_conservation",
        place: "fabric".into(),
        detail: format!(
            "injected {injected} != delivered {delivered} + buffered {buffered} + on links \
             {on_links}"
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
