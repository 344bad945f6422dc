//! The pseudo-ECG's cost on the 0.2 mm Niederer slab (315,000 cells, one chip, mixed-clean,
//! dt 0.02 ms): the same problem built without electrodes and with the 12-lead placement
//! sampled every 1 ms (50 ODE steps). Prints the modelled cycles per ODE step of both (from
//! the profiler: the ECG program's exchange, partials and sums), and the host time of a
//! simulated millisecond — one 50-step device run, plus the ECG program and the read of its
//! 9 values — in rounds that alternate the two engines, with the median of the per-round
//! ratios; and the host set-up of the electrodes (placement, checks, weights).
//!
//! `cargo bench -p cardiac --bench ecg [-- --reps 5 --dx 0.2]`

use std::time::Instant;

use cardiac::ecg::{self, EcgSpec};
use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig, DeviceRun};
use cardiac::solver::{Setup, Stimulus};
use poplar::profile::ProfileOptions;
use poplar::EngineOptions;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Modelled cycles per ODE step of one profiled chunk of `every` steps (the cycle model is
/// static, so one chunk gives the per-step figures), in all and of the ECG (with `sample`).
fn modelled(run: &mut DeviceRun, sample: bool, every: u32) -> (f64, f64) {
    run.engine.enable_profiling(ProfileOptions::default());
    run.run_chunk().expect("chunk");
    if sample {
        run.sample_ecg().expect("ECG");
    }
    let p = run.engine.take_profile().expect("profile");
    let per = |c: u64| c as f64 / f64::from(every);
    let ecg = p
        .summary_by_label()
        .iter()
        .find(|l| l.name == "ECG")
        .map_or(0.0, |l| per(l.total));
    (per(p.total_cycles()), ecg)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let reps: usize = arg(&args, "--reps", 5usize).max(1);
    let dx: f64 = arg(&args, "--dx", 0.2);
    let dt = 0.02;
    let t = Instant::now();
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, dx);
    let cond = Conductivity::niederer();
    let setup = Setup::new(&mesh, &cond, dt, &Stimulus::niederer(&mesh)).expect("set-up");
    println!(
        "slab dx {dx} mm: {} cells, set-up {:.2} s",
        setup.n,
        t.elapsed().as_secs_f64()
    );

    let t = Instant::now();
    let electrodes = ecg::twelve_lead(&mesh).expect("12-lead placement");
    ecg::check_electrodes(&electrodes, &mesh).expect("electrodes");
    let place_s = t.elapsed().as_secs_f64();
    let spec = EcgSpec {
        electrodes,
        sigma_bath: ecg::DEFAULT_SIGMA_BATH,
        every: 1.0,
    };
    let t = Instant::now();
    let ecg_dev = spec
        .device(&mesh, &setup, cond.chi * cond.cm)
        .expect("weights");
    let weights_s = t.elapsed().as_secs_f64();
    println!(
        "electrodes: 12-lead placement and checks {place_s:.3} s, weights {weights_s:.3} s ({} electrodes × {} cells)",
        ecg_dev.electrodes, setup.n
    );

    let every = (1.0 / dt).round() as u32;
    let engine = |with_ecg: bool| {
        let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
        cfg.chunk_steps = every;
        cfg.ecg = with_ecg.then(|| ecg_dev.clone());
        let t = Instant::now();
        let prob = device::build(&setup, &cfg).expect("build");
        let exe = device::compile_problem(&prob).expect("compile");
        let (max_mem, _) = cardiac::app::console::memory_max_median(&exe);
        println!(
            "{}: build + compile {:.2} s, max tile memory {max_mem} B",
            if with_ecg { "with ECG" } else { "without ECG" },
            t.elapsed().as_secs_f64()
        );
        DeviceRun::new(&exe, prob.info.clone(), EngineOptions::default()).expect("engine")
    };
    let mut plain = engine(false);
    let mut with = engine(true);

    // Modelled cycles: one profiled millisecond of each, on engines of their own.
    let (c_plain, _) = modelled(&mut engine(false), false, every);
    let (c_with, c_ecg) = modelled(&mut engine(true), true, every);
    println!(
        "modelled cycles per ODE step: without ECG {c_plain:.0}, with {c_with:.0} (ECG {c_ecg:.0}: {:.0} per sample every {every} steps): +{:.2} %",
        c_ecg * f64::from(every),
        100.0 * (c_with / c_plain - 1.0)
    );

    // Host time: rounds alternating the two engines (order rotating), one simulated ms each.
    let (mut tp, mut tw, mut ts, mut ratio, mut chunk_ratio) =
        (vec![], vec![], vec![], vec![], vec![]);
    for r in 0..reps + 1 {
        let mut a = 0.0;
        let mut b = 0.0;
        let mut s = 0.0;
        for k in 0..2 {
            if (k + r) % 2 == 0 {
                let t = Instant::now();
                plain.run_chunk().expect("chunk");
                a = t.elapsed().as_secs_f64();
            } else {
                let t = Instant::now();
                with.run_chunk().expect("chunk");
                let t2 = Instant::now();
                let v = with.sample_ecg().expect("ECG");
                assert_eq!(v.len(), 9);
                s = t2.elapsed().as_secs_f64();
                b = t.elapsed().as_secs_f64();
            }
        }
        if r == 0 {
            continue; // warm-up
        }
        tp.push(a);
        tw.push(b);
        ts.push(s);
        eprintln!(
            "  round {r}: without {:.1} ms, with {:.1} ms (ECG {:.2} ms)",
            1e3 * a,
            1e3 * b,
            1e3 * s
        );
        ratio.push(b / a);
        chunk_ratio.push((b - s) / a);
    }
    println!(
        "host time per simulated ms ({reps} rounds, medians): without ECG {:.1} ms, with {:.1} ms (ECG program and read {:.2} ms); ratio {:.4} (+{:.2} %)",
        1e3 * median(tp.clone()),
        1e3 * median(tw),
        1e3 * median(ts.clone()),
        median(ratio.clone()),
        100.0 * (median(ratio) - 1.0)
    );
    println!(
        "  of which the ECG program: {:.2} % of the ms without ECG; the 50 steps alone: ratio {:.4} (the two engines' memory differs by the weights)",
        100.0 * median(ts.clone()) / median(tp.clone()),
        median(chunk_ratio)
    );
}
