//! Port route cache (`route_cache.sv`): the PRC of an input port under flow routing (Birk and
//! Zdornov, section 4): a CAM of the flows whose setup packet chose an alternate port here.
//!
//! An entry holds a flow's globally unique connection identifier, GCID = (SLID, DLID, CID), and
//! the output port its setup packet chose. A data packet looks its GCID up (`lk_*`): a hit routes
//! it by the entry, a miss by its DLID's default port (outside this block). At most one command a
//! cycle changes the entries:
//! - **insert** (a setup packet routed to an alternate port): an entry on the same GCID takes the
//!   new port (`cmd_hit_o`); otherwise the lowest-index free entry takes the flow; with none free
//!   nothing is stored (`cmd_full_o`: the paper's full PRC, the flow then follows the default
//!   ports here);
//! - **erase** (a teardown packet): the entry on the GCID, if any, is freed (`cmd_hit_o`).
//!
//! Lookups are combinational from the registers: a command of cycle t is seen from cycle t+1. A
//! freed entry keeps its fields until written. Widths: slid, dlid, cid 16 bits each, port 8;
//! `count_o` `clog2(Entries + 1)` bits.

use super::Block;
use super::probe::{Visit, index_width};

/// Largest CAM depth `Entries`.
pub const MAX_ENTRIES: usize = 64;

/// A flow's globally unique connection identifier.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Gcid {
    /// Source LID.
    pub slid: u16,
    /// Destination LID.
    pub dlid: u16,
    /// The source's connection identifier.
    pub cid: u16,
}

/// A command on the entries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RouteCacheCmd {
    /// None this cycle.
    #[default]
    Idle,
    /// A setup packet stores its flow's port.
    Insert(Gcid, u8),
    /// A teardown packet erases its flow's entry.
    Erase(Gcid),
}

/// One entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RouteCacheEntry {
    /// `valid_q[e]`.
    pub valid: bool,
    /// `slid_q[e]`, `dlid_q[e]`, `cid_q[e]`.
    pub gcid: Gcid,
    /// `port_q[e]`.
    pub port: u8,
}

/// Registers: the entries (the first `Entries` used). Reset: all 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RouteCacheRegs {
    /// Slot `e` of the CAM.
    #[serde(with = "serde_big_array::BigArray")]
    pub entries: [RouteCacheEntry; MAX_ENTRIES],
}

impl Default for RouteCacheRegs {
    fn default() -> Self {
        RouteCacheRegs {
            entries: [RouteCacheEntry::default(); MAX_ENTRIES],
        }
    }
}

/// This cycle's inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RouteCacheIn {
    /// `lk_en_i` and the GCID looked up.
    pub lookup: Option<Gcid>,
    /// `cmd_op_i` (0 idle, 1 insert, 2 erase) and its fields.
    pub cmd: RouteCacheCmd,
}

/// This cycle's outputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RouteCacheOut {
    /// `lk_hit_o`.
    pub hit: bool,
    /// `lk_port_o`: the entry's port on a hit, 0 otherwise.
    pub port: u8,
    /// `cmd_hit_o`: the command found its GCID.
    pub cmd_hit: bool,
    /// `cmd_full_o`: an insert found no entry free and stored nothing.
    pub cmd_full: bool,
    /// `count_o`: valid entries.
    pub count: u8,
}

/// The route cache.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RouteCache {
    entries: u8,
    q: RouteCacheRegs,
    d: RouteCacheRegs,
}

impl RouteCache {
    /// A cache of `entries` slots (1 to 64), in its reset state.
    pub fn new(entries: usize) -> Self {
        assert!((1..=MAX_ENTRIES).contains(&entries), "a_param_entries");
        RouteCache {
            entries: entries as u8,
            q: RouteCacheRegs::default(),
            d: RouteCacheRegs::default(),
        }
    }

    /// The slots in use.
    pub fn slots(&self) -> &[RouteCacheEntry] {
        &self.q.entries[..self.entries as usize]
    }

    /// The port stored for `g`, if any: a lookup.
    #[inline]
    pub fn port(&self, g: Gcid) -> Option<u8> {
        lookup(self.slots(), g)
    }

    /// Valid entries.
    pub fn count(&self) -> usize {
        self.slots().iter().filter(|e| e.valid).count()
    }
}

/// The port `slots` hold for `g`, if any (`lk_port_o` on `lk_hit_o`).
#[inline]
pub fn lookup(slots: &[RouteCacheEntry], g: Gcid) -> Option<u8> {
    slots
        .iter()
        .find(|e| e.valid && e.gcid == g)
        .map(|e| e.port)
}

/// The next state of `slots` for `cmd`: (found its GCID, an insert found no room). What the
/// block does at the clock edge, for an engine that keeps the entries itself.
pub fn next_state(slots: &mut [RouteCacheEntry], cmd: RouteCacheCmd) -> (bool, bool) {
    let find = |s: &[RouteCacheEntry], g: Gcid| s.iter().position(|e| e.valid && e.gcid == g);
    match cmd {
        RouteCacheCmd::Idle => (false, false),
        RouteCacheCmd::Insert(g, port) => {
            let hit = find(slots, g);
            let Some(k) = hit.or_else(|| slots.iter().position(|e| !e.valid)) else {
                return (false, true);
            };
            slots[k] = RouteCacheEntry {
                valid: true,
                gcid: g,
                port,
            };
            (hit.is_some(), false)
        }
        RouteCacheCmd::Erase(g) => match find(slots, g) {
            Some(k) => {
                slots[k].valid = false;
                (true, false)
            }
            None => (false, false),
        },
    }
}

