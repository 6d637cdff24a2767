//! What travels on the links: packet descriptors and ARN control flits.
//!
//! A data packet is a descriptor (header fields plus its length in flits); flits are counted, never
//! stored one by one. An ARN is a one-flit control packet whose payload carries the ARN-table fields
//! of seed 000 table 2; [`arn`] gives its bit layout, a checked view and a parsed representation.

pub mod arn;
pub mod packet;

pub use arn::{ArnFlit, ArnInfo};
pub use packet::{Packet, PacketFlags};
