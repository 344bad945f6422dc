//! The host's backing store for Streaming Memory ("remote buffers"): the DRAM beside the chip,
//! which may be far bigger than the host's RAM (448 GB of it on a host with 24 GiB).
//!
//! Each remote buffer is a number of rows of a fixed size. The store is sparse: nothing is
//! allocated for a row until its first write, and a row never written reads as zeros. A written
//! row lives in one of two places:
//!
//! * resident: a zeroed `Box<[u8]>` in host memory (allocated through `vec![0; n]`, so the OS
//!   hands out lazily zeroed pages), used directly by `read_row` and `write_row` without a copy;
//! * spilled: a slot of one unnamed spill file (created lazily, on the first spill, in the
//!   budget's spill directory with `tempfile::tempfile_in`, so the OS removes it when it is
//!   dropped, even after a crash). A row's slot is appended at the end of the file the first
//!   time the row spills; from then on the row is read and written in place, through one scratch
//!   buffer.
//!
//! Policy: a row is kept resident when it is first written if the resident row bytes plus this
//! row stay within [`StreamingMemoryBudget::host_bytes`]; otherwise it spills. Nothing is ever
//! evicted: a resident row stays resident and a spilled row stays spilled. The policy decides
//! only where rows are kept, never what they contain, so results do not depend on the budget.
//!
//! Why positioned file I/O (`pread`/`pwrite` through `FileExt`) rather than a memory map
//! (e.g. `memmap2`): data written to a file sits in the kernel's page cache, which the kernel
//! writes back and reclaims under pressure and which does not count in the process's resident
//! set, so peak RSS stays bounded by the budget (plus one row of scratch). Every page of a
//! mapping that the process touches counts in its RSS until it is unmapped or `madvise`d away,
//! which would need explicit bookkeeping to keep the footprint bounded, and an I/O error on a
//! mapping arrives as `SIGBUS` instead of an `io::Error`. Spill-file errors are returned as
//! `io::Error` naming the spill directory, never a panic.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Where Streaming Memory rows live on the host: how many bytes may stay in host memory, and
/// where rows past that budget are spilled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamingMemoryBudget {
    /// Row bytes that may be kept in host memory; rows first written past it go to a spill file.
    pub host_bytes: u64,
    /// The directory of the spill file (an unnamed temporary file, removed by the OS when the
    /// engine drops it); `None` is [`std::env::temp_dir`].
    pub spill_dir: Option<PathBuf>,
}

impl Default for StreamingMemoryBudget {
    /// 4 GiB in host memory, spilling to [`std::env::temp_dir`].
    fn default() -> StreamingMemoryBudget {
        StreamingMemoryBudget {
            host_bytes: 4 << 30,
            spill_dir: None,
        }
    }
}

/// Where a written row is kept.
enum Row {
    /// In host memory.
    Resident(Box<[u8]>),
    /// In the spill file, at this byte offset.
    Spilled(u64),
}

/// One remote buffer: its row size, row count and written rows (by row index).
struct Buffer {
    row_bytes: usize,
    rows: u64,
    written: HashMap<u64, Row>,
}

/// The spill file: one slot of a row's size per spilled row, appended in spill order.
struct SpillFile {
    #[cfg(unix)]
    file: File,
    #[cfg(not(unix))]
    file: Mutex<File>,
    /// The file's length: where the next slot starts.
    len: u64,
    /// The directory it was created in (for error messages).
    dir: PathBuf,
}

impl SpillFile {
    fn create(dir: &Path) -> io::Result<SpillFile> {
        let file = tempfile::tempfile_in(dir).map_err(|e| context(e, "create", dir))?;
        Ok(SpillFile {
            #[cfg(unix)]
            file,
            #[cfg(not(unix))]
            file: Mutex::new(file),
            len: 0,
            dir: dir.to_path_buf(),
        })
    }

