//! Cases for running one executable over several ranks (`poplar::dist`), with their host
//! models: the random graphs of [`crate::random`], and a loop that uses everything that
//! crosses ranks (exchanges in both directions, a broadcast to every tile, a gather to one
//! tile, control flow whose predicate lives on the last tile, host streams both ways).

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{Graph, Tensor};
use poplar_compiler::{compile, CompileOptions};
use poplar_core::dtype::DType;
use poplar_core::target::Target;
use poplar_engine::dist::Ranks;
use poplar_engine::{Engine, EngineError, EngineOptions};

use crate::random::{Case, Host};

/// Runs a random-graph case on `threads` threads over `ranks` (this process alone if `None`):
/// the values of its variables afterwards.
pub fn run_random(case: &Case, threads: usize, ranks: Option<Ranks>) -> Result<Host, EngineError> {
    crate::link();
    let exe = compile(&case.graph, &case.progs, &CompileOptions::default())
        .expect("random graph compiles");
    let mut e = Engine::new(
        &exe,
        EngineOptions {
            ranks,
            ..EngineOptions::with_threads(threads)
        },
    )?;
    for (i, data) in case.init.iter().enumerate() {
        e.write_tensor(&format!("v{i}"), data)?;
    }
    e.run(0)?;
    (0..case.init.len())
        .map(|i| e.read_tensor::<f32>(&format!("v{i}")))
        .collect()
}

/// Failures planted on the last tile of the loop case, checked on `x`'s last element every
/// iteration.
#[derive(Debug, Clone, Copy)]
pub struct Faults {
    /// Vertex `test::FailAbove` fails above this.
    pub fail_above: f32,
    /// Vertex `test::ExitAbove` ends the process (status 3) above this.
    pub exit_above: f32,
}

impl Faults {
    /// None.
    pub const NONE: Faults = Faults {
        fail_above: f32::MAX,
        exit_above: f32::MAX,
    };
}

/// What the loop case leaves: its variables, the loop counter and the values it streamed out.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopResult {
    pub x: Vec<f32>,
    pub z: Vec<f32>,
    pub n: i32,
    pub trace: Vec<f32>,
}

impl LoopResult {
    /// Every value's bits, for bit-for-bit comparisons and digests.
    pub fn bits(&self) -> Vec<u32> {
        let f = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        [f(&self.x), f(&self.z), vec![self.n as u32], f(&self.trace)].concat()
    }
}

/// The loop case on a one-chip target of `tiles` tiles (two elements of `x`, `inp` and `z` on
/// each): while a counter on the last tile counts down from `iters`, stream `inp` in, add it to
/// `x`, sum all of `x` onto tile 0, add that sum to every tile (a broadcast), copy `x`
/// reversed into `z` (exchanges both ways) and fold `z` back into `x`, and stream the sum out.
/// After the loop, add the last sum to `x` again if a flag on the last tile is set.
/// `faults` plants failures on the last tile.
pub fn loop_graph(tiles: u32, faults: Faults) -> (Graph, Vec<Program>) {
    let n = 2 * tiles as usize;
    let last = tiles - 1;
    let mut g = Graph::new(&Target::custom(tiles, 1 << 16));
    let x = g.add_variable(DType::F32, &[n], "x");
    let inp = g.add_variable(DType::F32, &[n], "inp");
    let z = g.add_variable(DType::F32, &[n], "z");
    let s = g.add_variable(DType::F32, &[1], "s");
    let count = g.add_variable(DType::I32, &[1], "n");
    let go = g.add_variable(DType::Bool, &[1], "go");
    let flag = g.add_variable(DType::Bool, &[1], "flag");
    for t in 0..tiles {
        let r = 2 * t as usize..2 * t as usize + 2;
        for v in [&x, &inp, &z] {
            g.set_tile_mapping(&v.slice(r.clone()).unwrap(), t).unwrap();
        }
    }
    g.set_tile_mapping(&s, 0).unwrap();
    for v in [&count, &go, &flag] {
        g.set_tile_mapping(v, last).unwrap();
    }
    for (name, v) in [("x", &x), ("z", &z), ("n", &count), ("flag", &flag)] {
        g.create_host_read_write(name, v).unwrap();
    }
    let feed = g.add_host_to_device_stream("feed", DType::F32, n).unwrap();
    let trace = g.add_device_to_host_stream("trace", DType::F32, 1).unwrap();

    let per_tile = |g: &mut Graph, name: &str, y: &Tensor, k: f32| {
        let cs = g.add_compute_set(name);
        for t in 0..tiles {
            let r = 2 * t as usize..2 * t as usize + 2;
            let v = g.add_vertex(cs, "test::AddScaled").unwrap();
            g.connect(v, "x", &x.slice(r.clone()).unwrap()).unwrap();
            g.connect(v, "y", &y.slice(r).unwrap()).unwrap();
            g.set_vertex_state(v, "k", k).unwrap();
            g.set_tile_mapping(v, t).unwrap();
        }
        cs
    };
    let add_inp = per_tile(&mut g, "add inp", &inp, 1.0);
    let sum = g.add_compute_set("sum onto tile 0");
    let v = g.add_vertex(sum, "test::Sum").unwrap();
    g.connect(v, "input", &x).unwrap();
    g.connect(v, "out", &s).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    let spread = g.add_compute_set("add the sum everywhere");
    for t in 0..tiles {
        let r = 2 * t as usize..2 * t as usize + 2;
        let v = g.add_vertex(spread, "test::AddScalar").unwrap();
        g.connect(v, "x", &x.slice(r).unwrap()).unwrap();
        g.connect(v, "s", &s).unwrap();
        g.set_vertex_state(v, "k", 1.0f32 / 16.0).unwrap();
        g.set_tile_mapping(v, t).unwrap();
    }
    let fold = per_tile(&mut g, "fold z", &z, -0.25);
    let check = g.add_compute_set("check");
    let v = g.add_vertex(check, "test::FailAbove").unwrap();
    g.connect(v, "x", &x.slice(n - 1..n).unwrap()).unwrap();
    g.set_vertex_state(v, "limit", faults.fail_above).unwrap();
    g.set_tile_mapping(v, last).unwrap();
    let v = g.add_vertex(check, "test::ExitAbove").unwrap();
    g.connect(v, "x", &x.slice(n - 1..n).unwrap()).unwrap();
    g.set_vertex_state(v, "limit", faults.exit_above).unwrap();
    g.set_vertex_state(v, "code", 3i32).unwrap();
    g.set_tile_mapping(v, last).unwrap();
    let cond = g.add_compute_set("count down");
    let v = g.add_vertex(cond, "test::CountDown").unwrap();
    g.connect(v, "n", &count).unwrap();
    g.connect(v, "go", &go).unwrap();
    g.set_tile_mapping(v, last).unwrap();
    let bump = g.add_compute_set("add the last sum again");
    for t in 0..tiles {
        let r = 2 * t as usize..2 * t as usize + 2;
        let v = g.add_vertex(bump, "test::AddScalar").unwrap();
        g.connect(v, "x", &x.slice(r).unwrap()).unwrap();
        g.connect(v, "s", &s).unwrap();
        g.set_vertex_state(v, "k", 1.0f32).unwrap();
        g.set_tile_mapping(v, t).unwrap();
    }

    let body = Program::seq(vec![
        Program::stream_to_device(feed, &inp),
        Program::execute(add_inp),
        Program::execute(sum),
        Program::execute(spread),
        Program::copy(&x.reverse(0).unwrap(), &z),
        Program::execute(fold),
        Program::execute(check),
        Program::stream_from_device(&s, trace),
    ]);
    let prog = Program::seq(vec![
        Program::repeat_while_true(Program::execute(cond), &go, body),
        Program::if_then(&flag, Program::execute(bump)),
    ]);
    (g, vec![prog])
}

