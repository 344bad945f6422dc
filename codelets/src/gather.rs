//! Gather, scatter and one-hot encoding: ONNX's `Gather` / `GatherElements` /
//! `ScatterElements` / `GatherND` / `ScatterND` and poplibs' `encodeOneHot`.
//!
//! The element-wise gathers and scatters work on rows along the *last* axis (the graph side
//! moves the indexed axis last with a view): `indices`, `updates` and `out` are `r` rows of
//! `k`, the table (`input`, or `a` when it is updated) `r` rows of `row_len`. Indices reach
//! them checked and non-negative, from `NormaliseIndices`. `T` is `float`, `half`, `int` or
//! `unsigned` (`ScatterElementsAdd`, `ScatterNdAdd`: `float`, `half`, `int`).
//!
//! The ND scatters see `data` as a table of rows of `row_len` (the slice an index tuple
//! selects) and take flat row indices from `NormaliseIndicesNd`; each vertex owns the rows
//! `first..` of the table in its `a` and applies, in order, the update rows whose index falls
//! there (poplibs' `MultiUpdate` layout). `mul`/`min`/`max` ([`ScatterOp`]): `half` in f32,
//! rounded once per update; a float NaN result is the canonical NaN; `min`/`max` are IEEE
//! 754-2019 `minimum`/`maximum` (NaN if either side is NaN, −0 below +0); integers wrap.
//!
//! | name | fields | computes |
//! |---|---|---|
//! | `NormaliseIndices<I>` (`I` = `int`, `unsigned`) | `input: Input<Vector<I>>`, `out: Output<Vector<u32>>`, `dim`, `first: State<u32>` | `out[i] = input[i] + (input[i] < 0 ? dim : 0)`; an index outside `[-dim, dim)` fails the run, naming the index and its position `first + i` |
//! | `GatherElements<T>` | `indices: Input<Vector<u32>>`, `input: Input<Vector<T>>`, `out: Output<Vector<T>>`, `row_len: State<u32>` | `out[r, j] = input[r, indices[r, j]]` |
//! | `ScatterElements<T>` | `indices`, `updates: Input<Vector<T>>`, `a: InOut<Vector<T>>`, `row_len` | `a[r, indices[r, j]] = updates[r, j]`, `j` in order (the last of equal indices wins) |
//! | `ScatterElementsAdd<T>` | same | `a[r, indices[r, j]] += updates[r, j]`, in order (`half`: in f32, rounded once per add; `int` wraps) |
//! | `ScatterElements{Mul,Min,Max}<T>` | same | `a[r, indices[r, j]] = op(a[…], updates[r, j])`, in order |
//! | `NormaliseIndicesNd<I>` | `input: Input<Vector<I>>`, `out: Output<Vector<u32>>`, `dims: State<Vector<u32>>`, `first`, `batch_rows`, `batch_stride`, `first_axis: State<u32>` | row `first + r` of `m = dims.len()` indices, each made non-negative and checked against its `dims`, as the flat row `batch · batch_stride + Σ idx_j · Π dims[j+1..]` (`batch = (first + r) / batch_rows`); a bad index fails the run naming it, its position and its axis `first_axis + j` |
//! | `ScatterNd<T>` / `ScatterNd{Add,Mul,Min,Max}<T>` | `indices: Input<Vector<u32>>`, `updates: Input<Vector<T>>`, `a: InOut<Vector<T>>`, `row_len`, `first: State<u32>` | for each `e` in order with `indices[e]` in `first..first + rows(a)`: that row of `a` combined with update row `e` (written, added, `op`) |
//! | `EncodeOneHot<I,T>` (`T` = `float`, `half`, `int`) | `indices: Input<Vector<I>>`, `out: Output<Vector<T>>`, `depth: State<u32>` | row `i` of `out` (`depth` elements) is zeros with a 1 at `indices[i]`, all zeros when the index is outside `[0, depth)` |
//!
//! Cycle estimates ([`cost`]): poplibs has no vertices for ONNX's element-wise gathers and
//! scatters (its `gather`/`scatter` are built from multi-slices), so they are modelled as
//! `MultiSlice` / `MultiUpdate` / `MultiUpdateAdd` of one-element rows, one per index;
//! `ScatterElements{Mul,Min,Max}` as `MultiUpdate` plus the op per element (ours,
//! [`cost::scatter_op`]); `ScatterNd*` as the multi-update of their rows, every vertex
//! charged for every row as poplibs charges every offset ([`cost::scatter_nd`]);
//! `NormaliseIndicesNd` ours ([`cost::normalise_nd`]); `EncodeOneHot` is poplibs' estimator
//! (`100` cycles per index for the C++ vertex, `(62 + 12)` per index and the supervisor
//! overhead for the assembly `unsigned`→`half` one) plus
//! `Fill` over the rows, which poplibs zeroes with a separate `zero` program.

