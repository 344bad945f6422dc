//! The pseudo-ECG (`cardiac::ecg`): the device's lead-field sum against the analytic planar
//! wave (sign, geometry, timing), against a host f64 implementation from voltage snapshots,
//! reversed by reversing the stimulus, the same bits on 1 and 2 threads, on the
//! bi-ventricular mesh (QRS and T wave), and the binary's electrode options and errors.

mod support;

use cardiac::ecg::{self, phi_reference, EcgRecord, EcgSpec, Electrode, DEFAULT_SIGMA_BATH};
use cardiac::matrix::{assemble_operator, Conductivity};
use cardiac::mesh::{read_mesh, ReadOptions, TetMesh};
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig, DeviceRun};
use cardiac::solver::{Setup, Stimulus};
use poplar::EngineOptions;
use std::path::PathBuf;

/// A device run sampled every `every` ms: the ECG, V at every sample (when asked) and the
/// activation and last repolarisation maps at the end.
struct EcgRun {
    rec: EcgRecord,
    v: Vec<Vec<f32>>,
    act: Vec<f32>,
    last_down: Vec<f32>,
}

#[allow(clippy::too_many_arguments)]
fn run_ecg(
    mesh: &TetMesh,
    setup: &Setup,
    cond: &Conductivity,
    electrodes: &[Electrode],
    every: f64,
    t_end: f64,
    tiles: usize,
    threads: usize,
    keep_v: bool,
) -> EcgRun {
    run_ecg_on(
        1, mesh, setup, cond, electrodes, every, t_end, tiles, threads, keep_v,
    )
}

#[allow(clippy::too_many_arguments)]
fn run_ecg_on(
    chips: u32,
    mesh: &TetMesh,
    setup: &Setup,
    cond: &Conductivity,
    electrodes: &[Electrode],
    every: f64,
    t_end: f64,
    tiles: usize,
    threads: usize,
    keep_v: bool,
) -> EcgRun {
    let spec = EcgSpec {
        electrodes: electrodes.to_vec(),
        sigma_bath: DEFAULT_SIGMA_BATH,
        every,
    };
    let mut cfg = DeviceConfig::chips(chips, Strategy::MixedClean);
    cfg.tiles = tiles;
    cfg.chunk_steps = (every / f64::from(setup.dt_ode)).round() as u32;
    cfg.ecg = Some(spec.device(mesh, setup, cond.chi * cond.cm).unwrap());
    let prob = device::build(setup, &cfg).unwrap();
    let exe = device::compile_problem(&prob).unwrap();
    let opts = EngineOptions {
        threads: Some(threads),
        ..Default::default()
    };
    let mut run = DeviceRun::new(&exe, prob.info.clone(), opts).unwrap();
    let mut rec = EcgRecord::new(electrodes);
    let mut v = Vec::new();
    let samples = (t_end / every).round() as usize;
    for k in 0..=samples {
        if k > 0 {
            run.run_chunk().unwrap();
        }
        rec.push(k as f64 * every, &run.sample_ecg().unwrap())
            .unwrap();
        if keep_v {
            v.push(run.voltage().unwrap());
        }
    }
    let (_, last_down) = run.last_crossings().unwrap();
    EcgRun {
        rec,
        v,
        act: run.activation().unwrap(),
        last_down,
    }
}

fn electrode(name: &str, pos: [f64; 3]) -> Electrode {
    Electrode {
        name: name.into(),
        pos,
    }
}

/// The cable of the analytic checks: 20 × 1 × 1 mm at 0.25 mm, fibres along x, the stimulus
/// on the 1 mm at x = 0 (or at x = 20 when `reversed`); dt 0.05 ms.
fn cable(reversed: bool) -> (TetMesh, Setup, Conductivity) {
    let mesh = TetMesh::slab(20.0, 1.0, 1.0, 0.25);
    let (lo, hi) = if reversed {
        ([19.0, -1.0, -1.0], [21.0, 2.0, 2.0])
    } else {
        ([-1.0, -1.0, -1.0], [1.0, 2.0, 2.0])
    };
    let cond = Conductivity::niederer();
    let stim = Stimulus::protocol(mesh.cells_in_box(lo, hi));
    let setup = Setup::new(&mesh, &cond, 0.05, &stim).unwrap();
    (mesh, setup, cond)
}

/// Electrodes on the cable's axis, 10 mm beyond each end: A ahead of the wave from x = 0, B
/// behind it.
const AHEAD: [f64; 3] = [30.0, 0.5, 0.5];
const BEHIND: [f64; 3] = [-10.0, 0.5, 0.5];

