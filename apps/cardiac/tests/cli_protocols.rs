//! The `cardiac` binary with stimulation protocols: `cardiac cell` (its files, and earlier
//! ones kept), paced runs (activation, repolarisation and APD per beat), and sites, regions,
//! scalings and S2 recorded so that a run repeats from its record.

mod support;

use support::{cardiac, fails_with, repeats_from_its_record, run_refused, stderr, tmp};

#[test]
fn cell_mode_writes_its_files_and_keeps_earlier_ones() {
    let d = tmp();
    let out = d.join("cell").display().to_string();
    let o = cardiac(&[
        "cell",
        "--beats",
        "2",
        "--bcl",
        "800",
        "--s2",
        "250:800:50",
        "--out",
        &out,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let beats = std::fs::read_to_string(d.join("cell/beats.csv")).unwrap();
    assert_eq!(beats.lines().count(), 3, "header and two beats:\n{beats}");
    let apd90: f64 = beats
        .lines()
        .nth(2)
        .unwrap()
        .rsplit(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((200.0..400.0).contains(&apd90), "{beats}");
    let rest = std::fs::read_to_string(d.join("cell/restitution.csv")).unwrap();
    assert_eq!(rest.lines().count(), 1 + 12, "{rest}");
    assert!(
        rest.lines().nth(1).unwrap().contains(",0,"),
        "250 ms is refractory:\n{rest}"
    );
    let trace = std::fs::read_to_string(d.join("cell/trace.csv")).unwrap();
    assert_eq!(
        trace.lines().count(),
        // Pulses at 10 and 810 ms, then one BCL: 1,610 ms, a row every 0.1 ms from t = 0.
        1 + 16_101,
        "one row every 0.1 ms"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("cell/cell.json")).unwrap()).unwrap();
    assert_eq!(json["protocol"]["bcl_ms"], 800.0);
    assert_eq!(
        json["beats"][1]["apd90"].as_f64().unwrap().round(),
        apd90.round()
    );
    // Again without --force: refused, files kept.
    fails_with(&["cell", "--out", &out], "--force");
    assert_eq!(
        std::fs::read_to_string(d.join("cell/beats.csv")).unwrap(),
        beats
    );
    fails_with(&["cell", "--dt", "0.5", "--out", &out], "--dt");
    fails_with(&["cell", "--s2", "abc", "--out", &out, "--force"], "--s2");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_paced_run_writes_activation_repolarisation_and_apd_per_beat() {
    let d = tmp();
    let out = d.join("pace").display().to_string();
    let o = cardiac(&[
        "run",
        "--dx",
        "1",
        "--tiles",
        "16",
        "--beats",
        "2",
        "--bcl",
        "400",
        "--dt-ode",
        "0.1",
        "--snapshot-every",
        "0",
        "--no-profile",
        "--no-report",
        "--out",
        &out,
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    // Paced: the run lasts both beats (800 ms), not until every cell has activated once.
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("pace/results.json")).unwrap())
            .unwrap();
    assert!(
        (r["t_ms"].as_f64().unwrap() - 800.0).abs() < 0.2,
        "{}",
        r["t_ms"]
    );
    let beats = r["beats"].as_array().expect("per-beat summary");
    assert_eq!(beats.len(), 2);
    let n = r["cells"].as_u64().unwrap();
    for b in beats {
        assert_eq!(b["activated"].as_u64(), Some(n), "{b}");
        assert_eq!(b["repolarised"].as_u64(), Some(n), "{b}");
    }
    let apd = |k: usize| beats[k]["median_apd_ms"].as_f64().unwrap();
    assert!((250.0..330.0).contains(&apd(0)), "{beats:?}");
    assert!(
        apd(1) < apd(0) - 10.0,
        "APD shortens at a 400 ms cycle: {beats:?}"
    );
    let vtu = std::fs::read_to_string(d.join("pace/activation.vtu")).unwrap();
    for f in [
        "activation_beat2_ms",
        "repolarisation_beat2_ms",
        "apd_beat2_ms",
    ] {
        assert!(
            vtu.contains(&format!("Name=\"{f}\"")),
            "{f} missing from activation.vtu"
        );
    }
    assert_eq!(r["parameters"]["problem"]["beats"].as_u64(), Some(2));
    assert!(err.contains("the stimulus is not the benchmark's"), "{err}");
    assert!(
        err.contains("host outside the engine"),
        "the loop's host share: {err}"
    );
    fails_with(
        &[
            "run",
            "--beats",
            "3",
            "--bcl",
            "1",
            "--out",
            &d.join("x").display().to_string(),
        ],
        "--bcl 1 ms must be longer than the pulse",
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn sites_regions_scalings_and_s2_are_recorded_and_a_run_repeats_from_its_record() {
    let d = tmp();
    let first = d.join("first").display().to_string();
    let o = cardiac(&[
        "run",
        "--dx",
        "1",
        "--tiles",
        "16",
        "--t-end",
        "8",
        "--dt-ode",
        "0.05",
        "--stim-site",
        "sphere:20,7,3,1.5;start=3;amplitude=60",
        "--region",
        "box:0,0,0,10,7,3;cell-type=endo;GKr*0.5",
        "--tp06",
        "GCaL*1.1",
        "--act-threshold",
        "-20",
        "--snapshot-every",
        "0",
        "--no-report",
        "--out",
        &first,
    ]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("stimulus site 2:") && out.contains("from t = 3 ms"),
        "{out}"
    );
    assert!(
        out.contains("cell model") && out.contains("g_kr×0.5"),
        "{out}"
    );
    assert!(stderr(&o).contains("the cells are not the benchmark's"));
    let results = d.join("first/results.json");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let p = &record["parameters"]["problem"];
    assert_eq!(p["sites"][0]["start"].as_f64(), Some(3.0));
    assert_eq!(p["regions"][0]["cell_type"].as_str(), Some("Endo"));
    assert_eq!(p["regions"][0]["scale"]["g_kr"].as_f64(), Some(0.5));
    assert_eq!(p["tp06"]["g_cal"].as_f64(), Some(1.1));
    assert_eq!(p["act_threshold"].as_f64(), Some(-20.0));
    repeats_from_its_record(&d, &["--no-report"]);
    // Mistakes are named, before any work.
    let fresh = d.join("fresh").display().to_string();
    run_refused(
        &fresh,
        &["--tp06", "GKq*0.5"],
        "unknown TP06 parameter \"GKq\"",
    );
    run_refused(&fresh, &["--region", "box:0,0,0,1,1,1"], "changes nothing");
    run_refused(
        &fresh,
        &["--act-threshold", "-90"],
        "--act-threshold -90 mV",
    );
    run_refused(
        &fresh,
        &["--s2", "1"],
        "--s2 1 ms (the S2 coupling interval) must be longer than the pulse",
    );
    run_refused(
        &fresh,
        &["--stim-site", "box:30,30,30,31,31,31"],
        "--stim-site 1",
    );
    run_refused(
        &fresh,
        &["--stim-cells", "/nonexistent/cells.txt"],
        "/nonexistent/cells.txt",
    );
    let _ = std::fs::remove_dir_all(&d);
}
