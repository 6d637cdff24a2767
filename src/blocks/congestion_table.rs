//! Congestion table (`congestion_table.sv`): the CAM of adaptive routing on snooped congestion
//! notifications (Gusat, Minkenberg and Rodríguez's charts, "Adaptive routing based on 802.1Qau
//! CM").
//!
//! An entry is keyed by (destination, port) and holds the charts' fields: `fbCount` (the
//! notifications received for the key since the entry was made), `feedback` (the last one's
//! |Fb|), `local` (the last one came from this switch's own congestion point rather than from
//! downstream) and `congested`, which is the entry's valid bit: a (destination, port) has an
//! entry only while it is congested, for `Ttl` cycles after its last notification.
//!
//! Every routing stage searches the table each cycle with its head's destination
//! (`lk_dest_i`): the result is the mask of the ports congested for it (`lk_mask_o`, bit p for
//! port p), combinational from the current registers. At most one snooped notification a cycle
//! (`sn_*_i`) is written.
//!
//! Next state, in this order (identical in the HDL):
//! 1. an entry congested at the start of the cycle on the snoop's (dest, port) is hit: it is
//!    rewritten (`fb_count` + 1, saturating at 255; `feedback`, `local` from the snoop;
//!    `ttl = Ttl`);
//! 2. every other congested entry counts its `ttl` down; one at 1 is no longer congested;
//! 3. without a hit, the snoop takes the lowest-index entry not congested after step 2
//!    (`fb_count = 1`); with none, it is lost (`sn_full_o`).
//!
//! An entry written at the edge closing cycle t is seen in cycles t+1 ..= t+Ttl. An entry no
//! longer congested keeps its fields until written.
//!
//! Widths: dest 16, port 8, fb_count 8, feedback 6, local 1, congested 1, ttl 24 bits;
//! `lk_mask_o` is `Ports` bits, `count_o` `clog2(Entries + 1)` bits.

use super::Block;
use super::probe::{Visit, index_width};

/// Largest CAM depth `Entries`.
pub const MAX_ENTRIES: usize = 32;
/// Largest number of lookup ports of the block on its own (`Lk`; in a switch, one per input).
pub const MAX_LOOKUPS: usize = 4;
/// Largest number of switch ports the mask covers (`Ports`).
pub const MAX_PORTS: usize = 64;
/// Largest time-to-live `Ttl` (the timer is 24 bits).
pub const MAX_TTL: u32 = (1 << 24) - 1;

/// One snooped congestion notification: its destination (base LID), the port it names (the
/// output it arrived on from downstream, or the output whose congestion point made it), its
/// |Fb| and whether it was made here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Snoop {
    /// `sn_dest_i`.
    pub dest: u16,
    /// `sn_port_i`.
    pub port: u8,
    /// `sn_fb_i` (6 bits).
    pub fb: u8,
    /// `sn_local_i`.
    pub local: bool,
}

/// One entry of the table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CongestionEntry {
    /// `congested_q[e]`: the entry is live (its port is congested for its destination).
    pub congested: bool,
    /// `dest_q[e]`.
    pub dest: u16,
    /// `port_q[e]`.
    pub port: u8,
    /// `fb_count_q[e]`: notifications since the entry was made (saturating).
    pub fb_count: u8,
    /// `feedback_q[e]`: the last notification's |Fb|.
    pub feedback: u8,
    /// `local_q[e]`: the last notification came from this switch's own congestion point.
    pub local: bool,
    /// `ttl_q[e]`: cycles the entry stays congested (0 only when not congested).
    pub ttl: u32,
}

/// Registers: the entries (only the first `Entries` are used). Reset: all 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CongestionTableRegs {
    /// Slot `e` of the CAM.
    pub entries: [CongestionEntry; MAX_ENTRIES],
}

/// This cycle's inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CongestionTableIn {
    /// `lk_dest_i`: each lookup port's destination.
    pub lk_dest: [u16; MAX_LOOKUPS],
    /// `sn_en_i` and the snoop.
    pub snoop: Option<Snoop>,
}

/// This cycle's outputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CongestionTableOut {
    /// `lk_mask_o`: per lookup port, the ports congested for its destination.
    pub lk_mask: [u64; MAX_LOOKUPS],
    /// `sn_hit_o`: the snoop rewrites a congested entry.
    pub hit: bool,
    /// `sn_full_o`: the snoop found no entry and is lost.
    pub full: bool,
    /// `count_o`: congested entries.
    pub count: u8,
}

