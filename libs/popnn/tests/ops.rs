//! popnn's graph-building ops (`popnn::ops`) against f64 host references written here, and
//! those references' gradients against central differences: non-linearities, softmax and
//! log-softmax, cross-entropy and sum-of-squares losses; f32 and f16; edge values (±inf, NaN,
//! logits of 1e4); rows spread over several tiles; typed errors.
//!
//! Tolerances (stated at each check): f32 results within `abs + rel·|want|` of the f64
//! reference, with `abs` ≤ 1e-6 (1e-5 for log-softmax and losses, whose values are O(10))
//! and `rel` = 1e-5; f16 results within 2^-10 relative (one f16 ulp: the f32 value rounded
//! once is within half of one) plus 2^-14; the analytic f64 gradients within 1e-6 of central
//! differences with h = 1e-5 (truncation error O(h²)).

mod sim;

use sim::*;

use poplar::{f16, DType, Graph};
use popnn::ops::{self, CrossEntropyInput, NnOpError, NonLinearityType as NL};

const KINDS: [NL; 4] = [NL::Relu, NL::Gelu, NL::Sigmoid, NL::Tanh];

/// Tolerances of f16 results.
const F16_REL: f64 = 1.0 / 1024.0;
const F16_ABS: f64 = 1.0 / 16384.0;

/// Rounds through f16 (the values a half tensor holds).
fn h(v: f32) -> f32 {
    f16::from_f32(v).to_f32()
}

// ---- f64 references ----

const K: f64 = 0.797_884_560_802_865_4; // sqrt(2 / π)
const A: f64 = 0.044_715;

fn f_ref(kind: NL, x: f64) -> f64 {
    match kind {
        NL::Relu => {
            if x < 0.0 {
                0.0
            } else {
                x
            }
        }
        NL::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        NL::Tanh => x.tanh(),
        NL::Gelu => {
            if x == f64::NEG_INFINITY {
                0.0
            } else {
                0.5 * x * (1.0 + (K * (x + A * x * x * x)).tanh())
            }
        }
        _ => unreachable!(),
    }
}

/// The analytic derivative, written from the input.
fn df_ref(kind: NL, x: f64) -> f64 {
    match kind {
        NL::Relu => {
            if x > 0.0 {
                1.0
            } else {
                0.0
            }
        }
        NL::Sigmoid => {
            let s = f_ref(kind, x);
            s * (1.0 - s)
        }
        NL::Tanh => 1.0 - x.tanh().powi(2),
        NL::Gelu => {
            let t = (K * (x + A * x * x * x)).tanh();
            0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * K * (1.0 + 3.0 * A * x * x)
        }
        _ => unreachable!(),
    }
}

/// Central difference of `f` at `x` with step `H`.
const H: f64 = 1e-5;
fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    (f(x + H) - f(x - H)) / (2.0 * H)
}

