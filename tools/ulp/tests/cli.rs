//! The `ulp` command's `--json` output: refused before the sweep if it exists (unless
//! `--force`) or is the program itself (always); written atomically.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ulp");

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ulp-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `ulp args`, killed after `limit`: (success, stderr), or `None` if it ran out of time.
fn ulp(args: &[&str], json: &Path, limit: Duration) -> Option<(bool, String)> {
    let mut child = Command::new(BIN)
        .args(args)
        .arg("--json")
        .arg(json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return Some((status.success(), err));
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_json_output_is_checked_before_the_sweep() {
    let d = dir("json");
    let json = d.join("sweeps.json");
    // A short sweep: 1,000 sampled divisions.
    let quick = [
        "--functions",
        "div",
        "--modes",
        "ieee",
        "--div-samples",
        "1000",
        "--threads",
        "1",
    ];
    let (ok, err) = ulp(&quick, &json, Duration::from_secs(60)).expect("a short sweep");
    assert!(ok, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    // The full sweep of every f32 takes minutes: an existing output must be refused at once.
    std::fs::write(&json, "earlier").unwrap();
    let full = ["--functions", "sqrt", "--threads", "1"];
    let r = ulp(&full, &json, Duration::from_secs(20));
    let (ok, err) = r.expect("ulp ran the sweep before checking --json");
    assert!(!ok && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(&json).unwrap(), "earlier");
    // Forced, it is replaced.
    let forced: Vec<&str> = quick.iter().copied().chain(["--force"]).collect();
    let (ok, err) = ulp(&forced, &json, Duration::from_secs(60)).unwrap();
    assert!(ok, "{err}");
    assert!(std::fs::read_to_string(&json).unwrap().starts_with('['));
    // The program itself is never the output, forced or not.
    let (ok, err) = ulp(&forced, Path::new(BIN), Duration::from_secs(20)).unwrap();
    assert!(!ok && err.contains("is also an input"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
    assert_eq!(left.len(), 1, "only sweeps.json: {left:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A `--json` into a folder that does not exist is refused at once, naming the folder, not
/// after the sweep (minutes).
#[test]
fn a_json_output_into_a_missing_folder_is_refused_before_the_sweep() {
    let d = dir("nofolder");
    let json = d.join("no").join("such").join("sweeps.json");
    let full = ["--functions", "sqrt", "--threads", "1"];
    let r = ulp(&full, &json, Duration::from_secs(20));
    let (ok, err) = r.expect("ulp ran the sweep before checking --json's folder");
    assert!(
        !ok && err.contains("does not exist") && err.contains("such"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}
