//! Cycle estimates of the standard codelets, in the shape of poplibs' published estimators.
//!
//! **Units.** Every estimate is in *worker-context cycles*: the cycles one of the tile's six
//! barrel-threaded worker contexts spends on the vertex. The contexts issue in turn, so a
//! context's `c` cycles take `6·c` tile cycles whether the other five are busy or idle; the
//! cycle model (`docs/cycle-model.md`) schedules a tile's single-worker vertices over its
//! contexts and multiplies the busiest context by 6. A multi-worker (`*Multi`) codelet reports
//! one worker's share of the split work; the model adds the supervisor's cycles
//! (`SUPERVISOR_CYCLES`, 51) once per vertex. This is how poplibs' estimators count:
//! `workerCycles · numWorkerContexts` for a worker vertex,
//! `supervisorCycles + maxWorkerCycles · numWorkerContexts` for a MultiVertex.
//!
//! **Shape.** One run of a vertex over `n` elements costs
//! `overhead + ceil(n / width) · per_vector` worker cycles ([`Loop`]): the fixed cost of the
//! vertex plus poplibs' `basicOpLoopCycles` (`lib/popops/PerformanceEstimation.cpp`: a loop
//! over vectors of `width` elements, `per_vector` cycles each). `width` is the 64-bit data path
//! in elements (`float` 2, `half` 4) when the operation is vectorised, or the number of elements
//! poplibs' table says one loop handles. Where poplibs costs the last partial vector
//! separately (a remainder branch), the shape charges it as one more vector. The overheads and
//! cycles per vector are poplibs' (graphcore/poplibs, `lib/popops/popopsCycleEstimators.cpp`
//! and `.hpp`, `lib/popops/PerformanceEstimation.cpp`,
//! `lib/popops/reduction/CycleEstimationFunctions.cpp`); each constant below names the
//! estimator it comes from, or says that poplibs has none.
//!
//! | codelets | poplibs estimator | overhead | width | cycles per vector |
//! |---|---|---|---|---|
//! | `Add`, `Sub`, `Mul` `<float>` / `<half>` | `BinaryOp2D` (one region) | 5 | 2 / 4 | 3 (`{1, true}` + 2) |
//! | `Max`, `Min` `<float>` / `<half>` | `BinaryOp2D` | 5 | 2 / 4 | 3 / 4 |
//! | `Div<float>` | `BinaryOp2D` | 5 | 2 | 10 |
//! | `Add`, `Sub`, `Mul`, `Max`, `Min` `<int>` | `BinaryOp2D` | 5 | 1 | 7 |
//! | the same `<unsigned>` | `BinaryOp2D` | 5 | 1 | 7 (`Max`, `Min`: 8) |
//! | `*InPlace<T>` | `BinaryOp2DInPlace` | 20 | as above | as above; `Max`/`Min<float>` 4 |
//! | `AddMulti<float>` (per worker, over `ceil(n / 6)`) | `BinaryOp1D` worker | 29 | 2 | 3 |
//! | `Neg<float>` | `UnaryOp2D` | 20 | 2 | 2 |
//! | `Neg<int>`, `Abs<int>` | `UnaryOp2D` | 20 | 1 | 6 (`{2, false}` + 4) |
//! | `Abs<float>` | `UnaryOp2D` | 20 | 1 | 5 (`{1, false}` + 4) |
//! | `Square<float>` | `UnaryOp2D` | 20 | 2 | 2 |
//! | `Square<int>`, `Square<unsigned>` | `UnaryOp2D` | 20 | 2 | 5 (`{1, true}` + 4) |
//! | `Sqrt<float>` / `Exp<float>` | `UnaryOp2D` | 20 | 2 | 10 / 6 |
//! | `Fill<float>`, `<int>`, `<unsigned>`, `<unsigned short>` | `Fill` (`_fillCycleEstimate`) | 23 | 2 | 1 |
//! | `Fill<bool>`, `<unsigned char>` | `Fill` (8-bit path) | 28 (39 from 64 elements) | 4 (8) | 1 |
//! | `FillMulti<float>` (per worker) | none (popops splits `Fill` over workers): `Fill` over `ceil(n / 6)` | 23 | 2 | 1 |
//! | `Copy<T>` | none | 23 | 8 bytes | 1 |
//! | `Cast<float,half>` / `Cast<half,float>` | `Cast1DSingleWorker` | 26 / 25 | 4 / 2 | 2 / 1 |
//! | `ScaledAdd<float>` / `<half>` | `ScaledAdd2D` | 30 | 2 / 4 | 3 |
//! | `ScaledAddMulti<float>` (per worker) | `ScaledAddSupervisor` worker | 22 | 2 | 3 |
//! | `ReduceSum<float>` / `<half>` | reduction, `getCyclesEstimateForSingleInput` | 17 | 4 / 8 | 2 |
//! | `ReduceMax`, `ReduceMin` `<float>` | same | 17 | 2 | 1 |
//! | `ReduceSum<int>`, `<unsigned>` | same | 22 | 1 | 1 |
//! | `ReduceMax`, `ReduceMin` `<int>`, `<unsigned>` | same | 22 | 2 | 1 |
//! | `Reduce*Partials<T>` over `p` partials | reduction, `getCyclesEstimateForReduce` | 57–61 | 1–4 | `a + b·p` ([`partials`]) |
//! | `Dot<float>` / `<half>` / `<int>` | none: the single-input reduction with twice the loads | 17 / 17 / 22 | 4 / 8 / 1 | 4 / 4 / 2 |
//! | `MatVec<float>` | none: `Dot` per row | 17 + 8 per row | 4 | 4 |
//!
//! The generic formulas [`elementwise`], [`multi_worker`] and [`rows`] (with [`OVERHEAD`] and
//! [`ROW_OVERHEAD`]) are not poplibs': they are this crate's earlier estimates, kept for
//! codelets of other crates that build on them. The standard codelets do not use them.

