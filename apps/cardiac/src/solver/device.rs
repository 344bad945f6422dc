//! The solver on the poplar framework: METIS partition → per-tile local vectors as concatenated
//! tensor views → compiled executable → engine.
//!
//! Device tensors (new, tile-contiguous numbering):
//! - `s`, shape `[19·N]`: each tile's TP06 states, state-major within the tile; its V rows are the
//!   voltage. `V` is the view concatenating every tile's V rows.
//! - `w`, shape `[N]`: the second voltage buffer of the diffusion ping-pong.
//! - per tile constants: ELLPACK diag/values/cols (columns index the local vector), cell type,
//!   stimulus current; `v_prev`, `act`, and one `time` scalar per tile.
//!
//! A diffusion step reads `concat([halo ranges…, own slice])` of `V` (or `w`) and writes `w`
//! (or `V`); the framework infers the halo exchange from the views. The app writes no exchange.
//! With the halo first, the own slice starts the tile's segment of `s` (or `w`), and the
//! compiler receives the halo into slack right before it (see [`compile_problem`]): no per-step
//! copy of the own slice.
//! With an odd number of diffusion steps the last result is in `w`, and the ODE vertices
//! (`cardiac::Tp06StepFrom`) take the voltage from there instead of a copy program.

use std::ops::Range;

use poplar::{
    compile, CompileOptions, ComputeSet, DType, Engine, EngineOptions, Executable, Graph,
    InPlaceConcat, Program, Target, Tensor,
};
use serde::{Deserialize, Serialize};

use super::{Results, Setup};
use crate::matrix::ELL_WIDTH;
use crate::partition::{
    hierarchical_parts_on, kway_parts, localize, plan, round_part_sizes, ChipLinks, PartitionPlan,
    Partitioning, PlanOptions, Strategy, TileShape,
};
use crate::tp06;

/// How to place the problem on the machine.
#[derive(Debug, Clone)]
pub struct DeviceConfig {
    pub target: Target,
    /// Tiles used (METIS parts); at most the target's tiles and the cell count.
    pub tiles: usize,
    pub strategy: Strategy,
    /// ODE steps per engine run (the host checks progress between runs).
    pub chunk_steps: u32,
    /// Always use 32-bit ELLPACK column indices (`cardiac::EllSpmv`). By default a tile whose
    /// local vector is at most 65,536 long, which is every tile in practice, gets 16-bit ones
    /// (`cardiac::EllSpmv16`), so its SpMV streams a quarter fewer bytes.
    pub wide_indices: bool,
    /// Round each tile's cell count to a multiple of this, the TP06 kernel's tail block, by
    /// moving a few boundary cells after METIS ([`round_part_sizes`]); only when tiles average
    /// at least 16 times as many cells, so that the sizes move by a few per cent at most. 1
    /// keeps METIS' parts.
    pub cell_multiple: usize,
    /// Flat METIS over all tiles, or chips then tiles ([`Partitioning`]).
    pub partitioning: Partitioning,
    /// The pseudo-ECG's electrodes and weights: with them the executable has a third
    /// program, [`PROGRAM_ECG`] ([`crate::ecg`]).
    pub ecg: Option<crate::ecg::EcgDevice>,
}

/// The program that runs a chunk of ODE steps.
pub const PROGRAM_CHUNK: usize = 0;
/// The program that runs one ODE step.
pub const PROGRAM_STEP: usize = 1;
/// The program that computes φ_e at the electrodes into the host tensor `ecg` (executables
/// built with [`DeviceConfig::ecg`]).
pub const PROGRAM_ECG: usize = 2;

impl DeviceConfig {
    /// All tiles of `chips` GC200-class chips, mixed-clean halos.
    pub fn chips(chips: u32, strategy: Strategy) -> Self {
        let target = Target::gc200_multi(chips);
        DeviceConfig {
            tiles: target.num_tiles() as usize,
            target,
            strategy,
            chunk_steps: 250,
            wide_indices: false,
            cell_multiple: tp06::TAIL_BLOCK,
            partitioning: Partitioning::Flat,
            ecg: None,
        }
    }
}

