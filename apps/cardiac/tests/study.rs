//! `cardiac study` on the shipped heart mesh over 1 and 2 chips: the tables' figures agree
//! with each other and with a partition computed here (Table 1's medians and maxima from the
//! library's `PartitionStats` of the same build), the phases are positive and ordered
//! (min ≤ mean ≤ max), the exchange's effectiveness is a fraction, no bytes cross chips on one
//! chip and some on two, the slowest exchange tile's parts add up to the exchange's maximum,
//! evening the ports leaves one chip fully effective and two chips waiting for their links
//! and hops, the modelled time per simulated ms is positive, the JSON and the plot are
//! written, and an existing output is refused without `--force`.

mod support;

use support::{cardiac, mesh, stderr, tmp};

#[test]
fn study_writes_consistent_tables_and_refuses_to_overwrite() {
    let dir = tmp();
    let json = dir.join("study.json");
    let plot = dir.join("scaling.svg");
    let (js, ps) = (json.display().to_string(), plot.display().to_string());
    let m = mesh();
    let args = [
        "study",
        "--mesh",
        &m,
        "--scale",
        "10",
        "--stim-surface",
        "ENDO_LV",
        "--study-chips",
        "1,2",
        "--json",
        &js,
        "--plot",
        &ps,
    ];
    let o = cardiac(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("Table 1") && text.contains("Table 2") && text.contains("Figure 5"),
        "{text}"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = s["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        let h = &r["halo"];
        let (own, halo) = (
            h["median_own"].as_f64().unwrap(),
            h["median_halo"].as_f64().unwrap(),
        );
        let share = h["halo_share"].as_f64().unwrap();
        assert!((share - 100.0 * halo / (own + halo)).abs() < 1e-9, "{h}");
        assert!(h["max_inbound"].as_u64().unwrap() <= h["max_total"].as_u64().unwrap());
        for phase in ["pde_compute", "pde_exchange", "ode_compute"] {
            let p = &r["phases"][phase];
            let (lo, mean, hi) = (
                p["min"].as_f64().unwrap(),
                p["mean"].as_f64().unwrap(),
                p["max"].as_f64().unwrap(),
            );
            assert!(0.0 < lo && lo <= mean && mean <= hi, "{phase}: {p}");
        }
        assert!(r["seconds_per_ms"].as_f64().unwrap() > 0.0);
    }
    let eff = |r: &serde_json::Value| r["phases"]["exchange_effectiveness"].as_f64().unwrap();
    let bytes = |r: &serde_json::Value| r["phases"]["inter_chip_bytes"].as_u64().unwrap();
    assert!(rows.iter().all(|r| 0.0 < eff(r) && eff(r) <= 1.0));
    assert_eq!(bytes(&rows[0]), 0, "one chip sends nothing between chips");
    assert!(bytes(&rows[1]) > 0, "two chips exchange halo cells");
    // The slowest exchange tile is the exchange's maximum, its parts add up to its cycles, and
    // only a tile of two chips waits for links or hops.
    for (i, r) in rows.iter().enumerate() {
        let x = &r["phases"]["slowest_exchange"];
        let f = |k: &str| x["breakdown"][k].as_u64().unwrap();
        let cycles = x["cycles"].as_u64().unwrap();
        assert_eq!(
            cycles as f64,
            r["phases"]["pde_exchange"]["max"].as_f64().unwrap()
        );
        assert_eq!(
            f("value_cycles") + f("setup_cycles") + f("link_wait_cycles") + f("latency_cycles"),
            cycles,
            "{x}"
        );
        assert!(f("messages") > 0 && f("value_cycles") > 0, "{x}");
        if i == 0 {
            assert_eq!(f("link_wait_cycles") + f("latency_cycles"), 0, "{x}");
        }
        // Evening the ports keeps the mean and each tile's wait: fully effective on one chip;
        // on two, the phase is the mean port plus at least the slowest tile's wait.
        let e = &r["phases"]["even_ports"];
        let (port, wait, even) = (
            e["mean_port_cycles"].as_f64().unwrap(),
            e["max_link_and_hop_cycles"].as_u64().unwrap(),
            e["effectiveness"].as_f64().unwrap(),
        );
        let mean = r["phases"]["pde_exchange"]["mean"].as_f64().unwrap();
        assert!(wait >= f("link_wait_cycles") + f("latency_cycles"), "{e}");
        assert!((even - mean / (port + wait as f64)).abs() < 1e-9, "{e}");
        if i == 0 {
            assert_eq!((wait, even), (0, 1.0), "{e}");
            assert!((port - mean).abs() < 1e-9 * mean, "{e}");
        } else {
            assert!(wait > 0 && port < mean && even < 1.0, "{e}");
        }
    }
    assert_eq!(s["cells"], 6437);
    assert!(rows[1]["tiles"].as_u64() > rows[0]["tiles"].as_u64());
    assert!(std::fs::read_to_string(&plot).unwrap().contains("<svg"));
    let again = cardiac(&args);
    assert!(!again.status.success());
    assert!(stderr(&again).contains("exists"), "{}", stderr(&again));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every value of `--study-chips` is checked before the first build: `1,65` is refused at
/// once, naming the option and the value (it studied one chip, then failed naming `--chips`).
#[test]
fn every_study_chip_count_is_checked_before_the_study_starts() {
    let m = mesh();
    let o = cardiac(&[
        "study",
        "--mesh",
        &m,
        "--scale",
        "10",
        "--stim-surface",
        "ENDO_LV",
        "--study-chips",
        "1,65",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("--study-chips 1,65: 65 is not 1 to 64 chips"),
        "{err}"
    );
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}