/// The congestion table.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CongestionTable {
    entries: u8,
    lookups: u8,
    ports: u8,
    ttl: u32,
    q: CongestionTableRegs,
    d: CongestionTableRegs,
}

impl CongestionTable {
    /// A table of `entries` slots (1 to 32) for a switch of `ports` ports (1 to 64), searched
    /// by `lookups` ports (1 to 4; the engines search it directly), whose entries stay congested
    /// `ttl` cycles (1 to 2^24 - 1) after their last notification; in its reset state.
    pub fn new(entries: usize, lookups: usize, ports: usize, ttl: u32) -> Self {
        assert!((1..=MAX_ENTRIES).contains(&entries), "a_param_entries");
        assert!((1..=MAX_LOOKUPS).contains(&lookups), "a_param_lookups");
        assert!((1..=MAX_PORTS).contains(&ports), "a_param_ports");
        assert!((1..=MAX_TTL).contains(&ttl), "a_param_ttl");
        CongestionTable {
            entries: entries as u8,
            lookups: lookups as u8,
            ports: ports as u8,
            ttl,
            q: CongestionTableRegs::default(),
            d: CongestionTableRegs::default(),
        }
    }

    /// The slots in use.
    pub fn slots(&self) -> &[CongestionEntry] {
        &self.q.entries[..self.entries as usize]
    }

    /// The ports congested for destination `dest` (bit p for port p): a lookup.
    #[inline]
    pub fn mask(&self, dest: u16) -> u64 {
        let mut m = 0;
        for e in self.slots() {
            if e.congested && e.dest == dest && (e.port as usize) < self.ports as usize {
                m |= 1 << e.port;
            }
        }
        m
    }

    /// Clears the entry congested on (dest, port), if any (a test's planted bug starts here).
    pub fn forget(&mut self, dest: u16, port: u8) {
        let n = self.entries as usize;
        for e in self.q.entries[..n].iter_mut() {
            if e.congested && e.dest == dest && e.port == port {
                *e = CongestionEntry::default();
            }
        }
    }

    /// Congested entries.
    pub fn count(&self) -> usize {
        self.slots().iter().filter(|e| e.congested).count()
    }

    /// `cycles` clock edges without a snoop, in place (the event engine's idle cycles).
    pub fn age(&mut self, cycles: u64) {
        let n = self.entries as usize;
        for e in self.q.entries[..n].iter_mut().filter(|e| e.congested) {
            if e.ttl as u64 <= cycles {
                e.congested = false;
                e.ttl = 0;
            } else {
                e.ttl -= cycles as u32;
            }
        }
    }

    /// One clock edge with the snoop `sn`, in place: whether it hit, whether it was lost.
    pub fn edge(&mut self, sn: Option<Snoop>) -> (bool, bool) {
        let n = self.entries as usize;
        let mut regs = self.q;
        let r = next_state(&mut regs.entries[..n], sn, self.ttl);
        self.q = regs;
        r
    }
}

/// The next state of `slots` for the snoop `sn` (steps 1 to 3): (hit, lost).
fn next_state(slots: &mut [CongestionEntry], sn: Option<Snoop>, ttl: u32) -> (bool, bool) {
    let hit = sn.and_then(|s| {
        slots
            .iter()
            .position(|e| e.congested && e.dest == s.dest && e.port == s.port)
    });
    for (k, e) in slots.iter_mut().enumerate() {
        if e.congested && Some(k) != hit {
            e.ttl -= 1;
            e.congested = e.ttl != 0;
        }
    }
    let Some(s) = sn else {
        return (false, false);
    };
    let (slot, count) = match hit {
        Some(k) => (k, slots[k].fb_count.saturating_add(1)),
        None => match slots.iter().position(|e| !e.congested) {
            Some(k) => (k, 1),
            None => return (false, true),
        },
    };
    slots[slot] = CongestionEntry {
        congested: true,
        dest: s.dest,
        port: s.port,
        fb_count: count,
        feedback: s.fb & 0x3F,
        local: s.local,
        ttl,
    };
    (hit.is_some(), false)
}

impl Block for CongestionTable {
    type In = CongestionTableIn;
    type Out = CongestionTableOut;
    const NAME: &'static str = "congestion_table";

    fn reset(&mut self) {
        self.q = CongestionTableRegs::default();
        self.d = self.q;
    }

