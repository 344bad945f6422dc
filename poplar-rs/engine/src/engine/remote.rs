//! Streaming Memory in the engine: running copies between tile memory and remote buffers, and
//! the host's access to the buffers between runs.
//!
//! The rows live in a [`StreamingMemory`] (`streaming.rs`: sparse, spilled past a host budget).
//! Over several ranks, rank 0 holds every buffer (the host's side of the chip, like its host
//! streams): a copy to tiles reads the rows there and scatters them to the ranks that own the
//! tiles; a copy from tiles gathers the bytes and rank 0 stores them. Every row a copy names is
//! checked before anything moves, so an offset out of range leaves tiles and buffers as they
//! were.

use std::ops::Range;

use super::error::EngineError;
use super::exec::Exec;
use super::host::{bytes_to_elems, elems_as_bytes};
use super::streaming::StreamingMemory;
use super::Engine;
use crate::dtype::Element;
use crate::exe::{MemRun, RemoteBufferDesc, RemoteBufferId, RemoteCopyId, RemoteDir, RowSelect};
use crate::target::TileId;

/// How much of Streaming Memory the host holds, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamingMemoryUse {
    /// Row bytes in host memory.
    pub resident_bytes: u64,
    /// Row bytes in the spill file.
    pub spilled_bytes: u64,
    /// Rows written at least once, over all buffers.
    pub rows_written: u64,
}

/// Walks the bytes of a list of runs in order, a slice at a time.
struct Runs<'a> {
    runs: &'a [MemRun],
    /// Index of the current run and bytes of it already passed.
    at: usize,
    done: usize,
}

impl<'a> Runs<'a> {
    fn new(runs: &'a [MemRun]) -> Self {
        Runs {
            runs,
            at: 0,
            done: 0,
        }
    }

    /// Calls `f(tile, offset, range of bytes)` for the next `len` bytes, piece by piece.
    fn next(&mut self, len: usize, mut f: impl FnMut(TileId, usize, Range<usize>)) {
        let mut pos = 0;
        while pos < len {
            let r = &self.runs[self.at];
            let n = (r.bytes as usize - self.done).min(len - pos);
            f(r.tile, r.offset as usize + self.done, pos..pos + n);
            pos += n;
            self.done += n;
            if self.done == r.bytes as usize {
                self.at += 1;
                self.done = 0;
            }
        }
    }
}

fn io_error(buffer: &str, e: std::io::Error) -> EngineError {
    EngineError::StreamingMemoryIo {
        buffer: buffer.to_string(),
        message: e.to_string(),
    }
}

/// Runs remote copy `id` (of top-level program `program`, for errors): the rows it names are
/// checked first, then moved.
pub(crate) fn remote_copy(
    x: &Exec<'_>,
    remote_mem: &mut StreamingMemory,
    program: Option<usize>,
    id: RemoteCopyId,
) -> Result<(), EngineError> {
    let exe = x.exe;
    let c = &exe.remote_copies[id];
    let b = &exe.remote_buffers[c.buffer];
    let rows = rows_of(x, &c.rows)?;
    check_rows_of_replicas(x, program, id, &rows)?;
    let buf = c.buffer.as_u32() as usize;
    let row_bytes = b.row_bytes() as usize;
    let name = b.name.as_str();
    let mem = x.mem;
    match (c.dir, x.dist) {
        (RemoteDir::BufferToTiles, None) => {
            let mut cursor = Runs::new(&c.runs);
            for &row in &rows {
                remote_mem
                    .read_row(buf, row as u64, |bytes| {
                        cursor.next(row_bytes, |t, off, r| mem.write(t, off, &bytes[r]))
                    })
                    .map_err(|e| io_error(name, e))?;
            }
        }
        (RemoteDir::TilesToBuffer, None) => {
            let mut cursor = Runs::new(&c.runs);
            for &row in &rows {
                remote_mem
                    .write_row(buf, row as u64, |bytes| {
                        cursor.next(row_bytes, |t, off, r| mem.read(t, off, &mut bytes[r]))
                    })
                    .map_err(|e| io_error(name, e))?;
            }
        }
        (RemoteDir::BufferToTiles, Some(d)) => {
            let mut data = Vec::new();
            let read = if d.rank == 0 {
                read_rows(remote_mem, buf, &rows, row_bytes, &mut data)
                    .map_err(|e| io_error(name, e))
            } else {
                Ok(())
            };
            d.agree(read)?;
            d.scatter_runs(mem, &c.runs, &data);
        }
        (RemoteDir::TilesToBuffer, Some(d)) => {
            let data = d.gather_runs(mem, &c.runs);
            let written = if d.rank == 0 {
                write_rows(remote_mem, buf, &rows, row_bytes, &data).map_err(|e| io_error(name, e))
            } else {
                Ok(())
            };
            d.agree(written)?;
        }
    }
    Ok(())
}

