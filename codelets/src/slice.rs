//! Dynamic and multi slices: copying rows of a tensor at offsets held in device memory.
//!
//! A *row* is `region` consecutive elements; a vertex's base (`input`, or `a` when it is
//! updated) holds `num_base` rows, its slices (`out`, or `slices` for an update) one row per
//! offset (or `num_sub` rows for a dynamic slice). Field names follow this crate's
//! convention (`input`/`out`, in place `a`), not poplibs' `baseT`/`subT`. `T` is `float`,
//! `half`, `int` or `unsigned` (`MultiUpdateAdd`: `float`, `half`, `int`).
//!
//! | name | fields | computes |
//! |---|---|---|
//! | `DynamicSlice<T>` | `offset: Input<u32>`, `input: Input<Vector<T>>`, `out: Output<Vector<T>>`, `num_base`, `num_sub: State<u32>`, `remap: State<bool>` | `out[j] = input[(offset + j) mod num_base]`; an offset `≥ num_base` is 0 with `remap`, else the slice is zeros |
//! | `DynamicUpdateSlice<T>` | `offset`, `a: InOut<Vector<T>>`, `slices: Input<Vector<T>>`, the same states | `a[(offset + j) mod num_base] = slices[j]`; an offset `≥ num_base` is 0 with `remap`, else nothing is written |
//! | `MultiSlice<T>` (multi-worker) | `offsets: Input<Vector<u32>>`, `input: Input<Vector<T>>`, `out: Output<Vector<T>>`, `base_offset`, `num_base: State<u32>` | `out[o] = input[offsets[o] − base_offset]` when that is a row of `input`, else zeros |
//! | `MultiSliceSelect<T>` (multi-worker) | `offsets`, `partials: Input<Vector<T>>` (`splits × n` rows), `out: Output<Vector<T>>`, `rows_per_split`, `num_rows: State<u32>` | `out[o] = partials[(offsets[o] / rows_per_split) · n + o]` when `offsets[o] < num_rows`, else zeros: the second stage of a multi-slice whose rows are split over tiles |
//! | `MultiUpdate<T>` (multi-worker) | `offsets`, `slices: Input<Vector<T>>`, `a: InOut<Vector<T>>`, `base_offset`, `num_base` | for each offset in order, `a[offsets[o] − base_offset] = slices[o]` when that is a row of `a` (the last of equal offsets wins) |
//! | `RemapIndices<unsigned>` | `input: Input<Vector<u32>>`, `out: Output<Vector<u32>>`, `num_rows: State<u32>` | `out[i] = input[i] < num_rows ? input[i] : 0` |
//! | `MultiUpdateAdd<T>` (multi-worker) | as `MultiUpdate`, and `scale: Input<S>` (`S` = `f32`, `i32` for `int`) | `a[offsets[o] − base_offset] += scale · slices[o]`, offsets in order (`half`: in f32, rounded once per add; `int` wraps) |
//!
//! The multi-worker vertices split their offsets (`MultiSlice`, `MultiSliceSelect`) or their
//! row's columns (the updates, so that equal offsets are applied in order) between the workers.
//!
//! Cycle estimates ([`cost`]): poplibs' `DynamicSlice2D` and `DynamicUpdateSlice2D` (one
//! region) for the dynamic slices; for the multi-slices `getMultiSliceCycleEstimate`
//! (`MultiSlice`, `MultiSliceSelect`, `MultiUpdate`) and `getMultiUpdateOpCycleEstimate`
//! (`MultiUpdateAdd`, scaled `ADD`), one worker's share.

use poplar_core::codelet::*;
use poplar_core::dtype::Element;
use poplar_core::f16;

use crate::arith::Arith;

fn rows_of(
    codelet: &str,
    field: &str,
    len: usize,
    rows: usize,
    region: usize,
) -> Result<(), VertexError> {
    if len == rows * region {
        Ok(())
    } else {
        Err(VertexError::new(format!(
            "{codelet}: field '{field}' has {len} elements, not {rows} rows of {region}"
        )))
    }
}

