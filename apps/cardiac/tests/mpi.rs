//! The cardiac app over MPI ranks, unchanged: `mpiexec -n 2 cardiac exec FILE` (an executable
//! saved by `cardiac compile --chips 2`) and `mpiexec -n 2 cardiac run --chips 2` write the
//! same files as one process, bit for bit; so do 3 ranks (2 chips split by tiles). Needs the
//! feature `mpi` and `mpiexec` (`.ci/run` installs MPICH).

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