/// Softmax of one row in f64, stable form; NaN anywhere (or +inf, through inf - inf) → NaN.
fn softmax_row(x: &[f64]) -> Vec<f64> {
    let m = x.iter().fold(f64::NEG_INFINITY, |a, &b| {
        if a.is_nan() || b.is_nan() {
            f64::NAN
        } else {
            a.max(b)
        }
    });
    let e: Vec<f64> = x.iter().map(|&v| (v - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|&v| v / s).collect()
}

fn log_softmax_row(x: &[f64]) -> Vec<f64> {
    let m = x.iter().fold(f64::NEG_INFINITY, |a, &b| {
        if a.is_nan() || b.is_nan() {
            f64::NAN
        } else {
            a.max(b)
        }
    });
    let s: f64 = x.iter().map(|&v| (v - m).exp()).sum();
    x.iter().map(|&v| v - m - s.ln()).collect()
}

fn rows(x: &[f64], c: usize, f: impl Fn(&[f64]) -> Vec<f64>) -> Vec<f64> {
    x.chunks(c).flat_map(f).collect()
}

/// Gradient of `L(x) = Σ_row loss(row)` by central differences, element by element.
fn numeric_grad(x: &[f64], c: usize, loss: impl Fn(usize, &[f64]) -> f64) -> Vec<f64> {
    let mut g = vec![0.0; x.len()];
    for (r, row) in x.chunks(c).enumerate() {
        for j in 0..c {
            let at = |d: f64| {
                let mut v = row.to_vec();
                v[j] += d;
                loss(r, &v)
            };
            g[r * c + j] = (at(H) - at(-H)) / (2.0 * H);
        }
    }
    g
}

fn edge_values() -> Vec<f32> {
    let mut v = vec![
        f32::NEG_INFINITY,
        -1e4,
        -30.0,
        -10.0,
        -3.0,
        -1.0,
        -0.5,
        -1e-3,
        -0.0,
        0.0,
        1e-3,
        0.5,
        1.0,
        3.0,
        10.0,
        30.0,
        1e4,
        f32::INFINITY,
        f32::NAN,
    ];
    let mut r = Rng::new(7);
    v.extend((0..181).map(|_| r.f32_in(-8.0, 8.0)));
    v
}

// ---- non-linearities ----

/// Every kind, out of place and in place, f32 and f16, over edge and random values spread over
/// the 4 tiles in grains of 8: against `f_ref` (f32: 1e-6 + 1e-5 relative; f16: one f16 ulp).
#[test]
fn non_linearities_against_f64_reference() {
    let data = edge_values();
    let n = data.len();
    for dt in [DType::F32, DType::F16] {
        let mut g = Graph::new(&target());
        let mut prog = Vec::new();
        let mut outs = Vec::new();
        for kind in KINDS {
            let mk = |g: &mut Graph, name: &str, shape: &[usize], data: &[f32], grain: usize| {
                var(g, name, dt, shape, data, grain)
            };
            let x = mk(&mut g, &format!("x{kind:?}"), &[n], &data, 8);
            let y = ops::non_linearity(&mut g, kind, &x, &mut prog, &format!("{kind:?}")).unwrap();
            ops::non_linearity_in_place(&mut g, kind, &x, &mut prog, &format!("ip{kind:?}"))
                .unwrap();
            g.create_host_read(&format!("y{kind:?}"), &y).unwrap();
            g.create_host_read(&format!("ip{kind:?}"), &x).unwrap();
            outs.push(kind);
        }
        let mut e = run(&g, prog);
        for kind in outs {
            let want: Vec<f64> = data
                .iter()
                .map(|&v| {
                    let v = if dt == DType::F16 { h(v) } else { v };
                    f_ref(kind, f64::from(v))
                })
                .collect();
            let (abs, rel) = if dt == DType::F32 {
                (1e-6, 1e-5)
            } else {
                (F16_ABS, F16_REL)
            };
            for key in ["y", "ip"] {
                let got = read(&mut e, &format!("{key}{kind:?}"), dt);
                check(&format!("{key} {kind:?} {dt}"), &got, &want, abs, rel);
            }
        }
    }
}

/// The analytic derivatives against central differences of `f_ref` over [-8, 8] (away from
/// relu's kink): within 1e-6.
#[test]
fn non_linearity_derivatives_against_central_differences() {
    let mut r = Rng::new(11);
    for kind in KINDS {
        for _ in 0..400 {
            let x = f64::from(r.f32_in(-8.0, 8.0));
            if kind == NL::Relu && x.abs() < 2.0 * H {
                continue;
            }
            let num = central(|v| f_ref(kind, v), x);
            let ana = df_ref(kind, x);
            assert!(
                (num - ana).abs() <= 1e-6,
                "{kind:?} at {x}: {ana} against {num}"
            );
        }
    }
}

/// `non_linearity_input_gradient` from the device's forward output (input for GELU), f32 and
/// f16, against `dy · df_ref(x)`: f32 within 1e-6 + 1e-5 relative (sigmoid's `1 - y` loses
/// digits of y near 1: the absolute bound covers it), f16 within 2e-3 (the f16 output's
/// rounding, up to 2^-11 · |f''|, dominates).
#[test]
fn non_linearity_gradients_against_f64_reference() {
    let mut r = Rng::new(3);
    let n = 300;
    let mut x: Vec<f32> = (0..n).map(|_| r.f32_in(-6.0, 6.0)).collect();
    x.extend([
        0.0,
        -0.0,
        1e4,
        -1e4,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ]);
    let n = x.len();
    let dy: Vec<f32> = (0..n).map(|_| r.f32_in(-1.0, 1.0)).collect();
    for dt in [DType::F32, DType::F16] {
        let mut g = Graph::new(&target());
        let mut prog = Vec::new();
        let mk = |g: &mut Graph, name: &str, shape: &[usize], data: &[f32], grain: usize| {
            var(g, name, dt, shape, data, grain)
        };
        for kind in KINDS {
            let xt = mk(&mut g, &format!("x{kind:?}"), &[n], &x, 8);
            let dyt = mk(&mut g, &format!("dy{kind:?}"), &[n], &dy, 8);
            let y = ops::non_linearity(&mut g, kind, &xt, &mut prog, "f").unwrap();
            let from = if kind.gradient_takes_input() { &xt } else { &y };
            let dx = ops::non_linearity_input_gradient(&mut g, kind, from, &dyt, &mut prog, "b")
                .unwrap();
            g.create_host_read(&format!("dx{kind:?}"), &dx).unwrap();
        }
        let mut e = run(&g, prog);
        for kind in KINDS {
            let q = |v: f32| f64::from(if dt == DType::F16 { h(v) } else { v });
            let want: Vec<f64> = x
                .iter()
                .zip(&dy)
                .map(|(&xv, &d)| {
                    let xv = q(xv);
                    let dv = q(d);
                    if xv.is_nan() {
                        f64::NAN
                    } else if xv.is_infinite() {
                        // The limits: relu 1 at +inf, the others' slopes 0 (gelu 1 at +inf).
                        let slope = match (kind, xv > 0.0) {
                            (NL::Relu | NL::Gelu, true) => 1.0,
                            _ => 0.0,
                        };
                        dv * slope
                    } else {
                        dv * df_ref(kind, xv)
                    }
                })
                .collect();
            let (abs, rel) = if dt == DType::F32 {
                (1e-6, 1e-5)
            } else {
                (2e-3, F16_REL)
            };
            let got = read(&mut e, &format!("dx{kind:?}"), dt);
            check(&format!("dx {kind:?} {dt}"), &got, &want, abs, rel);
        }
    }
}

// ---- softmax ----

/// Rows of 37 spread over the 4 tiles in grains of 16 (rows cut between tiles): random rows,
/// logits around 1e4, a row with -inf entries, one with a NaN and one with +inf.
fn softmax_input() -> (Vec<f32>, usize, usize) {
    let c = 37;
    let mut r = Rng::new(5);
    let mut x: Vec<f32> = (0..4 * c).map(|_| r.f32_in(-5.0, 5.0)).collect();
    x.extend((0..c).map(|j| 1e4 - j as f32)); // large logits: exp overflows without the max
    x.extend((0..c).map(|j| -1e4 + (j % 3) as f32));
    x.extend((0..c).map(|j| {
        if j % 2 == 0 {
            f32::NEG_INFINITY
        } else {
            j as f32 * 0.1
        }
    }));
    x.extend((0..c).map(|j| if j == 5 { f32::NAN } else { 0.0 }));
    x.extend((0..c).map(|j| if j == 9 { f32::INFINITY } else { 1.0 }));
    (x.clone(), x.len() / c, c)
}

/// softmax and log-softmax, f32 and f16, against the f64 stable forms: softmax within 1e-6 +
/// 1e-5 relative, log-softmax within 1e-5 + 1e-6 relative (values up to ~2e4 in magnitude);
/// f16 one f16 ulp (log-softmax: two, the input itself being rounded).
#[test]
fn softmax_and_log_softmax_against_f64_reference() {
    let (x, n, c) = softmax_input();
    for dt in [DType::F32, DType::F16] {
        let mut g = Graph::new(&target());
        let mut prog = Vec::new();
        let xt = if dt == DType::F32 {
            var(&mut g, "x", DType::F32, &[n, c], &x, 16)
        } else {
            var(&mut g, "x", DType::F16, &[n, c], &x, 16)
        };
        let y = ops::softmax(&mut g, &xt, &mut prog, "sm").unwrap();
        let l = ops::log_softmax(&mut g, &xt, &mut prog, "lsm").unwrap();
        assert_eq!(y.dtype(), dt);
        g.create_host_read("y", &y).unwrap();
        g.create_host_read("l", &l).unwrap();
        let mut e = run(&g, prog);
        let x64: Vec<f64> = x
            .iter()
            .map(|&v| f64::from(if dt == DType::F16 { h(v) } else { v }))
            .collect();
        let (abs, rel) = if dt == DType::F32 {
            (1e-6, 1e-5)
        } else {
            (F16_ABS, F16_REL)
        };
        check(
            &format!("softmax {dt}"),
            &read(&mut e, "y", dt),
            &rows(&x64, c, softmax_row),
            abs,
            rel,
        );
        let (abs, rel) = if dt == DType::F32 {
            (1e-5, 1e-6)
        } else {
            (F16_ABS, 2.0 * F16_REL)
        };
        check(
            &format!("log_softmax {dt}"),
            &read(&mut e, "l", dt),
            &rows(&x64, c, log_softmax_row),
            abs,
            rel,
        );
    }
}

/// The input gradients of softmax and log-softmax from the device's outputs, against the f64
/// formulas (1e-6 + 1e-5 relative; f16 2e-3), and those formulas against central differences
/// of `Σ dy · softmax(x)` (1e-6).
#[test]
fn softmax_gradients_against_reference_and_central_differences() {
    let c = 19;
    let n = 7;
    let mut r = Rng::new(9);
    let x: Vec<f32> = (0..n * c).map(|_| r.f32_in(-4.0, 4.0)).collect();
    let dy: Vec<f32> = (0..n * c).map(|_| r.f32_in(-1.0, 1.0)).collect();
    for dt in [DType::F32, DType::F16] {
        let q = |v: f32| f64::from(if dt == DType::F16 { h(v) } else { v });
        let x64: Vec<f64> = x.iter().map(|&v| q(v)).collect();
        let dy64: Vec<f64> = dy.iter().map(|&v| q(v)).collect();
        let mut g = Graph::new(&target());
        let mut prog = Vec::new();
        let mk = |g: &mut Graph, name: &str, shape: &[usize], data: &[f32], grain: usize| {
            var(g, name, dt, shape, data, grain)
        };
        let xt = mk(&mut g, "x", &[n, c], &x, 8);
        let dyt = mk(&mut g, "dy", &[n, c], &dy, 8);
        let y = ops::softmax(&mut g, &xt, &mut prog, "sm").unwrap();
        let l = ops::log_softmax(&mut g, &xt, &mut prog, "lsm").unwrap();
        let dxs = ops::softmax_input_gradient(&mut g, &y, &dyt, &mut prog, "dsm").unwrap();
        let dxl = ops::log_softmax_input_gradient(&mut g, &l, &dyt, &mut prog, "dlsm").unwrap();
        g.create_host_read("dxs", &dxs).unwrap();
        g.create_host_read("dxl", &dxl).unwrap();
        let mut e = run(&g, prog);

        let ys = rows(&x64, c, softmax_row);
        let want_s: Vec<f64> = (0..n)
            .flat_map(|i| {
                let (yr, dr) = (&ys[i * c..][..c], &dy64[i * c..][..c]);
                let t: f64 = yr.iter().zip(dr).map(|(a, b)| a * b).sum();
                (0..c).map(move |j| yr[j] * (dr[j] - t))
            })
            .collect();
        let want_l: Vec<f64> = (0..n)
            .flat_map(|i| {
                let (yr, dr) = (&ys[i * c..][..c], &dy64[i * c..][..c]);
                let t: f64 = dr.iter().sum();
                (0..c).map(move |j| dr[j] - yr[j] * t)
            })
            .collect();
        let (abs, rel) = if dt == DType::F32 {
            (1e-6, 1e-5)
        } else {
            (2e-3, F16_REL)
        };
        check(
            &format!("softmax grad {dt}"),
            &read(&mut e, "dxs", dt),
            &want_s,
            abs,
            rel,
        );
        check(
            &format!("log_softmax grad {dt}"),
            &read(&mut e, "dxl", dt),
            &want_l,
            abs,
            rel,
        );

        let dot = |r: usize, v: Vec<f64>| -> f64 {
            v.iter().zip(&dy64[r * c..][..c]).map(|(a, b)| a * b).sum()
        };
        let num_s = numeric_grad(&x64, c, |r, row| dot(r, softmax_row(row)));
        let num_l = numeric_grad(&x64, c, |r, row| dot(r, log_softmax_row(row)));
        check(
            "softmax grad vs central differences",
            &want_s,
            &num_s,
            1e-6,
            0.0,
        );
        check(
            "log_softmax grad vs central differences",
            &want_l,
            &num_l,
            1e-6,
            0.0,
        );
    }
}

// ---- losses ----

fn ce_ref(kind: CrossEntropyInput, row: &[f64], label: i64) -> (f64, Vec<f64>) {
    let c = row.len();
    if label < 0 || label as usize >= c {
        return (f64::NAN, vec![f64::NAN; c]);
    }
    let l = label as usize;
    match kind {
        CrossEntropyInput::Logits => {
            let lsm = log_softmax_row(row);
            let p = softmax_row(row);
            let g = (0..c).map(|j| p[j] - f64::from(u8::from(j == l))).collect();
            (-lsm[l], g)
        }
        _ => {
            let g = (0..c)
                .map(|j| if j == l { -1.0 / row[l] } else { 0.0 })
                .collect();
            (-row[l].ln(), g)
        }
    }
}

/// Cross-entropy over logits and over probabilities, u32 and i32 labels (one out of range
/// each: a NaN loss and row), f32 and f16, rows over the 4 tiles: loss within 1e-5 + 1e-5
/// relative of the f64 reference and gradient within 1e-6 + 1e-5 relative (f16: 2e-3 +
/// 2^-10 relative for the gradient, 4·2^-10 relative + 2e-3 for the loss, the inputs being
/// rounded to f16); the reference gradient within 1e-6 of central differences.
#[test]
fn cross_entropy_against_reference_and_central_differences() {
    let (n, c) = (9, 13);
    let mut r = Rng::new(21);
    let mut logits: Vec<f32> = (0..n * c).map(|_| r.f32_in(-6.0, 6.0)).collect();
    for v in &mut logits[c..2 * c] {
        *v += 1e4; // large logits
    }
    let labels: Vec<u32> = (0..n).map(|i| ((i * 5 + 3) % c) as u32).collect();
    let mut labels_u = labels.clone();
    labels_u[4] = c as u32; // out of range
    let mut labels_i: Vec<i32> = labels.iter().map(|&l| l as i32).collect();
    labels_i[6] = -1;
    for dt in [DType::F32, DType::F16] {
        let q = |v: f32| f64::from(if dt == DType::F16 { h(v) } else { v });
        let lg64: Vec<f64> = logits.iter().map(|&v| q(v)).collect();
        // Probabilities: the f64 softmax of moderate logits, as the tensor's type holds them.
        let probs: Vec<f32> = rows(&lg64, c, softmax_row)
            .iter()
            .map(|&p| p as f32)
            .collect();
        let pr64: Vec<f64> = probs.iter().map(|&v| q(v)).collect();
        let mut g = Graph::new(&target());
        let mut prog = Vec::new();
        let mk = |g: &mut Graph, name: &str, shape: &[usize], data: &[f32], grain: usize| {
            var(g, name, dt, shape, data, grain)
        };
        let xl = mk(&mut g, "logits", &[n, c], &logits, 8);
        let xp = mk(&mut g, "probs", &[n, c], &probs, 8);
        let lu = g.add_variable(DType::U32, &[n], "lu");
        g.map_linearly(&lu, 2).unwrap();
        g.set_initial_value(&lu, &labels_u).unwrap();
        let li = g.add_variable(DType::I32, &[n], "li");
        g.map_linearly(&li, 2).unwrap();
        g.set_initial_value(&li, &labels_i).unwrap();
        let cases = [
            ("logits_u", CrossEntropyInput::Logits, &xl, &lu),
            ("logits_i", CrossEntropyInput::Logits, &xl, &li),
            ("probs_u", CrossEntropyInput::Probabilities, &xp, &lu),
            ("probs_i", CrossEntropyInput::Probabilities, &xp, &li),
        ];
        for (name, kind, x, l) in cases {
            let loss = ops::cross_entropy(&mut g, kind, x, l, &mut prog, name).unwrap();
            assert_eq!(loss.loss.dtype(), DType::F32);
            assert_eq!(loss.grad.dtype(), dt);
            g.create_host_read(&format!("{name}.loss"), &loss.loss)
                .unwrap();
            g.create_host_read(&format!("{name}.grad"), &loss.grad)
                .unwrap();
        }
        let mut e = run(&g, prog);
        for (name, kind, _, _) in cases {
            let input = if kind == CrossEntropyInput::Logits {
                &lg64
            } else {
                &pr64
            };
            let lab: Vec<i64> = if name.ends_with('u') {
                labels_u.iter().map(|&l| i64::from(l)).collect()
            } else {
                labels_i.iter().map(|&l| i64::from(l)).collect()
            };
            let (mut want_loss, mut want_grad) = (Vec::new(), Vec::new());
            for (row, &l) in input.chunks(c).zip(&lab) {
                let (lo, gr) = ce_ref(kind, row, l);
                want_loss.push(lo);
                want_grad.extend(gr);
            }
            let (la, lr, ga, gr) = if dt == DType::F32 {
                (1e-5, 1e-5, 1e-6, 1e-5)
            } else {
                (2e-3, 4.0 * F16_REL, 2e-3, F16_REL)
            };
            check(
                &format!("{name} loss {dt}"),
                &read(&mut e, &format!("{name}.loss"), DType::F32),
                &want_loss,
                la,
                lr,
            );
            // f16 holds at most 65504: -1/p of a tiny probability overflows to -inf.
            let want_dev: Vec<f64> = want_grad
                .iter()
                .map(|&w| {
                    if dt == DType::F16 {
                        f64::from(h(w as f32))
                    } else {
                        w
                    }
                })
                .collect();
            check(
                &format!("{name} grad {dt}"),
                &read(&mut e, &format!("{name}.grad"), dt),
                &want_dev,
                ga,
                gr,
            );
            // The reference gradient against central differences of the reference loss (rows
            // with a valid label; the large-logit row is fine too: the form is stable).
            let num = numeric_grad(input, c, |r, row| ce_ref(kind, row, lab[r]).0);
            let scale: Vec<f64> = want_grad.iter().map(|g| g.abs().max(1.0)).collect();
            for i in 0..want_grad.len() {
                // Probabilities below 1e-2 are too close to 0 for the step h.
                let tiny = kind == CrossEntropyInput::Probabilities && input[i] < 1e-2;
                if want_grad[i].is_nan() || tiny {
                    continue;
                }
                assert!(
                    (want_grad[i] - num[i]).abs() <= 1e-6 * scale[i] * scale[i],
                    "{name}: element {i}: {} against {}",
                    want_grad[i],
                    num[i]
                );
            }
        }
    }
}

/// Sum of squares: loss `0.5 Σ (x - t)²` within 1e-5 + 1e-6 relative, gradient exact up to f32
/// rounding (1e-6 + 1e-6 relative), f16 one ulp; central differences of the f64 loss within
/// 1e-6; NaN and inf propagate to the sample's loss.
#[test]
fn sum_squared_against_reference_and_central_differences() {
    let (n, c) = (6, 11);
    let mut r = Rng::new(33);
    let mut x: Vec<f32> = (0..n * c).map(|_| r.f32_in(-3.0, 3.0)).collect();
    let t: Vec<f32> = (0..n * c).map(|_| r.f32_in(-3.0, 3.0)).collect();
    x[2 * c + 3] = f32::NAN;
    x[4 * c] = f32::INFINITY;
    for dt in [DType::F32, DType::F16] {
        let q = |v: f32| f64::from(if dt == DType::F16 { h(v) } else { v });
        let x64: Vec<f64> = x.iter().map(|&v| q(v)).collect();
        let t64: Vec<f64> = t.iter().map(|&v| q(v)).collect();
        let mut g = Graph::new(&target());
        let mut prog = Vec::new();
        let mk = |g: &mut Graph, name: &str, shape: &[usize], data: &[f32], grain: usize| {
            var(g, name, dt, shape, data, grain)
        };
        let xt = mk(&mut g, "x", &[n, c], &x, 8);
        let tt = mk(&mut g, "t", &[n, c], &t, 4);
        let l = ops::sum_squared(&mut g, &xt, &tt, &mut prog, "mse").unwrap();
        g.create_host_read("loss", &l.loss).unwrap();
        g.create_host_read("grad", &l.grad).unwrap();
        let mut e = run(&g, prog);
        let loss_of = |r: usize, row: &[f64]| -> f64 {
            0.5 * row
                .iter()
                .zip(&t64[r * c..][..c])
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
        };
        let want_loss: Vec<f64> = x64
            .chunks(c)
            .enumerate()
            .map(|(r, row)| loss_of(r, row))
            .collect();
        let want_grad: Vec<f64> = x64.iter().zip(&t64).map(|(a, b)| a - b).collect();
        let (la, lr, ga, gr) = if dt == DType::F32 {
            (1e-5, 1e-6, 1e-6, 1e-6)
        } else {
            (1e-4, 1e-6, F16_ABS, F16_REL)
        };
        check(
            &format!("loss {dt}"),
            &read(&mut e, "loss", DType::F32),
            &want_loss,
            la,
            lr,
        );
        check(
            &format!("grad {dt}"),
            &read(&mut e, "grad", dt),
            &want_grad,
            ga,
            gr,
        );
        let clean: Vec<f64> = x64
            .iter()
            .map(|v| if v.is_finite() { *v } else { 0.0 })
            .collect();
        let num = numeric_grad(&clean, c, loss_of);
        let ana: Vec<f64> = clean.iter().zip(&t64).map(|(a, b)| a - b).collect();
        check(
            "sum_squared grad vs central differences",
            &ana,
            &num,
            1e-6,
            0.0,
        );
    }
}

// ---- errors ----

#[test]
fn typed_errors_name_the_tensor_and_axis() {
    let mut g = Graph::new(&target());
    let mut prog = Vec::new();
    let xi = g.add_variable(DType::I32, &[4], "xi");
    let x = g.add_variable(DType::F32, &[4, 3], "x");
    let x2 = g.add_variable(DType::F32, &[4, 2], "x2");
    let s = g.add_variable(DType::F32, &[], "s");
    let x3 = g.add_variable(DType::F32, &[2, 2, 3], "x3");
    let e0 = g.add_variable(DType::F32, &[4, 0], "e0");
    let lf = g.add_variable(DType::F32, &[4], "lf");
    let l3 = g.add_variable(DType::U32, &[3], "l3");
    for t in [&xi, &x, &x2, &s, &x3, &e0, &lf, &l3] {
        g.map_linearly(t, 2).unwrap();
    }
    match ops::non_linearity(&mut g, NL::Relu, &xi, &mut prog, "r") {
        Err(NnOpError::DType { tensor, got, .. }) => {
            assert_eq!((tensor.as_str(), got), ("t", DType::I32))
        }
        other => panic!("{other:?}"),
    }
    match ops::non_linearity_input_gradient(&mut g, NL::Tanh, &x, &x2, &mut prog, "g") {
        Err(NnOpError::Shape { tensor, axis, .. }) => {
            assert_eq!((tensor.as_str(), axis), ("out_grad", 1))
        }
        other => panic!("{other:?}"),
    }
    match ops::softmax(&mut g, &s, &mut prog, "sm") {
        Err(NnOpError::Shape { tensor, axis, .. }) => assert_eq!((tensor.as_str(), axis), ("x", 0)),
        other => panic!("{other:?}"),
    }
    match ops::log_softmax(&mut g, &e0, &mut prog, "lsm") {
        Err(e @ NnOpError::Shape { .. }) => assert!(e.to_string().contains("axis 1"), "{e}"),
        other => panic!("{other:?}"),
    }
    match ops::softmax_input_gradient(&mut g, &x, &x2, &mut prog, "dsm") {
        Err(NnOpError::Shape { tensor, axis, .. }) => {
            assert_eq!((tensor.as_str(), axis), ("dy", 1))
        }
        other => panic!("{other:?}"),
    }
    match ops::cross_entropy(&mut g, CrossEntropyInput::Logits, &x, &lf, &mut prog, "ce") {
        Err(NnOpError::DType { tensor, got, .. }) => {
            assert_eq!((tensor.as_str(), got), ("labels", DType::F32))
        }
        other => panic!("{other:?}"),
    }
    match ops::cross_entropy(&mut g, CrossEntropyInput::Logits, &x, &l3, &mut prog, "ce") {
        Err(NnOpError::Shape { tensor, axis, .. }) => {
            assert_eq!((tensor.as_str(), axis), ("labels", 0))
        }
        other => panic!("{other:?}"),
    }
    match ops::cross_entropy(
        &mut g,
        CrossEntropyInput::Probabilities,
        &x3,
        &l3,
        &mut prog,
        "ce",
    ) {
        Err(NnOpError::Shape { tensor, .. }) => assert_eq!(tensor, "input"),
        other => panic!("{other:?}"),
    }
    match ops::sum_squared(&mut g, &x, &x2, &mut prog, "mse") {
        Err(NnOpError::Shape { tensor, axis, .. }) => {
            assert_eq!((tensor.as_str(), axis), ("target", 1))
        }
        other => panic!("{other:?}"),
    }
}
