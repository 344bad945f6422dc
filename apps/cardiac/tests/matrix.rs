//! Checks of the diffusion operator (`cardiac::matrix`): constant preservation, conservation,
//! linear exactness, the stable step, the ELLPACK form, error reporting, and convergence on a
//! manufactured anisotropic solution.
//!
//! Run with `--nocapture` to see the figures (errors, rates, stable steps).

use cardiac::matrix::{assemble_operator, Conductivity, MatrixError, Operator, ELL_WIDTH};
use cardiac::mesh::TetMesh;
use poplar::rand::SplitMix64;
use std::f64::consts::PI;

/// The seeded generator of every crate (`poplar::rand`), and vectors of it in [-1, 1).
struct Rng(SplitMix64);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }
    fn next_f64(&mut self) -> f64 {
        self.0.next_f64()
    }
    fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| 2.0 * self.next_f64() - 1.0).collect()
    }
}

/// The slab with interior nodes moved randomly by up to `amp·h` per axis: a genuinely
/// unstructured mesh (non-orthogonal faces, varying volumes) with flat walls.
fn jittered(l: [f64; 3], h: f64, amp: f64, seed: u64) -> TetMesh {
    let mut m = TetMesh::slab(l[0], l[1], l[2], h);
    let mut rng = Rng::new(seed);
    let eps = 1e-9;
    for p in &mut m.nodes {
        let inner = (0..3).all(|a| p[a] > eps && p[a] < l[a] - eps);
        if inner {
            for x in p.iter_mut() {
                *x += amp * h * (2.0 * rng.next_f64() - 1.0);
            }
        }
    }
    m
}

fn niederer_slab(dx: f64) -> TetMesh {
    TetMesh::slab(20.0, 7.0, 3.0, dx)
}

/// Every row of L sums to zero: constants are preserved by Z = I + Δt L.
#[test]
fn row_sums_vanish() {
    for (name, mesh) in [
        ("slab 0.5", niederer_slab(0.5)),
        ("jittered", jittered([4.0, 2.0, 1.0], 0.25, 0.2, 11)),
    ] {
        for c in [Conductivity::niederer(), Conductivity::isotropic(0.1)] {
            let op = assemble_operator(&mesh, &c).unwrap();
            let mut worst = 0.0f64;
            for i in 0..op.n() {
                let (_, vals) = op.row(i);
                let sum = op.diag()[i] + vals.iter().sum::<f64>();
                let scale = op.diag()[i].abs() + vals.iter().map(|v| v.abs()).sum::<f64>();
                worst = worst.max(sum.abs() / scale);
            }
            println!(
                "{name} iso={}: max |row sum| / row scale = {worst:.2e}",
                c.is_isotropic()
            );
            assert!(worst < 1e-12, "{name}: row sum {worst:e}");
        }
    }
}

/// Each face flux is added to one cell and subtracted from the other, so Σ Vᵢ (Lv)ᵢ = 0.
#[test]
fn conservation() {
    let mesh = jittered([4.0, 2.0, 1.0], 0.25, 0.2, 5);
    let op = assemble_operator(&mesh, &Conductivity::niederer()).unwrap();
    let mut rng = Rng::new(42);
    for _ in 0..3 {
        let v = rng.vec(op.n());
        let mut lv = vec![0.0; op.n()];
        op.apply_f64(&v, &mut lv);
        let total: f64 = (0..op.n()).map(|i| op.volumes()[i] * lv[i]).sum();
        let scale: f64 = (0..op.n()).map(|i| (op.volumes()[i] * lv[i]).abs()).sum();
        println!(
            "conservation: |Σ V Lv| / Σ |V Lv| = {:.2e}",
            total.abs() / scale
        );
        assert!(total.abs() < 1e-12 * scale);
    }
}

/// Interior cells (no boundary face within two layers) reproduce linear fields exactly: the
/// least-squares and face gradients are exact, and the fluxes of a constant vector over a
/// closed surface cancel.
#[test]
fn linear_fields_are_exact_away_from_walls() {
    let mesh = jittered([4.0, 2.0, 1.0], 0.25, 0.2, 9);
    let op = assemble_operator(&mesh, &Conductivity::niederer()).unwrap();
    let nb = mesh.face_neighbours();
    let v: Vec<f64> = op
        .centroids()
        .iter()
        .map(|p| 0.3 * p[0] - 1.2 * p[1] + 2.0 * p[2] + 5.0)
        .collect();
    let mut lv = vec![0.0; op.n()];
    op.apply_f64(&v, &mut lv);
    let mut worst = 0.0f64;
    let mut count = 0;
    for i in 0..op.n() {
        let deep = nb[i]
            .iter()
            .all(|&j| j != u32::MAX && nb[j as usize].iter().all(|&k| k != u32::MAX));
        if deep {
            worst = worst.max(lv[i].abs() / op.diag()[i].abs());
            count += 1;
        }
    }
    println!("linear field: {count} deep cells, max |Lv|/|Lii| = {worst:.2e}");
    assert!(count > 0 && worst < 1e-10);
}

