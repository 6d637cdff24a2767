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
//! `rd_mask_o` `2^Lmc` bits, for `Lmc` in 0..=4 and `Rows` in 1..=49,152 with `Rows * 2^Lmc` at
//! most 65,536 (the 16-bit LID's range). A row index is 16 bits wide.

use super::Block;
use super::probe::Visit;

/// Largest LID Mask Control value: 16 banks, 16 options, a 128-bit `rd_ports_o`.
pub const MAX_LMC: u32 = 4;
/// Largest number of routing options (banks), `2^MAX_LMC`.
pub const MAX_OPTIONS: usize = 1 << MAX_LMC;
/// Largest number of rows per bank: one per unicast LID (0 to 0xBFFF) at LMC 0.
pub const MAX_ROWS: usize = 0xC000;
/// Most LIDs one table covers (`Rows * 2^Lmc`): every value of a 16-bit LID.
pub const MAX_ENTRIES: usize = 1 << 16;

/// Whether a table of `2^lmc` banks of `rows` rows is one this block models.
pub fn shape_fits(lmc: u32, rows: usize) -> bool {
    lmc <= MAX_LMC && (1..=MAX_ROWS).contains(&rows) && rows << lmc <= MAX_ENTRIES
}
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct MemWrite {
    en: bool,
    lid: u16,
    port: u8,
}

/// The interleaved forwarding table.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// A table of `2^lmc` banks (`lmc` 0..=4) of `rows` rows (1..=49,152, at most 65,536 LIDs
    /// in all), in its reset state.
    pub fn new(lmc: u32, rows: usize) -> Self {
        assert!(
            shape_fits(lmc, rows),
            "lft_banks: Lmc = {lmc}, Rows = {rows} is outside Lmc 0..=4, Rows 1..=49152, \
             Rows * 2^Lmc <= 65536"
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
mod tests;