/// What the host needs besides the executable to run it and read its results (carried inside a
/// compiled executable by `cardiac compile`, as an application section of the file).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInfo {
    pub n: usize,
    pub dt_ode: f32,
    pub pde_steps: usize,
    pub chunk_steps: u32,
    /// New (device) index → mesh cell.
    pub new_to_old: Vec<u32>,
    /// Device cell ranges per tile.
    pub tile_cells: Vec<Range<usize>>,
    /// Electrodes of the pseudo-ECG (0: no ECG program).
    #[serde(default)]
    pub ecg_electrodes: usize,
}

/// The host tensors (read and write) of every variable the program mutates, whole and in
/// device order: the complete state of a run between device runs, which a checkpoint saves
/// and a resumed run writes back. The TP06 states of every cell (V among them), the second
/// diffusion buffer (rewritten before it is read in every step, saved all the same so that a
/// resumed engine's memory is the uninterrupted one's), V of the previous step, the activation
/// time, the latest upstroke and repolarisation, and the device's f32 clock (one per tile).
/// The pacing protocol has no state of its own: every pulse is a function of that clock and
/// the stimulus tables, which are constants.
pub const STATE_TENSORS: [&str; 7] = [
    "state/states",
    "state/v_tmp",
    "state/v_prev",
    "state/activation",
    "state/last_up",
    "state/last_down",
    "state/time",
];

/// A built device problem: the graph, its programs, and the run info.
pub struct DeviceProblem {
    pub graph: Graph,
    pub programs: Vec<Program>,
    pub info: RunInfo,
    pub plan: PartitionPlan,
}