use poplar_core::dtype::DType;

use crate::family::{BinaryOp, ReduceOp, UnaryOp};

/// A vertex's cost over `n` elements: `overhead + ceil(n / width) · per_vector` worker cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loop {
    /// Fixed cycles of one run (entry, pointer loads, loop set-up, exit).
    pub overhead: u64,
    /// Elements one loop iteration handles.
    pub width: u64,
    /// Cycles of one loop iteration.
    pub per_vector: u64,
}

impl Loop {
    /// `overhead + ceil(n / width) · per_vector`.
    pub const fn cycles(self, n: u64) -> u64 {
        let w = if self.width == 0 { 1 } else { self.width };
        self.overhead + n.div_ceil(w) * self.per_vector
    }

    /// One worker's share of a multi-worker vertex over `n` elements split over `workers`
    /// contexts: `cycles(ceil(n / workers))` (poplibs' `BinaryOp1D`: `iceil(n, numWorkers)`).
    pub const fn worker_share(self, n: u64, workers: u32) -> u64 {
        let w = if workers == 0 { 1 } else { workers as u64 };
        self.cycles(n.div_ceil(w))
    }
}

/// Elements of `dtype` in one 64-bit vector (poplar's `Target::getVectorWidth` on the IPU:
/// `float` 2, `half` 4, `int` 2, 16-bit 4, 8-bit 8).
pub const fn data_path_width(dtype: DType) -> u64 {
    match 8u64.checked_div(dtype.size() as u64) {
        Some(w) => w,
        None => 1,
    }
}

/// `BinaryOp2D`: 5 cycles of vertex overhead (`uint64_t cycles = 5`).
pub const BINARY_OVERHEAD: u64 = 5;
/// `BinaryOp2DInPlace`: 20 cycles of vertex overhead.
pub const BINARY_IN_PLACE_OVERHEAD: u64 = 20;
/// `BinaryOp1D`: the worker's fixed cycles for `float` (26 for other types).
pub const BINARY_MULTI_WORKER_OVERHEAD: u64 = 29;
/// `binaryOpInnerLoopCycles`: cycles added to each vector of the ops with an assembly codelet
/// (`float`/`half` add, subtract, multiply): load, store and loop decision.
const BINARY_VECTOR_LOOP: u64 = 2;

/// The loop of a binary element-wise codelet (`BinaryOp2D`, or `BinaryOp2DInPlace` when
/// `in_place`), from `binaryOpPerfInfo` / `binaryOpInPlacePerfInfo`.
pub const fn binary(op: BinaryOp, dtype: DType, in_place: bool) -> Loop {
    let overhead = if in_place {
        BINARY_IN_PLACE_OVERHEAD
    } else {
        BINARY_OVERHEAD
    };
    let (width, per_vector) = match (op, dtype) {
        // {1, true}: the natural vector, 1 cycle + BINARY_VECTOR_LOOP.
        (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul, DType::F32 | DType::F16) => {
            (data_path_width(dtype), 1 + BINARY_VECTOR_LOOP)
        }
        // {3, false, 2} (in place {4, false, 2}).
        (BinaryOp::Max | BinaryOp::Min, DType::F32) => (2, if in_place { 4 } else { 3 }),
        // {4, false, 4}.
        (BinaryOp::Max | BinaryOp::Min, DType::F16) => (4, 4),
        // {10, false, 2}.
        (BinaryOp::Div, DType::F32) => (2, 10),
        // {21, false, 4}.
        (BinaryOp::Div, DType::F16) => (4, 21),
        // {8, false, 1}.
        (BinaryOp::Max | BinaryOp::Min, DType::U32) => (1, 8),
        // {277, false, 1} (int divide; not registered here).
        (BinaryOp::Div, _) => (1, 277),
        // {7, false, 1}: int and unsigned add, subtract, multiply; int max, min.
        _ => (1, 7),
    };
    Loop {
        overhead,
        width,
        per_vector,
    }
}

/// `AddMulti<float>`'s worker: `BinaryOp1D` for `float` add, over the worker's share.
pub const fn binary_multi_worker(op: BinaryOp, dtype: DType) -> Loop {
    let l = binary(op, dtype, false);
    Loop {
        overhead: if matches!(dtype, DType::F32) {
            BINARY_MULTI_WORKER_OVERHEAD
        } else {
            26
        },
        ..l
    }
}

/// `UnaryOp2D`: 20 cycles of vertex overhead.
pub const UNARY_OVERHEAD: u64 = 20;
/// `unaryOpInnerLoopCycles`: cycles added to each element (or natural vector) of the ops
/// that poplibs' table does not unroll: load, store and loop decision.
const UNARY_ELEMENT_LOOP: u64 = 4;