/// The front's position s(t) (mm along x): the activation time of each 0.25 mm column of
/// cells (mean over the column), inverted by linear interpolation.
fn front_position(setup: &Setup, act: &[f32], t: f64) -> Option<f64> {
    let mut cols = vec![(0.0f64, 0usize); 80];
    for (c, a) in setup.centroids.iter().zip(act) {
        let k = ((c[0] / 0.25) as usize).min(79);
        cols[k].0 += f64::from(*a);
        cols[k].1 += 1;
    }
    let at: Vec<(f64, f64)> = cols
        .iter()
        .enumerate()
        .map(|(k, &(s, n))| (0.25 * k as f64 + 0.125, s / n as f64))
        .collect();
    at.windows(2).find_map(|w| {
        let ((x0, t0), (x1, t1)) = (w[0], w[1]);
        (t0 <= t && t <= t1 && t1 > t0).then(|| x0 + (t - t0) / (t1 - t0) * (x1 - x0))
    })
}

/// A planar front crossing the cable toward A and away from B. The lead-field integral of a
/// front of cross-section area `a` and jump `ΔV` at `s` is, for electrodes on the axis far
/// compared with the front's width and the cable's width, `φ ≈ σ a ΔV / (4π σ_b d²)` with
/// the sign of the direction of travel: positive at A (the front comes toward it), negative
/// at B, and `φ_A / −φ_B = ((s + 10) / (30 − s))²` whatever σ, a and ΔV.
///
/// Checked while the front is between 3 and 17 mm: the signs, and the ratio within 12 % (the
/// deviation is the source's extent, not noise: the upstroke and, behind it, the spike's
/// fall to the plateau, a lobe of opposite sign, span a few mm where 1/d² varies by up to
/// 20 %; measured +6 % near 3 mm, smooth through 0 to −11 % near 17 mm). Timing: φ_A is
/// largest while the front crosses the last millimetre (from the activation of the cells at
/// 19 mm to the last activation, ± one 0.5 ms sample): nearest to A, before the wall cuts
/// the front off; once every cell is on its plateau, 5 ms later, φ_A is below 5 % of that
/// peak.
///
/// Magnitude, exactly in the far field: the cable's total dipole moment is `σ_l a ∫ −∂V/∂x
/// dx = σ_l a (V(0) − V(L))`, so an electrode F on the axis at d = 2 m from the cable's centre
/// sees `φ_F = σ_l a (V_first − V_last) / (4π σ_b d²)` up to O(L/d) = 1 % (V_first and
/// V_last: the mean V of the first and last 0.25 mm column of cells). Checked from 3 ms to
/// 1 ms before the last activation: positive, within 5 % at every sample (the discrete front
/// crossing one column of cells after another makes a ripple of ±4 %), and within 1 % on
/// average over those samples.
#[test]
fn a_planar_front_is_positive_ahead_negative_behind_with_the_inverse_square_ratio() {
    let (mesh, setup, cond) = cable(false);
    let far = 2000.0;
    let els = [
        electrode("A", AHEAD),
        electrode("B", BEHIND),
        electrode("F", [10.0 + far, 0.5, 0.5]),
    ];
    let r = run_ecg(&mesh, &setup, &cond, &els, 0.5, 50.0, 32, 2, true);
    let a = r.rec.electrode("A").unwrap();
    let b = r.rec.electrode("B").unwrap();
    let last = r.act.iter().copied().fold(f32::MIN, f32::max) as f64;
    assert!(r.act.iter().all(|&t| t >= 0.0), "every cell activates");
    assert!(
        last + 5.0 < 50.0,
        "the front crosses within the run: {last}"
    );
    let mut checked = 0;
    let mut worst = 0.0f64;
    for (k, &t) in r.rec.times.iter().enumerate() {
        let Some(s) = front_position(&setup, &r.act, t) else {
            continue;
        };
        if !(3.0..=17.0).contains(&s) {
            continue;
        }
        assert!(a[k] > 0.0, "t {t}: front at {s:.2} mm, φ_A {} ≤ 0", a[k]);
        assert!(b[k] < 0.0, "t {t}: front at {s:.2} mm, φ_B {} ≥ 0", b[k]);
        let want = ((s + 10.0) / (30.0 - s)).powi(2);
        let got = a[k] / -b[k];
        let err = (got / want - 1.0).abs();
        worst = worst.max(err);
        assert!(
            err < 0.12,
            "t {t}: front at {s:.2} mm: φ_A/−φ_B = {got:.4}, 1/d² gives {want:.4}"
        );
        checked += 1;
    }
    assert!(checked >= 20, "{checked} samples with the front mid-cable");
    let (k_peak, peak) = a
        .iter()
        .enumerate()
        .fold((0, f64::MIN), |m, (k, &v)| if v > m.1 { (k, v) } else { m });
    let t_peak = r.rec.times[k_peak];
    // When the front enters the last millimetre: the mean activation of the cells whose
    // centroid lies within 19–19.25 mm.
    let t19 = {
        let c: Vec<f64> = (0..setup.n)
            .filter(|&i| (19.0..19.25).contains(&setup.centroids[i][0]))
            .map(|i| f64::from(r.act[i]))
            .collect();
        c.iter().sum::<f64>() / c.len() as f64
    };
    assert!(
        t19 - 0.5 <= t_peak && t_peak <= last + 0.5,
        "φ_A peaks at {t_peak} ms; the front enters the last mm at {t19:.2} ms and reaches \
         the far end at {last:.2} ms"
    );
    let k_after = r.rec.times.iter().position(|&t| t >= last + 5.0).unwrap();
    assert!(
        a[k_after].abs() < 0.05 * peak,
        "plateau: φ_A {} at {} ms against the peak {peak}",
        a[k_after],
        r.rec.times[k_after]
    );
    // The far field: the cable's dipole moment.
    let column = |lo: f64, hi: f64, v: &[f32]| {
        let cells: Vec<usize> = (0..setup.n)
            .filter(|&i| (lo..hi).contains(&setup.centroids[i][0]))
            .collect();
        cells.iter().map(|&i| f64::from(v[i])).sum::<f64>() / cells.len() as f64
    };
    let k_far = cond.sigma_l / (4.0 * std::f64::consts::PI * DEFAULT_SIGMA_BATH * far * far);
    let predicted: Vec<f64> =
        r.v.iter()
            .map(|v| k_far * (column(0.0, 0.25, v) - column(19.75, 20.0, v)))
            .collect();
    let f = r.rec.electrode("F").unwrap();
    let big = predicted.iter().fold(0.0f64, |m, p| m.max(p.abs()));
    let (mut far_worst, mut sum_got, mut sum_want) = (0.0f64, 0.0, 0.0);
    for (k, (&got, &want)) in f.iter().zip(&predicted).enumerate() {
        let t = r.rec.times[k];
        if !(3.0..=last - 1.0).contains(&t) {
            continue;
        }
        assert!(want > 0.1 * big, "t {t}: the moment {want:e} is small");
        let err = (got / want - 1.0).abs();
        far_worst = far_worst.max(err);
        assert!(
            got > 0.0 && err < 0.05,
            "t {t}: φ_F {got:e} mV, the dipole moment gives {want:e} mV"
        );
        sum_got += got;
        sum_want += want;
    }
    let mean_err = sum_got / sum_want - 1.0;
    assert!(
        mean_err.abs() < 0.01,
        "far field: mean φ_F {:+.2} % off the dipole moment's",
        100.0 * mean_err
    );
    eprintln!(
        "cable: far field within {:.2} % of the dipole moment per sample, {:+.2} % on average (peak {big:.3e} mV)",
        100.0 * far_worst,
        100.0 * mean_err
    );
    eprintln!(
        "cable: {checked} samples, ratio worst {:.2} %, φ_A peak {peak:.4} mV at {t_peak} ms (last activation {last:.2} ms)",
        100.0 * worst
    );
}

