//! Stimulus protocols and tissue regions: several sites with their own timing, S1–S2 in
//! tissue, cell lists from a file, cell types and TP06 scalings per region, the activation
//! threshold. The device equals the native reference bit for bit with all of them; the
//! physiology they model is checked against what the protocols must show.

use cardiac::app::output::Beats;
use cardiac::app::problem::{self, ProblemSpec};
use cardiac::app::protocol::{self, RegionSpec, StimRegion};
use cardiac::matrix::Conductivity;
use cardiac::mesh::{CellType, TetMesh};
use cardiac::partition::Strategy;
use cardiac::solver::device::{self, DeviceConfig, DeviceRun};
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{CellModels, Setup, SetupOptions, Stimulus};
use cardiac::tp06::{CellModel, Scalings};
use poplar::EngineOptions;

fn slab() -> TetMesh {
    TetMesh::slab(4.0, 2.0, 1.0, 0.5)
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

/// Runs `steps` ODE steps natively, recording the per-beat crossings every 100 steps.
fn native_beats(setup: &Setup, steps: usize, starts: Vec<f64>) -> (NativeSolver<'_>, Beats) {
    let mut native = NativeSolver::new(setup);
    let mut beats = Beats::from_starts(starts, setup.n);
    for k in 0..steps {
        native.step();
        if k % 100 == 99 {
            let (u, d) = native.last_crossings();
            beats.record(u, d);
        }
    }
    (native, beats)
}

#[test]
fn two_sites_and_two_cell_models_on_the_device_equal_the_native_reference() {
    codelets::link();
    let mesh = slab();
    // Site 1: the near corner at 0 ms. Site 2: the far corner at 4 ms, stronger and
    // overlapping nothing. Half the slab (x < 2 mm) is endo with I_Kr halved.
    let near = Stimulus::protocol(mesh.cells_in_box([0.0; 3], [1.0; 3]));
    let far_cells = mesh.cells_in_box([3.0, 1.0, 0.0], [4.0, 2.0, 1.0]);
    let far = Stimulus {
        start: 4.0,
        density: 80.0,
        ..Stimulus::protocol(far_cells.clone())
    };
    let mut scale = Scalings::ONE;
    scale.set("GKr", 0.5).unwrap();
    let regions = vec![(
        RegionSpec {
            region: StimRegion::Box([0.0; 3], [2.0, 2.0, 1.0]),
            cell_type: Some(CellType::Endo),
            scale,
        },
        mesh.cells_in_box([0.0; 3], [2.0, 2.0, 1.0]),
    )];
    let models = protocol::cell_models(&mesh, &Scalings::ONE, &regions).unwrap();
    assert_eq!(models.models.len(), 2, "{:?}", models.models);
    let opts = SetupOptions {
        more_sites: vec![far],
        models: Some(models),
        act_threshold: None,
    };
    let setup = Setup::with_options(&mesh, &Conductivity::niederer(), 0.05, &near, &opts).unwrap();
    assert_eq!(setup.sites.len(), 2);
    let steps = 400; // 20 ms
    let mut native = NativeSolver::new(&setup);
    for _ in 0..steps {
        native.step();
    }
    let mut cfg = DeviceConfig::chips(1, Strategy::MixedClean);
    cfg.tiles = 5;
    cfg.chunk_steps = 100;
    let prob = device::build(&setup, &cfg).unwrap();
    let exe = device::compile_problem(&prob).unwrap();
    let mut run = DeviceRun::new(&exe, prob.info.clone(), EngineOptions::default()).unwrap();
    for _ in 0..steps / 100 {
        run.run_chunk().unwrap();
    }
    assert_eq!(bits(&run.voltage().unwrap()), bits(&native.voltage()), "V");
    assert_eq!(
        bits(&run.activation().unwrap()),
        bits(native.activation()),
        "activation"
    );

    // The far site fired at its own time: its cells activate just after 4 ms, long before the
    // wave from the near corner arrives (it does in a run with the near site alone).
    let alone = Setup::new(&mesh, &Conductivity::niederer(), 0.05, &near).unwrap();
    let mut single = NativeSolver::new(&alone);
    for _ in 0..steps {
        single.step();
    }
    for &c in &far_cells {
        let (two, one) = (
            native.activation()[c as usize],
            single.activation()[c as usize],
        );
        assert!(
            (4.0..5.5).contains(&two),
            "cell {c}: {two} ms with the far site"
        );
        assert!(one > two + 1.0, "cell {c}: {one} ms without it");
    }
}

#[test]
fn s1_s2_in_tissue_shows_refractoriness_and_restitution() {
    // Two S1 beats at 400 ms, then S2 at 150 / 300 / 400 ms after the second: at 150 ms the
    // tissue is still refractory (no cell fires a third time); at 300 and 400 ms it fires, and
    // the APD of the S2 beat grows with the coupling interval.
    let mesh = slab();
    let cells = mesh.cells_in_box([0.0; 3], [1.0; 3]);
    let mut apd_s2 = Vec::new();
    for s2 in [150.0, 300.0, 400.0] {
        let stim = Stimulus {
            period: 400.0,
            count: 2,
            s2: Some(s2),
            ..Stimulus::protocol(cells.clone())
        };
        let setup = Setup::new(&mesh, &Conductivity::niederer(), 0.05, &stim).unwrap();
        let starts = setup.pulse_starts();
        assert_eq!(starts, [0.0, 400.0, 400.0 + s2]);
        let steps = ((400.0 + s2 + 450.0) / 0.05) as usize;
        let (_, beats) = native_beats(&setup, steps, starts);
        let fired = beats.activation[2].iter().filter(|&&a| a >= 0.0).count();
        if s2 < 200.0 {
            assert_eq!(fired, 0, "S2 at {s2} ms captured {fired} cells");
            continue;
        }
        assert_eq!(fired, setup.n, "S2 at {s2} ms");
        let summary = beats.summary();
        assert_eq!(summary[2].1, setup.n, "S2 beat repolarised everywhere");
        apd_s2.push(summary[2].2);
    }
    assert!(
        apd_s2[0] + 5.0 < apd_s2[1],
        "APD of the S2 beat: {apd_s2:?} ms at 300 and 400 ms"
    );
}

#[test]
fn conductance_scalings_and_cell_types_per_region_change_the_apd_where_they_apply() {
    // I_Kr halved in the half x < 2 mm prolongs the APD there (a drug block); the other half
    // keeps the control APD. Measured on the first beat, through -70 mV.
    let mesh = slab();
    let stim = Stimulus::protocol(mesh.cells_in_box([0.0; 3], [1.0; 3]));
    let half = mesh.cells_in_box([0.0; 3], [2.0, 2.0, 1.0]);
    let run = |models: Option<CellModels>| {
        let opts = SetupOptions {
            models,
            ..Default::default()
        };
        let setup =
            Setup::with_options(&mesh, &Conductivity::niederer(), 0.05, &stim, &opts).unwrap();
        let (_, beats) = native_beats(&setup, (450.0f64 / 0.05) as usize, vec![0.0]);
        (0..setup.n)
            .map(|i| beats.repolarisation[0][i] - beats.activation[0][i])
            .collect::<Vec<f32>>()
    };
    let control = run(None);
    let mut scale = Scalings::ONE;
    scale.set("g_kr", 0.5).unwrap();
    let block = RegionSpec {
        region: StimRegion::Box([0.0; 3], [2.0, 2.0, 1.0]),
        cell_type: None,
        scale,
    };
    let drug = run(Some(
        protocol::cell_models(&mesh, &Scalings::ONE, &[(block, half.clone())]).unwrap(),
    ));
    let inside: std::collections::HashSet<u32> = half.iter().copied().collect();
    let mut longer = 0;
    for i in 0..mesh.num_cells() {
        assert!(control[i] > 200.0 && drug[i] > 200.0, "cell {i}");
        if inside.contains(&(i as u32)) {
            longer += usize::from(drug[i] > control[i] + 10.0);
        } else {
            // Outside the block only electrotonic coupling changes it, by far less.
            assert!(
                drug[i] < control[i] + 0.6 * (drug[i] - control[i]).abs().max(30.0),
                "cell {i}"
            );
        }
    }
    assert!(
        longer * 10 >= inside.len() * 9,
        "{longer} of {} blocked cells prolonged by > 10 ms",
        inside.len()
    );
    // A region's cell type: endo everywhere instead of epi moves the tissue's APD the way it
    // moves the single cell's (the same kernel, `cardiac cell`, one beat from rest).
    let endo = run(Some(CellModels {
        models: vec![CellModel::published(CellType::Endo)],
        cell_model: vec![0; mesh.num_cells()],
    }));
    let med = |v: &[f32]| {
        let mut v = v.to_vec();
        v.sort_by(f32::total_cmp);
        f64::from(v[v.len() / 2])
    };
    let cell_apd90 = |ct| {
        let p = cardiac::cell::Protocol {
            beats: 1,
            dt: 0.05,
            ..cardiac::cell::Protocol::reference(ct)
        };
        cardiac::cell::pace(&p).unwrap().beats[0].unwrap().apd90
    };
    let (cell_endo, cell_epi) = (cell_apd90(CellType::Endo), cell_apd90(CellType::Epi));
    assert!((cell_endo - cell_epi).abs() > 3.0, "{cell_endo} {cell_epi}");
    assert_eq!(
        med(&endo) > med(&control),
        cell_endo > cell_epi,
        "tissue endo {} / epi {} ms; single cell endo {cell_endo} / epi {cell_epi} ms",
        med(&endo),
        med(&control)
    );
}

#[test]
fn a_drug_block_prolongs_the_single_cell_apd_as_in_the_literature() {
    // Blocking I_Kr prolongs the APD (the mechanism of drug-induced long QT), as does
    // blocking I_Ks; blocking I_CaL shortens it (the plateau loses its inward current). The
    // currents themselves are checked against myokit in tests/tp06_reference.rs.
    let apd = |s: &str| {
        let p = cardiac::cell::Protocol {
            beats: 2,
            dt: 0.05,
            scale: Scalings::ONE.parse_onto(s).unwrap(),
            ..cardiac::cell::Protocol::reference(CellType::Epi)
        };
        cardiac::cell::pace(&p).unwrap().beats[1].unwrap().apd90
    };
    let (control, kr, ks, cal) = (apd(""), apd("GKr*0.5"), apd("GKs*0.5"), apd("GCaL*0.5"));
    assert!(kr > control + 15.0, "I_Kr block: {kr} vs {control} ms");
    assert!(ks > control + 5.0, "I_Ks block: {ks} vs {control}");
    assert!(cal < control - 10.0, "I_CaL block: {cal} vs {control} ms");
}

#[test]
fn a_lower_activation_threshold_activates_earlier_everywhere() {
    let mesh = slab();
    let stim = Stimulus::protocol(mesh.cells_in_box([0.0; 3], [1.0; 3]));
    let act = |th: Option<f64>| {
        let opts = SetupOptions {
            act_threshold: th,
            ..Default::default()
        };
        let setup =
            Setup::with_options(&mesh, &Conductivity::niederer(), 0.05, &stim, &opts).unwrap();
        let mut s = NativeSolver::new(&setup);
        for _ in 0..300 {
            s.step();
        }
        s.activation().to_vec()
    };
    let (at0, at_m40) = (act(None), act(Some(-40.0)));
    assert!(at0.iter().all(|&a| a >= 0.0));
    for (i, (&a, &b)) in at0.iter().zip(&at_m40).enumerate() {
        // The upstroke goes from -40 to 0 mV in well under a millisecond.
        assert!(b < a && a - b < 0.5, "cell {i}: {b} at -40 mV, {a} at 0 mV");
    }
}

#[test]
fn a_cell_list_file_stimulates_exactly_its_cells_and_bad_lists_are_named() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("protocol_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = ProblemSpec::slab(1.0);
    let (mesh, _) = problem::load_mesh(&spec).unwrap();
    let cube = mesh.cells_in_box([0.0; 3], [1.5; 3]);
    let list = dir.join("cells.txt");
    let text: String = std::iter::once("# the corner cube\n".to_string())
        .chain(cube.iter().map(|c| format!("{c}\n")))
        .collect();
    std::fs::write(&list, text).unwrap();
    let from_file = problem::setup(
        &ProblemSpec {
            stim: StimRegion::Cells(list.clone()),
            ..spec.clone()
        },
        &mesh,
    )
    .unwrap();
    let from_box = problem::setup(&spec, &mesh).unwrap();
    assert_eq!(from_file.stim_class, from_box.stim_class);
    assert!(from_file.stim_class.iter().any(|&c| c != 0));

    let n = mesh.num_cells();
    std::fs::write(&list, format!("0 1\n2, 3\n{n}\n")).unwrap();
    let e = format!("{:#}", protocol::read_cell_list(&list, n).unwrap_err());
    assert!(
        e.contains("cells.txt:3") && e.contains(&format!("cell {n} is out of range")),
        "{e}"
    );
    std::fs::write(&list, "0\nseven\n").unwrap();
    let e = format!("{:#}", protocol::read_cell_list(&list, n).unwrap_err());
    assert!(e.contains("cells.txt:2") && e.contains("seven"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn protocol_and_region_text_is_parsed_or_refused_by_name() {
    let s = protocol::parse_site("sphere:20,7,3,1;start=300;beats=2;bcl=500;s2=250").unwrap();
    assert_eq!(s.region, StimRegion::Sphere([20.0, 7.0, 3.0], 1.0));
    assert_eq!(
        (s.start, s.beats, s.bcl, s.s2),
        (300.0, 2, 500.0, Some(250.0))
    );
    let r = protocol::parse_region_spec("box:0,0,0,20,7,1;cell-type=endo;GKs*0.5").unwrap();
    assert_eq!(r.cell_type, Some(CellType::Endo));
    assert_eq!(r.scale.g_ks, 0.5);
    for (bad, want) in [
        ("sphere:1,2,3", "4 finite numbers"),
        ("cube:0,0,0,1,1,1", "unknown kind"),
        ("box:0,0,0,1,1,1;strat=3", "unknown key"),
        ("box:0,0,0,1,1,1;start=soon", "not a number"),
    ] {
        let e = format!("{:#}", protocol::parse_site(bad).unwrap_err());
        assert!(e.contains(want), "{bad}: {e}");
    }
    for (bad, want) in [
        ("box:0,0,0,1,1,1", "changes nothing"),
        ("box:0,0,0,1,1,1;cell-type=atrial", "atrial"),
        ("box:0,0,0,1,1,1;GKq*2", "GKq"),
    ] {
        let e = format!("{:#}", protocol::parse_region_spec(bad).unwrap_err());
        assert!(e.contains(want), "{bad}: {e}");
    }
}
