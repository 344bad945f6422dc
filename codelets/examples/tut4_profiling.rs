//! Tutorial 4: profiling — memory per tile, the cycle model, and a profiled run; and the six
//! worker contexts of a tile: the same add as one vertex per tile and split over the workers.
//!
//! Run: `cargo run -p codelets --example tut4_profiling`
use poplar::profile::{CycleModel, MemoryReport, ProfileOptions};
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    codelets::link();
    let target = Target::custom(4, 256 * 1024);
    let mut graph = Graph::new(&target);
    let n = 4000;
    let x = graph.add_variable(DType::F32, &[n], "x");
    let y = graph.add_variable(DType::F32, &[n], "y");
    let s = graph.add_variable(DType::F32, &[1], "s");
    graph.map_linearly(&x, 64)?;
    // y is mapped in larger blocks than x, so `y = x + x` needs an exchange.
    graph.map_linearly(&y, 1500)?;
    graph.set_tile_mapping(&s, 0)?;
    graph.create_host_write("x", &x)?;
    graph.create_host_read("s", &s)?;

    // The same add twice. First one single-worker vertex per tile region of y: each tile's
    // whole share runs on one of its six worker contexts.
    let one = graph.add_compute_set("y = x + x, 1 worker");
    for (tile, range) in popops::mapped_regions(&graph, &y, "y")? {
        let v = graph.add_vertex(one, "Add<float>")?;
        graph.connect(v, "in1", &x.slice(range.clone())?)?;
        graph.connect(v, "in2", &x.slice(range.clone())?)?;
        graph.connect(v, "out", &y.slice(range)?)?;
        graph.set_tile_mapping(v, tile)?;
    }
    // Then as `popops::add` builds it: each tile's elements split over its six workers.
    let six = graph.add_compute_set("y = x + x");
    popops::add(&mut graph, six, &x, &x, &y)?;
    let sum = popops::reduce_sum(&mut graph, &y, &s, "sum y")?;
    let program = Program::labelled(
        "main",
        vec![
            Program::labelled("one worker", vec![Program::execute(one)]),
            Program::labelled("six workers", vec![Program::execute(six)]),
            sum,
        ],
    );
    let exe = compile(&graph, &[program], &CompileOptions::default())?;

    // Memory: always-live and temporary bytes per tile, by category and item.
    let memory = MemoryReport::from_executable(&exe);
    print!("{}", memory.text(2));

    // The cycle model alone: what one execution of each phase costs, per tile.
    let model = CycleModel::new(&exe);
    print!("{}", model.text_summary());

    // A profiled run: the engine records which phases ran; the profile adds up their cycles.
    let mut engine = Engine::new(&exe, EngineOptions::default())?;
    engine.enable_profiling(ProfileOptions::default());
    let xs: Vec<f32> = (0..n).map(|i| (i % 10) as f32).collect();
    engine.write_tensor("x", &xs)?;
    engine.run(0)?;
    let profile = engine.profile().expect("profiling is on");
    print!("{}", profile.text_summary());
    for l in profile.summary_by_label() {
        println!(
            "label {}: compute {} + exchange {} + sync {} = {} cycles",
            l.name, l.compute, l.exchange, l.sync, l.total
        );
    }

    // Files for the `poplar` tool: `poplar profile`, `poplar trace`, `poplar plot`.
    let dir = std::env::temp_dir().join("poplar-tut4");
    std::fs::create_dir_all(&dir)?;
    exe.save(dir.join("tut4.popexe"))?;
    profile.save(dir.join("tut4.profile.json"))?;
    let trace = profile.chrome_trace().to_string();
    std::fs::write(dir.join("tut4.trace.json"), trace)?;
    println!("saved {}", dir.display());

    // The lesson of the six workers: the same add, the same exchange, six times the compute.
    let compute = |name: &str| profile.label(name).map_or(0, |l| l.elapsed.compute);
    let (one_worker, six_workers) = (compute("one worker"), compute("six workers"));
    let ratio = one_worker as f64 / six_workers.max(1) as f64;
    println!("y = x + x: one vertex per tile {one_worker} cycles, over six workers {six_workers} cycles ({ratio:.2}x)");

    let got = engine.read_tensor::<f32>("s")?[0];
    let want: f32 = xs.iter().map(|v| v + v).sum();
    println!("sum = {got} (host {want})");
    // Small integers: every partial sum is exact in f32. The one label spans the whole run.
    let main = profile.label("main").map(|l| l.elapsed.total());
    let fits = memory.total.max <= memory.bytes_per_tile;
    if got != want || main != Some(profile.total_cycles()) || !fits || profile.runs != 1 {
        eprintln!("tut4: MISMATCH against the host computation or the profile");
        std::process::exit(1);
    }
    // A sixth of the issue slots per context: close to 6x (the per-vertex overheads differ).
    if !(5.0..=6.5).contains(&ratio) {
        eprintln!("tut4: one worker against six: {ratio:.2}x, expected about 6x");
        std::process::exit(1);
    }
    println!("tut4: OK");
    Ok(())
}
