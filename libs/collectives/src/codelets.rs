//! The vertices of the ring collectives, one set per element type (`float`, `half`, `int`,
//! `bool`). Every vertex works on one tile's share of the data: `data` holds that tile's
//! columns of every fragment (`fragments × w` elements, fragment-major), `send`/`recv` one
//! fragment's columns (`w`).
//!
//! Which fragment a step touches depends on the replica's ring position `pos` (a replica
//! constant) and on the step counter `step` (a per-tile variable the vertex increments), never
//! on control flow, so that every replica runs the same program:
//! `f = (pos + off + step) mod g` when `up`, else `(pos + off − step) mod g`.
//!
//! | codelet | fields | does |
//! |---|---|---|
//! | `gcl::Slice<T>` | `data`, `pos` → `out` | `out = data[f]` at step 0 |
//! | `gcl::Reduce<T>` | `data`, `recv`, `pos`, `step` (in/out) → `out` | `out = recv ⊕ data[f]`; `step += 1` |
//! | `gcl::Accumulate<T>` | `data`, `buf` (in/out), `pos`, `step` (in/out) | `buf = buf ⊕ data[f]`; `step += 1` |
//! | `gcl::Finish<T>` | `data`, `a`, `b`, `pos` → `out` | `out = (a ⊕ b) ⊕ data[pos]` (`b` ignored unless `with_b`) |
//! | `gcl::Store<T>` | `data` (in/out), `recv`, `pos`, `step` (in/out) | `data[f] = recv`; `step += 1` |
//! | `gcl::Map<T>` | `x` (in/out) | `x = x·x` (`op` 0) or `x = x·scale` (`op` 1) |
//!
//! `⊕` is the operator in state `op` ([`crate::Op::code`]). For `half` each `⊕` computes in f32
//! and rounds its result to f16 (`gcl::Finish` rounds twice), and the buffers that travel are
//! f16, so a ring rounds at every step (`docs/collectives.md`, "Half precision"; host model:
//! [`crate::reference::all_reduce_f16_ring`]).
//!
//! **Workers.** Every vertex is multi-worker: each of the tile's worker contexts takes its share
//! of the fragment's columns ([`Worker::split`]), so a tile's ring step runs on all six
//! contexts at once. Each element is computed as before, with its index in the fragment (the
//! stochastic-rounding key of `half`), so the results do not depend on the split. `step` holds
//! one counter per worker context (`workers_per_tile` elements, all equal): each worker reads
//! and advances its own, so that the workers' writes are disjoint.
//!
//! **Instruction-set levels.** The `float` combinations run at the host's vector width
//! (`poplar_core::isa_dispatch!`), the same bits at every level; a NaN result is stored as the one
//! quiet NaN (`poplar_core::fp::canonical_nan`), since which of two NaN operands `x + y` returns
//! depends on the code the compiler chose for the level.
//!
//! **Cycle estimates** are one worker's share, in worker cycles ([`::codelets::cycles`]). GCL's
//! vertices are not public, so there is no estimator to follow; each is costed as the popops
//! vertex doing the same arithmetic (poplibs' `lib/popops/popopsCycleEstimators.cpp`):
//!
//! | codelet | costed as | worker overhead | per vector |
//! |---|---|---|---|
//! | `gcl::Reduce` | `BinaryOp1D` (add; `bool`: logical and) | 29 (`float`), 26 | the type's add |
//! | `gcl::Accumulate` | `BinaryOp1DInPlace` | 58 | the type's add |
//! | `gcl::Finish` | `BinaryOp1D`, two operations per vector | 29, 26 | twice the add |
//! | `gcl::Slice`, `gcl::Store` | `Copy` (no poplibs estimator) | 23 | 1 per 64 bits |
//! | `gcl::Map` | `UnaryOp1DInPlace` (square) | 55 | the type's square |
//!
//! plus [`FRAGMENT_CYCLES`] for the fragment index (no measurement). The add costs 3 cycles
//! per 2 `float`s or 4 `half`s, 7 per `int`, 5 per 4 `bool`s (`binaryOpPerfInfo`); the estimate
//! cannot see `op`, and min, max and multiply cost the same or close (`float` max 3 per 2,
//! `half` max 4 per 4).

