//! The multi-rank checks under MPI: `mpiexec -n 1/2/3` of this test binary as the program of
//! every rank. Needs the feature `mpi` and a system MPI with `mpiexec` on the path (`.ci/run`
//! installs MPICH); three ranks on a two-core machine are oversubscribed, which MPICH allows.
//!
//! The binary has its own `main` (`harness = false` in Cargo.toml): started as
//! `mpi rank <what>` it is one rank of a job (below); otherwise it runs the checks, which start
//! the jobs, and takes `--list` and a name filter as the test harness does.
//!
//! ```text
//! mpiexec -n 3 mpi rank check      # random graphs, the loop and remote-buffer cases; rank 0
//!                                  # prints digests
//! mpiexec -n 2 mpi rank fail       # a vertex fails on rank 1: every rank exits with status 1
//! mpiexec -n 2 mpi rank die        # rank 1 exits (status 3) in the middle of a run
//! mpiexec -n 2 mpi rank mismatch   # the last rank compiles another graph
//! mpiexec -n 2 mpi rank alone      # rank 1 alone fails before any engine: it ends the job
//! ```
//!
//! Every rank checks its results against the host models and exits with status 1 on any
//! difference or error; rank 0 prints one digest line per case, the same for any number of
//! ranks (the checks compare them).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::{ExitCode, Output};
use std::time::Duration;

use poplar::{compile, CompileOptions, Engine, EngineOptions};
use poplar_testkit::random::build_case;
use poplar_testkit::ranks::*;

