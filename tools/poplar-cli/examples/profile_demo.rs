//! Builds a small two-chip stencil with uneven tiles, runs it with profiling and saves the
//! executable, the profile and the Chrome trace, for `poplar memory|profile|plot|trace`.
//!
//! Run: `cargo run -p poplar-cli --example profile_demo -- OUT_DIR [CHIPS] [TILES_PER_CHIP]`
//! (default 2 chips of 32 tiles).
use poplar::profile::ProfileOptions;
use poplar::{
    compile, concat, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    codelets::link();
    let args: Vec<String> = std::env::args().collect();
    let out = std::path::PathBuf::from(args.get(1).map_or("prof", String::as_str));
    std::fs::create_dir_all(&out)?;
    let chips: u32 = args.get(2).map_or(Ok(2), |a| a.parse())?;
    let mut target = Target::gc200_multi(chips);
    target.tiles_per_ipu = args.get(3).map_or(Ok(32), |a| a.parse())?;
    let tiles = target.num_tiles() as usize;
    // Smaller blocks on large targets.
    let base = if tiles <= 256 { 1000 } else { 100 };
    let mut g = Graph::new(&target);
    // Uneven blocks: tile t holds base * (1 + (t % 5) / 4) elements.
    let sizes: Vec<usize> = (0..tiles).map(|t| base + base / 4 * (t % 5)).collect();
    let n: usize = sizes.iter().sum();
    let u = g.add_variable(DType::F32, &[n], "u");
    let w = g.add_variable(DType::F32, &[n], "w");
    let half = g.add_variable(DType::F32, &[n], "half");
    let mut s = 0;
    for (t, &len) in sizes.iter().enumerate() {
        for v in [&u, &w, &half] {
            g.set_tile_mapping(&v.slice(s..s + len)?, t as u32)?;
        }
        s += len;
    }
    g.create_host_write("u", &u)?;
    g.create_host_write("half", &half)?;
    g.create_host_read("u_out", &u)?;
    // PDE: w = u + u shifted by 300 (reads the neighbour tile's data, across the chip
    // boundary at tiles 31 -> 32 and 63 -> 0). ODE: u = 0.5 * w (local).
    let k = 300;
    let shifted = concat(&[u.slice(k..n)?, u.slice(0..k)?])?;
    let pde = g.add_compute_set("pde");
    popops::add(&mut g, pde, &u, &shifted, &w)?;
    let ode = g.add_compute_set("ode");
    popops::mul(&mut g, ode, &w, &half, &u)?;
    let step = Program::seq(vec![
        Program::labelled("PDE", vec![Program::execute(pde)]),
        Program::labelled("ODE", vec![Program::execute(ode)]),
    ]);
    let program = Program::labelled("main", vec![Program::repeat(20, step)]);
    let exe = compile(&g, &[program], &CompileOptions::default())?;
    exe.save(out.join("demo.popexe"))?;

    let mut engine = Engine::new(&exe, EngineOptions::default())?;
    engine.enable_profiling(ProfileOptions::default());
    let u0: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    engine.write_tensor("u", &u0)?;
    engine.write_tensor("half", &vec![0.5f32; n])?;
    engine.run(0)?;
    // Host reference of the same 20 steps.
    let mut r = u0;
    for _ in 0..20 {
        r = (0..n).map(|i| (r[i] + r[(i + k) % n]) * 0.5).collect();
    }
    assert_eq!(
        engine.read_tensor::<f32>("u_out")?,
        r,
        "device and host differ"
    );
    let p = engine.profile().expect("profiling is on");
    print!("{}", p.text_summary());
    p.save(out.join("demo.profile.json"))?;
    std::fs::write(
        out.join("demo.trace.json"),
        serde_json::to_string(&p.chrome_trace())?,
    )?;
    println!(
        "saved {}/demo.{{popexe,profile.json,trace.json}}",
        out.display()
    );
    Ok(())
}
