//! The OTF2 C library, loaded at run time: the only unsafe code of OTF2 support.
//!
//! The library is opened with `libloading` when first needed, so building and running the model
//! never needs it. The few functions, callback types and enum values used are declared by hand,
//! checked against OTF2 3.0's headers (`/usr/include/otf2/`, Debian's `libotf2-trace-dev`),
//! the types in `ctypes.rs`. A symbol that only OTF2 3 has (`OTF2_GlobalDefWriter_WriteInterComm`) is required, since the
//! definition callbacks declared here have their OTF2 3 arguments.
//!
//! Above this file everything is safe: reading hands definitions and events as [`Def`] and
//! [`Event`] values to a [`Sink`]; writing takes the same values.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use libloading::Library;

use super::ctypes::*;
pub use super::records::*;
use super::{LIBRARY_ENV, PACKAGES};

/// Declares the table of library functions and its loader.
macro_rules! functions {
    ($($(#[$m:meta])* $name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        #[allow(non_snake_case)]
        struct Fns { $($(#[$m])* $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)* }

        impl Fns {
            fn load(lib: &Library) -> Result<Fns, String> {
                Ok(Fns { $($name: {
                    // SAFETY: the symbol is declared with its type in the OTF2 3 headers; the
                    // pointer is used only while `lib`, kept beside it in `Otf2`, is loaded.
                    let sym = unsafe { lib.get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(stringify!($name)) };
                    *sym.map_err(|e| format!("{}: {e}", stringify!($name)))?
                },)* })
            }
        }
    };
}

functions! {
    OTF2_Error_RegisterCallback: fn(Option<ErrorCb>, P) -> Option<ErrorCb>;
    OTF2_Error_GetName: fn(c_int) -> *const c_char;
    OTF2_Error_GetDescription: fn(c_int) -> *const c_char;
    /// Not called: loaded to require OTF2 3, whose callback arguments are declared here.
    #[allow(dead_code)]
    OTF2_GlobalDefWriter_WriteInterComm: fn(P, u32, u32, u32, u32, u32, u32) -> c_int;
    OTF2_Reader_Open: fn(*const c_char) -> P;
    OTF2_Reader_Close: fn(P) -> c_int;
    OTF2_Reader_SetSerialCollectiveCallbacks: fn(P) -> c_int;
    OTF2_Reader_GetGlobalDefReader: fn(P) -> P;
    OTF2_Reader_RegisterGlobalDefCallbacks: fn(P, P, P, P) -> c_int;
    OTF2_Reader_ReadAllGlobalDefinitions: fn(P, P, *mut u64) -> c_int;
    OTF2_Reader_SelectLocation: fn(P, u64) -> c_int;
    OTF2_Reader_OpenDefFiles: fn(P) -> c_int;
    OTF2_Reader_OpenEvtFiles: fn(P) -> c_int;
    OTF2_Reader_GetDefReader: fn(P, u64) -> P;
    OTF2_Reader_ReadAllLocalDefinitions: fn(P, P, *mut u64) -> c_int;
    OTF2_Reader_CloseDefReader: fn(P, P) -> c_int;
    OTF2_Reader_GetEvtReader: fn(P, u64) -> P;
    OTF2_Reader_CloseDefFiles: fn(P) -> c_int;
    OTF2_Reader_GetGlobalEvtReader: fn(P) -> P;
    OTF2_Reader_RegisterGlobalEvtCallbacks: fn(P, P, P, P) -> c_int;
    OTF2_Reader_ReadAllGlobalEvents: fn(P, P, *mut u64) -> c_int;
    OTF2_Reader_CloseGlobalEvtReader: fn(P, P) -> c_int;
    OTF2_Reader_CloseEvtFiles: fn(P) -> c_int;
    OTF2_GlobalDefReaderCallbacks_New: fn() -> P;
    OTF2_GlobalDefReaderCallbacks_Delete: fn(P);
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback: fn(P, ClockCb) -> c_int;
    OTF2_GlobalDefReaderCallbacks_SetStringCallback: fn(P, StringCb) -> c_int;
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback: fn(P, LocGroupCb) -> c_int;
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback: fn(P, LocationCb) -> c_int;
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback: fn(P, RegionCb) -> c_int;
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback: fn(P, GroupCb) -> c_int;
    OTF2_GlobalDefReaderCallbacks_SetCommCallback: fn(P, CommCb) -> c_int;
    OTF2_GlobalEvtReaderCallbacks_New: fn() -> P;
    OTF2_GlobalEvtReaderCallbacks_Delete: fn(P);
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback: fn(P, EnterCb) -> c_int;
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback: fn(P, EnterCb) -> c_int;
    OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback: fn(P, P2pCb) -> c_int;
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback: fn(P, IP2pCb) -> c_int;
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback: fn(P, ReqCb) -> c_int;
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback: fn(P, ReqCb) -> c_int;
    OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback: fn(P, P2pCb) -> c_int;
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback: fn(P, IP2pCb) -> c_int;
    OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback: fn(P, ReqCb) -> c_int;
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback: fn(P, BeginCb) -> c_int;
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback: fn(P, EndCb) -> c_int;
    OTF2_Archive_Open: fn(*const c_char, *const c_char, u8, u64, u64, u8, u8) -> P;
    OTF2_Archive_Close: fn(P) -> c_int;
    OTF2_Archive_SetFlushCallbacks: fn(P, *const FlushCallbacks, P) -> c_int;
    OTF2_Archive_SetSerialCollectiveCallbacks: fn(P) -> c_int;
    OTF2_Archive_OpenEvtFiles: fn(P) -> c_int;
    OTF2_Archive_CloseEvtFiles: fn(P) -> c_int;
    OTF2_Archive_OpenDefFiles: fn(P) -> c_int;
    OTF2_Archive_CloseDefFiles: fn(P) -> c_int;
    OTF2_Archive_GetEvtWriter: fn(P, u64) -> P;
    OTF2_Archive_CloseEvtWriter: fn(P, P) -> c_int;
    OTF2_Archive_GetDefWriter: fn(P, u64) -> P;
    OTF2_Archive_CloseDefWriter: fn(P, P) -> c_int;
    OTF2_Archive_GetGlobalDefWriter: fn(P) -> P;
    OTF2_GlobalDefWriter_WriteClockProperties: fn(P, u64, u64, u64, u64) -> c_int;
    OTF2_GlobalDefWriter_WriteString: fn(P, u32, *const c_char) -> c_int;
    OTF2_GlobalDefWriter_WriteSystemTreeNode: fn(P, u32, u32, u32, u32) -> c_int;
    OTF2_GlobalDefWriter_WriteLocationGroup: fn(P, u32, u32, u8, u32, u32) -> c_int;
    OTF2_GlobalDefWriter_WriteLocation: fn(P, u64, u32, u8, u64, u32) -> c_int;
    OTF2_GlobalDefWriter_WriteRegion: fn(P, u32, u32, u32, u32, u8, u8, u32, u32, u32, u32) -> c_int;
    OTF2_GlobalDefWriter_WriteGroup: fn(P, u32, u32, u8, u8, u32, u32, *const u64) -> c_int;
    OTF2_GlobalDefWriter_WriteComm: fn(P, u32, u32, u32, u32, u32) -> c_int;
    OTF2_EvtWriter_Enter: fn(P, Attrs, u64, u32) -> c_int;
    OTF2_EvtWriter_Leave: fn(P, Attrs, u64, u32) -> c_int;
    OTF2_EvtWriter_MpiSend: fn(P, Attrs, u64, u32, u32, u32, u64) -> c_int;
    OTF2_EvtWriter_MpiIsend: fn(P, Attrs, u64, u32, u32, u32, u64, u64) -> c_int;
    OTF2_EvtWriter_MpiIsendComplete: fn(P, Attrs, u64, u64) -> c_int;
    OTF2_EvtWriter_MpiIrecvRequest: fn(P, Attrs, u64, u64) -> c_int;
    OTF2_EvtWriter_MpiRecv: fn(P, Attrs, u64, u32, u32, u32, u64) -> c_int;
    OTF2_EvtWriter_MpiIrecv: fn(P, Attrs, u64, u32, u32, u32, u64, u64) -> c_int;
    OTF2_EvtWriter_MpiCollectiveBegin: fn(P, Attrs, u64) -> c_int;
    OTF2_EvtWriter_MpiCollectiveEnd: fn(P, Attrs, u64, u8, u32, u32, u64, u64) -> c_int;
}

/// The loaded library and its functions.
pub struct Otf2 {
    f: Fns,
    /// Keeps the functions' code mapped; never unloaded before `f`.
    _lib: Library,
}

thread_local! {
    /// What the library last reported on this thread: (function, message format).
    static LAST_ERROR: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Records the library's report instead of printing it; the caller names the error.
extern "C" fn on_error(
    _user: P,
    _file: *const c_char,
    _line: u64,
    function: *const c_char,
    code: c_int,
    format: *const c_char,
    _va: P,
) -> c_int {
    if code > 0 {
        let report = (text(function), text(format).replace("%s", "…"));
        LAST_ERROR.with(|e| *e.borrow_mut() = Some(report));
    }
    code
}

/// A C string from the library, empty when null.
fn text(s: *const c_char) -> String {
    if s.is_null() {
        return String::new();
    }
    // SAFETY: the library passes NUL-terminated strings that live for the call.
    unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
}

/// Loads the first of `names` that opens and has every function.
pub fn load(names: &[String]) -> Result<Otf2, String> {
    let mut tried = Vec::new();
    for name in names {
        // SAFETY: loading runs the library's initialisers; OTF2's only set up its own state.
        match unsafe { Library::new(name.as_str()) } {
            Ok(lib) => {
                let f = Fns::load(&lib).map_err(|e| {
                    format!("{name} is not the OTF2 3 library (missing {e}); install OTF2 3, e.g. `apt-get install {PACKAGES}`")
                })?;
                // The error codes this reader tells apart, checked by the library's own names.
                // SAFETY: the function returns a static string for any code.
                let named = |code| unsafe { text((f.OTF2_Error_GetName)(code)) };
                if named(INTERRUPTED_BY_CALLBACK) != "INTERRUPTED_BY_CALLBACK" {
                    return Err(format!("{name} numbers its error codes unlike OTF2 3"));
                }
                // SAFETY: `on_error` has the C signature of `OTF2_ErrorCallback` and keeps no
                // user data; it stays valid for the life of the process.
                unsafe { (f.OTF2_Error_RegisterCallback)(Some(on_error), std::ptr::null_mut()) };
                return Ok(Otf2 { f, _lib: lib });
            }
            Err(e) => match std::error::Error::source(&e) {
                Some(why) => tried.push(format!("{name} ({why})")),
                None => tried.push(format!("{name} ({e})")),
            },
        }
    }
    Err(format!(
        "the OTF2 library is needed to read or write OTF2 traces and could not be loaded: tried {}; \
         install it with `apt-get install {PACKAGES}`, or set {LIBRARY_ENV} to an OTF2 3 libotf2.so",
        tried.join(", ")
    ))
}

impl Otf2 {
    /// `what` failed with `code`: the library's name and description of it, and its report.
    fn failure(&self, what: &str, code: c_int) -> String {
        // SAFETY: both functions return static strings for any code.
        let (name, desc) = unsafe {
            let f = &self.f;
            (
                text((f.OTF2_Error_GetName)(code)),
                text((f.OTF2_Error_GetDescription)(code)),
            )
        };
        let report = LAST_ERROR.with(|e| e.borrow_mut().take());
        match report {
            Some((func, msg)) if !msg.is_empty() => {
                format!("{what}: {name} ({desc}): {func}: {msg}")
            }
            _ => format!("{what}: {name} ({desc})"),
        }
    }

    fn check(&self, what: &str, code: c_int) -> Result<(), String> {
        (code == SUCCESS)
            .then_some(())
            .ok_or_else(|| self.failure(what, code))
    }

    fn not_null(&self, what: &str, p: P) -> Result<P, String> {
        if !p.is_null() {
            return Ok(p);
        }
        let report = LAST_ERROR.with(|e| e.borrow_mut().take());
        Err(match report {
            Some((func, msg)) => format!("{what} failed: {func}: {msg}"),
            None => format!("{what} failed"),
        })
    }
}

/// What the read callbacks reach through `userData`.
struct ReadCtx<'s> {
    sink: &'s mut dyn Sink,
    locations: Vec<u64>,
    panicked: bool,
}

/// Runs `f` on the context behind `user`, a panic becoming an interrupted read.
fn with_ctx(user: P, f: impl FnOnce(&mut ReadCtx<'_>) -> bool) -> c_int {
    // SAFETY: `user` is the `&mut ReadCtx` that `read` registered for this read, alive and not
    // otherwise borrowed while the library runs callbacks on this thread.
    let ctx = unsafe { &mut *(user as *mut ReadCtx<'_>) };
    match catch_unwind(AssertUnwindSafe(|| f(ctx))) {
        Ok(true) => CALLBACK_SUCCESS,
        Ok(false) => CALLBACK_INTERRUPT,
        Err(_) => {
            ctx.panicked = true;
            CALLBACK_INTERRUPT
        }
    }
}

fn def(user: P, d: Def<'_>) -> c_int {
    with_ctx(user, |c| {
        if let Def::Location { id, .. } = d {
            c.locations.push(id);
        }
        c.sink.definition(d)
    })
}

/// Declares `OTF2_GlobalDefReaderCallback_*` functions (user data, then the definition's
/// arguments) that hand the definition to the sink; arguments named `_*` are not kept.
macro_rules! definition_callbacks {
    ($($cb:ident($($arg:ident: $ty:ty),*) => $variant:ident { $($field:ident),* };)*) => {$(
        #[allow(clippy::too_many_arguments)]
        extern "C" fn $cb(user: P, $($arg: $ty),*) -> c_int {
            def(user, Def::$variant { $($field),* })
        }
    )*};
}

definition_callbacks! {
    clock_cb(resolution: u64, offset: u64, length: u64, _realtime: u64) => Clock { resolution, offset, length };
    loc_group_cb(id: u32, name: u32, kind: u8, parent: u32, _creator: u32) => LocationGroup { id, name, kind, parent };
    location_cb(id: u64, name: u32, kind: u8, events: u64, group: u32) => Location { id, name, kind, events, group };
    region_cb(id: u32, name: u32, _canonical: u32, _description: u32, role: u8, paradigm: u8, _flags: u32,
        _file: u32, _begin: u32, _end: u32) => Region { id, name, role, paradigm };
    comm_cb(id: u32, name: u32, group: u32, _parent: u32, _flags: u32) => Comm { id, name, group };
}

extern "C" fn string_cb(user: P, id: u32, s: *const c_char) -> c_int {
    def(user, Def::String { id, text: &text(s) })
}

#[allow(clippy::too_many_arguments)]
extern "C" fn group_cb(
    user: P,
    id: u32,
    name: u32,
    kind: u8,
    paradigm: u8,
    flags: u32,
    n: u32,
    members: *const u64,
) -> c_int {
    let members = if n == 0 || members.is_null() {
        &[][..]
    } else {
        // SAFETY: the library passes `n` members that stay valid for the call.
        unsafe { std::slice::from_raw_parts(members, n as usize) }
    };
    def(
        user,
        Def::Group {
            id,
            name,
            kind,
            paradigm,
            flags,
            members,
        },
    )
}

/// Declares `OTF2_GlobalEvtReaderCallback_*` functions (location, time, user data, attribute
/// list, then the record's fields) that hand the record to the sink.
macro_rules! event_callbacks {
    ($($cb:ident($($field:ident: $ty:ty),*) => $variant:ident;)*) => {$(
        extern "C" fn $cb(loc: u64, time: u64, user: P, _attrs: Attrs, $($field: $ty),*) -> c_int {
            with_ctx(user, |c| c.sink.event(loc, time, Event::$variant { $($field),* }))
        }
    )*};
}

event_callbacks! {
    enter_cb(region: u32) => Enter;
    leave_cb(region: u32) => Leave;
    send_cb(receiver: u32, comm: u32, tag: u32, bytes: u64) => MpiSend;
    isend_cb(receiver: u32, comm: u32, tag: u32, bytes: u64, request: u64) => MpiIsend;
    isend_complete_cb(request: u64) => MpiIsendComplete;
    irecv_request_cb(request: u64) => MpiIrecvRequest;
    recv_cb(sender: u32, comm: u32, tag: u32, bytes: u64) => MpiRecv;
    irecv_cb(sender: u32, comm: u32, tag: u32, bytes: u64, request: u64) => MpiIrecv;
    cancelled_cb(request: u64) => MpiRequestCancelled;
    coll_begin_cb() => MpiCollectiveBegin;
    coll_end_cb(op: u8, comm: u32, root: u32, sent: u64, received: u64) => MpiCollectiveEnd;
}

/// An open reader or archive and the function closing it, called when dropped.
struct Handle(P, unsafe extern "C" fn(P) -> c_int);

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: `self.0` came from the open matching `self.1` and is closed only here.
        unsafe { (self.1)(self.0) };
    }
}

impl Otf2 {
    /// Reads the archive at `anchor`: global definitions, then every location's local
    /// definitions (the id mappings), then all events merged in time order.
    pub fn read(&self, anchor: &Path, sink: &mut dyn Sink) -> Result<(), String> {
        let path = CString::new(anchor.as_os_str().as_encoded_bytes())
            .map_err(|_| "the path has a NUL byte".to_string())?;
        let mut ctx = ReadCtx {
            sink,
            locations: Vec::new(),
            panicked: false,
        };
        let user = &mut ctx as *mut ReadCtx<'_> as P;
        let f = &self.f;
        // SAFETY (whole block): every handle passed comes from the library call before it and
        // is used only while `reader` is open; callback tables are deleted after registering,
        // as the library copies them; `user` points to `ctx`, which outlives the reads.
        let code = unsafe {
            let r = self.not_null("opening the archive", (f.OTF2_Reader_Open)(path.as_ptr()))?;
            let _reader = Handle(r, f.OTF2_Reader_Close);
            self.check(
                "setting up the reader",
                (f.OTF2_Reader_SetSerialCollectiveCallbacks)(r),
            )?;
            let gdr = self.not_null(
                "reading the global definitions",
                (f.OTF2_Reader_GetGlobalDefReader)(r),
            )?;
            let cbs = (f.OTF2_GlobalDefReaderCallbacks_New)();
            (f.OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback)(cbs, clock_cb);
            (f.OTF2_GlobalDefReaderCallbacks_SetStringCallback)(cbs, string_cb);
            (f.OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback)(cbs, loc_group_cb);
            (f.OTF2_GlobalDefReaderCallbacks_SetLocationCallback)(cbs, location_cb);
            (f.OTF2_GlobalDefReaderCallbacks_SetRegionCallback)(cbs, region_cb);
            (f.OTF2_GlobalDefReaderCallbacks_SetGroupCallback)(cbs, group_cb);
            (f.OTF2_GlobalDefReaderCallbacks_SetCommCallback)(cbs, comm_cb);
            let registered = (f.OTF2_Reader_RegisterGlobalDefCallbacks)(r, gdr, cbs, user);
            (f.OTF2_GlobalDefReaderCallbacks_Delete)(cbs);
            self.check("reading the global definitions", registered)?;
            let mut n = 0u64;
            let code = (f.OTF2_Reader_ReadAllGlobalDefinitions)(r, gdr, &mut n);
            if code != SUCCESS {
                return self.outcome(code, &ctx, "reading the global definitions");
            }
            for &loc in &ctx.locations {
                self.check(
                    "selecting a location",
                    (f.OTF2_Reader_SelectLocation)(r, loc),
                )?;
            }
            let defs_open = (f.OTF2_Reader_OpenDefFiles)(r) == SUCCESS;
            self.check("opening the event files", (f.OTF2_Reader_OpenEvtFiles)(r))?;
            for &loc in &ctx.locations {
                if defs_open {
                    let dr = (f.OTF2_Reader_GetDefReader)(r, loc);
                    if !dr.is_null() {
                        let code = (f.OTF2_Reader_ReadAllLocalDefinitions)(r, dr, &mut n);
                        (f.OTF2_Reader_CloseDefReader)(r, dr);
                        self.check(
                            &format!("reading the local definitions of location {loc}"),
                            code,
                        )?;
                    }
                }
                self.not_null(
                    &format!("opening the events of location {loc}"),
                    (f.OTF2_Reader_GetEvtReader)(r, loc),
                )?;
            }
            if defs_open {
                (f.OTF2_Reader_CloseDefFiles)(r);
            }
            let ger = self.not_null("reading the events", (f.OTF2_Reader_GetGlobalEvtReader)(r))?;
            let cbs = (f.OTF2_GlobalEvtReaderCallbacks_New)();
            (f.OTF2_GlobalEvtReaderCallbacks_SetEnterCallback)(cbs, enter_cb);
            (f.OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback)(cbs, leave_cb);
            (f.OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback)(cbs, send_cb);
            (f.OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback)(cbs, isend_cb);
            (f.OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback)(cbs, isend_complete_cb);
            (f.OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback)(cbs, irecv_request_cb);
            (f.OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback)(cbs, recv_cb);
            (f.OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback)(cbs, irecv_cb);
            (f.OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback)(cbs, cancelled_cb);
            (f.OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback)(cbs, coll_begin_cb);
            (f.OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback)(cbs, coll_end_cb);
            let registered = (f.OTF2_Reader_RegisterGlobalEvtCallbacks)(r, ger, cbs, user);
            (f.OTF2_GlobalEvtReaderCallbacks_Delete)(cbs);
            self.check("reading the events", registered)?;
            let code = (f.OTF2_Reader_ReadAllGlobalEvents)(r, ger, &mut n);
            (f.OTF2_Reader_CloseGlobalEvtReader)(r, ger);
            (f.OTF2_Reader_CloseEvtFiles)(r);
            code
        };
        self.outcome(code, &ctx, "reading the events")
    }

    /// The end of a read: done, stopped by the sink (whose errors tell why) or by a panic, or
    /// failed doing `what`.
    fn outcome(&self, code: c_int, ctx: &ReadCtx<'_>, what: &str) -> Result<(), String> {
        match code {
            SUCCESS | INTERRUPTED_BY_CALLBACK if !ctx.panicked => Ok(()),
            SUCCESS | INTERRUPTED_BY_CALLBACK => Err("a read callback panicked".into()),
            code => Err(self.failure(what, code)),
        }
    }
}

extern "C" fn pre_flush(_u: P, _file: u8, _loc: u64, _caller: P, _final: bool) -> u8 {
    FLUSH
}

impl Otf2 {
    /// Writes archive `name` in directory `dir` (anchor `dir/name.otf2`): each location's
    /// events (location id, then (time, event) in order), then the global definitions.
    pub fn write(
        &self,
        dir: &Path,
        name: &str,
        defs: &[Def<'_>],
        events: &[(u64, Vec<(u64, Event)>)],
    ) -> Result<(), String> {
        let cdir = CString::new(dir.as_os_str().as_encoded_bytes())
            .map_err(|_| "the path has a NUL byte")?;
        let cname = CString::new(name).map_err(|_| "the name has a NUL byte")?;
        let strings: Vec<CString> = defs
            .iter()
            .map(|d| match d {
                Def::String { text, .. } => {
                    CString::new(*text).map_err(|_| format!("string {text:?} has a NUL byte"))
                }
                _ => Ok(CString::default()),
            })
            .collect::<Result<_, _>>()?;
        let flush = FlushCallbacks {
            pre_flush,
            post_flush: None,
        };
        let f = &self.f;
        let nul = std::ptr::null_mut();
        // SAFETY (whole block): every handle passed comes from the library call before it and
        // is used only while `archive` is open; strings and member arrays outlive the calls;
        // `flush` outlives the archive, closed (or dropped) before the function returns.
        unsafe {
            let open = (f.OTF2_Archive_Open)(
                cdir.as_ptr(),
                cname.as_ptr(),
                FILEMODE_WRITE,
                1 << 20,
                4 << 20,
                SUBSTRATE_POSIX,
                COMPRESSION_NONE,
            );
            let a = self.not_null("creating the archive", open)?;
            let archive = Handle(a, f.OTF2_Archive_Close);
            self.check(
                "setting up the archive",
                (f.OTF2_Archive_SetFlushCallbacks)(a, &flush, nul),
            )?;
            self.check(
                "setting up the archive",
                (f.OTF2_Archive_SetSerialCollectiveCallbacks)(a),
            )?;
            self.check("opening the event files", (f.OTF2_Archive_OpenEvtFiles)(a))?;
            for (loc, evs) in events {
                let what = format!("writing the events of location {loc}");
                let w = self.not_null(&what, (f.OTF2_Archive_GetEvtWriter)(a, *loc))?;
                for &(t, e) in evs {
                    self.check(&what, self.write_event(w, t, e))?;
                }
                self.check(&what, (f.OTF2_Archive_CloseEvtWriter)(a, w))?;
            }
            self.check("closing the event files", (f.OTF2_Archive_CloseEvtFiles)(a))?;
            self.check(
                "opening the definition files",
                (f.OTF2_Archive_OpenDefFiles)(a),
            )?;
            for (loc, _) in events {
                let w = self.not_null(
                    "writing local definitions",
                    (f.OTF2_Archive_GetDefWriter)(a, *loc),
                )?;
                self.check(
                    "writing local definitions",
                    (f.OTF2_Archive_CloseDefWriter)(a, w),
                )?;
            }
            self.check(
                "closing the definition files",
                (f.OTF2_Archive_CloseDefFiles)(a),
            )?;
            let g = self.not_null(
                "writing the global definitions",
                (f.OTF2_Archive_GetGlobalDefWriter)(a),
            )?;
            for (d, s) in defs.iter().zip(&strings) {
                self.check("writing the global definitions", self.write_def(g, d, s)?)?;
            }
            std::mem::forget(archive);
            self.check("closing the archive", (f.OTF2_Archive_Close)(a))?;
        }
        Ok(())
    }

    /// Writes one record with event writer `w` at tick `t`.
    ///
    /// # Safety
    /// `w` is an event writer of an archive open for writing.
    #[rustfmt::skip] // One record per line, in the order of the C arguments.
    unsafe fn write_event(&self, w: P, t: u64, e: Event) -> c_int {
        let (f, nul) = (&self.f, std::ptr::null_mut());
        // SAFETY: `w` is open (the caller's contract); the arguments have the C types.
        unsafe {
            match e {
                Event::Enter { region } => (f.OTF2_EvtWriter_Enter)(w, nul, t, region),
                Event::Leave { region } => (f.OTF2_EvtWriter_Leave)(w, nul, t, region),
                Event::MpiSend { receiver, comm, tag, bytes } => (f.OTF2_EvtWriter_MpiSend)(w, nul, t, receiver, comm, tag, bytes),
                Event::MpiIsend { receiver, comm, tag, bytes, request } => (f.OTF2_EvtWriter_MpiIsend)(w, nul, t, receiver, comm, tag, bytes, request),
                Event::MpiIsendComplete { request } => (f.OTF2_EvtWriter_MpiIsendComplete)(w, nul, t, request),
                Event::MpiIrecvRequest { request } => (f.OTF2_EvtWriter_MpiIrecvRequest)(w, nul, t, request),
                Event::MpiRecv { sender, comm, tag, bytes } => (f.OTF2_EvtWriter_MpiRecv)(w, nul, t, sender, comm, tag, bytes),
                Event::MpiIrecv { sender, comm, tag, bytes, request } => (f.OTF2_EvtWriter_MpiIrecv)(w, nul, t, sender, comm, tag, bytes, request),
                Event::MpiCollectiveBegin => (f.OTF2_EvtWriter_MpiCollectiveBegin)(w, nul, t),
                Event::MpiCollectiveEnd { op, comm, root, sent, received } => (f.OTF2_EvtWriter_MpiCollectiveEnd)(w, nul, t, op, comm, root, sent, received),
                // Never written: the model has no cancelled request.
                Event::MpiRequestCancelled { .. } => SUCCESS,
            }
        }
    }

    /// Writes one definition with global definition writer `g`; `s` is the C form of a
    /// string definition's text.
    ///
    /// # Safety
    /// `g` is the global definition writer of an archive open for writing.
    #[rustfmt::skip] // One definition per line, in the order of the C arguments.
    unsafe fn write_def(&self, g: P, d: &Def<'_>, s: &CStr) -> Result<c_int, String> {
        let (f, none) = (&self.f, UNDEFINED_U32);
        // SAFETY: `g` is open (the caller's contract); the arguments have the C types, and
        // `s` and a group's members outlive the call.
        Ok(unsafe {
            match *d {
                Def::Clock { resolution, offset, length } => (f.OTF2_GlobalDefWriter_WriteClockProperties)(g, resolution, offset, length, u64::MAX),
                Def::String { id, .. } => (f.OTF2_GlobalDefWriter_WriteString)(g, id, s.as_ptr()),
                Def::SystemTreeNode { id, name, class } => (f.OTF2_GlobalDefWriter_WriteSystemTreeNode)(g, id, name, class, none),
                Def::LocationGroup { id, name, kind, parent } => (f.OTF2_GlobalDefWriter_WriteLocationGroup)(g, id, name, kind, parent, none),
                Def::Location { id, name, kind, events, group } => (f.OTF2_GlobalDefWriter_WriteLocation)(g, id, name, kind, events, group),
                Def::Region { id, name, role, paradigm } => (f.OTF2_GlobalDefWriter_WriteRegion)(g, id, name, name, none, role, paradigm, 0, none, 0, 0),
                Def::Group { id, name, kind, paradigm, flags, members } => {
                    let n = u32::try_from(members.len()).map_err(|_| "a group of more than 2^32 members")?;
                    (f.OTF2_GlobalDefWriter_WriteGroup)(g, id, name, kind, paradigm, flags, n, members.as_ptr())
                }
                Def::Comm { id, name, group } => (f.OTF2_GlobalDefWriter_WriteComm)(g, id, name, group, none, 0),
            }
        })
    }
}
