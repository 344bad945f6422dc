//! Orthotropic tissue: sheet directions from the mesh and σ_n along the sheet normal.

use cardiac::matrix::{assemble_operator, Conductivity};
use cardiac::mesh::{read_msh, read_vtu, write_msh, write_vtu, MeshError, TetMesh};
use cardiac::solver::native::NativeSolver;
use cardiac::solver::{Setup, Stimulus};

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ortho_{}_{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn with_sheets(mut mesh: TetMesh, s: [f64; 3]) -> TetMesh {
    mesh.sheets = Some(vec![s; mesh.num_cells()]);
    mesh
}

fn ortho(sigma_t: f64, sigma_n: f64) -> Conductivity {
    Conductivity {
        sigma_t,
        sigma_n,
        ..Conductivity::niederer()
    }
}

#[test]
fn the_tensor_has_the_three_conductivities_along_fibre_sheet_and_normal() {
    // An orthonormal frame not aligned with the axes.
    let f = [2.0f64, 1.0, 2.0].map(|x| x / 3.0);
    let s = [1.0f64, 2.0, -2.0].map(|x| x / 3.0);
    let n = [2.0f64, -2.0, -1.0].map(|x| x / 3.0); // f × s
    let c = ortho(0.05, 0.01);
    let m = c.tensor_orthotropic(f, s);
    for (v, sigma) in [(f, c.sigma_l), (s, c.sigma_t), (n, c.sigma_n)] {
        for a in 0..3 {
            let mv: f64 = (0..3).map(|b| m[a][b] * v[b]).sum();
            assert!(
                (mv - sigma * v[a]).abs() < 1e-15,
                "{v:?}: {mv} vs {}",
                sigma * v[a]
            );
        }
    }
    // σ_n = σ_t: the transversely isotropic tensor, bit for bit.
    let t = Conductivity::niederer();
    assert_eq!(t.tensor_orthotropic(f, s), t.tensor(f));
}

#[test]
fn sheets_matter_only_when_sigma_n_differs_and_swapping_sheet_and_normal_swaps_sigmas() {
    let slab = TetMesh::slab(2.0, 2.0, 2.0, 0.5);
    let plain = assemble_operator(&slab, &Conductivity::niederer()).unwrap();
    let sheeted = assemble_operator(
        &with_sheets(slab.clone(), [0.0, 1.0, 0.0]),
        &Conductivity::niederer(),
    )
    .unwrap();
    assert_eq!(plain, sheeted, "σ_n = σ_t: sheets are ignored");
    // Sheets along y with (σ_t, σ_n) = (a, b) is the same tissue as sheets along z with (b, a).
    let y = assemble_operator(
        &with_sheets(slab.clone(), [0.0, 1.0, 0.0]),
        &ortho(0.04, 0.01),
    )
    .unwrap();
    let z = assemble_operator(
        &with_sheets(slab.clone(), [0.0, 0.0, 1.0]),
        &ortho(0.01, 0.04),
    )
    .unwrap();
    let n = slab.num_cells();
    let mut worst = 0.0f64;
    for i in 0..n {
        let (cy, vy) = y.row(i);
        let (cz, vz) = z.row(i);
        assert_eq!(cy, cz);
        for (a, b) in vy.iter().zip(vz) {
            worst = worst.max((a - b).abs() / a.abs().max(1e-300));
        }
        worst = worst.max((y.diag()[i] - z.diag()[i]).abs() / y.diag()[i].abs());
    }
    assert!(worst < 1e-12, "relative difference {worst:e}");
    // And it differs from the transversely isotropic operator.
    assert_ne!(y, plain);
    // σ_n ≠ σ_t without sheets is refused.
    let e = assemble_operator(&slab, &ortho(0.04, 0.01)).unwrap_err();
    assert!(e.to_string().contains("sheet"), "{e}");
}

#[test]
fn a_small_sigma_n_slows_conduction_along_the_sheet_normal_only() {
    // Fibres along x, sheets along y, so the normal is z. From the corner, the front reaches
    // (0, 2, 0) and (0, 0, 2) at about the same time when σ_n = σ_t; with σ_n = σ_t / 4 the
    // speed along z halves (it goes as sqrt(σ)), and along y nothing changes.
    let mesh = with_sheets(TetMesh::slab(1.0, 2.5, 2.5, 0.25), [0.0, 1.0, 0.0]);
    let stim = Stimulus::protocol(mesh.cells_in_box([0.0; 3], [0.5; 3]));
    let run = |c: &Conductivity| {
        let setup = Setup::new(&mesh, c, 0.05, &stim).unwrap();
        let mut s = NativeSolver::new(&setup);
        while s.time() < 60.0 && s.activation().iter().any(|&a| a < 0.0) {
            s.step();
        }
        let at = |p| s.activation()[setup.nearest_cell(p)];
        (at([0.1, 2.4, 0.1]), at([0.1, 0.1, 2.4]))
    };
    let t = Conductivity::niederer().sigma_t;
    let (y1, z1) = run(&ortho(t, t));
    let (y2, z2) = run(&ortho(t, t / 4.0));
    assert!(y1 > 3.0 && z1 > 3.0, "{y1} {z1}");
    assert!(
        (y1 - z1).abs() < 0.15 * y1,
        "transversely isotropic: y {y1}, z {z1} ms"
    );
    assert!(
        (y2 - y1).abs() < 0.1 * y1,
        "along the sheet: {y1} -> {y2} ms"
    );
    assert!(z2 > 1.5 * z1, "along the normal: {z1} -> {z2} ms");
}

#[test]
fn sheets_survive_vtu_and_msh_and_bad_ones_are_named() {
    let d = tmp("io");
    let mut mesh = TetMesh::slab(1.0, 1.0, 1.0, 0.5);
    // Not orthogonal to the fibre (x): readers orthogonalise it to y.
    let n = mesh.num_cells();
    mesh.sheets = Some(vec![[0.6, 0.8, 0.0]; n]);
    let vtu = d.join("m.vtu");
    write_vtu(&vtu, &mesh, &[]).unwrap();
    let back = read_vtu(&vtu, &Default::default()).unwrap();
    for s in back.sheets.as_ref().expect("sheets read back") {
        assert!((s[0]).abs() < 1e-12 && (s[1] - 1.0).abs() < 1e-12, "{s:?}");
    }
    let msh = d.join("m.msh");
    write_msh(&msh, &back).unwrap();
    let again = read_msh(&msh, &Default::default()).unwrap();
    assert_eq!(again.sheets, back.sheets);
    // A sheet along the fibre cannot define a normal.
    mesh.sheets = Some(vec![[2.0, 0.0, 0.0]; n]);
    write_vtu(&vtu, &mesh, &[]).unwrap();
    match read_vtu(&vtu, &Default::default()) {
        Err(MeshError::BadSheet { cell: 0, .. }) => {}
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&d);
}
