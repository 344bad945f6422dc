//! The generic reduction vertex of `popops::reduce` (poplibs' `Reduce` vertex, default
//! specialisation): output regions, each the reduction of a list of partials.
//!
//! `Reduce{Op}<P,O>` (`Op` = `Add`, `SquareAdd`, `Mul`, `Max`, `Min` for `P,O` =
//! `float,float`, `half,float`, `float,half`, `int,int`, `unsigned,unsigned`; `LogicalAnd`,
//! `LogicalOr` for `bool,bool`):
//!
//! - `partials: Input<VectorList<P>>`, `out: InOut<Vector<O>>`,
//!   `out_lens: State<Vector<u32>>` and `num_partials: State<Vector<u32>>` (one per output
//!   region), `scale: State<f32>`, `update: State<bool>`.
//! - `out` is cut into regions of `out_lens[r]` elements, in order; region `r` takes the next
//!   `num_partials[r]` partials of the list, each a whole number `m` of region lengths `L`:
//!   `acc[i] = fold(identity, op)` over the partials in list order and, within a partial, over
//!   `p[j·L + i]` for `j = 0..m`. Then `out[i] = scale · acc[i]`, or with `update`
//!   `out[i] = out[i] + scale · acc[i]` (`scale` and `update` are 1 and false on the first
//!   stage's vertices, which write partials).
//! - `SquareAdd` squares each element of its partials: a first-stage vertex. Its second stage
//!   is `Add` (partials are already sums of squares).
//! - Arithmetic runs in the accumulator type `A` (`float` for `float` and `half` partials,
//!   the integer itself, `bool`): f32 operations in a fixed order, integers wrapping, `half`
//!   results rounded once ([`to_f16`]). `Max`/`Min<float>` return NaN
//!   if any element is NaN (numpy's `max`/`min`), else `f32::max`/`f32::min` (`max(-0, +0)`
//!   is either zero). An integer `scale` is applied as
//!   the integer `scale as i32` (`popops` checks it is integral); `bool` ignores `scale` and
//!   `update`.
//! - Identity of an output region with no partials: `0`, `1`, the lowest value (`-inf`), the
//!   highest value (`+inf`), `true` (`LogicalAnd`), `false` (`LogicalOr`).
//!
//! Cycle estimates: poplibs' `getCyclesEstimateForReduce` ([`cost::reduce`]), which `popops`
//! sets per vertex from the region sizes; the codelet's own estimate ([`cost::reduce`] with
//! equal regions and partials, from the field sizes) is used only if none is set.

use poplar_core::codelet::*;
use poplar_core::dtype::{DType, Element};
use poplar_core::f16;

/// The reduction operations of `popops::reduce` (poplibs' `popops::Operation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    Add,
    Mul,
    Min,
    Max,
    LogicalAnd,
    LogicalOr,
    /// `Σ x²`.
    SquareAdd,
}

impl Operation {
    /// The codelet name stem (`"ReduceAdd"`).
    pub fn codelet(self) -> &'static str {
        match self {
            Operation::Add => "ReduceAdd",
            Operation::Mul => "ReduceMul",
            Operation::Min => "ReduceMin",
            Operation::Max => "ReduceMax",
            Operation::LogicalAnd => "ReduceLogicalAnd",
            Operation::LogicalOr => "ReduceLogicalOr",
            Operation::SquareAdd => "ReduceSquareAdd",
        }
    }

    /// True for the operations on `bool`.
    pub fn is_logical(self) -> bool {
        matches!(self, Operation::LogicalAnd | Operation::LogicalOr)
    }

    /// The operation of a later stage, which reduces partials (`SquareAdd` → `Add`).
    pub fn of_partials(self) -> Operation {
        match self {
            Operation::SquareAdd => Operation::Add,
            op => op,
        }
    }
}

/// An accumulator type: its identities and operations.
pub trait Acc: Copy {
    fn identity(op: Operation) -> Self;
    /// `a op x` (`SquareAdd`: `a + x·x`).
    fn combine(op: Operation, a: Self, x: Self) -> Self;
    /// `scale · a`.
    fn scaled(a: Self, scale: f32) -> Self;
    /// `a + b` (the update).
    fn plus(a: Self, b: Self) -> Self;
}