use poplar_core::codelet::*;
use poplar_core::dtype::DType;
use poplar_core::dtype::Element;
use poplar_core::f16;
use poplar_core::fp::canonical_nan;

use ::codelets::cycles::{self, Loop};
use ::codelets::family::{BinaryOp, UnaryOp};

/// Worker cycles to work out the fragment a step touches (`(pos + off ± step) mod g` with
/// every term below `g`: adds, compares and subtracts): no measurement, an assumption.
pub const FRAGMENT_CYCLES: u64 = 10;

/// The loop of one `⊕` over a vector of `dtype`: popops' add (`binaryOpPerfInfo`), or logical
/// and for `bool` (`{5, false, 4}`: 4 elements in 5 cycles).
fn combine_loop(dtype: DType, in_place: bool) -> Loop {
    match dtype {
        DType::Bool => Loop {
            overhead: 0,
            width: 4,
            per_vector: 5,
        },
        _ => cycles::binary(BinaryOp::Add, dtype, in_place),
    }
}

/// One worker's cycles of a combining vertex: `overhead + FRAGMENT_CYCLES + ops ·
/// ceil(ceil(n / workers) / width) · per_vector` with the overhead of `BinaryOp1D` (or 58 for
/// `BinaryOp1DInPlace`).
pub fn combine_cycles(dtype: DType, n: u64, workers: u32, in_place: bool, ops: u64) -> u64 {
    let l = combine_loop(dtype, in_place);
    let overhead = if in_place {
        58
    } else if dtype == DType::F32 {
        cycles::BINARY_MULTI_WORKER_OVERHEAD
    } else {
        26
    };
    Loop {
        overhead: overhead + FRAGMENT_CYCLES,
        per_vector: ops * l.per_vector,
        ..l
    }
    .worker_share(n, workers)
}

/// One worker's cycles of a copying vertex (`gcl::Slice`, `gcl::Store`): `Copy`'s estimate
/// (no poplibs estimator) over the share, plus [`FRAGMENT_CYCLES`].
pub fn copy_cycles(dtype: DType, n: u64, workers: u32) -> u64 {
    FRAGMENT_CYCLES + cycles::copy(dtype).worker_share(n, workers)
}

/// One worker's cycles of `gcl::Map`: `UnaryOp1DInPlace`'s worker (55) and the type's square
/// (`unaryOpInPlacePerfInfo`; 1 per `bool`, which it leaves as it is).
pub fn map_cycles(dtype: DType, n: u64, workers: u32) -> u64 {
    let l = match dtype {
        DType::Bool => Loop {
            overhead: 0,
            width: 8,
            per_vector: 1,
        },
        _ => cycles::unary(UnaryOp::Square, dtype),
    };
    Loop { overhead: 55, ..l }.worker_share(n, workers)
}

/// The range of `worker`'s share of `0..n` clipped to `0..k`.
#[inline]
fn share(worker: Worker, n: usize, k: usize) -> std::ops::Range<usize> {
    let r = worker.split(n);
    r.start.min(k)..r.end.min(k)
}

/// This worker's step counter, checked: `step` has one per worker context.
fn counter(name: &str, step: &[u32], worker: Worker) -> Result<u32, VertexError> {
    if step.len() != worker.count as usize {
        return Err(shape_err(
            name,
            format!(
                "step has {} counters, the tile has {} workers",
                step.len(),
                worker.count
            ),
        ));
    }
    Ok(step[worker.id as usize])
}