/// The loop of a unary element-wise codelet (`UnaryOp2D`), from `unaryOpPerfInfo`.
pub const fn unary(op: UnaryOp, dtype: DType) -> Loop {
    let (width, per_vector) = match (op, dtype) {
        // {2, false, 2}.
        (UnaryOp::Neg | UnaryOp::Square, DType::F32) => (2, 2),
        // {1, false}: one element per loop.
        (UnaryOp::Abs, DType::F32) => (1, 1 + UNARY_ELEMENT_LOOP),
        // {1, true}: the natural vector of 2.
        (UnaryOp::Square, _) => (data_path_width(dtype), 1 + UNARY_ELEMENT_LOOP),
        // {10, false, 2}.
        (UnaryOp::Sqrt, _) => (2, 10),
        // {6, false, 2}.
        (UnaryOp::Exp, _) => (2, 6),
        // {2, false}: int negate and absolute value, one element per loop.
        _ => (1, 2 + UNARY_ELEMENT_LOOP),
    };
    Loop {
        overhead: UNARY_OVERHEAD,
        width,
        per_vector,
    }
}

/// `_fillCycleEstimate` (popops `Fill`) for 32-bit types: 16 cycles before the loop, 6 after,
/// 1 for 4-byte rather than 8-byte alignment, `size / 2` stores plus one for an odd element.
pub const FILL_OVERHEAD: u64 = 16 + 6 + 1;

/// `Fill<T>` over `n` elements (`_fillCycleEstimate`).
pub const fn fill(dtype: DType, n: u64) -> u64 {
    if dtype.size() == 1 {
        // 8-bit: `28 + size / 4` below 64 bytes (32-bit stores), else `39 + size / 8`.
        let l = if n < 64 {
            Loop {
                overhead: 28,
                width: 4,
                per_vector: 1,
            }
        } else {
            Loop {
                overhead: 39,
                width: 8,
                per_vector: 1,
            }
        };
        l.cycles(n)
    } else {
        // The estimator's width is `dataPathWidth / 32` for every type but `half`, so 16-bit
        // integers are costed like 32-bit ones.
        Loop {
            overhead: FILL_OVERHEAD,
            width: 2,
            per_vector: 1,
        }
        .cycles(n)
    }
}

/// `Copy<T>`: no poplibs estimator (Poplar's on-tile copies are its own code). Assumed: the
/// overhead of `Fill` and one 64-bit load and store per cycle, the rate the cycle model gives
/// on-tile copies (`LOCAL_COPY_BYTES_PER_CYCLE` = 8).
pub const fn copy(dtype: DType) -> Loop {
    Loop {
        overhead: FILL_OVERHEAD,
        width: data_path_width(dtype),
        per_vector: 1,
    }
}

/// `Cast1DSingleWorker`: 3 cycles to get the parameters, 2 to call the core and exit, 19 of
/// the core's prologue, and one remainder check per bit of the vector width.
pub const fn cast(from: DType, to: DType) -> Loop {
    // The op's vector: min(2 loads, 1 store) of 64 bits; cycles per vector: the larger of its
    // loads and stores (`castWorkerCycles`).
    let load = data_path_width(from);
    let store = data_path_width(to);
    let width = if 2 * load < store { 2 * load } else { store };
    let loads = width / if width < load { width } else { load };
    let stores = width / if width < store { width } else { store };
    let per_vector = if loads > stores { loads } else { stores };
    let checks = (u64::BITS - (width - 1).leading_zeros()) as u64; // ceil(log2(width))
    Loop {
        overhead: 3 + 2 + 19 + checks,
        width,
        per_vector,
    }
}

/// `ScaledAdd2D` (`ScaledArithmetic2DCycleEstimate`, not memory-constrained, the default):
/// 9 + 1 cycles of prologue and epilogue, 15 per region and 5 of inner-loop overhead, then 3
/// cycles per vector.
pub const fn scaled_add(dtype: DType) -> Loop {
    Loop {
        overhead: 9 + 1 + 15 + 5,
        width: data_path_width(dtype),
        per_vector: 3,
    }
}

/// `ScaledAddSupervisor`'s worker (`getScaledArithmeticSupervisorCycleEstimate`, `float`
/// data and scale): 15 of prologue, 6 of inner-loop overhead less the first vector's 3, 2 for
/// the remainder test, 1 for `final`, 1 to exit; 3 cycles per vector.
pub const SCALED_ADD_MULTI_WORKER: Loop = Loop {
    overhead: 15 + 6 - 3 + 2 + 1 + 1,
    width: 2,
    per_vector: 3,
};

/// `getCyclesEstimateForSingleInput`: entry, store and exit (3), initialisation (6),
/// remainder and accumulator load (5), the accumulators' sum (3); 5 more for an output type
/// other than `float`.
const SINGLE_INPUT_OVERHEAD: u64 = 3 + 6 + 5 + 3;