/// A copy of a replicated program is one copy per replica (`exe::replicate`: replica `r`'s
/// copy `c` is `r·n + c`), run replica after replica. Replica 0's copy checks the rows of
/// every replica's before it moves anything, so that an offset out of range on any replica
/// leaves every replica's tiles and buffers as they were; each later replica's copy checks
/// its own rows again (`rows`). The error names the buffer as declared (replica 0's name) and
/// the replica at fault.
fn check_rows_of_replicas(
    x: &Exec<'_>,
    program: Option<usize>,
    id: RemoteCopyId,
    rows: &[i64],
) -> Result<(), EngineError> {
    let exe = x.exe;
    let replicas = x.replicas.replicas.max(1);
    let per_replica = exe.remote_copies.len() / replicas as usize;
    let i = id.as_u32() as usize;
    let (replica, base) = (i / per_replica, i % per_replica);
    let declared =
        &exe.remote_buffers[exe.remote_copies[RemoteCopyId::from_u32(base as u32)].buffer];
    let out_of_range = |r: u32, rows: &[i64]| {
        let b = &exe.remote_buffers[exe.remote_copies
            [RemoteCopyId::from_u32((r as usize * per_replica + base) as u32)]
        .buffer];
        match rows.iter().find(|&&row| row < 0 || row as u64 >= b.rows) {
            Some(&row) => Err(EngineError::RemoteRowOutOfRange {
                buffer: declared.name.clone(),
                replica: (replicas > 1).then_some(r),
                row,
                rows: b.rows,
                program,
            }),
            None => Ok(()),
        }
    };
    out_of_range(replica as u32, rows)?;
    if replica == 0 {
        for r in 1..replicas {
            let c = &exe.remote_copies
                [RemoteCopyId::from_u32((r as usize * per_replica + base) as u32)];
            out_of_range(r, &rows_of(x, &c.rows)?)?;
        }
    }
    Ok(())
}

/// The rows a copy names, read from tile memory for offsets (shared by every rank).
fn rows_of(x: &Exec<'_>, rows: &RowSelect) -> Result<Vec<i64>, EngineError> {
    Ok(match rows {
        RowSelect::Consecutive { first, count } => {
            (*first..first + count).map(|r| r as i64).collect()
        }
        RowSelect::Offsets(offsets) => match x.dist {
            None => offsets
                .iter()
                .map(|s| x.read_scalar_at(s.tile, s))
                .collect(),
            Some(d) => d.share_values(
                &offsets
                    .iter()
                    .map(|s| d.owns(s.tile).then(|| x.read_scalar_at(s.tile, s)))
                    .collect::<Vec<_>>(),
            ),
        },
    })
}

/// Appends rows `rows` of buffer `b` to `out`.
fn read_rows(
    sm: &StreamingMemory,
    b: usize,
    rows: &[i64],
    row_bytes: usize,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    out.reserve(rows.len() * row_bytes);
    for &row in rows {
        sm.read_row(b, row as u64, |bytes| out.extend_from_slice(bytes))?;
    }
    Ok(())
}

