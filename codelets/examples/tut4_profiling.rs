//! Tutorial 4: looking inside a compiled executable — memory per tile and BSP phases.
//!
//! Run: `cargo run -p codelets --example tut4_profiling`

use codelets::ops;
use poplar::exe::Step;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};

/// Counts of the BSP steps in a lowered program.
#[derive(Default, Debug)]
struct StepCounts {
    syncs: usize,
    exchanges: usize,
    computes: usize,
}

fn count(step: &Step, c: &mut StepCounts) {
    match step {
        Step::Seq(steps) => steps.iter().for_each(|s| count(s, c)),
        Step::Label { body, .. } | Step::Repeat { body, .. } => count(body, c),
        Step::Sync(_) => c.syncs += 1,
        Step::Exchange(_) => c.exchanges += 1,
        Step::Compute(_) => c.computes += 1,
        // Control flow and host streams (not used here).
        _ => {}
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    codelets::link();
    let target = Target::custom(4, 256 * 1024);
    let mut graph = Graph::new(&target);
    let n = 4000;
    let x = graph.add_variable(DType::F32, &[n], "x");
    let y = graph.add_variable(DType::F32, &[n], "y");
    let s = graph.add_variable(DType::F32, &[1], "s");
    graph.map_linearly(&x, 64)?;
    // y is mapped in larger blocks than x, so `y = 2x` needs an exchange.
    graph.map_linearly(&y, 1500)?;
    graph.set_tile_mapping(&s, 0)?;
    graph.create_host_write("x", &x)?;
    graph.create_host_read("s", &s)?;

    let cs = graph.add_compute_set("y = x + x");
    ops::add(&mut graph, cs, &x, &x, &y)?;
    let sum = ops::reduce_sum(&mut graph, &y, &s, "sum y")?;
    let program = Program::labelled("main", vec![Program::execute(cs), sum]);
    let exe = compile(&graph, &[program], &CompileOptions::default())?;

    // Memory: every tile's total, and where it goes.
    println!("memory per tile (budget {} B):", exe.target.bytes_per_tile);
    for (i, t) in exe.tiles.iter().enumerate() {
        println!(
            "  tile {i}: {} B ({} always live, {} temporaries)",
            t.memory_bytes, t.always_live_bytes, t.temporary_bytes
        );
        for item in t.breakdown.iter().take(4) {
            println!(
                "      {:>7} B  {:?}  {}",
                item.bytes, item.category, item.name
            );
        }
    }

    // Phases: each compute set becomes exchange-in, compute, exchange-out supersteps.
    let mut steps = StepCounts::default();
    count(&exe.programs[0], &mut steps);
    println!(
        "program 0: {} compute, {} exchange, {} sync steps",
        steps.computes, steps.exchanges, steps.syncs
    );
    for c in &exe.computes {
        // A tile runs its vertices one after another; the phase lasts as long as the busiest
        // tile (cycles are the codelets' estimates).
        let busiest = c
            .tiles
            .iter()
            .map(|t| t.vertices.iter().map(|v| v.cycles).sum::<u64>())
            .max()
            .unwrap_or(0);
        let vertices: usize = c.tiles.iter().map(|t| t.vertices.len()).sum();
        println!(
            "  compute '{}': {} tiles, {vertices} vertices, busiest tile ~{busiest} cycles",
            c.name,
            c.tiles.len()
        );
    }
    for e in &exe.exchanges {
        let bytes: u64 = e.transfers.iter().map(|t| u64::from(t.bytes)).sum();
        println!(
            "  exchange '{}': {} transfers, {bytes} B",
            e.name,
            e.transfers.len()
        );
    }

    // Run it and check the result.
    let mut engine = Engine::new(&exe, EngineOptions::default())?;
    let xs: Vec<f32> = (0..n).map(|i| (i % 10) as f32).collect();
    engine.write_tensor("x", &xs)?;
    engine.run(0)?;
    let got = engine.read_tensor::<f32>("s")?[0];
    let want: f32 = xs.iter().map(|v| v + v).sum();
    println!("sum = {got} (host {want})");
    // Small integers: every partial sum is exact in f32.
    let used = exe.tiles.iter().all(|t| t.memory_bytes > 0);
    if got != want || !used || steps.computes < 2 {
        eprintln!("tut4: MISMATCH against the host computation");
        std::process::exit(1);
    }
    println!("tut4: OK");
    Ok(())
}
