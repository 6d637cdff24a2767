//! Switch recordings (`docs/recording.md`): the text file of what one switch of a fabric received
//! and drove on its ports in every cycle, with the parameters and LFT that rebuild it. Written by
//! `arnsim run --record-switch`, read by `arnsim replay` and the HDL replay testbench.

use crate::blocks::LftBanks;
use crate::blocks::lft_banks::NO_ROUTE;
use crate::cycle::{LinkFlit, PortIn, PortOut};
use crate::fabric::Fabric;
use crate::switch::{QueuingScheme, RoutingMode, SwitchParams, SwitchWiring};
use std::io::{self, Write};

mod header_reader;
mod reader;
#[cfg(test)]
mod tests;

pub use reader::RecordingReader;

/// First line of every recording.
pub const MAGIC: &str = "arnsim-switch-recording 2";

/// What a recording's header holds: the switch to rebuild and the cycles compared.
#[derive(Clone, Debug)]
pub struct RecordingHeader {
    /// The switch's name in the fabric (`s2_0`).
    pub name: String,
    /// Parameters.
    pub params: SwitchParams,
    /// Position and far-end capacities (channels are not recorded: 0).
    pub wiring: SwitchWiring,
    /// The programmed LFT.
    pub lft: LftBanks,
    /// The fabric's seed.
    pub seed: u64,
    /// First cycle compared.
    pub from: u64,
    /// Last cycle recorded.
    pub to: u64,
}

impl RecordingHeader {
    /// The header of switch `sw`, named `name`, recorded from cycle 0 through `to`, compared from
    /// `from`.
    pub fn of<const V: usize>(f: &Fabric<V>, sw: u32, name: &str, from: u64, to: u64) -> Self {
        let s = &f.switches()[sw as usize];
        RecordingHeader {
            name: name.to_string(),
            params: f.params().switch.clone(),
            wiring: s.wiring().clone(),
            lft: f.switch_lft(sw as usize),
            seed: f.params().seed,
            from,
            to,
        }
    }

    /// The programmed LFT entries, `(lid, port)` in LID order: the header's `lft` lines.
    pub fn lft_lines(&self) -> impl Iterator<Item = (usize, u8)> + '_ {
        (0..self.lft.entries()).filter_map(|lid| {
            self.lft
                .entry(lid as u16)
                .filter(|&p| p != NO_ROUTE)
                .map(|p| (lid, p))
        })
    }

    /// How many `lft` and `sl2vl` lines the header has (one clock cycle each in the Verilated
    /// replay, before recording cycle 0).
    pub fn setup_writes(&self) -> usize {
        self.lft_lines().count() + self.wiring.sl_to_vl.entries().count()
    }

    /// Writes the header lines.
    pub fn write(&self, w: &mut impl Write) -> io::Result<()> {
        let (p, wi) = (&self.params, &self.wiring);
        let ports = wi.out_capacity.len();
        let (qvcs, qarg) = match p.queuing {
            QueuingScheme::OneQ => (1, 0),
            QueuingScheme::Dbbm { vcs } => (vcs as u32, 0),
            QueuingScheme::VFtree {
                vcs,
                nodes_per_leaf,
            } => (vcs as u32, nodes_per_leaf),
            QueuingScheme::Flow2Sl { vcs, nodes } => (vcs as u32, nodes),
            QueuingScheme::PathSl { vcs } => (vcs as u32, 0),
        };
        writeln!(w, "{MAGIC}")?;
        write!(
            w,
            "switch {} id {} stage {} up_ports {:x} seed {}",
            self.name, wi.id, wi.stage, wi.up_ports, self.seed
        )?;
        if p.routing == RoutingMode::SModK {
            write!(w, " smodk_div {}", wi.smodk_div)?;
        }
        writeln!(w)?;
        writeln!(
            w,
            "param ports {ports} vcs {} vc_capacity {} max_packets {} lmc {} banks {} rows {}",
            p.vcs(),
            p.vc_capacity,
            p.max_packets,
            p.lmc,
            self.lft.banks(),
            self.lft.rows()
        )?;
        writeln!(
            w,
            "param routing {} queuing {} qvcs {qvcs} qarg {qarg} arbitration {}",
            p.routing.name(),
            p.queuing.name(),
            p.arbitration.name()
        )?;
        writeln!(
            w,
            "param arn_entries {} arn_ttl {} arn_gap {} hcdth {} lcdth {} fcth {} crt {} adaptive_threshold {} adapted_refresh {}",
            p.arn_entries,
            p.arn_ttl,
            p.arn_gap,
            p.hcdth,
            p.lcdth,
            p.fcth,
            p.crt,
            p.adaptive_threshold,
            p.adapted_refresh as u8
        )?;
        let m = &p.fecn;
        writeln!(
            w,
            "param fecn_threshold {} fecn_rate {} fecn_min_len {} fecn_victims {:x}",
            m.threshold, m.rate, m.min_len, m.victims
        )?;
        if p.qcn.on() {
            let q = &p.qcn;
            writeln!(
                w,
                "param qcn_qeq {} qcn_w {} qcn_sample {}",
                q.qeq, q.w, q.sample
            )?;
        }
        if p.snoop.on() {
            let t = &p.snoop;
            writeln!(w, "param snoop_entries {} snoop_ttl {}", t.entries, t.ttl)?;
        }
        if p.routing == RoutingMode::Flow {
            writeln!(w, "param route_cache_entries {}", p.route_cache_entries)?;
        }
        for (port, cap) in wi.out_capacity.iter().enumerate() {
            writeln!(w, "out_capacity {port} {cap}")?;
        }
        for (lid, port) in self.lft_lines() {
            writeln!(w, "lft {lid} {port}")?;
        }
        for (out, input, sl, vl) in self.wiring.sl_to_vl.entries() {
            writeln!(w, "sl2vl {out} {input} {sl} {vl}")?;
        }
        writeln!(w, "from {} to {}", self.from, self.to)?;
        writeln!(w, "end-header")
    }
}

