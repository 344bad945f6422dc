//! Tutorial 9: a convolution layer trained one step (`docs/tutorials/tut9_conv_layer.md`).
//!
//! `cargo run -p popnn --example tut9_conv_layer`
//!
//! A 3×3 convolution of 3 → 8 channels over 2 images of 10×10 learns towards a target output
//! with the loss `½ Σ (y − t)²`: the forward pass, the input gradient and the weight gradient
//! are planned and built by poplin, the update `w −= lr · dw` is a popops expression. Every
//! tensor the step computes is checked against direct loops on the host in f64, and the loss
//! must fall; a mismatch exits non-zero.

use poplar::profile::ProfileOptions;
use poplar::rand::SplitMix64;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
use poplin::{ConvOptions, ConvParams, ConvPass};
use popops::expr::{_1, _2};

const LR: f32 = 0.002;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    popnn::link();
    let target = Target::custom(16, 128 * 1024);
    // batch 2, 3 → 8 channels, a 10 × 10 field, a 3 × 3 kernel, padding 1 on every side
    let params = ConvParams::new(2, 3, 8, &[10, 10], &[3, 3]).with_padding(&[1, 1], &[1, 1]);
    let opts = ConvOptions::default();
    let fwd = poplin::plan_convolution(&target, &params, ConvPass::Forward, &opts)?;
    let bwd = poplin::plan_convolution(&target, &params, ConvPass::InputGradient, &opts)?;
    let wu = poplin::plan_convolution(&target, &params, ConvPass::WeightUpdate, &opts)?;
    println!("{fwd}\n{bwd}\n{wu}");

    let mut graph = Graph::new(&target);
    let x = poplin::create_conv_input(&mut graph, &fwd, "x")?;
    let w = poplin::create_conv_weights(&mut graph, &fwd, "w")?;
    let (y, forward) = poplin::convolution(&mut graph, &x, &w, &fwd, "forward")?;
    let t = graph.add_variable(DType::F32, y.shape(), "t");
    graph.map_linearly(&t, 16)?;

    let mut step = vec![forward.clone()];
    // ½ Σ (y − t)² has the output gradient dy = y − t.
    let dy = popops::map(&mut graph, &(_1 - _2), &[&y, &t], &mut step, "dy")?;
    let (dw, weight_grad) = poplin::convolution_weight_gradient(&mut graph, &x, &dy, &wu, "dw")?;
    let (dx, input_grad) = poplin::convolution_input_gradient(&mut graph, &dy, &w, &bwd, "dx")?;
    step.extend([weight_grad, input_grad]);
    popops::map_in_place(&mut graph, &(_1 - _2 * LR), &[&w, &dw], &mut step, "update")?;

    graph.create_host_write("x", &x)?;
    graph.create_host_read_write("w", &w)?;
    graph.create_host_write("t", &t)?;
    for (name, tensor) in [("y", &y), ("dw", &dw), ("dx", &dx)] {
        graph.create_host_read(name, tensor)?;
    }
    let programs = [Program::seq(step), forward];
    let exe = compile(&graph, &programs, &CompileOptions::default())?;
    let mut engine = Engine::new(&exe, EngineOptions::default())?;

    let mut rng = SplitMix64::new(9);
    let mut values = |n: usize| -> Vec<f32> { (0..n).map(|_| rng.f32_in(-1.0, 1.0)).collect() };
    let (xv, wv, tv) = (values(2 * 3 * 100), values(8 * 3 * 9), values(2 * 8 * 100));
    engine.write_tensor("x", &xv)?;
    engine.write_tensor("w", &wv)?;
    engine.write_tensor("t", &tv)?;
    engine.enable_profiling(ProfileOptions::default());
    engine.run(0)?; // one training step
    let profile = engine.profile().expect("profiling is on").clone();
    let (yv, dwv, dxv) = (
        engine.read_tensor::<f32>("y")?,
        engine.read_tensor::<f32>("dw")?,
        engine.read_tensor::<f32>("dx")?,
    );
    let w1 = engine.read_tensor::<f32>("w")?;
    engine.run(1)?; // the forward pass again, with the updated weights
    let y1 = engine.read_tensor::<f32>("y")?;

    for s in profile.summary_by_label() {
        println!(
            "{:>8}: compute {:>6}, exchange {:>6}, sync {:>4} cycles",
            s.name, s.compute, s.exchange, s.sync
        );
    }
    let host = Host::new(&xv, &wv);
    let hy = host.forward();
    let hdy: Vec<f64> = hy.iter().zip(&tv).map(|(a, &b)| a - f64::from(b)).collect();
    let (hdw, hdx) = host.gradients(&hdy);
    let mut ok = check("y", &yv, &hy) & check("dw", &dwv, &hdw) & check("dx", &dxv, &hdx);
    let hw1: Vec<f64> = wv
        .iter()
        .zip(&dwv)
        .map(|(&w, &g)| f64::from(w - LR * g))
        .collect();
    ok &= check("w after the step", &w1, &hw1);
    let loss = |y: &[f32]| -> f64 {
        let sq = y.iter().zip(&tv).map(|(&a, &b)| f64::from(a - b).powi(2));
        sq.sum::<f64>() / 2.0
    };
    let (before, after) = (loss(&yv), loss(&y1));
    println!("loss before the step {before:.3}, after {after:.3}");
    if !ok || after >= before {
        eprintln!("tut9: MISMATCH against the host, or the loss did not fall");
        std::process::exit(1);
    }
    println!("tut9: OK");
    Ok(())
}