/// Rows have at most 16 off-diagonals (on the Kuhn slab second-tier neighbours coincide, so
/// rows use at most 14 — the histogram shows the distribution).
#[test]
fn stencil_width() {
    let op = assemble_operator(&niederer_slab(0.5), &Conductivity::niederer()).unwrap();
    let mut hist = [0usize; ELL_WIDTH + 1];
    for i in 0..op.n() {
        hist[op.row(i).0.len()] += 1;
    }
    println!("off-diagonals per row (count: rows): {hist:?}");
    assert_eq!(hist.iter().sum::<usize>(), op.n());
    let widest = hist.iter().rposition(|&c| c > 0).unwrap_or(0);
    println!("widest row: {widest} off-diagonals");
    assert!((4..=ELL_WIDTH).contains(&widest));
}

/// Largest |eigenvalue| of L by power iteration (L's dominant modes are real and negative on
/// these meshes; the estimate is what the stability bound is checked against).
fn spectral_radius(op: &Operator, iters: usize) -> f64 {
    let mut x = Rng::new(7).vec(op.n());
    let mut y = vec![0.0; op.n()];
    let mut rho = 0.0;
    for _ in 0..iters {
        op.apply_f64(&x, &mut y);
        let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
        let xn = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        rho = norm / xn;
        for (a, b) in x.iter_mut().zip(&y) {
            *a = b / norm;
        }
    }
    rho
}

fn check_stable_dt(dx: f64, iters: usize) {
    let op = assemble_operator(&niederer_slab(dx), &Conductivity::niederer()).unwrap();
    let b = op.stability_bounds();
    let dt = op.stable_dt();
    let rho = spectral_radius(&op, iters);
    let d = Conductivity::niederer();
    let (dl, dtr) = (d.sigma_l / (d.chi * d.cm), d.sigma_t / (d.chi * d.cm));
    println!(
        "dx {dx} mm ({} cells): stable_dt {dt:.5} ms (diag bound {:.5}, Gershgorin {:.5}; \
         power-iteration ρ {rho:.3}/ms → 2/ρ = {:.5}; regular-grid dx²/(2(DL+2DT)) = {:.5})",
        op.n(),
        b.dt_diagonal,
        b.dt_gershgorin,
        2.0 / rho,
        dx * dx / (2.0 * (dl + 2.0 * dtr)),
    );
    let z = op.to_ellpack(dt);
    assert!(z.diag.iter().all(|&d| d >= 0.0), "negative Z diagonal");
    assert!(dt * rho <= 2.0, "dt·ρ = {} > 2", dt * rho);
}

#[test]
fn stable_dt_coarse() {
    check_stable_dt(0.5, 300);
    check_stable_dt(0.2, 100);
}

/// Iterating Z at the stable step from noise (the modes most at risk) does not grow.
#[test]
fn explicit_steps_do_not_blow_up() {
    let mesh = jittered([4.0, 2.0, 1.0], 0.25, 0.2, 3);
    let op = assemble_operator(&mesh, &Conductivity::niederer()).unwrap();
    let z = op.to_ellpack(op.stable_dt());
    let mut x: Vec<f32> = Rng::new(1).vec(op.n()).iter().map(|&v| v as f32).collect();
    let max0 = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let mut y = vec![0.0f32; op.n()];
    for _ in 0..2000 {
        z.spmv(&x, &mut y);
        std::mem::swap(&mut x, &mut y);
    }
    let max = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    println!("2000 steps of Z from noise: max |v| {max0:.3} → {max:.3e}");
    assert!(max <= max0);
}

/// The f32 ELLPACK matches the f64 operator, padding follows the convention, and Z·1 = 1.
#[test]
fn ellpack_form() {
    let op = assemble_operator(&niederer_slab(0.5), &Conductivity::niederer()).unwrap();
    let dt = 0.05;
    let z = op.to_ellpack(dt);
    assert_eq!(z.n, op.n());
    assert_eq!(z.values.len(), op.n() * ELL_WIDTH);
    for i in 0..op.n() {
        let used = op.row(i).0.len();
        for s in used..ELL_WIDTH {
            assert_eq!(z.cols[i * ELL_WIDTH + s], i as u32);
            assert_eq!(z.values[i * ELL_WIDTH + s], 0.0);
        }
    }
    let v: Vec<f64> = op.centroids().iter().map(|p| (p[0] * 0.3).sin()).collect();
    let mut lv = vec![0.0; op.n()];
    op.apply_f64(&v, &mut lv);
    let x: Vec<f32> = v.iter().map(|&a| a as f32).collect();
    let mut y = vec![0.0f32; op.n()];
    z.spmv(&x, &mut y);
    let err = (0..op.n())
        .map(|i| (y[i] as f64 - (v[i] + dt * lv[i])).abs())
        .fold(0.0, f64::max);
    println!("ELLPACK f32 vs f64 Z v: max abs diff {err:.2e}");
    assert!(err < 1e-5);
    let ones = vec![1.0f32; op.n()];
    z.spmv(&ones, &mut y);
    let dev = y.iter().map(|&a| (a - 1.0).abs()).fold(0.0f32, f32::max);
    println!("Z·1 − 1 in f32: max {dev:.2e}");
    assert!(dev < 1e-5);
}

