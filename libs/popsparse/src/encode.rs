//! The host encoder: a pattern (COO triplets) into the tiles' buckets, spilling by distance.
//!
//! A non-zero goes to one of the `P_Z` buckets of its partition (in turn). When they are full
//! it spills to the bucket of a tile *before* the partition in the ring of tiles, the nearest
//! with room: the propagation shifts every bucket one tile forward per step, so a non-zero
//! placed `d` tiles early reaches its partition after `d` steps and has passed all its `P_Z`
//! tiles `P_Z − 1` steps later. The number of steps the device runs is the largest such need
//! (0 when nothing spilled: no propagation at all). A pattern that
//! does not fit in all the buckets together is refused with [`EncodeError::Overflow`], never
//! run with non-zeros missing.

use crate::codelets::{EMPTY, SPILLED};
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
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// Triplet `index` lies outside `W`'s `[rows × cols]`.
    #[error("non-zero {index} at ({row}, {col}) is outside W ({rows} × {cols})")]
    OutOfRange {
        index: usize,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    },
    /// Entry `index` is not at a multiple of the block size.
    #[error(
        "non-zero block {index} at ({row}, {col}) is not at a multiple of the block size {block}"
    )]
    Misaligned {
        index: usize,
        row: usize,
        col: usize,
        block: usize,
    },
    /// Entry `index` has `got` values, not `block²`.
    #[error("non-zero block {index} has {got} values, a {block}×{block} block has {}", block * block)]
    BlockValues {
        index: usize,
        got: usize,
        block: usize,
    },
    /// Triplets `first` and `second` name the same element.
    #[error("non-zeros {first} and {second} are both at ({row}, {col})")]
    Duplicate {
        first: usize,
        second: usize,
        row: usize,
        col: usize,
    },
    /// A CSR pattern whose arrays disagree (the reason says how).
    #[error("malformed CSR pattern: {0}")]
    BadCsr(String),
    /// More non-zeros than all the buckets hold.
    #[error(
        "overflow in buckets: {not_placed} of {nonzeros} non-zeros do not fit in {tiles} buckets \
         of {capacity} entries; plan with a larger `nonzeros` or `bucket_oversize`"
    )]
    Overflow {
        nonzeros: usize,
        not_placed: usize,
        capacity: usize,
        tiles: usize,
    },
}

/// Encodes `(row, col, value)` triplets for a plan of element sparsity (module notes).
pub fn encode(plan: &FcPlan, triplets: &[(usize, usize, f32)]) -> Result<Encoded, EncodeError> {
    let blocks: Vec<(usize, usize, &[f32])> = triplets
        .iter()
        .map(|(r, c, v)| (*r, *c, std::slice::from_ref(v)))
        .collect();
    encode_blocks(plan, &blocks)
}

/// The first block that lies outside `W`, is misaligned, has other than `block²` values or
/// repeats an earlier block's origin, as the error naming it.
fn check_blocks(plan: &FcPlan, blocks: &[(usize, usize, &[f32])]) -> Result<(), EncodeError> {
    let (rows, cols) = (plan.params.output_size, plan.params.input_size);
    let b = plan.params.block;
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
    Ok(())
}

/// Encodes non-zero blocks `(row, col, values)` for `plan`: `(row, col)` is the block's origin
/// (multiples of the block size), `values` its `block²` values, row-major. For element
/// sparsity, blocks of one value ([`encode`]).
pub fn encode_blocks(
    plan: &FcPlan,
    blocks: &[(usize, usize, &[f32])],
) -> Result<Encoded, EncodeError> {
    check_blocks(plan, blocks)?;
    let (t, cap) = (plan.tiles(), plan.capacity);
    let bb = plan.params.block * plan.params.block;
    if blocks.len() > t * cap {
        return Err(EncodeError::Overflow {
            nonzeros: blocks.len(),
            not_placed: blocks.len() - t * cap,
            capacity: cap,
            tiles: t,
        });
    }
    // Home buckets first (the P_Z buckets of the partition, in turn), then spills to the
    // nearest earlier tiles with room.
    let (groups, pz) = (plan.groups(), plan.pz);
    let mut fill = vec![0usize; t];
    let mut slot = vec![usize::MAX; blocks.len()];
    let mut pending: Vec<Vec<usize>> = vec![Vec::new(); groups];
    let mut next_z = vec![0usize; groups];
    for (i, &(r, c, _)) in blocks.iter().enumerate() {
        let g = plan.home(r, c);
        let mut placed = false;
        for _ in 0..pz {
            let tile = g * pz + next_z[g];
            next_z[g] = (next_z[g] + 1) % pz;
            if fill[tile] < cap {
                slot[i] = tile * cap + fill[tile];
                fill[tile] += 1;
                placed = true;
                break;
            }
        }
        if !placed {
            pending[g].push(i);
        }
    }
    // A spilled entry in the bucket that starts on tile `s` sits, after the distribution
    // (P_Z − 1 shifts within its partition), on `after(s)`; the propagation then moves it one
    // tile a step, and its partition's P_Z tiles process it as it passes: it needs
    // `(start(g) − after(s)) mod T + P_Z − 1` steps. No run may take more than `T − P_Z`
    // steps (a bucket would come back round to its own partition and be processed twice), so
    // only tiles within that distance take spills.
    let after = |s: usize| s / pz * pz + (s % pz + pz - 1) % pz;
    let need = |g: usize, s: usize| (g * pz + t - after(s)) % t + pz - 1;
    let (mut steps, mut spilled, mut not_placed) = (0usize, 0usize, 0usize);
    for (g, waiting) in pending.iter().enumerate() {
        if waiting.is_empty() {
            continue;
        }
        // Candidate tiles in order of the steps they need.
        let mut cands: Vec<usize> = (0..t)
            .filter(|&s| s / pz != g && need(g, s) <= t - pz)
            .collect();
        cands.sort_by_key(|&s| need(g, s));
        let mut ci = 0;
        for &i in waiting {
            while ci < cands.len() && fill[cands[ci]] >= cap {
                ci += 1;
            }
            let Some(&tile) = cands.get(ci) else {
                not_placed += 1;
                continue;
            };
            slot[i] = tile * cap + fill[tile];
            fill[tile] += 1;
            steps = steps.max(need(g, tile));
            spilled += 1;
        }
    }
    if not_placed > 0 {
        return Err(EncodeError::Overflow {
            nonzeros: blocks.len(),
            not_placed,
            capacity: cap,
            tiles: t,
        });
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
        // Entries outside their partition's buckets are marked for the propagation.
        let home = s / cap / pz == plan.home(r, c);
        enc.cols[s] = c as u32 | if home { 0 } else { SPILLED };
        enc.vals[s * bb..(s + 1) * bb].copy_from_slice(v);
    }
    Ok(enc)
}

