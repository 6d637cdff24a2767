//! Trace replay on whole fabrics: every message arrives, ranks wait for what they receive, the
//! same on any number of threads.

use super::tests::small_params;
use super::topology::Topology;
use super::*;
use crate::config::TimeBase;
use crate::replay::{Mapping, Replayer};
use crate::switch::RoutingMode;
use crate::wire::link::FEW_VCS;

const TB: TimeBase = TimeBase {
    flit_bytes: 64,
    link_gbps: 100.0,
};

/// A 2-ary 3-tree (8 nodes) running `trace` under `routing`, ranks placed by `mapping`, on
/// `threads` threads, until every rank has finished (or `limit` cycles).
fn replay(
    trace: &str,
    mapping: impl Fn(u32) -> Mapping,
    routing: RoutingMode,
    threads: usize,
    limit: u64,
) -> Fabric<FEW_VCS> {
    replay_on(Engine::Event, trace, mapping, routing, threads, limit)
}

/// [`replay`] on `engine`.
fn replay_on(
    engine: Engine,
    trace: &str,
    mapping: impl Fn(u32) -> Mapping,
    routing: RoutingMode,
    threads: usize,
    limit: u64,
) -> Fabric<FEW_VCS> {
    let program = crate::replay::load(trace, "t.txt").unwrap_or_else(|e| panic!("{e}"));
    let topo = Topology::kary_ntree(2, 3);
    let mut f = Fabric::<FEW_VCS>::build(
        &topo,
        small_params(routing, 3),
        &vec![Vec::new(); topo.nodes as usize],
    )
    .unwrap();
    let ranks = Replayer::build_all(&program, &mapping(program.ranks()), &TB).unwrap();
    f.attach_replay(ranks).unwrap();
    f.set_engine(engine);
    f.set_threads(threads);
    while !f.replay_finished() && f.now() < limit {
        f.run(100, &mut ()).unwrap_or_else(|v| panic!("{v}"));
    }
    f
}

/// Each rank's finish cycle.
fn finishes(f: &Fabric<FEW_VCS>) -> Vec<(u32, Option<u64>)> {
    let mut v: Vec<_> = f
        .nodes()
        .iter()
        .flat_map(|n| {
            n.replay()
                .map(|r| r.ranks().rank_finishes().collect::<Vec<_>>())
        })
        .flatten()
        .collect();
    v.sort();
    v
}

/// `n` round trips of one 16-flit packet between rank 0 on node 0 and rank 1 on node 7.
fn ping_pong(n: usize) -> String {
    let mut t = String::from("ranks 2\n");
    for _ in 0..n {
        t += "0 send 1 1KB\n1 recv 0\n1 send 0 1KB\n0 recv 1\n";
    }
    t
}

/// A rank goes on only when its message is in: with an idle network, every round trip takes
/// the same time, so n round trips take n times one, and one takes at least the packet's flits
/// and the links' latencies of the six links there and back.
#[test]
fn round_trips_add_up_on_an_idle_fabric() {
    let far = |ranks| Mapping::from_file("0 0\n1 7\n", "m", ranks, 8).unwrap();
    let one = replay(&ping_pong(1), far, RoutingMode::DModK, 1, 100_000);
    let one = finishes(&one)[0].1.expect("rank 0 finishes");
    let ten = replay(&ping_pong(10), far, RoutingMode::DModK, 1, 100_000);
    let ten = finishes(&ten)[0].1.expect("rank 0 finishes");
    assert_eq!(ten, 10 * one, "one round trip {one} cycles");
    // Out through three switches and back: 2 x (6 links x 2 cycles + 16 flits).
    assert!(one >= 2 * (6 * 2 + 16), "{one}");
}

/// A halo exchange and allreduces on 8 ranks: every message's packets are delivered, each once
/// (the packets counted at the nodes are those of the trace's messages), every rank finishes,
/// and under adaptive routing as well (packets of a message arrive in any order).
#[test]
fn every_message_of_a_trace_is_delivered() {
    let mut t = String::from("ranks 8\n");
    for i in 0..3 {
        for r in 0..8 {
            let (l, rt) = ((r + 7) % 8, (r + 1) % 8);
            t += &format!(
                "{r} compute 50ns\n{r} irecv {l} req=1 tag={i}\n{r} irecv {rt} req=2 tag={i}\n\
                 {r} isend {rt} 3000 req=3 tag={i}\n{r} isend {l} 3000 req=4 tag={i}\n{r} waitall\n"
            );
        }
        for r in 0..8 {
            t += &format!("{r} allreduce 4KB\n");
        }
    }
    let program = crate::replay::load(&t, "t.txt").unwrap();
    // 3000 bytes = 47 flits: 3 packets of 16 flits; a ring allreduce chunk of 512 bytes: 8 flits.
    let packets: u64 = program
        .messages()
        .iter()
        .map(|m| m.bytes.div_ceil(64).max(1).div_ceil(16))
        .sum();
    let flits: u64 = program
        .messages()
        .iter()
        .map(|m| m.bytes.div_ceil(64).max(1))
        .sum();
    for routing in [
        RoutingMode::DModK,
        RoutingMode::Oblivious,
        RoutingMode::ArnAfi,
    ] {
        let f = replay(&t, |r| Mapping::linear(r, 8).unwrap(), routing, 1, 200_000);
        assert!(f.replay_finished(), "{routing:?}: {:?}", finishes(&f));
        let n = f.totals().nodes;
        assert_eq!(n.delivered_packets, packets, "{routing:?}");
        assert_eq!(n.delivered_flits, flits, "{routing:?}");
        assert_eq!(n.generated_packets, packets, "{routing:?}");
        f.check().unwrap_or_else(|v| panic!("{v}"));
    }
}

