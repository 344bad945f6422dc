//! Checkpoint and restart of `cardiac run`: a run stopped (by `--stop-after`, which acts as a
//! signal would, or by a real SIGINT) and resumed with `--resume` writes every file of the
//! run that never stopped, byte for byte; a checkpoint of another run is refused naming what
//! differs; a damaged one is refused and the one before it used.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::{cardiac, stderr, tmp};

/// A paced S1–S2 run on the 1 mm slab: S1 at 0 and 400 ms, S2 at 700 ms, to 1,100 ms, with
/// snapshots every 20 ms and a trace every 5 ms (device runs of 5 ms), so that every kind of
/// record a checkpoint carries is written.
const PACED: &[&str] = &[
    "run",
    "--dx",
    "1",
    "--tiles",
    "16",
    "--beats",
    "2",
    "--bcl",
    "400",
    "--s2",
    "300",
    "--dt-ode",
    "0.1",
    "--snapshot-every",
    "20",
    "--trace-point",
    "10,3,1",
    "--trace-every",
    "5",
    "--no-profile",
];

fn run(base: &[&str], extra: &[&str], out: &Path) -> Output {
    let args = [base, extra, &["--out", out.to_str().unwrap()]].concat();
    cardiac(&args)
}

fn ok(o: &Output, what: &str) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{what}: {}\n{out}\n{}",
        o.status,
        stderr(o)
    );
    assert!(!stderr(o).contains("panicked"), "{what}: {}", stderr(o));
    out
}

/// The names of the files in `dir` (not folders).
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

