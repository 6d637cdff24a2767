//! ARN table (`arn_table.sv`): a CAM of congestion roots with a time-to-live per entry.
//!
//! Models the ARN table of an ARN+AFI switch (Rocher-Gonzalez et al., sections 3.4 to 3.6, table 2,
//! pseudo-codes 1, 2 and 4). Each entry records a congestion root detected at this switch, or an
//! ARN received about one: destination, port, VC, ARN id, congestion-root info and the consumed
//! bit, plus a valid bit, the alternative output port chosen when the ARN was consumed and a
//! 24-bit time-to-live down-counter.
//!
//! Every input port searches the table each cycle with the (destination, VC) of the packet at its
//! head (pseudo-code 4, `existsARNTableConsumedEntry` / `existsARNTableEntry`); the results are
//! combinational from the current registers, so an entry written in cycle t is seen by lookups
//! from cycle t+1 on. At most one processARN command per cycle (pseudo-code 2) refreshes an
//! existing entry's timer, or removes the stale entries of the same (destination, port, VC) and
//! adds the new one; a remove command drops entries by (destination, port, VC). Entries that are
//! not refreshed disappear when their TTL runs out.
//!
//! Next state, in this order (identical in the HDL):
//! 1. ageing: every valid entry counts `ttl` down; one at `ttl_q == 1` expires;
//! 2. remove: every valid entry matching the remove key is invalidated;
//! 3. processARN: an entry that is valid, not removed in step 2 and equal on (dest, port, vc,
//!    arn_id) is refreshed (`ttl = Ttl`, and it stays valid even if it was expiring); otherwise
//!    every valid entry on the same (dest, port, vc) is invalidated and, when `add` is set, the
//!    new entry goes to the lowest-index slot free after steps 1 to 3, or, with none free, over
//!    the valid entry with the smallest `ttl_q` (ties: lowest index), which is evicted.
//!
//! An entry inserted or refreshed at the edge closing cycle t is visible in cycles t+1 ..= t+Ttl.
//! Invalidated entries keep their fields (only a write changes them).
//!
//! Widths: dest 16, port 8, vc 8, arn_id 32, root_info 8, consumed 1, alt_port 8, ttl 24 bits;
//! `lk_idx_o` is `max(1, clog2 Entries)` bits, `count_o` is `clog2(Entries + 1)` bits.

use super::Block;
use super::probe::{Visit, index_width};
use arbitrary_int::prelude::*;

mod ports;
pub use ports::*;

/// Largest supported CAM depth `Entries`.
pub const MAX_ENTRIES: usize = 64;
/// Largest supported number of lookup ports `Ports`.
pub const MAX_PORTS: usize = 64;
/// Largest time-to-live `Ttl` (the timer is 24 bits).
pub const MAX_TTL: u32 = (1 << 24) - 1;

/// A traced per-port or per-entry field: SV array name, width, value getter.
type Field<T> = (&'static str, u32, fn(&T) -> u128);

/// One entry of the table: the fields of table 2 of Rocher-Gonzalez et al. plus the model fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArnEntry {
    /// `valid_q[e]`: the entry holds a live congestion root.
    pub valid: bool,
    /// `dest_q[e]`: destination whose packets trigger the congestion (16 bits).
    pub dest: u16,
    /// `port_q[e]`: output port where congestion was detected, or port the ARN arrived on.
    pub port: u8,
    /// `vc_q[e]`: (original) VC of the congesting packets.
    pub vc: u8,
    /// `arn_id_q[e]`: identifies the congestion root.
    pub arn_id: u32,
    /// `root_info_q[e]`: congestion-root info (fat trees: stage where the ARN may be consumed).
    pub root_info: u8,
    /// `consumed_q[e]`: the ARN was consumed here (matching packets are re-routed).
    pub consumed: bool,
    /// `alt_port_q[e]`: alternative output port chosen when the ARN was consumed.
    pub alt_port: u8,
    /// `ttl_q[e]`: cycles the entry stays visible (24 bits; 0 only when invalid).
    pub ttl: u24,
}

