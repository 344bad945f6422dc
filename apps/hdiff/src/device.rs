//! The graph of a [`Plan`], compiled, and the engine that runs it.
//!
//! Fields `field_a`, `field_b` (ping-pong: an iteration reads one and writes the other's
//! interior; the halo of both holds the input, so it stays fixed) and `coeff`, each of shape
//! `[K, J, I]`; a unit's block of them lives on the unit's last tile, with the grid's halo
//! rows and columns on the units at the edge. Every vertex reads a view of its plane that
//! reaches over its neighbours' blocks: the exchange is inferred by the compiler.
//!
//! The staged mappings add `lap` (a ring of `stages` Laplacian blocks per unit, on its first
//! tile) and, for the tri-stage mapping, `flx` (a ring of two flux-x blocks per unit, on its
//! second tile), and are software-pipelined over the planes of a group: in superstep `s` stage `m`
//! works on the group's plane `s − m`, so all stages are busy once the pipeline is full, and
//! each superstep's exchange forwards what the previous one produced. The rings are as deep as
//! the number of planes in flight, so no compute set both writes and reads a block (which the
//! compiler rejects as a data race, even across tiles).
//!
//! Programs: 0 = one iteration a → b, 1 = one iteration b → a, 2 = both.

use std::ops::Range;

use poplar::profile::{Profile, ProfileOptions};
use poplar::{
    compile, CompileError, CompileOptions, ComputeSet, DType, Engine, EngineOptions, Executable,
    Graph, Program, Target, Tensor,
};

use crate::codelets::codelet_of;
use crate::error::HdiffError;
use crate::grid::{Grid, HALO};
use crate::plan::{Plan, Unit};
use crate::stencil::Stage;

/// Which buffer holds the current field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buffer {
    A,
    B,
}

impl Buffer {
    pub fn name(self) -> &'static str {
        match self {
            Buffer::A => "field_a",
            Buffer::B => "field_b",
        }
    }
}

/// The program indices.
pub const PROGRAM_A_TO_B: usize = 0;
pub const PROGRAM_B_TO_A: usize = 1;
pub const PROGRAM_PAIR: usize = 2;

/// The executable of a plan.
pub fn build(plan: &Plan, target: &Target) -> Result<Executable, HdiffError> {
    let mut builder = Builder::new(plan, target)?;
    let ab = builder.iteration(Buffer::A, Buffer::B)?;
    let ba = builder.iteration(Buffer::B, Buffer::A)?;
    let programs = vec![
        Program::labelled("iteration", ab.clone()),
        Program::labelled("iteration", ba.clone()),
        Program::seq(vec![
            Program::labelled("iteration", ab),
            Program::labelled("iteration", ba),
        ]),
    ];
    let options = CompileOptions::default();
    compile(&builder.graph, &programs, &options).map_err(|e| match e {
        CompileError::OutOfMemory {
            tile,
            total,
            budget,
            ..
        } => HdiffError::BlockTooLarge {
            tile,
            bytes: total,
            limit: budget,
        },
        e => HdiffError::Compile(e),
    })
}

struct Builder<'p> {
    plan: &'p Plan,
    graph: Graph,
    a: Tensor,
    b: Tensor,
    coeff: Tensor,
    lap: Option<Tensor>,
    flx: Option<Tensor>,
    workers: u32,
}

/// The window of a unit and the column range of its views.
struct Window {
    j: Range<usize>,
    i: Range<usize>,
    /// 1 when the block spans the whole width (views are whole rows), else 0.
    pad: usize,
}

impl Window {
    fn rows(&self) -> usize {
        self.j.len()
    }
    fn cols(&self) -> usize {
        self.i.len()
    }
    /// Columns of a view reaching `halo` points beyond the window (whole rows when padded).
    fn cols_of(&self, halo: usize, ni: usize) -> Range<usize> {
        if self.pad == 1 {
            0..ni
        } else {
            self.i.start - halo..self.i.end + halo
        }
    }
}

