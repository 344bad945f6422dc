//! The standard codelets against poplibs' published cycle estimators for the same operations
//! (graphcore/poplibs `lib/popops/popopsCycleEstimators.cpp`, `popopsCycleEstimators.hpp`,
//! `PerformanceEstimation.cpp`). The published side is written out here from those formulas,
//! independently of `codelets::cycles`.

use poplar::profile::CycleModel;
use poplar::{compile, CompileOptions, DType, Graph, Program, Target};

use crate::row::{Check, Kind, Row};

/// Workers per tile of a GC200.
const W: u64 = 6;
/// poplibs' `basicOpSupervisorOverhead()`, tile cycles (`PerformanceEstimation.cpp`).
const BASIC_OP_SUPERVISOR: u64 = 11;
/// Cycles per float vector of `ADD` with an external (assembly) codelet: the table's 1 plus 2
/// for load/store and loop (`binaryOpInnerLoopCycles`, `binaryOpPerfInfo`).
const ADD_F32_CYCLES_PER_VECTOR: u64 = 3;
/// Floats per vector with a 64-bit data path.
const F32_VECTOR: u64 = 2;

/// `BinaryOp2D<ADD, float>` over one region of `n`: `5 + 3·ceil(n/2)` worker cycles, run on one
/// context: `W ×` that in tile cycles.
pub fn published_add_2d(n: u64) -> u64 {
    W * (5 + ADD_F32_CYCLES_PER_VECTOR * n.div_ceil(F32_VECTOR))
}

/// `BinaryOp1D<ADD, float>` (a MultiVertex) over `n`: each worker `29 + 3·ceil(ceil(n/W)/2)`,
/// tile cycles `W × worker + basicOpSupervisorOverhead`.
pub fn published_add_1d(n: u64) -> u64 {
    W * (29 + ADD_F32_CYCLES_PER_VECTOR * n.div_ceil(W).div_ceil(F32_VECTOR)) + BASIC_OP_SUPERVISOR
}

/// Modelled tile cycles of one vertex of `codelet` (`in1`, `in2`, `out` of `n` floats) alone on
/// a tile.
pub fn modelled_binary(codelet: &str, n: usize) -> u64 {
    codelets::link();
    let target = Target::custom(1, 256 * 1024);
    let mut g = Graph::new(&target);
    let cs = g.add_compute_set(codelet);
    let v = g.add_vertex(cs, codelet).expect("vertex");
    for field in ["in1", "in2", "out"] {
        let t = g.add_variable(DType::F32, &[n], field);
        g.set_tile_mapping(&t, 0).expect("map");
        g.connect(v, field, &t).expect("connect");
    }
    g.set_tile_mapping(v, 0).expect("map vertex");
    let exe = compile(&g, &[Program::execute(cs)], &CompileOptions::default()).expect("compile");
    CycleModel::new(&exe).computes[0].max
}

/// Rows for a few sizes of `Add<float>` (one context) and `AddMulti<float>` (six).
pub fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for n in [64u64, 1000, 6000] {
        rows.push(Row {
            name: format!("`Add<float>`, {n} elements, one vertex (tile cycles)"),
            modelled: modelled_binary("Add<float>", n as usize) as f64,
            published: published_add_2d(n) as f64,
            check: Check::Within(0.15),
            kind: Kind::Formula,
            chip: "—",
            source: "poplibs BinaryOp2D estimator, ADD float",
            note: "`6 × (5 + 3·⌈n/2⌉)`".into(),
        });
        rows.push(Row {
            name: format!("`AddMulti<float>`, {n} elements (tile cycles)"),
            modelled: modelled_binary("AddMulti<float>", n as usize) as f64,
            published: published_add_1d(n) as f64,
            check: Check::Within(0.15),
            kind: Kind::Formula,
            chip: "—",
            source: "poplibs BinaryOp1D estimator, ADD float",
            note: "`6 × (29 + 3·⌈⌈n/6⌉/2⌉) + 11`".into(),
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_formulas_by_hand() {
        assert_eq!(published_add_2d(1000), 6 * (5 + 1500));
        assert_eq!(published_add_1d(6000), 6 * (29 + 1500) + 11);
        assert_eq!(published_add_1d(7), 6 * (29 + 3) + 11);
    }
}
