//! The `poplar` binary on files made here: reports, trace and plots, and typed errors (exit
//! code 1, no panic) on bad input.

use poplar::profile::ProfileOptions;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
use std::path::{Path, PathBuf};
use std::process::Command;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("poplar-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Saves a small executable and its profile in `d`.
fn files(d: &Path) -> (PathBuf, PathBuf) {
    codelets::link();
    let mut g = Graph::new(&Target::custom(4, 64 * 1024));
    let x = g.add_variable(DType::F32, &[400], "x");
    let y = g.add_variable(DType::F32, &[400], "y");
    g.map_linearly(&x, 16).unwrap();
    g.map_linearly(&y, 150).unwrap();
    g.create_host_write("x", &x).unwrap();
    let cs = g.add_compute_set("double");
    popops::add(&mut g, cs, &x, &x, &y).unwrap();
    let p = Program::labelled("main", vec![Program::repeat(3, Program::execute(cs))]);
    let exe = compile(&g, &[p], &CompileOptions::default()).unwrap();
    let exe_path = d.join("t.popexe");
    exe.save(&exe_path).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::default()).unwrap();
    e.enable_profiling(ProfileOptions::default());
    e.write_tensor("x", &[1.0f32; 400]).unwrap();
    e.run(0).unwrap();
    let prof_path = d.join("t.profile.json");
    e.profile().unwrap().save(&prof_path).unwrap();
    (exe_path, prof_path)
}

