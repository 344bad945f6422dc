//! Send and receive buffers shared between collectives that never run at the same time (the
//! per-tensor reduce-scatters and all-gathers of a sharded optimizer step): without it each
//! collective holds its own share-sized buffers on every tile for the whole program.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use poplar_compiler::graph::Graph;
use poplar_compiler::graph::GraphError;
use poplar_compiler::graph::Tensor;
use poplar_core::dtype::DType;
use poplar_core::target::TileId;

/// A pool of buffers, per tile, element type and role (the send or receive buffer of a
/// chain of the collective), given to collectives through [`Options::scratch`](super::Options).
/// A collective built with it takes the first `len` elements of the pool's buffer for that
/// key; a longer request than the pool holds makes a new, longer buffer (the shorter one stays
/// with the collectives that use it), so build the collective with the longest shares first.
///
/// A `Scratch` is a handle: its clones share one pool (and compare equal), so options that
/// carry it can be cloned freely.
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    pool: Arc<Mutex<Pool>>,
}

#[derive(Debug, Default)]
struct Pool {
    name: String,
    buffers: BTreeMap<(TileId, String), Tensor>,
}

/// Two handles are equal when they share one pool.
impl PartialEq for Scratch {
    fn eq(&self, other: &Scratch) -> bool {
        Arc::ptr_eq(&self.pool, &other.pool)
    }
}

impl Eq for Scratch {}

impl Scratch {
    /// An empty pool; its buffers are named `<name>/<role>`.
    pub fn new(name: &str) -> Scratch {
        Scratch {
            pool: Arc::new(Mutex::new(Pool {
                name: name.to_string(),
                buffers: BTreeMap::new(),
            })),
        }
    }

    /// Elements held on `tile` over every role and type.
    pub fn elements_on(&self, tile: TileId) -> usize {
        self.pool()
            .buffers
            .iter()
            .filter(|((t, _), _)| *t == tile)
            .map(|(_, b)| b.num_elements())
            .sum()
    }

    /// The pool (a panic while it was held left it whole: every change is one insert).
    fn pool(&self) -> MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn take(
        &self,
        g: &mut Graph,
        tile: TileId,
        dtype: DType,
        role: &str,
        len: usize,
    ) -> Result<Tensor, GraphError> {
        let mut pool = self.pool();
        let key = (tile, format!("{dtype:?} {role}"));
        if let Some(b) = pool.buffers.get(&key) {
            if b.num_elements() >= len {
                return b.slice(0..len);
            }
        }
        let name = format!("{}/{role} tile {tile}", pool.name);
        let b = g.add_variable(dtype, &[len], &name);
        g.set_tile_mapping(&b, tile)?;
        pool.buffers.insert(key, b.clone());
        Ok(b)
    }
}
