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

use std::cell::RefCell;

use poplar_core::codelet::*;
use poplar_core::dtype::DType;
use poplar_core::f16;

use crate::cycles;

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
    /// `1 / (1 + exp(-x))`, evaluated in f32 in that order.
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
        Add | Sub | Mul | Div | Rem | Min | Max | Clamp => ok(float || int, ty),
        Pow | Atan2 => ok(float, ty),
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

thread_local! {
    /// Each thread's register blocks, reused from vertex to vertex (no allocation or zeroing
    /// per vertex).
    static SCRATCH: RefCell<Vec<Vec<u32>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `prog` over every element of `out` (`out` is also the [`LOAD_OUT`] input in place).
pub fn run<T: Lane>(prog: &Program, ins: &Inputs<'_>, out: &mut [T]) -> Result<(), VertexError> {
    ins.check(out.len())?;
    let mut regs = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let nregs = prog.regs as usize;
    if regs.len() < nregs {
        regs.resize(nregs, Vec::new());
    }
    for r in &mut regs[..nregs] {
        r.resize(BLOCK, 0);
    }
    let result = run_blocks(prog, ins, out, &mut regs);
    SCRATCH.with(|s| *s.borrow_mut() = regs);
    result
}

fn run_blocks<T: Lane>(
    prog: &Program,
    ins: &Inputs<'_>,
    out: &mut [T],
    regs: &mut [Vec<u32>],
) -> Result<(), VertexError> {
    let n = out.len();
    // A constant whose register nothing else writes is filled in the first block only.
    let once: Vec<bool> = prog
        .instrs
        .iter()
        .map(|i| i.op == Op::Const && prog.instrs.iter().filter(|j| j.dst == i.dst).count() == 1)
        .collect();
    let mut start = 0;
    while start < n {
        let len = BLOCK.min(n - start);
        for (k, i) in prog.instrs.iter().enumerate() {
            if once[k] && start > 0 {
                continue;
            }
            let mut d = std::mem::take(&mut regs[i.dst as usize]);
            let dst = &mut d[..len];
            match i.op {
                Op::Load if i.a == LOAD_OUT => {
                    for (l, &x) in dst.iter_mut().zip(&out[start..start + len]) {
                        *l = x.to_lane();
                    }
                }
                Op::Load => ins.load(i.a, i.b as usize, dst, start)?,
                Op::Const => dst.fill(i.a),
                _ => {
                    let empty: &[u32] = &[];
                    let src = |k: u32, ar: usize| {
                        if ar > 0 {
                            &regs[k as usize][..len]
                        } else {
                            empty
                        }
                    };
                    let ar = i.op.arity();
                    exec(
                        i.op as u32 | type_code(i.ty) << 8 | type_code(i.to) << 16,
                        dst,
                        src(i.a, ar),
                        src(i.b, ar.saturating_sub(1)),
                        src(i.c, ar.saturating_sub(2)),
                        start,
                    );
                }
            }
            regs[i.dst as usize] = d;
        }
        for (o, &l) in out[start..start + len]
            .iter_mut()
            .zip(&regs[prog.result as usize][..len])
        {
            *o = T::from_lane(l);
        }
        start += len;
    }
    Ok(())
}

#[inline(always)]
fn fl(l: u32) -> f32 {
    f32::from_bits(l)
}

/// A float result as a lane, a NaN as the one quiet NaN. On the bits, not with
/// `poplar_core::fp::canonical_nan`: LLVM may fold `if x.is_nan() { NAN } else { x }` into `x`
/// in a vectorised loop (its NaNs have no fixed bits), and then the NaN an operation
/// returns would depend on the instructions chosen for the ISA level.
#[inline(always)]
fn canon(x: f32) -> u32 {
    let b = x.to_bits();
    if b & 0x7fff_ffff > 0x7f80_0000 {
        0x7fc0_0000
    } else {
        b
    }
}

/// A `half` result as a lane: rounded to `half` as element `index`, NaN canonical.
#[inline(always)]
fn fres_half(x: f32, index: usize) -> u32 {
    canon(to_f16(x, index).to_f32())
}

/// The error function in f64: its Taylor series up to |x| = 4 (where the terms peak below
/// 10^6, so about 10 significant digits survive the cancellation), ±1 beyond (erfc(4) ≈
/// 1.5·10⁻⁸ is below half an f32 ulp of 1).
pub fn erf_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.abs() >= 4.0 {
        return x.signum();
    }
    let x2 = x * x;
    let mut term = x; // (-1)^n x^(2n+1) / n!
    let mut sum = x;
    let mut n = 0.0;
    while term.abs() > 1e-17 * sum.abs().max(1e-300) {
        n += 1.0;
        term *= -x2 / n;
        sum += term / (2.0 * n + 1.0);
    }
    sum * std::f64::consts::FRAC_2_SQRT_PI
}

