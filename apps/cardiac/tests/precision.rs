//! The chip's f32 arithmetic against the f64 baseline (`solver::native64`), with subnormal
//! flushing on and off.

use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::solver::precision::compare;
use cardiac::solver::Stimulus;

#[test]
fn f32_with_and_without_flushing_stays_close_to_f64() {
    codelets::link();
    // A 10 × 3 × 3 mm slab at 0.5 mm (4,320 cells), stimulated at its corner as in the
    // Niederer benchmark, for 30 ms: the front crosses most of it.
    let mesh = TetMesh::slab(10.0, 3.0, 3.0, 0.5);
    let stim = Stimulus::niederer(&mesh);
    let r = compare(&mesh, &Conductivity::niederer(), &stim, 0.02, 30.0, 1.0).unwrap();
    assert!((r.t_end - 30.0).abs() < 0.01, "{}", r.t_end);
    for d in [&r.flush, &r.ieee] {
        // Measured: 0.024 mV and 0.0011 ms on the 20 × 7 × 3 mm slab over 60 ms. The bounds
        // leave room, and are far below what a wrong scheme gives (tens of mV, milliseconds).
        assert!(d.max_v < 0.5, "max |dv| {} mV at {:?}", d.max_v, d.max_v_at);
        assert!(
            d.max_activation < 0.01,
            "max |d act| {} ms",
            d.max_activation
        );
        assert_eq!(d.activation_mismatches, 0);
    }
    // The front really crossed the slab (a run that never activated would agree trivially).
    assert!(
        r.activated > r.cells / 2,
        "{} of {} cells activated",
        r.activated,
        r.cells
    );
    assert!(r.flush.max_v > 1e-6);
}
