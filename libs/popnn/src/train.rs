//! A training step as one program: the pipeline's groups (every micro-batch of the step
//! through every stage, [`crate::schedule`]), the all-reduce of the gradient accumulators over
//! the replicas (the collectives library, when there are several), and the optimizer's update
//! of every tile's rows; and [`Trainer`], the host side (parameters in and out, data fed to
//! the streams, steps run) on any [`Device`] (an `Engine`), so that this crate builds without
//! linking an engine.
//!
//! Programs: [`STEP`] the training step; [`PIPELINE`] its pipeline alone (the same compute
//! sets, for profiles of the bubble); [`REDUCE`] the combination of the gradients over the
//! replicas alone (the all-reduce, or the reduce-scatter and the all-reduce across groups
//! when sharded; empty with one replica unsharded), for static estimates of its cost.

use poplar_compiler::compiler::{compile, CompileOptions};
use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::Graph;
use poplar_core::target::Target;
use poplar_exe::exe::{Device, Executable};

use crate::model::{LayerParams, Model};
use crate::network::{Io, Network, Sink};
use crate::optim::Optimizer;
use crate::options::{TensorStorage, TrainError, TrainOptions};
use crate::schedule::{self, Pass};

/// Index of the training step program.
pub const STEP: usize = 0;
/// Index of the pipeline-only program.
pub const PIPELINE: usize = 1;
/// Index of the gradient-combination-only program (never run by [`Trainer`]).
pub const REDUCE: usize = 2;
/// The label of the pipeline in profiles.
pub const PIPELINE_LABEL: &str = "pipeline";
// The label of the gradient all-reduce, kept where the reduction is built.
pub use crate::update::ALL_REDUCE_NAME;

/// A compiled training graph and what it was built from.
pub struct Compiled {
    pub exe: Executable,
    pub model: Model,
    pub opts: TrainOptions,
    pub plan: schedule::Plan,
}

/// Builds and compiles the training graph of `model` on `machine` (`R × P` chips of it).
pub fn build(machine: &Target, model: &Model, opts: &TrainOptions) -> Result<Compiled, TrainError> {
    opts.check(model, machine.tiles_per_ipu)?;
    let mut g = Graph::new_replicated(machine, opts.replicas, opts.stages as u32)?;
    let plan = schedule::plan(opts.schedule, opts.stages, opts.accumulate);
    let net = Network::new(&mut g, model, opts, plan.clone())?;
    let pipeline = Program::labelled(PIPELINE_LABEL, vec![pipeline(&mut g, &net)?]);
    let update = crate::update::build(&mut g, &net)?;
    let step = Program::seq(vec![pipeline.clone(), update.step]);
    let exe = compile(
        &g,
        &[step, pipeline, update.reduce],
        &CompileOptions::default(),
    )?;
    Ok(Compiled {
        exe,
        model: model.clone(),
        opts: opts.clone(),
        plan,
    })
}

/// The schedule's groups as one program.
fn pipeline(g: &mut Graph, net: &Network) -> Result<Program, TrainError> {
    let mut out = Vec::new();
    for (k, group) in net.plan.groups.iter().enumerate() {
        let pass = group.first().map_or("", |op| match op.pass {
            Pass::Forward => "forward",
            Pass::Backward => "backward",
        });
        let mut sink = Sink::new(format!("group {k} ({pass})"));
        let mut io = Io::default();
        for op in group {
            match op.pass {
                Pass::Forward => net.forward(g, op.stage, op.micro_batch, &mut sink, &mut io)?,
                Pass::Backward => net.backward(g, op.stage, op.micro_batch, &mut sink, &mut io)?,
            }
        }
        out.extend(io.pre);
        out.extend(sink.sets().map(Program::execute));
        out.extend(io.post);
    }
    Ok(Program::seq(out))
}

/// A host-side error of a training run: the device's (an `EngineError` for an `Engine`), or
/// data of the wrong size.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    #[error(transparent)]
    Device(Box<dyn std::error::Error + Send + Sync>),
    #[error("{what}: {got} values, expected {expected}")]
    Size {
        what: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("replica {replica}'s {tensor} differs from replica 0's")]
    ReplicasDiffer { replica: u32, tensor: String },
}

/// A device's error as a [`RunError`].
trait OrDevice<T> {
    fn dev(self) -> Result<T, RunError>;
}

impl<T, E: std::error::Error + Send + Sync + 'static> OrDevice<T> for Result<T, E> {
    fn dev(self) -> Result<T, RunError> {
        self.map_err(|e| RunError::Device(Box::new(e)))
    }
}