/// Reversing the stimulus (from x = 0 to x = 20) inverts the lead A − B: the mirror image of
/// the run swaps A and B. Checked within 10^-3 of the lead's peak at every sample (the mesh
/// and the sums are not bit-for-bit mirror images; measured ≈ 10^-5), and the peaks have
/// opposite signs.
#[test]
fn reversing_the_stimulus_inverts_the_lead() {
    let els = [electrode("A", AHEAD), electrode("B", BEHIND)];
    let lead = |reversed| {
        let (mesh, setup, cond) = cable(reversed);
        let r = run_ecg(&mesh, &setup, &cond, &els, 1.0, 40.0, 32, 2, false);
        let (a, b) = (r.rec.electrode("A").unwrap(), r.rec.electrode("B").unwrap());
        a.iter().zip(&b).map(|(a, b)| a - b).collect::<Vec<f64>>()
    };
    let (fwd, rev) = (lead(false), lead(true));
    let peak = fwd.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let worst = fwd
        .iter()
        .zip(&rev)
        .map(|(f, r)| (f + r).abs())
        .fold(0.0f64, f64::max);
    assert!(peak > 0.0);
    assert!(
        worst < 1e-3 * peak,
        "lead reversed + lead: worst {worst} mV against the peak {peak} mV"
    );
    let argmax = |x: &[f64]| {
        x.iter()
            .copied()
            .fold(0.0f64, |m, v| if v.abs() > m.abs() { v } else { m })
    };
    assert!(argmax(&fwd) > 0.0 && argmax(&rev) < 0.0, "peaks flip sign");
    eprintln!(
        "reversal: peak {peak:.4} mV, worst |fwd + rev| {worst:.2e} mV ({:.2} %)",
        100.0 * worst / peak
    );
}

