//! Unit tests of the TP06 kernels that need crate-internal access (the generic model in `f32`).
//! Comparisons with the independent myokit reference are in cardiac's `tests/tp06_reference.rs`.

use super::*;

const TYPES: [CellType; 3] = [CellType::Endo, CellType::Mid, CellType::Epi];

/// States sampled along a paced beat by the f64 reference itself (not expected values: only
/// inputs on which f32 and f64 evaluations of the same equations are compared).
fn beat_states(ct: CellType) -> Vec<[f64; N_STATES]> {
    let mut y = initial_state(ct);
    let mut out = vec![y];
    for k in 0..20_000 {
        let stim = if (500..550).contains(&k) { -52.0 } else { 0.0 };
        step_cell_f64(&mut y, ct, stim, 0.02);
        if k % 250 == 0 || (500..800).contains(&k) {
            out.push(y);
        }
    }
    out
}

#[test]
fn state_names_and_initial_states() {
    assert_eq!(STATE_NAMES[V], "V");
    assert_eq!(STATE_NAMES[M], "m");
    assert_eq!(STATE_NAMES[K_I], "K_i");
    for ct in TYPES {
        let y = initial_state(ct);
        assert!(y.iter().all(|x| x.is_finite() && *x > -100.0));
        assert!(y[V] < -80.0, "{ct:?} should start at rest");
    }
    // Cell-type differences of the spec: s gate initial value and g_to/g_Ks.
    assert!(initial_state(CellType::Endo)[S] < 0.5);
    let y = initial_state(CellType::Epi);
    let mut plateau = y;
    plateau[V] = 10.0;
    plateau[R_GATE] = 0.5;
    plateau[XS] = 0.3;
    let ito_epi = i_to(&plateau, CellType::Epi);
    assert!((i_to(&plateau, CellType::Endo) / ito_epi - 0.073 / 0.294).abs() < 1e-12);
    assert_eq!(i_to(&plateau, CellType::Mid), ito_epi);
    let iks_epi = i_ks(&plateau, CellType::Epi);
    assert!((i_ks(&plateau, CellType::Mid) / iks_epi - 0.25).abs() < 1e-12);
    assert_eq!(i_ks(&plateau, CellType::Endo), iks_epi);
}

/// The f32 instance of the equations (fast exp/ln) agrees with the f64 one to f32 accuracy:
/// one step from the same (f32-representable) state differs by a few ulp of each state.
#[test]
fn f32_step_matches_f64() {
    for ct in TYPES {
        let p64 = CellParams::<f64>::new(ct);
        let p32 = CellParams::<f32>::from_u8(ct as u8);
        for y in beat_states(ct) {
            let mut y32: [f32; N_STATES] = std::array::from_fn(|k| y[k] as f32);
            let mut y64: [f64; N_STATES] = std::array::from_fn(|k| y32[k] as f64);
            let stim = if y[V] < -80.0 { -52.0 } else { 0.0 };
            model::step(&mut y64, &p64, stim, 0.02);
            model::step(&mut y32, &p32, stim as f32, 0.02);
            for k in 0..N_STATES {
                let err = (y32[k] as f64 - y64[k]).abs();
                // V: 1e-4 mV absolute (the upstroke moves V by ~6 mV per step, summing currents
                // of ~300 pA/pF); other states: 2e-6 relative (~16 f32 ulp).
                let tol = if k == V {
                    1e-4
                } else {
                    2e-6 * y64[k].abs() + 1e-15
                };
                assert!(
                    err <= tol,
                    "{ct:?} {}: f32 {} f64 {} (err {err:e}) at V={}",
                    STATE_NAMES[k],
                    y32[k],
                    y64[k],
                    y[V]
                );
            }
        }
    }
}

