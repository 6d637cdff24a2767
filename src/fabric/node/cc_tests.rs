//! Directed tests of the HCA's congestion control against hand-computed indices and spacings.

use super::*;
use crate::switch::{RoutingMode, SwitchParams};
use crate::wire::link::FEW_VCS;

fn cfg() -> CaCongestion {
    CaCongestion {
        ccti_increase: 3,
        ccti_limit: 10,
        ccti_timer: 100,
        ipd_step: 4,
        limiters: LIMITERS,
    }
}

#[test]
fn becns_raise_the_index_the_timer_lowers_it_and_the_limit_caps_it() {
    let mut cc = NodeCc::new(cfg());
    assert_eq!(cc.index(5, 0), 0);
    assert!(cc.becn(5, 0));
    assert_eq!(cc.index(5, 99), 3);
    assert!(cc.becn(5, 50));
    assert_eq!(cc.index(5, 50), 6);
    // The timer expires at cycle 100: 6 - 1 + 3.
    assert!(cc.becn(5, 150));
    assert_eq!(cc.index(5, 150), 8);
    assert!(cc.becn(5, 160));
    assert_eq!(cc.index(5, 160), 10, "capped at CCTI_Limit");
    assert_eq!(cc.index(5, 260), 9);
    assert_eq!(cc.index(5, 1000), 1);
    assert_eq!(cc.index(5, 1100), 0);
    assert_eq!(cc.index(6, 1100), 0, "another queue pair is not slowed");
}

#[test]
fn a_queue_pair_waits_its_tail_and_the_delay_of_its_index() {
    let mut cc = NodeCc::new(cfg());
    cc.becn(5, 0);
    cc.becn(5, 0);
    // Index 6: 6 x 4 cycles after the tail of an 8-flit packet started in cycle 10.
    cc.started(5, 8, 10);
    assert!(cc.holds(5, 10 + 8 + 24 - 1));
    assert!(!cc.holds(5, 10 + 8 + 24));
    assert!(!cc.holds(7, 20));
    assert_eq!(cc.next_release(20), 42);
    assert!(cc.holds_any(41) && !cc.holds_any(42));
    // A queue pair without an entry is never held.
    cc.started(7, 8, 10);
    assert!(!cc.holds(7, 11));
}

#[test]
fn limiters_are_reused_once_idle_and_a_becn_beyond_them_is_dropped() {
    let mut cc = NodeCc::new(cfg());
    for d in 0..LIMITERS as u32 {
        assert!(cc.becn(d, 0));
    }
    assert!(!cc.becn(1000, 0), "every entry slows its queue pair");
    // Index 3 falls to 0 by the third expiry (cycle 300).
    assert!(cc.becn(1000, 300));
    assert_eq!(cc.index(1000, 300), 3);
}

#[test]
fn cnps_wait_in_order_and_a_full_queue_leaves_a_fecn_unanswered() {
    let mut cc = NodeCc::new(cfg());
    for s in 0..CNP_QUEUE as u32 {
        assert!(cc.answer(s));
    }
    assert!(!cc.answer(99));
    assert_eq!(cc.cnp_due(), Some(0));
    cc.cnp_sent();
    assert_eq!(cc.cnp_due(), Some(1));
}

/// A source with queue pair 3 at index 2 (step 4 cycles) and a saturating send memory of 8-flit
/// packets to nodes 3 and 4, posted alternately: queue pair 3 starts a packet every 8 + 2 x 4 =
/// 16 cycles; queue pair 4, not slowed, takes the link in between, so nothing waits behind the
/// slowed queue pair.
#[test]
fn a_slowed_queue_pair_is_spaced_by_its_delay_and_holds_back_no_other() {
    let params = SwitchParams::with_paper_ratios(RoutingMode::DModK, 100, 10);
    let mut node = EndNode::<FEW_VCS>::new(1, 8, 0, 1, &params, 8, &[], 1, false);
    node.set_congestion_control(CaCongestion {
        ccti_timer: 1 << 40,
        ..cfg()
    });
    for k in 0..40 {
        node.post(3 + k % 2, 8, k, (PacketFlags::default(), 0), 0);
    }
    let becn = Packet {
        src: 3,
        len: 1,
        flags: PacketFlags::BECN,
        ..Packet::default()
    };
    // A BECN raises the index by 3; set to 2 for the spacing above (the timer never expires).
    assert!(node.cc_received(&becn, 0));
    assert_eq!(node.ccti(3, 0), Some(3));
    node.cc.as_deref_mut().unwrap().limiters[0].ccti = 2;
    let (mut free_at, mut starts) = (0, Vec::new());
    for now in 0..160 {
        if now < free_at {
            continue;
        }
        let Some((i, _)) = node.pick(now) else {
            continue;
        };
        let pkt = node.take(i, now);
        node.cc_started(&pkt, now);
        starts.push((now, pkt.dlid));
        free_at = now + pkt.len as u64;
    }
    let to3: Vec<u64> = starts.iter().filter(|s| s.1 == 3).map(|s| s.0).collect();
    let to4: Vec<u64> = starts.iter().filter(|s| s.1 == 4).map(|s| s.0).collect();
    assert_eq!(to3, (0..10).map(|k| 16 * k).collect::<Vec<_>>());
    assert_eq!(to4, (0..10).map(|k| 8 + 16 * k).collect::<Vec<_>>());
    // With only queue pair 3 left, an idle injector wakes when it is released.
    let mut lone = EndNode::<FEW_VCS>::new(1, 8, 0, 1, &params, 8, &[], 1, false);
    lone.set_congestion_control(cfg());
    lone.post(3, 8, 0, (PacketFlags::default(), 0), 0);
    lone.cc_received(&becn, 0);
    let (i, _) = lone.pick(0).expect("free at first");
    let first = lone.take(i, 0);
    lone.cc_started(&first, 0);
    lone.post(3, 8, 1, (PacketFlags::default(), 0), 0);
    assert_eq!(lone.pick(8), None);
    assert_eq!(lone.start_possible(8), 8 + 12);
    assert!(lone.pick(20).is_some());
}

/// A data packet marked FECN is answered by a CNP to its source, sent ahead of the data waiting
/// and as soon as its VC has a credit; the CNP is one flit with BECN to the source's
/// deterministic route.
#[test]
fn a_fecn_is_answered_by_a_one_flit_cnp_to_the_source() {
    let params = SwitchParams::with_paper_ratios(RoutingMode::DModK, 100, 10);
    let mut node = EndNode::<FEW_VCS>::new(2, 8, 0, 1, &params, 8, &[], 1, false);
    node.set_congestion_control(cfg());
    let marked = Packet {
        src: 6,
        len: 8,
        flags: PacketFlags::FECN,
        ..Packet::default()
    };
    assert!(!node.cc_received(&marked, 5), "data is delivered");
    assert_eq!(node.stats.fecns_received, 1);
    let cnp = node.cnp_to_start(6).expect("a credit is free");
    assert_eq!((cnp.src, cnp.dlid, cnp.len), (2, 6, 1));
    assert_eq!(cnp.flags, PacketFlags::BECN);
}
