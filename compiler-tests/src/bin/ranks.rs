//! The multi-rank checks as a program to start under `mpiexec` (`tests/mpi.rs` does):
//!
//! ```text
//! mpiexec -n 3 ranks check      # random graphs, the loop and remote-buffer cases; rank 0
//!                               # prints digests
//! mpiexec -n 2 ranks fail       # a vertex fails on rank 1: every rank exits with status 1
//! mpiexec -n 2 ranks die        # rank 1 exits (status 3) in the middle of a run
//! mpiexec -n 2 ranks mismatch   # the last rank compiles another graph
//! mpiexec -n 2 ranks alone      # rank 1 alone fails before any engine: it ends the job
//! ```
//!
//! Every rank checks its results against the host models and exits with status 1 on any
//! difference or error; rank 0 prints one digest line per case, the same for any number of
//! ranks (the test compares them).

use std::process::ExitCode;

use compiler_tests::random::build_case;
use compiler_tests::ranks::*;
use poplar::{compile, CompileOptions, Engine, EngineOptions};

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
        compiler_tests::remote::run_remote(2, None).map_err(|e| format!("remote buffers: {e}"))?;
    if got != compiler_tests::remote::remote_expect() {
        return Err("remote buffers: results differ from the host model".into());
    }
    if root {
        let bytes = got.buffers.iter().chain(&got.tensors).flatten();
        println!("remote: {:016x}", digest(bytes.map(|&b| u32::from(b))));
    }
    Ok(())
}

fn main() -> ExitCode {
    let cluster = match poplar::dist::init() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    compiler_tests::link();
    let what = std::env::args().nth(1).unwrap_or_else(|| "check".into());
    let (rank, size) = (cluster.rank(), cluster.size());
    let result = match what.as_str() {
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