/// The host's stream data for `iters` counts of the loop on `tiles` tiles.
pub fn loop_feed(tiles: u32, iters: i32) -> Vec<f32> {
    let n = 2 * tiles as usize;
    (0..n * iters.max(1) as usize)
        .map(|i| ((i * 7919) % 23) as f32 * 0.125 - 1.0)
        .collect()
}

/// The initial `x`.
pub fn loop_x0(tiles: u32) -> Vec<f32> {
    (0..2 * tiles as usize)
        .map(|i| i as f32 - tiles as f32)
        .collect()
}

/// Runs the loop case (see [`loop_graph`]) with the counter at `iters` and the flag `flag`.
pub fn run_loop(
    tiles: u32,
    iters: i32,
    flag: bool,
    faults: Faults,
    threads: usize,
    ranks: Option<Ranks>,
) -> Result<LoopResult, EngineError> {
    crate::link();
    let (g, progs) = loop_graph(tiles, faults);
    let exe = compile(&g, &progs, &CompileOptions::default()).expect("loop case compiles");
    let mut e = Engine::new(
        &exe,
        EngineOptions {
            ranks,
            ..EngineOptions::with_threads(threads)
        },
    )?;
    e.write_tensor("x", &loop_x0(tiles))?;
    e.write_tensor("n", &[iters])?;
    e.write_tensor("flag", &[flag])?;
    e.connect_stream("feed", loop_feed(tiles, iters))?;
    e.run(0)?;
    Ok(LoopResult {
        x: e.read_tensor("x")?,
        z: e.read_tensor("z")?,
        n: e.read_tensor::<i32>("n")?[0],
        trace: e.stream_output("trace")?,
    })
}

/// The host model of [`run_loop`] (the same f32 operations in the same order).
pub fn loop_expect(tiles: u32, iters: i32, flag: bool) -> LoopResult {
    let n = 2 * tiles as usize;
    let feed = loop_feed(tiles, iters);
    let mut x = loop_x0(tiles);
    let mut z = vec![0f32; n];
    let mut count = iters;
    let mut trace = Vec::new();
    let mut pos = 0;
    loop {
        count -= 1;
        if count <= 0 {
            break;
        }
        for (i, xi) in x.iter_mut().enumerate() {
            *xi += 1.0 * feed[(pos + i) % feed.len()];
        }
        pos = (pos + n) % feed.len();
        let s: f32 = x.iter().sum();
        for xi in x.iter_mut() {
            *xi += (1.0f32 / 16.0) * s;
        }
        for i in 0..n {
            z[i] = x[n - 1 - i];
        }
        for (xi, zi) in x.iter_mut().zip(&z) {
            *xi += -0.25 * zi;
        }
        trace.push(s);
    }
    if flag {
        let s = trace.last().copied().unwrap_or(0.0);
        x.iter_mut().for_each(|v| *v += 1.0 * s);
    }
    LoopResult {
        x,
        z,
        n: count,
        trace,
    }
}