/// A device (an `Engine`) loaded with a training executable.
pub struct Trainer<D: Device> {
    /// The device running [`Compiled::exe`].
    pub engine: D,
    pub model: Model,
    pub opts: TrainOptions,
}

impl<D: Device> Trainer<D> {
    /// The trainer of `c` on `engine`, a device running `c.exe` (for example
    /// `Engine::new(&c.exe, EngineOptions::with_threads(threads))?`).
    pub fn new(c: &Compiled, engine: D) -> Trainer<D> {
        Trainer {
            engine,
            model: c.model.clone(),
            opts: c.opts.clone(),
        }
    }

    /// Writes the same parameters to every replica (and each replica's master shard when
    /// sharded) and zeroes the gradient accumulators, the optimizer's state and the
    /// statistics.
    pub fn set_params(&mut self, p: &[LayerParams]) -> Result<(), RunError> {
        if p.len() != self.model.layers().len() {
            return Err(RunError::Size {
                what: "layers of parameters",
                got: p.len(),
                expected: self.model.layers().len(),
            });
        }
        let layers = self.model.layers().to_vec();
        for (l, (lp, d)) in p.iter().zip(&layers).enumerate() {
            for (name, v, width) in [("w", &lp.w, d.inputs), ("b", &lp.b, 1)] {
                let n = d.outputs * width;
                if v.len() != n {
                    return Err(RunError::Size {
                        what: "a layer's parameters",
                        got: v.len(),
                        expected: n,
                    });
                }
                let name = format!("{name}{l}");
                if self.opts.half_weights && name.starts_with('w') {
                    let half: Vec<poplar_core::f16> = v
                        .iter()
                        .map(|&x| poplar_core::fp::f16_from_f64(f64::from(x)))
                        .collect();
                    self.engine.write_tensor(&name, &half).dev()?;
                    if self.opts.shard_group().is_none() {
                        self.engine
                            .write_tensor(&format!("{name}/master"), v)
                            .dev()?;
                    }
                } else {
                    self.engine.write_tensor(&name, v).dev()?;
                }
                self.engine
                    .write_tensor(&format!("{name}/grad"), &vec![0f32; n])
                    .dev()?;
                let lens = self.piece_lens(d.outputs, width);
                self.set_state(&name, v, &lens)?;
            }
        }
        if let Optimizer::Adam { .. } = self.opts.optimizer {
            self.engine.write_tensor("opt powers", &[1f32, 1.0]).dev()?;
        }
        self.zero_stats()?;
        Ok(())
    }

    /// The master shards (sharded) and the zeroed state of parameter tensor `name` with
    /// values `v` in pieces of `lens` elements.
    fn set_state(&mut self, name: &str, v: &[f32], lens: &[usize]) -> Result<(), RunError> {
        let lens = match self.opts.shard_group() {
            None => lens.to_vec(),
            Some(group) => {
                for r in 0..self.opts.replicas {
                    let shard = crate::update::shard_of(v, lens, group, r % group);
                    self.engine
                        .write_tensor_replica(&format!("{name}/master"), r, &shard)
                        .dev()?;
                }
                lens.iter().map(|l| l.div_ceil(group as usize)).collect()
            }
        };
        let kinds = self.opts.optimizer.state_per_param();
        for s in &crate::update::STATE[..kinds] {
            let state = format!("{name}/{s}");
            match self.opts.optimizer_state_location.storage {
                TensorStorage::OnChip => {
                    let n: usize = lens.iter().sum();
                    self.engine.write_tensor(&state, &vec![0f32; n]).dev()?;
                }
                TensorStorage::OffChip => {
                    let row = lens.iter().copied().max().unwrap_or(0);
                    let zeros = vec![0f32; row * lens.len()];
                    self.engine.write_remote_buffer(&state, &zeros).dev()?;
                }
            }
        }
        Ok(())
    }

    /// Connects each replica's streams to `steps` steps of samples: `x[r]` (sample-major,
    /// `steps · M · m` samples of `inputs`) and `y[r]` (their labels). The micro-batches are
    /// sent feature-major, in the order the pipeline reads them.
    pub fn feed(&mut self, x: &[Vec<f32>], y: &[Vec<i32>]) -> Result<(), RunError> {
        let (d, m) = (self.model.inputs(), self.opts.micro_batch);
        let replicas = self.opts.replicas as usize;
        if x.len() != replicas || y.len() != replicas {
            return Err(RunError::Size {
                what: "replicas of data",
                got: x.len().min(y.len()),
                expected: replicas,
            });
        }
        for (r, (xr, yr)) in x.iter().zip(y).enumerate() {
            if xr.len() != yr.len() * d || yr.len() % m != 0 {
                return Err(RunError::Size {
                    what: "samples (whole micro-batches of inputs and labels)",
                    got: xr.len(),
                    expected: yr.len() * d,
                });
            }
            let mut fm = Vec::with_capacity(xr.len());
            for mb in xr.chunks(m * d) {
                for i in 0..d {
                    fm.extend((0..m).map(|s| mb[s * d + i]));
                }
            }
            self.engine
                .connect_stream_replica("x", r as u32, fm)
                .dev()?;
            self.engine
                .connect_stream_replica("labels", r as u32, yr.clone())
                .dev()?;
        }
        Ok(())
    }

