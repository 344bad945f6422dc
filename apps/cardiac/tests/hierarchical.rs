//! Flat and hierarchical partitioning (`cardiac::partition::Partitioning`): METIS' empty parts
//! refused, hierarchical parts non-empty, balanced and on their chip, and the partition only
//! moving work: flat and hierarchical runs give the same activation maps, bit for bit.

use std::path::PathBuf;

use cardiac::matrix::Conductivity;
use cardiac::mesh::{read_mesh, ReadOptions, TetMesh};
use cardiac::partition::{
    check_non_empty, chip_volumes, partition_cells, partition_hierarchical, ChipLinks,
    PartitionError, Partitioning, Strategy,
};
use cardiac::solver::device::{self, DeviceConfig, DeviceRun};
use cardiac::solver::{Results, Setup, Stimulus};
use poplar::{EngineOptions, Target};

/// Part sizes of a partition into `k` parts.
fn sizes(parts: &[u32], k: usize) -> Vec<usize> {
    let mut s = vec![0usize; k];
    for &p in parts {
        s[p as usize] += 1;
    }
    s
}

#[test]
fn flat_metis_refuses_the_empty_parts_of_too_many_parts() {
    // 1 mm slab, 2,520 cells, one part per cell: METIS leaves parts empty without an error.
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 1.0);
    let adjacency = mesh.face_neighbours();
    let n = adjacency.len();
    match partition_cells(&adjacency, n) {
        Err(PartitionError::EmptyParts { k, n: cells, empty }) => {
            assert_eq!((k, cells), (n, n));
            assert!(empty > 0 && empty < n, "{empty} empty parts");
            let msg = PartitionError::EmptyParts { k, n, empty }.to_string();
            assert!(msg.contains(&n.to_string()), "{msg}");
        }
        other => panic!("expected EmptyParts, got {other:?}"),
    }
    // A reasonable cut passes the same check.
    let parts = partition_cells(&adjacency, 64).unwrap();
    assert_eq!(check_non_empty(&parts, 64), Ok(()));
    assert_eq!(
        check_non_empty(&[0, 2], 3),
        Err(PartitionError::EmptyParts {
            k: 3,
            n: 2,
            empty: 1
        })
    );
}

#[test]
fn hierarchical_parts_are_non_empty_balanced_and_deterministic() {
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 0.5);
    let adjacency = mesh.face_neighbours();
    // 3 chips of 16 tiles (the last with 8): 40 tiles.
    let (tpc, k) = (16, 40);
    let parts = partition_hierarchical(&adjacency, tpc, k).unwrap();
    assert_eq!(parts, partition_hierarchical(&adjacency, tpc, k).unwrap());
    let s = sizes(&parts, k);
    let mean = adjacency.len() as f64 / k as f64;
    let imbalance = *s.iter().max().unwrap() as f64 / mean;
    assert!(s.iter().all(|&c| c > 0), "empty tile: {s:?}");
    assert!(imbalance <= 1.03 + 1e-9, "imbalance {imbalance}: {s:?}");
    // Chips: 16, 16 and 8 tiles, so their cells in proportion (within 3 %).
    for (chip, share) in [(0usize, 0.4), (1, 0.4), (2, 0.2)] {
        let cells: usize = s[chip * tpc..((chip + 1) * tpc).min(k)].iter().sum();
        let want = share * adjacency.len() as f64;
        assert!(
            (cells as f64 - want).abs() <= 0.03 * want,
            "chip {chip}: {cells} cells, want {want}"
        );
    }
    assert_eq!(
        partition_hierarchical(&adjacency, tpc, 0),
        Err(PartitionError::ZeroParts)
    );
    assert_eq!(
        partition_hierarchical(&adjacency[..3], tpc, 4),
        Err(PartitionError::TooManyParts { k: 4, n: 3 })
    );
}

#[test]
fn no_tile_holds_more_than_its_workers_even_share() {
    // A tile's ODE step lasts as long as its busiest worker's share, ceil(cells / 6) on a
    // GC200; METIS' 3 % tolerance lets some tiles exceed the even split's share, the
    // hierarchical tile level caps them (cardiac::partition::cap_part_sizes).
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 0.5);
    let adjacency = mesh.face_neighbours();
    let (tpc, k) = (16, 40);
    let workers = Target::gc200().workers_per_tile as usize;
    let share = |cells: usize, tiles: usize| cells.div_ceil(tiles).div_ceil(workers);
    let parts = partition_hierarchical(&adjacency, tpc, k).unwrap();
    let s = sizes(&parts, k);
    for chip in 0..k.div_ceil(tpc) {
        let tiles = &s[chip * tpc..((chip + 1) * tpc).min(k)];
        let even = share(tiles.iter().sum(), tiles.len());
        let worst = tiles.iter().map(|&c| c.div_ceil(workers)).max().unwrap();
        assert!(
            worst <= even,
            "chip {chip}: {worst} cells a worker, even split {even}: {tiles:?}"
        );
    }
    // The flat cut of the same slab (METIS alone) has tiles over it: the cap is what holds.
    let flat = sizes(&partition_cells(&adjacency, k).unwrap(), k);
    let even = share(adjacency.len(), k);
    assert!(
        flat.iter().any(|&c| c.div_ceil(workers) > even),
        "flat cut within the even share: {flat:?}"
    );
}

