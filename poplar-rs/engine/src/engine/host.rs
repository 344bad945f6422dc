//! The host side of an engine: reading and writing host tensors, connecting and draining
//! streams, and the element/byte conversions they use.

use std::borrow::Cow;

use super::memory::gather_runs;
use super::{Engine, EngineError};
use crate::dtype::{self, DType, Element};
use crate::exe::StreamDir;
use crate::target::TileId;

// ---------------------------------------------------------------------------------------------
// Streams

pub(crate) struct InStream {
    pub(crate) dtype: DType,
    pub(crate) data: Vec<u8>,
    /// Byte position of the next element.
    pub(crate) pos: usize,
}

// ---------------------------------------------------------------------------------------------
// Element <-> byte conversion

pub(crate) fn elems_as_bytes<T: Element>(data: &[T]) -> Cow<'_, [u8]> {
    assert_eq!(std::mem::size_of::<T>(), T::DTYPE.size());
    if cfg!(target_endian = "little") {
        // SAFETY: `Element` is sealed to f32, i32, u32, u8 and bool: no padding, size equal to the
        // dtype size, little-endian in memory on this target; every initialized value is a
        // valid sequence of bytes (bool is 0 or 1).
        Cow::Borrowed(unsafe {
            std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data))
        })
    } else {
        Cow::Owned(dtype::to_le_bytes(data))
    }
}

pub(crate) fn bytes_to_elems<T: Element>(bytes: &[u8]) -> Vec<T> {
    let size = T::DTYPE.size();
    assert_eq!(std::mem::size_of::<T>(), size);
    if cfg!(target_endian = "little") && T::DTYPE != DType::Bool {
        let n = bytes.len() / size;
        let mut v = vec![T::default(); n];
        // SAFETY: T is f32, i32, u32 or u8 (sealed `Element`, bool excluded above): size equal
        // to the dtype size (asserted in `elems_as_bytes`' debug check, true for all of them),
        // no padding, every bit pattern valid; `v` holds exactly n * size bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr().cast::<u8>(), n * size)
        };
        v
    } else {
        dtype::from_le_bytes(bytes)
    }
}

impl Engine {
    /// The bytes of `runs` (gathered from every rank when running over several).
    fn gather(&self, runs: &[crate::exe::MemRun]) -> Vec<u8> {
        match &self.dist {
            None => gather_runs(&self.mem, runs),
            Some(d) => d.gather_runs(&self.mem, runs),
        }
    }

    pub(crate) fn host_tensor<T: Element>(&self, name: &str) -> Result<usize, EngineError> {
        let &i = self
            .tensor_index
            .get(name)
            .ok_or_else(|| EngineError::UnknownTensor { name: name.into() })?;
        let h = &self.exe.host_tensors[i];
        if h.dtype != T::DTYPE {
            return Err(EngineError::WrongDType {
                what: "host tensor",
                name: name.into(),
                expected: h.dtype,
                got: T::DTYPE,
            });
        }
        Ok(i)
    }

    pub(crate) fn replica_ok(&self, replica: u32) -> Result<(), EngineError> {
        if replica >= self.replicas.replicas {
            return Err(EngineError::NoSuchReplica {
                replica,
                replicas: self.replicas.replicas,
            });
        }
        Ok(())
    }

    /// Index of replica `replica`'s copy of host tensor `i` in the flat executable.
    fn tensor_of(&self, i: usize, replica: u32) -> usize {
        replica as usize * self.replicas.host_tensors_per_replica + i
    }

    fn writable<T: Element>(&self, name: &str) -> Result<(usize, usize), EngineError> {
        let i = self.host_tensor::<T>(name)?;
        let h = &self.exe.host_tensors[i];
        if !h.writable {
            return Err(EngineError::NotWritable { name: name.into() });
        }
        Ok((i, h.shape.iter().product()))
    }

    fn readable<T: Element>(&self, name: &str) -> Result<usize, EngineError> {
        let i = self.host_tensor::<T>(name)?;
        if !self.exe.host_tensors[i].readable {
            return Err(EngineError::NotReadable { name: name.into() });
        }
        Ok(i)
    }

