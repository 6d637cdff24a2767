//! The C types of the OTF2 3 API that `ffi.rs` declares its functions with, checked against
//! `/usr/include/otf2/`: handles as opaque pointers, the `OTF2_ErrorCode` and
//! `OTF2_CallbackCode` values used (C enums, so `int`), file modes, the callback signatures
//! (`OTF2_GlobalEvtReaderCallback_*`: location, time, user data, attribute list, then the
//! record's fields; `OTF2_GlobalDefReaderCallback_*`: user data, then the definition's) and
//! `OTF2_FlushCallbacks`.

use std::ffi::{c_char, c_int, c_void};

pub const SUCCESS: c_int = 0;
pub const INTERRUPTED_BY_CALLBACK: c_int = 92;
pub const CALLBACK_SUCCESS: c_int = 0;
pub const CALLBACK_INTERRUPT: c_int = 1;
pub const FILEMODE_WRITE: u8 = 0;
pub const SUBSTRATE_POSIX: u8 = 1;
pub const COMPRESSION_NONE: u8 = 1;
pub const FLUSH: u8 = 1;

pub type P = *mut c_void;
pub type Attrs = *mut c_void;
pub type EnterCb = extern "C" fn(u64, u64, P, Attrs, u32) -> c_int;
pub type ReqCb = extern "C" fn(u64, u64, P, Attrs, u64) -> c_int;
pub type P2pCb = extern "C" fn(u64, u64, P, Attrs, u32, u32, u32, u64) -> c_int;
pub type IP2pCb = extern "C" fn(u64, u64, P, Attrs, u32, u32, u32, u64, u64) -> c_int;
pub type BeginCb = extern "C" fn(u64, u64, P, Attrs) -> c_int;
pub type EndCb = extern "C" fn(u64, u64, P, Attrs, u8, u32, u32, u64, u64) -> c_int;
pub type ClockCb = extern "C" fn(P, u64, u64, u64, u64) -> c_int;
pub type StringCb = extern "C" fn(P, u32, *const c_char) -> c_int;
pub type LocGroupCb = extern "C" fn(P, u32, u32, u8, u32, u32) -> c_int;
pub type LocationCb = extern "C" fn(P, u64, u32, u8, u64, u32) -> c_int;
pub type RegionCb = extern "C" fn(P, u32, u32, u32, u32, u8, u8, u32, u32, u32, u32) -> c_int;
pub type GroupCb = extern "C" fn(P, u32, u32, u8, u8, u32, u32, *const u64) -> c_int;
pub type CommCb = extern "C" fn(P, u32, u32, u32, u32, u32) -> c_int;
/// The last argument is a C `va_list`, never read: on x86-64 and AArch64 it arrives as one
/// pointer-sized argument.
pub type ErrorCb =
    extern "C" fn(P, *const c_char, u64, *const c_char, c_int, *const c_char, P) -> c_int;
pub type PreFlushCb = extern "C" fn(P, u8, u64, P, bool) -> u8;

/// `OTF2_FlushCallbacks`.
#[repr(C)]
pub struct FlushCallbacks {
    pub pre_flush: PreFlushCb,
    pub post_flush: Option<extern "C" fn(P, u8, u64) -> u64>,
}
