//! Pacing in tissue: pulses every BCL from the stimulus region, the latest upstroke and
//! repolarisation of every cell on the device equal to the native reference's bit for bit, and
//! the per-beat activation, repolarisation and APD maps a modeller reads.

use cardiac::app::output::Beats;
use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig, DeviceRun};
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{stim_scale, stim_scale_paced, Setup, Stimulus};
use poplar::EngineOptions;

const BCL: f64 = 500.0;

/// A 4 × 2 × 1 mm slab at 0.5 mm, paced from its 1 mm corner cube: 2 beats at 500 ms.
fn paced_setup() -> Setup {
    let mesh = TetMesh::slab(4.0, 2.0, 1.0, 0.5);
    let stim = Stimulus {
        period: BCL,
        count: 2,
        ..Stimulus::protocol(mesh.cells_in_box([0.0; 3], [1.0; 3]))
    };
    Setup::new(&mesh, &Conductivity::niederer(), 0.05, &stim).unwrap()
}

#[test]
fn pulses_come_every_cycle_for_the_given_beats_and_one_pulse_is_unchanged() {
    let on = |t| stim_scale_paced(t, 10.0, 2.0, 300.0, 3.0);
    assert_eq!(
        [on(9.9), on(10.0), on(11.9), on(12.0)],
        [0.0, 1.0, 1.0, 0.0]
    );
    assert_eq!(
        [on(310.0), on(611.0), on(612.0), on(910.0)],
        [1.0, 1.0, 0.0, 0.0]
    );
    for t in [0.0f32, 1.0, 1.99, 2.0, 50.0] {
        assert_eq!(
            stim_scale_paced(t, 0.0, 2.0, 0.0, 1.0),
            stim_scale(t, 0.0, 2.0)
        );
    }
}

#[test]
fn paced_tissue_equals_the_native_reference_and_gives_apd_per_beat() {
    let setup = paced_setup();
    let steps = (2.0 * BCL / f64::from(setup.dt_ode)).round() as usize;
    let mut native = NativeSolver::new(&setup);
    let mut beats = Beats::new(2, setup.n, 0.0, BCL);
    for k in 0..steps {
        native.step();
        // As the run loop does: read the latest crossings between device runs (here 5 ms).
        if k % 100 == 99 {
            let (u, d) = native.last_crossings();
            beats.record(u, d);
        }
    }
    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.tiles = 4;
    cfg.chunk_steps = 100;
    let prob = device::build(&setup, &cfg).unwrap();
    let exe = device::compile_problem(&prob).unwrap();
    let mut run = DeviceRun::new(&exe, prob.info.clone(), EngineOptions::default()).unwrap();
    for _ in 0..steps / 100 {
        run.run_chunk().unwrap();
    }
    let (du, dd) = run.last_crossings().unwrap();
    let (nu, nd) = native.last_crossings();
    let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&du), bits(nu), "latest upstrokes");
    assert_eq!(bits(&dd), bits(nd), "latest repolarisations");
    assert_eq!(bits(&run.voltage().unwrap()), bits(&native.voltage()), "V");

    // Every cell fired and repolarised twice; the second beat came one cycle after the first.
    let n = setup.n;
    for b in 0..2 {
        let act = beats.activation[b].iter().filter(|&&a| a >= 0.0).count();
        let rep = beats.repolarisation[b]
            .iter()
            .filter(|&&r| r >= 0.0)
            .count();
        assert_eq!((act, rep), (n, n), "beat {}", b + 1);
    }
    for i in 0..n {
        let (a1, a2) = (beats.activation[0][i], beats.activation[1][i]);
        assert!(
            (f64::from(a2 - a1) - BCL).abs() < 3.0,
            "cell {i}: {a1} then {a2}"
        );
        let apd1 = beats.repolarisation[0][i] - a1;
        let apd2 = beats.repolarisation[1][i] - a2;
        // Epi cells at 0.05 ms: ~300 ms after a first beat from rest; shorter at a 500 ms cycle
        // (the single cell: 292 ms, then 277 ms for S2 = 500 ms).
        assert!(
            (250.0..330.0).contains(&apd1),
            "cell {i}: APD beat 1 {apd1}"
        );
        assert!(
            apd2 < apd1 - 5.0 && apd2 > 150.0,
            "cell {i}: APD beat 2 {apd2} vs {apd1}"
        );
    }
    let maps = beats.maps();
    let names: Vec<&str> = maps.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "activation_beat1_ms",
            "repolarisation_beat1_ms",
            "apd_beat1_ms",
            "activation_beat2_ms",
            "repolarisation_beat2_ms",
            "apd_beat2_ms"
        ]
    );
}

#[test]
fn the_clock_counts_steps_and_does_not_drift() {
    // Summing 0.05 ms in f32 drifts by 6.5 ms over 129,500 steps; counting steps does not.
    let dt = 0.05f32;
    let (mut summed, mut counted) = (0.0f32, 0.0f32);
    for _ in 0..200_000 {
        summed += dt;
        counted = cardiac::solver::next_time(counted, dt);
    }
    assert!(
        (f64::from(summed) - 10_000.0).abs() > 1.0,
        "f32 sums drift: {summed}"
    );
    assert!(
        (f64::from(counted) - 10_000.0).abs() < 1e-3,
        "counted: {counted}"
    );
}

#[test]
fn every_pulse_lasts_its_duration_in_whole_steps() {
    // Decided at the step's midpoint, a pulse of d ms is on for round(d / dt) steps, every
    // beat, however k·dt rounds near the window's edges (0.02 · 100 rounds to 2.0 in f32, up
    // to 2.0 exactly; as a sum it stays below 2.0, one step more).
    use cardiac::solver::{next_time, stim_time};
    for (dt, duration, bcl) in [
        (0.02f32, 2.0f32, 500.0f32),
        (0.05, 1.0, 1000.0),
        (0.01, 3.0, 400.0),
    ] {
        let beats = 5.0;
        let mut t = 0.0f32;
        let mut on_steps = vec![0u32; 6];
        let end = (beats * bcl / dt).round() as u32 + 10;
        for _ in 0..end {
            if stim_scale_paced(stim_time(t, dt), 0.0, duration, bcl, beats) > 0.0 {
                on_steps[(t / bcl).floor() as usize] += 1;
            }
            t = next_time(t, dt);
        }
        let want = (duration / dt).round() as u32;
        assert_eq!(on_steps, [want, want, want, want, want, 0], "dt {dt}");
    }
}