/// GradW's result per input entry (`block²` values each, in input order), from the device's
/// gradient buckets (which the propagation shifted `enc.steps` tiles forward).
pub fn decode_grad(plan: &FcPlan, enc: &Encoded, grad_buckets: &[f32]) -> Vec<f32> {
    let (t, cap, bb) = (plan.tiles(), plan.capacity, plan.block_values());
    let mut out = Vec::with_capacity(enc.slot.len() * bb);
    let pz = plan.pz;
    for &s in &enc.slot {
        let (tile, k) = (s / cap, s % cap);
        // P_Z − 1 shifts within the partition, then `steps` around the ring.
        let after = tile / pz * pz + (tile % pz + pz - 1) % pz;
        let at = ((after + enc.steps as usize) % t) * cap + k;
        out.extend_from_slice(&grad_buckets[at * bb..(at + 1) * bb]);
    }
    out
}

/// A pattern in compressed sparse row form: row `r`'s non-zeros are
/// `col_indices[row_ptr[r]..row_ptr[r + 1]]` with `values` alongside.
#[derive(Debug, Clone, PartialEq)]
pub struct Csr {
    pub rows: usize,
    pub cols: usize,
    pub row_ptr: Vec<usize>,
    pub col_indices: Vec<usize>,
    pub values: Vec<f32>,
}

impl Csr {
    /// The triplets, row by row.
    pub fn to_triplets(&self) -> Result<Vec<(usize, usize, f32)>, EncodeError> {
        let why = if self.row_ptr.len() != self.rows + 1 {
            Some(format!(
                "row_ptr has {} entries, rows + 1 = {}",
                self.row_ptr.len(),
                self.rows + 1
            ))
        } else if let Some(r) = self.row_ptr.windows(2).position(|w| w[0] > w[1]) {
            Some(format!("row_ptr decreases at row {r}"))
        } else if self.row_ptr.last() != Some(&self.col_indices.len()) {
            Some(format!(
                "row_ptr ends at {:?}, but there are {} column indices",
                self.row_ptr.last(),
                self.col_indices.len()
            ))
        } else if self.values.len() != self.col_indices.len() {
            Some(format!(
                "{} values for {} column indices",
                self.values.len(),
                self.col_indices.len()
            ))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(EncodeError::BadCsr(why));
        }
        let mut out = Vec::with_capacity(self.values.len());
        for r in 0..self.rows {
            for i in self.row_ptr[r]..self.row_ptr[r + 1] {
                out.push((r, self.col_indices[i], self.values[i]));
            }
        }
        Ok(out)
    }

    /// From triplets (any order; sorted by row, then column).
    pub fn from_triplets(rows: usize, cols: usize, triplets: &[(usize, usize, f32)]) -> Csr {
        let mut t = triplets.to_vec();
        t.sort_by_key(|&(r, c, _)| (r, c));
        let mut row_ptr = vec![0usize; rows + 1];
        for &(r, _, _) in &t {
            row_ptr[r + 1] += 1;
        }
        for r in 0..rows {
            row_ptr[r + 1] += row_ptr[r];
        }
        Csr {
            rows,
            cols,
            row_ptr,
            col_indices: t.iter().map(|&(_, c, _)| c).collect(),
            values: t.iter().map(|&(_, _, v)| v).collect(),
        }
    }
}

/// Encodes a CSR pattern of element sparsity ([`encode`]).
pub fn encode_csr(plan: &FcPlan, csr: &Csr) -> Result<Encoded, EncodeError> {
    encode(plan, &csr.to_triplets()?)
}

/// The pattern held by encoded buckets (the inverse of [`encode_blocks`]): every entry's
/// block origin and values, in bucket order.
pub fn decode(plan: &FcPlan, enc: &Encoded) -> Vec<(usize, usize, Vec<f32>)> {
    let bb = plan.block_values();
    enc.rows
        .iter()
        .zip(&enc.cols)
        .enumerate()
        .filter(|(_, (&r, _))| r != EMPTY)
        .map(|(s, (&r, &c))| {
            (
                r as usize,
                (c & !SPILLED) as usize,
                enc.vals[s * bb..(s + 1) * bb].to_vec(),
            )
        })
        .collect()
}