/// `step_batch` on mixed cell types, with n not a multiple of the block size, equals per-cell
/// f32 steps — checking layout, padding and the branch-free cell-type selection.
#[test]
fn step_batch_layout_and_cell_types() {
    let n = 67 + BLOCK;
    let mut states = vec![0.0f32; N_STATES * n];
    let mut expected = Vec::new();
    let cell_types: Vec<u8> = (0..n).map(|i| (i % 3) as u8).collect();
    let stim_current: Vec<f32> = (0..n).map(|i| if i % 5 == 0 { 1.0 } else { 0.0 }).collect();
    for i in 0..n {
        let ct = TYPES[i % 3];
        let states_ct = beat_states(ct);
        let y = states_ct[i % states_ct.len()];
        for k in 0..N_STATES {
            states[k * n + i] = y[k] as f32;
        }
        let mut y32: [f32; N_STATES] = std::array::from_fn(|k| y[k] as f32);
        let p = CellParams::<f32>::new(ct);
        model::step(&mut y32, &p, stim_current[i] * -52.0, 0.02);
        expected.push(y32);
    }
    step_batch(&mut states, n, &cell_types, &stim_current, -52.0, 0.02);
    for (i, e) in expected.iter().enumerate() {
        for k in 0..N_STATES {
            let got = states[k * n + i];
            let tol = 1e-6 * e[k].abs().max(1e-6);
            assert!(
                (got - e[k]).abs() <= tol,
                "cell {i} state {}: {got} vs {}",
                STATE_NAMES[k],
                e[k]
            );
        }
    }
    // n = 0 is valid and does nothing.
    step_batch(&mut [], 0, &[], &[], 1.0, 0.02);
}

/// Finite results for V far outside physiology (±400 mV), on the I_CaL singularity, and with
/// near-zero calcium (the documented range; see `model::VExp`).
#[test]
fn kernels_stay_finite_on_extreme_states() {
    for ct in TYPES {
        for v in [
            -400.0, -200.0, -40.0, 14.99999, 15.0, 15.00001, 200.0, 400.0,
        ] {
            let mut y = initial_state(ct);
            y[V] = v;
            y[CA_I] = 1e-9;
            y[CA_SS] = 1e-9;
            let d = derivatives(&y, ct, -52.0);
            assert!(d.iter().all(|x| x.is_finite()), "{ct:?} at V={v}: {d:?}");
            let mut y32 = vec![0.0f32; N_STATES];
            for k in 0..N_STATES {
                y32[k] = y[k] as f32;
            }
            step_batch(&mut y32, 1, &[ct as u8], &[1.0], -52.0, 0.02);
            assert!(
                y32.iter().all(|x| x.is_finite()),
                "{ct:?} at V={v}: {y32:?}"
            );
        }
    }
}

#[test]
fn activation_time_interpolates_and_sticks() {
    let v_old = [-10.0f32, -10.0, 5.0, -10.0];
    let v_new = [10.0f32, -1.0, 20.0, 30.0];
    let mut act = [-1.0f32, -1.0, -1.0, 3.0];
    update_activation(&v_old, &v_new, 100.0, 0.02, 0.0, &mut act);
    assert!((act[0] - 100.01).abs() < 1e-4, "{}", act[0]); // crosses half-way
    assert_eq!(act[1], -1.0); // no crossing
    assert_eq!(act[2], -1.0); // already above 0: not an upward crossing in this step
    assert_eq!(act[3], 3.0); // already activated: kept
}

#[test]
fn activation_threshold_moves_the_crossing() {
    // -10 -> 10 mV in 0.02 ms crosses -5 mV a quarter of the way, 0 mV half-way; a cell that
    // only reaches -6 mV never crosses -5 mV.
    let v_old = [-10.0f32, -10.0];
    let v_new = [10.0f32, -6.0];
    let mut at_minus5 = [-1.0f32; 2];
    update_activation(&v_old, &v_new, 100.0, 0.02, -5.0, &mut at_minus5);
    assert!((at_minus5[0] - 100.005).abs() < 1e-4, "{}", at_minus5[0]);
    assert_eq!(at_minus5[1], -1.0);
    let (mut up, mut down) = ([-1.0f32; 2], [-1.0f32; 2]);
    update_crossings(&v_old, &v_new, 100.0, 0.02, -5.0, -70.0, &mut up, &mut down);
    assert_eq!(up[0].to_bits(), at_minus5[0].to_bits());
}