/// A reduction of `n` elements of `dtype` to one value (`ReduceSum<T>` …): the reduction
/// estimator's single-input path (`getCyclesEstimateForSingleInput`). Sums use the
/// accumulators (4 `float`s, 8 `half`s, 1 integer per operation; loads of 64 bits, so 2 per
/// loop), max and min the natural vector. `half` sums write a `float` here.
pub const fn reduce(op: ReduceOp, dtype: DType) -> Loop {
    let float_out = matches!(dtype, DType::F32 | DType::F16);
    let overhead = SINGLE_INPUT_OVERHEAD + if float_out { 0 } else { 5 };
    let (width, per_vector) = match (op, dtype) {
        (ReduceOp::Sum, DType::F32) => (4, 2),
        (ReduceOp::Sum, DType::F16) => (8, 2),
        (ReduceOp::Sum, _) => (1, 1),
        _ => (data_path_width(dtype), 1),
    };
    Loop {
        overhead,
        width,
        per_vector,
    }
}

/// `Dot<T>`: no poplibs vertex (poplin's matrix products use the AMP vertices). Costed as the
/// single-input `Sum` reduction with twice its loads per vector (a vector of products needs a
/// vector of `a` and one of `b`).
pub const fn dot(dtype: DType) -> Loop {
    let l = reduce(ReduceOp::Sum, dtype);
    Loop {
        per_vector: 2 * l.per_vector,
        ..l
    }
}

/// `getCyclesEstimateForSingleInput`'s per-reduction part (remainder, accumulator load 5,
/// accumulator sum 3), charged once per row of `MatVec<float>`.
pub const MATVEC_ROW_OVERHEAD: u64 = 5 + 3;

/// `MatVec<float>` over `rows × cols`: no poplibs vertex. A `Dot<float>` per row sharing one
/// vertex overhead: `17 + rows · (8 + 4 · ceil(cols / 4))`.
pub const fn matvec(rows: u64, cols: u64) -> u64 {
    let d = dot(DType::F32);
    d.overhead + rows * (MATVEC_ROW_OVERHEAD + cols.div_ceil(d.width) * d.per_vector)
}

/// The reduction of `parts` partials of `len` elements each into `len` outputs
/// (`Reduce*Partials<T>`): poplibs' generic `Reduce` vertex (`getCyclesEstimateForReduce`, one
/// output region, each partial as long as the output). Returns
/// `overhead + ceil(len / width) · (per_vector + per_partial · parts)`:
///
/// | op, type | overhead | width | per vector | per partial and vector |
/// |---|---|---|---|---|
/// | `Sum<float>` | 61 | 4 | 11 | 19 |
/// | `Sum<int>`, `<unsigned>` | 57 | 1 | 9 | 18 |
/// | `Max<T>`, `Min<T>` (32-bit) | 59 | 2 | 8 | 16 |
///
/// The overhead: entry and exit 7, state 26, per output region 16 + 6 + 2, and 2 per
/// remainder check (`ceil(log2(width))` of them). Per vector of outputs: its set-up (3, or 5
/// with accumulators), stores (2 per 64-bit store, +1 with accumulators) and loop (1). Per
/// partial and vector: the pointer fetch (7 + 3), the load (2 with accumulators, 2 to check
/// alignment, one per 64 bits) and 3 to compute and loop.
pub const fn partials(op: ReduceOp, dtype: DType, parts: u64, len: u64) -> u64 {
    let acc = matches!(op, ReduceOp::Sum);
    let width = match (acc, dtype) {
        (true, DType::F32) => 4,
        (true, DType::F16) => 8,
        (true, _) => 1,
        (false, _) => data_path_width(dtype),
    };
    let checks = (u64::BITS - (width - 1).leading_zeros()) as u64;
    let overhead = 7 + 26 + 16 + 6 + 2 * checks + 2;
    let out_width = data_path_width(dtype);
    let stored = if width < out_width { width } else { out_width };
    let per_vector = (if acc { 3 + 2 } else { 3 }) + 2 * stored + acc as u64 + 1;
    let load_width = if width < out_width { width } else { out_width };
    let per_partial = 7 + 3 + (if acc { 2 } else { 0 }) + 2 + width / load_width + 3;
    overhead + len.div_ceil(width) * (per_vector + per_partial * parts)
}

/// The cost of one element-wise operation in poplibs' tables (`unaryOpPerfInfo`,
/// `binaryOpPerfInfo`, `lib/popops/popopsCycleEstimators.hpp`): `cycles` per loop, the loop
/// over the natural 64-bit vector (`natural`), or over `unroll` elements, or (both unset) one
/// element per loop plus the loop's own cycles. `poplibs` is false where poplibs has no entry
/// and the numbers are our estimate (noted at [`op_perf`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpPerf {
    pub cycles: u64,
    pub natural: bool,
    pub unroll: u64,
    pub poplibs: bool,
}

const fn perf(cycles: u64, natural: bool, unroll: u64) -> OpPerf {
    OpPerf {
        cycles,
        natural,
        unroll,
        poplibs: true,
    }
}

const fn ours(cycles: u64, natural: bool, unroll: u64) -> OpPerf {
    OpPerf {
        cycles,
        natural,
        unroll,
        poplibs: false,
    }
}