/// `got` against `want` within `2^-20` of the largest magnitude: f32 sums of at most 200
/// products of values in [-1, 1] against f64.
fn check(what: &str, got: &[f32], want: &[f64]) -> bool {
    let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let worst = got
        .iter()
        .zip(want)
        .map(|(&g, w)| (f64::from(g) - w).abs())
        .fold(0.0, f64::max);
    let ok = got.len() == want.len() && worst <= scale * 2f64.powi(-20);
    println!(
        "{what:>16}: {} values, worst error {worst:.1e} ({})",
        got.len(),
        if ok { "ok" } else { "MISMATCH" }
    );
    ok
}

/// The layer's direct loops on the host, in f64: `x[n, c, 10, 10]`, `w[o, c, 3, 3]`, padding
/// 1, stride 1.
struct Host {
    x: Vec<f64>,
    w: Vec<f64>,
}

impl Host {
    fn new(x: &[f32], w: &[f32]) -> Host {
        let f = |v: &[f32]| v.iter().map(|&a| f64::from(a)).collect();
        Host { x: f(x), w: f(w) }
    }

    /// Calls `f(x index, w index, y index)` for every product of the convolution.
    fn each(&self, mut f: impl FnMut(usize, usize, usize)) {
        for (n, o, c) in
            (0..2).flat_map(|n| (0..8).flat_map(move |o| (0..3).map(move |c| (n, o, c))))
        {
            for (i, j, a, b) in (0..10)
                .flat_map(|i| (0..10).flat_map(move |j| (0..9).map(move |k| (i, j, k / 3, k % 3))))
            {
                let (r, q) = (i + a, j + b);
                if (1..=10).contains(&r) && (1..=10).contains(&q) {
                    let xi = ((n * 3 + c) * 10 + r - 1) * 10 + q - 1;
                    f(
                        xi,
                        ((o * 3 + c) * 3 + a) * 3 + b,
                        ((n * 8 + o) * 10 + i) * 10 + j,
                    );
                }
            }
        }
    }

    fn forward(&self) -> Vec<f64> {
        let mut y = vec![0.0; 2 * 8 * 100];
        self.each(|xi, wi, yi| y[yi] += self.x[xi] * self.w[wi]);
        y
    }

    fn gradients(&self, dy: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let (mut dw, mut dx) = (vec![0.0; self.w.len()], vec![0.0; self.x.len()]);
        self.each(|xi, wi, yi| {
            dw[wi] += dy[yi] * self.x[xi];
            dx[xi] += dy[yi] * self.w[wi];
        });
        (dw, dx)
    }
}
