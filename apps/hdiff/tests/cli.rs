//! The `hdiff` command as a user runs it.

use std::path::PathBuf;
use std::process::Command;

use hdiff::grid::{test_input, Coefficient, Grid};

fn hdiff() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hdiff"))
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hdiff-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn a_run_writes_fields_that_match_the_oracle() {
    let dir = temp_dir("run");
    let out = hdiff()
        .args([
            "run",
            "--grid",
            "40x30x3",
            "--iterations",
            "3",
            "--coeff",
            "varying",
            "--threads",
            "2",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "bit-identical to the host reference",
        "memory      per tile max",
        "cycles per iteration",
        "GFLOP/s modelled at 18 flop per point",
        "native loop",
    ] {
        assert!(stdout.contains(want), "no `{want}` in:\n{stdout}");
    }
    let grid = Grid::new(40, 30, 3).unwrap();
    let input = test_input(&grid);
    let want = hdiff::reference::naive(&grid, &input, &Coefficient::Varying.field(&grid), 3);
    let read = |name: &str| -> Vec<f32> {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
        assert_eq!(npy.shape(), &[40, 30, 3]);
        npy.into_vec().unwrap()
    };
    assert_eq!(read("input.npy"), input);
    assert_eq!(read("output.npy"), want);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["figures"]["bit_identical"], true);
    assert_eq!(json["figures"]["flops_per_point"], 18);
    assert!(std::fs::read_to_string(dir.join("output.vti"))
        .unwrap()
        .contains("Name=\"out\""));

    // A second run into the same folder is refused, naming a file, unless --force.
    let again = hdiff()
        .args(["run", "--grid", "40x30x3", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        err.contains("already holds results") && err.contains("--force"),
        "{err}"
    );
    let forced = hdiff()
        .args([
            "run",
            "--grid",
            "40x30x3",
            "--iterations",
            "1",
            "--force",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        forced.status.success(),
        "{}",
        String::from_utf8_lossy(&forced.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_arguments_name_the_cause() {
    let small = hdiff().args(["run", "--grid", "4x10x1"]).output().unwrap();
    assert!(!small.status.success());
    let err = String::from_utf8_lossy(&small.stderr);
    assert!(
        err.contains("too small in i") && err.contains("halo of 2"),
        "{err}"
    );

    let file = temp_dir("file");
    std::fs::write(&file, b"keep me").unwrap();
    let out = hdiff()
        .args(["run", "--grid", "20x20x1", "--out"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is a file, not a folder"), "{err}");
    assert!(
        !err.contains("compiling"),
        "the output folder is checked before any work: {err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
    std::fs::remove_file(&file).unwrap();

    let groups = hdiff()
        .args(["run", "--grid", "20x20x2", "--planes", "3"])
        .output()
        .unwrap();
    assert!(!groups.status.success());
    let err = String::from_utf8_lossy(&groups.stderr);
    assert!(err.contains("plane groups: 3"), "{err}");
}

/// Started by an MPI launcher of several ranks, a build without the feature `mpi` refuses
/// (each rank would run the whole job into the same folder), saying how to build with it;
/// the output folder is not created.
#[cfg(not(feature = "mpi"))]
#[test]
fn an_mpi_launch_of_a_build_without_mpi_is_refused() {
    let dir = temp_dir("mpi-env");
    let out = hdiff()
        .args(["run", "--grid", "20x20x2", "--iterations", "1", "--out"])
        .arg(&dir)
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "ran: {err}");
    assert!(
        err.contains("OMPI_COMM_WORLD_SIZE=2") && err.contains("-p hdiff --features mpi"),
        "{err}"
    );
    assert!(!dir.exists(), "the output folder was created");
}

/// Runs `hdiff run` on a small grid with `extra` arguments; returns (success, stdout, stderr).
fn small_run(extra: &[&str]) -> (bool, String, String) {
    let out = hdiff()
        .args(["run", "--grid", "40x30x3", "--threads", "2"])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn non_finite_output_is_an_error_never_agreement() {
    // A coefficient this large blows the field up to infinities and NaNs within a few
    // iterations; NaN must not count as "bit-identical" to the reference's NaN.
    let (ok, stdout, stderr) = small_run(&["--coeff", "1e20", "--iterations", "3"]);
    assert!(!ok, "a NaN result passed:\n{stdout}\n{stderr}");
    assert!(
        !stdout.contains("bit-identical"),
        "NaN reported as agreement:\n{stdout}"
    );
    assert!(
        stderr.contains("not finite") && stderr.contains("first at index"),
        "{stderr}"
    );
}

#[test]
fn zero_iterations_are_refused() {
    let (ok, stdout, stderr) = small_run(&["--iterations", "0"]);
    assert!(!ok, "--iterations 0 ran:\n{stdout}");
    assert!(stderr.contains("--iterations"), "{stderr}");
}

/// `--threads 0` is refused as cardiac refuses it (it meant "all cores").
#[test]
fn zero_threads_are_refused() {
    let out = hdiff()
        .args([
            "run",
            "--grid",
            "40x30x3",
            "--iterations",
            "1",
            "--threads",
            "0",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "--threads 0 ran: {stderr}");
    assert!(
        stderr.contains("--threads 0: give at least 1 (or leave it out: one per core)"),
        "{stderr}"
    );
}

/// 10^8 iterations of the default grid are estimated and refused before any work unless
/// `--force` (it ran for ever, with no estimate).
#[test]
fn unbounded_work_is_estimated_and_refused_unless_forced() {
    let dir = temp_dir("bound");
    let out = hdiff()
        .args(["run", "--iterations", "100000000", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "ran: {stderr}");
    assert!(
        stderr.contains("--iterations 100000000 on --grid 256x256x64 is 8.39e14 point-iterations")
            && stderr.contains("Pass --force to run it anyway"),
        "{stderr}"
    );
    assert!(!dir.exists(), "refused before the output folder is made");
}
