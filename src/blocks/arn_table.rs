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
use crate::trace::{Visit, index_width};
use arbitrary_int::prelude::*;

/// Largest supported CAM depth `Entries`.
pub const MAX_ENTRIES: usize = 64;
/// Largest supported number of lookup ports `Ports`.
pub const MAX_PORTS: usize = 64;
/// Largest time-to-live `Ttl` (the timer is 24 bits).
pub const MAX_TTL: u32 = (1 << 24) - 1;

/// A traced per-port or per-entry field: SV array name, width, value getter.
type Field<T> = (&'static str, u32, fn(&T) -> u128);

/// One entry of the table: the fields of table 2 of Rocher-Gonzalez et al. plus the model fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

/// One lookup request: `lk_en_i[p]`, `lk_dest_i[p]`, `lk_vc_i[p]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArnLookup {
    /// `lk_en_i[p]`: the port searches this cycle (a non-adapted data packet at its head).
    pub en: bool,
    /// `lk_dest_i[p]`: destination of the packet.
    pub dest: u16,
    /// `lk_vc_i[p]`: (original) VC of the packet.
    pub vc: u8,
}

/// The processARN command: `pr_*_i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArnProcess {
    /// `pr_en_i`: a command this cycle.
    pub en: bool,
    /// `pr_dest_i`: destination.
    pub dest: u16,
    /// `pr_port_i`: port where congestion was detected or the ARN arrived.
    pub port: u8,
    /// `pr_vc_i`: VC.
    pub vc: u8,
    /// `pr_arn_id_i`: ARN id.
    pub arn_id: u32,
    /// `pr_root_info_i`: congestion-root info.
    pub root_info: u8,
    /// `pr_consumed_i`: the new entry is consumed (this switch is at the consuming stage).
    pub consumed: bool,
    /// `pr_alt_port_i`: alternative output port kept with a consumed entry.
    pub alt_port: u8,
    /// `pr_add_i`: add the entry when it does not exist (clear for adapted packets).
    pub add: bool,
}

/// The remove command: `rm_*_i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArnRemove {
    /// `rm_en_i`: a remove this cycle.
    pub en: bool,
    /// `rm_dest_i`: destination.
    pub dest: u16,
    /// `rm_port_i`: port.
    pub port: u8,
    /// `rm_vc_i`: VC.
    pub vc: u8,
}

/// Inputs of one cycle. Only the first `Ports` lookups are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArnTableIn {
    /// Lookups, one per input port.
    pub lk: [ArnLookup; MAX_PORTS],
    /// processARN command.
    pub pr: ArnProcess,
    /// Remove command.
    pub rm: ArnRemove,
}

impl Default for ArnTableIn {
    fn default() -> Self {
        ArnTableIn {
            lk: [ArnLookup::default(); MAX_PORTS],
            pr: ArnProcess::default(),
            rm: ArnRemove::default(),
        }
    }
}

/// Result of one lookup: `lk_*_o[p]`. All zero without a hit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArnLookupResult {
    /// `lk_hit_o[p]`: enabled and some valid entry is on (dest, vc).
    pub hit: bool,
    /// `lk_consumed_o[p]`: enabled and some consumed valid entry is on (dest, vc).
    pub consumed: bool,
    /// `lk_idx_o[p]`: selected entry: lowest-index consumed match, else lowest-index match.
    pub idx: u8,
    /// `lk_port_o[p]`: port of the selected entry.
    pub port: u8,
    /// `lk_arn_id_o[p]`: ARN id of the selected entry.
    pub arn_id: u32,
    /// `lk_root_info_o[p]`: congestion-root info of the selected entry.
    pub root_info: u8,
    /// `lk_alt_port_o[p]`: alternative output port of the selected entry.
    pub alt_port: u8,
}

