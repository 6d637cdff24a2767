//! What a fabric is built with beyond its topology and traffic (link latency, MTU, end-node
//! buffers, seed, watchdog, routing engine), and the counters summed over it.

use super::node::{self, NodeStats};
use super::subnet_manager;
use crate::switch::{SwitchParams, SwitchStats};

/// Parameters of a fabric beyond the switches'.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct FabricParams {
    /// Switch parameters (shared by all switches).
    pub switch: SwitchParams,
    /// Latency of every link, in cycles (at least 1).
    pub link_latency: u32,
    /// MTU in flits.
    pub mtu_flits: u16,
    /// Credits per VC of an end node's receive buffer.
    pub node_vc_capacity: u16,
    /// Seed of every random choice (traffic, oblivious routing).
    pub seed: u64,
    /// Cycles without any flit moving, with flits in the network, that count as a deadlock.
    pub watchdog_cycles: u64,
    /// Check per-flow packet order (meaningful under deterministic routing only).
    pub check_order: bool,
    /// Count the packets of a flow that arrive after a later one, which the destination
    /// resequences (snooped AR, whose rerouting reorders flows), instead of stopping the run.
    #[serde(default)]
    pub resequence: bool,
    /// End nodes consume the ARNs that reach them and, under ARN+AFI, inject matching packets
    /// into the AFC (see `node`).
    pub node_consumes_arns: bool,
    /// How each end node's send memory is shared among the regular VCs (`node::SendMemory`).
    pub node_send_memory: node::SendMemory,
    /// The subnet manager's routing engine (`None`: `ftree` on fat trees, `minhop` otherwise).
    pub routing_engine: Option<subnet_manager::RoutingEngine>,
    /// The traffic's known phases, which the `colored` engine spreads over the links (empty
    /// for other engines).
    pub routing_phases: std::sync::Arc<Vec<subnet_manager::colored::Phase>>,
    /// Share of packets whose DLID asks for every routing option (the others take the
    /// deterministic route, option 0); 1 by default. Only multipath modes use it.
    pub adaptive_share: f64,
    /// InfiniBand congestion control's HCA half (`rate_control = "ib_cca"`), when on.
    #[serde(default)]
    pub ca_congestion: Option<node::CaCongestion>,
    /// IEEE 802.1Qau's reaction points at the HCAs (`rate_control = "qcn"`), when on.
    #[serde(default)]
    pub qcn_reaction: Option<node::QcnReaction>,
}

/// Totals over the fabric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FabricTotals {
    /// Summed switch counters.
    pub switches: SwitchStats,
    /// Summed node counters.
    pub nodes: NodeStats,
}
