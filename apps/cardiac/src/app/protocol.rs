//! Stimulus protocols and tissue regions as a modeller writes them: regions (box, sphere,
//! surface tag, a list of cells from a file), extra stimulus sites with their own timing, the
//! S1–S2 pulse, and per-region cell types and TP06 conductance scalings. Parsed from the
//! command line (`--stim-site`, `--region`) or read from the parameter file, and turned into
//! the solver's [`Stimulus`] list and [`CellModels`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};

use crate::mesh::{CellType, TetMesh};
use crate::solver::{CellModels, Stimulus};
use crate::tp06::{CellModel, Scalings};

/// Where the stimulus goes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StimRegion {
    /// The Niederer corner cube.
    NiedererCube,
    /// Cells whose centroids lie in the box (min and max corners, mm).
    Box([f64; 3], [f64; 3]),
    /// Cells whose centroids lie in the sphere (centre, radius, mm).
    Sphere([f64; 3], f64),
    /// Cells with a face on the tagged surface.
    Surface(String),
    /// The cells listed in a text file (0-based indices; [`read_cell_list`]).
    Cells(PathBuf),
}

/// A stimulus site besides the main one, with its own region and timing (the main one is
/// `ProblemSpec`'s `stim`, `stim_*`, `beats`, `bcl` and `s2`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SiteSpec {
    pub region: StimRegion,
    /// Current density (µA/mm³), pulse length and first pulse (ms).
    pub density: f64,
    pub duration: f64,
    pub start: f64,
    /// `beats` pulses every `bcl` ms.
    pub beats: u32,
    pub bcl: f64,
    /// S2: one more pulse this many ms after the last of the `beats`.
    pub s2: Option<f64>,
}

impl Default for SiteSpec {
    fn default() -> Self {
        SiteSpec {
            region: StimRegion::NiedererCube,
            density: crate::solver::NIEDERER_STIM_DENSITY,
            duration: crate::solver::NIEDERER_STIM_DURATION,
            start: 0.0,
            beats: 1,
            bcl: 1000.0,
            s2: None,
        }
    }
}

/// A tissue region with its own cell type and/or TP06 scalings. Regions apply in order (a
/// later one wins for the cell type; scalings multiply).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionSpec {
    pub region: StimRegion,
    #[serde(default)]
    pub cell_type: Option<CellType>,
    #[serde(default)]
    pub scale: Scalings,
}

/// Parses a region: `box:x0,y0,z0,x1,y1,z1`, `sphere:cx,cy,cz,r` (mm), `surface:TAG`,
/// `cells:FILE` or `corner` (the Niederer corner cube).
pub fn parse_region(text: &str) -> Result<StimRegion> {
    parse_region_of(text, "region")
}

/// [`parse_region`] of the option `of` (`--stim-site`, `--region`), which errors name.
fn parse_region_of(text: &str, of: &str) -> Result<StimRegion> {
    let text = text.trim();
    if text == "corner" {
        return Ok(StimRegion::NiedererCube);
    }
    let (kind, arg) = text.split_once(':').with_context(|| {
        format!("{of} {text:?}: write box:x0,y0,z0,x1,y1,z1, sphere:cx,cy,cz,r, surface:TAG, cells:FILE or corner")
    })?;
    let numbers = |n: usize, what: &str| -> Result<Vec<f64>> {
        let v: Vec<f64> = arg
            .split(',')
            .map(|x| x.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .with_context(|| format!("{of} {text:?}: {what} must be numbers"))?;
        ensure!(
            v.len() == n,
            "{of} {text:?}: {kind} takes {n} finite numbers ({what}), got {}",
            v.len()
        );
        if let Some(x) = v.iter().find(|x| !x.is_finite()) {
            bail!("{of} {text:?}: {x} is not a finite number ({kind} takes {what})");
        }
        Ok(v)
    };
    Ok(match kind.trim() {
        "box" => {
            let b = numbers(6, "x0,y0,z0,x1,y1,z1 in mm")?;
            StimRegion::Box([b[0], b[1], b[2]], [b[3], b[4], b[5]])
        }
        "sphere" => {
            let c = numbers(4, "cx,cy,cz,r in mm")?;
            StimRegion::Sphere([c[0], c[1], c[2]], c[3])
        }
        "surface" => StimRegion::Surface(arg.trim().to_string()),
        "cells" => StimRegion::Cells(PathBuf::from(arg.trim())),
        other => {
            bail!("{of} {text:?}: unknown kind {other:?} (box, sphere, surface, cells or corner)")
        }
    })
}

/// Parses `--stim-site REGION[;key=value]...` with keys `amplitude` (µA/mm³), `duration`,
/// `start`, `bcl`, `s2` (ms) and `beats`.
pub fn parse_site(text: &str) -> Result<SiteSpec> {
    let mut parts = text.split(';');
    let region = parse_region_of(parts.next().unwrap_or(""), "--stim-site")?;
    let mut site = SiteSpec {
        region,
        ..SiteSpec::default()
    };
    let mut given: Vec<&str> = Vec::new();
    for kv in parts.map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .with_context(|| format!("--stim-site {text:?}: {kv:?} is not key=value"))?;
        ensure!(
            !given.contains(&k.trim()),
            "--stim-site {text:?}: key {} is given twice: give each key once",
            k.trim()
        );
        given.push(k.trim());
        let num = || -> Result<f64> {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .with_context(|| format!("--stim-site {text:?}: {k} = {v:?} is not a number"))
        };
        match k.trim() {
            "amplitude" => site.density = num()?,
            "duration" => site.duration = num()?,
            "start" => site.start = num()?,
            "bcl" => site.bcl = num()?,
            "s2" => site.s2 = Some(num()?),
            "beats" => {
                site.beats = v.trim().parse().with_context(|| {
                    format!("--stim-site {text:?}: beats = {v:?} is not a whole number")
                })?
            }
            other => bail!(
                "--stim-site {text:?}: unknown key {other:?} (amplitude, duration, start, beats, bcl, s2)"
            ),
        }
    }
    Ok(site)
}

