//! The finite-volume operator on the Kuhn-split slab is not monotone (some off-diagonal
//! coefficients of the anisotropic operator are positive): ahead of the front, V dips below
//! rest before it rises. This measures the dip: the largest drop below each cell's initial V
//! among cells not yet activated, over the run until the far corner activates.

use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{Setup, Stimulus};

/// Largest undershoot (mV) ahead of the front on the slab at `dx`.
fn undershoot(dx: f64) -> f32 {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, dx);
    let stim = Stimulus::niederer(&mesh);
    let setup = Setup::new(&mesh, &Conductivity::niederer(), 0.02, &stim).unwrap();
    let p8 = setup.nearest_cell([20.0, 7.0, 3.0]);
    let mut nat = NativeSolver::new(&setup);
    let v0 = nat.voltage();
    let mut worst = 0.0f32;
    while nat.activation()[p8] < 0.0 && nat.time() < 200.0 {
        for _ in 0..25 {
            nat.step();
        }
        let v = nat.voltage();
        for (i, (&a, &b)) in v.iter().zip(&v0).enumerate() {
            if nat.activation()[i] < 0.0 {
                worst = worst.max(b - a);
            }
        }
    }
    eprintln!("dx {dx} mm: largest undershoot ahead of the front {worst:.2} mV");
    worst
}

#[test]
fn the_operator_undershoots_ahead_of_the_front_by_a_few_millivolts_at_half_a_millimetre() {
    // Measured (sampling every 0.5 ms): 7.40 mV at 0.5 mm, 2.26 mV at 0.2 mm (the 0.2 mm run
    // takes two minutes in the test profile, so only 0.5 mm is checked here). The resting
    // state itself drifts by about 0.3 mV over a beat, which this measure includes.
    let coarse = undershoot(0.5);
    assert!(coarse > 2.0 && coarse < 8.0, "0.5 mm: {coarse} mV");
}
