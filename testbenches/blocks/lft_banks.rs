//! Cross-check cases of the interleaved forwarding table.

use super::scaled;
use crate::harness::case::{Case, Expect};
use crate::harness::{HdlConfig, RtlAlteration};
use arnsim::blocks::Block;
use arnsim::blocks::lft_banks::{LftBanks, LftBanksIn, LftBanksOut, NO_ROUTE};
use arnsim::stimulus::Stimulus;
use arnsim::stimulus::lft_banks::RandomLft;
use arnsim::trace::Visit;

fn config(lmc: u32, rows: usize) -> HdlConfig {
    HdlConfig {
        block: "lft_banks",
        params: vec![("Lmc", lmc as u64), ("Rows", rows as u64)],
        alter: None,
    }
}

fn rd(dlid: u16) -> LftBanksIn {
    LftBanksIn {
        rd_en: true,
        rd_dlid: dlid,
        ..Default::default()
    }
}

fn wr(lid: u16, port: u8) -> LftBanksIn {
    LftBanksIn {
        wr_en: true,
        wr_lid: lid,
        wr_port: port,
        ..Default::default()
    }
}

fn rd_wr(dlid: u16, lid: u16, port: u8) -> LftBanksIn {
    LftBanksIn {
        rd_en: true,
        rd_dlid: dlid,
        wr_en: true,
        wr_lid: lid,
        wr_port: port,
    }
}

/// A port for LID `l` in the fill pattern: every fifth entry left without a route.
fn pattern(l: usize) -> u8 {
    if l % 5 == 4 {
        NO_ROUTE
    } else {
        ((l * 7 + 3) % 255) as u8
    }
}

/// The LIDs a directed sweep visits: the whole table when small, else its first and last 512.
fn sweep(entries: usize) -> Vec<u16> {
    if entries <= 1024 {
        (0..entries as u16).collect()
    } else {
        (0..512u16)
            .chain((entries - 512..entries).map(|l| l as u16))
            .collect()
    }
}

/// LIDs just beyond a table of `rows` rows of `banks` banks, at the top of the LID space, and
/// whose row truncated to the row index width would alias rows 0 and 1 (none when the table
/// covers every LID).
fn beyond(rows: usize, banks: usize) -> Vec<u16> {
    let entries = rows * banks;
    if entries > 0xffff {
        return Vec::new();
    }
    let mut v: Vec<u16> = (0..2 * banks)
        .map(|k| (entries + k).min(0xffff) as u16)
        .collect();
    v.extend([0xfffe, 0xffff]);
    let row_w = if rows > 1 {
        usize::BITS - (rows - 1).leading_zeros()
    } else {
        1
    };
    for alias_row in [0usize, 1] {
        let l = ((1usize << row_w) + alias_row) * banks;
        if (entries..=0xffff).contains(&l) {
            v.push(l as u16);
            v.push((l + banks - 1) as u16);
        }
    }
    v
}

