//! The heart mesh generator `tools/heart_mesh.py` (Python: gmsh, numpy, scipy from
//! `tools/requirements.txt`) on a small size: its bad arguments are refused, the mesh it writes
//! reads back with its surfaces, positive tetrahedra, unit fibres in the plane of the wall,
//! sheets across it, cell types in the configured fractions of the volume ordered from endo to
//! epi, and `cardiac run` on it activates every cell from the LV endocardium.
//!
//! These tests need a Python 3 with the generator's packages and fail (never skip) without
//! them, saying how to install them. They run `$POPLAR_PYTHON` (the virtual environment that
//! `scripts/test` makes), else `python3`.

mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cardiac::mesh::{read_mesh, ReadOptions, TetMesh};
use cardiac::tp06::CellType;
use support::{cardiac, stderr, tmp};

const INSTALL: &str = "run the tests with `scripts/test` (it installs them into a virtual \
     environment), or `pip install -r apps/cardiac/tools/requirements.txt` and set POPLAR_PYTHON \
     to that Python";

/// The Python that runs the generator: `$POPLAR_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("POPLAR_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/heart_mesh.py")
}

/// `$POPLAR_PYTHON tools/heart_mesh.py ARGS`; panics with how to install Python if it is absent.
fn generator(args: &[&str]) -> Output {
    let python = python();
    Command::new(&python)
        .arg(script())
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python} ({e}): install Python 3, then {INSTALL}"))
}