impl Acc for f32 {
    #[inline(always)]
    fn identity(op: Operation) -> f32 {
        match op {
            Operation::Mul => 1.0,
            Operation::Max => f32::NEG_INFINITY,
            Operation::Min => f32::INFINITY,
            _ => 0.0,
        }
    }
    #[inline(always)]
    fn combine(op: Operation, a: f32, x: f32) -> f32 {
        match op {
            Operation::Mul => a * x,
            // NaN propagates (numpy's `max`/`min`), unlike `f32::max`.
            Operation::Max if a.is_nan() || x.is_nan() => f32::NAN,
            Operation::Min if a.is_nan() || x.is_nan() => f32::NAN,
            Operation::Max => a.max(x),
            Operation::Min => a.min(x),
            Operation::SquareAdd => a + x * x,
            _ => a + x,
        }
    }
    #[inline(always)]
    fn scaled(a: f32, scale: f32) -> f32 {
        scale * a
    }
    #[inline(always)]
    fn plus(a: f32, b: f32) -> f32 {
        a + b
    }
}

macro_rules! int_acc {
    ($($t:ty),*) => {$(
        impl Acc for $t {
            #[inline(always)]
            fn identity(op: Operation) -> $t {
                match op {
                    Operation::Mul => 1,
                    Operation::Max => <$t>::MIN,
                    Operation::Min => <$t>::MAX,
                    _ => 0,
                }
            }
            #[inline(always)]
            fn combine(op: Operation, a: $t, x: $t) -> $t {
                match op {
                    Operation::Mul => a.wrapping_mul(x),
                    Operation::Max => a.max(x),
                    Operation::Min => a.min(x),
                    Operation::SquareAdd => a.wrapping_add(x.wrapping_mul(x)),
                    _ => a.wrapping_add(x),
                }
            }
            #[inline(always)]
            fn scaled(a: $t, scale: f32) -> $t {
                a.wrapping_mul(scale as i64 as $t)
            }
            #[inline(always)]
            fn plus(a: $t, b: $t) -> $t {
                a.wrapping_add(b)
            }
        }
    )*};
}

int_acc!(i32, u32);

impl Acc for bool {
    fn identity(op: Operation) -> bool {
        matches!(op, Operation::LogicalAnd)
    }
    fn combine(op: Operation, a: bool, x: bool) -> bool {
        match op {
            Operation::LogicalAnd => a && x,
            _ => a || x,
        }
    }
    fn scaled(a: bool, _scale: f32) -> bool {
        a
    }
    fn plus(_a: bool, b: bool) -> bool {
        b
    }
}

/// A partials type and its accumulator.
pub trait Partial<A>: Element {
    fn acc(self) -> A;
}

/// An output type written from accumulator `A`.
pub trait Output<A>: Element {
    fn from_acc(a: A, index: usize) -> Self;
    fn to_acc(self) -> A;
}

macro_rules! same_type {
    ($($t:ty),*) => {$(
        impl Partial<$t> for $t {
            #[inline(always)]
            fn acc(self) -> $t {
                self
            }
        }
        impl Output<$t> for $t {
            #[inline(always)]
            fn from_acc(a: $t, _index: usize) -> $t {
                a
            }
            #[inline(always)]
            fn to_acc(self) -> $t {
                self
            }
        }
    )*};
}

same_type!(f32, i32, u32, bool);

impl Partial<f32> for f16 {
    #[inline(always)]
    fn acc(self) -> f32 {
        self.to_f32()
    }
}

impl Output<f32> for f16 {
    #[inline(always)]
    fn from_acc(a: f32, index: usize) -> f16 {
        to_f16(a, index)
    }
    #[inline(always)]
    fn to_acc(self) -> f32 {
        self.to_f32()
    }
}

