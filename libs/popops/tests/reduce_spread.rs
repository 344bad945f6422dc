//! popops' multi-stage reduction plans (the intermediate cross-tile stages of
//! `reduction/spread.rs`) against the host reference of `tests/support`: the same results as
//! the two-stage plan within the stated bounds, the same bits at any thread count, and fewer
//! modelled cycles where the stages are chosen.

#[path = "../../../codelets/tests/common/mod.rs"]
mod common;
mod support;

use common::Rng;
use poplar::{f16, DType, Element, EngineOptions, Graph, Program, Target};
use popops::{reduce, reduce_with_output, Operation, ReduceParams};
use support::{check_f32, host_reduce, input, ref_f64};

/// Builds `reduce` (add) of `data` (`shape`, one grain of `grain` per tile in turn over
/// `tiles` tiles) over `dims`, with or without the intermediate cross-tile stages, and runs
/// it with `threads`: the output's f32 values and the run's modelled cycles.
fn spread_run<T: Element>(
    data: &[T],
    shape: &[usize],
    dims: &[usize],
    out_dtype: DType,
    (tiles, grain): (u32, usize),
    two_stage: bool,
    threads: usize,
) -> (Vec<u32>, u64, poplar::profile::Profile) {
    let mut g = Graph::new(&Target::custom(tiles, 256 * 1024));
    let x = input(&mut g, "x", shape, data, grain);
    let mut prog = Vec::new();
    popops::reduction::set_two_stage_only(two_stage);
    let out = reduce(&mut g, &x, out_dtype, dims, Operation::Add, &mut prog, "r");
    popops::reduction::set_two_stage_only(false);
    let out = out.unwrap();
    g.create_host_read("out", &out).unwrap();
    let exe = poplar::compile(&g, &[Program::seq(prog)], &Default::default()).unwrap();
    let mut e = poplar::Engine::new(&exe, EngineOptions::with_threads(threads)).unwrap();
    e.enable_profiling(poplar::profile::ProfileOptions::default());
    e.run(0).unwrap();
    let bits = match out_dtype {
        DType::F32 => e
            .read_tensor::<f32>("out")
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect(),
        DType::F16 => e
            .read_tensor::<f16>("out")
            .unwrap()
            .iter()
            .map(|v| u32::from(v.to_bits()))
            .collect(),
        DType::I32 => e
            .read_tensor::<i32>("out")
            .unwrap()
            .iter()
            .map(|&v| v as u32)
            .collect(),
        _ => e.read_tensor::<u32>("out").unwrap(),
    };
    let p = e.profile().unwrap().clone();
    (bits, p.total_cycles(), p)
}

