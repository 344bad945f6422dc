//! Bad input is a typed error naming the cause.

use hdiff::grid::Grid;
use hdiff::plan::{Mapping, PlanRequest, Planes};
use hdiff::HdiffError;
use poplar::Target;

#[test]
fn a_grid_too_small_for_the_halo() {
    let err = Grid::new(4, 10, 1).unwrap_err();
    assert!(
        matches!(
            err,
            HdiffError::GridTooSmall {
                axis: "i",
                size: 4,
                min: 5
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("halo of 2"), "{err}");
    let err = Grid::new(10, 3, 1).unwrap_err();
    assert!(
        matches!(err, HdiffError::GridTooSmall { axis: "j", .. }),
        "{err}"
    );
    let err = Grid::new(10, 10, 0).unwrap_err();
    assert!(
        matches!(err, HdiffError::GridTooSmall { axis: "k", .. }),
        "{err}"
    );
}

#[test]
fn a_mapping_that_needs_more_tiles_than_the_target_has() {
    let grid = Grid::new(64, 64, 16).unwrap();
    let err = hdiff::run::compile(
        grid,
        &Target::custom(32, 624 * 1024),
        PlanRequest {
            mapping: Mapping::Tri,
            planes: Planes::Groups(16),
            blocks: Some((2, 1)),
        },
    )
    .err()
    .unwrap();
    match err {
        HdiffError::TooManyTiles {
            needed, available, ..
        } => assert_eq!((needed, available), (16 * 2 * 3, 32)),
        e => panic!("{e}"),
    }
}

#[test]
fn more_plane_groups_than_planes() {
    let grid = Grid::new(16, 16, 3).unwrap();
    let err = hdiff::run::compile(
        grid,
        &Target::custom(32, 624 * 1024),
        PlanRequest {
            mapping: Mapping::Single,
            planes: Planes::Groups(4),
            blocks: None,
        },
    )
    .err()
    .unwrap();
    assert!(
        matches!(
            err,
            HdiffError::DecompositionTooFine {
                what: "plane groups",
                value: 4,
                max: 3,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_block_that_does_not_fit_in_tile_memory() {
    // 64 × 64 × 8 on 4 tiles of 64 KiB: each tile holds 2 planes × ~16 rows × 64 × 4 bytes ×
    // 3 fields = 24 KiB plus its input view... with all planes on one tile it cannot fit.
    let grid = Grid::new(64, 64, 8).unwrap();
    let err = hdiff::run::compile(
        grid,
        &Target::custom(4, 64 * 1024),
        PlanRequest {
            mapping: Mapping::Single,
            planes: Planes::All,
            blocks: Some((2, 1)),
        },
    )
    .err()
    .unwrap();
    match err {
        HdiffError::BlockTooLarge { tile, bytes, limit } => {
            assert!(tile < 2.into(), "tile {tile}");
            assert!(bytes > limit && limit == 64 * 1024, "{bytes} {limit}");
        }
        e => panic!("{e}"),
    }
}
