//! The cardiac app over MPI ranks, unchanged: `mpiexec -n 2 cardiac exec FILE` (an executable
//! saved by `cardiac compile --chips 2`) and `mpiexec -n 2 cardiac run --chips 2` write the
//! same files as one process, bit for bit; so do 3 ranks (2 chips split by tiles). Needs the
//! feature `mpi` and `mpiexec` (`.ci/run` installs MPICH). A run stopped with a checkpoint and
//! resumed, on 1 or 2 ranks, writes the files of one that never stopped; so does one stopped by
//! a SIGINT that reached one rank only. The pseudo-ECG is the same on 1, 2 and 3 ranks.

#![cfg(feature = "mpi")]

mod support;

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

/// The pseudo-ECG over ranks: a two-chip run with the 12-lead ECG and one more electrode
/// writes the same `ecg.csv` (and every other file) on 1, 2 and 3 ranks, byte for byte: the
/// device's lead-field sums are reduced in the same order whichever rank holds a tile.
#[test]
fn the_ecg_is_the_same_on_one_two_and_three_ranks() {
    let d = tmp("ecg");
    let run = |n: usize| {
        let out = d.join(format!("out{n}"));
        let args = [
            "run",
            "--dx",
            "1",
            "--chips",
            "2",
            "--t-end",
            "30",
            "--ecg-12-lead",
            "--electrode",
            "ahead=30,3.5,1.5",
            "--ecg-every",
            "1",
            "--threads",
            "1",
            "--no-profile",
            "--no-report",
            "--out",
            out.to_str().unwrap(),
        ];
        let o = ranks(n, &args);
        ok(&o, &format!("run with an ECG on {n} ranks"));
        out
    };
    let base = run(1);
    let names = files(&base);
    assert!(
        names.iter().any(|f| f == "ecg.csv") && names.iter().any(|f| f == "ecg.png"),
        "{names:?}"
    );
    // A real ECG: 31 samples of 1 + 10 + 12 columns, the wave seen (not a constant).
    let csv = std::fs::read_to_string(base.join("ecg.csv")).unwrap();
    let rows: Vec<Vec<f64>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 31, "{csv}");
    assert!(rows.iter().all(|r| r.len() == 23), "{csv}");
    let ahead = 10; // t, RA, LA, LL, V1..V6, then "ahead", then the leads
    assert!(
        rows.iter().any(|r| r[ahead] != rows[0][ahead]),
        "the electrode ahead saw nothing:\n{csv}"
    );
    for n in [2, 3] {
        let out = run(n);
        assert_eq!(names, files(&out), "{n} ranks");
        for f in &names {
            same_file(&base.join(f), &out.join(f));
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// The processes of this machine whose environment holds `VAR=value` and `PMI_RANK=rank`
/// (MPICH's rank variable).
#[cfg(target_os = "linux")]
fn pids_with(var: &str, value: &str, rank: usize) -> Vec<u32> {
    let want = format!("{var}={value}");
    let rank_var = format!("PMI_RANK={rank}");
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        let vars: Vec<&[u8]> = env.split(|&b| b == 0).collect();
        if vars.contains(&want.as_bytes()) && vars.contains(&rank_var.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

/// Kills the process `job` once the multi-rank tests' time limit has passed, unless the flag
/// returned is set first: a hang fails a test instead of stalling it.
#[cfg(target_os = "linux")]
fn watchdog(
    job: u32,
) -> (
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<()>,
) {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    let handle = std::thread::spawn(move || {
        let start = std::time::Instant::now();
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            if start.elapsed() > app_support::testing::TIME_LIMIT {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &job.to_string()])
                    .status();
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    });
    (done, handle)
}

/// A SIGINT that reaches one rank only of a 2-rank job (rank 1, then rank 0), as a user's
/// `kill` or a scheduler might send it: the whole job writes a checkpoint at the next chunk
/// end, every rank ends with status 130 and rank 0 says how to continue; continued on 2
/// ranks, the run writes every file of the uninterrupted one, byte for byte.
#[cfg(target_os = "linux")]
#[test]
fn a_sigint_to_one_rank_stops_the_whole_job_with_a_checkpoint_to_continue_from() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let d = tmp("sigint");
    let base = [
        "run",
        "--dx",
        "1",
        "--chips",
        "2",
        "--beats",
        "3",
        "--bcl",
        "400",
        "--t-end",
        "1200",
        "--dt-ode",
        "0.1",
        "--trace-point",
        "10,3,1",
        "--trace-every",
        "5",
        "--threads",
        "1",
        "--no-profile",
        "--no-report",
    ];
    let args_for = |out: &Path| -> Vec<String> {
        base.iter()
            .map(|s| s.to_string())
            .chain(["--out".to_string(), out.display().to_string()])
            .collect()
    };
    let full = d.join("full");
    let args = args_for(&full);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&ranks(1, &args), "the uninterrupted run on 1 rank");
    for rank in [1, 0] {
        let out = d.join(format!("int{rank}"));
        let tag = format!("{}_{rank}", std::process::id());
        let mut child = Command::new("mpiexec")
            .args(["-n", "2", BIN])
            .args(args_for(&out))
            .env("CARDIAC_MPI_TEST_TAG", &tag)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A hang must fail the test, not stall it.
        let (done, watchdog) = watchdog(child.id());
        let err = child.stderr.take().unwrap();
        let err = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut BufReader::new(err), &mut s);
            s
        });
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut said = support::read_until(&mut lines, "progress:");
        // Every rank's handlers are in place a little after rank 0's "progress:".
        std::thread::sleep(std::time::Duration::from_millis(500));
        let pids = pids_with("CARDIAC_MPI_TEST_TAG", &tag, rank);
        assert_eq!(pids.len(), 1, "rank {rank}'s process: {pids:?}\n{said}");
        let kill = Command::new("kill")
            .args(["-INT", &pids[0].to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        for l in lines {
            said.push_str(&l.unwrap());
            said.push('\n');
        }
        let status = child.wait().unwrap();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        watchdog.join().unwrap();
        let err = err.join().unwrap();
        let why = if rank == 0 {
            "stopped by SIGINT at"
        } else {
            "stopped by SIGINT to another rank at"
        };
        assert!(
            said.contains(why),
            "SIGINT to rank {rank}: {status}\n{said}{err}"
        );
        assert_eq!(said.matches("stopped by").count(), 1, "{said}");
        assert_eq!(
            status.code(),
            Some(130),
            "SIGINT to rank {rank}\n{said}{err}"
        );
        assert!(!out.join("results.json").exists());
        let hint = said
            .lines()
            .find_map(|l| l.strip_prefix("to continue: mpiexec -n 2 "))
            .unwrap_or_else(|| panic!("no way to continue in:\n{said}"));
        let args: Vec<&str> = hint.split(' ').skip(1).collect(); // after "cardiac"
        assert!(args.contains(&"--resume"), "{hint}");
        let o = ranks(2, &args);
        ok(
            &o,
            &format!("the run continued after a SIGINT to rank {rank}"),
        );
        assert!(String::from_utf8_lossy(&o.stdout).contains("resumed from"));
        std::fs::remove_dir_all(out.join("checkpoints")).unwrap();
        let names = files(&full);
        assert_eq!(names, files(&out));
        for f in &names {
            same_file(&full.join(f), &out.join(f));
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}
