//! Convolution figures: the convolution layers of ResNet-50 (batch 16, f16 operands, f32
//! partials) on one GC200 — every pass planned, built and compiled, its modelled time from the
//! cycle model against the AMP's peak — and forward passes run on the simulator, their host
//! time against a plain im2col + matmul on the host.
//!
//! `cargo bench -p poplin --bench conv` (all layers), or with `-- --quick` the first three
//! layers only.

use std::time::Instant;

use poplar::profile::{estimate_program, CycleModel};
use poplar::rand::SplitMix64;
use poplar::{compile, f16, CompileOptions, DType, Engine, EngineOptions, Graph, Target};
use poplin::{ConvOptions, ConvParams, ConvPass, ConvPlan};

#[path = "../tests/common/resnet50.rs"]
mod resnet50;
use resnet50::RESNET50_LAYERS as LAYERS;

fn params((ci, co, f, k, s, pad): (usize, usize, usize, usize, usize, usize)) -> ConvParams {
    ConvParams::new(16, ci, co, &[f, f], &[k, k])
        .with_stride(&[s, s])
        .with_padding(&[pad, pad], &[pad, pad])
        .with_type(DType::F16)
}

/// A graph of one pass with operands laid out for the plan; its executable.
fn build(target: &Target, plan: &ConvPlan) -> (Graph, poplar::exe::Executable) {
    let mut graph = Graph::new(target);
    let (a, b) = match plan.pass {
        ConvPass::Forward => (
            poplin::create_conv_input(&mut graph, plan, "x").unwrap(),
            poplin::create_conv_weights(&mut graph, plan, "w").unwrap(),
        ),
        ConvPass::InputGradient => (
            poplin::create_conv_output_gradient(&mut graph, plan, "dy").unwrap(),
            poplin::create_conv_weights(&mut graph, plan, "w").unwrap(),
        ),
        ConvPass::WeightUpdate => (
            poplin::create_conv_input(&mut graph, plan, "x").unwrap(),
            poplin::create_conv_output_gradient(&mut graph, plan, "dy").unwrap(),
        ),
    };
    let (out, prog) = match plan.pass {
        ConvPass::Forward => poplin::convolution(&mut graph, &a, &b, plan, "conv"),
        ConvPass::InputGradient => {
            poplin::convolution_input_gradient(&mut graph, &a, &b, plan, "conv")
        }
        ConvPass::WeightUpdate => {
            poplin::convolution_weight_gradient(&mut graph, &a, &b, plan, "conv")
        }
    }
    .unwrap();
    graph.create_host_write("a", &a).unwrap();
    graph.create_host_write("b", &b).unwrap();
    graph.create_host_read("out", &out).unwrap();
    let exe = compile(&graph, &[prog], &CompileOptions::default()).unwrap();
    (graph, exe)
}

