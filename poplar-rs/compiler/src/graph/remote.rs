//! Remote buffers in the graph: rows of Streaming Memory that programs copy tensors to and
//! from, and the buffering depth of host streams.

use super::{Graph, GraphError, RemoteBuffer, Stream};
use crate::dtype::DType;

/// A remote buffer as the graph keeps it.
pub(crate) struct RemoteBufferInfo {
    pub name: String,
    pub dtype: DType,
    pub elements: u64,
    pub rows: u64,
    pub chip: u32,
}

impl Graph {
    /// A remote buffer of `rows` rows of `elements` elements of `dtype` in the Streaming
    /// Memory of chip 0 (Poplar's `addRemoteBuffer`, whose `repeats` are the rows). In a
    /// replicated graph each replica has its own buffer, rows and contents.
    pub fn add_remote_buffer(
        &mut self,
        name: &str,
        dtype: DType,
        elements: u64,
        rows: u64,
    ) -> Result<RemoteBuffer, GraphError> {
        self.add_remote_buffer_on_chip(name, dtype, elements, rows, 0)
    }

    /// Like [`Graph::add_remote_buffer`], in the Streaming Memory of chip `chip` (of one
    /// replica, in a replicated graph): only tensors on that chip's tiles copy to and from it.
    pub fn add_remote_buffer_on_chip(
        &mut self,
        name: &str,
        dtype: DType,
        elements: u64,
        rows: u64,
        chip: u32,
    ) -> Result<RemoteBuffer, GraphError> {
        let bad = |reason: String| GraphError::BadRemoteBuffer {
            name: name.to_string(),
            reason,
        };
        if self.remote_buffers.values().any(|b| b.name == name) {
            return Err(GraphError::DuplicateName {
                kind: "remote buffer",
                name: name.into(),
            });
        }
        if elements == 0 || rows == 0 {
            return Err(bad(format!(
                "{rows} rows of {elements} elements: a remote buffer has at least one row of one element"
            )));
        }
        if chip >= self.target.num_ipus {
            return Err(bad(format!(
                "chip {chip} does not exist (the graph has {} chips)",
                self.target.num_ipus
            )));
        }
        // With the chip's other buffers: within its Streaming Memory.
        let used: u64 = self
            .remote_buffers
            .values()
            .filter(|b| b.chip == chip)
            .map(|b| b.elements * b.dtype.size() as u64 * b.rows)
            .sum();
        let bytes = elements
            .checked_mul(dtype.size() as u64)
            .and_then(|b| b.checked_mul(rows))
            .filter(|&b| b.saturating_add(used) <= self.target.streaming_memory_bytes);
        if bytes.is_none() {
            return Err(bad(format!(
                "{rows} rows of {elements} x {dtype}, with the {used} bytes of chip {chip}'s other remote buffers, exceed the {} bytes of a chip's Streaming Memory",
                self.target.streaming_memory_bytes
            )));
        }
        self.remote_buffers.push(RemoteBufferInfo {
            name: name.to_string(),
            dtype,
            elements,
            rows,
            chip,
        });
        Ok(RemoteBuffer {
            graph: self.id,
            index: self.remote_buffers.len() as u32 - 1,
        })
    }

    pub(crate) fn check_remote_buffer(&self, b: RemoteBuffer) -> Result<(), GraphError> {
        self.check_handle(b.graph, b.index, self.remote_buffers.len(), "remote buffer")
    }

    /// How many copies of stream `s` the host prepares ahead (Poplar's buffering depth, 1 by
    /// default): a copy whose data was prepared does not wait for the host in the cycle
    /// model; with 0, every copy waits for it.
    pub fn set_buffering_depth(&mut self, s: Stream, depth: u32) -> Result<(), GraphError> {
        self.check_stream(s)?;
        self.streams[s.key()].buffering_depth = depth;
        Ok(())
    }
}
