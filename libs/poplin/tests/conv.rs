//! The convolution's three passes, as the canonical convolution the `ConvPartial` kernel
//! computes, against direct f64 loops of their definitions (forward, input gradient, weight
//! gradient), and the planner against its parameters' rules.

mod common;

use common::*;
use poplar::rand::SplitMix64;
use poplar::{DType, Target};
use poplin::conv::codelets::{conv_plane, Geom};
use poplin::conv::PassShape;
use poplin::{plan_convolution, ConvOptions, ConvParams, ConvPass, PlanError};

/// The canonical tensors of one pass for group `g`: per input channel its `[n, window]`
/// (`win` per dimension), per output channel its `[ci, kernel]`.
fn canonical(
    p: &ConvParams,
    pass: ConvPass,
    s: &PassShape,
    t: &Tensors,
    g: usize,
    win: &[std::ops::Range<usize>; 3],
) -> (Vec<Vec<f32>>, Vec<Vec<f32>>) {
    let (f, kernel, _, _, _, out) = lift(p);
    let (ci, co) = (p.input_channels / p.groups, p.output_channels / p.groups);
    let xd = [p.batch, p.input_channels, f[0], f[1], f[2]];
    let wd = [p.output_channels, ci, kernel[0], kernel[1], kernel[2]];
    let yd = [p.batch, p.output_channels, out[0], out[1], out[2]];
    // A folded weight update's input channel `c` is batch element `c / P` at field position
    // `c % P` (`P` positions; its field and kernel are one position).
    let unfold = |c: usize| -> (usize, [usize; 3]) {
        let q = c % (f[0] * f[1] * f[2]);
        (
            c / (f[0] * f[1] * f[2]),
            [q / (f[1] * f[2]), q / f[2] % f[1], q % f[2]],
        )
    };
    let value = |c: usize, n: usize, pos: [usize; 3]| -> f32 {
        let pos = [0, 1, 2].map(|d| win[d].start + pos[d]);
        if s.folded {
            let (b, q) = unfold(c);
            return t.x[at(&[b, g * ci + n, q[0], q[1], q[2]], &xd)];
        }
        match pass {
            ConvPass::Forward => t.x[at(&[n, g * ci + c, pos[0], pos[1], pos[2]], &xd)],
            ConvPass::InputGradient => t.dy[at(&[n, g * co + c, pos[0], pos[1], pos[2]], &yd)],
            ConvPass::WeightUpdate => t.x[at(&[c, g * ci + n, pos[0], pos[1], pos[2]], &xd)],
        }
    };
    let ins = (0..s.ci)
        .map(|c| {
            (0..s.n)
                .flat_map(|n| field_iter([0, 1, 2].map(|d| win[d].len())).map(move |pos| (n, pos)))
                .map(|(n, pos)| value(c, n, pos))
                .collect()
        })
        .collect();
    let weight = |oc: usize, c: usize, k: [usize; 3]| -> f32 {
        if s.folded {
            let (b, q) = unfold(c);
            return t.dy[at(&[b, g * co + oc, q[0], q[1], q[2]], &yd)];
        }
        match pass {
            ConvPass::Forward => t.w[at(&[g * co + oc, c, k[0], k[1], k[2]], &wd)],
            ConvPass::InputGradient => {
                let fk = [0, 1, 2].map(|d| kernel[d] - 1 - k[d]);
                t.w[at(&[g * co + c, oc, fk[0], fk[1], fk[2]], &wd)]
            }
            ConvPass::WeightUpdate => t.dy[at(&[c, g * co + oc, k[0], k[1], k[2]], &yd)],
        }
    };
    let wts = (0..s.co)
        .map(|oc| {
            (0..s.ci)
                .flat_map(|c| field_iter(s.kernel).map(move |k| (c, k)))
                .map(|(c, k)| weight(oc, c, k))
                .collect()
        })
        .collect();
    (ins, wts)
}

