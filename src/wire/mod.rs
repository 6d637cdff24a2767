//! What travels on the links, and the links themselves: packet descriptors, ARN control flits,
//! QCN congestion notifications ([`cnm`]) and link directions with their latency ([`link`]).
//!
//! A data packet is a descriptor (header fields plus its length in flits); flits are counted, never
//! stored one by one. An ARN is a one-flit control packet whose payload carries the ARN-table fields
//! of table 2 of Rocher-Gonzalez et al.; [`arn`] gives its bit layout, a checked view and a parsed representation.

pub mod arn;
pub mod cnm;
pub mod link;
pub mod packet;

pub use arn::{ArnFlit, ArnInfo};
pub use cnm::Cnm;
pub use packet::{Packet, PacketFlags};