#[test]
fn bad_input_is_reported() {
    let good = TetMesh::slab(1.0, 1.0, 1.0, 0.5);
    let c = Conductivity::niederer();

    let mut m = good.clone();
    m.tets[3][2] = 9999;
    assert!(matches!(
        assemble_operator(&m, &c),
        Err(MatrixError::BadNode { cell: 3, .. })
    ));

    let mut m = good.clone();
    let t = m.tets[5];
    m.nodes[t[3] as usize] = m.nodes[t[0] as usize]; // collapse a vertex
    assert!(matches!(
        assemble_operator(&m, &c),
        Err(MatrixError::DegenerateCell { .. })
    ));

    let mut m = good.clone();
    m.fibres = None;
    assert_eq!(
        assemble_operator(&m, &c).unwrap_err(),
        MatrixError::MissingFibres
    );
    assert!(assemble_operator(&m, &Conductivity::isotropic(0.1)).is_ok());

    let mut m = good.clone();
    if let Some(f) = m.fibres.as_mut() {
        f[7] = [0.0; 3];
    }
    assert!(matches!(
        assemble_operator(&m, &c),
        Err(MatrixError::BadFibre { cell: 7, .. })
    ));

    let bad = Conductivity { chi: -1.0, ..c };
    assert!(matches!(
        assemble_operator(&good, &bad),
        Err(MatrixError::BadConductivity(_))
    ));
}

/// The manufactured mode v = cos(πx/lx)cos(πy/ly)cos(πz/lz): no-flux on every wall, and with
/// fibres along x it is an eigenfunction, `(1/χCm)∇·(M∇v) = −λ v`.
struct Mode {
    l: [f64; 3],
    lambda: f64,
}
impl Mode {
    fn new(l: [f64; 3], c: &Conductivity) -> Self {
        let k2 = l.map(|a| (PI / a).powi(2));
        let lambda = (c.sigma_l * k2[0] + c.sigma_t * (k2[1] + k2[2])) / (c.chi * c.cm);
        Mode { l, lambda }
    }
    fn at(&self, p: [f64; 3]) -> f64 {
        (0..3).map(|a| (PI * p[a] / self.l[a]).cos()).product()
    }
}

fn fit_rate(h: &[f64], e: &[f64]) -> f64 {
    // Least-squares slope of log e against log h.
    let n = h.len() as f64;
    let (lh, le): (Vec<f64>, Vec<f64>) = h.iter().zip(e).map(|(a, b)| (a.ln(), b.ln())).unzip();
    let (mh, me) = (lh.iter().sum::<f64>() / n, le.iter().sum::<f64>() / n);
    let num: f64 = lh.iter().zip(&le).map(|(a, b)| (a - mh) * (b - me)).sum();
    let den: f64 = lh.iter().map(|a| (a - mh).powi(2)).sum();
    num / den
}