/// Directed sequences for a table of `2^lmc` banks of `rows` rows.
fn directed(lmc: u32, rows: usize) -> Vec<(&'static str, Vec<LftBanksIn>)> {
    let banks = 1usize << lmc;
    let entries = rows << lmc;
    let lids = sweep(entries);
    let out = beyond(rows, banks);
    let mut v = Vec::new();

    // Every entry reads "no route" after reset, with both LSBs; beyond the table too.
    let mut s: Vec<LftBanksIn> = lids.iter().map(|&l| rd(l)).collect();
    s.extend(out.iter().map(|&l| rd(l)));
    s.push(LftBanksIn::default());
    v.push(("directed reset contents", s));

    // Fill the table linearly, then read every LID: each read shows its whole row.
    let mut s: Vec<LftBanksIn> = lids.iter().map(|&l| wr(l, pattern(l as usize))).collect();
    s.extend(lids.iter().map(|&l| rd(l)));
    s.extend(lids.iter().rev().map(|&l| rd(l)));
    s.push(LftBanksIn::default());
    v.push(("directed fill and read", s));

    // Read-during-write: same entry (old data), then visible a cycle later; row mates too.
    let mut s = Vec::new();
    let last = (entries - 1).min(0xffff) as u16;
    for &l in &[
        0u16,
        1,
        (banks as u16) | 1,
        last,
        last & !1,
        (entries / 2) as u16,
    ] {
        let mate = (l & !(banks as u16 - 1)) | (l.wrapping_add(1) & (banks as u16 - 1));
        s.push(wr(l, 0x11));
        s.push(rd_wr(l, l, 0x22));
        s.push(rd_wr(l, mate, 0x33));
        s.push(rd_wr(l | 1, l, NO_ROUTE));
        s.push(rd(l));
        s.push(rd(l | 1));
        s.push(rd_wr(mate, mate, 0x44));
        s.push(rd(mate));
    }
    // Back-to-back writes of the same entry while reading it every cycle.
    for p in [1u8, 2, 3, NO_ROUTE, 0, 5] {
        s.push(rd_wr(3.min(last), 3.min(last), p));
    }
    s.push(rd(3.min(last)));
    s.push(LftBanksIn::default());
    v.push(("directed read during write", s));

    // Writes beyond the table are ignored (no aliasing into low rows); reads beyond give nothing.
    let mut s = Vec::new();
    for &l in &out {
        s.push(wr(l, 0x5a));
    }
    for l in 0..(2 * banks).min(entries) as u16 {
        s.push(rd(l));
    }
    for &l in &out {
        s.push(rd(l));
        s.push(rd_wr(l, l, 0x66));
    }
    s.push(wr(0, 9));
    for &l in &out {
        s.push(rd(l));
    }
    s.push(rd(0));
    s.push(LftBanksIn::default());
    v.push(("directed out of range", s));

    // The output registers hold while the read port is idle, whatever the idle DLID.
    let mut s = vec![wr(2.min(last), 7), rd(2.min(last) | 1)];
    for k in 0..8u16 {
        s.push(LftBanksIn {
            rd_en: false,
            rd_dlid: 0x1234 ^ k.wrapping_mul(0x9e37),
            wr_en: k % 2 == 0,
            wr_lid: 2.min(last),
            wr_port: k as u8,
        });
    }
    s.push(rd(2.min(last)));
    s.push(LftBanksIn::default());
    s.push(LftBanksIn::default());
    v.push(("directed idle hold", s));

    // Deterministic and adaptive reads of a row with usable and unusable options.
    let mut s = Vec::new();
    for row in [0usize, rows - 1] {
        let base = row * banks;
        for b in 0..banks {
            let p = if b % 3 == 2 { NO_ROUTE } else { (10 + b) as u8 };
            s.push(wr((base + b) as u16, p));
        }
        for b in 0..banks {
            s.push(rd((base + b) as u16));
        }
        // Option 0 without a route: no option usable for a deterministic read.
        s.push(wr(base as u16, NO_ROUTE));
        s.push(rd(base as u16));
        s.push(rd((base | 1) as u16));
    }
    s.push(LftBanksIn::default());
    v.push(("directed deterministic adaptive", s));
    v
}

/// A table with a planted bug: from cycle `from` on, the write is forwarded to a read of the
/// same cycle (write-first instead of read-first).
#[derive(Clone)]
struct WriteFirst {
    inner: LftBanks,
    from: u64,
    cycle: u64,
}

impl WriteFirst {
    fn new(lmc: u32, rows: usize, from: u64) -> Self {
        WriteFirst {
            inner: LftBanks::new(lmc, rows),
            from,
            cycle: 0,
        }
    }

    /// The first cycle whose traced outputs or registers differ from the correct table's.
    fn first_effect(lmc: u32, rows: usize, mut stim: impl Stimulus<LftBanksIn>, from: u64) -> u64 {
        let mut good = LftBanks::new(lmc, rows);
        let mut bad = WriteFirst::new(lmc, rows, from);
        for c in 0.. {
            let i = stim.next(c);
            let a = good.evaluate(&i);
            let b = bad.evaluate(&i);
            if (a, good.regs()) != (b, bad.inner.regs()) {
                return c;
            }
            good.commit();
            bad.commit();
        }
        unreachable!()
    }
}

impl Block for WriteFirst {
    type In = LftBanksIn;
    type Out = LftBanksOut;
    const NAME: &'static str = LftBanks::NAME;

    fn reset(&mut self) {
        self.inner.reset();
        self.cycle = 0;
    }

