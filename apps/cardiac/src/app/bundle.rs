//! What a cardiac executable carries besides its program, as application sections of the
//! executable file (`poplar::Executable::app_sections`): the run info the host needs to run
//! it, the probe cells of the benchmark points, and the mesh for VTU output. One file to copy,
//! nothing beside it to lose or mismatch.

use std::path::Path;

use anyhow::{bail, ensure, Context, Result};
use poplar::{DType, Executable};

use super::probes::Probes;
use crate::mesh::{ReadOptions, TetMesh};
use crate::solver::device::RunInfo;

/// Section holding the [`RunInfo`] (JSON).
pub const SECTION_RUN_INFO: &str = "cardiac.run-info";
/// Section holding the [`Probes`] (JSON).
pub const SECTION_PROBES: &str = "cardiac.probes";
/// Section holding the mesh in mesh cell order (VTU, base64).
pub const SECTION_MESH: &str = "cardiac.mesh.vtu";

/// Program indices of a cardiac executable: a chunk of `chunk_steps` ODE steps, and one step.
pub const PROGRAM_CHUNK: usize = 0;
pub const PROGRAM_ONE_STEP: usize = 1;

/// Stores the run info, probes and mesh in `exe`.
pub fn attach(exe: &mut Executable, info: &RunInfo, probes: &Probes, mesh: &TetMesh) -> Result<()> {
    exe.app_sections
        .insert(SECTION_RUN_INFO.into(), serde_json::to_vec(info)?);
    exe.app_sections
        .insert(SECTION_PROBES.into(), serde_json::to_vec(probes)?);
    let mut vtu = Vec::new();
    crate::mesh::vtu::write_vtu_to(
        &mut vtu,
        mesh,
        &[],
        &[],
        crate::mesh::vtu::VtuEncoding::Base64,
    )
    .context("encoding the mesh")?;
    exe.app_sections.insert(SECTION_MESH.into(), vtu);
    Ok(())
}

/// What `cardiac exec` reads from an executable.
pub struct Bundle {
    pub info: RunInfo,
    pub probes: Probes,
    pub mesh: TetMesh,
}

fn section<'a>(exe: &'a Executable, file: &Path, name: &str) -> Result<&'a [u8]> {
    match exe.app_sections.get(name) {
        Some(b) => Ok(b),
        None => bail!(
            "{} has no `{name}` section: not an executable written by `cardiac compile` \
             (recompile it with `cardiac compile -o {}`)",
            file.display(),
            file.display()
        ),
    }
}

/// Reads the sections of `exe` (loaded from `file`) and checks that the executable is what the
/// host loop needs: the host tensors `activation`, `v` (f32, one per cell) and `time` (f32,
/// one element), and the two programs.
pub fn read(exe: &Executable, file: &Path) -> Result<Bundle> {
    let info: RunInfo = serde_json::from_slice(section(exe, file, SECTION_RUN_INFO)?)
        .with_context(|| format!("{}: section `{SECTION_RUN_INFO}`", file.display()))?;
    let probes: Probes = serde_json::from_slice(section(exe, file, SECTION_PROBES)?)
        .with_context(|| format!("{}: section `{SECTION_PROBES}`", file.display()))?;
    let mesh = crate::mesh::vtu::read_vtu_bytes(
        section(exe, file, SECTION_MESH)?,
        &format!("{} (section {SECTION_MESH})", file.display()),
        &ReadOptions::default(),
    )?;
    check(exe, &info, file)?;
    ensure!(
        mesh.num_cells() == info.n,
        "{}: the mesh section has {} cells but the run info describes {}",
        file.display(),
        mesh.num_cells(),
        info.n
    );
    Ok(Bundle { info, probes, mesh })
}

/// Checks `exe` against `info`: everything the run loop reads exists with the right type and
/// size, so that running it can neither index out of bounds nor loop without end.
pub fn check(exe: &Executable, info: &RunInfo, file: &Path) -> Result<()> {
    let f = file.display();
    for (name, len) in [("activation", info.n), ("v", info.n), ("time", 1)] {
        let h = exe
            .host_tensors
            .iter()
            .find(|h| h.name == name)
            .with_context(|| {
                format!("{f} has no host tensor `{name}`: not a cardiac executable")
            })?;
        let elems: usize = h.shape.iter().product();
        ensure!(
            h.dtype == DType::F32 && h.readable && elems == len,
            "{f}: host tensor `{name}` is {:?} × {elems} (readable: {}), the host needs f32 × {len}",
            h.dtype,
            h.readable
        );
    }
    ensure!(
        info.new_to_old.len() == info.n && info.new_to_old.iter().all(|&o| (o as usize) < info.n),
        "{f}: the run info's cell numbering does not cover its {} cells",
        info.n
    );
    // A permutation: every mesh cell once. (A repeated one left another's results unwritten
    // and wrote over its own: silent garbage with a valid checksum.)
    let mut device_cell = vec![usize::MAX; info.n];
    for (new, &old) in info.new_to_old.iter().enumerate() {
        let first = std::mem::replace(&mut device_cell[old as usize], new);
        ensure!(
            first == usize::MAX,
            "{f}: the run info's cell numbering (new_to_old) is not a permutation of its {} \
             cells: mesh cell {old} is device cells {first} and {new}",
            info.n
        );
    }
    ensure!(
        info.chunk_steps >= 1 && info.dt_ode.is_finite() && info.dt_ode > 0.0,
        "{f}: the run info has chunk_steps {} and dt_ode {}",
        info.chunk_steps,
        info.dt_ode
    );
    ensure!(
        exe.programs.len() > PROGRAM_ONE_STEP,
        "{f} has {} program(s); a cardiac executable has a chunk program and a one-step program",
        exe.programs.len()
    );
    Ok(())
}