/// Errors of the device solver.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("partition: {0}")]
    Partition(#[from] crate::partition::PartitionError),
    #[error("graph: {0}")]
    Graph(#[from] poplar::GraphError),
    #[error("compile: {0}")]
    Compile(#[from] poplar::CompileError),
    #[error("engine: {0}")]
    Engine(#[from] poplar::EngineError),
    #[error("{0}")]
    Config(String),
}

/// Partitions and builds the graph.
pub fn build(setup: &Setup, cfg: &DeviceConfig) -> Result<DeviceProblem, DeviceError> {
    super::codelets::link();
    codelets::link();
    let k = cfg.tiles.min(setup.n).min(cfg.target.num_tiles() as usize);
    if k == 0 {
        return Err(DeviceError::Config("no tiles or no cells".into()));
    }
    let (parts, tile_of) = cut(setup, cfg, k)?;
    let k = tile_of.len();
    let part_chip: Vec<u32> = tile_of.iter().map(|&t| cfg.target.ipu_of(t)).collect();
    let options = PlanOptions {
        cell_model: Some(&setup.cell_model),
        part_chip: Some(&part_chip),
    };
    let plan = plan(&parts, k, &setup.ell, cfg.strategy, &options)?;
    let locals = localize(&setup.ell, &plan)?;
    let n = setup.n;
    let ns = tp06::N_STATES;

    let mut g = Graph::new(&cfg.target);
    let s = g.add_variable(DType::F32, &[ns * n], "states");
    let w = g.add_variable(DType::F32, &[n], "v_tmp");
    let v_prev = g.add_variable(DType::F32, &[n], "v_prev");
    let act = g.add_variable(DType::F32, &[n], "activation");
    let last_up = g.add_variable(DType::F32, &[n], "last_up");
    let last_down = g.add_variable(DType::F32, &[n], "last_down");
    let time = g.add_variable(DType::F32, &[k], "time");

    // Per-tile views of the voltage rows, and the global voltage view in device order.
    let mut v_rows = Vec::with_capacity(k);
    // The cell-model and stimulus tables, the same on every tile (a few hundred bytes).
    let model_table = setup.model_table();
    let (site_table, class_start, mut class_sites) = setup.stim_tables();
    if class_sites.is_empty() {
        // No stimulated cell: a one-entry table that no class reaches (no zero-length
        // constants).
        class_sites.push(0);
    }
    for (t, tp) in plan.tiles.iter().enumerate() {
        let c = &tp.cells;
        let tile = tile_of[t];
        g.set_tile_mapping(&s.slice(ns * c.start..ns * c.end)?, tile)?;
        for x in [&w, &v_prev, &act, &last_up, &last_down] {
            g.set_tile_mapping(&x.slice(c.clone())?, tile)?;
        }
        g.set_tile_mapping(&time.slice(t..t + 1)?, tile)?;
        v_rows.push(s.slice(ns * c.start..ns * c.start + c.len())?);
    }
    let v_all = poplar::concat(&v_rows)?;

    // Initial values: states (device layout), v_prev = V, act = -1, time = 0.
    let (s0, init) = device_states(setup, &plan);
    g.set_initial_value(&s, &s0)?;
    let v0: Vec<f32> = plan.new_to_old.iter().map(|&o| init[o as usize]).collect();
    g.set_initial_value(&v_prev, &v0)?;
    g.set_initial_value(&act, &vec![-1.0f32; n])?;
    g.set_initial_value(&last_up, &vec![-1.0f32; n])?;
    g.set_initial_value(&last_down, &vec![-1.0f32; n])?;
    g.set_initial_value(&time, &vec![0.0f32; k])?;

    let cs_a = g.add_compute_set("PDE V->w");
    let cs_b = g.add_compute_set("PDE w->V");
    let cs_ode = g.add_compute_set("ODE");
    // The pseudo-ECG: one partial per electrode per tile, then a sum over groups of tiles.
    let ecg = match cfg.ecg.as_ref().filter(|e| e.electrodes > 0) {
        Some(e) => Some(ecg_partials(&mut g, e, n, k)?),
        None => None,
    };
    let tiles = TileBuild {
        setup,
        new_to_old: &plan.new_to_old,
        wide_indices: cfg.wide_indices,
        s: s.clone(),
        w: w.clone(),
        v_prev: v_prev.clone(),
        act: act.clone(),
        last_up: last_up.clone(),
        last_down: last_down.clone(),
        time: time.clone(),
        v_all: v_all.clone(),
        cs_a,
        cs_b,
        cs_ode,
        ecg,
        model_table,
        site_table,
        class_start,
        class_sites,
    };
    for (t, (tp, le)) in plan.tiles.iter().zip(&locals).enumerate() {
        add_tile(&mut g, &tiles, t, tile_of[t], tp, le)?;
    }
    add_host_tensors(&mut g, &tiles)?;
    let body = step_program(&tiles);
    let ecg = tiles.ecg;
    // Program 0 runs a chunk of steps, program 1 one step (to stop exactly at any time).
    let mut programs = vec![Program::repeat(cfg.chunk_steps, body.clone()), body];
    let mut ecg_electrodes = 0;
    if let Some((e, partials, cs)) = &ecg {
        programs.push(ecg_sum(&mut g, *cs, partials, e.electrodes, &tile_of)?);
        ecg_electrodes = e.electrodes;
    }
    let info = RunInfo {
        n,
        dt_ode: setup.dt_ode,
        pde_steps: setup.pde_steps,
        chunk_steps: cfg.chunk_steps,
        new_to_old: plan.new_to_old.clone(),
        tile_cells: plan.tiles.iter().map(|t| t.cells.clone()).collect(),
        ecg_electrodes,
    };
    Ok(DeviceProblem {
        graph: g,
        programs,
        info,
        plan,
    })
}

/// The initial states in device layout (each tile's cells, state-major), and in mesh layout.
fn device_states(setup: &Setup, plan: &PartitionPlan) -> (Vec<f32>, Vec<f32>) {
    let (n, ns) = (setup.n, tp06::N_STATES);
    let init = setup.initial_states();
    let mut s0 = vec![0.0f32; ns * n];
    for tp in &plan.tiles {
        let c = &tp.cells;
        for kk in 0..ns {
            for (j, gi) in c.clone().enumerate() {
                s0[ns * c.start + kk * c.len() + j] = init[kk * n + plan.new_to_old[gi] as usize];
            }
        }
    }
    (s0, init)
}

/// The ECG's part of the graph: its weights (checked against `n` cells), the partials of its
/// electrodes on `k` tiles, and their compute set.
fn ecg_partials<'a>(
    g: &mut Graph,
    e: &'a crate::ecg::EcgDevice,
    n: usize,
    k: usize,
) -> Result<(&'a crate::ecg::EcgDevice, Tensor, ComputeSet), DeviceError> {
    if e.weights.len() != e.electrodes * n {
        return Err(DeviceError::Config(format!(
            "ECG weights: {} for {} electrodes × {n} cells",
            e.weights.len(),
            e.electrodes
        )));
    }
    let partials = g.add_variable(DType::F32, &[k * e.electrodes], "ecg_partials");
    Ok((e, partials, g.add_compute_set("ECG partials")))
}

/// The tensors the host reads (activation, crossings, V, time) and, for checkpoints, every
/// variable the program mutates, whole ([`STATE_TENSORS`]).
fn add_host_tensors(g: &mut Graph, b: &TileBuild) -> Result<(), DeviceError> {
    g.create_host_read("activation", &b.act)?;
    g.create_host_read("last_up", &b.last_up)?;
    g.create_host_read("last_down", &b.last_down)?;
    g.create_host_read("v", &b.v_all)?;
    g.create_host_read("time", &b.time.slice(0..1)?)?;
    for (name, x) in STATE_TENSORS.iter().zip([
        &b.s,
        &b.w,
        &b.v_prev,
        &b.act,
        &b.last_up,
        &b.last_down,
        &b.time,
    ]) {
        g.create_host_read_write(name, x)?;
    }
    Ok(())
}

/// One ODE step: the diffusion substeps (V → w → V ping-pong; an odd last one leaves the
/// result in `w`, where `cardiac::Tp06StepFrom` reads it), then the reaction.
fn step_program(b: &TileBuild) -> Program {
    let p = b.setup.pde_steps;
    let mut pde = vec![Program::repeat(
        (p / 2) as u32,
        Program::seq(vec![Program::execute(b.cs_a), Program::execute(b.cs_b)]),
    )];
    if p % 2 == 1 {
        pde.push(Program::execute(b.cs_a));
    }
    Program::seq(vec![
        Program::labelled("PDE", pde),
        Program::labelled("ODE", vec![Program::execute(b.cs_ode)]),
    ])
}

/// What every tile's vertices connect to: the set-up, the variables (device numbering), the
/// compute sets, the ECG's part and the tables every tile holds a copy of.
struct TileBuild<'a> {
    setup: &'a Setup,
    new_to_old: &'a [u32],
    wide_indices: bool,
    s: Tensor,
    w: Tensor,
    v_prev: Tensor,
    act: Tensor,
    last_up: Tensor,
    last_down: Tensor,
    time: Tensor,
    /// Every tile's V rows, concatenated.
    v_all: Tensor,
    cs_a: ComputeSet,
    cs_b: ComputeSet,
    cs_ode: ComputeSet,
    /// The ECG's weights, its partials (per tile) and their compute set.
    ecg: Option<(&'a crate::ecg::EcgDevice, Tensor, ComputeSet)>,
    model_table: Vec<f32>,
    site_table: Vec<f32>,
    class_start: Vec<u32>,
    class_sites: Vec<u8>,
}

/// The halo-extended local view of `x` on a tile: its halo ranges, then its own cells.
fn local_of(x: &Tensor, tp: &crate::partition::TilePlan) -> Result<Tensor, poplar::GraphError> {
    let mut parts = Vec::with_capacity(tp.halo_ranges.len() + 1);
    for r in &tp.halo_ranges {
        parts.push(x.slice(r.clone())?);
    }
    parts.push(x.slice(tp.cells.clone())?);
    poplar::concat(&parts)
}

/// Tile `t`'s constants (its operator rows, cell models, stimulus classes, the tables) and
/// vertices (the two diffusion half-steps, the ODE step, the ECG partials), on `tile`.
fn add_tile(
    g: &mut Graph,
    b: &TileBuild,
    t: usize,
    tile: u32,
    tp: &crate::partition::TilePlan,
    le: &crate::partition::LocalEllpack,
) -> Result<(), DeviceError> {
    let ns = tp06::N_STATES;
    let m = tp.cells.len();
    let diag = g.add_constant(&[m], &le.diag, &format!("diag{t}"))?;
    let values = g.add_constant(&[m * ELL_WIDTH], &le.values, &format!("values{t}"))?;
    // Half-width column indices whenever the local vector allows them (always, in
    // practice: a tile holds far fewer than 65,536 cells of halo-extended vector).
    let (cols, spmv) = if !b.wide_indices && le.n_local <= usize::from(u16::MAX) + 1 {
        let c16: Vec<u16> = le.cols.iter().map(|&c| c as u16).collect();
        let cols = g.add_constant(&[m * ELL_WIDTH], &c16, &format!("cols{t}"))?;
        (cols, "cardiac::EllSpmv16")
    } else {
        let cols = g.add_constant(&[m * ELL_WIDTH], &le.cols, &format!("cols{t}"))?;
        (cols, "cardiac::EllSpmv")
    };
    let old: Vec<usize> = tp
        .cells
        .clone()
        .map(|gi| b.new_to_old[gi] as usize)
        .collect();
    let ct: Vec<u8> = old.iter().map(|&o| b.setup.cell_model[o]).collect();
    let st: Vec<u8> = old.iter().map(|&o| b.setup.stim_class[o]).collect();
    let ct = g.add_constant(&[m], &ct, &format!("cell_model{t}"))?;
    let st = g.add_constant(&[m], &st, &format!("stim_class{t}"))?;
    let models = g.add_constant(
        &[b.model_table.len()],
        &b.model_table,
        &format!("models{t}"),
    )?;
    let sites = g.add_constant(&[b.site_table.len()], &b.site_table, &format!("sites{t}"))?;
    let cstart = g.add_constant(
        &[b.class_start.len()],
        &b.class_start,
        &format!("class_start{t}"),
    )?;
    let csites = g.add_constant(
        &[b.class_sites.len()],
        &b.class_sites,
        &format!("class_sites{t}"),
    )?;
    for c in [
        &diag, &values, &cols, &ct, &st, &models, &sites, &cstart, &csites,
    ] {
        g.set_tile_mapping(c, tile)?;
    }
    if let Some((e, partials, cs)) = &b.ecg {
        let ne = e.electrodes;
        let mut wt = vec![0.0f32; ne * m];
        for (j, &o) in old.iter().enumerate() {
            for el in 0..ne {
                wt[el * m + j] = e.weights[el * b.setup.n + o];
            }
        }
        let wt = g.add_constant(&[ne * m], &wt, &format!("ecg_weights{t}"))?;
        g.set_tile_mapping(&wt, tile)?;
        let out = partials.slice(t * ne..(t + 1) * ne)?;
        g.set_tile_mapping(&out, tile)?;
        let name = if spmv == "cardiac::EllSpmv16" {
            "cardiac::EcgPartial16"
        } else {
            "cardiac::EcgPartial"
        };
        let vx = g.add_vertex(*cs, name)?;
        g.connect(vx, "x", &local_of(&b.v_all, tp)?)?;
        g.connect(vx, "values", &values)?;
        g.connect(vx, "cols", &cols)?;
        g.connect(vx, "weights", &wt)?;
        g.connect(vx, "out", &out)?;
        g.set_tile_mapping(vx, tile)?;
    }
    for (cs, x, y) in [(b.cs_a, &b.v_all, &b.w), (b.cs_b, &b.w, &b.v_all)] {
        let vx = g.add_vertex(cs, spmv)?;
        g.connect(vx, "x", &local_of(x, tp)?)?;
        g.connect(vx, "y", &y.slice(tp.cells.clone())?)?;
        g.connect(vx, "diag", &diag)?;
        g.connect(vx, "values", &values)?;
        g.connect(vx, "cols", &cols)?;
        g.set_tile_mapping(vx, tile)?;
    }
    // After an odd number of diffusion steps the voltage is in `w`: the ODE vertex takes
    // it from there (no copy program between diffusion and reaction).
    let ov = if b.setup.pde_steps % 2 == 1 {
        let ov = g.add_vertex(b.cs_ode, "cardiac::Tp06StepFrom")?;
        g.connect(ov, "v_in", &b.w.slice(tp.cells.clone())?)?;
        ov
    } else {
        g.add_vertex(b.cs_ode, "cardiac::Tp06Step")?
    };
    g.connect(ov, "s", &b.s.slice(ns * tp.cells.start..ns * tp.cells.end)?)?;
    g.connect(ov, "v_prev", &b.v_prev.slice(tp.cells.clone())?)?;
    g.connect(ov, "act", &b.act.slice(tp.cells.clone())?)?;
    g.connect(ov, "last_up", &b.last_up.slice(tp.cells.clone())?)?;
    g.connect(ov, "last_down", &b.last_down.slice(tp.cells.clone())?)?;
    g.connect(ov, "cell_model", &ct)?;
    g.connect(ov, "models", &models)?;
    g.connect(ov, "stim_class", &st)?;
    g.connect(ov, "sites", &sites)?;
    g.connect(ov, "class_start", &cstart)?;
    g.connect(ov, "class_sites", &csites)?;
    g.connect(ov, "time", &b.time.slice(t..t + 1)?)?;
    g.set_vertex_state(ov, "dt", b.setup.dt_ode)?;
    g.set_vertex_state(ov, "act_threshold", b.setup.act_threshold)?;
    g.set_vertex_state(ov, "repol_level", b.setup.repol_level)?;
    g.set_tile_mapping(ov, tile)?;
    Ok(())
}

/// The ECG program: the tiles' partials (`ne` per tile, row `t` on `tile_of[t]`), computed by
/// `cs_partials`, summed over groups of ⌈√k⌉ consecutive tiles on each group's first tile,
/// then over the groups on the first tile into the host tensor `ecg`, each sum in list order
/// (`ReduceSumPartials<float>`): the order is fixed by the executable, whatever the threads
/// or ranks. Two levels keep the gathers small: one level would bring 23,552 × 9 floats
/// (848 KB) onto one tile at 16 chips.
fn ecg_sum(
    g: &mut Graph,
    cs_partials: poplar::ComputeSet,
    partials: &Tensor,
    ne: usize,
    tile_of: &[u32],
) -> Result<Program, DeviceError> {
    let k = tile_of.len();
    let group = (k as f64).sqrt().ceil().max(1.0) as usize;
    let groups = k.div_ceil(group);
    let sums = g.add_variable(DType::F32, &[groups * ne], "ecg_groups");
    let total = g.add_variable(DType::F32, &[ne], "ecg");
    let cs_groups = g.add_compute_set("ECG groups");
    let cs_total = g.add_compute_set("ECG total");
    let row = |x: &Tensor, r: usize| x.slice(r * ne..(r + 1) * ne);
    for gi in 0..groups {
        let tiles = gi * group..((gi + 1) * group).min(k);
        let head = tile_of[tiles.start];
        let list = tiles
            .map(|t| row(partials, t))
            .collect::<Result<Vec<_>, _>>()?;
        let out = row(&sums, gi)?;
        g.set_tile_mapping(&out, head)?;
        let v = g.add_vertex(cs_groups, "ReduceSumPartials<float>")?;
        g.connect_list(v, "partials", &list)?;
        g.connect(v, "out", &out)?;
        g.set_tile_mapping(v, head)?;
    }
    let list = (0..groups)
        .map(|gi| row(&sums, gi))
        .collect::<Result<Vec<_>, _>>()?;
    g.set_tile_mapping(&total, tile_of[0])?;
    let v = g.add_vertex(cs_total, "ReduceSumPartials<float>")?;
    g.connect_list(v, "partials", &list)?;
    g.connect(v, "out", &total)?;
    g.set_tile_mapping(v, tile_of[0])?;
    g.create_host_read("ecg", &total)?;
    Ok(Program::labelled(
        "ECG",
        vec![
            Program::execute(cs_partials),
            Program::execute(cs_groups),
            Program::execute(cs_total),
        ],
    ))
}

/// The cells' tile parts under `cfg.partitioning` for `k` tiles, rounded to
/// `cfg.cell_multiple` where tiles are large enough, with empty parts dropped: returns the parts
/// (dense, every one non-empty) and the tile of each.
///
/// The documented fallback for METIS' empty parts: when there are nearly as many tiles as
/// cells (e.g. 11,776 tiles for the 20,160-cell slab) METIS leaves parts empty without an error
/// ([`crate::partition::PartitionError::EmptyParts`] from the checked
/// [`crate::partition::partition_cells`]); a tile with no cells would get zero-length constants
/// and vertices, so those tiles are left idle instead. Every used part keeps its tile (part `p`
/// on tile `p`), so a hierarchical partition's tiles stay on their chip.
pub fn cut(
    setup: &Setup,
    cfg: &DeviceConfig,
    k: usize,
) -> Result<(Vec<u32>, Vec<u32>), DeviceError> {
    let multiple = if cfg.cell_multiple > 1 && setup.n / k >= 16 * cfg.cell_multiple {
        cfg.cell_multiple
    } else {
        1
    };
    let parts = match cfg.partitioning {
        Partitioning::Flat => {
            let parts = kway_parts(&setup.adjacency, k)?;
            round_part_sizes(&setup.adjacency, parts, k, multiple)
        }
        Partitioning::Hierarchical => hierarchical_parts_on(
            &setup.adjacency,
            &ChipLinks::of(&cfg.target),
            TileShape {
                per_chip: cfg.target.tiles_per_ipu as usize,
                workers: cfg.target.workers_per_tile as usize,
                multiple,
            },
            k,
        )?,
    };
    let (parts, tile_of) = drop_empty_parts(parts, k);
    if tile_of.len() < k {
        tracing::warn!(
            "{} of {k} tiles left without cells ({} cells): too many tiles for the mesh",
            k - tile_of.len(),
            setup.n
        );
    }
    Ok((parts, tile_of))
}

/// Renumbers the non-empty parts densely, in order, and returns each one's original part.
fn drop_empty_parts(mut parts: Vec<u32>, k: usize) -> (Vec<u32>, Vec<u32>) {
    let mut used = vec![false; k];
    for &p in &parts {
        used[p as usize] = true;
    }
    let mut new_id = vec![0u32; k];
    let mut kept = Vec::new();
    for (p, &u) in used.iter().enumerate() {
        new_id[p] = kept.len() as u32;
        if u {
            kept.push(p as u32);
        }
    }
    for p in &mut parts {
        *p = new_id[*p as usize];
    }
    (parts, kept)
}

/// Compiles a built problem. Both diffusion buffers (`V`, `w`) are bound in place
/// (`InPlaceConcat::Always`: halo slack beside each, no per-step copy of the own slice), unless
/// that does not fit in tile memory; then the compiler's default (slack only where it costs no
/// more than the temporaries) is used.
pub fn compile_problem(p: &DeviceProblem) -> Result<Executable, DeviceError> {
    let always = CompileOptions {
        in_place_concat: InPlaceConcat::Always,
        ..Default::default()
    };
    match compile(&p.graph, &p.programs, &always) {
        Err(poplar::CompileError::OutOfMemory { .. }) => {
            Ok(compile(&p.graph, &p.programs, &CompileOptions::default())?)
        }
        r => Ok(r?),
    }
}

/// A running device simulation.
pub struct DeviceRun {
    pub engine: Engine,
    pub info: RunInfo,
    steps: u64,
    /// Wall seconds of the ECG samples.
    ecg_s: f64,
}

impl DeviceRun {
    pub fn new(exe: &Executable, info: RunInfo, opts: EngineOptions) -> Result<Self, DeviceError> {
        Ok(DeviceRun {
            engine: Engine::new(exe, opts)?,
            info,
            steps: 0,
            ecg_s: 0.0,
        })
    }

    /// Like [`DeviceRun::new`], handing the executable over to the engine (its initial data
    /// are freed once tile memory holds them).
    pub fn from_executable(
        exe: Executable,
        info: RunInfo,
        opts: EngineOptions,
    ) -> Result<Self, DeviceError> {
        Ok(DeviceRun {
            engine: Engine::from_executable(exe, opts)?,
            info,
            steps: 0,
            ecg_s: 0.0,
        })
    }

    /// φ_e (mV) at the electrodes now ([`PROGRAM_ECG`]), in the order of the build's
    /// electrodes.
    pub fn sample_ecg(&mut self) -> Result<Vec<f32>, DeviceError> {
        if self.info.ecg_electrodes == 0 {
            return Err(DeviceError::Config(
                "this executable was built without ECG electrodes".into(),
            ));
        }
        let t = std::time::Instant::now();
        self.engine.run(PROGRAM_ECG)?;
        let phi = self.engine.read_tensor::<f32>("ecg")?;
        self.ecg_s += t.elapsed().as_secs_f64();
        Ok(phi)
    }

    /// Wall seconds spent in [`DeviceRun::sample_ecg`] so far (the ECG program and its read).
    pub fn ecg_seconds(&self) -> f64 {
        self.ecg_s
    }

    /// Runs one chunk of ODE steps.
    pub fn run_chunk(&mut self) -> Result<(), DeviceError> {
        self.engine.run(PROGRAM_CHUNK)?;
        self.steps += u64::from(self.info.chunk_steps);
        Ok(())
    }

    /// Runs a single ODE step (program 1).
    pub fn run_one_step(&mut self) -> Result<(), DeviceError> {
        self.engine.run(PROGRAM_STEP)?;
        self.steps += 1;
        Ok(())
    }

    /// ODE steps run so far (by this host object).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Sets the ODE steps run so far: for a run resumed from a checkpoint, whose state the
    /// caller has written into the engine ([`STATE_TENSORS`]).
    pub fn resume_at(&mut self, steps: u64) {
        self.steps = steps;
    }

    /// Simulated time (ms), as the device counts it.
    pub fn time(&self) -> Result<f32, DeviceError> {
        Ok(self.engine.read_tensor::<f32>("time")?[0])
    }

    /// Activation times in mesh numbering.
    pub fn activation(&self) -> Result<Vec<f32>, DeviceError> {
        let a = self.engine.read_tensor::<f32>("activation")?;
        Ok(to_old(&self.info, &a))
    }

    /// The latest upstroke and repolarisation times of every cell in mesh numbering (-1
    /// before the first); see [`tp06::update_crossings`].
    pub fn last_crossings(&self) -> Result<(Vec<f32>, Vec<f32>), DeviceError> {
        let u = self.engine.read_tensor::<f32>("last_up")?;
        let d = self.engine.read_tensor::<f32>("last_down")?;
        Ok((to_old(&self.info, &u), to_old(&self.info, &d)))
    }

    /// Membrane voltage in mesh numbering.
    pub fn voltage(&self) -> Result<Vec<f32>, DeviceError> {
        let v = self.engine.read_tensor::<f32>("v")?;
        Ok(to_old(&self.info, &v))
    }

    pub fn results(&self) -> Result<Results, DeviceError> {
        Ok(Results {
            activation: self.activation()?,
            v: self.voltage()?,
            t: self.time()?,
        })
    }
}

fn to_old(info: &RunInfo, x_new: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0f32; info.n];
    for (gi, &o) in info.new_to_old.iter().enumerate() {
        out[o as usize] = x_new[gi];
    }
    out
}
