//! The sparse codelets. A bucket holds `cap` entries: `rows` and `cols` (global coordinates of
//! the origin of a non-zero `block × block` block of `W`, `u32`; [`EMPTY`] marks an unused
//! slot) and `vals` (`block²` f32 per entry, row-major; one for element sparsity). A vertex processes the entries of its tile's current bucket that fall in
//! its partition `[x0, x0 + nx) × [y0, y0 + ny)` and skips the others (they belong to another
//! partition and are on their way there). Dense blocks are row-major with `z` columns.
//!
//! - `SparseFwd<float>`: `out[r + i − x0, :] += w_ij · x[c + j − y0, :]` (Y = W·X).
//! - `SparseGradA<float>`: `out[c + j − y0, :] += w_ij · yg[r + i − x0, :]` (X' = Wᵀ·Y').
//! - `SparseGradW<float>`: `grad[e, i, j] += Σ_z yg[r + i − x0, z] · x[c + j − y0, z]`
//!   (W' = Y'·Xᵀ on the pattern; `grad` travels with its bucket).
//! - `Countdown`: `pred = counter > 0`; if so, `counter −= 1` and `parity ^= 1`: the
//!   propagation loop's condition and the active buffer.
//!
//! With `first` set, a vertex first zeroes its output (the partial block, or for GradW the
//! gradient bucket): the distribution's first compute set does, so no separate zeroing phase
//! runs.
//!
//! # Workers
//! The three dense codelets are multi-worker, as poplibs' `SparseDenseMatMul*` are supervisor
//! vertices: on the chip, Fwd and GradA split the batch columns `z` over the six contexts
//! ([`z_share`]; poplibs splits only `Z` among the workers of its AMP block vertices, and `X`
//! rows too for element sparsity, which the unsorted entries of these buckets do not allow
//! cheaply), and GradW splits the entries ([`entry_share`]; poplibs' GradW splits the non-zero
//! groups). Each output, or gradient, is then computed by the same operations in the same
//! order as by one context (`worker_shares_give_the_bits_of_one_sweep` checks it). On the
//! host, worker 0's call sweeps the whole bucket and the other calls return at once: six
//! sweeps over the entries would scan each entry six times.
//!
//! # Cycle estimates
//! Worker-context cycles of the busiest worker (the cycle model runs a multi-worker vertex on
//! all six contexts, `6 × share + SUPERVISOR_CYCLES` tile cycles), static, for a full bucket:
//! the functions of [`crate::cost`] (poplibs' estimators for its dynamic sparse vertices),
//! which the builder sets on each vertex (the batch, block and partition are state values a
//! cycle estimate cannot see) and the planner schedules with the cycle model's own
//! `schedule_vertices`. A vertex's own `cycles` is only the scan of its bucket,
//! [`scan_cycles`], for a vertex built without the builder.
//!
//! With `first`, the zeroing of the worker's part of the output adds
//! `codelets::cycles::multi_worker(outputs, workers, F32, 1)`.

use std::ops::Range;

use poplar_core::codelet::*;
use poplar_core::fp::canonical_nan;

use codelets::cycles::{OVERHEAD, ROW_OVERHEAD};

/// An unused bucket slot.
pub const EMPTY: u32 = u32::MAX;
/// Set in `cols` of an entry the encoder spilled out of its partition's buckets: the
/// propagation processes only these, the distribution only the others, so that no entry is
/// processed twice when buckets pass through the tiles of their own partition. Coordinates
/// are therefore below 2³¹ (the planner refuses larger layers: `FcRule::TooLarge`).
pub const SPILLED: u32 = 1 << 31;

pub use crate::cost::{grad_w_cycles, vertex_cycles, Pass, Work};

/// Worker cycles of a scan of `entries` bucket entries (a vertex's own estimate; the builder
/// sets [`vertex_cycles`] instead).
pub const fn scan_cycles(entries: u64) -> u64 {
    OVERHEAD + entries * ROW_OVERHEAD
}