/// `len / rows` when `rows` divides `len` (rows of `region` elements).
fn region_of(codelet: &str, field: &str, len: usize, rows: u32) -> Result<usize, VertexError> {
    let rows = rows as usize;
    if rows == 0 || !len.is_multiple_of(rows) {
        return Err(VertexError::new(format!(
            "{codelet}: field '{field}' has {len} elements, not a whole number of {rows} rows"
        )));
    }
    Ok(len / rows)
}

/// Row `o` of `out` (rows of `region` elements) for every `o` in `rows`: `row(o)`'s slice, or
/// zeros where it gives none (an index outside the table). What `MultiSlice` and
/// `MultiSliceSelect` share.
fn gather_rows<'s, T: Copy + Default + 's>(
    out: &mut [T],
    region: usize,
    rows: std::ops::Range<usize>,
    row: impl Fn(usize) -> Option<&'s [T]>,
) {
    for o in rows {
        let dst = &mut out[o * region..][..region];
        match row(o) {
            Some(src) => dst.copy_from_slice(src),
            None => dst.fill(T::default()),
        }
    }
}

/// The estimate of a multi-worker gather of one `out` row per element of `offsets`
/// ([`cost::multi_slice`], the offsets split between the workers).
fn gather_cycles(
    dtype: poplar_core::dtype::DType,
    ctx: &CycleCtx<'_>,
    offsets: usize,
    out: usize,
) -> u64 {
    let n = ctx.elements(offsets);
    let region = ctx.elements(out).checked_div(n).unwrap_or(0);
    cost::multi_slice(
        dtype,
        region,
        n.div_ceil(u64::from(ctx.workers.max(1))),
        false,
    )
}