    /// Fills `buf` from the file at `offset`.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        #[cfg(unix)]
        let r = std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset);
        #[cfg(not(unix))]
        let r = {
            use std::io::{Read, Seek, SeekFrom};
            let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
            file.seek(SeekFrom::Start(offset))
                .and_then(|_| file.read_exact(buf))
        };
        r.map_err(|e| context(e, "read", &self.dir))
    }

    /// Writes all of `buf` to the file at `offset`.
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        #[cfg(unix)]
        let r = std::os::unix::fs::FileExt::write_all_at(&self.file, buf, offset);
        #[cfg(not(unix))]
        let r = {
            use std::io::{Seek, SeekFrom, Write};
            let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
            file.seek(SeekFrom::Start(offset))
                .and_then(|_| file.write_all(buf))
        };
        r.map_err(|e| context(e, "write", &self.dir))
    }
}

/// `e`, of the same kind, saying what failed on the spill file in `dir`.
fn context(e: io::Error, what: &str, dir: &Path) -> io::Error {
    io::Error::new(
        e.kind(),
        format!(
            "Streaming Memory spill file in {}: cannot {what}: {e}",
            dir.display()
        ),
    )
}

/// The rows of every remote buffer, resident within a host-memory budget and spilled past it
/// (see the module doc).
pub(crate) struct StreamingMemory {
    buffers: Vec<Buffer>,
    budget: StreamingMemoryBudget,
    /// Row bytes held in host memory.
    resident: u64,
    /// Row bytes in the spill file.
    spilled: u64,
    /// Created on the first spill.
    spill: Option<SpillFile>,
    /// Zeros as long as the longest row, allocated on the first read of an unwritten row (its
    /// pages are never written, so the OS backs them all with its one zero page).
    zeros: OnceLock<Box<[u8]>>,
    /// Scratch for spilled rows, as long as the longest spilled row used so far. Taken out of the
    /// mutex while in use, so a `read_row` inside another's callback only allocates its own.
    scratch: Mutex<Vec<u8>>,
}

impl StreamingMemory {
    /// One entry per remote buffer: (bytes per row, rows). Allocates nothing per row.
    pub(crate) fn new(buffers: &[(u64, u64)], budget: StreamingMemoryBudget) -> StreamingMemory {
        let buffers = buffers
            .iter()
            .map(|&(row_bytes, rows)| Buffer {
                row_bytes: usize::try_from(row_bytes)
                    .expect("a Streaming Memory row larger than the host's address space"),
                rows,
                written: HashMap::new(),
            })
            .collect();
        StreamingMemory {
            buffers,
            budget,
            resident: 0,
            spilled: 0,
            spill: None,
            zeros: OnceLock::new(),
            scratch: Mutex::new(Vec::new()),
        }
    }

    /// The number of remote buffers.
    #[cfg(test)]
    pub(crate) fn buffers(&self) -> usize {
        self.buffers.len()
    }

    /// Bytes per row of buffer `b`.
    pub(crate) fn row_bytes(&self, b: usize) -> u64 {
        self.buffers[b].row_bytes as u64
    }

    /// Rows of buffer `b`.
    #[cfg(test)]
    pub(crate) fn rows(&self, b: usize) -> u64 {
        self.buffers[b].rows
    }

    /// Reads row `row` of buffer `b` into `f`: a row never written reads as zeros.
    pub(crate) fn read_row<R>(
        &self,
        b: usize,
        row: u64,
        f: impl FnOnce(&[u8]) -> R,
    ) -> io::Result<R> {
        let buffer = &self.buffers[b];
        debug_assert!(
            row < buffer.rows,
            "row {row} of {} in buffer {b}",
            buffer.rows
        );
        let n = buffer.row_bytes;
        match buffer.written.get(&row) {
            Some(Row::Resident(bytes)) => Ok(f(bytes)),
            Some(&Row::Spilled(offset)) => {
                let spill = self
                    .spill
                    .as_ref()
                    .expect("a spilled row without a spill file");
                let mut scratch = self.take_scratch(n);
                spill.read_at(&mut scratch[..n], offset)?;
                let r = f(&scratch[..n]);
                self.return_scratch(scratch);
                Ok(r)
            }
            None => {
                let longest = self.buffers.iter().map(|b| b.row_bytes).max();
                let zeros = self
                    .zeros
                    .get_or_init(|| vec![0u8; longest.unwrap_or(0)].into_boxed_slice());
                Ok(f(&zeros[..n]))
            }
        }
    }

