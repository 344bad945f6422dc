//! The multiply's modelled arithmetic rate against the AMP's peak: no tile does more flops per
//! modelled cycle than the GC200's published peaks allow, 62.5 TFLOP/s for f32 and 250 TFLOP/s
//! for f16 over 1,472 tiles at 1.33 GHz, that is 32 and 128 flops per tile and cycle (16 and
//! 64 multiply-accumulates).

use poplar::profile::CycleModel;
use poplar::{compile, CompileOptions, DType, Graph, Target};
use poplin::{MatMulOptions, MatMulParams};

/// Flops per tile and cycle at the AMP's peak for operands of `dtype`.
fn peak(dtype: DType) -> f64 {
    2.0 * poplin::codelets::macs_per_cycle(dtype) as f64
}

/// The published GC200 peaks per tile and cycle agree with [`peak`] (to the rounding of
/// "62.5" and "250").
#[test]
fn the_amp_rates_are_the_published_peaks() {
    let per_tile_cycle = |tflops: f64| tflops * 1e12 / (1472.0 * 1.33e9);
    for (dtype, tflops) in [(DType::F32, 62.5), (DType::F16, 250.0)] {
        let published = per_tile_cycle(tflops);
        assert!(
            (published / peak(dtype) - 1.0).abs() < 0.01,
            "{dtype:?}: {published} against {}",
            peak(dtype)
        );
    }
}

/// Per tile of the multiply's compute phase: its flops over its modelled cycles.
fn rates(target: &Target, p: MatMulParams, opts: &MatMulOptions) -> Vec<f64> {
    poplin::link();
    let plan = poplin::plan(target, p, opts).unwrap();
    let mut graph = Graph::new(target);
    let a = poplin::create_lhs(&mut graph, &plan, "A").unwrap();
    let b = poplin::create_rhs(&mut graph, &plan, "B").unwrap();
    let (_, prog) = poplin::matmul(&mut graph, &a, &b, &plan, "mm").unwrap();
    let exe = compile(&graph, &[prog], &CompileOptions::default()).unwrap();
    let model = CycleModel::new(&exe);
    let mut rates = Vec::new();
    for s in 0..plan.sk {
        let name = if plan.sk > 1 {
            format!("mm/multiply/{s}")
        } else {
            "mm/multiply".to_string()
        };
        let phase = model
            .computes
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("the multiply's compute phase {name}\n{plan}"));
        let mut flops = vec![0u64; target.num_tiles() as usize];
        for g in 0..p.groups {
            for i in 0..plan.pm {
                for j in 0..plan.pn {
                    for l in 0..plan.pk {
                        let macs = plan.m_range(i).len()
                            * plan.n_range(j).len()
                            * plan.k_chunk(l, s).len();
                        flops[plan.tile(g, i, j, l).index()] += 2 * macs as u64;
                    }
                }
            }
        }
        assert_eq!(
            phase.tiles.len(),
            flops.iter().filter(|&&f| f > 0).count(),
            "every tile with work is in the phase\n{plan}"
        );
        rates.extend(
            phase
                .tiles
                .iter()
                .map(|t| flops[t.tile.index()] as f64 / t.cycles as f64),
        );
    }
    rates
}

#[test]
fn no_tile_multiplies_faster_than_the_amp_peak() {
    let target = Target::custom(16, 256 * 1024);
    for dtype in [DType::F32, DType::F16] {
        for (p, max_tiles) in [
            // One large block per tile: long AMP rows.
            (
                MatMulParams {
                    groups: 1,
                    m: 768,
                    k: 256,
                    n: 64,
                },
                None,
            ),
            // Many groups on two tiles: several vertices share a tile's six contexts.
            (
                MatMulParams {
                    groups: 12,
                    m: 24,
                    k: 64,
                    n: 16,
                },
                Some(2),
            ),
            // A long k, split and reduced.
            (
                MatMulParams {
                    groups: 1,
                    m: 4,
                    k: 4096,
                    n: 4,
                },
                None,
            ),
        ] {
            let opts = MatMulOptions {
                input_type: dtype,
                max_tiles,
                ..Default::default()
            };
            let r = rates(&target, p, &opts);
            let best = r.iter().copied().fold(0.0, f64::max);
            eprintln!(
                "{dtype:?} {p:?}: at most {best:.1} flops per tile and cycle (peak {})",
                peak(dtype)
            );
            assert!(
                best <= peak(dtype),
                "{dtype:?} {p:?}: {best} > {}",
                peak(dtype)
            );
            // The large blocks come close to the peak: the six contexts are all busy.
            if p.groups == 1 && p.m == 768 {
                assert!(best > 0.5 * peak(dtype), "{dtype:?} {p:?}: only {best}");
            }
        }
    }
}
