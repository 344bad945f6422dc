//! Seeded random numbers on poplar-rs, in the style of Poplar's poprand: [`uniform`] (`f32`,
//! `f16`, `i32`), [`normal`], [`truncated_normal`], [`bernoulli`] and [`dropout`].
//!
//! **The generator** is Philox4x32-10 ([`philox`], checked against the Random123 known-answer
//! vectors), a counter-based generator: the seed (a device tensor of two `u32`, poprand's
//! `seed`) is the key and the counter is the element's flat index in the generated tensor,
//! with poprand's `seed_modifier` in another counter word ([`stream`]). So a tensor's bits
//! depend on the seed, the modifier, the distribution's parameters and the tensor's shape
//! only: the same on 1 tile or 1,472, for any split between workers, any engine thread count,
//! rank count and instruction-set level, and wherever the reference tensor is mapped. (A real
//! IPU's poprand draws from the tiles' hardware generators, whose bits depend on the mapping;
//! this library promises more, and its bits differ from the chip's.) Two calls with the same
//! seed, modifier and shape give the same stream: pass different modifiers for independent
//! streams.
//!
//! Each function adds one compute set: a vertex per worker piece of the output (each tile's
//! elements split between its workers, `popops::worker_pieces`), the output a new variable of
//! `reference`'s shape mapped as `reference` is (poprand's "layout of the reference tensor"),
//! and appends its execution to `prog`. There is no hardware-generator default
//! (poprand's null seed) and no `setSeed`: a seed tensor is required.
//!
//! ```
//! use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
//!
//! codelets::link();
//! let mut graph = Graph::new(&Target::custom(4, 64 * 1024));
//! let seed = graph.add_constant(&[2], &[42u32, 7], "seed")?;
//! graph.set_tile_mapping(&seed, 0)?;
//! let reference = graph.add_variable(DType::F32, &[1000], "ref");
//! graph.map_linearly(&reference, 8)?;
//! let mut prog = Vec::new();
//! let x = poprand::uniform(&mut graph, &seed, 0, &reference, DType::F32, -1.0, 1.0, &mut prog, "u")?;
//! graph.create_host_read("x", &x)?;
//! let exe = compile(&graph, &[Program::seq(prog)], &CompileOptions::default())?;
//! let mut engine = Engine::new(&exe, EngineOptions::default())?;
//! engine.run(0)?;
//! let got = engine.read_tensor::<f32>("x")?;
//! // The host recomputes the stream: element i of a plain draw.
//! let s = poprand::stream::Stream::new([42, 7], 0);
//! for (i, &g) in got.iter().enumerate() {
//!     let w = s.block(i as u64 / 4, 0)[i % 4];
//!     assert_eq!(g, poprand::stream::uniform(w, -1.0, 1.0) as f32);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, GraphError, StateValue, Tensor};
use poplar_core::dtype::DType;

pub mod philox;
pub mod stream;
pub mod vertices;

/// Errors of the generators.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RandError {
    /// A graph operation failed.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// The work split over the reference's mapping failed (an unmapped reference).
    #[error(transparent)]
    Op(#[from] popops::OpError),
    /// An argument out of its range, naming it.
    #[error("{op}: {reason}")]
    BadArgument { op: String, reason: String },
    /// The distribution is not provided for this element type.
    #[error("{op}: output type {dtype} is not supported (supported: {supported})")]
    Unsupported {
        op: String,
        dtype: DType,
        supported: &'static str,
    },
}

fn bad(op: &str, reason: impl Into<String>) -> RandError {
    RandError::BadArgument {
        op: op.to_string(),
        reason: reason.into(),
    }
}

/// Forces this crate's codelets to be linked (call once before compiling a graph using them).
#[inline(never)]
pub fn link() {}