impl ArnEntry {
    /// Whether the entry is valid and on the key (dest, vc) of a lookup.
    #[inline]
    fn matches_lookup(&self, dest: u16, vc: u8) -> bool {
        self.valid && self.dest == dest && self.vc == vc
    }

    /// Whether the entry is valid and on the key (dest, port, vc) of a command.
    #[inline]
    fn matches_key(&self, dest: u16, port: u8, vc: u8) -> bool {
        self.valid && self.dest == dest && self.port == port && self.vc == vc
    }
}

/// Registers: the entries. Only the first `Entries` are used. Reset: all invalid, all fields 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArnTableRegs {
    /// The entries, index `e` is slot `e` of the CAM.
    #[serde(with = "serde_big_array::BigArray")]
    pub entries: [ArnEntry; MAX_ENTRIES],
}

impl Default for ArnTableRegs {
    fn default() -> Self {
        ArnTableRegs {
            entries: [ArnEntry::default(); MAX_ENTRIES],
        }
    }
}

/// The ARN table.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArnTable {
    entries: u8,
    ports: u8,
    ttl: u24,
    q: ArnTableRegs,
    d: ArnTableRegs,
    /// Valid entries in `q` (what `count_o` shows), kept at every commit.
    live: u8,
    /// Smallest TTL of the valid entries in `q` (0 when none), kept at every commit.
    min_ttl: u32,
    /// Cycles of ageing not yet applied to the TTLs of `q` (see [`ArnTable::age_idle_cycle`]).
    owed: u32,
}

impl ArnTable {
    /// A table of `entries` slots (1 to 64) searched by `ports` lookup ports (1 to 64), whose
    /// entries live `ttl` cycles (1 to 2^24-1) after their last insert or refresh; in its reset
    /// state.
    pub fn new(entries: usize, ports: usize, ttl: u32) -> Self {
        assert!(
            (1..=MAX_ENTRIES).contains(&entries),
            "arn_table: Entries = {entries} is outside 1..=64"
        );
        assert!(
            (1..=MAX_PORTS).contains(&ports),
            "arn_table: Ports = {ports} is outside 1..=64"
        );
        assert!(
            (1..=MAX_TTL).contains(&ttl),
            "arn_table: Ttl = {ttl} is outside 1..=16777215"
        );
        ArnTable {
            entries: entries as u8,
            ports: ports as u8,
            ttl: u24::new(ttl),
            q: ArnTableRegs::default(),
            d: ArnTableRegs::default(),
            live: 0,
            min_ttl: 0,
            owed: 0,
        }
    }

    /// CAM depth `Entries`.
    pub fn entries(&self) -> usize {
        self.entries as usize
    }

    /// Number of lookup ports `Ports`.
    pub fn ports(&self) -> usize {
        self.ports as usize
    }

    /// Time-to-live `Ttl` in cycles.
    pub fn ttl(&self) -> u32 {
        self.ttl.value()
    }

    /// Current registers.
    pub fn regs(&self) -> &ArnTableRegs {
        debug_assert_eq!(self.owed, 0, "ageing owed to the TTLs");
        &self.q
    }

    /// The current entries (`Entries` of them).
    pub fn slots(&self) -> &[ArnEntry] {
        debug_assert_eq!(self.owed, 0, "ageing owed to the TTLs");
        &self.q.entries[..self.entries()]
    }

    /// A cycle with no command and no lookup enabled, in which no entry expires, only counts
    /// every valid TTL down by one: instead of stepping, the table notes the cycle and returns
    /// true; the TTLs are brought up to date at the start of its next evaluation, which gives the
    /// registers and outputs of stepping every cycle (the valid bits, `count_o` and every lookup
    /// are those of the stepped table meanwhile, since they do not depend on the TTLs). Returns
    /// false, noting nothing, when an entry's TTL is 1 (it expires in this cycle): the cycle must
    /// then be evaluated. While a cycle is owed, [`ArnTable::regs`] and [`ArnTable::slots`]
    /// lag behind; [`Block::evaluate`] never owes one.
    #[inline]
    pub fn age_idle_cycle(&mut self) -> bool {
        if self.live > 0 && self.idle_for() >= 1 {
            self.owed += 1;
            true
        } else {
            false
        }
    }

