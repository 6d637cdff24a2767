//! The port interface of the whole switch, visited by the names, widths and layout Verilator
//! gives `hdl-ref/switch.sv` in the dump of its replay testbench (`TOP.tb_switch.u_dut`), so that
//! a replay on the cycle engine dumps the waves the Verilated replay dumps, and the time at which
//! each recording cycle sits in both.
//!
//! Names (`docs/recording.md`, `docs/switch_rtl.md`): per port `p`, `in_flit_valid_i`,
//! `in_flit_head_i`, `in_flit_tail_i` and `in_arn_valid_i` are packed `[P-1:0]` vectors (bit `p`
//! for port `p`); `in_flit_vc_i[p]` (4 bits), `in_flit_desc_i[p]` (`desc_t`, 192 bits),
//! `in_credit_i[p][vc]` (8 bits) and `in_arn_i[p]` (`arn_t`, 72 bits) are unpacked array elements,
//! Verilator writing a packed struct as one vector, its first field in the most significant bits;
//! the outputs likewise with `out_` and `_o`.
//!
//! Time: the Verilated replay (`testbenches/hdl/tb_switch_main.cpp`, `tb_switch.sv`) spends one
//! clock cycle in reset and one writing each LFT entry before recording cycle 0, so recording
//! cycle `t` is clock cycle [`clock_cycle`]` = 1 + entries + t`: its inputs are applied at the
//! rising edge `2560 + 5120 (1 + entries + t)` ps and the outputs the switch drives in `t` settle
//! at that edge too; `TOP.tb_switch.cur` holds `t` from that edge.

use super::Visit;
use crate::cycle::{PortIn, PortOut};
use crate::wire::{ArnInfo, Packet};

/// The replay testbench's module, without its `tb_` (`TOP.tb_switch`).
pub const TESTBENCH: &str = "switch";

/// The replay testbench's recording-cycle counter (`TOP.tb_switch.cur`, 64 bits).
pub const COUNTER: &str = "cur";

/// Width of `desc_t`.
pub const DESC_BITS: u32 = 192;

/// Width of `arn_t`.
pub const ARN_BITS: u32 = 72;

/// The clock cycle of the Verilated replay (reset is clock cycle 0) in which it plays recording
/// cycle `t` of a recording whose header has `setup_writes` `lft` and `sl2vl` lines.
pub const fn clock_cycle(setup_writes: usize, t: u64) -> u64 {
    1 + setup_writes as u64 + t
}

/// The fields of `desc_t`, least significant first: name, lowest bit, width.
pub const DESC_FIELDS: [(&str, u32, u32); 10] = [
    ("injected", 0, 64),
    ("id", 64, 32),
    ("src", 96, 16),
    ("dlid", 112, 16),
    ("len", 128, 16),
    ("sl", 144, 8),
    ("vc", 152, 8),
    ("orig_vc", 160, 8),
    ("flags", 168, 8),
    ("cid", 176, 16),
];

/// The fields of `arn_t`, least significant first: name, lowest bit, width.
pub const ARN_FIELDS: [(&str, u32, u32); 5] = [
    ("dest", 0, 16),
    ("port", 16, 8),
    ("vc", 24, 8),
    ("arn_id", 32, 32),
    ("root_info", 64, 8),
];

/// A descriptor as `desc_t`: bits 0 to 127, and the 64 bits above.
pub fn desc_bits(d: &Packet) -> (u128, u128) {
    let low =
        d.injected as u128 | (d.id as u128) << 64 | (d.src as u128) << 96 | (d.dlid as u128) << 112;
    let high = d.len as u128
        | (d.sl as u128) << 16
        | (d.vc as u128) << 24
        | (d.orig_vc as u128) << 32
        | (d.flags.bits() as u128) << 40
        | (d.flow as u128) << 48;
    (low, high)
}

/// An ARN as `arn_t` (zero when none).
pub fn arn_bits(a: Option<&ArnInfo>) -> u128 {
    a.map_or(0, |a| {
        a.dest as u128
            | (a.port as u128) << 16
            | (a.vc as u128) << 24
            | (a.arn_id as u128) << 32
            | (a.root_info as u128) << 64
    })
}

/// One side of the interface (`in`/`_i` or `out`/`_o`), per port: flit, credits, ARN.
struct Side<'a> {
    dir: &'a str,
    suffix: &'a str,
    flits: Vec<&'a crate::cycle::LinkFlit>,
    credits: Vec<&'a [u8; crate::cycle::MAX_LINK_VCS]>,
    arns: Vec<Option<&'a ArnInfo>>,
}

