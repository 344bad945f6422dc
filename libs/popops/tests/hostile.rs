//! The op library under hostile arguments: a seeded sweep of every shape-taking op of popops
//! (gather and scatter, one-hot, pad, concat and split, sorts and top-k, reductions, scans,
//! dynamic slices, element-wise ops with broadcasting) with random ranks (0 to 3), sizes
//! (0 to 4, so empty axes are common), element types, axes (out of range too), amounts and
//! index values (negative and out of range too). The specification: every call returns a
//! tensor or a typed `OpError` whose message names the op, and never panics; a graph that
//! builds compiles, and its run ends with results or a typed error, never a panic. The case
//! that breaks this is printed with its seed, so it reproduces.

#[path = "../../../codelets/tests/common/mod.rs"]
mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use common::Rng;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
use poplar::{Element, Tensor};
use popops::expr::BinaryOpType;
use popops::gather::ScatterReduction;
use popops::pad::PadMode;
use popops::{Operation, SliceOptions};

/// Cases in the sweep (seeds 0 to CASES − 1).
const CASES: u64 = 1500;

const DTYPES: [DType; 5] = [DType::F32, DType::F16, DType::I32, DType::U32, DType::Bool];

/// The random choices of one case, and its description as it is drawn.
struct Case {
    rng: Rng,
    what: String,
    count: usize,
    /// Whether a tensor was left unmapped: the compiler may then refuse the graph, by name.
    unmapped: bool,
}

impl Case {
    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n as u64) as usize
    }

    /// Rank 0 to 3 (mostly 1 to 3), sizes 0 to 4.
    fn shape(&mut self) -> Vec<usize> {
        let rank = if self.below(6) == 0 {
            0
        } else {
            1 + self.below(3)
        };
        (0..rank).map(|_| self.below(5)).collect()
    }

    fn dtype(&mut self) -> DType {
        DTYPES[self.below(DTYPES.len())]
    }

    /// An axis, one in five out of range.
    fn axis(&mut self, rank: usize) -> usize {
        if self.below(5) == 0 {
            rank + self.below(3)
        } else {
            self.below(rank.max(1))
        }
    }

    /// A variable of a random type and shape, mapped over the tiles (or, one in eight, left
    /// unmapped), with index-like initial values when it holds integers.
    fn tensor(&mut self, g: &mut Graph, name: &str) -> Tensor {
        let (dtype, shape) = (self.dtype(), self.shape());
        self.tensor_of(g, name, dtype, &shape)
    }

    /// Half the time a tensor of `t`'s type and shape (so that the op has something to do),
    /// else a random one.
    fn like(&mut self, g: &mut Graph, name: &str, t: &Tensor) -> Tensor {
        if self.below(2) == 0 {
            self.tensor_of(g, name, t.dtype(), t.shape())
        } else {
            self.tensor(g, name)
        }
    }

    /// Indices: mostly `i32` or `u32`, of a random shape or of `t`'s.
    fn indices(&mut self, g: &mut Graph, t: &Tensor) -> Tensor {
        let dtype = [DType::I32, DType::U32, DType::I32, DType::F32][self.below(4)];
        let shape = if self.below(2) == 0 {
            t.shape().to_vec()
        } else {
            self.shape()
        };
        self.tensor_of(g, "indices", dtype, &shape)
    }

    fn tensor_of(&mut self, g: &mut Graph, name: &str, dtype: DType, shape: &[usize]) -> Tensor {
        self.count += 1;
        let t = g.add_variable(dtype, shape, &format!("{name}{}", self.count));
        let n = t.num_elements();
        let mapped = self.below(8) != 0;
        self.unmapped |= !mapped;
        self.what += &format!(
            " {name}={dtype}{shape:?}{}",
            if mapped { "" } else { "(unmapped)" }
        );
        if mapped && n > 0 {
            g.map_linearly(&t, 1 + self.below(3)).unwrap();
            match dtype {
                DType::I32 => self.init::<i32>(g, &t, n, |r| r as i32 % 7 - 3),
                DType::U32 => self.init::<u32>(g, &t, n, |r| r as u32 % 6),
                DType::F32 => self.init::<f32>(g, &t, n, |r| (r % 11) as f32 - 5.0),
                _ => {}
            }
        }
        t
    }

    fn init<T: Element>(&mut self, g: &mut Graph, t: &Tensor, n: usize, f: fn(u64) -> T) {
        let v: Vec<T> = (0..n).map(|_| f(self.rng.next_u64())).collect();
        g.set_initial_value(t, &v).unwrap();
    }
}

