//! Every numeric option of `cardiac run`, `exec` and `cell`, given 0, a negative number, NaN,
//! ±infinity, 10^-300 and 10^300, ends within [`LIMIT`] (10 s; the test kills it otherwise)
//! either in a clean error — a non-zero exit status (not a signal: no abort), no panic, and an
//! error line naming the option — or in a successful run. Small problems: the 1 mm slab (2,520
//! cells) on 4 tiles for 0.1 ms, the bi-ventricular test mesh for the mesh options, one paced
//! cell for 60 ms; values that are valid but huge are refused by the bounds (run length, work,
//! memory) before any work starts. 266 invocations, about 3 s on 2 cores.

mod support;

use std::time::{Duration, Instant};

use app_support::testing::NumericSweep;
use support::{cardiac, stderr, tmp};

/// Longest an invocation may take.
const LIMIT: Duration = Duration::from_secs(10);

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

#[test]
fn every_numeric_option_ends_in_a_clean_error_or_a_run_within_the_limit() {
    let d = tmp();
    let out = d.join("o").display().to_string();
    let cell_out = d.join("c").display().to_string();
    let exe = d.join("slab.popexe").display().to_string();
    let o = cardiac(&["compile", "--dx", "1", "--tiles", "4", "-o", &exe]);
    assert!(o.status.success(), "compile: {}", stderr(&o));
    let t = Instant::now();
    let mut sweep = NumericSweep::new(support::BIN, LIMIT);
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
    sweep.options(&run, RUN);
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
    sweep.options(&on_mesh, MESH);
    let exec: Vec<(&str, &str)> = vec![
        ("exec", ""),
        (&exe, ""),
        ("--t-end", "0.1"),
        ("--out", &out),
        ("--force", ""),
    ];
    sweep.options(&exec, EXEC);
    let cell: Vec<(&str, &str)> = vec![
        ("cell", ""),
        ("--beats", "1"),
        ("--bcl", "50"),
        ("--out", &cell_out),
        ("--force", ""),
    ];
    sweep.options(&cell, CELL);
    eprintln!(
        "{} invocations in {:.1} s",
        sweep.tried,
        t.elapsed().as_secs_f64()
    );
    sweep.assert_clean();
    let _ = std::fs::remove_dir_all(&d);
}