    /// How many cycles from the next one on can pass as in [`ArnTable::age_idle_cycle`], none
    /// of them expiring an entry (`u32::MAX` when no entry is valid).
    #[inline]
    pub fn idle_for(&self) -> u32 {
        if self.live == 0 {
            u32::MAX
        } else {
            self.min_ttl - self.owed - 1
        }
    }

    /// Notes `cycles` cycles with no command and no lookup, at most [`ArnTable::idle_for`].
    #[inline]
    pub fn age_idle(&mut self, cycles: u32) {
        debug_assert!(
            cycles <= self.idle_for(),
            "an entry expires in the idle cycles"
        );
        if self.live > 0 {
            self.owed += cycles;
        }
    }

    /// Applies the ageing owed to the TTLs of `q` (none expires in it).
    fn settle(&mut self) {
        if self.owed > 0 {
            let n = self.entries();
            for e in self.q.entries[..n].iter_mut().filter(|e| e.valid) {
                e.ttl = u24::new(e.ttl.value() - self.owed);
            }
            self.min_ttl -= self.owed;
            self.owed = 0;
        }
    }

    /// Number of entries still valid after `cycles` more cycles with no command (`count_o`
    /// then): those whose TTL, less the ageing owed, is above `cycles`. A closed form for
    /// whoever reads the table between its evaluations.
    pub fn live_after(&self, cycles: u64) -> usize {
        if self.live == 0 {
            return 0;
        }
        self.q.entries[..self.entries()]
            .iter()
            .filter(|e| e.valid && (e.ttl.value() - self.owed) as u64 > cycles)
            .count()
    }

    /// Number of valid entries in the current registers (`count_o`).
    pub fn count(&self) -> usize {
        debug_assert_eq!(
            self.live as usize,
            self.q.entries[..self.entries()]
                .iter()
                .filter(|e| e.valid)
                .count()
        );
        self.live as usize
    }

    /// The register updates of one cycle (ageing, remove, processARN) and the outputs that do
    /// not depend on the lookups, written into `out`.
    fn update(&mut self, inp: &ArnTableIn, out: &mut ArnTableOut) {
        let n = self.entries();
        out.pr_hit = false;
        out.pr_evict = false;
        out.count = self.count() as u8;
        out.full = out.count as usize == n;
        debug_assert!(out.count as usize <= n, "a_count_le_entries");

        let q = &self.q.entries[..n];
        let d = &mut self.d.entries[..n];
        d.copy_from_slice(q);
        // 1. Ageing.
        for (dn, qn) in d.iter_mut().zip(q) {
            if qn.valid {
                dn.ttl = u24::new(qn.ttl.value() - 1);
                if qn.ttl.value() == 1 {
                    dn.valid = false;
                }
            }
        }
        // 2. Remove.
        let rm = &inp.rm;
        let mut removed = 0u64;
        if rm.en {
            for (e, (dn, qn)) in d.iter_mut().zip(q).enumerate() {
                if qn.matches_key(rm.dest, rm.port, rm.vc) {
                    removed |= 1 << e;
                    dn.valid = false;
                }
            }
        }
        // 3. processARN.
        let pr = &inp.pr;
        if pr.en {
            let mut exists = false;
            for (e, (dn, qn)) in d.iter_mut().zip(q).enumerate() {
                if removed >> e & 1 == 0
                    && qn.matches_key(pr.dest, pr.port, pr.vc)
                    && qn.arn_id == pr.arn_id
                {
                    exists = true;
                    dn.valid = true;
                    dn.ttl = self.ttl;
                }
            }
            out.pr_hit = exists;
            if !exists {
                // The congestion root moved: drop the stale entries of the same key.
                for (dn, qn) in d.iter_mut().zip(q) {
                    if qn.matches_key(pr.dest, pr.port, pr.vc) {
                        dn.valid = false;
                    }
                }
                if pr.add {
                    let slot = match d.iter().position(|x| !x.valid) {
                        Some(free) => free,
                        None => {
                            // Every entry is valid: evict the one nearest expiry (the first
                            // of the smallest on a tie).
                            out.pr_evict = true;
                            let mut victim = 0;
                            for (e, qn) in q.iter().enumerate().skip(1) {
                                if qn.ttl < q[victim].ttl {
                                    victim = e;
                                }
                            }
                            victim
                        }
                    };
                    d[slot] = ArnEntry {
                        valid: true,
                        dest: pr.dest,
                        port: pr.port,
                        vc: pr.vc,
                        arn_id: pr.arn_id,
                        root_info: pr.root_info,
                        consumed: pr.consumed,
                        alt_port: pr.alt_port,
                        ttl: self.ttl,
                    };
                }
            }
        }
        debug_assert!(!(out.pr_hit && out.pr_evict), "a_hit_evict_exclusive");
        debug_assert!(!(out.pr_hit || out.pr_evict) || pr.en, "a_pr_out_needs_en");
        debug_assert!(!out.pr_evict || out.full, "a_evict_only_when_full");
    }