/// poplibs' table entry for `op` on `ty` (the out-of-place tables), or our estimate where
/// poplibs has none: `Sign`, `Abs`, `Square` on `unsigned` (1 cycle, as `Square<int>`),
/// `Expm1`, `Log1p` as poplibs' `float` entries for `half`, `Rem`/`Pow` on integers as
/// poplibs' `int` `REMAINDER`/`POWER`, `Clamp` (a max and a min: 2 natural-vector cycles for
/// floats, 14 per element for integers), `Select` (5 per 4 elements, as `LOGICAL_AND`),
/// `Cast` (as `Cast1DSingleWorker`'s 2 per vector), loads and constants (free here: the
/// fused loop charges loads separately).
pub fn op_perf(op: crate::map::Op, ty: DType) -> OpPerf {
    use crate::map::Op::*;
    use DType::*;
    let float = matches!(ty, F32 | F16);
    let h = matches!(ty, F16);
    match (op, float) {
        (Load | Const, _) => ours(0, true, 0),
        (Cast, _) => ours(2, true, 0),
        (Abs, true) => perf(1, false, 0),
        (Abs, false) if matches!(ty, I32) => perf(2, false, 0),
        (Abs, false) => ours(1, true, 0),
        (Sign, true) => perf(5, true, 0),
        (Sign, false) if matches!(ty, I32) => perf(5, false, 0),
        (Sign, false) => ours(5, false, 0),
        (Neg, true) => perf(2, false, if h { 4 } else { 2 }),
        (Neg, false) => perf(2, false, 0),
        (Sqrt, _) => perf(if h { 23 } else { 10 }, false, if h { 4 } else { 2 }),
        (Rsqrt, _) => perf(if h { 19 } else { 8 }, false, if h { 4 } else { 2 }),
        (Cbrt, _) => perf(if h { 17 } else { 27 }, true, 0),
        (Exp | Exp2, _) => perf(if h { 4 } else { 6 }, false, if h { 4 } else { 2 }),
        (Expm1, _) if h => perf(5, true, 0),
        (Expm1, _) => perf(4, false, 0),
        (Log, _) => perf(if h { 4 } else { 12 }, false, if h { 4 } else { 2 }),
        (Log1p, _) => perf(18, true, 0),
        (Sin | Cos, _) if h => perf(25, false, 1),
        (Sin | Cos, _) => perf(2300, false, 0),
        (Tan, _) => perf(if h { 5700 } else { 5100 }, false, 1),
        (Tanh, _) => perf(if h { 4 } else { 12 }, false, if h { 4 } else { 2 }),
        (Sigmoid, _) => perf(if h { 6 } else { 12 }, false, if h { 4 } else { 2 }),
        (Erf, _) => perf(if h { 13 } else { 41 }, false, 1),
        (Floor | Ceil | Round, _) => perf(2, true, 0),
        (Trunc, _) => perf(if h { 11 } else { 3 }, false, if h { 4 } else { 2 }),
        (IsFinite, _) => perf(5, true, 0),
        (IsInf, _) => perf(if h { 5 } else { 3 }, true, 0),
        (IsNan, _) => perf(3, true, 0),
        (LogicalNot, _) => perf(17, false, 0),
        (BitwiseNot, _) => perf(1, true, 0),
        (Square, true) => perf(2, false, if h { 4 } else { 2 }),
        (Square, false) if matches!(ty, I32 | U32) => perf(1, true, 0),
        (Square, false) => ours(1, true, 0),
        (Inverse, _) => perf(if h { 15 } else { 6 }, false, if h { 4 } else { 2 }),
        (Add | Sub | Mul, true) => perf(1, true, 0),
        (Add | Sub | Mul, false) => perf(7, false, 1),
        (Div, true) => perf(if h { 21 } else { 10 }, false, if h { 4 } else { 2 }),
        (Div, false) => perf(if matches!(ty, I32) { 277 } else { 265 }, false, 1),
        (Pow, _) => perf(if h { 325 } else { 312 }, false, 1),
        (Rem, true) => perf(if h { 300 } else { 133 }, false, if h { 4 } else { 2 }),
        (Rem, false) => perf(if matches!(ty, I32) { 292 } else { 282 }, false, 1),
        (Min | Max, true) => perf(if h { 4 } else { 3 }, false, if h { 4 } else { 2 }),
        (Min | Max, false) => perf(if matches!(ty, I32) { 7 } else { 8 }, false, 1),
        (Atan2, _) => perf(if h { 578 } else { 272 }, false, if h { 4 } else { 2 }),
        (Eq | Lt | Le | Gt | Ge, true) => perf(if h { 9 } else { 14 }, false, 4),
        (Ne, true) => perf(if h { 11 } else { 20 }, false, 4),
        (Eq | Ne, false) if matches!(ty, Bool) => {
            perf(if matches!(op, Eq) { 6 } else { 5 }, false, 4)
        }
        (Le | Ge, false) => perf(26, false, 4),
        (Eq | Ne | Lt | Gt, false) => perf(22, false, 4),
        (LogicalAnd | LogicalOr, _) => perf(5, false, 4),
        (BitAnd | BitOr | BitXor | Shl | Shr, _) => perf(7, false, 1),
        (Clamp, true) => ours(2, true, 0),
        (Clamp, false) => ours(14, false, 1),
        (Select, _) => ours(5, false, 4),
    }
}

