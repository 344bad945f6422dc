//! Streaming Memory in the executable: remote buffers (their name, type, shape and chip, never
//! their contents) and the copies between them and tile memory.

use serde::{Deserialize, Serialize};

use super::{MemRun, ScalarLoc};
use crate::dtype::DType;

crate::entity::entity_id!(
    /// A remote buffer of an executable ([`super::Executable::remote_buffers`]).
    pub struct RemoteBufferId, "rb";
);
crate::entity::entity_id!(
    /// A copy between tile memory and a remote buffer ([`super::Executable::remote_copies`]).
    pub struct RemoteCopyId, "rc";
);

/// Most bytes one transfer between a chip and Streaming Memory may move (as on the chip).
pub const MAX_TRANSFER_BYTES: u64 = 128 << 20;

/// A remote buffer: `rows` rows of `elements` elements of `dtype` in the Streaming Memory of
/// chip `chip` (Poplar's `repeats` are the rows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteBufferDesc {
    pub name: String,
    pub dtype: DType,
    /// Elements of one row.
    pub elements: u64,
    pub rows: u64,
    /// The chip whose Streaming Memory holds it (replica-local in a replicated executable).
    pub chip: u32,
}

impl RemoteBufferDesc {
    /// Bytes of one row.
    pub fn row_bytes(&self) -> u64 {
        self.elements * self.dtype.size() as u64
    }

    /// Bytes of the whole buffer.
    pub fn bytes(&self) -> u64 {
        self.row_bytes().saturating_mul(self.rows)
    }
}

/// Which way a [`RemoteCopy`] moves data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RemoteDir {
    /// Rows of the buffer land in tile memory.
    BufferToTiles,
    /// Tile memory is written into rows of the buffer.
    TilesToBuffer,
}

/// The rows a [`RemoteCopy`] moves, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum RowSelect {
    /// Rows `first .. first + count`.
    Consecutive { first: u64, count: u64 },
    /// One row per entry, read from tile memory when the copy runs (an on-device offset
    /// tensor of `i32` or `u32`).
    Offsets(Vec<ScalarLoc>),
}

impl RowSelect {
    /// Number of rows moved.
    pub fn count(&self) -> u64 {
        match self {
            RowSelect::Consecutive { count, .. } => *count,
            RowSelect::Offsets(o) => o.len() as u64,
        }
    }
}

/// A copy between tile memory and rows of a remote buffer: the tile side is `runs`, the
/// rows' bytes in row order (`rows.count() × row bytes` in all).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteCopy {
    pub buffer: RemoteBufferId,
    pub dir: RemoteDir,
    pub rows: RowSelect,
    pub runs: Vec<MemRun>,
}

impl RemoteCopy {
    /// Bytes moved.
    pub fn bytes(&self) -> u64 {
        self.runs.iter().map(|r| u64::from(r.bytes)).sum()
    }
}