/// `trunc` from a conversion to `i32` and back, not `f32::trunc`: LLVM calls libm's
/// `truncf` at the baseline level but uses `roundss` with SSE4.1, and the two treat a
/// subnormal input differently under the flushing modes (MXCSR's DAZ). Conversions,
/// comparisons and subtractions honour DAZ the same way at every level.
#[inline(always)]
fn trunc(x: f32) -> f32 {
    if x.abs() < 8_388_608.0 {
        (x as i32 as f32).copysign(x)
    } else {
        x // |x| ≥ 2^23 is an integer; inf and NaN stay
    }
}

#[inline(always)]
fn floor(x: f32) -> f32 {
    let t = trunc(x);
    if t > x {
        t - 1.0
    } else {
        t
    }
}

#[inline(always)]
fn ceil(x: f32) -> f32 {
    let t = trunc(x);
    if t < x {
        t + 1.0
    } else {
        t
    }
}

/// To nearest, ties away from zero (`x - trunc(x)` is exact below 2^23).
#[inline(always)]
fn round(x: f32) -> f32 {
    let t = trunc(x);
    if (x - t).abs() >= 0.5 {
        t + 1.0f32.copysign(x)
    } else {
        t
    }
}

#[inline(always)]
fn float_sign(x: f32) -> f32 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x
    }
}