macro_rules! slice_codelets {
    ($($t:ty, $tn:literal: $ds:ident $dsn:literal, $du:ident $dun:literal, $ms:ident $msn:literal,
        $sel:ident $seln:literal, $mu:ident $mun:literal;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`DynamicSlice<", $tn, ">`: `num_sub` rows from `offset`, wrapping.")]
            pub struct $ds as $dsn {
                offset: Input<u32>,
                input: Input<Vector<$t>>,
                out: Output<Vector<$t>>,
                num_base: State<u32>,
                num_sub: State<u32>,
                remap: State<bool>,
            }
        }

        impl Vertex for $ds<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let region = region_of(Self::NAME, "input", self.input.len(), self.num_base)?;
                rows_of(Self::NAME, "out", self.out.len(), self.num_sub as usize, region)?;
                let n = self.num_base as usize;
                let mut at = self.offset as usize;
                if at >= n {
                    if !self.remap {
                        self.out.fill(<$t>::default());
                        return Ok(());
                    }
                    at = 0;
                }
                for j in 0..self.num_sub as usize {
                    let row = (at + j) % n;
                    self.out[j * region..][..region]
                        .copy_from_slice(&self.input[row * region..][..region]);
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::dynamic_slice(<$t as Element>::DTYPE, 1, ctx.elements(Self::out), false))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`DynamicUpdateSlice<", $tn, ">`: `num_sub` rows written from `offset`, wrapping.")]
            pub struct $du as $dun {
                offset: Input<u32>,
                a: InOut<Vector<$t>>,
                slices: Input<Vector<$t>>,
                num_base: State<u32>,
                num_sub: State<u32>,
                remap: State<bool>,
            }
        }

        impl Vertex for $du<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let region = region_of(Self::NAME, "a", self.a.len(), self.num_base)?;
                rows_of(Self::NAME, "slices", self.slices.len(), self.num_sub as usize, region)?;
                let n = self.num_base as usize;
                let mut at = self.offset as usize;
                if at >= n {
                    if !self.remap {
                        return Ok(());
                    }
                    at = 0;
                }
                for j in 0..self.num_sub as usize {
                    let row = (at + j) % n;
                    self.a[row * region..][..region]
                        .copy_from_slice(&self.slices[j * region..][..region]);
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::dynamic_slice(<$t as Element>::DTYPE, 1, ctx.elements(Self::slices), true))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`MultiSlice<", $tn, ">`: one row per offset, zeros for offsets outside `input`.")]
            pub struct $ms as $msn, multi_worker {
                offsets: Input<Vector<u32>>,
                input: Input<Vector<$t>>,
                out: Output<Vector<$t>>,
                base_offset: State<u32>,
                num_base: State<u32>,
            }
        }

        impl Vertex for $ms<'_> {
            fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
                let region = region_of(Self::NAME, "input", self.input.len(), self.num_base)?;
                rows_of(Self::NAME, "out", self.out.len(), self.offsets.len(), region)?;
                let (input, base, num) = (&*self.input, self.base_offset, self.num_base);
                gather_rows(self.out, region, worker.split(self.offsets.len()), |o| {
                    let row = self.offsets[o].wrapping_sub(base);
                    (row < num).then(|| &input[row as usize * region..][..region])
                });
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(gather_cycles(<$t as Element>::DTYPE, ctx, Self::offsets, Self::out))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`MultiSliceSelect<", $tn, ">`: each offset's row from the partial of its split.")]
            pub struct $sel as $seln, multi_worker {
                offsets: Input<Vector<u32>>,
                partials: Input<Vector<$t>>,
                out: Output<Vector<$t>>,
                rows_per_split: State<u32>,
                num_rows: State<u32>,
            }
        }

        impl Vertex for $sel<'_> {
            fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
                let n = self.offsets.len();
                if n == 0 {
                    return Ok(());
                }
                let region = region_of(Self::NAME, "out", self.out.len(), n as u32)?;
                let splits = self.num_rows.div_ceil(self.rows_per_split.max(1)) as usize;
                rows_of(Self::NAME, "partials", self.partials.len(), splits * n, region)?;
                let (partials, per, num) = (&*self.partials, self.rows_per_split, self.num_rows);
                gather_rows(self.out, region, worker.split(n), |o| {
                    let idx = self.offsets[o];
                    let s = (idx / per) as usize;
                    (idx < num).then(|| &partials[(s * n + o) * region..][..region])
                });
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(gather_cycles(<$t as Element>::DTYPE, ctx, Self::offsets, Self::out))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`MultiUpdate<", $tn, ">`: each offset's row of `a` set from `slices`, in order.")]
            pub struct $mu as $mun, multi_worker {
                offsets: Input<Vector<u32>>,
                slices: Input<Vector<$t>>,
                a: InOut<Vector<$t>>,
                base_offset: State<u32>,
                num_base: State<u32>,
            }
        }

        impl Vertex for $mu<'_> {
            fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
                let region = region_of(Self::NAME, "a", self.a.len(), self.num_base)?;
                rows_of(Self::NAME, "slices", self.slices.len(), self.offsets.len(), region)?;
                let cols = worker.split(region);
                for (o, &idx) in self.offsets.iter().enumerate() {
                    let row = idx.wrapping_sub(self.base_offset);
                    if row < self.num_base {
                        let b = row as usize * region;
                        self.a[b + cols.start..b + cols.end]
                            .copy_from_slice(&self.slices[o * region + cols.start..o * region + cols.end]);
                    }
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let n = ctx.elements(Self::offsets);
                let region = ctx.elements(Self::slices).checked_div(n).unwrap_or(0);
                let w = u64::from(ctx.workers.max(1));
                Some(cost::multi_slice(<$t as Element>::DTYPE, region.div_ceil(w), n, true))
            }
        }
    )*};
}

slice_codelets! {
    f32, "float": DynamicSliceF32 "DynamicSlice<float>", DynamicUpdateSliceF32 "DynamicUpdateSlice<float>",
        MultiSliceF32 "MultiSlice<float>", MultiSliceSelectF32 "MultiSliceSelect<float>", MultiUpdateF32 "MultiUpdate<float>";
    f16, "half": DynamicSliceF16 "DynamicSlice<half>", DynamicUpdateSliceF16 "DynamicUpdateSlice<half>",
        MultiSliceF16 "MultiSlice<half>", MultiSliceSelectF16 "MultiSliceSelect<half>", MultiUpdateF16 "MultiUpdate<half>";
    i32, "int": DynamicSliceI32 "DynamicSlice<int>", DynamicUpdateSliceI32 "DynamicUpdateSlice<int>",
        MultiSliceI32 "MultiSlice<int>", MultiSliceSelectI32 "MultiSliceSelect<int>", MultiUpdateI32 "MultiUpdate<int>";
    u32, "unsigned": DynamicSliceU32 "DynamicSlice<unsigned>", DynamicUpdateSliceU32 "DynamicUpdateSlice<unsigned>",
        MultiSliceU32 "MultiSlice<unsigned>", MultiSliceSelectU32 "MultiSliceSelect<unsigned>", MultiUpdateU32 "MultiUpdate<unsigned>";
}