/// Runs the kernel over the whole of one pass (one block, worker shares of 7 planes' worth)
/// and checks it against `want` (the user-side result) within `Σ|products|·(taps·ci)·2^-24`.
fn check_pass(p: &ConvParams, pass: ConvPass, t: &Tensors, want: &[f64]) {
    let s = PassShape::of(p, pass);
    let (f, kernel, _, _, _, out) = lift(p);
    let (ci, co) = (p.input_channels / p.groups, p.output_channels / p.groups);
    let outs = s.out_field();
    let positions: usize = outs.iter().product();
    let geom = Geom::for_block(&s, s.n, [0..outs[0], 0..outs[1], 0..outs[2]]);
    let terms = (s.taps() * s.ci) as f64;
    for g in 0..p.groups {
        let win = [0, 1, 2].map(|d| s.window(d, 0..outs[d]));
        let (ins, wts) = canonical(p, pass, &s, t, g, &win);
        let ins: Vec<&[f32]> = ins.iter().map(|v| &v[..]).collect();
        for n in 0..s.n {
            for (oc, wt) in wts.iter().enumerate() {
                let mut plane = vec![f32::NAN; positions];
                // Two shares, split mid-line, to exercise partial lines.
                let cut = positions / 3;
                conv_plane(&geom, &ins, wt, n, &mut plane, 0..cut);
                conv_plane(&geom, &ins, wt, n, &mut plane, cut..positions);
                for (pi, pos) in field_iter(outs).enumerate() {
                    let idx = match pass {
                        ConvPass::Forward => at(
                            &[n, g * co + oc, pos[0], pos[1], pos[2]],
                            &[p.batch, p.output_channels, out[0], out[1], out[2]],
                        ),
                        ConvPass::InputGradient => at(
                            &[n, g * ci + oc, pos[0], pos[1], pos[2]],
                            &[p.batch, p.input_channels, f[0], f[1], f[2]],
                        ),
                        ConvPass::WeightUpdate => at(
                            &[g * co + oc, n, pos[0], pos[1], pos[2]],
                            &[p.output_channels, ci, kernel[0], kernel[1], kernel[2]],
                        ),
                    };
                    let tol = terms * f64::from(f32::EPSILON) * (want[idx].abs() + terms) + 1e-30;
                    assert!(
                        (f64::from(plane[pi]) - want[idx]).abs() <= tol,
                        "{p} {pass:?}: output {idx} (n {n}, channel {oc}, {pos:?}) = {}, host {}",
                        plane[pi],
                        want[idx]
                    );
                }
            }
        }
    }
}

#[test]
fn every_pass_matches_the_direct_loops_for_sixty_random_convolutions() {
    let mut rng = SplitMix64::new(53);
    for _ in 0..60 {
        let p = random_params(&mut rng);
        p.check().unwrap_or_else(|e| panic!("{p}: {e}"));
        let (f, kernel, _, _, _, out) = lift(&p);
        let prod = |a: [usize; 3]| a.iter().product::<usize>();
        let t = Tensors {
            x: values(p.batch * p.input_channels * prod(f), &mut rng),
            w: values(
                p.output_channels * (p.input_channels / p.groups) * prod(kernel),
                &mut rng,
            ),
            dy: values(p.batch * p.output_channels * prod(out), &mut rng),
        };
        let (y, dx, dw) = host(&p, &t);
        check_pass(&p, ConvPass::Forward, &t, &y);
        check_pass(&p, ConvPass::InputGradient, &t, &dx);
        check_pass(&p, ConvPass::WeightUpdate, &t, &dw);
    }
}

#[test]
fn pointwise_convolutions_take_the_one_run_path_and_match_the_direct_loops() {
    // 1×1 kernels, unit stride, no padding: the forward and input-gradient blocks are
    // pointwise (one run per input channel); the weight update is not.
    let mut rng = SplitMix64::new(11);
    for (field, groups) in [(vec![4usize, 6], 1usize), (vec![9], 2), (vec![2, 3, 4], 1)] {
        let k = vec![1; field.len()];
        let p = ConvParams::new(2, 4, 6, &field, &k).with_groups(groups);
        let s = PassShape::of(&p, ConvPass::Forward);
        let outs = s.out_field();
        let geom = Geom::for_block(&s, s.n, [0..outs[0], 0..outs[1], 0..outs[2]]);
        assert!(geom.is_pointwise(), "{p}");
        let (f, kernel, _, _, _, out) = lift(&p);
        let prod = |a: [usize; 3]| a.iter().product::<usize>();
        let t = Tensors {
            x: values(p.batch * p.input_channels * prod(f), &mut rng),
            w: values(
                p.output_channels * (p.input_channels / groups) * prod(kernel),
                &mut rng,
            ),
            dy: values(p.batch * p.output_channels * prod(out), &mut rng),
        };
        let (y, dx, dw) = host(&p, &t);
        check_pass(&p, ConvPass::Forward, &t, &y);
        check_pass(&p, ConvPass::InputGradient, &t, &dx);
        check_pass(&p, ConvPass::WeightUpdate, &t, &dw);
    }
}

