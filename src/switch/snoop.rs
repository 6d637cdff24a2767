//! Adaptive routing on snooped congestion notifications (`routing = "snoop_ar"`; Gusat,
//! Minkenberg and Rodríguez's charts): what a switch decides from its congestion table
//! ([`crate::blocks::congestion_table`]), whatever steps it.
//!
//! - **Routing** ([`snoop_choice`]): a head keeps its deterministic port (option 0, shortest
//!   first) unless the table marks it congested for the head's destination; then it takes the
//!   first usable option of the destination's multipath row (`dest | 1`) that is not congested;
//!   with every option congested, the options in turn (round robin, a pointer per input).
//! - **Snooping** ([`snoops`]): a notification arriving on an output from downstream, or made
//!   by an output's congestion point, is written to the table under (its destination, that
//!   port) when the port is a usable option of the destination here.
//! - **Absorbing** ([`absorbs`]): the switch keeps a notification from the source when it names
//!   the port the switch routes the destination to now and another usable option is not
//!   congested: the hot destination is moved off the port first, and the source is slowed only
//!   when no uncongested alternative exists. A notification arriving on a port the switch does
//!   not route the destination to (it came back by another path than the data took) goes on.
//!
//! The table read is the registered one: the writes of a cycle are seen from a later cycle.

use super::SwitchParams;
use crate::blocks::LftBanks;
use crate::blocks::congestion_table::Snoop;
use crate::blocks::lft_banks::{LftOptions, NO_ROUTE};
use crate::wire::Cnm;

/// Whether port `p` of a switch of `ports` ports is a usable option of `row`.
#[inline]
fn is_option(row: &LftOptions, ports: usize, p: u8) -> bool {
    (p as usize) < ports && row.usable_ports().any(|q| q == p)
}

/// The first usable option of `row` below `ports` not in `mask`, `NO_ROUTE` when none.
#[inline]
fn first_free(row: &LftOptions, ports: usize, mask: u64) -> u8 {
    row.usable_ports()
        .find(|&p| (p as usize) < ports && mask >> p & 1 == 0)
        .unwrap_or(NO_ROUTE)
}

/// The port a switch routes a destination to now: its deterministic port `det` unless `mask`
/// (the ports congested for it) has it, then the first uncongested usable option of `row` (the
/// destination's multipath row); `NO_ROUTE` when every option is congested.
#[inline]
pub fn current_port(row: &LftOptions, ports: usize, mask: u64, det: u8) -> u8 {
    let congested = (det as usize) < 64 && mask >> det & 1 == 1;
    if congested {
        first_free(row, ports, mask)
    } else {
        det
    }
}

/// The routing stage under snooped AR: [`current_port`], and with every option congested the
/// next usable option from the input's round-robin pointer `rr`, which moves past it.
#[inline]
pub fn snoop_choice(row: &LftOptions, ports: usize, mask: u64, det: u8, rr: &mut u8) -> u8 {
    let p = current_port(row, ports, mask, det);
    if p != NO_ROUTE || det == NO_ROUTE {
        return p;
    }
    let n = row.count.max(1) as usize;
    for k in 0..n {
        let b = (*rr as usize + k) & (n - 1);
        let q = row.ports[b];
        if row.usable(b) && (q as usize) < ports {
            *rr = ((b + 1) & (n - 1)) as u8;
            return q;
        }
    }
    det
}

/// Whether a notification naming port `p` (arrived on it, or made by its congestion point) is
/// written to the table: `p` is a usable option of the destination's multipath row `row`.
#[inline]
pub fn snoops(row: &LftOptions, ports: usize, p: u8) -> bool {
    is_option(row, ports, p)
}

/// Whether the switch keeps from the source a notification naming port `p` for a destination
/// whose multipath row is `row`, deterministic port `det` and congested ports `mask`: `p` is the
/// port the switch routes it to now and another usable option is not congested.
#[inline]
pub fn absorbs(row: &LftOptions, ports: usize, mask: u64, det: u8, p: u8) -> bool {
    p != NO_ROUTE
        && current_port(row, ports, mask, det) == p
        && first_free(row, ports, mask | 1 << (p as u64 & 63)) != NO_ROUTE
}

/// What a switch of `ports` ports whose LFT is `lft` does with the CNM `c` naming port `p`
/// (arrived on it, or made by its congestion point when `local`), its congestion table read as
/// registered through `mask(dest)`: the snoop to queue for the table, if `p` is an option of the
/// destination, and whether the switch absorbs the CNM. Both engines call it.
pub fn on_cnm(
    sp: &SwitchParams,
    lft: &LftBanks,
    ports: usize,
    p: u8,
    c: Cnm,
    local: bool,
    mask: impl FnOnce(u16) -> u64,
) -> (Option<Snoop>, bool) {
    let dest = sp.base_lid(c.dest);
    let row = lft.options(dest | 1);
    let snoop = snoops(&row, ports, p).then_some(Snoop {
        dest,
        port: p,
        fb: c.fb,
        local,
    });
    let det = lft.options(c.dest).deterministic().unwrap_or(NO_ROUTE);
    (snoop, absorbs(&row, ports, mask(dest), det, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ports: &[u8]) -> LftOptions {
        let mut r = LftOptions {
            ports: [NO_ROUTE; crate::blocks::lft_banks::MAX_OPTIONS],
            mask: 0,
            count: ports.len() as u8,
        };
        for (b, &p) in ports.iter().enumerate() {
            r.ports[b] = p;
            if p != NO_ROUTE {
                r.mask |= 1 << b;
            }
        }
        r
    }

    #[test]
    fn a_congested_port_is_left_for_the_first_free_option_then_round_robin() {
        let r = row(&[4, 5, 6, 7]);
        let mut rr = 0;
        assert_eq!(snoop_choice(&r, 8, 0, 4, &mut rr), 4);
        assert_eq!(snoop_choice(&r, 8, 1 << 5, 4, &mut rr), 4);
        assert_eq!(snoop_choice(&r, 8, 1 << 4, 4, &mut rr), 5);
        assert_eq!(snoop_choice(&r, 8, 0b0111_0000, 4, &mut rr), 7);
        assert_eq!(rr, 0);
        let all = 0xF0;
        let got: Vec<u8> = (0..5)
            .map(|_| snoop_choice(&r, 8, all, 4, &mut rr))
            .collect();
        assert_eq!(got, [4, 5, 6, 7, 4]);
        // An unusable option is skipped by the pointer.
        let r = row(&[4, NO_ROUTE, 6, 7]);
        let mut rr = 1;
        assert_eq!(snoop_choice(&r, 8, all, 4, &mut rr), 6);
        assert_eq!(rr, 3);
    }

    #[test]
    fn a_notification_is_kept_only_on_the_routed_port_with_an_alternative() {
        let r = row(&[4, 5]);
        // Routed to 4, 5 free: kept.
        assert!(absorbs(&r, 8, 0, 4, 4));
        // Arrived on 5, which the destination is not routed to: goes on.
        assert!(!absorbs(&r, 8, 0, 4, 5));
        // 4 congested already, routed to 5, no alternative left: goes on.
        assert!(!absorbs(&r, 8, 1 << 4, 4, 5));
        // One way only (a hop down): goes on.
        assert!(!absorbs(&row(&[2]), 8, 0, 2, 2));
        assert!(snoops(&r, 8, 5) && !snoops(&r, 8, 2) && !snoops(&r, 4, 5));
    }
}
