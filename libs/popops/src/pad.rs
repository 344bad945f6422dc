//! Padding ([`pad`]: constant, edge or reflect, per-axis amounts before and after; poplibs'
//! `Pad.hpp`, ONNX `Pad`) and joining and splitting along an axis ([`concat()`], [`split()`]).
//!
//! Edge and reflect padding are pure data movement: the padded tensor is a view (slices of
//! `t`, repeated by `broadcast` or reversed, joined by `concat_dim`) copied into a new
//! variable by one `Copy` program; constant padding copies a broadcast one-element constant
//! (on tile 0, poplibs' `MappingMethod::ZERO`) into the new variable, then `t` into its
//! interior. No codelets and no cycle estimates of their own: the copies are costed by the
//! compiler's exchange and on-tile copy model. [`concat()`] and [`split()`] are views, with
//! typed errors naming the operand and axis at fault.
//!
//! ```
//! use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
//! use popops::pad::{pad, PadMode};
//!
//! codelets::link();
//! let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
//! let t = graph.add_variable(DType::I32, &[3], "t");
//! graph.map_linearly(&t, 2)?;
//! graph.set_initial_value(&t, &[1i32, 2, 3])?;
//! let mut prog = Vec::new();
//! let r = pad(&mut graph, &t, &[2], &[1], PadMode::Reflect, &mut prog, "r")?;
//! let e = pad(&mut graph, &t, &[1], &[2], PadMode::Edge, &mut prog, "e")?;
//! let c = pad(&mut graph, &t, &[1], &[1], PadMode::Constant(-7.0), &mut prog, "c")?;
//! for (n, x) in [("r", &r), ("e", &e), ("c", &c)] {
//!     graph.create_host_read(n, x)?;
//! }
//! let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
//! let mut engine = Engine::new(&exe, EngineOptions::default())?;
//! engine.run(0)?;
//! assert_eq!(engine.read_tensor::<i32>("r")?, [3, 2, 1, 2, 3, 2]);
//! assert_eq!(engine.read_tensor::<i32>("e")?, [1, 1, 2, 3, 3, 3]);
//! assert_eq!(engine.read_tensor::<i32>("c")?, [-7, 1, 2, 3, -7]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor};
use poplar_core::dtype::DType;

use crate::error::{check_axis, dtype_err, shape_err};
use crate::OpError;

/// What [`pad`] puts in the new elements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PadMode {
    /// The value, in `t`'s type (an integer type takes an integral value it can hold).
    Constant(f64),
    /// The nearest element of `t` along the axis (numpy's `edge`, poplibs' `EDGE`).
    Edge,
    /// The elements mirrored about the first or last one, which is not repeated (numpy's
    /// `reflect`, poplibs' `REFLECT`): `[1, 2, 3]` padded by 2 before is `[3, 2, 1, 2, 3]`.
    /// Each amount must be below the axis length.
    Reflect,
}

/// A one-element constant of `value` in `dtype`, on tile 0.
fn constant(graph: &mut Graph, dtype: DType, value: f64, name: &str) -> Result<Tensor, OpError> {
    let op = "pad";
    let integral = |lo: f64, hi: f64| {
        if value.fract() != 0.0 || !(lo..=hi).contains(&value) {
            Err(shape_err(
                op,
                format!("the pad value {value} is not a value of {dtype}"),
            ))
        } else {
            Ok(())
        }
    };
    let c = match dtype {
        DType::F32 => graph.add_constant(&[1], &[value as f32], name)?,
        DType::F16 => graph.add_constant(&[1], &[poplar_core::fp::f16_from_f64(value)], name)?,
        DType::I32 => {
            integral(f64::from(i32::MIN), f64::from(i32::MAX))?;
            graph.add_constant(&[1], &[value as i32], name)?
        }
        DType::U32 => {
            integral(0.0, f64::from(u32::MAX))?;
            graph.add_constant(&[1], &[value as u32], name)?
        }
        d => {
            return Err(dtype_err(
                op,
                "t",
                d,
                "constant padding takes f32, f16, i32 or u32",
            ))
        }
    };
    graph.set_tile_mapping(&c, 0)?;
    Ok(c)
}

/// The padded view of `t` along axis `d` (edge or reflect).
fn pad_axis(
    cur: &Tensor,
    d: usize,
    before: usize,
    after: usize,
    mode: PadMode,
) -> Result<Tensor, OpError> {
    let len = cur.shape()[d];
    let mut parts = Vec::new();
    match mode {
        PadMode::Edge => {
            if len == 0 && before + after > 0 {
                return Err(shape_err(
                    "pad",
                    format!("axis {d} of 't' is empty, so it has no edge to repeat"),
                ));
            }
            if before > 0 {
                parts.push(cur.slice_dim(d, 0..1)?.broadcast(before, d)?);
            }
            parts.push(cur.clone());
            if after > 0 {
                parts.push(cur.slice_dim(d, len - 1..len)?.broadcast(after, d)?);
            }
        }
        PadMode::Reflect => {
            if before.max(after) >= len.max(1) && before + after > 0 {
                return Err(shape_err(
                    "pad",
                    format!(
                        "reflect padding of axis {d} by {before} before and {after} after \
                         needs amounts below its length {len}"
                    ),
                ));
            }
            if before > 0 {
                parts.push(cur.slice_dim(d, 1..before + 1)?.reverse(d)?);
            }
            parts.push(cur.clone());
            if after > 0 {
                parts.push(cur.slice_dim(d, len - 1 - after..len - 1)?.reverse(d)?);
            }
        }
        PadMode::Constant(_) => unreachable!("constant padding is not a view"),
    }
    Ok(Tensor::concat_dim(&parts, d)?)
}