    fn evaluate(&mut self, inp: &LftBanksIn) -> LftBanksOut {
        if self.cycle >= self.from && inp.wr_en {
            self.inner.program(inp.wr_lid, inp.wr_port);
        }
        self.cycle += 1;
        self.inner.evaluate(inp)
    }

    fn commit(&mut self) {
        self.inner.commit();
    }

    fn probe_inputs(&self, inp: &LftBanksIn, v: &mut dyn Visit) {
        self.inner.probe_inputs(inp, v);
    }

    fn probe_outputs(&self, out: &LftBanksOut, v: &mut dyn Visit) {
        self.inner.probe_outputs(out, v);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        self.inner.probe_regs(v);
    }
}

pub fn cases(scale: f64) -> Vec<Case> {
    let mut v = Vec::new();
    // (Lmc, Rows, random cycles per seed, seeds)
    for (lmc, rows, cycles, seeds) in [
        (0u32, 16usize, 130_000u64, 2u64),
        (1, 64, 130_000, 2),
        (2, 32, 130_000, 2),
        (4, 8, 130_000, 2),
        (3, 5, 100_000, 1),
        (4, 4096, 60_000, 1),
        // Every unicast LID (0 to 0xBFFF) at LMC 0: a 16-bit row index.
        (0, 49_152, 30_000, 1),
    ] {
        for (name, seq) in directed(lmc, rows) {
            let len = seq.len() as u64;
            v.push(Case::new(
                config(lmc, rows),
                name,
                false,
                len,
                move || LftBanks::new(lmc, rows),
                move || seq.clone().into_iter(),
            ));
        }
        for k in 0..seeds {
            let seed = 0x1F7B_0000 + ((lmc as u64) << 12) + rows as u64 + (k << 24);
            let n = scaled(cycles, scale);
            v.push(Case::new(
                config(lmc, rows),
                format!("random seed {seed:#x}"),
                true,
                n,
                move || LftBanks::new(lmc, rows),
                move || RandomLft::new(lmc, rows, n, seed),
            ));
        }
    }
    // The harness must catch a real difference: a read that sees the write of its own cycle.
    let (lmc, rows, seed, from, cycles) = (1u32, 64usize, 0xBAD, 3000u64, 10_000u64);
    let effect = WriteFirst::first_effect(lmc, rows, RandomLft::new(lmc, rows, cycles, seed), from);
    assert!(
        effect < cycles,
        "the planted bug has no effect in {cycles} cycles"
    );
    v.push(
        Case::new(
            config(lmc, rows),
            "altered: write-first read",
            false,
            cycles,
            move || WriteFirst::new(lmc, rows, from),
            move || RandomLft::new(lmc, rows, cycles, seed),
        )
        .expecting(Expect::Mismatch(Some(effect))),
    );
    // The RTL's assertions must catch a real bug in the RTL.
    let altered: [(RtlAlteration, &'static [&'static str]); 3] = [
        (
            RtlAlteration {
                name: "idle_clears_ports",
                find: "    if (rd_en_i) begin\n      rd_dlid_d  = rd_dlid_i;\n      rd_ports_d = '1;",
                replace: "    rd_ports_d = '1;\n    if (rd_en_i) begin\n      rd_dlid_d  = rd_dlid_i;",
            },
            &["a_idle_holds"],
        ),
        (
            RtlAlteration {
                name: "write_to_other_bank",
                find: "assign mem_bank  = bank_of(wr_lid_i);",
                replace: "assign mem_bank  = bank_of(wr_lid_i + 16'd1);",
            },
            &["a_write_lands"],
        ),
        (
            RtlAlteration {
                name: "write_first_read",
                find: "        rd_ports_d = mem_q[rd_row];\n",
                replace: "        rd_ports_d = mem_q[rd_row];\n        \
                          if (mem_we && mem_row == rd_row) rd_ports_d[8*mem_bank +: 8] = mem_wdata;\n",
            },
            &["a_read_first"],
        ),
    ];
    for (alter, names) in altered {
        v.push(Case::altered_rtl(
            config(lmc, rows),
            alter,
            names,
            cycles,
            move || LftBanks::new(lmc, rows),
            move || RandomLft::new(lmc, rows, cycles, seed),
        ));
    }
    v
}
