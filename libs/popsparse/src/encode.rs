//! The host encoder: a pattern (COO triplets) into the tiles' buckets, spilling by distance.
//!
//! A non-zero goes to the bucket of its partition's tile. When that bucket is full it spills to
//! the bucket of the tile `d` places *before* it in the ring of tiles, for the smallest `d` with
//! room: the propagation shifts every bucket one tile forward per step, so a non-zero placed
//! `d` tiles early reaches its partition after `d` steps. The number of steps the device runs
//! is the largest `d` used (0 when nothing spilled: no propagation at all). A pattern that
//! does not fit in all the buckets together is refused with [`EncodeError::Overflow`], never
//! run with non-zeros missing.

use crate::codelets::EMPTY;
use crate::plan::FcPlan;

/// The buckets of every tile, ready to be written to the device.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// `tiles × capacity` entries, tile-major; [`EMPTY`] rows mark unused slots.
    pub rows: Vec<u32>,
    pub cols: Vec<u32>,
    /// `block²` values per entry.
    pub vals: Vec<f32>,
    /// Propagation steps the device must run (the largest spill distance).
    pub steps: u32,
    /// Non-zeros not in a bucket of their own partition.
    pub spilled: usize,
    /// Where each input triplet went (`tile · capacity + slot`), in input order.
    pub slot: Vec<usize>,
}

/// A pattern the encoder refuses.
#[derive(Debug, Clone, PartialEq)]
pub enum EncodeError {
    /// Triplet `index` lies outside `W`'s `[rows × cols]`.
    OutOfRange {
        index: usize,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    },
    /// Entry `index` is not at a multiple of the block size.
    Misaligned {
        index: usize,
        row: usize,
        col: usize,
        block: usize,
    },
    /// Entry `index` has `got` values, not `block²`.
    BlockValues {
        index: usize,
        got: usize,
        block: usize,
    },
    /// Triplets `first` and `second` name the same element.
    Duplicate {
        first: usize,
        second: usize,
        row: usize,
        col: usize,
    },
    /// More non-zeros than all the buckets hold.
    Overflow {
        nonzeros: usize,
        not_placed: usize,
        capacity: usize,
        tiles: usize,
    },
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::OutOfRange { index, row, col, rows, cols } => write!(
                f,
                "non-zero {index} at ({row}, {col}) is outside W ({rows} × {cols})"
            ),
            EncodeError::Misaligned { index, row, col, block } => write!(
                f,
                "non-zero block {index} at ({row}, {col}) is not at a multiple of the block size {block}"
            ),
            EncodeError::BlockValues { index, got, block } => write!(
                f,
                "non-zero block {index} has {got} values, a {block}×{block} block has {}",
                block * block
            ),
            EncodeError::Duplicate { first, second, row, col } => write!(
                f,
                "non-zeros {first} and {second} are both at ({row}, {col})"
            ),
            EncodeError::Overflow { nonzeros, not_placed, capacity, tiles } => write!(
                f,
                "overflow in buckets: {not_placed} of {nonzeros} non-zeros do not fit in {tiles} buckets of {capacity} entries; plan with a larger `nonzeros` or `bucket_oversize`"
            ),
        }
    }
}

impl std::error::Error for EncodeError {}

/// Encodes `(row, col, value)` triplets for a plan of element sparsity (module notes).
pub fn encode(plan: &FcPlan, triplets: &[(usize, usize, f32)]) -> Result<Encoded, EncodeError> {
    let blocks: Vec<(usize, usize, &[f32])> = triplets
        .iter()
        .map(|(r, c, v)| (*r, *c, std::slice::from_ref(v)))
        .collect();
    encode_blocks(plan, &blocks)
}

/// Encodes non-zero blocks `(row, col, values)` for `plan`: `(row, col)` is the block's origin
/// (multiples of the block size), `values` its `block²` values, row-major. For element
/// sparsity, blocks of one value ([`encode`]).
pub fn encode_blocks(
    plan: &FcPlan,
    blocks: &[(usize, usize, &[f32])],
) -> Result<Encoded, EncodeError> {
    let (rows, cols) = (plan.params.output_size, plan.params.input_size);
    let (t, cap, b) = (plan.tiles(), plan.capacity, plan.params.block);
    let bb = b * b;
    let mut seen = std::collections::HashMap::with_capacity(blocks.len());
    for (i, &(r, c, v)) in blocks.iter().enumerate() {
        if r + b > rows || c + b > cols {
            return Err(EncodeError::OutOfRange {
                index: i,
                row: r,
                col: c,
                rows,
                cols,
            });
        }
        if r % b != 0 || c % b != 0 {
            return Err(EncodeError::Misaligned {
                index: i,
                row: r,
                col: c,
                block: b,
            });
        }
        if v.len() != bb {
            return Err(EncodeError::BlockValues {
                index: i,
                got: v.len(),
                block: b,
            });
        }
        if let Some(&first) = seen.get(&(r, c)) {
            return Err(EncodeError::Duplicate {
                first,
                second: i,
                row: r,
                col: c,
            });
        }
        seen.insert((r, c), i);
    }
    if blocks.len() > t * cap {
        return Err(EncodeError::Overflow {
            nonzeros: blocks.len(),
            not_placed: blocks.len() - t * cap,
            capacity: cap,
            tiles: t,
        });
    }
    // Home buckets first, then spills to the nearest earlier tile with room.
    let mut fill = vec![0usize; t];
    let mut slot = vec![usize::MAX; blocks.len()];
    let mut pending: Vec<Vec<usize>> = vec![Vec::new(); t];
    for (i, &(r, c, _)) in blocks.iter().enumerate() {
        let h = plan.home(r, c);
        if fill[h] < cap {
            slot[i] = h * cap + fill[h];
            fill[h] += 1;
        } else {
            pending[h].push(i);
        }
    }
    let (mut steps, mut spilled) = (0usize, 0usize);
    for h in 0..t {
        let mut d = 1;
        for &i in &pending[h] {
            while d < t && fill[(h + t - d) % t] >= cap {
                d += 1;
            }
            // Enough room in total was checked above, so some tile has room.
            let tile = (h + t - d) % t;
            slot[i] = tile * cap + fill[tile];
            fill[tile] += 1;
            steps = steps.max(d);
            spilled += 1;
        }
    }
    let mut enc = Encoded {
        rows: vec![EMPTY; t * cap],
        cols: vec![EMPTY; t * cap],
        vals: vec![0.0; t * cap * bb],
        steps: steps as u32,
        spilled,
        slot,
    };
    for (i, &(r, c, v)) in blocks.iter().enumerate() {
        let s = enc.slot[i];
        enc.rows[s] = r as u32;
        enc.cols[s] = c as u32;
        enc.vals[s * bb..(s + 1) * bb].copy_from_slice(v);
    }
    Ok(enc)
}

/// GradW's result per input entry (`block²` values each, in input order), from the device's
/// gradient buckets (which the propagation shifted `enc.steps` tiles forward).
pub fn decode_grad(plan: &FcPlan, enc: &Encoded, grad_buckets: &[f32]) -> Vec<f32> {
    let (t, cap, bb) = (plan.tiles(), plan.capacity, plan.block_values());
    let mut out = Vec::with_capacity(enc.slot.len() * bb);
    for &s in &enc.slot {
        let (tile, k) = (s / cap, s % cap);
        let at = ((tile + enc.steps as usize) % t) * cap + k;
        out.extend_from_slice(&grad_buckets[at * bb..(at + 1) * bb]);
    }
    out
}