#[test]
fn hierarchical_parts_are_the_same_on_any_thread_count() {
    // The chips' tile levels run at once on rayon's threads; METIS' random numbers are per
    // thread (third_party/metis-sys), so concurrent calls must not change each other's draws.
    // Calls long enough to overlap (20,000 cells into 128 tiles per chip): with the C
    // library's one rand() state this differs between runs on 2 threads.
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 0.25);
    let adjacency = mesh.face_neighbours();
    let (tpc, k) = (128, 8 * 128);
    let on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| partition_hierarchical(&adjacency, tpc, k).unwrap())
    };
    let one = on(1);
    for threads in [2, 4] {
        assert!(one == on(threads), "parts differ on {threads} threads");
    }
}

/// Runs `steps` ODE steps of the biv mesh on `chips` chips of 16 tiles each.
fn run_biv(setup: &Setup, chips: u32, partitioning: Partitioning, steps: u32) -> Results {
    let mut cfg = DeviceConfig::chips(chips, Strategy::MixedClean);
    cfg.target = Target {
        tiles_per_ipu: 16,
        ..Target::gc200_multi(chips)
    };
    cfg.tiles = cfg.target.num_tiles() as usize;
    cfg.chunk_steps = steps;
    cfg.partitioning = partitioning;
    let prob = device::build(setup, &cfg).expect("build");
    assert_eq!(prob.plan.tiles.len(), cfg.tiles, "every tile used");
    let exe = device::compile_problem(&prob).expect("compile");
    let mut run = DeviceRun::new(&exe, prob.info.clone(), EngineOptions::default()).unwrap();
    run.run_chunk().unwrap();
    run.results().unwrap()
}

#[test]
fn flat_and_hierarchical_give_bit_identical_activation_on_1_2_and_3_chips() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/biv_0.3.msh");
    let mesh = read_mesh(path, &ReadOptions::with_scale(10.0)).expect("read biv_0.3.msh");
    let lv = mesh.cells_touching_surface("ENDO_LV").expect("ENDO_LV tag");
    let sigma = Conductivity::niederer().sigma_l;
    let cond = Conductivity {
        sigma_t: sigma,
        sigma_n: sigma,
        ..Conductivity::niederer()
    };
    let setup = Setup::new(&mesh, &cond, 0.02, &Stimulus::protocol(lv)).expect("set-up");
    let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    // 6 ms: the stimulus and the first spread, so activation times are a real map.
    let steps = 300;
    let base = run_biv(&setup, 1, Partitioning::Flat, steps);
    let activated = base.activation.iter().filter(|&&a| a >= 0.0).count();
    assert!(
        activated > 0 && activated < setup.n,
        "{activated} of {} activated",
        setup.n
    );
    for chips in [1, 2, 3] {
        for p in Partitioning::ALL {
            let got = run_biv(&setup, chips, p, steps);
            let what = format!("{chips} chip(s), {}", p.name());
            assert_eq!(bits(&got.activation), bits(&base.activation), "{what}");
            assert_eq!(bits(&got.v), bits(&base.v), "{what}");
        }
    }
}

/// Largest part over `ceil(1.03 × mean)`: at most 1 when a cut honours METIS' 3 % tolerance
/// to the whole cell (parts of a few dozen cells cannot be within 3 % of a fractional mean).
fn over_tolerance(sizes: &[usize]) -> f64 {
    let mean = sizes.iter().sum::<usize>() as f64 / sizes.len() as f64;
    *sizes.iter().max().unwrap() as f64 / (1.03 * mean).ceil()
}

