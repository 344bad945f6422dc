//! Inputs that are not regular files: a FIFO given as `--data` or `--labels` (or to the
//! readers directly) is refused at once, naming it, instead of blocking for ever on the open
//! (nobody writes into it). A regression is killed after a timeout and fails, not waited for.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mlp-inputs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fifo(d: &Path, name: &str) -> PathBuf {
    let p = d.join(name);
    assert!(Command::new("mkfifo")
        .arg(&p)
        .status()
        .expect("mkfifo")
        .success());
    p
}

#[test]
fn fifo_data_and_labels_are_refused_instead_of_blocking() {
    let d = temp_dir("fifo");
    let x = fifo(&d, "x.npy");
    let y = fifo(&d, "y.npy");
    let [sx, sy] = {
        let [a, b, ..] = mlp::digits::npy_paths(&mlp::digits::dir());
        [a, b]
    };
    let out = d.join("out");
    for (data, labels, name) in [(&x, &sy, "x.npy"), (&sx, &y, "y.npy")] {
        let args: Vec<String> = [
            "train".into(),
            "--epochs".into(),
            "1".into(),
            "--data".into(),
            data.display().to_string(),
            "--labels".into(),
            labels.display().to_string(),
            "--out".into(),
            out.display().to_string(),
        ]
        .to_vec();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = app_support::testing::run_within(
            Path::new(env!("CARGO_BIN_EXE_mlp")),
            &args,
            Duration::from_secs(30),
        )
        .unwrap_or_else(|| panic!("mlp {args:?} still ran after 30 s (blocked on a FIFO?)"));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded:\n{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            err.contains(name) && err.contains("not a regular file"),
            "{args:?}: {err}"
        );
    }
    // The readers themselves, in a thread that a regression would leave blocked.
    let (tx, rx) = std::sync::mpsc::channel();
    let xf = x.clone();
    std::thread::spawn(move || {
        let _ = tx.send(
            mlp::data::read_features(&xf)
                .map(|_| ())
                .map_err(|e| e.to_string()),
        );
    });
    let r = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("read_features blocked on a FIFO");
    let e = r.unwrap_err();
    assert!(
        e.contains("x.npy") && e.contains("not a regular file"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}