    fn write_flat(&mut self, flat: usize, bytes: &[u8]) {
        // Runs are in bounds and total the tensor's elements: `check()` (BadRun, RunTotal).
        if let Some(d) = &self.dist {
            // Rank 0's data, to the ranks that own the runs.
            return d.scatter_runs(&self.mem, &self.exe.host_tensors[flat].runs, bytes);
        }
        let mut pos = 0;
        for r in &self.exe.host_tensors[flat].runs {
            let n = r.bytes as usize;
            self.mem
                .write(r.tile, r.offset as usize, &bytes[pos..pos + n]);
            pos += n;
        }
    }

    /// Writes a whole host-writable tensor (on every replica, the same data, when the
    /// executable is replicated).
    pub fn write_tensor<T: Element>(&mut self, name: &str, data: &[T]) -> Result<(), EngineError> {
        let (i, expected) = self.writable::<T>(name)?;
        if data.len() != expected {
            return Err(EngineError::WrongLength {
                name: name.into(),
                expected,
                got: data.len(),
            });
        }
        let bytes = elems_as_bytes(data);
        for r in 0..self.replicas.replicas {
            self.write_flat(self.tensor_of(i, r), &bytes);
        }
        Ok(())
    }

    /// Writes replica `replica`'s copy of a host-writable tensor.
    pub fn write_tensor_replica<T: Element>(
        &mut self,
        name: &str,
        replica: u32,
        data: &[T],
    ) -> Result<(), EngineError> {
        let (i, expected) = self.writable::<T>(name)?;
        self.replica_ok(replica)?;
        if data.len() != expected {
            return Err(EngineError::WrongLength {
                name: name.into(),
                expected,
                got: data.len(),
            });
        }
        self.write_flat(self.tensor_of(i, replica), &elems_as_bytes(data));
        Ok(())
    }

    /// Writes every replica's copy at once: `data` has a leading `[R, …]` dimension.
    pub fn write_tensor_all_replicas<T: Element>(
        &mut self,
        name: &str,
        data: &[T],
    ) -> Result<(), EngineError> {
        let (i, n) = self.writable::<T>(name)?;
        let r_count = self.replicas.replicas as usize;
        if data.len() != n * r_count {
            return Err(EngineError::WrongLength {
                name: name.into(),
                expected: n * r_count,
                got: data.len(),
            });
        }
        let bytes = elems_as_bytes(data);
        let per = n * T::DTYPE.size();
        for r in 0..r_count {
            self.write_flat(self.tensor_of(i, r as u32), &bytes[r * per..(r + 1) * per]);
        }
        Ok(())
    }

    /// Reads a whole host-readable tensor. On a replicated executable with more than one
    /// replica this is an error ([`EngineError::Replicated`]): read one replica or all.
    pub fn read_tensor<T: Element>(&self, name: &str) -> Result<Vec<T>, EngineError> {
        let i = self.readable::<T>(name)?;
        self.single_replica("host tensor", name)?;
        Ok(bytes_to_elems(&self.gather(&self.exe.host_tensors[i].runs)))
    }

    /// Reads replica `replica`'s copy of a host-readable tensor.
    pub fn read_tensor_replica<T: Element>(
        &self,
        name: &str,
        replica: u32,
    ) -> Result<Vec<T>, EngineError> {
        let i = self.readable::<T>(name)?;
        self.replica_ok(replica)?;
        let h = &self.exe.host_tensors[self.tensor_of(i, replica)];
        Ok(bytes_to_elems(&self.gather(&h.runs)))
    }

    /// Reads every replica's copy, replica after replica (a leading `[R, …]` dimension).
    pub fn read_tensor_all_replicas<T: Element>(&self, name: &str) -> Result<Vec<T>, EngineError> {
        let i = self.readable::<T>(name)?;
        let mut out = Vec::new();
        for r in 0..self.replicas.replicas {
            let h = &self.exe.host_tensors[self.tensor_of(i, r)];
            out.extend(bytes_to_elems::<T>(&self.gather(&h.runs)));
        }
        Ok(out)
    }

    /// Number of replicas the engine simulates (1 unless the executable is replicated).
    pub fn replicas(&self) -> u32 {
        self.replicas.replicas
    }

