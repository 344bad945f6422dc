//! Throughput of the TP06 f32 batch kernel (`tp06::step_batch`) in cell-steps per second.
//!
//! Run with `cargo bench -p cardiac --bench tp06` (optionally `-- --quick`; `-- --myokit`: only
//! the comparison with myokit's C; `-- --levels`: only the per-level rates, mixed cell models
//! against one). Reports the median of several repetitions, single-threaded
//! and with rayon over independent chunks (each chunk its own state-major array, as each tile's
//! cells would be), for 1e5 and 1e6 cells, plus the scalar f64 reference for comparison. Cells
//! are a mix of endo/mid/epi with a spread of states so that the numbers are not those of one
//! repeated input.
//!
//! **Against myokit's C.** `reference/tp06/tp06_epi_myokit.c` is myokit's `ansic-euler` export
//! of the same CellML model (epicardial cell; Rush–Larsen on m, forward Euler on the rest,
//! dt 0.02 ms, as this kernel: `reference/tp06/make_myokit_c.py` says how it is made). The
//! bench compiles it with the system C compiler (`$CC`, else `cc`) `-O3 -march=native` into a
//! temporary directory, checks that one paced cell gives the kernel's resting potential, peak
//! and APD90, and then times the same cells and steps in both (epicardial cells only, V spread
//! and stimulus as below) in interleaved rounds: the C program reports its own process CPU
//! time. Without a C compiler the comparison is skipped with the reason.
//!
//! On a shared machine the wall-clock figures measure the share of the cores this process gets:
//! with another session's load running, Linux's group fair-share scheduling was observed to give
//! this process about one core in total, so the two rayon workers ran at ≈ 50 % each and the
//! rayon wall-clock rate equalled the single-thread one. The per-CPU-second rates (from procfs)
//! show the kernel's own speed, and the projected 2-core figure is that rate times the threads.

use cardiac::mesh::CellType;
use cardiac::tp06::{self, N_STATES};
use rayon::prelude::*;
use std::hint::black_box;
use std::time::Instant;

const DT: f32 = 0.02;
/// Cells per rayon task: big enough to amortise scheduling, small enough to balance 2 cores.
const CHUNK: usize = 16_384;

/// A batch of `n` cells in the kernel's state-major layout.
struct Batch {
    n: usize,
    states: Vec<f32>,
    cell_types: Vec<u8>,
    stim: Vec<f32>,
}

impl Batch {
    fn new(n: usize, seed: usize) -> Self {
        Batch::of_types(n, seed, &[CellType::Endo, CellType::Mid, CellType::Epi])
    }

    /// Cell `i` of type `types[(i + seed) % types.len()]`.
    fn of_types(n: usize, seed: usize, types: &[CellType]) -> Self {
        let mut states = vec![0.0f32; N_STATES * n];
        let mut cell_types = vec![0u8; n];
        for i in 0..n {
            let ct = types[(i + seed) % types.len()];
            cell_types[i] = ct as u8;
            let mut y = tp06::initial_state(ct);
            // Spread V over rest, upstroke and plateau so different branches of the piecewise
            // gates are live in the same vector.
            y[0] += ((i * 7919 + seed) % 120) as f64;
            for k in 0..N_STATES {
                states[k * n + i] = y[k] as f32;
            }
        }
        let stim = (0..n)
            .map(|i| if i % 97 == 0 { 1.0 } else { 0.0 })
            .collect();
        Batch {
            n,
            states,
            cell_types,
            stim,
        }
    }

    fn step(&mut self, steps: usize) {
        for _ in 0..steps {
            tp06::step_batch(
                &mut self.states,
                self.n,
                &self.cell_types,
                &self.stim,
                -52.0,
                DT,
            );
        }
    }