poplar_core::isa_dispatch! {
    /// One instruction over a block: `code` is `op | ty << 8 | to << 16`; `base` the block's
    /// first element (for `half`'s stochastic rounding).
    // Long: one arm per operation and type, each a one-line loop, so the table reads as the
    // semantics.
    fn exec(code: u32, d: &mut [u32], a: &[u32], b: &[u32], c: &[u32], base: usize) {
        let op = Op::from_code(code & 0xff).unwrap_or(Op::Const);
        let ty = TYPES[(code >> 8 & 0xff) as usize % 7];
        let to = TYPES[(code >> 16 & 0xff) as usize % 7];
        let half = ty == DType::F16;
        // Two loops, not one with a test per element: the `half` loop calls `to_f16`, and a
        // loop with a call does not vectorise.
        macro_rules! f1 {
            (|$x:ident| $e:expr) => {
                if half {
                    for (i, (o, &l)) in d.iter_mut().zip(a).enumerate() {
                        let $x = fl(l);
                        *o = fres_half($e, base + i);
                    }
                } else {
                    for (o, &l) in d.iter_mut().zip(a) {
                        let $x = fl(l);
                        *o = canon($e);
                    }
                }
            };
        }
        macro_rules! f2 {
            (|$x:ident, $y:ident| $e:expr) => {
                if half {
                    for (i, ((o, &l), &m)) in d.iter_mut().zip(a).zip(b).enumerate() {
                        let ($x, $y) = (fl(l), fl(m));
                        *o = fres_half($e, base + i);
                    }
                } else {
                    for ((o, &l), &m) in d.iter_mut().zip(a).zip(b) {
                        let ($x, $y) = (fl(l), fl(m));
                        *o = canon($e);
                    }
                }
            };
        }
        macro_rules! pred1 {
            (|$x:ident| $e:expr) => {
                for (o, &l) in d.iter_mut().zip(a) {
                    let $x = fl(l);
                    *o = u32::from($e);
                }
            };
        }
        macro_rules! cmp {
            (|$x:ident, $y:ident| $e:expr) => {
                match ty {
                    DType::F32 | DType::F16 => {
                        for ((o, &l), &m) in d.iter_mut().zip(a).zip(b) {
                            let ($x, $y) = (fl(l), fl(m));
                            *o = u32::from($e);
                        }
                    }
                    DType::I32 => {
                        for ((o, &l), &m) in d.iter_mut().zip(a).zip(b) {
                            let ($x, $y) = (l as i32, m as i32);
                            *o = u32::from($e);
                        }
                    }
                    _ => {
                        for ((o, &l), &m) in d.iter_mut().zip(a).zip(b) {
                            let ($x, $y) = (l, m);
                            *o = u32::from($e);
                        }
                    }
                }
            };
        }
        macro_rules! i1 {
            (|$x:ident| $e:expr) => {
                for (o, &l) in d.iter_mut().zip(a) {
                    let $x = l as i32;
                    *o = ($e) as u32;
                }
            };
        }
        macro_rules! u1 {
            (|$x:ident| $e:expr) => {
                for (o, &l) in d.iter_mut().zip(a) {
                    let $x = l;
                    *o = $e;
                }
            };
        }
        macro_rules! i2 {
            (|$x:ident, $y:ident| $e:expr) => {
                for ((o, &l), &m) in d.iter_mut().zip(a).zip(b) {
                    let ($x, $y) = (l as i32, m as i32);
                    *o = ($e) as u32;
                }
            };
        }
        macro_rules! u2 {
            (|$x:ident, $y:ident| $e:expr) => {
                for ((o, &l), &m) in d.iter_mut().zip(a).zip(b) {
                    let ($x, $y) = (l, m);
                    *o = $e;
                }
            };
        }
        let float = matches!(ty, DType::F32 | DType::F16);
        use DType::I32;
        match (op, float) {
            (Op::Cast, _) => cast(ty, to, d, a, base),
            (Op::Abs, true) => f1!(|x| x.abs()),
            (Op::Sign, true) => f1!(|x| float_sign(x)),
            (Op::Neg, true) => f1!(|x| -x),
            (Op::Sqrt, true) => f1!(|x| x.sqrt()),
            (Op::Rsqrt, true) => f1!(|x| 1.0 / x.sqrt()),
            (Op::Cbrt, true) => f1!(|x| x.cbrt()),
            (Op::Exp, true) => f1!(|x| x.exp()),
            (Op::Exp2, true) => f1!(|x| x.exp2()),
            (Op::Expm1, true) => f1!(|x| x.exp_m1()),
            (Op::Log, true) => f1!(|x| x.ln()),
            (Op::Log1p, true) => f1!(|x| x.ln_1p()),
            (Op::Sin, true) => f1!(|x| x.sin()),
            (Op::Cos, true) => f1!(|x| x.cos()),
            (Op::Tan, true) => f1!(|x| x.tan()),
            (Op::Tanh, true) => f1!(|x| x.tanh()),
            (Op::Sigmoid, true) => f1!(|x| 1.0 / (1.0 + (-x).exp())),
            (Op::Erf, true) => f1!(|x| erf_f64(f64::from(x)) as f32),
            (Op::Floor, true) => f1!(|x| floor(x)),
            (Op::Ceil, true) => f1!(|x| ceil(x)),
            (Op::Round, true) => f1!(|x| round(x)),
            (Op::Trunc, true) => f1!(|x| trunc(x)),
            (Op::Square, true) => f1!(|x| x * x),
            (Op::Inverse, true) => f1!(|x| 1.0 / x),
            (Op::IsFinite, _) => pred1!(|x| x.is_finite()),
            (Op::IsInf, _) => pred1!(|x| x.is_infinite()),
            (Op::IsNan, _) => pred1!(|x| x.is_nan()),
            (Op::Add, true) => f2!(|x, y| x + y),
            (Op::Sub, true) => f2!(|x, y| x - y),
            (Op::Mul, true) => f2!(|x, y| x * y),
            (Op::Div, true) => f2!(|x, y| x / y),
            (Op::Pow, true) => f2!(|x, y| x.powf(y)),
            (Op::Rem, true) => f2!(|x, y| x % y),
            (Op::Min, true) => f2!(|x, y| x.min(y)),
            (Op::Max, true) => f2!(|x, y| x.max(y)),
            (Op::Atan2, true) => f2!(|x, y| x.atan2(y)),
            (Op::Clamp, true) => {
                // The max and min of f16 values are f16 values: nothing to round.
                for (((o, &l), &lo), &hi) in d.iter_mut().zip(a).zip(b).zip(c) {
                    *o = canon(fl(l).max(fl(lo)).min(fl(hi)));
                }
            }
            (Op::Eq, _) => cmp!(|x, y| x == y),
            (Op::Ne, _) => cmp!(|x, y| x != y),
            (Op::Lt, _) => cmp!(|x, y| x < y),
            (Op::Le, _) => cmp!(|x, y| x <= y),
            (Op::Gt, _) => cmp!(|x, y| x > y),
            (Op::Ge, _) => cmp!(|x, y| x >= y),
            (Op::Select, _) => {
                for (((o, &x), &y), &k) in d.iter_mut().zip(a).zip(b).zip(c) {
                    *o = if k != 0 { x } else { y };
                }
            }
            (Op::LogicalNot, _) => u1!(|x| u32::from(x == 0)),
            (Op::LogicalAnd, _) => u2!(|x, y| u32::from(x != 0 && y != 0)),
            (Op::LogicalOr, _) => u2!(|x, y| u32::from(x != 0 || y != 0)),
            (Op::BitwiseNot, _) => u1!(|x| !x),
            (Op::BitAnd, _) => u2!(|x, y| x & y),
            (Op::BitOr, _) => u2!(|x, y| x | y),
            (Op::BitXor, _) => u2!(|x, y| x ^ y),
            (Op::Shl, _) => u2!(|x, y| x.wrapping_shl(y)),
            (Op::Shr, _) if ty == I32 => i2!(|x, y| x.wrapping_shr(y as u32)),
            (Op::Shr, _) => u2!(|x, y| x.wrapping_shr(y)),
            (Op::Abs, _) if ty == I32 => i1!(|x| x.wrapping_abs()),
            (Op::Sign, _) if ty == I32 => i1!(|x| x.signum()),
            (Op::Neg, _) if ty == I32 => i1!(|x| x.wrapping_neg()),
            (Op::Abs, _) => u1!(|x| x),
            (Op::Sign, _) => u1!(|x| u32::from(x != 0)),
            (Op::Square, _) => u1!(|x| x.wrapping_mul(x)),
            (Op::Add, _) => u2!(|x, y| x.wrapping_add(y)),
            (Op::Sub, _) => u2!(|x, y| x.wrapping_sub(y)),
            (Op::Mul, _) => u2!(|x, y| x.wrapping_mul(y)),
            (Op::Div, _) if ty == I32 => i2!(|x, y| if y == 0 { 0 } else { x.wrapping_div(y) }),
            (Op::Div, _) => u2!(|x, y| x.checked_div(y).unwrap_or(0)),
            (Op::Rem, _) if ty == I32 => i2!(|x, y| if y == 0 { 0 } else { x.wrapping_rem(y) }),
            (Op::Rem, _) => u2!(|x, y| x.checked_rem(y).unwrap_or(0)),
            (Op::Min, _) if ty == I32 => i2!(|x, y| x.min(y)),
            (Op::Max, _) if ty == I32 => i2!(|x, y| x.max(y)),
            (Op::Min, _) => u2!(|x, y| x.min(y)),
            (Op::Max, _) => u2!(|x, y| x.max(y)),
            (Op::Clamp, _) if ty == I32 => {
                for (((o, &l), &lo), &hi) in d.iter_mut().zip(a).zip(b).zip(c) {
                    *o = (l as i32).max(lo as i32).min(hi as i32) as u32;
                }
            }
            (Op::Clamp, _) => {
                for (((o, &l), &lo), &hi) in d.iter_mut().zip(a).zip(b).zip(c) {
                    *o = l.max(lo).min(hi);
                }
            }
            // Loads and constants are not executed here; the decoder rejects the rest.
            _ => {}
        }
    }
}

