//! Every mapping equals the point-wise oracle bit for bit.

use hdiff::device::{build, Device};
use hdiff::grid::{test_input, Coefficient, Grid};
use hdiff::plan::{Mapping, Plan, PlanRequest, Planes};
use hdiff::reference::naive;
use poplar::Target;

fn check(grid: Grid, target: &Target, request: PlanRequest, iterations: u64) {
    hdiff::codelets::link();
    let plan = Plan::new(grid, target, request).unwrap();
    let exe = build(&plan, target).unwrap();
    let mut dev = Device::new(&exe, grid, Some(2)).unwrap();
    let input = test_input(&grid);
    let coeff = Coefficient::Varying.field(&grid);
    dev.load(&input, &coeff).unwrap();
    dev.iterate(iterations, |_| {}).unwrap();
    let got = dev.read().unwrap();
    let want = naive(&grid, &input, &coeff, iterations as usize);
    let bad = got
        .iter()
        .zip(&want)
        .position(|(a, b)| a.to_bits() != b.to_bits());
    assert!(
        bad.is_none(),
        "{}: first difference at {bad:?}",
        plan.describe()
    );
}

#[test]
fn single_stage_small() {
    let target = Target::custom(16, 624 * 1024);
    let grid = Grid::new(23, 19, 3).unwrap();
    for planes in [Planes::All, Planes::Spread] {
        for blocks in [Some((4, 1)), Some((2, 2)), None] {
            check(
                grid,
                &target,
                PlanRequest {
                    mapping: Mapping::Single,
                    planes,
                    blocks,
                },
                3,
            );
        }
    }
}

#[test]
fn dual_and_tri_small() {
    let target = Target::custom(40, 624 * 1024);
    let grid = Grid::new(23, 19, 3).unwrap();
    for mapping in [Mapping::Dual, Mapping::Tri] {
        for planes in [Planes::All, Planes::Spread] {
            for blocks in [Some((2, 1)), Some((2, 2)), None] {
                check(
                    grid,
                    &target,
                    PlanRequest {
                        mapping,
                        planes,
                        blocks,
                    },
                    3,
                );
            }
        }
    }
}
