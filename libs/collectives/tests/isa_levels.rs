//! The f32 all-reduce gives the same bits at every instruction-set level this host supports
//! (`poplar::isa`; the combine loops are compiled per level): every float operator, three ring
//! methods, subnormal flushing on and off, 1 and 2 threads, on edge values (±0, subnormals,
//! ±inf, NaN, the extremes) and random ones. Each level runs through `EngineOptions::isa`.
//!
//! One test in its own binary: the level is a process-wide setting, and another test of the
//! same binary switching it meanwhile would run this one's engines at the wrong level.

use collectives::{Group, Method, Op, Options};
use poplar::isa::IsaLevel;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Target};

mod support;
use support::{machine, Rng};

const REPLICAS: u32 = 4;
/// Elements per replica: not a multiple of the replicas or the tiles.
const N: usize = 1003;

/// Replica `r`'s data: every pair of edge values between replicas 0 and 1 (the others hold 1),
/// so that NaN meets −NaN, ±0 meets ∓0 and inf meets −inf in either order; then edge values at
/// positions that differ from replica to replica; the rest random with exponents from 1e−38
/// to 1e38.
fn data(r: u32) -> Vec<f32> {
    let edges = poplar::isa::EDGE_VALUES;
    let m = edges.len();
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15 ^ u64::from(r + 1));
    (0..N)
        .map(|i| {
            if i < m * m {
                match r {
                    0 => edges[i / m],
                    1 => edges[i % m],
                    _ => 1.0,
                }
            } else if i < m * m + 4 * m {
                // Each replica walks the edge values at its own stride.
                edges[(i * (r as usize + 1) + r as usize) % edges.len()]
            } else {
                let scale = [1e-38, 1e-20, 1.0, 1.0, 1e20, 1e38][(rng.next() % 6) as usize];
                let sign = if rng.next().is_multiple_of(2) {
                    1.0
                } else {
                    -1.0
                };
                sign * rng.f32() * scale
            }
        })
        .collect()
}

/// The all-reduce of every replica's [`data`] with `op` and `method`, compiled once.
fn executable(target: &Target, op: Op, method: Method) -> poplar::Executable {
    collectives::link();
    let mut g = Graph::new_replicated(target, REPLICAS, 1).unwrap();
    let tiles = g.target().num_tiles();
    let x = g.add_variable(DType::F32, &[N], "x");
    g.map_linearly_over(&x, 1, 0..tiles).unwrap();
    g.create_host_read_write("x", &x).unwrap();
    let opts = Options {
        method,
        ..Default::default()
    };
    let c = collectives::all_reduce(&mut g, &[x], op, Group::All, &opts, "ar").unwrap();
    g.create_host_read("out", &c.outputs[0]).unwrap();
    compile(&g, &[c.program], &CompileOptions::default()).unwrap()
}

/// The bits of every replica's result at `level` with `threads`.
fn run(exe: &poplar::Executable, level: IsaLevel, threads: usize) -> Vec<u32> {
    let mut e = Engine::new(
        exe,
        EngineOptions {
            threads: Some(threads),
            isa: Some(level),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(e.isa(), level);
    let all: Vec<f32> = (0..REPLICAS).flat_map(data).collect();
    e.write_tensor_all_replicas("x", &all).unwrap();
    e.run(0).unwrap();
    (0..REPLICAS)
        .flat_map(|r| e.read_tensor_replica::<f32>("out", r).unwrap())
        .map(f32::to_bits)
        .collect()
}

#[test]
fn the_f32_all_reduce_gives_the_same_bits_at_every_level() {
    let levels = poplar::isa::supported();
    let ops = [Op::Add, Op::Mean, Op::Mul, Op::Min, Op::Max, Op::SquareAdd];
    let methods = [
        Method::Clockwise,
        Method::BidirectionalRingPair,
        Method::MeetInTheMiddle,
    ];
    for flush in [false, true] {
        let target = Target {
            flush_subnormals: flush,
            ..machine(REPLICAS)
        };
        for op in ops {
            for method in methods {
                let exe = executable(&target, op, method);
                let base = run(&exe, IsaLevel::Baseline, 1);
                let what = format!("{op:?}, {method:?}, flush {flush}");
                // The edge values reach the results: some NaN (min and max return the number
                // where one operand is NaN), some finite and non-zero.
                let f: Vec<f32> = base.iter().map(|&b| f32::from_bits(b)).collect();
                if !matches!(op, Op::Min | Op::Max) {
                    assert!(f.iter().any(|v| v.is_nan()), "{what}: no NaN");
                }
                assert!(f.iter().any(|v| v.is_finite() && *v != 0.0), "{what}");
                for &level in &levels {
                    for threads in [1, 2] {
                        let bits = run(&exe, level, threads);
                        let diff = bits.iter().zip(&base).filter(|(a, b)| a != b).count();
                        assert!(
                            diff == 0 && bits.len() == base.len(),
                            "{what}, {level}, {threads} thread(s): {diff} of {} results differ \
                             from the baseline's bits",
                            base.len()
                        );
                    }
                }
            }
        }
    }
}
