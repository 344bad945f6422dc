//! The model's tensors on one replica's graph, and the vertices of one stage's forward and
//! backward pass over one micro-batch.
//!
//! **Layout.** Layer `l` lives on the chip of its stage, its rows spread over tiles
//! `0..T` of that chip in balanced blocks ([`crate::model::blocks`]): a tile holds its rows of
//! `W`, `b`, their gradient accumulators and optimizer state, and its rows of the layer's
//! activations. Per stage, the micro-batches in flight ([`crate::schedule::Plan::stash`]) each
//! have their own stage input and (without recomputation) their own `z` and `y` of every layer
//! of the stage; micro-batch `i` uses copy `i mod depth`.
//!
//! **Passes.** Forward: one compute set per layer (`DenseForward`), then the last layer's
//! output is copied to the next stage's input. Backward: the loss (`SoftmaxCrossEntropy`, last
//! stage only) and, per layer from the last, `DenseGrad` (its `dz` and gradients), then for
//! every layer but the model's first `DensePartial` (each tile's partial of the input
//! gradient) and `SumParts` (the partials summed in tile order by the tile owning those input
//! rows); the stage's input gradient is copied to the previous stage. With recomputation the
//! backward pass first runs the stage's forward compute sets again from the stage input.

use std::ops::Range;

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{ComputeSet, Graph, Stream, Tensor};
use poplar_core::dtype::DType;

use crate::math::Activation;
use crate::model::{blocks, Model};
use crate::options::{TrainError, TrainOptions};
use crate::schedule::Plan;

/// One layer's tensors.
pub(crate) struct LayerTensors {
    pub chip: u32,
    pub w: Tensor,
    pub b: Tensor,
    pub dw: Tensor,
    pub db: Tensor,
    /// Pre-activations and outputs, one per stash slot (one with recomputation).
    pub z: Vec<Tensor>,
    pub y: Vec<Tensor>,
    pub dz: Tensor,
    /// The gradient of the layer's input (`inputs × m`), all but the model's first layer.
    pub dx: Option<Tensor>,
    /// Each tile's partial of `dx`.
    pub parts: Vec<Tensor>,
}

/// One stage's tensors.
pub(crate) struct StageTensors {
    pub layers: Range<usize>,
    /// Its input per stash slot (`inputs × m`).
    pub input: Vec<Tensor>,
    /// The gradient of its output arriving from the next stage, per stash slot.
    pub grad_in: Vec<Tensor>,
}

/// The model on a replica's graph.
pub(crate) struct Network {
    pub model: Model,
    pub opts: TrainOptions,
    pub plan: Plan,
    pub tiles_per_chip: u32,
    pub layers: Vec<LayerTensors>,
    pub stages: Vec<StageTensors>,
    pub labels: Tensor,
    pub dlogits: Tensor,
    pub stats: Tensor,
    pub x_stream: Stream,
    pub y_stream: Stream,
}

/// The consecutive layers of each of `p` stages, balanced by layer count.
pub(crate) fn stage_layers(model: &Model, p: usize) -> Vec<Range<usize>> {
    blocks(model.layers().len(), p)
}