/// What every `Reduce*` vertex computes (module notes): `out` regions of `out_lens`, each
/// from the next `num_partials[r]` partials.
#[allow(clippy::too_many_arguments)] // the vertex's fields, named
pub fn reduce_regions<P: Partial<A>, O: Output<A>, A: Acc>(
    codelet: &str,
    op: Operation,
    partials: &ListRef<'_, P>,
    out: &mut [O],
    out_lens: &[u32],
    num_partials: &[u32],
    scale: f32,
    update: bool,
) -> Result<(), VertexError> {
    if out_lens.len() != num_partials.len() {
        return Err(VertexError::new(format!(
            "{codelet}: field 'out_lens' has {} regions but field 'num_partials' {}",
            out_lens.len(),
            num_partials.len()
        )));
    }
    let total: usize = out_lens.iter().map(|&l| l as usize).sum();
    let parts: usize = num_partials.iter().map(|&n| n as usize).sum();
    if total != out.len() || parts != partials.len() {
        return Err(VertexError::new(format!(
            "{codelet}: the regions cover {total} outputs and {parts} partials, but field 'out' \
             has {} elements and field 'partials' {}",
            out.len(),
            partials.len()
        )));
    }
    let mut acc: Vec<A> = Vec::new();
    let (mut at, mut pi) = (0usize, 0usize);
    for (&len, &np) in out_lens.iter().zip(num_partials) {
        let len = len as usize;
        acc.clear();
        acc.resize(len, A::identity(op));
        for k in pi..pi + np as usize {
            let p = partials.get(k);
            if len == 0 || !p.len().is_multiple_of(len) {
                return Err(VertexError::new(format!(
                    "{codelet}: field 'partials'[{k}] has {} elements, not a multiple of its \
                     output region's {len}",
                    p.len()
                )));
            }
            for chunk in p.chunks_exact(len) {
                for (a, &x) in acc.iter_mut().zip(chunk) {
                    *a = A::combine(op, *a, x.acc());
                }
            }
        }
        for (i, (o, &a)) in out[at..at + len].iter_mut().zip(&acc).enumerate() {
            let r = A::scaled(a, scale);
            let v = if update { A::plus(o.to_acc(), r) } else { r };
            *o = O::from_acc(v, at + i);
        }
        at += len;
        pi += np as usize;
    }
    Ok(())
}

macro_rules! reduce_vertices {
    ($($name:ident as $cname:literal: $op:ident, $p:ty => $o:ty, acc $a:ty;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: the generic reduction, see [the module](self).")]
            pub struct $name as $cname {
                partials: Input<VectorList<$p>>,
                out: InOut<Vector<$o>>,
                out_lens: State<Vector<u32>>,
                num_partials: State<Vector<u32>>,
                scale: State<f32>,
                update: State<bool>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                reduce_regions::<$p, $o, $a>(
                    $cname,
                    Operation::$op,
                    &self.partials,
                    self.out,
                    self.out_lens,
                    self.num_partials,
                    self.scale,
                    self.update,
                )
            }

            /// [`cost::reduce`] with the partials and outputs spread evenly over the regions.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let parts = u64::from(ctx.sizes.get(Self::partials).copied().unwrap_or(0));
                let regions = ctx.elements(Self::out_lens).max(1);
                let out = ctx.elements(Self::out);
                let elems = ctx.elements(Self::partials);
                Some(cost::uniform(
                    Operation::$op,
                    <$p as Element>::DTYPE,
                    <$o as Element>::DTYPE,
                    regions,
                    out / regions,
                    parts / regions,
                    elems.checked_div(parts).unwrap_or(0),
                ))
            }
        }
    )*};
}

