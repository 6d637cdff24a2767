//! What the event engine's parts reach of the fabric besides their own switch ports: the
//! switches' forwarding tables and the parameters, read only, and the end nodes with their two
//! channels and their entries of the in-order check, each written only by the part that owns the
//! node (the part of the switch port it is cabled to). State kept for speed; it models no
//! hardware.

use super::super::{Fabric, FabricParams, SwitchSetup};
use crate::fabric::node::EndNode;
use crate::wire::link::Channel;
use std::marker::PhantomData;

/// Elements of a slice handed out one at a time to the part that owns them.
struct Owned<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: an element is reached only through `Env`'s methods, whose callers (the part owning the
// node) promise that no other thread touches it meanwhile; see `Env::node`.
unsafe impl<T: Send> Send for Owned<T> {}
unsafe impl<T: Send> Sync for Owned<T> {}

impl<T> Owned<T> {
    fn new(s: &mut [T]) -> Self {
        Owned {
            ptr: s.as_mut_ptr(),
            len: s.len(),
        }
    }

    /// # Safety
    /// No other reference to element `i` lives while the one returned does.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self, i: usize) -> &mut T {
        assert!(i < self.len);
        // SAFETY: in bounds (checked), and exclusive by the caller's promise.
        unsafe { &mut *self.ptr.add(i) }
    }
}

/// The fabric as the event engine's handlers see it during a run.
pub(in crate::fabric) struct Env<'a, const V: usize> {
    pub switches: &'a [SwitchSetup],
    pub params: &'a FabricParams,
    nodes: Owned<EndNode<V>>,
    channels: Owned<Channel<V>>,
    order: Option<Owned<u32>>,
    _borrow: PhantomData<&'a mut ()>,
}

impl<'a, const V: usize> Env<'a, V> {
    /// The view of `f`, and its thread pool, for the duration of a run.
    pub fn new(f: &'a mut Fabric<V>) -> (Self, &'a super::super::parallel::Pool) {
        let Fabric {
            switches,
            params,
            nodes,
            channels,
            order,
            pool,
            ..
        } = f;
        let env = Env {
            switches,
            params,
            nodes: Owned::new(nodes),
            channels: Owned::new(channels),
            order: order.as_mut().map(|o| Owned::new(o)),
            _borrow: PhantomData,
        };
        (env, pool)
    }

    /// End nodes in the fabric.
    pub fn node_count(&self) -> usize {
        self.nodes.len
    }

    /// End node `n`.
    ///
    /// # Safety
    /// Called only by the part owning node `n`, and no other reference to the node lives
    /// meanwhile.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn node(&self, n: u32) -> &mut EndNode<V> {
        // SAFETY: the caller's promise.
        unsafe { self.nodes.get(n as usize) }
    }

    /// Channel `c`, one of a node's two.
    ///
    /// # Safety
    /// As for [`Env::node`], for the node whose channel it is.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn channel(&self, c: u32) -> &mut Channel<V> {
        // SAFETY: the caller's promise.
        unsafe { self.channels.get(c as usize) }
    }

    /// The in-order check's entry of the flow from node `src` to node `dst`, when it is on.
    ///
    /// # Safety
    /// As for [`Env::node`], for node `dst`.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn order(&self, src: u32, dst: u32) -> Option<&mut u32> {
        let k = src as usize * self.node_count() + dst as usize;
        // SAFETY: the caller's promise; the entries of a destination belong to its part.
        self.order.as_ref().map(|o| unsafe { o.get(k) })
    }
}