/// Every file of `a` is in `b` with the same bytes, and `b` has no other file.
fn same_files(a: &Path, b: &Path) {
    let (fa, fb) = (files(a), files(b));
    assert_eq!(
        fa,
        fb,
        "{} and {} hold other files",
        a.display(),
        b.display()
    );
    assert!(fa.len() > 5, "{fa:?}");
    for f in &fa {
        let (x, y) = (
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
        );
        assert!(
            x == y,
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

fn checkpoints(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ckpt"))
        .collect();
    v.sort();
    v
}

/// Stops the paced run at each of `stops` (ms) and resumes it, with `threads`; every output
/// equals the uninterrupted run's.
fn stop_and_resume(threads: &str, stops: &[&str]) {
    stop_and_resume_with(&[], threads, stops);
}

/// [`stop_and_resume`] of the paced run with `extra` options.
fn stop_and_resume_with(extra: &[&str], threads: &str, stops: &[&str]) {
    let d = tmp();
    let base = [PACED, extra, &["--threads", threads]].concat();
    let full = d.join("full");
    ok(&run(&base, &[], &full), "the uninterrupted run");
    for stop in stops {
        let out = d.join(format!("stop{stop}"));
        let o = run(
            &base,
            &["--stop-after", stop, "--checkpoint-every", "150"],
            &out,
        );
        let said = ok(&o, &format!("the run stopped at {stop} ms"));
        assert!(said.contains("stopped by --stop-after"), "{said}");
        let hint = said
            .lines()
            .find_map(|l| l.strip_prefix("to continue: "))
            .unwrap_or_else(|| panic!("no way to continue in:\n{said}"));
        assert!(
            hint.contains("--resume") && !hint.contains("--stop-after"),
            "{hint}"
        );
        // Nothing of the run's end was written.
        for f in [
            "results.json",
            "activation.vtu",
            "traces.csv",
            "voltage.pvd",
        ] {
            assert!(!out.join(f).exists(), "{f} written by a stopped run");
        }
        // At most --checkpoint-keep (2) checkpoints.
        let kept = checkpoints(&out.join("checkpoints"));
        assert!((1..=2).contains(&kept.len()), "{kept:?}");
        // Resume with the hint's own arguments.
        let args: Vec<&str> = hint.split(' ').skip(1).collect();
        let said = ok(&cardiac(&args), &format!("the run resumed at {stop} ms"));
        assert!(said.contains("resumed from"), "{said}");
        std::fs::remove_dir_all(out.join("checkpoints")).unwrap();
        same_files(&full, &out);
        assert_eq!(
            full.join("ecg.csv").exists(),
            extra.iter().any(|a| a.starts_with("--electrode")),
            "ecg.csv with electrodes only"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Mid-beat (100 ms: the first action potential), between beats (380 ms: repolarised, before
/// the second S1 at 400 ms) and just before the S2 (695 ms, S2 at 700 ms).
#[test]
fn a_run_stopped_mid_beat_between_beats_and_before_s2_resumes_bit_for_bit_on_one_thread() {
    stop_and_resume("1", &["100", "380", "695"]);
}

#[test]
fn a_run_stopped_mid_beat_between_beats_and_before_s2_resumes_bit_for_bit_on_two_threads() {
    stop_and_resume("2", &["100", "380", "695"]);
}

/// The pseudo-ECG's record travels in the checkpoint: the resumed run's ecg.csv and ecg.png
/// are the uninterrupted run's (its t = 0 sample not taken twice).
#[test]
fn a_run_with_an_ecg_stopped_mid_beat_resumes_with_the_same_ecg() {
    stop_and_resume_with(
        &[
            "--electrode",
            "ahead=30,3.5,1.5",
            "--electrode",
            "behind=-10,3.5,1.5",
            "--ecg-every",
            "5",
        ],
        "2",
        &["100"],
    );
}

/// A short run (to 60 ms) with its checkpoints.
const SHORT: &[&str] = &[
    "run",
    "--dx",
    "1",
    "--tiles",
    "16",
    "--dt-ode",
    "0.1",
    "--t-end",
    "60",
    "--snapshot-every",
    "10",
    "--no-profile",
    "--no-report",
    "--threads",
    "1",
];

/// A short run stopped at 40 ms with checkpoints every 10 ms: two kept, of 30 and 40 ms.
fn stopped_short(out: &Path) -> Vec<PathBuf> {
    ok(
        &run(
            SHORT,
            &["--stop-after", "40", "--checkpoint-every", "10"],
            out,
        ),
        "the stopped run",
    );
    let kept = checkpoints(&out.join("checkpoints"));
    let names: Vec<String> = kept
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "checkpoint_000000000300.ckpt",
            "checkpoint_000000000400.ckpt"
        ]
    );
    kept
}

#[test]
fn a_truncated_or_corrupted_checkpoint_is_refused_and_the_one_before_it_used() {
    let d = tmp();
    let full = d.join("full");
    ok(&run(SHORT, &[], &full), "the uninterrupted run");
    type Damage = fn(&mut Vec<u8>);
    let damages: [(&str, Damage, &str); 3] = [
        ("truncated", |b| b.truncate(b.len() - 100), "truncated"),
        (
            "payload",
            |b| *b.last_mut().unwrap() ^= 0x10,
            "payload does not match its checksum",
        ),
        (
            "header",
            |b| b[30] ^= 0x01,
            "header does not match its checksum",
        ),
    ];
    for (name, damage, says) in damages {
        let out = d.join(name);
        let kept = stopped_short(&out);
        let newest = &kept[1];
        let mut bytes = std::fs::read(newest).unwrap();
        damage(&mut bytes);
        std::fs::write(newest, &bytes).unwrap();
        let o = run(
            SHORT,
            &["--resume", out.join("checkpoints").to_str().unwrap()],
            &out,
        );
        let said = ok(&o, &format!("resuming past a {name} checkpoint"));
        let err = stderr(&o);
        assert!(
            err.contains("checkpoint_000000000400.ckpt refused") && err.contains(says),
            "{name}: {err}"
        );
        assert!(
            said.contains("resumed from") && said.contains("000000000300"),
            "{said}"
        );
        std::fs::remove_dir_all(out.join("checkpoints")).unwrap();
        same_files(&full, &out);
    }
    // Both damaged: refused, saying why for each; nothing written.
    let out = d.join("both");
    let kept = stopped_short(&out);
    for k in &kept {
        let mut b = std::fs::read(k).unwrap();
        b.truncate(b.len() / 2);
        std::fs::write(k, b).unwrap();
    }
    let o = run(SHORT, &["--resume", out.to_str().unwrap()], &out);
    let err = stderr(&o);
    assert!(!o.status.success() && !err.contains("panicked"), "{err}");
    assert!(err.contains("no valid checkpoint"), "{err}");
    assert!(!out.join("results.json").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_checkpoint_of_another_run_is_refused_naming_what_differs() {
    let d = tmp();
    let cells = d.join("stim.txt");
    std::fs::write(&cells, "0 1 2 3 4 5 6 7 8 9").unwrap();
    let cells_s = cells.to_str().unwrap().to_string();
    let base = [SHORT, &["--stim-cells", &cells_s]].concat();
    let out = d.join("out");
    ok(
        &run(&base, &["--stop-after", "20"], &out),
        "the stopped run",
    );
    let ck = out.join("checkpoints");
    let ck_s = ck.to_str().unwrap();
    // `extra` given anew or in place of the base's.
    let refused = |extra: &[&str], want: &[&str]| {
        let mut args: Vec<&str> = base.clone();
        for kv in extra.chunks(2) {
            match args.iter().position(|a| *a == kv[0]) {
                Some(i) => args[i + 1] = kv[1],
                None => args.extend(kv),
            }
        }
        let o = run(&args, &["--resume", ck_s], &out);
        let err = stderr(&o);
        assert!(!o.status.success(), "{extra:?} resumed:\n{err}");
        assert!(!err.contains("panicked"), "{err}");
        for w in want {
            assert!(err.contains(w), "{extra:?}: {w:?} not in:\n{err}");
        }
    };
    refused(
        &["--strategy", "full"],
        &[
            "is not this run's",
            "--strategy \"mixed-clean\"",
            "\"full\"",
        ],
    );
    refused(&["--partition", "hierarchical"], &["--partition"]);
    refused(&["--dx", "2"], &["--dx 1.0", "2.0"]);
    refused(&["--t-end", "70"], &["--t-end"]);
    refused(&["--sigma-l", "0.2"], &["--sigma-l"]);
    refused(&["--tiles", "8"], &["--tiles"]);
    // The same options, but the stimulus file's cells changed: the mesh's digest differs.
    std::fs::write(&cells, "0 1 2 3 4 5 6 7 8 10").unwrap();
    refused(&[], &["its mesh differs"]);
    std::fs::write(&cells, "0 1 2 3 4 5 6 7 8 9").unwrap();
    // Nothing was written by the refused runs, and the right options still resume.
    assert!(!out.join("results.json").exists());
    ok(&run(&base, &["--resume", ck_s], &out), "the right options");
    assert!(out.join("results.json").exists());
    // The run finished: resuming again would rewrite its results, refused unless --force.
    let o = run(&base, &["--resume", ck_s], &out);
    assert!(
        !o.status.success() && stderr(&o).contains("--force"),
        "{}",
        stderr(&o)
    );
    // A new run into a folder holding checkpoints is refused (they would be lost).
    let o = run(&base, &["--checkpoint-dir", ck_s], &d.join("other"));
    assert!(
        !o.status.success() && stderr(&o).contains("checkpoint(s) of an earlier run"),
        "{}",
        stderr(&o)
    );
    // Bad options are named.
    for (args, want) in [
        (&["--checkpoint-every", "-1"][..], "--checkpoint-every"),
        (&["--checkpoint-keep", "0"], "--checkpoint-keep 0"),
        (&["--stop-after", "0"], "--stop-after"),
        (
            &["--resume", d.join("nothing").to_str().unwrap()],
            "no such folder",
        ),
        (
            &[
                "--resume",
                cells.parent().unwrap().join("out/..").to_str().unwrap(),
            ],
            "no checkpoint there",
        ),
    ] {
        let o = run(&base, args, &d.join("bad"));
        let err = stderr(&o);
        assert!(
            !o.status.success() && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        assert!(err.contains(want), "{args:?}: {want:?} not in {err}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A real SIGINT: the run writes a checkpoint at the next chunk end, says how to continue and
/// ends with status 130; continued, it writes the uninterrupted run's files.
#[cfg(unix)]
#[test]
fn sigint_writes_a_checkpoint_and_the_run_continues_from_it() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let d = tmp();
    let base = [PACED, &["--threads", "1"]].concat();
    let full = d.join("full");
    ok(&run(&base, &[], &full), "the uninterrupted run");
    let out = d.join("int");
    let mut child = Command::new(support::BIN)
        .args(&base)
        .args(["--out", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut said = support::read_until(&mut lines, "progress:");
    // The handlers are in place before "progress:"; a little of the run first.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    for l in lines {
        said.push_str(&l.unwrap());
        said.push('\n');
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(said.contains("stopped by SIGINT"), "{said}");
    let hint = said
        .lines()
        .find_map(|l| l.strip_prefix("to continue: "))
        .unwrap_or_else(|| panic!("no way to continue in:\n{said}"));
    assert!(!out.join("results.json").exists());
    let args: Vec<&str> = hint.split(' ').skip(1).collect();
    ok(&cardiac(&args), "the continued run");
    std::fs::remove_dir_all(out.join("checkpoints")).unwrap();
    same_files(&full, &out);
    let _ = std::fs::remove_dir_all(&d);
}

/// A checkpoint whose write fails in the background (here its rename, refused by the test
/// build's `APP_SUPPORT_FAIL_RENAME`) ends the run at the next checkpoint with the error
/// naming the file, and leaves neither it nor its temporary file behind.
#[test]
fn a_checkpoint_write_that_fails_in_the_background_ends_the_run_naming_it() {
    let d = tmp();
    let out = d.join("failed");
    let args = [
        "run",
        "--dx",
        "1",
        "--tiles",
        "16",
        "--dt-ode",
        "0.1",
        "--t-end",
        "60",
        "--snapshot-every",
        "0",
        "--no-profile",
        "--no-report",
        "--threads",
        "1",
        "--checkpoint-every",
        "10",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = std::process::Command::new(support::BIN)
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .env("APP_SUPPORT_FAIL_RENAME", "1")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("writing the checkpoint")
            // The first chunk end at or after 10 ms: 25 ms (chunks of 250 steps).
            && err.contains("checkpoint_000000000250.ckpt")
            && err.contains("rename refused"),
        "{err}"
    );
    assert!(!out.join("results.json").exists());
    let left: Vec<_> = std::fs::read_dir(out.join("checkpoints"))
        .map(|r| r.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&d);
}