reduce_vertices! {
    ReduceAddF32 as "ReduceAdd<float,float>": Add, f32 => f32, acc f32;
    ReduceAddF16F32 as "ReduceAdd<half,float>": Add, f16 => f32, acc f32;
    ReduceAddF32F16 as "ReduceAdd<float,half>": Add, f32 => f16, acc f32;
    ReduceAddI32 as "ReduceAdd<int,int>": Add, i32 => i32, acc i32;
    ReduceAddU32 as "ReduceAdd<unsigned,unsigned>": Add, u32 => u32, acc u32;
    ReduceSquareAddF32 as "ReduceSquareAdd<float,float>": SquareAdd, f32 => f32, acc f32;
    ReduceSquareAddF16F32 as "ReduceSquareAdd<half,float>": SquareAdd, f16 => f32, acc f32;
    ReduceSquareAddF32F16 as "ReduceSquareAdd<float,half>": SquareAdd, f32 => f16, acc f32;
    ReduceSquareAddI32 as "ReduceSquareAdd<int,int>": SquareAdd, i32 => i32, acc i32;
    ReduceSquareAddU32 as "ReduceSquareAdd<unsigned,unsigned>": SquareAdd, u32 => u32, acc u32;
    ReduceMulF32 as "ReduceMul<float,float>": Mul, f32 => f32, acc f32;
    ReduceMulF16F32 as "ReduceMul<half,float>": Mul, f16 => f32, acc f32;
    ReduceMulF32F16 as "ReduceMul<float,half>": Mul, f32 => f16, acc f32;
    ReduceMulI32 as "ReduceMul<int,int>": Mul, i32 => i32, acc i32;
    ReduceMulU32 as "ReduceMul<unsigned,unsigned>": Mul, u32 => u32, acc u32;
    ReduceMaxF32 as "ReduceMax<float,float>": Max, f32 => f32, acc f32;
    ReduceMaxF16F32 as "ReduceMax<half,float>": Max, f16 => f32, acc f32;
    ReduceMaxF32F16 as "ReduceMax<float,half>": Max, f32 => f16, acc f32;
    ReduceMaxI32 as "ReduceMax<int,int>": Max, i32 => i32, acc i32;
    ReduceMaxU32 as "ReduceMax<unsigned,unsigned>": Max, u32 => u32, acc u32;
    ReduceMinF32 as "ReduceMin<float,float>": Min, f32 => f32, acc f32;
    ReduceMinF16F32 as "ReduceMin<half,float>": Min, f16 => f32, acc f32;
    ReduceMinF32F16 as "ReduceMin<float,half>": Min, f32 => f16, acc f32;
    ReduceMinI32 as "ReduceMin<int,int>": Min, i32 => i32, acc i32;
    ReduceMinU32 as "ReduceMin<unsigned,unsigned>": Min, u32 => u32, acc u32;
    ReduceLogicalAnd as "ReduceLogicalAnd<bool,bool>": LogicalAnd, bool => bool, acc bool;
    ReduceLogicalOr as "ReduceLogicalOr<bool,bool>": LogicalOr, bool => bool, acc bool;
}

/// Cycle estimates of the reduction vertices.
pub mod cost {
    use super::{DType, Operation};

    /// poplibs' `getCyclesEstimateForReduce` (`lib/popops/reduction/CycleEstimationFunctions.cpp`,
    /// default specialisation) for one vertex: `partial_sizes[k]` elements in partial `k`,
    /// `out_sizes[r]` outputs and `num_partials[r]` partials in region `r`. `vectorWidth` is
    /// the partials' 64-bit vector ([`crate::cycles::data_path_width`]). `Add`/`SquareAdd`
    /// take poplibs' double-width accumulator path, `Mul`/`Max`/`Min` its 4-wide path, the
    /// logical operations the plain path (with its scale, update and conversion cycles). A
    /// vertex of one output from one partial is costed as poplibs' `SCALAR_OUTPUT_SINGLE_INPUT`
    /// specialisation, the vertex poplibs would pick for it.
    pub fn reduce(
        op: Operation,
        partials: DType,
        out: DType,
        update: bool,
        partial_sizes: &[u64],
        out_sizes: &[u64],
        num_partials: &[u64],
    ) -> u64 {
        let width = crate::cycles::data_path_width(partials);
        let mut cycles = 5 + 1 + 1;
        if out_sizes == [1] && num_partials == [1] && !op.is_logical() {
            // poplibs' SCALAR_OUTPUT_SINGLE_INPUT specialisation (one output from one
            // partial): 8 + 11 of set-up, 2 cycles per double-width vector, 1 per remainder
            // element, 5 to convert a non-float output.
            let acc = 2 * width;
            let ps = partial_sizes[0];
            cycles += 8 + 11;
            cycles += if ps < 6 { 6 } else { ps / acc * 2 + ps % acc };
            return cycles + if out == DType::F32 { 0 } else { 5 };
        }
        let mut pi = 0usize;
        match op {
            Operation::Mul | Operation::Max | Operation::Min => {
                cycles += 3 + 23;
                let inner = if width == 2 { 5 } else { 8 };
                const REM: [u64; 4] = [0, 1, 1, 2];
                for (&len, &np) in out_sizes.iter().zip(num_partials) {
                    cycles += 16 + 5 + 2 + 2 + 2;
                    let vec = u64::from(len / width > 0);
                    let rem = REM[(len % width) as usize % 4];
                    cycles += vec * 6 + rem * 4;
                    for &ps in &partial_sizes[pi..pi + np as usize] {
                        cycles += partial_cost(ps, len, width, inner, vec, rem, 4);
                    }
                    pi += np as usize;
                }
            }
            Operation::Add | Operation::SquareAdd => {
                let width = 2 * width;
                cycles += 3 + 23;
                const REM: [u64; 8] = [0, 1, 1, 2, 1, 2, 2, 3];
                for (&len, &np) in out_sizes.iter().zip(num_partials) {
                    let read = if len / width > 0 { 11 } else { 6 };
                    let inner = if width == 4 { 7 } else { read + 3 };
                    cycles += 16 + 5 + 2 + 2 + 2 + 2;
                    let vec = u64::from(len / width > 0);
                    let rem = REM[(len % width) as usize % 8];
                    cycles += vec * 22 + rem * 8;
                    for &ps in &partial_sizes[pi..pi + np as usize] {
                        cycles += partial_cost(ps, len, width, inner, vec, rem, 8);
                    }
                    pi += np as usize;
                }
            }
            Operation::LogicalAnd | Operation::LogicalOr => {
                cycles += 2 + 7 + 8 - 1;
                let extra = 2 * u64::from(update) + 1 + u64::from(partials != out);
                for &np in num_partials {
                    cycles += 5 + 5;
                    for &ps in &partial_sizes[pi..pi + np as usize] {
                        cycles += (2 + 1 + 3 + extra) * ps.div_ceil(width);
                    }
                    pi += np as usize;
                }
            }
        }
        cycles
    }

