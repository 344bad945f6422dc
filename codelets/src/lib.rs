//! The standard codelet library of poplar-rs, in the style of Poplar's popops.
//!
//! Codelets are registered under Poplar-style templated names (`"Add<float>"`); the element
//! type names are those of [`poplar_core::dtype::DType::poplar_name`]. A binary that builds graphs with
//! these codelets must call [`link()`] once so that the linker keeps this crate (and with it
//! the registrations that `inventory` collects).
//!
//! This crate holds the vertices only and depends on `poplar-core` alone; the graph-building
//! helpers over them (over the tile mapping of the output, each tile's elements split between
//! its worker contexts) are the `popops` crate.
//!
//! The input field of unary, copy and reduce codelets is called `input`: `in` is a Rust
//! keyword, and `poplar_core::codelet!` registers field names as written.
//!
//! # Registered codelets
//!
//! Element-wise codelets check that their operand lengths agree and fail with a
//! `VertexError` naming the codelet and the field otherwise. Integer arithmetic wraps. Cycle
//! estimates are worker-context cycles in the shape of poplibs' estimators, with the constants
//! and their sources in [`cycles`].
//!
//! | name | fields | computes |
//! |---|---|---|
//! | `Fill<float>` | `out: Output<Vector>`, `value: State` | `out[i] = value` |
//! | `Fill<int>` | same | same |
//! | `Fill<unsigned>` | same | same |
//! | `Fill<bool>` | same | same |
//! | `Fill<unsigned char>` | same | same |
//! | `Fill<unsigned short>` | same | same |
//! | `FillMulti<float>` | same, multi-worker | same |
//! | `Copy<float>` | `input: Input<Vector>`, `out: Output<Vector>` | `out[i] = input[i]` |
//! | `Copy<int>` | same | same |
//! | `Copy<unsigned>` | same | same |
//! | `Copy<bool>` | same | same |
//! | `Copy<unsigned char>` | same | same |
//! | `Copy<unsigned short>` | same | same |
//! | `Neg<float>` | `input`, `out` | `-x` |
//! | `Neg<int>` | same | same |
//! | `Abs<float>` | same | `\|x\|` |
//! | `Abs<int>` | same | same |
//! | `Square<float>` | same | `x * x` |
//! | `Square<int>` | same | same |
//! | `Square<unsigned>` | same | same |
//! | `Sqrt<float>` | same | `x.sqrt()` |
//! | `Exp<float>` | same | `x.exp()` |
//! | `Add<float>` | `in1`, `in2`: `Input<Vector>`, `out: Output<Vector>` | `in1 + in2` |
//! | `Add<int>` | same | same |
//! | `Add<unsigned>` | same | same |
//! | `Sub<float>` | same | `in1 - in2` |
//! | `Sub<int>` | same | same |
//! | `Sub<unsigned>` | same | same |
//! | `Mul<float>` | same | `in1 * in2` |
//! | `Mul<int>` | same | same |
//! | `Mul<unsigned>` | same | same |
//! | `Div<float>` | same | `in1 / in2` |
//! | `Max<float>` | same | `max(in1, in2)` |
//! | `Max<int>` | same | same |
//! | `Max<unsigned>` | same | same |
//! | `Min<float>` | same | `min(in1, in2)` |
//! | `Min<int>` | same | same |
//! | `Min<unsigned>` | same | same |
//! | `AddMulti<float>` | as `Add<float>`, multi-worker | `in1 + in2` |
//! | `AddInPlace<float>` | `a: InOut<Vector>`, `b: Input<Vector>` | `a = a + b` |
//! | `AddInPlace<int>` | same | same |
//! | `AddInPlace<unsigned>` | same | same |
//! | `SubInPlace<float>` | same | `a = a - b` |
//! | `SubInPlace<int>` | same | same |
//! | `SubInPlace<unsigned>` | same | same |
//! | `MulInPlace<float>` | same | `a = a * b` |
//! | `MulInPlace<int>` | same | same |
//! | `MulInPlace<unsigned>` | same | same |
//! | `DivInPlace<float>` | same | `a = a / b` |
//! | `MaxInPlace<float>` | same | `a = max(a, b)` |
//! | `MaxInPlace<int>` | same | same |
//! | `MaxInPlace<unsigned>` | same | same |
//! | `MinInPlace<float>` | same | `a = min(a, b)` |
//! | `MinInPlace<int>` | same | same |
//! | `MinInPlace<unsigned>` | same | same |
//! | `ScaledAdd<float>` | `a: InOut<Vector>`, `b: Input<Vector>`, `scale: State<f32>` | `a += scale * b` |
//! | `ScaledAddMulti<float>` | same, multi-worker | same |
//! | `ReduceSum<float>` | `input: Input<Vector>`, `out: Output` (scalar) | `sum(input)` |
//! | `ReduceSum<int>` | same | same |
//! | `ReduceSum<unsigned>` | same | same |
//! | `ReduceMax<float>` | same | `max(input)` |
//! | `ReduceMax<int>` | same | same |
//! | `ReduceMax<unsigned>` | same | same |
//! | `ReduceMin<float>` | same | `min(input)` |
//! | `ReduceMin<int>` | same | same |
//! | `ReduceMin<unsigned>` | same | same |
//! | `ReduceSumPartials<float>` | `partials: Input<VectorList>`, `out: Output<Vector>` | `out[i] = sum_k partials[k][i]` |
//! | `ReduceSumPartials<int>` | same | same |
//! | `ReduceSumPartials<unsigned>` | same | same |
//! | `ReduceMaxPartials<float>` | same | `out[i] = max_k partials[k][i]` |
//! | `ReduceMaxPartials<int>` | same | same |
//! | `ReduceMaxPartials<unsigned>` | same | same |
//! | `ReduceAdd<float,float>` | `partials: Input<VectorList>`, `out: InOut<Vector>`, `out_lens`, `num_partials: State<Vector<u32>>`, `scale: State<f32>`, `update: State<bool>` | regions of `out` reduced from their partials, see [`reduction`](mod@reduction) |
//! | `ReduceAdd<half,float>` | same | same |
//! | `ReduceAdd<float,half>` | same | same |
//! | `ReduceAdd<int,int>` | same | same |
//! | `ReduceAdd<unsigned,unsigned>` | same | same |
//! | `ReduceSquareAdd<float,float>` | same | same |
//! | `ReduceSquareAdd<half,float>` | same | same |
//! | `ReduceSquareAdd<float,half>` | same | same |
//! | `ReduceSquareAdd<int,int>` | same | same |
//! | `ReduceSquareAdd<unsigned,unsigned>` | same | same |
//! | `ReduceMul<float,float>` | same | same |
//! | `ReduceMul<half,float>` | same | same |
//! | `ReduceMul<float,half>` | same | same |
//! | `ReduceMul<int,int>` | same | same |
//! | `ReduceMul<unsigned,unsigned>` | same | same |
//! | `ReduceMax<float,float>` | same | same |
//! | `ReduceMax<half,float>` | same | same |
//! | `ReduceMax<float,half>` | same | same |
//! | `ReduceMax<int,int>` | same | same |
//! | `ReduceMax<unsigned,unsigned>` | same | same |
//! | `ReduceMin<float,float>` | same | same |
//! | `ReduceMin<half,float>` | same | same |
//! | `ReduceMin<float,half>` | same | same |
//! | `ReduceMin<int,int>` | same | same |
//! | `ReduceMin<unsigned,unsigned>` | same | same |
//! | `ReduceLogicalAnd<bool,bool>` | same | same |
//! | `ReduceLogicalOr<bool,bool>` | same | same |
//! | `CumSum<float>` | `input: Input<Vector>`, `out: Output<Vector>`, `len: State<u32>`, `exclusive: State<bool>` | prefix sums of lines of `len`, see [`scan`](mod@scan) |
//! | `CumSum<int>` | same | same |
//! | `CumSum<unsigned>` | same | same |
//! | `ArgMax<float>` | `input: Input<Vector>`, `out: Output<Vector<u32>>` | per line, the index of its first largest element (the first NaN) |
//! | `ArgMax<half>` | same | same |
//! | `ArgMax<int>` | same | same |
//! | `ArgMax<unsigned>` | same | same |
//! | `ArgMin<float>` | same | the index of its first smallest element (the first NaN) |
//! | `ArgMin<half>` | same | same |
//! | `ArgMin<int>` | same | same |
//! | `ArgMin<unsigned>` | same | same |
//! | `CumSumCarries<float>` | `last`, `tail`: `Input<Vector>`, `out: Output<Vector>`, `exclusive: State<bool>` | a long line's segment carries, see [`scan`](mod@scan) |
//! | `CumSumCarries<int>` | same | same |
//! | `CumSumCarries<unsigned>` | same | same |
//! | `AddCarry<float>` | `out: InOut<Vector>`, `carry: Input<Vector>` (one) | `out[j] += carry` |
//! | `AddCarry<int>` | same | same (wrapping) |
//! | `AddCarry<unsigned>` | same | same (wrapping) |
//! | `ArgMaxSegment<float>` | `input: Input<Vector>`, `out: Output<Vector<u32>>` (two), `base: State<u32>` | a segment's first largest element (the first NaN): its bits and `base +` its index |
//! | `ArgMaxSegment<half>` | same | same |
//! | `ArgMaxSegment<int>` | same | same |
//! | `ArgMaxSegment<unsigned>` | same | same |
//! | `ArgMinSegment<float>` | same | a segment's first smallest element (the first NaN): its bits and `base +` its index |
//! | `ArgMinSegment<half>` | same | same |
//! | `ArgMinSegment<int>` | same | same |
//! | `ArgMinSegment<unsigned>` | same | same |
//! | `ArgMaxCombine<float>` | `candidates: Input<Vector<u32>>` (pairs), `out: Output<Vector<u32>>` (one) | the index of the first largest candidate (the first NaN) |
//! | `ArgMaxCombine<half>` | same | same |
//! | `ArgMaxCombine<int>` | same | same |
//! | `ArgMaxCombine<unsigned>` | same | same |
//! | `ArgMinCombine<float>` | same | the index of the first smallest candidate (the first NaN) |
//! | `ArgMinCombine<half>` | same | same |
//! | `ArgMinCombine<int>` | same | same |
//! | `ArgMinCombine<unsigned>` | same | same |
//! | `Dot<float>` | `a`, `b`: `Input<Vector>`, `out: Output` (scalar) | `sum_i a[i] * b[i]` |
//! | `Dot<int>` | same | same |
//! | `MatVec<float>` | `matrix`, `vec`: `Input<Vector>`, `out: Output<Vector>` | `out[r] = sum_c matrix[r*cols+c] * vec[c]` |
//! | `Add<half>` | `in1`, `in2`: `Input<Vector<f16>>`, `out: Output<Vector<f16>>` | `round(in1 + in2)`, see [`half`](mod@half) |
//! | `Sub<half>` | same | `round(in1 - in2)` |
//! | `Mul<half>` | same | `round(in1 * in2)` |
//! | `Max<half>` | same | `max(in1, in2)` |
//! | `Min<half>` | same | `min(in1, in2)` |
//! | `AddInPlace<half>` | `a: InOut<Vector<f16>>`, `b: Input<Vector<f16>>` | `a = round(a + b)` |
//! | `SubInPlace<half>` | same | `a = round(a - b)` |
//! | `MulInPlace<half>` | same | `a = round(a * b)` |
//! | `MaxInPlace<half>` | same | `a = max(a, b)` |
//! | `MinInPlace<half>` | same | `a = min(a, b)` |
//! | `ScaledAdd<half>` | `a: InOut<Vector<f16>>`, `b: Input<Vector<f16>>`, `scale: State<f32>` | `a = round(a + scale * b)` |
//! | `ReduceSum<half>` | `input: Input<Vector<f16>>`, `out: Output<f32>` | `sum(input)` in f32 |
//! | `Dot<half>` | `a`, `b`: `Input<Vector<f16>>`, `out: Output<f32>` | `sum_i a[i] * b[i]` in f32 |
//! | `Cast<float,half>` | `input: Input<Vector<f32>>`, `out: Output<Vector<f16>>` | `round(input)` |
//! | `Cast<half,float>` | `input: Input<Vector<f16>>`, `out: Output<Vector<f32>>` | `input` |
//! | `DynamicSlice<float>` | `offset: Input<u32>`, `input: Input<Vector>`, `out: Output<Vector>`, `num_base`, `num_sub`, `remap: State` | `out[j] = input[(offset + j) mod num_base]`, see [`slice`](mod@slice) |
//! | `DynamicUpdateSlice<float>` | `offset`, `a: InOut<Vector>`, `slices: Input<Vector>`, states as above | `a[(offset + j) mod num_base] = slices[j]` |
//! | `MultiSlice<float>` | `offsets: Input<Vector<u32>>`, `input`, `out`, `base_offset`, `num_base: State`, multi-worker | `out[o] = input[offsets[o] - base_offset]`, zeros outside |
//! | `MultiSliceSelect<float>` | `offsets`, `partials: Input<Vector>`, `out`, `rows_per_split`, `num_rows: State`, multi-worker | `out[o]` from the partial of `offsets[o]`'s split |
//! | `MultiUpdate<float>` | `offsets`, `slices: Input<Vector>`, `a: InOut<Vector>`, `base_offset`, `num_base`, multi-worker | `a[offsets[o] - base_offset] = slices[o]`, in order |
//! | `DynamicSlice<half>` | same | same |
//! | `DynamicUpdateSlice<half>` | same | same |
//! | `MultiSlice<half>` | same | same |
//! | `MultiSliceSelect<half>` | same | same |
//! | `MultiUpdate<half>` | same | same |
//! | `DynamicSlice<int>` | same | same |
//! | `DynamicUpdateSlice<int>` | same | same |
//! | `MultiSlice<int>` | same | same |
//! | `MultiSliceSelect<int>` | same | same |
//! | `MultiUpdate<int>` | same | same |
//! | `DynamicSlice<unsigned>` | same | same |
//! | `DynamicUpdateSlice<unsigned>` | same | same |
//! | `MultiSlice<unsigned>` | same | same |
//! | `MultiSliceSelect<unsigned>` | same | same |
//! | `MultiUpdate<unsigned>` | same | same |
//! | `RemapIndices<unsigned>` | `input: Input<Vector<u32>>`, `out: Output<Vector<u32>>`, `num_rows: State<u32>` | `input[i]` if below `num_rows`, else 0 |
//! | `MultiUpdateAdd<float>` | as `MultiUpdate`, `scale: Input<f32>` (`int`: `i32`) | `a[offsets[o] - base_offset] += scale * slices[o]`, in order |
//! | `MultiUpdateAdd<half>` | same | same |
//! | `MultiUpdateAdd<int>` | same | same |
//! | `Map<float>` | `prog: State<Vector<u32>>`, `in_f32` … `in_bool`: `Input<VectorList<…>>`, `out: Output<Vector<f32>>` | `out[i] = prog(inputs[i])`, see [`map`](mod@map) |
//! | `MapInPlace<float>` | same, `out: InOut<Vector<f32>>` | `out[i] = prog(out[i], inputs[i])` |
//! | `Map<half>` | `prog: State<Vector<u32>>`, `in_f32` … `in_bool`: `Input<VectorList<…>>`, `out: Output<Vector<f16>>` | `out[i] = prog(inputs[i])`, see [`map`](mod@map) |
//! | `MapInPlace<half>` | same, `out: InOut<Vector<f16>>` | `out[i] = prog(out[i], inputs[i])` |
//! | `Map<int>` | `prog: State<Vector<u32>>`, `in_f32` … `in_bool`: `Input<VectorList<…>>`, `out: Output<Vector<i32>>` | `out[i] = prog(inputs[i])`, see [`map`](mod@map) |
//! | `MapInPlace<int>` | same, `out: InOut<Vector<i32>>` | `out[i] = prog(out[i], inputs[i])` |
//! | `Map<unsigned>` | `prog: State<Vector<u32>>`, `in_f32` … `in_bool`: `Input<VectorList<…>>`, `out: Output<Vector<u32>>` | `out[i] = prog(inputs[i])`, see [`map`](mod@map) |
//! | `MapInPlace<unsigned>` | same, `out: InOut<Vector<u32>>` | `out[i] = prog(out[i], inputs[i])` |
//! | `Map<unsigned char>` | `prog: State<Vector<u32>>`, `in_f32` … `in_bool`: `Input<VectorList<…>>`, `out: Output<Vector<u8>>` | `out[i] = prog(inputs[i])`, see [`map`](mod@map) |
//! | `MapInPlace<unsigned char>` | same, `out: InOut<Vector<u8>>` | `out[i] = prog(out[i], inputs[i])` |
//! | `Map<unsigned short>` | `prog: State<Vector<u32>>`, `in_f32` … `in_bool`: `Input<VectorList<…>>`, `out: Output<Vector<u16>>` | `out[i] = prog(inputs[i])`, see [`map`](mod@map) |
//! | `MapInPlace<unsigned short>` | same, `out: InOut<Vector<u16>>` | `out[i] = prog(out[i], inputs[i])` |
//! | `Map<bool>` | `prog: State<Vector<u32>>`, `in_f32` … `in_bool`: `Input<VectorList<…>>`, `out: Output<Vector<bool>>` | `out[i] = prog(inputs[i])`, see [`map`](mod@map) |
//! | `MapInPlace<bool>` | same, `out: InOut<Vector<bool>>` | `out[i] = prog(out[i], inputs[i])` |
//! | `NormaliseIndices<int>` | `input: Input<Vector<i32>>`, `out: Output<Vector<u32>>`, `dim`, `first: State<u32>` | `input[i]`, plus `dim` if negative; outside `[-dim, dim)` fails the run, see [`gather`](mod@gather) |
//! | `NormaliseIndices<unsigned>` | same, `input: Input<Vector<u32>>` | `input[i]`; `≥ dim` fails the run |
//! | `GatherElements<float>` | `indices: Input<Vector<u32>>`, `input: Input<Vector>`, `out: Output<Vector>`, `row_len: State<u32>` | `out[r, j] = input[r, indices[r, j]]` |
//! | `GatherElements<half>` | `indices: Input<Vector<u32>>`, `input: Input<Vector>`, `out: Output<Vector>`, `row_len: State<u32>` | `out[r, j] = input[r, indices[r, j]]` |
//! | `GatherElements<int>` | `indices: Input<Vector<u32>>`, `input: Input<Vector>`, `out: Output<Vector>`, `row_len: State<u32>` | `out[r, j] = input[r, indices[r, j]]` |
//! | `GatherElements<unsigned>` | `indices: Input<Vector<u32>>`, `input: Input<Vector>`, `out: Output<Vector>`, `row_len: State<u32>` | `out[r, j] = input[r, indices[r, j]]` |
//! | `ScatterElements<float>` | `indices`, `updates: Input<Vector>`, `a: InOut<Vector>`, `row_len` | `a[r, indices[r, j]] = updates[r, j]`, in order |
//! | `ScatterElements<half>` | `indices`, `updates: Input<Vector>`, `a: InOut<Vector>`, `row_len` | `a[r, indices[r, j]] = updates[r, j]`, in order |
//! | `ScatterElements<int>` | `indices`, `updates: Input<Vector>`, `a: InOut<Vector>`, `row_len` | `a[r, indices[r, j]] = updates[r, j]`, in order |
//! | `ScatterElements<unsigned>` | `indices`, `updates: Input<Vector>`, `a: InOut<Vector>`, `row_len` | `a[r, indices[r, j]] = updates[r, j]`, in order |
//! | `ScatterElementsAdd<float>` | same | `a[r, indices[r, j]] += updates[r, j]`, in order |
//! | `ScatterElementsAdd<half>` | same | `a[r, indices[r, j]] += updates[r, j]`, in order |
//! | `ScatterElementsAdd<int>` | same | `a[r, indices[r, j]] += updates[r, j]`, in order |
//! | `ScatterElementsMul<float>` | same | `a[r, indices[r, j]] *= updates[r, j]`, in order (`half` in f32, rounded once; integers wrap) |
//! | `ScatterElementsMul<half>` | same | `a[r, indices[r, j]] *= updates[r, j]`, in order (`half` in f32, rounded once; integers wrap) |
//! | `ScatterElementsMul<int>` | same | `a[r, indices[r, j]] *= updates[r, j]`, in order (`half` in f32, rounded once; integers wrap) |
//! | `ScatterElementsMul<unsigned>` | same | `a[r, indices[r, j]] *= updates[r, j]`, in order (`half` in f32, rounded once; integers wrap) |
//! | `ScatterElementsMin<float>` | same | `a[…] = minimum(a[…], updates[r, j])`, in order: NaN if either is NaN, −0 below +0 |
//! | `ScatterElementsMin<half>` | same | `a[…] = minimum(a[…], updates[r, j])`, in order: NaN if either is NaN, −0 below +0 |
//! | `ScatterElementsMin<int>` | same | `a[…] = minimum(a[…], updates[r, j])`, in order: NaN if either is NaN, −0 below +0 |
//! | `ScatterElementsMin<unsigned>` | same | `a[…] = minimum(a[…], updates[r, j])`, in order: NaN if either is NaN, −0 below +0 |
//! | `ScatterElementsMax<float>` | same | `a[…] = maximum(a[…], updates[r, j])`, in order: NaN if either is NaN, +0 above −0 |
//! | `ScatterElementsMax<half>` | same | `a[…] = maximum(a[…], updates[r, j])`, in order: NaN if either is NaN, +0 above −0 |
//! | `ScatterElementsMax<int>` | same | `a[…] = maximum(a[…], updates[r, j])`, in order: NaN if either is NaN, +0 above −0 |
//! | `ScatterElementsMax<unsigned>` | same | `a[…] = maximum(a[…], updates[r, j])`, in order: NaN if either is NaN, +0 above −0 |
//! | `NormaliseIndicesNd<int>` | `input: Input<Vector>`, `out: Output<Vector<u32>>`, `dims: State<Vector<u32>>`, `first`, `batch_rows`, `batch_stride`, `first_axis: State<u32>` | row `r` of `m` indices (checked and made non-negative against `dims`) as one flat row index of the table; an index out of range fails the run |
//! | `NormaliseIndicesNd<unsigned>` | `input: Input<Vector>`, `out: Output<Vector<u32>>`, `dims: State<Vector<u32>>`, `first`, `batch_rows`, `batch_stride`, `first_axis: State<u32>` | row `r` of `m` indices (checked and made non-negative against `dims`) as one flat row index of the table; an index out of range fails the run |
//! | `ScatterNd<float>` | `indices: Input<Vector<u32>>`, `updates: Input<Vector>`, `a: InOut<Vector>`, `row_len`, `first: State<u32>` | the update rows whose index falls in `first..` of the table written over them, in order (the last wins) |
//! | `ScatterNd<half>` | `indices: Input<Vector<u32>>`, `updates: Input<Vector>`, `a: InOut<Vector>`, `row_len`, `first: State<u32>` | the update rows whose index falls in `first..` of the table written over them, in order (the last wins) |
//! | `ScatterNd<int>` | `indices: Input<Vector<u32>>`, `updates: Input<Vector>`, `a: InOut<Vector>`, `row_len`, `first: State<u32>` | the update rows whose index falls in `first..` of the table written over them, in order (the last wins) |
//! | `ScatterNd<unsigned>` | `indices: Input<Vector<u32>>`, `updates: Input<Vector>`, `a: InOut<Vector>`, `row_len`, `first: State<u32>` | the update rows whose index falls in `first..` of the table written over them, in order (the last wins) |
//! | `ScatterNdAdd<float>` | same | same, added (`half` in f32, rounded once per add; `int` wraps) |
//! | `ScatterNdAdd<half>` | same | same, added (`half` in f32, rounded once per add; `int` wraps) |
//! | `ScatterNdAdd<int>` | same | same, added (`half` in f32, rounded once per add; `int` wraps) |
//! | `ScatterNdMul<float>` | same | same, multiplied |
//! | `ScatterNdMul<half>` | same | same, multiplied |
//! | `ScatterNdMul<int>` | same | same, multiplied |
//! | `ScatterNdMul<unsigned>` | same | same, multiplied |
//! | `ScatterNdMin<float>` | same | same, `minimum` |
//! | `ScatterNdMin<half>` | same | same, `minimum` |
//! | `ScatterNdMin<int>` | same | same, `minimum` |
//! | `ScatterNdMin<unsigned>` | same | same, `minimum` |
//! | `ScatterNdMax<float>` | same | same, `maximum` |
//! | `ScatterNdMax<half>` | same | same, `maximum` |
//! | `ScatterNdMax<int>` | same | same, `maximum` |
//! | `ScatterNdMax<unsigned>` | same | same, `maximum` |
//! | `EncodeOneHot<unsigned,float>` | `indices: Input<Vector>`, `out: Output<Vector>`, `depth: State<u32>` | row `i`: 1 at `indices[i]` if in `[0, depth)`, else 0 |
//! | `EncodeOneHot<unsigned,half>` | `indices: Input<Vector>`, `out: Output<Vector>`, `depth: State<u32>` | row `i`: 1 at `indices[i]` if in `[0, depth)`, else 0 |
//! | `EncodeOneHot<unsigned,int>` | `indices: Input<Vector>`, `out: Output<Vector>`, `depth: State<u32>` | row `i`: 1 at `indices[i]` if in `[0, depth)`, else 0 |
//! | `EncodeOneHot<int,float>` | `indices: Input<Vector>`, `out: Output<Vector>`, `depth: State<u32>` | row `i`: 1 at `indices[i]` if in `[0, depth)`, else 0 |
//! | `EncodeOneHot<int,half>` | `indices: Input<Vector>`, `out: Output<Vector>`, `depth: State<u32>` | row `i`: 1 at `indices[i]` if in `[0, depth)`, else 0 |
//! | `EncodeOneHot<int,int>` | `indices: Input<Vector>`, `out: Output<Vector>`, `depth: State<u32>` | row `i`: 1 at `indices[i]` if in `[0, depth)`, else 0 |
//! | `ArgSort<float>` | `input: Input<Vector>`, `out: Output<Vector<u32>>`, `row_len`, `k: State<u32>`, `descending: State<bool>` | each row's first `k` positions in stable sorted order, NaN last, see [`sort`](mod@sort) |
//! | `ArgSort<int>` | `input: Input<Vector>`, `out: Output<Vector<u32>>`, `row_len`, `k: State<u32>`, `descending: State<bool>` | each row's first `k` positions in stable sorted order, NaN last, see [`sort`](mod@sort) |
//! | `ArgSort<unsigned>` | `input: Input<Vector>`, `out: Output<Vector<u32>>`, `row_len`, `k: State<u32>`, `descending: State<bool>` | each row's first `k` positions in stable sorted order, NaN last, see [`sort`](mod@sort) |
//! | `ArgSort<half>` | `input: Input<Vector>`, `out: Output<Vector<u32>>`, `row_len`, `k: State<u32>`, `descending: State<bool>` | each row's first `k` positions in stable sorted order, NaN last, see [`sort`](mod@sort) |
//! | `MergeSplit<float>` | `input: Input<Vector>`, `positions: Input<Vector<u32>>`, `out: Output<Vector<u32>>`, `split`, `row_len: State<u32>`, `upper`, `descending: State<bool>` | the indices of the lower or upper `out.len()` of two merged sorted runs, see [`sort`](mod@sort) |
//! | `MergeSplit<half>` | `input: Input<Vector>`, `positions: Input<Vector<u32>>`, `out: Output<Vector<u32>>`, `split`, `row_len: State<u32>`, `upper`, `descending: State<bool>` | the indices of the lower or upper `out.len()` of two merged sorted runs, see [`sort`](mod@sort) |
//! | `MergeSplit<int>` | `input: Input<Vector>`, `positions: Input<Vector<u32>>`, `out: Output<Vector<u32>>`, `split`, `row_len: State<u32>`, `upper`, `descending: State<bool>` | the indices of the lower or upper `out.len()` of two merged sorted runs, see [`sort`](mod@sort) |
//! | `MergeSplit<unsigned>` | `input: Input<Vector>`, `positions: Input<Vector<u32>>`, `out: Output<Vector<u32>>`, `split`, `row_len: State<u32>`, `upper`, `descending: State<bool>` | the indices of the lower or upper `out.len()` of two merged sorted runs, see [`sort`](mod@sort) |

#[macro_use]
mod util;

pub mod arith;
pub mod binary;
pub mod copy;
pub mod cycles;
pub mod dot;
pub mod family;
pub mod fill;
pub mod gather;
pub mod half;
pub mod map;

pub mod reduce;
pub mod reduction;
pub mod scaled_add;
pub mod scan;
pub mod slice;
pub mod sort;
pub mod unary;

/// Forces this crate to be linked, so that its codelets are registered. Call it once before
/// compiling a graph that uses them (a plain `use codelets;` is not enough: the linker drops a
/// crate nothing refers to).
#[inline(never)]
pub fn link() {}

/// The documentation table above, as source text, for tests that compare it to the registry.
#[doc(hidden)]
pub const LIB_DOCS: &str = include_str!("lib.rs");

/// The names of the codelets listed in this crate's documentation table.
pub fn documented_names() -> Vec<&'static str> {
    LIB_DOCS
        .lines()
        .filter_map(|l| l.strip_prefix("//! | `"))
        .filter_map(|l| l.split_once('`').map(|(name, _)| name))
        .collect()
}