/// Parses `--region REGION[;cell-type=endo|mid|epi][;GKr*0.5,...]`.
pub fn parse_region_spec(text: &str) -> Result<RegionSpec> {
    let mut parts = text.split(';');
    let region = parse_region_of(parts.next().unwrap_or(""), "--region")?;
    let mut spec = RegionSpec {
        region,
        cell_type: None,
        scale: Scalings::ONE,
    };
    // The scalings of every item at once, so that a parameter given twice is named.
    let mut scalings: Vec<&str> = Vec::new();
    for item in parts.map(str::trim).filter(|p| !p.is_empty()) {
        if let Some(ct) = item
            .strip_prefix("cell-type=")
            .or(item.strip_prefix("cell_type="))
        {
            ensure!(
                spec.cell_type.is_none(),
                "--region {text:?}: cell-type is given twice: give it once"
            );
            spec.cell_type = Some(match ct.trim() {
                "endo" => CellType::Endo,
                "mid" => CellType::Mid,
                "epi" => CellType::Epi,
                other => bail!("--region {text:?}: cell type {other:?} is not endo, mid or epi"),
            });
        } else {
            scalings.push(item);
        }
    }
    spec.scale = spec
        .scale
        .parse_onto(&scalings.join(","))
        .map_err(|e| anyhow::anyhow!("--region {text:?}: {e}"))?;
    ensure!(
        spec.cell_type.is_some() || !spec.scale.is_one(),
        "--region {text:?} changes nothing: add ;cell-type=endo|mid|epi and/or scalings such as ;GKr*0.5"
    );
    Ok(spec)
}

/// Reads a list of cells (0-based indices into the mesh's cells): whitespace- or
/// comma-separated, `#` starts a comment. Errors name the file and line.
pub fn read_cell_list(path: &Path, n: usize) -> Result<Vec<u32>> {
    let text = app_support::input::read_to_string(path)
        .with_context(|| format!("reading the cell list {}", path.display()))?;
    let mut cells = Vec::new();
    for (line_no, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for tok in line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
        {
            let c: u32 = tok.parse().with_context(|| {
                format!(
                    "{}:{}: {tok:?} is not a cell index (0-based whole number)",
                    path.display(),
                    line_no + 1
                )
            })?;
            ensure!(
                (c as usize) < n,
                "{}:{}: cell {c} is out of range: the mesh has {n} cells (0 to {})",
                path.display(),
                line_no + 1,
                n.saturating_sub(1)
            );
            cells.push(c);
        }
    }
    cells.sort_unstable();
    cells.dedup();
    Ok(cells)
}