    fn evaluate(&mut self, inp: &CongestionTableIn) -> CongestionTableOut {
        let mut out = CongestionTableOut {
            count: self.count() as u8,
            ..Default::default()
        };
        for k in 0..self.lookups as usize {
            out.lk_mask[k] = self.mask(inp.lk_dest[k]);
        }
        self.d = self.q;
        let n = self.entries as usize;
        (out.hit, out.full) = next_state(&mut self.d.entries[..n], inp.snoop, self.ttl);
        debug_assert!(!(out.hit && out.full), "a_hit_or_full");
        out
    }

    fn commit(&mut self) {
        self.q = self.d;
        debug_assert!(
            self.slots().iter().all(|e| e.congested == (e.ttl != 0)),
            "a_congested_iff_ttl"
        );
    }

    fn probe_inputs(&self, inp: &CongestionTableIn, v: &mut dyn Visit) {
        for k in 0..self.lookups as usize {
            v.elem("lk_dest_i", k, 16, inp.lk_dest[k] as u128);
        }
        let s = inp.snoop.unwrap_or_default();
        v.bit("sn_en_i", inp.snoop.is_some());
        v.bits("sn_dest_i", 16, s.dest as u128);
        v.bits("sn_port_i", 8, s.port as u128);
        v.bits("sn_fb_i", 6, s.fb as u128);
        v.bit("sn_local_i", s.local);
    }

    fn probe_outputs(&self, out: &CongestionTableOut, v: &mut dyn Visit) {
        for k in 0..self.lookups as usize {
            v.elem("lk_mask_o", k, self.ports as u32, out.lk_mask[k] as u128);
        }
        v.bit("sn_hit_o", out.hit);
        v.bit("sn_full_o", out.full);
        v.bits(
            "count_o",
            index_width(self.entries as usize + 1),
            out.count as u128,
        );
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        type Field = (&'static str, u32, fn(&CongestionEntry) -> u128);
        let fields: [Field; 7] = [
            ("congested_q", 1, |e| e.congested as u128),
            ("dest_q", 16, |e| e.dest as u128),
            ("port_q", 8, |e| e.port as u128),
            ("fb_count_q", 8, |e| e.fb_count as u128),
            ("feedback_q", 6, |e| e.feedback as u128),
            ("local_q", 1, |e| e.local as u128),
            ("ttl_q", 24, |e| e.ttl as u128),
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

    fn sn(dest: u16, port: u8, fb: u8) -> Option<Snoop> {
        Some(Snoop {
            dest,
            port,
            fb,
            local: false,
        })
    }

    #[test]
    fn an_entry_is_seen_for_ttl_cycles_after_its_last_notification() {
        let mut t = CongestionTable::new(4, 1, 8, 3);
        t.step(&CongestionTableIn {
            snoop: sn(10, 2, 5),
            ..Default::default()
        });
        // Seen in the 3 cycles after the edge that wrote it.
        for _ in 0..3 {
            assert_eq!(t.mask(10), 1 << 2);
            t.step(&CongestionTableIn::default());
        }
        assert_eq!(t.mask(10), 0);
        assert_eq!(t.count(), 0);
    }

    #[test]
    fn a_hit_counts_and_refreshes_and_a_full_table_loses_the_snoop() {
        let mut t = CongestionTable::new(2, 1, 8, 100);
        let out = t.step(&CongestionTableIn {
            snoop: sn(7, 1, 9),
            ..Default::default()
        });
        assert!(!out.hit && !out.full);
        let out = t.step(&CongestionTableIn {
            snoop: sn(7, 1, 12),
            ..Default::default()
        });
        assert!(out.hit);
        assert_eq!((t.slots()[0].fb_count, t.slots()[0].feedback), (2, 12));
        assert_eq!(t.slots()[0].ttl, 100);
        t.step(&CongestionTableIn {
            snoop: sn(7, 3, 1),
            ..Default::default()
        });
        assert_eq!(t.mask(7), 0b1010);
        let out = t.step(&CongestionTableIn {
            snoop: sn(8, 0, 1),
            ..Default::default()
        });
        assert!(out.full && !out.hit);
        assert_eq!(t.mask(8), 0);
    }

    #[test]
    fn ageing_in_place_equals_idle_edges() {
        let mut a = CongestionTable::new(8, 1, 16, 50);
        for k in 0..6u16 {
            a.edge(sn(k, (k * 3) as u8 % 16, k as u8));
            a.age(k as u64 * 7);
        }
        let mut b = a.clone();
        a.age(23);
        for _ in 0..23 {
            b.edge(None);
        }
        assert_eq!(a.slots(), b.slots());
    }
}