#[test]
fn scaled_conductances_scale_their_currents_only() {
    // g_Kr × 0.5 halves I_Kr and leaves every other current alone, bit for bit; unit scalings
    // give the published parameters' bits.
    let y = initial_state(CellType::Epi);
    let published = CellParams::<f64>::new(CellType::Epi);
    assert_eq!(
        CellParams::<f64>::from_model(&CellModel::published(CellType::Epi)),
        published
    );
    let mut scale = Scalings::ONE;
    scale.set("GKr", 0.5).unwrap();
    let half = CellParams::<f64>::from_model(&CellModel {
        cell_type: CellType::Epi,
        scale,
    });
    let (a, b) = (model::currents(&y, &published), model::currents(&y, &half));
    assert!(
        (b.i_kr - 0.5 * a.i_kr).abs() <= 1e-15 * a.i_kr.abs(),
        "{} {}",
        a.i_kr,
        b.i_kr
    );
    assert_ne!(a.i_kr, 0.0);
    assert_eq!(
        (a.i_na, a.i_k1, a.i_ks, a.i_cal, a.i_to, a.i_naca, a.i_nak),
        (b.i_na, b.i_k1, b.i_ks, b.i_cal, b.i_to, b.i_naca, b.i_nak)
    );
    // Every name in NAMES is accepted, in either spelling; unknown names and bad factors
    // are refused with the name.
    for n in Scalings::NAMES {
        assert!(Scalings::ONE.parse_onto(&format!("{n}*2")).is_ok(), "{n}");
    }
    let e = Scalings::ONE.parse_onto("GKq*0.5").unwrap_err();
    assert!(e.contains("GKq") && e.contains("g_kr"), "{e}");
    assert!(Scalings::ONE
        .parse_onto("GKr*-1")
        .unwrap_err()
        .contains("GKr"));
    assert!(Scalings::ONE.parse_onto("GKr*nan").is_err());
}

#[test]
fn a_table_of_models_equals_one_call_per_model() {
    // Mixed blocks (three models interleaved) give each cell exactly what a batch of its own
    // model gives: the per-lane parameter gather does not mix lanes.
    let mut scale = Scalings::ONE;
    scale.set("g_cal", 1.5).unwrap();
    scale.set("g_ks", 0.2).unwrap();
    let models = [
        CellModel::published(CellType::Endo),
        CellModel {
            cell_type: CellType::Mid,
            scale,
        },
        CellModel::published(CellType::Epi),
    ];
    let table: Vec<_> = models
        .iter()
        .map(|m| CellParams::<f32>::from_model(m).to_array())
        .collect();
    let n = 150;
    let model: Vec<u8> = (0..n).map(|i| (i * 7 % 3) as u8).collect();
    let mut states = vec![0.0f32; N_STATES * n];
    for i in 0..n {
        let y = initial_state(models[usize::from(model[i])].cell_type);
        for k in 0..N_STATES {
            states[k * n + i] = y[k] as f32 + if k == 0 { (i % 50) as f32 } else { 0.0 };
        }
    }
    let class: Vec<u8> = (0..n).map(|i| u8::from(i % 5 == 0)).collect();
    let current = [0.0f32, -52.0];
    let mut together = states.clone();
    for _ in 0..50 {
        let batch = Batch {
            models: &table,
            model: &model,
            stim: Stim::Classes {
                class: &class,
                current: &current,
            },
            dt: 0.02,
        };
        step_batch_of(&mut together, n, &batch, &mut |_| {});
    }
    for i in 0..n {
        let m = usize::from(model[i]);
        let mut y: Vec<f32> = (0..N_STATES).map(|k| states[k * n + i]).collect();
        let p = CellParams::<f32>::from_model(&models[m]);
        let mut yy = [0.0f32; N_STATES];
        yy.copy_from_slice(&y);
        for _ in 0..50 {
            model::step(&mut yy, &p, current[usize::from(class[i])], 0.02);
        }
        y.copy_from_slice(&yy);
        for k in 0..N_STATES {
            assert_eq!(
                together[k * n + i].to_bits(),
                y[k].to_bits(),
                "cell {i} state {k}"
            );
        }
    }
}