    /// Starts every repetition from the same states (the V spread would otherwise relax).
    fn reset_from(&mut self, other: &Batch) {
        self.states.copy_from_slice(&other.states);
        self.cell_types.copy_from_slice(&other.cell_types);
        self.stim.copy_from_slice(&other.stim);
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// CPU time in seconds, from Linux procfs, if available: of the calling thread
/// (`/proc/thread-self/schedstat`, ns resolution) or of the whole process including rayon's
/// workers (`/proc/self/schedstat` covers only the main thread, so `/proc/self/stat` utime+stime
/// in clock ticks, 10 ms resolution). Used to report throughput per CPU-second next to
/// wall-clock throughput: on a shared 2-core machine other processes can take a large share of
/// the cores, and the per-CPU-second figure shows what the kernel does when it runs.
fn cpu_seconds(process: bool) -> Option<f64> {
    if process {
        let text = std::fs::read_to_string("/proc/self/stat").ok()?;
        // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
        let rest = &text[text.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
        Some(ticks / 100.0)
    } else {
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
        Some(ns * 1e-9)
    }
}

/// Median wall-clock cell-steps/s over `reps` repetitions of `steps` steps of `n_cells` cells,
/// and the median of cell-steps per CPU-second (of this thread, or of the whole process if
/// `process`).
fn measure(
    reps: usize,
    n_cells: usize,
    steps: usize,
    process: bool,
    mut run: impl FnMut(),
) -> (f64, Option<f64>) {
    run(); // warm-up (page faults, caches, rayon pool)
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    for _ in 0..reps {
        let c0 = cpu_seconds(process);
        let t = Instant::now();
        run();
        let w = t.elapsed().as_secs_f64();
        let work = (n_cells * steps) as f64;
        wall.push(work / w);
        if let (Some(c0), Some(c1)) = (c0, cpu_seconds(process)) {
            cpu.push(work / (c1 - c0).max(1e-3));
        }
    }
    let cpu = (cpu.len() == reps).then(|| median(cpu));
    (median(wall), cpu)
}

fn fmt_cpu(rate: Option<f64>) -> String {
    rate.map_or(String::new(), |r| {
        format!(" ({:.2} M per CPU-second)", r / 1e6)
    })
}

/// Single-thread cell-steps per CPU-second of 10^5 cells at every instruction-set level the
/// host supports (`poplar::isa`), in interleaved rounds (level by level within each round, so
/// that the machine's drift falls on every level alike); medians and ratios to the baseline.
/// The rest of the bench runs at the active level (`POPLAR_ISA`, else the host's best).
fn per_level(reps: usize) {
    let before = poplar::isa::active();
    let levels = poplar::isa::supported();
    let n = 100_000;
    let steps = 80;
    // Mixed: endo/mid/epi cell by cell, so every block gathers the parameters that differ
    // per lane from the model table; one model: epicardial cells only, so each block fills
    // them from one row (the table's fast path; cells of a tile share a model in runs).
    let mixed = Batch::new(n, 0);
    let one = Batch::of_types(n, 0, &[CellType::Epi]);
    let mut single = Batch::new(n, 0);
    let mut rates: Vec<[Vec<f64>; 2]> = vec![[Vec::new(), Vec::new()]; levels.len()];
    for _ in 0..reps {
        for (l, &level) in levels.iter().enumerate() {
            poplar::isa::set_active(level).expect("a supported level");
            for (kind, pristine) in [&mixed, &one].into_iter().enumerate() {
                let (wall, cpu) = measure(1, n, steps, false, || {
                    single.reset_from(pristine);
                    single.step(steps);
                    black_box(&single.states);
                });
                rates[l][kind].push(cpu.unwrap_or(wall));
            }
        }
    }
    poplar::isa::set_active(before).expect("the level before");
    println!(
        "  per instruction-set level, n = {n}, single thread, {reps} interleaved rounds \
         (mixed endo/mid/epi per cell; one model, epi):"
    );
    let base = median(rates[0][0].clone());
    for (level, [m, o]) in levels.iter().zip(rates) {
        let (m, o) = (median(m), median(o));
        println!(
            "    {:<8} ({:>2} f32 lanes) {:>7.2} M cell-steps per CPU-second mixed, × {:.2} of the baseline; \
             one model {:>7.2} M (× {:.3} of mixed)",
            level.name(),
            level.f32_lanes(),
            m / 1e6,
            m / base,
            o / 1e6,
            o / m
        );
    }
    println!("  the rest at {}:", poplar::isa::active());
}

/// Resting V (at the stimulus onset, 10 ms), peak V and APD90 (between the upward and the
/// downward crossing of `peak − 0.9 (peak − rest)`, linearly interpolated) of a trace of one
/// paced beat, `(t, V)` pairs.
fn beat_features(trace: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let rest = trace.iter().find(|&&(t, _)| t >= 10.0 - 1e-9)?.1;
    let peak = trace.iter().map(|&(_, v)| v).fold(f64::MIN, f64::max);
    let level = peak - 0.9 * (peak - rest);
    let cross = |up: bool, after: f64| {
        trace.windows(2).find_map(|w| {
            let ((t0, a), (t1, b)) = (w[0], w[1]);
            let hit = if up {
                a < level && b >= level
            } else {
                a > level && b <= level
            };
            (t0 >= after && hit).then(|| t0 + (t1 - t0) * (level - a) / (b - a))
        })
    };
    let up = cross(true, 0.0)?;
    let down = cross(false, up)?;
    Some((rest, peak, down - up))
}

/// One epicardial cell of this kernel paced as the C program's `trace` mode: stimulus 1 ms
/// from 10 ms, dt 0.02 ms, V after every step.
fn kernel_trace(t_end: f64) -> Vec<(f64, f64)> {
    let mut b = Batch::of_types(1, 0, &[CellType::Epi]);
    b.states = tp06::initial_state(CellType::Epi)
        .map(|x| x as f32)
        .to_vec();
    let steps = (t_end / f64::from(DT)).round() as usize;
    let mut out = vec![(0.0, f64::from(b.states[0]))];
    for k in 0..steps {
        let t = k as f64 * f64::from(DT);
        b.stim[0] = if (10.0..11.0).contains(&t) { 1.0 } else { 0.0 };
        b.step(1);
        out.push(((k + 1) as f64 * f64::from(DT), f64::from(b.states[0])));
    }
    out
}

/// Compiles `reference/tp06/tp06_epi_myokit.c` with `$CC` (else `cc`) `-O3 -march=native` in
/// `dir`; the program's path, or why not.
fn build_myokit_c(dir: &std::path::Path) -> Result<std::path::PathBuf, String> {
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/reference/tp06/tp06_epi_myokit.c"
    );
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let exe = dir.join("tp06_epi_myokit");
    let out = std::process::Command::new(&cc)
        .args(["-O3", "-march=native", "-o"])
        .arg(&exe)
        .arg(src)
        .arg("-lm")
        .output()
        .map_err(|e| format!("no C compiler ({cc}: {e})"))?;
    if !out.status.success() {
        return Err(format!(
            "{cc} -O3 -march=native failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(exe)
}

/// Runs the C program with `args` and returns its standard output.
fn run_c(exe: &std::path::Path, args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new(exe)
        .args(args)
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} {args:?} failed: {}",
            exe.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| e.to_string())
}

/// TP06 cell-steps per CPU-second of myokit's exported C (module notes) against this kernel's,
/// one thread each, in `reps` interleaved rounds; this kernel at every instruction-set level
/// the host supports.
fn against_myokit(reps: usize) {
    println!(
        "  against myokit's C (reference/tp06/tp06_epi_myokit.c: myokit's ansic-euler export, \
         f64, one cell at a time; Rush–Larsen on m, dt {DT} ms; cc -O3 -march=native):"
    );
    let dir = std::env::temp_dir().join(format!("poplar-tp06-myokit-{}", std::process::id()));
    let result = compare_with_myokit(&dir, reps);
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(why) = result {
        println!("    skipped: {why}");
    }
}

fn compare_with_myokit(dir: &std::path::Path, reps: usize) -> Result<(), String> {
    let exe = build_myokit_c(dir)?;
    // The check: one paced cell, 600 ms, the same features from both traces.
    let t_end = 600.0;
    let c_trace: Vec<(f64, f64)> = run_c(&exe, &["trace", &t_end.to_string()])?
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace().map(|x| x.parse::<f64>());
            Some((f.next()?.ok()?, f.next()?.ok()?))
        })
        .collect();
    let ours = kernel_trace(t_end);
    let (Some((cr, cp, ca)), Some((or, op, oa))) = (beat_features(&c_trace), beat_features(&ours))
    else {
        return Err(format!(
            "no action potential in the C trace ({} points, last V {:?}) or in the kernel's",
            c_trace.len(),
            c_trace.last()
        ));
    };
    // f64 against f32 with the same scheme and step: close, not equal.
    let agree = (cr - or).abs() <= 0.1 && (cp - op).abs() <= 1.0 && (ca - oa).abs() <= 0.01 * oa;
    println!(
        "    check, one paced epicardial cell (myokit's C / this kernel): resting V {cr:.3} / \
         {or:.3} mV, peak {cp:.2} / {op:.2} mV, APD90 {ca:.2} / {oa:.2} ms: {}",
        if agree { "agree" } else { "DISAGREE" }
    );
    if !agree {
        return Err("the C program's beat is not the kernel's: no ratio quoted".into());
    }
    // The C program runs 100 steps (about 0.5 s); the kernel the same 100 steps from the same
    // states ten times a round (0.3–1 s), since its thread's CPU time advances with the
    // scheduler's accounting (a few ms), which made one 100-step run (about 30 ms at
    // AVX-512) uncertain by several per cent. (Not 1,000 steps at once: the batch's
    // stimulated cells, stimulated throughout, leave the model's range within 20 ms.)
    let (n, steps, runs) = (20_000usize, 100usize, 10usize);
    let pristine = Batch::of_types(n, 0, &[CellType::Epi]);
    let mut batch = Batch::of_types(n, 0, &[CellType::Epi]);
    let before = poplar::isa::active();
    let levels = poplar::isa::supported();
    let (mut c_rates, mut ours): (Vec<f64>, Vec<Vec<f64>>) =
        (Vec::new(), vec![Vec::new(); levels.len()]);
    for _ in 0..reps {
        let out = run_c(&exe, &["bench", &n.to_string(), &steps.to_string()])?;
        let field = |name: &str| {
            out.lines()
                .find_map(|l| l.strip_prefix(name))
                .map(str::trim)
                .ok_or_else(|| format!("no '{name}' in the C program's output: {out}"))
        };
        let cpu: f64 = field("cpu_seconds")?.parse().map_err(|e| format!("{e}"))?;
        let finite = field("finite")?;
        let want = format!("{} of {}", n * N_STATES, n * N_STATES);
        if finite != want {
            return Err(format!("the C program's states: {finite} finite"));
        }
        c_rates.push((n * steps) as f64 / cpu);
        for (l, &level) in levels.iter().enumerate() {
            poplar::isa::set_active(level).expect("a supported level");
            let (wall, cpu) = measure(1, n, runs * steps, false, || {
                for _ in 0..runs {
                    batch.reset_from(&pristine);
                    batch.step(steps);
                    black_box(&batch.states);
                }
            });
            ours[l].push(cpu.unwrap_or(wall));
        }
    }
    poplar::isa::set_active(before).expect("the level before");
    assert!(batch.states.iter().all(|x| x.is_finite()));
    // The ratio of each round (the C program and the kernel measured back to back) as well as
    // the ratio of the medians: a host whose speed drifts between rounds moves both sides of a
    // round's ratio alike.
    let per_round = |r: &[f64]| median(r.iter().zip(&c_rates).map(|(o, c)| o / c).collect());
    let round_ratios: Vec<f64> = ours.iter().map(|r| per_round(r)).collect();
    let c = median(c_rates);
    println!(
        "    n = {n} epicardial cells, {steps} steps (the kernel: {runs} times from the same \
         states) a round, one thread, {reps} interleaved rounds, medians:"
    );
    println!(
        "    myokit's C          {:>7.2} M cell-steps per CPU-second",
        c / 1e6
    );
    for ((level, r), round) in levels.iter().zip(ours).zip(round_ratios) {
        let m = median(r);
        println!(
            "    this kernel, {:<8}{:>7.2} M cell-steps per CPU-second  × {:.1} of myokit's C \
             (median of the rounds' ratios × {round:.1})",
            level.name(),
            m / 1e6,
            m / c
        );
    }
    Ok(())
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let reps = if quick { 3 } else { 7 };
    println!(
        "TP06 step_batch (f32, dt = {DT} ms), median of {reps} repetitions, {} rayon threads",
        rayon::current_num_threads()
    );
    if std::env::args().any(|a| a == "--myokit") {
        against_myokit(reps);
        return;
    }
    if std::env::args().any(|a| a == "--levels") {
        per_level(reps);
        return;
    }
    per_level(reps);
    against_myokit(reps);
    for &n in &[100_000usize, 1_000_000] {
        // Enough steps per repetition for ≈ 0.2–0.6 s of work at the target rate.
        let steps = (8_000_000 / n).max(2);

        let pristine = Batch::new(n, 0);
        let mut single = Batch::new(n, 0);
        let (rate1, cpu1) = measure(reps, n, steps, false, || {
            single.reset_from(&pristine);
            single.step(steps);
            black_box(&single.states);
        });

        let mut chunks: Vec<Batch> = (0..n.div_ceil(CHUNK))
            .map(|c| Batch::new(CHUNK.min(n - c * CHUNK), c * CHUNK))
            .collect();
        let pristine_chunks: Vec<Batch> = (0..chunks.len())
            .map(|c| Batch::new(chunks[c].n, c * CHUNK))
            .collect();
        let (rate_par, cpu_par) = measure(reps, n, steps, true, || {
            chunks
                .par_iter_mut()
                .zip(&pristine_chunks)
                .for_each(|(b, p)| {
                    b.reset_from(p);
                    b.step(steps);
                });
            black_box(&chunks);
        });
        assert!(single.states.iter().all(|x| x.is_finite()));
        println!(
            "  n = {n:>9} cells: single thread {:>7.2} M cell-steps/s{}; rayon ({} chunks of ≤ {CHUNK}) {:>7.2} M cell-steps/s{}",
            rate1 / 1e6,
            fmt_cpu(cpu1),
            chunks.len(),
            rate_par / 1e6,
            fmt_cpu(cpu_par)
        );
        if let Some(c) = cpu_par {
            let threads = rayon::current_num_threads() as f64;
            println!(
                "      → with {threads} otherwise idle cores the rayon run would reach ≈ {:.1} M \
                 cell-steps/s (CPU-second rate × threads; wall-clock share of CPU here {:.0} %)",
                c * threads / 1e6,
                100.0 * rate_par / (c * threads)
            );
        }
    }

    // The compensated variant (Na_i, K_i, Ca_SR), single thread, 1e5 cells.
    let n = 100_000;
    let steps = 80;
    let pristine = Batch::new(n, 0);
    let mut batch = Batch::new(n, 0);
    let mut residuals = vec![0.0f32; tp06::N_COMPENSATED * n];
    let (rate_c, cpu_c) = measure(reps, n, steps, false, || {
        batch.reset_from(&pristine);
        for _ in 0..steps {
            tp06::step_batch_compensated(
                &mut batch.states,
                &mut residuals,
                n,
                &batch.cell_types,
                &batch.stim,
                -52.0,
                DT,
            );
        }
        black_box(&batch.states);
    });
    println!(
        "  step_batch_compensated, n = {n}, single thread: {:.2} M cell-steps/s{}",
        rate_c / 1e6,
        fmt_cpu(cpu_c)
    );

    // The scalar f64 reference, for scale (not a target).
    let n = 20_000;
    let types = [CellType::Endo, CellType::Mid, CellType::Epi];
    let mut cells: Vec<[f64; N_STATES]> =
        (0..n).map(|i| tp06::initial_state(types[i % 3])).collect();
    let (rate64, cpu64) = measure(reps, n, 10, false, || {
        for _ in 0..10 {
            for (i, y) in cells.iter_mut().enumerate() {
                tp06::step_cell_f64(y, types[i % 3], 0.0, 0.02);
            }
        }
        black_box(&cells);
    });
    println!(
        "  step_cell_f64 (scalar f64 reference, single thread): {:.2} M cell-steps/s{}",
        rate64 / 1e6,
        fmt_cpu(cpu64)
    );
}