/// Sixteen ranks on eight nodes (two per node, so some messages stay in a node), placed at
/// random: the same finish cycles on one thread and on two.
#[test]
fn a_replay_is_the_same_on_one_and_two_threads() {
    let mut t = String::from("ranks 16\n");
    for r in 0..16 {
        t += &format!("{r} compute {}ns\n", 20 * r);
    }
    for r in 0..16 {
        t += &format!("{r} alltoall 2KB\n{r} allreduce 8KB\n");
    }
    let map = |r| Mapping::random(r, 8, 5).unwrap();
    let one = replay(&t, map, RoutingMode::ArnAfi, 1, 400_000);
    let two = replay(&t, map, RoutingMode::ArnAfi, 2, 400_000);
    assert!(one.replay_finished());
    assert_eq!(finishes(&one), finishes(&two));
    assert_eq!(one.totals().nodes, two.totals().nodes);
}

/// The 16-rank trace above, with a compute phase of 2 ms in the middle (390,625 cycles with
/// nothing in flight), on the event engine on one and two threads: every rank finishes in the
/// cycle it does on the cycle engine, with the same counters.
#[test]
fn a_replay_on_the_event_engine_is_the_cycle_engines() {
    let mut t = String::from("ranks 16\n");
    for r in 0..16 {
        t += &format!("{r} compute {}ns\n{r} alltoall 2KB\n", 20 * r);
    }
    for r in 0..16 {
        t += &format!("{r} compute 2ms\n{r} allreduce 8KB\n");
    }
    let map = |r| Mapping::random(r, 8, 5).unwrap();
    let cycle = replay_on(Engine::Cycle, &t, map, RoutingMode::ArnAfi, 1, 1_000_000);
    assert!(cycle.replay_finished());
    for threads in [1, 2] {
        let event = replay_on(
            Engine::Event,
            &t,
            map,
            RoutingMode::ArnAfi,
            threads,
            1_000_000,
        );
        assert_eq!(finishes(&event), finishes(&cycle), "{threads} threads");
        assert_eq!(event.totals(), cycle.totals(), "{threads} threads");
        assert_eq!(event.now(), cycle.now());
        event.check().unwrap_or_else(|v| panic!("{v}"));
    }
}

/// The bundled halo trace written as an OTF2 archive through the OTF2 library, read back and
/// replayed: the same messages, and every rank finishes in the same cycle as from the text.
#[test]
fn an_otf2_archive_replays_as_its_text_does() {
    let text = crate::config::trace_keys::BUNDLED_TRACES[0].1;
    let trace = crate::replay::parse(text, "halo.txt").unwrap();
    let (_tmp, dir) = crate::scratch::folder("otf2-replay");
    let anchor = dir.join("halo.otf2");
    crate::replay::otf2::write(&trace, &anchor).unwrap_or_else(|e| {
        panic!("this test needs the OTF2 library (apt-get install libotf2-trace-dev): {e}")
    });
    let from_otf2 = crate::replay::otf2::load(&anchor).unwrap_or_else(|e| panic!("{e}"));
    let from_text = crate::replay::load(text, "halo.txt").unwrap();
    assert_eq!(from_otf2.messages().len(), from_text.messages().len());
    assert_eq!(from_otf2.total_bytes(), from_text.total_bytes());
    let run = |program: &crate::replay::Program| {
        let topo = Topology::kary_ntree(4, 2);
        let mut p = small_params(RoutingMode::DModK, 3);
        p.mtu_flits = 64;
        let mut f =
            Fabric::<FEW_VCS>::build(&topo, p, &vec![Vec::new(); topo.nodes as usize]).unwrap();
        let map = Mapping::linear(program.ranks(), topo.nodes).unwrap();
        f.attach_replay(Replayer::build_all(program, &map, &TB).unwrap())
            .unwrap();
        while !f.replay_finished() && f.now() < 1_000_000 {
            f.run(1000, &mut ()).unwrap_or_else(|v| panic!("{v}"));
        }
        finishes(&f)
    };
    let (a, b) = (run(&from_otf2), run(&from_text));
    assert!(a.iter().all(|r| r.1.is_some()), "{a:?}");
    assert_eq!(a, b);
}

/// Bernoulli traffic beside the ranks (as an incast beside an application): the other packets
/// reach nodes that run ranks without being counted as the ranks' messages, and every rank
/// finishes later than on the quiet fabric.
#[test]
fn ranks_finish_beside_other_traffic_and_later() {
    let trace = ping_pong(20);
    let program = crate::replay::load(&trace, "t.txt").unwrap();
    let run = |load: f64| {
        let topo = Topology::kary_ntree(2, 3);
        let flows = super::tests::uniform(topo.nodes, load, 1_000_000);
        let mut f =
            Fabric::<FEW_VCS>::build(&topo, small_params(RoutingMode::DModK, 3), &flows).unwrap();
        let map = Mapping::from_file("0 0\n1 7\n", "m", 2, 8).unwrap();
        f.attach_replay(Replayer::build_all(&program, &map, &TB).unwrap())
            .unwrap();
        while !f.replay_finished() && f.now() < 1_000_000 {
            f.run(100, &mut ()).unwrap_or_else(|v| panic!("{v}"));
        }
        (finishes(&f), f.totals().nodes.delivered_packets)
    };
    let (quiet, _) = run(0.0);
    let (busy, delivered) = run(0.8);
    assert!(busy.iter().all(|r| r.1.is_some()), "{busy:?}");
    assert!(
        delivered > 40,
        "the other traffic was delivered too: {delivered}"
    );
    assert!(busy[0].1 > quiet[0].1, "{busy:?} against {quiet:?}");
}