    /// [`Block::evaluate`] into a record the caller keeps, computing only the lookups of the
    /// ports in `lookups` (bit p: port p); the other lookup results are left as they were. For
    /// a switch that reads only the results of the ports it enabled (the record is about 1 KB).
    pub fn evaluate_into(&mut self, inp: &ArnTableIn, lookups: u64, out: &mut ArnTableOut) {
        self.settle();
        if cfg!(debug_assertions) {
            self.check_regs();
        }
        let mut scan = lookups;
        while scan != 0 {
            let p = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            out.lk[p] = self.lookup(&inp.lk[p]);
        }
        self.update(inp, out);
    }

    /// The result of one lookup on the current registers, without touching any state.
    #[inline]
    pub fn lookup(&self, req: &ArnLookup) -> ArnLookupResult {
        if !req.en {
            return ArnLookupResult::default();
        }
        let mut first: Option<usize> = None;
        let mut first_consumed: Option<usize> = None;
        for (e, ent) in self.q.entries[..self.entries()].iter().enumerate() {
            if ent.matches_lookup(req.dest, req.vc) {
                first.get_or_insert(e);
                if ent.consumed {
                    first_consumed = Some(e);
                    break;
                }
            }
        }
        let Some(sel) = first_consumed.or(first) else {
            return ArnLookupResult::default();
        };
        let ent = &self.q.entries[sel];
        ArnLookupResult {
            hit: true,
            consumed: first_consumed.is_some(),
            idx: sel as u8,
            port: ent.port,
            arn_id: ent.arn_id,
            root_info: ent.root_info,
            alt_port: ent.alt_port,
        }
    }

    /// Checks the register invariants of the HDL on the current registers.
    fn check_regs(&self) {
        let slots = self.slots();
        for (e, a) in slots.iter().enumerate() {
            debug_assert!(
                !a.valid || (a.ttl.value() != 0 && a.ttl <= self.ttl),
                "a_valid_ttl_in_range: entry {e}"
            );
            for b in &slots[e + 1..] {
                debug_assert!(
                    !(a.valid && b.matches_key(a.dest, a.port, a.vc)),
                    "a_key_unique: entry {e}"
                );
            }
        }
    }
}

impl Block for ArnTable {
    type In = ArnTableIn;
    type Out = ArnTableOut;
    const NAME: &'static str = "arn_table";

    fn reset(&mut self) {
        self.q = ArnTableRegs::default();
        self.d = self.q;
        self.live = 0;
        self.min_ttl = 0;
        self.owed = 0;
    }

    fn evaluate(&mut self, inp: &ArnTableIn) -> ArnTableOut {
        self.settle();
        let n = self.entries();
        if cfg!(debug_assertions) {
            self.check_regs();
        }
        let mut out = ArnTableOut::default();
        for (res, req) in out.lk.iter_mut().zip(&inp.lk[..self.ports()]) {
            *res = self.lookup(req);
            debug_assert!(!res.hit || req.en, "a_hit_needs_en");
            debug_assert!(!res.consumed || res.hit, "a_consumed_needs_hit");
            debug_assert!(
                res.hit || *res == ArnLookupResult::default(),
                "a_miss_outputs_zero"
            );
            debug_assert!((res.idx as usize) < n, "a_idx_in_range");
        }
        self.update(inp, &mut out);
        out
    }