poplar_core::codelet! {
    /// `RemapIndices<unsigned>`: `out[i] = input[i]` if it is below `num_rows`, else 0 (the
    /// indices of a multi-slice with `remapOutOfBoundIndices`).
    pub struct RemapIndicesU32 as "RemapIndices<unsigned>" {
        input: Input<Vector<u32>>,
        out: Output<Vector<u32>>,
        num_rows: State<u32>,
    }
}

impl Vertex for RemapIndicesU32<'_> {
    fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
        crate::util::same_len(Self::NAME, "out", self.out.len(), "input", self.input.len())?;
        for (o, &i) in self.out.iter_mut().zip(self.input) {
            *o = if i < self.num_rows { i } else { 0 };
        }
        Ok(())
    }

    /// No poplibs vertex (poplibs remaps inside its slice vertices): `Copy<unsigned>` and a
    /// compare and select per element, [`cost::remap`].
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(cost::remap(ctx.elements(Self::out)))
    }
}

/// How one scaled add of `MultiUpdateAdd<T>` computes.
pub trait ScaledAddElem: Arith {
    /// The scale's type.
    type Scale: Element;
    /// `a + scale · b`, stored as element `index` of the row.
    fn scaled_add(a: Self, b: Self, scale: Self::Scale, index: usize) -> Self;
}

impl ScaledAddElem for f32 {
    type Scale = f32;
    #[inline(always)]
    fn scaled_add(a: f32, b: f32, scale: f32, _index: usize) -> f32 {
        poplar_core::fp::canonical_nan(a + scale * b)
    }
}

impl ScaledAddElem for f16 {
    type Scale = f32;
    #[inline(always)]
    fn scaled_add(a: f16, b: f16, scale: f32, index: usize) -> f16 {
        f16::narrow(a.to_f32() + scale * b.to_f32(), index)
    }
}

impl ScaledAddElem for i32 {
    type Scale = i32;
    #[inline(always)]
    fn scaled_add(a: i32, b: i32, scale: i32, _index: usize) -> i32 {
        a.wrapping_add(scale.wrapping_mul(b))
    }
}

macro_rules! update_add_codelets {
    ($($t:ty, $tn:literal, $s:ty: $name:ident $cname:literal;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`MultiUpdateAdd<", $tn, ">`: each offset's row of `a` += `scale · slices[o]`, in order.")]
            pub struct $name as $cname, multi_worker {
                offsets: Input<Vector<u32>>,
                slices: Input<Vector<$t>>,
                a: InOut<Vector<$t>>,
                scale: Input<$s>,
                base_offset: State<u32>,
                num_base: State<u32>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
                let region = region_of(Self::NAME, "a", self.a.len(), self.num_base)?;
                rows_of(Self::NAME, "slices", self.slices.len(), self.offsets.len(), region)?;
                let cols = worker.split(region);
                let scale = self.scale;
                poplar_core::isa_dispatch! {
                    fn kernel(dst: &mut [$t], src: &[$t], scale: $s, first: usize) {
                        for (k, (a, &b)) in dst.iter_mut().zip(src).enumerate() {
                            *a = <$t>::scaled_add(*a, b, scale, first + k);
                        }
                    }
                }
                for (o, &idx) in self.offsets.iter().enumerate() {
                    let row = idx.wrapping_sub(self.base_offset);
                    if row < self.num_base {
                        let b = row as usize * region;
                        kernel(
                            &mut self.a[b + cols.start..b + cols.end],
                            &self.slices[o * region + cols.start..o * region + cols.end],
                            scale,
                            b + cols.start,
                        );
                    }
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let n = ctx.elements(Self::offsets);
                let region = ctx.elements(Self::slices).checked_div(n).unwrap_or(0);
                let w = u64::from(ctx.workers.max(1));
                Some(cost::multi_update_add(<$t as Element>::DTYPE, region.div_ceil(w), n))
            }
        }
    )*};
}

