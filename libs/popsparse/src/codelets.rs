//! The sparse codelets. A bucket is three vectors of the same capacity: `rows` and `cols`
//! (global coordinates of the non-zeros of `W`, `u32`; [`EMPTY`] marks an unused slot) and
//! `vals` (f32). A vertex processes the entries of its tile's current bucket that fall in
//! its partition `[x0, x0 + nx) × [y0, y0 + ny)` and skips the others (they belong to another
//! partition and are on their way there). Dense blocks are row-major with `z` columns.
//!
//! - `SparseFwd<float>`: `out[r − x0, :] += v · x[c − y0, :]` (Y = W·X).
//! - `SparseGradA<float>`: `out[c − y0, :] += v · yg[r − x0, :]` (X' = Wᵀ·Y').
//! - `SparseGradW<float>`: `grad[e] += Σ_z yg[r − x0, z] · x[c − y0, z]` (W' = Y'·Xᵀ on the
//!   pattern; `grad` travels with its bucket).
//! - `Countdown`: `pred = counter > 0`; if so, `counter −= 1` and `parity ^= 1`: the
//!   propagation loop's condition and the active buffer.
//!
//! Cycle estimates (static, so for a full bucket): a scan of `ROW_OVERHEAD` per slot, plus per
//! entry `z` multiply-accumulates at 1 per cycle (the seed's f32 element-wise rate, two MACs in
//! two cycles with `f32v2mac`) for Fwd/GradA, and `z` for GradW's dot product
//! ([`bucket_cycles`]; the builder sets it on each vertex, as `z` is a state value).

use poplar::codelet::*;

use codelets::cycles::{OVERHEAD, ROW_OVERHEAD};

/// An unused bucket slot.
pub const EMPTY: u32 = u32::MAX;

/// Cycles of a Fwd/GradA/GradW vertex over a bucket of `cap` slots and batch `z`.
pub const fn bucket_cycles(cap: u64, z: u64) -> u64 {
    OVERHEAD + cap * (ROW_OVERHEAD + z)
}

fn check(name: &str, rows: usize, cols: usize, vals: usize) -> Result<(), VertexError> {
    if rows != cols || rows != vals {
        return Err(VertexError::new(format!(
            "{name}: bucket fields differ in length: rows {rows}, cols {cols}, vals {vals}"
        )));
    }
    Ok(())
}

/// Partition bounds of a vertex: `x0, nx, y0, ny, z`.
fn dims(state: [u32; 5]) -> [usize; 5] {
    state.map(|s| s as usize)
}

macro_rules! dense_pass {
    ($name:ident as $cname:literal, $input:ident, |$r:ident, $c:ident, $x0:ident, $y0:ident| ($orow:expr, $irow:expr)) => {
        poplar::codelet! {
            #[doc = concat!("`", $cname, "` (module notes).")]
            pub struct $name as $cname {
                rows: Input<Vector<u32>>,
                cols: Input<Vector<u32>>,
                vals: Input<Vector<f32>>,
                $input: Input<Vector<f32>>,
                out: InOut<Vector<f32>>,
                x0: State<u32>,
                nx: State<u32>,
                y0: State<u32>,
                ny: State<u32>,
                z: State<u32>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
                check($cname, self.rows.len(), self.cols.len(), self.vals.len())?;
                let [$x0, nx, $y0, ny, z] = dims([self.x0, self.nx, self.y0, self.ny, self.z]);
                for ((&r, &c), &v) in self.rows.iter().zip(self.cols.iter()).zip(self.vals.iter()) {
                    let ($r, $c) = (r as usize, c as usize);
                    if r == EMPTY || $r < $x0 || $r >= $x0 + nx || $c < $y0 || $c >= $y0 + ny {
                        continue;
                    }
                    let (orow, irow): (usize, usize) = ($orow, $irow);
                    let (o, i) = (orow * z, irow * z);
                    if o + z > self.out.len() || i + z > self.$input.len() {
                        return Err(VertexError::new(format!(
                            "{}: entry ({r}, {c}) outside the dense blocks",
                            $cname
                        )));
                    }
                    for k in 0..z {
                        self.out[o + k] += v * self.$input[i + k];
                    }
                }
                Ok(())
            }

            /// The bucket scan only; the batch `z` is a state value, which a cycle estimate
            /// cannot see, so the builder sets [`bucket_cycles`] with `z` on each vertex.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(bucket_cycles(ctx.elements(Self::rows), 1))
            }
        }
    };
}

dense_pass!(SparseFwdF32 as "SparseFwd<float>", x, |r, c, x0, y0| (r - x0, c - y0));
dense_pass!(SparseGradAF32 as "SparseGradA<float>", yg, |r, c, x0, y0| (c - y0, r - x0));

poplar::codelet! {
    /// `SparseGradW<float>` (module notes).
    pub struct SparseGradWF32 as "SparseGradW<float>" {
        rows: Input<Vector<u32>>,
        cols: Input<Vector<u32>>,
        grad: InOut<Vector<f32>>,
        x: Input<Vector<f32>>,
        yg: Input<Vector<f32>>,
        x0: State<u32>,
        nx: State<u32>,
        y0: State<u32>,
        ny: State<u32>,
        z: State<u32>,
    }
}

impl Vertex for SparseGradWF32<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        check(
            "SparseGradW<float>",
            self.rows.len(),
            self.cols.len(),
            self.grad.len(),
        )?;
        let [x0, nx, y0, ny, z] = dims([self.x0, self.nx, self.y0, self.ny, self.z]);
        for ((&r, &c), g) in self
            .rows
            .iter()
            .zip(self.cols.iter())
            .zip(self.grad.iter_mut())
        {
            let (ru, cu) = (r as usize, c as usize);
            if r == EMPTY || ru < x0 || ru >= x0 + nx || cu < y0 || cu >= y0 + ny {
                continue;
            }
            let (yo, xo) = ((ru - x0) * z, (cu - y0) * z);
            if yo + z > self.yg.len() || xo + z > self.x.len() {
                return Err(VertexError::new(format!(
                    "SparseGradW<float>: entry ({r}, {c}) outside the dense blocks"
                )));
            }
            let mut s = 0.0f32;
            for k in 0..z {
                s += self.yg[yo + k] * self.x[xo + k];
            }
            *g += s;
        }
        Ok(())
    }

    /// The bucket scan only (see `SparseFwd<float>`).
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(bucket_cycles(ctx.elements(Self::rows), 1))
    }
}

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
