//! Tile memory: one zero-initialized allocation per tile, accessed through raw pointers.

use std::ops::Range;

use super::EngineError;
use crate::exe::{Executable, MemRun};
use crate::target::TileId;

// ---------------------------------------------------------------------------------------------
// Tile memory

/// One tile's memory: a zeroed allocation of whole `u64`s accessed only through its raw pointer
/// (so that no reference to the whole buffer ever coexists with the per-field views handed to
/// codelets).
pub(crate) struct TileMem {
    pub(crate) ptr: *mut u8,
    layout: std::alloc::Layout,
    pub(crate) bytes: usize,
}

impl TileMem {
    /// `None` when the host cannot allocate it (reported as an engine error, never an abort).
    pub(crate) fn new(bytes: usize) -> Option<TileMem> {
        // At least one word, so the allocation is never zero-sized.
        let layout = std::alloc::Layout::array::<u64>(bytes.div_ceil(8).max(1)).ok()?;
        // SAFETY: `layout` has a non-zero size (at least one u64) and a valid alignment.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return None;
        }
        Some(TileMem { ptr, layout, bytes })
    }
}

impl Drop for TileMem {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `alloc_zeroed(self.layout)` in `TileMem::new` (non-null) and
        // is freed only here, once, with the same layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// All tile memories.
pub(crate) struct Memory {
    pub(crate) tiles: Vec<TileMem>,
}

// SAFETY: `Memory` owns its allocations. Concurrent access happens only inside `Engine::run`
// (which holds `&mut Engine`), where each compute task touches only the tiles of its own
// disjoint chunk (a tile appears at most once per compute phase: `check()`), exchange tasks
// write only destination ranges that overlap no source and no other destination (`check()`),
// and the tasks of a grouped run touch only the tiles of their own groups (a group is closed
// under the run's copies: `grouped::grouped_run` joins every copy's source and destination tile).
unsafe impl Send for Memory {}
// SAFETY: as above.
unsafe impl Sync for Memory {}

impl Memory {
    #[inline]
    pub(crate) fn base(&self, tile: TileId) -> *mut u8 {
        self.tiles[tile.index()].ptr
    }

    #[inline]
    pub(crate) fn in_bounds(&self, tile: TileId, offset: usize, len: usize) -> bool {
        self.tiles
            .get(tile.index())
            .is_some_and(|t| offset.checked_add(len).is_some_and(|e| e <= t.bytes))
    }

    /// Copies bytes out of a tile. Caller guarantees the range is in bounds and no writer runs.
    #[inline]
    pub(crate) fn read(&self, tile: TileId, offset: usize, out: &mut [u8]) {
        assert!(self.in_bounds(tile, offset, out.len()));
        // SAFETY: range checked just above; no concurrent writer (callers hold `&Engine` outside
        // `run`, or are the single thread interpreting control flow between phases).
        unsafe {
            std::ptr::copy_nonoverlapping(self.base(tile).add(offset), out.as_mut_ptr(), out.len())
        }
    }

    /// Copies bytes out of a tile into memory not yet initialised (the spare capacity of a
    /// `Vec`): after it, `out` is initialised. Same contract as [`Memory::read`].
    #[inline]
    pub(crate) fn read_uninit(
        &self,
        tile: TileId,
        offset: usize,
        out: &mut [std::mem::MaybeUninit<u8>],
    ) {
        assert!(self.in_bounds(tile, offset, out.len()));
        // SAFETY: range checked just above; no concurrent writer (as in `read`); `out` is valid
        // for `out.len()` bytes of writes (a `MaybeUninit<u8>` has the layout of a `u8`), and
        // the tile's bytes and `out` cannot overlap (`out` is borrowed mutably).
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.base(tile).add(offset),
                out.as_mut_ptr().cast::<u8>(),
                out.len(),
            )
        }
    }

    /// Copies bytes into a tile. Caller guarantees no other access runs.
    #[inline]
    pub(crate) fn write(&self, tile: TileId, offset: usize, data: &[u8]) {
        assert!(self.in_bounds(tile, offset, data.len()));
        // SAFETY: range checked just above; callers hold `&mut Engine` or are the single thread
        // interpreting control flow between phases, so nothing else accesses tile memory.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.base(tile).add(offset), data.len())
        }
    }
}

impl Memory {
    /// Zeroed memory for this rank's tiles of `exe` (the others' get none: `in_bounds`
    /// refuses them); a tile the host cannot allocate is an error naming it.
    pub(crate) fn allocate(exe: &Executable, mine: &Range<TileId>) -> Result<Memory, EngineError> {
        let tiles = exe
            .tiles
            .iter()
            .enumerate()
            .map(|(t, img)| {
                let bytes = if mine.contains(&TileId::new(t as u32)) {
                    img.memory_bytes
                } else {
                    0
                };
                TileMem::new(bytes as usize).ok_or(EngineError::HostOutOfMemory {
                    tile: TileId::new(t as u32),
                    bytes,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Memory { tiles })
    }

    /// Moves `exe`'s initial data into this rank's tiles: each block is written, then the
    /// executable's share of its bytes dropped (other ranks' blocks too: those ranks hold
    /// them), so `exe` keeps every block's offset and length but none of its bytes.
    pub(crate) fn load_init(&self, exe: &mut Executable, mine: &Range<TileId>) {
        for (t, img) in exe.tiles.iter_mut().enumerate() {
            for b in &mut img.init {
                let data = std::mem::take(&mut b.data);
                if mine.contains(&TileId::new(t as u32)) {
                    // In bounds and data.len() == len: `check()` (InitOutOfBounds, InitLength).
                    self.write(TileId::new(t as u32), b.offset as usize, &data);
                }
            }
        }
    }
}

/// The bytes of `runs`, concatenated (host reads and device-to-host streams).
pub(crate) fn gather_runs(mem: &Memory, runs: &[MemRun]) -> Vec<u8> {
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