use poplar_core::codelet::to_f16;
use poplar_core::codelet::*;
use poplar_core::dtype::Element;
use poplar_core::f16;

use crate::slice::ScaledAddElem;

/// The row length `row_len` of a table field, and its row count, checked against `k`-element
/// index rows.
fn rows(
    codelet: &str,
    table: usize,
    row_len: u32,
    indices: usize,
    others: &[(&str, usize)],
) -> Result<(usize, usize), VertexError> {
    let row_len = row_len as usize;
    let r = table.checked_div(row_len).unwrap_or(0);
    if r * row_len != table {
        return Err(VertexError::new(format!(
            "{codelet}: the table has {table} elements, not whole rows of {row_len}"
        )));
    }
    let k = indices.checked_div(r).unwrap_or(0);
    if r * k != indices || (r == 0 && indices != 0) {
        return Err(VertexError::new(format!(
            "{codelet}: field 'indices' has {indices} elements, not {r} rows"
        )));
    }
    for &(field, len) in others {
        crate::util::same_len(codelet, field, len, "indices", indices)?;
    }
    Ok((r, k))
}

/// A checked index below `row_len` (the indices come from `NormaliseIndices`).
fn at(codelet: &str, idx: u32, row_len: usize) -> Result<usize, VertexError> {
    let i = idx as usize;
    if i < row_len {
        Ok(i)
    } else {
        Err(VertexError::new(format!(
            "{codelet}: index {idx} is out of range for rows of {row_len}"
        )))
    }
}

macro_rules! normalise_codelets {
    ($($t:ty, $name:ident $cname:literal, $neg:expr;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: indices made non-negative and checked against `dim`.")]
            pub struct $name as $cname {
                input: Input<Vector<$t>>,
                out: Output<Vector<u32>>,
                dim: State<u32>,
                first: State<u32>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                crate::util::same_len(Self::NAME, "out", self.out.len(), "input", self.input.len())?;
                let dim = i64::from(self.dim);
                for (k, (o, &i)) in self.out.iter_mut().zip(self.input).enumerate() {
                    let v = i64::from(i);
                    let n = if $neg && v < 0 { v + dim } else { v };
                    if !(0..dim).contains(&n) {
                        return Err(VertexError::new(format!(
                            "index {v} (element {} of the indices) is out of range for an axis of {dim}",
                            self.first as usize + k
                        )));
                    }
                    *o = n as u32;
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::normalise(ctx.elements(Self::out)))
            }
        }
    )*};
}

normalise_codelets! {
    i32, NormaliseIndicesI32 "NormaliseIndices<int>", true;
    u32, NormaliseIndicesU32 "NormaliseIndices<unsigned>", false;
}

macro_rules! gather_codelets {
    ($($t:ty: $g:ident $gn:literal, $s:ident $sn:literal;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $gn, "`: `out[r, j] = input[r, indices[r, j]]`.")]
            pub struct $g as $gn {
                indices: Input<Vector<u32>>,
                input: Input<Vector<$t>>,
                out: Output<Vector<$t>>,
                row_len: State<u32>,
            }
        }

        impl Vertex for $g<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let n = self.indices.len();
                let (_, k) = rows(Self::NAME, self.input.len(), self.row_len, n, &[("out", self.out.len())])?;
                let len = self.row_len as usize;
                for (e, (o, &i)) in self.out.iter_mut().zip(self.indices).enumerate() {
                    *o = self.input[(e / k) * len + at(Self::NAME, i, len)?];
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::gather(<$t as Element>::DTYPE, ctx.elements(Self::indices)))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`", $sn, "`: `a[r, indices[r, j]] = updates[r, j]`, in order.")]
            pub struct $s as $sn {
                indices: Input<Vector<u32>>,
                updates: Input<Vector<$t>>,
                a: InOut<Vector<$t>>,
                row_len: State<u32>,
            }
        }

        impl Vertex for $s<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let n = self.indices.len();
                let (_, k) = rows(Self::NAME, self.a.len(), self.row_len, n, &[("updates", self.updates.len())])?;
                let len = self.row_len as usize;
                for (e, (&u, &i)) in self.updates.iter().zip(self.indices).enumerate() {
                    self.a[(e / k) * len + at(Self::NAME, i, len)?] = u;
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::scatter(<$t as Element>::DTYPE, ctx.elements(Self::indices)))
            }
        }
    )*};
}

