//! The routing stage's choices among an LFT entry's options that any engine makes the same way:
//! Oblivious routing's draw, pseudo-code 3's port with the most credits, and FA's adaptive choice.

use crate::blocks::lft_banks::{LftOptions, NO_ROUTE};
use crate::blocks::rng::SplitMix64;
use crate::wire::Packet;

/// Oblivious routing's stage: one of the usable options of `opts` drawn uniformly from `rng`
/// (no draw when there is only one); `det` when the draw names none.
pub fn oblivious_choice(opts: &LftOptions, rng: &mut SplitMix64, det: u8) -> u8 {
    let n = opts.usable_ports().count() as u64;
    if n > 1 {
        let k = rng.below(n) as usize;
        opts.usable_ports().nth(k).unwrap_or(det)
    } else {
        det
    }
}

/// pseudo-code 3 over `opts`: the usable port below `ports`, other than `avoid`, whose
/// `credits(port)` are the most; the first on a tie. `NO_ROUTE` when there is none.
pub fn most_credits(opts: &LftOptions, ports: usize, avoid: u8, credits: impl Fn(u8) -> u16) -> u8 {
    let mut best = (NO_ROUTE, 0u16);
    for p in opts.usable_ports() {
        if p == avoid || p as usize >= ports {
            continue;
        }
        let c = credits(p);
        if best.0 == NO_ROUTE || c > best.1 {
            best = (p, c);
        }
    }
    best.0
}

/// FA's routing stage (Martínez et al., section 4.4): of the adaptive options (1 and up, usable
/// only when the DLID asks for them), the one whose next VC has the most credits, provided they
/// cover the packet and the escape half; the first on a tie. `NO_ROUTE` when none has room: the
/// packet takes option 0, the escape route. `credits(p)`: the credits, at the start of the
/// cycle, of the VC the packet would use through output `p`, and that VC's escape credits.
pub fn fa_choice(
    opts: &LftOptions,
    ports: usize,
    pkt: &Packet,
    credits: impl Fn(usize) -> (u16, u16),
) -> u8 {
    let mut best = (NO_ROUTE, 0u16);
    for b in 1..opts.count as usize {
        let p = opts.ports[b];
        if !opts.usable(b) || p as usize >= ports {
            continue;
        }
        let (c, escape) = credits(p as usize);
        if c as u32 >= pkt.len as u32 + escape as u32 && (best.0 == NO_ROUTE || c > best.1) {
            best = (p, c);
        }
    }
    best.0
}
