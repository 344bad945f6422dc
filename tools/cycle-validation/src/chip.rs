//! The correlation suite's chip measurements: published figures measured on real chips that
//! the model was not calibrated on (`docs/cycle-model.md`, "Validation"), each reproduced by a
//! program built through the public API and costed by the cycle model of its executable.
//!
//! Cycle counts measured on a Bow carry over to a GC200 tile (the same ipu2 tile design at a
//! higher clock); figures in seconds are compared at the clock of the chip they were measured
//! on ([`Target::bow`] for a Bow).

use poplar::profile::{estimate_program, CycleModel};
use poplar::{compile, CompileOptions, ComputeSet, DType, Graph, Program, Target, Tensor};

use crate::row::{Check, Kind, Row};

/// tessellate-ipu's "IPU Peak Flops" notebook (Bow, all 1,472 tiles, the `ConvPartial1x1`
/// vertex, hardware cycle counters minus their 45 cycles): `[N,16]·[16,16]` in f16, the cycles
/// it stored for four of its `N` (its fit: `4·N + 331`).
pub const AMP_CYCLES: [(usize, f64); 4] =
    [(16, 402.0), (128, 845.0), (512, 2381.0), (2048, 8525.0)];

/// The cycles tessellate-ipu's counter vertices add between two reads (its
/// `ipu_cycle_count_overhead`, measured back to back).
pub const COUNTER_CYCLES: f64 = 45.0;

/// Where the tessellate-ipu figures come from.
const TESSELLATE: &str = "tessellate-ipu notebooks (stored outputs), Bow";

/// Modelled tile cycles of the multiply of one `[n,16]·[16,16]` f16 product alone on a tile,
/// as poplin plans and builds it: the busiest compute phase of the program.
pub fn amp_cycles(n: usize) -> u64 {
    poplin::link();
    let target = Target::custom(1, 624 * 1024);
    let p = poplin::MatMulParams {
        groups: 1,
        m: n,
        k: 16,
        n: 16,
    };
    let opts = poplin::MatMulOptions {
        input_type: DType::F16,
        ..Default::default()
    };
    let plan = poplin::plan(&target, p, &opts).expect("a [n,16]·[16,16] plan on one tile");
    let mut graph = Graph::new(&target);
    let a = poplin::create_lhs(&mut graph, &plan, "lhs").expect("lhs");
    let b = poplin::create_rhs(&mut graph, &plan, "rhs").expect("rhs");
    let (_, prog) = poplin::matmul(&mut graph, &a, &b, &plan, "mm").expect("matmul");
    let exe = compile(&graph, &[prog], &CompileOptions::default()).expect("compile");
    let model = CycleModel::new(&exe);
    model.computes.iter().map(|c| c.max).max().unwrap_or(0)
}

/// The AMP rows: the per-tile product over `N`, within 10 % (the check).
pub fn amp_rows() -> Vec<Row> {
    AMP_CYCLES
        .iter()
        .map(|&(n, published)| Row {
            name: format!("AMP product `[{n},16]·[16,16]` f16, one tile (cycles)"),
            modelled: amp_cycles(n) as f64,
            published,
            check: Check::Within(0.10),
            kind: Kind::Measurement,
            chip: "Bow",
            source: TESSELLATE,
            note: "`MatMulBlock<half>` (f32 partials) against `ConvPartial1x1` (f16 partials); \
                   the chip's fit is `4·N + 331`"
                .into(),
        })
        .collect()
}

/// Modelled cycles of `out = a + b` for `per_tile` f32 on each of `tiles` tiles (all three
/// operands on the same tiles, as tessellate-ipu's `tile_map` of `add` places them), from
/// the program's estimate: what lies between the two counter reads.
pub fn add_cycles(tiles: u32, per_tile: usize) -> u64 {
    codelets::link();
    let target = Target::custom(tiles, 624 * 1024);
    let mut g = Graph::new(&target);
    let shape = [tiles as usize, per_tile];
    let t = |g: &mut Graph, name: &str| -> Tensor {
        let t = g.add_variable(DType::F32, &shape, name);
        g.map_linearly(&t, per_tile).expect("map");
        t
    };
    let (a, b, out) = (t(&mut g, "a"), t(&mut g, "b"), t(&mut g, "out"));
    let cs: ComputeSet = g.add_compute_set("add");
    popops::add(&mut g, cs, &a, &b, &out).expect("add");
    let exe = compile(&g, &[Program::execute(cs)], &CompileOptions::default()).expect("compile");
    let model = CycleModel::new(&exe);
    estimate_program(&exe, &model, 0).expect("program").cycles
}

