//! Helpers of the `cardiac` command-line tests (`cli.rs`, `cli_protocols.rs`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_cardiac");

/// A fresh folder for one test (tests run in parallel and clean up after themselves).
pub fn tmp() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli_{}_{n}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn cardiac(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run cardiac")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Fails with a message containing `want`, without panicking.
pub fn fails_with(args: &[&str], want: &str) {
    let o = cardiac(args);
    let err = stderr(&o);
    assert!(!o.status.success(), "{args:?} succeeded:\n{err}");
    assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
    assert!(err.contains(want), "{args:?}: expected {want:?} in:\n{err}");
}

/// `cardiac run ARGS --out OUT` fails with a message containing `want`, without panicking.
pub fn run_refused(out: &str, args: &[&str], want: &str) {
    fails_with(&[&["run"][..], args, &["--out", out]].concat(), want);
}

/// `cardiac run --params D/first/results.json --snapshot-every 0 EXTRA --out D/again` succeeds
/// and writes the same `results.json` and `activation.vtu` as `D/first`, byte for byte.
pub fn repeats_from_its_record(d: &Path, extra: &[&str]) {
    let results = d.join("first/results.json").display().to_string();
    let again = d.join("again").display().to_string();
    let args = [
        &["run", "--params", &results, "--snapshot-every", "0"][..],
        extra,
        &["--out", &again],
    ]
    .concat();
    let o = cardiac(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["results.json", "activation.vtu"] {
        assert_eq!(
            std::fs::read(d.join("first").join(f)).unwrap(),
            std::fs::read(d.join("again").join(f)).unwrap(),
            "{f} differs"
        );
    }
}

pub fn mesh() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/biv_0.3.msh")
        .display()
        .to_string()
}

/// `cardiac ARGS`, killed after `limit`: `None` if it was still running then (a hang, or work
/// far beyond what was asked).
pub fn cardiac_within(args: &[&str], limit: std::time::Duration) -> Option<Output> {
    app_support::testing::run_within(std::path::Path::new(BIN), args, limit)
}

/// `cardiac ARGS` fails within `secs` seconds, cleanly (an exit status, not a signal; no
/// panic), with an error line naming every one of `want`; returns stderr.
pub fn refused_within(args: &[&str], secs: u64, want: &[&str]) -> String {
    let Some(o) = cardiac_within(args, std::time::Duration::from_secs(secs)) else {
        panic!("{args:?} still ran after {secs} s");
    };
    let err = stderr(&o);
    assert!(!o.status.success(), "{args:?} succeeded:\n{err}");
    assert!(
        o.status.code().is_some(),
        "{args:?} was killed by a signal:\n{err}"
    );
    assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("error"))
        .unwrap_or_else(|| panic!("{args:?}: no error line in:\n{err}"));
    for w in want {
        assert!(
            line.contains(w),
            "{args:?}: expected {w:?} in the error line of:\n{err}"
        );
    }
    err
}

/// Reads `lines` (a child's output) up to and including the first line that starts with
/// `prefix`, and returns what was read, one line each.
pub fn read_until(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    prefix: &str,
) -> String {
    let mut said = String::new();
    for l in lines {
        let l = l.expect("the child's output is text");
        said.push_str(&l);
        said.push('\n');
        if l.starts_with(prefix) {
            break;
        }
    }
    said
}