impl<'p> Builder<'p> {
    fn new(plan: &'p Plan, target: &Target) -> Result<Builder<'p>, HdiffError> {
        let g = plan.grid;
        let mut graph = Graph::new(target);
        let shape = [g.nk, g.nj, g.ni];
        let a = graph.add_variable(DType::F32, &shape, "field_a");
        let b = graph.add_variable(DType::F32, &shape, "field_b");
        let coeff = graph.add_variable(DType::F32, &shape, "coeff");
        graph.create_host_read_write("field_a", &a)?;
        graph.create_host_read_write("field_b", &b)?;
        graph.create_host_write("coeff", &coeff)?;
        let stages = plan.stages().len();
        let units = plan.units.len();
        let max_rows = plan.blocks_j.iter().map(|r| r.len()).max().unwrap_or(0);
        let max_cols = plan.blocks_i.iter().map(|r| r.len()).max().unwrap_or(0);
        let lap = (stages > 1).then(|| {
            graph.add_variable(
                DType::F32,
                &[units, stages, (max_rows + 2) * (max_cols + 2)],
                "lap",
            )
        });
        let flx = (stages > 2)
            .then(|| graph.add_variable(DType::F32, &[units, 2, max_rows * (max_cols + 1)], "flx"));
        let mut builder = Builder {
            plan,
            graph,
            a,
            b,
            coeff,
            lap,
            flx,
            workers: target.workers_per_tile,
        };
        builder.map_data()?;
        Ok(builder)
    }

    fn window(&self, unit: &Unit) -> Window {
        Window {
            j: self.plan.blocks_j[unit.block_j].clone(),
            i: self.plan.blocks_i[unit.block_i].clone(),
            pad: usize::from(self.plan.blocks_i.len() == 1),
        }
    }

    /// The rows and columns a unit's data tile holds: its block, grown to the grid's edge
    /// where the block touches the halo.
    fn owned(&self, unit: &Unit) -> (Range<usize>, Range<usize>) {
        let g = self.plan.grid;
        let grow = |r: &Range<usize>, n: usize| {
            let s = if r.start == HALO { 0 } else { r.start };
            let e = if r.end == n - HALO { n } else { r.end };
            s..e
        };
        let w = self.window(unit);
        (grow(&w.j, g.nj), grow(&w.i, g.ni))
    }

    fn map_data(&mut self) -> Result<(), HdiffError> {
        for u in 0..self.plan.units.len() {
            let unit = &self.plan.units[u];
            let data_tile = *unit.tiles.last().expect("a unit has a tile per stage");
            let (jr, ir) = self.owned(unit);
            let k = self.plan.groups[unit.group].clone();
            for t in [&self.a, &self.b, &self.coeff] {
                let block = t
                    .slice_dim(0, k.clone())?
                    .slice_dim(1, jr.clone())?
                    .slice_dim(2, ir.clone())?;
                self.graph.set_tile_mapping(&block, data_tile)?;
            }
            if let Some(lap) = &self.lap {
                self.graph.set_tile_mapping(&lap.index(u)?, unit.tiles[0])?;
            }
            if let Some(flx) = &self.flx {
                self.graph.set_tile_mapping(&flx.index(u)?, unit.tiles[1])?;
            }
        }
        Ok(())
    }

    /// Rows `j` and columns `i` of plane `k` of `field`, flattened.
    fn view(
        field: &Tensor,
        k: usize,
        j: Range<usize>,
        i: Range<usize>,
    ) -> Result<Tensor, HdiffError> {
        Ok(field.index(k)?.slice_dim(0, j)?.slice_dim(1, i)?.flatten())
    }

    /// The compute sets of one iteration from `src` to `dst`, as a program.
    fn iteration(&mut self, src: Buffer, dst: Buffer) -> Result<Vec<Program>, HdiffError> {
        let (src_t, dst_t) = match src {
            Buffer::A => (self.a.clone(), self.b.clone()),
            Buffer::B => (self.b.clone(), self.a.clone()),
        };
        let stages = self.plan.stages();
        let depth = self.plan.groups.iter().map(|g| g.len()).max().unwrap_or(0);
        let steps = depth + stages.len() - 1;
        let mut sets: Vec<ComputeSet> = Vec::with_capacity(steps);
        for s in 0..steps {
            let name = if stages.len() == 1 {
                format!("hdiff {}→{}", letter(src), letter(dst))
            } else {
                format!("hdiff {}→{} step {s}", letter(src), letter(dst))
            };
            sets.push(self.graph.add_compute_set(&name));
        }
        for u in 0..self.plan.units.len() {
            let unit = self.plan.units[u].clone();
            let planes = self.plan.groups[unit.group].clone();
            for (m, &stage) in stages.iter().enumerate() {
                for (p, k) in planes.clone().enumerate() {
                    self.add_vertex(sets[p + m], stage, &unit, u, k, &src_t, &dst_t)?;
                }
            }
        }
        Ok(sets.into_iter().map(Program::execute).collect())
    }

    #[allow(clippy::too_many_arguments)]
    fn add_vertex(
        &mut self,
        cs: ComputeSet,
        stage: Stage,
        unit: &Unit,
        u: usize,
        k: usize,
        src: &Tensor,
        dst: &Tensor,
    ) -> Result<(), HdiffError> {
        let ni = self.plan.grid.ni;
        let w = self.window(unit);
        let (rows, cols) = (w.rows(), w.cols());
        let in2 = || {
            Self::view(
                src,
                k,
                w.j.start - 2..w.j.end + 2,
                w.i.start - 2..w.i.end + 2,
            )
        };
        let in1 = || Self::view(src, k, w.j.start - 1..w.j.end + 1, w.cols_of(1, ni));
        let own = |t: &Tensor| Self::view(t, k, w.j.clone(), w.cols_of(0, ni));
        let lap_len = (rows + 2) * (cols + 2);
        let stage_count = self.plan.stages().len();
        let lap = |this: &Self| -> Result<Tensor, HdiffError> {
            let lap = this
                .lap
                .as_ref()
                .expect("staged mappings have a lap buffer");
            Ok(lap.index(u)?.index(k % stage_count)?.slice(0..lap_len)?)
        };
        let flx = |this: &Self| -> Result<Tensor, HdiffError> {
            let flx = this
                .flx
                .as_ref()
                .expect("the tri-stage mapping has a flx buffer");
            Ok(flx.index(u)?.index(k % 2)?.slice(0..rows * (cols + 1))?)
        };
        let (tile, block_rows, block_cols) = match stage {
            Stage::Fused => (unit.tiles[0], rows, cols),
            Stage::Lap => (unit.tiles[0], rows + 2, cols + 2),
            Stage::FluxOut => (unit.tiles[1], rows, cols),
            Stage::Flx => (unit.tiles[1], rows, cols + 1),
            Stage::FlyOut => (unit.tiles[2], rows, cols),
        };
        let v = self.graph.add_vertex(cs, codelet_of(stage))?;
        let mut fields: Vec<(&str, Tensor)> = Vec::new();
        match stage {
            Stage::Fused => {
                fields.push(("inp", in2()?));
                fields.push(("coeff", own(&self.coeff)?));
                fields.push(("out", own(dst)?));
            }
            Stage::Lap => {
                fields.push(("inp", in2()?));
                fields.push(("lap", lap(self)?));
            }
            Stage::FluxOut => {
                fields.push(("inp", in1()?));
                fields.push(("lap", lap(self)?));
                fields.push(("coeff", own(&self.coeff)?));
                fields.push(("out", own(dst)?));
            }
            Stage::Flx => {
                fields.push(("inp", in1()?));
                fields.push(("lap", lap(self)?));
                fields.push(("flx", flx(self)?));
            }
            Stage::FlyOut => {
                fields.push(("inp", in1()?));
                fields.push(("lap", lap(self)?));
                fields.push(("flx", flx(self)?));
                fields.push(("coeff", own(&self.coeff)?));
                fields.push(("out", own(dst)?));
            }
        }
        for (name, t) in &fields {
            self.graph.connect(v, name, t)?;
        }
        self.graph.set_vertex_state(v, "rows", rows as u32)?;
        self.graph.set_vertex_state(v, "cols", cols as u32)?;
        if stage != Stage::Lap {
            self.graph.set_vertex_state(v, "pad", w.pad as u32)?;
        }
        self.graph.set_tile_mapping(v, tile)?;
        self.graph
            .set_cycle_estimate(v, stage.vertex_cycles(block_rows, block_cols, self.workers))?;
        Ok(())
    }
}

fn letter(b: Buffer) -> &'static str {
    match b {
        Buffer::A => "a",
        Buffer::B => "b",
    }
}

