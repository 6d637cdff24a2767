//! The input buffer on hand-made packets: VOQ order, flit accounting, cut-through, departures
//! and the faults it reports.

use super::*;
use crate::wire::link::FEW_VCS;

fn pkt(id: u32, vc: u8, len: u16) -> Packet {
    Packet {
        id,
        vc,
        len,
        ..Packet::default()
    }
}

#[test]
fn an_escaping_head_moves_to_the_tail_of_its_escape_queue_with_its_flits() {
    let mut b = VoqBuffer::<FEW_VCS>::new(1, 3, 20, 4);
    // a (2 flits) routed to output 0 in cycle 1; e (3 flits) routed adaptively to output 1,
    // escape route 0, while its flits arrive.
    let a = b.arrive_head(pkt(1, 0, 2), 0).unwrap();
    b.route(a, 0, 0, 1);
    let e = b.arrive_head(pkt(2, 0, 3), 2).unwrap();
    b.route(e, 1, 0, 3);
    b.set_adaptive(e, 0, 10);
    assert_eq!((b.voq_occupancy(0, 3), b.voq_occupancy(1, 3)), (2, 2));
    assert_eq!(b.escape(0, 1, 0, 4), (e, 0));
    assert!(b.head(0, 1).is_none());
    let slot = b.slot(e);
    assert!(slot.reserve == 0 && slot.out == 0 && slot.ready == 4);
    // Behind a, with its two flits and the one still to come.
    assert_eq!((b.voq_occupancy(0, 3), b.voq_occupancy(1, 3)), (4, 0));
    assert_eq!(b.voq_occupancy(0, 4), 5);
    assert_eq!(b.due_for(0, 3), 1);
    assert_eq!(b.pop(0, 0), a);
    assert_eq!(b.pop(0, 0), e);
}

#[test]
fn voq_fifo_and_accounting() {
    let mut b = VoqBuffer::<FEW_VCS>::new(2, 3, 10, 4);
    // Packet a (2 flits) arrives in cycles 1 and 2, is routed in 2.
    let a = b.arrive_head(pkt(1, 0, 2), 1).unwrap();
    assert_eq!(b.occupancy(0, 1), 1);
    assert_eq!(b.voq_occupancy(2, 1), 0, "not routed yet");
    b.route(a, 2, 0, 3);
    assert_eq!(b.voq_occupancy(2, 1), 1);
    assert_eq!(b.voq_occupancy(2, 2), 2);
    assert_eq!(b.due_for(2, 1), 1);
    assert_eq!(b.due_for(2, 2), 0);
    let c = b.arrive_head(pkt(2, 0, 1), 3).unwrap();
    b.route(c, 2, 0, 5);
    assert_eq!(b.received(0, 3), 3);
    assert_eq!(b.head(0, 2).unwrap().0, a);
    assert_eq!(b.pop(0, 2), a);
    assert_eq!(b.head(0, 2).unwrap().0, c);
    // Packet a leaves in cycles 10 and 11.
    assert_eq!(b.start_departure(a, 10), Some(0));
    assert_eq!(b.occupancy(0, 9), 3);
    for t in 9..=11 {
        let each: [u16; FEW_VCS] = std::array::from_fn(|v| b.occupancy(v, t));
        assert_eq!(b.occupancies(t), each, "cycle {t}");
    }
    assert_eq!(b.voq_occupancy(2, 10), 2);
    assert_eq!(b.vc_voq_occupancy(0, 2, 10), 2);
    assert_eq!(b.occupancy(1, 11), 0);
    assert_eq!(b.finish_departure(2, 11), Some(0));
    assert_eq!(b.occupancy(0, 11), 1);
    assert_eq!(b.voq_occupancy(2, 11), 1);
    assert_eq!(b.packets(), 1);
}

#[test]
fn cut_through_follows_the_arrival() {
    let mut b = VoqBuffer::<FEW_VCS>::new(1, 1, 10, 2);
    let a = b.arrive_head(pkt(1, 0, 3), 5).unwrap();
    assert_eq!(b.start_departure(a, 4), None, "head not here yet");
    b.route(a, 0, 0, 6);
    b.pop(0, 0);
    // Leaves in 6..8 while arriving in 5..7.
    assert!(b.start_departure(a, 6).is_some());
    assert_eq!(b.occupancy(0, 6), 1);
    assert_eq!(b.occupancy(0, 7), 1);
    assert_eq!(b.finish_departure(0, 8), Some(0));
    assert_eq!(b.occupancy(0, 8), 0);
    assert_eq!(b.received(0, 8), 3);
    assert_eq!(b.packets(), 0);
}

#[test]
fn departures_free_room_for_arrivals() {
    let mut b = VoqBuffer::<FEW_VCS>::new(1, 2, 4, 4);
    let a = b.arrive_head(pkt(1, 0, 4), 1).unwrap();
    b.route(a, 1, 0, 2);
    b.pop(0, 1);
    b.start_departure(a, 6);
    assert_eq!(
        b.arrive_head(pkt(2, 0, 2), 6),
        Err(ArrivalFault::Overflow),
        "full until a flit has left"
    );
    assert!(b.arrive_head(pkt(2, 0, 2), 7).is_ok());
    assert_eq!(b.occupancy(0, 7), 3);
    assert_eq!(b.occupancy(0, 9), 2);
}

#[test]
fn heads_too_early_full_pools_and_unknown_vcs_are_reported() {
    let mut b = VoqBuffer::<FEW_VCS>::new(1, 1, 10, 1);
    assert_eq!(b.arrive_head(pkt(1, 1, 2), 1), Err(ArrivalFault::NoSuchVc));
    b.arrive_head(pkt(1, 0, 2), 1).unwrap();
    assert_eq!(
        b.arrive_head(pkt(2, 0, 1), 2),
        Err(ArrivalFault::StillArriving { id: 1, left: 1 })
    );
    assert_eq!(b.arrive_head(pkt(2, 0, 1), 3), Err(ArrivalFault::PoolFull));
}
