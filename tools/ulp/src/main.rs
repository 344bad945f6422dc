//! `ulp`: the ULP harness (see the crate documentation and README.md).

use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;

use ulp::{sweep_division, sweep_unary, unary_functions, Sweep, ALL, BUCKETS};

#[derive(Parser)]
#[command(
    name = "ulp",
    about = "Every f32 input of exp, expm1, ln, sqrt (std), the TP06 kernel's exp, exp2 and ln and sampled divisions against f64, with and without subnormal flushing"
)]
struct Args {
    /// Functions: exp, expm1, ln, sqrt, tp06-exp, tp06-exp2, tp06-ln, div, the popops-*
    /// functions (popops-sqrt, popops-erf, …), or `popops` for all of those (comma-separated).
    #[arg(
        long,
        default_value = "exp,expm1,ln,sqrt,tp06-exp,tp06-exp2,tp06-ln,div"
    )]
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
    /// Instruction-set levels to run the kernel maths at: `active` (the process's level:
    /// `POPLAR_ISA`, else the host's best), `all` (every level this host supports), or a
    /// comma-separated list of baseline, avx2, avx512. With several, the sweeps of each level
    /// are followed by a check that every level found the same maximum error.
    #[arg(long, default_value = "active")]
    isa: String,
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
        "{:<9} {:<6} {:<8} {:>11} inputs  max {:>3} ulp  {:>6.1} s  [{}]{outside}",
        s.function,
        s.mode,
        s.isa,
        s.inputs,
        s.max_ulp,
        s.seconds,
        hist.join(", ")
    );
    for (bits, x, got, want) in s.worst.iter().take(3) {
        println!("            at x = {x:e} (0x{bits:08x}): got {got:e}, expected {want:e}");
    }
}

/// The levels `--isa` names.
fn levels(arg: &str) -> Result<Vec<poplar_core::isa::IsaLevel>> {
    Ok(match arg.trim() {
        "active" => vec![poplar_core::isa::active()],
        "all" => poplar_core::isa::supported(),
        list => list
            .split(',')
            .map(|l| {
                let level: poplar_core::isa::IsaLevel = l.parse()?;
                Ok(level)
            })
            .collect::<Result<_>>()?,
    })
}

/// With sweeps at several levels: whether each function and mode found the same maximum
/// error (and the same histogram) at every level.
fn same_at_every_level(sweeps: &[Sweep]) {
    let mut keys: Vec<(&str, &str)> = sweeps
        .iter()
        .map(|s| (s.function.as_str(), s.mode.as_str()))
        .collect();
    keys.sort();
    keys.dedup();
    for (f, m) in keys {
        let runs: Vec<&Sweep> = sweeps
            .iter()
            .filter(|s| s.function == f && s.mode == m)
            .collect();
        if runs.len() < 2 {
            continue;
        }
        let same = runs
            .iter()
            .all(|s| s.max_ulp == runs[0].max_ulp && s.histogram == runs[0].histogram);
        let levels: Vec<&str> = runs.iter().map(|s| s.isa.as_str()).collect();
        println!(
            "{f:<9} {m:<6} at {}: {}",
            levels.join(", "),
            if same {
                "the same maximum error and histogram at every level"
            } else {
                "DIFFERENT results between levels"
            }
        );
    }
}

/// The `--functions` list with `popops` replaced by every popops function's name.
fn expand(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim) {
        if name == "popops" {
            out.extend(
                ulp::popops_functions()
                    .iter()
                    .map(|(u, _)| u.name.to_string()),
            );
        } else {
            out.push(name.to_string());
        }
    }
    out
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
        poplar_core::fp::hardware_flush()
    );
    for level in levels(&args.isa)? {
        poplar_core::isa::set_active(level)?;
        for name in expand(&args.functions) {
            for &flush in &modes {
                let s = if name == "div" {
                    sweep_division(args.div_samples, args.seed, flush, ulp::f32_div)
                } else {
                    let u = all
                        .iter()
                        .find(|u| u.name == name.as_str())
                        .with_context(|| {
                            let known: Vec<&str> = all.iter().map(|u| u.name).collect();
                            format!("unknown function `{name}`: {}, div", known.join(", "))
                        })?;
                    sweep_unary(u, ALL, flush)
                };
                print(&s);
                sweeps.push(s);
            }
        }
    }
    same_at_every_level(&sweeps);
    println!("total {:.1} s", t0.elapsed().as_secs_f64());
    if let Some(path) = &args.json {
        app_support::output::write_atomic(path, serde_json::to_string_pretty(&sweeps)?)?;
    }
    Ok(())
}
