//! The reverse direction of a link as records: in hardware, one credit-return count per VC every
//! cycle (and at most one ARN control flit); here, a record when a credit stream starts or stops
//! ([`Backward`]), turned back into each cycle's per-VC credits by the sender ([`CreditReturns`],
//! the reference of the switches' closed form).
//!
//! A record carries one count per VC lane; how many lanes is the fabric's const parameter `V`:
//! 4 for the paper's schemes, 16 for up to InfiniBand's 16 VLs.

use crate::wire::{ArnInfo, Cnm};

/// Largest number of VCs per port: InfiniBand's 16 data VLs (regular VCs of the queuing scheme
/// plus the AFC under AFI).
pub const MAX_VCS: usize = 16;

/// VC lanes of a fabric whose ports have at most four VCs: the paper's queuing schemes (three
/// regular VCs plus the AFC).
///
/// Every credit record carries one count per VC lane and the switches keep one counter per lane,
/// so the link, switch and node types take the number of lanes as a const
/// parameter `V` (a power of two, at least the ports' VC count) and a fabric is built for
/// `FEW_VCS` or for [`MAX_VCS`] lanes, chosen once from the scenario ([`lanes_for`]). Sixteen
/// lanes for every fabric cost 15 % more instructions on configuration 1 (credit records of
/// four times the size, copied and scanned on every return).
pub const FEW_VCS: usize = 4;

/// The VC lanes of a fabric whose ports have `vcs` VCs: [`FEW_VCS`] up to four, else
/// [`MAX_VCS`].
pub fn lanes_for(vcs: usize) -> usize {
    if vcs <= FEW_VCS { FEW_VCS } else { MAX_VCS }
}

/// Checks, at compile time, a number of VC lanes `V` the engines are instantiated with: a
/// power of two (per-VC indices are masked with `V - 1`) from 1 to [`MAX_VCS`].
pub(crate) struct Lanes<const V: usize>;

impl<const V: usize> Lanes<V> {
    /// Referenced by every constructor of a type sized by `V`.
    pub(crate) const OK: () = assert!(V.is_power_of_two() && V <= MAX_VCS);
}

/// What the receiving side sends back in one cycle: changes to its credit streams per VC, and
/// at most one ARN.
///
/// A credit stream is one packet leaving the buffer: one credit per cycle, from the cycle of the
/// record that starts it to the cycle of the record that stops it, both included.
///
/// `V` is the fabric's number of VC lanes (see [`FEW_VCS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Backward<const V: usize> {
    /// Credit streams starting in this cycle, per VC.
    #[serde(with = "serde_big_array::BigArray")]
    pub start: [u8; V],
    /// Credits those streams will return in all (their packets' lengths), per VC.
    #[serde(with = "serde_big_array::BigArray")]
    pub start_flits: [u32; V],
    /// Credit streams returning their last credit in this cycle, per VC.
    #[serde(with = "serde_big_array::BigArray")]
    pub stop: [u8; V],
    /// An ARN travelling upstream, out of band of the data VCs.
    pub arn: Option<ArnInfo>,
    /// A QCN congestion notification travelling upstream, out of band too.
    #[serde(default)]
    pub cnm: Option<Cnm>,
}

impl<const V: usize> Default for Backward<V> {
    fn default() -> Self {
        let () = Lanes::<V>::OK;
        Backward {
            start: [0; V],
            start_flits: [0; V],
            stop: [0; V],
            arn: None,
            cnm: None,
        }
    }
}

impl<const V: usize> Backward<V> {
    /// Whether this carries nothing.
    pub fn is_empty(&self) -> bool {
        self.arn.is_none()
            && self.cnm.is_none()
            && self.start.iter().all(|&c| c == 0)
            && self.stop.iter().all(|&c| c == 0)
    }

    /// Whether this starts or stops a credit stream.
    pub fn has_credits(&self) -> bool {
        self.start.iter().chain(&self.stop).any(|&c| c != 0)
    }

    /// Whether this starts a credit stream (on any VC).
    #[inline]
    pub fn starts_streams(&self) -> bool {
        self.start != [0; V]
    }

    /// A packet of `len` flits on `vc` starts freeing its flits, one per cycle from this one.
    #[inline]
    pub fn start_stream(&mut self, vc: usize, len: u16) {
        self.start[vc] += 1;
        self.start_flits[vc] += len as u32;
    }

    /// A packet on `vc` frees its last flit in this cycle.
    #[inline]
    pub fn stop_stream(&mut self, vc: usize) {
        self.stop[vc] += 1;
    }

    /// Forgets every change, keeping the ARN field as it is.
    #[inline]
    pub fn clear_credits(&mut self) {
        self.start = [0; V];
        self.start_flits = [0; V];
        self.stop = [0; V];
    }
}

/// The credit streams coming back to one output, returned cycle by cycle: how many credits
/// arrive per VC in the current cycle, and how many are still to come from the streams that have
/// started. The reference the switches' closed form (`switch::output_credits`) is tested against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditReturns<const V: usize> {
    /// Streams returning a credit per cycle, per VC.
    rate: [u8; V],
    /// Streams that return their last credit in the current cycle, per VC.
    stopping: [u8; V],
    /// Credits the started streams have still to return, the current cycle's included.
    pending: [u32; V],
}

impl<const V: usize> Default for CreditReturns<V> {
    fn default() -> Self {
        let () = Lanes::<V>::OK;
        CreditReturns {
            rate: [0; V],
            stopping: [0; V],
            pending: [0; V],
        }
    }
}

impl<const V: usize> CreditReturns<V> {
    /// Takes in a record arriving in the current cycle.
    #[inline]
    pub fn arrive(&mut self, b: &Backward<V>) {
        for v in 0..V {
            self.rate[v] += b.start[v];
            self.pending[v] += b.start_flits[v];
            self.stopping[v] = b.stop[v];
        }
    }

    /// Credits arriving on `vc` in the current cycle.
    #[inline]
    pub fn now(&self, vc: usize) -> u8 {
        self.rate[vc]
    }

    /// Whether credits arrive in the current cycle.
    #[inline]
    pub fn any(&self) -> bool {
        self.rate != [0; V]
    }

    /// Ends a cycle in which credits arrived ([`CreditReturns::any`]): its credits are counted,
    /// and the streams that returned their last one stop. Returns whether credits arrive in the
    /// next cycle without a new record. `None` when a record stopped more streams than were
    /// running (a corrupted return path; streams returning more credits than their starts
    /// announced show in [`CreditReturns::pending`], which the credit conservation check reads).
    #[inline]
    pub fn end_cycle(&mut self) -> Option<bool> {
        debug_assert!(self.any());
        for v in 0..V {
            self.pending[v] = self.pending[v].wrapping_sub(self.rate[v] as u32);
        }
        if self.stopping == [0; V] {
            return Some(true);
        }
        let mut bad = false;
        for v in 0..V {
            let (rate, under) = self.rate[v].overflowing_sub(self.stopping[v]);
            self.rate[v] = rate;
            bad |= under;
        }
        self.stopping = [0; V];
        (!bad).then_some(self.any())
    }

    /// Credits on `vc` whose streams have started but that have not arrived yet.
    pub fn pending(&self, vc: usize) -> u64 {
        self.pending[vc] as u64
    }
}
