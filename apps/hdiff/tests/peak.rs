//! The modelled arithmetic rate against the chip's vector peak: in every compute phase of every
//! mapping, no tile does more of the stencil's flops per modelled cycle than 4, the f32 vector
//! peak of a tile (one instruction per tile cycle, two lanes, multiply-add: 1,472 tiles ×
//! 1.33 GHz × 4 = 7.8 TFLOP/s for a GC200).

use hdiff::device::build;
use hdiff::grid::Grid;
use hdiff::plan::{Mapping, Plan, PlanRequest};
use hdiff::stencil::{Stage, CYCLES_PER_POINT, FLOPS_PER_POINT};
use poplar::profile::CycleModel;
use poplar::Target;

/// f32 flops per tile and cycle at the vector peak.
const VECTOR_PEAK: f64 = 4.0;

/// The stencil's flops per output point in a stage (`FLOPS_PER_POINT` split as the docs count
/// it: the Laplacian 5, each flux 4, the update 5).
fn stage_flops(stage: Stage) -> u64 {
    match stage {
        Stage::Fused => FLOPS_PER_POINT,
        Stage::Lap => 5,
        Stage::FluxOut => 4 + 4 + 5,
        Stage::Flx => 4,
        Stage::FlyOut => 4 + 5,
    }
}

/// Per compute phase, the largest flops per modelled cycle of any of its tiles.
fn rates(grid: Grid, target: &Target, mapping: Mapping) -> Vec<(String, f64)> {
    hdiff::codelets::link();
    let plan = Plan::new(grid, target, PlanRequest::auto(mapping)).unwrap();
    let exe = build(&plan, target).unwrap();
    let model = CycleModel::new(&exe);
    // What each tile computes for one plane: its stage's flops over its unit's window.
    let mut flops = vec![0u64; target.num_tiles() as usize];
    for unit in &plan.units {
        let points = (plan.blocks_j[unit.block_j].len() * plan.blocks_i[unit.block_i].len()) as u64;
        for (&tile, &stage) in unit.tiles.iter().zip(plan.stages()) {
            flops[tile.index()] = stage_flops(stage) * points;
        }
    }
    let mut out = Vec::new();
    for phase in &model.computes {
        let mut best = 0.0f64;
        for t in &phase.tiles {
            let f = flops[t.tile.index()];
            assert!(
                f > 0,
                "tile {} works in {} but has no stage",
                t.tile,
                phase.name
            );
            best = best.max(f as f64 / t.cycles as f64);
        }
        out.push((phase.name.clone(), best));
    }
    assert!(!out.is_empty(), "{}", plan.describe());
    out
}

#[test]
fn no_tile_computes_faster_than_the_vector_peak() {
    // The seed's grid on one GC200. One vertex per tile and phase computes one plane of its
    // block, so a tile's flops in a phase are its stage's flops over its block.
    let target = Target::gc200();
    let grid = Grid::new(256, 256, 64).unwrap();
    for mapping in Mapping::ALL {
        let r = rates(grid, &target, mapping);
        let best = r.iter().map(|(_, x)| *x).fold(0.0, f64::max);
        eprintln!(
            "{mapping}: at most {best:.2} flops per tile and cycle over {} compute phases (vector peak {VECTOR_PEAK})",
            r.len()
        );
        for (name, rate) in &r {
            assert!(
                *rate <= VECTOR_PEAK,
                "{mapping}, {name}: {rate:.2} flops per tile and cycle"
            );
        }
        // Nor above the stencil's own bound (18 flops in 10 tile cycles), which is below the
        // peak; and the single-stage mapping comes within 20 % of that bound.
        let bound = FLOPS_PER_POINT as f64 / CYCLES_PER_POINT;
        assert!(best <= bound, "{mapping}: {best} > {bound}");
        if mapping == Mapping::Single {
            assert!(best > 0.8 * bound, "{mapping}: only {best:.2} of {bound}");
        }
    }
}