gather_codelets! {
    f32: GatherElementsF32 "GatherElements<float>", ScatterElementsF32 "ScatterElements<float>";
    f16: GatherElementsF16 "GatherElements<half>", ScatterElementsF16 "ScatterElements<half>";
    i32: GatherElementsI32 "GatherElements<int>", ScatterElementsI32 "ScatterElements<int>";
    u32: GatherElementsU32 "GatherElements<unsigned>", ScatterElementsU32 "ScatterElements<unsigned>";
}

/// The `mul`, `min` and `max` combines of the scatters: an element `a` and the update `u`
/// landing on it, the result stored as element `index` of the vertex's `a` (it selects the
/// random bits of `half`'s stochastic rounding). `half` computes in f32 and rounds once; a
/// float NaN result is the canonical NaN. `min`/`max` are IEEE 754-2019 `minimum`/`maximum`
/// (numpy's `minimum`/`maximum`): NaN when either side is NaN, −0 below +0. Integers wrap.
pub trait ScatterOp: Copy {
    /// `a · u`.
    fn mul(a: Self, u: Self, index: usize) -> Self;
    /// The smaller of `a` and `u`.
    fn min(a: Self, u: Self, index: usize) -> Self;
    /// The larger of `a` and `u`.
    fn max(a: Self, u: Self, index: usize) -> Self;
}

/// IEEE 754-2019 `minimum`: NaN if either is NaN, −0 below +0.
#[inline(always)]
pub fn minimum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// IEEE 754-2019 `maximum`: NaN if either is NaN, +0 above −0.
#[inline(always)]
pub fn maximum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a > b || (a == b && a.is_sign_positive()) {
        a
    } else {
        b
    }
}

impl ScatterOp for f32 {
    #[inline(always)]
    fn mul(a: f32, u: f32, _index: usize) -> f32 {
        poplar_core::fp::canonical_nan(a * u)
    }
    #[inline(always)]
    fn min(a: f32, u: f32, _index: usize) -> f32 {
        minimum(a, u)
    }
    #[inline(always)]
    fn max(a: f32, u: f32, _index: usize) -> f32 {
        maximum(a, u)
    }
}

impl ScatterOp for f16 {
    #[inline(always)]
    fn mul(a: f16, u: f16, index: usize) -> f16 {
        to_f16(f32::mul(a.to_f32(), u.to_f32(), index), index)
    }
    #[inline(always)]
    fn min(a: f16, u: f16, index: usize) -> f16 {
        to_f16(minimum(a.to_f32(), u.to_f32()), index)
    }
    #[inline(always)]
    fn max(a: f16, u: f16, index: usize) -> f16 {
        to_f16(maximum(a.to_f32(), u.to_f32()), index)
    }
}

macro_rules! int_scatter_op {
    ($($t:ty),*) => {$(
        impl ScatterOp for $t {
            #[inline(always)]
            fn mul(a: $t, u: $t, _index: usize) -> $t {
                a.wrapping_mul(u)
            }
            #[inline(always)]
            fn min(a: $t, u: $t, _index: usize) -> $t {
                Ord::min(a, u)
            }
            #[inline(always)]
            fn max(a: $t, u: $t, _index: usize) -> $t {
                Ord::max(a, u)
            }
        }
    )*};
}

int_scatter_op!(i32, u32);

