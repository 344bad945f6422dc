//! Element-wise expressions, as `popops::expr` has them: placeholders [`_1`] … [`_8`] for the
//! input tensors, constants, and unary, binary and ternary operations built with Rust's
//! operators and methods, for [`map`](fn@crate::map) to compile into one vertex per worker piece.
//!
//! ```
//! use popops::expr::{_1, _2, select, Expr};
//! // y = tanh(2·x₁ + x₂), and a mask of the elements where x₁ > 0.5.
//! let y: Expr = (_1 * 2.0 + _2).tanh();
//! let mask = _1.gt(0.5);
//! let relu = select(_1, 0.0, _1.gt(0.0));
//! # let _ = (y, mask, relu);
//! ```
//!
//! **Types.** A placeholder has its input's element type; an operation takes operands of one
//! type (a [`Expr::Const`] takes the type of the operand it meets, `f32` if it meets none)
//! and gives that type, or `bool` for comparisons and the `is_*` tests; [`Expr::cast`]
//! converts. `&`, `|`, `^` and `!` are bitwise on integers and logical on `bool`. The
//! semantics of each operation, per type, are those of the `Map` codelet
//! (`codelets::map::Op`) and are tabulated in `docs/popops.md`.

use std::ops;

use codelets::map::{Instr, Op, Program, LOAD_OUT};
use poplar_core::dtype::DType;

use crate::error::OpError;

/// Unary operations (poplibs' `UnaryOpType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnaryOpType {
    Abs,
    Sign,
    Neg,
    Sqrt,
    Rsqrt,
    Cbrt,
    Exp,
    Exp2,
    Expm1,
    Log,
    Log1p,
    Sin,
    Cos,
    Tan,
    Tanh,
    Sigmoid,
    Erf,
    Floor,
    Ceil,
    Round,
    Trunc,
    IsFinite,
    IsInf,
    IsNan,
    /// `bool`: logical not.
    LogicalNot,
    /// Integers: bitwise not; `bool`: logical not.
    BitwiseNot,
    Square,
    Inverse,
}

/// Binary operations (poplibs' `BinaryOpType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BinaryOpType {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Rem,
    Min,
    Max,
    Atan2,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogicalAnd,
    LogicalOr,
    /// Integers; on `bool`, logical and.
    BitwiseAnd,
    /// Integers; on `bool`, logical or.
    BitwiseOr,
    /// Integers; on `bool`, not equal.
    BitwiseXor,
    ShiftLeft,
    /// Arithmetic for `int`, logical for `unsigned`.
    ShiftRight,
}

/// Ternary operations (poplibs' `TernaryOpType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TernaryOpType {
    /// `clamp(x, lo, hi) = min(max(x, lo), hi)`.
    Clamp,
    /// `select(a, b, c) = c ? a : b`.
    Select,
}

impl UnaryOpType {
    /// The codelet operation.
    pub fn op(self) -> Op {
        use UnaryOpType::*;
        match self {
            Abs => Op::Abs,
            Sign => Op::Sign,
            Neg => Op::Neg,
            Sqrt => Op::Sqrt,
            Rsqrt => Op::Rsqrt,
            Cbrt => Op::Cbrt,
            Exp => Op::Exp,
            Exp2 => Op::Exp2,
            Expm1 => Op::Expm1,
            Log => Op::Log,
            Log1p => Op::Log1p,
            Sin => Op::Sin,
            Cos => Op::Cos,
            Tan => Op::Tan,
            Tanh => Op::Tanh,
            Sigmoid => Op::Sigmoid,
            Erf => Op::Erf,
            Floor => Op::Floor,
            Ceil => Op::Ceil,
            Round => Op::Round,
            Trunc => Op::Trunc,
            IsFinite => Op::IsFinite,
            IsInf => Op::IsInf,
            IsNan => Op::IsNan,
            LogicalNot => Op::LogicalNot,
            BitwiseNot => Op::BitwiseNot,
            Square => Op::Square,
            Inverse => Op::Inverse,
        }
    }
}

