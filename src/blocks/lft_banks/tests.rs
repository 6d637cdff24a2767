//! Unit tests of `lft_banks`.

use super::*;
use proptest::prelude::*;

proptest! {
    /// The mask found for all options at once is the rule applied option by option.
    #[test]
    fn usable_mask_is_the_rule_option_by_option(
        bytes in proptest::array::uniform16(prop_oneof![Just(NO_ROUTE), any::<u8>()]),
        lmc in 0usize..=MAX_LMC as usize,
        dlid in any::<u16>(),
    ) {
        let banks = 1 << lmc;
        let ports = u128::from_le_bytes(bytes);
        let mut want = 0u16;
        for (b, &p) in bytes.iter().enumerate().take(banks) {
            let usable = p != NO_ROUTE && (b == 0 || dlid & 1 == 1);
            want |= (usable as u16) << b;
        }
        prop_assert_eq!(mask_of(banks, dlid, ports), want);
    }
}

fn read(dlid: u16) -> LftBanksIn {
    LftBanksIn {
        rd_en: true,
        rd_dlid: dlid,
        ..Default::default()
    }
}

fn write(lid: u16, port: u8) -> LftBanksIn {
    LftBanksIn {
        wr_en: true,
        wr_lid: lid,
        wr_port: port,
        ..Default::default()
    }
}

/// Reads `dlid` and returns what the read port shows one cycle later.
fn read_back(t: &mut LftBanks, dlid: u16) -> LftBanksOut {
    t.step(&read(dlid));
    t.step(&LftBanksIn::default())
}

#[test]
fn reset_state() {
    let mut t = LftBanks::new(2, 8);
    assert_eq!(t.entries(), 32);
    let o = t.step(&LftBanksIn::default());
    assert_eq!(
        o,
        LftBanksOut {
            rd_valid: false,
            rd_dlid: 0,
            rd_ports: 0xffff_ffff,
            rd_mask: 0
        }
    );
    assert!((0..32).all(|l| t.entry(l) == Some(NO_ROUTE)));
    assert_eq!(t.entry(32), None);
}

/// The timing diagram of docs/blocks/lft_banks.md, Lmc = 1, Rows = 4.
#[test]
fn doc_timing_diagram() {
    let mut t = LftBanks::new(1, 4);
    // (wr_en, wr_lid, wr_port, rd_en, rd_dlid)
    let stim: [(bool, u16, u8, bool, u16); 9] = [
        (true, 4, 0x03, true, 5),
        (true, 5, 0x07, true, 5),
        (false, 0, 0, true, 4),
        (false, 0, 0, false, 6),
        (true, 8, 0x01, true, 5),
        (true, 5, 0xff, true, 9),
        (false, 0, 0, true, 5),
        (false, 0, 0, true, 1),
        (false, 0, 0, false, 0),
    ];
    // (rd_valid_o, rd_dlid_o, rd_ports_o, rd_mask_o)
    let expect: [(bool, u16, u128, u16); 9] = [
        (false, 0, 0xffff, 0),
        (true, 5, 0xffff, 0),
        (true, 5, 0xff03, 1),
        (true, 4, 0x0703, 1),
        (false, 4, 0x0703, 1),
        (true, 5, 0x0703, 3),
        (true, 9, 0xffff, 0),
        (true, 5, 0xff03, 1),
        (true, 1, 0xffff, 0),
    ];
    for (c, (&(we, wl, wp, re, rd), &(v, d, p, m))) in stim.iter().zip(&expect).enumerate() {
        let o = t.step(&LftBanksIn {
            rd_en: re,
            rd_dlid: rd,
            wr_en: we,
            wr_lid: wl,
            wr_port: wp,
        });
        assert_eq!(
            o,
            LftBanksOut {
                rd_valid: v,
                rd_dlid: d,
                rd_ports: p,
                rd_mask: m
            },
            "cycle {c}"
        );
    }
}

#[test]
fn read_during_write_returns_old_data() {
    let mut t = LftBanks::new(2, 4);
    t.step(&write(6, 9));
    let mut both = write(6, 4);
    both.rd_en = true;
    both.rd_dlid = 7;
    t.step(&both);
    let o = t.step(&read(7));
    assert_eq!(o.rd_ports, 0xff09_ffff);
    assert_eq!(o.rd_ports >> 16 & 0xff, 9);
    let o = t.step(&LftBanksIn::default());
    assert_eq!(o.rd_ports >> 16 & 0xff, 4);
}

