//! A fabric taking the state of a checkpoint of itself (`run/checkpoint.rs`): what a checkpoint
//! leaves out is not state of the modelled hardware but of the process (its threads, its MPI
//! ranks, buffers kept for their room such as the cycle engine's per-window send buffers, the
//! forwarding-table rows the end nodes share), and comes from the fabric built anew from the
//! same scenario.

use super::*;

impl<const V: usize> Fabric<V> {
    /// Takes every register, buffer and counter of `saved`, a checkpoint of a fabric built as
    /// this one (same scenario, engine and threads), and keeps its own threads, shared rows and
    /// room; refused when `saved` is laid out differently.
    pub fn resume_from(&mut self, mut saved: Fabric<V>) -> Result<(), String> {
        let engines = match (&self.wing, &saved.wing) {
            (Wing::Event(a), Wing::Event(b)) => a.parts() == b.parts(),
            (Wing::Cycle(a), Wing::Cycle(b)) => a.len() == b.len(),
            _ => false,
        };
        if !engines
            || self.ranks.is_some()
            || saved.nodes.len() != self.nodes.len()
            || saved.switches.len() != self.switches.len()
            || saved.channels.len() != self.channels.len()
            || saved.parts != self.parts
            || saved.window != self.window
        {
            return Err(format!(
                "the checkpoint's fabric ({} switches, {} end nodes, {} parts on the {} engine) is not laid out as this one ({} switches, {} end nodes, {} parts on the {} engine)",
                saved.switches.len(),
                saved.nodes.len(),
                saved.parts.len(),
                saved.engine().name(),
                self.switches.len(),
                self.nodes.len(),
                self.parts.len(),
                self.engine().name(),
            ));
        }
        for (s, f) in saved.nodes.iter_mut().zip(&self.nodes) {
            s.take_unsaved(f);
        }
        std::mem::swap(&mut saved.pool, &mut self.pool);
        std::mem::swap(&mut saved.logs, &mut self.logs);
        std::mem::swap(&mut saved.switch_out, &mut self.switch_out);
        std::mem::swap(&mut saved.node_out, &mut self.node_out);
        std::mem::swap(&mut saved.samples, &mut self.samples);
        std::mem::swap(&mut saved.recorders, &mut self.recorders);
        *self = saved;
        Ok(())
    }
}