/// The scatters that combine an update with the element it lands on, in order of the
/// indices: `$combine(a, u, p)` is the new element `p` of `a`, `$cost(dtype, indices)` the
/// estimate.
macro_rules! scatter_combine_codelets {
    ($($t:ty: $what:literal, $combine:expr, $cost:path, $name:ident $cname:literal;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `a[r, indices[r, j]] = ", $what, "`, in order (`a` the element, `u` the update).")]
            pub struct $name as $cname {
                indices: Input<Vector<u32>>,
                updates: Input<Vector<$t>>,
                a: InOut<Vector<$t>>,
                row_len: State<u32>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let n = self.indices.len();
                let (_, k) = rows(Self::NAME, self.a.len(), self.row_len, n, &[("updates", self.updates.len())])?;
                let len = self.row_len as usize;
                let combine: fn($t, $t, usize) -> $t = $combine;
                for (e, (&u, &i)) in self.updates.iter().zip(self.indices).enumerate() {
                    let p = (e / k) * len + at(Self::NAME, i, len)?;
                    self.a[p] = combine(self.a[p], u, p);
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some($cost(<$t as Element>::DTYPE, ctx.elements(Self::indices)))
            }
        }
    )*};
}

/// [`cost::scatter_op`] of one operation per update.
fn one_op_cost(dtype: poplar_core::dtype::DType, indices: u64) -> u64 {
    cost::scatter_op(dtype, 1, indices)
}

scatter_combine_codelets! {
    f32: "a + u", |a, u, p| f32::scaled_add(a, u, 1.0, p), cost::scatter_add, ScatterElementsAddF32 "ScatterElementsAdd<float>";
    f16: "a + u", |a, u, p| f16::scaled_add(a, u, 1.0, p), cost::scatter_add, ScatterElementsAddF16 "ScatterElementsAdd<half>";
    i32: "a + u", |a, u, p| i32::scaled_add(a, u, 1, p), cost::scatter_add, ScatterElementsAddI32 "ScatterElementsAdd<int>";
    f32: "mul(a, u)", ScatterOp::mul, one_op_cost, ScatterElementsMulF32 "ScatterElementsMul<float>";
    f16: "mul(a, u)", ScatterOp::mul, one_op_cost, ScatterElementsMulF16 "ScatterElementsMul<half>";
    i32: "mul(a, u)", ScatterOp::mul, one_op_cost, ScatterElementsMulI32 "ScatterElementsMul<int>";
    u32: "mul(a, u)", ScatterOp::mul, one_op_cost, ScatterElementsMulU32 "ScatterElementsMul<unsigned>";
    f32: "min(a, u)", ScatterOp::min, one_op_cost, ScatterElementsMinF32 "ScatterElementsMin<float>";
    f16: "min(a, u)", ScatterOp::min, one_op_cost, ScatterElementsMinF16 "ScatterElementsMin<half>";
    i32: "min(a, u)", ScatterOp::min, one_op_cost, ScatterElementsMinI32 "ScatterElementsMin<int>";
    u32: "min(a, u)", ScatterOp::min, one_op_cost, ScatterElementsMinU32 "ScatterElementsMin<unsigned>";
    f32: "max(a, u)", ScatterOp::max, one_op_cost, ScatterElementsMaxF32 "ScatterElementsMax<float>";
    f16: "max(a, u)", ScatterOp::max, one_op_cost, ScatterElementsMaxF16 "ScatterElementsMax<half>";
    i32: "max(a, u)", ScatterOp::max, one_op_cost, ScatterElementsMaxI32 "ScatterElementsMax<int>";
    u32: "max(a, u)", ScatterOp::max, one_op_cost, ScatterElementsMaxU32 "ScatterElementsMax<unsigned>";
}

