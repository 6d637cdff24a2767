//! Unit tests of `link`.

use super::*;

#[test]
fn latency_is_exact_in_both_directions() {
    for lat in [1u32, 2, 6] {
        let mut ch = Channel::<MAX_VCS>::new(lat);
        let f = Flit {
            pkt: Packet {
                len: 1,
                ..Packet::default()
            },
            index: 0,
        };
        ch.send_flit(10, f);
        let mut b = Backward::<MAX_VCS>::default();
        b.start_stream(3, 2);
        ch.send_back(10, b);
        for t in 10..10 + lat as u64 {
            assert_eq!(ch.recv_flit(t), None, "latency {lat}, cycle {t}");
            assert!(ch.recv_back(t).is_none());
            assert_eq!(ch.flits_in_flight(t).count(), 1);
            assert_eq!(ch.credits_in_flight(t, 3), 2);
        }
        assert_eq!(ch.recv_flit(10 + lat as u64), Some(f));
        assert_eq!(ch.recv_back(10 + lat as u64).unwrap().start_flits[3], 2);
        assert_eq!(ch.flits_in_flight(11 + lat as u64).count(), 0);
        assert_eq!(ch.recv_flit(11 + lat as u64), None);
    }
}

#[test]
fn a_window_of_sends_leaves_the_window_being_read_intact() {
    let flit = |t: u64| Flit {
        pkt: Packet {
            len: 1000,
            ..Packet::default()
        },
        index: t as u16,
    };
    for lat in [1u64, 3, 6] {
        let mut ch = Channel::<MAX_VCS>::new(lat as u32);
        // Windows of `lat` cycles: the sender steps its whole window first, then the reader.
        for t0 in (0..40).step_by(lat as usize) {
            for t in t0..t0 + lat {
                ch.send_flit(t, flit(t));
            }
            for t in t0..t0 + lat {
                let got = ch.recv_flit(t).map(|f| f.index as u64);
                assert_eq!(got, t.checked_sub(lat), "latency {lat}, cycle {t}");
            }
        }
    }
}

#[test]
fn back_to_back_flits_do_not_collide() {
    let mut ch = Channel::<MAX_VCS>::new(3);
    for t in 0..20u64 {
        let f = Flit {
            pkt: Packet {
                len: 100,
                ..Packet::default()
            },
            index: t as u16,
        };
        // The reader of cycle t may run before or after the writer of cycle t.
        if t >= 3 {
            assert_eq!(ch.recv_flit(t).unwrap().index, (t - 3) as u16);
        }
        ch.send_flit(t, f);
        if t >= 3 {
            assert_eq!(ch.recv_flit(t).unwrap().index, (t - 3) as u16);
        }
    }
}

proptest::proptest! {
    /// Start and stop records, decoded by `CreditReturns`, give every cycle exactly the
    /// credits a per-cycle return would carry, whatever the streams' lengths and overlaps.
    #[test]
    fn credit_streams_return_what_a_per_cycle_return_would(
        packets in proptest::collection::vec((0u64..200, 1u16..80, 0usize..MAX_VCS), 0..40)
    ) {
        const T: usize = 300;
        let mut per_cycle = vec![[0u8; MAX_VCS]; T];
        let mut records = vec![Backward::<MAX_VCS>::default(); T];
        for &(start, len, vc) in &packets {
            for t in start..start + len as u64 {
                per_cycle[t as usize][vc] += 1;
            }
            records[start as usize].start_stream(vc, len);
            records[(start + len as u64 - 1) as usize].stop_stream(vc);
        }
        let mut r = CreditReturns::<MAX_VCS>::default();
        let mut owed = [0u64; MAX_VCS];
        for t in 0..T {
            if records[t].has_credits() {
                r.arrive(&records[t]);
            }
            for v in 0..MAX_VCS {
                owed[v] += records[t].start_flits[v] as u64;
                proptest::prop_assert_eq!(r.now(v), per_cycle[t][v], "cycle {}, VC {}", t, v);
                owed[v] -= per_cycle[t][v] as u64;
            }
            if r.any() {
                let more = r.end_cycle();
                proptest::prop_assert!(more.is_some());
                proptest::prop_assert_eq!(more, Some(r.any()));
            }
            for (v, &o) in owed.iter().enumerate() {
                proptest::prop_assert_eq!(r.pending(v), o);
            }
        }
    }
}