/// The f32 currents (fast exp/ln, as used by `step_batch`) against myokit's f64 evaluation at
/// the reference states of cardiac's `reference/tp06/states_currents.csv`: 1e-4 relative, with absolute
/// floors of 1e-5 pA/pF for currents and 1e-9 mM/ms for SR fluxes where the value is a
/// near-cancelling difference (e.g. I_NaCa near its reversal).
#[test]
fn f32_currents_match_myokit() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../cardiac/reference/tp06/states_currents.csv"
    );
    let text = std::fs::read_to_string(path).expect("reference CSV");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let names = [
        "i_na", "i_k1", "i_to", "i_kr", "i_ks", "i_cal", "i_naca", "i_nak", "i_pca", "i_pk",
        "i_bna", "i_bca", "i_leak", "i_up", "i_rel", "i_xfer",
    ];
    let mut n = 0;
    let mut worst = (0.0f64, String::new());
    for line in lines.filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        let ct: u8 = f[col("cell_type")].parse().unwrap();
        let y32: [f32; N_STATES] = std::array::from_fn(|k| f[col(STATE_NAMES[k])].parse().unwrap());
        if (y32[V] as f64 - 15.0).abs() <= 1e-3 {
            continue; // inside the CellML's averaging window (see tests/tp06_reference.rs)
        }
        let c = model::currents(&y32, &CellParams::<f32>::from_u8(ct));
        let got = [
            c.i_na, c.i_k1, c.i_to, c.i_kr, c.i_ks, c.i_cal, c.i_naca, c.i_nak, c.i_pca, c.i_pk,
            c.i_bna, c.i_bca, c.i_leak, c.i_up, c.i_rel, c.i_xfer,
        ];
        for (k, (name, g)) in names.iter().zip(got).enumerate() {
            let want: f64 = f[col(name)].parse().unwrap();
            let floor = if k < 12 { 1e-5 } else { 1e-9 };
            let err = (g as f64 - want).abs();
            let rel = err / (want.abs() + 1e4 * floor);
            if rel > worst.0 {
                worst = (rel, format!("{name} at {}", f[col("label")]));
            }
            assert!(
                err <= 1e-4 * want.abs() + floor,
                "{name} at {}: f32 {g:e}, myokit {want:e}",
                f[col("label")]
            );
        }
        n += 1;
    }
    assert!(n >= 50, "only {n} reference states");
    eprintln!(
        "f32 currents vs myokit: worst scaled error {:.1e} ({})",
        worst.0, worst.1
    );
}

/// One compensated step from zero residuals produces exactly the plain step's states, and the
/// residuals it leaves are the rounding errors: at most half an ulp of the stored value.
#[test]
fn compensated_step_layout_and_residuals() {
    let n = 67 + BLOCK;
    let mut states = vec![0.0f32; N_STATES * n];
    for i in 0..n {
        let ct = TYPES[i % 3];
        let all = beat_states(ct);
        let y = all[(i * 7) % all.len()];
        for k in 0..N_STATES {
            states[k * n + i] = y[k] as f32;
        }
    }
    let cell_types: Vec<u8> = (0..n).map(|i| (i % 3) as u8).collect();
    let stim = vec![1.0f32; n];
    let mut plain = states.clone();
    step_batch(&mut plain, n, &cell_types, &stim, -52.0, 0.02);
    let mut res = vec![0.0f32; N_COMPENSATED * n];
    step_batch_compensated(&mut states, &mut res, n, &cell_types, &stim, -52.0, 0.02);
    assert_eq!(states, plain);
    for (j, k) in [NA_I, K_I, CA_SR].into_iter().enumerate() {
        for i in 0..n {
            let y = states[k * n + i];
            let half_ulp = (f32::from_bits(y.to_bits() + 1) - y) * 0.5;
            let r = res[j * n + i];
            assert!(
                r.abs() <= half_ulp,
                "{} cell {i}: residual {r} > {half_ulp}",
                STATE_NAMES[k]
            );
        }
    }
    assert!(
        res.iter().any(|&r| r != 0.0),
        "some increments must have been rounded"
    );
}

/// A cell's result does not depend on the block (full or tail) or batch it is computed in: the
/// framework splits cells by tile, the native solver by chunk, and both must agree bit for bit.
#[test]
fn batch_results_do_not_depend_on_blocking() {
    let n = 150; // two full blocks of 64 and a tail of 22
    let types: Vec<u8> = (0..n).map(|i| (i % 3) as u8).collect();
    let stim: Vec<f32> = (0..n)
        .map(|i| if i % 5 == 0 { -40.0 } else { 0.0 })
        .collect();
    let mut states = vec![0.0f32; N_STATES * n];
    for i in 0..n {
        let ct = CellType::from_value(f64::from(types[i])).unwrap();
        for (k, &x) in initial_state(ct).iter().enumerate() {
            states[k * n + i] = x as f32 + (i as f32) * 1e-3 * (k == V) as u8 as f32;
        }
    }
    let mut single: Vec<[f32; N_STATES]> = (0..n)
        .map(|i| std::array::from_fn(|k| states[k * n + i]))
        .collect();
    for _ in 0..200 {
        step_batch(&mut states, n, &types, &stim, 1.0, 0.02);
        for (i, s) in single.iter_mut().enumerate() {
            step_batch(s, 1, &types[i..i + 1], &stim[i..i + 1], 1.0, 0.02);
        }
    }
    for (i, s) in single.iter().enumerate() {
        for k in 0..N_STATES {
            assert_eq!(
                states[k * n + i].to_bits(),
                s[k].to_bits(),
                "cell {i} state {k}"
            );
        }
    }
}

