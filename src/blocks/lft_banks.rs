//! Interleaved linear forwarding table (`lft_banks.sv`): one access returns every routing option
//! of a destination.
//!
//! Models the switch's linear forwarding table (LFT) split into `2^Lmc` interleaved banks of
//! `Rows` rows (Martínez et al., sections 4.1 and 4.2, figure 1). With LID Mask Control, an end node owns
//! the `2^Lmc` consecutive LIDs `d .. d + 2^Lmc - 1` (`d` with the low `Lmc` bits clear); LID `l`
//! lives in bank `l & (2^Lmc - 1)`, row `l >> Lmc`, so the entries of all the LIDs of one node sit
//! at the same row of different banks and are read in one cycle. Option 0 (bank 0) is the
//! deterministic route; the others are the alternatives. The DLID's least significant bit asks
//! for deterministic routing (0: only option 0 is usable) or adaptive routing (1: every option).
//!
//! - Read port: `rd_en_i`, `rd_dlid_i`; the result is registered and appears one cycle later on
//!   `rd_valid_o`, `rd_dlid_o` (the DLID as a pipeline tag), `rd_ports_o` (option b in bits
//!   `[8b+7:8b]`) and `rd_mask_o` (usable options). When `rd_en_i` is low, `rd_valid` clears and
//!   the other output registers hold.
//! - Write port (subnet manager, linear view): `wr_en_i`, `wr_lid_i`, `wr_port_i` write one
//!   entry; writes to a row `>= Rows` are ignored. A read of the entry written in the same cycle
//!   returns the old value (read-first); the write is visible to the next cycle's read.
//! - Port 255 (0xFF) means "no route", the value of every entry after reset.
//!
//! Widths: DLID and LID 16 bits, ports 8 bits, `rd_ports_o` `8 * 2^Lmc` bits (at most 128),
//! `rd_mask_o` `2^Lmc` bits, for `Lmc` in 0..=4 and `Rows` in 1..=4096.

use super::Block;
use crate::trace::Visit;

/// Largest LID Mask Control value: 16 banks, 16 options, a 128-bit `rd_ports_o`.
pub const MAX_LMC: u32 = 4;
/// Largest number of routing options (banks), `2^MAX_LMC`.
pub const MAX_OPTIONS: usize = 1 << MAX_LMC;
/// Largest number of rows per bank.
pub const MAX_ROWS: usize = 4096;
/// The port number meaning "no route" (an unprogrammed entry), as in IBA.
pub const NO_ROUTE: u8 = 0xFF;

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LftBanksIn {
    /// `rd_en_i`: read request this cycle.
    pub rd_en: bool,
    /// `rd_dlid_i`: DLID of the read request (a packet header's destination).
    pub rd_dlid: u16,
    /// `wr_en_i`: subnet-manager write this cycle.
    pub wr_en: bool,
    /// `wr_lid_i`: LID of the written linear entry.
    pub wr_lid: u16,
    /// `wr_port_i`: output port written at `wr_lid` (0xFF: no route).
    pub wr_port: u8,
}

/// Outputs of one cycle (all registered: the read issued in the previous cycle).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LftBanksOut {
    /// `rd_valid_o`: a read was issued in the previous cycle.
    pub rd_valid: bool,
    /// `rd_dlid_o`: DLID of the last read (pipeline tag).
    pub rd_dlid: u16,
    /// `rd_ports_o[8*2^Lmc-1:0]`: option b in bits `[8b+7:8b]`.
    pub rd_ports: u128,
    /// `rd_mask_o[2^Lmc-1:0]`: bit b set when option b is usable.
    pub rd_mask: u16,
}

/// Registers (the memory array aside).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LftBanksRegs {
    /// `rd_valid_q`: reset 0.
    pub rd_valid: bool,
    /// `rd_dlid_q`: reset 0.
    pub rd_dlid: u16,
    /// `rd_ports_q`: reset all ones (every option 0xFF).
    pub rd_ports: u128,
    /// `rd_mask_q`: reset 0.
    pub rd_mask: u16,
}

/// What one access of the table returns for a DLID: every option of its row and which are usable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LftOptions {
    /// Port of option b (bank b); `NO_ROUTE` beyond `count` and for rows out of range.
    pub ports: [u8; MAX_OPTIONS],
    /// Bit b set when option b is usable.
    pub mask: u16,
    /// Number of options (banks), `2^Lmc`.
    pub count: u8,
}

impl LftOptions {
    /// The ports packed as on `rd_ports_o`: option b in bits `[8b+7:8b]`.
    pub fn packed(&self) -> u128 {
        self.ports[..self.count as usize]
            .iter()
            .rev()
            .fold(0u128, |acc, &p| (acc << 8) | p as u128)
    }