/// Runs `mpiexec -n <n>` of this binary as rank program `what`; a job still running after a
/// minute is a hang, and fails.
fn mpiexec(n: usize, what: &str) -> (Output, Duration) {
    let me = std::env::current_exe().expect("the test binary's path");
    poplar::dist::mpiexec(n, &me, &["rank", what], Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("mpiexec -n {n} mpi rank {what}: {e} (is MPICH installed?)"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

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

fn a_rank_that_dies_ends_the_job_with_an_error_not_a_hang() {
    let (out, took) = mpiexec(2, "die");
    assert!(
        !out.status.success(),
        "the job succeeded: {}",
        text(&out.stderr)
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

fn ranks_that_load_different_executables_refuse_to_run() {
    let (out, _) = mpiexec(3, "mismatch");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("rank 2 loaded another executable than rank 0"),
        "{stderr}"
    );
}

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

/// FNV-1a over 32-bit words.
fn digest(words: impl IntoIterator<Item = u32>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for w in words {
        for b in w.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn check(root: bool) -> Result<(), String> {
    for seed in 1..40u64 {
        let case = build_case(seed * 6151);
        let got = run_random(&case, 1, None).map_err(|e| format!("seed {seed}: {e}"))?;
        if got != case.expect {
            return Err(format!("seed {seed}: results differ from the host model"));
        }
        if root {
            println!(
                "random {seed}: {:016x}",
                digest(got.iter().flatten().map(|x| x.to_bits()))
            );
        }
    }
    for (tiles, flag) in [(5, false), (5, true), (7, true)] {
        let got = run_loop(tiles, 9, flag, Faults::NONE, 2, None)
            .map_err(|e| format!("loop on {tiles} tiles: {e}"))?;
        if got != loop_expect(tiles, 9, flag) {
            return Err(format!(
                "loop on {tiles} tiles: results differ from the host model"
            ));
        }
        if root {
            println!("loop {tiles} {flag}: {:016x}", digest(got.bits()));
        }
    }
    // Remote buffers of every type: rank 0 holds Streaming Memory, every rank ends with it.
    let got =
        poplar_testkit::remote::run_remote(2, None).map_err(|e| format!("remote buffers: {e}"))?;
    if got != poplar_testkit::remote::remote_expect() {
        return Err("remote buffers: results differ from the host model".into());
    }
    if root {
        let bytes = got.buffers.iter().chain(&got.tensors).flatten();
        println!("remote: {:016x}", digest(bytes.map(|&b| u32::from(b))));
    }
    Ok(())
}

/// One rank of the job: runs the check `what` and exits as the job must.
fn rank_main(what: &str) -> ExitCode {
    let cluster = match poplar::dist::init() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    poplar_testkit::link();
    let (rank, size) = (cluster.rank(), cluster.size());
    let result = match what {
        "check" => check(cluster.is_root()).map_err(|e| (e, false)),
        "fail" | "die" => {
            let faults = if what == "fail" {
                Faults {
                    fail_above: 0.0,
                    ..Faults::NONE
                }
            } else {
                Faults {
                    exit_above: 0.0,
                    ..Faults::NONE
                }
            };
            run_loop(5, 9, false, faults, 1, None)
                .map(|_| ())
                .map_err(|e| (e.to_string(), e.is_shared()))
        }
        "mismatch" => {
            let fail_above = if rank + 1 == size { 1.0 } else { 2.0 };
            let (g, progs) = loop_graph(
                5,
                Faults {
                    fail_above,
                    ..Faults::NONE
                },
            );
            let exe =
                compile(&g, &progs, &CompileOptions::default()).map_err(|e| (e.to_string(), false));
            exe.and_then(|exe| {
                Engine::new(&exe, EngineOptions::default())
                    .map(|_| ())
                    .map_err(|e| (e.to_string(), e.is_shared()))
            })
        }
        "alone" => {
            if rank == 1 {
                Err(("input file of rank 1 is missing".to_string(), false))
            } else {
                // Rank 0 goes on into a run that needs rank 1, and would wait for it.
                run_loop(5, 9, false, Faults::NONE, 1, None)
                    .map(|_| ())
                    .map_err(|e| (e.to_string(), e.is_shared()))
            }
        }
        other => Err((
            format!("unknown check '{other}' (check, fail, die, mismatch, alone)"),
            false,
        )),
    };
    match result {
        Ok(()) => {
            if cluster.is_root() {
                println!("ok on {size} ranks");
            }
            ExitCode::SUCCESS
        }
        // A shared error is reported once, by rank 0; one only this rank has ends the job.
        Err((e, shared)) => cluster.fail(&[e], shared),
    }
}

/// The checks, by name.
const CHECKS: &[(&str, fn())] = &[
    (
        "random_graphs_the_loop_and_remote_buffers_give_the_same_digests_on_one_two_and_three_ranks",
        random_graphs_the_loop_and_remote_buffers_give_the_same_digests_on_one_two_and_three_ranks,
    ),
    (
        "a_vertex_failure_on_rank_one_is_reported_by_rank_zero_and_ends_the_job",
        a_vertex_failure_on_rank_one_is_reported_by_rank_zero_and_ends_the_job,
    ),
    (
        "a_rank_that_dies_ends_the_job_with_an_error_not_a_hang",
        a_rank_that_dies_ends_the_job_with_an_error_not_a_hang,
    ),
    (
        "ranks_that_load_different_executables_refuse_to_run",
        ranks_that_load_different_executables_refuse_to_run,
    ),
    (
        "an_error_only_one_rank_has_is_printed_by_it_and_ends_the_job",
        an_error_only_one_rank_has_is_printed_by_it_and_ends_the_job,
    ),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("rank") {
        return rank_main(args.get(1).map_or("check", String::as_str));
    }
    // As the test harness: `--list` lists the checks, a free argument filters them by name,
    // other options (`--nocapture`, `--test-threads`, …) change nothing here.
    let filter = args.iter().find(|a| !a.starts_with('-'));
    let chosen: Vec<_> = CHECKS
        .iter()
        .filter(|(name, _)| filter.is_none_or(|f| name.contains(f.as_str())))
        .collect();
    if args.iter().any(|a| a == "--list") {
        for (name, _) in &chosen {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    println!("\nrunning {} tests", chosen.len());
    let mut failed = Vec::new();
    for (name, check) in &chosen {
        let ok = catch_unwind(AssertUnwindSafe(check)).is_ok();
        println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
        if !ok {
            failed.push(*name);
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed",
        if failed.is_empty() { "ok" } else { "FAILED" },
        chosen.len() - failed.len(),
        failed.len()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