/// Outputs of one cycle (combinational). Only the first `Ports` lookup results are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArnTableOut {
    /// Lookup results, one per input port.
    pub lk: [ArnLookupResult; MAX_PORTS],
    /// `pr_hit_o`: the processARN command refreshes an existing entry.
    pub pr_hit: bool,
    /// `pr_evict_o`: the processARN add had to evict a valid entry.
    pub pr_evict: bool,
    /// `count_o`: valid entries in the current registers.
    pub count: u8,
    /// `full_o`: `count_o == Entries`.
    pub full: bool,
}

impl Default for ArnTableOut {
    fn default() -> Self {
        ArnTableOut {
            lk: [ArnLookupResult::default(); MAX_PORTS],
            pr_hit: false,
            pr_evict: false,
            count: 0,
            full: false,
        }
    }
}

/// Registers: the entries. Only the first `Entries` are used. Reset: all invalid, all fields 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArnTableRegs {
    /// The entries, index `e` is slot `e` of the CAM.
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
#[derive(Clone, Debug)]
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
mod tests {
    use super::*;
    use crate::trace::SignalList;
    use proptest::prelude::*;

    fn pr(dest: u16, port: u8, vc: u8, arn_id: u32, consumed: bool, alt_port: u8) -> ArnProcess {
        ArnProcess {
            en: true,
            dest,
            port,
            vc,
            arn_id,
            root_info: 2,
            consumed,
            alt_port,
            add: true,
        }
    }

    fn rm(dest: u16, port: u8, vc: u8) -> ArnRemove {
        ArnRemove {
            en: true,
            dest,
            port,
            vc,
        }
    }

    /// Inputs with port 0 looking up (dest, vc).
    fn with_lookup(dest: u16, vc: u8, pr: ArnProcess, rm: ArnRemove) -> ArnTableIn {
        let mut inp = ArnTableIn {
            pr,
            rm,
            ..ArnTableIn::default()
        };
        inp.lk[0] = ArnLookup { en: true, dest, vc };
        inp
    }

    fn just(pr: ArnProcess) -> ArnTableIn {
        ArnTableIn {
            pr,
            ..ArnTableIn::default()
        }
    }

    fn idle() -> ArnTableIn {
        ArnTableIn::default()
    }

    /// The timing diagram of `docs/blocks/arn_table.md`: Entries = 2, Ports = 1, Ttl = 3.
    #[test]
    fn timing_diagram_of_the_doc() {
        let mut t = ArnTable::new(2, 1, 3);
        let a = pr(5, 1, 0, 7, false, 0);
        let b = pr(5, 2, 0, 9, true, 3);
        let c = pr(6, 1, 0, 1, false, 0);
        let none = ArnProcess::default();
        let no_rm = ArnRemove::default();
        let seq = [
            with_lookup(5, 0, a, no_rm),
            with_lookup(5, 0, b, no_rm),
            with_lookup(5, 0, a, no_rm),
            with_lookup(5, 0, c, no_rm),
            with_lookup(5, 0, none, no_rm),
            with_lookup(5, 0, none, rm(6, 1, 0)),
            with_lookup(5, 0, none, no_rm),
        ];
        // Per cycle: valid_q[0], ttl_q[0], valid_q[1], ttl_q[1], pr_hit_o, pr_evict_o,
        // count_o, lk_hit_o, lk_consumed_o, lk_idx_o, lk_alt_port_o.
        type Row = (bool, u32, bool, u32, bool, bool, u8, bool, bool, u8, u8);
        let expect: [Row; 7] = [
            (false, 0, false, 0, false, false, 0, false, false, 0, 0),
            (true, 3, false, 0, false, false, 1, true, false, 0, 0),
            (true, 2, true, 3, true, false, 2, true, true, 1, 3),
            (true, 3, true, 2, false, true, 2, true, true, 1, 3),
            (true, 2, true, 3, false, false, 2, true, false, 0, 0),
            (true, 1, true, 2, false, false, 2, true, false, 0, 0),
            (false, 0, false, 1, false, false, 0, false, false, 0, 0),
        ];
        for (cyc, (inp, e)) in seq.iter().zip(expect).enumerate() {
            let s = t.slots();
            let got_regs = (s[0].valid, s[0].ttl.value(), s[1].valid, s[1].ttl.value());
            let out = t.step(inp);
            let l = out.lk[0];
            let got = (
                got_regs.0,
                got_regs.1,
                got_regs.2,
                got_regs.3,
                out.pr_hit,
                out.pr_evict,
                out.count,
                l.hit,
                l.consumed,
                l.idx,
                l.alt_port,
            );
            assert_eq!(got, e, "cycle {cyc}");
        }
        assert_eq!(t.slots()[1].dest, 6, "C took the slot of B");
    }