impl Network {
    /// Adds the tensors and streams of `model` to `g` (one replica's graph).
    pub fn new(
        g: &mut Graph,
        model: &Model,
        opts: &TrainOptions,
        plan: Plan,
    ) -> Result<Network, TrainError> {
        let tpc = g.target().tiles_per_ipu;
        let m = opts.micro_batch;
        let ranges = stage_layers(model, opts.stages);
        let mut net_layers = Vec::new();
        for (s, r) in ranges.iter().enumerate() {
            for l in r.clone() {
                let depth = if opts.recompute { 1 } else { plan.stash[s] };
                net_layers.push(layer_tensors(g, model, opts, l, s as u32, depth, tpc)?);
            }
        }
        let mut stages = Vec::new();
        for (s, r) in ranges.iter().enumerate() {
            let d = model.layers()[r.start].inputs;
            let out = model.layers()[r.end - 1].outputs;
            let chip = s as u32;
            let input = (0..plan.stash[s])
                .map(|k| {
                    spread(
                        g,
                        d * m,
                        d,
                        opts.tiles,
                        chip,
                        tpc,
                        &format!("stage{s}/input{k}"),
                    )
                })
                .collect::<Result<_, _>>()?;
            let grad_in = if s + 1 < opts.stages {
                (0..plan.stash[s])
                    .map(|k| {
                        spread(
                            g,
                            out * m,
                            out,
                            opts.tiles,
                            chip,
                            tpc,
                            &format!("stage{s}/grad{k}"),
                        )
                    })
                    .collect::<Result<_, _>>()?
            } else {
                vec![]
            };
            stages.push(StageTensors {
                layers: r.clone(),
                input,
                grad_in,
            });
        }
        let last = (opts.stages as u32 - 1) * tpc;
        let c = model.classes();
        let labels = g.add_variable(DType::I32, &[m], "labels");
        let dlogits = g.add_variable(DType::F32, &[c * m], "dlogits");
        let workers = g.target().workers_per_tile as usize;
        let stats = g.add_variable(DType::F32, &[2 * workers], "stats");
        for t in [&labels, &dlogits, &stats] {
            g.set_tile_mapping(t, last)?;
        }
        g.create_host_read_write("stats", &stats)?;
        let x_stream = g.add_host_to_device_stream("x", DType::F32, model.inputs() * m)?;
        let y_stream = g.add_host_to_device_stream("labels", DType::I32, m)?;
        Ok(Network {
            model: model.clone(),
            opts: opts.clone(),
            plan,
            tiles_per_chip: tpc,
            layers: net_layers,
            stages,
            labels,
            dlogits,
            stats,
            x_stream,
            y_stream,
        })
    }

    /// Tile `t` of chip `chip` (replica-local).
    fn tile(&self, chip: u32, t: usize) -> u32 {
        chip * self.tiles_per_chip + t as u32
    }

    fn slot(&self, stage: usize, micro_batch: usize) -> usize {
        micro_batch % self.plan.stash[stage]
    }

    /// The slot of the activations of a stage (0 with recomputation).
    fn act_slot(&self, stage: usize, micro_batch: usize) -> usize {
        if self.opts.recompute {
            0
        } else {
            self.slot(stage, micro_batch)
        }
    }

    /// The input of layer `l` of stage `s` for `micro_batch`.
    fn input_of(&self, s: usize, l: usize, micro_batch: usize) -> &Tensor {
        if l == self.stages[s].layers.start {
            &self.stages[s].input[self.slot(s, micro_batch)]
        } else {
            &self.layers[l - 1].y[self.act_slot(s, micro_batch)]
        }
    }

    /// Stage `s`'s forward pass over `micro_batch`: its stream (stage 0) into `pre`, its
    /// compute sets from `sink`, the copy of its output to the next stage into `post`.
    pub fn forward(
        &self,
        g: &mut Graph,
        s: usize,
        micro_batch: usize,
        sink: &mut Sink,
        io: &mut Io,
    ) -> Result<(), TrainError> {
        if s == 0 {
            let x = &self.stages[0].input[self.slot(0, micro_batch)];
            io.pre.push(Program::stream_to_device(self.x_stream, x));
        }
        self.forward_sets(g, s, micro_batch, sink, 0)?;
        if s + 1 < self.stages.len() {
            let last = self.stages[s].layers.end - 1;
            let from = &self.layers[last].y[self.act_slot(s, micro_batch)];
            let to = &self.stages[s + 1].input[self.slot(s + 1, micro_batch)];
            io.post.push(Program::copy(from, to));
        }
        Ok(())
    }