#[test]
fn both_partitionings_at_64_chips_on_the_tenth_millimetre_slab() {
    // 2,520,000 cells on 64 × 1,472 = 94,208 tiles (about 27 cells each); the partition alone.
    let t = std::time::Instant::now();
    let adjacency = TetMesh::slab(20.0, 7.0, 3.0, 0.1).face_neighbours();
    let (tpc, k) = (1472, 64 * 1472);
    println!("mesh {:.1} s", t.elapsed().as_secs_f64());

    // Flat: METIS may leave parts empty here; it must be refused, never returned.
    let t = std::time::Instant::now();
    match partition_cells(&adjacency, k) {
        Ok(parts) => {
            let s = sizes(&parts, k);
            assert!(s.iter().all(|&c| c > 0));
            assert!(over_tolerance(&s) <= 1.0, "flat: {}", over_tolerance(&s));
        }
        Err(PartitionError::EmptyParts { k: kk, n, empty }) => {
            assert_eq!((kk, n), (k, adjacency.len()));
            println!("flat: METIS left {empty} of {k} parts empty (refused)");
        }
        Err(e) => panic!("flat: {e}"),
    }
    println!("flat {:.1} s", t.elapsed().as_secs_f64());

    // Hierarchical: every tile non-empty, 3 % per level (chips, then tiles within a chip).
    let t = std::time::Instant::now();
    let parts = partition_hierarchical(&adjacency, tpc, k).expect("hierarchical");
    println!("hierarchical {:.1} s", t.elapsed().as_secs_f64());
    let s = sizes(&parts, k);
    assert!(s.iter().all(|&c| c > 0));
    let chips: Vec<usize> = s.chunks(tpc).map(|c| c.iter().sum()).collect();
    assert!(over_tolerance(&chips) <= 1.0, "chips {chips:?}");
    for (c, tiles) in s.chunks(tpc).enumerate() {
        assert!(over_tolerance(tiles) <= 1.0, "chip {c}: {tiles:?}");
    }
}

/// `cardiac run --partition hierarchical` on 2 chips writes the same activation.vtu as the flat
/// default, records its choice in results.json, and refuses an unknown scheme by name.
#[test]
fn the_command_line_choice_moves_work_only() {
    let bin = env!("CARGO_BIN_EXE_cardiac");
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hierarchical_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let run = |p: &str| {
        let out = d.join(p);
        let o = std::process::Command::new(bin)
            .args(["run", "--quick", "--chips", "2", "--partition", p])
            .args(["--no-report", "--no-profile", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let (flat, hier) = (run("flat"), run("hierarchical"));
    let vtu = |d: &PathBuf| std::fs::read(d.join("activation.vtu")).unwrap();
    assert!(vtu(&flat) == vtu(&hier), "activation.vtu differs");
    let results = std::fs::read_to_string(hier.join("results.json")).unwrap();
    assert!(
        results.contains("\"partition\": \"hierarchical\""),
        "{results}"
    );
    let o = std::process::Command::new(bin)
        .args(["run", "--partition", "bisect"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("hierarchical"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn chips_are_placed_where_the_link_model_finds_them_cheapest() {
    // The 0.5 mm slab (20,160 cells) cut in two levels onto GC200 chips in a ladder: the chip
    // parts' placement must be the cheapest of all by `ChipLinks::cost` (the slowest chip's
    // busiest link time plus its farthest hop's latency, then the sum over chip pairs) with 6
    // chips, where it is searched
    // exhaustively, and no swap of two chips may make it cheaper with 16, where it is searched
    // by swaps.
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, 0.5);
    let adjacency = mesh.face_neighbours();
    let better =
        |x: (f64, f64), y: (f64, f64)| x.0 < y.0 - 1e-9 || (x.0 <= y.0 + 1e-9 && x.1 < y.1 - 1e-9);
    for (chips, tpc) in [(6usize, 8usize), (16, 4)] {
        let parts = partition_hierarchical(&adjacency, tpc, chips * tpc).unwrap();
        let chip: Vec<u32> = parts.iter().map(|&p| p / tpc as u32).collect();
        let vol = chip_volumes(&adjacency, &chip, chips);
        let links = ChipLinks::of(&Target::gc200_multi(chips as u32));
        let identity: Vec<usize> = (0..chips).collect();
        let placed = links.cost(&vol, &identity);
        let mut worse = 0;
        let mut check = |at: &[usize]| {
            let c = links.cost(&vol, at);
            assert!(
                !better(c, placed),
                "{chips} chips: {at:?} costs {c:?} < {placed:?}"
            );
            worse += usize::from(better(placed, c));
        };
        if chips <= 8 {
            // Every permutation (Heap's algorithm).
            let mut at = identity.clone();
            let mut c = vec![0usize; chips];
            check(&at);
            let mut i = 0;
            while i < chips {
                if c[i] < i {
                    at.swap(if i % 2 == 0 { 0 } else { c[i] }, i);
                    check(&at);
                    c[i] += 1;
                    i = 0;
                } else {
                    c[i] = 0;
                    i += 1;
                }
            }
        } else {
            for a in 0..chips {
                for b in a + 1..chips {
                    let mut at = identity.clone();
                    at.swap(a, b);
                    check(&at);
                }
            }
        }
        assert!(
            worse > 0,
            "{chips} chips: no placement is worse than the chosen one"
        );
    }
}
