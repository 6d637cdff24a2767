//! The counters of an end node (an HCA's performance counters and the model's statistics).

/// Counters of one node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NodeStats {
    /// Packets generated (entered the source queue).
    pub generated_packets: u64,
    /// Messages not generated because the source queue was full.
    pub generation_stalls: u64,
    /// Flits sent into the network.
    pub injected_flits: u64,
    /// Packets whose tail was sent.
    pub injected_packets: u64,
    /// Flits received.
    pub delivered_flits: u64,
    /// Packets received (tail).
    pub delivered_packets: u64,
    /// Adapted packets received.
    pub delivered_adapted: u64,
    /// Sum of packet latencies (injection to tail delivery), in cycles.
    pub latency_sum: u64,
    /// Largest packet latency.
    pub latency_max: u64,
    /// ARNs received.
    pub arns_received: u64,
    /// ARNs consumed (entry added to or refreshed in the node's table).
    pub arns_consumed: u64,
    /// Packets injected into the AFC with the adapted bit set because they matched an entry.
    pub packets_adapted: u64,
    /// Packets of a flow that arrived after a later one of the flow, which the node resequenced
    /// (counted under snooped AR).
    #[serde(default)]
    pub packets_resequenced: u64,
    /// Congestion control: data packets that arrived marked with FECN.
    #[serde(default)]
    pub fecns_received: u64,
    /// Congestion control: FECNs not answered, the CNP queue being full.
    #[serde(default)]
    pub fecns_unanswered: u64,
    /// Congestion control: CNPs sent (one flit each, not counted as injected data).
    #[serde(default)]
    pub cnps_sent: u64,
    /// Congestion control: CNPs (BECNs) received (not counted as delivered data).
    #[serde(default)]
    pub becns_received: u64,
    /// Congestion control: BECNs dropped, every rate limiter slowing another queue pair.
    #[serde(default)]
    pub becns_dropped: u64,
    /// QCN: congestion notifications the HCA received.
    #[serde(default)]
    pub cnms_received: u64,
    /// QCN: congestion notifications dropped, every rate limiter slowing another flow.
    #[serde(default)]
    pub cnms_dropped: u64,
}

impl NodeStats {
    /// Adds another node's counters to these (the latency maximum is the larger one).
    pub fn accumulate(&mut self, x: &NodeStats) {
        self.generated_packets += x.generated_packets;
        self.generation_stalls += x.generation_stalls;
        self.injected_flits += x.injected_flits;
        self.injected_packets += x.injected_packets;
        self.delivered_flits += x.delivered_flits;
        self.delivered_packets += x.delivered_packets;
        self.delivered_adapted += x.delivered_adapted;
        self.packets_resequenced += x.packets_resequenced;
        self.latency_sum += x.latency_sum;
        self.latency_max = self.latency_max.max(x.latency_max);
        self.arns_received += x.arns_received;
        self.arns_consumed += x.arns_consumed;
        self.fecns_received += x.fecns_received;
        self.fecns_unanswered += x.fecns_unanswered;
        self.cnps_sent += x.cnps_sent;
        self.becns_received += x.becns_received;
        self.becns_dropped += x.becns_dropped;
        self.cnms_received += x.cnms_received;
        self.cnms_dropped += x.cnms_dropped;
        self.packets_adapted += x.packets_adapted;
    }
}
