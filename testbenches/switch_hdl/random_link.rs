//! A switch recording (docs/recording.md) from seeded random link traffic: one
//! [`arnsim::cycle::CycleSwitch`] driven by senders and receivers that obey the link protocol,
//! its outputs written as the `O` lines. The recording replays through `hdl-ref/switch.sv` with
//! `testbenches/hdl/replay_switch.sh`.
//!
//! Options (defaults in brackets): `--ports P` [4], `--routing MODE` [arn_afi], `--queuing
//! 1q|dbbm|vftree|flow2sl` [1q], `--qvcs N` regular VCs [1], `--qarg N` nodes per leaf (vftree) or
//! nodes (flow2sl) [0], `--vc-capacity F` [16], `--lmc L` [1], `--cycles N` [100000], `--seed S`
//! [1], `--id I` [3], `--stage S` [1], `--crt C` [24], `--arn-gap G` [40], `--arn-ttl T` [3000],
//! `--arn-entries E` [8], `--load PERCENT` [70], `--max-len F` [8], `--adapted-refresh 0|1` [1],
//! `--arn-rate PER_MILLE` ARNs per output and cycle [3], `--out-cap-spread 0|1` far buffers of
//! `vc_capacity + 4 * (p mod 3)` flits instead of `vc_capacity` [0], `--sl2vl PERCENT` entries of
//! the SL-to-VL tables (output, input, SL of a regular VC) given a random regular VL instead of
//! VL = SL [0], `--arbitration round_robin|fcfs` [round_robin], `--fecn T:R:L:M` FECN marking's
//! queue threshold, rate, shortest packet (flits) and hexadecimal victim mask, with one packet in
//! eight arriving marked already [off], `--qcn QEQ:W:SAMPLE` the QCN congestion points' Qeq, w
//! and sample interval (flits), with a well-formed CNM arriving on each output 20 times in 1,000
//! cycles, and in one phase in four 500 times, for the hot spot's source when there is one
//! [off], `--smodk-div D` S-mod-K's divisor of the source [1], `--route-cache E` entries of
//! each input's route cache under flow routing, whose packets then belong to four connections
//! per source and destination, one in six a setup and one in six a teardown [16], `--out FILE`
//! [switch.rec].
//!
//! The switch is a fat-tree switch: its low half of ports goes down, one end node per port, the
//! high half goes up; the LFT routes a local node to its port on every option and a remote node
//! to the up ports (option 0 the D-mod-K port, the others the next up ports). Senders keep this
//! switch's credits (`vc_capacity` per VC), send a packet's flits in consecutive cycles and start
//! one only with credits for its whole length; each output's far buffer drains at a rate that
//! changes every few thousand cycles (hot spots make congestion roots), returning credits a few
//! cycles after it frees them; now and then a well-formed ARN comes back on an output.

use arnsim::blocks::LftBanks;
use arnsim::blocks::congestion_point::QcnPoint;
use arnsim::blocks::fecn_marker::FecnMarking;
use arnsim::blocks::rng::SplitMix64;
use arnsim::cycle::{CycleSwitch, LinkFlit, MAX_LINK_VCS, PortIn, PortOut};
use arnsim::switch::config::SnoopTable;
use arnsim::switch::{
    OutputArbitration, QueuingScheme, RoutingMode, SlToVl, SwitchParams, SwitchWiring,
};
use arnsim::trace::recording::{RecordingHeader, write_frame};
use arnsim::wire::{ArnInfo, Cnm, Packet, PacketFlags};
use std::collections::VecDeque;
use std::io::Write as _;

/// Command-line settings.
pub struct Opts {
    ports: usize,
    routing: RoutingMode,
    queuing: String,
    qvcs: u8,
    qarg: u32,
    vc_capacity: u16,
    lmc: u32,
    cycles: u64,
    seed: u64,
    id: u32,
    stage: u8,
    crt: u32,
    arn_gap: u32,
    arn_ttl: u32,
    arn_entries: usize,
    load: u64,
    max_len: u16,
    adapted_refresh: bool,
    arbitration: OutputArbitration,
    fecn: FecnMarking,
    qcn: QcnPoint,
    snoop: SnoopTable,
    smodk_div: u32,
    route_cache: usize,
    arn_rate: u64,
    out_cap_spread: bool,
    sl2vl: u64,
    out: String,
}

