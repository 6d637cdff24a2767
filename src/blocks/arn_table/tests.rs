//! Unit tests of `arn_table`.

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

/// The closed form of the count after idle cycles is the count of the table stepped through
/// them, entry by entry as their TTLs run out, with ageing owed or not.
#[test]
fn the_count_after_idle_cycles_is_the_stepped_tables() {
    let mut t = ArnTable::new(4, 1, 20);
    t.step(&just(pr(5, 1, 0, 7, false, 0)));
    for _ in 0..6 {
        t.step(&idle());
    }
    t.step(&just(pr(6, 1, 0, 8, false, 0)));
    t.step(&idle());
    t.step(&just(pr(7, 2, 0, 9, true, 3)));
    for owed in [0u32, 3] {
        let mut lazy = t.clone();
        for _ in 0..owed {
            assert!(lazy.age_idle_cycle());
        }
        let mut stepped = t.clone();
        for _ in 0..owed {
            stepped.step(&idle());
        }
        for k in 0..25u64 {
            assert_eq!(
                lazy.live_after(k),
                stepped.count(),
                "owed {owed}, after {k}"
            );
            stepped.step(&idle());
        }
        assert_eq!(lazy.live_after(30), 0);
    }
}