/// Cycles of `p` over one vector of `width` elements, without loop overheads.
pub const fn op_vector_cycles(p: OpPerf, ty: DType, width: u64) -> u64 {
    if p.natural {
        p.cycles * width.div_ceil(data_path_width(ty))
    } else if p.unroll > 0 {
        (p.cycles * width).div_ceil(p.unroll)
    } else {
        p.cycles * width
    }
}

/// A single element-wise operation as its own vertex, in the shape of poplibs' `UnaryOp2D` /
/// `BinaryOp2D` (and their `InPlace` forms): the fixed overhead (unary 20, binary 5, binary
/// in place 20, a ternary op as binary) plus, per loop, the table's cycles and, for loops over
/// a natural vector or one element, the loop's own load, store and branch (2 for binary ops,
/// 4 for unary ones: `binaryOpInnerLoopCycles`, `unaryOpInnerLoopCycles`).
pub fn elementwise_op(op: crate::map::Op, ty: DType, in_place: bool) -> Loop {
    let p = op_perf(op, ty);
    let unary = op.arity() <= 1;
    let overhead = match (unary, in_place) {
        (true, _) => UNARY_OVERHEAD,
        (false, false) => BINARY_OVERHEAD,
        (false, true) => BINARY_IN_PLACE_OVERHEAD,
    };
    let lp = if unary {
        UNARY_ELEMENT_LOOP
    } else {
        BINARY_VECTOR_LOOP
    };
    let (width, per_vector) = if p.natural {
        (data_path_width(ty), p.cycles + lp)
    } else if p.unroll > 0 {
        (p.unroll, p.cycles)
    } else {
        (1, p.cycles + lp)
    };
    Loop {
        overhead,
        width,
        per_vector,
    }
}

/// Cycles of `op` on `ty` over one vector of `width` elements inside a fused loop, where its
/// operands are in registers (our estimate from poplibs' entries): a natural-vector entry is
/// its compute cycles already (poplibs adds the loop's load, store and branch apart); an
/// unrolled entry is a whole inner loop, so its loads (one cycle per 64 bits of each operand)
/// and store (per 64 bits of the result) come off, leaving at least one cycle; a per-element
/// entry is its cycles per element.
pub fn fused_op_cycles(op: crate::map::Op, ty: DType, width: u64) -> u64 {
    let p = op_perf(op, ty);
    if p.natural || p.unroll == 0 {
        return op_vector_cycles(p, ty, width);
    }
    let out = crate::map::result_type(op, ty, ty).unwrap_or(ty);
    let io = op.arity() as u64 * (p.unroll * ty.size() as u64).div_ceil(8)
        + (p.unroll * out.size() as u64).div_ceil(8);
    let compute = p.cycles.saturating_sub(io).max(1);
    (compute * width).div_ceil(p.unroll)
}

/// The fixed cycles of a fused `Map` vertex: poplibs' generated map vertex
/// (`lib/popops/ExpressionGenerator.cpp`, 13 for a single-worker vertex), plus one per
/// instruction for its set-up (our estimate).
pub const MAP_OVERHEAD: u64 = 13;

/// A fused `Map` vertex running `prog` over `n` elements (our estimate, in the shape of
/// poplibs' generated map vertex, which charges `13 + n / width · ops`): the vector is 64 bits
/// of the narrowest lane type the program computes in (2 `float`s, 4 `half`s); per vector,
/// every operation's cycles in the fused loop ([`fused_op_cycles`], from poplibs' tables), one
/// cycle per 64 bits loaded for each input and stored for the output, and one for the loop.
pub fn map(prog: &crate::map::Program, n: u64) -> u64 {
    use crate::map::Op;
    let width = prog
        .instrs
        .iter()
        .filter(|i| i.op != Op::Load)
        .map(|i| data_path_width(i.ty))
        .chain([data_path_width(prog.out)])
        .min()
        .unwrap_or(2)
        .min(4);
    let mut per_vector = 1; // loop
    for i in &prog.instrs {
        per_vector += match i.op {
            Op::Load => (width * i.ty.size() as u64).div_ceil(8),
            _ => fused_op_cycles(i.op, i.ty, width),
        };
    }
    per_vector += (width * prog.out.size() as u64).div_ceil(8); // store
    MAP_OVERHEAD + prog.instrs.len() as u64 + n.div_ceil(width) * per_vector
}

/// `Map<T>`'s own estimate, used only when `popops` has set none: 4 cycles per element for
/// each of the program's instructions (`words` long, [`crate::map::INSTR_WORDS`] each).
pub const fn map_fallback(words: u64, n: u64) -> u64 {
    let instrs =
        words.saturating_sub(crate::map::HEADER_WORDS as u64) / crate::map::INSTR_WORDS as u64;
    MAP_OVERHEAD + 4 * instrs * n
}

// ---- The generic formulas (not poplibs'), kept for other crates' codelets. ----

/// Fixed cost of a vertex in the generic formulas ([`elementwise`], [`rows`]).
pub const OVERHEAD: u64 = 20;
/// Extra cost per row (or per partial) of the generic two-level loops ([`rows`]).
pub const ROW_OVERHEAD: u64 = 6;

/// Elements processed per cycle by one worker for element type `dtype` in the generic
/// formulas: `float` 2, `half` 4, other one-byte types 4, two-byte 2, 32-bit integers 1.
pub const fn vector_width(dtype: DType) -> u64 {
    match dtype {
        DType::F32 => 2,
        DType::F16 => 4,
        // Integer and byte types: one 32-bit lane of sub-word elements per cycle.
        _ => match dtype.size() {
            1 => 4,
            2 => 2,
            _ => 1,
        },
    }
}