/// The batch columns of `0..z` that worker `id` of `workers` takes in Fwd and GradA.
pub fn z_share(z: usize, id: u32, workers: u32) -> Range<usize> {
    poplin::codelets::share(z, id, workers)
}

/// The bucket entries of `0..cap` that worker `id` of `workers` takes in GradW.
pub fn entry_share(cap: usize, id: u32, workers: u32) -> Range<usize> {
    poplin::codelets::share(cap, id, workers)
}

/// Partition bounds of a vertex: `x0, nx, y0, ny, z, block`.
fn dims(state: [u32; 6]) -> [usize; 6] {
    state.map(|s| s as usize)
}

/// The entry's block origin if this vertex processes it: in the partition, and spilled
/// exactly when `propagation` (see [`SPILLED`]).
fn take(r: u32, c: u32, d: &[usize; 6], propagation: u32) -> Option<(usize, usize)> {
    if r == EMPTY || ((c & SPILLED) != 0) != (propagation != 0) {
        return None;
    }
    let [x0, nx, y0, ny, _, b] = *d;
    let (r, c) = (r as usize, (c & !SPILLED) as usize);
    (r >= x0 && r + b <= x0 + nx && c >= y0 && c + b <= y0 + ny).then_some((r, c))
}

/// An element type of the weights and dense operands: f32, or f16 whose products are rounded
/// to f16 before being accumulated in f32 (the chip's half-precision multiply, seed § 4.4.1).
pub trait Value: Copy {
    /// `a · b` as the vertex forms it.
    fn product(a: Self, b: Self) -> f32;
}

impl Value for f32 {
    #[inline]
    fn product(a: f32, b: f32) -> f32 {
        a * b
    }
}

impl Value for poplar_core::f16 {
    #[inline]
    fn product(a: poplar_core::f16, b: poplar_core::f16) -> f32 {
        poplar_core::f16::from_f32(a.to_f32() * b.to_f32()).to_f32()
    }
}

