//! Nothing hangs, nothing panics, nothing is silently substituted (issue 31): each input that
//! used to hang `cardiac`, make it panic or abort, or quietly run something other than what was
//! asked, is refused by a clear error naming the option (or warned about), within seconds.

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

use cardiac::app::problem::{self, ProblemSpec};
use cardiac::app::protocol;
use cardiac::cell::{self, Protocol};
use cardiac::mesh::{CellType, TetMesh};
use support::refused_within;

/// Counts the bytes each thread has allocated and not freed, and their peak, so that a test
/// can measure what one computation holds at once (tests run side by side in threads).
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = LIVE.try_with(|l| {
        let now = l.get() + delta;
        l.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// `f()` and the most bytes this thread held at once while it ran, beyond what it held before.
fn peak_bytes<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let r = f();
    (r, (PEAK.with(Cell::get) - before).max(0) as usize)
}

/// `cardiac run` on the 1 mm slab, 4 tiles, 0.1 ms, no report or profile, into `out`; an
/// option of `extra` replaces its default here.
fn small_run<'a>(out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "run",
        "--dx",
        "1",
        "--tiles",
        "4",
        "--t-end",
        "0.1",
        "--no-report",
        "--no-profile",
        "--out",
        out,
    ];
    for opt in ["--dx", "--tiles", "--t-end"] {
        if extra.contains(&opt) {
            let i = a.iter().position(|x| *x == opt).unwrap();
            a.drain(i..i + 2);
        }
    }
    a.extend_from_slice(extra);
    a
}

/// A tetrahedron of four coplanar nodes, element tag 7 on line 19.
const FLAT_TET_MSH: &str = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n$EndNodes\n$Elements\n1 1 7 7\n3 1 4 1\n7 1 2 3 4\n$EndElements\n";