impl Side<'_> {
    fn visit(&self, vcs: usize, v: &mut dyn Visit) {
        let (d, s) = (self.dir, self.suffix);
        let ports = self.flits.len();
        let mask =
            |bit: &dyn Fn(usize) -> bool| (0..ports).fold(0u128, |m, p| m | (bit(p) as u128) << p);
        let f = &self.flits;
        v.bits(
            &format!("{d}_flit_valid_{s}"),
            ports as u32,
            mask(&|p| f[p].valid),
        );
        let name = format!("{d}_flit_vc_{s}");
        for (p, fl) in f.iter().enumerate() {
            v.elem(&name, p, 4, fl.vc as u128 & 0xf);
        }
        v.bits(
            &format!("{d}_flit_head_{s}"),
            ports as u32,
            mask(&|p| f[p].head),
        );
        v.bits(
            &format!("{d}_flit_tail_{s}"),
            ports as u32,
            mask(&|p| f[p].tail),
        );
        let name = format!("{d}_flit_desc_{s}");
        for (p, fl) in f.iter().enumerate() {
            let (low, high) = desc_bits(&fl.desc);
            v.elem_wide(&name, p, DESC_BITS, low, high);
        }
        for (p, c) in self.credits.iter().enumerate() {
            // `in_credit_i[p][vc]`: the element's name carries the port.
            let name = format!("{d}_credit_{s}[{p}]");
            for (vc, &n) in c.iter().enumerate().take(vcs) {
                v.elem(&name, vc, 8, n as u128);
            }
        }
        let a = &self.arns;
        v.bits(
            &format!("{d}_arn_valid_{s}"),
            ports as u32,
            mask(&|p| a[p].is_some()),
        );
        let name = format!("{d}_arn_{s}");
        for (p, arn) in a.iter().enumerate() {
            v.elem(&name, p, ARN_BITS, arn_bits(*arn));
        }
    }
}

/// Visits the port interface of a switch of `vcs` VCs in one cycle: what it receives (`ins`) and
/// what it drives (`outs`), one entry per port, as `switch.sv` names them.
pub fn probe_ports(ins: &[PortIn], outs: &[PortOut], vcs: usize, v: &mut dyn Visit) {
    let inputs = Side {
        dir: "in",
        suffix: "i",
        flits: ins.iter().map(|i| &i.flit).collect(),
        credits: ins.iter().map(|i| &i.credit).collect(),
        arns: ins.iter().map(|i| i.arn.as_ref()).collect(),
    };
    let outputs = Side {
        dir: "out",
        suffix: "o",
        flits: outs.iter().map(|o| &o.flit).collect(),
        credits: outs.iter().map(|o| &o.credit).collect(),
        arns: outs.iter().map(|o| o.arn.as_ref()).collect(),
    };
    inputs.visit(vcs, v);
    outputs.visit(vcs, v);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::signals_of;
    use crate::wire::PacketFlags;

    #[test]
    fn the_descriptor_and_the_arn_are_packed_as_switch_pkg_packs_them() {
        let d = Packet {
            injected: 0x0123_4567_89ab_cdef,
            id: 0xdead_beef,
            src: 0x1111,
            dlid: 0x2222,
            len: 0x3333,
            sl: 0x44,
            vc: 0x55,
            orig_vc: 0x66,
            flags: PacketFlags::ADAPTED | PacketFlags::HOT,
            flow: 0,
        };
        let (low, high) = desc_bits(&d);
        let field = |lsb: u32, w: u32| {
            let v = if lsb >= 128 {
                high >> (lsb - 128)
            } else {
                low >> lsb
            };
            v & ((1u128 << w) - 1)
        };
        let want = [
            0x0123_4567_89ab_cdef,
            0xdead_beef,
            0x1111,
            0x2222,
            0x3333,
            0x44,
            0x55,
            0x66,
            3,
        ];
        for ((name, lsb, w), want) in DESC_FIELDS.iter().zip(want) {
            assert_eq!(field(*lsb, *w), want, "{name}");
        }
        assert_eq!(DESC_FIELDS.iter().map(|f| f.2).sum::<u32>(), DESC_BITS);
        assert_eq!(high >> (DESC_BITS - 128), 0);
        let a = ArnInfo {
            dest: 0xabcd,
            port: 7,
            vc: 2,
            arn_id: 0x0102_0304,
            root_info: 0x81,
        };
        let bits = arn_bits(Some(&a));
        let want = [0xabcd, 7, 2, 0x0102_0304, 0x81];
        for ((name, lsb, w), want) in ARN_FIELDS.iter().zip(want) {
            assert_eq!((bits >> lsb) & ((1u128 << w) - 1), want, "{name}");
        }
        assert_eq!(ARN_FIELDS.iter().map(|f| f.2).sum::<u32>(), ARN_BITS);
    }

    #[test]
    fn the_interface_reads_as_verilator_names_it() {
        let ins = vec![PortIn::default(); 3];
        let outs = vec![PortOut::default(); 3];
        let l = signals_of(|v| probe_ports(&ins, &outs, 2, v));
        let names: Vec<String> = l.signals.iter().map(|(n, w)| format!("{n}/{w}")).collect();
        for want in [
            "in_flit_valid_i/3",
            "in_flit_vc_i[2]/4",
            "in_flit_desc_i[0]/192",
            "in_credit_i[2][1]/8",
            "in_arn_valid_i/3",
            "in_arn_i[1]/72",
            "out_flit_tail_o/3",
            "out_credit_o[0][0]/8",
            "out_arn_o[2]/72",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} not in {names:?}");
        }
        assert!(!names.iter().any(|n| n.starts_with("in_credit_i[0][2]")));
        // 2 x (4 masks + 3 x (vc, desc, arn) + 3 x 2 credits).
        assert_eq!(names.len(), 2 * (4 + 3 * 3 + 3 * 2));
    }
}
