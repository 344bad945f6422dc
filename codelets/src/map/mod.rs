//! The fused element-wise codelets `Map<T>` and `MapInPlace<T>`: one vertex evaluates a whole
//! expression (a small register program in its vertex state, built by `popops::map`) over its
//! elements, instead of one vertex and one temporary tensor per operation.
//!
//! **Evaluation.** The program runs block-wise: [`BLOCK`] elements at a time, each instruction
//! one tight loop over the block's lanes (compiled for the host's vector width with
//! `poplar_core::isa_dispatch!`, the same bits at every level), the registers block-local
//! arrays of 32-bit lanes. A lane holds an `f32` (its bits), an `f16` value (as the `f32` it
//! converts to exactly), an `i32`, a `u32`, a `u8`/`u16` (zero-extended) or a `bool` (0 or 1).
//!
//! **Arithmetic.** As the single-op codelets ([`crate::arith`], [`crate::binary`]): `f32`
//! computes in itself; `half` computes each operation in `f32` from its `f16` operands and
//! rounds the result to `f16` once, with [`poplar_core::codelet::to_f16`] (so a fused
//! expression gives the bits of the same operations applied one by one, each result stored as
//! a `half` tensor); integer arithmetic wraps. Every floating-point result that is NaN is the
//! one quiet NaN (as [`poplar_core::fp::canonical_nan`] makes it, but on the bits). The semantics of each operation are in
//! [`Op`]; `docs/popops.md` has the full table.
//!
//! **Fields.** `prog: State<Vector<u32>>` (the encoded [`Program`]); one input list per
//! element type, `in_f32`, `in_f16`, `in_i32`, `in_u32`, `in_u8`, `in_u16`, `in_bool`
//! (`Input<VectorList<…>>`, each sub-vector as long as `out` or of one element, which is
//! broadcast); `out: Output<Vector<T>>` (`MapInPlace<T>`: `InOut`, which the program may also
//! read with [`LOAD_OUT`]). `T` is `float`, `half`, `int`, `unsigned`, `unsigned char`,
//! `unsigned short` or `bool`.
//!
//! **Cycles.** `popops::map` sets each vertex's estimate from the program
//! ([`crate::cycles::map`]); the codelet's own estimate, used only if none is set, charges
//! every instruction 4 cycles per element ([`crate::cycles::map_fallback`]).

use poplar_core::codelet::*;
use poplar_core::dtype::DType;
use poplar_core::f16;

/// Elements evaluated per block (per instruction loop).
pub const BLOCK: usize = 1024;

/// The `a` operand of [`Op::Load`] that names the in-place output (`MapInPlace<T>`'s `out`).
pub const LOAD_OUT: u32 = 7;

/// Words of one encoded instruction.
pub const INSTR_WORDS: usize = 5;

/// Words of the program header: format version, registers, result register, instructions.
pub const HEADER_WORDS: usize = 4;

/// The format version in word 0 of an encoded program.
pub const VERSION: u32 = 1;

/// The element types of lanes and fields, by code (`ty` of an [`Instr`]; list order of the
/// `in_*` fields).
pub const TYPES: [DType; 7] = [
    DType::F32,
    DType::F16,
    DType::I32,
    DType::U32,
    DType::U8,
    DType::U16,
    DType::Bool,
];

/// The code of `dtype` in [`TYPES`].
pub const fn type_code(dtype: DType) -> u32 {
    match dtype {
        DType::F32 => 0,
        DType::F16 => 1,
        DType::I32 => 2,
        DType::U32 => 3,
        DType::U8 => 4,
        DType::U16 => 5,
        DType::Bool => 6,
    }
}

