//! Host-side performance hints for codelet authors. They change how fast the simulator runs a
//! codelet on the host CPU, never what it computes or the modelled cycles.

/// Asks the host CPU to bring the cache line holding `v` into its caches.
///
/// Why a codelet would: a tile's arrays are a few kilobytes between other tile data, and the
/// host's hardware prefetcher can fall behind on such short streams (the cardiac SpMV ran at
/// twice the time of the same rows in global arrays until it prefetched a few rows ahead).
#[inline(always)]
pub fn prefetch<T>(v: &T) {
    prefetch_ptr((v as *const T).cast::<u8>());
}

/// [`prefetch`] of an address that need not be dereferenceable (the engine's exchange loop).
#[inline(always)]
pub fn prefetch_ptr(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    // SAFETY: `_mm_prefetch` is unsafe only because it needs the `sse` target feature, which
    // the `cfg` above guarantees for the whole build. A prefetch never faults, whatever the
    // address, and has no effect on memory contents.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = p;
}

// ---------------------------------------------------------------------------------------------
// The progress hook: how `Worker::progress` reaches the engine's look-ahead (engine/lookahead.rs)
// without this room importing the engine.

/// Called by [`Worker::progress`](super::Worker::progress) with (worker, workers, done, total).
pub type ProgressHook = fn(u32, u32, usize, usize);

static PROGRESS_HOOK: std::sync::OnceLock<ProgressHook> = std::sync::OnceLock::new();

/// Installs the progress hook (once per process; the engine does, when it is built).
pub fn set_progress_hook(hook: ProgressHook) {
    let _ = PROGRESS_HOOK.set(hook);
}

/// Passes a codelet's progress report to the hook, if one is installed.
#[inline]
pub(crate) fn report_progress(worker: u32, workers: u32, done: usize, total: usize) {
    if let Some(hook) = PROGRESS_HOOK.get() {
        hook(worker, workers, done, total);
    }
}