    /// The forward compute sets of stage `s` from phase `first` of `sink`; returns the next
    /// phase.
    fn forward_sets(
        &self,
        g: &mut Graph,
        s: usize,
        micro_batch: usize,
        sink: &mut Sink,
        first: usize,
    ) -> Result<usize, TrainError> {
        let k = self.act_slot(s, micro_batch);
        let mut phase = first;
        for l in self.stages[s].layers.clone() {
            let cs = sink.set(g, phase);
            let (lt, d) = (&self.layers[l], self.model.layers()[l]);
            let x = self.input_of(s, l, micro_batch).clone();
            for (t, rows) in self.row_blocks(d.outputs) {
                let v = add_forward(g, cs, d.activation, self.opts.half_weights)?;
                let m = self.opts.micro_batch;
                g.connect(
                    v,
                    "w",
                    &lt.w.slice(rows.start * d.inputs..rows.end * d.inputs)?,
                )?;
                g.connect(v, "b", &lt.b.slice(rows.clone())?)?;
                g.connect(v, "x", &x)?;
                g.connect(v, "z", &lt.z[k].slice(rows.start * m..rows.end * m)?)?;
                g.connect(v, "y", &lt.y[k].slice(rows.start * m..rows.end * m)?)?;
                g.set_tile_mapping(v, self.tile(lt.chip, t))?;
            }
            phase += 1;
        }
        Ok(phase)
    }

    /// The non-empty row blocks of a layer of `rows` rows, with their tile.
    fn row_blocks(&self, rows: usize) -> impl Iterator<Item = (usize, Range<usize>)> {
        blocks(rows, self.opts.tiles)
            .into_iter()
            .enumerate()
            .filter(|(_, r)| !r.is_empty())
    }

    /// Stage `s`'s backward pass over `micro_batch` (see the module's documentation).
    pub fn backward(
        &self,
        g: &mut Graph,
        s: usize,
        micro_batch: usize,
        sink: &mut Sink,
        io: &mut Io,
    ) -> Result<(), TrainError> {
        let mut phase = 0;
        if self.opts.recompute {
            phase = self.forward_sets(g, s, micro_batch, sink, 0)?;
        }
        let last_stage = s + 1 == self.stages.len();
        let k = self.act_slot(s, micro_batch);
        if last_stage {
            io.pre
                .push(Program::stream_to_device(self.y_stream, &self.labels));
            let cs = sink.set(g, phase);
            let v = g.add_vertex_of::<crate::codelets::SoftmaxCrossEntropy>(cs)?;
            let logits = &self.layers[self.layers.len() - 1].y[k];
            for (f, t) in [
                ("logits", logits),
                ("labels", &self.labels),
                ("dlogits", &self.dlogits),
                ("stats", &self.stats),
            ] {
                g.connect(v, f, t)?;
            }
            g.set_tile_mapping(v, self.tile(s as u32, 0))?;
        }
        // Every stage's backward pass keeps the loss's phase (empty but on the last stage), so
        // that the stages' layer phases line up in a group's compute sets.
        phase += 1;
        let range = self.stages[s].layers.clone();
        for l in range.clone().rev() {
            let dy = if l + 1 == self.layers.len() {
                self.dlogits.clone()
            } else if l + 1 == range.end {
                self.stages[s].grad_in[self.slot(s, micro_batch)].clone()
            } else {
                self.layers[l + 1]
                    .dx
                    .clone()
                    .expect("every layer but the first has dx")
            };
            let x = self.input_of(s, l, micro_batch).clone();
            let cs = sink.set(g, phase);
            self.grad_set(g, cs, l, k, &dy, &x)?;
            phase += 1;
            if l > 0 {
                let sets = [sink.set(g, phase), sink.set(g, phase + 1)];
                self.partial_sets(g, sets, l)?;
                phase += 2;
            }
        }
        if s > 0 {
            let from = self.layers[range.start]
                .dx
                .as_ref()
                .expect("a later stage's dx");
            let to = &self.stages[s - 1].grad_in[self.slot(s - 1, micro_batch)];
            io.post.push(Program::copy(from, to));
        }
        Ok(())
    }

    /// `DenseGrad` of layer `l` (activation slot `k`) with output gradient `dy`, input `x`.
    fn grad_set(
        &self,
        g: &mut Graph,
        cs: ComputeSet,
        l: usize,
        k: usize,
        dy: &Tensor,
        x: &Tensor,
    ) -> Result<(), TrainError> {
        let (lt, d) = (&self.layers[l], self.model.layers()[l]);
        let m = self.opts.micro_batch;
        for (t, rows) in self.row_blocks(d.outputs) {
            let v = add_grad(g, cs, d.activation)?;
            let act = rows.start * m..rows.end * m;
            let wr = rows.start * d.inputs..rows.end * d.inputs;
            g.connect(v, "dy", &dy.slice(act.clone())?)?;
            g.connect(v, "z", &lt.z[k].slice(act.clone())?)?;
            g.connect(v, "x", x)?;
            g.connect(v, "dz", &lt.dz.slice(act)?)?;
            g.connect(v, "dw", &lt.dw.slice(wr)?)?;
            g.connect(v, "db", &lt.db.slice(rows.clone())?)?;
            g.set_tile_mapping(v, self.tile(lt.chip, t))?;
        }
        Ok(())
    }