macro_rules! normalise_nd_codelets {
    ($($t:ty, $name:ident $cname:literal, $neg:expr;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: rows of `m` indices made one flat row index of the table.")]
            pub struct $name as $cname {
                input: Input<Vector<$t>>,
                out: Output<Vector<u32>>,
                dims: State<Vector<u32>>,
                first: State<u32>,
                batch_rows: State<u32>,
                batch_stride: State<u32>,
                first_axis: State<u32>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let m = self.dims.len();
                crate::util::same_len(Self::NAME, "input", self.input.len(), "out · m", self.out.len() * m)?;
                let batch_rows = u64::from(self.batch_rows.max(1));
                for (r, o) in self.out.iter_mut().enumerate() {
                    let row = self.first as usize + r;
                    let mut flat = 0u64;
                    for (j, &dim) in self.dims.iter().enumerate() {
                        let v = i64::from(self.input[r * m + j]);
                        let dim = i64::from(dim);
                        let n = if $neg && v < 0 { v + dim } else { v };
                        if !(0..dim).contains(&n) {
                            return Err(VertexError::new(format!(
                                "index {v} (element {} of the indices) is out of range for an axis of {dim} (axis {} of the data)",
                                row * m + j,
                                self.first_axis as usize + j
                            )));
                        }
                        flat = flat * dim as u64 + n as u64;
                    }
                    let batch = row as u64 / batch_rows;
                    *o = (batch * u64::from(self.batch_stride) + flat) as u32;
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::normalise_nd(ctx.elements(Self::input), ctx.elements(Self::out)))
            }
        }
    )*};
}

normalise_nd_codelets! {
    i32, NormaliseIndicesNdI32 "NormaliseIndicesNd<int>", true;
    u32, NormaliseIndicesNdU32 "NormaliseIndicesNd<unsigned>", false;
}

/// `ScatterNd*` over the rows `first..first + rows` of the table: the updates of the flat
/// row indices that land there, in order.
fn scatter_rows<T: Copy>(
    codelet: &str,
    indices: &[u32],
    updates: &[T],
    a: &mut [T],
    row_len: u32,
    first: u32,
    f: impl Fn(T, T, usize) -> T,
) -> Result<(), VertexError> {
    let len = row_len as usize;
    let n = indices.len();
    if len == 0 || !a.len().is_multiple_of(len) {
        return Err(VertexError::new(format!(
            "{codelet}: field 'a' has {} elements, not whole rows of {len}",
            a.len()
        )));
    }
    crate::util::same_len(
        codelet,
        "updates",
        updates.len(),
        "indices · row_len",
        n * len,
    )?;
    let range = first as usize..first as usize + a.len() / len;
    for (e, &i) in indices.iter().enumerate() {
        let i = i as usize;
        if range.contains(&i) {
            let base = (i - range.start) * len;
            for (j, &u) in updates[e * len..(e + 1) * len].iter().enumerate() {
                a[base + j] = f(a[base + j], u, base + j);
            }
        }
    }
    Ok(())
}

macro_rules! scatter_nd_codelets {
    ($($t:ty: $kind:ident, $name:ident $cname:literal, $f:expr;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: each update row whose flat row index falls in this piece of the table combined into it, in order.")]
            pub struct $name as $cname {
                indices: Input<Vector<u32>>,
                updates: Input<Vector<$t>>,
                a: InOut<Vector<$t>>,
                row_len: State<u32>,
                first: State<u32>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                scatter_rows(Self::NAME, self.indices, self.updates, self.a, self.row_len, self.first, $f)
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let dtype = <$t as Element>::DTYPE;
                let n = ctx.elements(Self::indices);
                let len = ctx.elements(Self::updates).checked_div(n).unwrap_or(0);
                Some(cost::scatter_nd(cost::Kind::$kind, dtype, len, n))
            }
        }
    )*};
}

