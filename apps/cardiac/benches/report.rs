//! The browser report of the cardiac executable: generation time and file size, and the time
//! to first render in headless Chromium, for the 0.1 mm Niederer slab on 1 and 16 chips (the
//! 16-chip case has 23,552 tiles).
//!
//! `cargo bench -p cardiac --bench report [-- --dx 0.1] [--chips 1,16] [--reps 5]`
//!
//! Each executable runs two ODE steps with profiling on, so that the page has a profile. The
//! report is generated `reps` times (median) and opened `reps` times in one Chromium (median
//! of the wall time from the navigation request until the page says it has rendered, and of
//! the page's own time from navigation start). Then each view is opened once and timed.

use std::path::PathBuf;
use std::time::Instant;

use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig, DeviceRun};
use cardiac::solver::{Setup, Stimulus};
use poplar::profile::ProfileOptions;
use poplar::EngineOptions;
use poplar_viewer::browser::Browser;
use poplar_viewer::ReportData;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn arg<T: std::str::FromStr>(name: &str) -> Option<Vec<T>> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == name)?;
    args.get(at + 1)
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
}

fn main() {
    codelets::link();
    let dx = arg::<f64>("--dx")
        .and_then(|v| v.first().copied())
        .unwrap_or(0.1);
    let chips = arg::<u32>("--chips").unwrap_or_else(|| vec![1, 16]);
    let reps = arg::<usize>("--reps")
        .and_then(|v| v.first().copied())
        .unwrap_or(5)
        .max(1);
    let t = Instant::now();
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, dx);
    let stim = Stimulus::niederer(&mesh);
    let setup = Setup::new(&mesh, &Conductivity::niederer(), 0.02, &stim).expect("setup");
    println!(
        "== report: slab dx {dx} mm, {} cells (set-up {:.1} s)",
        setup.n,
        t.elapsed().as_secs_f64()
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-bench");
    std::fs::create_dir_all(&dir).expect("bench folder");
    let mut browser = Browser::start(1400, 1000).expect("start Chromium");
    for &c in &chips {
        let cfg = DeviceConfig::chips(c, Strategy::MixedClean);
        let t = Instant::now();
        let prob = device::build(&setup, &cfg).expect("build");
        let exe = device::compile_problem(&prob).expect("compile");
        let info = prob.info.clone();
        drop(prob);
        let build_s = t.elapsed().as_secs_f64();
        let mut run = DeviceRun::new(&exe, info, EngineOptions::default()).expect("engine");
        run.engine.enable_profiling(ProfileOptions::default());
        for _ in 0..2 {
            run.run_one_step().expect("step");
        }
        let profile = run.engine.profile().expect("profiling is on").clone();
        drop(run);

        let title = format!("cardiac slab dx {dx} mm, {c} chip(s)");
        let mut gen = Vec::new();
        let mut html = String::new();
        for _ in 0..reps {
            let t = Instant::now();
            let data = ReportData::from_executable(&exe, &title)
                .with_profile(&profile)
                .expect("the profile is of this executable");
            html = poplar_viewer::html(&data);
            gen.push(t.elapsed().as_secs_f64());
        }
        let page = dir.join(format!("cardiac-{dx}mm-{c}chips.html"));
        std::fs::write(&page, &html).expect("write the page");
        let mut wall = Vec::new();
        let mut in_page = Vec::new();
        for _ in 0..reps {
            let d = browser.open_report(&page).expect("the report renders");
            wall.push(d.as_secs_f64());
            let ms = browser
                .eval("Number(document.documentElement.dataset.firstRenderMs)")
                .expect("the page's timing");
            in_page.push(ms.as_f64().unwrap_or(f64::NAN) / 1e3);
        }
        let mut views = Vec::new();
        for view in ["programs", "liveness", "execution", "memory"] {
            let ms = browser
                .eval(&format!(
                    "(() => {{ const t = performance.now(); window.poplarReport.show('{view}'); return performance.now() - t; }})()"
                ))
                .expect("switch view");
            views.push(format!("{view} {:.0} ms", ms.as_f64().unwrap_or(f64::NAN)));
        }
        let click = browser
            .eval("(() => { const t = performance.now(); window.poplarReport.selectTile(7); return performance.now() - t; })()")
            .expect("select a tile");
        let errors = browser.errors();
        assert!(errors.is_empty(), "console errors: {errors:#?}");
        println!(
            "{c:>2} chip(s), {} tiles, {} compute sets, {} exchanges (build + compile {build_s:.1} s):\n\
             \x20 report generation median {:.3} s (min {:.3}, max {:.3}; {reps} runs), file {:.2} MB\n\
             \x20 first render in headless Chromium: median {:.2} s wall from the request (min {:.2}, max {:.2}), {:.2} s in the page from navigation start\n\
             \x20 first opening of each other view: {}; a tile click {:.0} ms",
            exe.target.num_tiles(),
            exe.computes.len(),
            exe.exchanges.len(),
            median(gen.clone()),
            gen.iter().cloned().fold(f64::INFINITY, f64::min),
            gen.iter().cloned().fold(0.0, f64::max),
            html.len() as f64 / 1e6,
            median(wall.clone()),
            wall.iter().cloned().fold(f64::INFINITY, f64::min),
            wall.iter().cloned().fold(0.0, f64::max),
            median(in_page),
            views.join(", "),
            click.as_f64().unwrap_or(f64::NAN),
        );
    }
}
