//! Send and receive buffers shared between collectives that never run at the same time (the
//! per-tensor reduce-scatters and all-gathers of a sharded optimizer step): without it each
//! collective holds its own share-sized buffers on every tile for the whole program.

use std::collections::BTreeMap;

use poplar::{DType, Graph, GraphError, Tensor, TileId};

/// A pool of buffers, per tile, element type and role (the send or receive buffer of a
/// chain of the collective). A collective built with it takes the first `len` elements of
/// the pool's buffer for that key; a longer request than the pool holds makes a new, longer
/// buffer (the shorter one stays with the collectives that use it), so build the collective
/// with the longest shares first.
#[derive(Debug, Default)]
pub struct Scratch {
    name: String,
    buffers: BTreeMap<(TileId, String), Tensor>,
}

impl Scratch {
    /// An empty pool; its buffers are named `<name>/<role>`.
    pub fn new(name: &str) -> Scratch {
        Scratch {
            name: name.to_string(),
            buffers: BTreeMap::new(),
        }
    }

    /// Elements held on `tile` over every role and type.
    pub fn elements_on(&self, tile: TileId) -> usize {
        self.buffers
            .iter()
            .filter(|((t, _), _)| *t == tile)
            .map(|(_, b)| b.num_elements())
            .sum()
    }

    pub(super) fn take(
        &mut self,
        g: &mut Graph,
        tile: TileId,
        dtype: DType,
        role: &str,
        len: usize,
    ) -> Result<Tensor, GraphError> {
        let key = (tile, format!("{dtype:?} {role}"));
        if let Some(b) = self.buffers.get(&key) {
            if b.num_elements() >= len {
                return b.slice(0..len);
            }
        }
        let name = format!("{}/{role} tile {tile}", self.name);
        let b = g.add_variable(dtype, &[len], &name);
        g.set_tile_mapping(&b, tile)?;
        self.buffers.insert(key, b.clone());
        Ok(b)
    }
}