impl BinaryOpType {
    /// The codelet operation.
    pub fn op(self) -> Op {
        use BinaryOpType::*;
        match self {
            Add => Op::Add,
            Sub => Op::Sub,
            Mul => Op::Mul,
            Div => Op::Div,
            Pow => Op::Pow,
            Rem => Op::Rem,
            Min => Op::Min,
            Max => Op::Max,
            Atan2 => Op::Atan2,
            Eq => Op::Eq,
            Ne => Op::Ne,
            Lt => Op::Lt,
            Le => Op::Le,
            Gt => Op::Gt,
            Ge => Op::Ge,
            LogicalAnd => Op::LogicalAnd,
            LogicalOr => Op::LogicalOr,
            BitwiseAnd => Op::BitAnd,
            BitwiseOr => Op::BitOr,
            BitwiseXor => Op::BitXor,
            ShiftLeft => Op::Shl,
            ShiftRight => Op::Shr,
        }
    }

    /// Whether the result is `bool` whatever the operands are.
    fn is_predicate(self) -> bool {
        use BinaryOpType::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
}

/// An element-wise expression.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Expr {
    /// Input `k` (1-based, as poplibs' `_1`).
    Placeholder(usize),
    /// A constant, converted to the type of the operand it meets (`f32` by default): rounded
    /// once to `f32` or `f16`; an integer type must hold it exactly; `bool` takes 0 or 1.
    Const(f64),
    Unary(UnaryOpType, Box<Expr>),
    Binary(BinaryOpType, Box<Expr>, Box<Expr>),
    Ternary(TernaryOpType, Box<Expr>, Box<Expr>, Box<Expr>),
    /// Conversion to another element type (`codelets::map::Op::Cast`).
    Cast(Box<Expr>, DType),
}

/// Input 1.
pub const _1: Expr = Expr::Placeholder(1);
/// Input 2.
pub const _2: Expr = Expr::Placeholder(2);
/// Input 3.
pub const _3: Expr = Expr::Placeholder(3);
/// Input 4.
pub const _4: Expr = Expr::Placeholder(4);
/// Input 5.
pub const _5: Expr = Expr::Placeholder(5);
/// Input 6.
pub const _6: Expr = Expr::Placeholder(6);
/// Input 7.
pub const _7: Expr = Expr::Placeholder(7);
/// Input 8.
pub const _8: Expr = Expr::Placeholder(8);

/// A constant expression.
pub fn constant(v: impl Into<Expr>) -> Expr {
    v.into()
}

macro_rules! from_scalar {
    ($($t:ty),*) => {$(
        impl From<$t> for Expr {
            fn from(v: $t) -> Expr {
                Expr::Const(f64::from(v))
            }
        }
    )*};
}
from_scalar!(f32, f64, i32, u32, u8, u16, bool);

impl From<&Expr> for Expr {
    fn from(e: &Expr) -> Expr {
        e.clone()
    }
}