pub fn parse_opts(args: &[&str]) -> Result<Opts, String> {
    let mut o = Opts {
        ports: 4,
        routing: RoutingMode::ArnAfi,
        queuing: "1q".into(),
        qvcs: 1,
        qarg: 0,
        vc_capacity: 16,
        lmc: 1,
        cycles: 100_000,
        seed: 1,
        id: 3,
        stage: 1,
        crt: 24,
        arn_gap: 40,
        arn_ttl: 3000,
        arn_entries: 8,
        load: 70,
        max_len: 8,
        adapted_refresh: true,
        arbitration: OutputArbitration::RoundRobin,
        fecn: FecnMarking::default(),
        qcn: QcnPoint::default(),
        snoop: Default::default(),
        smodk_div: 1,
        route_cache: 16,
        arn_rate: 3,
        out_cap_spread: false,
        sl2vl: 0,
        out: "switch.rec".into(),
    };
    let mut it = args.iter();
    while let Some(k) = it.next() {
        let v = it.next().ok_or_else(|| format!("{k} needs a value"))?;
        let num = |v: &str| v.parse::<u64>().map_err(|e| format!("{k} {v}: {e}"));
        match *k {
            "--ports" => o.ports = num(v)? as usize,
            "--routing" => {
                o.routing = *RoutingMode::ALL
                    .iter()
                    .find(|m| m.name() == *v)
                    .ok_or_else(|| format!("unknown routing mode {v}"))?
            }
            "--queuing" => o.queuing = v.to_string(),
            "--qvcs" => o.qvcs = num(v)? as u8,
            "--qarg" => o.qarg = num(v)? as u32,
            "--vc-capacity" => o.vc_capacity = num(v)? as u16,
            "--lmc" => o.lmc = num(v)? as u32,
            "--cycles" => o.cycles = num(v)?,
            "--seed" => o.seed = num(v)?,
            "--id" => o.id = num(v)? as u32,
            "--stage" => o.stage = num(v)? as u8,
            "--crt" => o.crt = num(v)? as u32,
            "--arn-gap" => o.arn_gap = num(v)? as u32,
            "--arn-ttl" => o.arn_ttl = num(v)? as u32,
            "--arn-entries" => o.arn_entries = num(v)? as usize,
            "--load" => o.load = num(v)?,
            "--max-len" => o.max_len = num(v)? as u16,
            "--adapted-refresh" => o.adapted_refresh = num(v)? != 0,
            "--arbitration" => {
                o.arbitration = OutputArbitration::named(v)
                    .ok_or_else(|| format!("unknown output arbitration {v}"))?
            }
            "--fecn" => {
                let f: Vec<&str> = v.split(':').collect();
                let [t, r, l, m] = f[..] else {
                    return Err(format!("--fecn {v}: THRESHOLD:RATE:MIN_LEN:VICTIMS"));
                };
                o.fecn = FecnMarking {
                    threshold: num(t)? as u16,
                    rate: num(r)? as u16,
                    min_len: num(l)? as u16,
                    victims: u64::from_str_radix(m, 16).map_err(|_| format!("--fecn {v}"))?,
                };
            }
            "--qcn" => {
                let f: Vec<&str> = v.split(':').collect();
                let [q, w, n] = f[..] else {
                    return Err(format!("--qcn {v}: QEQ:W:SAMPLE"));
                };
                o.qcn = QcnPoint {
                    qeq: num(q)? as u32,
                    w: num(w)? as u8,
                    sample: num(n)? as u32,
                };
            }
            "--snoop" => {
                let f: Vec<&str> = v.split(':').collect();
                let [e, t] = f[..] else {
                    return Err(format!("--snoop {v}: ENTRIES:TTL"));
                };
                o.snoop = SnoopTable {
                    entries: num(e)? as u8,
                    ttl: num(t)? as u32,
                };
            }
            "--smodk-div" => o.smodk_div = num(v)? as u32,
            "--route-cache" => o.route_cache = num(v)? as usize,
            "--arn-rate" => o.arn_rate = num(v)?,
            "--out-cap-spread" => o.out_cap_spread = num(v)? != 0,
            "--sl2vl" => o.sl2vl = num(v)?,
            "--out" => o.out = v.to_string(),
            _ => return Err(format!("unknown option {k}")),
        }
    }
    Ok(o)
}