/// The Fwd and GradA kernels over one bucket, for the batch columns `zr` of every row:
/// `grad_a` swaps the roles of rows and columns. With `first`, the columns `zr` of `out` are
/// zeroed first. The rows an entry updates are left with any NaN as the one quiet NaN (which
/// of two NaN operands a sum keeps depends on the instruction-set level's code): per product
/// for element sparsity, per entry and row for blocks (per product cost up to 9 % at 16 × 16
/// blocks; once per pass over the whole output cost 2× with propagation steps).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn dense_pass<T: Value>(
    name: &str,
    rows: &[u32],
    cols: &[u32],
    vals: &[T],
    input: &[T],
    out: &mut [f32],
    d: [usize; 6],
    propagation: u32,
    grad_a: bool,
    first: bool,
    zr: Range<usize>,
) -> Result<(), VertexError> {
    let [x0, _, y0, _, z, b] = d;
    let bb = b * b;
    if rows.len() != cols.len() || vals.len() != rows.len() * bb {
        return Err(VertexError::new(format!(
            "{name}: bucket fields disagree: rows {}, cols {}, vals {} (block {b})",
            rows.len(),
            cols.len(),
            vals.len()
        )));
    }
    if zr.end > z {
        return Err(VertexError::new(format!(
            "{name}: batch columns {zr:?} outside the batch of {z}"
        )));
    }
    if zr.is_empty() {
        return Ok(());
    }
    if first {
        if zr.len() == z {
            out.fill(0.0);
        } else {
            for row in out.chunks_mut(z) {
                row[zr.clone()].fill(0.0);
            }
        }
    }
    let (z0, z1) = (zr.start, zr.end);
    if b == 1 {
        // Element sparsity: one value per entry, one row of the batch. The entry's row and
        // column relative to the partition, as `take` decides, in two unsigned comparisons: an
        // empty slot's row (`EMPTY`) and the column of an entry of the other pass (its
        // `SPILLED` bit flipped to set) wrap past the partition's bounds (module notes: all
        // coordinates are below 2³¹).
        let [x0u, y0u] = [x0, y0].map(|v| v as u32);
        let flip = if propagation != 0 { SPILLED } else { 0 };
        let [nx, ny] = [d[1], d[3]];
        for ((&r, &c), &w) in rows.iter().zip(cols).zip(vals) {
            let (ro, co) = (
                r.wrapping_sub(x0u) as usize,
                (c ^ flip).wrapping_sub(y0u) as usize,
            );
            if ro >= nx || co >= ny {
                continue;
            }
            let (r, c) = (ro + x0, co + y0);
            let (oo, io) = if grad_a { (co, ro) } else { (ro, co) };
            let (Some(dst), Some(src)) = (
                out.get_mut(oo * z + z0..oo * z + z1),
                input.get(io * z + z0..io * z + z1),
            ) else {
                return Err(VertexError::new(format!(
                    "{name}: entry ({r}, {c}) outside the dense blocks"
                )));
            };
            for (d, &x) in dst.iter_mut().zip(src) {
                *d = canonical_nan(*d + T::product(w, x));
            }
        }
        return Ok(());
    }
    for (e, (&r, &c)) in rows.iter().zip(cols).enumerate() {
        let Some((r, c)) = take(r, c, &d, propagation) else {
            continue;
        };
        let (ro, co) = (r - x0, c - y0);
        let (oo, io) = if grad_a { (co, ro) } else { (ro, co) };
        if (oo + b) * z > out.len() || (io + b) * z > input.len() {
            return Err(VertexError::new(format!(
                "{name}: entry ({r}, {c}) outside the dense blocks"
            )));
        }
        let v = &vals[e * bb..(e + 1) * bb];
        for i in 0..b {
            for j in 0..b {
                // Block element (i, j): W[r + i, c + j].
                let w = v[i * b + j];
                let (o, inp) = if grad_a { (j, i) } else { (i, j) };
                let (orow, irow) = ((oo + o) * z, (io + inp) * z);
                // Row slices (bounds checked once above), so the loop over the batch has no
                // per-element checks and vectorises.
                let (dst, src) = (&mut out[orow + z0..orow + z1], &input[irow + z0..irow + z1]);
                for (d, &x) in dst.iter_mut().zip(src) {
                    *d += T::product(w, x);
                }
            }
        }
        for row in out[oo * z..(oo + b) * z].chunks_exact_mut(z) {
            for v in &mut row[z0..z1] {
                *v = canonical_nan(*v);
            }
        }
    }
    Ok(())
}

/// The GradW kernel over the bucket entries `er`: `grad[e, i, j] += Σ_z yg[r + i − x0, z] ·
/// x[c + j − y0, z]` for the entries of this partition and pass. With `first`, the gradient
/// of the entries `er` is zeroed first.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn grad_w_pass<T: Value>(
    name: &str,
    rows: &[u32],
    cols: &[u32],
    grad: &mut [f32],
    x: &[T],
    yg: &[T],
    d: [usize; 6],
    propagation: u32,
    first: bool,
    er: Range<usize>,
) -> Result<(), VertexError> {
    let [x0, _, y0, _, z, b] = d;
    let bb = b * b;
    if rows.len() != cols.len() || grad.len() != rows.len() * bb {
        return Err(VertexError::new(format!(
            "{name}: bucket fields disagree: rows {}, cols {}, grad {} (block {b})",
            rows.len(),
            cols.len(),
            grad.len()
        )));
    }
    if er.end > rows.len() {
        return Err(VertexError::new(format!(
            "{name}: entries {er:?} outside the bucket of {}",
            rows.len()
        )));
    }
    if first {
        grad[er.start * bb..er.end * bb].fill(0.0);
    }
    for e in er {
        let Some((r, c)) = take(rows[e], cols[e], &d, propagation) else {
            continue;
        };
        let (ro, co) = (r - x0, c - y0);
        if (ro + b) * z > yg.len() || (co + b) * z > x.len() {
            return Err(VertexError::new(format!(
                "{name}: entry ({r}, {c}) outside the dense blocks"
            )));
        }
        for i in 0..b {
            for j in 0..b {
                let (yo, xo) = ((ro + i) * z, (co + j) * z);
                let mut s = 0.0f32;
                for (&a, &c) in yg[yo..yo + z].iter().zip(&x[xo..xo + z]) {
                    s += T::product(a, c);
                }
                let g = &mut grad[e * bb + i * b + j];
                *g = canonical_nan(*g + s);
            }
        }
    }
    Ok(())
}