    /// Gives `f` the row to overwrite entirely (its old contents, zeros if never written), then
    /// stores it. On an error `f` may or may not have run, and the row keeps its old contents
    /// (or its old slot: a failed write of a spilled row may leave part of `f`'s bytes there).
    pub(crate) fn write_row<R>(
        &mut self,
        b: usize,
        row: u64,
        f: impl FnOnce(&mut [u8]) -> R,
    ) -> io::Result<R> {
        let n = self.buffers[b].row_bytes;
        debug_assert!(
            row < self.buffers[b].rows,
            "row {row} of {} in buffer {b}",
            self.buffers[b].rows
        );
        match self.buffers[b].written.get_mut(&row) {
            Some(Row::Resident(bytes)) => return Ok(f(bytes)),
            Some(&mut Row::Spilled(offset)) => {
                let spill = self
                    .spill
                    .as_ref()
                    .expect("a spilled row without a spill file");
                let scratch = self.scratch.get_mut().unwrap_or_else(|e| e.into_inner());
                grow(scratch, n);
                spill.read_at(&mut scratch[..n], offset)?;
                let r = f(&mut scratch[..n]);
                spill.write_at(&scratch[..n], offset)?;
                return Ok(r);
            }
            None => {}
        }
        // First write: resident if it fits the budget, else a new slot at the end of the file.
        let fits = self
            .resident
            .checked_add(n as u64)
            .is_some_and(|total| total <= self.budget.host_bytes);
        if fits {
            let mut bytes = vec![0u8; n].into_boxed_slice();
            let r = f(&mut bytes);
            self.buffers[b].written.insert(row, Row::Resident(bytes));
            self.resident += n as u64;
            return Ok(r);
        }
        if self.spill.is_none() {
            let dir = self
                .budget
                .spill_dir
                .clone()
                .unwrap_or_else(std::env::temp_dir);
            self.spill = Some(SpillFile::create(&dir)?);
        }
        let spill = self.spill.as_mut().expect("created above");
        let scratch = self.scratch.get_mut().unwrap_or_else(|e| e.into_inner());
        grow(scratch, n);
        let bytes = &mut scratch[..n];
        bytes.fill(0);
        let r = f(bytes);
        let offset = spill.len;
        spill.write_at(bytes, offset)?;
        spill.len += n as u64;
        self.buffers[b].written.insert(row, Row::Spilled(offset));
        self.spilled += n as u64;
        Ok(r)
    }

    /// Row bytes held in host memory.
    pub(crate) fn resident_bytes(&self) -> u64 {
        self.resident
    }

    /// Row bytes in the spill file.
    pub(crate) fn spilled_bytes(&self) -> u64 {
        self.spilled
    }

    /// Rows of buffer `b` written at least once (resident or spilled).
    pub(crate) fn rows_written(&self, b: usize) -> u64 {
        self.buffers[b].written.len() as u64
    }

    /// The scratch buffer, at least `n` bytes long (a new one if another call holds it).
    fn take_scratch(&self, n: usize) -> Vec<u8> {
        let mut scratch =
            std::mem::take(&mut *self.scratch.lock().unwrap_or_else(|e| e.into_inner()));
        grow(&mut scratch, n);
        scratch
    }

    /// Puts back a scratch buffer from [`Self::take_scratch`], keeping the longer one.
    fn return_scratch(&self, scratch: Vec<u8>) {
        let mut slot = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        if scratch.len() > slot.len() {
            *slot = scratch;
        }
    }
}