    /// `DensePartial` and `SumParts` of layer `l`: its input gradient into `dx`.
    fn partial_sets(
        &self,
        g: &mut Graph,
        [partial, sum]: [ComputeSet; 2],
        l: usize,
    ) -> Result<(), TrainError> {
        let (lt, d) = (&self.layers[l], self.model.layers()[l]);
        let m = self.opts.micro_batch;
        let dx = lt.dx.as_ref().expect("every layer but the first has dx");
        let mut parts = Vec::new();
        for (t, rows) in self.row_blocks(d.outputs) {
            let v = if self.opts.half_weights {
                g.add_vertex_of::<crate::codelets::DensePartialF16>(partial)?
            } else {
                g.add_vertex_of::<crate::codelets::DensePartial>(partial)?
            };
            g.connect(
                v,
                "w",
                &lt.w.slice(rows.start * d.inputs..rows.end * d.inputs)?,
            )?;
            g.connect(v, "dz", &lt.dz.slice(rows.start * m..rows.end * m)?)?;
            g.connect(v, "dx", &lt.parts[t])?;
            g.set_tile_mapping(v, self.tile(lt.chip, t))?;
            parts.push(&lt.parts[t]);
        }
        for (u, rows) in self.row_blocks(d.inputs) {
            let span = rows.start * m..rows.end * m;
            let list = parts
                .iter()
                .map(|p| p.slice(span.clone()))
                .collect::<Result<Vec<_>, _>>()?;
            let v = g.add_vertex_of::<crate::codelets::SumParts>(sum)?;
            g.connect_list(v, "parts", &list)?;
            g.connect(v, "out", &dx.slice(span)?)?;
            g.set_tile_mapping(v, self.tile(lt.chip, u))?;
        }
        Ok(())
    }
}

/// The compute sets of one group of passes: phase `j` of every pass of the group goes into
/// the group's compute set `j`, created when first asked for; they run in phase order.
pub(crate) struct Sink {
    name: String,
    sets: std::collections::BTreeMap<usize, ComputeSet>,
}

impl Sink {
    pub fn new(name: String) -> Sink {
        Sink {
            name,
            sets: Default::default(),
        }
    }

    fn set(&mut self, g: &mut Graph, phase: usize) -> ComputeSet {
        let name = &self.name;
        *self
            .sets
            .entry(phase)
            .or_insert_with(|| g.add_compute_set(&format!("{name} phase {phase}")))
    }

    /// The group's compute sets, in phase order.
    pub fn sets(&self) -> impl Iterator<Item = ComputeSet> + '_ {
        self.sets.values().copied()
    }
}

/// The transfers of a group: streams before its compute sets, copies between stages after.
#[derive(Default)]
pub(crate) struct Io {
    pub pre: Vec<Program>,
    pub post: Vec<Program>,
}

fn add_forward(
    g: &mut Graph,
    cs: ComputeSet,
    act: Activation,
    half: bool,
) -> Result<poplar_compiler::graph::VertexRef, TrainError> {
    use crate::codelets as c;
    Ok(match (act, half) {
        (Activation::None, false) => g.add_vertex_of::<c::DenseForwardNone>(cs)?,
        (Activation::Relu, false) => g.add_vertex_of::<c::DenseForwardRelu>(cs)?,
        (Activation::Gelu, false) => g.add_vertex_of::<c::DenseForwardGelu>(cs)?,
        (Activation::None, true) => g.add_vertex_of::<c::DenseForwardNoneF16>(cs)?,
        (Activation::Relu, true) => g.add_vertex_of::<c::DenseForwardReluF16>(cs)?,
        (Activation::Gelu, true) => g.add_vertex_of::<c::DenseForwardGeluF16>(cs)?,
    })
}

