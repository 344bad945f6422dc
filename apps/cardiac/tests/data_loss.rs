//! Nothing lost: the `cardiac` binary's outputs under failures.
//!
//! - writes failing at random points (the test build's `APP_SUPPORT_FAIL_WRITES_AFTER`: a disk
//!   that fills up after N bytes) and a run killed (SIGKILL) at random points leave, under the
//!   final names, complete files or none: every file is parsed in full;
//! - a second run into a folder in use is refused, naming the first; the lock of a killed run
//!   does not block the next one;
//! - `--force` removes the earlier run's files and nothing else;
//! - `plot-diagonal` and `compile` refuse an existing output without `--force`, and their own
//!   input always;
//! - under an MPI launcher, a build without the feature `mpi` refuses to start.
//!
//! The random points come from a seed printed by each test (`DATA_LOSS_SEED=<n>` repeats a
//! run). The whole file runs in ~10 s on two cores.

mod support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use app_support::output::LOCK_FILE;
use poplar::rand::SplitMix64;
use support::{stderr, tmp};

const BIN: &str = env!("CARGO_BIN_EXE_cardiac");

/// A 0.5 mm slab for 5 ms with a snapshot every 0.5 ms, a traced point, the profile and the
/// report: ~0.3 s and ~18 MB of files in a test build.
const JOB: &[&str] = &[
    "run",
    "--dx",
    "0.5",
    "--tiles",
    "64",
    "--t-end",
    "5",
    "--snapshot-every",
    "0.5",
    "--trace-point",
    "1,1,1",
    "--trace-every",
    "0.5",
];

fn command(args: &[&str], out: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .arg("--out")
        .arg(out)
        .env("RUST_BACKTRACE", "0")
        .env_remove("APP_SUPPORT_FAIL_WRITES_AFTER")
        .env_remove("APP_SUPPORT_FAIL_RENAME");
    c
}

fn output(mut c: impl std::borrow::BorrowMut<Command>) -> Output {
    c.borrow_mut()
        .stdin(Stdio::null())
        .output()
        .expect("run cardiac")
}