    #[test]
    fn idle_cycles_are_noted_until_an_entry_expires() {
        let mut t = ArnTable::new(4, 1, 6);
        t.step(&just(pr(1, 2, 3, 4, false, 0)));
        // TTL 6: five cycles only count it down; in the sixth it expires, which takes a step.
        let mut noted = 0;
        while t.age_idle_cycle() {
            noted += 1;
            assert_eq!(t.count(), 1);
        }
        assert_eq!(noted, 5);
        assert_eq!(t.idle_for(), 0);
        let out = t.step(&idle());
        assert_eq!(
            out.count, 1,
            "count_o shows the registers of the expiring cycle"
        );
        assert_eq!(t.count(), 0);
        assert_eq!(t.slots()[0].ttl.value(), 0, "the TTL counted down to 0");
        assert_eq!(t.idle_for(), u32::MAX);
        assert!(!t.age_idle_cycle(), "an empty table notes nothing");
    }

    #[test]
    fn lives_exactly_ttl_cycles_and_refresh_on_last_cycle_saves() {
        for ttl in [1u32, 2, 5] {
            let mut t = ArnTable::new(4, 1, ttl);
            let a = pr(1, 2, 3, 4, false, 0);
            t.step(&just(a));
            for k in 1..=ttl {
                assert!(t.slots()[0].valid, "ttl {ttl}: visible {k} cycles after");
                assert_eq!(t.slots()[0].ttl.value(), ttl - k + 1);
                if k < ttl {
                    t.step(&idle());
                }
            }
            // Last cycle of the life: a refresh keeps it for Ttl more cycles.
            let out = t.step(&just(a));
            assert!(out.pr_hit);
            for _ in 0..ttl {
                assert!(t.slots()[0].valid);
                t.step(&idle());
            }
            assert!(
                !t.slots()[0].valid,
                "ttl {ttl}: gone Ttl+1 cycles after the refresh"
            );
            // Too late: the same command adds it again (no hit).
            let out = t.step(&just(a));
            assert!(!out.pr_hit && !out.pr_evict);
            assert!(t.slots()[0].valid);
        }
    }

    #[test]
    fn evicts_the_entry_nearest_expiry() {
        let mut t = ArnTable::new(3, 1, 10);
        for k in 0..3 {
            t.step(&just(pr(k, 0, 0, 0, false, 0)));
        }
        // Refresh the oldest (slot 0): slot 1 is now nearest expiry.
        assert!(t.step(&just(pr(0, 0, 0, 0, false, 0))).pr_hit);
        let out = t.step(&just(pr(9, 0, 0, 0, false, 0)));
        assert!(out.pr_evict && out.full);
        let dests: Vec<u16> = t.slots().iter().map(|e| e.dest).collect();
        assert_eq!(dests, vec![0, 9, 2]);
    }

    #[test]
    fn add_takes_the_slot_expiring_in_the_same_cycle() {
        let mut t = ArnTable::new(2, 1, 3);
        t.step(&just(pr(1, 0, 0, 0, false, 0)));
        t.step(&just(pr(2, 0, 0, 0, false, 0)));
        t.step(&idle());
        assert_eq!(t.slots()[0].ttl.value(), 1);
        let out = t.step(&just(pr(3, 0, 0, 0, false, 0)));
        assert!(out.full && !out.pr_evict);
        assert_eq!((t.slots()[0].dest, t.slots()[1].dest), (3, 2));
    }