#[test]
fn the_planner_refuses_broken_parameters_by_name() {
    let target = Target::custom(16, 256 * 1024);
    let opts = ConvOptions::default();
    let plan = |p: &ConvParams| plan_convolution(&target, p, ConvPass::Forward, &opts);
    let ok = ConvParams::new(1, 4, 4, &[8, 8], &[3, 3]);
    assert!(plan(&ok).is_ok());
    let e = plan(&ok.clone().with_groups(3)).unwrap_err();
    assert!(
        e.to_string()
            .contains("input_channels (4) is not a multiple of groups (3)"),
        "{e}"
    );
    let e = plan(&ConvParams::new(1, 4, 4, &[2, 8], &[3, 3])).unwrap_err();
    assert!(e.to_string().contains("field dimension 0"), "{e}");
    let e = plan(&ok.clone().with_stride(&[1, 0])).unwrap_err();
    assert!(
        e.to_string().contains("stride is 0 in field dimension 1"),
        "{e}"
    );
    assert!(matches!(
        plan(&ConvParams::new(0, 4, 4, &[8, 8], &[3, 3])),
        Err(PlanError::Empty(_))
    ));
    assert!(matches!(
        plan(&ok.clone().with_type(DType::I32)),
        Err(PlanError::Type(DType::I32))
    ));
    let tiny = Target::custom(2, 4 * 1024);
    let e = plan_convolution(
        &tiny,
        &ConvParams::new(8, 64, 64, &[32, 32], &[3, 3]),
        ConvPass::Forward,
        &opts,
    )
    .unwrap_err();
    assert!(matches!(e, PlanError::DoesNotFit { .. }), "{e}");
}

#[test]
fn resnet50_layers_plan_on_one_gc200_for_every_pass() {
    let target = Target::gc200();
    for (ci, co, f, k, s, pad) in RESNET50_LAYERS {
        let p = ConvParams::new(16, ci, co, &[f, f], &[k, k])
            .with_stride(&[s, s])
            .with_padding(&[pad, pad], &[pad, pad])
            .with_type(DType::F16);
        for pass in [
            ConvPass::Forward,
            ConvPass::InputGradient,
            ConvPass::WeightUpdate,
        ] {
            let plan = plan_convolution(&target, &p, pass, &ConvOptions::default())
                .unwrap_or_else(|e| panic!("{p} {pass:?}: {e}"));
            assert!(plan.bytes_per_tile <= plan.budget, "{plan}");
            assert!(plan.tiles_used <= 1472, "{plan}");
        }
    }
}

#[test]
fn the_kernel_gives_the_same_bits_at_every_isa_level() {
    use poplin::conv::codelets::conv_plane_at_level;
    let p = ConvParams::new(2, 5, 3, &[9, 11], &[3, 2])
        .with_stride(&[2, 1])
        .with_dilation(&[1, 2])
        .with_padding(&[1, 0], &[2, 1]);
    let s = PassShape::of(&p, ConvPass::Forward);
    let outs = s.out_field();
    let win = [0, 1, 2].map(|d| s.window(d, 0..outs[d]));
    let mut rng = SplitMix64::new(7);
    let wlen: usize = win.iter().map(|w| w.len()).product();
    let ins: Vec<Vec<f32>> = (0..s.ci).map(|_| values(s.n * wlen, &mut rng)).collect();
    let ins: Vec<&[f32]> = ins.iter().map(|v| &v[..]).collect();
    let wts = values(s.ci * s.taps(), &mut rng);
    let geom = Geom::for_block(&s, s.n, [0..outs[0], 0..outs[1], 0..outs[2]]);
    let positions: usize = outs.iter().product();
    let mut want = vec![0.0f32; positions];
    conv_plane(&geom, &ins, &wts, 1, &mut want, 0..positions);
    let before = poplar::isa::active();
    for level in poplar::isa::supported() {
        poplar::isa::set_active(level).unwrap();
        let mut got = vec![f32::NAN; positions];
        conv_plane_at_level(&geom, &ins, &wts, 1, &mut got, 0..positions);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want), "at {level}");
    }
    poplar::isa::set_active(before).unwrap();
}
