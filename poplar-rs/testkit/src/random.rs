//! Random small graphs and their host interpretation: the generator of the property test
//! (`poplar-rs/compiler/tests/random_graphs.rs`), shared with the interleaving and multi-rank
//! checks of the engine (`poplar-rs/engine/tests/`).

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{concat, Graph, Tensor};
use poplar_core::dtype::DType;
use poplar_core::rand::SplitMix64;
use poplar_core::target::Target;
use poplar_engine::{Engine, EngineOptions};
use poplar_exe::Executable;

/// The draws of a case, from core's SplitMix64: a seed reproduces the whole case.
pub struct Rng(pub SplitMix64);
impl Rng {
    /// An index in `0..n` (`n = 0` is taken as 1).
    pub fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
    pub fn range(&mut self, n: usize) -> (usize, usize) {
        let a = self.below(n);
        let b = a + 1 + self.below(n - a);
        (a, b)
    }
}

/// Host model: one `Vec<f32>` per variable.
pub type Host = Vec<Vec<f32>>;

/// (variable, element) of each flat element of a view.
pub fn elements(t: &Tensor) -> Vec<(usize, usize)> {
    (0..t.num_elements() as u64)
        .map(|i| {
            t.element(i)
                .map(|(v, e)| (v.as_u32() as usize, e as usize))
                .unwrap()
        })
        .collect()
}

/// A random view over variable `var` (a whole 1-D tensor) mapped in the intervals `segs`.
/// `writable` views never repeat an element.
pub fn view(rng: &mut Rng, var: &Tensor, segs: &[(usize, usize)], writable: bool) -> Tensor {
    let n = var.num_elements();
    match rng.below(if writable { 4 } else { 6 }) {
        0 => var.clone(),
        1 => {
            let (a, b) = rng.range(n);
            var.slice(a..b).unwrap()
        }
        2 => {
            let (a, b) = rng.range(n);
            var.slice(a..b).unwrap().reverse(0).unwrap()
        }
        3 => {
            // Two disjoint slices, in either order.
            if n < 2 {
                return var.clone();
            }
            let m = 1 + rng.below(n - 1);
            let (l, r) = (var.slice(0..m).unwrap(), var.slice(m..n).unwrap());
            let (a, b) = (
                l.slice(0..1 + rng.below(m)).unwrap(),
                r.slice(rng.below(n - m)..n - m).unwrap(),
            );
            if rng.below(2) == 0 {
                concat(&[a, b]).unwrap()
            } else {
                concat(&[b, a]).unwrap()
            }
        }
        4 => {
            let (a, b) = rng.range(n.min(4));
            var.slice(a..b).unwrap().broadcast(2, 0).unwrap()
        }
        _ => {
            // Halo style: one mapping interval ("own slice") with random slices before and
            // after it, the pattern the compiler binds in place around the interval.
            let (s, e) = segs[rng.below(segs.len())];
            let mut parts = Vec::new();
            for _ in 0..rng.below(3) {
                let (a, b) = rng.range(n);
                parts.push(var.slice(a..b).unwrap());
            }
            parts.insert(rng.below(parts.len() + 1), var.slice(s..e).unwrap());
            concat(&parts).unwrap()
        }
    }
}

/// A random graph, its programs, the initial values of its variables and what the host
/// interpretation of the programs gives.
pub struct Case {
    pub graph: Graph,
    pub progs: Vec<Program>,
    pub init: Host,
    pub expect: Host,
}

