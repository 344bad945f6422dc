//! A sparse fully-connected layer, end to end: plan, build Fwd, GradA and GradW once, run them
//! for a random pattern and for a deliberately bad one (the first rows of `W` dense) on the
//! same engine, check them against host products, and write everything as `.npy` files that
//! NumPy reads:
//!
//! ```text
//! cargo run --release -p popsparse --example sparse_fc -- [--size 1024] [--batch 16]
//!     [--density 0.0625] [--block 1] [--out out/sparse-fc] [--force]
//! ```
//!
//! Files: `x.npy` `[Y, Z]`, `yg.npy` `[X, Z]`, and per pattern (`random_`, `bad_`): `rows.npy`,
//! `cols.npy` (int64) and `vals.npy` (the COO pattern, element by element), `y.npy`,
//! `xg.npy`, `wg.npy` (GradW per non-zero, aligned with the COO). In NumPy:
//! `W = np.zeros((X, Y)); W[rows, cols] = vals; y ≈ W @ x; xg ≈ W.T @ yg;
//! wg ≈ (yg @ x.T)[rows, cols]`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use app_support::output::RunFiles;
use poplar::profile::ProfileOptions;
use poplar::rand::SplitMix64;
use poplar::{compile, CompileOptions, Engine, EngineOptions, Graph, Target};
use popsparse::{FcOptions, FcParams};

struct Args {
    size: usize,
    batch: usize,
    density: f64,
    block: usize,
    out: PathBuf,
    force: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        size: 1024,
        batch: 16,
        density: 1.0 / 16.0,
        block: 1,
        out: PathBuf::from("out/sparse-fc"),
        force: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut val = || it.next().ok_or(format!("{k} needs a value"));
        match k.as_str() {
            "--size" => a.size = val()?.parse().map_err(|e| format!("--size: {e}"))?,
            "--batch" => a.batch = val()?.parse().map_err(|e| format!("--batch: {e}"))?,
            "--density" => a.density = val()?.parse().map_err(|e| format!("--density: {e}"))?,
            "--block" => a.block = val()?.parse().map_err(|e| format!("--block: {e}"))?,
            "--out" => a.out = PathBuf::from(val()?),
            "--force" => a.force = true,
            other => return Err(format!("unknown option {other}")),
        }
    }
    check_density(a.size, a.density)?;
    Ok(a)
}