scatter_nd_codelets! {
    f32: Set, ScatterNdF32 "ScatterNd<float>", |_, u, _| u;
    f16: Set, ScatterNdF16 "ScatterNd<half>", |_, u, _| u;
    i32: Set, ScatterNdI32 "ScatterNd<int>", |_, u, _| u;
    u32: Set, ScatterNdU32 "ScatterNd<unsigned>", |_, u, _| u;
    f32: Add, ScatterNdAddF32 "ScatterNdAdd<float>", |a, u, p| f32::scaled_add(a, u, 1.0, p);
    f16: Add, ScatterNdAddF16 "ScatterNdAdd<half>", |a, u, p| f16::scaled_add(a, u, 1.0, p);
    i32: Add, ScatterNdAddI32 "ScatterNdAdd<int>", |a, u, p| i32::scaled_add(a, u, 1, p);
    f32: Op, ScatterNdMulF32 "ScatterNdMul<float>", <f32 as ScatterOp>::mul;
    f16: Op, ScatterNdMulF16 "ScatterNdMul<half>", <f16 as ScatterOp>::mul;
    i32: Op, ScatterNdMulI32 "ScatterNdMul<int>", <i32 as ScatterOp>::mul;
    u32: Op, ScatterNdMulU32 "ScatterNdMul<unsigned>", <u32 as ScatterOp>::mul;
    f32: Op, ScatterNdMinF32 "ScatterNdMin<float>", <f32 as ScatterOp>::min;
    f16: Op, ScatterNdMinF16 "ScatterNdMin<half>", <f16 as ScatterOp>::min;
    i32: Op, ScatterNdMinI32 "ScatterNdMin<int>", <i32 as ScatterOp>::min;
    u32: Op, ScatterNdMinU32 "ScatterNdMin<unsigned>", <u32 as ScatterOp>::min;
    f32: Op, ScatterNdMaxF32 "ScatterNdMax<float>", <f32 as ScatterOp>::max;
    f16: Op, ScatterNdMaxF16 "ScatterNdMax<half>", <f16 as ScatterOp>::max;
    i32: Op, ScatterNdMaxI32 "ScatterNdMax<int>", <i32 as ScatterOp>::max;
    u32: Op, ScatterNdMaxU32 "ScatterNdMax<unsigned>", <u32 as ScatterOp>::max;
}

macro_rules! one_hot_codelets {
    ($($i:ty, $t:ty, $one:expr, $name:ident $cname:literal;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: one row of `depth` per index, 1 at the index.")]
            pub struct $name as $cname {
                indices: Input<Vector<$i>>,
                out: Output<Vector<$t>>,
                depth: State<u32>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let depth = self.depth as usize;
                let n = self.indices.len();
                if self.out.len() != n * depth {
                    return Err(VertexError::new(format!(
                        "{}: field 'out' has {} elements, not {n} rows of {depth}",
                        Self::NAME,
                        self.out.len()
                    )));
                }
                self.out.fill(<$t>::default());
                for (r, &i) in self.indices.iter().enumerate() {
                    if let Ok(i) = usize::try_from(i) {
                        if i < depth {
                            self.out[r * depth + i] = $one;
                        }
                    }
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::encode_one_hot(
                    <$i as Element>::DTYPE,
                    <$t as Element>::DTYPE,
                    ctx.elements(Self::indices),
                    ctx.elements(Self::out),
                ))
            }
        }
    )*};
}

one_hot_codelets! {
    u32, f32, 1.0, EncodeOneHotU32F32 "EncodeOneHot<unsigned,float>";
    u32, f16, f16::ONE, EncodeOneHotU32F16 "EncodeOneHot<unsigned,half>";
    u32, i32, 1, EncodeOneHotU32I32 "EncodeOneHot<unsigned,int>";
    i32, f32, 1.0, EncodeOneHotI32F32 "EncodeOneHot<int,float>";
    i32, f16, f16::ONE, EncodeOneHotI32F16 "EncodeOneHot<int,half>";
    i32, i32, 1, EncodeOneHotI32I32 "EncodeOneHot<int,int>";
}

/// The cycle estimates of this module's vertices, in worker-context cycles.
pub mod cost {
    use poplar_core::dtype::DType;

    use crate::slice::cost as slice;

    /// `NormaliseIndices<I>` over `n` indices: no poplibs vertex; modelled as
    /// `RemapIndices<unsigned>` (a copy and a compare and select per index), plus one cycle
    /// per index for the add of a negative index's axis length.
    pub const fn normalise(n: u64) -> u64 {
        slice::remap(n) + n
    }

    /// `GatherElements<T>` of `n` indices: `MultiSlice` of `n` one-element rows
    /// (`getMultiSliceCycleEstimate`, no poplibs vertex of its own).
    pub const fn gather(dtype: DType, n: u64) -> u64 {
        slice::multi_slice(dtype, 1, n, false)
    }

    /// `ScatterElements<T>` of `n` indices: `MultiUpdate` of `n` one-element rows.
    pub const fn scatter(dtype: DType, n: u64) -> u64 {
        slice::multi_slice(dtype, 1, n, true)
    }