/// How an element type combines two values under an operator code ([`crate::Op::code`]).
pub trait Combine: Copy {
    fn combine(op: u32, a: Self, b: Self, i: usize) -> Result<Self, VertexError>;
    /// `out[i] = a[i] ⊕ b[i]` for the common length, the operator chosen once (so the loop
    /// over plain arithmetic types is vectorised). The slices start at element `at` of the
    /// fragment: element `i` combines with index `at + i`.
    fn combine_into(
        op: u32,
        out: &mut [Self],
        a: &[Self],
        b: &[Self],
        at: usize,
    ) -> Result<(), VertexError> {
        for (i, ((o, &x), &y)) in out.iter_mut().zip(a).zip(b).enumerate() {
            *o = Self::combine(op, x, y, at + i)?;
        }
        Ok(())
    }
    /// `acc[i] = acc[i] ⊕ b[i]` for the common length (as [`Combine::combine_into`] with
    /// `out` = `a` = `acc`: the same operands in the same order, so the same bits).
    fn combine_assign(op: u32, acc: &mut [Self], b: &[Self], at: usize) -> Result<(), VertexError> {
        for (i, (o, &y)) in acc.iter_mut().zip(b).enumerate() {
            *o = Self::combine(op, *o, y, at + i)?;
        }
        Ok(())
    }
    fn square(self, i: usize) -> Self;
    fn scale(self, s: f32, i: usize) -> Self;
}

fn bad_op(op: u32, ty: &str) -> VertexError {
    VertexError::new(format!("operator code {op} is not defined for {ty}"))
}

/// The operator chosen once, then one plain loop.
macro_rules! hoisted {
    ($op:expr, $out:expr, $a:expr, $b:expr, $ty:literal, { $($code:literal => |$x:ident, $y:ident| $e:expr),* }) => {{
        match $op {
            $($code => {
                for ((o, &$x), &$y) in $out.iter_mut().zip($a).zip($b) {
                    *o = $e;
                }
            })*
            op => return Err(bad_op(op, $ty)),
        }
        Ok(())
    }};
}

/// As [`hoisted!`], in place: `acc = acc ⊕ b`.
macro_rules! hoisted_assign {
    ($op:expr, $acc:expr, $b:expr, $ty:literal, { $($code:literal => |$x:ident, $y:ident| $e:expr),* }) => {{
        match $op {
            $($code => {
                for (o, &$y) in $acc.iter_mut().zip($b) {
                    let $x = *o;
                    *o = $e;
                }
            })*
            op => return Err(bad_op(op, $ty)),
        }
        Ok(())
    }};
}

poplar_core::isa_dispatch! {
    /// `out = a ⊕ b` for f32 at the active instruction-set level.
    fn f32_combine_into(op: u32, out: &mut [f32], a: &[f32], b: &[f32]) -> Result<(), VertexError> {
        hoisted!(op, out, a, b, "float", {
            0 => |x, y| canonical_nan(x + y), 1 => |x, y| canonical_nan(x * y),
            2 => |x, y| canonical_nan(x.min(y)), 3 => |x, y| canonical_nan(x.max(y))
        })
    }
}

poplar_core::isa_dispatch! {
    /// `acc = acc ⊕ b` for f32 at the active instruction-set level.
    fn f32_combine_assign(op: u32, acc: &mut [f32], b: &[f32]) -> Result<(), VertexError> {
        hoisted_assign!(op, acc, b, "float", {
            0 => |x, y| canonical_nan(x + y), 1 => |x, y| canonical_nan(x * y),
            2 => |x, y| canonical_nan(x.min(y)), 3 => |x, y| canonical_nan(x.max(y))
        })
    }
}

impl Combine for f32 {
    fn combine_into(
        op: u32,
        out: &mut [f32],
        a: &[f32],
        b: &[f32],
        _at: usize,
    ) -> Result<(), VertexError> {
        f32_combine_into(op, out, a, b)
    }
    fn combine_assign(op: u32, acc: &mut [f32], b: &[f32], _at: usize) -> Result<(), VertexError> {
        f32_combine_assign(op, acc, b)
    }
    #[inline]
    fn combine(op: u32, a: f32, b: f32, _i: usize) -> Result<f32, VertexError> {
        Ok(canonical_nan(match op {
            0 => a + b,
            1 => a * b,
            2 => a.min(b),
            3 => a.max(b),
            _ => return Err(bad_op(op, "float")),
        }))
    }
    fn square(self, _i: usize) -> f32 {
        self * self
    }
    fn scale(self, s: f32, _i: usize) -> f32 {
        canonical_nan(self * s)
    }
}

