//! The cardiac app over MPI ranks, unchanged: `mpiexec -n 2 cardiac exec FILE` (an executable
//! saved by `cardiac compile --chips 2`) and `mpiexec -n 2 cardiac run --chips 2` write the
//! same files as one process, bit for bit; so do 3 ranks (2 chips split by tiles). Needs the
//! feature `mpi` and `mpiexec` (`.ci/run` installs MPICH). A run stopped with a checkpoint and
//! resumed, on 1 or 2 ranks, writes the files of one that never stopped.

#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::Output;

const BIN: &str = env!("CARGO_BIN_EXE_cardiac");

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mpi_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: {}\n{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn ranks(n: usize, args: &[&str]) -> Output {
    app_support::testing::run_on_ranks(n, BIN, args)
}

fn same_file(a: &Path, b: &Path) {
    let (x, y) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(x == y, "{} and {} differ", a.display(), b.display());
}

#[test]
fn exec_of_a_two_chip_executable_gives_the_same_files_on_one_two_and_three_ranks() {
    let d = tmp("exec");
    let exe = d.join("slab.pexe");
    let exe_s = exe.to_str().unwrap();
    ok(
        &ranks(1, &["compile", "--chips", "2", "--output", exe_s]),
        "compile",
    );
    let run = |n: usize| {
        let out = d.join(format!("out{n}"));
        let args = [
            "exec",
            exe_s,
            "--t-end",
            "6",
            "--threads",
            "1",
            "--out",
            out.to_str().unwrap(),
        ];
        let o = ranks(n, &args);
        ok(&o, &format!("exec on {n} ranks"));
        // Rank 0 alone reports: one line of results, not one per rank.
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(stdout.matches("simulated ").count(), 1, "{stdout}");
        out
    };
    let base = run(1);
    for n in [2, 3] {
        let out = run(n);
        for f in ["activation.vtu", "results.json"] {
            same_file(&base.join(f), &out.join(f));
        }
    }
    // Some cells activated: the comparison is of a real run.
    let results = std::fs::read_to_string(base.join("results.json")).unwrap();
    assert!(
        results.contains("\"activation\"") || results.contains("P1"),
        "{results}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn run_on_two_chips_gives_the_same_files_on_one_and_two_ranks() {
    let d = tmp("run");
    let run = |n: usize| {
        let out = d.join(format!("out{n}"));
        let args = [
            "run",
            "--quick",
            "--chips",
            "2",
            "--threads",
            "1",
            "--no-report",
            "--no-profile",
            "--out",
            out.to_str().unwrap(),
        ];
        let o = ranks(n, &args);
        ok(&o, &format!("run on {n} ranks"));
        out
    };
    let (a, b) = (run(1), run(2));
    same_file(&a.join("activation.vtu"), &b.join("activation.vtu"));
    let _ = std::fs::remove_dir_all(&d);
}

/// `--partition hierarchical` over ranks: each rank holds whole chips' tiles of the two-level
/// partition (or, on 3 ranks, a chip split by tiles); its activation.vtu equals one process's.
#[test]
fn hierarchical_run_on_two_chips_gives_the_same_files_on_one_two_and_three_ranks() {
    let d = tmp("hier");
    let run = |n: usize| {
        let out = d.join(format!("out{n}"));
        let args = [
            "run",
            "--quick",
            "--chips",
            "2",
            "--partition",
            "hierarchical",
            "--threads",
            "1",
            "--no-report",
            "--no-profile",
            "--out",
            out.to_str().unwrap(),
        ];
        let o = ranks(n, &args);
        ok(&o, &format!("hierarchical run on {n} ranks"));
        out
    };
    let base = run(1);
    for n in [2, 3] {
        same_file(&base.join("activation.vtu"), &run(n).join("activation.vtu"));
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_output_folder_in_use_ends_the_whole_job_with_rank_zeros_error() {
    let d = tmp("refuse");
    std::fs::write(d.join("results.json"), "{}").unwrap();
    let o = ranks(
        2,
        &[
            "run",
            "--quick",
            "--chips",
            "2",
            "--out",
            d.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("rank 0 of 2") && err.contains("--force"),
        "{err}"
    );
    // Nothing the user had was touched.
    assert_eq!(
        std::fs::read_to_string(d.join("results.json")).unwrap(),
        "{}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Every file (not folder) in `dir`, by name.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Checkpoint and restart over ranks: a paced run on two chips stopped mid-beat and between
/// beats on 1 and 2 ranks, and resumed on 1 and 2 ranks (also on another number than it was
/// stopped on: rank 0 gathers the whole state into the checkpoint and scatters it back), writes
/// every file of the uninterrupted run on one rank, byte for byte.
#[test]
fn a_run_stopped_and_resumed_over_ranks_writes_the_uninterrupted_runs_files() {
    let d = tmp("ckpt");
    let base = [
        "run",
        "--dx",
        "1",
        "--chips",
        "2",
        "--beats",
        "2",
        "--bcl",
        "400",
        "--t-end",
        "450",
        "--dt-ode",
        "0.1",
        "--snapshot-every",
        "50",
        "--trace-point",
        "10,3,1",
        "--trace-every",
        "5",
        "--threads",
        "1",
        "--no-profile",
        "--no-report",
    ];
    let with = |extra: &[&str], out: &Path| -> Vec<String> {
        base.iter()
            .chain(extra)
            .map(|s| s.to_string())
            .chain(["--out".to_string(), out.display().to_string()])
            .collect()
    };
    let full = d.join("full");
    let args = with(&[], &full);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&ranks(1, &args), "the uninterrupted run on 1 rank");
    // (stopped on, at ms, resumed on)
    for (stop_on, at, resume_on) in [(1, "100", 1), (2, "100", 2), (2, "380", 1), (1, "380", 2)] {
        let out = d.join(format!("stop{stop_on}_{at}_{resume_on}"));
        let args = with(&["--stop-after", at], &out);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = ranks(stop_on, &args);
        ok(&o, &format!("stopped at {at} ms on {stop_on} rank(s)"));
        let said = String::from_utf8_lossy(&o.stdout);
        assert_eq!(said.matches("stopped by --stop-after").count(), 1, "{said}");
        assert!(!out.join("results.json").exists());
        let args = with(
            &["--resume", out.join("checkpoints").to_str().unwrap()],
            &out,
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = ranks(resume_on, &args);
        ok(&o, &format!("resumed at {at} ms on {resume_on} rank(s)"));
        assert!(String::from_utf8_lossy(&o.stdout).contains("resumed from"));
        std::fs::remove_dir_all(out.join("checkpoints")).unwrap();
        let names = files(&full);
        assert_eq!(names, files(&out));
        assert!(names.len() > 5, "{names:?}");
        for f in &names {
            same_file(&full.join(f), &out.join(f));
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}