/// The device's φ_e (f32 ELLPACK differences, per-tile partials, sums over tile groups)
/// against [`phi_reference`] (the f64 operator applied to the same voltage, Σ Vol L V / r in
/// f64) on the Niederer slab at 0.5 mm, every 2 ms while the wave crosses it and after:
/// within 10^-4 of the largest |φ_e| of each electrode at every sample (measured worst
/// printed).
#[test]
fn the_device_agrees_with_a_host_f64_implementation_on_the_half_mm_slab() {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 0.5);
    let cond = Conductivity::niederer();
    let setup = Setup::new(&mesh, &cond, 0.05, &Stimulus::niederer(&mesh)).unwrap();
    let els = [
        electrode("xp", [25.0, 3.5, 1.5]),
        electrode("xm", [-5.0, 3.5, 1.5]),
        electrode("zp", [10.0, 3.5, 8.0]),
        electrode("ym", [10.0, -5.0, 1.5]),
        electrode("far", [60.0, 40.0, -30.0]),
    ];
    let r = run_ecg(&mesh, &setup, &cond, &els, 2.0, 60.0, 1472, 2, true);
    let op = assemble_operator(&mesh, &cond).unwrap();
    let host: Vec<Vec<f64>> =
        r.v.iter()
            .map(|v| {
                let v: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
                phi_reference(&op, cond.chi * cond.cm, DEFAULT_SIGMA_BATH, &els, &v)
            })
            .collect();
    for (e, el) in els.iter().enumerate() {
        let dev = r.rec.electrode(&el.name).unwrap();
        let scale = host.iter().fold(0.0f64, |m, h| m.max(h[e].abs()));
        assert!(scale > 0.0, "{}: no signal", el.name);
        let worst = dev
            .iter()
            .zip(&host)
            .map(|(d, h)| (d - h[e]).abs())
            .fold(0.0f64, f64::max);
        eprintln!(
            "{}: peak {scale:.5} mV, worst |device − host| {worst:.2e} mV ({:.2e} of the peak)",
            el.name,
            worst / scale
        );
        assert!(
            worst <= 1e-4 * scale,
            "{}: device and host differ by {worst} mV (peak {scale} mV)",
            el.name
        );
    }
}

/// The ECG of a run is the same bits on 1 and 2 simulator threads: the sums' order is fixed by
/// the executable. The 12-lead placement of the slab, 10 ms.
#[test]
fn the_ecg_is_the_same_bits_on_one_and_two_threads() {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 0.5);
    let cond = Conductivity::niederer();
    let setup = Setup::new(&mesh, &cond, 0.05, &Stimulus::niederer(&mesh)).unwrap();
    let els = ecg::twelve_lead(&mesh).unwrap();
    ecg::check_electrodes(&els, &mesh).unwrap();
    let bits = |threads| {
        let r = run_ecg(&mesh, &setup, &cond, &els, 1.0, 10.0, 1472, threads, false);
        assert_eq!(r.rec.leads().len(), 12);
        r.rec
            .values
            .iter()
            .flatten()
            .map(|v| v.to_bits())
            .collect::<Vec<u32>>()
    };
    let one = bits(1);
    assert!(one.iter().any(|&b| b != 0), "a signal");
    assert_eq!(one, bits(2));
}

