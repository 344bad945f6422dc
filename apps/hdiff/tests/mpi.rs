//! hdiff over MPI ranks, unchanged: `mpiexec -n 2 hdiff run --chips 2` writes the same output
//! field as one process, bit for bit (and checks it against the host reference on the way).
//! Needs the feature `mpi` and `mpiexec`.

#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_hdiff");

fn run(n: usize, out: &Path) {
    let args = [
        "run",
        "--grid",
        "68x68x8",
        "--chips",
        "2",
        "--iterations",
        "3",
        "--threads",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = app_support::testing::run_on_ranks(n, BIN, &args);
    assert!(
        o.status.success(),
        "{n} ranks: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn two_and_three_ranks_write_the_output_of_one_process() {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mpi_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let base = d.join("one");
    run(1, &base);
    let want = std::fs::read(base.join("output.npy")).unwrap();
    for n in [2, 3] {
        let out = d.join(format!("r{n}"));
        run(n, &out);
        assert!(
            std::fs::read(out.join("output.npy")).unwrap() == want,
            "{n} ranks: output.npy differs"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}