    #[test]
    fn remove_and_process_on_the_same_key_adds_anew() {
        let mut t = ArnTable::new(4, 1, 8);
        t.step(&just(pr(1, 1, 1, 5, false, 0)));
        t.step(&idle());
        let out = t.step(&ArnTableIn {
            pr: pr(1, 1, 1, 5, true, 6),
            rm: rm(1, 1, 1),
            ..ArnTableIn::default()
        });
        assert!(!out.pr_hit);
        let e = t.slots()[0];
        assert!(e.valid && e.consumed && e.alt_port == 6 && e.ttl.value() == 8);
    }

    #[test]
    fn moved_root_replaces_and_cleared_add_only_removes() {
        let mut t = ArnTable::new(4, 1, 8);
        t.step(&just(pr(1, 1, 1, 5, false, 0)));
        t.step(&just(pr(1, 2, 1, 5, false, 0)));
        t.step(&just(pr(1, 1, 1, 6, false, 0)));
        assert_eq!(t.count(), 2);
        assert_eq!(t.slots()[0].arn_id, 6);
        t.step(&just(ArnProcess {
            add: false,
            ..pr(1, 2, 1, 7, false, 0)
        }));
        assert_eq!(t.count(), 1);
        assert!(!t.slots()[1].valid);
    }

    #[test]
    fn consumed_match_is_preferred() {
        let mut t = ArnTable::new(4, 2, 8);
        t.step(&just(pr(4, 0, 1, 0, false, 1)));
        t.step(&just(pr(4, 1, 1, 0, true, 7)));
        t.step(&just(pr(4, 2, 1, 0, true, 8)));
        let mut inp = with_lookup(4, 1, ArnProcess::default(), ArnRemove::default());
        inp.lk[1] = ArnLookup {
            en: false,
            dest: 4,
            vc: 1,
        };
        let out = t.step(&inp);
        assert_eq!(
            (out.lk[0].hit, out.lk[0].consumed, out.lk[0].idx),
            (true, true, 1)
        );
        assert_eq!(out.lk[0].alt_port, 7);
        assert_eq!(out.lk[1], ArnLookupResult::default());
    }

    #[test]
    fn widths_follow_the_parameters() {
        for (entries, idx_w, cnt_w) in [(1usize, 1u32, 1u32), (3, 2, 2), (8, 3, 4), (64, 6, 7)] {
            let t = ArnTable::new(entries, 64, MAX_TTL);
            let mut s = SignalList::default();
            t.probe_outputs(&ArnTableOut::default(), &mut s);
            let w = |n: &str| s.signals.iter().find(|(x, _)| x == n).unwrap().1;
            assert_eq!(w("lk_idx_o[63]"), idx_w);
            assert_eq!(w("count_o"), cnt_w);
            let mut r = SignalList::default();
            t.probe_regs(&mut r);
            assert_eq!(r.signals.len(), 9 * entries);
            assert_eq!(
                r.signals.last().unwrap(),
                &(format!("ttl_q[{}]", entries - 1), 24)
            );
        }
    }

    #[test]
    fn largest_table_fills_and_evicts() {
        let mut t = ArnTable::new(MAX_ENTRIES, MAX_PORTS, MAX_TTL);
        for k in 0..MAX_ENTRIES as u16 + 1 {
            let out = t.step(&just(pr(k, 0, 0, u32::MAX, true, 0xff)));
            assert_eq!(out.pr_evict, k == MAX_ENTRIES as u16);
        }
        assert_eq!(t.slots()[0].dest, MAX_ENTRIES as u16);
        assert_eq!(t.slots()[1].ttl.value(), MAX_TTL - (MAX_ENTRIES as u32 - 1));
    }