/// A new variable of `reference`'s shape, each element on the tile of the same element of
/// `reference` (poputil's `cloneToGraph` of the layout).
pub fn clone_like(
    graph: &mut Graph,
    reference: &Tensor,
    dtype: DType,
    name: &str,
) -> Result<Tensor, RandError> {
    let out = graph.add_variable(dtype, reference.shape(), name);
    let flat = out.flatten();
    for (tile, ranges) in graph.tile_mapping(reference)?.into_iter().enumerate() {
        for r in ranges {
            graph.set_tile_mapping(&flat.slice(r)?, tile as u32)?;
        }
    }
    Ok(out)
}

fn check_seed(seed: &Tensor, op: &str) -> Result<(), RandError> {
    if seed.dtype() != DType::U32 || seed.num_elements() != 2 {
        return Err(bad(
            op,
            format!(
                "the seed must be 2 elements of u32, got {}{:?}",
                seed.dtype(),
                seed.shape()
            ),
        ));
    }
    Ok(())
}

/// A new tensor like `reference` of `dtype` filled by `codelet`'s draws ([`generate`] with no
/// inputs): what every distribution but dropout does once its parameters are checked.
fn draw(
    graph: &mut Graph,
    codelet: &str,
    (seed, seed_modifier): (&Tensor, u32),
    (reference, dtype): (&Tensor, DType),
    state: &[(&str, StateValue)],
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, RandError> {
    let out = clone_like(graph, reference, dtype, name)?;
    generate(
        graph,
        codelet,
        seed,
        seed_modifier,
        &out,
        &[],
        state,
        prog,
        name,
    )?;
    Ok(out)
}

/// Adds the compute set `name` of `codelet` vertices over the worker pieces of `out`, each
/// connected to the seed, its piece of `out` (and of each input), with its first element's
/// flat index, the modifier and `state`; appends its execution to `prog`.
#[allow(clippy::too_many_arguments)] // the generator's parts, as poprand's functions take them
fn generate(
    graph: &mut Graph,
    codelet: &str,
    seed: &Tensor,
    seed_modifier: u32,
    out: &Tensor,
    inputs: &[(&str, &Tensor)],
    state: &[(&str, StateValue)],
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<(), RandError> {
    link();
    check_seed(seed, codelet)?;
    let seed = seed.flatten();
    let flat = out.flatten();
    let flat_inputs: Vec<(&str, Tensor)> = inputs.iter().map(|(f, t)| (*f, t.flatten())).collect();
    let cs = graph.add_compute_set(name);
    let pieces = if out.num_elements() == 0 {
        Vec::new()
    } else {
        popops::worker_pieces(graph, out, codelet)?
    };
    for (tile, range) in pieces {
        let v = graph.add_vertex(cs, codelet)?;
        graph.connect(v, "seed", &seed)?;
        graph.connect(v, "out", &flat.slice(range.clone())?)?;
        for (f, t) in &flat_inputs {
            graph.connect(v, f, &t.slice(range.clone())?)?;
        }
        let at = range.start as u64;
        graph.set_vertex_state(v, "offset_lo", at as u32)?;
        graph.set_vertex_state(v, "offset_hi", (at >> 32) as u32)?;
        graph.set_vertex_state(v, "modifier", seed_modifier)?;
        for (f, s) in state {
            graph.set_vertex_state(v, f, s.clone())?;
        }
        graph.set_tile_mapping(v, tile)?;
    }
    prog.push(Program::execute(cs));
    Ok(())
}

fn type_name(
    op: &str,
    dtype: DType,
    allowed: &[DType],
    supported: &'static str,
) -> Result<String, RandError> {
    if !allowed.contains(&dtype) {
        return Err(RandError::Unsupported {
            op: op.to_string(),
            dtype,
            supported,
        });
    }
    Ok(format!("poprand::{op}<{}>", dtype.poplar_name()))
}

fn finite(op: &str, what: &str, x: f64) -> Result<f32, RandError> {
    let y = x as f32;
    if !y.is_finite() {
        return Err(bad(
            op,
            format!("'{what}' is {x}, it must be finite in f32"),
        ));
    }
    Ok(y)
}

/// A tensor like `reference` of `dtype` (`F32`, `F16`, `I32`) uniformly distributed in
/// `[min, max]` (poprand's `uniform`). For `I32` the bounds must be integers and the interval
/// is inclusive, with a bias below `(max − min + 1) / 2³²` unless that is a power of two; for
/// reals `min` and `max` are rounded to f32 and the value is `min + (max − min) · w / 2³²`
/// rounded once (so `max` may occur). Errors: `min > max` (`min == max` is allowed), a
/// non-finite bound, a non-integer bound for `I32`.
#[allow(clippy::too_many_arguments)] // poprand's signature
pub fn uniform(
    graph: &mut Graph,
    seed: &Tensor,
    seed_modifier: u32,
    reference: &Tensor,
    dtype: DType,
    min: f64,
    max: f64,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, RandError> {
    let op = "Uniform";
    let codelet = type_name(
        op,
        dtype,
        &[DType::F32, DType::F16, DType::I32],
        "f32, f16, i32",
    )?;
    if min.is_nan() || max.is_nan() || min > max {
        return Err(bad(
            op,
            format!("'min' ({min}) must not be above 'max' ({max})"),
        ));
    }
    let state = if dtype == DType::I32 {
        let int = |what: &str, x: f64| -> Result<i32, RandError> {
            if x.fract() != 0.0 || x < f64::from(i32::MIN) || x > f64::from(i32::MAX) {
                return Err(bad(
                    op,
                    format!("'{what}' is {x}, it must be an i32 for an i32 output"),
                ));
            }
            Ok(x as i32)
        };
        vec![
            ("lo", int("min", min)?.into()),
            ("hi", int("max", max)?.into()),
        ]
    } else {
        vec![
            ("lo", finite(op, "min", min)?.into()),
            ("hi", finite(op, "max", max)?.into()),
        ]
    };
    let like = (reference, dtype);
    draw(
        graph,
        &codelet,
        (seed, seed_modifier),
        like,
        &state,
        prog,
        name,
    )
}

/// A tensor like `reference` of `dtype` (`F32`, `F16`, `I32`) whose elements are 1 with
/// probability `prob` (rounded to f32), else 0 (poprand's `bernoulli`). Errors: `prob`
/// outside `[0, 1]`.
#[allow(clippy::too_many_arguments)] // poprand's signature
pub fn bernoulli(
    graph: &mut Graph,
    seed: &Tensor,
    seed_modifier: u32,
    reference: &Tensor,
    dtype: DType,
    prob: f64,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, RandError> {
    let op = "Bernoulli";
    let codelet = type_name(
        op,
        dtype,
        &[DType::F32, DType::F16, DType::I32],
        "f32, f16, i32",
    )?;
    if !(0.0..=1.0).contains(&prob) {
        return Err(bad(op, format!("'prob' is {prob}, it must be in [0, 1]")));
    }
    let state = [("prob", StateValue::from(prob as f32))];
    let like = (reference, dtype);
    draw(
        graph,
        &codelet,
        (seed, seed_modifier),
        like,
        &state,
        prog,
        name,
    )
}

/// A tensor like `reference` of `dtype` (`F32`, `F16`) normally distributed with `mean` and
/// `std_dev` (rounded to f32; poprand's `normal`), by Box–Muller ([`stream`]). Errors: a
/// negative or non-finite `std_dev`, a non-finite `mean`.
#[allow(clippy::too_many_arguments)] // poprand's signature
pub fn normal(
    graph: &mut Graph,
    seed: &Tensor,
    seed_modifier: u32,
    reference: &Tensor,
    dtype: DType,
    mean: f64,
    std_dev: f64,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, RandError> {
    let op = "Normal";
    let codelet = type_name(op, dtype, &[DType::F32, DType::F16], "f32, f16")?;
    let state = normal_state(op, mean, std_dev)?;
    let like = (reference, dtype);
    draw(
        graph,
        &codelet,
        (seed, seed_modifier),
        like,
        &state,
        prog,
        name,
    )
}

fn normal_state(
    op: &str,
    mean: f64,
    std_dev: f64,
) -> Result<Vec<(&'static str, StateValue)>, RandError> {
    let m = finite(op, "mean", mean)?;
    let s = finite(op, "std_dev", std_dev)?;
    if s < 0.0 {
        return Err(bad(
            op,
            format!("'std_dev' is {std_dev}, it must not be negative"),
        ));
    }
    Ok(vec![("mean", m.into()), ("std_dev", s.into())])
}

/// A tensor like `reference` of `dtype` (`F32`, `F16`) from the normal distribution of `mean`
/// and `std_dev` truncated symmetrically at `mean ± alpha · std_dev` (poprand's
/// `truncatedNormal`), by rejection ([`stream`]): every value is within the bounds (up to
/// the rounding of the bounds to the element type). Errors: `alpha` not above 0, as
/// [`normal`].
#[allow(clippy::too_many_arguments)] // poprand's signature
pub fn truncated_normal(
    graph: &mut Graph,
    seed: &Tensor,
    seed_modifier: u32,
    reference: &Tensor,
    dtype: DType,
    mean: f64,
    std_dev: f64,
    alpha: f64,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, RandError> {
    let op = "TruncatedNormal";
    let codelet = type_name(op, dtype, &[DType::F32, DType::F16], "f32, f16")?;
    let mut state = normal_state(op, mean, std_dev)?;
    let a = finite(op, "alpha", alpha)?;
    if a <= 0.0 {
        return Err(bad(op, format!("'alpha' is {alpha}, it must be above 0")));
    }
    state.push(("alpha", a.into()));
    let like = (reference, dtype);
    draw(
        graph,
        &codelet,
        (seed, seed_modifier),
        like,
        &state,
        prog,
        name,
    )
}

/// `input` with each element kept with probability `keep_prob` and multiplied by `scale`
/// (in f32, rounded once), else 0 (poprand's `dropout`): the mask is the Bernoulli draw of
/// the same seed, modifier and shape ([`bernoulli`]'s bits), laid out as `reference` (the
/// output's mapping; it must have `input`'s shape). `F32` or `F16`. Errors: `keep_prob`
/// outside `[0, 1]`, a non-finite `scale`, shapes or types that differ.
#[allow(clippy::too_many_arguments)] // poprand's signature
pub fn dropout(
    graph: &mut Graph,
    seed: &Tensor,
    seed_modifier: u32,
    input: &Tensor,
    reference: &Tensor,
    keep_prob: f64,
    scale: f64,
    prog: &mut Vec<Program>,
    name: &str,
) -> Result<Tensor, RandError> {
    let op = "Dropout";
    let codelet = type_name(op, input.dtype(), &[DType::F32, DType::F16], "f32, f16")?;
    if input.shape() != reference.shape() {
        return Err(bad(
            op,
            format!(
                "'input' has shape {:?} but 'reference' has {:?}",
                input.shape(),
                reference.shape()
            ),
        ));
    }
    if !(0.0..=1.0).contains(&keep_prob) {
        return Err(bad(
            op,
            format!("'keep_prob' is {keep_prob}, it must be in [0, 1]"),
        ));
    }
    let state = [
        ("prob", StateValue::from(keep_prob as f32)),
        ("scale", finite(op, "scale", scale)?.into()),
    ];
    let out = clone_like(graph, reference, input.dtype(), name)?;
    generate(
        graph,
        &codelet,
        seed,
        seed_modifier,
        &out,
        &[("input", input)],
        &state,
        prog,
        name,
    )?;
    Ok(out)
}
