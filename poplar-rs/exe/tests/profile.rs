//! The profiler on hand-made executables: results do not change, the profile and the Chrome
//! trace round-trip through JSON, bad profile files are typed errors.

use poplar_engine::Engine;
use poplar_exe::exe::*;
use poplar_exe::profile::{PhaseKind, Profile, ProfileError, ProfileOptions};
use poplar_testkit::builder::*;

/// `sample_exe`'s loop inside a label, run twice.
fn labelled_exe() -> Executable {
    let mut e = sample_exe();
    let body = e.programs[0].clone();
    e.programs[0] = Step::Label {
        name: "PDE".into(),
        body: Box::new(Step::Seq(vec![body, Step::Sync(SyncKind::Global)])),
    };
    e
}

fn memory(engine: &Engine) -> Vec<Vec<u8>> {
    (0..8)
        .map(|t| engine.read_memory(t.into(), 0, 4096).unwrap())
        .collect()
}

#[test]
fn profiled_run_is_bit_identical() {
    let exe = labelled_exe();
    for threads in [1, 4] {
        let mut plain = Engine::new(&exe, opts(threads)).unwrap();
        let mut prof = Engine::new(&exe, opts(threads)).unwrap();
        prof.enable_profiling(ProfileOptions::default());
        assert!(plain.profile().is_none());
        for _ in 0..2 {
            plain.run(0).unwrap();
            prof.run(0).unwrap();
        }
        assert_eq!(memory(&plain), memory(&prof));
        let p = prof.profile().unwrap();
        assert_eq!(p.runs, 2);
        // Repeat 5 x (ring, internal sync, compute, bcast) per run.
        let compute = p
            .phases
            .iter()
            .find(|p| p.kind == PhaseKind::Compute)
            .unwrap();
        assert_eq!(compute.name, "scale_add");
        assert_eq!(compute.executions, 10);
        assert_eq!(p.syncs.internal, 10);
        assert_eq!(p.syncs.global, 2);
        let l = p.label("PDE").unwrap();
        assert_eq!(l.executions, 2);
        assert_eq!(l.elapsed, p.elapsed);
        assert!(p.elapsed.compute > 0 && p.elapsed.exchange > 0 && p.elapsed.sync > 0);
        assert!(p.wall_ns > 0 && compute.wall_ns > 0);
        let exchanges: Vec<_> = p
            .phases
            .iter()
            .filter(|p| p.kind == PhaseKind::Exchange)
            .collect();
        assert!(!exchanges.is_empty());
        assert!(exchanges.iter().all(|e| e.executions > 0 && e.wall_ns > 0));
        let phase_wall: u64 = p.phases.iter().map(|p| p.wall_ns).sum();
        assert!(phase_wall <= p.wall_ns, "{phase_wall} > {}", p.wall_ns);
        // Every tile ran the same work: perfectly balanced compute.
        assert_eq!(compute.per_execution.min, compute.per_execution.max);
        assert!(p.text_summary().contains("scale_add"));
    }
}

#[test]
fn take_profile_starts_over() {
    let exe = labelled_exe();
    let mut e = Engine::new(&exe, opts(1)).unwrap();
    e.enable_profiling(ProfileOptions::default());
    e.run(0).unwrap();
    let first = e.take_profile().unwrap();
    e.run(0).unwrap();
    let second = e.take_profile().unwrap();
    assert_eq!(first.runs, 1);
    assert_eq!(second.runs, 1);
    assert_eq!(first.elapsed, second.elapsed);
    e.disable_profiling();
    assert!(e.take_profile().is_none());
}

#[test]
fn json_round_trip_and_bad_files() {
    let exe = labelled_exe();
    let mut e = Engine::new(&exe, opts(2)).unwrap();
    e.enable_profiling(ProfileOptions::default());
    e.run(0).unwrap();
    let p = e.profile().unwrap().clone();
    let text = p.to_json();
    assert_eq!(Profile::from_json(&text).unwrap(), p);

    assert!(matches!(
        Profile::from_json("{not json"),
        Err(ProfileError::Json(_))
    ));
    assert!(matches!(
        Profile::from_json(r#"{"schema":"other","version":1}"#),
        Err(ProfileError::Schema(_))
    ));
    let newer = text.replacen("\"version\":2", "\"version\":99", 1);
    assert_ne!(newer, text);
    assert!(matches!(
        Profile::from_json(&newer),
        Err(ProfileError::Version { found: 99, .. })
    ));
    let mut broken = p.clone();
    broken.tiles.sync.pop();
    assert!(matches!(
        Profile::from_json(&broken.to_json()),
        Err(ProfileError::Inconsistent(_))
    ));
    let mut broken = p.clone();
    broken.timeline.spans[0].track = 1000;
    assert!(matches!(
        Profile::from_json(&broken.to_json()),
        Err(ProfileError::Inconsistent(_))
    ));
    assert!(matches!(
        Profile::load("/nonexistent/profile.json"),
        Err(ProfileError::Io { .. })
    ));
}

#[test]
fn chrome_trace_loads_back() {
    let exe = labelled_exe();
    let mut e = Engine::new(&exe, opts(1)).unwrap();
    e.enable_profiling(ProfileOptions::default());
    e.run(0).unwrap();
    let p = e.profile().unwrap();
    let text = serde_json::to_string(&p.chrome_trace()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let spans: Vec<_> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(spans.len(), p.timeline.spans.len());
    for s in &spans {
        for f in ["name", "cat", "ts", "dur", "pid", "tid"] {
            assert!(!s[f].is_null(), "span lacks {f}: {s}");
        }
        assert!(["compute", "exchange", "sync", "label"].contains(&s["cat"].as_str().unwrap()));
    }
    // One named track per tile (8 tiles) plus the label track.
    let threads = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .count();
    assert_eq!(threads, 9);
    // The label span covers the whole run.
    let label = spans.iter().find(|s| s["cat"] == "label").unwrap();
    assert_eq!(label["name"], "PDE");
    assert_eq!(label["dur"].as_u64().unwrap(), p.total_cycles());
    assert_eq!(v["otherData"]["time_unit"], "cycle");
    // Spans of a track do not overlap and are in time order.
    for track in 1..=8u64 {
        let mut last = 0;
        for s in spans.iter().filter(|s| s["tid"].as_u64() == Some(track)) {
            let ts = s["ts"].as_u64().unwrap();
            assert!(ts >= last, "overlap on track {track}");
            last = ts + s["dur"].as_u64().unwrap();
        }
    }
}

#[test]
fn timeline_is_bounded() {
    let exe = labelled_exe();
    let mut e = Engine::new(&exe, opts(1)).unwrap();
    e.enable_profiling(ProfileOptions {
        timeline_steps: 5,
        timeline_tracks: 2,
    });
    e.run(0).unwrap();
    let p = e.profile().unwrap();
    assert!(p.timeline.truncated);
    assert_eq!(p.timeline.tracks.len(), 3);
    assert_eq!(p.timeline.tracks[1].first_tile, 0);
    assert_eq!(p.timeline.tracks[1].last_tile, 3);
    // The totals still cover the whole run.
    assert_eq!(
        p.phases
            .iter()
            .find(|x| x.name == "ring")
            .unwrap()
            .executions,
        5
    );
}
