//! Tile memory: one zero-initialized allocation per tile, accessed through raw pointers.

use crate::exe::MemRun;
use crate::target::TileId;

// ---------------------------------------------------------------------------------------------
// Tile memory

/// One tile's memory: a leaked `Box<[u64]>` accessed only through its raw pointer (so that no
/// reference to the whole buffer ever coexists with the per-field views handed to codelets).
pub(super) struct TileMem {
    pub(super) ptr: *mut u8,
    pub(super) words: usize,
    pub(super) bytes: usize,
}

impl TileMem {
    pub(super) fn new(bytes: usize) -> TileMem {
        let words = bytes.div_ceil(8);
        let b: Box<[u64]> = vec![0u64; words].into_boxed_slice();
        let ptr = Box::into_raw(b).cast::<u8>();
        TileMem { ptr, words, bytes }
    }
}

impl Drop for TileMem {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `Box::into_raw` of a `Box<[u64]>` of `words` elements in
        // `TileMem::new` and is freed only here, once.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.ptr.cast::<u64>(),
                self.words,
            )));
        }
    }
}

/// All tile memories.
pub(super) struct Memory {
    pub(super) tiles: Vec<TileMem>,
}

// SAFETY: `Memory` owns its allocations. Concurrent access happens only inside `Engine::run`
// (which holds `&mut Engine`), where each compute task touches only the tiles of its own
// disjoint chunk (a tile appears at most once per compute phase: `check()`), and exchange tasks
// write only destination ranges that overlap no source and no other destination (`check()`).
unsafe impl Send for Memory {}
// SAFETY: as above.
unsafe impl Sync for Memory {}

impl Memory {
    #[inline]
    pub(super) fn base(&self, tile: TileId) -> *mut u8 {
        self.tiles[tile as usize].ptr
    }

    pub(super) fn in_bounds(&self, tile: TileId, offset: usize, len: usize) -> bool {
        self.tiles
            .get(tile as usize)
            .is_some_and(|t| offset.checked_add(len).is_some_and(|e| e <= t.bytes))
    }

    /// Copies bytes out of a tile. Caller guarantees the range is in bounds and no writer runs.
    pub(super) fn read(&self, tile: TileId, offset: usize, out: &mut [u8]) {
        assert!(self.in_bounds(tile, offset, out.len()));
        // SAFETY: range checked just above; no concurrent writer (callers hold `&Engine` outside
        // `run`, or are the single thread interpreting control flow between phases).
        unsafe {
            std::ptr::copy_nonoverlapping(self.base(tile).add(offset), out.as_mut_ptr(), out.len())
        }
    }

    /// Copies bytes into a tile. Caller guarantees no other access runs.
    pub(super) fn write(&self, tile: TileId, offset: usize, data: &[u8]) {
        assert!(self.in_bounds(tile, offset, data.len()));
        // SAFETY: range checked just above; callers hold `&mut Engine` or are the single thread
        // interpreting control flow between phases, so nothing else accesses tile memory.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.base(tile).add(offset), data.len())
        }
    }
}

/// The bytes of `runs`, concatenated (host reads and device-to-host streams).
pub(super) fn gather_runs(mem: &Memory, runs: &[MemRun]) -> Vec<u8> {
    let total: usize = runs.iter().map(|r| r.bytes as usize).sum();
    let mut out = vec![0u8; total];
    let mut pos = 0;
    for r in runs {
        let n = r.bytes as usize;
        mem.read(r.tile, r.offset as usize, &mut out[pos..pos + n]);
        pos += n;
    }
    out
}
