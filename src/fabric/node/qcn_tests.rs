//! Directed tests of the QCN reaction point against hand-computed rates and spacings.

use super::cc::Limiters;
use super::qcn::{NodeQcn, QcnReaction, RATE_ONE};

/// Gd = 1/128 (a cut of |Fb| x 8192 / 2^20 of the rate: cr x 63 / 128 at |Fb| = 63), F = 5,
/// R_AI = 4096, R_HAI = 32768, the byte counter and timer as given.
fn cfg(bc_limit: u64, timer: u64) -> QcnReaction {
    QcnReaction {
        gd: 512,
        bc_limit,
        timer,
        fast_recovery: 5,
        r_ai: 4096,
        r_hai: 32768,
        min_rate: 1,
        limiters: 4,
    }
}

#[test]
fn a_cnm_cuts_the_rate_and_spaces_the_queue_pair() {
    let mut q = NodeQcn::new(cfg(1000, 10_000));
    assert!(q.cnm(5, 63, 0));
    // 1048576 - 1048576 x 512 x 63 / 65536 = 1048576 - 516096 = 532480; TR keeps the old rate.
    assert_eq!(q.rate(5), Some(532_480));
    assert_eq!(q.target(5), Some(RATE_ONE));
    // 8 flits at 532480 / 2^20: 8388608 / 532480 = 15.75, rounded up to 16 cycles.
    assert!(q.started(5, 8, 10));
    assert!(q.holds(5, 25));
    assert!(!q.holds(5, 26));
    assert_eq!(q.next_release(10), 26);
    assert!(q.holds_any(25) && !q.holds_any(26));
    assert_eq!(q.next_release(26), u64::MAX);
    // Another queue pair has no limiter: never held, never spaced.
    assert!(!q.holds(6, 20));
    assert!(!q.started(6, 8, 10));
    assert!(!q.holds(6, 11));
    assert_eq!(q.rate(6), None);
}

#[test]
fn the_byte_counter_recovers_fast_then_actively_then_hyper_actively_until_released() {
    let mut q = NodeQcn::new(cfg(16, 1000));
    // Two CNMs: CR 532480, then TR 532480 and CR 532480 - 532480 x 63 / 128 = 270400.
    q.cnm(7, 63, 0);
    q.cnm(7, 63, 0);
    assert_eq!((q.rate(7), q.target(7)), (Some(270_400), Some(532_480)));
    let mut rates = Vec::new();
    for i in 1..=11 {
        assert!(q.started(7, 8, 40 * i));
        rates.push((q.rate(7).unwrap(), q.target(7).unwrap()));
    }
    // Fast recovery: an event every 16 flits (2 packets), CR halves its distance to TR:
    // (270400 + 532480) / 2 = 401440, then 466960, 499720, 516100. The fifth event is active
    // increase: TR 532480 + 4096 = 536576, CR (516100 + 536576) / 2 = 526338; the period is now
    // 8 flits, so the next packet is an event too: TR 540672, CR 1067010 / 2 = 533505.
    let expected = [
        (270_400, 532_480),
        (401_440, 532_480),
        (401_440, 532_480),
        (466_960, 532_480),
        (466_960, 532_480),
        (499_720, 532_480),
        (499_720, 532_480),
        (516_100, 532_480),
        (516_100, 532_480),
        (526_338, 536_576),
        (533_505, 540_672),
    ];
    assert_eq!(rates, expected);
    // Timer expiries at 1000..4000 are active increase (the byte stage is past F): TR + 4096
    // each; CR (533505 + 544768) / 2 = 539136.5 -> 539137, then 544001, 548481, 552769 (TR
    // 557056). The fifth, at 5000, makes both stages F: hyper, TR + 32768 = 589824, CR
    // 1142593 / 2 -> 571297; the next comes 500 later, at 5500, both stages 6: TR + 2 x 32768 =
    // 655360, CR 1226657 / 2 -> 613329.
    assert!(q.started(7, 8, 5500));
    // The packet at 5500 is byte event 7 (min(7, 6) - 5 + 1 = 2 steps): TR 720896, CR
    // (613329 + 720896) / 2 = 667112.5 -> 667113.
    assert_eq!((q.rate(7), q.target(7)), (Some(667_113), Some(720_896)));
    // Each further packet adds 2 x 32768: TR 786432, 851968, 917504, 983040, 1048576; CR
    // 726773, 789371, 853438, 918239, 983408.
    for (i, cr) in [726_773, 789_371, 853_438, 918_239, 983_408]
        .into_iter()
        .enumerate()
    {
        assert!(q.started(7, 8, 5540 + 40 * i as u64));
        assert_eq!(q.rate(7), Some(cr));
    }
    assert_eq!(q.target(7), Some(RATE_ONE));
    // At 5740: CR (983408 + 1048576 + 65536) / 2 is past the line rate, so the limiter is
    // released; the packet was still spaced at 983408: 8388608 / 983408 = 8.53 -> 9 cycles.
    assert!(q.started(7, 8, 5740));
    assert_eq!(q.rate(7), None);
    assert!(q.holds(7, 5748) && !q.holds(7, 5749));
    assert!(!q.started(7, 8, 5749), "a released limiter spaces nothing");
    assert!(!q.holds(7, 5750));
}