/// Writes `data`, row after row, into rows `rows` of buffer `b`.
fn write_rows(
    sm: &mut StreamingMemory,
    b: usize,
    rows: &[i64],
    row_bytes: usize,
    data: &[u8],
) -> std::io::Result<()> {
    for (i, &row) in rows.iter().enumerate() {
        let src = &data[i * row_bytes..(i + 1) * row_bytes];
        sm.write_row(b, row as u64, |bytes| bytes.copy_from_slice(src))?;
    }
    Ok(())
}

impl Engine {
    /// Flat remote buffer `i` (an index the engine checked).
    fn desc(&self, i: usize) -> &RemoteBufferDesc {
        &self.exe.remote_buffers[RemoteBufferId::from_u32(i as u32)]
    }

    /// Replica 0's index of remote buffer `name`, checked against the element type `T`.
    fn remote_buffer<T: Element>(&self, name: &str) -> Result<usize, EngineError> {
        let &i = self
            .remote_index
            .get(name)
            .ok_or_else(|| EngineError::UnknownRemoteBuffer { name: name.into() })?;
        let b = self.desc(i);
        if b.dtype != T::DTYPE {
            return Err(EngineError::WrongDType {
                what: "remote buffer",
                name: name.into(),
                expected: b.dtype,
                got: T::DTYPE,
            });
        }
        Ok(i)
    }

    /// The flat index of replica `replica`'s copy of buffer `i` (checked).
    fn buffer_of(&self, i: usize, replica: u32) -> Result<usize, EngineError> {
        self.replica_ok(replica)?;
        Ok(replica as usize * self.replicas.remote_buffers_per_replica + i)
    }

    /// Rows `rows` of flat buffer `flat` from the host's side: `data` holds them in order.
    fn check_rows(
        &self,
        name: &str,
        flat: usize,
        rows: &Range<u64>,
        len: usize,
    ) -> Result<(), EngineError> {
        let b = self.desc(flat);
        if rows.end > b.rows {
            let replica = (self.replicas.replicas > 1)
                .then(|| (flat / self.replicas.remote_buffers_per_replica.max(1)) as u32);
            return Err(EngineError::RemoteRowOutOfRange {
                buffer: name.into(),
                replica,
                row: rows.end as i64 - 1,
                rows: b.rows,
                program: None,
            });
        }
        let expected = ((rows.end - rows.start) * b.elements) as usize;
        if len != expected {
            return Err(EngineError::WrongLength {
                name: format!("remote buffer '{name}'"),
                expected,
                got: len,
            });
        }
        Ok(())
    }

    fn write_rows_flat(
        &mut self,
        name: &str,
        flat: usize,
        rows: Range<u64>,
        bytes: &[u8],
    ) -> Result<(), EngineError> {
        if self.dist.as_ref().is_some_and(|d| d.rank != 0) {
            return Ok(()); // rank 0 holds Streaming Memory
        }
        let row_bytes = self.remote_mem.row_bytes(flat) as usize;
        let rows: Vec<i64> = rows.map(|r| r as i64).collect();
        write_rows(&mut self.remote_mem, flat, &rows, row_bytes, bytes)
            .map_err(|e| io_error(name, e))
    }

    fn read_rows_flat<T: Element>(
        &self,
        name: &str,
        flat: usize,
        rows: Range<u64>,
    ) -> Result<Vec<T>, EngineError> {
        let row_bytes = self.remote_mem.row_bytes(flat) as usize;
        let rows: Vec<i64> = rows.map(|r| r as i64).collect();
        let mut data = Vec::new();
        let read = match &self.dist {
            Some(d) if d.rank != 0 => Ok(()),
            _ => read_rows(&self.remote_mem, flat, &rows, row_bytes, &mut data)
                .map_err(|e| io_error(name, e)),
        };
        if let Some(d) = &self.dist {
            d.agree(read)?;
            d.ranks.comm.broadcast(0, &mut data);
        } else {
            read?;
        }
        Ok(bytes_to_elems(&data))
    }

    /// Writes row `row` of remote buffer `name` (of every replica, when replicated):
    /// `data` is one row of its elements.
    pub fn write_remote_row<T: Element>(
        &mut self,
        name: &str,
        row: u64,
        data: &[T],
    ) -> Result<(), EngineError> {
        for r in 0..self.replicas.replicas {
            self.write_remote_row_replica(name, r, row, data)?;
        }
        Ok(())
    }