#[test]
fn no_cause_repeats_the_message_above_it() {
    let d = support::tmp();
    let msh = d.join("flat.msh");
    std::fs::write(&msh, FLAT_TET_MSH).unwrap();
    let out = d.join("o").display().to_string();
    let err = refused_within(
        &["run", "--mesh", &msh.display().to_string(), "--out", &out],
        10,
        &["flat.msh", "degenerate"],
    );
    let lines: Vec<&str> = err.lines().collect();
    for w in lines.windows(2) {
        if let Some(cause) = w[1].trim_start().strip_prefix("caused by: ") {
            assert!(!w[0].contains(cause), "a repeated cause:\n{err}");
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_degenerate_gmsh_element_is_named_by_its_tag_and_line() {
    let d = support::tmp();
    let msh = d.join("flat.msh");
    std::fs::write(&msh, FLAT_TET_MSH).unwrap();
    let out = d.join("o").display().to_string();
    refused_within(
        &["run", "--mesh", &msh.display().to_string(), "--out", &out],
        10,
        &["flat.msh", "line 19: element 7: degenerate tetrahedron"],
    );
    // The reader itself, validating, says the same; the cause is still the cell's.
    let e = cardiac::mesh::read_msh(&msh, &Default::default()).unwrap_err();
    assert!(
        e.to_string().contains("line 19: element 7: degenerate"),
        "{e}"
    );
    assert!(
        matches!(
            e.innermost(),
            cardiac::mesh::MeshError::DegenerateTet { cell: 0, .. }
        ),
        "{e:?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn diffusion_substeps_past_the_bound_are_refused_naming_the_tissue_parameters() {
    let d = support::tmp();
    let out = d.join("o").display().to_string();
    // 10^30 S/m, 10^-30 µF/mm², 10^-30 /mm made p saturate at u64::MAX; 10^6 S/m meant days.
    for (opt, v) in [
        ("--sigma-l", "1e30"),
        ("--cm", "1e-30"),
        ("--chi", "1e-30"),
        ("--sigma-l", "1e6"),
    ] {
        refused_within(
            &small_run(&out, &[opt, v]),
            10,
            &[
                &format!("{opt} {v}"),
                "diffusion substeps",
                "stable only up to",
            ],
        );
    }
    // The same from a parameter file.
    let params = d.join("p.json");
    std::fs::write(
        &params,
        r#"{"problem": {"dx": 1, "tiles": 4, "sigma_l": 1e30}}"#,
    )
    .unwrap();
    refused_within(
        &small_run(&out, &["--params", &params.display().to_string()]),
        10,
        &["--sigma-l 1e30", "diffusion substeps"],
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_setup_refuses_a_saturated_substep_count() {
    use cardiac::matrix::Conductivity;
    use cardiac::solver::{Setup, SetupError, Stimulus, MAX_PDE_STEPS};
    let mesh = cardiac::mesh::TetMesh::slab(20.0, 7.0, 3.0, 1.0);
    let stim = Stimulus::niederer(&mesh);
    for sigma_l in [1e30, f64::MAX] {
        let cond = Conductivity {
            sigma_l,
            ..Conductivity::niederer()
        };
        match Setup::new(&mesh, &cond, 0.02, &stim) {
            Err(SetupError::TooManySubsteps { max, .. }) => assert_eq!(max, MAX_PDE_STEPS),
            other => panic!("σ_l {sigma_l}: {:?}", other.map(|s| s.pde_steps)),
        }
    }
    let ok = Setup::new(&mesh, &Conductivity::niederer(), 0.02, &stim).unwrap();
    assert_eq!(ok.pde_steps, 1);
}

#[test]
fn sampling_intervals_below_the_time_step_are_refused() {
    let d = support::tmp();
    let out = d.join("o").display().to_string();
    // 10^-12 ms looped for ever in the snapshot schedule.
    refused_within(
        &small_run(&out, &["--snapshot-every", "1e-12"]),
        10,
        &["--snapshot-every 1e-12 ms is shorter than the time step (0.02 ms)"],
    );
    refused_within(
        &small_run(&out, &["--trace-every", "0.001", "--trace-point", "1,1,1"]),
        10,
        &["--trace-every 0.001 ms is shorter than the time step"],
    );
    // Not a whole number of steps: it sampled every 0.04 ms and recorded 0.03.
    refused_within(
        &small_run(&out, &["--trace-every", "0.03", "--trace-point", "1,1,1"]),
        10,
        &["--trace-every 0.03 ms is not a whole number of time steps of 0.02 ms, so the device cannot sample at it: give 0.02 or 0.04 ms"],
    );
    let exe = d.join("x.popexe").display().to_string();
    let o = support::cardiac(&["compile", "--dx", "1", "--tiles", "4", "-o", &exe]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    refused_within(
        &[
            "exec",
            &exe,
            "--t-end",
            "0.1",
            "--snapshot-every",
            "1e-12",
            "--out",
            &out,
        ],
        10,
        &["--snapshot-every 1e-12 ms is shorter than the time step (0.02 ms)"],
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_slab_past_the_index_range_is_an_error_not_a_panic() {
    let d = support::tmp();
    let out = d.join("o").display().to_string();
    refused_within(
        &small_run(&out, &["--dx", "0.002"]),
        10,
        &["--dx 0.002", "cells", "GiB"],
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_slab_past_the_memory_bound_is_refused_before_allocating() {
    // 0.01 mm: 2.5·10^9 cells, terabytes; refused from the count before any allocation.
    let (r, peak) = peak_bytes(|| problem::load_mesh(&ProblemSpec::slab(0.01)));
    let e = format!("{:#}", r.unwrap_err());
    assert!(e.contains("--dx 0.01") && e.contains("GiB"), "{e}");
    assert!(peak < 1 << 20, "{peak} bytes allocated before refusing");
    assert!(TetMesh::try_slab(20.0, 7.0, 3.0, 0.002).is_err());
    assert!(TetMesh::try_slab(20.0, 7.0, 3.0, f64::NAN).is_err());
    assert_eq!(
        TetMesh::try_slab(20.0, 7.0, 3.0, 1.0).unwrap(),
        TetMesh::slab(20.0, 7.0, 3.0, 1.0)
    );
}

#[test]
fn runs_past_the_clock_or_the_work_bound_are_refused_with_the_estimate() {
    let d = support::tmp();
    let out = d.join("o").display().to_string();
    // 3·10^9 steps of 2,520 cells (days), and 5·10^10 steps: beyond the f32 clock, even
    // with --force.
    refused_within(
        &small_run(&out, &["--dt-ode", "1e-7", "--t-end", "300"]),
        10,
        &["--t-end 300 ms at --dt-ode 1e-7 ms", "6,000,000 steps"],
    );
    refused_within(
        &small_run(&out, &["--t-end", "1e9", "--force"]),
        10,
        &["--t-end 1e9 ms", "f32 clock"],
    );
    // 315,000 cells × 4·10^6 steps: past the work bound, with the estimate.
    refused_within(
        &small_run(
            &out,
            &["--dx", "0.2", "--dt-ode", "0.0005", "--t-end", "2000"],
        ),
        30,
        &[
            "4,000,000 ODE steps of 315,000 cells",
            "cell-steps",
            "hours",
            "--force",
        ],
    );
    // Pulses no run reaches: the run's length would follow them.
    refused_within(
        &small_run(&out, &["--stim-site", "corner;start=1e308"]),
        10,
        &["--stim-site 1: start 1e308 ms puts a pulse past the longest run"],
    );
    refused_within(
        &small_run(&out, &["--beats", "2", "--bcl", "1e308"]),
        10,
        &["--bcl 1e308 ms puts a pulse past the longest run"],
    );
    let exe = d.join("x.popexe").display().to_string();
    let o = support::cardiac(&["compile", "--dx", "1", "--tiles", "4", "-o", &exe]);
    assert!(o.status.success(), "{}", support::stderr(&o));
    refused_within(
        &["exec", &exe, "--t-end", "1e9"],
        10,
        &["--t-end 1e9 ms at the executable's dt_ode 0.02 ms"],
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_work_bound_yields_to_force() {
    use cardiac::app::run::{check_work, MAX_WORK};
    let w = check_work(
        "--t-end 2000 ms",
        2000.0,
        "--dt-ode 0.0005 ms",
        0.0005,
        315_000,
        1,
        true,
    )
    .unwrap();
    assert_eq!(w.steps, 4e6);
    assert!(w.cell_steps > MAX_WORK);
    assert!(check_work(
        "--t-end 2000 ms",
        2000.0,
        "--dt-ode 0.0005 ms",
        0.0005,
        315_000,
        1,
        false
    )
    .is_err());
    // Beyond the clock, --force or not.
    assert!(check_work("--t-end", 1e6, "--dt-ode", 0.02, 4, 1, true).is_err());
}

#[test]
fn threads_beyond_the_cores_are_capped_with_a_message_and_zero_is_refused() {
    let d = support::tmp();
    let out = d.join("o").display().to_string();
    let o = support::cardiac_within(
        &small_run(&out, &["--threads", "1000"]),
        std::time::Duration::from_secs(30),
    )
    .expect("--threads 1000 finishes");
    let err = support::stderr(&o);
    assert!(o.status.success(), "{err}");
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    assert!(
        err.contains(&format!(
            "warning: --threads 1000 is more than the {cores} cores of this host"
        )),
        "no word about 1000 threads:\n{err}"
    );
    refused_within(
        &small_run(&out, &["--threads", "0", "--force"]),
        10,
        &["--threads 0"],
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_s1_s2_sweep_holds_only_the_windows_it_measures() {
    // 301 cells for 1,110 ms at 0.02 ms: 67 MB as whole traces. Each S2 beat's window is
    // 400 ms (80 kB), at most 200 open at once.
    let p = Protocol {
        beats: 1,
        bcl: 400.0,
        ..Protocol::reference(CellType::Epi)
    };
    let s2: Vec<f64> = (0..=300).map(|k| 100.0 + 2.0 * k as f64).collect();
    let (r, peak) = peak_bytes(|| cell::restitution(&p, &s2));
    let (_, curve) = r.unwrap();
    assert_eq!(curve.len(), 301);
    assert!(curve.last().unwrap().features.is_some());
    assert!(peak < 25 << 20, "the sweep held {} MB", peak >> 20);
}

#[test]
fn a_paced_cell_holds_one_beat_and_the_sampled_trace() {
    // 3.02·10^6 steps of 0.5 µs: 12 MB as a whole trace; a beat is 10^6 steps (4 MB).
    let p = Protocol {
        beats: 3,
        bcl: 500.0,
        dt: 0.0005,
        ..Protocol::reference(CellType::Epi)
    };
    let (r, peak) = peak_bytes(|| cell::pace(&p));
    let run = r.unwrap();
    assert!(run.beats.iter().all(|b| b.is_some()), "{:?}", run.beats);
    assert!(peak < 6 << 20, "pacing held {} MB", peak >> 20);
}

#[test]
fn cell_protocols_past_the_bounds_are_refused_by_option() {
    let d = support::tmp();
    let out = d.join("c").display().to_string();
    // A BCL or start of 10^308 ms: a step count beyond usize (a panic) or for ever; 10^-9 ms
    // steps: 80 GB at once (an abort), as whole traces.
    for (args, want) in [
        (
            vec!["--beats", "1", "--bcl", "1e308"],
            "--bcl 1e308 ms, --s2, and a --bcl after the last pulse), past the longest cell run",
        ),
        (
            vec!["--stim-start", "1e308"],
            "(--stim-start 1e308 ms, --beats 5 × --bcl 1000 ms",
        ),
        (
            vec!["--dt", "1e-9"],
            "every step of --dt 1e-9 ms for a --bcl of 1000 ms",
        ),
        (
            vec!["--beats", "300", "--s2", "250:1000:1"],
            "the protocol is 1.132e10 cell-steps",
        ),
    ] {
        let a = [&["cell"][..], &args, &["--out", &out]].concat();
        refused_within(&a, 10, &[want]);
    }
    // The documented limit of 10,000 intervals, one restitution at 1 ms: bounded memory, and
    // work within the bound (not run here: about 4 minutes).
    let p = Protocol::reference(CellType::Epi);
    let s2: Vec<f64> = (0..=9750).map(|k| 250.0 + k as f64).collect();
    let cell_steps = p.check_size(Some(&s2), false).unwrap();
    assert!(cell_steps < cell::MAX_CELL_STEPS, "{cell_steps}");
    refused_within(
        &["cell", "--dt", "0.001", "--s2", "250:1000:1", "--out", &out],
        10,
        &["the protocol would hold 2.8 GiB of V at once, past the bound of 1 GiB"],
    );
    // A trace sampled below the time step is refused, not quietly every step.
    refused_within(
        &["cell", "--trace-every", "0.001", "--out", &out],
        10,
        &["--trace-every 0.001 ms is shorter than the time step (--dt 0.02 ms)"],
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn repeated_keys_in_protocol_strings_are_refused_by_name() {
    for (text, key) in [
        ("corner;start=1;start=2", "start"),
        ("corner;beats=2;bcl=500;beats=3", "beats"),
    ] {
        let e = format!("{:#}", protocol::parse_site(text).unwrap_err());
        assert!(e.contains(key) && e.contains("twice"), "{text}: {e}");
    }
    for (text, key) in [
        ("corner;cell-type=endo;cell-type=mid", "cell-type"),
        ("corner;GKr*0.5;GKr*0.7", "GKr"),
        ("corner;GKr*0.5,g_kr=0.7", "g_kr"),
    ] {
        let e = format!("{:#}", protocol::parse_region_spec(text).unwrap_err());
        assert!(e.contains(key) && e.contains("twice"), "{text}: {e}");
    }
    let e = cardiac::tp06::Scalings::ONE
        .parse_onto("GKr*0.5,GCaL*2,gkr=2")
        .unwrap_err();
    assert!(e.contains("gkr") && e.contains("twice"), "{e}");
}

#[test]
fn the_slab_refuses_mesh_options_from_a_parameter_file_as_on_the_command_line() {
    for (spec, opt) in [
        (
            ProblemSpec {
                fibre: Some([1.0, 0.0, 0.0]),
                ..ProblemSpec::slab(1.0)
            },
            "--fibre",
        ),
        (
            ProblemSpec {
                scale: 10.0,
                ..ProblemSpec::slab(1.0)
            },
            "--scale",
        ),
        (
            ProblemSpec {
                cell_type: CellType::Endo,
                ..ProblemSpec::slab(1.0)
            },
            "--cell-type",
        ),
    ] {
        let e = format!("{:#}", problem::load_mesh(&spec).unwrap_err());
        assert!(e.contains(opt) && e.contains("--mesh"), "{e}");
    }
    let d = support::tmp();
    let params = d.join("p.json");
    std::fs::write(&params, r#"{"problem": {"dx": 1, "fibre": [0, 1, 0]}}"#).unwrap();
    let out = d.join("o").display().to_string();
    refused_within(
        &small_run(&out, &["--params", &params.display().to_string()]),
        10,
        &["--fibre"],
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Two hexes of the 1 mm slab whose shared face has its four nodes duplicated: a crack.
fn cracked_mesh(dir: &Path) -> std::path::PathBuf {
    let mut m = TetMesh::slab(2.0, 1.0, 1.0, 1.0);
    let mut copy = std::collections::HashMap::new();
    for t in 6..12 {
        for v in 0..4 {
            let n = m.tets[t][v] as usize;
            if m.nodes[n][0] == 1.0 {
                let c = *copy.entry(n).or_insert_with(|| {
                    m.nodes.push(m.nodes[n]);
                    (m.nodes.len() - 1) as u32
                });
                m.tets[t][v] = c;
            }
        }
    }
    let path = dir.join("cracked.vtu");
    cardiac::mesh::write_vtu(&path, &m, &[]).unwrap();
    path
}

#[test]
fn coincident_nodes_are_warned_about_with_the_count_and_a_pair() {
    let d = support::tmp();
    let spec = ProblemSpec {
        mesh: Some(cracked_mesh(&d)),
        ..ProblemSpec::slab(1.0)
    };
    let (_, warnings) = problem::load_mesh(&spec).unwrap();
    let w = warnings
        .iter()
        .find(|w| w.contains("coincide"))
        .unwrap_or_else(|| panic!("no warning about coincident nodes: {warnings:?}"));
    assert!(w.contains("4 nodes"), "{w}");
    assert!(w.contains("nodes 1 and 12"), "{w}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn coincident_gmsh_nodes_are_named_by_their_tags() {
    let d = support::tmp();
    let mut m = TetMesh::slab(2.0, 1.0, 1.0, 1.0);
    let n = m.nodes.len() as u32;
    m.nodes.push(m.nodes[1]);
    assert_eq!(m.tets[6][0], 1);
    m.tets[6][0] = n;
    let path = d.join("dup.msh");
    cardiac::mesh::write_msh(&path, &m).unwrap();
    let spec = ProblemSpec {
        mesh: Some(path),
        ..ProblemSpec::slab(1.0)
    };
    let (_, warnings) = problem::load_mesh(&spec).unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w
                .contains("1 node lies on another node (e.g. node tags 2 and 13 at (1, 0, 0) mm)")),
        "{warnings:?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A cardiac executable of the 1 mm slab on 4 tiles, compiled into a new temporary folder:
/// `(folder, file, executable)`.
fn compiled_slab() -> (std::path::PathBuf, std::path::PathBuf, poplar::Executable) {
    cardiac::solver::codelets::link();
    let d = support::tmp();
    let path = d.join("x.popexe");
    let spec = ProblemSpec {
        dx: 1.0,
        tiles: Some(4),
        ..ProblemSpec::default()
    };
    cardiac::app::saved::compile(&spec, &path).unwrap();
    let exe = poplar::Executable::load(&path).unwrap();
    (d, path, exe)
}

#[test]
fn an_executable_whose_cell_numbering_is_not_a_permutation_is_refused() {
    use cardiac::app::bundle;
    let (d, path, mut exe) = compiled_slab();
    let mut info: cardiac::solver::device::RunInfo =
        serde_json::from_slice(&exe.app_sections[bundle::SECTION_RUN_INFO]).unwrap();
    assert!(bundle::read(&exe, &path).is_ok());
    // Two device cells mapped to one mesh cell (and one mesh cell to none), every index in
    // range; the file's checksum is recomputed on saving, so it is valid.
    info.new_to_old[1] = info.new_to_old[0];
    exe.app_sections.insert(
        bundle::SECTION_RUN_INFO.into(),
        serde_json::to_vec(&info).unwrap(),
    );
    let bad = d.join("bad.popexe");
    exe.save(&bad).unwrap();
    let loaded = poplar::Executable::load(&bad).unwrap();
    let e = format!("{:#}", bundle::read(&loaded, &bad).err().expect("refused"));
    assert!(e.contains("permutation"), "{e}");
    refused_within(
        &["exec", &bad.display().to_string(), "--t-end", "0.1"],
        10,
        &["is not a permutation of its 2520 cells: mesh cell"],
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn regions_and_sites_are_named_as_given() {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 1.0);
    for (region, bad) in [
        ("box:5,0,0,1,1,1;cell-type=endo", "--stim-box"),
        ("sphere:1,1,1,-1;cell-type=endo", "--stim-sphere"),
    ] {
        let spec = ProblemSpec {
            regions: vec![protocol::parse_region_spec(region).unwrap()],
            ..ProblemSpec::slab(1.0)
        };
        let e = format!("{:#}", problem::setup(&spec, &mesh).unwrap_err());
        assert!(
            e.contains("--region 1") && !e.contains(bad),
            "{region}: {e}"
        );
    }
    let spec = ProblemSpec {
        sites: vec![protocol::parse_site("box:5,0,0,1,1,1").unwrap()],
        ..ProblemSpec::slab(1.0)
    };
    let e = format!("{:#}", problem::setup(&spec, &mesh).unwrap_err());
    assert!(
        e.contains("--stim-site 1") && !e.contains("--stim-box"),
        "{e}"
    );
    let e = format!(
        "{:#}",
        protocol::parse_region("sphere:0,0,0,nan").unwrap_err()
    );
    assert!(!e.contains("got 4") && e.contains("NaN"), "{e}");
}

#[test]
fn the_out_of_memory_hint_follows_tiles() {
    let d = support::tmp();
    let out = d.join("o").display().to_string();
    let err = refused_within(
        &small_run(&out, &["--dx", "0.5", "--tiles", "1"]),
        60,
        &["tile memory"],
    );
    assert!(!err.contains("--chips 2"), "{err}");
    assert!(err.contains("--tiles"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A crafted executable whose chunk program repeats u32::MAX times (4·10⁹ runs of a chunk
/// before the run's first progress check) is refused when it is read, within seconds, naming
/// the program and its step count against what the run info allows.
#[test]
fn an_executable_whose_program_runs_far_longer_than_its_run_info_is_refused() {
    use cardiac::app::bundle;
    let (d, path, mut exe) = compiled_slab();
    assert!(bundle::read(&exe, &path).is_ok());
    let chunk = std::mem::replace(&mut exe.programs[0], poplar::exe::Step::Seq(Vec::new()));
    exe.programs[0] = poplar::exe::Step::Repeat {
        count: u32::MAX,
        body: Box::new(chunk),
    };
    let bad = d.join("long.popexe");
    exe.save(&bad).unwrap();
    let loaded = poplar::Executable::load(&bad).unwrap();
    let e = format!("{:#}", bundle::read(&loaded, &bad).err().expect("refused"));
    assert!(e.contains("program 0") && e.contains("phases"), "{e}");
    refused_within(
        &["exec", &bad.display().to_string(), "--t-end", "0.1"],
        10,
        &["program 0 runs"],
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_unknown_instruction_set_level_in_poplar_isa_is_refused_by_name() {
    let d = support::tmp();
    let out = d.join("o").display().to_string();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_cardiac"))
        .args(small_run(&out, &[]))
        .env("POPLAR_ISA", "avx1024")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run cardiac");
    let err = support::stderr(&o);
    assert!(!o.status.success(), "POPLAR_ISA=avx1024 ran:\n{err}");
    assert!(
        err.contains("POPLAR_ISA") && err.contains("avx1024") && !err.contains("panicked"),
        "the error does not name POPLAR_ISA and its value:\n{err}"
    );
    assert!(!d.join("o").join("results.json").exists(), "no results");
    let _ = std::fs::remove_dir_all(&d);
}
