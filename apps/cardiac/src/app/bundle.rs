//! What a cardiac executable carries besides its program, as application sections of the
//! executable file (`poplar::Executable::app_sections`): the run info the host needs to run
//! it, the probe cells of the benchmark points, and the mesh for VTU output. One file to copy,
//! nothing beside it to lose or mismatch.

use std::path::Path;

use anyhow::{bail, ensure, Context, Result};
use poplar::exe::Step;
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
    // The run loop checks progress between engine runs: a program that runs far longer than
    // its run info says (a crafted repeat count) would run for days before the first check.
    let per_step = PHASES_PER_ODE_STEP_BOUND * (info.pde_steps as u64 + 1);
    for (program, ode_steps) in [(0, u64::from(info.chunk_steps)), (PROGRAM_ONE_STEP, 1)] {
        let phases = phases(exe, &exe.programs[program], 0);
        let bound = per_step.saturating_mul(ode_steps);
        ensure!(
            phases.is_some_and(|n| n <= bound),
            "{f}: program {program} runs {} phases, more than the {bound} of {ode_steps} ODE \
             step(s) with {} PDE steps each: not the program its run info describes",
            phases.map_or("an unbounded number of".to_string(), |n| n.to_string()),
            info.pde_steps
        );
    }
    Ok(())
}

/// Most compute and exchange phases one ODE step runs, per PDE step or ODE stage, with room to
/// spare: a PDE step is an exchange and a compute phase, the ODE step one compute phase.
const PHASES_PER_ODE_STEP_BOUND: u64 = 8;

/// Compute and exchange phases `step` runs, repeats multiplied out (saturating); `None` for a
/// loop on device data (`While`), which a cardiac program never has, or calls nested beyond
/// what a cardiac program needs.
fn phases(exe: &Executable, step: &Step, depth: u32) -> Option<u64> {
    if depth > 16 {
        return None;
    }
    match step {
        Step::Seq(v) => v.iter().try_fold(0u64, |acc, s| {
            Some(acc.saturating_add(phases(exe, s, depth + 1)?))
        }),
        Step::Label { body, .. } => phases(exe, body, depth + 1),
        Step::Compute(_) | Step::Exchange(_) | Step::Remote(_) => Some(1),
        Step::OverlapIo { io, compute } => {
            Some(phases(exe, io, depth + 1)?.saturating_add(phases(exe, compute, depth + 1)?))
        }
        Step::Repeat { count, body } => {
            Some(phases(exe, body, depth + 1)?.saturating_mul(u64::from(*count)))
        }
        Step::If { then, else_, .. } => {
            Some(phases(exe, then, depth + 1)?.max(phases(exe, else_, depth + 1)?))
        }
        Step::Switch { cases, default, .. } => {
            let most = cases
                .iter()
                .map(|(_, s)| phases(exe, s, depth + 1))
                .try_fold(0u64, |acc, n| Some(acc.max(n?)))?;
            Some(most.max(phases(exe, default, depth + 1)?))
        }
        Step::Call(fun) => phases(exe, exe.functions.get(*fun)?, depth + 1),
        Step::While { .. } => None,
        Step::Sync(_) | Step::StreamIn { .. } | Step::StreamOut { .. } => Some(0),
    }
}