macro_rules! dense_codelet {
    ($name:ident as $cname:literal, $t:ty, $input:ident, $grad_a:expr) => {
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "` (module notes).")]
            pub struct $name as $cname, multi_worker {
                rows: Input<Vector<u32>>,
                cols: Input<Vector<u32>>,
                vals: Input<Vector<$t>>,
                $input: Input<Vector<$t>>,
                out: InOut<Vector<f32>>,
                x0: State<u32>,
                nx: State<u32>,
                y0: State<u32>,
                ny: State<u32>,
                z: State<u32>,
                block: State<u32>,
                propagation: State<u32>,
                first: State<u32>,
            }
        }

        impl Vertex for $name<'_> {
            /// Worker 0 sweeps all the batch columns; the others return (module notes).
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                if w.id != 0 {
                    return Ok(());
                }
                let d = dims([self.x0, self.nx, self.y0, self.ny, self.z, self.block]);
                poplar_core::isa_dispatch! {
                    #[allow(clippy::too_many_arguments)]
                    fn kernel(
                        name: &str,
                        rows: &[u32],
                        cols: &[u32],
                        vals: &[$t],
                        input: &[$t],
                        out: &mut [f32],
                        d: [usize; 6],
                        propagation: u32,
                        grad_a: bool,
                        first: bool,
                        zr: Range<usize>,
                    ) -> Result<(), VertexError> {
                        dense_pass(name, rows, cols, vals, input, out, d, propagation, grad_a, first, zr)
                    }
                }
                kernel(
                    $cname,
                    self.rows,
                    self.cols,
                    self.vals,
                    self.$input,
                    self.out,
                    d,
                    self.propagation,
                    $grad_a,
                    self.first != 0,
                    0..d[4],
                )
            }

            /// The bucket scan only; the batch, block and partition are state values, which a
            /// cycle estimate cannot see, so the builder sets [`vertex_cycles`] on each vertex.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(scan_cycles(ctx.elements(Self::rows)))
            }
        }
    };
}

dense_codelet!(SparseFwdF32 as "SparseFwd<float>", f32, x, false);
dense_codelet!(SparseGradAF32 as "SparseGradA<float>", f32, yg, true);
dense_codelet!(SparseFwdF16 as "SparseFwd<half>", poplar_core::f16, x, false);
dense_codelet!(SparseGradAF16 as "SparseGradA<half>", poplar_core::f16, yg, true);

macro_rules! grad_w_codelet {
    ($name:ident as $cname:literal, $t:ty) => {
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "` (module notes).")]
            pub struct $name as $cname, multi_worker {
                rows: Input<Vector<u32>>,
                cols: Input<Vector<u32>>,
                grad: InOut<Vector<f32>>,
                x: Input<Vector<$t>>,
                yg: Input<Vector<$t>>,
                x0: State<u32>,
                nx: State<u32>,
                y0: State<u32>,
                ny: State<u32>,
                z: State<u32>,
                block: State<u32>,
                propagation: State<u32>,
                first: State<u32>,
            }
        }

        impl Vertex for $name<'_> {
            /// Worker 0 sweeps all the entries; the others return (module notes).
            fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
                if w.id != 0 {
                    return Ok(());
                }
                let d = dims([self.x0, self.nx, self.y0, self.ny, self.z, self.block]);
                poplar_core::isa_dispatch! {
                    #[allow(clippy::too_many_arguments)]
                    fn kernel(
                        name: &str,
                        rows: &[u32],
                        cols: &[u32],
                        grad: &mut [f32],
                        x: &[$t],
                        yg: &[$t],
                        d: [usize; 6],
                        propagation: u32,
                        first: bool,
                        er: Range<usize>,
                    ) -> Result<(), VertexError> {
                        grad_w_pass(name, rows, cols, grad, x, yg, d, propagation, first, er)
                    }
                }
                kernel(
                    $cname,
                    self.rows,
                    self.cols,
                    self.grad,
                    self.x,
                    self.yg,
                    d,
                    self.propagation,
                    self.first != 0,
                    0..self.rows.len(),
                )
            }

            /// The bucket scan only (see `SparseFwd<float>`); the builder sets
            /// [`grad_w_cycles`].
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(scan_cycles(ctx.elements(Self::rows)))
            }
        }
    };
}

