//! The `mlp` command as a user runs it: its output folder's rules, its refusal to run as
//! the copies an MPI launcher starts when built without MPI, a pipelined run, and bad options
//! refused naming the option.

use std::path::PathBuf;
use std::process::Command;

fn mlp() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mlp"))
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mlp-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Started by an MPI launcher of several ranks, a build without the feature `mpi` refuses
/// (each rank would train alone and write the same history), saying how to build with it;
/// the output folder is not created.
#[cfg(not(feature = "mpi"))]
#[test]
fn an_mpi_launch_of_a_build_without_mpi_is_refused() {
    let dir = temp_dir("mpi-env");
    let out = mlp()
        .args([
            "train",
            "--dataset",
            "blobs",
            "--epochs",
            "1",
            "--per-class",
            "20",
            "--out",
        ])
        .arg(&dir)
        .env("PMI_SIZE", "3")
        .env("PMI_RANK", "2")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "ran: {err}");
    assert!(
        err.contains("PMI_SIZE=3") && err.contains("-p mlp --features mpi"),
        "{err}"
    );
    assert!(!dir.exists(), "the output folder was created");
}

/// A second `mlp train` into a folder in use is refused, naming the first; `--force` replaces
/// the earlier run's history and keeps the user's files.
#[test]
fn a_folder_in_use_is_refused_and_force_replaces_only_the_runs_files() {
    let dir = temp_dir("lock");
    std::fs::create_dir_all(&dir).unwrap();
    let lock = app_support::output::OutputLock::acquire(&dir).unwrap();
    let args = [
        "train",
        "--dataset",
        "blobs",
        "--epochs",
        "1",
        "--per-class",
        "20",
        "--force",
        "--out",
    ];
    let out = mlp().args(args).arg(&dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "ran: {err}");
    assert!(
        err.contains("in use by another run")
            && err.contains(&format!("pid {}", std::process::id())),
        "{err}"
    );
    drop(lock);
    std::fs::write(dir.join("history.json"), "earlier").unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let out = mlp().args(args).arg(&dir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let history = std::fs::read_to_string(dir.join("history.json")).unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&history).is_ok());
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["history.json", "loss.png", "notes.txt"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A short blobs run with `extra` options into a fresh folder `name`: its output.
fn blobs(name: &str, extra: &[&str]) -> (std::process::Output, PathBuf) {
    let dir = temp_dir(name);
    let out = mlp()
        .args([
            "train",
            "--dataset",
            "blobs",
            "--epochs",
            "2",
            "--per-class",
            "40",
            "--micro-batch",
            "4",
            "--threads",
            "2",
            "--out",
        ])
        .arg(&dir)
        .args(extra)
        .output()
        .unwrap();
    (out, dir)
}

/// The epochs of a run's `history.json` without their wall times.
fn epochs(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let h: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("history.json")).unwrap()).unwrap();
    h["epochs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.as_object_mut().unwrap().remove("seconds");
            e
        })
        .collect()
}

/// Two hidden layers in two pipeline stages (R = 2 × P = 2 chips, GA 4): the run succeeds,
/// says so, records the stages, and learns what one stage learns from the same start (the
/// same arithmetic per element whatever the stage: popnn's `tests/pipeline.rs`), with each
/// schedule and with recomputation.
#[test]
fn two_pipeline_stages_train_a_two_hidden_layer_model() {
    let common = ["--hidden", "16,8", "--replicas", "2", "--accumulate", "4"];
    let (one, one_dir) = blobs("stages-1", &common);
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    let base = epochs(&one_dir);
    assert_eq!(base.len(), 2);
    for (k, extra) in [
        &["--pipeline-stages", "2"][..],
        &[
            "--pipeline-stages",
            "2",
            "--schedule",
            "interleaved",
            "--recompute",
        ][..],
        &["--pipeline-stages", "2", "--schedule", "sequential"][..],
    ]
    .into_iter()
    .enumerate()
    {
        let args: Vec<&str> = common.iter().chain(extra).copied().collect();
        let (out, dir) = blobs(&format!("stages-2-{k}"), &args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("2 pipeline stages") && text.contains("16 → 8"),
            "{text}"
        );
        let h: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("history.json")).unwrap())
                .unwrap();
        assert_eq!(h["config"]["stages"], 2);
        assert_eq!(h["config"]["shape"]["hidden"], serde_json::json!([16, 8]));
        assert!(dir.join("loss.png").exists());
        assert_eq!(epochs(&dir), base, "{extra:?} against one stage");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::remove_dir_all(&one_dir).unwrap();
}

