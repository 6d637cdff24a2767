//! When a switch may skip cycles: the tests that a cycle with nothing arriving would change no
//! register but the ARN table's TTLs and the CRT timers of detectors that hold, and the passing
//! of such cycles in one step. This is state kept for speed; the hardware registers are in the
//! switch itself.

use super::*;

/// A switch's state kept only to skip work: which ports have something to do and when, and the
/// detectors' inputs as last filled. All of it follows from the registers (buffers, credits,
/// detectors, ARN table, the routing stage); none of it is hardware state.
pub(super) struct SkipState {
    /// Per output: bit i set when input i holds a routed packet for it, in any VC (activity
    /// tracking: arbitration looks only at these inputs).
    pub(super) waiting: [u64; MAX_PORTS],
    /// Per output: bit i set when input i's VOQ for it may hold more than HCDTh flits before its
    /// next change: its occupancy plus the flits still to come of a packet arriving for it is
    /// above HCDTh. Set at every event that can raise the VOQ; leaving flits clear bits only when
    /// the detectors' skip test refreshes them.
    pub(super) above_hcdth: [u64; MAX_PORTS],
    /// Bit o set when the detector of output o is idle, with an empty crossed set and no root
    /// (updated after every detector step).
    pub(super) det_quiet: u64,
    /// Activity masks, so that idle ports cost nothing (each skip is exact; debug builds check
    /// it). Bit o: output o sends or holds the next packet.
    pub(super) out_busy: u64,
    /// Per output: the next cycle it needs a visit: its packet's head or tail, or, idle with
    /// packets waiting, the first cycle one of them could win its arbitration (`u64::MAX`: not
    /// before a packet is routed to it or credits come back).
    pub(super) wake: [u64; MAX_PORTS],
    /// The earliest `wake` of the outputs that are busy, or idle with packets waiting and not
    /// blocked: no output has anything to do before it.
    pub(super) next_wake: u64,
    /// Bit o: `waiting[o]` is not empty.
    pub(super) waiting_any: u64,
    /// Bit o: output o, idle, found no request it could grant, and since then no packet was
    /// routed to it and no credit came back to it, so it would still find none.
    pub(super) arb_blocked: u64,
    /// Bit i: input i has credits to return or an ARN to send upstream.
    pub(super) in_pending: u64,
    /// Bit i: input i has an ARN queued to go upstream (`arn_out` is not empty).
    pub(super) arn_queued: u64,
    /// Bit i: input i holds a head for the routing stage (`route_q`).
    pub(super) route_pending: u64,
    /// Bit i: input i's ARN-table lookup port was enabled last cycle (cleared before the next).
    pub(super) lookups_set: u64,
    /// Per output: bit i set when input i's arriving packet was routed to the output, and so
    /// may still be adding flits to its VOQ (cleared lazily once the tail is in).
    pub(super) filling: [u64; MAX_PORTS],
    /// Bit o: `above_hcdth[o]` is not empty.
    pub(super) hot_outputs: u64,
    /// Per output: the detector's inputs as last filled, and which inputs' entries are stale
    /// (bit i: input i's VOQ for the output changed, or all bits when the output's credits did).
    pub(super) det_in: Vec<CongestionDetectorIn>,
    pub(super) det_stale: [u64; MAX_PORTS],
    /// Bit o: output o's credits changed since its detector's inputs were last filled.
    pub(super) det_credits_stale: u64,
    /// Per output: the first cycle its detector must be evaluated again when no event marks
    /// its inputs stale (`det_stale`, `det_credits_stale`): before it, the flits and credits
    /// that move by themselves cannot change the root condition or the crossed set, so the
    /// detector holds (`Switch::detector_wake`).
    pub(super) det_wake: [u64; MAX_PORTS],
    /// Per output and input: the next-buffer VC of the head the detector sees (its `head_fc` is
    /// that VC's credits).
    pub(super) det_head_vc: Box<[[u8; MAX_PORTS]; MAX_PORTS]>,
}