#[test]
fn the_timer_recovers_every_period_then_every_half_period() {
    let mut q = NodeQcn::new(cfg(1_000_000, 100));
    q.cnm(7, 63, 1000);
    q.cnm(7, 63, 1000);
    let mut lazy = q.clone();
    // Expiries at 1100, 1200, 1300, 1400 (fast recovery), then 1500 (the fifth: active
    // increase, TR + 4096) and every 50 cycles from there. Same rates as the byte counter's.
    for (now, cr, tr) in [
        (1099, 270_400, 532_480),
        (1100, 401_440, 532_480),
        (1199, 401_440, 532_480),
        (1200, 466_960, 532_480),
        (1300, 499_720, 532_480),
        (1399, 499_720, 532_480),
        (1400, 516_100, 532_480),
        (1500, 526_338, 536_576),
        (1549, 526_338, 536_576),
        (1550, 533_505, 540_672),
        (1600, 539_137, 544_768),
        // Two expiries at once (1650, 1700): 544001 / 548864, then 548481 / 552960.
        (1700, 548_481, 552_960),
    ] {
        assert!(q.started(7, 1, now));
        assert_eq!(
            (q.rate(7), q.target(7)),
            (Some(cr), Some(tr)),
            "cycle {now}"
        );
    }
    // The timer runs while nothing is sent: one look at 1700 finds the same rate.
    assert!(lazy.started(7, 1, 1700));
    assert_eq!(lazy.rate(7), Some(548_481));
}

#[test]
fn a_second_cnm_resets_the_target_and_the_stages() {
    let mut q = NodeQcn::new(cfg(16, 1000));
    q.cnm(7, 63, 0);
    // Ten packets: four fast-recovery events (CR 790528, 919552, 984064, 1016320) and an
    // active one: CR (1016320 + 1052672) / 2 = 1034496, TR capped at the line rate.
    for i in 1..=10 {
        q.started(7, 8, 40 * i);
    }
    assert_eq!((q.rate(7), q.target(7)), (Some(1_034_496), Some(RATE_ONE)));
    // |Fb| = 32: TR 1034496, CR 1034496 - 1034496 x 32 / 128 = 775872.
    assert!(q.cnm(7, 32, 420));
    assert_eq!((q.rate(7), q.target(7)), (Some(775_872), Some(1_034_496)));
    // The byte counter restarts at 16 flits: no event after one packet ...
    q.started(7, 8, 440);
    assert_eq!(q.rate(7), Some(775_872));
    // ... and the event after two is fast recovery again (TR holds): (775872 + 1034496) / 2.
    q.started(7, 8, 480);
    assert_eq!((q.rate(7), q.target(7)), (Some(905_184), Some(1_034_496)));
    // The timer restarted at 420: nothing at 1000, its first expiry at 1420.
    q.started(7, 1, 1419);
    assert_eq!(q.rate(7), Some(905_184));
    q.started(7, 1, 1420);
    assert_eq!((q.rate(7), q.target(7)), (Some(969_840), Some(1_034_496)));
}

#[test]
fn a_full_table_drops_a_cnm_until_a_released_limiter_has_spaced_its_last_packet() {
    let mut q = NodeQcn::new(QcnReaction {
        limiters: 2,
        ..cfg(1000, 100)
    });
    // |Fb| = 1: CR 1048576 - 8192 = 1040384, back at the line rate by the timer's fifth expiry
    // (1044480, 1046528, 1047552, 1048064 at 100..400; at 500 TR + 4096 takes CR past it).
    assert!(q.cnm(1, 1, 0));
    assert!(q.cnm(2, 63, 0));
    assert!(!q.cnm(3, 63, 0), "both limiters slow their flows");
    // A packet at 495 at 1048064: 8388608 / 1048064 = 8.004 -> 9 cycles, next 504.
    assert!(q.started(1, 8, 495));
    assert!(!q.cnm(3, 63, 500), "released at 500 but still spacing");
    assert!(!q.cnm(3, 63, 503));
    assert!(q.cnm(3, 63, 504));
    assert_eq!(q.rate(3), Some(532_480));
    assert_eq!(q.rate(1), None);
    assert!(!q.started(1, 8, 504));
    // Destination 2 (CR 532480 at 0) is in active increase by 500: 1034496.
    assert_eq!(q.rate(2), Some(1_034_496));
}

#[test]
fn a_packet_longer_than_the_byte_counter_counts_every_flit_once() {
    let mut q = NodeQcn::new(cfg(16, 10_000));
    q.cnm(7, 63, 0);
    // 40 flits = 16 + 16 + 8: two events (CR 790528, 919552), 8 flits toward the third.
    assert!(q.started(7, 40, 0));
    assert_eq!(q.rate(7), Some(919_552));
    // Spaced at 532480: 41943040 / 532480 = 78.77 -> 79 cycles.
    assert!(q.holds(7, 78) && !q.holds(7, 79));
    q.started(7, 8, 100);
    assert_eq!(q.rate(7), Some(984_064));
}

#[test]
fn cnms_never_take_the_rate_below_the_least() {
    let mut q = NodeQcn::new(QcnReaction {
        min_rate: 100_000,
        ..cfg(1000, 100)
    });
    // 1048576 -> 532480 -> 270400 -> 270400 - 133087 = 137313 -> 137313 - 67583 = 69730,
    // floored at 100000, and there it stays.
    let mut rates = Vec::new();
    for _ in 0..5 {
        assert!(q.cnm(1, 63, 0));
        rates.push(q.rate(1).unwrap());
    }
    assert_eq!(rates, [532_480, 270_400, 137_313, 100_000, 100_000]);
    assert_eq!(q.target(1), Some(100_000));
}