    pub fn step(&mut self) -> Result<(), RunError> {
        self.engine.run(STEP).dev()?;
        Ok(())
    }

    /// The parameters, checked bit-identical on every replica.
    ///
    /// With f16 weights, `w` is their f32 master copy (gathered from the shards of the first
    /// group of replicas when sharded); [`Trainer::half_weights`] reads the f16 weights.
    pub fn params(&self) -> Result<Vec<LayerParams>, RunError> {
        let mut out = Vec::new();
        for (l, d) in self.model.layers().iter().enumerate() {
            let w = match (self.opts.half_weights, self.opts.shard_group()) {
                (false, _) => self.same_on_replicas(&format!("w{l}"))?,
                (true, None) => self.same_on_replicas(&format!("w{l}/master"))?,
                (true, Some(group)) => {
                    let lens = self.piece_lens(d.outputs, d.inputs);
                    let all = self
                        .engine
                        .read_tensor_all_replicas::<f32>(&format!("w{l}/master"))
                        .dev()?;
                    let n = all.len() / self.opts.replicas as usize;
                    let shards: Vec<&[f32]> = all.chunks(n.max(1)).take(group as usize).collect();
                    crate::update::unshard(&shards, &lens)
                }
            };
            out.push(LayerParams {
                w,
                b: self.same_on_replicas(&format!("b{l}"))?,
            });
        }
        Ok(out)
    }

    /// The f16 weights of layer `l`, widened to f32 (checked equal on every replica).
    pub fn half_weights(&self, l: usize) -> Result<Vec<f32>, RunError> {
        let name = format!("w{l}");
        let all = self
            .engine
            .read_tensor_all_replicas::<poplar_core::f16>(&name)
            .dev()?;
        let wide: Vec<f32> = all.iter().map(|h| h.to_f32()).collect();
        let n = wide.len() / self.opts.replicas as usize;
        for r in 1..self.opts.replicas as usize {
            if wide[r * n..(r + 1) * n]
                .iter()
                .zip(&wide[..n])
                .any(|(a, b)| a.to_bits() != b.to_bits())
            {
                return Err(RunError::ReplicasDiffer {
                    replica: r as u32,
                    tensor: name,
                });
            }
        }
        Ok(wide[..n].to_vec())
    }

    /// The element counts of a parameter tensor's pieces (one per tile with rows), for a
    /// layer of `rows` rows of `width`.
    fn piece_lens(&self, rows: usize, width: usize) -> Vec<usize> {
        crate::model::blocks(rows, self.opts.tiles)
            .into_iter()
            .filter(|r| !r.is_empty())
            .map(|r| r.len() * width)
            .collect()
    }

    fn same_on_replicas(&self, name: &str) -> Result<Vec<f32>, RunError> {
        let all = self.engine.read_tensor_all_replicas::<f32>(name).dev()?;
        let n = all.len() / self.opts.replicas as usize;
        for r in 1..self.opts.replicas as usize {
            let same = all[r * n..(r + 1) * n]
                .iter()
                .zip(&all[..n])
                .all(|(a, b)| a.to_bits() == b.to_bits());
            if !same {
                return Err(RunError::ReplicasDiffer {
                    replica: r as u32,
                    tensor: name.into(),
                });
            }
        }
        Ok(all[..n].to_vec())
    }

    fn zero_stats(&mut self) -> Result<(), RunError> {
        let n = 2 * self.engine.executable().target.workers_per_tile as usize;
        self.engine.write_tensor("stats", &vec![0f32; n]).dev()?;
        Ok(())
    }

    /// Summed loss and right predictions over every replica since the last call (each
    /// replica's worker pairs added in order), then zeroed.
    pub fn take_stats(&mut self) -> Result<(f64, f64), RunError> {
        let all = self.engine.read_tensor_all_replicas::<f32>("stats").dev()?;
        self.zero_stats()?;
        Ok(all.chunks(2).fold((0.0, 0.0), |(l, c), s| {
            (l + f64::from(s[0]), c + f64::from(s[1]))
        }))
    }
}
