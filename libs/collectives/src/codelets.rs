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
//! [`crate::reference::all_reduce_f16_ring`]). Cycle estimates: the standard element-wise formula of
//! [`::codelets::cycles`] over the elements written.

use poplar::codelet::*;
use poplar::{f16, DType, Element};

use ::codelets::cycles;

/// How an element type combines two values under an operator code ([`crate::Op::code`]).
pub trait Combine: Copy {
    fn combine(op: u32, a: Self, b: Self, i: usize) -> Result<Self, VertexError>;
    /// `out[i] = a[i] ⊕ b[i]` for the common length, the operator chosen once (so the loop
    /// over plain arithmetic types is vectorised).
    fn combine_into(op: u32, out: &mut [Self], a: &[Self], b: &[Self]) -> Result<(), VertexError> {
        for (i, ((o, &x), &y)) in out.iter_mut().zip(a).zip(b).enumerate() {
            *o = Self::combine(op, x, y, i)?;
        }
        Ok(())
    }
    /// `acc[i] = acc[i] ⊕ b[i]` for the common length (as [`Combine::combine_into`] with
    /// `out` = `a` = `acc`: the same operands in the same order, so the same bits).
    fn combine_assign(op: u32, acc: &mut [Self], b: &[Self]) -> Result<(), VertexError> {
        for (i, (o, &y)) in acc.iter_mut().zip(b).enumerate() {
            *o = Self::combine(op, *o, y, i)?;
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

impl Combine for f32 {
    fn combine_into(op: u32, out: &mut [f32], a: &[f32], b: &[f32]) -> Result<(), VertexError> {
        hoisted!(op, out, a, b, "float", {
            0 => |x, y| x + y, 1 => |x, y| x * y, 2 => |x, y| x.min(y), 3 => |x, y| x.max(y)
        })
    }
    fn combine_assign(op: u32, acc: &mut [f32], b: &[f32]) -> Result<(), VertexError> {
        hoisted_assign!(op, acc, b, "float", {
            0 => |x, y| x + y, 1 => |x, y| x * y, 2 => |x, y| x.min(y), 3 => |x, y| x.max(y)
        })
    }
    #[inline]
    fn combine(op: u32, a: f32, b: f32, _i: usize) -> Result<f32, VertexError> {
        Ok(match op {
            0 => a + b,
            1 => a * b,
            2 => a.min(b),
            3 => a.max(b),
            _ => return Err(bad_op(op, "float")),
        })
    }
    fn square(self, _i: usize) -> f32 {
        self * self
    }
    fn scale(self, s: f32, _i: usize) -> f32 {
        self * s
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
    fn combine_into(op: u32, out: &mut [i32], a: &[i32], b: &[i32]) -> Result<(), VertexError> {
        hoisted!(op, out, a, b, "int", {
            0 => |x, y| x.wrapping_add(y), 1 => |x, y| x.wrapping_mul(y),
            2 => |x, y| x.min(y), 3 => |x, y| x.max(y)
        })
    }
    fn combine_assign(op: u32, acc: &mut [i32], b: &[i32]) -> Result<(), VertexError> {
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
        poplar::codelet! {
            #[doc = concat!("`gcl::Slice<", $ty, ">`: `out = data[f]` at step 0.")]
            pub struct $slice as $sn {
                data: Input<Vector<$t>>,
                pos: Input<u32>,
                out: Output<Vector<$t>>,
                g: State<u32>,
                off: State<u32>,
                up: State<bool>,
            }
        }

        impl Vertex for $slice<'_> {
            fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
                let w = self.out.len();
                let f = fragment(self.pos, self.off, 0, self.g, self.up);
                let src = frag($sn, &self.data, f, w, self.g)?;
                self.out[..src.len()].copy_from_slice(src);
                Ok(())
            }
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::elementwise(ctx.elements(Self::out), <$t as Element>::DTYPE, 1))
            }
        }

        poplar::codelet! {
            #[doc = concat!("`gcl::Reduce<", $ty, ">`: `out = recv ⊕ data[f]`, then `step += 1`.")]
            pub struct $reduce as $rn {
                data: Input<Vector<$t>>,
                recv: Input<Vector<$t>>,
                pos: Input<u32>,
                step: InOut<u32>,
                out: Output<Vector<$t>>,
                g: State<u32>,
                off: State<u32>,
                up: State<bool>,
                op: State<u32>,
            }
        }

        impl Vertex for $reduce<'_> {
            fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
                const NAME: &str = $rn;
                let w = self.out.len();
                if self.recv.len() != w {
                    return Err(shape_err(NAME, format!("recv has {} elements, out {w}", self.recv.len())));
                }
                let f = fragment(self.pos, self.off, *self.step, self.g, self.up);
                let own = frag(NAME, &self.data, f, w, self.g)?;
                let k = own.len();
                <$t as Combine>::combine_into(self.op, &mut self.out[..k], &self.recv[..k], own)?;
                // Past a short fragment's end: nothing to combine (never stored).
                self.out[k..].copy_from_slice(&self.recv[k..]);
                *self.step = self.step.wrapping_add(1);
                Ok(())
            }
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::elementwise(ctx.elements(Self::out), <$t as Element>::DTYPE, 1))
            }
        }

        poplar::codelet! {
            #[doc = concat!("`gcl::Accumulate<", $ty, ">`: `buf = buf ⊕ data[f]`, then `step += 1` (the reduce-scatter step that keeps its fragment where it arrived).")]
            pub struct $acc as $an {
                data: Input<Vector<$t>>,
                buf: InOut<Vector<$t>>,
                pos: Input<u32>,
                step: InOut<u32>,
                g: State<u32>,
                off: State<u32>,
                up: State<bool>,
                op: State<u32>,
            }
        }

        impl Vertex for $acc<'_> {
            fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
                const NAME: &str = $an;
                let w = self.buf.len();
                let f = fragment(self.pos, self.off, *self.step, self.g, self.up);
                let own = frag(NAME, &self.data, f, w, self.g)?;
                // Past a short fragment's end: nothing to combine (never stored).
                <$t as Combine>::combine_assign(self.op, &mut self.buf[..own.len()], own)?;
                *self.step = self.step.wrapping_add(1);
                Ok(())
            }
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::elementwise(ctx.elements(Self::buf), <$t as Element>::DTYPE, 1))
            }
        }

        poplar::codelet! {
            #[doc = concat!("`gcl::Finish<", $ty, ">`: `out = (a ⊕ b) ⊕ data[pos]`, `b` possibly empty.")]
            pub struct $finish as $fn_ {
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
            fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
                const NAME: &str = $fn_;
                let w = self.out.len();
                if self.a.len() != w || (self.with_b && self.b.len() != w) {
                    return Err(shape_err(NAME, format!("a has {}, b {} elements, out {w}", self.a.len(), self.b.len())));
                }
                let f = fragment(self.pos, 0, 0, self.g, true);
                let own = frag(NAME, &self.data, f, w, self.g)?;
                let op = self.op;
                for i in 0..w {
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
                Some(cycles::elementwise(ctx.elements(Self::out), <$t as Element>::DTYPE, 2))
            }
        }

        poplar::codelet! {
            #[doc = concat!("`gcl::Store<", $ty, ">`: `data[f] = recv`, then `step += 1`.")]
            pub struct $place as $pn {
                data: InOut<Vector<$t>>,
                recv: Input<Vector<$t>>,
                pos: Input<u32>,
                step: InOut<u32>,
                g: State<u32>,
                off: State<u32>,
                up: State<bool>,
            }
        }

        impl Vertex for $place<'_> {
            fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
                const NAME: &str = $pn;
                let w = self.recv.len();
                let l = self.data.len();
                if l > w * self.g as usize {
                    return Err(shape_err(NAME, format!(
                        "data has {l} elements, more than {} fragments of {w}", self.g
                    )));
                }
                let f = fragment(self.pos, self.off, *self.step, self.g, self.up);
                let (a, b) = ((f * w).min(l), ((f + 1) * w).min(l));
                self.data[a..b].copy_from_slice(&self.recv[..b - a]);
                *self.step = self.step.wrapping_add(1);
                Ok(())
            }
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::elementwise(ctx.elements(Self::recv), <$t as Element>::DTYPE, 1))
            }
        }

        poplar::codelet! {
            #[doc = concat!("`gcl::Map<", $ty, ">`: `x = x·x` (`op` 0) or `x = x·scale` (`op` 1).")]
            pub struct $map as $mn {
                x: InOut<Vector<$t>>,
                op: State<u32>,
                scale: State<f32>,
            }
        }

        impl Vertex for $map<'_> {
            fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
                let (op, s) = (self.op, self.scale);
                for (i, x) in self.x.iter_mut().enumerate() {
                    *x = if op == 0 { x.square(i) } else { x.scale(s, i) };
                }
                Ok(())
            }
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::elementwise(ctx.elements(Self::x), <$t as Element>::DTYPE, 1))
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