/// Makes `v` at least `n` bytes long (its bytes are overwritten before use).
fn grow(v: &mut Vec<u8>, n: usize) {
    if v.len() < n {
        v.resize(n, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use poplar_core::rand::SplitMix64;

    fn budget(host_bytes: u64) -> StreamingMemoryBudget {
        StreamingMemoryBudget {
            host_bytes,
            spill_dir: None,
        }
    }

    fn read(mem: &StreamingMemory, b: usize, row: u64) -> Vec<u8> {
        mem.read_row(b, row, |bytes| bytes.to_vec()).unwrap()
    }

    fn write(mem: &mut StreamingMemory, b: usize, row: u64, data: &[u8]) {
        mem.write_row(b, row, |bytes| bytes.copy_from_slice(data))
            .unwrap();
    }

    #[test]
    fn store_is_send() {
        fn send<T: Send>() {}
        send::<StreamingMemory>();
    }

    #[test]
    fn default_budget_is_4_gib_in_temp_dir() {
        let d = StreamingMemoryBudget::default();
        assert_eq!(d.host_bytes, 4 * 1024 * 1024 * 1024);
        assert_eq!(d.spill_dir, None);
    }

    #[test]
    fn unwritten_rows_read_zero_written_rows_read_back_buffers_are_separate() {
        let mut mem = StreamingMemory::new(&[(16, 4), (8, 10)], budget(1 << 20));
        assert_eq!(mem.buffers(), 2);
        assert_eq!((mem.row_bytes(0), mem.rows(0)), (16, 4));
        assert_eq!((mem.row_bytes(1), mem.rows(1)), (8, 10));
        assert_eq!(read(&mem, 0, 3), vec![0; 16]);
        assert_eq!(read(&mem, 1, 9), vec![0; 8]);

        let a: Vec<u8> = (1..=16).collect();
        let c: Vec<u8> = (100..108).collect();
        write(&mut mem, 0, 2, &a);
        write(&mut mem, 1, 2, &c);
        assert_eq!(read(&mem, 0, 2), a);
        assert_eq!(read(&mem, 1, 2), c);
        // Neighbours and the other buffer's other rows stay zero.
        assert_eq!(read(&mem, 0, 1), vec![0; 16]);
        assert_eq!(read(&mem, 0, 3), vec![0; 16]);
        assert_eq!(read(&mem, 1, 1), vec![0; 8]);
        assert_eq!(read(&mem, 1, 3), vec![0; 8]);
        assert_eq!((mem.rows_written(0), mem.rows_written(1)), (1, 1));
        assert_eq!(mem.resident_bytes(), 24);
        assert_eq!(mem.spilled_bytes(), 0);

        // write_row sees the old contents; a first write sees zeros.
        let old = mem.write_row(0, 2, |bytes| bytes.to_vec()).unwrap();
        assert_eq!(old, a);
        let first = mem.write_row(0, 0, |bytes| bytes.to_vec()).unwrap();
        assert_eq!(first, vec![0; 16]);
    }

    /// Writes 20 rows (some twice, some three times) of random bytes; returns the store and the
    /// expected contents of every row.
    fn write_sequence(host_bytes: u64) -> (StreamingMemory, Vec<Vec<u8>>) {
        const ROW: usize = 64;
        let mut mem = StreamingMemory::new(&[(ROW as u64, 32)], budget(host_bytes));
        let mut expected = vec![vec![0u8; ROW]; 32];
        let mut rng = SplitMix64::new(7);
        let mut order: Vec<u64> = (0..20).map(|i| (i * 7) % 32).collect();
        // Rewrites: of the first resident rows and of spilled rows.
        order.extend([0, 7, 14, 21, 28, 3, 0, 28]);
        for row in order {
            let mut data = vec![0u8; ROW];
            data.fill_with(|| rng.next_u64() as u8);
            // The old contents seen by write_row are the last written.
            let old = mem
                .write_row(0, row, |bytes| {
                    let old = bytes.to_vec();
                    bytes.copy_from_slice(&data);
                    old
                })
                .unwrap();
            assert_eq!(old, expected[row as usize], "row {row}");
            expected[row as usize] = data;
        }
        (mem, expected)
    }

    #[test]
    fn tiny_budget_keeps_three_rows_resident_and_spills_the_rest() {
        // Exactly three rows' worth, and not quite four.
        for host_bytes in [3 * 64, 3 * 64 + 63] {
            let (mem, expected) = write_sequence(host_bytes);
            assert_eq!(mem.rows_written(0), 20);
            assert_eq!(mem.resident_bytes(), 3 * 64);
            assert_eq!(mem.spilled_bytes(), 17 * 64);
            assert_eq!(mem.spill.as_ref().map(|s| s.len), Some(17 * 64));
            for row in 0..32 {
                assert_eq!(read(&mem, 0, row), expected[row as usize], "row {row}");
            }
        }
    }

    #[test]
    fn contents_do_not_depend_on_the_budget() {
        let (big, expected) = write_sequence(1 << 30);
        let (tiny, _) = write_sequence(3 * 64 + 1);
        let (none, _) = write_sequence(0);
        assert_eq!((big.resident_bytes(), big.spilled_bytes()), (20 * 64, 0));
        assert!(big.spill.is_none());
        assert_eq!((none.resident_bytes(), none.spilled_bytes()), (0, 20 * 64));
        for row in 0..32 {
            let want = &expected[row as usize];
            assert_eq!(&read(&big, 0, row), want, "row {row}");
            assert_eq!(&read(&tiny, 0, row), want, "row {row}");
            assert_eq!(&read(&none, 0, row), want, "row {row}");
        }
    }

    #[test]
    fn reading_a_spilled_row_inside_another_read_works() {
        let mut mem = StreamingMemory::new(&[(8, 4)], budget(0));
        write(&mut mem, 0, 0, &[1; 8]);
        write(&mut mem, 0, 1, &[2; 8]);
        let both = mem
            .read_row(0, 0, |a| {
                let b = mem.read_row(0, 1, |b| b.to_vec()).unwrap();
                (a.to_vec(), b)
            })
            .unwrap();
        assert_eq!(both, (vec![1; 8], vec![2; 8]));
    }

    #[test]
    fn a_bad_spill_dir_is_an_io_error_not_a_panic() {
        let missing = std::env::temp_dir().join(format!(
            "poplar-streaming-missing-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        assert!(!missing.exists());
        // A regular file is no directory either (even for root, who may write anywhere).
        let not_a_dir = tempfile::NamedTempFile::new().unwrap();
        for dir in [missing, not_a_dir.path().to_path_buf()] {
            let mut mem = StreamingMemory::new(
                &[(8, 4)],
                StreamingMemoryBudget {
                    host_bytes: 8,
                    spill_dir: Some(dir.clone()),
                },
            );
            write(&mut mem, 0, 0, &[5; 8]);
            let mut called = false;
            let err = mem
                .write_row(0, 1, |bytes| {
                    called = true;
                    bytes.fill(9)
                })
                .unwrap_err();
            assert!(
                err.to_string().contains(&dir.display().to_string()),
                "{err}"
            );
            assert!(!called, "f runs only once the row has a place");
            // The store is unchanged and still usable.
            assert_eq!(mem.rows_written(0), 1);
            assert_eq!((mem.resident_bytes(), mem.spilled_bytes()), (8, 0));
            assert_eq!(read(&mem, 0, 0), vec![5; 8]);
            assert_eq!(read(&mem, 0, 1), vec![0; 8]);
        }
    }

    #[test]
    fn a_million_rows_of_128_mib_allocate_only_what_is_written() {
        const ROW: u64 = 128 << 20;
        let mut mem = StreamingMemory::new(&[(ROW, 1_000_000)], StreamingMemoryBudget::default());
        assert_eq!((mem.resident_bytes(), mem.spilled_bytes()), (0, 0));
        mem.write_row(0, 999_999, |bytes| {
            bytes[0] = 1;
            bytes[bytes.len() - 1] = 2;
        })
        .unwrap();
        assert_eq!(mem.resident_bytes(), ROW);
        assert_eq!(mem.spilled_bytes(), 0);
        assert_eq!(mem.rows_written(0), 1);
        let ends = mem
            .read_row(0, 999_999, |bytes| {
                (bytes.len(), bytes[0], bytes[bytes.len() - 1])
            })
            .unwrap();
        assert_eq!(ends, (ROW as usize, 1, 2));
        let unwritten = mem
            .read_row(0, 123_456, |bytes| {
                (bytes.len(), bytes[0], bytes[bytes.len() - 1])
            })
            .unwrap();
        assert_eq!(unwritten, (ROW as usize, 0, 0));
    }
}