fn add_grad(
    g: &mut Graph,
    cs: ComputeSet,
    act: Activation,
) -> Result<poplar_compiler::graph::VertexRef, TrainError> {
    use crate::codelets as c;
    Ok(match act {
        Activation::None => g.add_vertex_of::<c::DenseGradNone>(cs)?,
        Activation::Relu => g.add_vertex_of::<c::DenseGradRelu>(cs)?,
        Activation::Gelu => g.add_vertex_of::<c::DenseGradGelu>(cs)?,
    })
}

/// A new f32 variable of `len` elements, `rows` rows of `len / rows`, spread in row blocks
/// over tiles `0..tiles` of `chip`.
pub(crate) fn spread(
    g: &mut Graph,
    len: usize,
    rows: usize,
    tiles: usize,
    chip: u32,
    tiles_per_chip: u32,
    name: &str,
) -> Result<Tensor, TrainError> {
    spread_as(
        g,
        DType::F32,
        len,
        rows,
        (tiles, chip, tiles_per_chip),
        name,
    )
}

/// [`spread`] with element type `dtype`; `(tiles, chip, tiles_per_chip)` as there.
pub(crate) fn spread_as(
    g: &mut Graph,
    dtype: DType,
    len: usize,
    rows: usize,
    (tiles, chip, tiles_per_chip): (usize, u32, u32),
    name: &str,
) -> Result<Tensor, TrainError> {
    let t = g.add_variable(dtype, &[len], name);
    let per_row = len / rows.max(1);
    for (k, r) in blocks(rows, tiles).into_iter().enumerate() {
        if !r.is_empty() {
            let tile = chip * tiles_per_chip + k as u32;
            g.set_tile_mapping(&t.slice(r.start * per_row..r.end * per_row)?, tile)?;
        }
    }
    Ok(t)
}

/// Layer `l`'s tensors on chip `chip`, with `depth` slots of activations.
fn layer_tensors(
    g: &mut Graph,
    model: &Model,
    opts: &TrainOptions,
    l: usize,
    chip: u32,
    depth: usize,
    tpc: u32,
) -> Result<LayerTensors, TrainError> {
    let d = model.layers()[l];
    let (n, o, m, tiles) = (d.inputs, d.outputs, opts.micro_batch, opts.tiles);
    let wt = if opts.half_weights {
        DType::F16
    } else {
        DType::F32
    };
    let w = spread_as(g, wt, o * n, o, (tiles, chip, tpc), &format!("w{l}"))?;
    let mut var = |len, rows, name: String| spread(g, len, rows, tiles, chip, tpc, &name);
    let b = var(o, o, format!("b{l}"))?;
    let dw = var(o * n, o, format!("w{l}/grad"))?;
    let db = var(o, o, format!("b{l}/grad"))?;
    let z = (0..depth)
        .map(|k| var(o * m, o, format!("z{l}/{k}")))
        .collect::<Result<_, _>>()?;
    let y = (0..depth)
        .map(|k| var(o * m, o, format!("y{l}/{k}")))
        .collect::<Result<_, _>>()?;
    let dz = var(o * m, o, format!("dz{l}"))?;
    let dx = if l > 0 {
        Some(var(n * m, n, format!("dx{l}"))?)
    } else {
        None
    };
    let mut parts = Vec::new();
    if l > 0 {
        for (t, r) in blocks(o, tiles).into_iter().enumerate() {
            if r.is_empty() {
                continue;
            }
            let p = g.add_variable(DType::F32, &[n * m], &format!("dx{l}/partial{t}"));
            g.set_tile_mapping(&p, chip * tpc + t as u32)?;
            parts.push(p);
        }
    }
    for (t, name) in [(&w, format!("w{l}")), (&b, format!("b{l}"))] {
        g.create_host_read_write(&name, t)?;
    }
    g.create_host_read_write(&format!("w{l}/grad"), &dw)?;
    g.create_host_read_write(&format!("b{l}/grad"), &db)?;
    Ok(LayerTensors {
        chip,
        w,
        b,
        dw,
        db,
        z,
        y,
        dz,
        dx,
        parts,
    })
}