/// One op with random arguments; its result, if any, is read by the host.
fn build(c: &mut Case, g: &mut Graph, prog: &mut Vec<Program>) -> Result<(), popops::OpError> {
    let op = c.below(15);
    let t = c.tensor(g, "t");
    let rank = t.rank();
    let out = match op {
        0 => {
            let i = c.indices(g, &t);
            let axis = c.axis(rank);
            c.what = format!("gather axis {axis}:{}", c.what);
            popops::gather(g, &t, &i, axis, prog, "op")?
        }
        1 | 2 => {
            let i = c.indices(g, &t);
            let axis = c.axis(rank);
            if op == 1 {
                c.what = format!("gather_elements axis {axis}:{}", c.what);
                popops::gather_elements(g, &t, &i, axis, prog, "op")?
            } else {
                let u = c.like(g, "updates", &i);
                let red = [ScatterReduction::None, ScatterReduction::Add][c.below(2)];
                c.what = format!("scatter_elements {red:?} axis {axis}:{}", c.what);
                popops::scatter_elements(g, &t, &i, &u, axis, red, prog, "op")?
            }
        }
        3 => {
            let (depth, dtype) = (c.below(5), c.dtype());
            c.what = format!("one_hot depth {depth} {dtype}:{}", c.what);
            popops::one_hot(g, &t, depth, dtype, prog, "op")?
        }
        4 => {
            let n = if c.below(4) == 0 { rank + 1 } else { rank };
            let before: Vec<usize> = (0..n).map(|_| c.below(4)).collect();
            let after: Vec<usize> = (0..rank).map(|_| c.below(4)).collect();
            let mode = [PadMode::Constant(2.5), PadMode::Edge, PadMode::Reflect][c.below(3)];
            c.what = format!("pad {before:?} {after:?} {mode:?}:{}", c.what);
            popops::pad(g, &t, &before, &after, mode, prog, "op")?
        }
        5 => {
            let u = c.like(g, "u", &t);
            let axis = c.axis(rank);
            c.what = format!("concat axis {axis}:{}", c.what);
            let joined = popops::concat(&[t.clone(), u], axis)?;
            let sizes: Vec<usize> = (0..c.below(3)).map(|_| c.below(4)).collect();
            c.what += &format!(" then split {sizes:?}");
            popops::split(&joined, axis, &sizes)?;
            joined
        }
        6 | 7 => {
            let (k, axis) = (c.below(6), c.axis(rank));
            if op == 6 {
                c.what = format!("sort_with_indices axis {axis}:{}", c.what);
                popops::sort_with_indices(g, &t, axis, prog, "op")?.0
            } else {
                c.what = format!("top_k {k} axis {axis}:{}", c.what);
                popops::top_k(g, &t, axis, k, c.below(2) == 0, prog, "op")?.1
            }
        }
        8 | 9 => {
            let dims: Vec<usize> = (0..c.below(3)).map(|_| c.axis(rank)).collect();
            let ops = [
                Operation::Add,
                Operation::Mul,
                Operation::Min,
                Operation::Max,
                Operation::LogicalAnd,
                Operation::LogicalOr,
                Operation::SquareAdd,
            ];
            let oper = ops[c.below(ops.len())];
            let out_dtype = if c.below(4) == 0 {
                c.dtype()
            } else {
                t.dtype()
            };
            c.what = format!("reduce {oper:?} over {dims:?} to {out_dtype}:{}", c.what);
            if op == 8 {
                popops::reduce(g, &t, out_dtype, &dims, oper, prog, "op")?
            } else {
                let kept: Vec<usize> = (0..rank)
                    .filter(|d| !dims.contains(d))
                    .map(|d| t.shape()[d])
                    .collect();
                let o = if c.below(2) == 0 {
                    c.tensor_of(g, "out", out_dtype, &kept)
                } else {
                    c.tensor(g, "out")
                };
                popops::reduce_with_output(g, &t, &o, &dims, oper, prog, "op")?;
                o
            }
        }
        10 | 11 => {
            let axis = c.axis(rank);
            if op == 10 {
                c.what = format!("cumsum axis {axis}:{}", c.what);
                popops::cumsum(g, &t, axis, c.below(2) == 0, prog, "op")?
            } else {
                c.what = format!("arg_max axis {axis}:{}", c.what);
                popops::arg_max(g, &t, axis, prog, "op")?
            }
        }
        12 => {
            let dims: Vec<usize> = (0..c.below(3)).map(|_| c.axis(rank)).collect();
            let sizes: Vec<usize> = (0..dims.len()).map(|_| c.below(4)).collect();
            let offset = c.tensor_of(g, "offset", DType::U32, &[dims.len()]);
            let options = SliceOptions {
                remap_out_of_bound_indices: c.below(2) == 0,
            };
            c.what = format!("dynamic_slice dims {dims:?} sizes {sizes:?}:{}", c.what);
            popops::dynamic_slice(g, &t, &offset, &dims, &sizes, &options, prog, "op")?
        }
        _ => {
            let u = c.like(g, "u", &t);
            let ops = [BinaryOpType::Add, BinaryOpType::Div, BinaryOpType::Rem];
            let bop = ops[c.below(ops.len())];
            c.what = format!("binary {bop:?}:{}", c.what);
            popops::elementwise::binary(g, bop, &t, &u, prog, "op")?
        }
    };
    if out.num_elements() > 0 && g.tile_mapping(&out).is_ok() {
        let _ = g.create_host_read("result", &out);
    }
    Ok(())
}

