//! Every numeric option of `hdiff run`, given 0, a negative number, NaN, ±infinity, 10^-300 and
//! 10^300, ends within [`LIMIT`] (10 s; the test kills it otherwise) either in a clean error — a
//! non-zero exit status (not a signal), no panic, an error line naming the option — or in a
//! successful run, on a 24 × 24 × 4 grid.

use std::time::Duration;

use app_support::testing::NumericSweep;

/// Longest an invocation may take.
const LIMIT: Duration = Duration::from_secs(10);

#[test]
fn every_numeric_option_ends_in_a_clean_error_or_a_run_within_the_limit() {
    let d = std::env::temp_dir().join(format!("hdiff-numeric-{}", std::process::id()));
    let out = d.join("o").display().to_string();
    let mut sweep = NumericSweep::new(env!("CARGO_BIN_EXE_hdiff"), LIMIT);
    let base: Vec<(&str, &str)> = vec![
        ("run", ""),
        ("--grid", "24x24x4"),
        ("--iterations", "2"),
        ("--out", &out),
        ("--force", ""),
    ];
    sweep.options(
        &base,
        &[
            ("--chips", 1),
            ("--planes", 1),
            ("--iterations", 1),
            ("--threads", 1),
            ("--coeff", 1),
        ],
    );
    eprintln!("{} invocations", sweep.tried);
    sweep.assert_clean();
    let _ = std::fs::remove_dir_all(&d);
}
