//! Conversion between element types (`popops::cast`): every pair of `f32`, `f16`, `i32`,
//! `u32`, `u8`, `u16` and `bool`, as `codelets::map::Op::Cast` defines it (float → integer
//! truncates toward zero and saturates, NaN → 0; integer → integer keeps the low bits;
//! → `bool` is `x != 0`; → `f16` rounds once, to nearest or stochastically as the engine
//! rounds).

use poplar_compiler::graph::{Graph, Tensor, VertexRef};
use poplar_core::dtype::DType;

use crate::error::OpError;
use crate::expr::_1;
use crate::map::{map, map_into, Sequence};

/// `t` converted to `to`, in a new tensor mapped as `t`.
pub fn cast(
    graph: &mut Graph,
    t: &Tensor,
    to: DType,
    prog: &mut impl Sequence,
    name: &str,
) -> Result<Tensor, OpError> {
    map(graph, &_1.cast(to), &[t], prog, name)
}

/// `out = t` converted to `out`'s type (same shape).
pub fn cast_into(
    graph: &mut Graph,
    t: &Tensor,
    out: &Tensor,
    prog: &mut impl Sequence,
    name: &str,
) -> Result<Vec<VertexRef>, OpError> {
    map_into(graph, &_1.cast(out.dtype()), &[t], out, prog, name)
}