/// SL-to-VL tables of a `ports`-port switch with `percent` of the entries of each regular SL
/// remapped to a random regular VL (a generator of its own, so that the traffic is the same
/// with and without).
fn random_sl_to_vl(ports: usize, regular: usize, percent: u64, seed: u64) -> SlToVl {
    let mut t = SlToVl::identity();
    if percent == 0 {
        return t;
    }
    let mut rng = SplitMix64::new(seed ^ 0x51_2c1d);
    for out in 0..ports {
        for input in 0..ports {
            for sl in 0..regular as u8 {
                if rng.below(100) < percent {
                    t.set(ports, out, input, sl, rng.below(regular as u64) as u8);
                }
            }
        }
    }
    t
}

/// The upstream end of one input link: this switch's credits per VC, the packet being sent.
struct Sender {
    credits: Vec<u16>,
    /// Credits on their way back (cycle they arrive, VC, count).
    returning: VecDeque<(u64, usize, u16)>,
    /// The packet being sent and the index of its next flit.
    pkt: Option<(Packet, u16)>,
}

/// The downstream end of one output link: the far buffer per VC.
struct Receiver {
    held: Vec<u16>,
    /// Credits on their way back (cycle they arrive, VC, count).
    returning: VecDeque<(u64, usize, u8)>,
    /// Percent chance per cycle of freeing one flit.
    drain: u64,
    next_vc: usize,
}