/// A run of the bi-ventricular mesh (biv_0.3.msh, cm → mm; isotropic σ = 4 σ_l, so that
/// the coarse 3 mm cells activate the whole heart in ≈ 50 ms), stimulated on the LV
/// endocardium, with the 12-lead placement sampled every 1 ms for 500 ms; activation is the
/// upward crossing of −60 mV (the start of the upstroke, which the ECG sees first). With
/// `apd_gradient`, cells in the inner half of the wall (nearer the endocardial than the
/// epicardial surface) are TP06 M cells and the outer half epicardial, whose APD is ≈ 100 ms
/// shorter; without, every cell is epicardial.
fn biv_run(apd_gradient: bool) -> EcgRun {
    use cardiac::solver::{CellModels, SetupOptions};
    use cardiac::tp06::{CellModel, CellType};
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/biv_0.3.msh");
    let mesh = read_mesh(path, &ReadOptions::with_scale(10.0)).unwrap();
    let lv = mesh.cells_touching_surface("ENDO_LV").unwrap();
    let rv = mesh.cells_touching_surface("ENDO_RV").unwrap();
    let epi = mesh.cells_touching_surface("EPI").unwrap();
    let centre = |t: &u32| mesh.centroid(*t as usize);
    let endo_c: Vec<[f64; 3]> = lv.iter().chain(&rv).map(centre).collect();
    let epi_c: Vec<[f64; 3]> = epi.iter().map(centre).collect();
    let nearest = |p: [f64; 3], set: &[[f64; 3]]| {
        set.iter()
            .map(|q| (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>())
            .fold(f64::INFINITY, f64::min)
    };
    let cell_model: Vec<u8> = (0..mesh.num_cells())
        .map(|t| {
            let c = mesh.centroid(t);
            if apd_gradient && nearest(c, &endo_c) < nearest(c, &epi_c) {
                CellType::Mid as u8
            } else {
                CellType::Epi as u8
            }
        })
        .collect();
    let models = [CellType::Endo, CellType::Mid, CellType::Epi]
        .map(CellModel::published)
        .to_vec();
    let cond = Conductivity::isotropic(4.0 * Conductivity::niederer().sigma_l);
    let opts = SetupOptions {
        models: Some(CellModels { models, cell_model }),
        act_threshold: Some(-60.0),
        ..Default::default()
    };
    let setup = Setup::with_options(&mesh, &cond, 0.05, &Stimulus::protocol(lv), &opts).unwrap();
    let els = ecg::twelve_lead(&mesh).unwrap();
    ecg::check_electrodes(&els, &mesh).unwrap();
    run_ecg(&mesh, &setup, &cond, &els, 1.0, BIV_END, 64, 2, false)
}

const BIV_END: f64 = 500.0;

/// The QRS and T-wave areas (mV·ms) of the 12 leads: the QRS over [first, last activation],
/// the T wave over [last activation + 50 ms, the end]; and the cosine of the angle between
/// the two as 12-vectors (the spatial QRS–T angle, over the 12 leads).
fn qrs_t(r: &EcgRun) -> (Vec<f64>, Vec<f64>, f64) {
    let first = f64::from(r.act.iter().copied().fold(f32::MAX, f32::min));
    let last = f64::from(r.act.iter().copied().fold(f32::MIN, f32::max));
    let t = &r.rec.times;
    let area = |l: &[f64], lo: f64, hi: f64| {
        (0..t.len())
            .filter(|&k| t[k] >= lo && t[k] <= hi)
            .map(|k| l[k])
            .sum::<f64>()
    };
    let leads = r.rec.leads();
    let q: Vec<f64> = leads.iter().map(|l| area(&l.values, first, last)).collect();
    let tw: Vec<f64> = leads
        .iter()
        .map(|l| area(&l.values, last + 50.0, BIV_END))
        .collect();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let cos = dot(&q, &tw) / (dot(&q, &q) * dot(&tw, &tw)).sqrt();
    (q, tw, cos)
}

/// The bi-ventricular heart's 12-lead ECG ([`biv_run`]).
///
/// * QRS: the 12 leads' RMS r(t); the QRS is where r exceeds 5 % of its largest value up to
///   the last activation + 20 ms. It lies within the activation: onset no earlier than the
///   first activation, end no later than the last activation + 1 ms (one sample); and it
///   lasts at least half the activation spread.
/// * T wave: the APD gradient sets its polarity. With every cell epicardial, repolarisation
///   follows activation (their correlation over the cells +0.97, measured), the
///   repolarisation's dipoles point against the activation's, and the T waves are discordant
///   with the QRS complexes: the spatial QRS–T angle (between the 12 leads' QRS areas and T
///   areas as vectors) above 90°, cosine < 0 (measured 152°). With M cells inside and
///   epicardial cells outside, the outer wall, activated after the inner, repolarises before
///   it (the correlation drops to +0.47): across the wall the repolarisation's dipoles turn
///   round and the T waves become concordant, cosine > 0 (measured 59°). Both runs end with
///   every cell repolarised (downward through −70 mV) after the last activation and 10 ms
///   before the end, so the T areas are whole.
#[test]
fn the_biv_ecg_has_its_qrs_within_the_activation_and_t_waves_as_the_apd_gradient_says() {
    let r = biv_run(true);
    let act: Vec<f64> = r.act.iter().map(|&a| f64::from(a)).collect();
    assert!(act.iter().all(|&a| a >= 0.0), "every cell activates");
    let first = act.iter().copied().fold(f64::INFINITY, f64::min);
    let last = act.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let leads = r.rec.leads();
    assert_eq!(leads.len(), 12);
    let times = &r.rec.times;
    let rms: Vec<f64> = (0..times.len())
        .map(|k| (leads.iter().map(|l| l.values[k].powi(2)).sum::<f64>() / 12.0).sqrt())
        .collect();
    let window: Vec<usize> = (0..times.len())
        .filter(|&k| times[k] <= last + 20.0)
        .collect();
    let peak = window.iter().map(|&k| rms[k]).fold(0.0f64, f64::max);
    let above: Vec<usize> = window
        .iter()
        .copied()
        .filter(|&k| rms[k] > 0.05 * peak)
        .collect();
    let (onset, end) = (times[above[0]], times[*above.last().unwrap()]);
    eprintln!(
        "biv: activation {first:.2}–{last:.2} ms (spread {:.2}); QRS {onset}–{end} ms ({} ms), RMS peak {peak:.4} mV",
        last - first,
        end - onset
    );
    assert!(
        onset >= first,
        "QRS onset {onset} ms before the first activation {first} ms"
    );
    assert!(
        end <= last + 1.0,
        "QRS end {end} ms after the last activation {last} ms"
    );
    assert!(
        end - onset >= 0.5 * (last - first),
        "QRS {} ms against the activation spread {} ms",
        end - onset,
        last - first
    );

    let uniform = biv_run(false);
    for (run, name, concordant) in [(&r, "M/epi", true), (&uniform, "uniform epi", false)] {
        let last = f64::from(run.act.iter().copied().fold(f32::MIN, f32::max));
        let rt = run.last_down.iter().copied().fold(f32::MIN, f32::max);
        assert!(
            run.last_down.iter().all(|&d| f64::from(d) > last) && f64::from(rt) < BIV_END - 10.0,
            "{name}: every cell repolarises after the last activation and before {} ms (last {rt} ms)",
            BIV_END - 10.0
        );
        let act: Vec<f64> = run.act.iter().map(|&a| f64::from(a)).collect();
        let rep: Vec<f64> = run.last_down.iter().map(|&a| f64::from(a)).collect();
        let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
        let (ma, mr) = (mean(&act), mean(&rep));
        let corr = act
            .iter()
            .zip(&rep)
            .map(|(a, b)| (a - ma) * (b - mr))
            .sum::<f64>()
            / (act.iter().map(|a| (a - ma).powi(2)).sum::<f64>()
                * rep.iter().map(|b| (b - mr).powi(2)).sum::<f64>())
            .sqrt();
        let (q, t, cos) = qrs_t(run);
        eprintln!(
            "{name}: AT–RT correlation {corr:+.3}, last repolarisation {rt:.1} ms, QRS–T cosine {cos:+.3} ({:.0}°)",
            cos.acos().to_degrees()
        );
        for (k, n) in ecg::LEAD_NAMES.iter().enumerate() {
            eprintln!("  {n:<4} QRS area {:+9.3}  T area {:+9.3}", q[k], t[k]);
        }
        assert_eq!(cos > 0.0, concordant, "{name}: QRS–T cosine {cos}");
    }
}

/// `cardiac run --ecg-12-lead` writes `ecg.csv` (a column per electrode and per lead, a row
/// per ms from 0) and `ecg.png`, prints the ECG's share of the phase breakdown; a second run
/// into the folder is refused without `--force`, and with it replaces `ecg.csv`.
#[test]
fn the_binary_writes_ecg_csv_and_the_plot() {
    use support::{cardiac, stderr, tmp};
    let d = tmp();
    let out = d.join("run").display().to_string();
    let args = [
        "run",
        "--dx",
        "1",
        "--tiles",
        "16",
        "--t-end",
        "3",
        "--ecg-12-lead",
        "--electrode",
        "far=100,3.5,1.5",
        "--snapshot-every",
        "0",
        "--no-report",
        "--out",
        &out,
    ];
    let o = cardiac(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("ECG: 10 electrodes"), "{stdout}");
    assert!(
        stdout.lines().any(|l| l.trim_start().starts_with("ECG ")),
        "the ECG in the phase breakdown:\n{stdout}"
    );
    let csv = std::fs::read_to_string(d.join("run/ecg.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header.len(), 1 + 10 + 12, "{header:?}");
    assert_eq!(header[0], "t_ms");
    assert_eq!(header[1], "phi_RA_mV");
    assert_eq!(header[10], "phi_far_mV");
    assert_eq!(header[12], "II_mV");
    assert_eq!(header[22], "V6_mV");
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 4, "samples at 0, 1, 2 and 3 ms");
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(r.len(), header.len());
        assert_eq!(r[0], k as f64);
        // Einthoven: II = I + III (from f32 columns).
        assert!((r[12] - (r[11] + r[13])).abs() <= 1e-6 * (1.0 + r[12].abs()));
    }
    assert!(rows[0][1..].iter().all(|&v| v == 0.0), "at rest: 0 mV");
    assert!(rows[3][1..11].iter().any(|&v| v != 0.0), "a signal by 3 ms");
    let png = std::fs::read(d.join("run/ecg.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "ecg.png is a PNG");
    let o = cardiac(&args);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("already holds results"),
        "{}",
        stderr(&o)
    );
    // With --force the earlier run's files go, ecg.csv and ecg.png among them.
    let mut forced = args.to_vec();
    forced[6] = "1"; // --t-end 1
    forced.push("--force");
    let o = cardiac(&forced);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(d.join("run/ecg.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "header and samples at 0 and 1 ms");
    std::fs::remove_dir_all(&d).ok();
}

/// Bad electrodes and ECG options are refused before the run with what is at fault.
#[test]
fn bad_electrodes_are_refused_naming_them() {
    use support::{run_refused, tmp};
    let d = tmp();
    let out = d.join("run").display().to_string();
    let base = ["--dx", "1", "--tiles", "16", "--t-end", "1"];
    let refused = |extra: &[&str], want: &str| {
        run_refused(&out, &[&base[..], extra].concat(), want);
    };
    refused(&["--electrode", "A=10,3.5,1.5"], "electrode A at (10.000");
    refused(&["--electrode", "A=10,3.5,1.5"], "nearer than");
    refused(&["--electrode", "A=1,2"], "give NAME=x,y,z");
    refused(&["--electrode", "A=nan,0,0"], "electrode A: position");
    refused(
        &["--electrode", "A=50,0,0", "--electrode", "A=60,0,0"],
        "electrode A is given twice",
    );
    refused(
        &["--ecg-12-lead", "--electrode", "V1=60,0,0"],
        "electrode V1 is given twice",
    );
    refused(&["--electrode", "A,B=50,0,0"], "electrode name \"A,B\"");
    let missing = d.join("missing.csv").display().to_string();
    refused(&["--electrodes", &missing], "reading the electrode file");
    let bad = d.join("bad.csv");
    std::fs::write(&bad, "name,x,y,z\nA,50,0,0\nB,50,zero,0\n").unwrap();
    let bad = bad.display().to_string();
    refused(&["--electrodes", &bad], "line 3");
    refused(&["--ecg-12-lead", "--sigma-bath", "0"], "--sigma-bath 0");
    // Outside the range the lead field's f32 weights overflow (an all-NaN ECG with rc 0) or
    // vanish (an all-zero one).
    for sigma in ["1e-300", "1e300"] {
        refused(
            &["--ecg-12-lead", "--sigma-bath", sigma],
            &format!(
                "--sigma-bath {}: give a conductivity from 0.001 to 1000 S/m",
                sigma.parse::<f64>().unwrap()
            ),
        );
    }
    // An interval that is not whole time steps (it sampled every 0.06 ms and recorded 0.05).
    refused(
        &["--ecg-12-lead", "--ecg-every", "0.05"],
        "--ecg-every 0.05 ms is not a whole number of time steps of 0.02 ms, so the device cannot sample at it: give 0.04 or 0.06 ms",
    );
    refused(
        &["--ecg-12-lead", "--ecg-every", "0.001"],
        "--ecg-every 0.001 ms is shorter than the time step",
    );
    // A good file is read: comments, a header and blank lines skipped.
    let good = d.join("good.csv");
    std::fs::write(
        &good,
        "# electrodes\nname,x,y,z\n\nA,50,0,0\nB , -30, 3.5, 1.5 # behind\n",
    )
    .unwrap();
    let e = ecg::read_electrodes(&good).unwrap();
    assert_eq!(
        e,
        [
            electrode("A", [50.0, 0.0, 0.0]),
            electrode("B", [-30.0, 3.5, 1.5])
        ]
    );
    std::fs::remove_dir_all(&d).ok();
}

/// The ECG's cost is in the profile: one sample of the 0.5 mm slab's 12 leads has its own
/// `ECG` label, with exchange (the halo of V) and at least the compute of the fullest tile's
/// partial by the codelet's estimate — six workers × (153 + ⌈m/6⌉ (106 + 16 + 2 × 9) + 9 × 6)
/// plus 51 supervisor cycles — and costs less than 10 % of the millisecond it samples (20 steps
/// of 0.05 ms). Measured: 31,275 compute cycles, of which 3,813 the partials and the rest the
/// two levels of `ReduceSumPartials<float>` over 39 partials each (poplibs' estimate for its
/// generic reduction); 2,473 exchange, 450 sync.
#[test]
fn the_ecg_sample_is_in_the_profile_with_its_estimated_cycles() {
    use cardiac::solver::codelets::{ECG_CELL_CYCLES, ECG_ELECTRODE_CYCLES, SPMV_START_CYCLES};
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 0.5);
    let cond = Conductivity::niederer();
    let setup = Setup::new(&mesh, &cond, 0.05, &Stimulus::niederer(&mesh)).unwrap();
    let els = ecg::twelve_lead(&mesh).unwrap();
    let spec = EcgSpec {
        electrodes: els.clone(),
        sigma_bath: DEFAULT_SIGMA_BATH,
        every: 1.0,
    };
    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.chunk_steps = 20;
    cfg.ecg = Some(spec.device(&mesh, &setup, cond.chi * cond.cm).unwrap());
    let prob = device::build(&setup, &cfg).unwrap();
    let m = prob.info.tile_cells.iter().map(|r| r.len()).max().unwrap() as u64;
    let exe = device::compile_problem(&prob).unwrap();
    let mut run = DeviceRun::new(&exe, prob.info.clone(), EngineOptions::default()).unwrap();
    run.engine
        .enable_profiling(poplar::profile::ProfileOptions::default());
    run.run_chunk().unwrap();
    run.sample_ecg().unwrap();
    let p = run.engine.take_profile().unwrap();
    let labels = p.summary_by_label();
    let ecg = labels
        .iter()
        .find(|l| l.name == "ECG")
        .expect("an ECG label");
    let e = els.len() as u64;
    let worker =
        SPMV_START_CYCLES + m.div_ceil(6) * (ECG_CELL_CYCLES + ECG_ELECTRODE_CYCLES * e) + 6 * e;
    let partial = 6 * worker + 51;
    eprintln!(
        "ECG sample: compute {}, exchange {}, sync {} cycles; fullest tile's partial {partial}",
        ecg.compute, ecg.exchange, ecg.sync
    );
    assert_eq!(ecg.executions, 1);
    assert!(ecg.exchange > 0, "the halo of V is exchanged");
    assert!(ecg.compute >= partial, "{} < {partial}", ecg.compute);
    let chunk: u64 = labels
        .iter()
        .filter(|l| l.name != "ECG")
        .map(|l| l.total)
        .sum();
    assert!(
        ecg.total * 10 < chunk,
        "a sample ({} cycles) costs less than 10 % of 1 ms at dt 0.05 ({chunk} cycles)",
        ecg.total
    );
}

/// Over two chips (2,944 tiles, the sums' groups across the chips' link) the device still
/// agrees with the host f64 implementation within 10^-4 of each electrode's peak (the 0.5 mm
/// slab, 20 ms).
#[test]
fn the_ecg_over_two_chips_agrees_with_the_host() {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 0.5);
    let cond = Conductivity::niederer();
    let setup = Setup::new(&mesh, &cond, 0.05, &Stimulus::niederer(&mesh)).unwrap();
    let els = [
        electrode("xp", [25.0, 3.5, 1.5]),
        electrode("zp", [10.0, 3.5, 8.0]),
    ];
    let r = run_ecg_on(2, &mesh, &setup, &cond, &els, 2.0, 20.0, 2944, 2, true);
    let op = assemble_operator(&mesh, &cond).unwrap();
    for (e, el) in els.iter().enumerate() {
        let dev = r.rec.electrode(&el.name).unwrap();
        let host: Vec<f64> =
            r.v.iter()
                .map(|v| {
                    let v: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
                    phi_reference(&op, cond.chi * cond.cm, DEFAULT_SIGMA_BATH, &els, &v)[e]
                })
                .collect();
        let scale = host.iter().fold(0.0f64, |m, h| m.max(h.abs()));
        let worst = dev
            .iter()
            .zip(&host)
            .map(|(d, h)| (d - h).abs())
            .fold(0.0f64, f64::max);
        assert!(scale > 0.0);
        assert!(
            worst <= 1e-4 * scale,
            "{}: {worst} mV off (peak {scale} mV)",
            el.name
        );
    }
}