/// Convergence on the manufactured anisotropic mode, on the regular slab and a jittered one.
///
/// Three measures, all volume-weighted over the cells:
/// * `pointwise`: ‖L v − (1/χCm)∇·(M∇v)‖ / ‖…‖ with v sampled at centroids. This is the
///   *truncation error*; like every compact cell-centred scheme on tetrahedra it does not go to
///   zero (the face gradients are first-order accurate, which costs O(1) after dividing by the
///   cell size). Printed, not asserted.
/// * `rayleigh`: |⟨Lv, v⟩/⟨v, v⟩ + λ| / λ, the truncation error against the smooth mode itself
///   (a weak norm); asserted to converge at first order or better.
/// * `solution`: forward-Euler solution of the diffusion equation from v to t = 1 ms against the
///   exact e^{−λt} v — what a simulation actually sees (supraconvergence); asserted ≥ first
///   order.
#[test]
fn manufactured_anisotropic_convergence() {
    let c = Conductivity::niederer();
    let l = [4.0, 2.0, 1.0];
    let hs = [0.25, 0.125, 1.0 / 12.0];
    let mode = Mode::new(l, &c);
    for jitter in [0.0, 0.15] {
        let (mut ep, mut er, mut es) = (vec![], vec![], vec![]);
        for &h in &hs {
            let mesh = jittered(l, h, jitter, 17);
            let op = assemble_operator(&mesh, &c).unwrap();
            let vol = op.volumes();
            let v: Vec<f64> = op.centroids().iter().map(|&p| mode.at(p)).collect();
            let mut lv = vec![0.0; op.n()];
            op.apply_f64(&v, &mut lv);
            let dotv =
                |a: &[f64], b: &[f64]| -> f64 { (0..a.len()).map(|i| vol[i] * a[i] * b[i]).sum() };
            let exact: Vec<f64> = v.iter().map(|x| -mode.lambda * x).collect();
            let diff: Vec<f64> = lv.iter().zip(&exact).map(|(a, b)| a - b).collect();
            ep.push((dotv(&diff, &diff) / dotv(&exact, &exact)).sqrt());
            er.push((dotv(&lv, &v) / dotv(&v, &v) + mode.lambda).abs() / mode.lambda);

            let t_end = 1.0;
            let steps = (t_end / op.stable_dt()).ceil() as usize;
            let dt = t_end / steps as f64;
            let mut u = v.clone();
            let mut lu = vec![0.0; op.n()];
            for _ in 0..steps {
                op.apply_f64(&u, &mut lu);
                for (a, b) in u.iter_mut().zip(&lu) {
                    *a += dt * b;
                }
            }
            let decay = (-mode.lambda * t_end).exp();
            let want: Vec<f64> = v.iter().map(|x| decay * x).collect();
            let d: Vec<f64> = u.iter().zip(&want).map(|(a, b)| a - b).collect();
            es.push((dotv(&d, &d) / dotv(&want, &want)).sqrt());
            println!(
                "jitter {jitter} h {h:.4} ({} cells, {steps} steps of {dt:.5} ms): \
                 pointwise {:.3e}  rayleigh {:.3e}  solution {:.3e}",
                op.n(),
                ep.last().unwrap(),
                er.last().unwrap(),
                es.last().unwrap()
            );
        }
        let (rp, rr, rs) = (fit_rate(&hs, &ep), fit_rate(&hs, &er), fit_rate(&hs, &es));
        println!(
            "jitter {jitter}: fitted rates pointwise {rp:.2}, rayleigh {rr:.2}, solution {rs:.2}"
        );
        assert!(rr >= 1.0, "Rayleigh-quotient rate {rr}");
        assert!(rs >= 1.0, "solution rate {rs}");
    }
}

/// A node of the 0.5 mm slab pushed most of the way towards a neighbour makes the cells around
/// it thin: they alone bound the diffusion step, and the set-up names them.
#[test]
fn a_few_thin_cells_that_bound_the_step_are_found_and_named() {
    use cardiac::solver::{Setup, Stimulus};
    let mut mesh = TetMesh::slab(4.0, 2.0, 2.0, 0.5);
    let cond = Conductivity::niederer();
    let stim = Stimulus::niederer(&mesh);
    let even = Setup::new(&mesh, &cond, 0.1, &stim).unwrap();
    assert_eq!(even.pde_steps, 1);
    assert!(cardiac::app::advice::step_limit_advice(&even, &mesh).is_none());

    // The node at (2, 1, 1) mm, moved 0.4 mm along x towards its neighbour at (2.5, 1, 1).
    let node = mesh
        .nodes
        .iter()
        .position(|p| (p[0] - 2.0).abs() + (p[1] - 1.0).abs() + (p[2] - 1.0).abs() < 1e-9)
        .unwrap();
    mesh.nodes[node][0] += 0.4;
    mesh.validate().unwrap();
    let thin = Setup::new(&mesh, &cond, 0.1, &stim).unwrap();
    let l = &thin.step_limit;
    println!("{l:?}, {} PDE steps", thin.pde_steps);
    let (worst, dt) = l.worst[0];
    assert!(
        mesh.tets[worst as usize].contains(&(node as u32)),
        "the worst cell {worst} is not around the moved node"
    );
    assert!(
        (thin.dt_stable - dt).abs() <= 1e-12 * dt,
        "{} vs {dt}",
        thin.dt_stable
    );
    // 768 cells, 24 around the moved node: without the 100 smallest, the slab's even step.
    let (k, dt_100) = l.without[1];
    assert_eq!(k, 100);
    assert!(dt_100 > 0.1 && l.median_dt > 0.1, "{l:?}");
    assert!(thin.pde_steps > 1, "{} PDE steps", thin.pde_steps);
    let note = cardiac::app::advice::step_limit_advice(&thin, &mesh).unwrap();
    println!("{note}");
    assert!(note.contains(&format!("(cell {worst} at")), "{note}");
    assert!(
        note.contains(&format!(
            "would take 1 / 1 diffusion steps instead of {}",
            thin.pde_steps
        )),
        "{note}"
    );
}