grad_w_codelet!(SparseGradWF32 as "SparseGradW<float>", f32);
grad_w_codelet!(SparseGradWF16 as "SparseGradW<half>", poplar_core::f16);

poplar_core::codelet! {
    /// `Countdown` (module notes).
    pub struct Countdown as "Countdown" {
        counter: InOut<u32>,
        parity: InOut<u32>,
        pred: Output<u32>,
    }
}

impl Vertex for Countdown<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let go = *self.counter > 0;
        *self.pred = u32::from(go);
        if go {
            *self.counter -= 1;
            *self.parity ^= 1;
        }
        Ok(())
    }

    fn cycles(_ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(OVERHEAD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bucket of `cap` entries of `b × b` blocks in an `n × n` partition at the origin, with
    /// a few empty slots and entries of the other pass.
    fn bucket(cap: usize, n: usize, b: usize) -> (Vec<u32>, Vec<u32>, Vec<f32>) {
        let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        for e in 0..cap {
            let (r, c) = ((e * 7 % (n / b)) * b, (e * 5 % (n / b)) * b);
            rows.push(if e % 9 == 4 { EMPTY } else { r as u32 });
            cols.push(c as u32 | if e % 11 == 3 { SPILLED } else { 0 });
            vals.extend((0..b * b).map(|k| ((e * 31 + k) as f32 * 0.37).sin()));
        }
        (rows, cols, vals)
    }

    #[test]
    fn worker_shares_give_the_bits_of_one_sweep() {
        let (n, z) = (16, 7);
        let input: Vec<f32> = (0..n * z).map(|i| (i as f32 * 0.11).cos()).collect();
        let other: Vec<f32> = (0..n * z).map(|i| (i as f32 * 0.23).sin()).collect();
        for b in [1, 4] {
            let (rows, cols, vals) = bucket(13, n, b);
            let d = [0, n, 0, n, z, b];
            for grad_a in [false, true] {
                let mut whole = vec![9.0f32; n * z];
                dense_pass(
                    "t",
                    &rows,
                    &cols,
                    &vals,
                    &input,
                    &mut whole,
                    d,
                    0,
                    grad_a,
                    true,
                    0..z,
                )
                .unwrap();
                let mut split = vec![9.0f32; n * z];
                for w in 0..6 {
                    let zr = z_share(z, w, 6);
                    dense_pass(
                        "t", &rows, &cols, &vals, &input, &mut split, d, 0, grad_a, true, zr,
                    )
                    .unwrap();
                }
                assert_eq!(whole, split, "block {b}, grad_a {grad_a}");
                assert!(whole.iter().any(|&v| v != 0.0));
            }
            let mut whole = vec![9.0f32; rows.len() * b * b];
            let all = 0..rows.len();
            grad_w_pass(
                "t", &rows, &cols, &mut whole, &input, &other, d, 1, true, all,
            )
            .unwrap();
            let mut split = vec![9.0f32; rows.len() * b * b];
            for w in 0..6 {
                let er = entry_share(rows.len(), w, 6);
                grad_w_pass(
                    "t", &rows, &cols, &mut split, &input, &other, d, 1, true, er,
                )
                .unwrap();
            }
            assert_eq!(whole, split, "GradW, block {b}");
            assert!(whole.iter().any(|&v| v != 0.0));
        }
    }
}