impl Combine for f16 {
    #[inline]
    fn combine(op: u32, a: f16, b: f16, i: usize) -> Result<f16, VertexError> {
        let r = f32::combine(op, a.to_f32(), b.to_f32(), i)?;
        Ok(to_f16(r, i))
    }
    fn square(self, i: usize) -> f16 {
        to_f16(self.to_f32() * self.to_f32(), i)
    }
    fn scale(self, s: f32, i: usize) -> f16 {
        to_f16(self.to_f32() * s, i)
    }
}

impl Combine for i32 {
    fn combine_into(
        op: u32,
        out: &mut [i32],
        a: &[i32],
        b: &[i32],
        _at: usize,
    ) -> Result<(), VertexError> {
        hoisted!(op, out, a, b, "int", {
            0 => |x, y| x.wrapping_add(y), 1 => |x, y| x.wrapping_mul(y),
            2 => |x, y| x.min(y), 3 => |x, y| x.max(y)
        })
    }
    fn combine_assign(op: u32, acc: &mut [i32], b: &[i32], _at: usize) -> Result<(), VertexError> {
        hoisted_assign!(op, acc, b, "int", {
            0 => |x, y| x.wrapping_add(y), 1 => |x, y| x.wrapping_mul(y),
            2 => |x, y| x.min(y), 3 => |x, y| x.max(y)
        })
    }
    #[inline]
    fn combine(op: u32, a: i32, b: i32, _i: usize) -> Result<i32, VertexError> {
        Ok(match op {
            0 => a.wrapping_add(b),
            1 => a.wrapping_mul(b),
            2 => a.min(b),
            3 => a.max(b),
            _ => return Err(bad_op(op, "int")),
        })
    }
    fn square(self, _i: usize) -> i32 {
        self.wrapping_mul(self)
    }
    fn scale(self, s: f32, _i: usize) -> i32 {
        (self as f32 * s) as i32
    }
}

impl Combine for bool {
    #[inline]
    fn combine(op: u32, a: bool, b: bool, _i: usize) -> Result<bool, VertexError> {
        Ok(match op {
            4 => a && b,
            5 => a || b,
            _ => return Err(bad_op(op, "bool")),
        })
    }
    fn square(self, _i: usize) -> bool {
        self
    }
    fn scale(self, _s: f32, _i: usize) -> bool {
        self
    }
}

/// The fragment a step touches (see the module notes).
#[inline]
pub fn fragment(pos: u32, off: u32, step: u32, g: u32, up: bool) -> usize {
    let g = g.max(1);
    let s = step % g;
    let f = if up {
        (pos % g + off % g + s) % g
    } else {
        (pos % g + off % g + g - s) % g
    };
    f as usize
}

fn shape_err(name: &str, what: String) -> VertexError {
    VertexError::new(format!("{name}: {what}"))
}

/// The elements of fragment `f` in `data`, checked: `data` holds `g` fragments of `w`
/// elements (the padded layout) or fewer (a block reduced in place, whose last fragments are
/// shorter or empty: fragment `f` is `data[min(f·w, L) .. min((f+1)·w, L)]`).
fn frag<'d, T>(
    name: &str,
    data: &'d [T],
    f: usize,
    w: usize,
    g: u32,
) -> Result<&'d [T], VertexError> {
    let l = data.len();
    if l > w * g as usize {
        return Err(shape_err(
            name,
            format!("data has {l} elements, more than {g} fragments of {w}"),
        ));
    }
    Ok(&data[(f * w).min(l)..((f + 1) * w).min(l)])
}