/// `Cast` from `from` to `to` over a block (see [`Op::Cast`]).
#[inline(always)]
fn cast(from: DType, to: DType, d: &mut [u32], a: &[u32], base: usize) {
    use DType::*;
    let float_from = matches!(from, F32 | F16);
    for (i, (o, &l)) in d.iter_mut().zip(a).enumerate() {
        // The source value, as f64 (exact for every lane type) or as its integer lane.
        let x = match from {
            F32 | F16 => f64::from(fl(l)),
            I32 => f64::from(l as i32),
            _ => f64::from(l),
        };
        *o = match to {
            F32 => canon(match from {
                F16 | F32 => fl(l),
                I32 => l as i32 as f32,
                _ => l as f32,
            }),
            F16 => {
                let f = match from {
                    F16 | F32 => fl(l),
                    I32 => l as i32 as f32,
                    _ => l as f32,
                };
                canon(to_f16(f, base + i).to_f32())
            }
            Bool => u32::from(if float_from { x != 0.0 } else { l != 0 }),
            I32 if float_from => fl(l) as i32 as u32,
            U32 if float_from => fl(l) as u32,
            U8 if float_from => u32::from(fl(l) as u8),
            U16 if float_from => u32::from(fl(l) as u16),
            I32 | U32 => l,
            U8 => l & 0xff,
            U16 => l & 0xffff,
        };
    }
}

