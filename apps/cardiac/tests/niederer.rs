//! The Niederer et al. (2011) N-version benchmark on the 0.5 mm slab with the native solver: the
//! far corner P8 (20, 7, 3) mm must activate within the band documented in docs/cardiac.md.

use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{Setup, Stimulus};

/// Accepted band for P8 at dx = 0.5 mm (ms); docs/cardiac.md "Niederer check" gives the sources
/// and why this is a band rather than the paper's own per-code figures (which we could not
/// retrieve as numbers). Lower bound: a coarse mesh conducts more slowly than the converged
/// solution, so P8 at 0.5 mm must not be earlier than the converged P8, about 38 ms (fenicsx-beat's
/// reproduction of the benchmark: 37.9 ms at dx 0.1 mm, dt 0.005 ms; github.com/finsberg/
/// fenicsx-beat, demos/niederer_benchmark.py). Upper bound: Niederer et al. 2011 (Phil. Trans. R.
/// Soc. A 369:4331) report that at 0.5 mm the far-corner time of some codes is more than double
/// the converged value (/work/shared/reference/niederer.md); we accept up to 100 ms. For scale,
/// fenicsx-beat gives 55.8–56.7 ms at 0.5 mm and we give 50.9 ms (dt_ode 0.02 ms).
const P8_MIN_MS: f32 = 38.0;
const P8_MAX_MS: f32 = 100.0;

#[test]
fn p8_activates_within_the_published_spread_at_half_a_millimetre() {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 0.5);
    let stim = Stimulus {
        cells: mesh.cells_in_box([0.0; 3], [1.5; 3]),
        density: 50.0,
        start: 0.0,
        duration: 2.0,
    };
    let setup = Setup::new(&mesh, &Conductivity::niederer(), 0.02, &stim).expect("set-up");
    let p1 = setup.nearest_cell([0.0, 0.0, 0.0]);
    let p8 = setup.nearest_cell([20.0, 7.0, 3.0]);
    let mut nat = NativeSolver::new(&setup);
    while nat.activation()[p8] < 0.0 && nat.time() < P8_MAX_MS + 1.0 {
        nat.step();
    }
    let (t1, t8) = (nat.activation()[p1], nat.activation()[p8]);
    eprintln!("dx 0.5 mm, dt_ode 0.02 ms: P1 {t1:.3} ms, P8 {t8:.3} ms");
    assert!(
        (0.0..3.0).contains(&t1),
        "P1 in the stimulus cube activates during the stimulus: {t1}"
    );
    assert!(
        (P8_MIN_MS..=P8_MAX_MS).contains(&t8),
        "P8 activation {t8} ms outside [{P8_MIN_MS}, {P8_MAX_MS}] ms"
    );
}
