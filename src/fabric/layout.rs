//! What a process lays out for the engine that steps its fabric: the cycle engine's switches,
//! delay lines on every link and per-unit send buffers, or the event engine with delay lines on
//! the links of the end nodes it steps; and those end nodes' send memory (the HCAs' buffers).

use super::*;

impl<const V: usize> Fabric<V> {
    /// Steps the switches on `engine` from the first cycle on (before any is stepped); the
    /// outputs are the same on both.
    pub fn set_engine(&mut self, engine: Engine) {
        assert_eq!(self.now, 0, "the engine is chosen before the first cycle");
        match engine {
            Engine::Event => self.renew_event_engine(),
            Engine::Cycle => {
                self.wing = Wing::Cycle(Vec::new());
                self.wing = Wing::Cycle(
                    (0..self.switches.len())
                        .map(|s| CycleUnit::new(self.cycle_twin(s)))
                        .collect(),
                );
                self.lay_links();
            }
        }
    }

    /// Builds the event engine anew for the fabric's threads and ranks (the engine it replaces
    /// dropped first: two at once would double the peak of memory), and lays its links.
    pub(super) fn renew_event_engine(&mut self) {
        self.wing = Wing::Cycle(Vec::new());
        self.wing = Wing::Event(Box::new(event::EventEngine::new(self)));
        self.lay_links();
    }

    /// Allocates the delay lines and send buffers of the engine stepping the fabric and frees
    /// the others: the cycle engine carries every link through delay lines and collects what
    /// each unit sends in a window; the event engine carries only the links of the end nodes
    /// this process steps through delay lines (its switch links carry events). The end nodes
    /// this process steps get their send memory.
    fn lay_links(&mut self) {
        match self.wing {
            Wing::Cycle(_) => {
                self.channels.iter_mut().for_each(Channel::open);
                self.nodes.iter_mut().for_each(EndNode::reserve_send_memory);
                if self.switch_out.is_empty() {
                    self.switch_out = self
                        .switches
                        .iter()
                        .map(|s| Outbox::new(s.ports()))
                        .collect();
                    self.node_out = (0..self.nodes.len()).map(|_| Outbox::new(1)).collect();
                }
            }
            Wing::Event(_) => {
                let mut used = vec![false; self.channels.len()];
                let mut local = vec![false; self.nodes.len()];
                for (n, node) in self.local_nodes() {
                    used[node.in_channel() as usize] = true;
                    used[node.out_channel() as usize] = true;
                    local[n] = true;
                }
                for (node, _) in self.nodes.iter_mut().zip(local).filter(|(_, l)| *l) {
                    node.reserve_send_memory();
                }
                for (ch, used) in self.channels.iter_mut().zip(used) {
                    if used {
                        ch.open();
                    } else {
                        ch.close();
                    }
                }
                self.switch_out = Vec::new();
                self.node_out = Vec::new();
            }
        }
    }
}
