//! Unit tests of `node`.

use super::*;
use crate::switch::RoutingMode;
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
            while let Some(p) = node.queue.pop_front() {
                got.push((p.injected, p.dlid, p.id));
            }
            while let Some(p) = reference.queue.pop_front() {
                want.push((p.injected, p.dlid, p.id));
            }
        }
        prop_assert_eq!(got, want);
        prop_assert_eq!(node.stats.generated_packets, reference.stats.generated_packets);
    }
}