impl SkipState {
    /// Nothing to do anywhere: the state after reset of a `ports`-port switch.
    pub(super) fn new(ports: usize) -> Self {
        SkipState {
            waiting: [0; MAX_PORTS],
            above_hcdth: [0; MAX_PORTS],
            det_quiet: port_mask(ports),
            out_busy: 0,
            wake: [u64::MAX; MAX_PORTS],
            next_wake: u64::MAX,
            waiting_any: 0,
            arb_blocked: 0,
            in_pending: 0,
            arn_queued: 0,
            route_pending: 0,
            lookups_set: 0,
            filling: [0; MAX_PORTS],
            hot_outputs: 0,
            det_in: vec![CongestionDetectorIn::default(); ports],
            det_stale: [u64::MAX; MAX_PORTS],
            det_credits_stale: 0,
            det_wake: [0; MAX_PORTS],
            det_head_vc: Box::new([[0; MAX_PORTS]; MAX_PORTS]),
        }
    }
}

impl<const V: usize> Switch<V> {
    /// Whether, with nothing arriving, cycle `now` would change no register but for the ARN
    /// table's TTLs and the detectors' CRT timers counting down: every detector is quiet or
    /// holds (`now` is before [`Switch::detectors_hold_until`]), nothing is to be routed, the
    /// ARN table has no command and no entry expiring, no output has anything to do before
    /// `next_wake`, and no input has credits or an ARN to send back. The table owes such
    /// cycles' ageing until its next evaluation ([`ArnTable::age_idle`]); the detectors are
    /// held by the caller ([`Switch::hold_detectors`]).
    #[inline]
    pub(super) fn quiet(&self, now: u64) -> bool {
        self.still()
            && now < self.skip.next_wake
            && (!self.params.routing.uses_arn() || self.arn.idle_for() >= 1)
            && now < self.detectors_due()
    }

    /// Whether one of the returns arriving in cycle `now` on the outputs in `ports` carries an
    /// ARN.
    #[inline]
    pub(super) fn arns_back(&self, now: u64, channels: &[Channel<V>], ports: u64) -> bool {
        let mut scan = ports;
        while scan != 0 {
            let o = scan.trailing_zeros() as usize;
            scan &= scan - 1;
            if channels[self.wiring.out_ch[o] as usize]
                .recv_back(now)
                .is_some_and(|b| b.arn.is_some())
            {
                return true;
            }
        }
        false
    }

    /// The part of [`Switch::quiet`] that no passing cycle changes: routing stage, ARN
    /// commands and credits or ARNs to send back are all at rest.
    #[inline]
    pub(super) fn still(&self) -> bool {
        // The masks first: under load one of them mostly settles it.
        self.skip.route_pending == 0
            && self.skip.lookups_set == 0
            && self.skip.in_pending == 0
            && (!self.params.routing.uses_arn() || self.arn_cmds.is_empty())
    }

    /// The first cycle the detectors need a visit (`u64::MAX` when the routing uses none).
    #[inline]
    fn detectors_due(&self) -> u64 {
        if self.params.routing.uses_arn() {
            self.detectors_hold_until()
        } else {
            u64::MAX
        }
    }

    /// Whether, with nothing arriving, the cycles `from ..= to` would change no register (see
    /// [`Switch::quiet`]: nothing in it changes without an arrival, but for `next_wake`).
    #[inline]
    pub fn quiet_through(&self, from: u64, to: u64) -> bool {
        self.quiet(from)
            && to < self.skip.next_wake
            && self.arn.idle_for() as u64 > to - from
            && to < self.detectors_due()
    }

    /// After stepping cycle `last`: the first cycle the switch has to step if nothing arrives
    /// for it, so that the cycles `last + 1 .. due` are [`Switch::quiet_through`] (each of them
    /// may be passed with [`Switch::skip_through`], in one call or several).
    #[inline]
    pub fn due_after(&self, last: u64) -> u64 {
        if !self.still() {
            return last + 1;
        }
        self.skip
            .next_wake
            .min(last + 1 + self.arn.idle_for() as u64)
            .min(self.detectors_due())
            .max(last + 1)
    }

    /// Passes the quiet cycles `from ..= to` (see [`Switch::quiet_through`]).
    #[inline]
    pub fn skip_through(&mut self, from: u64, to: u64) {
        // Only the live entries' TTLs and the timers in `Wait` count, and they never pass more
        // than `u32` cycles.
        let cycles = u32::try_from(to - from + 1).unwrap_or(u32::MAX);
        self.arn.age_idle(cycles);
        self.hold_detectors(cycles);
        self.now = to;
    }
}