/// `y[n, co, o] = Σ w[co, ci, k] · x[n, ci, o·s + k − pad]` on the host for a 2-D convolution
/// of one group: the patches gathered (im2col, `[ci·kh·kw, oh·ow]` per image), then a plain
/// f32 matrix product `W[co, ci·kh·kw] · cols` in i-k-j order.
fn im2col_matmul(p: &ConvParams, x: &[f32], w: &[f32]) -> Vec<f32> {
    let (ci, co) = (p.input_channels, p.output_channels);
    let (h, wd) = (p.input_field[0], p.input_field[1]);
    let (kh, kw) = (p.kernel[0], p.kernel[1]);
    let (s, pad) = (p.stride[0], p.padding_lower[0]);
    let o = p.output_field();
    let (oh, ow) = (o[0], o[1]);
    let (rows, cols_n) = (ci * kh * kw, oh * ow);
    let mut cols = vec![0.0f32; rows * cols_n];
    let mut y = vec![0.0f32; p.batch * co * cols_n];
    for n in 0..p.batch {
        for c in 0..ci {
            for a in 0..kh {
                for b in 0..kw {
                    let row = &mut cols[((c * kh + a) * kw + b) * cols_n..][..cols_n];
                    for i in 0..oh {
                        let r = (i * s + a) as isize - pad as isize;
                        for j in 0..ow {
                            let q = (j * s + b) as isize - pad as isize;
                            row[i * ow + j] =
                                if r >= 0 && q >= 0 && (r as usize) < h && (q as usize) < wd {
                                    x[((n * ci + c) * h + r as usize) * wd + q as usize]
                                } else {
                                    0.0
                                };
                        }
                    }
                }
            }
        }
        let out = &mut y[n * co * cols_n..(n + 1) * co * cols_n];
        for oc in 0..co {
            let acc = &mut out[oc * cols_n..(oc + 1) * cols_n];
            for k in 0..rows {
                let wv = w[oc * rows + k];
                for (a, &v) in acc.iter_mut().zip(&cols[k * cols_n..(k + 1) * cols_n]) {
                    *a += wv * v;
                }
            }
        }
    }
    y
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    poplin::link();
    let quick = std::env::args().any(|a| a == "--quick");
    let layers = if quick { &LAYERS[..3] } else { &LAYERS[..] };
    let target = Target::gc200();
    let clock = target.clock_hz;
    let peak = 2.0
        * poplin::codelets::macs_per_cycle(DType::F16) as f64
        * f64::from(target.num_tiles())
        * clock
        / 1e12;
    println!(
        "== ResNet-50 convolution layers on one GC200, batch 16, f16 operands (f32 partials); \
         AMP peak {peak:.0} TFLOP/s"
    );
    println!(
        "{:>4} {:>5} {:>3} {:>3} {:>2} | {:>13} {:>5} {:>10} {:>10} {:>8} {:>8} {:>6} {:>8}",
        "ci",
        "co",
        "f",
        "k",
        "s",
        "pass",
        "tiles",
        "plan cyc",
        "model cyc",
        "µs",
        "TFLOP/s",
        "peak",
        "build s"
    );
    let mut all = (0.0, 0.0);
    for &layer in layers {
        let p = params(layer);
        for pass in [
            ConvPass::Forward,
            ConvPass::InputGradient,
            ConvPass::WeightUpdate,
        ] {
            let t = Instant::now();
            let plan =
                poplin::plan_convolution(&target, &p, pass, &ConvOptions::default()).unwrap();
            let (_, exe) = build(&target, &plan);
            let model = CycleModel::new(&exe);
            let est = estimate_program(&exe, &model, 0).unwrap();
            let secs = est.cycles as f64 / clock;
            let flops = 2.0 * p.macs() as f64;
            all.0 += flops;
            all.1 += secs;
            let tflops = flops / secs / 1e12;
            println!(
                "{:>4} {:>5} {:>3} {:>3} {:>2} | {:>13} {:>5} {:>10} {:>10} {:>8.1} {:>8.1} {:>5.0}% {:>8.1}",
                layer.0,
                layer.1,
                layer.2,
                layer.3,
                layer.4,
                format!("{pass:?}"),
                plan.tiles_used,
                plan.estimate.total(),
                est.cycles,
                secs * 1e6,
                tflops,
                100.0 * tflops / peak,
                t.elapsed().as_secs_f64()
            );
        }
    }
    println!(
        "all passes of these layers: {:.1} TFLOP/s ({:.0}% of peak), each layer once",
        all.0 / all.1 / 1e12,
        100.0 * all.0 / all.1 / 1e12 / peak
    );

    println!(
        "\n== host time of the forward pass: simulator ({} threads) against a plain im2col + \
         f32 matmul on one host thread (median of 3)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "{:>4} {:>5} {:>3} {:>3} {:>2} | {:>10} {:>10} {:>7} {:>10}",
        "ci", "co", "f", "k", "s", "sim ms", "host ms", "ratio", "max |Δ|"
    );
    let mut rng = SplitMix64::new(1);
    for &layer in layers {
        let p = params(layer);
        let plan =
            poplin::plan_convolution(&target, &p, ConvPass::Forward, &ConvOptions::default())
                .unwrap();
        let (_, exe) = build(&target, &plan);
        let mut engine = Engine::new(&exe, EngineOptions::default()).unwrap();
        let f = |n: usize, rng: &mut SplitMix64| -> Vec<f32> {
            (0..n)
                .map(|_| f16::from_f32(rng.f32_in(-1.0, 1.0)).to_f32())
                .collect()
        };
        let field: usize = p.input_field.iter().product();
        let taps: usize = p.kernel.iter().product();
        let x = f(p.batch * p.input_channels * field, &mut rng);
        let w = f(p.output_channels * p.input_channels * taps, &mut rng);
        let h = |v: &[f32]| v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>();
        engine.write_tensor("a", &h(&x)).unwrap();
        engine.write_tensor("b", &h(&w)).unwrap();
        let mut sim = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            engine.run(0).unwrap();
            sim.push(t.elapsed().as_secs_f64());
        }
        let got = engine.read_tensor::<f32>("out").unwrap();
        let mut host = Vec::new();
        let mut want = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            want = std::hint::black_box(im2col_matmul(&p, &x, &w));
            host.push(t.elapsed().as_secs_f64());
        }
        let diff = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        let (s, hm) = (median(sim), median(host));
        println!(
            "{:>4} {:>5} {:>3} {:>3} {:>2} | {:>10.1} {:>10.1} {:>7.2} {:>10.2e}",
            layer.0,
            layer.1,
            layer.2,
            layer.3,
            layer.4,
            s * 1e3,
            hm * 1e3,
            s / hm,
            diff
        );
    }
}