/// How a case ended, when it kept the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Refused,
    NotCompiled,
    RunFailed,
    Ran,
}

/// Builds, compiles and runs case `seed`; `Err` describes a panic or an untyped failure.
fn case(seed: u64) -> Result<Outcome, String> {
    let mut c = Case {
        rng: Rng::new(seed),
        what: String::new(),
        count: 0,
        unmapped: false,
    };
    let mut g = Graph::new(&Target::custom(6, 128 * 1024));
    let mut prog = Vec::new();
    let built = catch_unwind(AssertUnwindSafe(|| build(&mut c, &mut g, &mut prog)));
    let fail = |c: &Case, why: String| Err(format!("seed {seed} ({}): {why}", c.what));
    match built {
        Err(_) => return fail(&c, "building panicked".into()),
        Ok(Err(e)) if e.to_string().trim().is_empty() => return fail(&c, "empty error".into()),
        Ok(Err(e)) => {
            if std::env::var_os("HOSTILE_DEBUG").is_some() {
                eprintln!("{}: {e}", c.what);
            }
            return Ok(Outcome::Refused);
        }
        Ok(Ok(())) => {}
    }
    let unmapped = c.unmapped;
    let ran = catch_unwind(AssertUnwindSafe(|| {
        let exe = match compile(&g, &[Program::seq(prog)], &CompileOptions::default()) {
            Ok(exe) => exe,
            // The user's unmapped tensor, named by the compiler's typed error.
            Err(_) if unmapped => return Ok(Outcome::NotCompiled),
            Err(e) => return Err(format!("a graph popops built does not compile: {e}")),
        };
        let mut engine =
            Engine::new(&exe, EngineOptions::with_threads(1)).map_err(|e| e.to_string())?;
        // A run may fail (an index out of range is a run-time error), but only typed.
        Ok(match engine.run(0) {
            Ok(()) => Outcome::Ran,
            Err(_) => Outcome::RunFailed,
        })
    }));
    match ran {
        Err(_) => fail(&c, "compiling or running panicked".into()),
        Ok(Err(why)) => fail(&c, why),
        Ok(Ok(outcome)) => Ok(outcome),
    }
}

#[test]
fn every_op_under_random_arguments_returns_a_typed_error_or_a_graph_that_runs() {
    codelets::link();
    // Quiet the default hook: the cases that panic are reported below, all of them.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let results: Vec<Result<Outcome, String>> = (0..CASES).map(case).collect();
    std::panic::set_hook(hook);
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    let mut tally = std::collections::BTreeMap::new();
    for o in results.iter().flatten() {
        *tally.entry(*o).or_insert(0) += 1;
    }
    println!("outcomes of {CASES} cases: {tally:?}");
    // The sweep must reach the engine often enough to mean something.
    assert!(
        tally.get(&Outcome::Ran).copied().unwrap_or(0) >= CASES / 5,
        "too few cases ran: {tally:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {CASES} cases broke the rule:\n{}",
        failures.len(),
        failures
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
