//! The event engine's view of a fabric laid out for one part: per switch its ports' first
//! index, input and output ports with their credit counters and arbiters, the peers across each
//! link, the end nodes' steps, and the calendar's first events (built before the first cycle).

use super::*;
use crate::fabric::ranks::Partition;

impl<const V: usize> EventCore<V> {
    /// Part `part` of `split`'s parts of the event engine's view of `f` (built, before its
    /// first cycle).
    pub(super) fn new(f: &Fabric<V>, part: usize, split: &Partition) -> Self {
        let parts = split.parts;
        let switch_part = |s: usize| split.part_of_switch(s);
        let vcs = f.params.switch.vcs();
        let mut first = Vec::with_capacity(f.switches.len());
        let mut ports = Vec::with_capacity(f.switches.len());
        let mut n = 0u32;
        for s in &f.switches {
            first.push(n);
            ports.push(s.ports() as u8);
            n += s.ports() as u32;
        }
        let stride = ports.iter().map(|&p| p as usize).max().unwrap_or(1);
        let flat = |sw: u32, port: u16| first[sw as usize] + port as u32;
        let mut ins = Vec::with_capacity(n as usize);
        // A node belongs to the part of the port it is cabled to.
        assert!(
            parts <= PeerCode::PARTS
                && n <= PeerCode::INDEX
                && f.nodes.len() as u32 <= PeerCode::INDEX,
            "the event engine's link codes hold 128 parts and 2^24 ports and nodes"
        );
        let part_of = |far: Far, s: usize| match far {
            Far::Switch { sw, port } => {
                PeerCode::new(Peer::Port(flat(sw, port)), switch_part(sw as usize))
            }
            Far::Node(n) => PeerCode::new(Peer::Node(n), switch_part(s)),
        };
        let mut down = Vec::with_capacity(n as usize);
        let mut outputs = Vec::with_capacity(n as usize);
        for (s, unit) in f.switches.iter().enumerate() {
            let w = unit.wiring();
            for p in 0..unit.ports() {
                debug_assert_eq!(flat(s as u32, p as u16) as usize, ins.len());
                down.push(part_of(f.ends[w.out_ch[p] as usize].1, s));
                ins.push(InPort {
                    arrival: Arrival {
                        slot: NIL,
                        out: NO_ROUTE,
                        ..Arrival::default()
                    },
                    place: Place {
                        switch: s as u32,
                        port: p as u16,
                        ports: unit.ports() as u16,
                    },
                    up: part_of(f.ends[w.in_ch[p] as usize].0, s),
                    det: NO_ROUTE,
                });
                outputs.push(OutPort {
                    credits: OutputCredits::new(w.out_capacity[p]),
                    in_arb: RrArbiter::new(unit.ports()),
                    tx: None,
                    waiting: 0,
                    wake: u64::MAX,
                    last: u64::MAX,
                    mark_count: 0,
                });
            }
        }
        let nodes = f.nodes.len();
        let node_steps: Vec<NodeSteps> = f
            .nodes
            .iter()
            .map(|node| match f.ends[node.out_channel() as usize].1 {
                Far::Switch { sw, port } => NodeSteps::new(first[sw as usize] + port as u32),
                Far::Node(_) => NodeSteps::new(NIL),
            })
            .collect();
        let owner: Vec<u8> = ins
            .iter()
            .map(|p: &InPort| switch_part(p.place.switch as usize) as u8)
            .collect();
        // The part's own ports and nodes (a node belongs to the part of its switch port).
        let mut owned = 0;
        let out_row: Vec<u32> = owner
            .iter()
            .map(|&o| {
                if o as usize != part {
                    return NIL;
                }
                owned += 1;
                owned as u32 - 1
            })
            .collect();
        let owned_nodes = node_steps
            .iter()
            .filter(|n| node_of_part(n, &owner, part as u8))
            .count();
        let mut core = EventCore {
            cal: Calendar::new(owned + owned_nodes),
            latency: f.params.link_latency as u64,
            vcs,
            escape_queues: f.params.switch.routing.escape_queues(),
            ins,
            down,
            outputs,
            first: first.clone(),
            arn: None,
            out_row,
            vc_ptr: vec![0; owned * stride],
            voqs: vec![Voq::EMPTY; owned * vcs * stride],
            stride,
            rngs: f.switches.iter().map(|s| s.route_rng().clone()).collect(),
            route_heads: vec![0; f.switches.len()],
            routes_due: [
                Vec::with_capacity(f.switches.len()),
                Vec::with_capacity(f.switches.len()),
            ],
            slots: Vec::new(),
            free: NIL,
            got: vec![0; n as usize * vcs],
            gone: vec![0; n as usize * vcs],
            stats: SwitchStats::default(),
            node_steps,
            node_back: [
                vec![Backward::default(); nodes],
                vec![Backward::default(); nodes],
            ],
            backs_due: [Vec::with_capacity(nodes), Vec::with_capacity(nodes)],
            part: part as u8,
            owner,
            outbox: (0..parts)
                .map(|_| Vec::with_capacity(parts::OUTBOX))
                .collect(),
            halt: None,
            last_progress: 0,
            head_progress: 0,
            samples: Vec::new(),
            rec: None,
            first_root: (u64::MAX, 0),
            escapes_due: Vec::new(),
            routed_now: Vec::with_capacity(n as usize),
            qcn: None,
            snoops: None,
            flows: None,
        };
        // Room for every owned input's buffers full of MTU-size packets and a link's worth of
        // heads on their way, so that stepping allocates no slot once built (smaller packets may
        // still grow the pool, to its working size).
        let p = &f.params;
        let per_input = (vcs * p.switch.vc_capacity as usize).div_ceil(p.mtu_flits.max(1) as usize)
            + p.link_latency as usize
            + 1;
        core.slots.reserve(owned * per_input);
        if p.switch.qcn.on() {
            core.qcn = Some(Box::new(qcn::QcnState::new(n as usize)));
        }
        if p.switch.snoop.on() {
            let ports: Vec<usize> = f.switches.iter().map(|s| s.ports()).collect();
            core.snoops = Some(Box::new(snoop::SnoopState::new(
                &p.switch, &ports, n as usize,
            )));
        }
        if p.switch.routing == RoutingMode::Flow {
            let entries = p.switch.route_cache_entries;
            core.flows = Some(Box::new(flow::FlowState::new(n as usize, entries)));
        }
        if p.switch.routing.uses_arn() {
            core.arn = Some(Box::new(arn::ArnState::new(f, n as usize, owned)));
        }
        for k in 0..nodes as u32 {
            if core.owns_node(k) {
                core.cal.push(0, Ev::new(Kind::Node, k));
            }
        }
        core
    }
}
