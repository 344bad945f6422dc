//! The report's data against the reports they come from: the memory report
//! (`poplar memory --json`), the cycle model and the profile (`poplar profile --json`), and
//! the liveness against the compiler's temporaries peak.

mod common;

use poplar::profile::{CycleModel, MemoryReport};
use poplar_viewer::data::Node;
use poplar_viewer::{ReportData, ReportError};

/// The JSON embedded in a report page.
fn embedded(html: &str) -> ReportData {
    poplar_viewer::embedded(html).expect("the page holds report data")
}

#[test]
fn memory_columns_equal_the_memory_report() {
    let (exe, profile) = common::sample();
    let m = MemoryReport::from_executable(&exe);
    let d = embedded(&poplar_viewer::html(
        &ReportData::from_executable(&exe, "t")
            .with_profile(&profile)
            .unwrap(),
    ));
    let mm = &d.memory;
    assert_eq!(mm.total.len(), m.tiles.len());
    for (t, tm) in m.tiles.iter().enumerate() {
        assert_eq!(mm.total[t], tm.total, "tile {t}");
        assert_eq!(mm.always_live[t], tm.always_live, "tile {t}");
        assert_eq!(mm.temporary[t], tm.temporary, "tile {t}");
        for (c, (name, b)) in tm.by_category.entries().iter().enumerate() {
            assert_eq!(mm.categories[c], *name);
            assert_eq!(mm.by_category[c][t], *b, "tile {t} {name}");
        }
        // The items of a tile add up to its categories.
        let mut per_cat = vec![0u64; mm.categories.len()];
        for pair in mm.tile_items[t].chunks(2) {
            per_cat[mm.item_categories[pair[0] as usize] as usize] += pair[1];
        }
        let want: Vec<u64> = tm.by_category.entries().iter().map(|e| e.1).collect();
        assert_eq!(per_cat, want, "items of tile {t}");
    }
    assert_eq!(mm.total_stats, m.total);
    assert_eq!(mm.always_live_stats, m.always_live);
    assert_eq!(mm.temporary_stats, m.temporary);
    // Items: the same names in the same order with the same totals.
    let mut totals = vec![0u64; mm.item_names.len()];
    for list in &mm.tile_items {
        for pair in list.chunks(2) {
            totals[pair[0] as usize] += pair[1];
        }
    }
    let got: Vec<(&str, u64)> = mm
        .item_names
        .iter()
        .map(|s| s.as_str())
        .zip(totals)
        .collect();
    let want: Vec<(&str, u64)> = m.items.iter().map(|i| (i.name.as_str(), i.total)).collect();
    assert_eq!(got, want);
}

#[test]
fn phases_equal_the_cycle_model_and_the_profile() {
    let (exe, profile) = common::sample();
    let model = CycleModel::new(&exe);
    let d = ReportData::from_executable(&exe, "t")
        .with_profile(&profile)
        .unwrap();
    assert_eq!(d.computes.len(), model.computes.len());
    for (c, m) in d.computes.iter().zip(&model.computes) {
        assert_eq!(
            (c.name.as_str(), c.cycles, c.vertices),
            (m.name.as_str(), m.max, m.vertices)
        );
        assert_eq!(c.codelets.iter().map(|p| p[1]).sum::<u64>(), c.vertices);
    }
    for (x, m) in d.exchanges.iter().zip(&model.exchanges) {
        assert_eq!(
            (
                x.name.as_str(),
                x.cycles,
                x.bytes,
                x.inter_chip_bytes,
                x.transfers
            ),
            (
                m.name.as_str(),
                m.max,
                m.bytes,
                m.inter_chip_bytes,
                m.transfers
            )
        );
        // The slowest tile's parts add up to the exchange's cycles.
        let s = &x.slowest;
        assert_eq!(
            s.value_cycles + s.setup_cycles + s.link_wait_cycles + s.latency_cycles,
            x.cycles,
            "{}",
            x.name
        );
        assert_eq!(Some(x.slowest_tile), m.slowest().map(|t| t.tile.as_u32()));
        // Even ports as the model gives them over all the target's tiles; an exchange between
        // chips waits for its links and hops.
        assert_eq!(x.even_ports, m.even_ports(exe.target.num_tiles() as usize));
        assert_eq!(
            x.even_ports.max_link_and_hop_cycles > 0,
            x.inter_chip_bytes > 0,
            "{}",
            x.name
        );
        // The range matrix holds every delivered byte.
        let in_matrix: u64 = x.matrix.chunks(3).map(|e| e[2]).sum();
        assert_eq!(in_matrix, m.bytes_delivered, "{}", x.name);
    }
    let p = d.profile.as_ref().expect("a profile");
    assert_eq!(p.elapsed, profile.elapsed);
    assert_eq!(p.elapsed.total(), profile.total_cycles());
    assert_eq!(p.labels, profile.labels);
    assert_eq!(p.phases.len(), profile.phases.len());
    for (a, b) in p.phases.iter().zip(&profile.phases) {
        let kind = b.kind.name();
        assert_eq!(
            (
                a.kind.as_str(),
                a.index,
                &a.name,
                a.executions,
                a.cycles,
                a.per_execution,
                a.wall_ns
            ),
            (
                kind,
                b.index,
                &b.name,
                b.executions,
                b.cycles,
                b.per_execution,
                b.wall_ns
            )
        );
    }
    assert_eq!(p.tile_compute, profile.tiles.compute);
    assert_eq!(p.timeline.start.len(), profile.timeline.spans.len());
}