    pub(crate) fn single_replica(&self, what: &'static str, name: &str) -> Result<(), EngineError> {
        if self.replicas.replicas > 1 {
            return Err(EngineError::Replicated {
                what,
                name: name.into(),
                replicas: self.replicas.replicas,
            });
        }
        Ok(())
    }

    /// Reads a whole host-readable tensor into `out`, which must have exactly its number of
    /// elements (no allocation: for reading the same tensor every step of a long run).
    pub fn read_tensor_into<T: Element>(
        &self,
        name: &str,
        out: &mut [T],
    ) -> Result<(), EngineError> {
        let i = self.readable::<T>(name)?;
        self.single_replica("host tensor", name)?;
        let h = &self.exe.host_tensors[i];
        let size = T::DTYPE.size();
        let total: usize = h.runs.iter().map(|r| r.bytes as usize).sum();
        if out.len() * size != total {
            return Err(EngineError::WrongLength {
                name: name.into(),
                expected: total / size,
                got: out.len(),
            });
        }
        if cfg!(target_endian = "little") && T::DTYPE != DType::Bool && self.dist.is_none() {
            // SAFETY: T is f32, i32, u32, u16 or u8 (sealed `Element`, bool excluded above): no
            // padding, every bit pattern valid, size_of::<T>() == size; the byte view covers
            // exactly `out` and lives only for this block.
            let bytes = unsafe {
                std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), out.len() * size)
            };
            let mut pos = 0;
            for r in &h.runs {
                let n = r.bytes as usize;
                self.mem
                    .read(r.tile, r.offset as usize, &mut bytes[pos..pos + n]);
                pos += n;
            }
        } else {
            out.copy_from_slice(&bytes_to_elems(&self.gather(&h.runs)));
        }
        Ok(())
    }

    /// Appends the bytes of a whole host-readable tensor of element type `T` to `out`, as the
    /// tiles hold them (little-endian, device order; gathered from every rank when running
    /// over several), and returns how many: one copy from tile memory into the caller's
    /// buffer, with no typed vector between, for saving a state (a checkpoint) at memory
    /// speed. Reserve `out` beforehand to avoid its growth; nothing is zero-filled.
    pub fn read_tensor_bytes<T: Element>(
        &self,
        name: &str,
        out: &mut Vec<u8>,
    ) -> Result<usize, EngineError> {
        let i = self.readable::<T>(name)?;
        self.single_replica("host tensor", name)?;
        let h = &self.exe.host_tensors[i];
        let total: usize = h.runs.iter().map(|r| r.bytes as usize).sum();
        if self.dist.is_some() {
            out.extend_from_slice(&self.gather(&h.runs));
            return Ok(total);
        }
        out.reserve(total);
        let at = out.len();
        let spare = &mut out.spare_capacity_mut()[..total];
        let mut pos = 0;
        for r in &h.runs {
            let n = r.bytes as usize;
            self.mem
                .read_uninit(r.tile, r.offset as usize, &mut spare[pos..pos + n]);
            pos += n;
        }
        // SAFETY: the runs total `total` bytes (`check()`: RunTotal), every one of which was
        // written just above into the spare capacity reserved for them (`pos == total`).
        debug_assert_eq!(pos, total);
        unsafe { out.set_len(at + total) };
        Ok(total)
    }

    /// Writes a whole host-writable tensor of element type `T` from its bytes (little-endian,
    /// device order: what [`Engine::read_tensor_bytes`] gives), on every replica; the
    /// inverse of that read, with no typed vector between. Over several ranks rank 0's bytes
    /// are written (the other ranks' must have the same length).
    pub fn write_tensor_bytes<T: Element>(
        &mut self,
        name: &str,
        bytes: &[u8],
    ) -> Result<(), EngineError> {
        let (i, expected) = self.writable::<T>(name)?;
        let size = T::DTYPE.size();
        if bytes.len() != expected * size {
            return Err(EngineError::WrongLength {
                name: name.into(),
                expected,
                got: bytes.len() / size,
            });
        }
        for r in 0..self.replicas.replicas {
            self.write_flat(self.tensor_of(i, r), bytes);
        }
        Ok(())
    }

    /// Raw bytes of a tile's memory (for tests and debugging).
    pub fn read_memory(
        &self,
        tile: TileId,
        offset: usize,
        len: usize,
    ) -> Result<Vec<u8>, EngineError> {
        if !self.mem.in_bounds(tile, offset, len) {
            return Err(EngineError::MemoryRange { tile, offset, len });
        }
        let mut out = vec![0u8; len];
        self.mem.read(tile, offset, &mut out);
        Ok(out)
    }

    pub(crate) fn stream<T: Element>(
        &self,
        name: &str,
        dir: StreamDir,
    ) -> Result<usize, EngineError> {
        let &i = self
            .stream_index
            .get(name)
            .ok_or_else(|| EngineError::UnknownStream { name: name.into() })?;
        let s = &self.exe.streams[i];
        if s.dtype != T::DTYPE {
            return Err(EngineError::WrongDType {
                what: "stream",
                name: name.into(),
                expected: s.dtype,
                got: T::DTYPE,
            });
        }
        if s.dir != dir {
            return Err(EngineError::WrongStreamDirection {
                name: name.into(),
                dir: s.dir,
            });
        }
        Ok(i)
    }

    /// Connects a host buffer to a host-to-device stream (of every replica, each reading the
    /// same data from its own position, when the executable is replicated). Each stream copy
    /// takes the next `len` elements, wrapping around to the start of the buffer.
    pub fn connect_stream<T: Element>(
        &mut self,
        name: &str,
        data: Vec<T>,
    ) -> Result<(), EngineError> {
        let i = self.stream::<T>(name, StreamDir::HostToDevice)?;
        let bytes = elems_as_bytes(&data).into_owned();
        let n = self.replicas.streams_per_replica;
        for r in 0..self.replicas.replicas as usize {
            self.inputs[r * n + i] = Some(InStream {
                dtype: T::DTYPE,
                data: bytes.clone(),
                pos: 0,
            });
        }
        Ok(())
    }

    /// Connects a host buffer to replica `replica`'s copy of a host-to-device stream.
    pub fn connect_stream_replica<T: Element>(
        &mut self,
        name: &str,
        replica: u32,
        data: Vec<T>,
    ) -> Result<(), EngineError> {
        let i = self.stream::<T>(name, StreamDir::HostToDevice)?;
        self.replica_ok(replica)?;
        let at = replica as usize * self.replicas.streams_per_replica + i;
        self.inputs[at] = Some(InStream {
            dtype: T::DTYPE,
            data: elems_as_bytes(&data).into_owned(),
            pos: 0,
        });
        Ok(())
    }

    /// Everything a device-to-host stream has produced so far (an error on a replicated
    /// executable of several replicas: see [`Engine::stream_output_replica`]).
    pub fn stream_output<T: Element>(&self, name: &str) -> Result<Vec<T>, EngineError> {
        let i = self.stream::<T>(name, StreamDir::DeviceToHost)?;
        self.single_replica("stream", name)?;
        Ok(bytes_to_elems(&self.outputs[i]))
    }

    /// Like [`Engine::stream_output`], and clears the stream's output.
    pub fn take_stream_output<T: Element>(&mut self, name: &str) -> Result<Vec<T>, EngineError> {
        let i = self.stream::<T>(name, StreamDir::DeviceToHost)?;
        self.single_replica("stream", name)?;
        Ok(bytes_to_elems(&std::mem::take(&mut self.outputs[i])))
    }

    /// What replica `replica`'s copy of a device-to-host stream has produced so far.
    pub fn stream_output_replica<T: Element>(
        &self,
        name: &str,
        replica: u32,
    ) -> Result<Vec<T>, EngineError> {
        let i = self.stream::<T>(name, StreamDir::DeviceToHost)?;
        self.replica_ok(replica)?;
        let at = replica as usize * self.replicas.streams_per_replica + i;
        Ok(bytes_to_elems(&self.outputs[at]))
    }

    /// Like [`Engine::stream_output_replica`], and clears that replica's output.
    pub fn take_stream_output_replica<T: Element>(
        &mut self,
        name: &str,
        replica: u32,
    ) -> Result<Vec<T>, EngineError> {
        let i = self.stream::<T>(name, StreamDir::DeviceToHost)?;
        self.replica_ok(replica)?;
        let at = replica as usize * self.replicas.streams_per_replica + i;
        Ok(bytes_to_elems(&std::mem::take(&mut self.outputs[at])))
    }
}