    /// `ScatterElementsAdd<T>` of `n` indices: `MultiUpdateAdd` of `n` one-element rows
    /// (`getMultiUpdateOpCycleEstimate`).
    pub const fn scatter_add(dtype: DType, n: u64) -> u64 {
        slice::multi_update_add(dtype, 1, n)
    }

    /// The cycles of one `mul`/`min`/`max` combine (ours): one instruction for `float`,
    /// `int` and `unsigned` (`f32mul`/`f32min`/`f32max`, `mul`/`min`/`max`), three for `half`
    /// (widen to f32, the op, round back).
    pub const fn op_cycles(dtype: DType) -> u64 {
        if matches!(dtype, DType::F16) {
            3
        } else {
            1
        }
    }

    /// `ScatterElements{Mul,Min,Max}<T>` (`region` 1) and `ScatterNd{Mul,Min,Max}<T>` of `n`
    /// indices into rows of `region` (ours; poplibs has no such vertex): `MultiUpdate` of `n`
    /// rows of `region` plus [`op_cycles`] for each element updated.
    pub const fn scatter_op(dtype: DType, region: u64, n: u64) -> u64 {
        slice::multi_slice(dtype, region, n, true) + n * region * op_cycles(dtype)
    }

    /// `NormaliseIndicesNd<I>` over `elems` indices making `rows` flat row indices (ours):
    /// [`normalise`] of the indices, a multiply-add per index into the flat row and a divide
    /// and multiply-add per row for its batch.
    pub const fn normalise_nd(elems: u64, rows: u64) -> u64 {
        normalise(elems) + elems + 2 * rows
    }