/// The two popops `add` measurements of tessellate-ipu's "tile API basics" notebook: 5 × 2
/// floats on each of 3 tiles (≈ 330 cycles between the reads), and 1,024 floats on each of
/// 4, 16, 128 and 1,024 tiles (1.0054 µs at 1.85 GHz on all four), each less the counter's 45.
pub fn add_rows() -> Vec<Row> {
    let cases = [
        (3u32, 10usize, 330.0, "max over 3 tiles of end − start"),
        (
            16,
            1024,
            1.0054e-6 * 1.85e9,
            "1.0054 µs at 1.85 GHz, the same on 4–1,024 tiles",
        ),
    ];
    cases
        .into_iter()
        .map(|(tiles, per_tile, read, how)| Row {
            name: format!("popops `add`, {per_tile} f32 per tile on {tiles} tiles (cycles)"),
            modelled: add_cycles(tiles, per_tile) as f64,
            published: read - COUNTER_CYCLES,
            check: Check::Within(0.5),
            kind: Kind::Measurement,
            chip: "Bow",
            source: TESSELLATE,
            note: format!("{how}, less the counter's 45; modelled: the whole program"),
        })
        .collect()
}

/// The dense multiplies of graphcore-research/sparsity-benchmarks (poplin on one ipu2,
/// `dense_ipu_gpu` of its analysis notebook, read off the plot): `(dtype, m = k, n, TFLOP/s
/// published, how it was read)`.
pub const DENSE: [(DType, usize, usize, f64, &str); 6] = [
    (DType::F16, 1024, 4, 6.0, "≈ 6"),
    (DType::F16, 1024, 4096, 215.0, "200–230 at large n"),
    (DType::F16, 4096, 4096, 215.0, "200–230 at large n"),
    (DType::F32, 1024, 2048, 57.5, "55–60 at large sizes"),
    (DType::F32, 1024, 1024, 57.5, "55–60 at large sizes"),
    (DType::F32, 4096, 2048, 57.5, "55–60 at large sizes"),
];

/// The dense rows: modelled TFLOP/s of poplin's plan on one GC200 (its estimate, which
/// `poplin`'s tests hold to the cycle model of the built program) against the published.
pub fn dense_rows() -> Vec<Row> {
    DENSE
        .iter()
        .map(|&(dtype, mk, n, published, read)| {
            let (tflops, split) = dense_tflops(dtype, mk, mk, n);
            Row {
                name: format!(
                    "poplin dense `{mk}×{mk}·{mk}×{n}`, {}, one chip (TFLOP/s)",
                    dtype.poplar_name()
                ),
                modelled: tflops,
                published,
                check: Check::Within(0.5),
                kind: Kind::Measurement,
                chip: "ipu2",
                source: "sparsity-benchmarks, dense_ipu_gpu",
                note: format!("published {read}; modelled at 1.33 GHz, split {split}"),
            }
        })
        .collect()
}

/// Modelled TFLOP/s of poplin's plan for `m × k · k × n` on one GC200, and its split.
pub fn dense_tflops(dtype: DType, m: usize, k: usize, n: usize) -> (f64, String) {
    let target = Target::gc200();
    let p = poplin::MatMulParams { groups: 1, m, k, n };
    let opts = poplin::MatMulOptions {
        input_type: dtype,
        ..Default::default()
    };
    match poplin::plan(&target, p, &opts) {
        Ok(plan) => {
            let seconds = plan.estimate.total() as f64 / target.clock_hz;
            let serial = if plan.sk > 1 {
                format!(", k in {} serial steps", plan.sk)
            } else {
                String::new()
            };
            let split = format!("{} × {} × {}{serial}", plan.pm, plan.pn, plan.pk);
            (2.0 * (m * k * n) as f64 / seconds / 1e12, split)
        }
        Err(e) => (0.0, format!("does not fit: {e}")),
    }
}

/// Every chip measurement row.
pub fn rows() -> Vec<Row> {
    let mut rows = amp_rows();
    rows.extend(add_rows());
    rows.extend(dense_rows());
    rows
}
