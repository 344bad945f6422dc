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
//! Cycle estimates (static, so for a full bucket): [`bucket_cycles`], which the builder sets on
//! each vertex (the batch and block size are state values a cycle estimate cannot see).

use poplar::codelet::*;

use codelets::cycles::{OVERHEAD, ROW_OVERHEAD};

/// An unused bucket slot.
pub const EMPTY: u32 = u32::MAX;
/// Set in `cols` of an entry the encoder spilled out of its partition's buckets: the
/// propagation processes only these, the distribution only the others, so that no entry is
/// processed twice when buckets pass through the tiles of their own partition. Coordinates
/// are therefore below 2³¹ (the planner refuses larger layers: `FcPlanError::TooLarge`).
pub const SPILLED: u32 = 1 << 31;

/// f32 multiply-accumulates per cycle of an element-sparse vertex: `f32v2mac`, two in two
/// cycles (the seed, § 4.4.1).
pub const ELEMENT_MACS_PER_CYCLE: u64 = 1;
/// f32 multiply-accumulates per cycle of a block-sparse vertex, on the AMP (as `poplin`).
pub const BLOCK_MACS_PER_CYCLE: u64 = 16;

/// f16 multiply-accumulates per cycle of an element-sparse vertex: `f16v4mul` and `f16v4acc`,
/// four in two cycles (seed § 4.4.1).
pub const ELEMENT_MACS_PER_CYCLE_F16: u64 = 2;
/// f16 multiply-accumulates per cycle of a block-sparse vertex on the AMP (as `poplin`).
pub const BLOCK_MACS_PER_CYCLE_F16: u64 = 64;

/// Cycles of a Fwd/GradA/GradW vertex over a bucket of `cap` entries of `block × block`, batch
/// `z`, f32: a scan of each entry, and `block² · z` multiply-accumulates per entry at the
/// element or AMP rate.
pub const fn bucket_cycles(cap: u64, z: u64, block: u64) -> u64 {
    bucket_cycles_for(cap, z, block, false)
}

/// [`bucket_cycles`] for f32 (`half` false) or f16 (`half` true) values.
pub const fn bucket_cycles_for(cap: u64, z: u64, block: u64, half: bool) -> u64 {
    let macs = block * block * z;
    let rate = match (block == 1, half) {
        (true, false) => ELEMENT_MACS_PER_CYCLE,
        (true, true) => ELEMENT_MACS_PER_CYCLE_F16,
        // The AMP takes a block's b² weights and streams the z columns through them.
        (false, false) => BLOCK_MACS_PER_CYCLE,
        (false, true) => BLOCK_MACS_PER_CYCLE_F16,
    };
    OVERHEAD + cap * (ROW_OVERHEAD + macs.div_ceil(rate))
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

impl Value for poplar::f16 {
    #[inline]
    fn product(a: poplar::f16, b: poplar::f16) -> f32 {
        poplar::f16::from_f32(a.to_f32() * b.to_f32()).to_f32()
    }
}

/// The Fwd and GradA kernels over one bucket: `grad_a` swaps the roles of rows and columns.
#[allow(clippy::too_many_arguments)]
fn dense_pass<T: Value>(
    name: &str,
    rows: &[u32],
    cols: &[u32],
    vals: &[T],
    input: &[T],
    out: &mut [f32],
    d: [usize; 6],
    propagation: u32,
    grad_a: bool,
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
                out.get_mut(oo * z..(oo + 1) * z),
                input.get(io * z..(io + 1) * z),
            ) else {
                return Err(VertexError::new(format!(
                    "{name}: entry ({r}, {c}) outside the dense blocks"
                )));
            };
            for (d, &x) in dst.iter_mut().zip(src) {
                *d += T::product(w, x);
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
                let (dst, src) = (&mut out[orow..orow + z], &input[irow..irow + z]);
                for (d, &x) in dst.iter_mut().zip(src) {
                    *d += T::product(w, x);
                }
            }
        }
    }
    Ok(())
}

macro_rules! dense_codelet {
    ($name:ident as $cname:literal, $t:ty, $input:ident, $grad_a:expr) => {
        poplar::codelet! {
            #[doc = concat!("`", $cname, "` (module notes).")]
            pub struct $name as $cname {
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
            fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
                let d = dims([self.x0, self.nx, self.y0, self.ny, self.z, self.block]);
                if self.first != 0 {
                    self.out.fill(0.0);
                }
                dense_pass(
                    $cname,
                    self.rows,
                    self.cols,
                    self.vals,
                    self.$input,
                    self.out,
                    d,
                    self.propagation,
                    $grad_a,
                )
            }

            /// The bucket scan only; the batch and block are state values, which a cycle
            /// estimate cannot see, so the builder sets [`bucket_cycles`] on each vertex.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(bucket_cycles(ctx.elements(Self::rows), 1, 1))
            }
        }
    };
}

dense_codelet!(SparseFwdF32 as "SparseFwd<float>", f32, x, false);
dense_codelet!(SparseGradAF32 as "SparseGradA<float>", f32, yg, true);
dense_codelet!(SparseFwdF16 as "SparseFwd<half>", poplar::f16, x, false);
dense_codelet!(SparseGradAF16 as "SparseGradA<half>", poplar::f16, yg, true);

macro_rules! grad_w_codelet {
    ($name:ident as $cname:literal, $t:ty) => {
        poplar::codelet! {
            #[doc = concat!("`", $cname, "` (module notes).")]
            pub struct $name as $cname {
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
            fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
                let d = dims([self.x0, self.nx, self.y0, self.ny, self.z, self.block]);
                let [x0, _, y0, _, z, b] = d;
                let bb = b * b;
                if self.first != 0 {
                    self.grad.fill(0.0);
                }
                if self.rows.len() != self.cols.len() || self.grad.len() != self.rows.len() * bb {
                    return Err(VertexError::new(format!(
                        "{}: bucket fields disagree: rows {}, cols {}, grad {} (block {b})",
                        $cname,
                        self.rows.len(),
                        self.cols.len(),
                        self.grad.len()
                    )));
                }
                for (e, (&r, &c)) in self.rows.iter().zip(self.cols.iter()).enumerate() {
                    let Some((r, c)) = take(r, c, &d, self.propagation) else {
                        continue;
                    };
                    let (ro, co) = (r - x0, c - y0);
                    if (ro + b) * z > self.yg.len() || (co + b) * z > self.x.len() {
                        return Err(VertexError::new(format!(
                            "{}: entry ({r}, {c}) outside the dense blocks",
                            $cname
                        )));
                    }
                    for i in 0..b {
                        for j in 0..b {
                            let (yo, xo) = ((ro + i) * z, (co + j) * z);
                            let mut s = 0.0f32;
                            for (&a, &c) in self.yg[yo..yo + z].iter().zip(&self.x[xo..xo + z]) {
                                s += <$t as Value>::product(a, c);
                            }
                            self.grad[e * bb + i * b + j] += s;
                        }
                    }
                }
                Ok(())
            }

            /// The bucket scan only (see `SparseFwd<float>`).
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(bucket_cycles(ctx.elements(Self::rows), 1, 1))
            }
        }
    };
}

grad_w_codelet!(SparseGradWF32 as "SparseGradW<float>", f32);
grad_w_codelet!(SparseGradWF16 as "SparseGradW<half>", poplar::f16);

poplar::codelet! {
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
