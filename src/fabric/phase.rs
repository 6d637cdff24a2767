//! A fabric's communication phase (`crate::traffic::phase`): its finite flows given to the
//! nodes that send and receive them, and the cycles they ended in.

use super::{Fabric, node};
use crate::traffic::phase::{Injection, PhaseFlow, tags};

impl<const V: usize> Fabric<V> {
    /// Gives the nodes the finite flows of a communication phase (`crate::traffic::phase`),
    /// before the first cycle: each source sends its flows by `injection`, each destination
    /// counts them in.
    pub fn attach_phase(
        &mut self,
        flows: &[PhaseFlow],
        injection: Injection,
    ) -> Result<(), String> {
        let nodes = self.nodes.len() as u32;
        let tags = tags(flows, nodes).ok_or_else(|| {
            format!(
                "a phase flow names a node beyond {nodes}, or a node receives more than {} flows",
                u16::MAX
            )
        })?;
        if self.now != 0 || flows.iter().any(|f| f.src >= nodes) {
            return Err(format!(
                "a phase of {} flows attached at cycle {}, or beyond {nodes} nodes",
                flows.len(),
                self.now
            ));
        }
        let mut phases = vec![node::NodePhase::new(injection); nodes as usize];
        for (f, &tag) in flows.iter().zip(&tags) {
            phases[f.src as usize].send(f.dst, tag, (f.flits, f.message_flits), f.start, f.rate);
            phases[f.dst as usize].receive(tag, f.flits);
        }
        for (n, p) in self.nodes.iter_mut().zip(phases) {
            n.attach_phase(p);
        }
        for p in &mut self.node_pace {
            p.due = 0;
        }
        Ok(())
    }

    /// Per phase flow (in the order given to [`Fabric::attach_phase`]), the cycle the tail of
    /// its last packet reached its destination, if it has in the cycles stepped.
    pub fn phase_ends(&self, flows: &[PhaseFlow]) -> Vec<Option<u64>> {
        let tags = tags(flows, self.nodes.len() as u32).unwrap_or_default();
        let mut ends: Vec<Option<u64>> = flows
            .iter()
            .zip(&tags)
            .map(|(f, &t)| {
                let dst = f.dst as usize;
                let r = self.owns_node(dst).then_some(&self.nodes[dst])?;
                r.phase()?.received().get(t as usize - 1)?.end
            })
            .collect();
        super::ranks::least_of_each(self.ranks(), &mut ends);
        ends
    }

    /// Whether every phase flow has ended in the cycles stepped (true without a phase).
    pub fn phase_complete(&self) -> bool {
        self.on_every_rank(self.local_nodes().all(|(_, n)| {
            n.phase()
                .is_none_or(|p| p.received().iter().all(|r| r.end.is_some()))
        }))
    }
}