    /// Writes row `row` of replica `replica`'s remote buffer `name`.
    pub fn write_remote_row_replica<T: Element>(
        &mut self,
        name: &str,
        replica: u32,
        row: u64,
        data: &[T],
    ) -> Result<(), EngineError> {
        let flat = self.buffer_of(self.remote_buffer::<T>(name)?, replica)?;
        self.check_rows(name, flat, &(row..row + 1), data.len())?;
        self.write_rows_flat(name, flat, row..row + 1, &elems_as_bytes(data))
    }

    /// Reads row `row` of remote buffer `name` (a row never written reads as zeros; Poplar
    /// leaves it undefined). On a replicated executable with more than one replica this is
    /// [`EngineError::Replicated`]: read one replica's.
    pub fn read_remote_row<T: Element>(&self, name: &str, row: u64) -> Result<Vec<T>, EngineError> {
        self.remote_buffer::<T>(name)?;
        self.single_replica("remote buffer", name)?;
        self.read_remote_row_replica(name, 0, row)
    }

    /// Reads row `row` of replica `replica`'s remote buffer `name`.
    pub fn read_remote_row_replica<T: Element>(
        &self,
        name: &str,
        replica: u32,
        row: u64,
    ) -> Result<Vec<T>, EngineError> {
        let flat = self.buffer_of(self.remote_buffer::<T>(name)?, replica)?;
        let b = self.desc(flat);
        self.check_rows(name, flat, &(row..row + 1), b.elements as usize)?;
        self.read_rows_flat(name, flat, row..row + 1)
    }

    /// Writes every row of remote buffer `name` (of every replica, when replicated): `data`
    /// holds `rows × elements` elements, row after row.
    pub fn write_remote_buffer<T: Element>(
        &mut self,
        name: &str,
        data: &[T],
    ) -> Result<(), EngineError> {
        for r in 0..self.replicas.replicas {
            self.write_remote_buffer_replica(name, r, data)?;
        }
        Ok(())
    }

    /// Writes every row of replica `replica`'s remote buffer `name`.
    pub fn write_remote_buffer_replica<T: Element>(
        &mut self,
        name: &str,
        replica: u32,
        data: &[T],
    ) -> Result<(), EngineError> {
        let flat = self.buffer_of(self.remote_buffer::<T>(name)?, replica)?;
        let rows = self.desc(flat).rows;
        self.check_rows(name, flat, &(0..rows), data.len())?;
        self.write_rows_flat(name, flat, 0..rows, &elems_as_bytes(data))
    }

    /// Reads every row of remote buffer `name` into host memory (`rows × elements`
    /// elements: mind its size). Replicated with more than one replica:
    /// [`EngineError::Replicated`].
    pub fn read_remote_buffer<T: Element>(&self, name: &str) -> Result<Vec<T>, EngineError> {
        self.remote_buffer::<T>(name)?;
        self.single_replica("remote buffer", name)?;
        self.read_remote_buffer_replica(name, 0)
    }

    /// Reads every row of replica `replica`'s remote buffer `name`.
    pub fn read_remote_buffer_replica<T: Element>(
        &self,
        name: &str,
        replica: u32,
    ) -> Result<Vec<T>, EngineError> {
        let flat = self.buffer_of(self.remote_buffer::<T>(name)?, replica)?;
        let rows = self.desc(flat).rows;
        self.read_rows_flat(name, flat, 0..rows)
    }

    /// How much of Streaming Memory the host holds in its memory and in the spill file
    /// (rank 0's, which holds it all, when running over several ranks).
    pub fn streaming_memory_use(&self) -> StreamingMemoryUse {
        StreamingMemoryUse {
            resident_bytes: self.remote_mem.resident_bytes(),
            spilled_bytes: self.remote_mem.spilled_bytes(),
            rows_written: (0..self.exe.remote_buffers.len())
                .map(|b| self.remote_mem.rows_written(b))
                .sum(),
        }
    }
}