    #[inline]
    fn commit(&mut self) {
        let n = self.entries();
        self.q.entries[..n].copy_from_slice(&self.d.entries[..n]);
        let (mut live, mut min_ttl) = (0, u32::MAX);
        for e in self.q.entries[..n].iter().filter(|e| e.valid) {
            live += 1;
            min_ttl = min_ttl.min(e.ttl.value());
        }
        self.live = live;
        self.min_ttl = if live > 0 { min_ttl } else { 0 };
    }

    fn probe_inputs(&self, inp: &ArnTableIn, v: &mut dyn Visit) {
        let lk = &inp.lk[..self.ports()];
        for (p, l) in lk.iter().enumerate() {
            v.elem("lk_en_i", p, 1, l.en as u128);
        }
        for (p, l) in lk.iter().enumerate() {
            v.elem("lk_dest_i", p, 16, l.dest as u128);
        }
        for (p, l) in lk.iter().enumerate() {
            v.elem("lk_vc_i", p, 8, l.vc as u128);
        }
        let pr = &inp.pr;
        v.bit("pr_en_i", pr.en);
        v.bits("pr_dest_i", 16, pr.dest as u128);
        v.bits("pr_port_i", 8, pr.port as u128);
        v.bits("pr_vc_i", 8, pr.vc as u128);
        v.bits("pr_arn_id_i", 32, pr.arn_id as u128);
        v.bits("pr_root_info_i", 8, pr.root_info as u128);
        v.bit("pr_consumed_i", pr.consumed);
        v.bits("pr_alt_port_i", 8, pr.alt_port as u128);
        v.bit("pr_add_i", pr.add);
        let rm = &inp.rm;
        v.bit("rm_en_i", rm.en);
        v.bits("rm_dest_i", 16, rm.dest as u128);
        v.bits("rm_port_i", 8, rm.port as u128);
        v.bits("rm_vc_i", 8, rm.vc as u128);
    }

    fn probe_outputs(&self, out: &ArnTableOut, v: &mut dyn Visit) {
        let lk = &out.lk[..self.ports()];
        let iw = index_width(self.entries());
        let fields: [Field<ArnLookupResult>; 7] = [
            ("lk_hit_o", 1, |r| r.hit as u128),
            ("lk_consumed_o", 1, |r| r.consumed as u128),
            ("lk_idx_o", iw, |r| r.idx as u128),
            ("lk_port_o", 8, |r| r.port as u128),
            ("lk_arn_id_o", 32, |r| r.arn_id as u128),
            ("lk_root_info_o", 8, |r| r.root_info as u128),
            ("lk_alt_port_o", 8, |r| r.alt_port as u128),
        ];
        for (name, width, get) in fields {
            for (p, r) in lk.iter().enumerate() {
                v.elem(name, p, width, get(r));
            }
        }
        v.bit("pr_hit_o", out.pr_hit);
        v.bit("pr_evict_o", out.pr_evict);
        v.bits(
            "count_o",
            index_width(self.entries() + 1),
            out.count as u128,
        );
        v.bit("full_o", out.full);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        let fields: [Field<ArnEntry>; 9] = [
            ("valid_q", 1, |e| e.valid as u128),
            ("dest_q", 16, |e| e.dest as u128),
            ("port_q", 8, |e| e.port as u128),
            ("vc_q", 8, |e| e.vc as u128),
            ("arn_id_q", 32, |e| e.arn_id as u128),
            ("root_info_q", 8, |e| e.root_info as u128),
            ("consumed_q", 1, |e| e.consumed as u128),
            ("alt_port_q", 8, |e| e.alt_port as u128),
            ("ttl_q", 24, |e| e.ttl.value() as u128),
        ];
        for (name, width, get) in fields {
            for (e, ent) in self.slots().iter().enumerate() {
                v.elem(name, e, width, get(ent));
            }
        }
    }
}

#[cfg(test)]
mod tests;