/// `--half-weights`: the run records it and learns what f32 weights learn, within the f16
/// rounding of the weights (every epoch's training loss within 2 %; measured: 0.13 % and 0.63 %).
#[test]
fn half_weights_learn_as_f32_weights_do() {
    let (full, full_dir) = blobs("f32-weights", &[]);
    assert!(
        full.status.success(),
        "{}",
        String::from_utf8_lossy(&full.stderr)
    );
    let (half, half_dir) = blobs("f16-weights", &["--half-weights"]);
    assert!(
        half.status.success(),
        "{}",
        String::from_utf8_lossy(&half.stderr)
    );
    let h: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(half_dir.join("history.json")).unwrap())
            .unwrap();
    assert_eq!(h["config"]["half_weights"], true);
    for (a, b) in epochs(&full_dir).iter().zip(epochs(&half_dir)) {
        let (x, y) = (
            a["train_loss"].as_f64().unwrap(),
            b["train_loss"].as_f64().unwrap(),
        );
        assert!((x - y).abs() <= 0.02 * x, "f32 {x} against f16 {y}");
    }
    std::fs::remove_dir_all(&full_dir).unwrap();
    std::fs::remove_dir_all(&half_dir).unwrap();
}

/// Bad values of the new options, and the removed `--state-chunks`, are refused before the
/// output folder is made, naming the option (more pipeline stages than layers: popnn's
/// refusal, under the command line's name).
#[test]
fn bad_pipeline_and_state_options_are_refused_naming_them() {
    for (k, (extra, option)) in [
        (&["--pipeline-stages", "3"][..], "--pipeline-stages"),
        (&["--pipeline-stages", "0"][..], "--pipeline-stages"),
        (&["--hidden", "16,0"][..], "--hidden"),
        (&["--hidden", "16,x"][..], "--hidden"),
        (&["--schedule", "fastest"][..], "--schedule"),
        (&["--activation", "tanh"][..], "--activation"),
        (&["--state-location", "disk"][..], "--state-location"),
        (&["--state-chunks", "3"][..], "--state-chunks"),
        (&["--shard", "3", "--replicas", "4"][..], "--shard"),
    ]
    .into_iter()
    .enumerate()
    {
        let (out, dir) = blobs(&format!("bad-{k}"), extra);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{extra:?} ran");
        // An error exit (clap's 2 or the program's 1), not a signal.
        assert!(matches!(out.status.code(), Some(1 | 2)), "{extra:?}: {err}");
        assert!(err.contains(option), "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{extra:?}: {err}");
        assert!(!dir.exists(), "{extra:?} made the output folder");
    }
}