/// `step_batch_with_progress` reports each block's end, increasing up to `n`, before the block
/// (so a caller can pace host-side prefetches), and computes exactly what `step_batch` does.
#[test]
fn progress_reports_every_block_end_and_changes_no_result() {
    let n = 150; // two full blocks of 64, then tail blocks of 8 (the last one partial)
    let types: Vec<u8> = (0..n).map(|i| (i % 3) as u8).collect();
    let stim: Vec<f32> = (0..n).map(|i| if i < 20 { -40.0 } else { 0.0 }).collect();
    let mut plain = vec![0.0f32; N_STATES * n];
    for i in 0..n {
        let ct = CellType::from_value(f64::from(types[i])).unwrap();
        for (k, &x) in initial_state(ct).iter().enumerate() {
            plain[k * n + i] = x as f32;
        }
    }
    let mut reported = plain.clone();
    let mut ends = Vec::new();
    for _ in 0..50 {
        step_batch(&mut plain, n, &types, &stim, 1.0, 0.02);
        ends.clear();
        step_batch_with_progress(&mut reported, n, &types, &stim, 1.0, 0.02, &mut |e| {
            ends.push(e)
        });
    }
    let expected: Vec<usize> = [64, 128, 136, 144, 150].to_vec();
    assert_eq!(ends, expected);
    assert!(plain
        .iter()
        .zip(&reported)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}

/// The instruction-set levels are process-wide: the tests that switch them take turns.
static LEVELS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `f` at every level this host supports and returns its results, baseline first.
fn at_every_level<T>(mut f: impl FnMut() -> T) -> Vec<(poplar_core::isa::IsaLevel, T)> {
    let _turn = LEVELS.lock().unwrap_or_else(|e| e.into_inner());
    let before = poplar_core::isa::active();
    let out = poplar_core::isa::supported()
        .into_iter()
        .map(|level| {
            poplar_core::isa::set_active(level).unwrap();
            (level, f())
        })
        .collect();
    poplar_core::isa::set_active(before).unwrap();
    out
}

/// Edge inputs of `exp`/`ln` and 100,000 random bit patterns.
fn edge_and_random_inputs() -> Vec<f32> {
    let mut xs = vec![
        0.0,
        -0.0,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        1e-45,
        -1e-45,
        f32::from_bits(0x007f_ffff),
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN,
        88.0,
        88.7,
        89.0,
        -87.0,
        -87.4,
        -104.0,
        1e30,
        -1e30,
        1.0,
        0.5,
    ];
    let mut z = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..100_000 {
        z ^= z << 13;
        z ^= z >> 7;
        z ^= z << 17;
        xs.push(f32::from_bits(z as u32));
    }
    xs
}

#[test]
fn exp_and_ln_give_the_same_bits_at_every_level_with_and_without_flushing() {
    let xs = edge_and_random_inputs();
    for flush in [false, true] {
        let runs = at_every_level(|| {
            let _fp = poplar_core::fp::FlushGuard::new(flush);
            let mut e = vec![0.0f32; xs.len()];
            let mut l = vec![0.0f32; xs.len()];
            real::exp_f32_slice(&xs, &mut e);
            real::ln_f32_slice(&xs, &mut l);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
            (bits(&e), bits(&l))
        });
        let (_, base) = &runs[0];
        // The slice functions are the scalar ones, element by element, at the baseline.
        for (i, &x) in xs.iter().enumerate().take(1000) {
            assert_eq!(base.0[i], real::exp_f32(x).to_bits(), "exp({x:e})");
        }
        for (level, r) in &runs[1..] {
            assert!(
                r == base,
                "{level} differs from the baseline (flush {flush})"
            );
        }
    }
}

/// Cells along a beat of each type ([`beat_states`]), every fifth stimulated: the states
/// (state-major), cell types and stimulus currents of one batch.
struct BeatBatch {
    n: usize,
    states: Vec<f32>,
    types: Vec<u8>,
    stim: Vec<f32>,
}

impl BeatBatch {
    fn new() -> BeatBatch {
        let mut cells: Vec<([f64; N_STATES], CellType)> = Vec::new();
        for ct in TYPES {
            cells.extend(beat_states(ct).into_iter().map(|y| (y, ct)));
        }
        let n = cells.len();
        let mut states = vec![0.0f32; N_STATES * n];
        for (i, (y, _)) in cells.iter().enumerate() {
            for k in 0..N_STATES {
                states[k * n + i] = y[k] as f32;
            }
        }
        BeatBatch {
            n,
            states,
            types: cells.iter().map(|(_, ct)| *ct as u8).collect(),
            stim: (0..n)
                .map(|i| if i % 5 == 0 { -52.0 } else { 0.0 })
                .collect(),
        }
    }

    /// The states after `steps` steps of the plain or compensated batch kernel, followed by the
    /// compensated kernel's residuals (zeros for the plain one).
    fn run(&self, compensated: bool, steps: usize) -> Vec<f32> {
        let n = self.n;
        let mut s = self.states.clone();
        let mut r = vec![0.0f32; N_COMPENSATED * n];
        for _ in 0..steps {
            if compensated {
                step_batch_compensated(&mut s, &mut r, n, &self.types, &self.stim, 1.0, 0.02);
            } else {
                step_batch(&mut s, n, &self.types, &self.stim, 1.0, 0.02);
            }
        }
        s.extend(r);
        s
    }
}

#[test]
fn the_batch_kernel_gives_the_same_bits_at_every_level() {
    // Cells along a beat of each type, stimulated or not, stepped 20 times.
    let batch = BeatBatch::new();
    let n = batch.n;
    for compensated in [false, true] {
        let runs = at_every_level(|| {
            let out = batch.run(compensated, 20);
            out.iter().map(|x| x.to_bits()).collect::<Vec<u32>>()
        });
        assert!(!n.is_multiple_of(BLOCK), "a tail block too: {n} cells");
        for (level, r) in &runs[1..] {
            assert!(
                *r == runs[0].1,
                "{level} differs (compensated {compensated})"
            );
        }
    }
}

/// FNV-1a (64 bits) of the values' bits: a fingerprint that is the same on every host.
fn fingerprint(values: impl IntoIterator<Item = f32>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for v in values {
        for byte in v.to_bits().to_le_bytes() {
            h = (h ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The kernel maths and both batch kernels on the inputs of the level tests above, as one
/// fingerprint each (`name hash`, one per line), at the process's active level.
fn kernel_fingerprints() -> String {
    let xs = edge_and_random_inputs();
    let mut out = String::new();
    for flush in [false, true] {
        let _fp = poplar_core::fp::FlushGuard::new(flush);
        type SliceFn = fn(&[f32], &mut [f32]);
        let slices: [(&str, SliceFn); 3] = [
            ("exp_f32", real::exp_f32_slice),
            ("exp2_f32", real::exp2_f32_slice),
            ("ln_f32", real::ln_f32_slice),
        ];
        for (name, f) in slices {
            let mut y = vec![0.0f32; xs.len()];
            f(&xs, &mut y);
            out += &format!("{name}/flush={flush} {:016x}\n", fingerprint(y));
        }
    }
    // 200 steps: the cells stimulated throughout leave the model's range (NaN) on the way.
    let batch = BeatBatch::new();
    for (name, compensated) in [("step_batch", false), ("step_batch_compensated", true)] {
        out += &format!("{name} {:016x}\n", fingerprint(batch.run(compensated, 200)));
    }
    out
}

/// The same bits on every host architecture: the fingerprints of [`kernel_fingerprints`] at
/// the active level equal those in `tests/golden/kernel_bits.txt`, made on x86-64. CI runs
/// this at every x86-64 level and on aarch64 (NEON, under qemu). After an intended change of
/// the kernel's results: `UPDATE_GOLDEN=1 cargo test -p tp06 --lib kernel_bits`, then review.
#[test]
fn kernel_bits_match_the_golden_file() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/kernel_bits.txt");
    let got = {
        let _turn = LEVELS.lock().unwrap_or_else(|e| e.into_inner());
        kernel_fingerprints()
    };
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{} cannot be read ({e}); create it with UPDATE_GOLDEN=1 cargo test -p tp06 --lib kernel_bits",
            path.display()
        )
    });
    let differ: Vec<&str> = got
        .lines()
        .zip(want.lines())
        .filter(|(g, w)| g != w)
        .map(|(g, _)| g.split(' ').next().unwrap_or(g))
        .collect();
    assert!(
        differ.is_empty() && got.lines().count() == want.lines().count(),
        "at {} on {}: {differ:?} differ from {} (if the change is intended: UPDATE_GOLDEN=1 \
         cargo test -p tp06 --lib kernel_bits, then review the diff)",
        poplar_core::isa::active(),
        std::env::consts::ARCH,
        path.display()
    );
}
