//! Tutorial 8 (element-wise part): popops' element-wise operations, broadcasting, casts and a
//! fused expression with `popops::map`, a reduction over an axis and an arg-max, checked
//! against the host; and the cycles the fusion saves, from the profile.
//!
//! `cargo run -p codelets --example tut8_popops_elementwise`

use poplar::profile::ProfileOptions;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
use popops::elementwise as ew;
use popops::expr::{select, BinaryOpType, UnaryOpType, _1, _2, _3};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    codelets::link();
    let target = Target::custom(8, 256 * 1024);
    let mut graph = Graph::new(&target);

    // Inputs: a [rows, cols] matrix x, a bias row b of [cols] and a scalar gain.
    let (rows, cols) = (64, 48);
    let xs: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 37) % 101) as f32 / 25.0 - 2.0)
        .collect();
    let bs: Vec<f32> = (0..cols).map(|j| j as f32 / cols as f32 - 0.5).collect();
    let x = graph.add_variable(DType::F32, &[rows, cols], "x");
    let b = graph.add_variable(DType::F32, &[cols], "b");
    let gain = graph.add_variable(DType::F32, &[], "gain");
    graph.map_linearly(&x, 2)?;
    graph.map_linearly(&b, 2)?;
    graph.set_tile_mapping(&gain, 0)?;
    graph.set_initial_value(&x, &xs)?;
    graph.set_initial_value(&b, &bs)?;
    graph.set_initial_value(&gain, &[1.5f32])?;

    // Single operations: one call each, a new tensor each, broadcasting as numpy does.
    let zero = graph.add_constant(&[], &[0.0f32], "zero")?;
    graph.set_tile_mapping(&zero, 1)?;
    let mut ops = Vec::new();
    let xb = ew::binary(&mut graph, BinaryOpType::Add, &x, &b, &mut ops, "x+b")?; // [64, 48]
    let t = ew::unary(&mut graph, UnaryOpType::Tanh, &xb, &mut ops, "tanh")?;
    let y_ops = ew::binary(&mut graph, BinaryOpType::Mul, &t, &gain, &mut ops, "y")?;
    let pos = ew::binary(&mut graph, BinaryOpType::Gt, &y_ops, &zero, &mut ops, "y>0")?; // bool
    let relu_ops = ew::select(&mut graph, &y_ops, &zero, &pos, &mut ops, "relu")?;
    // A cast, in a program of its own: how many elements are positive, per element.
    let mut counting = Vec::new();
    let count = popops::cast::cast(&mut graph, &pos, DType::I32, &mut counting, "count")?;

    // The same y as one fused expression: one vertex per worker piece, no temporaries.
    let mut fused = Vec::new();
    let y = popops::map(
        &mut graph,
        &((_1 + _2).tanh() * _3),
        &[&x, &b, &gain],
        &mut fused,
        "y",
    )?;
    // A ReLU written with select, in place: y = y > 0 ? y : 0.
    popops::map_in_place(
        &mut graph,
        &select(_1, 0.0, _1.gt(0.0)),
        &[&y],
        &mut fused,
        "relu",
    )?;

    // Reductions, after the fused program: the ReLU's column sums (over axis 0, in two
    // stages across the tiles) and each row's arg-max (the index of its first largest value).
    let col_sum = popops::reduce(
        &mut graph,
        &y,
        DType::F32,
        &[0],
        popops::Operation::Add,
        &mut counting,
        "col_sum",
    )?;
    let row_argmax = popops::arg_max(&mut graph, &y, 1, &mut counting, "row_argmax")?;

    graph.create_host_read("col_sum", &col_sum)?;
    graph.create_host_read("row_argmax", &row_argmax)?;
    graph.create_host_read("relu_ops", &relu_ops)?;
    graph.create_host_read("count", &count)?;
    graph.create_host_read("y", &y)?;
    let programs = [
        Program::seq(ops),
        Program::seq(fused),
        Program::seq(counting),
    ];
    let exe = compile(&graph, &programs, &CompileOptions::default())?;
    let mut engine = Engine::new(&exe, EngineOptions::default())?;
    engine.enable_profiling(ProfileOptions::default());
    engine.run(0)?;
    let ops_cycles = engine.take_profile().expect("profiling").total_cycles();
    engine.run(1)?;
    let fused_cycles = engine.take_profile().expect("profiling").total_cycles();
    engine.run(2)?;

    // The host computes the same, in the same order of operations.
    let host_y: Vec<f32> = (0..rows * cols)
        .map(|i| (xs[i] + bs[i % cols]).tanh() * 1.5)
        .collect();
    let host_count: Vec<i32> = host_y.iter().map(|&v| i32::from(v > 0.0)).collect();
    let host_relu: Vec<f32> = host_y
        .iter()
        .map(|&v| if v > 0.0 { v } else { 0.0 })
        .collect();
    // Column sums: the device groups the additions by tile, so compare within a bound of
    // (rows + 1) rounding errors of the sum of magnitudes (the values are non-negative).
    let sums_ok = engine
        .read_tensor::<f32>("col_sum")?
        .iter()
        .enumerate()
        .all(|(j, &got)| {
            let want: f64 = (0..rows).map(|i| f64::from(host_relu[i * cols + j])).sum();
            (f64::from(got) - want).abs() <= (rows as f64 + 1.0) * 1.2e-7 * want
        });
    let host_argmax: Vec<u32> = host_relu
        .chunks(cols)
        .map(|row| {
            let mut best = 0;
            for (k, &v) in row.iter().enumerate() {
                if v > row[best] {
                    best = k;
                }
            }
            best as u32
        })
        .collect();
    let argmax_ok = engine.read_tensor::<u32>("row_argmax")? == host_argmax;
    let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits());
    let ok = same(&engine.read_tensor::<f32>("relu_ops")?, &host_relu)
        && same(&engine.read_tensor::<f32>("y")?, &host_relu)
        && engine.read_tensor::<i32>("count")? == host_count
        && sums_ok
        && argmax_ok;
    println!("op by op (5 compute sets): {ops_cycles} cycles");
    println!("fused map + in-place relu (2 compute sets): {fused_cycles} cycles");
    if !ok || fused_cycles >= ops_cycles {
        eprintln!("tut8 (element-wise): MISMATCH against the host, or the fusion saved nothing");
        std::process::exit(1);
    }
    println!("tut8 (element-wise): OK");
    Ok(())
}