macro_rules! gcl_codelets {
    ($($t:ty, $ty:literal, $slice:ident $sn:literal, $reduce:ident $rn:literal, $acc:ident $an:literal, $finish:ident $fn_:literal, $place:ident $pn:literal, $map:ident $mn:literal;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`gcl::Slice<", $ty, ">`: `out = data[f]` at step 0.")]
            pub struct $slice as $sn, multi_worker {
                data: Input<Vector<$t>>,
                pos: Input<u32>,
                out: Output<Vector<$t>>,
                g: State<u32>,
                off: State<u32>,
                up: State<bool>,
            }
        }

        impl Vertex for $slice<'_> {
            fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
                let w = self.out.len();
                let f = fragment(self.pos, self.off, 0, self.g, self.up);
                let src = frag($sn, &self.data, f, w, self.g)?;
                let r = share(worker, w, src.len());
                self.out[r.clone()].copy_from_slice(&src[r]);
                Ok(())
            }
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(copy_cycles(<$t as Element>::DTYPE, ctx.elements(Self::out), ctx.workers))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`gcl::Reduce<", $ty, ">`: `out = recv ⊕ data[f]`, then `step += 1`.")]
            pub struct $reduce as $rn, multi_worker {
                data: Input<Vector<$t>>,
                recv: Input<Vector<$t>>,
                pos: Input<u32>,
                step: InOut<Vector<u32>>,
                out: Output<Vector<$t>>,
                g: State<u32>,
                off: State<u32>,
                up: State<bool>,
                op: State<u32>,
            }
        }

        impl Vertex for $reduce<'_> {
            fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
                const NAME: &str = $rn;
                let w = self.out.len();
                if self.recv.len() != w {
                    return Err(shape_err(NAME, format!("recv has {} elements, out {w}", self.recv.len())));
                }
                let step = counter(NAME, &self.step, worker)?;
                let f = fragment(self.pos, self.off, step, self.g, self.up);
                let own = frag(NAME, &self.data, f, w, self.g)?;
                let k = own.len();
                let r = share(worker, w, k);
                <$t as Combine>::combine_into(self.op, &mut self.out[r.clone()], &self.recv[r.clone()], &own[r.clone()], r.start)?;
                // Past a short fragment's end: nothing to combine (never stored).
                let rest = share(worker, w, w);
                let rest = rest.start.max(k)..rest.end.max(k);
                self.out[rest.clone()].copy_from_slice(&self.recv[rest]);
                self.step[worker.id as usize] = step.wrapping_add(1);
                Ok(())
            }
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let n = ctx.elements(Self::out);
                Some(combine_cycles(<$t as Element>::DTYPE, n, ctx.workers, false, 1))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`gcl::Accumulate<", $ty, ">`: `buf = buf ⊕ data[f]`, then `step += 1` (the reduce-scatter step that keeps its fragment where it arrived).")]
            pub struct $acc as $an, multi_worker {
                data: Input<Vector<$t>>,
                buf: InOut<Vector<$t>>,
                pos: Input<u32>,
                step: InOut<Vector<u32>>,
                g: State<u32>,
                off: State<u32>,
                up: State<bool>,
                op: State<u32>,
            }
        }

        impl Vertex for $acc<'_> {
            fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
                const NAME: &str = $an;
                let w = self.buf.len();
                let step = counter(NAME, &self.step, worker)?;
                let f = fragment(self.pos, self.off, step, self.g, self.up);
                let own = frag(NAME, &self.data, f, w, self.g)?;
                // Past a short fragment's end: nothing to combine (never stored).
                let r = share(worker, w, own.len());
                <$t as Combine>::combine_assign(self.op, &mut self.buf[r.clone()], &own[r.clone()], r.start)?;
                self.step[worker.id as usize] = step.wrapping_add(1);
                Ok(())
            }
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let n = ctx.elements(Self::buf);
                Some(combine_cycles(<$t as Element>::DTYPE, n, ctx.workers, true, 1))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`gcl::Finish<", $ty, ">`: `out = (a ⊕ b) ⊕ data[pos]`, `b` possibly empty.")]
            pub struct $finish as $fn_, multi_worker {
                data: Input<Vector<$t>>,
                a: Input<Vector<$t>>,
                b: Input<Vector<$t>>,
                pos: Input<u32>,
                out: Output<Vector<$t>>,
                g: State<u32>,
                op: State<u32>,
                with_b: State<bool>,
            }
        }

        impl Vertex for $finish<'_> {
            fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
                const NAME: &str = $fn_;
                let w = self.out.len();
                if self.a.len() != w || (self.with_b && self.b.len() != w) {
                    return Err(shape_err(NAME, format!("a has {}, b {} elements, out {w}", self.a.len(), self.b.len())));
                }
                let f = fragment(self.pos, 0, 0, self.g, true);
                let own = frag(NAME, &self.data, f, w, self.g)?;
                let op = self.op;
                for i in worker.split(w) {
                    let mut x = self.a[i];
                    if self.with_b {
                        x = <$t as Combine>::combine(op, x, self.b[i], i)?;
                    }
                    self.out[i] = match own.get(i) {
                        Some(&d) => <$t as Combine>::combine(op, x, d, i)?,
                        None => x,
                    };
                }
                Ok(())
            }
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                let n = ctx.elements(Self::out);
                Some(combine_cycles(<$t as Element>::DTYPE, n, ctx.workers, false, 2))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`gcl::Store<", $ty, ">`: `data[f] = recv`, then `step += 1`.")]
            pub struct $place as $pn, multi_worker {
                data: InOut<Vector<$t>>,
                recv: Input<Vector<$t>>,
                pos: Input<u32>,
                step: InOut<Vector<u32>>,
                g: State<u32>,
                off: State<u32>,
                up: State<bool>,
            }
        }

        impl Vertex for $place<'_> {
            fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
                const NAME: &str = $pn;
                let w = self.recv.len();
                let l = self.data.len();
                if l > w * self.g as usize {
                    return Err(shape_err(NAME, format!(
                        "data has {l} elements, more than {} fragments of {w}", self.g
                    )));
                }
                let step = counter(NAME, &self.step, worker)?;
                let f = fragment(self.pos, self.off, step, self.g, self.up);
                let (a, b) = ((f * w).min(l), ((f + 1) * w).min(l));
                let r = share(worker, w, b - a);
                self.data[a + r.start..a + r.end].copy_from_slice(&self.recv[r]);
                self.step[worker.id as usize] = step.wrapping_add(1);
                Ok(())
            }
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(copy_cycles(<$t as Element>::DTYPE, ctx.elements(Self::recv), ctx.workers))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`gcl::Map<", $ty, ">`: `x = x·x` (`op` 0) or `x = x·scale` (`op` 1).")]
            pub struct $map as $mn, multi_worker {
                x: InOut<Vector<$t>>,
                op: State<u32>,
                scale: State<f32>,
            }
        }

        impl Vertex for $map<'_> {
            fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
                let (op, s) = (self.op, self.scale);
                let r = worker.split(self.x.len());
                for (i, x) in self.x[r.clone()].iter_mut().enumerate() {
                    let i = r.start + i;
                    *x = if op == 0 { x.square(i) } else { x.scale(s, i) };
                }
                Ok(())
            }
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(map_cycles(<$t as Element>::DTYPE, ctx.elements(Self::x), ctx.workers))
            }
        }
    )*};
}