/// A compiled plan on an engine, with its fields loaded.
pub struct Device {
    pub engine: Engine,
    grid: Grid,
    current: Buffer,
    iterations: u64,
}

impl Device {
    /// An engine for `exe` on `threads` host threads (`None`: all cores).
    pub fn new(exe: &Executable, grid: Grid, threads: Option<usize>) -> Result<Device, HdiffError> {
        let engine = Engine::new(
            exe,
            EngineOptions {
                threads,
                ..Default::default()
            },
        )?;
        Ok(Device {
            engine,
            grid,
            current: Buffer::A,
            iterations: 0,
        })
    }

    /// Loads the input field (into both buffers, so that both halos hold it) and the
    /// coefficients.
    pub fn load(&mut self, input: &[f32], coeff: &[f32]) -> Result<(), HdiffError> {
        for (what, v) in [("the input field", input), ("the coefficient field", coeff)] {
            if v.len() != self.grid.len() {
                return Err(HdiffError::WrongLength {
                    what,
                    got: v.len(),
                    want: self.grid.len(),
                    grid: [self.grid.ni, self.grid.nj, self.grid.nk],
                });
            }
        }
        self.engine.write_tensor("field_a", input)?;
        self.engine.write_tensor("field_b", input)?;
        self.engine.write_tensor("coeff", coeff)?;
        self.current = Buffer::A;
        self.iterations = 0;
        Ok(())
    }

