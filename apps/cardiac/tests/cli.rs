//! The `cardiac` binary end to end: compile → exec gives the same benchmark-point activation
//! times as run; bad input (mesh paths, surface tags, empty stimulus regions, corrupted
//! executables) gives a clear error and a non-zero exit, never a panic.

mod support;

use std::path::PathBuf;

use support::{cardiac, fails_with, mesh, repeats_from_its_record, run_refused, stderr, tmp};

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
    let a = cardiac::app::results::RunReport::load(d.join("run")).unwrap();
    let b = cardiac::app::results::RunReport::load(d.join("exec")).unwrap();
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
    // One file: nothing is written beside the executable.
    let beside: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("slab."))
        .collect();
    assert_eq!(beside, ["slab.popexe"], "compile writes one file");
    // Compiling over it again is refused unless --force.
    fails_with(
        &[&["compile"][..], &problem, &["-o", &exe_s]].concat(),
        "pass --force to overwrite it",
    );
    let o = cardiac(&[&["compile"][..], &problem, &["-o", &exe_s, "--force"]].concat());
    assert!(o.status.success(), "compile --force: {}", stderr(&o));
    // exec into a folder holding an earlier run is refused before running, unless --force.
    fails_with(
        &["exec", &exe_s, "--out", &exec_out],
        "already holds results of an earlier run",
    );
    let o = cardiac(&["exec", &exe_s, "--out", &exec_out, "--force"]);
    assert!(o.status.success(), "exec --force: {}", stderr(&o));

    // The same executable, corrupted: a clear error.
    let mut bytes = std::fs::read(&exe).unwrap();
    let n = bytes.len();
    bytes.truncate(n / 2);
    let bad = d.join("bad.popexe");
    std::fs::write(&bad, &bytes).unwrap();
    fails_with(
        &["exec", &bad.display().to_string()],
        "loading the executable",
    );
    fails_with(
        &["exec", &d.join("missing.popexe").display().to_string()],
        "loading the executable",
    );
    // An executable without the cardiac sections (another application's) is refused, naming
    // the file and the section.
    cardiac::solver::codelets::link();
    let mut foreign = poplar::Executable::load(&exe).unwrap();
    foreign.app_sections.clear();
    let foreign_path = d.join("foreign.popexe");
    foreign.save(&foreign_path).unwrap();
    fails_with(
        &["exec", &foreign_path.display().to_string()],
        "has no `cardiac.run-info` section",
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `compile -o X.json` used to write its run-info sidecar (`X.with_extension("json")`) over the
/// executable it had just written, and exit 0.
#[test]
fn compile_to_a_json_name_keeps_the_executable() {
    let d = tmp().join("json-name");
    std::fs::create_dir_all(&d).unwrap();
    let exe = d.join("X.json").display().to_string();
    let o = cardiac(&["compile", "--dx", "1", "--tiles", "4", "-o", &exe]);
    assert!(o.status.success(), "compile: {}", stderr(&o));
    let o = cardiac(&["exec", &exe, "--t-end", "0.5"]);
    assert!(o.status.success(), "exec of X.json: {}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// A `--out` that cannot take the results fails at once, before the simulation.
#[test]
fn unusable_output_folders_fail_before_any_work() {
    let d = tmp().join("out-checks");
    std::fs::create_dir_all(&d).unwrap();
    let file = d.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let o = cardiac(&[
        "run",
        "--dx",
        "1",
        "--tiles",
        "4",
        "--out",
        &file.display().to_string(),
    ]);
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(err.contains("is a file, not a folder"), "{err}");
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("progress"),
        "the simulation ran before the output was checked"
    );
    let under = file.join("sub").display().to_string();
    fails_with(
        &["run", "--dx", "1", "--tiles", "4", "--out", &under],
        "cannot create the output folder",
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"x", "the file is untouched");
    let _ = std::fs::remove_dir_all(&d);
}

/// `--t-end` stops at that time, not at the end of the next 250-step chunk.
#[test]
fn runs_stop_at_t_end() {
    let d = tmp().join("t-end");
    let o = cardiac(&[
        "run",
        "--dx",
        "1",
        "--tiles",
        "4",
        "--t-end",
        "1.3",
        "--no-profile",
        "--out",
        &d.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = cardiac::app::results::RunReport::load(&d).unwrap();
    assert!((r.t_ms - 1.3).abs() < 1e-4, "stopped at {} ms", r.t_ms);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_input_gives_clear_errors() {
    // A time step at which the cell model fails to propagate is refused with the range.
    fails_with(&["run", "--dt-ode", "1", "--quick"], "Use at most 0.2 ms");
    fails_with(&["run", "--dt-ode", "0", "--quick"], "must be a positive");
    // Options the built-in slab would ignore are refused.
    fails_with(
        &["run", "--cell-type", "endo", "--quick"],
        "only apply to a mesh read with --mesh",
    );
    fails_with(
        &["run", "--stim-sphere", "1,1,1,-2", "--quick"],
        "radius -2 mm must be positive",
    );
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
    // The error names the file once (no "reading mesh X: X: …" chain).
    let o = cardiac(&["run", "--mesh", &garbage.display().to_string()]);
    let err = stderr(&o);
    assert!(!o.status.success());
    assert_eq!(err.matches("garbage.msh").count(), 1, "{err}");
    assert!(err.contains("MSH version"), "{err}");
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

#[test]
fn a_diverging_run_stops_with_the_time_and_a_cell_and_writes_no_results() {
    // 10^6 µA/mm³ (20,000 times the benchmark's stimulus) drives V to infinity in one step.
    let d = tmp();
    let out = d.join("div").display().to_string();
    let o = cardiac(&[
        "run",
        "--dx",
        "1",
        "--tiles",
        "16",
        "--t-end",
        "3",
        "--stim-amplitude",
        "1000000",
        "--out",
        &out,
    ]);
    let err = stderr(&o);
    assert!(!o.status.success(), "a diverged run exited 0:\n{err}");
    for want in [
        "diverged by t = ",
        "cell ",
        " mm has V = ",
        "smaller --dt-ode",
        "no result files",
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    for f in ["results.json", "activation.vtu", "report.html"] {
        assert!(
            !d.join("div").join(f).exists(),
            "{f} written by a diverged run"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn doubtful_problems_are_told_what_to_do() {
    let d = tmp();
    let out = d.join("o").display().to_string();
    // A heart mesh in cm read as mm: a 5 mm heart.
    let o = cardiac(&[
        "run",
        "--mesh",
        &mesh(),
        "--stim-surface",
        "ENDO_LV",
        "--t-end",
        "0.1",
        "--tiles",
        "8",
        "--out",
        &out,
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("the mesh spans only 5.00 mm") && err.contains("--scale 10"),
        "{err}"
    );
    // Read with --scale 10 it is 50 mm across: no units warning, but its 3 mm cells are coarse.
    let o = cardiac(&[
        "run",
        "--mesh",
        &mesh(),
        "--scale",
        "10",
        "--stim-surface",
        "ENDO_LV",
        "--t-end",
        "0.1",
        "--tiles",
        "8",
        "--out",
        &out,
        "--force",
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("the mesh spans only"), "{err}");
    assert!(err.contains("are coarse against the wavefront"), "{err}");
    // A slab resolution and a stimulus that are not the benchmark's.
    let o = cardiac(&[
        "run",
        "--dx",
        "0.3",
        "--stim-duration",
        "1",
        "--t-end",
        "0.1",
        "--out",
        &out,
        "--force",
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("dx 0.3 mm is not a resolution of the Niederer benchmark"),
        "{err}"
    );
    assert!(err.contains("the stimulus is not the benchmark's"), "{err}");
    assert!(
        !err.contains("coarse"),
        "0.3 mm is finer than the front: {err}"
    );
    // The benchmark at 0.5 mm: coarse, and the published spread is printed with the points.
    let o = cardiac(&[
        "run", "--t-end", "0.1", "--tiles", "16", "--out", &out, "--force",
    ]);
    let err = stderr(&o);
    assert!(err.contains("cells of 0.50 mm are coarse"), "{err}");
    assert!(!err.contains("note:"), "{err}");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("published codes put P8 at 41.68–143.067 ms"),
        "{text}"
    );
    // Options the slab ignores are an error, and a bad stimulus is named.
    let fresh = d.join("fresh").display().to_string();
    run_refused(&fresh, &["--cell-type", "mid"], "--cell-type");
    run_refused(&fresh, &["--stim-amplitude", "-5"], "--stim-amplitude");
    run_refused(&fresh, &["--stim-duration", "0.001"], "--stim-duration");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_run_repeated_from_its_results_json_gives_identical_results() {
    let d = tmp();
    let first = d.join("first").display().to_string();
    let o = cardiac(&[
        "run",
        "--dx",
        "1",
        "--tiles",
        "16",
        "--t-end",
        "6",
        "--sigma-l",
        "0.2",
        "--chi",
        "120",
        "--stim-duration",
        "1.5",
        "--snapshot-every",
        "0",
        "--out",
        &first,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("tissue parameters (σ_l, σ_t, χ, Cm) are not the benchmark's"));
    let results = d.join("first/results.json");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let p = &record["parameters"]["problem"];
    assert_eq!(
        (p["sigma_l"].as_f64(), p["chi"].as_f64()),
        (Some(0.2), Some(120.0))
    );
    assert_eq!(record["parameters"]["t_end"].as_f64(), Some(6.0));
    // Repeated from the record alone: the same files, byte for byte.
    repeats_from_its_record(&d, &[]);
    // An option given on the command line overrides the record.
    let over = d.join("over").display().to_string();
    let o = cardiac(&[
        "run",
        "--params",
        &results.display().to_string(),
        "--t-end",
        "2",
        "--snapshot-every",
        "0",
        "--out",
        &over,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("over/results.json")).unwrap())
            .unwrap();
    assert_eq!(r["parameters"]["t_end"].as_f64(), Some(2.0));
    assert_eq!(r["parameters"]["problem"]["sigma_l"].as_f64(), Some(0.2));
    // A misspelt field is named; bad tissue values are named.
    let bad = d.join("bad.json");
    std::fs::write(&bad, r#"{"problem": {"sigma_L": 0.2}}"#).unwrap();
    let fresh = d.join("fresh").display().to_string();
    run_refused(&fresh, &["--params", &bad.display().to_string()], "sigma_L");
    run_refused(
        &fresh,
        &["--sigma-t", "0.5"],
        "--sigma-t 0.5 S/m is larger than --sigma-l",
    );
    run_refused(&fresh, &["--chi", "0"], "--chi 0");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn point_traces_sample_v_at_the_nearest_cells() {
    let d = tmp();
    let out = d.join("tr").display().to_string();
    let o = cardiac(&[
        "run",
        "--dx",
        "1",
        "--tiles",
        "16",
        "--t-end",
        "6",
        "--trace-point",
        "0,0,0",
        "--trace-point",
        "20,7,3",
        "--trace-every",
        "0.5",
        "--out",
        &out,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(d.join("tr/traces.csv")).unwrap();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert!(text.starts_with("t_ms,v_mV at (0 0 0) mm cell "), "{text}");
    // t = 0, 0.5, ..., 6 ms.
    assert_eq!(rows.len(), 13, "{text}");
    for (k, r) in rows.iter().enumerate() {
        assert!((r[0] - 0.5 * k as f64).abs() < 1e-9, "{text}");
    }
    // The stimulated corner fires within the 2 ms stimulus; the far corner is still at rest.
    assert!(rows[0][1] < -80.0 && rows[4][1] > 0.0, "{text}");
    assert!(rows.iter().all(|r| r[2] < -80.0), "{text}");
    // A malformed point is named.
    fails_with(
        &[
            "run",
            "--trace-point",
            "1,2",
            "--out",
            &d.join("x").display().to_string(),
        ],
        "--trace-point 1,2: give x,y,z in mm",
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A decimal a float cannot hold is refused naming the text typed (`--t-end 1e400` said
/// "--t-end inf must be positive", `--dx 1e-400` "--dx 0 mm"), and `--sigma-bath` out of
/// its range is refused without electrodes too (it was checked only with them), all before
/// any work and without the output folder.
#[test]
fn values_a_float_cannot_hold_and_a_bad_bath_are_refused_before_the_work() {
    let out = tmp().join("float-range");
    let o = out.display().to_string();
    for (args, want) in [
        (
            &["--t-end", "1e400"][..],
            "1e400 is beyond the range of f64",
        ),
        (
            &["--dx", "1e-400"][..],
            "1e-400 is below the smallest non-zero f64",
        ),
        (
            &["--sigma-bath", "1e400"][..],
            "1e400 is beyond the range of f64",
        ),
        (&["--sigma-bath", "5000"][..], "--sigma-bath"),
    ] {
        run_refused(&o, args, want);
        assert!(!out.exists(), "{args:?} made the output folder");
    }
}