/// `--threads 0` is refused as cardiac refuses it (it meant "all cores"), and 10^9 epochs are
/// estimated and refused unless `--force` (they ran with no estimate); neither makes the
/// output folder.
#[test]
fn zero_threads_and_unbounded_epochs_are_refused() {
    let dir = temp_dir("threads-0");
    let out = mlp()
        .args([
            "train",
            "--dataset",
            "blobs",
            "--epochs",
            "1",
            "--threads",
            "0",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "--threads 0 ran: {err}");
    assert!(
        err.contains("--threads 0: give at least 1 (or leave it out: one per core)"),
        "{err}"
    );
    assert!(!dir.exists(), "--threads 0 made the output folder");
    let dir = temp_dir("epochs");
    let out = mlp()
        .args(["train", "--epochs", "1000000000", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "10^9 epochs ran: {err}");
    assert!(
        err.contains("--epochs 1000000000 of 5620 samples through 64 → 64 → 10 is")
            && err.contains("sample-parameters")
            && err.contains("Pass --force to run it anyway"),
        "{err}"
    );
    assert!(!dir.exists(), "10^9 epochs made the output folder");
}

/// `--epochs 0` is refused (it wrote an empty history and plot), and an f32 option's value
/// beyond f32's range or below its smallest subnormal is refused naming the value typed (it
/// said "--lr inf" for `--lr 1e39`); neither makes the output folder.
#[test]
fn zero_epochs_and_values_f32_cannot_hold_are_refused_naming_them() {
    let dir = temp_dir("epochs-0");
    let out = mlp()
        .args(["train", "--dataset", "blobs", "--epochs", "0", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "--epochs 0 ran: {err}");
    assert!(err.contains("--epochs 0: at least 1 epoch"), "{err}");
    assert!(!dir.exists(), "--epochs 0 made the output folder");
    for (args, want) in [
        (&["--lr", "1e39"][..], "1e39 is beyond the range of f32"),
        (
            &["--optimizer", "adam", "--eps", "1e-50"][..],
            "1e-50 is below the smallest non-zero f32",
        ),
    ] {
        let (out, dir) = blobs("f32-range", args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} ran: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!dir.exists(), "{args:?} made the output folder");
    }
}

/// A layer too wide for a tile — a huge `--hidden`, or a huge label in a data file — is one
/// line naming the option or the file, even with `--force` (it printed popnn's validation
/// dump of a hundred vertices).
#[test]
fn a_huge_width_or_label_is_one_message_naming_it() {
    let (out, dir) = blobs("huge-width", &["--hidden", "100000000000", "--force"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "ran: {err}");
    assert!(
        err.contains(
            "--hidden 100000000000: a layer of 8 × 100000000000 units over --tiles 4 puts"
        ) && err.contains("give narrower layers"),
        "{err}"
    );
    assert!(!err.contains("graph is invalid"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!dir.exists());
    let dir = temp_dir("huge-label");
    std::fs::create_dir_all(&dir).unwrap();
    let (x, y) = (dir.join("x.npy"), dir.join("y.npy"));
    let write = |path: &std::path::Path, dict: &str, data: &[u8]| {
        let h = format!("{dict}\n");
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        b.extend_from_slice(h.as_bytes());
        b.extend_from_slice(data);
        std::fs::write(path, b).unwrap();
    };
    let xs: Vec<u8> = (0..200)
        .flat_map(|i| ((i % 7) as f32).to_le_bytes())
        .collect();
    write(
        &x,
        "{'descr': '<f4', 'fortran_order': False, 'shape': (100, 2), }",
        &xs,
    );
    let ys: Vec<u8> = (0..100i64)
        .flat_map(|i| if i == 0 { 1_000_000_000_000 } else { i % 2 }.to_le_bytes())
        .collect();
    write(
        &y,
        "{'descr': '<i8', 'fortran_order': False, 'shape': (100,), }",
        &ys,
    );
    let out = mlp()
        .args(["train", "--epochs", "1", "--force", "--data"])
        .arg(&x)
        .arg("--labels")
        .arg(&y)
        .arg("--out")
        .arg(dir.join("o"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "ran: {err}");
    assert!(
        err.contains(&format!(
            "{}: labels up to 1000000000000 make 1000000000001 classes: a layer of 64 × 1000000000001 units",
            y.display()
        )),
        "{err}"
    );
    assert!(
        !err.contains("graph is invalid") && !err.contains("--classes"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