    /// Whether option `b` is usable.
    pub fn usable(&self, b: usize) -> bool {
        b < MAX_OPTIONS && self.mask >> b & 1 == 1
    }

    /// The ports of the usable options, option 0 first.
    pub fn usable_ports(&self) -> impl Iterator<Item = u8> + '_ {
        (0..self.count as usize)
            .filter(|&b| self.usable(b))
            .map(|b| self.ports[b])
    }

    /// The deterministic route (option 0), when it is usable.
    pub fn deterministic(&self) -> Option<u8> {
        self.usable(0).then_some(self.ports[0])
    }
}

/// The usable-option mask of a read of `dlid` that returned `ports` (option b in bits
/// `[8b+7:8b]`), for `banks` banks: option b is usable when its port is not `NO_ROUTE` and, for
/// b > 0, the DLID asks for adaptive routing (LSB set). A row out of range returns only
/// `NO_ROUTE`, so its mask is 0 by the same rule.
#[inline]
pub fn mask_of(banks: usize, dlid: u16, ports: u128) -> u16 {
    debug_assert!((1..=MAX_OPTIONS).contains(&banks));
    // Bit b: byte b is not `NO_ROUTE` (all ones), found for all 16 bytes at once: a byte of
    // `!ports` is zero exactly when its top bit stays clear in `(low seven bits + 0x7F) | byte`.
    const LOW7: u128 = u128::from_le_bytes([0x7F; 16]);
    let inv = !ports;
    let nonzero = (((inv & LOW7) + LOW7) | inv) & !LOW7;
    // Gather the top bit of each byte of a 64-bit half into one byte (byte i to bit i).
    let gather = |h: u64| ((h >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u16;
    let routed = gather(nonzero as u64) | gather((nonzero >> 64) as u64) << 8;
    let banks_mask = ((1u32 << banks) - 1) as u16;
    let adaptive = if dlid & 1 == 1 { u16::MAX } else { 1 };
    routed & banks_mask & adaptive
}

/// The pending write of the memory's write port (the next value of one entry).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MemWrite {
    en: bool,
    lid: u16,
    port: u8,
}

/// The interleaved forwarding table.
#[derive(Clone, Debug)]
pub struct LftBanks {
    lmc: u8,
    rows: u16,
    /// Entry of LID `l` at index `l` (= row * 2^Lmc + bank): the banks interleaved, a row contiguous.
    /// Followed by `MAX_OPTIONS` entries of `NO_ROUTE`, so that a row can be read as one word.
    mem: Vec<u8>,
    wr: MemWrite,
    q: LftBanksRegs,
    d: LftBanksRegs,
}

impl LftBanks {
    /// A table of `2^lmc` banks (`lmc` 0..=4) of `rows` rows (1..=4096), in its reset state.
    pub fn new(lmc: u32, rows: usize) -> Self {
        assert!(lmc <= MAX_LMC, "lft_banks: Lmc = {lmc} is outside 0..=4");
        assert!(
            (1..=MAX_ROWS).contains(&rows),
            "lft_banks: Rows = {rows} is outside 1..=4096"
        );
        let mut t = LftBanks {
            lmc: lmc as u8,
            rows: rows as u16,
            mem: vec![NO_ROUTE; (rows << lmc) + MAX_OPTIONS],
            wr: MemWrite::default(),
            q: LftBanksRegs::default(),
            d: LftBanksRegs::default(),
        };
        t.reset();
        t
    }

    /// LID Mask Control: log2 of the number of banks.
    pub fn lmc(&self) -> u32 {
        self.lmc as u32
    }

    /// Rows per bank.
    pub fn rows(&self) -> usize {
        self.rows as usize
    }

    /// Number of banks, i.e. routing options per access: `2^Lmc`.
    pub fn banks(&self) -> usize {
        1 << self.lmc
    }

    /// Number of LIDs the table covers: `Rows * 2^Lmc` (LIDs `0 .. entries()`).
    pub fn entries(&self) -> usize {
        (self.rows as usize) << self.lmc
    }

    /// Current registers.
    pub fn regs(&self) -> LftBanksRegs {
        self.q
    }

    /// Width of `rd_ports_o` in bits.
    fn ports_width(&self) -> u32 {
        8 << self.lmc
    }

    /// `rd_ports_o` with every option `NO_ROUTE`.
    fn no_routes(&self) -> u128 {
        u128::MAX >> (128 - self.ports_width())
    }

    /// Whether LID `lid` lies in the table (its row is below `Rows`).
    #[inline]
    pub fn in_range(&self, lid: u16) -> bool {
        (lid as usize) < self.entries()
    }

    /// The entry of `lid` (the linear view), `None` when its row is out of range.
    pub fn entry(&self, lid: u16) -> Option<u8> {
        self.in_range(lid).then(|| self.mem[lid as usize])
    }

    /// Writes `port` at `lid` at once, outside the clocked write port (to build tables before
    /// simulation). Out-of-range LIDs are ignored, as on the write port.
    pub fn program(&mut self, lid: u16, port: u8) {
        if self.in_range(lid) {
            self.mem[lid as usize] = port;
        }
    }

    /// What a read of `dlid` issued now would return (combinational view of the memory).
    #[inline]
    pub fn options(&self, dlid: u16) -> LftOptions {
        let banks = self.banks();
        let mut o = LftOptions {
            ports: [NO_ROUTE; MAX_OPTIONS],
            mask: 0,
            count: banks as u8,
        };
        if self.in_range(dlid) {
            let base = (dlid as usize) & !(banks - 1);
            // The row as one word (a copy of run-time length would be a library call, and
            // this runs for every packet routed); the options past `banks` read as `NO_ROUTE`.
            let word = u128::from_le_bytes(
                self.mem[base..base + MAX_OPTIONS]
                    .try_into()
                    .unwrap_or([NO_ROUTE; MAX_OPTIONS]),
            );
            let keep = u128::MAX >> (128 - 8 * banks);
            o.ports = (word | !keep).to_le_bytes();
            // Only the first `banks` options count, as in `packed`.
            o.mask = mask_of(banks, dlid, word);
        }
        o
    }
}

impl Block for LftBanks {
    type In = LftBanksIn;
    type Out = LftBanksOut;
    const NAME: &'static str = "lft_banks";

    fn reset(&mut self) {
        self.q = LftBanksRegs {
            rd_valid: false,
            rd_dlid: 0,
            rd_ports: self.no_routes(),
            rd_mask: 0,
        };
        self.d = self.q;
        self.wr = MemWrite::default();
        self.mem.fill(NO_ROUTE);
    }

    #[inline]
    fn evaluate(&mut self, inp: &LftBanksIn) -> LftBanksOut {
        let out = LftBanksOut {
            rd_valid: self.q.rd_valid,
            rd_dlid: self.q.rd_dlid,
            rd_ports: self.q.rd_ports,
            rd_mask: self.q.rd_mask,
        };
        self.d = self.q;
        self.d.rd_valid = inp.rd_en;
        if inp.rd_en {
            // Read-first: the memory seen here is the one before this cycle's write.
            let o = self.options(inp.rd_dlid);
            self.d.rd_dlid = inp.rd_dlid;
            self.d.rd_ports = o.packed();
            self.d.rd_mask = o.mask;
        }
        self.wr = MemWrite {
            en: inp.wr_en && self.in_range(inp.wr_lid),
            lid: inp.wr_lid,
            port: inp.wr_port,
        };
        out
    }

    #[inline]
    fn commit(&mut self) {
        if self.wr.en {
            self.mem[self.wr.lid as usize] = self.wr.port;
        }
        self.q = self.d;
        debug_assert_eq!(
            self.q.rd_mask,
            mask_of(self.banks(), self.q.rd_dlid, self.q.rd_ports),
            "a_mask_rule"
        );
        debug_assert!(
            self.in_range(self.q.rd_dlid) || self.q.rd_ports == self.no_routes(),
            "a_out_of_range_no_route"
        );
        debug_assert!(
            self.q.rd_dlid & 1 == 1 || self.q.rd_mask >> 1 == 0,
            "a_deterministic_single"
        );
    }

    fn probe_inputs(&self, inp: &LftBanksIn, v: &mut dyn Visit) {
        v.bit("rd_en_i", inp.rd_en);
        v.bits("rd_dlid_i", 16, inp.rd_dlid as u128);
        v.bit("wr_en_i", inp.wr_en);
        v.bits("wr_lid_i", 16, inp.wr_lid as u128);
        v.bits("wr_port_i", 8, inp.wr_port as u128);
    }

    fn probe_outputs(&self, out: &LftBanksOut, v: &mut dyn Visit) {
        v.bit("rd_valid_o", out.rd_valid);
        v.bits("rd_dlid_o", 16, out.rd_dlid as u128);
        v.bits("rd_ports_o", self.ports_width(), out.rd_ports);
        v.bits("rd_mask_o", self.banks() as u32, out.rd_mask as u128);
    }

    fn probe_regs(&self, v: &mut dyn Visit) {
        v.bit("rd_valid_q", self.q.rd_valid);
        v.bits("rd_dlid_q", 16, self.q.rd_dlid as u128);
        v.bits("rd_ports_q", self.ports_width(), self.q.rd_ports);
        v.bits("rd_mask_q", self.banks() as u32, self.q.rd_mask as u128);
    }
}

#[cfg(test)]
mod tests {
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
}
