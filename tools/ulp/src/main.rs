//! `ulp`: the ULP harness (see the crate documentation and README.md).

use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;

use ulp::{sweep_division, sweep_unary, unary_functions, Sweep, ALL, BUCKETS};

#[derive(Parser)]
#[command(
    name = "ulp",
    about = "Every f32 input of exp, expm1, ln, sqrt (std and the TP06 kernel's) and sampled divisions against f64, with and without subnormal flushing"
)]
struct Args {
    /// Functions: exp, expm1, ln, sqrt, tp06-exp, tp06-ln, div (comma-separated).
    #[arg(long, default_value = "exp,expm1,ln,sqrt,tp06-exp,tp06-ln,div")]
    functions: String,
    /// Modes: ieee, flush (comma-separated).
    #[arg(long, default_value = "ieee,flush")]
    modes: String,
    /// Sampled division pairs.
    #[arg(long, default_value_t = 1_000_000_000)]
    div_samples: u64,
    /// Seed of the division samples.
    #[arg(long, default_value_t = 2023)]
    seed: u64,
    /// Threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Also write every sweep as JSON to this file (checked before the sweeps: refused if it
    /// exists, unless --force).
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Replace the --json file if it exists.
    #[arg(long)]
    force: bool,
}

fn print(s: &Sweep) {
    let hist: Vec<String> = BUCKETS
        .iter()
        .zip(s.histogram)
        .filter(|(_, n)| *n > 0)
        .map(|(b, n)| format!("{b}: {n}"))
        .collect();
    let outside = if s.outside_domain > 0 {
        format!("  ({} outside its domain)", s.outside_domain)
    } else {
        String::new()
    };
    println!(
        "{:<9} {:<6} {:>11} inputs  max {:>3} ulp  {:>6.1} s  [{}]{outside}",
        s.function,
        s.mode,
        s.inputs,
        s.max_ulp,
        s.seconds,
        hist.join(", ")
    );
    for (bits, x, got, want) in s.worst.iter().take(3) {
        println!("            at x = {x:e} (0x{bits:08x}): got {got:e}, expected {want:e}");
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    // Before the sweeps (minutes each): an existing file is refused unless --force, and this
    // program's own file always.
    if let Some(path) = &args.json {
        let me = std::env::current_exe().ok();
        let inputs: Vec<&std::path::Path> = me.iter().map(|p| p.as_path()).collect();
        app_support::output::check_output_file(path, args.force, &inputs)?;
    }
    if let Some(t) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .context("setting the thread count")?;
    }
    let modes: Vec<bool> = args
        .modes
        .split(',')
        .map(|m| match m.trim() {
            "ieee" => Ok(false),
            "flush" => Ok(true),
            other => bail!("unknown mode `{other}`: ieee or flush"),
        })
        .collect::<Result<_>>()?;
    let all = unary_functions();
    let mut sweeps = Vec::new();
    let t0 = Instant::now();
    println!(
        "ulp: {} thread(s), hardware flush modes: {}",
        rayon::current_num_threads(),
        poplar::fp::hardware_flush()
    );
    for name in args.functions.split(',').map(str::trim) {
        for &flush in &modes {
            let s = if name == "div" {
                sweep_division(args.div_samples, args.seed, flush, ulp::f32_div)
            } else {
                let u = all.iter().find(|u| u.name == name).with_context(|| {
                    format!(
                        "unknown function `{name}`: exp, expm1, ln, sqrt, tp06-exp, tp06-ln, div"
                    )
                })?;
                sweep_unary(u, ALL, flush)
            };
            print(&s);
            sweeps.push(s);
        }
    }
    println!("total {:.1} s", t0.elapsed().as_secs_f64());
    if let Some(path) = &args.json {
        app_support::output::write_atomic(path, serde_json::to_string_pretty(&sweeps)?)?;
    }
    Ok(())
}