/// Reductions whose outputs take partials from many tiles get the intermediate cross-tile
/// stages (`r/spread0`, …): f32 (and f16 into f32 and f16) within the stated bound of an f64
/// sum, integers exact, the same bits with 1 and 2 threads.
#[test]
fn multi_stage_plan_over_many_tiles() {
    let mut r = Rng::new(77);
    let cases: [(&[usize], &[usize], usize); 4] = [
        (&[64, 512], &[0, 1], 512), // to one value, one row per tile
        (&[256, 16], &[0], 16),     // 16 outputs from 64 tiles each
        (&[128, 96], &[0], 40),     // rows cut between tiles, uneven pieces
        (&[64, 4, 40], &[0, 2], 7), // two axes, a grain that cuts everything
    ];
    for (shape, dims, grain) in cases {
        let n: usize = shape.iter().product();
        let per_out: usize = dims.iter().map(|&d| shape[d]).product();
        let df = r.f32s(n);
        let di = r.i32s(n);
        let du = r.u32s(n);
        let what = format!("{shape:?} over {dims:?}");
        let (b1, _, p) = spread_run(&df, shape, dims, DType::F32, (64, grain), false, 1);
        let (b2, _, _) = spread_run(&df, shape, dims, DType::F32, (64, grain), false, 2);
        assert_eq!(b1, b2, "{what}: 1 vs 2 threads");
        assert!(
            p.phases_named("r/spread0").count() > 0,
            "{what}: no intermediate stage"
        );
        let got: Vec<f32> = b2.iter().map(|&b| f32::from_bits(b)).collect();
        check_f32(
            Operation::Add,
            &got,
            &ref_f64(Operation::Add, &df, shape, dims),
            per_out,
            &what,
        );
        // f16 partials stay f32: into f32 within the bound of the f16 values' sum, into f16
        // that rounded once (within half an f16 ulp more).
        let dh: Vec<f16> = df.iter().map(|&v| f16::from_f32(v)).collect();
        let wide: Vec<f32> = dh.iter().map(|v| v.to_f32()).collect();
        let want = ref_f64(Operation::Add, &wide, shape, dims);
        let (bh, _, _) = spread_run(&dh, shape, dims, DType::F32, (64, grain), false, 2);
        let got: Vec<f32> = bh.iter().map(|&b| f32::from_bits(b)).collect();
        check_f32(
            Operation::Add,
            &got,
            &want,
            per_out,
            &format!("f16→f32 {what}"),
        );
        let (bh, _, _) = spread_run(&dh, shape, dims, DType::F16, (64, grain), false, 2);
        for (&b, &(w, mag)) in bh.iter().zip(&want) {
            let got = f64::from(f16::from_bits(b as u16).to_f32());
            let bound = (per_out as f64 + 1.0) * 2f64.powi(-23) * mag + w.abs() * 2f64.powi(-11);
            assert!((got - w).abs() <= bound, "f16→f16 {what}: {got} vs {w}");
        }
        let (bi, _, _) = spread_run(&di, shape, dims, DType::I32, (64, grain), false, 2);
        let want = host_reduce(&di, shape, dims, 0i32, i32::wrapping_add);
        assert_eq!(
            bi,
            want.iter().map(|&v| v as u32).collect::<Vec<_>>(),
            "i32 {what}"
        );
        let (bu, _, _) = spread_run(&du, shape, dims, DType::U32, (64, grain), false, 1);
        assert_eq!(
            bu,
            host_reduce(&du, shape, dims, 0u32, u32::wrapping_add),
            "u32 {what}"
        );
    }
}

/// The multi-stage plan's modelled cycles are lower than the two-stage plan's for reductions
/// of many tiles to few outputs; both give results within the bound.
#[test]
fn multi_stage_plan_models_fewer_cycles() {
    let mut r = Rng::new(78);
    let cases: [(&[usize], &[usize], usize); 3] = [
        (&[64, 1024], &[0, 1], 1024), // to one value over 64 tiles
        (&[256, 512], &[0], 512),     // 512 outputs, partials from 256 tiles
        (&[256, 8], &[0], 8),         // 8 outputs on one tile, from 256 tiles
    ];
    for (shape, dims, grain) in cases {
        let n: usize = shape.iter().product();
        let per_out: usize = dims.iter().map(|&d| shape[d]).product();
        let df = r.f32s(n);
        let want = ref_f64(Operation::Add, &df, shape, dims);
        let tiles = 256;
        let (multi, c_multi, _) =
            spread_run(&df, shape, dims, DType::F32, (tiles, grain), false, 2);
        let (two, c_two, p) = spread_run(&df, shape, dims, DType::F32, (tiles, grain), true, 2);
        assert_eq!(
            p.phases_named("r/spread0").count(),
            0,
            "the switch is honoured"
        );
        for (b, plan) in [(multi, "multi-stage"), (two, "two-stage")] {
            let got: Vec<f32> = b.iter().map(|&b| f32::from_bits(b)).collect();
            check_f32(Operation::Add, &got, &want, per_out, plan);
        }
        assert!(
            c_multi < c_two,
            "{shape:?} over {dims:?}: multi-stage {c_multi} cycles, two-stage {c_two}"
        );
        eprintln!("{shape:?} over {dims:?}: multi-stage {c_multi}, two-stage {c_two} cycles");
    }
}