/// `t` padded by `before[d]` elements at the start and `after[d]` at the end of every axis
/// `d` (poplibs' `pad`, ONNX `Pad` with non-negative pads): a new tensor, spread over the
/// tiles by `map_linearly` in grains of 64 bits, written by `Copy` programs appended to
/// `prog` (see the [module notes](self)). Any type for edge and reflect; `f32`, `f16`, `i32`
/// or `u32` for a constant.
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// # use popops::pad::{pad, PadMode};
/// let mut graph = Graph::new(&Target::custom(2, 64 * 1024));
/// let t = graph.add_variable(DType::F32, &[2, 3], "t");
/// graph.map_linearly(&t, 2)?;
/// let mut prog = Vec::new();
/// let p = pad(&mut graph, &t, &[1, 0], &[1, 2], PadMode::Edge, &mut prog, "p")?;
/// assert_eq!(p.shape(), [4, 5]);
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn pad(
    graph: &mut Graph,
    t: &Tensor,
    before: &[usize],
    after: &[usize],
    mode: PadMode,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, OpError> {
    if before.len() != t.rank() || after.len() != t.rank() {
        return Err(shape_err(
            "pad",
            format!(
                "'before' ({before:?}) and 'after' ({after:?}) need one amount per axis of 't' {:?}",
                t.shape()
            ),
        ));
    }
    let shape: Vec<usize> = (0..t.rank())
        .map(|d| before[d] + t.shape()[d] + after[d])
        .collect();
    let value = match mode {
        PadMode::Constant(v) => Some(constant(graph, t.dtype(), v, &format!("{name}/value"))?),
        _ => None,
    };
    let out = graph.add_variable(t.dtype(), &shape, name);
    let grain = (8 / t.dtype().size().max(1)).max(1);
    graph.map_linearly(&out, grain)?;
    if out.num_elements() == 0 {
        return Ok(out);
    }
    match value {
        Some(c) => {
            let mut fill = c.reshape(&vec![1; t.rank()])?;
            for (d, &s) in shape.iter().enumerate() {
                fill = fill.broadcast(s, d)?;
            }
            prog.push(Program::copy(&fill, &out));
            if t.num_elements() > 0 {
                let mut inner = out.clone();
                for (d, (&b, &len)) in before.iter().zip(t.shape()).enumerate() {
                    inner = inner.slice_dim(d, b..b + len)?;
                }
                prog.push(Program::copy(t, &inner));
            }
        }
        None => {
            let mut cur = t.clone();
            for d in 0..t.rank() {
                cur = pad_axis(&cur, d, before[d], after[d], mode)?;
            }
            prog.push(Program::copy(&cur, &out));
        }
    }
    Ok(out)
}

/// `tensors` joined along `axis` (a view; ONNX `Concat`, Poplar's `concat`): every operand of
/// the first one's type and rank, and of its length on every other axis.
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// let mut graph = Graph::new(&Target::custom(1, 64 * 1024));
/// let a = graph.add_variable(DType::F32, &[2, 3], "a");
/// let b = graph.add_variable(DType::F32, &[2, 1], "b");
/// assert_eq!(popops::concat(&[a, b], 1)?.shape(), [2, 4]);
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn concat(tensors: &[Tensor], axis: usize) -> Result<Tensor, OpError> {
    let op = "concat";
    let Some(first) = tensors.first() else {
        return Err(shape_err(op, "no tensors to join"));
    };
    check_axis(op, "tensors[0]", first.rank(), axis)?;
    for (i, t) in tensors.iter().enumerate().skip(1) {
        if t.dtype() != first.dtype() {
            return Err(dtype_err(
                op,
                &format!("tensors[{i}]"),
                t.dtype(),
                &format!("the type of tensors[0], {}", first.dtype()),
            ));
        }
        if t.rank() != first.rank() {
            return Err(shape_err(
                op,
                format!(
                    "'tensors[{i}]' {:?} has not the rank {} of 'tensors[0]' {:?}",
                    t.shape(),
                    first.rank(),
                    first.shape()
                ),
            ));
        }
        if let Some(d) = (0..t.rank()).find(|&d| d != axis && t.shape()[d] != first.shape()[d]) {
            return Err(shape_err(
                op,
                format!(
                    "axis {d} of 'tensors[{i}]' is {} but that of 'tensors[0]' is {} \
                     (only axis {axis} may differ)",
                    t.shape()[d],
                    first.shape()[d]
                ),
            ));
        }
    }
    Ok(Tensor::concat_dim(tensors, axis)?)
}

/// `t` cut along `axis` into consecutive pieces of `sizes` (views; ONNX `Split`), which must
/// add up to the length of the axis.
///
/// ```
/// # use poplar::{DType, Graph, Target};
/// let mut graph = Graph::new(&Target::custom(1, 64 * 1024));
/// let t = graph.add_variable(DType::F32, &[2, 5], "t");
/// let parts = popops::split(&t, 1, &[2, 0, 3])?;
/// assert_eq!(parts[2].shape(), [2, 3]);
/// # Ok::<(), popops::OpError>(())
/// ```
pub fn split(t: &Tensor, axis: usize, sizes: &[usize]) -> Result<Vec<Tensor>, OpError> {
    let op = "split";
    check_axis(op, "t", t.rank(), axis)?;
    let total: usize = sizes.iter().sum();
    if total != t.shape()[axis] {
        return Err(shape_err(
            op,
            format!(
                "'sizes' {sizes:?} add up to {total}, not the length {} of axis {axis} of 't'",
                t.shape()[axis]
            ),
        ));
    }
    let mut at = 0;
    let mut out = Vec::with_capacity(sizes.len());
    for &s in sizes {
        out.push(t.slice_dim(axis, at..at + s)?);
        at += s;
    }
    Ok(out)
}