/// A density in (0, 1] that gives at least one non-zero of the `size × size` weights.
fn check_density(size: usize, density: f64) -> Result<(), String> {
    if !(density > 0.0 && density <= 1.0) {
        return Err(format!("--density {density} must be in (0, 1]"));
    }
    let elements = (size as f64) * (size as f64);
    if elements * density < 1.0 {
        return Err(format!(
            "--density {density} gives {:.3e} non-zeros of the {size} × {size} weights, less \
             than one: the smallest useful density is 1/{elements} = {:e}",
            elements * density,
            1.0 / elements
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_density;

    #[test]
    fn a_density_giving_no_non_zero_is_refused() {
        let e = check_density(1024, 1e-300).unwrap_err();
        assert!(
            e.contains("--density") && e.contains("smallest useful density"),
            "{e}"
        );
        assert!(check_density(1024, 1.0 / (1024.0 * 1024.0)).is_ok());
        assert!(check_density(1024, 0.0).is_err());
        assert!(check_density(1024, 1.5).is_err());
    }
}

/// A value in [−1, 1] in steps of 0.001.
fn unit(rng: &mut SplitMix64) -> f32 {
    rng.below(2001) as f32 / 1000.0 - 1.0
}

/// The files the example writes (and, with --force, replaces) in its output folder.
const RESULT_FILES: RunFiles = RunFiles::new(&[
    "x.npy",
    "yg.npy",
    "random_rows.npy",
    "random_cols.npy",
    "random_vals.npy",
    "random_y.npy",
    "random_xg.npy",
    "random_wg.npy",
    "bad_rows.npy",
    "bad_cols.npy",
    "bad_vals.npy",
    "bad_y.npy",
    "bad_xg.npy",
    "bad_wg.npy",
]);

/// Writes `dir/name` as `.npy`, atomically (app-support: a temporary file, synced, renamed; a
/// failed write leaves no temporary and no truncated file).
fn npy<T: npyz::AutoSerialize + Copy>(
    dir: &Path,
    name: &str,
    shape: &[u64],
    data: &[T],
) -> Result<(), app_support::output::OutputError> {
    app_support::npy::write(&dir.join(name), shape, npyz::Order::C, data)
}

fn main() {
    if let Err(e) = run() {
        // The error and its causes (an unwritable file names the file, then the I/O error).
        let mut msg = e.to_string();
        let mut cause = e.source();
        while let Some(c) = cause {
            msg += &format!(": {c}");
            cause = c.source();
        }
        eprintln!("error: {msg}");
        std::process::exit(1);
    }
}

// Long: an example read top to bottom in the order it prints (plan, build, run, baseline).
fn run() -> Result<(), Box<dyn std::error::Error>> {
    popsparse::link();
    let a = args()?;
    // The output folder is checked before any work and locked for the run; earlier results
    // are kept unless --force, which removes them (only the files this example writes).
    let _output_lock = RESULT_FILES.prepare(&a.out, a.force)?;
    let target = Target::gc200();
    let (m, k, z, b) = (a.size, a.size, a.batch, a.block);
    let params = FcParams::with_density(m, k, z, a.density).with_block(b);
    let plan = popsparse::plan(&target, params, &FcOptions::default())?;
    println!("{plan}");
    let t = Instant::now();
    let mut g = Graph::new(&target);
    let w = popsparse::create_weights(&mut g, &plan, "W")?;
    let x = popsparse::create_input(&mut g, &plan, "X")?;
    let yg = popsparse::create_output(&mut g, &plan, "Yg")?;
    g.create_host_write("x", &x)?;
    g.create_host_write("yg", &yg)?;
    let (y, fwd) = popsparse::fwd(&mut g, &w, &x, &plan, "fwd")?;
    let (xg, ga) = popsparse::grad_a(&mut g, &w, &yg, &plan, "grada")?;
    let (wg, gw) = popsparse::grad_w(&mut g, &w, &x, &yg, &plan, "gradw")?;
    g.create_host_read("y", &y)?;
    g.create_host_read("xg", &xg)?;
    g.create_host_read("wg", &wg)?;
    let exe = compile(&g, &[fwd, ga, gw], &CompileOptions::default())?;
    let mut mem: Vec<u32> = exe.tiles.iter().map(|t| t.memory_bytes).collect();
    mem.sort_unstable();
    println!(
        "compiled in {:.2} s; memory per tile: max {} B, median {} B of {} B",
        t.elapsed().as_secs_f64(),
        mem.last().copied().unwrap_or(0),
        mem[mem.len() / 2],
        target.bytes_per_tile
    );
    let mut e = Engine::new(&exe, EngineOptions::default())?;
    let mut rng = SplitMix64::new(7);
    let xv: Vec<f32> = (0..k * z).map(|_| unit(&mut rng)).collect();
    let ygv: Vec<f32> = (0..m * z).map(|_| unit(&mut rng)).collect();
    e.write_tensor("x", &xv)?;
    e.write_tensor("yg", &ygv)?;
    npy(&a.out, "x.npy", &[k as u64, z as u64], &xv)?;
    npy(&a.out, "yg.npy", &[m as u64, z as u64], &ygv)?;

    // Patterns as blocks; the bad one fills the first rows of W.
    let nb = params.nonzero_blocks();
    let (br, bc) = (m / b, k / b);
    let mut seen = std::collections::HashSet::new();
    let mut random = Vec::new();
    while random.len() < nb {
        let (r, c) = (
            (rng.next_u64() as usize) % br * b,
            (rng.next_u64() as usize) % bc * b,
        );
        if seen.insert((r, c)) {
            random.push((
                r,
                c,
                (0..b * b).map(|_| unit(&mut rng)).collect::<Vec<f32>>(),
            ));
        }
    }
    let bad: Vec<_> = (0..nb)
        .map(|i| {
            (
                i / bc * b,
                i % bc * b,
                (0..b * b).map(|_| unit(&mut rng)).collect::<Vec<f32>>(),
            )
        })
        .collect();
    let dense = poplin::plan(
        &target,
        poplin::MatMulParams {
            groups: 1,
            m,
            k,
            n: z,
        },
        &poplin::MatMulOptions::default(),
    )
    .ok()
    .map(|p| p.estimate.total());
    for (name, blocks) in [("random", &random), ("bad", &bad)] {
        let refs: Vec<(usize, usize, &[f32])> =
            blocks.iter().map(|(r, c, v)| (*r, *c, &v[..])).collect();
        let enc = popsparse::encode_blocks(&plan, &refs)?;
        popsparse::write_encoded(&mut e, "W", &plan, &enc)?;
        println!(
            "\n== {name} pattern: {} non-zero blocks, {} spilled, {} propagation steps",
            blocks.len(),
            enc.spilled,
            enc.steps
        );
        let mut fwd_cycles = 0;
        for (prog, pass) in ["Fwd", "GradA", "GradW"].iter().enumerate() {
            e.enable_profiling(ProfileOptions::default());
            let t = Instant::now();
            e.run(prog)?;
            let host = t.elapsed().as_secs_f64();
            let prof = e.profile().expect("profiling on");
            let c = prof.total_cycles();
            if prog == 0 {
                fwd_cycles = c;
            }
            let phases: Vec<String> = prof
                .summary_by_label()
                .iter()
                .map(|l| format!("{} {}", l.name, l.total))
                .collect();
            println!(
                "  {pass:<5}: modelled {c} cycles ({:.1} µs) [{}]; simulator {:.1} ms",
                c as f64 / target.clock_hz * 1e6,
                phases.join(", "),
                host * 1e3
            );
        }
        if let Some(d) = dense {
            println!(
                "  speed-up of Fwd over the planned dense matmul ({d} cycles): {:.2}x",
                d as f64 / fwd_cycles as f64
            );
        }
        // Element-wise COO, and the host check.
        let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        for (r, c, v) in blocks.iter() {
            for i in 0..b {
                for j in 0..b {
                    rows.push((r + i) as i64);
                    cols.push((c + j) as i64);
                    vals.push(v[i * b + j]);
                }
            }
        }
        let (yv, xgv, wgb) = (
            e.read_tensor::<f32>("y")?,
            e.read_tensor::<f32>("xg")?,
            e.read_tensor::<f32>("wg")?,
        );
        let wgv = popsparse::decode_grad(&plan, &enc, &wgb);
        let (mut yh, mut xh) = (vec![0.0f64; m * z], vec![0.0f64; k * z]);
        let mut worst = 0.0f64;
        for ((&r, &c), (&v, &gw)) in rows.iter().zip(&cols).zip(vals.iter().zip(&wgv)) {
            let (r, c) = (r as usize, c as usize);
            let mut gh = 0.0f64;
            for q in 0..z {
                yh[r * z + q] += f64::from(v) * f64::from(xv[c * z + q]);
                xh[c * z + q] += f64::from(v) * f64::from(ygv[r * z + q]);
                gh += f64::from(ygv[r * z + q]) * f64::from(xv[c * z + q]);
            }
            worst = worst.max((f64::from(gw) - gh).abs());
        }
        for (d, h) in yv.iter().zip(&yh).chain(xgv.iter().zip(&xh)) {
            worst = worst.max((f64::from(*d) - h).abs());
        }
        println!("  max |device − host (f64)| over Y, X', W': {worst:.3e}");
        let n = rows.len() as u64;
        npy(&a.out, &format!("{name}_rows.npy"), &[n], &rows)?;
        npy(&a.out, &format!("{name}_cols.npy"), &[n], &cols)?;
        npy(&a.out, &format!("{name}_vals.npy"), &[n], &vals)?;
        npy(&a.out, &format!("{name}_y.npy"), &[m as u64, z as u64], &yv)?;
        npy(
            &a.out,
            &format!("{name}_xg.npy"),
            &[k as u64, z as u64],
            &xgv,
        )?;
        npy(&a.out, &format!("{name}_wg.npy"), &[n], &wgv)?;
    }
    println!(
        "\nwrote the inputs, patterns and outputs as .npy files in {}",
        a.out.display()
    );
    Ok(())
}
