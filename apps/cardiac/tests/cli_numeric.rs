//! Every numeric option of `cardiac run`, `exec` and `cell`, given 0, a negative number, NaN,
//! ±infinity, 10^-300 and 10^300, ends within [`LIMIT`] (10 s; the test kills it otherwise)
//! either in a clean error — a non-zero exit status (not a signal: no abort), no panic, and an
//! error line naming the option — or in a successful run. Small problems: the 1 mm slab (2,520
//! cells) on 4 tiles for 0.1 ms, the bi-ventricular test mesh for the mesh options, one paced
//! cell for 60 ms; values that are valid but huge are refused by the bounds (run length, work,
//! memory) before any work starts. 266 invocations, about 3 s on 2 cores.

mod support;

use std::time::{Duration, Instant};

use support::{cardiac, cardiac_within, stderr, tmp};

/// Longest an invocation may take.
const LIMIT: Duration = Duration::from_secs(10);

const VALUES: [&str; 7] = ["0", "-1", "NaN", "inf", "-inf", "1e-300", "1e300"];

/// An option and how many comma-separated numbers it takes (the value is repeated).
type Opt = (&'static str, usize);

const RUN: &[Opt] = &[
    ("--dx", 1),
    ("--scale", 1),
    ("--fibre", 3),
    ("--stim-box", 6),
    ("--stim-sphere", 4),
    ("--dt-ode", 1),
    ("--chips", 1),
    ("--tiles", 1),
    ("--stim-amplitude", 1),
    ("--stim-duration", 1),
    ("--stim-start", 1),
    ("--sigma-l", 1),
    ("--sigma-t", 1),
    ("--sigma-n", 1),
    ("--chi", 1),
    ("--cm", 1),
    ("--beats", 1),
    ("--bcl", 1),
    ("--s2", 1),
    ("--act-threshold", 1),
    ("--t-end", 1),
    ("--threads", 1),
    ("--trace-point", 3),
    ("--trace-every", 1),
    ("--snapshot-every", 1),
];

/// The options of a mesh file, on the bi-ventricular test mesh (6,437 cells).
const MESH: &[Opt] = &[("--scale", 1), ("--fibre", 3)];

const EXEC: &[Opt] = &[("--t-end", 1), ("--threads", 1), ("--snapshot-every", 1)];

const CELL: &[Opt] = &[
    ("--dt", 1),
    ("--bcl", 1),
    ("--beats", 1),
    ("--stim-amplitude", 1),
    ("--stim-duration", 1),
    ("--stim-start", 1),
    ("--s2", 1),
    ("--trace-every", 1),
];

/// `base` (pairs of option and value, or a flag and `""`) with `opt` set to `value`.
fn args(base: &[(&str, &str)], opt: &str, value: &str) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    for &(o, v) in base {
        if o == opt {
            continue;
        }
        a.push(o.to_string());
        if !v.is_empty() {
            a.push(v.to_string());
        }
    }
    a.push(opt.to_string());
    a.push(value.to_string());
    a
}

/// What is wrong with `cardiac ARGS` (`None`: a clean error or a successful run).
fn verdict(args: &[String], opt: &str) -> Option<String> {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(o) = cardiac_within(&a, LIMIT) else {
        return Some(format!("{args:?}: still running after {LIMIT:?}"));
    };
    let err = stderr(&o);
    if err.contains("panicked") {
        return Some(format!("{args:?}: panicked:\n{err}"));
    }
    let Some(code) = o.status.code() else {
        return Some(format!(
            "{args:?}: killed by a signal ({:?}):\n{err}",
            o.status
        ));
    };
    if code == 0 {
        return None;
    }
    match err.lines().find(|l| l.starts_with("error")) {
        Some(line) if line.contains(opt) => None,
        Some(line) => Some(format!("{args:?}: the error does not name {opt}: {line}")),
        None => Some(format!(
            "{args:?}: exit {code} without an error line:\n{err}"
        )),
    }
}

fn sweep(base: &[(&str, &str)], opts: &[Opt], failures: &mut Vec<String>, tried: &mut usize) {
    for &(opt, arity) in opts {
        for v in VALUES {
            let value = vec![v; arity].join(",");
            *tried += 1;
            if let Some(f) = verdict(&args(base, opt, &value), opt) {
                failures.push(f);
            }
        }
    }
}

#[test]
fn every_numeric_option_ends_in_a_clean_error_or_a_run_within_the_limit() {
    let d = tmp();
    let out = d.join("o").display().to_string();
    let cell_out = d.join("c").display().to_string();
    let exe = d.join("slab.popexe").display().to_string();
    let o = cardiac(&["compile", "--dx", "1", "--tiles", "4", "-o", &exe]);
    assert!(o.status.success(), "compile: {}", stderr(&o));
    let t = Instant::now();
    let (mut failures, mut tried) = (Vec::new(), 0);
    let run: Vec<(&str, &str)> = vec![
        ("run", ""),
        ("--dx", "1"),
        ("--tiles", "4"),
        ("--t-end", "0.1"),
        ("--snapshot-every", "0"),
        ("--trace-point", "1,1,1"),
        ("--no-report", ""),
        ("--no-profile", ""),
        ("--out", &out),
        ("--force", ""),
    ];
    sweep(&run, RUN, &mut failures, &mut tried);
    let mesh = support::mesh();
    let on_mesh: Vec<(&str, &str)> = vec![
        ("run", ""),
        ("--mesh", &mesh),
        ("--scale", "10"),
        ("--stim-surface", "ENDO_LV"),
        ("--tiles", "8"),
        ("--t-end", "0.1"),
        ("--no-report", ""),
        ("--no-profile", ""),
        ("--out", &out),
        ("--force", ""),
    ];
    sweep(&on_mesh, MESH, &mut failures, &mut tried);
    let exec: Vec<(&str, &str)> = vec![
        ("exec", ""),
        (&exe, ""),
        ("--t-end", "0.1"),
        ("--out", &out),
        ("--force", ""),
    ];
    sweep(&exec, EXEC, &mut failures, &mut tried);
    let cell: Vec<(&str, &str)> = vec![
        ("cell", ""),
        ("--beats", "1"),
        ("--bcl", "50"),
        ("--out", &cell_out),
        ("--force", ""),
    ];
    sweep(&cell, CELL, &mut failures, &mut tried);
    eprintln!("{tried} invocations in {:.1} s", t.elapsed().as_secs_f64());
    assert!(
        failures.is_empty(),
        "{} of {tried} invocations failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&d);
}
