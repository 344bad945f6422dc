//! The report in a real browser: headless Chromium (the distribution's package; `scripts/test`
//! installs it, `CHROMIUM` may name another) opens the page of a small two-chip executable.
//! Any console error or uncaught exception fails the test; the memory view must show every
//! tile, and a real click on a tile must show that tile's bytes as `poplar memory` reports them.
//! Screenshots of the four views are kept in `target/tmp/viewer/` (printed at the end).

mod common;

use std::path::PathBuf;

use poplar::profile::MemoryReport;
use poplar_viewer::browser::Browser;
use poplar_viewer::ReportData;
use serde_json::Value;

fn artefacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("viewer");
    std::fs::create_dir_all(&dir).expect("artefact folder");
    dir
}

fn num(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.parse().unwrap_or_else(|_| panic!("not a number: {s}")),
        Value::Number(n) => n.as_u64().expect("an unsigned number"),
        other => panic!("not a number: {other}"),
    }
}

/// Bytes delivered from chip 0 to chip 1 over the profiled run, from the executable's
/// transfers and the profile's executions.
fn chip0_to_chip1(exe: &poplar::Executable, profile: &poplar::profile::Profile) -> u64 {
    let mut bytes = 0u64;
    for ph in profile
        .phases
        .iter()
        .filter(|p| p.kind == poplar::profile::PhaseKind::Exchange)
    {
        let x = &exe.exchanges.as_slice()[ph.index as usize];
        for tr in &x.transfers {
            for &(d, _) in &tr.dsts {
                if exe.target.ipu_of(tr.src_tile) == 0 && exe.target.ipu_of(d) == 1 {
                    bytes += ph.executions * u64::from(tr.bytes);
                }
            }
        }
    }
    bytes
}

/// A headless Chromium; fails the test, saying how to install one, if there is none.
fn start_browser(width: u32, height: u32) -> Browser {
    Browser::start(width, height).unwrap_or_else(|e| panic!("start Chromium: {e}"))
}

fn no_errors(b: &Browser, when: &str) {
    let errors = b.errors();
    assert!(errors.is_empty(), "console errors {when}: {errors:#?}");
}