gcl_codelets! {
    f32, "float", SliceF32 "gcl::Slice<float>", ReduceF32 "gcl::Reduce<float>",
        AccumulateF32 "gcl::Accumulate<float>",
        FinishF32 "gcl::Finish<float>", StoreF32 "gcl::Store<float>", MapF32 "gcl::Map<float>";
    f16, "half", SliceF16 "gcl::Slice<half>", ReduceF16 "gcl::Reduce<half>",
        AccumulateF16 "gcl::Accumulate<half>",
        FinishF16 "gcl::Finish<half>", StoreF16 "gcl::Store<half>", MapF16 "gcl::Map<half>";
    i32, "int", SliceI32 "gcl::Slice<int>", ReduceI32 "gcl::Reduce<int>",
        AccumulateI32 "gcl::Accumulate<int>",
        FinishI32 "gcl::Finish<int>", StoreI32 "gcl::Store<int>", MapI32 "gcl::Map<int>";
    bool, "bool", SliceBool "gcl::Slice<bool>", ReduceBool "gcl::Reduce<bool>",
        AccumulateBool "gcl::Accumulate<bool>",
        FinishBool "gcl::Finish<bool>", StoreBool "gcl::Store<bool>", MapBool "gcl::Map<bool>";
}

/// The template argument of an element type (`float`, `half`, `int`, `bool`), if the
/// collectives support it.
pub fn type_name(dtype: DType) -> Option<&'static str> {
    match dtype {
        DType::F32 => Some("float"),
        DType::F16 => Some("half"),
        DType::I32 => Some("int"),
        DType::Bool => Some("bool"),
        _ => None,
    }
}