/// Generic: `OVERHEAD + per_elem * ceil(n / width)`.
pub const fn elementwise(n: u64, dtype: DType, per_elem: u64) -> u64 {
    OVERHEAD + per_elem * n.div_ceil(vector_width(dtype))
}

/// Generic: `OVERHEAD + per_elem * ceil(ceil(n / workers) / width)`, one worker's share of a
/// multi-worker vertex.
pub const fn multi_worker(n: u64, workers: u32, dtype: DType, per_elem: u64) -> u64 {
    let w = if workers == 0 { 1 } else { workers as u64 };
    OVERHEAD + per_elem * n.div_ceil(w).div_ceil(vector_width(dtype))
}

/// Generic: `OVERHEAD + rows * (ROW_OVERHEAD + ceil(cols / width))`.
pub const fn rows(rows: u64, cols: u64, dtype: DType) -> u64 {
    OVERHEAD + rows * (ROW_OVERHEAD + cols.div_ceil(vector_width(dtype)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// poplibs' `BinaryOp2D` for one region, written out: `5 + iceil(n, elemsPerLoop) ·
    /// cyclesPerLoop`.
    fn binary_2d(n: u64, elems_per_loop: u64, cycles_per_loop: u64) -> u64 {
        5 + n.div_ceil(elems_per_loop) * cycles_per_loop
    }

    #[test]
    fn binary_ops_follow_binary_op_2d() {
        // Add<float>, 100 elements: 50 vectors of 1 + 2 cycles.
        assert_eq!(binary(BinaryOp::Add, DType::F32, false).cycles(100), 155);
        assert_eq!(
            binary(BinaryOp::Add, DType::F32, false).cycles(101),
            binary_2d(101, 2, 3)
        );
        // Mul<half>, 10 elements: 3 vectors of 4.
        assert_eq!(binary(BinaryOp::Mul, DType::F16, false).cycles(10), 5 + 9);
        // Add<int>, 10 elements: 7 cycles each.
        assert_eq!(binary(BinaryOp::Add, DType::I32, false).cycles(10), 75);
        assert_eq!(binary(BinaryOp::Max, DType::U32, false).cycles(10), 85);
        assert_eq!(
            binary(BinaryOp::Max, DType::F32, false).cycles(7),
            5 + 4 * 3
        );
        assert_eq!(binary(BinaryOp::Div, DType::F32, false).cycles(100), 505);
        // In place: 20 of overhead; Max<float> 4 per vector.
        assert_eq!(binary(BinaryOp::Sub, DType::F32, true).cycles(4), 26);
        assert_eq!(binary(BinaryOp::Max, DType::F32, true).cycles(4), 28);
        assert_eq!(binary(BinaryOp::Div, DType::F32, true).cycles(3), 40);
    }

    #[test]
    fn multi_worker_shares() {
        // AddMulti<float>, 100 elements over 6 workers: 17 each, 9 vectors of 3 cycles.
        let add = binary_multi_worker(BinaryOp::Add, DType::F32);
        assert_eq!(add.worker_share(100, 6), 29 + 27);
        assert_eq!(add.worker_share(100, 0), 29 + 150);
        // ScaledAddMulti<float>: 22 + 3 per vector; 1000 elements → 167 each → 84 vectors.
        assert_eq!(SCALED_ADD_MULTI_WORKER.worker_share(1000, 6), 22 + 252);
        // poplibs' worker, written out, for 12 vectors per worker (144 elements, no
        // remainder): 15 + (6 + 3·11) + 2 + 1 + 1.
        assert_eq!(
            SCALED_ADD_MULTI_WORKER.worker_share(144, 6),
            15 + 6 + 3 * 11 + 2 + 1 + 1
        );
    }

    #[test]
    fn unary_ops_follow_unary_op_2d() {
        assert_eq!(unary(UnaryOp::Neg, DType::F32).cycles(10), 20 + 10);
        assert_eq!(unary(UnaryOp::Abs, DType::F32).cycles(10), 20 + 50);
        assert_eq!(unary(UnaryOp::Abs, DType::I32).cycles(10), 20 + 60);
        assert_eq!(unary(UnaryOp::Square, DType::I32).cycles(10), 20 + 25);
        assert_eq!(unary(UnaryOp::Sqrt, DType::F32).cycles(9), 20 + 50);
        assert_eq!(unary(UnaryOp::Exp, DType::F32).cycles(4), 20 + 12);
    }

    #[test]
    fn fill_follows_fill_cycle_estimate() {
        // poplibs: 16 + size / width + 6 + (size % width == 1) + 1.
        for n in [0u64, 1, 2, 7, 100] {
            assert_eq!(fill(DType::F32, n), 16 + n / 2 + 6 + (n % 2) + 1, "n={n}");
            assert_eq!(fill(DType::U16, n), fill(DType::I32, n));
        }
        assert_eq!(fill(DType::U8, 60), 28 + 15);
        assert_eq!(fill(DType::Bool, 64), 39 + 8);
    }

    #[test]
    fn copy_and_cast() {
        assert_eq!(copy(DType::F32).cycles(10), 23 + 5);
        assert_eq!(copy(DType::U8).cycles(17), 23 + 3);
        // float → half: vectors of 4, 2 cycles (two 64-bit loads), 2 remainder checks.
        assert_eq!(
            cast(DType::F32, DType::F16),
            Loop {
                overhead: 26,
                width: 4,
                per_vector: 2
            }
        );
        // half → float: vectors of 2, 1 cycle (one 64-bit store), 1 remainder check.
        assert_eq!(
            cast(DType::F16, DType::F32),
            Loop {
                overhead: 25,
                width: 2,
                per_vector: 1
            }
        );
        // poplibs for 8 floats → halves: 3 + 2 + 19 + 2·(8/4) + 2 checks.
        assert_eq!(cast(DType::F32, DType::F16).cycles(8), 3 + 2 + 19 + 4 + 2);
    }

    #[test]
    fn scaled_add_follows_scaled_add_2d() {
        // poplibs, one region of 100 floats: 9 + 1 + 15 + 5 + 50·3.
        assert_eq!(scaled_add(DType::F32).cycles(100), 180);
        assert_eq!(scaled_add(DType::F16).cycles(100), 30 + 75);
    }

    #[test]
    fn reductions() {
        // poplibs' single input, 8 floats: 3 + 6 + 2·8/4 + 5 + 0 + 3.
        assert_eq!(reduce(ReduceOp::Sum, DType::F32).cycles(8), 21);
        assert_eq!(reduce(ReduceOp::Max, DType::F32).cycles(8), 17 + 4);
        assert_eq!(reduce(ReduceOp::Sum, DType::I32).cycles(8), 22 + 8);
        assert_eq!(reduce(ReduceOp::Min, DType::U32).cycles(8), 22 + 4);
        assert_eq!(reduce(ReduceOp::Sum, DType::F16).cycles(16), 17 + 4);
        assert_eq!(dot(DType::F32).cycles(8), 17 + 8);
        assert_eq!(dot(DType::I32).cycles(8), 22 + 16);
        assert_eq!(matvec(4, 25), 17 + 4 * (8 + 4 * 7));
        // poplibs' generic Reduce, written out for 3 float partials of 4 (one vector, no
        // remainder): 7 + 26 + (16 + 6 + 2·2 + 2) + (5 + 5 + 1) + 3·(7 + 3) + 3·(6 + 3).
        assert_eq!(partials(ReduceOp::Sum, DType::F32, 3, 4), 129);
        assert_eq!(
            partials(ReduceOp::Sum, DType::F32, 3, 5),
            61 + 2 * (11 + 57)
        );
        assert_eq!(partials(ReduceOp::Sum, DType::I32, 2, 3), 57 + 3 * (9 + 36));
        assert_eq!(partials(ReduceOp::Max, DType::F32, 2, 4), 59 + 2 * (8 + 32));
        assert_eq!(
            partials(ReduceOp::Max, DType::U32, 2, 4),
            partials(ReduceOp::Max, DType::F32, 2, 4)
        );
    }

    #[test]
    fn fused_ops_drop_the_loads_and_stores_of_unrolled_entries() {
        use crate::map::Op;
        // Natural vector: the entry as is (ADD float {1, true}; half: one vector of 4).
        assert_eq!(fused_op_cycles(Op::Add, DType::F32, 2), 1);
        assert_eq!(fused_op_cycles(Op::Add, DType::F16, 4), 1);
        // TANH float {12, false, 2}: 12 less one 64-bit load and one store.
        assert_eq!(fused_op_cycles(Op::Tanh, DType::F32, 2), 10);
        // DIVIDE float {10, false, 2}: two loads and a store.
        assert_eq!(fused_op_cycles(Op::Div, DType::F32, 2), 7);
        // GREATER_THAN float {14, false, 4}: 2 × 2 loads of 4 floats, one store of 4 bools;
        // 9 cycles per 4 elements, 5 for a vector of 2.
        assert_eq!(fused_op_cycles(Op::Gt, DType::F32, 2), 5);
        // ADD int {7, false, 1}: 7 − 3.
        assert_eq!(fused_op_cycles(Op::Add, DType::I32, 2), 8);
        // A per-element entry (ABSOLUTE float {1, false}) costs per element.
        assert_eq!(fused_op_cycles(Op::Abs, DType::F32, 2), 2);
        // The standalone vertex keeps the whole entry: UnaryOp2D 20 + 12 per 2 floats.
        assert_eq!(
            elementwise_op(Op::Tanh, DType::F32, false).cycles(10),
            20 + 5 * 12
        );
    }

    #[test]
    fn generic_formulas() {
        assert_eq!(elementwise(0, DType::F32, 1), OVERHEAD);
        assert_eq!(elementwise(5, DType::F32, 1), OVERHEAD + 3);
        assert_eq!(elementwise(5, DType::I32, 2), OVERHEAD + 10);
        assert_eq!(multi_worker(60, 6, DType::F32, 1), OVERHEAD + 5);
        assert_eq!(multi_worker(60, 0, DType::I32, 1), OVERHEAD + 60);
        assert_eq!(rows(3, 4, DType::F32), OVERHEAD + 3 * (ROW_OVERHEAD + 2));
    }
}
