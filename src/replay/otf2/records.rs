//! The OTF2 records the model reads and writes, as plain values: the definitions and events the
//! library's reader hands over and its writer takes (only the fields the model uses), and the
//! enum values of `OTF2_Definitions.h` and `OTF2_GeneralDefinitions.h` they carry.

/// `OTF2_PARADIGM_MPI`.
pub const PARADIGM_MPI: u8 = 4;
/// `OTF2_GroupType`: the locations of a paradigm, its ranks of a communicator, self.
pub const GROUP_COMM_LOCATIONS: u8 = 4;
pub const GROUP_COMM_GROUP: u8 = 5;
pub const GROUP_COMM_SELF: u8 = 6;
/// `OTF2_LOCATION_GROUP_TYPE_PROCESS`, `OTF2_LOCATION_TYPE_CPU_THREAD`.
pub const LOCATION_GROUP_PROCESS: u8 = 1;
pub const LOCATION_CPU_THREAD: u8 = 1;
/// `OTF2_UNDEFINED_UINT32` (an undefined reference or root).
pub const UNDEFINED_U32: u32 = u32::MAX;

/// A definition, read or to be written (only the fields the model uses): each variant is the
/// OTF2 definition of that name, its fields named after the C arguments.
#[derive(Clone, Debug)]
pub enum Def<'a> {
    /// Ticks per second; offset and length in ticks.
    Clock {
        resolution: u64,
        offset: u64,
        length: u64,
    },
    String {
        id: u32,
        text: &'a str,
    },
    SystemTreeNode {
        id: u32,
        name: u32,
        class: u32,
    },
    LocationGroup {
        id: u32,
        name: u32,
        kind: u8,
        parent: u32,
    },
    Location {
        id: u64,
        name: u32,
        kind: u8,
        events: u64,
        group: u32,
    },
    Region {
        id: u32,
        name: u32,
        role: u8,
        paradigm: u8,
    },
    Group {
        id: u32,
        name: u32,
        kind: u8,
        paradigm: u8,
        flags: u32,
        members: &'a [u64],
    },
    Comm {
        id: u32,
        name: u32,
        group: u32,
    },
}

/// An event record of one location: each variant is the OTF2 record of that name, its fields
/// named after the C arguments (`msgLength` is `bytes`, `requestID` `request`, `collectiveOp`
/// `op`, `sizeSent` and `sizeReceived` `sent` and `received`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Enter {
        region: u32,
    },
    Leave {
        region: u32,
    },
    MpiSend {
        receiver: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
    },
    MpiIsend {
        receiver: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
        request: u64,
    },
    MpiIsendComplete {
        request: u64,
    },
    MpiIrecvRequest {
        request: u64,
    },
    MpiRecv {
        sender: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
    },
    MpiIrecv {
        sender: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
        request: u64,
    },
    MpiRequestCancelled {
        request: u64,
    },
    MpiCollectiveBegin,
    MpiCollectiveEnd {
        op: u8,
        comm: u32,
        root: u32,
        sent: u64,
        received: u64,
    },
}

/// Receives what a read finds; returning `false` stops the read.
pub trait Sink {
    fn definition(&mut self, def: Def<'_>) -> bool;
    fn event(&mut self, location: u64, time: u64, event: Event) -> bool;
}
