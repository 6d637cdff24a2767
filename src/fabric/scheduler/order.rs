//! The fabric's `in_order` check at the destinations: no packet of a (source, destination) flow
//! arrives after a later one (deterministic routes), or, under snooped AR, the count of the
//! packets a destination resequences.

use crate::fabric::Violation;
use crate::wire::Packet;

/// The `in_order` check of packet `pkt` delivered to node `n` in cycle `c`: no packet of a
/// (source, destination) flow arrives after a later one. `order[flow]`: the sequence number of
/// the flow's last packet; with `multipath_lid`, only the packets that asked for the
/// deterministic route (DLID LSB clear) count. Under `resequence` every packet counts, and
/// whether it is one the destination resequences is the answer.
pub(in crate::fabric) fn in_order(
    order: &mut [u32],
    nodes: usize,
    multipath_lid: bool,
    resequence: bool,
    c: u64,
    n: u32,
    pkt: &Packet,
) -> Result<bool, Violation> {
    if !resequence && !order_counts(multipath_lid, pkt) {
        return Ok(false);
    }
    in_order_of_flow(
        &mut order[pkt.src as usize * nodes + n as usize],
        nodes,
        c,
        n,
        pkt,
        resequence,
    )
}

/// Whether `pkt` counts in the `in_order` check: with `multipath_lid`, only a packet that asked
/// for the deterministic route (DLID LSB clear).
pub(in crate::fabric) fn order_counts(multipath_lid: bool, pkt: &Packet) -> bool {
    !(multipath_lid && pkt.dlid & 1 == 1)
}

/// [`in_order`] given the flow's entry: the sequence number of its last packet delivered.
/// Under `resequence`, a packet arriving after a later one is not a violation: whether it is
/// one the destination resequences.
pub(in crate::fabric) fn in_order_of_flow(
    last: &mut u32,
    nodes: usize,
    c: u64,
    n: u32,
    pkt: &Packet,
    resequence: bool,
) -> Result<bool, Violation> {
    let seq = pkt.id / nodes as u32;
    let prev = *last;
    if prev != u32::MAX && seq <= prev {
        if resequence {
            return Ok(true);
        }
        return Err(Violation {
            cycle: c,
            invariant: "in_order",
            place: format!("node {n}"),
            detail: format!(
                "packet {} of flow {}->{n} arrived after a later one (seq {seq} after {prev})",
                pkt.id, pkt.src
            ),
        });
    }
    *last = seq;
    Ok(false)
}