macro_rules! unary_methods {
    ($($(#[$m:meta])* $name:ident => $op:ident;)*) => {
        impl Expr {
            $(
                $(#[$m])*
                #[must_use]
                pub fn $name(self) -> Expr {
                    Expr::Unary(UnaryOpType::$op, Box::new(self))
                }
            )*
        }
    };
}

unary_methods! {
    /// `|x|`.
    abs => Abs;
    /// `-1`, `0` or `1` by sign (floats keep ±0 and NaN).
    sign => Sign;
    sqrt => Sqrt;
    /// `1 / sqrt(x)`.
    rsqrt => Rsqrt;
    cbrt => Cbrt;
    exp => Exp;
    exp2 => Exp2;
    /// `exp(x) - 1`, accurate near 0.
    expm1 => Expm1;
    /// Natural logarithm.
    log => Log;
    /// `log(1 + x)`, accurate near 0.
    log1p => Log1p;
    sin => Sin;
    cos => Cos;
    tan => Tan;
    tanh => Tanh;
    /// `1 / (1 + exp(-x))`.
    sigmoid => Sigmoid;
    /// The error function.
    erf => Erf;
    floor => Floor;
    ceil => Ceil;
    /// To nearest, ties away from zero.
    round => Round;
    trunc => Trunc;
    /// → `bool`.
    is_finite => IsFinite;
    /// → `bool`.
    is_inf => IsInf;
    /// → `bool`.
    is_nan => IsNan;
    /// Logical not of a `bool`.
    logical_not => LogicalNot;
    /// Bitwise not of an integer (`!x` does the same).
    bitwise_not => BitwiseNot;
    /// `x · x`.
    square => Square;
    /// `1 / x`.
    inverse => Inverse;
}

macro_rules! binary_methods {
    ($($(#[$m:meta])* $name:ident => $op:ident;)*) => {
        impl Expr {
            $(
                $(#[$m])*
                #[must_use]
                pub fn $name(self, other: impl Into<Expr>) -> Expr {
                    Expr::Binary(BinaryOpType::$op, Box::new(self), Box::new(other.into()))
                }
            )*
        }
    };
}

binary_methods! {
    /// `self` to the power `other` (floats).
    pow => Pow;
    /// The larger (floats: a NaN operand yields the other).
    max => Max;
    /// The smaller.
    min => Min;
    /// `atan2(self, other)`, `self` the ordinate.
    atan2 => Atan2;
    /// `self == other` → `bool`.
    equal => Eq;
    /// `self != other` → `bool`.
    not_equal => Ne;
    /// `self < other` → `bool`.
    lt => Lt;
    /// `self <= other` → `bool`.
    le => Le;
    /// `self > other` → `bool`.
    gt => Gt;
    /// `self >= other` → `bool`.
    ge => Ge;
    /// Logical and of `bool`s.
    and => LogicalAnd;
    /// Logical or of `bool`s.
    or => LogicalOr;
}

impl Expr {
    /// `min(max(self, lo), hi)`.
    #[must_use]
    pub fn clamp(self, lo: impl Into<Expr>, hi: impl Into<Expr>) -> Expr {
        Expr::Ternary(
            TernaryOpType::Clamp,
            Box::new(self),
            Box::new(lo.into()),
            Box::new(hi.into()),
        )
    }

    /// Conversion to `to` (semantics at `codelets::map::Op::Cast`).
    #[must_use]
    pub fn cast(self, to: DType) -> Expr {
        Expr::Cast(Box::new(self), to)
    }

    /// Operations in the tree (placeholders and constants not counted).
    pub fn num_ops(&self) -> usize {
        match self {
            Expr::Placeholder(_) | Expr::Const(_) => 0,
            Expr::Unary(_, a) | Expr::Cast(a, _) => 1 + a.num_ops(),
            Expr::Binary(_, a, b) => 1 + a.num_ops() + b.num_ops(),
            Expr::Ternary(_, a, b, c) => 1 + a.num_ops() + b.num_ops() + c.num_ops(),
        }
    }

    /// The largest placeholder index in the tree (0 if none).
    pub fn max_placeholder(&self) -> usize {
        match self {
            Expr::Placeholder(k) => *k,
            Expr::Const(_) => 0,
            Expr::Unary(_, a) | Expr::Cast(a, _) => a.max_placeholder(),
            Expr::Binary(_, a, b) => a.max_placeholder().max(b.max_placeholder()),
            Expr::Ternary(_, a, b, c) => a
                .max_placeholder()
                .max(b.max_placeholder())
                .max(c.max_placeholder()),
        }
    }

    fn has_placeholder(&self) -> bool {
        self.max_placeholder() > 0
    }

    fn count_uses(&self, uses: &mut [usize]) {
        match self {
            Expr::Placeholder(k) => {
                if let Some(u) = uses.get_mut(k - 1) {
                    *u += 1;
                }
            }
            Expr::Const(_) => {}
            Expr::Unary(_, a) | Expr::Cast(a, _) => a.count_uses(uses),
            Expr::Binary(_, a, b) => {
                a.count_uses(uses);
                b.count_uses(uses);
            }
            Expr::Ternary(_, a, b, c) => {
                a.count_uses(uses);
                b.count_uses(uses);
                c.count_uses(uses);
            }
        }
    }
}

/// `select(a, b, c) = c ? a : b` (poplibs' order), `c` a `bool`.
pub fn select(a: impl Into<Expr>, b: impl Into<Expr>, c: impl Into<Expr>) -> Expr {
    Expr::Ternary(
        TernaryOpType::Select,
        Box::new(a.into()),
        Box::new(b.into()),
        Box::new(c.into()),
    )
}

/// `clamp(x, lo, hi) = min(max(x, lo), hi)`.
pub fn clamp(x: impl Into<Expr>, lo: impl Into<Expr>, hi: impl Into<Expr>) -> Expr {
    x.into().clamp(lo, hi)
}

impl ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::Unary(UnaryOpType::Neg, Box::new(self))
    }
}

impl ops::Not for Expr {
    type Output = Expr;
    fn not(self) -> Expr {
        Expr::Unary(UnaryOpType::BitwiseNot, Box::new(self))
    }
}

macro_rules! operators {
    ($($tr:ident $f:ident => $op:ident;)*) => {$(
        impl<R: Into<Expr>> ops::$tr<R> for Expr {
            type Output = Expr;
            fn $f(self, rhs: R) -> Expr {
                Expr::Binary(BinaryOpType::$op, Box::new(self), Box::new(rhs.into()))
            }
        }
        // Left-hand scalars: one float and one integer type, so literals infer (`2.0 * _1`).
        operators!(@scalar $tr $f $op: f64, i32);
    )*};
    (@scalar $tr:ident $f:ident $op:ident: $($t:ty),*) => {$(
        impl ops::$tr<Expr> for $t {
            type Output = Expr;
            fn $f(self, rhs: Expr) -> Expr {
                Expr::Binary(BinaryOpType::$op, Box::new(self.into()), Box::new(rhs))
            }
        }
    )*};
}

operators! {
    Add add => Add;
    Sub sub => Sub;
    Mul mul => Mul;
    Div div => Div;
    Rem rem => Rem;
    BitAnd bitand => BitwiseAnd;
    BitOr bitor => BitwiseOr;
    BitXor bitxor => BitwiseXor;
    Shl shl => ShiftLeft;
    Shr shr => ShiftRight;
}

/// A compiled expression: the `Map` program and what it reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    pub program: Program,
    /// The result's element type.
    pub dtype: DType,
    /// For each input (placeholder `k` is input `k - 1`), its load: the type list and the
    /// index in it, or `None` for an input the program does not read or the in-place output.
    pub slots: Vec<Option<(DType, u32)>>,
    /// The single operation this expression is when it is one operation over placeholders
    /// of one type (`map` then costs it as poplibs' single-op vertex), with that type.
    pub single_op: Option<(Op, DType)>,
}

struct Emitter<'a> {
    name: &'a str,
    dtypes: &'a [DType],
    in_place: bool,
    instrs: Vec<Instr>,
    free: Vec<u32>,
    regs: u32,
    /// Per register, the holds on it (values handed out and not yet consumed).
    pending: Vec<u32>,
    /// Per input: the register holding it and the uses still to come.
    loaded: Vec<Option<u32>>,
    uses: Vec<usize>,
    slots: Vec<Option<(DType, u32)>>,
}

type Val = (u32, DType);

impl Emitter<'_> {
    fn err(&self, reason: String) -> OpError {
        OpError::Expr {
            op: self.name.to_string(),
            reason,
        }
    }

    /// A free register, held once (by the value it will hold).
    fn alloc(&mut self) -> u32 {
        let r = self.free.pop().unwrap_or_else(|| {
            self.regs += 1;
            self.pending.push(0);
            self.regs - 1
        });
        self.pending[r as usize] = 1;
        r
    }

    /// Drops one hold on an operand register, freeing it when nothing else holds it (an
    /// input's register is held by every use handed out and, while uses remain, by the input).
    fn release(&mut self, r: u32) {
        let p = &mut self.pending[r as usize];
        *p -= 1;
        if *p == 0 {
            self.free.push(r);
        }
    }

    fn push(&mut self, op: Op, ty: DType, to: DType, args: &[Val]) -> Result<Val, OpError> {
        let Some(rt) = codelets::map::result_type(op, ty, to) else {
            return Err(OpError::DType {
                op: self.name.to_string(),
                what: format!("the operand of {op:?}"),
                got: ty,
                expected: "a type the operation is defined on (docs/popops.md)".into(),
            });
        };
        let dst = self.alloc();
        let r = |k: usize| args.get(k).map_or(0, |v| v.0);
        self.instrs.push(Instr {
            op,
            ty,
            to,
            dst,
            a: r(0),
            b: r(1),
            c: r(2),
        });
        for v in args {
            self.release(v.0);
        }
        Ok((dst, rt))
    }

    fn constant(&mut self, v: f64, ty: DType) -> Result<Val, OpError> {
        let bits = match ty {
            DType::F32 => (v as f32).to_bits(),
            DType::F16 => poplar_core::fp::f16_from_f64(v).to_f32().to_bits(),
            DType::Bool if v == 0.0 || v == 1.0 => v as u32,
            DType::I32
                if v.fract() == 0.0 && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX) =>
            {
                v as i32 as u32
            }
            DType::U32 | DType::U8 | DType::U16
                if v.fract() == 0.0 && v >= 0.0 && v <= f64::from(u32::MAX) =>
            {
                v as u32
            }
            _ => return Err(self.err(format!("constant {v} is not a value of {ty}"))),
        };
        let dst = self.alloc();
        self.instrs.push(Instr {
            op: Op::Const,
            ty,
            to: ty,
            dst,
            a: bits,
            b: 0,
            c: 0,
        });
        Ok((dst, ty))
    }

    fn placeholder(&mut self, k: usize) -> Result<Val, OpError> {
        let Some(&ty) = k.checked_sub(1).and_then(|i| self.dtypes.get(i)) else {
            return Err(self.err(format!(
                "placeholder _{k} has no input ({} given)",
                self.dtypes.len()
            )));
        };
        let i = k - 1;
        self.uses[i] -= 1;
        let r = match self.loaded[i] {
            Some(r) => {
                // One more hold for this use; the last use takes over the input's hold.
                if self.uses[i] > 0 {
                    self.pending[r as usize] += 1;
                }
                r
            }
            None => {
                let (a, b) = if self.in_place && i == 0 {
                    (LOAD_OUT, 0)
                } else {
                    let slot = self.slots[i].expect("slots are assigned before emission");
                    (codelets::map::type_code(slot.0), slot.1)
                };
                let dst = self.alloc();
                self.instrs.push(Instr {
                    op: Op::Load,
                    ty,
                    to: ty,
                    dst,
                    a,
                    b,
                    c: 0,
                });
                if self.uses[i] > 0 {
                    self.pending[dst as usize] += 1; // the input's hold
                }
                dst
            }
        };
        // Kept loaded while more uses come.
        self.loaded[i] = (self.uses[i] > 0).then_some(r);
        Ok((r, ty))
    }

    /// Emits `e`; a constant subtree takes type `hint` (f32 without one).
    fn emit(&mut self, e: &Expr, hint: Option<DType>) -> Result<Val, OpError> {
        match e {
            Expr::Placeholder(k) => self.placeholder(*k),
            Expr::Const(v) => self.constant(*v, hint.unwrap_or(DType::F32)),
            Expr::Cast(a, to) => {
                let a = self.emit(a, None)?;
                self.push(Op::Cast, a.1, *to, &[a])
            }
            Expr::Unary(op, a) => {
                let keeps = !matches!(
                    op,
                    UnaryOpType::IsFinite | UnaryOpType::IsInf | UnaryOpType::IsNan
                );
                let a = self.emit(a, if keeps { hint } else { None })?;
                let op = match (op, a.1) {
                    (UnaryOpType::BitwiseNot, DType::Bool) => Op::LogicalNot,
                    (op, _) => op.op(),
                };
                self.push(op, a.1, a.1, &[a])
            }
            Expr::Binary(op, a, b) => {
                let hint = if op.is_predicate() { None } else { hint };
                let (va, vb) = self.pair(a, b, hint)?;
                if va.1 != vb.1 {
                    return Err(self.mismatch(&format!("{op:?}"), va.1, vb.1));
                }
                let op = match (op, va.1) {
                    (BinaryOpType::BitwiseAnd, DType::Bool) => Op::LogicalAnd,
                    (BinaryOpType::BitwiseOr, DType::Bool) => Op::LogicalOr,
                    (BinaryOpType::BitwiseXor, DType::Bool) => Op::Ne,
                    (op, _) => op.op(),
                };
                self.push(op, va.1, va.1, &[va, vb])
            }
            Expr::Ternary(op, a, b, c) => {
                let (va, vb, vc) = match op {
                    TernaryOpType::Select => {
                        let (va, vb) = self.pair(a, b, hint)?;
                        (va, vb, self.emit(c, Some(DType::Bool))?)
                    }
                    TernaryOpType::Clamp => {
                        let (va, vb) = self.pair(a, b, hint)?;
                        let vc = self.emit(c, Some(va.1))?;
                        (va, vb, vc)
                    }
                };
                let want_c = if *op == TernaryOpType::Select {
                    DType::Bool
                } else {
                    va.1
                };
                if va.1 != vb.1 {
                    return Err(self.mismatch(&format!("{op:?}"), va.1, vb.1));
                }
                if vc.1 != want_c {
                    return Err(OpError::DType {
                        op: self.name.to_string(),
                        what: format!("the third operand of {op:?}"),
                        got: vc.1,
                        expected: format!("{want_c}"),
                    });
                }
                let code = match op {
                    TernaryOpType::Clamp => Op::Clamp,
                    TernaryOpType::Select => Op::Select,
                };
                self.push(code, va.1, va.1, &[va, vb, vc])
            }
        }
    }

    /// Emits two operands of one operation, typing a constant-only side from the other.
    fn pair(&mut self, a: &Expr, b: &Expr, hint: Option<DType>) -> Result<(Val, Val), OpError> {
        if a.has_placeholder() || !b.has_placeholder() {
            let va = self.emit(a, hint)?;
            let vb = self.emit(b, Some(va.1))?;
            Ok((va, vb))
        } else {
            let vb = self.emit(b, hint)?;
            let va = self.emit(a, Some(vb.1))?;
            Ok((va, vb))
        }
    }

    fn mismatch(&self, op: &str, a: DType, b: DType) -> OpError {
        OpError::DType {
            op: self.name.to_string(),
            what: format!("the second operand of {op}"),
            got: b,
            expected: format!("the type of the first operand, {a} (use .cast())"),
        }
    }
}