    /// An independent formulation: each slot remembers the cycle of its last write, and is
    /// valid while `now <= last_write + Ttl`.
    #[derive(Clone, Copy, Default)]
    struct RefSlot {
        live: bool,
        last_write: u64,
        fields: ArnEntry,
    }

    struct Reference {
        ttl: u64,
        slots: Vec<RefSlot>,
    }

    impl Reference {
        fn valid(&self, s: &RefSlot, now: u64) -> bool {
            s.live && now <= s.last_write + self.ttl
        }

        fn ttl_left(&self, s: &RefSlot, now: u64) -> u64 {
            s.last_write + self.ttl + 1 - now
        }

        fn same_key(s: &RefSlot, dest: u16, port: u8, vc: u8) -> bool {
            (s.fields.dest, s.fields.port, s.fields.vc) == (dest, port, vc)
        }

        /// Applies the commands of cycle `now`: returns (pr_hit, pr_evict).
        fn step(&mut self, inp: &ArnTableIn, now: u64) -> (bool, bool) {
            let before: Vec<RefSlot> = self.slots.clone();
            let valid_now: Vec<bool> = before.iter().map(|s| self.valid(s, now)).collect();
            let (pr, rm) = (&inp.pr, &inp.rm);
            let removed: Vec<bool> = before
                .iter()
                .zip(&valid_now)
                .map(|(s, &v)| v && rm.en && Self::same_key(s, rm.dest, rm.port, rm.vc))
                .collect();
            // Live after this cycle: valid now, not removed, and not expiring at its end.
            let mut live: Vec<bool> = (0..before.len())
                .map(|e| valid_now[e] && !removed[e] && self.valid(&before[e], now + 1))
                .collect();
            let (mut hit, mut evict) = (false, false);
            if pr.en {
                for e in 0..before.len() {
                    if valid_now[e]
                        && !removed[e]
                        && Self::same_key(&before[e], pr.dest, pr.port, pr.vc)
                        && before[e].fields.arn_id == pr.arn_id
                    {
                        hit = true;
                        live[e] = true;
                        self.slots[e].last_write = now;
                    }
                }
                if !hit {
                    for e in 0..before.len() {
                        if valid_now[e] && Self::same_key(&before[e], pr.dest, pr.port, pr.vc) {
                            live[e] = false;
                        }
                    }
                    if pr.add {
                        let slot = match live.iter().position(|&l| !l) {
                            Some(e) => e,
                            None => {
                                evict = true;
                                // The oldest write is nearest expiry.
                                (0..before.len())
                                    .min_by_key(|&e| (before[e].last_write, e))
                                    .unwrap()
                            }
                        };
                        live[slot] = true;
                        self.slots[slot] = RefSlot {
                            live: true,
                            last_write: now,
                            fields: ArnEntry {
                                valid: true,
                                dest: pr.dest,
                                port: pr.port,
                                vc: pr.vc,
                                arn_id: pr.arn_id,
                                root_info: pr.root_info,
                                consumed: pr.consumed,
                                alt_port: pr.alt_port,
                                ttl: u24::new(0),
                            },
                        };
                    }
                }
            }
            for (s, l) in self.slots.iter_mut().zip(live) {
                s.live = l;
            }
            (hit, evict)
        }
    }

    /// One cycle of random commands on small key spaces.
    fn op(ports: usize) -> impl Strategy<Value = ArnTableIn> {
        let lk = proptest::collection::vec((any::<bool>(), 0u16..3, 0u8..2), ports);
        let pr = (
            0u8..3,
            0u16..3,
            0u8..2,
            0u8..2,
            0u32..2,
            any::<bool>(),
            0u8..4,
            any::<u8>(),
            any::<u8>(),
        );
        let rm = (0u8..8, 0u16..3, 0u8..2, 0u8..2);
        (lk, pr, rm).prop_map(move |(lk, p, r)| {
            let mut inp = ArnTableIn::default();
            for (i, (en, dest, vc)) in lk.into_iter().enumerate() {
                inp.lk[i] = ArnLookup { en, dest, vc };
            }
            inp.pr = ArnProcess {
                en: p.0 != 0,
                dest: p.1,
                port: p.2,
                vc: p.3,
                arn_id: p.4,
                consumed: p.5,
                add: p.6 != 0,
                alt_port: p.7,
                root_info: p.8,
            };
            inp.rm = ArnRemove {
                en: r.0 == 0,
                dest: r.1,
                port: r.2,
                vc: r.3,
            };
            inp
        })
    }