/// The solver stimulus of a site on `mesh`, its cells from [`stimulus_cells`].
pub fn site_stimulus(
    site: &SiteSpec,
    cells: Vec<u32>,
    dt_ode: f64,
    what: &str,
) -> Result<Stimulus> {
    check_timing(
        what,
        site.density,
        site.duration,
        site.start,
        site.beats,
        site.bcl,
        site.s2,
        dt_ode,
    )?;
    Ok(Stimulus {
        cells,
        density: site.density,
        start: site.start,
        duration: site.duration,
        period: if site.beats > 1 { site.bcl } else { 0.0 },
        count: site.beats,
        s2: site.s2,
    })
}

/// Latest pulse start, and longest pulse, of a stimulus (ms): the longest run of the largest
/// ODE step, [`crate::app::run::MAX_RUN_STEPS`] × [`crate::app::run::MAX_DT_ODE`] (1,200,000 ms,
/// 20 minutes of heart time). A pulse later than that is reached by no run.
pub const MAX_PULSE_TIME: f64 = crate::app::run::MAX_RUN_STEPS * crate::app::run::MAX_DT_ODE;

/// Checks a pulse schedule; errors name the option (`what` is `--stim` for the main site,
/// `--stim-site N` for the others).
#[allow(clippy::too_many_arguments)]
pub fn check_timing(
    what: &str,
    density: f64,
    duration: f64,
    start: f64,
    beats: u32,
    bcl: f64,
    s2: Option<f64>,
    dt_ode: f64,
) -> Result<()> {
    // The main site's settings are options of their own; another site's are keys of its
    // `--stim-site`.
    let name = |key: &str| -> String {
        if what == "--stim" {
            match key {
                "amplitude" => "--stim-amplitude",
                "duration" => "--stim-duration",
                "start" => "--stim-start",
                "beats" => "--beats",
                "bcl" => "--bcl",
                _ => "--s2",
            }
            .to_string()
        } else {
            format!("{what}: {key}")
        }
    };
    ensure!(
        density.is_finite() && density > 0.0,
        "{} {density} µA/mm³ must be positive (it depolarises)",
        name("amplitude")
    );
    ensure!(
        duration.is_finite() && duration >= dt_ode,
        "{} {duration} ms must be at least one ODE step ({dt_ode} ms)",
        name("duration")
    );
    ensure!(
        start.is_finite() && start >= 0.0,
        "{} {start} ms must be 0 or later",
        name("start")
    );
    ensure!(
        (1..=10_000).contains(&beats),
        "{} {beats} must be 1 to 10,000",
        name("beats")
    );
    ensure!(
        bcl.is_finite() && bcl > 0.0 && (beats == 1 || bcl > duration),
        "{} {bcl} ms must be longer than the pulse ({duration} ms)",
        name("bcl")
    );
    if let Some(s2) = s2 {
        ensure!(
            s2.is_finite() && s2 > duration,
            "{} {s2} ms (the S2 coupling interval) must be longer than the pulse ({duration} ms)",
            name("s2")
        );
    }
    // Every pulse starts within the longest run of any time step, and lasts no longer: a
    // paced run lasts until a cycle after its last pulse, and no time is an f32 infinity on
    // the device. (The run's own length is checked against its step by `run::check_work`.)
    let longest = MAX_PULSE_TIME;
    let last = start + f64::from(beats - 1) * bcl;
    for (key, at, value) in [
        ("start", start, start),
        ("duration", duration, duration),
        ("bcl", last, bcl),
        ("s2", last + s2.unwrap_or(0.0), s2.unwrap_or(0.0)),
    ] {
        ensure!(
            at <= longest,
            "{} {} ms puts a pulse past the longest run, {} ms ({} steps of the largest \
             --dt-ode, {} ms: the device's f32 clock counts no further)",
            name(key),
            crate::format::show(value),
            crate::format::grouped(longest),
            crate::format::grouped(crate::app::run::MAX_RUN_STEPS),
            crate::app::run::MAX_DT_ODE
        );
    }
    Ok(())
}