macro_rules! ops {
    ($($(#[$m:meta])* $name:ident = $code:literal, $arity:literal;)*) => {
        /// An operation of the register program. Floating-point operations are on `f32` and
        /// `half`; integer ones on `int` and `unsigned` unless stated.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Op {
            $($(#[$m])* $name = $code,)*
        }

        impl Op {
            /// Every operation.
            pub const ALL: &'static [Op] = &[$(Op::$name),*];

            /// The operation of code `c`.
            pub fn from_code(c: u32) -> Option<Op> {
                match c {
                    $($code => Some(Op::$name),)*
                    _ => None,
                }
            }

            /// Operands it reads from registers (0 for loads and constants).
            pub const fn arity(self) -> usize {
                match self {
                    $(Op::$name => $arity,)*
                }
            }
        }
    };
}

ops! {
    /// `dst = input a[b]` (`a` a type code, or [`LOAD_OUT`]), converted to a lane; an input
    /// of one element is broadcast.
    Load = 0, 0;
    /// `dst = a` (the lane's bits).
    Const = 1, 0;
    /// `dst = cast(a)` from type `ty` to type `to`: float → integer truncates toward zero and
    /// saturates (NaN → 0); integer → integer wraps (keeps the low bits); anything → `bool` is
    /// `x != 0` (NaN → true); `bool` → number is 0 or 1; → `half` rounds once.
    Cast = 2, 1;
    /// `|x|` (integers wrap: `|i32::MIN| = i32::MIN`).
    Abs = 10, 1;
    /// `-1`, `0` or `1` by sign; floats keep ±0 and NaN.
    Sign = 11, 1;
    /// `-x` (wrapping for `int`).
    Neg = 12, 1;
    Sqrt = 13, 1;
    /// `1 / sqrt(x)`, two roundings.
    Rsqrt = 14, 1;
    Cbrt = 15, 1;
    Exp = 16, 1;
    Exp2 = 17, 1;
    Expm1 = 18, 1;
    /// Natural logarithm.
    Log = 19, 1;
    Log1p = 20, 1;
    Sin = 21, 1;
    Cos = 22, 1;
    Tan = 23, 1;
    Tanh = 24, 1;
    /// `1 / (1 + exp(-x))` for `x ≥ 0`, `exp(x) / (1 + exp(x))` below (so that a small result
    /// is not lost to an overflowing `exp(-x)`), evaluated in f32 in that order.
    Sigmoid = 25, 1;
    /// The error function (series in f64, rounded once).
    Erf = 26, 1;
    Floor = 27, 1;
    Ceil = 28, 1;
    /// To nearest, ties away from zero.
    Round = 29, 1;
    Trunc = 30, 1;
    /// → `bool`.
    IsFinite = 31, 1;
    /// → `bool`.
    IsInf = 32, 1;
    /// → `bool`.
    IsNan = 33, 1;
    /// `bool` only.
    LogicalNot = 34, 1;
    /// Integers only.
    BitwiseNot = 35, 1;
    /// `x * x` (wrapping for integers).
    Square = 36, 1;
    /// `1 / x` (floats).
    Inverse = 37, 1;
    /// Wrapping for integers.
    Add = 50, 2;
    Sub = 51, 2;
    Mul = 52, 2;
    /// Integers: `x / 0 = 0`, `i32::MIN / -1 = i32::MIN` (our definition; the chip leaves
    /// it undefined).
    Div = 53, 2;
    /// Floats: `powf`.
    Pow = 54, 2;
    /// Floats: `fmod` (sign of `x`); integers: `x % 0 = 0`, otherwise Rust's `%`.
    Rem = 55, 2;
    /// Floats: a NaN operand yields the other one (`f32::min`).
    Min = 56, 2;
    Max = 57, 2;
    /// Floats: `atan2(x, y)` with `x` the ordinate.
    Atan2 = 58, 2;
    /// → `bool`; IEEE comparisons (NaN compares unequal to everything).
    Eq = 59, 2;
    Ne = 60, 2;
    Lt = 61, 2;
    Le = 62, 2;
    Gt = 63, 2;
    Ge = 64, 2;
    /// `bool` only.
    LogicalAnd = 65, 2;
    LogicalOr = 66, 2;
    /// Integers only.
    BitAnd = 67, 2;
    BitOr = 68, 2;
    BitXor = 69, 2;
    /// Integers: shift by `y mod 32`.
    Shl = 70, 2;
    /// Integers: shift by `y mod 32`, arithmetic for `int`, logical for `unsigned`.
    Shr = 71, 2;
    /// `min(max(x, lo), hi)` with `Min`/`Max`'s rules.
    Clamp = 90, 3;
    /// `c ? a : b` with `c` a `bool`.
    Select = 91, 3;
}

/// One instruction: `dst = op(a, b, c)` on lanes of type `ty` (`to`: the result type of a
/// [`Op::Cast`]). For [`Op::Load`] `a` is the field and `b` the sub-vector; for
/// [`Op::Const`] `a` holds the lane bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Instr {
    pub op: Op,
    pub ty: DType,
    pub to: DType,
    pub dst: u32,
    pub a: u32,
    pub b: u32,
    pub c: u32,
}

/// A register program: instructions over `regs` registers, the value of register `result`
/// (of type `out`) written to the vertex's output.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Program {
    pub regs: u32,
    pub result: u32,
    pub out: DType,
    pub instrs: Vec<Instr>,
}

/// The type an operation's result has, if `op` is defined on operands of type `ty` (`to`
/// for casts and loads).
pub fn result_type(op: Op, ty: DType, to: DType) -> Option<DType> {
    use DType::*;
    use Op::*;
    let float = matches!(ty, F32 | F16);
    let int = matches!(ty, I32 | U32);
    let ok = |c: bool, t: DType| if c { Some(t) } else { None };
    match op {
        Load | Const => Some(ty),
        Cast => Some(to),
        Abs | Square | Sign => ok(float || int, ty),
        Neg => ok(float || ty == I32, ty),
        Sqrt | Rsqrt | Cbrt | Exp | Exp2 | Expm1 | Log | Log1p | Sin | Cos | Tan | Tanh
        | Sigmoid | Erf | Floor | Ceil | Round | Trunc | Inverse => ok(float, ty),
        IsFinite | IsInf | IsNan => ok(float, Bool),
        LogicalNot | LogicalAnd | LogicalOr => ok(ty == Bool, Bool),
        BitwiseNot | BitAnd | BitOr | BitXor | Shl | Shr => ok(int, ty),
        Add | Sub | Mul | Div | Rem | Pow | Min | Max | Clamp => ok(float || int, ty),
        Atan2 => ok(float, ty),
        Eq | Ne => ok(float || int || ty == Bool, Bool),
        Lt | Le | Gt | Ge => ok(float || int, Bool),
        Select => Some(ty),
    }
}

impl Program {
    /// The program as vertex state: the header, then [`INSTR_WORDS`] words per instruction.
    pub fn encode(&self) -> Vec<u32> {
        let mut w = vec![VERSION, self.regs, self.result, self.instrs.len() as u32];
        for i in &self.instrs {
            w.push(i.op as u32 | type_code(i.ty) << 8 | type_code(i.to) << 16);
            w.extend([i.dst, i.a, i.b, i.c]);
        }
        w
    }

    /// Decodes and checks an encoded program (registers in range, operations defined on their
    /// types, every register written before it is read, the result of type `out`).
    pub fn decode(words: &[u32], out: DType) -> Result<Program, VertexError> {
        let err = |m: String| VertexError::new(format!("Map: bad program: {m}"));
        if words.len() < HEADER_WORDS || words[0] != VERSION {
            return Err(err("missing or unknown header".into()));
        }
        let (regs, result, n) = (words[1], words[2], words[3] as usize);
        if words.len() != HEADER_WORDS + n * INSTR_WORDS {
            return Err(err(format!("{} words for {n} instructions", words.len())));
        }
        let mut types: Vec<Option<DType>> = vec![None; regs as usize];
        let mut instrs = Vec::with_capacity(n);
        for (k, w) in words[HEADER_WORDS..].chunks_exact(INSTR_WORDS).enumerate() {
            let op = Op::from_code(w[0] & 0xff).ok_or_else(|| err(format!("op {k}")))?;
            let ty = *TYPES
                .get((w[0] >> 8 & 0xff) as usize)
                .ok_or_else(|| err(format!("type of {k}")))?;
            let to = *TYPES
                .get((w[0] >> 16 & 0xff) as usize)
                .ok_or_else(|| err(format!("cast type of {k}")))?;
            let ins = Instr {
                op,
                ty,
                to,
                dst: w[1],
                a: w[2],
                b: w[3],
                c: w[4],
            };
            let srcs = [ins.a, ins.b, ins.c];
            for (j, &r) in srcs[..op.arity()].iter().enumerate() {
                let t = types.get(r as usize).copied().flatten();
                // Select's condition is a bool; every other operand has type `ty`.
                let want = if op == Op::Select && j == 2 {
                    DType::Bool
                } else {
                    ty
                };
                if t != Some(want) || r == ins.dst {
                    return Err(err(format!("operand {j} of instruction {k} ({op:?})")));
                }
            }
            let rt = result_type(op, ty, to)
                .ok_or_else(|| err(format!("{op:?} is not defined on {ty}")))?;
            if op == Op::Load && ins.a != LOAD_OUT && TYPES.get(ins.a as usize) != Some(&ty) {
                return Err(err(format!("load {k} of field {} as {ty}", ins.a)));
            }
            *types
                .get_mut(ins.dst as usize)
                .ok_or_else(|| err(format!("register {} of {k}", ins.dst)))? = Some(rt);
            instrs.push(ins);
        }
        if types.get(result as usize).copied().flatten() != Some(out) {
            return Err(err(format!("the result is not a {out}")));
        }
        Ok(Program {
            regs,
            result,
            out,
            instrs,
        })
    }
}

/// One input vector of a `Map` vertex.
#[derive(Debug, Clone, Copy)]
pub enum Src<'a> {
    F32(&'a [f32]),
    F16(&'a [f16]),
    I32(&'a [i32]),
    U32(&'a [u32]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    Bool(&'a [bool]),
}

impl Src<'_> {
    fn len(&self) -> usize {
        match self {
            Src::F32(v) => v.len(),
            Src::F16(v) => v.len(),
            Src::I32(v) => v.len(),
            Src::U32(v) => v.len(),
            Src::U8(v) => v.len(),
            Src::U16(v) => v.len(),
            Src::Bool(v) => v.len(),
        }
    }

    fn type_code(&self) -> u32 {
        type_code(match self {
            Src::F32(_) => DType::F32,
            Src::F16(_) => DType::F16,
            Src::I32(_) => DType::I32,
            Src::U32(_) => DType::U32,
            Src::U8(_) => DType::U8,
            Src::U16(_) => DType::U16,
            Src::Bool(_) => DType::Bool,
        })
    }
}

/// The inputs of a `Map` program: per type code ([`TYPES`]), the vectors a [`Op::Load`]
/// indexes.
#[derive(Debug, Clone, Default)]
pub struct Inputs<'a> {
    pub lists: [Vec<Src<'a>>; 7],
}

impl<'a> Inputs<'a> {
    /// Adds `src` at the end of its type's list.
    pub fn push(&mut self, src: Src<'a>) {
        self.lists[src.type_code() as usize].push(src);
    }
}

/// Fills `dst` with `src[at..at + dst.len()]` as lanes, or with `src[0]` if `src` has one
/// element.
#[inline]
fn load_lanes<T: Copy>(dst: &mut [u32], src: &[T], at: usize, lane: impl Fn(T) -> u32) {
    if src.len() == 1 {
        dst.fill(lane(src[0]));
    } else {
        let n = dst.len();
        for (d, &s) in dst.iter_mut().zip(&src[at..at + n]) {
            *d = lane(s);
        }
    }
}

/// An element type of a `Map` output: how lanes are read from and stored into it.
pub trait Lane: Copy {
    fn to_lane(self) -> u32;
    fn from_lane(l: u32) -> Self;
}

macro_rules! lanes {
    ($($t:ty: |$x:ident| $to:expr, |$l:ident| $from:expr;)*) => {$(
        impl Lane for $t {
            #[inline(always)]
            fn to_lane(self) -> u32 {
                let $x = self;
                $to
            }
            #[inline(always)]
            fn from_lane($l: u32) -> $t {
                $from
            }
        }
    )*};
}

lanes! {
    f32: |x| x.to_bits(), |l| f32::from_bits(l);
    f16: |x| x.to_f32().to_bits(), |l| f16::from_f32(f32::from_bits(l));
    i32: |x| x as u32, |l| l as i32;
    u32: |x| x, |l| l;
    u8: |x| u32::from(x), |l| l as u8;
    u16: |x| u32::from(x), |l| l as u16;
    bool: |x| u32::from(x), |l| l != 0;
}

fn check_len(field: &str, i: usize, len: usize, n: usize) -> Result<(), VertexError> {
    if len == n || len == 1 {
        Ok(())
    } else {
        Err(VertexError::new(format!(
            "Map: sub-vector {i} of field '{field}' has {len} elements but 'out' has {n}"
        )))
    }
}

impl Inputs<'_> {
    fn check(&self, n: usize) -> Result<(), VertexError> {
        const FIELDS: [&str; 7] = [
            "in_f32", "in_f16", "in_i32", "in_u32", "in_u8", "in_u16", "in_bool",
        ];
        for (k, list) in self.lists.iter().enumerate() {
            for (i, v) in list.iter().enumerate() {
                check_len(FIELDS[k], i, v.len(), n)?;
            }
        }
        Ok(())
    }

    fn load(&self, field: u32, i: usize, dst: &mut [u32], at: usize) -> Result<(), VertexError> {
        let src = self
            .lists
            .get(field as usize)
            .and_then(|l| l.get(i))
            .ok_or_else(|| VertexError::new(format!("Map: no input {i} of type code {field}")))?;
        match *src {
            Src::F32(v) => load_lanes(dst, v, at, Lane::to_lane),
            Src::F16(v) => load_lanes(dst, v, at, Lane::to_lane),
            Src::I32(v) => load_lanes(dst, v, at, Lane::to_lane),
            Src::U32(v) => load_lanes(dst, v, at, Lane::to_lane),
            Src::U8(v) => load_lanes(dst, v, at, Lane::to_lane),
            Src::U16(v) => load_lanes(dst, v, at, Lane::to_lane),
            Src::Bool(v) => load_lanes(dst, v, at, Lane::to_lane),
        }
        Ok(())
    }
}

mod eval;
mod vertices;

/// `out[i] = op(xs[i])` in `f32` through the evaluator every `Map<float>` vertex runs (a
/// program of one load and `op`): the host entry point of the ULP harness (`tools/ulp`), so
/// that it measures the code the vertices run. `op` must be a unary operation on `float`.
pub fn unary_f32(op: Op, xs: &[f32], out: &mut [f32]) -> Result<(), VertexError> {
    if op.arity() != 1 || result_type(op, DType::F32, DType::F32) != Some(DType::F32) {
        return Err(VertexError::new(format!(
            "Map: {op:?} is not a unary f32 operation"
        )));
    }
    let instr = |op, dst, a| Instr {
        op,
        ty: DType::F32,
        to: DType::F32,
        dst,
        a,
        b: 0,
        c: 0,
    };
    let prog = Program {
        regs: 2,
        result: 1,
        out: DType::F32,
        instrs: vec![instr(Op::Load, 0, type_code(DType::F32)), instr(op, 1, 0)],
    };
    let mut ins = Inputs::default();
    ins.push(Src::F32(xs));
    run(&prog, &ins, out)
}

pub use eval::{erf_f64, run};
pub use vertices::*;
