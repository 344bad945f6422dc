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

pub(super) struct InStream {
    pub(super) dtype: DType,
    pub(super) data: Vec<u8>,
    /// Byte position of the next element.
    pub(super) pos: usize,
}

// ---------------------------------------------------------------------------------------------
// Element <-> byte conversion

pub(super) fn elems_as_bytes<T: Element>(data: &[T]) -> Cow<'_, [u8]> {
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

pub(super) fn bytes_to_elems<T: Element>(bytes: &[u8]) -> Vec<T> {
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
    pub(super) fn host_tensor<T: Element>(&self, name: &str) -> Result<usize, EngineError> {
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

    /// Writes a whole host-writable tensor.
    pub fn write_tensor<T: Element>(&mut self, name: &str, data: &[T]) -> Result<(), EngineError> {
        let i = self.host_tensor::<T>(name)?;
        let h = &self.exe.host_tensors[i];
        if !h.writable {
            return Err(EngineError::NotWritable { name: name.into() });
        }
        let expected: usize = h.shape.iter().product();
        if data.len() != expected {
            return Err(EngineError::WrongLength {
                name: name.into(),
                expected,
                got: data.len(),
            });
        }
        let bytes = elems_as_bytes(data);
        // Runs are in bounds and total `expected` elements: `check()` (BadRun, RunTotal).
        let mut pos = 0;
        for r in &h.runs {
            let n = r.bytes as usize;
            self.mem
                .write(r.tile, r.offset as usize, &bytes[pos..pos + n]);
            pos += n;
        }
        Ok(())
    }

    /// Reads a whole host-readable tensor.
    pub fn read_tensor<T: Element>(&self, name: &str) -> Result<Vec<T>, EngineError> {
        let i = self.host_tensor::<T>(name)?;
        let h = &self.exe.host_tensors[i];
        if !h.readable {
            return Err(EngineError::NotReadable { name: name.into() });
        }
        Ok(bytes_to_elems(&gather_runs(&self.mem, &h.runs)))
    }

    /// Reads a whole host-readable tensor into `out`, which must have exactly its number of
    /// elements (no allocation: for reading the same tensor every step of a long run).
    pub fn read_tensor_into<T: Element>(
        &self,
        name: &str,
        out: &mut [T],
    ) -> Result<(), EngineError> {
        let i = self.host_tensor::<T>(name)?;
        let h = &self.exe.host_tensors[i];
        if !h.readable {
            return Err(EngineError::NotReadable { name: name.into() });
        }
        let size = T::DTYPE.size();
        let total: usize = h.runs.iter().map(|r| r.bytes as usize).sum();
        if out.len() * size != total {
            return Err(EngineError::WrongLength {
                name: name.into(),
                expected: total / size,
                got: out.len(),
            });
        }
        if cfg!(target_endian = "little") && T::DTYPE != DType::Bool {
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
            out.copy_from_slice(&bytes_to_elems(&gather_runs(&self.mem, &h.runs)));
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

    pub(super) fn stream<T: Element>(
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

    /// Connects a host buffer to a host-to-device stream. Each stream copy takes the next
    /// `len` elements, wrapping around to the start of the buffer.
    pub fn connect_stream<T: Element>(
        &mut self,
        name: &str,
        data: Vec<T>,
    ) -> Result<(), EngineError> {
        let i = self.stream::<T>(name, StreamDir::HostToDevice)?;
        let bytes = elems_as_bytes(&data).into_owned();
        self.inputs[i] = Some(InStream {
            dtype: T::DTYPE,
            data: bytes,
            pos: 0,
        });
        Ok(())
    }

    /// Everything a device-to-host stream has produced so far.
    pub fn stream_output<T: Element>(&self, name: &str) -> Result<Vec<T>, EngineError> {
        let i = self.stream::<T>(name, StreamDir::DeviceToHost)?;
        Ok(bytes_to_elems(&self.outputs[i]))
    }

    /// Like [`Engine::stream_output`], and clears the stream's output.
    pub fn take_stream_output<T: Element>(&mut self, name: &str) -> Result<Vec<T>, EngineError> {
        let i = self.stream::<T>(name, StreamDir::DeviceToHost)?;
        Ok(bytes_to_elems(&std::mem::take(&mut self.outputs[i])))
    }
}
