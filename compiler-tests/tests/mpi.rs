//! The multi-rank checks under MPI: `mpiexec -n 1/2/3` of the `ranks` program (see
//! `src/bin/ranks.rs`). Needs the feature `mpi` and a system MPI with `mpiexec` on the path
//! (`.ci/run` installs MPICH); three ranks on a two-core machine are oversubscribed, which
//! MPICH allows.

#![cfg(feature = "mpi")]

use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// Runs `mpiexec -n <n> ranks <what>`; a job still running after a minute is a hang, and fails.
fn mpiexec(n: usize, what: &str) -> (Output, Duration) {
    poplar::dist::mpiexec(
        n,
        Path::new(env!("CARGO_BIN_EXE_ranks")),
        &[what],
        Duration::from_secs(60),
    )
    .unwrap_or_else(|e| panic!("mpiexec -n {n} ranks {what}: {e} (is MPICH installed?)"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn random_graphs_the_loop_and_remote_buffers_give_the_same_digests_on_one_two_and_three_ranks() {
    let mut digests = Vec::new();
    for n in [1, 2, 3] {
        let (out, _) = mpiexec(n, "check");
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{n} ranks: {}\n{stdout}{}",
            out.status,
            text(&out.stderr)
        );
        assert!(stdout.contains(&format!("ok on {n} ranks")), "{stdout}");
        let lines: Vec<String> = stdout
            .lines()
            .filter(|l| l.starts_with("random") || l.starts_with("loop") || l.starts_with("remote"))
            .map(String::from)
            .collect();
        // 39 random graphs, 3 loops and the remote buffers, printed by rank 0 only.
        assert_eq!(lines.len(), 43, "{n} ranks:\n{stdout}");
        digests.push(lines);
    }
    assert_eq!(digests[0], digests[1], "1 rank against 2");
    assert_eq!(digests[0], digests[2], "1 rank against 3");
}

#[test]
fn a_vertex_failure_on_rank_one_is_reported_by_rank_zero_and_ends_the_job() {
    let (out, took) = mpiexec(2, "fail");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // Reported once (by rank 0), naming the rank, the vertex, its codelet and its tile.
    assert_eq!(stderr.matches("error: ").count(), 1, "{stderr}");
    for want in ["rank 1 of 2", "vertex ", "test::FailAbove", "tile 4"] {
        assert!(stderr.contains(want), "'{want}' missing from: {stderr}");
    }
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn a_rank_that_dies_ends_the_job_with_an_error_not_a_hang() {
    let (out, took) = mpiexec(2, "die");
    assert!(
        !out.status.success(),
        "the job succeeded: {}",
        text(&out.stderr)
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn ranks_that_load_different_executables_refuse_to_run() {
    let (out, _) = mpiexec(3, "mismatch");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("rank 2 loaded another executable than rank 0"),
        "{stderr}"
    );
}

#[test]
fn an_error_only_one_rank_has_is_printed_by_it_and_ends_the_job() {
    let (out, took) = mpiexec(2, "alone");
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("error (rank 1 of 2): input file of rank 1 is missing"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
}