/// The test's generator (SplitMix64), seeded from the clock or `DATA_LOSS_SEED`.
fn rng(test: &str) -> SplitMix64 {
    let seed = std::env::var("DATA_LOSS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("{test}: DATA_LOSS_SEED={seed}");
    SplitMix64::new(seed)
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// A VTU file is complete: it reads as a mesh, every data array is closed, and the document
/// ends.
fn check_vtu(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    assert!(text.ends_with("</VTKFile>\n"), "{path:?} is truncated");
    assert_eq!(
        text.matches("<DataArray").count(),
        text.matches("</DataArray>").count(),
        "{path:?}: an unclosed data array"
    );
    cardiac::mesh::read_vtu(path, &Default::default())
        .unwrap_or_else(|e| panic!("{path:?} does not read back: {e}"));
}

/// Every file of `dir` is a complete result of the run (parsed in full), or one of the
/// user's (`keep`); with `killed`, temporaries and the lock of the killed run may be left.
/// Returns the result files found.
fn check_results(dir: &Path, killed: bool, keep: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for name in names(dir) {
        let path = dir.join(&name);
        if keep.contains(&name.as_str()) {
            continue;
        }
        if name.starts_with('.') {
            assert!(
                killed,
                "{name} left in {dir:?} by a run that ended: {:?}",
                names(dir)
            );
            assert!(
                name.starts_with(LOCK_FILE)
                    || name.contains(".tmp")
                    || name.starts_with(".write-check-"),
                "{name}: not a temporary or the lock"
            );
            continue;
        }
        match name.as_str() {
            "results.json" => {
                cardiac::app::results::RunReport::load(&path)
                    .unwrap_or_else(|e| panic!("{path:?} does not parse: {e}"));
            }
            "profile.json" => {
                poplar::profile::Profile::load(&path)
                    .unwrap_or_else(|e| panic!("{path:?} does not parse: {e}"));
            }
            "report.html" => {
                let page = std::fs::read_to_string(&path).unwrap();
                assert!(
                    page.trim_end().ends_with("</html>"),
                    "{path:?} is truncated"
                );
                poplar_viewer::embedded(&page)
                    .unwrap_or_else(|e| panic!("{path:?} does not parse: {e}"));
            }
            "traces.csv" => {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(text.ends_with('\n'), "{path:?} is truncated");
                let cols: Vec<usize> = text.lines().map(|l| l.split(',').count()).collect();
                assert!(
                    cols.len() > 1 && cols.iter().all(|&c| c == cols[0]),
                    "{path:?}"
                );
            }
            "voltage.pvd" => {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(text.ends_with("</VTKFile>\n"), "{path:?} is truncated");
                for listed in text.split("file=\"").skip(1) {
                    let f = &listed[..listed.find('"').unwrap()];
                    assert!(dir.join(f).is_file(), "voltage.pvd lists {f}, absent");
                }
            }
            n if n.ends_with(".vtu") => check_vtu(&path),
            n => panic!("unexpected file {n} in {dir:?}"),
        }
        found.push(name);
    }
    found
}

/// Writes failing at random points (a disk filling up after N bytes, N random up to more than
/// the run writes; a rename that fails): the run fails or succeeds, and leaves complete files
/// or none under their final names, no temporary file and no lock.
#[test]
fn writes_failing_at_random_points_leave_complete_files_or_none() {
    let mut rng = rng("writes_failing_at_random_points");
    let d = tmp();
    let mut failed = 0;
    let mut budgets: Vec<u64> = vec![0, 100, 5000];
    budgets.extend((0..6).map(|_| rng.below(20_000_000)));
    for (k, budget) in budgets.iter().enumerate() {
        let out = d.join(format!("b{k}"));
        let o = output(command(JOB, &out).env("APP_SUPPORT_FAIL_WRITES_AFTER", budget.to_string()));
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "budget {budget}: {err}");
        if !o.status.success() {
            failed += 1;
            assert!(
                err.contains("no space left on device"),
                "budget {budget}: {err}"
            );
        }
        let found = check_results(&out, false, &[]);
        if o.status.success() {
            assert!(found.contains(&"results.json".to_string()), "{found:?}");
        }
    }
    assert!(
        failed >= 3,
        "the write-failure shim is not active in this build ({failed} runs failed)"
    );
    // Every rename fails: no file at all.
    let out = d.join("rename");
    let o = output(command(JOB, &out).env("APP_SUPPORT_FAIL_RENAME", "1"));
    assert!(!o.status.success());
    assert_eq!(check_results(&out, false, &[]), Vec::<String>::new());
    std::fs::remove_dir_all(&d).unwrap();
}

/// SIGKILL at random points of runs into one folder (each forced): whatever is under a final
/// name parses in full; the killed run's lock and temporaries do not block the next run, which
/// removes them; a last run completes with nothing of the killed ones left.
#[cfg(unix)]
#[test]
fn a_run_killed_at_random_points_never_leaves_a_truncated_result() {
    let mut rng = rng("a_run_killed_at_random_points");
    let d = tmp();
    let out = d.join("out");
    // How long the job takes here, to kill within it.
    let t = Instant::now();
    let o = output(command(JOB, &out));
    assert!(o.status.success(), "{}", stderr(&o));
    let full = t.elapsed().as_millis().max(50) as u64;
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let args: Vec<&str> = JOB.iter().copied().chain(["--force"]).collect();
    for _ in 0..8 {
        let mut child = command(&args, &out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.below(full + full / 4)));
        let _ = child.kill(); // SIGKILL
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() || !err.contains("in use by another run"),
            "the lock of a killed run blocked this one: {err}"
        );
        check_results(&out, true, &["notes.txt"]);
    }
    let o = output(command(&args, &out));
    assert!(o.status.success(), "{}", stderr(&o));
    let found = check_results(&out, false, &["notes.txt"]);
    assert!(found.contains(&"results.json".to_string()), "{found:?}");
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// A second run into a folder that a first is writing into is refused, naming the first
/// (its pid and command); the first completes.
#[test]
fn a_second_run_into_a_folder_in_use_is_refused_naming_the_first() {
    let d = tmp();
    let out = d.join("out");
    // A lock held by this process (another run, as far as cardiac can tell).
    let lock = {
        std::fs::create_dir_all(&out).unwrap();
        app_support::output::OutputLock::acquire(&out).unwrap()
    };
    let o = output(command(
        &["run", "--dx", "1", "--tiles", "4", "--force"],
        &out,
    ));
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("is in use by another run")
            && err.contains(&format!("pid {}", std::process::id())),
        "{err}"
    );
    drop(lock);
    // Two cardiac processes: the second is refused while the first runs (~1 s).
    let long = [
        "run",
        "--dx",
        "0.5",
        "--tiles",
        "64",
        "--t-end",
        "20",
        "--snapshot-every",
        "0",
        "--no-report",
        "--force",
    ];
    let first = command(&long, &out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !out.join(LOCK_FILE).exists() && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let second = output(command(
        &["run", "--dx", "1", "--tiles", "4", "--force"],
        &out,
    ));
    let first_pid = first.id();
    let first_done = first.wait_with_output().unwrap();
    assert!(
        first_done.status.success(),
        "{}",
        String::from_utf8_lossy(&first_done.stderr)
    );
    let err = stderr(&second);
    assert!(!second.status.success(), "both runs wrote {out:?}: {err}");
    assert!(
        err.contains("is in use by another run")
            && err.contains(&format!("pid {first_pid}"))
            && err.contains("--t-end 20"),
        "{err}"
    );
    check_results(&out, false, &[]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// `--force` removes the earlier run's files (snapshots, profile, report, traces) before the
/// run, and nothing else.
#[test]
fn forced_runs_remove_the_earlier_runs_files_and_only_those() {
    let d = tmp();
    let out = d.join("out");
    let o = output(command(JOB, &out));
    assert!(o.status.success(), "{}", stderr(&o));
    let mine = [
        "notes.txt",
        "voltage_mine_ms.vtu",
        "results.json.bak",
        "mesh.msh",
    ];
    for f in mine {
        std::fs::write(out.join(f), "mine").unwrap();
    }
    let o = output(command(
        &[
            "run",
            "--dx",
            "1",
            "--tiles",
            "4",
            "--t-end",
            "2",
            "--snapshot-every",
            "0",
            "--no-profile",
            "--no-report",
            "--force",
        ],
        &out,
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut want: Vec<String> = ["activation.vtu", "results.json"]
        .iter()
        .chain(&mine)
        .map(|s| s.to_string())
        .collect();
    want.sort();
    assert_eq!(names(&out), want);
    for f in mine {
        assert_eq!(std::fs::read_to_string(out.join(f)).unwrap(), "mine");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

fn cardiac(args: &[&str]) -> Output {
    output(Command::new(BIN).args(args).env("RUST_BACKTRACE", "0"))
}

fn refused(args: &[&str], want: &str) {
    let o = cardiac(args);
    let err = stderr(&o);
    assert!(!o.status.success(), "{args:?} succeeded");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: expected {want:?} in {err}");
}

/// `plot-diagonal` refuses an existing image unless `--force`, and an input (a results.json, or
/// the one in a folder given) always; `compile` refuses its mesh or parameter file always.
#[test]
fn outputs_that_exist_or_are_inputs_are_refused() {
    let d = tmp();
    let run = d.join("run");
    let o = output(command(
        &[
            "run",
            "--dx",
            "1",
            "--tiles",
            "4",
            "--t-end",
            "2",
            "--snapshot-every",
            "0",
        ],
        &run,
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let results = run.join("results.json");
    let before = std::fs::read(&results).unwrap();
    let (run_s, results_s) = (run.display().to_string(), results.display().to_string());
    for force in [&[][..], &["--force"][..]] {
        for input in [&run_s, &results_s] {
            refused(
                &[&["plot-diagonal", input, "-o", &results_s][..], force].concat(),
                "is also an input",
            );
        }
    }
    assert_eq!(
        std::fs::read(&results).unwrap(),
        before,
        "the input is intact"
    );
    let png = d.join("d.png").display().to_string();
    let o = cardiac(&["plot-diagonal", &run_s, "-o", &png]);
    assert!(o.status.success(), "{}", stderr(&o));
    refused(&["plot-diagonal", &run_s, "-o", &png], "--force");
    let o = cardiac(&["plot-diagonal", &run_s, "-o", &png, "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(names(&d), ["d.png", "run"], "no temporary is left");

    // compile -o its own mesh, or its --params file: refused even with --force.
    let mesh = d.join("mesh.msh");
    std::fs::copy(support::mesh(), &mesh).unwrap();
    let mesh_before = std::fs::read(&mesh).unwrap();
    let mesh_s = mesh.display().to_string();
    refused(
        &["compile", "--mesh", &mesh_s, "-o", &mesh_s, "--force"],
        "is also an input",
    );
    assert_eq!(std::fs::read(&mesh).unwrap(), mesh_before);
    refused(
        &[
            "compile", "--params", &results_s, "-o", &results_s, "--force",
        ],
        "is also an input",
    );
    assert_eq!(std::fs::read(&results).unwrap(), before);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Started by an MPI launcher (its environment), a build without the feature `mpi` refuses to
/// run (every rank would run the whole job into the same folder), saying how to build with it;
/// the output folder is not even created.
#[cfg(not(feature = "mpi"))]
#[test]
fn an_mpi_launch_of_a_build_without_mpi_is_refused() {
    let d = tmp();
    for (var, value) in [
        ("PMI_SIZE", "2"),
        ("OMPI_COMM_WORLD_SIZE", "4"),
        ("PMI_RANK", "1"),
        ("PMIX_RANK", "0"),
    ] {
        let out = d.join(var);
        let o = output(command(&["run", "--dx", "1", "--tiles", "4"], &out).env(var, value));
        let err = stderr(&o);
        assert!(!o.status.success(), "{var}={value}: ran");
        assert!(
            err.contains(&format!("{var}={value}")) && err.contains("--features mpi"),
            "{var}={value}: {err}"
        );
        assert!(!out.exists(), "{var}: the output folder was created");
    }
    // A launcher's single process (size 1) runs.
    let out = d.join("one");
    let o = output(
        command(
            &[
                "run",
                "--dx",
                "1",
                "--tiles",
                "4",
                "--t-end",
                "1",
                "--snapshot-every",
                "0",
            ],
            &out,
        )
        .env("PMI_SIZE", "1")
        .env("PMI_RANK", "0"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let cell = cardiac(&[
        "cell",
        "--beats",
        "1",
        "--out",
        &d.join("cell").display().to_string(),
    ]);
    assert!(cell.status.success(), "{}", stderr(&cell));
    let o = output(
        Command::new(BIN)
            .args(["cell", "--beats", "1", "--out"])
            .arg(d.join("cell2"))
            .env("PMI_SIZE", "2"),
    );
    assert!(!o.status.success(), "cell under a 2-rank launcher ran");
    std::fs::remove_dir_all(&d).unwrap();
}