/// Compiles `expr` over inputs of element types `dtypes` (placeholder `k` is `dtypes[k -
/// 1]`) into a `Map` program; with `in_place`, input 1 is the output the vertex also reads.
/// `name` names the operation in errors.
pub fn compile(
    expr: &Expr,
    dtypes: &[DType],
    in_place: bool,
    name: &str,
) -> Result<Compiled, OpError> {
    let mut uses = vec![0; dtypes.len()];
    expr.count_uses(&mut uses);
    let mut slots = vec![None; dtypes.len()];
    let mut counts = [0u32; 7];
    for (i, &t) in dtypes.iter().enumerate() {
        if uses[i] > 0 && !(in_place && i == 0) {
            let c = &mut counts[codelets::map::type_code(t) as usize];
            slots[i] = Some((t, *c));
            *c += 1;
        }
    }
    let mut em = Emitter {
        name,
        dtypes,
        in_place,
        instrs: Vec::new(),
        free: Vec::new(),
        regs: 0,
        pending: Vec::new(),
        loaded: vec![None; dtypes.len()],
        uses,
        slots: slots.clone(),
    };
    let (result, dtype) = em.emit(expr, None)?;
    // A bare placeholder or constant: copy it through a register all the same.
    let program = Program {
        regs: em.regs,
        result,
        out: dtype,
        instrs: em.instrs,
    };
    let single_op = single_op(expr, dtypes);
    Ok(Compiled {
        program,
        dtype,
        slots,
        single_op,
    })
}

