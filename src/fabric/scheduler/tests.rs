//! Unit tests of the scheduler's outboxes and arrival masks.

use super::*;
use crate::wire::Packet;
use crate::wire::link::{Arriving, Backward, Channel, Flit, LinkSend, MAX_VCS};

#[test]
fn outbox_writes_mark_the_receivers_for_the_arrival_cycle_only() {
    let none = Arriving::default();
    for shared in [false, true] {
        let mut chans = vec![Channel::<MAX_VCS>::new(3), Channel::<MAX_VCS>::new(3)];
        chans[0].set_ends((1, 4), (0, 2));
        chans[1].set_ends((1, 5), (2, 0));
        let arrivals = Arrivals::new(3, 3);
        let mut out = Outbox::new(2);
        let f = Flit {
            pkt: Packet {
                len: 1,
                ..Packet::default()
            },
            index: 0,
        };
        out.send_flit(7, 0, f);
        out.send_flit(7, 1, f);
        let mut b = Backward::<MAX_VCS>::default();
        b.stop_stream(0);
        out.send_back(7, 0, b);
        if shared {
            // SAFETY: one thread, nothing else touches the channels.
            unsafe { out.write_shared(SharedChannels::new(&mut chans), &arrivals) };
        } else {
            out.write_into(&mut chans, &arrivals);
        }
        for t in 7..10 {
            assert_eq!(arrivals.take(1, t), none, "cycle {t}");
            assert_eq!(arrivals.take(0, t), none, "cycle {t}");
        }
        assert_eq!(
            arrivals.take(1, 10),
            Arriving {
                flits: 1 << 4 | 1 << 5,
                back: 0
            }
        );
        assert_eq!(
            arrivals.take(0, 10),
            Arriving {
                flits: 0,
                back: 1 << 2
            }
        );
        assert_eq!(arrivals.take(2, 10), none, "unit 2 gets nothing");
        assert_eq!(arrivals.take(1, 10), none, "taking clears");
        assert_eq!(arrivals.take(1, 10 + 8), none, "a ring later, nothing");
        assert_eq!(chans[1].recv_flit(10), Some(f));
        assert_eq!(chans[0].recv_back(10).unwrap().stop[0], 1);
    }
}
