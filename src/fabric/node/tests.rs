//! Unit tests of `node`.

use super::*;
use crate::switch::{QueuingScheme, RoutingMode};
use crate::wire::link::FEW_VCS;
use proptest::prelude::*;

proptest! {
    /// The source's draws taken ahead give the messages of drawing every flow in every
    /// cycle: same cycles, same destinations, same order, same stalls.
    #[test]
    fn draws_ahead_give_the_messages_of_drawing_cycle_by_cycle(
        flows in prop::collection::vec(
            (0u64..3000, 0u64..3000, 0.0f64..0.05, prop::bool::ANY),
            1..5,
        ),
        seed in 0u64..1000,
    ) {
        let params = SwitchParams::with_paper_ratios(RoutingMode::DModK, 100, 10);
        let flows: Vec<Flow> = flows
            .iter()
            .map(|&(start, len, rate, uniform)| Flow {
                dest: if uniform { Destination::Uniform } else { Destination::Node(3) },
                rate,
                message_flits: 64,
                start,
                stop: start + len,
                hot: false,
            })
            .collect();
        let mut node = EndNode::<FEW_VCS>::new(1, 8, 0, 1, &params, 64, &flows, seed, false);
        let mut reference = EndNode::<FEW_VCS>::new(1, 8, 0, 1, &params, 64, &flows, seed, false);
        let mut got = Vec::new();
        let mut want = Vec::new();
        for now in 0..8000 {
            node.generate(now);
            // The reference draws for every active flow in every cycle.
            for k in 0..reference.flows.len() {
                if reference.draws(k, now) {
                    reference.make_message(k, now);
                }
            }
            // Keep the queues from filling up, and record what was queued.
            while !node.queue.is_empty() {
                let p = node.take(0, now);
                got.push((p.injected, p.dlid, p.id));
            }
            while !reference.queue.is_empty() {
                let p = reference.take(0, now);
                want.push((p.injected, p.dlid, p.id));
            }
        }
        prop_assert_eq!(got, want);
        prop_assert_eq!(node.stats.generated_packets, reference.stats.generated_packets);
    }
}

proptest! {
    /// The HCA's send scheduler over a random send memory (two regular VCs and the AFC, some
    /// destinations isolated, some channels short of credits): a queue pair's packets leave in
    /// order, and nothing starts only when the oldest packet of every channel lacks room.
    #[test]
    fn queue_pairs_leave_in_order_and_only_full_channels_wait(
        queued in prop::collection::vec((0u32..6, 1u16..=8), 0..40),
        isolated in prop::collection::vec(0u32..6, 0..3),
        spent in prop::collection::vec(0u16..=16, 3),
        afc_last in prop::bool::ANY,
    ) {
        let mut params = SwitchParams::with_paper_ratios(RoutingMode::ArnAfi, 16, 10);
        params.queuing = QueuingScheme::Dbbm { vcs: 2 };
        let afc = params.afc().unwrap_or(0);
        let mut node = EndNode::<FEW_VCS>::new(7, 8, 0, 1, &params, 8, &[], 1, true);
        let now = 100;
        for (k, &(dest, len)) in queued.iter().enumerate() {
            prop_assert!(node.has_room(dest, 1));
            node.post(dest, len, k as u32, (PacketFlags::default(), 0), now);
        }
        for &d in &isolated {
            node.consume_arn(ArnInfo { dest: d as u16, vc: params.queuing.vc_for(7, d), ..ArnInfo::default() }, now - 10);
        }
        for (vc, &n) in spent.iter().enumerate() {
            node.credits.start_sending(vc, 0, n);
            node.credits.finish_sending(vc);
        }
        node.afc_last = afc_last;
        let fits = |node: &EndNode<FEW_VCS>, p: &Packet| {
            let ch = if node.isolates(p, now) { afc } else { p.vc };
            node.credits.credits(ch as usize, now - 1) >= p.len
        };
        let channel = |node: &EndNode<FEW_VCS>, p: &Packet| if node.isolates(p, now) { afc } else { p.vc };
        match node.pick(now) {
            None => {
                // Every channel's oldest packet lacks room.
                for (i, p) in node.queue.iter().enumerate() {
                    let oldest = node.queue.iter().take(i).all(|q| channel(&node, q) != channel(&node, p));
                    prop_assert!(!oldest || !fits(&node, p), "packet {i} could start");
                }
            }
            Some((i, from_afc)) => {
                let before: Vec<Packet> = node.queue.iter().copied().collect();
                let p = before[i];
                // The oldest fitting channel head of its kind; the other kind only when it went
                // last.
                let heads: Vec<usize> = (0..before.len())
                    .filter(|&k| before[..k].iter().all(|q| channel(&node, q) != channel(&node, &before[k])))
                    .filter(|&k| fits(&node, &before[k]))
                    .collect();
                let first_of = |afc_kind: bool| heads.iter().copied().find(|&k| node.isolates(&before[k], now) == afc_kind);
                prop_assert_eq!(Some(i), first_of(from_afc));
                if first_of(!from_afc).is_some() {
                    prop_assert_eq!(afc_last, !from_afc);
                }
                prop_assert_eq!(from_afc, node.isolates(&p, now));
                prop_assert!(fits(&node, &p));
                // No older packet of its queue pair, nor of its channel.
                prop_assert!(before[..i].iter().all(|q| q.dlid != p.dlid));
                prop_assert!(before[..i].iter().all(|q| channel(&node, q) != channel(&node, &p)));
                let took = node.take(i, now);
                prop_assert_eq!(took, p);
                let after: Vec<Packet> = node.queue.iter().copied().collect();
                let mut want = before.clone();
                want.remove(i);
                prop_assert_eq!(after, want);
            }
        }
    }
}