impl Block for RouteCache {
    type In = RouteCacheIn;
    type Out = RouteCacheOut;
    const NAME: &'static str = "route_cache";

    fn reset(&mut self) {
        self.q = RouteCacheRegs::default();
        self.d = self.q;
    }

    fn evaluate(&mut self, inp: &RouteCacheIn) -> RouteCacheOut {
        let found = inp.lookup.and_then(|g| self.port(g));
        let mut out = RouteCacheOut {
            hit: found.is_some(),
            port: found.unwrap_or(0),
            count: self.count() as u8,
            ..Default::default()
        };
        self.d = self.q;
        let n = self.entries as usize;
        (out.cmd_hit, out.cmd_full) = next_state(&mut self.d.entries[..n], inp.cmd);
        debug_assert!(!(out.cmd_hit && out.cmd_full), "a_hit_or_full");
        out
    }

    fn commit(&mut self) {
        self.q = self.d;
        debug_assert!(
            self.slots().iter().enumerate().all(|(k, a)| {
                !a.valid
                    || self.slots()[k + 1..]
                        .iter()
                        .all(|b| !b.valid || b.gcid != a.gcid)
            }),
            "a_gcid_unique"
        );
    }

    fn probe_inputs(&self, inp: &RouteCacheIn, v: &mut dyn Visit) {
        let l = inp.lookup.unwrap_or_default();
        v.bit("lk_en_i", inp.lookup.is_some());
        v.bits("lk_slid_i", 16, l.slid as u128);
        v.bits("lk_dlid_i", 16, l.dlid as u128);
        v.bits("lk_cid_i", 16, l.cid as u128);
        let (op, g, port) = match inp.cmd {
            RouteCacheCmd::Idle => (0, Gcid::default(), 0),
            RouteCacheCmd::Insert(g, p) => (1, g, p),
            RouteCacheCmd::Erase(g) => (2, g, 0),
        };
        v.bits("cmd_op_i", 2, op);
        v.bits("cmd_slid_i", 16, g.slid as u128);
        v.bits("cmd_dlid_i", 16, g.dlid as u128);
        v.bits("cmd_cid_i", 16, g.cid as u128);
        v.bits("cmd_port_i", 8, port as u128);
    }

    fn probe_outputs(&self, out: &RouteCacheOut, v: &mut dyn Visit) {
        v.bit("lk_hit_o", out.hit);
        v.bits("lk_port_o", 8, out.port as u128);
        v.bit("cmd_hit_o", out.cmd_hit);
        v.bit("cmd_full_o", out.cmd_full);
        v.bits(
            "count_o",
            index_width(self.entries as usize + 1),
            out.count as u128,
        );
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        type Field = (&'static str, u32, fn(&RouteCacheEntry) -> u128);
        let fields: [Field; 5] = [
            ("valid_q", 1, |e| e.valid as u128),
            ("slid_q", 16, |e| e.gcid.slid as u128),
            ("dlid_q", 16, |e| e.gcid.dlid as u128),
            ("cid_q", 16, |e| e.gcid.cid as u128),
            ("port_q", 8, |e| e.port as u128),
        ];
        for (name, width, get) in fields {
            for (k, e) in self.slots().iter().enumerate() {
                v.elem(name, k, width, get(e));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(slid: u16, dlid: u16, cid: u16) -> Gcid {
        Gcid { slid, dlid, cid }
    }

    fn step(c: &mut RouteCache, lookup: Option<Gcid>, cmd: RouteCacheCmd) -> RouteCacheOut {
        c.step(&RouteCacheIn { lookup, cmd })
    }

    #[test]
    fn a_setup_is_seen_from_the_next_cycle_and_a_teardown_frees_it() {
        let mut c = RouteCache::new(2);
        let f = g(1, 9, 0);
        let out = step(&mut c, Some(f), RouteCacheCmd::Insert(f, 5));
        assert!(!out.hit && !out.cmd_hit && !out.cmd_full);
        let out = step(&mut c, Some(f), RouteCacheCmd::Idle);
        assert_eq!((out.hit, out.port, out.count), (true, 5, 1));
        // The same GCID again takes the new port; another CID is another flow.
        let out = step(&mut c, Some(g(1, 9, 1)), RouteCacheCmd::Insert(f, 6));
        assert!(out.cmd_hit && !out.hit);
        assert_eq!(c.port(f), Some(6));
        let out = step(&mut c, None, RouteCacheCmd::Erase(f));
        assert!(out.cmd_hit);
        assert_eq!((c.port(f), c.count()), (None, 0));
    }

    #[test]
    fn a_full_cache_stores_nothing() {
        let mut c = RouteCache::new(2);
        step(&mut c, None, RouteCacheCmd::Insert(g(1, 2, 0), 3));
        step(&mut c, None, RouteCacheCmd::Insert(g(1, 3, 0), 4));
        let out = step(&mut c, None, RouteCacheCmd::Insert(g(1, 4, 0), 5));
        assert!(out.cmd_full);
        assert_eq!(c.port(g(1, 4, 0)), None);
        // An erase frees the lowest entry, which the next insert takes.
        step(&mut c, None, RouteCacheCmd::Erase(g(1, 2, 0)));
        step(&mut c, None, RouteCacheCmd::Insert(g(1, 4, 0), 5));
        assert_eq!(c.slots()[0].gcid, g(1, 4, 0));
    }
}
