//! The ARN table's ports (`arn_table.sv`): the lookup requests of the input ports, the
//! processARN and remove commands, and what the table drives back (lookup results, the hit and
//! eviction of a command, count, full).

use super::MAX_PORTS;
use crate::wire::arn::ArnInfo;

/// One lookup request: `lk_en_i[p]`, `lk_dest_i[p]`, `lk_vc_i[p]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArnLookup {
    /// `lk_en_i[p]`: the port searches this cycle (a non-adapted data packet at its head).
    pub en: bool,
    /// `lk_dest_i[p]`: destination of the packet.
    pub dest: u16,
    /// `lk_vc_i[p]`: (original) VC of the packet.
    pub vc: u8,
}

/// The processARN command: `pr_*_i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArnProcess {
    /// `pr_en_i`: a command this cycle.
    pub en: bool,
    /// `pr_dest_i`: destination.
    pub dest: u16,
    /// `pr_port_i`: port where congestion was detected or the ARN arrived.
    pub port: u8,
    /// `pr_vc_i`: VC.
    pub vc: u8,
    /// `pr_arn_id_i`: ARN id.
    pub arn_id: u32,
    /// `pr_root_info_i`: congestion-root info.
    pub root_info: u8,
    /// `pr_consumed_i`: the new entry is consumed (this switch is at the consuming stage).
    pub consumed: bool,
    /// `pr_alt_port_i`: alternative output port kept with a consumed entry.
    pub alt_port: u8,
    /// `pr_add_i`: add the entry when it does not exist (clear for adapted packets).
    pub add: bool,
}

/// The remove command: `rm_*_i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArnRemove {
    /// `rm_en_i`: a remove this cycle.
    pub en: bool,
    /// `rm_dest_i`: destination.
    pub dest: u16,
    /// `rm_port_i`: port.
    pub port: u8,
    /// `rm_vc_i`: VC.
    pub vc: u8,
}

/// Inputs of one cycle. Only the first `Ports` lookups are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArnTableIn {
    /// Lookups, one per input port.
    #[serde(with = "serde_big_array::BigArray")]
    pub lk: [ArnLookup; MAX_PORTS],
    /// processARN command.
    pub pr: ArnProcess,
    /// Remove command.
    pub rm: ArnRemove,
}

impl ArnProcess {
    /// The processARN command of ARN `info` (pseudo-code 2): consumed here or not, with the
    /// alternative port a consumed entry re-routes to, and added to the table unless the ARN
    /// came from an adapted packet (`adapted`).
    pub fn of(info: &ArnInfo, consumed: bool, alt_port: u8, adapted: bool) -> Self {
        ArnProcess {
            en: true,
            dest: info.dest,
            port: info.port,
            vc: info.vc,
            arn_id: info.arn_id,
            root_info: info.root_info,
            consumed,
            alt_port,
            add: !adapted,
        }
    }
}

impl Default for ArnTableIn {
    fn default() -> Self {
        ArnTableIn {
            lk: [ArnLookup::default(); MAX_PORTS],
            pr: ArnProcess::default(),
            rm: ArnRemove::default(),
        }
    }
}

/// Result of one lookup: `lk_*_o[p]`. All zero without a hit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArnLookupResult {
    /// `lk_hit_o[p]`: enabled and some valid entry is on (dest, vc).
    pub hit: bool,
    /// `lk_consumed_o[p]`: enabled and some consumed valid entry is on (dest, vc).
    pub consumed: bool,
    /// `lk_idx_o[p]`: selected entry: lowest-index consumed match, else lowest-index match.
    pub idx: u8,
    /// `lk_port_o[p]`: port of the selected entry.
    pub port: u8,
    /// `lk_arn_id_o[p]`: ARN id of the selected entry.
    pub arn_id: u32,
    /// `lk_root_info_o[p]`: congestion-root info of the selected entry.
    pub root_info: u8,
    /// `lk_alt_port_o[p]`: alternative output port of the selected entry.
    pub alt_port: u8,
}

/// Outputs of one cycle (combinational). Only the first `Ports` lookup results are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArnTableOut {
    /// Lookup results, one per input port.
    #[serde(with = "serde_big_array::BigArray")]
    pub lk: [ArnLookupResult; MAX_PORTS],
    /// `pr_hit_o`: the processARN command refreshes an existing entry.
    pub pr_hit: bool,
    /// `pr_evict_o`: the processARN add had to evict a valid entry.
    pub pr_evict: bool,
    /// `count_o`: valid entries in the current registers.
    pub count: u8,
    /// `full_o`: `count_o == Entries`.
    pub full: bool,
}

impl Default for ArnTableOut {
    fn default() -> Self {
        ArnTableOut {
            lk: [ArnLookupResult::default(); MAX_PORTS],
            pr_hit: false,
            pr_evict: false,
            count: 0,
            full: false,
        }
    }
}