/// Polls `expr` until it is true (events such as a `<details>` toggle are delivered after the
/// click that causes them).
fn wait_for(b: &mut Browser, expr: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if b.eval(expr).unwrap() == Value::Bool(true) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// Clicks the centre of the element `selector`.
fn click_element(b: &mut Browser, selector: &str) {
    let r = b
        .eval(&format!(
            "(() => {{ const r = document.querySelector({selector:?}).getBoundingClientRect(); \
             return [r.left + r.width / 2, r.top + r.height / 2]; }})()"
        ))
        .expect("element position");
    b.click(r[0].as_f64().unwrap(), r[1].as_f64().unwrap())
        .expect("click");
}

fn screenshot(b: &mut Browser, name: &str) -> PathBuf {
    let png = b.screenshot().expect("screenshot");
    assert_eq!(&png[1..4], b"PNG", "a PNG");
    let path = artefacts().join(name);
    std::fs::write(&path, png).expect("write screenshot");
    path
}

/// Compute and exchange steps of the programs in order, a loop's body once, a function's body
/// at its first call (as the liveness view walks them).
fn program_steps(exe: &poplar::Executable) -> u64 {
    use poplar::exe::Step;
    fn walk(exe: &poplar::Executable, s: &Step, seen: &mut Vec<u32>) -> u64 {
        match s {
            Step::Compute(_) | Step::Exchange(_) => 1,
            Step::Seq(v) => v.iter().map(|x| walk(exe, x, seen)).sum(),
            Step::Label { body, .. } | Step::Repeat { body, .. } => walk(exe, body, seen),
            Step::While { cond, body, .. } => walk(exe, cond, seen) + walk(exe, body, seen),
            Step::If { then, else_, .. } => walk(exe, then, seen) + walk(exe, else_, seen),
            Step::Switch { cases, default, .. } => {
                cases.iter().map(|(_, x)| walk(exe, x, seen)).sum::<u64>()
                    + walk(exe, default, seen)
            }
            Step::OverlapIo { io, compute } => walk(exe, io, seen) + walk(exe, compute, seen),
            Step::Call(f) if !seen.contains(&f.as_u32()) => {
                seen.push(f.as_u32());
                walk(exe, &exe.functions[*f], seen)
            }
            _ => 0,
        }
    }
    let mut seen = Vec::new();
    exe.programs.iter().map(|p| walk(exe, p, &mut seen)).sum()
}

#[test]
fn the_report_opens_without_errors_shows_every_tile_and_a_clicked_tiles_bytes() {
    let (exe, profile) = common::sample();
    let memory = MemoryReport::from_executable(&exe);
    let data = ReportData::from_executable(&exe, "two chips")
        .with_profile(&profile)
        .expect("the profile is of this executable");
    let page = artefacts().join("two-chips.html");
    let _ = std::fs::remove_file(&page);
    poplar_viewer::write(&page, &data, false).expect("write the report");

    let mut b = start_browser(1400, 1000);
    b.open_report(&page).expect("the report renders");
    no_errors(&b, "after loading");

    // Every tile is in the memory view: the summary counts them, and each tile's square on the
    // map leads back to it.
    let tiles = exe.target.num_tiles();
    assert_eq!(tiles, 32);
    assert_eq!(
        num(&b
            .eval("document.getElementById('memory-summary').dataset.tiles")
            .unwrap()),
        u64::from(tiles)
    );
    let on_map = b
        .eval(
            "(() => { const r = window.poplarReport; const n = r.data.target.tiles; \
             let ok = 0; for (let t = 0; t < n; t++) { const p = r.mapPos(t); \
             if (r.mapTileAt(p[0] + 1, p[1] + 1) === t) ok++; } return ok; })()",
        )
        .unwrap();
    assert_eq!(num(&on_map), u64::from(tiles), "tiles found on the map");

    // A real click on the square of a tile of the second chip shows its bytes.
    let tile = 21u32;
    let m = &memory.tiles[tile as usize];
    assert!(m.total > 0, "the chosen tile holds data");
    let xy = b
        .eval(&format!(
            "(() => {{ const c = document.getElementById('memory-map').getBoundingClientRect(); \
             const p = window.poplarReport.mapPos({tile}); \
             return [c.left + p[0] + 2, c.top + p[1] + 2]; }})()"
        ))
        .unwrap();
    b.click(xy[0].as_f64().unwrap(), xy[1].as_f64().unwrap())
        .unwrap();
    let detail = b
        .eval(
            "(() => { const d = document.getElementById('tile-detail'); \
             return {tile: d.dataset.tile, total: d.dataset.total, live: d.dataset.alwaysLive, \
             temp: d.dataset.temporary, \
             cats: Array.from(d.querySelectorAll('tr[data-category]')).map(r => [r.dataset.category, Number(r.dataset.bytes)]), \
             items: Array.from(d.querySelectorAll('#tile-items tr[data-bytes]')).map(r => Number(r.dataset.bytes)) }; })()",
        )
        .unwrap();
    assert_eq!(
        num(&detail["tile"]),
        u64::from(tile),
        "the clicked tile is shown"
    );
    assert_eq!(num(&detail["total"]), m.total);
    assert_eq!(num(&detail["live"]), m.always_live);
    assert_eq!(num(&detail["temp"]), m.temporary);
    let cats: Vec<(String, u64)> = detail["cats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c[0].as_str().unwrap().to_string(), c[1].as_u64().unwrap()))
        .collect();
    let want: Vec<(String, u64)> = m
        .by_category
        .entries()
        .iter()
        .map(|(n, b)| (n.to_string(), *b))
        .collect();
    assert_eq!(cats, want, "categories of tile {tile}");
    let items: u64 = detail["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    let breakdown: u64 = exe.tiles[tile as usize]
        .breakdown
        .iter()
        .map(|i| u64::from(i.bytes))
        .sum();
    assert_eq!(items, breakdown, "items of tile {tile}");
    // The fullest tile heads the table.
    let first = b
        .eval("document.querySelector('#fullest tr[data-tile]').dataset.tile")
        .unwrap();
    assert_eq!(num(&first), u64::from(memory.fullest(1)[0].tile));
    no_errors(&b, "after clicking a tile");
    let mut shots = vec![screenshot(&mut b, "memory.png")];

    // The other views, opened by clicking their tabs.
    click_element(&mut b, "button[data-view=programs]");
    assert!(wait_for(
        &mut b,
        "document.documentElement.dataset.view === 'programs'"
    ));
    // Expand the loop, then the label inside it, by clicking them.
    for caption in ["repeat × 3", "add"] {
        let found = wait_for(
            &mut b,
            &format!(
                "(() => {{ const s = Array.from(document.querySelectorAll('#program-tree summary')) \
                 .find(s => s.textContent === {caption:?}); \
                 if (!s) return false; s.id = 'to-click'; return true; }})()"
            ),
        );
        assert!(found, "'{caption}' is in the tree");
        click_element(&mut b, "#to-click");
        b.eval("document.getElementById('to-click').removeAttribute('id')")
            .unwrap();
    }
    assert!(wait_for(
        &mut b,
        "document.getElementById('program-tree').textContent.includes('compute y = x + x')"
    ));
    let tree = b
        .eval("document.getElementById('program-tree').textContent")
        .unwrap();
    let tree = tree.as_str().unwrap();
    for name in ["main", "repeat × 3", "compute y = x + x"] {
        assert!(
            tree.contains(name),
            "the program tree shows '{name}': {tree}"
        );
    }
    no_errors(&b, "in the program tree");
    shots.push(screenshot(&mut b, "programs.png"));

    click_element(&mut b, "button[data-view=liveness]");
    assert!(wait_for(
        &mut b,
        "document.documentElement.dataset.view === 'liveness'"
    ));
    let steps = b
        .eval("document.getElementById('live-chart').dataset.steps")
        .unwrap();
    assert_eq!(num(&steps), program_steps(&exe), "liveness steps");
    no_errors(&b, "in the liveness view");
    shots.push(screenshot(&mut b, "liveness.png"));

    click_element(&mut b, "button[data-view=execution]");
    assert!(wait_for(
        &mut b,
        "document.documentElement.dataset.view === 'execution'"
    ));
    let cycles = b
        .eval("document.getElementById('exec-summary').dataset.cycles")
        .unwrap();
    assert_eq!(num(&cycles), profile.total_cycles(), "the run's cycles");
    let rows = b
        .eval("document.querySelectorAll('#phase-table tr[data-phase]').length")
        .unwrap();
    assert_eq!(
        num(&rows) as usize,
        profile.phases.len(),
        "one row per phase"
    );
    // Bytes from chip 0 to chip 1 over the run, computed here from the executable's transfers.
    let want01 = chip0_to_chip1(&exe, &profile);
    assert!(want01 > 0, "the sample sends between the chips");
    let got01 = b
        .eval("document.querySelectorAll('#chip-matrix tr')[1].querySelectorAll('td')[1].dataset.bytes")
        .unwrap();
    assert_eq!(num(&got01), want01, "chip 0 → chip 1 bytes");
    no_errors(&b, "in the execution view");
    shots.push(screenshot(&mut b, "execution.png"));
    for s in shots {
        println!("screenshot: {}", s.display());
    }
}

#[test]
fn a_report_without_profile_and_with_hostile_names_renders_safely() {
    let (exe, _) = common::sample();
    let title = "</script><script>window.pwned = 1</script> & <b>bold</b>";
    let data = ReportData::from_executable(&exe, title);
    let page = artefacts().join("no-profile.html");
    let _ = std::fs::remove_file(&page);
    poplar_viewer::write(&page, &data, false).expect("write the report");
    let mut b = start_browser(1200, 900);
    b.open_report(&page).expect("the report renders");
    assert_eq!(
        b.eval("window.pwned === undefined").unwrap(),
        Value::Bool(true)
    );
    assert_eq!(
        b.eval("document.getElementById('title').textContent")
            .unwrap(),
        Value::String(title.to_string())
    );
    click_element(&mut b, "button[data-view=execution]");
    // Without a profile, the phases are the static model, one row per phase.
    let rows = b
        .eval("document.querySelectorAll('#phase-table tr[data-phase]').length")
        .unwrap();
    assert_eq!(
        num(&rows) as usize,
        exe.computes.len() + exe.exchanges.len()
    );
    for view in ["programs", "liveness"] {
        click_element(&mut b, &format!("button[data-view={view}]"));
    }
    no_errors(&b, "without a profile");
}

/// Streaming Memory in the page: the memory view's chips and buffers, remote copies and
/// overlapped I/O in the program tree, transfer phases, spans and cycles in the execution view.
#[test]
fn streaming_memory_and_transfers_are_shown() {
    let (exe, profile) = common::streaming();
    let data = ReportData::from_executable(&exe, "streaming")
        .with_profile(&profile)
        .expect("the profile is of this executable");
    let page = artefacts().join("streaming.html");
    let _ = std::fs::remove_file(&page);
    poplar_viewer::write(&page, &data, false).expect("write the report");
    let mut b = start_browser(1400, 1000);
    b.open_report(&page).expect("the report renders");
    no_errors(&b, "after loading");

    let summary = b
        .eval(
            "(() => { const s = document.getElementById('streaming-summary'); \
             return [s.dataset.buffers, s.dataset.bytes, \
             Array.from(document.querySelectorAll('#streaming-chips tr[data-chip]')).map(r => [Number(r.dataset.chip), Number(r.dataset.bytes)]), \
             Array.from(document.querySelectorAll('#streaming-buffers tr[data-buffer]')).map(r => [r.dataset.buffer, Number(r.dataset.bytes)])]; })()",
        )
        .unwrap();
    assert_eq!(num(&summary[0]), 2, "{summary}");
    assert_eq!(num(&summary[1]), 271, "{summary}");
    assert_eq!(summary[2], serde_json::json!([[0, 271]]));
    assert_eq!(
        summary[3],
        serde_json::json!([["store", 256], ["tags", 15]])
    );
    shots_of(&mut b, "streaming-memory.png");

    click_element(&mut b, "button[data-view=programs]");
    assert!(wait_for(
        &mut b,
        "document.documentElement.dataset.view === 'programs'"
    ));
    for caption in ["overlapped I/O", "I/O tiles", "compute, beside it"] {
        let found = wait_for(
            &mut b,
            &format!(
                "(() => {{ const s = Array.from(document.querySelectorAll('#program-tree summary')) \
                 .find(s => s.textContent.startsWith({caption:?}) && !s.parentElement.open); \
                 if (!s) return false; s.id = 'to-click'; return true; }})()"
            ),
        );
        assert!(found, "'{caption}' is in the tree");
        click_element(&mut b, "#to-click");
        b.eval("document.getElementById('to-click').removeAttribute('id')")
            .unwrap();
    }
    assert!(wait_for(
        &mut b,
        "document.getElementById('program-tree').textContent.includes('remote write tiles → store')"
    ));
    let tree = b
        .eval("document.getElementById('program-tree').textContent")
        .unwrap();
    let tree = tree.as_str().unwrap();
    for want in [
        "remote write tiles → store 1 row at device offsets, 32 B",
        "remote read store → tiles rows 0–1, 64 B",
        "overlapped I/O: 1 step on the I/O tiles beside 1 step on the others",
        "compute, beside it: sequence (1)",
    ] {
        assert!(
            tree.contains(want),
            "the program tree shows '{want}': {tree}"
        );
    }
    no_errors(&b, "in the program tree");
    shots_of(&mut b, "streaming-programs.png");

    click_element(&mut b, "button[data-view=liveness]");
    let steps = b
        .eval("document.getElementById('live-chart').dataset.steps")
        .unwrap();
    assert_eq!(num(&steps), program_steps(&exe), "liveness steps");

    click_element(&mut b, "button[data-view=execution]");
    assert!(wait_for(
        &mut b,
        "document.documentElement.dataset.view === 'execution'"
    ));
    let got = b
        .eval(
            "(() => { const s = document.getElementById('exec-summary'); \
             return [s.dataset.cycles, s.dataset.transfer, s.dataset.transferOverlapped, \
             document.querySelectorAll('#phase-table tr[data-kind=transfer]').length, \
             Array.from(document.querySelectorAll('#timeline-legend span')).map(s => s.textContent)]; })()",
        )
        .unwrap();
    assert_eq!(num(&got[0]), profile.total_cycles());
    assert_eq!(num(&got[1]), profile.elapsed.transfer);
    assert_eq!(num(&got[2]), profile.elapsed.transfer_overlapped);
    assert!(profile.elapsed.transfer > 0 && profile.elapsed.transfer_overlapped > 0);
    let transfer_phases = profile
        .phases
        .iter()
        .filter(|p| p.kind == poplar::profile::PhaseKind::Transfer)
        .count();
    assert_eq!(num(&got[3]) as usize, transfer_phases);
    assert!(transfer_phases >= 2);
    assert_eq!(
        got[4],
        serde_json::json!(["compute", "exchange", "sync", "label", "transfer"])
    );
    no_errors(&b, "in the execution view");
    shots_of(&mut b, "streaming-execution.png");
}

fn shots_of(b: &mut Browser, name: &str) {
    println!("screenshot: {}", screenshot(b, name).display());
}

/// `sign` × the delivered bytes of each (source range, destination range) over the run, from
/// the embedded ranges and the profile's executions.
fn range_cells(r: &ReportData, sign: i64) -> Vec<((u64, u64), i64)> {
    let p = r.profile.as_ref().expect("a profile");
    let mut out = Vec::new();
    for ph in p.phases.iter().filter(|ph| ph.kind == "exchange") {
        for t in r.exchanges[ph.index as usize].matrix.chunks_exact(3) {
            out.push(((t[0], t[1]), sign * (t[2] * ph.executions) as i64));
        }
    }
    out
}

/// Polls `expr` through a reload (evaluations fail while the page navigates).
fn wait_through_reload(b: &mut Browser, expr: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if b.eval(expr).ok() == Some(Value::Bool(true)) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// `poplar report A PA --compare B PB`: the page opens on the Compare view, whose differences
/// are those computed here from each run's `MemoryReport` and `Profile`; a click on "B" shows
/// B's report in the same views.
#[test]
fn the_compare_page_shows_the_differences_and_switches_between_the_runs() {
    let (ea, pa) = common::sample();
    let (eb, pb) = common::sample_with(90);
    let report = |e: &poplar::Executable, p: &poplar::profile::Profile, title: &str| {
        ReportData::from_executable(e, title)
            .with_profile(p)
            .expect("the profile is of this executable")
    };
    let data = poplar_viewer::CompareData::new(
        report(&ea, &pa, "y in 220s"),
        report(&eb, &pb, "y in 90s"),
        20,
    )
    .expect("both have a profile");
    let page = artefacts().join("compare.html");
    let _ = std::fs::remove_file(&page);
    poplar_viewer::write_compare_checked(&page, &data, false, &[]).expect("write the page");

    let mut b = start_browser(1400, 1000);
    b.open_report(&page).expect("the page renders");
    no_errors(&b, "after loading the compare page");
    assert_eq!(
        b.eval("document.documentElement.dataset.view").unwrap(),
        Value::String("compare".into())
    );
    let (ma, mb) = (
        MemoryReport::from_executable(&ea),
        MemoryReport::from_executable(&eb),
    );
    let sum = |m: &MemoryReport| m.tiles.iter().map(|t| t.total).sum::<u64>();
    let total = b
        .eval("document.querySelector('#cmp-memory tr[data-what=total]').dataset.diff")
        .unwrap();
    assert_eq!(
        total,
        Value::String((sum(&mb) as i64 - sum(&ma) as i64).to_string()),
        "B − A of the total bytes"
    );
    let changed = ma
        .tiles
        .iter()
        .zip(&mb.tiles)
        .filter(|(x, y)| x.total != y.total)
        .count();
    assert!(changed > 0, "the partitionings differ in memory");
    let strip = b
        .eval("document.getElementById('cmp-strip').dataset.changed")
        .unwrap();
    assert_eq!(num(&strip), changed as u64, "tiles changed on the strip");
    // One row per phase of A that B has too (the same program, partitioned otherwise).
    let matched = pa
        .phases
        .iter()
        .filter(|p| {
            pb.phases
                .iter()
                .any(|q| q.kind == p.kind && q.name == p.name)
        })
        .count();
    let rows = b
        .eval("document.querySelectorAll('#cmp-phases tr[data-phase]').length")
        .unwrap();
    assert_eq!(num(&rows) as usize, matched, "matched phases");
    let d01 = b
        .eval("document.querySelectorAll('#cmp-chips-diff tr')[1].querySelectorAll('td')[1].dataset.bytes")
        .unwrap();
    let want = chip0_to_chip1(&eb, &pb) as i64 - chip0_to_chip1(&ea, &pa) as i64;
    assert_eq!(
        d01,
        Value::String(want.to_string()),
        "chip 0 → chip 1, B − A"
    );
    // The tile-range cells that differ, from the embedded ranges × the profiles' executions.
    let cells = b
        .eval("document.getElementById('cmp-range').dataset.cells")
        .unwrap();
    let mut diff = std::collections::BTreeMap::<(u64, u64), i64>::new();
    for (k, v) in range_cells(&data.a, -1)
        .into_iter()
        .chain(range_cells(&data.b, 1))
    {
        *diff.entry(k).or_default() += v;
    }
    let want_cells = diff.values().filter(|&&v| v != 0).count();
    assert!(want_cells > 0, "the partitionings differ in exchange");
    assert_eq!(
        num(&cells) as usize,
        want_cells,
        "tile-range cells that differ"
    );
    no_errors(&b, "in the compare view");
    let shot = screenshot(&mut b, "compare.png");

    // B's report, in the same page: its tiles and fullest tile.
    click_element(&mut b, "#sides button[data-side=b]");
    assert!(
        wait_through_reload(
            &mut b,
            "document.documentElement.dataset.rendered === '1' && window.poplarReport.side === 'b'"
        ),
        "B is shown after the click"
    );
    assert_eq!(
        b.eval("document.documentElement.dataset.view").unwrap(),
        Value::String("compare".into()),
        "the view is kept"
    );
    click_element(&mut b, "button[data-view=memory]");
    assert!(wait_for(
        &mut b,
        "document.documentElement.dataset.view === 'memory'"
    ));
    let first = b
        .eval("document.querySelector('#fullest tr[data-tile]').dataset.tile")
        .unwrap();
    assert_eq!(
        num(&first),
        u64::from(mb.fullest(1)[0].tile),
        "B's fullest tile"
    );
    let line = b
        .eval("document.getElementById('target-line').textContent")
        .unwrap();
    assert!(
        line.as_str().unwrap().starts_with("showing B: y in 90s"),
        "{line}"
    );
    no_errors(&b, "after switching to B");
    println!("screenshot: {}", shot.display());
}
