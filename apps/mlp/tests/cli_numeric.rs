//! Every numeric option of `mlp train` and `mlp scaling`, given 0, a negative number, NaN,
//! ±infinity, 10^-300 and 10^300, ends within [`LIMIT`] (10 s; the test kills it otherwise)
//! either in a clean error — a non-zero exit status (not a signal), no panic, an error line
//! naming the option — or in a successful run, on a small model and data set.

use std::time::Duration;

use app_support::testing::NumericSweep;

/// Longest an invocation may take.
const LIMIT: Duration = Duration::from_secs(10);

/// The options both commands take.
const COMMON: &[(&str, usize)] = &[
    ("--replicas", 1),
    ("--pipeline-stages", 1),
    ("--micro-batch", 1),
    ("--accumulate", 1),
    ("--lr", 1),
    ("--tiles", 1),
    ("--inputs", 1),
    ("--hidden", 1),
    ("--classes", 1),
    ("--per-class", 1),
    ("--seed", 1),
];

#[test]
fn every_numeric_option_ends_in_a_clean_error_or_a_run_within_the_limit() {
    let d = std::env::temp_dir().join(format!("mlp-numeric-{}", std::process::id()));
    let out = d.join("o").display().to_string();
    let mut sweep = NumericSweep::new(env!("CARGO_BIN_EXE_mlp"), LIMIT);
    let small = [
        ("--replicas", "2"),
        ("--micro-batch", "4"),
        ("--inputs", "4"),
        ("--hidden", "8,6"),
        ("--classes", "3"),
        ("--per-class", "8"),
        ("--tiles", "2"),
        ("--out", out.as_str()),
        ("--force", ""),
    ];
    let mut train = vec![("train", ""), ("--dataset", "blobs"), ("--epochs", "1")];
    train.extend(small);
    sweep.options(&train, COMMON);
    sweep.options(&train, &[("--epochs", 1), ("--threads", 1)]);
    let mut momentum = train.clone();
    momentum.push(("--optimizer", "momentum"));
    sweep.options(&momentum, &[("--momentum", 1)]);
    let mut adam = train.clone();
    adam.push(("--optimizer", "adam"));
    sweep.options(&adam, &[("--beta1", 1), ("--beta2", 1), ("--eps", 1)]);
    let mut scaling = vec![("scaling", ""), ("--max-replicas", "2")];
    scaling.extend(small);
    sweep.options(&scaling, COMMON);
    sweep.options(&scaling, &[("--max-replicas", 1)]);
    eprintln!("{} invocations", sweep.tried);
    sweep.assert_clean();
    let _ = std::fs::remove_dir_all(&d);
}