    /// Applies the stencil `n` more times; `progress(done)` after each engine run.
    pub fn iterate(&mut self, n: u64, mut progress: impl FnMut(u64)) -> Result<(), HdiffError> {
        let mut done = 0;
        while done < n {
            let (program, count) = match (self.current, n - done) {
                (Buffer::A, left) if left >= 2 => (PROGRAM_PAIR, 2),
                (Buffer::A, _) => (PROGRAM_A_TO_B, 1),
                (Buffer::B, _) => (PROGRAM_B_TO_A, 1),
            };
            self.engine.run(program)?;
            if count == 1 {
                self.current = match self.current {
                    Buffer::A => Buffer::B,
                    Buffer::B => Buffer::A,
                };
            }
            done += count;
            self.iterations += count;
            progress(done);
        }
        Ok(())
    }

    /// Applies the stencil once with profiling on, and returns the profile of that iteration.
    pub fn profile_one(&mut self) -> Result<Profile, HdiffError> {
        self.engine.enable_profiling(ProfileOptions::default());
        let r = self.iterate(1, |_| {});
        let profile = self.engine.take_profile();
        self.engine.disable_profiling();
        r?;
        Ok(profile.expect("profiling was on"))
    }

    /// Iterations applied since the last load.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// The current field.
    pub fn read(&self) -> Result<Vec<f32>, HdiffError> {
        Ok(self.engine.read_tensor::<f32>(self.current.name())?)
    }
}