#[test]
fn out_of_range_writes_are_ignored() {
    let mut t = LftBanks::new(0, 5);
    t.step(&write(5, 1));
    t.step(&write(0xffff, 1));
    t.step(&write(4, 2));
    assert!((0..4).all(|l| t.entry(l) == Some(NO_ROUTE)));
    assert_eq!(t.entry(4), Some(2));
    let o = read_back(&mut t, 5);
    assert_eq!((o.rd_ports, o.rd_mask), (0xff, 0));
}

#[test]
fn full_lid_space_has_no_out_of_range() {
    let mut t = LftBanks::new(4, 4096);
    assert_eq!(t.entries(), 65536);
    t.program(0xffff, 12);
    let o = read_back(&mut t, 0xffff);
    assert_eq!(o.rd_ports >> 120, 12);
    assert_eq!(o.rd_mask, 1 << 15);
    let o = read_back(&mut t, 0xfff0);
    assert_eq!(o.rd_mask, 0);
}

#[test]
fn options_view_and_helpers() {
    let mut t = LftBanks::new(2, 2);
    for (l, p) in [(4u16, 10u8), (5, NO_ROUTE), (6, 12), (7, 13)] {
        t.program(l, p);
    }
    let adaptive = t.options(5);
    assert_eq!(adaptive.count, 4);
    assert_eq!(adaptive.mask, 0b1101);
    assert_eq!(adaptive.packed(), 0x0d0c_ff0a);
    assert_eq!(
        adaptive.usable_ports().collect::<Vec<_>>(),
        vec![10, 12, 13]
    );
    assert_eq!(adaptive.deterministic(), Some(10));
    let det = t.options(6);
    assert_eq!(det.mask, 0b0001);
    assert_eq!(det.usable_ports().collect::<Vec<_>>(), vec![10]);
    let none = t.options(8);
    assert_eq!((none.mask, none.packed()), (0, 0xffff_ffff));
    assert_eq!(none.deterministic(), None);
}

/// A reference: the table as a plain linear array, the read pipeline as a value.
struct Reference {
    lmc: u32,
    rows: usize,
    table: Vec<u8>,
    out: LftBanksOut,
}

impl Reference {
    fn new(lmc: u32, rows: usize) -> Self {
        let w = 8 << lmc;
        Reference {
            lmc,
            rows,
            table: vec![0xff; rows << lmc],
            out: LftBanksOut {
                rd_ports: u128::MAX >> (128 - w),
                ..Default::default()
            },
        }
    }

    fn step(&mut self, i: &LftBanksIn) -> LftBanksOut {
        let out = self.out;
        let banks = 1usize << self.lmc;
        self.out.rd_valid = i.rd_en;
        if i.rd_en {
            let row = (i.rd_dlid as usize) >> self.lmc;
            let mut ports = 0u128;
            let mut mask = 0u16;
            for b in 0..banks {
                let p = if row < self.rows {
                    self.table[row * banks + b]
                } else {
                    0xff
                };
                ports |= (p as u128) << (8 * b);
                let adaptive = self.lmc > 0 && i.rd_dlid & 1 == 1;
                if row < self.rows && p != 0xff && (b == 0 || adaptive) {
                    mask |= 1 << b;
                }
            }
            self.out.rd_dlid = i.rd_dlid;
            self.out.rd_ports = ports;
            self.out.rd_mask = mask;
        }
        let wrow = (i.wr_lid as usize) >> self.lmc;
        if i.wr_en && wrow < self.rows {
            self.table[wrow * banks + (i.wr_lid as usize & (banks - 1))] = i.wr_port;
        }
        out
    }
}

fn params() -> impl Strategy<Value = (u32, usize)> {
    (0u32..=4, prop_oneof![1usize..=8, 9usize..=64, Just(4096)])
}

/// A LID mostly inside the table, sometimes beyond it.
fn lid(entries: usize) -> impl Strategy<Value = u16> {
    let top = (entries - 1).min(0xffff) as u16;
    prop_oneof![
        6 => 0..=top,
        1 => any::<u16>(),
    ]
}

fn port() -> impl Strategy<Value = u8> {
    prop_oneof![Just(NO_ROUTE), 0u8..40, any::<u8>()]
}

fn stream(entries: usize) -> impl Strategy<Value = Vec<LftBanksIn>> {
    proptest::collection::vec(
        (
            any::<bool>(),
            lid(entries),
            any::<bool>(),
            lid(entries),
            port(),
        )
            .prop_map(|(rd_en, rd_dlid, wr_en, wr_lid, wr_port)| LftBanksIn {
                rd_en,
                rd_dlid,
                wr_en,
                wr_lid,
                wr_port,
            }),
        1..300,
    )
}