/// The cell models of a problem: each cell's type (the mesh's; the slab is epi) changed by the
/// regions that contain it (the last one wins), with the global scalings times those of every
/// region containing it. Distinct models are numbered in order of first appearance.
pub fn cell_models(
    mesh: &TetMesh,
    global: &Scalings,
    regions: &[(RegionSpec, Vec<u32>)],
) -> Result<CellModels> {
    global.check().map_err(|e| anyhow::anyhow!("--tp06: {e}"))?;
    let n = mesh.num_cells();
    let mut types: Vec<CellType> = match &mesh.cell_types {
        Some(ct) => ct.clone(),
        None => vec![CellType::Epi; n],
    };
    let mut scales = vec![*global; n];
    for (k, (r, cells)) in regions.iter().enumerate() {
        r.scale
            .check()
            .map_err(|e| anyhow::anyhow!("region {}: {e}", k + 1))?;
        for &c in cells {
            let c = c as usize;
            if let Some(t) = r.cell_type {
                types[c] = t;
            }
            let mut s = scales[c];
            for ((name, f), (_, g)) in s.entries().into_iter().zip(r.scale.entries()) {
                s.set(name, f * g)
                    .map_err(|e| anyhow::anyhow!("region {}: {e}", k + 1))?;
            }
            scales[c] = s;
        }
    }
    let mut models: Vec<CellModel> = Vec::new();
    let mut index: HashMap<(CellType, [u64; 12]), u8> = HashMap::new();
    let mut cell_model = Vec::with_capacity(n);
    for (t, s) in types.iter().zip(&scales) {
        let key = (*t, s.entries().map(|(_, v)| v.to_bits()));
        let id = match index.get(&key) {
            Some(&id) => id,
            None => {
                ensure!(
                    models.len() < 256,
                    "the regions make more than 256 distinct cell models"
                );
                models.push(CellModel {
                    cell_type: *t,
                    scale: *s,
                });
                let id = (models.len() - 1) as u8;
                index.insert(key, id);
                id
            }
        };
        cell_model.push(id);
    }
    Ok(CellModels { models, cell_model })
}

/// The stimulated cells and a description of the region of the main stimulus (errors name
/// `--stim-box`, `--stim-sphere`, `--stim-surface` or `--stim-cells`).
pub fn stimulus_cells(mesh: &TetMesh, region: &StimRegion) -> Result<(Vec<u32>, String)> {
    stimulus_cells_of(mesh, region, None)
}

/// The cells of a region and a description of it; `of` names the option it belongs to in
/// errors (`--region 2`, `--stim-site 1`), `None` the main stimulus' options.
pub fn stimulus_cells_of(
    mesh: &TetMesh,
    region: &StimRegion,
    of: Option<&str>,
) -> Result<(Vec<u32>, String)> {
    // The option at fault: the main stimulus' own, or `--region 2: box`.
    let opt = |main: &str, kind: &str| match of {
        Some(o) => format!("{o}: {kind}"),
        None => main.to_string(),
    };
    let (cells, what) = match region {
        StimRegion::Box(lo, hi) => {
            ensure!(
                (0..3).all(|i| lo[i] <= hi[i]),
                "{} {lo:?}..{hi:?}: each min corner coordinate must be <= the max one",
                opt("--stim-box", "box")
            );
            (
                mesh.cells_in_box(*lo, *hi),
                format!("box {lo:?}..{hi:?} mm"),
            )
        }
        StimRegion::Sphere(c, r) => {
            ensure!(
                r.is_finite() && *r > 0.0,
                "{} radius {r} mm must be positive",
                opt("--stim-sphere", "sphere")
            );
            (
                mesh.cells_in_sphere(*c, *r),
                format!("sphere {c:?} r {r} mm"),
            )
        }
        StimRegion::Surface(tag) => (
            mesh.cells_touching_surface(tag)
                .with_context(|| opt("--stim-surface", "surface"))?,
            format!("surface {tag}"),
        ),
        StimRegion::NiedererCube => (
            Stimulus::niederer(mesh).cells,
            "the corner cube [0, 1.5]³ mm".to_string(),
        ),
        StimRegion::Cells(path) => (
            read_cell_list(path, mesh.num_cells()).with_context(|| opt("--stim-cells", "cells"))?,
            format!("cells listed in {}", path.display()),
        ),
    };
    if cells.is_empty() {
        let bb = mesh
            .bounding_box()
            .map(|(lo, hi)| format!("; the mesh spans {lo:.3?} to {hi:.3?} mm"))
            .unwrap_or_default();
        let label = match (of, region) {
            (Some(o), _) => o.to_string(),
            (None, StimRegion::Box(..)) => "--stim-box".into(),
            (None, StimRegion::Sphere(..)) => "--stim-sphere".into(),
            (None, StimRegion::Surface(..)) => "--stim-surface".into(),
            (None, StimRegion::Cells(..)) => "--stim-cells".into(),
            (None, StimRegion::NiedererCube) => "the stimulus".into(),
        };
        bail!("{label}: the region ({what}) contains no cell centroid{bb}");
    }
    Ok((cells, what))
}