#[test]
fn liveness_stays_within_the_compilers_temporaries_peak_and_reaches_it() {
    let (exe, _) = common::sample();
    let t = poplar_viewer::liveness::phase_temporaries(&exe);
    let mut peak = vec![0u64; exe.tiles.len()];
    for m in t.computes.iter().chain(&t.exchanges) {
        for (&tile, &b) in m {
            peak[tile as usize] = peak[tile as usize].max(b);
        }
    }
    let mut reached = 0;
    for (tile, img) in exe.tiles.iter().enumerate() {
        let compiler = u64::from(img.temporary_bytes);
        assert!(
            peak[tile] <= compiler,
            "tile {tile}: {} > {compiler}",
            peak[tile]
        );
        if compiler > 0 && peak[tile] == compiler {
            reached += 1;
        }
    }
    let with_temps = exe.tiles.iter().filter(|i| i.temporary_bytes > 0).count();
    assert!(with_temps > 0, "the sample has temporaries");
    assert_eq!(
        reached, with_temps,
        "every tile's peak is a phase's high-water mark"
    );
}

#[test]
fn a_profile_of_another_executable_is_refused() {
    let (exe, profile) = common::sample();
    let mut other = profile.clone();
    other.phases[0].name = "not this one".into();
    let e = ReportData::from_executable(&exe, "t")
        .with_profile(&other)
        .unwrap_err();
    assert!(
        matches!(&e, ReportError::ProfileMismatch { what } if what.contains("not this one")),
        "{e}"
    );
    let mut other = profile;
    other.target.tiles_per_ipu = 8;
    let e = ReportData::from_executable(&exe, "t")
        .with_profile(&other)
        .unwrap_err();
    assert!(e.to_string().contains("2 chips × 8 tiles"), "{e}");
}