fn write_flit(w: &mut impl Write, t: u64, side: char, p: usize, f: &LinkFlit) -> io::Result<()> {
    let d = &f.desc;
    writeln!(
        w,
        "{t} {side} {p} F {} {} {} {} {} {} {} {} {} {} {} {}",
        f.vc,
        f.head as u8,
        f.tail as u8,
        d.injected,
        d.id,
        d.src,
        d.dlid,
        d.len,
        d.sl,
        d.orig_vc,
        d.flags.bits(),
        d.flow
    )
}

/// Writes the lines of cycle `t` (nothing for an idle cycle).
pub fn write_frame(w: &mut impl Write, t: u64, ins: &[PortIn], outs: &[PortOut]) -> io::Result<()> {
    for (p, i) in ins.iter().enumerate() {
        if i.flit.valid {
            write_flit(w, t, 'I', p, &i.flit)?;
        }
        for (v, &c) in i.credit.iter().enumerate().filter(|(_, c)| **c != 0) {
            writeln!(w, "{t} I {p} C {v} {c}")?;
        }
        if let Some(a) = i.arn {
            writeln!(
                w,
                "{t} I {p} A {} {} {} {}",
                a.dest, a.vc, a.arn_id, a.root_info
            )?;
        }
        if let Some(c) = i.cnm {
            writeln!(w, "{t} I {p} Q {} {} {}", c.src, c.dest, c.fb)?;
        }
    }
    for (p, o) in outs.iter().enumerate() {
        if o.flit.valid {
            write_flit(w, t, 'O', p, &o.flit)?;
        }
        for (v, &c) in o.credit.iter().enumerate().filter(|(_, c)| **c != 0) {
            writeln!(w, "{t} O {p} C {v} {c}")?;
        }
        if let Some(a) = o.arn {
            writeln!(
                w,
                "{t} O {p} A {} {} {} {} {}",
                a.dest, a.port, a.vc, a.arn_id, a.root_info
            )?;
        }
        if let Some(c) = o.cnm {
            writeln!(w, "{t} O {p} Q {} {} {}", c.src, c.dest, c.fb)?;
        }
    }
    Ok(())
}

/// Runs `f` from its first cycle for `cycles` cycles, writing into `w` the whole recording of its
/// switch `sw` (header, every cycle, `end`); `each` sees every cycle's frame as it is written.
pub fn record_run<const V: usize>(
    f: &mut Fabric<V>,
    sw: u32,
    cycles: u64,
    w: &mut impl Write,
    mut each: impl FnMut(u64, &[PortIn], &[PortOut]),
) -> Result<RecordingHeader, String> {
    let name = f.switch_names()[sw as usize].clone();
    let header = RecordingHeader::of(f, sw, &name, 0, cycles.saturating_sub(1));
    header.write(w).map_err(|e| e.to_string())?;
    let mut err = Ok(());
    f.run_recorded(cycles, &mut (), &[sw], &mut |_, c, i, o| {
        if err.is_ok() {
            err = write_frame(w, c, i, o);
        }
        each(c, i, o);
        Ok(())
    })
    .map_err(|v| v.to_string())?;
    err.map_err(|e| e.to_string())?;
    writeln!(w, "end {cycles}").map_err(|e| e.to_string())?;
    Ok(header)
}
