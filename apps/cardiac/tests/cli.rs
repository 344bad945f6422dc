//! The `cardiac` binary end to end: compile → exec gives the same benchmark-point activation
//! times as run; bad input (mesh paths, surface tags, empty stimulus regions, corrupted
//! executables) gives a clear error and a non-zero exit, never a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_cardiac");

fn tmp() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli_{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn cardiac(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run cardiac")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Fails with a message containing `want`, without panicking.
fn fails_with(args: &[&str], want: &str) {
    let o = cardiac(args);
    let err = stderr(&o);
    assert!(!o.status.success(), "{args:?} succeeded:\n{err}");
    assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
    assert!(err.contains(want), "{args:?}: expected {want:?} in:\n{err}");
}

fn mesh() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/biv_0.3.msh")
        .display()
        .to_string()
}

#[test]
fn compile_then_exec_reports_the_same_points_as_run() {
    let d = tmp();
    let exe = d.join("slab.popexe");
    let (exe_s, run_out, exec_out) = (
        exe.display().to_string(),
        d.join("run").display().to_string(),
        d.join("exec").display().to_string(),
    );
    // A 1 mm slab on 16 tiles for 5 ms: small and quick.
    let problem = ["--dx", "1", "--tiles", "16"];
    let o = cardiac(&[&["compile"][..], &problem, &["-o", &exe_s]].concat());
    assert!(o.status.success(), "compile: {}", stderr(&o));
    assert!(
        exe.with_extension("mesh.vtu").is_file(),
        "compile saves the mesh"
    );
    let o = cardiac(&[
        "exec",
        &exe_s,
        "--t-end",
        "5",
        "--snapshot-every",
        "5",
        "--out",
        &exec_out,
    ]);
    assert!(o.status.success(), "exec: {}", stderr(&o));
    let o = cardiac(
        &[
            &["run"][..],
            &problem,
            &[
                "--t-end",
                "5",
                "--snapshot-every",
                "5",
                "--no-profile",
                "--out",
                &run_out,
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "run: {}", stderr(&o));
    let a = cardiac::report::RunReport::load(d.join("run")).unwrap();
    let b = cardiac::report::RunReport::load(d.join("exec")).unwrap();
    assert_eq!(a.points.len(), 9);
    assert!(a.point("P1").unwrap() >= 0.0, "P1 activates within 5 ms");
    assert_eq!(a.points, b.points, "P1..P9 of run and exec");
    assert_eq!(a.diagonal, b.diagonal, "diagonal of run and exec");
    assert_eq!(a.t_ms.to_bits(), b.t_ms.to_bits());
    // exec writes the same activation map and voltage snapshot as run, byte for byte.
    for f in ["activation.vtu", "voltage_00005.000ms.vtu", "voltage.pvd"] {
        let (x, y) = (
            std::fs::read(d.join("run").join(f)),
            std::fs::read(d.join("exec").join(f)),
        );
        assert!(x.is_ok() && y.is_ok(), "{f}: run {x:?}, exec {y:?}");
        assert!(x.unwrap() == y.unwrap(), "{f} differs between run and exec");
    }
    // Without the saved mesh, exec still reports the points and says what it cannot write.
    let bare = d.join("bare.popexe");
    for ext in ["popexe", "json", "probes.json"] {
        std::fs::copy(exe.with_extension(ext), bare.with_extension(ext)).unwrap();
    }
    let bare_out = d.join("bare_out");
    let o = cardiac(&[
        "exec",
        &bare.display().to_string(),
        "--out",
        &bare_out.display().to_string(),
    ]);
    assert!(o.status.success(), "exec without mesh: {}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("bare.mesh.vtu beside the executable: activation.vtu and voltage snapshots are not written"),
        "{text}"
    );
    assert!(bare_out.join("results.json").is_file());
    assert!(!bare_out.join("activation.vtu").exists());
    // A saved mesh that does not match the executable is refused, naming both files.
    let small = cardiac::mesh::TetMesh::slab(2.0, 1.0, 1.0, 1.0);
    cardiac::mesh::write_vtu(bare.with_extension("mesh.vtu"), &small, &[]).unwrap();
    fails_with(
        &[
            "exec",
            &bare.display().to_string(),
            "--out",
            &bare_out.display().to_string(),
        ],
        "bare.mesh.vtu has 12 cells but",
    );

    // The same executable, corrupted: a clear error.
    let mut bytes = std::fs::read(&exe).unwrap();
    let n = bytes.len();
    bytes.truncate(n / 2);
    let bad = d.join("bad.popexe");
    std::fs::write(&bad, &bytes).unwrap();
    std::fs::copy(exe.with_extension("json"), bad.with_extension("json")).unwrap();
    fails_with(
        &["exec", &bad.display().to_string()],
        "loading the executable",
    );
    fails_with(
        &["exec", &d.join("missing.popexe").display().to_string()],
        "loading the executable",
    );
    // A good executable with someone else's run info.
    std::fs::write(d.join("other.json"), "{\"n\": 3}").unwrap();
    std::fs::copy(&exe, d.join("other.popexe")).unwrap();
    fails_with(
        &["exec", &d.join("other.popexe").display().to_string()],
        "parsing",
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_input_gives_clear_errors() {
    fails_with(&["run", "--mesh", "/no/such/mesh.msh"], "does not exist");
    fails_with(
        &[
            "run",
            "--mesh",
            &mesh(),
            "--scale",
            "10",
            "--stim-surface",
            "ENDO_XX",
        ],
        "ENDO_LV",
    );
    fails_with(
        &[
            "run",
            "--mesh",
            &mesh(),
            "--scale",
            "10",
            "--stim-sphere",
            "1000,1000,1000,1",
        ],
        "contains no cell",
    );
    fails_with(
        &["run", "--dx", "0.5", "--stim-box", "30,30,30,31,31,31"],
        "contains no cell",
    );
    fails_with(&["run", "--dx", "0"], "0 < dx");
    fails_with(
        &[
            "run",
            "--mesh",
            &mesh(),
            "--scale",
            "10",
            "--fibre",
            "0,0,0",
        ],
        "fibre",
    );
    fails_with(&["plot-diagonal", "/no/such/results.json"], "cannot read");
    let d = tmp();
    let garbage = d.join("garbage.msh");
    std::fs::write(&garbage, "$MeshFormat\nnot a mesh\n").unwrap();
    fails_with(
        &["run", "--mesh", &garbage.display().to_string()],
        "reading mesh",
    );
}

#[test]
fn a_profiled_run_prints_the_modelled_and_the_host_split_and_writes_snapshots() {
    // Not inside tmp(): the other test removes that folder when it ends.
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli_profiled_{}", std::process::id()));
    let out = d.join("run").display().to_string();
    let o = cardiac(&[
        "run",
        "--dx",
        "1",
        "--tiles",
        "16",
        "--t-end",
        "6",
        "--snapshot-every",
        "2",
        "--out",
        &out,
    ]);
    assert!(o.status.success(), "run: {}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    for want in [
        "phase breakdown (modelled cycles per ODE step",
        "  PDE ",
        "  ODE ",
        "simulator host time per ODE step: compute ",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    assert!(d.join("run").join("profile.json").is_file());

    // Progress into a pipe (not a terminal): one line per chunk of 100 steps, no carriage
    // returns piling the updates onto one line.
    let err = stderr(&o);
    assert!(
        !err.contains('\r'),
        "carriage return in piped progress:\n{err}"
    );
    let times: Vec<&str> = err
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("t = "))
        .map(|l| l.split(" ms").next().unwrap_or("").trim())
        .collect();
    assert_eq!(times, ["2.00", "4.00", "6.00"], "progress lines in:\n{err}");

    // Voltage snapshots at 2, 4 and 6 ms (the device runs 100-step chunks to land on them),
    // listed in voltage.pvd.
    let pvd = std::fs::read_to_string(d.join("run").join("voltage.pvd")).unwrap();
    let files: Vec<&str> = pvd
        .lines()
        .filter_map(|l| l.split("file=\"").nth(1))
        .map(|f| f.trim_end_matches("\"/>"))
        .collect();
    assert_eq!(
        files,
        [
            "voltage_00002.000ms.vtu",
            "voltage_00004.000ms.vtu",
            "voltage_00006.000ms.vtu"
        ],
        "{pvd}"
    );
    for t in ["2.0000", "4.0000", "6.0000"] {
        assert!(pvd.contains(&format!("timestep=\"{t}\"")), "{pvd}");
    }
    for f in files {
        let path = d.join("run").join(f);
        let mesh = cardiac::mesh::read_vtu(&path, &Default::default()).unwrap();
        assert_eq!(mesh.tets.len(), 20 * 7 * 3 * 6, "{f}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("Name=\"v_mV\""), "{f} has no voltage");
    }
    fails_with(
        &[
            "run",
            "--dx",
            "1",
            "--tiles",
            "16",
            "--snapshot-every",
            "-1",
        ],
        "--snapshot-every",
    );
    let _ = std::fs::remove_dir_all(&d);
}