fn table_and_stream() -> impl Strategy<Value = (u32, usize, Vec<LftBanksIn>)> {
    params().prop_flat_map(|(lmc, rows)| (Just(lmc), Just(rows), stream(rows << lmc)))
}

fn table_and_writes() -> impl Strategy<Value = (u32, usize, Vec<(u16, u8)>)> {
    params().prop_flat_map(|(lmc, rows)| {
        let entries = rows << lmc;
        (
            Just(lmc),
            Just(rows),
            proptest::collection::vec((lid(entries), port()), 0..200),
        )
    })
}

proptest! {
    /// After writes through the write port, a read of any LID of a row returns, one cycle
    /// later, exactly the value last written at each of the 2^Lmc LIDs of that row.
    #[test]
    fn read_returns_last_written_row((lmc, rows, writes) in table_and_writes(), probe in any::<u16>()) {
        let mut t = LftBanks::new(lmc, rows);
        let banks = 1usize << lmc;
        let mut last = vec![NO_ROUTE; rows << lmc];
        for &(l, p) in &writes {
            t.step(&write(l, p));
            if (l as usize) < last.len() {
                last[l as usize] = p;
            }
        }
        let mut targets: Vec<u16> = writes.iter().map(|&(l, _)| l).collect();
        targets.push(probe);
        for l in targets {
            let o = read_back(&mut t, l);
            prop_assert!(o.rd_valid);
            prop_assert_eq!(o.rd_dlid, l);
            let base = (l as usize) & !(banks - 1);
            for b in 0..banks {
                let want = last.get(base + b).copied().unwrap_or(NO_ROUTE);
                prop_assert_eq!((o.rd_ports >> (8 * b)) as u8, want, "lid {} option {}", l, b);
            }
        }
    }

    /// A deterministic read (LSB 0) never exposes more than option 0; a read out of range
    /// returns mask 0 and no route on every option.
    #[test]
    fn deterministic_and_out_of_range_reads((lmc, rows, s) in table_and_stream()) {
        let mut t = LftBanks::new(lmc, rows);
        let mut prev: Option<u16> = None;
        for i in &s {
            let o = t.step(i);
            if let Some(dlid) = prev {
                prop_assert!(o.rd_valid);
                if dlid & 1 == 0 {
                    prop_assert_eq!(o.rd_mask & !1, 0);
                }
                if (dlid as usize) >> lmc >= rows {
                    prop_assert_eq!(o.rd_mask, 0);
                    prop_assert_eq!(o.rd_ports, u128::MAX >> (128 - (8 << lmc)));
                }
            }
            prev = i.rd_en.then_some(i.rd_dlid);
        }
    }

    /// The linear view: reading LID l with the LSB set returns the value written at l as
    /// option l & (2^Lmc - 1).
    #[test]
    fn linear_view((lmc, rows, writes) in table_and_writes()) {
        let mut t = LftBanks::new(lmc, rows);
        let banks = 1u16 << lmc;
        for &(l, p) in &writes {
            t.step(&write(l, p));
        }
        for &(l, _) in &writes {
            if (l as usize) >= t.entries() {
                continue;
            }
            let want = t.entry(l).unwrap();
            let dlid = if lmc > 0 { l | 1 } else { l };
            let o = read_back(&mut t, dlid);
            let b = (l & (banks - 1)) as usize;
            prop_assert_eq!((o.rd_ports >> (8 * b)) as u8, want);
            prop_assert_eq!(o.rd_mask >> b & 1 == 1, want != NO_ROUTE);
        }
    }

    /// Cycle for cycle equal to a plain reference model (read-first, holds, ignored writes).
    #[test]
    fn matches_reference((lmc, rows, s) in table_and_stream()) {
        let mut t = LftBanks::new(lmc, rows);
        let mut r = Reference::new(lmc, rows);
        for (c, i) in s.iter().enumerate() {
            prop_assert_eq!(t.step(i), r.step(i), "cycle {}", c);
        }
    }

    /// `options` shows what a read issued now returns one cycle later, and `program` is the
    /// write port without the clock.
    #[test]
    fn options_and_program_match_the_ports((lmc, rows, writes) in table_and_writes(), dlid in any::<u16>()) {
        let mut clocked = LftBanks::new(lmc, rows);
        let mut direct = LftBanks::new(lmc, rows);
        for &(l, p) in &writes {
            clocked.step(&write(l, p));
            direct.program(l, p);
        }
        let view = direct.options(dlid);
        let o = read_back(&mut clocked, dlid);
        prop_assert_eq!(o.rd_ports, view.packed());
        prop_assert_eq!(o.rd_mask, view.mask);
    }
}