/// Generates a mesh at `cl` cm with extra arguments; panics with the generator's message (which
/// names the install command when a package is missing).
fn generate(out: &Path, cl: &str, extra: &[&str]) -> TetMesh {
    let o = generator(
        &[
            &["--char-length", cl, "--quiet", "-o", path_str(out)][..],
            extra,
        ]
        .concat(),
    );
    let err = stderr(&o);
    assert!(
        o.status.code() != Some(3),
        "the generator's Python packages are missing from {}: {INSTALL}\n{err}",
        python()
    );
    assert!(o.status.success(), "heart_mesh.py failed:\n{err}");
    let opts = ReadOptions {
        reorient: false,
        ..ReadOptions::with_scale(10.0)
    };
    read_mesh(out, &opts).expect("the generated mesh reads back without reorienting")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

/// The raw `$ElementData` field `name` of a binary MSH 4.1 file: (element tags, values, and
/// the number of components). The readers normalise fibres, so unit length is checked here.
fn raw_element_data(bytes: &[u8], name: &str) -> (Vec<i32>, Vec<f64>, usize) {
    let head = format!("$ElementData\n1\n\"{name}\"\n");
    let at = bytes
        .windows(head.len())
        .position(|w| w == head.as_bytes())
        .unwrap_or_else(|| panic!("no $ElementData {name:?}"))
        + head.len();
    let mut pos = at;
    let mut line = || {
        let end = pos + bytes[pos..].iter().position(|&b| b == b'\n').unwrap();
        let s = std::str::from_utf8(&bytes[pos..end])
            .unwrap()
            .trim()
            .to_string();
        pos = end + 1;
        s
    };
    let nreal: usize = line().parse().unwrap();
    for _ in 0..nreal {
        line();
    }
    let nint: usize = line().parse().unwrap();
    let ints: Vec<usize> = (0..nint).map(|_| line().parse().unwrap()).collect();
    let (ncomp, n) = (ints[1], ints[2]);
    let mut tags = Vec::with_capacity(n);
    let mut values = Vec::with_capacity(n * ncomp);
    let rec = 4 + 8 * ncomp;
    for r in bytes[pos..pos + n * rec].chunks_exact(rec) {
        tags.push(i32::from_le_bytes(r[..4].try_into().unwrap()));
        for c in r[4..].chunks_exact(8) {
            values.push(f64::from_le_bytes(c.try_into().unwrap()));
        }
    }
    (tags, values, ncomp)
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn unit_normal(m: &TetMesh, tri: [u32; 3]) -> [f64; 3] {
    let [a, b, c] = tri.map(|v| m.nodes[v as usize]);
    let (u, v) = (sub(b, a), sub(c, a));
    let n = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    let l = dot(n, n).sqrt();
    n.map(|x| x / l)
}

/// For each triangle of surface `name`: the unit normal and the tetrahedron it bounds.
fn faces_and_cells(m: &TetMesh, name: &str) -> Vec<([f64; 3], usize)> {
    let key = |mut f: [u32; 3]| {
        f.sort_unstable();
        f
    };
    let mut owner: HashMap<[u32; 3], usize> = HashMap::new();
    for (t, tet) in m.tets.iter().enumerate() {
        for k in 0..4 {
            owner.insert(key(cardiac::mesh::face_vertices(tet, k)), t);
        }
    }
    let s = m
        .surface(name)
        .unwrap_or_else(|| panic!("no surface {name}"));
    s.triangles
        .iter()
        .map(|&tri| {
            let t = *owner
                .get(&key(tri))
                .expect("a surface triangle is a face of a tet");
            (unit_normal(m, tri), t)
        })
        .collect()
}

/// Volume fractions of endo, mid and epi cells.
fn fractions(m: &TetMesh) -> [f64; 3] {
    let types = m.cell_types.as_ref().expect("cell types");
    let mut v = [0.0; 3];
    for (t, ct) in types.iter().enumerate() {
        v[*ct as usize] += m.tet_volume(t);
    }
    let total: f64 = v.iter().sum();
    v.map(|x| x / total)
}

#[test]
fn generated_heart_has_wall_fibres_cell_types_and_positive_cells() {
    let d = tmp();
    let out = d.join("biv.msh");
    let m = generate(&out, "0.3", &[]);

    // Size and surfaces: a few thousand cells, the stimulus surfaces of biv_0.3.msh.
    assert!(
        (3_000..20_000).contains(&m.num_cells()),
        "{} cells",
        m.num_cells()
    );
    let mut names: Vec<_> = m.surfaces.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["BASE", "ENDO_LV", "ENDO_RV", "EPI"]);

    // Positive volumes as written (read without reorienting), and the heart's volume: the
    // ellipsoid geometry of biv_0.3.msh, 28.3 cm³ = 28,300 mm³.
    for t in 0..m.num_cells() {
        assert!(
            m.tet_volume(t) > 0.0,
            "cell {t} has volume {}",
            m.tet_volume(t)
        );
    }
    let vol = m.total_volume();
    assert!((vol - 28_290.0).abs() < 300.0, "volume {vol} mm³");

    // Fibres are unit vectors in the file, one per tetrahedron.
    let bytes = std::fs::read(&out).unwrap();
    let (tags, raw, ncomp) = raw_element_data(&bytes, "fibres");
    assert_eq!((tags.len(), ncomp), (m.num_cells(), 3));
    for (i, f) in raw.chunks_exact(3).enumerate() {
        let n = (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
        assert!((n - 1.0).abs() < 1e-9, "fibre {i} has length {n}");
    }
    let fibres = m.fibres.as_ref().expect("fibres");
    let sheets = m.sheets.as_ref().expect("sheets");

    // In the plane of the wall: on each endo and epi face, the cell's fibre is perpendicular
    // to the face's normal and its sheet along it (the transmural direction of a cell with a
    // face on the wall is that face's normal; a corner cell with two wall faces takes their
    // mean: 1 % of the faces may be off by up to 60°).
    for name in ["ENDO_LV", "ENDO_RV", "EPI"] {
        let fc = faces_and_cells(&m, name);
        let cosines: Vec<f64> = fc.iter().map(|&(n, t)| dot(n, fibres[t]).abs()).collect();
        let tangential = cosines.iter().filter(|&&c| c < 1e-6).count();
        let worst = cosines.iter().cloned().fold(0.0, f64::max);
        assert!(
            tangential as f64 >= 0.99 * fc.len() as f64 && worst < 0.5,
            "{name}: {tangential} of {} fibres within |cos| < 1e-6 of the wall, worst {worst}",
            fc.len()
        );
        let across = fc
            .iter()
            .filter(|&&(n, t)| dot(n, sheets[t]).abs() > 1.0 - 1e-6)
            .count();
        assert!(
            across as f64 >= 0.99 * fc.len() as f64,
            "{name}: {across} of {} sheets across the wall",
            fc.len()
        );
    }

    // Cell types: 30/40/30 % of the volume, endo cells on the endocardium, epi on the
    // epicardium.
    let f = fractions(&m);
    for (got, want) in f.iter().zip([0.3, 0.4, 0.3]) {
        assert!((got - want).abs() < 0.02, "fractions {f:?}");
    }
    let types = m.cell_types.as_ref().unwrap();
    let share = |name: &str, ct: CellType| {
        let cells = m.cells_touching_surface(name).unwrap();
        cells.iter().filter(|&&c| types[c as usize] == ct).count() as f64 / cells.len() as f64
    };
    assert!(
        share("ENDO_LV", CellType::Endo) > 0.95,
        "ENDO_LV cells endo"
    );
    assert!(share("ENDO_RV", CellType::Endo) > 0.9, "ENDO_RV cells endo");
    assert!(share("EPI", CellType::Epi) > 0.8, "EPI cells epi");

    // Other fractions, as configured.
    let out2 = d.join("biv_20_50.msh");
    let m2 = generate(&out2, "0.3", &["--endo", "0.2", "--epi", "0.5"]);
    let f2 = fractions(&m2);
    for (got, want) in f2.iter().zip([0.2, 0.3, 0.5]) {
        assert!((got - want).abs() < 0.02, "fractions {f2:?}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn generator_refuses_bad_arguments_and_existing_files() {
    let d = tmp();
    let out = d.join("biv.msh");
    let refused = |args: &[&str], want: &str| {
        let o = generator(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}:\n{err}");
        assert!(err.contains(want), "{args:?}: expected {want:?} in:\n{err}");
    };
    let o = path_str(&out);
    refused(&["--char-length", "0", "-o", o], "--char-length 0");
    refused(&["--char-length", "nan", "-o", o], "--char-length nan");
    refused(
        &["--preset", "heart04", "--char-length", "0.3", "-o", o],
        "not allowed",
    );
    refused(
        &[
            "--char-length",
            "0.3",
            "--endo",
            "0.6",
            "--epi",
            "0.6",
            "-o",
            o,
        ],
        "exceed 1",
    );
    refused(
        &["--char-length", "0.3", "--alpha-endo", "120", "-o", o],
        "--alpha-endo 120",
    );
    refused(
        &["--char-length", "0.3", "-o", &format!("{o}.vtu")],
        "must be a .msh",
    );
    refused(
        &["--char-length", "0.3", "--sphere-poles", "side", "-o", o],
        "--sphere-poles",
    );
    refused(
        &["--char-length", "0.3", "--optimize", "tetgen", "-o", o],
        "--optimize",
    );
    let missing = d.join("no/such/folder/biv.msh");
    refused(
        &["--char-length", "0.3", "-o", path_str(&missing)],
        "does not exist",
    );
    std::fs::write(&out, "mine").unwrap();
    refused(&["--char-length", "0.3", "-o", o], "pass --force");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "mine",
        "left as it was"
    );
    // With --force it is replaced, and no temporary file is left beside it; the poles of
    // 0.4.0 and Netgen's optimiser give valid meshes too.
    let m = generate(&out, "0.4", &["--force"]);
    assert!(m.num_cells() > 1000);
    for extra in [["--sphere-poles", "base"], ["--optimize", "netgen"]] {
        let m = generate(&out, "0.4", &[&extra[..], &["--force"]].concat());
        assert!(m.num_cells() > 1000, "{extra:?}");
        for tag in ["BASE", "ENDO_LV", "ENDO_RV", "EPI"] {
            assert!(m.surface(tag).is_some(), "{extra:?}: no surface {tag}");
        }
    }
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["biv.msh"]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// `activation_ms` of an `activation.vtu` (inline base64 with a UInt64 byte-count header).
fn activation_ms(vtu: &Path) -> Vec<f32> {
    let text = std::fs::read_to_string(vtu).unwrap();
    let at = text
        .find("Name=\"activation_ms\"")
        .expect("activation_ms array");
    let start = at + text[at..].find('>').unwrap() + 1;
    let end = start + text[start..].find("</DataArray>").unwrap();
    let bytes = base64(text[start..end].trim());
    bytes[8..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn base64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let mut out = Vec::new();
    for chunk in s.as_bytes().chunks(4) {
        let pad = chunk.iter().filter(|&&c| c == b'=').count();
        let mut n = 0u32;
        for &c in chunk {
            n = (n << 6) | if c == b'=' { 0 } else { u32::from(val(c)) };
        }
        let b = n.to_be_bytes();
        out.extend_from_slice(&b[1..4 - pad]);
    }
    out
}

#[test]
fn cardiac_run_on_a_generated_heart_activates_every_cell() {
    let d = tmp();
    let mesh = d.join("biv.msh");
    let m = generate(&mesh, "0.4", &[]);
    let out = d.join("run");
    let o = cardiac(&[
        "run",
        "--mesh",
        path_str(&mesh),
        "--scale",
        "10",
        "--stim-surface",
        "ENDO_LV",
        // Cells of 4 mm block the wave at the tissue's conductivities (its foot is 0.31 mm):
        // ten times σ_l widens it to 1 mm, and the whole heart activates in ≈ 35 ms.
        "--sigma-l",
        "1.334",
        "--sigma-t",
        "0.5",
        "--t-end",
        "300",
        "--tiles",
        "16",
        "--snapshot-every",
        "0",
        "--no-profile",
        "--out",
        path_str(&out),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "cardiac run:\n{err}");
    // The three cell models come from the mesh's cell types.
    let said = String::from_utf8_lossy(&o.stdout);
    for model in ["TP06 Endo", "TP06 Mid", "TP06 Epi"] {
        assert!(said.contains(model), "no {model} cells in:\n{said}");
    }
    let act = activation_ms(&out.join("activation.vtu"));
    assert_eq!(act.len(), m.num_cells());
    let never = act.iter().filter(|&&a| a < 0.0).count();
    assert_eq!(
        never,
        0,
        "{never} of {} cells never activated:\n{said}",
        act.len()
    );
    // From the LV endocardium (stimulated for 2 ms; the high σ drains its cells, which reach
    // the threshold just after) outwards, over the whole heart.
    let lv = m.cells_touching_surface("ENDO_LV").unwrap();
    let lv_last = lv.iter().map(|&c| act[c as usize]).fold(0.0, f32::max);
    let last = act.iter().cloned().fold(0.0, f32::max);
    assert!(lv_last < 3.0, "ENDO_LV activates by 3 ms: {lv_last} ms");
    assert!(last > 10.0 && last < 300.0, "last activation {last} ms");
    std::fs::remove_dir_all(&d).unwrap();
}