update_add_codelets! {
    f32, "float", f32: MultiUpdateAddF32 "MultiUpdateAdd<float>";
    f16, "half", f32: MultiUpdateAddF16 "MultiUpdateAdd<half>";
    i32, "int", i32: MultiUpdateAddI32 "MultiUpdateAdd<int>";
}

/// The slice vertices' cycle estimates, in worker-context cycles (see [`crate::cycles`] for
/// the units), after poplibs (`lib/popops/popopsCycleEstimators.cpp`,
/// `lib/popops/PerformanceEstimation.cpp`).
pub mod cost {
    use poplar_core::dtype::DType;

    /// `DynamicSlice2D`'s vector: the 64-bit data path in 32-bit or 16-bit elements; 4 bytes
    /// for 8-bit types.
    const fn dynamic_width(dtype: DType) -> u64 {
        match dtype.size() {
            2 => 4,
            1 => 4,
            _ => 2,
        }
    }

    /// `DynamicSlice2D` / `DynamicUpdateSlice2D` over one region: `27 + (a + b · ⌈region /
    /// width⌉) · num_sub + 13` with `(a, b)` = (29, 1) for 32-bit types, (31, 2) for `half`,
    /// (50, 2) for 8-bit slices and (50, 23) for 8-bit updates.
    pub const fn dynamic_slice(dtype: DType, num_sub: u64, region: u64, update: bool) -> u64 {
        let v = region.div_ceil(dynamic_width(dtype));
        let per_row = match (dtype.size(), update) {
            (1, true) => 50 + 23 * v,
            (1, false) => 50 + 2 * v,
            (2, _) => 31 + 2 * v,
            _ => 29 + v,
        };
        27 + per_row * num_sub + 13
    }

    /// `getMultiSliceCycleEstimate` for one worker that copies `offsets` rows of `region`
    /// elements, every offset in range, indices unsorted: `(30 | 29 for an update) + offsets
    /// · (19 + ⌈region / width⌉ · per_vector)` with (width, per vector) = (2, 2) for 32-bit
    /// and 16-bit types, (4, 3) for 8-bit ones. poplibs multiplies by the worker count for
    /// the whole vertex (assuming one worker takes every offset); here each worker reports
    /// its own share.
    pub const fn multi_slice(dtype: DType, region: u64, offsets: u64, update: bool) -> u64 {
        let (width, per_vector) = if dtype.size() == 1 { (4, 3) } else { (2, 2) };
        let pro = if update { 29 } else { 30 };
        pro + offsets * (19 + region.div_ceil(width) * per_vector)
    }

    /// `getMultiUpdateOpCycleEstimate` (scaled `ADD`, unsorted, every offset in range) for one
    /// worker adding `offsets` rows of `elems` elements: `3 + (29 | 30) + (4 | 6 for 32-bit)`
    /// then per offset `11` (32-bit) or `13` (`half`, scaled) plus `(elems / per_atom − 1) ·
    /// (3 + [half])`, `per_atom` = 1 (32-bit) or 2 (`half`, 4-byte writes); `half` rows of an
    /// odd length take poplibs' sub-word path (`+ 20` per element); the specialised rows of 2
    /// or 4 elements (32-bit: 8 or 16 per offset; `half` of 4: 12) one cycle less up front.
    pub const fn multi_update_add(dtype: DType, elems: u64, offsets: u64) -> u64 {
        let four = dtype.size() == 4;
        let half = !four;
        let special = (four && (elems == 2 || elems == 4)) || (half && elems == 4);
        let mut cycles = 3 + if four { 29 } else { 30 };
        if special {
            cycles -= 1;
        }
        cycles += 2 + 2 + if four { 2 } else { 0 };
        if offsets == 0 {
            return cycles;
        }
        let mut per = if four { 11 } else { 13 };
        if special {
            per = if four {
                if elems == 2 {
                    8
                } else {
                    16
                }
            } else {
                12
            };
        } else if half && elems % 2 == 1 {
            per += elems * 20;
        } else {
            let atoms = if four { elems } else { elems / 2 };
            per += atoms.saturating_sub(1) * (3 + half as u64);
        }
        cycles + per * offsets
    }