    /// One partial of `ps` elements into a region of `len`: poplibs' loop set-up per vector
    /// of the partial (11), the vector loop and the remainder loops.
    fn partial_cost(
        ps: u64,
        len: u64,
        width: u64,
        inner: u64,
        vec: u64,
        rem: u64,
        per_rem: u64,
    ) -> u64 {
        let ratio = ps.checked_div(len).unwrap_or(1);
        let mut c = inner * (len / width) * ratio;
        if ratio > 0 && vec > 0 {
            c += 11 * ps / (width * ratio);
        }
        c += rem * 11;
        c += (per_rem * rem * ps).checked_div(len).unwrap_or(0);
        c
    }

    /// [`reduce`] over `regions` equal regions of `len` outputs, each of `parts` partials of
    /// `partial_len` elements.
    pub fn uniform(
        op: Operation,
        partials: DType,
        out: DType,
        regions: u64,
        len: u64,
        parts: u64,
        partial_len: u64,
    ) -> u64 {
        let r = regions as usize;
        let p = (regions * parts) as usize;
        reduce(
            op,
            partials,
            out,
            false,
            &vec![partial_len; p],
            &vec![len; r],
            &vec![parts; r],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poplibs_estimate_by_hand() {
        // One float region of 8 outputs, two partials of 16 (Add: width 4, inner 7).
        // 7 + 26 + (16+5+2+2+2+2) + 22 + 2 · (7·2·2 + 11·16/8) = 7+26+29+22+2·50 = 184.
        let c = cost::reduce(
            Operation::Add,
            DType::F32,
            DType::F32,
            false,
            &[16, 16],
            &[8],
            &[2],
        );
        assert_eq!(c, 184);
        // Max over one region of 3 (width 2: one vector, remainder 1): 7 + 26 + 27 + 6 + 4 +
        // one partial of 6 (ratio 2): 5·1·2 + 11·6/4 (=16) + 11 + 4·1·2 = 45.
        let c = cost::reduce(
            Operation::Max,
            DType::F32,
            DType::F32,
            false,
            &[6],
            &[3],
            &[1],
        );
        assert_eq!(c, 7 + 26 + 27 + 6 + 4 + 45);
        // One output from 101 floats (double-width vectors of 4): 7 + 19 + 2 · 25 + 1.
        let c = cost::reduce(
            Operation::Add,
            DType::F32,
            DType::F32,
            false,
            &[101],
            &[1],
            &[1],
        );
        assert_eq!(c, 7 + 19 + 2 * 25 + 1);
    }
}