macro_rules! map_codelets {
    ($($name:ident as $cname:literal, $inplace:ident as $iname:literal: $t:ty;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `out[i] = prog(inputs[i])`, see [the module](self).")]
            pub struct $name as $cname {
                prog: State<Vector<u32>>,
                in_f32: Input<VectorList<f32>>,
                in_f16: Input<VectorList<f16>>,
                in_i32: Input<VectorList<i32>>,
                in_u32: Input<VectorList<u32>>,
                in_u8: Input<VectorList<u8>>,
                in_u16: Input<VectorList<u16>>,
                in_bool: Input<VectorList<bool>>,
                out: Output<Vector<$t>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let prog = Program::decode(self.prog, <$t as poplar_core::dtype::Element>::DTYPE)?;
                let mut ins = Inputs::default();
                ins.lists[0].extend(self.in_f32.iter().map(Src::F32));
                ins.lists[1].extend(self.in_f16.iter().map(Src::F16));
                ins.lists[2].extend(self.in_i32.iter().map(Src::I32));
                ins.lists[3].extend(self.in_u32.iter().map(Src::U32));
                ins.lists[4].extend(self.in_u8.iter().map(Src::U8));
                ins.lists[5].extend(self.in_u16.iter().map(Src::U16));
                ins.lists[6].extend(self.in_bool.iter().map(Src::Bool));
                run(&prog, &ins, self.out)
            }

            /// Unset estimate: [`cycles::map_fallback`].
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::map_fallback(ctx.elements(Self::prog), ctx.elements(Self::out)))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`", $iname, "`: `out[i] = prog(out[i], inputs[i])`, see [the module](self).")]
            pub struct $inplace as $iname {
                prog: State<Vector<u32>>,
                in_f32: Input<VectorList<f32>>,
                in_f16: Input<VectorList<f16>>,
                in_i32: Input<VectorList<i32>>,
                in_u32: Input<VectorList<u32>>,
                in_u8: Input<VectorList<u8>>,
                in_u16: Input<VectorList<u16>>,
                in_bool: Input<VectorList<bool>>,
                out: InOut<Vector<$t>>,
            }
        }

        impl Vertex for $inplace<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let prog = Program::decode(self.prog, <$t as poplar_core::dtype::Element>::DTYPE)?;
                let mut ins = Inputs::default();
                ins.lists[0].extend(self.in_f32.iter().map(Src::F32));
                ins.lists[1].extend(self.in_f16.iter().map(Src::F16));
                ins.lists[2].extend(self.in_i32.iter().map(Src::I32));
                ins.lists[3].extend(self.in_u32.iter().map(Src::U32));
                ins.lists[4].extend(self.in_u8.iter().map(Src::U8));
                ins.lists[5].extend(self.in_u16.iter().map(Src::U16));
                ins.lists[6].extend(self.in_bool.iter().map(Src::Bool));
                run(&prog, &ins, self.out)
            }

            /// Unset estimate: [`cycles::map_fallback`].
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::map_fallback(ctx.elements(Self::prog), ctx.elements(Self::out)))
            }
        }
    )*};
}

map_codelets! {
    MapF32 as "Map<float>", MapInPlaceF32 as "MapInPlace<float>": f32;
    MapF16 as "Map<half>", MapInPlaceF16 as "MapInPlace<half>": f16;
    MapI32 as "Map<int>", MapInPlaceI32 as "MapInPlace<int>": i32;
    MapU32 as "Map<unsigned>", MapInPlaceU32 as "MapInPlace<unsigned>": u32;
    MapU8 as "Map<unsigned char>", MapInPlaceU8 as "MapInPlace<unsigned char>": u8;
    MapU16 as "Map<unsigned short>", MapInPlaceU16 as "MapInPlace<unsigned short>": u16;
    MapBool as "Map<bool>", MapInPlaceBool as "MapInPlace<bool>": bool;
}