    fn table_and_stream() -> impl Strategy<Value = (usize, usize, u32, Vec<ArnTableIn>)> {
        (1usize..=6, 1usize..=4, 1u32..=12).prop_flat_map(|(e, p, t)| {
            (
                Just(e),
                Just(p),
                Just(t),
                proptest::collection::vec(op(p), 1..300),
            )
        })
    }

    proptest! {
        /// A table that notes its idle cycles (no command, no lookup, no entry expiring) and
        /// ages its TTLs at the next evaluation shows the count of a table stepped every cycle
        /// in every cycle, the same lookups and outputs in the cycles it evaluates, and the same
        /// registers after each of them. Idle stretches come from masking most of the stream.
        #[test]
        fn idle_cycles_aged_later_match_stepping_every_cycle(
            (entries, ports, ttl, stream) in table_and_stream(),
            idle in proptest::collection::vec(0u8..4, 300),
        ) {
            let mut stepped = ArnTable::new(entries, ports, ttl);
            let mut lazy = ArnTable::new(entries, ports, ttl);
            let mut out = ArnTableOut::default();
            for (c, inp) in stream.iter().enumerate() {
                // Three cycles in four carry no command and no lookup.
                let inp = if idle[c] == 0 { *inp } else { ArnTableIn::default() };
                let quiet = !inp.pr.en && !inp.rm.en && inp.lk[..ports].iter().all(|l| !l.en);
                let want = stepped.step(&inp);
                if !(quiet && lazy.age_idle_cycle()) {
                    let lookups = (1u64 << ports) - 1;
                    lazy.evaluate_into(&inp, lookups, &mut out);
                    lazy.commit();
                    prop_assert_eq!(out, want, "outputs of cycle {}", c);
                    prop_assert_eq!(lazy.slots(), stepped.slots(), "registers after cycle {}", c);
                }
                prop_assert_eq!(lazy.count(), stepped.count(), "count after cycle {}", c);
            }
        }

        /// An entry disappears exactly Ttl cycles after its last insert or refresh, never
        /// earlier and never later, unless it is removed, replaced (moved root) or evicted.
        #[test]
        fn entry_lives_exactly_ttl_after_last_refresh(
            (entries, ports, ttl, stream) in table_and_stream()
        ) {
            let mut t = ArnTable::new(entries, ports, ttl);
            let ttl = ttl as u64;
            // Per slot: cycle of the last write (insert or refresh), if not killed since.
            let mut written: Vec<Option<u64>> = vec![None; entries];
            for (c, inp) in stream.iter().enumerate() {
                let c = c as u64;
                for (e, w) in written.iter().enumerate() {
                    if let Some(w) = *w {
                        prop_assert_eq!(t.slots()[e].valid, c <= w + ttl, "slot {} written at {}, cycle {}", e, w, c);
                    }
                }
                let q: Vec<ArnEntry> = t.slots().to_vec();
                let out = t.step(inp);
                let (pr, rm) = (&inp.pr, &inp.rm);
                for (e, qe) in q.iter().enumerate() {
                    let removed = rm.en && qe.matches_key(rm.dest, rm.port, rm.vc);
                    let moved = pr.en && !out.pr_hit && qe.matches_key(pr.dest, pr.port, pr.vc);
                    if removed || moved {
                        written[e] = None;
                    }
                }
                // A valid entry at full Ttl was written in this cycle (one write per cycle).
                for (e, x) in t.slots().iter().enumerate() {
                    if x.valid && x.ttl.value() as u64 == ttl {
                        written[e] = Some(c);
                    }
                }
            }
        }

        /// At most one valid entry per (dest, port, vc).
        #[test]
        fn one_entry_per_key((entries, ports, ttl, stream) in table_and_stream()) {
            let mut t = ArnTable::new(entries, ports, ttl);
            for inp in &stream {
                t.step(inp);
                let s = t.slots();
                for a in 0..s.len() {
                    for b in a + 1..s.len() {
                        prop_assert!(!(s[a].valid && s[b].matches_key(s[a].dest, s[a].port, s[a].vc)));
                    }
                }
            }
        }

        /// count_o is the number of valid entries (at most Entries), full_o follows it, and a
        /// lookup hits exactly when a valid entry matches, selecting the lowest consumed match,
        /// else the lowest match.
        #[test]
        fn count_and_lookups_follow_the_valid_entries(
            (entries, ports, ttl, stream) in table_and_stream()
        ) {
            let mut t = ArnTable::new(entries, ports, ttl);
            for inp in &stream {
                let q: Vec<ArnEntry> = t.slots().to_vec();
                let out = t.step(inp);
                let valid = q.iter().filter(|e| e.valid).count();
                prop_assert_eq!(out.count as usize, valid);
                prop_assert!(valid <= entries);
                prop_assert_eq!(out.full, valid == entries);
                for (p, r) in out.lk[..ports].iter().enumerate() {
                    let l = &inp.lk[p];
                    let m = |e: &ArnEntry| e.valid && e.dest == l.dest && e.vc == l.vc;
                    let first = q.iter().position(m);
                    let first_c = q.iter().position(|e| m(e) && e.consumed);
                    prop_assert_eq!(r.hit, l.en && first.is_some());
                    prop_assert_eq!(r.consumed, l.en && first_c.is_some());
                    if r.hit {
                        let sel = first_c.or(first).unwrap();
                        prop_assert_eq!(r.idx as usize, sel);
                        prop_assert!(q[sel].valid);
                        prop_assert_eq!((r.port, r.arn_id, r.root_info, r.alt_port),
                            (q[sel].port, q[sel].arn_id, q[sel].root_info, q[sel].alt_port));
                    } else {
                        prop_assert_eq!(*r, ArnLookupResult::default());
                    }
                }
                for r in &out.lk[ports..] {
                    prop_assert_eq!(*r, ArnLookupResult::default());
                }
            }
        }

        /// The table agrees, cycle by cycle, with a formulation in absolute time (last write
        /// cycle per slot instead of a down-counter).
        #[test]
        fn agrees_with_absolute_time_reference(
            (entries, ports, ttl, stream) in table_and_stream()
        ) {
            let mut t = ArnTable::new(entries, ports, ttl);
            let mut r = Reference { ttl: ttl as u64, slots: vec![RefSlot::default(); entries] };
            for (c, inp) in stream.iter().enumerate() {
                let c = c as u64;
                for (e, (x, s)) in t.slots().iter().zip(&r.slots).enumerate() {
                    let v = r.valid(s, c);
                    prop_assert_eq!(x.valid, v, "slot {} cycle {}", e, c);
                    if v {
                        prop_assert_eq!(x.ttl.value() as u64, r.ttl_left(s, c));
                        prop_assert_eq!(
                            (x.dest, x.port, x.vc, x.arn_id, x.root_info, x.consumed, x.alt_port),
                            (s.fields.dest, s.fields.port, s.fields.vc, s.fields.arn_id,
                             s.fields.root_info, s.fields.consumed, s.fields.alt_port)
                        );
                    }
                }
                let out = t.step(inp);
                let (hit, evict) = r.step(inp, c);
                prop_assert_eq!((out.pr_hit, out.pr_evict), (hit, evict), "cycle {}", c);
            }
        }
    }
}