fn poplar(args: &[&std::ffi::OsStr]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_poplar"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn reports_trace_and_plots() {
    let d = dir("ok");
    let (exe, prof) = files(&d);
    let (ok, out, _) = poplar(&["memory".as_ref(), exe.as_os_str()]);
    assert!(ok);
    assert!(out.contains("Tiles closest to the limit"), "{out}");
    assert!(out.contains("temporaries"), "{out}");
    assert!(
        out.contains("Streaming Memory") && out.contains("none (no remote buffers)"),
        "{out}"
    );
    let (ok, out, _) = poplar(&["profile".as_ref(), prof.as_os_str()]);
    assert!(ok);
    assert!(
        out.contains("Programs by label") && out.contains("main"),
        "{out}"
    );
    assert!(out.contains("double (in)"), "{out}");
    let (ok, out, _) = poplar(&["profile".as_ref(), exe.as_os_str()]);
    assert!(ok);
    assert!(out.contains("Static cycle model"), "{out}");
    let trace = d.join("trace.json");
    let (ok, _, err) = poplar(&[
        "trace".as_ref(),
        prof.as_os_str(),
        "-o".as_ref(),
        trace.as_os_str(),
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert!(!v["traceEvents"].as_array().unwrap().is_empty());
    let plots = d.join("plots");
    let (ok, _, err) = poplar(&[
        "plot".as_ref(),
        prof.as_os_str(),
        exe.as_os_str(),
        "-o".as_ref(),
        plots.as_os_str(),
    ]);
    assert!(ok, "{err}");
    for f in [
        "0-tiles.svg",
        "0-phases.svg",
        "0-labels.svg",
        "1-memory.svg",
    ] {
        let svg = std::fs::read_to_string(plots.join(f)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{f}"
        );
        assert!(
            svg.contains("<rect") || svg.contains("<polyline"),
            "{f} draws nothing"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `poplar profile` names the assumed constants (no public measurement) that moved the
/// profile's time, with their values: on two chips with an inter-chip copy, the IPU-Link ones
/// and the syncs; on one chip that only computes and exchanges on the chip, not the links.
#[test]
fn profile_names_the_assumed_constants_that_moved_its_time() {
    codelets::link();
    let d = dir("assumptions");
    let t = Target {
        tiles_per_ipu: 4,
        ..Target::gc200_multi(2)
    };
    let mut g = Graph::new(&t);
    let a = g.add_variable(DType::F32, &[1024], "a");
    let b = g.add_variable(DType::F32, &[1024], "b");
    g.set_tile_mapping(&a, 0).unwrap();
    g.set_tile_mapping(&b, 5).unwrap();
    let exe = compile(&g, &[Program::copy(&a, &b)], &CompileOptions::default()).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::default()).unwrap();
    e.enable_profiling(ProfileOptions::default());
    e.run(0).unwrap();
    let prof = d.join("two-chips.profile.json");
    e.profile().unwrap().save(&prof).unwrap();
    let (ok, out, err) = poplar(&["profile".as_ref(), prof.as_os_str()]);
    assert!(ok, "{err}");
    let block = out
        .split("  assumptions (")
        .nth(1)
        .unwrap_or_else(|| panic!("no assumptions block: {out}"));
    // 2 chips: global sync 150 + ceil(15 ns × 1.33 GHz × 2 × 1 hop) = 190.
    for line in [
        "exchange message set-up            16 cycles",
        "IPU-Link efficiency              0.85 fraction of 16 GB/s per link",
        "IPU-Link hop latency              800 cycles",
        "global sync                       190 cycles",
    ] {
        assert!(block.contains(line), "{line:?} not in: {out}");
    }
    assert!(!block.contains("Streaming Memory"), "{out}");
    // One chip, no link crossed: the exchange's set-up and the syncs, not the links.
    let (_, one) = files(&d);
    let (ok, out, err) = poplar(&["profile".as_ref(), one.as_os_str()]);
    assert!(ok, "{err}");
    assert!(
        out.contains("  assumptions (") && out.contains("internal sync"),
        "{out}"
    );
    assert!(!out.contains("IPU-Link hop latency"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `poplar memory` shows Streaming Memory beside tile memory: per chip against its capacity,
/// and each remote buffer (as text and in `--json`, and the same in `poplar report`'s page).
#[test]
fn memory_shows_streaming_memory_per_chip_and_per_buffer() {
    codelets::link();
    let d = dir("streaming");
    let mut t = Target::custom(4, 64 * 1024);
    t.num_ipus = 2;
    t.streaming_memory_bytes = 1 << 20;
    let mut g = Graph::new(&t);
    let big = g
        .add_remote_buffer_on_chip("activations", DType::F32, 1024, 64, 1)
        .unwrap();
    g.add_remote_buffer("small tags", DType::U8, 3, 5).unwrap();
    // x1 lives on chip 1 (tiles 4..8): written to row 0 of the buffer on chip 1.
    let x1 = g.add_variable(DType::F32, &[1024], "x1");
    g.set_tile_mapping(&x1, 5).unwrap();
    let p = Program::copy_to_remote(&x1, big, None);
    let exe = compile(&g, &[p], &CompileOptions::default()).unwrap();
    let path = d.join("s.popexe");
    exe.save(&path).unwrap();
    let (ok, out, err) = poplar(&["memory".as_ref(), path.as_os_str()]);
    assert!(ok, "{err}");
    assert!(
        out.contains(
            "Streaming Memory (1048576 B per chip): 262159 B in 2 remote buffers on 2 of 2 chips"
        ),
        "{out}"
    );
    assert!(
        out.contains("chip    1:         262144 B ( 25.0%) in 1 buffers"),
        "{out}"
    );
    assert!(
        out.contains("chip    0:             15 B (  0.0%) in 1 buffers"),
        "{out}"
    );
    let big_at = out.find("activations").expect("the big buffer is listed");
    let small_at = out.find("small tags").expect("the small buffer is listed");
    assert!(big_at < small_at, "largest first: {out}");
    assert!(
        out.contains("f32         64 rows ×       1024 elements ="),
        "{out}"
    );
    // The JSON: per chip and per buffer.
    let (ok, json, err) = poplar(&["memory".as_ref(), path.as_os_str(), "--json".as_ref()]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let s = &v["streaming"];
    assert_eq!(s["bytes_per_chip"], 1 << 20);
    assert_eq!(
        s["chips"],
        serde_json::json!([
            {"chip": 0, "bytes": 15, "buffers": 1},
            {"chip": 1, "bytes": 262144, "buffers": 1}
        ])
    );
    assert_eq!(
        s["buffers"][0],
        serde_json::json!({"name": "activations", "dtype": "F32", "elements": 1024,
            "rows": 64, "bytes": 262144, "chip": 1})
    );
    // The report page holds the same.
    let html = d.join("s.html");
    let (ok, _, err) = poplar(&[
        "report".as_ref(),
        path.as_os_str(),
        "-o".as_ref(),
        html.as_os_str(),
    ]);
    assert!(ok, "{err}");
    let page = report_data(&std::fs::read_to_string(&html).unwrap());
    assert_eq!(page["memory"]["streaming"], *s);
    let _ = std::fs::remove_dir_all(&d);
}

/// An application's executable whose codelets this binary does not link (here: one renamed to
/// a name nothing registers) is still reported; only running it needs them.
#[test]
fn executables_of_codelets_not_linked_here_are_reported() {
    let d = dir("unlinked");
    let (exe_path, _) = files(&d);
    let mut exe = poplar::Executable::load(&exe_path).unwrap();
    assert!(!exe.codelets.is_empty());
    exe.codelets[poplar::exe::CodeletId::from_u32(0)].name = "app::NotLinkedHere".into();
    let path = d.join("app.popexe");
    exe.save(&path).unwrap();

    let (ok, out, err) = poplar(&["memory".as_ref(), path.as_os_str()]);
    assert!(ok, "{err}");
    assert!(out.contains("Tiles closest to the limit"), "{out}");
    let (ok, out, err) = poplar(&["profile".as_ref(), path.as_os_str()]);
    assert!(ok, "{err}");
    assert!(out.contains("Static cycle model"), "{out}");

    // The library still refuses to load it for running, and the engine to run it.
    let unregistered = poplar::exe::CheckError::UnregisteredCodelet {
        name: "app::NotLinkedHere".into(),
    };
    assert_eq!(
        poplar::Executable::load(&path).unwrap_err(),
        poplar::exe::ExecutableError::Check(unregistered.clone())
    );
    let loaded = poplar::Executable::load_unlinked(&path).unwrap();
    assert_eq!(
        Engine::new(&loaded, EngineOptions::default()).unwrap_err(),
        poplar::EngineError::Executable(unregistered)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let d = dir("bad");
    let cases: [(&str, &[u8]); 4] = [
        ("garbage.popexe", &[7u8; 100]),
        ("empty.popexe", b""),
        (
            "bad.json",
            b"{\"schema\": \"poplar-profile\", \"version\": 1}",
        ),
        ("other.json", b"{\"schema\": \"else\"}"),
    ];
    for (name, bytes) in cases {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        for cmd in ["memory", "profile"] {
            let (ok, _, err) = poplar(&[cmd.as_ref(), p.as_os_str()]);
            assert!(!ok, "{cmd} {name} succeeded");
            assert!(err.starts_with("poplar: "), "{cmd} {name}: {err}");
            assert!(!err.contains("panicked"), "{cmd} {name}: {err}");
        }
    }
    let (ok, _, err) = poplar(&["memory".as_ref(), d.join("missing").as_os_str()]);
    assert!(!ok && err.contains("missing"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Rewrites a field of the target inside a saved executable's manifest, with a correct length
/// and checksum, so that only the loader's validation can catch it.
fn with_target_field(bytes: &[u8], field: &str, value: serde_json::Value) -> Vec<u8> {
    let mlen = u64::from_le_bytes(bytes[12..20].try_into().unwrap()) as usize;
    let mut m: serde_json::Value = serde_json::from_slice(&bytes[24..24 + mlen]).unwrap();
    m["target"][field] = value;
    let json = serde_json::to_vec(&m).unwrap();
    let mut out = bytes[..12].to_vec();
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&json).to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(&bytes[24 + mlen..]);
    out
}

#[test]
fn absurd_target_fields_are_refused_by_name_not_aborted_on() {
    // `poplar profile` used to abort (out of memory, SIGABRT) on workers_per_tile = u32::MAX.
    let d = dir("target");
    let (exe, prof) = files(&d);
    let good = std::fs::read(&exe).unwrap();
    for (field, value) in [
        ("workers_per_tile", serde_json::json!(u32::MAX)),
        ("workers_per_tile", serde_json::json!(0)),
        ("bytes_per_tile", serde_json::json!(0)),
        ("num_ipus", serde_json::json!(1_000_000)),
        ("alignment", serde_json::json!(3)),
    ] {
        let p = d.join(format!("bad-{field}.popexe"));
        std::fs::write(&p, with_target_field(&good, field, value.clone())).unwrap();
        for cmd in ["profile", "memory"] {
            let (ok, _, err) = poplar(&[cmd.as_ref(), p.as_os_str()]);
            assert!(!ok, "{cmd} {field}={value} succeeded");
            assert!(
                err.contains(&p.display().to_string()),
                "file not named: {err}"
            );
            assert!(err.contains(field), "field not named: {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    // Profile errors name the file too, and no message repeats the path.
    let bad = d.join("broken.json");
    let text = std::fs::read_to_string(&prof).unwrap();
    std::fs::write(&bad, &text[..text.len() / 2]).unwrap();
    let (ok, _, err) = poplar(&["profile".as_ref(), bad.as_os_str()]);
    assert!(!ok);
    assert!(err.contains(&bad.display().to_string()), "{err}");
    let missing = d.join("nothing-here.json");
    for cmd in ["profile", "memory", "trace"] {
        let mut args: Vec<&std::ffi::OsStr> = vec![cmd.as_ref(), missing.as_os_str()];
        if cmd == "trace" {
            args.extend([
                "-o".as_ref(),
                d.join("t.json").into_os_string().leak() as &_,
            ]);
        }
        let (ok, _, err) = poplar(&args);
        assert!(!ok);
        let name = missing.display().to_string();
        assert_eq!(
            err.matches(&name).count(),
            1,
            "{cmd}: path named once: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// The report's embedded data, as JSON.
fn report_data(html: &str) -> serde_json::Value {
    serde_json::to_value(poplar_viewer::embedded(html).expect("report data")).unwrap()
}

#[test]
fn the_report_holds_the_numbers_of_poplar_memory_and_poplar_profile() {
    let d = dir("report");
    let (exe, prof) = files(&d);
    let out = d.join("report.html");
    let os = |p: &Path| p.as_os_str().to_owned();
    let (ok, _, err) = poplar(&[
        "report".as_ref(),
        &os(&exe),
        &os(&prof),
        "-o".as_ref(),
        &os(&out),
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("wrote"), "{err}");
    let page = report_data(&std::fs::read_to_string(&out).unwrap());

    let (ok, mem, err) = poplar(&["memory".as_ref(), &os(&exe), "--json".as_ref()]);
    assert!(ok, "{err}");
    let mem: serde_json::Value = serde_json::from_str(&mem).unwrap();
    let tiles = mem["tiles"].as_array().unwrap();
    assert_eq!(tiles.len(), 4);
    for (t, tm) in tiles.iter().enumerate() {
        assert_eq!(page["memory"]["total"][t], tm["total"], "tile {t}");
        assert_eq!(page["memory"]["always_live"][t], tm["always_live"]);
        assert_eq!(page["memory"]["temporary"][t], tm["temporary"]);
        assert_eq!(
            page["memory"]["by_category"][0][t],
            tm["by_category"]["variables"]
        );
        assert_eq!(
            page["memory"]["by_category"][4][t],
            tm["by_category"]["code"]
        );
    }
    assert_eq!(page["memory"]["total_stats"], mem["total"]);

    let (ok, prof_json, err) = poplar(&["profile".as_ref(), &os(&prof), "--json".as_ref()]);
    assert!(ok, "{err}");
    let p: serde_json::Value = serde_json::from_str(&prof_json).unwrap();
    assert_eq!(page["profile"]["elapsed"], p["elapsed"]);
    assert_eq!(page["profile"]["labels"], p["labels"]);
    assert_eq!(page["profile"]["tile_exchange"], p["tiles"]["exchange"]);
    let phases = p["phases"].as_array().unwrap();
    assert_eq!(
        page["profile"]["phases"].as_array().unwrap().len(),
        phases.len()
    );
    for (a, b) in page["profile"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .zip(phases)
    {
        for f in [
            "kind",
            "index",
            "name",
            "executions",
            "cycles",
            "per_execution",
            "wall_ns",
        ] {
            assert_eq!(a[f], b[f], "{f} of phase {}", b["name"]);
        }
    }

    // Run again: the earlier report is kept unless --force; the executable is never replaced.
    let before = std::fs::read(&out).unwrap();
    let (ok, _, err) = poplar(&["report".as_ref(), &os(&exe), "-o".as_ref(), &os(&out)]);
    assert!(
        !ok && err.contains("exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let exe_bytes = std::fs::read(&exe).unwrap();
    let (ok, _, err) = poplar(&[
        "report".as_ref(),
        &os(&exe),
        "-o".as_ref(),
        &os(&exe),
        "--force".as_ref(),
    ]);
    assert!(!ok && err.contains("is an input"), "{err}");
    assert_eq!(std::fs::read(&exe).unwrap(), exe_bytes);
    // A profile of another executable is named and refused.
    let mut other: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    other["phases"][0]["name"] = "something else".into();
    let other_path = d.join("other.profile.json");
    std::fs::write(&other_path, other.to_string()).unwrap();
    let (ok, _, err) = poplar(&[
        "report".as_ref(),
        &os(&exe),
        &os(&other_path),
        "-o".as_ref(),
        &os(&d.join("r2.html")),
    ]);
    assert!(!ok, "a foreign profile is refused");
    assert!(
        err.contains("other.profile.json") && err.contains("something else"),
        "{err}"
    );
    assert!(!d.join("r2.html").exists());
    std::fs::remove_dir_all(&d).unwrap();
}

fn names(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `poplar trace` and `poplar plot` refuse an existing output unless `--force`, and one of
/// their inputs always (it overwrote the profile with its own trace); nothing is left behind.
#[test]
fn outputs_that_exist_or_are_inputs_are_refused() {
    let d = dir("refuse");
    let (exe, prof) = files(&d);
    let before = std::fs::read(&prof).unwrap();
    let o = |p: &Path| p.as_os_str().to_owned();
    for force in [false, true] {
        let mut args = vec![
            "trace".into(),
            o(&prof),
            "-o".into(),
            o(&d.join(".").join("t.profile.json")),
        ];
        if force {
            args.push("--force".into());
        }
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let (ok, _, err) = poplar(&args);
        assert!(!ok && err.contains("is also an input"), "{err}");
    }
    assert_eq!(
        std::fs::read(&prof).unwrap(),
        before,
        "the profile is intact"
    );
    let trace = d.join("trace.json");
    std::fs::write(&trace, "mine").unwrap();
    let (ok, _, err) = poplar(&["trace".as_ref(), &o(&prof), "-o".as_ref(), &o(&trace)]);
    assert!(!ok && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(&trace).unwrap(), "mine");
    let (ok, _, err) = poplar(&[
        "trace".as_ref(),
        &o(&prof),
        "-o".as_ref(),
        &o(&trace),
        "--force".as_ref(),
    ]);
    assert!(ok, "{err}");
    assert!(std::fs::read_to_string(&trace)
        .unwrap()
        .contains("traceEvents"));

    // plot: the earlier plots are kept unless --force.
    let plots = d.join("plots");
    let plot = |force: bool| {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "plot".as_ref(),
            prof.as_os_str(),
            "-o".as_ref(),
            plots.as_os_str(),
        ];
        if force {
            args.push("--force".as_ref());
        }
        poplar(&args)
    };
    let (ok, _, err) = plot(false);
    assert!(ok, "{err}");
    std::fs::write(plots.join("tiles.svg"), "earlier").unwrap();
    let (ok, _, err) = plot(false);
    assert!(
        !ok && err.contains("tiles.svg") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(plots.join("tiles.svg")).unwrap(),
        "earlier"
    );
    let (ok, _, err) = plot(true);
    assert!(ok, "{err}");
    assert!(std::fs::read_to_string(plots.join("tiles.svg"))
        .unwrap()
        .starts_with("<svg"));
    // A profile named like one of the plots it would write, in the output folder: refused.
    let inside = plots.join("phases.svg");
    std::fs::copy(&prof, &inside).unwrap();
    let (ok, _, err) = poplar(&[
        "plot".as_ref(),
        inside.as_os_str(),
        "-o".as_ref(),
        plots.as_os_str(),
        "--force".as_ref(),
    ]);
    assert!(!ok && err.contains("is also an input"), "{err}");
    assert_eq!(std::fs::read(&inside).unwrap(), before);
    assert_eq!(
        names(&plots),
        ["labels.svg", "phases.svg", "tiles.svg", "timeline.svg"],
        "no temporary is left"
    );
    let _ = exe;
    let _ = std::fs::remove_dir_all(&d);
}

/// Runs `poplar ARGS`; fails the test if it has not ended within 20 s. Returns (success,
/// stderr).
fn poplar_promptly(args: &[&std::ffi::OsStr]) -> (bool, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_poplar"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.success(), err);
        }
        if start.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("poplar {args:?} hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn empty_and_non_profile_files_say_what_they_are() {
    let d = dir("empty");
    let trace = d.join("t.json");
    for (name, text, want) in [
        ("empty.json", "", "empty file"),
        ("blank.json", " \n", "empty file"),
        ("list.json", "[]", "JSON array"),
        // Any JSON value is read as a profile (these were read as executables: "file
        // truncated in header").
        ("null.json", "null", "not a poplar profile: JSON null"),
        ("number.json", "42\n", "not a poplar profile: a JSON number"),
        (
            "string.json",
            "\"profile\"",
            "not a poplar profile: a JSON string",
        ),
        ("true.json", "true", "not a poplar profile: a JSON boolean"),
    ] {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        for cmd in ["profile", "trace"] {
            let mut args = vec![std::ffi::OsStr::new(cmd), p.as_os_str()];
            if cmd == "trace" {
                args.extend(["-o".as_ref(), trace.as_os_str()]);
            }
            let (ok, err) = poplar_promptly(&args);
            assert!(!ok, "{cmd} {name}");
            assert!(
                err.contains(want) && !err.contains("truncated"),
                "{cmd} {name}: {err}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn fifos_and_directories_are_refused_not_read() {
    let d = dir("fifo");
    let f = d.join("pipe");
    let ok = Command::new("mkfifo")
        .arg(&f)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mkfifo");
    let out = d.join("o.html");
    for args in [
        vec!["profile".as_ref(), f.as_os_str()],
        vec!["memory".as_ref(), f.as_os_str()],
        vec!["plot".as_ref(), f.as_os_str(), "-o".as_ref(), d.as_os_str()],
        vec![
            "report".as_ref(),
            f.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ],
        vec!["profile".as_ref(), d.as_os_str()],
    ] {
        let (ok, err) = poplar_promptly(&args);
        assert!(!ok, "{args:?}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_profile_of_another_executable_is_refused_by_checksum() {
    let d = dir("checksum");
    let (exe, prof) = files(&d);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    let sum = v["executable_checksum"]
        .as_u64()
        .expect("the profile records its executable's checksum");
    // Another executable's profile with the same target and phases.
    v["executable_checksum"] = serde_json::json!(sum ^ 1);
    let other = d.join("other.profile.json");
    std::fs::write(&other, v.to_string()).unwrap();
    let html = d.join("r.html");
    let (ok, err) = poplar_promptly(&[
        "report".as_ref(),
        exe.as_os_str(),
        other.as_os_str(),
        "-o".as_ref(),
        html.as_os_str(),
    ]);
    assert!(!ok, "a profile of another executable was reported");
    assert!(
        err.contains("another executable") && err.contains("other.profile.json"),
        "{err}"
    );
    // A profile written before the checksum was recorded: reported, with a warning.
    v.as_object_mut().unwrap().remove("executable_checksum");
    std::fs::write(&other, v.to_string()).unwrap();
    let (ok, err) = poplar_promptly(&[
        "report".as_ref(),
        exe.as_os_str(),
        other.as_os_str(),
        "-o".as_ref(),
        html.as_os_str(),
        "--force".as_ref(),
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("cannot be matched"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `poplar report -o` and `poplar trace -o` into a folder that does not exist are refused
/// before anything is loaded, naming the folder.
#[test]
fn an_output_into_a_missing_folder_is_refused_first() {
    let d = dir("nofolder");
    let (exe, prof) = files(&d);
    let out = d.join("no").join("such").join("report.html");
    let o = |p: &Path| p.as_os_str().to_owned();
    for args in [
        vec!["report".into(), o(&exe), o(&prof), "-o".into(), o(&out)],
        vec!["trace".into(), o(&prof), "-o".into(), o(&out)],
    ] {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let (ok, err) = poplar_promptly(&args);
        assert!(
            !ok && err.contains("does not exist") && err.contains("such"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}
