//! The `mlp` command as a user runs it: its output folder's rules, and its refusal to run as
//! the copies an MPI launcher starts when built without MPI.

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