/// Every operation through the intermediate cross-tile stages (a `[64, 256]` tensor over
/// both axes on 64 tiles): max/min with a NaN and infinities, products near 1, sums of
/// squares, logical and/or, a scale and an update; against the host.
#[test]
fn multi_stage_plan_every_operation() {
    let (shape, dims) = ([64usize, 256], [0usize, 1]);
    let mut r = Rng::new(79);
    let n = 64 * 256;
    let mut df: Vec<f32> = (0..n).map(|_| r.f32_in(0.999, 1.001)).collect();
    let base = df.clone();
    let mut g = Graph::new(&Target::custom(64, 256 * 1024));
    let x = input(&mut g, "x", &shape, &df, 256);
    df[5000] = f32::INFINITY;
    df[9000] = f32::NEG_INFINITY;
    let xi = input(&mut g, "xi", &shape, &df, 256);
    df[12000] = f32::NAN;
    let xn = input(&mut g, "xn", &shape, &df, 256);
    let bools: Vec<bool> = (0..n).map(|i| i != 7777).collect();
    let b = input(&mut g, "b", &shape, &bools, 256);
    let acc = g.add_variable(DType::F32, &[], "acc");
    g.set_tile_mapping(&acc, 9).unwrap();
    g.set_initial_value(&acc, &[10.0f32]).unwrap();
    let mut prog = Vec::new();
    let mut names = Vec::new();
    let ops = [
        ("mul", &x, Operation::Mul),
        ("sq", &x, Operation::SquareAdd),
        ("max", &xi, Operation::Max),
        ("min", &xi, Operation::Min),
        ("maxnan", &xn, Operation::Max),
        ("minnan", &xn, Operation::Min),
    ];
    for (name, t, op) in ops {
        let o = reduce(&mut g, t, DType::F32, &dims, op, &mut prog, name).unwrap();
        g.create_host_read(name, &o).unwrap();
        names.push(name);
    }
    for (name, op) in [("and", Operation::LogicalAnd), ("or", Operation::LogicalOr)] {
        let o = reduce(&mut g, &b, DType::Bool, &dims, op, &mut prog, name).unwrap();
        g.create_host_read(name, &o).unwrap();
    }
    let p = ReduceParams::new(Operation::Add)
        .with_scale(0.5)
        .with_update(true);
    reduce_with_output(&mut g, &x, &acc, &dims, p, &mut prog, "upd").unwrap();
    g.create_host_read("acc", &acc).unwrap();
    let exe = poplar::compile(&g, &[Program::seq(prog)], &Default::default()).unwrap();
    let mut e = poplar::Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
    e.enable_profiling(poplar::profile::ProfileOptions::default());
    e.run(0).unwrap();
    let prof = e.profile().unwrap();
    for name in ["mul", "maxnan", "and", "upd"] {
        let cs = format!("{name}/spread0");
        assert!(
            prof.phases_named(&cs).count() > 0,
            "{name}: no intermediate stage"
        );
    }
    let prod: f64 = base.iter().map(|&v| f64::from(v)).product();
    let sq: f64 = base.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
    let sum: f64 = base.iter().map(|&v| f64::from(v)).sum();
    let read = |name: &str| f64::from(e.read_tensor::<f32>(name).unwrap()[0]);
    let eps = (n as f64 + 1.0) * f64::from(f32::EPSILON);
    assert!((read("mul") - prod).abs() <= eps * prod, "mul");
    assert!((read("sq") - sq).abs() <= eps * sq, "square add");
    assert_eq!(read("max"), f64::INFINITY);
    assert_eq!(read("min"), f64::NEG_INFINITY);
    assert!(read("maxnan").is_nan() && read("minnan").is_nan());
    assert_eq!(e.read_tensor::<bool>("and").unwrap(), [false]);
    assert_eq!(e.read_tensor::<bool>("or").unwrap(), [true]);
    assert!(
        (read("acc") - (10.0 + 0.5 * sum)).abs() <= eps * sum,
        "update"
    );
}