#[test]
fn writing_refuses_to_replace_files_unless_asked_and_never_an_input() {
    let (exe, _) = common::sample();
    let d = ReportData::from_executable(&exe, "t");
    let dir = std::env::temp_dir().join(format!("viewer-write-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("r.html");
    std::fs::write(&out, "earlier").unwrap();
    let e = poplar_viewer::write(&out, &d, false).unwrap_err();
    assert!(matches!(e, ReportError::Exists { .. }), "{e}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "earlier");
    poplar_viewer::write(&out, &d, true).unwrap();
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    let input = dir.join("model.exe");
    std::fs::write(&input, "exe").unwrap();
    let e = poplar_viewer::write_checked(&input, &d, true, &[&input]).unwrap_err();
    assert!(matches!(e, ReportError::OutputIsInput { .. }), "{e}");
    assert_eq!(std::fs::read_to_string(&input).unwrap(), "exe");
    // The input under another name (a hard link): the same file, refused.
    #[cfg(unix)]
    {
        let link = dir.join("link.html");
        std::fs::hard_link(&input, &link).unwrap();
        let e = poplar_viewer::write_checked(&link, &d, true, &[&input]).unwrap_err();
        assert!(matches!(e, ReportError::OutputIsInput { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "exe");
        std::fs::remove_file(&link).unwrap();
    }
    // A folder that does not exist: an I/O error naming the file, nothing left behind.
    let e = poplar_viewer::write(&dir.join("missing/r.html"), &d, false).unwrap_err();
    assert!(e.to_string().contains("missing/r.html"), "{e}");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), 2, "only r.html and model.exe");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn names_cannot_close_the_data_element() {
    let (exe, _) = common::sample();
    let mut d = ReportData::from_executable(&exe, "</script><script>x()</script>");
    d.computes[0].name = "</SCRIPT>".into();
    let html = poplar_viewer::html(&d);
    let back = embedded(&html);
    assert_eq!(back, d, "the data survive the page");
    assert_eq!(
        html.matches("</script>").count(),
        2,
        "only the page's own two scripts close"
    );
}

/// A replicated executable (one replica stored) is reported over every replica's tiles, as
/// the engine runs it, with a profile of the run.
#[test]
fn a_replicated_executable_is_reported_over_all_replicas() {
    use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
    codelets::link();
    let machine = Target {
        num_ipus: 4,
        ..Target::custom(3, 64 * 1024)
    };
    let mut g = Graph::new_replicated(&machine, 4, 1).unwrap();
    let a = g.add_variable(DType::F32, &[8], "a");
    let b = g.add_variable(DType::F32, &[8], "b");
    g.set_tile_mapping(&a, 0).unwrap();
    g.set_tile_mapping(&b, 2).unwrap();
    let map: Vec<(u32, u32)> = (0..4).map(|r| (r, (r + 1) % 4)).collect();
    let exe = compile(
        &g,
        &[Program::cross_replica_copy(&a, &b, &map)],
        &CompileOptions::default(),
    )
    .unwrap();
    assert_eq!(exe.tiles.len(), 3);
    let mut e = Engine::new(&exe, EngineOptions::with_threads(1)).unwrap();
    e.enable_profiling(poplar::profile::ProfileOptions::default());
    e.run(0).unwrap();
    let d = ReportData::from_executable(&exe, "replicated")
        .with_profile(e.profile().unwrap())
        .unwrap();
    assert_eq!(d.target.tiles, 12);
    assert_eq!(d.memory.total.len(), 12);
    // Every replica holds the same image.
    assert_eq!(d.memory.total[0..3], d.memory.total[9..12]);
}

/// Every node of a tree, depth first.
fn all_nodes<'a>(n: &'a Node, out: &mut Vec<&'a Node>) {
    out.push(n);
    let kids: Vec<&Node> = match n {
        Node::Seq { c } | Node::Label { c, .. } | Node::Repeat { c, .. } => c.iter().collect(),
        Node::While { cond, c } => cond.iter().chain(c).collect(),
        Node::If { then, else_ } => then.iter().chain(else_).collect(),
        Node::Switch { cases, default } => cases.iter().map(|(_, x)| x).chain(default).collect(),
        Node::OverlapIo { io, compute } => io.iter().chain(compute).collect(),
        _ => Vec::new(),
    };
    for k in kids {
        all_nodes(k, out);
    }
}

/// Streaming Memory, remote copies, overlapped I/O and transfer phases, as the page gets them.
#[test]
fn streaming_memory_remote_copies_and_transfers_are_reported() {
    let (exe, profile) = common::streaming();
    let m = MemoryReport::from_executable(&exe);
    let d = embedded(&poplar_viewer::html(
        &ReportData::from_executable(&exe, "streaming")
            .with_profile(&profile)
            .unwrap(),
    ));
    assert_eq!(d.version, 2);
    // Memory: per chip and per buffer, as `poplar memory --json`.
    let s = &d.memory.streaming;
    assert_eq!(s, &m.streaming);
    assert_eq!(s.bytes_per_chip, exe.target.streaming_memory_bytes);
    let buffers: Vec<(&str, u64, u64, u64, u32)> = s
        .buffers
        .iter()
        .map(|b| (b.name.as_str(), b.rows, b.elements, b.bytes, b.chip))
        .collect();
    assert_eq!(
        buffers,
        vec![("store", 8, 8, 256, 0), ("tags", 3, 5, 15, 0)]
    );
    assert_eq!(s.chips.len(), 1);
    assert_eq!((s.chips[0].bytes, s.chips[0].buffers), (271, 2));

    // The program tree: the write at a device offset inside the overlapped I/O, beside the
    // compute; then the read of rows 0–1.
    let mut nodes = Vec::new();
    all_nodes(&d.programs[0], &mut nodes);
    let remotes: Vec<&Node> = nodes
        .iter()
        .copied()
        .filter(|n| matches!(n, Node::Remote { .. }))
        .collect();
    assert_eq!(remotes.len(), 2, "{:#?}", d.programs[0]);
    let model = CycleModel::new(&exe);
    let write_cycles = model.transfers[0].cycles;
    assert!(write_cycles > 0);
    assert_eq!(
        remotes[0],
        &Node::Remote {
            buffer: 0,
            dir: "write".into(),
            rows: 1,
            first: None,
            bytes: 32,
            cycles: write_cycles,
        }
    );
    match remotes[1] {
        Node::Remote {
            buffer: 0,
            dir,
            rows: 2,
            first: Some(0),
            bytes: 64,
            ..
        } => assert_eq!(dir, "read"),
        other => panic!("{other:?}"),
    }
    let overlap = nodes
        .iter()
        .find_map(|n| match n {
            Node::OverlapIo { io, compute } => Some((io, compute)),
            _ => None,
        })
        .expect("an overlap_io node");
    let mut io = Vec::new();
    overlap.0.iter().for_each(|n| all_nodes(n, &mut io));
    let mut compute = Vec::new();
    overlap.1.iter().for_each(|n| all_nodes(n, &mut compute));
    assert!(io.iter().any(|n| *n == remotes[0]), "{:#?}", overlap.0);
    assert!(
        !io.iter().any(|n| matches!(n, Node::Compute { .. })),
        "{:#?}",
        overlap.0
    );
    assert!(
        compute
            .iter()
            .any(|n| matches!(n, Node::Label { name, .. } if name == "double")),
        "{:#?}",
        overlap.1
    );
    assert!(
        compute.iter().any(|n| matches!(n, Node::Compute { .. })),
        "{:#?}",
        overlap.1
    );

    // The profile: transfer phases, cycles waited for and overlapped, per-tile transfer
    // cycles on the I/O tiles only, transfer spans (kind 4).
    let p = d.profile.as_ref().expect("a profile");
    assert_eq!(p.elapsed, profile.elapsed);
    assert!(p.elapsed.transfer > 0, "{:?}", p.elapsed);
    assert!(p.elapsed.transfer_overlapped > 0, "{:?}", p.elapsed);
    let transfers: Vec<(&str, u64, u64)> = p
        .phases
        .iter()
        .filter(|ph| ph.kind == "transfer")
        .map(|ph| (ph.name.as_str(), ph.executions, ph.bytes))
        .collect();
    let want: Vec<(&str, u64, u64)> = profile
        .phases
        .iter()
        .filter(|ph| ph.kind == poplar::profile::PhaseKind::Transfer)
        .map(|ph| (ph.name.as_str(), ph.executions, ph.bytes))
        .collect();
    assert_eq!(transfers, want);
    assert!(
        transfers.iter().any(|t| t.2 == 32) && transfers.iter().any(|t| t.2 == 64),
        "{transfers:?}"
    );
    assert_eq!(p.tile_transfer, profile.tiles.transfer);
    for (t, &c) in p.tile_transfer.iter().enumerate() {
        assert_eq!(c > 0, t >= 6, "tile {t}: {c} transfer cycles");
    }
    assert!(p.timeline.kind.contains(&4), "{:?}", p.timeline.kind);
    assert_eq!(p.labels, profile.labels);
    assert!(
        p.labels.iter().any(|l| l.transfer.max > 0),
        "{:?}",
        p.labels
    );
}

/// Data of version 1 (no Streaming Memory, no per-tile transfers) still read, with none.
#[test]
fn version_1_data_still_read() {
    let (exe, profile) = common::sample();
    let d = ReportData::from_executable(&exe, "t")
        .with_profile(&profile)
        .unwrap();
    let mut v = serde_json::to_value(&d).unwrap();
    v["version"] = 1.into();
    v["memory"].as_object_mut().unwrap().remove("streaming");
    v["profile"]
        .as_object_mut()
        .unwrap()
        .remove("tile_transfer");
    let back: ReportData = serde_json::from_value(v).unwrap();
    assert_eq!(back.memory.streaming, Default::default());
    assert!(back.profile.unwrap().tile_transfer.is_empty());
    // A profile of version 1 (no transfers): zeros per tile.
    let mut old = profile.clone();
    old.tiles.transfer.clear();
    let d = ReportData::from_executable(&exe, "t")
        .with_profile(&old)
        .unwrap();
    assert_eq!(d.profile.unwrap().tile_transfer, vec![0; exe.tiles.len()]);
}

/// Data written by 0.4.0 (version 2, exchanges without their slowest tile and even ports) still
/// read, with zeros for them.
#[test]
fn exchanges_without_their_slowest_tile_still_read() {
    let (exe, _) = common::sample();
    let d = ReportData::from_executable(&exe, "t");
    assert!(d.exchanges.iter().any(|x| x.slowest.value_cycles > 0));
    let mut v = serde_json::to_value(&d).unwrap();
    for x in v["exchanges"].as_array_mut().unwrap() {
        x.as_object_mut().unwrap().remove("slowest");
        x.as_object_mut().unwrap().remove("slowest_tile");
        x.as_object_mut().unwrap().remove("even_ports");
    }
    let back: ReportData = serde_json::from_value(v).unwrap();
    assert!(back
        .exchanges
        .iter()
        .all(|x| x.slowest == Default::default() && x.even_ports == Default::default()));
    assert_eq!(back.exchanges.len(), d.exchanges.len());
}
