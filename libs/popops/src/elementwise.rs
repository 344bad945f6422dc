//! Single element-wise operations on tensors, poplibs style (`popops::abs`, `popops::add`,
//! `popops::select`, …): each builds the one-operation expression and [`map`]s it, so they
//! broadcast, take every type the operation is defined on and cost as poplibs' single-op
//! vertices (`UnaryOp2D`, `BinaryOp2D` and their in-place forms).
//!
//! ```
//! use poplar::{DType, Graph, Target};
//! use popops::elementwise::{binary, unary};
//! use popops::expr::{BinaryOpType, UnaryOpType};
//!
//! codelets::link();
//! let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
//! let a = graph.add_variable(DType::F32, &[4, 8], "a");
//! let b = graph.add_variable(DType::F32, &[8], "b");
//! graph.map_linearly(&a, 2)?;
//! graph.map_linearly(&b, 2)?;
//! let mut prog = Vec::new();
//! let s = binary(&mut graph, BinaryOpType::Add, &a, &b, &mut prog, "a+b")?; // [4, 8]
//! let m = binary(&mut graph, BinaryOpType::Lt, &s, &a, &mut prog, "s<a")?; // bool
//! let e = unary(&mut graph, UnaryOpType::Exp, &s, &mut prog, "exp")?;
//! assert_eq!((m.dtype(), e.shape()), (DType::Bool, &[4usize, 8][..]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use poplar_compiler::graph::{Graph, Tensor, VertexRef};

use crate::error::OpError;
use crate::expr::{BinaryOpType, Expr, TernaryOpType, _1, _2, _3};
use crate::map::{map, map_in_place, Sequence};

fn unary_expr(op: crate::expr::UnaryOpType) -> Expr {
    Expr::Unary(op, Box::new(_1))
}

fn ternary_expr(op: TernaryOpType) -> Expr {
    Expr::Ternary(op, Box::new(_1), Box::new(_2), Box::new(_3))
}

fn binary_expr(op: BinaryOpType) -> Expr {
    Expr::Binary(op, Box::new(_1), Box::new(_2))
}

/// `op(a)` into a new tensor.
pub fn unary(
    graph: &mut Graph,
    op: crate::expr::UnaryOpType,
    a: &Tensor,
    prog: &mut impl Sequence,
    name: &str,
) -> Result<Tensor, OpError> {
    map(graph, &unary_expr(op), &[a], prog, name)
}

/// `a = op(a)`.
pub fn unary_in_place(
    graph: &mut Graph,
    op: crate::expr::UnaryOpType,
    a: &Tensor,
    prog: &mut impl Sequence,
    name: &str,
) -> Result<Vec<VertexRef>, OpError> {
    map_in_place(graph, &unary_expr(op), &[a], prog, name)
}

/// `op(a, b)` into a new tensor of the broadcast shape.
pub fn binary(
    graph: &mut Graph,
    op: BinaryOpType,
    a: &Tensor,
    b: &Tensor,
    prog: &mut impl Sequence,
    name: &str,
) -> Result<Tensor, OpError> {
    map(graph, &binary_expr(op), &[a, b], prog, name)
}

/// `a = op(a, b)` (`b` broadcast to `a`'s shape).
pub fn binary_in_place(
    graph: &mut Graph,
    op: BinaryOpType,
    a: &Tensor,
    b: &Tensor,
    prog: &mut impl Sequence,
    name: &str,
) -> Result<Vec<VertexRef>, OpError> {
    map_in_place(graph, &binary_expr(op), &[a, b], prog, name)
}

/// `select(a, b, cond) = cond ? a : b`, `cond` a `bool` tensor, all broadcast together.
pub fn select(
    graph: &mut Graph,
    a: &Tensor,
    b: &Tensor,
    cond: &Tensor,
    prog: &mut impl Sequence,
    name: &str,
) -> Result<Tensor, OpError> {
    map(
        graph,
        &ternary_expr(TernaryOpType::Select),
        &[a, b, cond],
        prog,
        name,
    )
}

/// `clamp(x, lo, hi) = min(max(x, lo), hi)`, all broadcast together.
pub fn clamp(
    graph: &mut Graph,
    x: &Tensor,
    lo: &Tensor,
    hi: &Tensor,
    prog: &mut impl Sequence,
    name: &str,
) -> Result<Tensor, OpError> {
    map(
        graph,
        &ternary_expr(TernaryOpType::Clamp),
        &[x, lo, hi],
        prog,
        name,
    )
}