proptest! {
    /// Packets taken one after another, as the scheduler picks them, while ARN entries expire
    /// and new ones are consumed: whenever the channel heads are held, they are those a scan of
    /// the send memory finds, and every pick is the oldest fitting head.
    #[test]
    fn channel_heads_kept_across_takes_are_those_of_a_scan(
        queued in prop::collection::vec((0u32..6, 1u16..=8), 0..60),
        entries in prop::collection::vec(0u32..6, 0..4),
        arrivals in prop::collection::vec((0u64..60, 0u32..6), 0..6),
        posted in prop::collection::vec((0u64..60, 0u32..6), 0..10),
    ) {
        // Credits for every packet queued here, and entries living 12 cycles.
        let mut params = SwitchParams::with_paper_ratios(RoutingMode::ArnAfi, 1024, 20);
        params.queuing = QueuingScheme::Dbbm { vcs: 2 };
        params.arn_ttl = 12;
        let vc_of = |d: u32| params.queuing.vc_for(7, d);
        let mut node = EndNode::<FEW_VCS>::new(7, 8, 0, 1, &params, 8, &[], 1, true);
        for (k, &(dest, len)) in queued.iter().enumerate() {
            node.post(dest, len, k as u32, (PacketFlags::default(), 0), 0);
        }
        for &d in &entries {
            node.consume_arn(ArnInfo { dest: d as u16, vc: vc_of(d), ..ArnInfo::default() }, 0);
        }
        for now in 1..60u64 {
            for &(_, d) in arrivals.iter().filter(|a| a.0 == now) {
                node.consume_arn(ArnInfo { dest: d as u16, vc: vc_of(d), ..ArnInfo::default() }, now);
            }
            for &(_, d) in posted.iter().filter(|p| p.0 == now) {
                if node.has_room(d, 1) {
                    node.post(d, 4, 1000 + now as u32, (PacketFlags::default(), 0), now);
                }
            }
            // Credits never run short here: every cycle takes what the scheduler picks.
            let Some((i, from_afc)) = node.pick(now) else {
                prop_assert!(node.queue.is_empty(), "nothing picked from {} packets at {}", node.queue.len(), now);
                continue;
            };
            let p = *node.queue.get(i).unwrap();
            prop_assert_eq!(from_afc, node.isolates(&p, now));
            let took = node.take(i, now);
            prop_assert_eq!(took, p);
            if node.heads.hold(now) {
                prop_assert_eq!(&node.heads.list, &node.scan_heads(now), "heads after a take at {}", now);
            }
        }
    }
}

proptest! {
    /// The send memory's room, shared or split per VC (DBBM over 3 VCs): a message is posted
    /// only when the memory, or its VC's part of it, and its queue pair have room for all its
    /// packets, whatever was posted and taken before.
    #[test]
    fn the_send_memory_has_room_as_its_parts_say(
        ops in prop::collection::vec((0u32..6, 1usize..=40, prop::bool::ANY), 0..80),
        per_vc in prop::bool::ANY,
    ) {
        let mut params = SwitchParams::with_paper_ratios(RoutingMode::DModK, 16, 10);
        params.queuing = QueuingScheme::Dbbm { vcs: 3 };
        let mut node = EndNode::<FEW_VCS>::new(7, 8, 0, 1, &params, 8, &[], 1, false);
        node.set_send_memory(if per_vc { SendMemory::PerVc } else { SendMemory::Shared });
        for (k, &(dest, packets, take)) in ops.iter().enumerate() {
            if take {
                if !node.queue.is_empty() {
                    node.take(k % node.queue.len(), 100);
                }
                continue;
            }
            let vc = params.queuing.vc_for(7, dest);
            let count = |f: &dyn Fn(&Packet) -> bool| node.queue.iter().filter(|p| f(p)).count();
            let on_vc = count(&|p| p.orig_vc == vc);
            let in_qp = count(&|p| (p.dlid >> node.lmc) as u32 == dest);
            let room = node.queue.len() + packets <= SOURCE_QUEUE
                && in_qp + packets <= QP_DEPTH
                && (!per_vc || on_vc + packets <= SOURCE_QUEUE / 3);
            prop_assert_eq!(node.has_room(dest, packets), room, "op {}", k);
            if room {
                for _ in 0..packets {
                    node.post(dest, 8, k as u32, (PacketFlags::default(), 0), 100);
                }
            }
        }
    }
}