    /// How a `ScatterNd*` vertex combines an update row.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Kind {
        /// Writes it (`MultiUpdate`).
        Set,
        /// Adds it (`MultiUpdateAdd`).
        Add,
        /// `mul`/`min`/`max` ([`scatter_op`]).
        Op,
    }

    /// `ScatterNd*<T>` of `n` update rows of `region` elements: poplibs has no ScatterND vertex,
    /// so as its `scatter` is built, the multi-update of the rows — `MultiUpdate` (`Set`),
    /// `MultiUpdateAdd` (`Add`, `getMultiUpdateOpCycleEstimate`) or [`scatter_op`] — every
    /// vertex charged for all `n` rows, as poplibs' estimators charge every offset whether or
    /// not it falls in the vertex's part of the table.
    pub const fn scatter_nd(kind: Kind, dtype: DType, region: u64, n: u64) -> u64 {
        match kind {
            Kind::Set => slice::multi_slice(dtype, region, n, true),
            Kind::Add => slice::multi_update_add(dtype, region, n),
            Kind::Op => scatter_op(dtype, region, n),
        }
    }

    /// poplibs' `basicOpSupervisorOverhead()` (`lib/popops/PerformanceEstimation.cpp`, pointers
    /// not scaled): 11 cycles.
    pub const SUPERVISOR_OVERHEAD: u64 = 11;

    /// `EncodeOneHot<I,T>` of `n` indices into `out` elements: poplibs' estimator
    /// (`(62 + 12) · n` plus the supervisor overhead for the assembly `unsigned`→`half` vertex,
    /// `100 · n` for the C++ ones) and `Fill<T>` over `out` for the zeros (poplibs zeroes the
    /// output with a separate program before the vertex runs).
    pub const fn encode_one_hot(index: DType, out_type: DType, n: u64, out: u64) -> u64 {
        let encode = if matches!(index, DType::U32) && matches!(out_type, DType::F16) {
            SUPERVISOR_OVERHEAD + (62 + 12) * n
        } else {
            100 * n
        };
        encode + crate::cycles::fill(out_type, out)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn estimates_follow_poplibs() {
            assert_eq!(
                encode_one_hot(DType::U32, DType::F16, 3, 30),
                11 + 74 * 3 + 23 + 15
            );
            assert_eq!(encode_one_hot(DType::I32, DType::F32, 2, 10), 200 + 23 + 5);
            assert_eq!(gather(DType::F32, 4), 30 + 4 * (19 + 2));
            assert_eq!(normalise(4), 23 + 2 + 8 + 4);
            assert_eq!(scatter_op(DType::F32, 1, 4), 29 + 4 * (19 + 2) + 4);
            assert_eq!(
                scatter_op(DType::F16, 3, 2),
                29 + 2 * (19 + 2 * 2) + 2 * 3 * 3
            );
            assert_eq!(normalise_nd(4, 2), 23 + 2 + 8 + 4 + 4 + 4);
            assert_eq!(
                scatter_nd(Kind::Add, DType::F32, 5, 3),
                slice::multi_update_add(DType::F32, 5, 3)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_and_scatter_rows() {
        let input = [10.0f32, 11.0, 12.0, 20.0, 21.0, 22.0];
        let idx = [2u32, 0, 1, 1];
        let mut out = [0.0f32; 4];
        let mut g = vertex!(GatherElementsF32 {
            indices: &idx,
            input: &input,
            out: &mut out,
            row_len: 3,
        });
        g.compute(Worker { id: 0, count: 1 }).unwrap();
        assert_eq!(out, [12.0, 10.0, 21.0, 21.0]);

        let mut a = input;
        let upd = [1.0f32, 2.0, 3.0, 4.0];
        let mut s = vertex!(ScatterElementsAddF32 {
            indices: &idx,
            updates: &upd,
            a: &mut a,
            row_len: 3,
        });
        s.compute(Worker { id: 0, count: 1 }).unwrap();
        assert_eq!(a, [12.0, 11.0, 13.0, 20.0, 28.0, 22.0]);

        let neg = [-1i32, 3];
        let mut o = [0u32; 2];
        let mut n = vertex!(NormaliseIndicesI32 {
            input: &neg,
            out: &mut o,
            dim: 3,
            first: 5,
        });
        let e = n
            .compute(Worker { id: 0, count: 1 })
            .unwrap_err()
            .to_string();
        assert!(e.contains("index 3 (element 6"), "{e}");
    }

    #[test]
    fn nd_rows_and_reductions() {
        // Tuples of [-1, 0] and [1, 2] into axes of 2 and 3, rows 5 and 7 of the second of
        // two batches of 6 (batch_rows 1), then a bad index naming its axis.
        let idx = [-1i32, 0, 1, 2];
        let mut flat = [0u32; 2];
        let mut n = vertex!(NormaliseIndicesNdI32 {
            input: &idx,
            out: &mut flat,
            dims: &[2, 3],
            first: 1,
            batch_rows: 2,
            batch_stride: 6,
            first_axis: 1,
        });
        n.compute(Worker { id: 0, count: 1 }).unwrap();
        assert_eq!(flat, [3, 11]);
        let bad = [0i32, -4];
        let mut o = [0u32; 1];
        let mut n = vertex!(NormaliseIndicesNdI32 {
            input: &bad,
            out: &mut o,
            dims: &[2, 3],
            first: 4,
            batch_rows: 1,
            batch_stride: 6,
            first_axis: 1,
        });
        let e = n
            .compute(Worker { id: 0, count: 1 })
            .unwrap_err()
            .to_string();
        assert!(e.contains("index -4 (element 9 of the indices)"), "{e}");
        assert!(e.contains("axis of 3 (axis 2 of the data)"), "{e}");

        // Rows 2 and 3 of a table of rows of 2: row 1 is another piece's, row 3 hit twice.
        let mut a = [-0.0f32, 5.0, 1.0, f32::NAN];
        let rows = [3u32, 1, 3, 2];
        let upd = [0.0f32, 2.0, 9.0, 9.0, -1.0, 1.0, 0.0, -0.0];
        let mut s = vertex!(ScatterNdMinF32 {
            indices: &rows,
            updates: &upd,
            a: &mut a,
            row_len: 2,
            first: 2,
        });
        s.compute(Worker { id: 0, count: 1 }).unwrap();
        assert_eq!(
            a.map(f32::to_bits),
            [-0.0f32, -0.0, -1.0, f32::NAN].map(f32::to_bits)
        );
        assert_eq!(maximum(-0.0, 0.0).to_bits(), 0);
        assert_eq!(maximum(0.0, -0.0).to_bits(), 0);
        assert!(minimum(1.0, f32::NAN).is_nan());
    }
}
