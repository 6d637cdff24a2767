//! When a switch may skip cycles: the tests that a cycle with nothing arriving would change no
//! register but the ARN table's TTLs, and the passing of such cycles in one step. This is state
//! kept for speed; the hardware registers are in the switch itself.

use super::*;

impl Switch {
    /// Whether, with nothing arriving, cycle `now` would change no register but for the ARN
    /// table's TTLs counting down: every detector is quiet with no VOQ that may be above HCDTh,
    /// nothing is to be routed, the ARN table has no command and no entry expiring, no output
    /// has anything to do before `next_wake`, and no input has credits or an ARN to send back.
    /// The table owes such cycles' ageing until its next evaluation
    /// ([`ArnTable::age_idle`]).
    #[inline]
    pub(super) fn quiet(&self, now: u64) -> bool {
        self.still()
            && (!self.params.routing.uses_arn() || self.arn.idle_for() >= 1)
            && now < self.next_wake
    }

    /// Whether one of the returns arriving in cycle `now` on the outputs in `ports` carries an
    /// ARN.
    #[inline]
    pub(super) fn arns_back(&self, now: u64, channels: &[Channel], ports: u64) -> bool {
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

    /// The part of [`Switch::quiet`] that no passing cycle changes: detectors, routing stage,
    /// ARN commands and credits or ARNs to send back are all at rest.
    #[inline]
    pub(super) fn still(&self) -> bool {
        // The masks first: under load one of them mostly settles it.
        self.route_pending == 0
            && self.lookups_set == 0
            && self.in_pending == 0
            && (!self.params.routing.uses_arn()
                || ((!self.det_quiet | self.hot_outputs) & self.all_ports == 0
                    && self.arn_cmds.is_empty()))
    }

    /// Whether, with nothing arriving, the cycles `from ..= to` would change no register (see
    /// [`Switch::quiet`]: nothing in it changes without an arrival, but for `next_wake`).
    #[inline]
    pub fn quiet_through(&self, from: u64, to: u64) -> bool {
        self.quiet(from) && to < self.next_wake && self.arn.idle_for() as u64 > to - from
    }

    /// After stepping cycle `last`: the first cycle the switch has to step if nothing arrives
    /// for it, so that the cycles `last + 1 .. due` are [`Switch::quiet_through`] (each of them
    /// may be passed with [`Switch::skip_through`], in one call or several).
    #[inline]
    pub fn due_after(&self, last: u64) -> u64 {
        if !self.still() {
            return last + 1;
        }
        self.next_wake
            .min(last + 1 + self.arn.idle_for() as u64)
            .max(last + 1)
    }

    /// Passes the quiet cycles `from ..= to` (see [`Switch::quiet_through`]).
    #[inline]
    pub fn skip_through(&mut self, from: u64, to: u64) {
        // Only the live entries' TTLs count, and they never owe more than `u32` cycles.
        self.arn
            .age_idle(u32::try_from(to - from + 1).unwrap_or(u32::MAX));
        self.now = to;
    }
}
