//! Software prefetches: the cache lines a unit reads first in a window, requested while the
//! unit before it steps, so that on fabrics larger than the caches their misses overlap instead
//! of following one another. A prefetch changes no value, only when a line reaches the cache.

/// Asks for the cache line holding `p` (no effect on targets without a prefetch instruction).
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing the program sees, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