/// The case of `seed`: 1–5 tiles, 2–4 variables with random interval mappings, 1–6 steps of
/// scaling, increments, sums and copies over random views (slices, reversals, concatenations,
/// broadcasts, halo-style concatenations around a mapped interval).
// Long: the random draws in the order that makes each seed's case; one reading top to bottom is
// the generator's specification.
pub fn build_case(seed: u64) -> Case {
    let mut rng = Rng(SplitMix64::new(seed));
    let tiles = 1 + rng.below(5) as u32;
    let mut g = Graph::new(&Target::custom(tiles, 1 << 20));
    let nvars = 2 + rng.below(3);
    let mut vars = Vec::new();
    let mut segs: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut host: Host = Vec::new();
    for i in 0..nvars {
        let n = 1 + rng.below(24);
        let v = g.add_variable(DType::F32, &[n], &format!("v{i}"));
        // Random interval mapping: cut points, each piece on a random tile.
        let mut s = 0;
        let mut cuts = Vec::new();
        while s < n {
            let e = (s + 1 + rng.below(8)).min(n);
            g.set_tile_mapping(&v.slice(s..e).unwrap(), rng.below(tiles as usize) as u32)
                .unwrap();
            cuts.push((s, e));
            s = e;
        }
        segs.push(cuts);
        g.create_host_read_write(&format!("v{i}"), &v).unwrap();
        host.push(
            (0..n)
                .map(|k| ((seed as usize + i * 31 + k * 7) % 13) as f32 - 6.0)
                .collect(),
        );
        vars.push(v);
    }
    let init = host.clone();
    let mut body = Vec::new();
    for step in 0..1 + rng.below(6) {
        let a = rng.below(nvars);
        let b = (a + 1 + rng.below(nvars - 1)) % nvars;
        match rng.below(4) {
            0 => {
                // Scale: out (view of b) = in (view of a, same length) * k, in one or two vertices.
                let dst = view(&mut rng, &vars[b], &segs[b], true);
                let mut src = view(&mut rng, &vars[a], &segs[a], false);
                let len = dst.num_elements().min(src.num_elements());
                let dst = dst.slice(0..len).unwrap();
                src = src.slice(0..len).unwrap();
                let k = (rng.below(5) as f32) - 2.0;
                let cs = g.add_compute_set(&format!("scale{step}"));
                let cut = rng.below(len + 1);
                for (lo, hi) in [(0, cut), (cut, len)] {
                    if lo == hi {
                        continue;
                    }
                    let v = g.add_vertex(cs, "test::Scale").unwrap();
                    g.connect(v, "input", &src.slice(lo..hi).unwrap()).unwrap();
                    g.connect(v, "out", &dst.slice(lo..hi).unwrap()).unwrap();
                    g.set_vertex_state(v, "k", k).unwrap();
                    g.set_tile_mapping(v, rng.below(tiles as usize) as u32)
                        .unwrap();
                }
                let s = elements(&src);
                let d = elements(&dst);
                let vals: Vec<f32> = s.iter().map(|&(v, e)| host[v][e] * k).collect();
                for (&(v, e), x) in d.iter().zip(vals) {
                    host[v][e] = x;
                }
                body.push(Program::execute(cs));
            }
            1 => {
                // Inc on disjoint chunks of a view, each chunk on its own tile.
                let t = view(&mut rng, &vars[a], &segs[a], true);
                let n = t.num_elements();
                let cs = g.add_compute_set(&format!("inc{step}"));
                let mut s = 0;
                while s < n {
                    let e = (s + 1 + rng.below(6)).min(n);
                    let v = g.add_vertex(cs, "test::Inc").unwrap();
                    g.connect(v, "x", &t.slice(s..e).unwrap()).unwrap();
                    g.set_tile_mapping(v, rng.below(tiles as usize) as u32)
                        .unwrap();
                    s = e;
                }
                for (v, e) in elements(&t) {
                    host[v][e] += 1.0;
                }
                body.push(Program::execute(cs));
            }
            2 => {
                // Sum of a view of a into one element of b.
                let src = view(&mut rng, &vars[a], &segs[a], false);
                let i = rng.below(vars[b].num_elements());
                let dst = vars[b].slice(i..i + 1).unwrap();
                let cs = g.add_compute_set(&format!("sum{step}"));
                let v = g.add_vertex(cs, "test::Sum").unwrap();
                g.connect(v, "input", &src).unwrap();
                g.connect(v, "out", &dst).unwrap();
                g.set_tile_mapping(v, rng.below(tiles as usize) as u32)
                    .unwrap();
                host[b][i] = elements(&src).iter().map(|&(v, e)| host[v][e]).sum();
                body.push(Program::execute(cs));
            }
            _ => {
                // Copy between views, possibly of the same variable (overlapping).
                let c = if rng.below(3) == 0 { a } else { b };
                let dst = view(&mut rng, &vars[c], &segs[c], true);
                let src = view(&mut rng, &vars[a], &segs[a], false);
                let len = dst.num_elements().min(src.num_elements());
                let (src, dst) = (src.slice(0..len).unwrap(), dst.slice(0..len).unwrap());
                let vals: Vec<f32> = elements(&src).iter().map(|&(v, e)| host[v][e]).collect();
                for (&(v, e), x) in elements(&dst).iter().zip(vals) {
                    host[v][e] = x;
                }
                body.push(Program::copy(&src, &dst));
            }
        }
    }
    let progs = vec![Program::seq(body)];
    Case {
        graph: g,
        progs,
        init,
        expect: host,
    }
}

/// Runs `exe` (compiled from `case`) on a new engine with `opts`: writes the variables'
/// initial values, runs program 0 and reads every variable back; also returns the engine.
pub fn run_exe(case: &Case, exe: &Executable, opts: EngineOptions) -> (Host, Engine) {
    crate::link();
    let mut e = Engine::new(exe, opts).expect("engine");
    for (i, data) in case.init.iter().enumerate() {
        e.write_tensor(&format!("v{i}"), data).expect("write");
    }
    e.run(0).expect("run");
    let host = (0..case.init.len())
        .map(|i| e.read_tensor::<f32>(&format!("v{i}")).expect("read"))
        .collect();
    (host, e)
}