    /// `RemapIndices<unsigned>` over `n` indices: `Copy<unsigned>`'s `23 + ⌈n / 2⌉` and 2
    /// cycles per index for the compare and select (no poplibs estimator).
    pub const fn remap(n: u64) -> u64 {
        crate::cycles::copy(DType::U32).cycles(n) + 2 * n
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn estimates_follow_poplibs() {
            assert_eq!(remap(4), 23 + 2 + 8);
            // DynamicSlice2D<float>, one region of 10, 3 rows: 27 + (29 + 5)·3 + 13.
            assert_eq!(dynamic_slice(DType::F32, 3, 10, false), 27 + 34 * 3 + 13);
            assert_eq!(
                dynamic_slice(DType::F16, 2, 10, true),
                27 + (31 + 6) * 2 + 13
            );
            // MultiSlice<float>: 4 offsets of 768 elements: 30 + 4·(19 + 384·2).
            assert_eq!(multi_slice(DType::F32, 768, 4, false), 30 + 4 * (19 + 768));
            assert_eq!(multi_slice(DType::U32, 1, 1, true), 29 + 19 + 2);
            // MultiUpdateAdd<float>, rows of 8: 3 + 29 + 6 + n·(11 + 7·3).
            assert_eq!(multi_update_add(DType::F32, 8, 5), 38 + 5 * 32);
            assert_eq!(multi_update_add(DType::F32, 2, 5), 37 + 5 * 8);
            assert_eq!(multi_update_add(DType::F16, 8, 1), 3 + 30 + 4 + 13 + 3 * 4);
            assert_eq!(multi_update_add(DType::F16, 3, 1), 37 + 13 + 60);
            assert_eq!(multi_update_add(DType::I32, 8, 0), 38);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Worker = Worker { id: 0, count: 1 };

    #[test]
    fn dynamic_slice_wraps_and_handles_out_of_range() {
        let base: Vec<i32> = (0..8).collect(); // 4 rows of 2
        let mut sub = [0i32; 6];
        vertex!(DynamicSliceI32 {
            offset: 3,
            input: &base,
            out: &mut sub,
            num_base: 4,
            num_sub: 3,
            remap: false
        })
        .compute(W)
        .unwrap();
        assert_eq!(sub, [6, 7, 0, 1, 2, 3]);
        let mut sub = [9i32; 2];
        vertex!(DynamicSliceI32 {
            offset: 4,
            input: &base,
            out: &mut sub,
            num_base: 4,
            num_sub: 1,
            remap: false
        })
        .compute(W)
        .unwrap();
        assert_eq!(sub, [0, 0]);
        vertex!(DynamicSliceI32 {
            offset: 99,
            input: &base,
            out: &mut sub,
            num_base: 4,
            num_sub: 1,
            remap: true
        })
        .compute(W)
        .unwrap();
        assert_eq!(sub, [0, 1]);
        let e = vertex!(DynamicSliceI32 {
            offset: 0,
            input: &base,
            out: &mut [0; 3],
            num_base: 4,
            num_sub: 1,
            remap: true
        })
        .compute(W)
        .unwrap_err();
        assert!(
            e.0.contains("DynamicSlice<int>") && e.0.contains("'out'"),
            "{e}"
        );
    }

    #[test]
    fn multi_update_add_applies_equal_offsets_in_order() {
        let mut base = [0.0f32; 4]; // 2 rows of 2
        for id in 0..2 {
            vertex!(MultiUpdateAddF32 {
                offsets: &[11, 10, 11, 12],
                slices: &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                a: &mut base,
                scale: 0.5,
                base_offset: 10,
                num_base: 2,
            })
            .compute(Worker { id, count: 2 })
            .unwrap();
        }
        assert_eq!(base, [1.5, 2.0, 3.0, 4.0]);
    }
}