/// Writes the recording `args` (the options above) ask for.
pub fn record(args: &[&str]) -> Result<String, String> {
    let o = parse_opts(args)?;
    let p = o.ports;
    let queuing = match o.queuing.as_str() {
        "1q" => QueuingScheme::OneQ,
        "dbbm" => QueuingScheme::Dbbm { vcs: o.qvcs },
        "vftree" => QueuingScheme::VFtree {
            vcs: o.qvcs,
            nodes_per_leaf: o.qarg,
        },
        "flow2sl" => QueuingScheme::Flow2Sl {
            vcs: o.qvcs,
            nodes: o.qarg,
        },
        q => return Err(format!("unknown queuing scheme {q}")),
    };
    let mut params = SwitchParams::with_paper_ratios(o.routing, o.vc_capacity, o.crt);
    params.queuing = queuing;
    params.lmc = o.lmc;
    params.arn_gap = o.arn_gap;
    params.arn_ttl = o.arn_ttl;
    params.arn_entries = o.arn_entries;
    params.adapted_refresh = o.adapted_refresh;
    params.arbitration = o.arbitration;
    params.fecn = o.fecn;
    params.qcn = o.qcn;
    params.snoop = o.snoop;
    params.route_cache_entries = o.route_cache;
    let vcs = params.vcs();
    // Every VC full of one-flit packets, one packet leaving per output, one arriving.
    params.max_packets = vcs * o.vc_capacity as usize + p + 1;

    // Fat-tree switch: ports 0 .. down-1 go down (node n on port n), the others go up.
    let down = p / 2;
    let up: Vec<u8> = (down..p).map(|x| x as u8).collect();
    let up_mask: u64 = up.iter().fold(0, |m, &x| m | 1 << x);
    let nodes = (4 * p) as u32;
    let banks = 1u32 << o.lmc;
    let rows = nodes as usize;
    let mut lft = LftBanks::new(o.lmc, rows);
    for n in 0..nodes {
        for b in 0..banks {
            let port = if (n as usize) < down {
                n as u8
            } else {
                up[((n + b) as usize) % up.len()]
            };
            let lid = (n << o.lmc | b) as u16;
            lft.program(lid, port);
        }
    }
    let out_caps: Vec<u16> = (0..p)
        .map(|x| {
            o.vc_capacity
                + if o.out_cap_spread {
                    4 * (x % 3) as u16
                } else {
                    0
                }
        })
        .collect();
    let wiring = SwitchWiring {
        id: o.id,
        stage: o.stage,
        up_ports: up_mask,
        smodk_div: o.smodk_div,
        in_ch: vec![0; p],
        out_ch: vec![0; p],
        out_capacity: out_caps,
        sl_to_vl: random_sl_to_vl(p, params.queuing.regular_vcs(), o.sl2vl, o.seed),
    };
    let mut sw = CycleSwitch::new(params.clone(), wiring.clone(), lft.clone(), o.seed);
    let mut rng = SplitMix64::new(o.seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5eed);

    let mut senders: Vec<Sender> = (0..p)
        .map(|_| Sender {
            credits: vec![o.vc_capacity; vcs],
            returning: VecDeque::new(),
            pkt: None,
        })
        .collect();
    let mut receivers: Vec<Receiver> = (0..p)
        .map(|_| Receiver {
            held: vec![0; vcs],
            returning: VecDeque::new(),
            drain: 90,
            next_vc: 0,
        })
        .collect();
    let afc = params.afc();
    let mut next_id = 1u32;
    let mut arn_id = 0x0100_0000u32;
    let mut hot: Option<u32> = None;
    // Under QCN, phases in which CNMs for one source arrive on every output, filling the queue
    // of the port toward it (CNMs dropped).
    let mut storm = false;

    let file = std::fs::File::create(&o.out).map_err(|e| format!("{}: {e}", o.out))?;
    let mut w = std::io::BufWriter::new(file);
    let header = RecordingHeader {
        name: format!("rec{}", o.id),
        params: params.clone(),
        wiring: wiring.clone(),
        lft: lft.clone(),
        seed: o.seed,
        from: 0,
        to: o.cycles.saturating_sub(1),
    };
    header
        .write(&mut w)
        .map_err(|e| format!("{}: {e}", o.out))?;

    let mut inp = vec![PortIn::default(); p];
    let mut out = vec![PortOut::default(); p];
    let (mut flits_in, mut flits_out, mut arns_out, mut cnms_out) = (0u64, 0u64, 0u64, 0u64);
    for t in 0..o.cycles {
        // Phases: a hot spot (one remote or local node many senders aim at) and the drain rate
        // of every far buffer change every 3000 cycles.
        if t % 3000 == 0 {
            hot = (rng.below(3) > 0).then(|| rng.below(nodes as u64) as u32);
            storm = params.qcn.on() && rng.below(4) == 0;
            for r in receivers.iter_mut() {
                r.drain = [100, 95, 70, 40][rng.below(4) as usize];
            }
        }
        for (i, s) in senders.iter_mut().enumerate() {
            let mut f = LinkFlit::default();
            while let Some(&(at, vc, n)) = s.returning.front() {
                if at > t {
                    break;
                }
                s.credits[vc] += n;
                s.returning.pop_front();
            }
            if s.pkt.is_none() && rng.below(100) < o.load {
                // A new packet: destination (the hot spot more often), length, VC.
                let dst = match hot {
                    Some(hn) if rng.below(100) < 60 => hn,
                    _ => rng.below(nodes as u64) as u32,
                };
                let multipath = o.routing.multipath() && rng.below(100) < 95;
                let dlid = (dst << o.lmc | multipath as u32) as u16;
                let len = if rng.below(10) == 0 {
                    1 + rng.below(o.vc_capacity as u64) as u16
                } else {
                    1 + rng.below(o.max_len.min(o.vc_capacity) as u64) as u16
                };
                let src = rng.below(nodes as u64) as u16;
                let mut pkt = Packet {
                    injected: t.saturating_sub(rng.below(5000)),
                    id: next_id,
                    src,
                    dlid,
                    len,
                    sl: rng.below(params.queuing.regular_vcs() as u64) as u8,
                    vc: 0,
                    orig_vc: 0,
                    flags: if rng.below(10) == 0 {
                        PacketFlags::HOT
                    } else {
                        PacketFlags::empty()
                    },
                    flow: 0,
                };
                // The HCA's SL is the VL of every hop (any regular VL, not only the scheme's).
                pkt.orig_vc = pkt.sl;
                pkt.vc = pkt.orig_vc;
                // Under FECN marking some packets were marked upstream already.
                if params.fecn.on() && rng.below(8) == 0 {
                    pkt.flags |= PacketFlags::FECN;
                }
                // Under flow routing, packets of four connections per source and destination,
                // one in six a setup and one in six a teardown.
                if params.routing == RoutingMode::Flow {
                    pkt.flow = 1 + rng.below(4) as u16;
                    match rng.below(6) {
                        0 => pkt.flags |= PacketFlags::SETUP,
                        1 => pkt.flags |= PacketFlags::TEARDOWN,
                        _ => {}
                    }
                }
                // Packets adapted upstream (only meaningful with AFI) come on the AFC; coming
                // from an up port, the ones from below are not.
                if let Some(afc) = afc
                    && i >= down
                    && rng.below(100) < 15
                {
                    pkt.flags |= PacketFlags::ADAPTED;
                    pkt.vc = afc;
                }
                if s.credits[pkt.vc as usize] >= len {
                    next_id += 1;
                    s.pkt = Some((pkt, 0));
                }
            }
            if let Some((pkt, idx)) = s.pkt {
                // Consecutive cycles, but now and then a source pauses before a packet's head.
                if idx > 0 || rng.below(8) != 0 {
                    f = if idx == 0 {
                        LinkFlit::head_of(pkt)
                    } else {
                        LinkFlit::body(pkt.vc, idx, pkt.len)
                    };
                    s.credits[pkt.vc as usize] -= 1;
                    s.pkt = (idx + 1 < pkt.len).then_some((pkt, idx + 1));
                }
            }
            inp[i].flit = f;
        }
        for (port, r) in receivers.iter_mut().enumerate() {
            inp[port].credit = [0; MAX_LINK_VCS];
            while let Some(&(at, vc, n)) = r.returning.front() {
                if at > t {
                    break;
                }
                inp[port].credit[vc] += n;
                r.returning.pop_front();
            }
            // Frees flits round robin over its VCs; a credit returns 1 to 4 cycles later.
            if rng.below(100) < r.drain {
                for k in 0..vcs {
                    let vc = (r.next_vc + k) % vcs;
                    if r.held[vc] > 0 {
                        r.held[vc] -= 1;
                        r.next_vc = (vc + 1) % vcs;
                        let at = (t + 1 + rng.below(4)).max(r.returning.back().map_or(0, |b| b.0));
                        match r.returning.back_mut() {
                            Some(b) if b.0 == at && b.1 == vc => b.2 += 1,
                            _ => r.returning.push_back((at, vc, 1)),
                        }
                        break;
                    }
                }
            }
            // A well-formed ARN now and then: a destination routed through this output, an
            // original VC of the scheme, a root this switch or the next stage consumes.
            inp[port].arn = None;
            if rng.below(1000) < o.arn_rate {
                let remote = (port >= down)
                    .then(|| down as u32 + rng.below((nodes - down as u32) as u64) as u32);
                let dest_node = remote.unwrap_or(port as u32);
                let info = ArnInfo {
                    dest: (dest_node << o.lmc) as u16,
                    port: 0,
                    vc: rng.below(queuing.regular_vcs() as u64) as u8,
                    arn_id: if rng.below(4) == 0 {
                        arn_id
                    } else {
                        arn_id = arn_id.wrapping_add(1);
                        arn_id
                    },
                    root_info: if rng.below(4) == 0 {
                        o.stage + 1
                    } else {
                        o.stage
                    },
                };
                inp[port].arn = Some(info);
            }
            // Under QCN, a CNM now and then from a congestion point downstream, for any source.
            inp[port].cnm = None;
            if params.qcn.on() && rng.below(1000) < if storm { 500 } else { 20 } {
                let src = match hot {
                    Some(h) if storm => h as u64,
                    _ => rng.below(nodes as u64),
                };
                inp[port].cnm = Some(Cnm {
                    src: src as u16,
                    dest: (rng.below(nodes as u64) as u16) << o.lmc,
                    fb: 1 + rng.below(63) as u8,
                });
            }
        }
        if let Err(f) = sw.step(&inp, &mut out, &mut ()) {
            return Err(format!("cycle {t}: port {}: {}", f.port, f.what));
        }
        write_frame(&mut w, t, &inp, &out).map_err(|e| format!("{}: {e}", o.out))?;
        flits_in += inp.iter().filter(|x| x.flit.valid).count() as u64;
        arns_out += out.iter().filter(|x| x.arn.is_some()).count() as u64;
        cnms_out += out.iter().filter(|x| x.cnm.is_some()).count() as u64;
        for (i, x) in out.iter().enumerate() {
            if x.flit.valid {
                flits_out += 1;
                receivers[i].held[x.flit.vc as usize] += 1;
            }
            for (vc, &c) in x.credit.iter().enumerate().take(vcs) {
                if c > 0 {
                    let at = t + 1 + rng.below(3);
                    let s = &mut senders[i];
                    let at = at.max(s.returning.back().map_or(0, |b| b.0));
                    s.returning.push_back((at, vc, c as u16));
                }
            }
        }
    }
    let _ = writeln!(w, "end {}", o.cycles);
    w.flush().expect("write");
    let st = sw.stats();
    Ok(format!(
        "{} cycles, {flits_in} flits in, {flits_out} flits out, {arns_out} ARNs out, {cnms_out} \
         CNMs out ({} made, {} dropped, {} absorbed), {} roots, {} adapted, {} consumed",
        o.cycles,
        st.cnms_made,
        st.cnms_dropped,
        st.cnms_absorbed,
        st.roots_detected,
        st.packets_adapted,
        st.arns_consumed
    ))
}