fn single_op(expr: &Expr, dtypes: &[DType]) -> Option<(Op, DType)> {
    let ty = |e: &Expr| match e {
        Expr::Placeholder(k) => dtypes.get(k.checked_sub(1)?).copied(),
        _ => None,
    };
    match expr {
        Expr::Unary(op, a) => Some((op.op(), ty(a)?)),
        Expr::Binary(op, a, b) if ty(a)? == ty(b)? => Some((op.op(), ty(a)?)),
        Expr::Ternary(op, a, b, c) => {
            let t = ty(a)?;
            (t == ty(b)?).then_some(())?;
            ty(c)?;
            Some((
                match op {
                    TernaryOpType::Clamp => Op::Clamp,
                    TernaryOpType::Select => Op::Select,
                },
                t,
            ))
        }
        Expr::Cast(a, _) => Some((Op::Cast, ty(a)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_to_a_register_program() {
        let e = (_1 * 2.0 + _2).tanh();
        let c = compile(&e, &[DType::F32, DType::F32], false, "t").unwrap();
        let ops: Vec<Op> = c.program.instrs.iter().map(|i| i.op).collect();
        assert_eq!(
            ops,
            [Op::Load, Op::Const, Op::Mul, Op::Load, Op::Add, Op::Tanh]
        );
        assert!(c.program.regs <= 3, "{:?}", c.program);
        // The program survives its encoding and the codelet's checks.
        let words = c.program.encode();
        assert_eq!(Program::decode(&words, DType::F32).unwrap(), c.program);
        assert_eq!(c.single_op, None);
        // A placeholder used twice is loaded once.
        let c = compile(&(_1 * _1 + _1), &[DType::I32], false, "t").unwrap();
        let loads = c.program.instrs.iter().filter(|i| i.op == Op::Load).count();
        assert_eq!(loads, 1);
        Program::decode(&c.program.encode(), DType::I32).unwrap();
        // Both operands of a select are placeholders still pending when their last uses
        // (in the condition) are consumed: their registers must stay allocated.
        let e = select(_1, _2, _1.lt(_2));
        let c = compile(&e, &[DType::F32, DType::F32], false, "t").unwrap();
        Program::decode(&c.program.encode(), DType::F32).unwrap();
        let sel = c.program.instrs.last().unwrap();
        let lt = c.program.instrs[c.program.instrs.len() - 2];
        assert_eq!(lt.op, Op::Lt);
        assert!(
            sel.c == lt.dst && sel.a != lt.dst && sel.b != lt.dst,
            "{:?}",
            c.program
        );
        let e = (_1 + 1.0) * _1 - _1.abs();
        let c = compile(&e, &[DType::F32], false, "t").unwrap();
        Program::decode(&c.program.encode(), DType::F32).unwrap();
    }

    #[test]
    fn constants_take_their_operands_type() {
        let c = compile(&(2 * _1).gt(3), &[DType::U32], false, "t").unwrap();
        assert_eq!(c.dtype, DType::Bool);
        let e = compile(&(_1 + 0.5), &[DType::I32], false, "cmp").unwrap_err();
        assert!(
            e.to_string().contains("0.5") && e.to_string().contains("i32"),
            "{e}"
        );
        let e = compile(&(_1 + _2), &[DType::F32, DType::F16], false, "mix").unwrap_err();
        assert!(
            matches!(
                e,
                OpError::DType {
                    got: DType::F16,
                    ..
                }
            ),
            "{e}"
        );
        let e = compile(&_3.abs(), &[DType::F32], false, "ph").unwrap_err();
        assert!(e.to_string().contains("_3"), "{e}");
        let e = compile(&_1.sqrt(), &[DType::I32], false, "sqrt").unwrap_err();
        assert!(e.to_string().contains("Sqrt"), "{e}");
    }
}
