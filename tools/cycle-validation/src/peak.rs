//! Physical bounds: no modelled program does more flops per cycle than the chip can issue —
//! hdiff's stencil against the f32 vector peak, the dense multiply against the AMP's peak.

use poplar::profile::{estimate_program, CycleModel};
use poplar::{compile, CompileOptions, DType, Graph, Target};

use crate::row::{Check, Kind, Row};

/// TFLOP/s of a GC200 at `flops_per_tile_cycle`.
pub fn chip_tflops(target: &Target, flops_per_tile_cycle: f64) -> f64 {
    f64::from(target.num_tiles()) * target.clock_hz * flops_per_tile_cycle / 1e12
}

/// f32 vector peak of a tile: one instruction per tile cycle (six contexts in turn), two lanes,
/// multiply-add.
pub const VECTOR_F32_FLOPS_PER_TILE_CYCLE: f64 = 4.0;

/// Modelled TFLOP/s of one hdiff iteration on the seed's grid (256 × 256 × 64), single-stage,
/// one GC200, from the compiled program's cycle model.
pub fn hdiff_tflops() -> f64 {
    hdiff::codelets::link();
    let target = Target::gc200();
    let grid = hdiff::grid::Grid::new(256, 256, 64).expect("grid");
    let request = hdiff::plan::PlanRequest::auto(hdiff::plan::Mapping::Single);
    let plan = hdiff::plan::Plan::new(grid, &target, request).expect("plan");
    let exe = hdiff::device::build(&plan, &target).expect("build");
    let model = CycleModel::new(&exe);
    let cycles = estimate_program(&exe, &model, 0).expect("program").cycles;
    let flops = grid.output_points() as f64 * hdiff::stencil::FLOPS_PER_POINT as f64;
    flops / (cycles as f64 / target.clock_hz) / 1e12
}

/// Modelled TFLOP/s of a `m × k · k × n` multiply of `dtype` operands on one GC200, from the
/// compiled program's cycle model.
pub fn matmul_tflops(dtype: DType, m: usize, k: usize, n: usize) -> f64 {
    poplin::link();
    let target = Target::gc200();
    let p = poplin::MatMulParams { groups: 1, m, k, n };
    let opts = poplin::MatMulOptions {
        input_type: dtype,
        ..Default::default()
    };
    let plan = poplin::plan(&target, p, &opts).expect("plan");
    let mut graph = Graph::new(&target);
    let a = poplin::create_lhs(&mut graph, &plan, "A").expect("lhs");
    let b = poplin::create_rhs(&mut graph, &plan, "B").expect("rhs");
    let (_, prog) = poplin::matmul(&mut graph, &a, &b, &plan, "mm").expect("matmul");
    let exe = compile(&graph, &[prog], &CompileOptions::default()).expect("compile");
    let model = CycleModel::new(&exe);
    let cycles = estimate_program(&exe, &model, 0).expect("program").cycles;
    2.0 * (m * k * n) as f64 / (cycles as f64 / target.clock_hz) / 1e12
}

/// The rows: hdiff under the vector peak, the multiply under the AMP's.
pub fn rows() -> Vec<Row> {
    let target = Target::gc200();
    let vector = chip_tflops(&target, VECTOR_F32_FLOPS_PER_TILE_CYCLE);
    let mut rows = vec![Row {
        name: "hdiff, seed grid, one GC200 (TFLOP/s)".into(),
        modelled: hdiff_tflops(),
        published: vector,
        check: Check::AtMost,
        kind: Kind::Bound,
        chip: "—",
        source: "f32 vector peak: 1,472 tiles × 1.33 GHz × 4",
        note: "single-stage; 18 flops per point; was 15.4 before the barrel rule".into(),
    }];
    for (dtype, peak) in [(DType::F32, 62.5), (DType::F16, 250.0)] {
        rows.push(Row {
            name: format!(
                "dense matmul 1024³, {}, one GC200 (TFLOP/s)",
                dtype.poplar_name()
            ),
            modelled: matmul_tflops(dtype, 1024, 1024, 1024),
            published: peak,
            check: Check::AtMost,
            kind: Kind::Bound,
            chip: "—",
            source: "GC200 AMP peak (62.5 f32, 250 f16 TFLOP/s)",
            note: "the whole program: exchange and syncs included".into(),
        });
    }
    rows
}
