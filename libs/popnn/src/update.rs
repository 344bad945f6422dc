//! After the pipeline: the gradients combined over the replicas, the optimizer's update, and
//! the weights brought back to every replica, for each place the optimizer's state can live
//! ([`TensorLocation`](crate::options::TensorLocation)). Per parameter tensor (`w<l>`, `b<l>`)
//! of `n` elements on its layer's tiles, with `k` f32 of state per parameter (0 SGD, 1
//! momentum, 2 Adam):
//!
//! | state location | gradients | update on | state per tile | saves |
//! |---|---|---|---|---|
//! | on chip | all-reduce | the whole tensor | `k·n` (its rows' share) | — |
//! | on chip, sharded over `G` | reduce-scatter in place (then all-reduce across groups) | the replica's shard of an f32 master copy | `(k+1)·⌈n/G⌉` | `k·n − (k+1)·⌈n/G⌉` |
//! | off chip | all-reduce | the whole tensor, its state loaded into staging buffers and stored back | staging for the largest tensor's rows | all but one tensor's state |
//! | off chip, sharded over `G` | reduce-scatter in place | the shard, master copy on chip, state staged | `⌈n/G⌉` master + staging of one shard | both |
//!
//! Sharded, the replica at position `i` of its group owns run `i` of each tile's piece of the
//! tensor (`⌈L/G⌉` elements of a piece of `L`, zero-padded: `collectives`' in-place layout with
//! sequential ring order), and the weights are all-gathered straight into `w<l>` after the
//! update. The padding is updated with zero gradients and never reaches the weights. Host
//! names: state `<param>/opt a`, `<param>/opt b` (tensors on chip, remote buffers off chip,
//! one row per piece), master shards `<param>/master`; Adam's powers `opt powers` on tile 0.

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{ComputeSet, Graph, Tensor};
use poplar_core::dtype::DType;

use crate::network::Network;
use crate::optim::Optimizer;
use crate::options::{TensorStorage, TrainError, TrainOptions};

/// The label of the gradient all-reduce in profiles (a prefix of the collectives' labels).
pub const ALL_REDUCE_NAME: &str = "gradients";

/// The programs after the pipeline.
pub(crate) struct Update {
    /// Combining the gradients over the replicas, alone (for static estimates of its cost).
    pub reduce: Program,
    /// Everything after the pipeline: the reduction, the update (labelled `update`) and, when
    /// sharded, the all-gathers; sharded tensors are reduced, updated and gathered one after
    /// another.
    pub step: Program,
}

/// One tensor the optimizer updates: parameters (or their master shard) and gradients of the
/// same layout, in pieces of one tile each.
#[derive(Clone)]
struct Target {
    name: String,
    /// The f16 weights (or their share) to round the updated f32 master copy into.
    cast_to: Option<Tensor>,
    /// The chip of its tiles (its state's Streaming Memory).
    chip: u32,
    params: Tensor,
    grad: Tensor,
    pieces: Vec<(u32, std::ops::Range<usize>)>,
}

/// The state names.
pub(crate) const STATE: [&str; 2] = ["opt a", "opt b"];

pub(crate) fn build(g: &mut Graph, net: &Network) -> Result<Update, TrainError> {
    let opts = &net.opts;
    let mut params = Vec::new();
    for (l, lt) in net.layers.iter().enumerate() {
        params.push((format!("w{l}"), lt.w.clone(), lt.dw.clone()));
        params.push((format!("b{l}"), lt.b.clone(), lt.db.clone()));
    }
    let mut steps = Vec::new();
    let powers = adam_powers(g, opts, &mut steps)?;
    let Some(group) = opts.shard_group() else {
        let reduce = all_reduce(g, opts, &params)?;
        let targets = unsharded(g, &params)?;
        if opts.optimizer_state_location.storage == TensorStorage::OnChip {
            let cs = g.add_compute_set(opts.optimizer.name());
            for t in &targets {
                let state = state_tensors(g, opts, t)?;
                update_vertices(g, cs, opts, t, &state, powers.as_ref())?;
            }
            steps.push(Program::execute(cs));
            steps.extend(round_to_half(g, &targets)?);
        } else {
            steps.extend(
                per_target(g, opts, &targets, powers.as_ref())?
                    .into_iter()
                    .flatten(),
            );
        }
        return Ok(Update {
            reduce: reduce.clone(),
            step: Program::seq(vec![reduce, Program::labelled("update", steps)]),
        });
    };
    // Sharded: per tensor, its reduce-scatter, its update and its all-gather, one tensor
    // after another (the collectives share one pool of buffers, which holds the shard).
    let shards = sharded(g, opts, &params, group)?;
    let targets: Vec<Target> = shards.iter().map(|s| s.target.clone()).collect();
    let updates = per_target(g, opts, &targets, powers.as_ref())?;
    let reduce = Program::seq(shards.iter().map(|s| s.reduce.clone()).collect());
    for (shard, update) in shards.into_iter().zip(updates) {
        steps.push(shard.reduce);
        steps.push(Program::labelled("update", update));
        steps.push(shard.gather);
    }
    // The reduce-scatters leave partial sums in the accumulators: zeroed last (with groups
    // of one replica the shard is the accumulator itself).
    let zero = g.add_compute_set("zero gradients");
    for (_, _, grad) in &params {
        popops::fill(g, zero, grad, 0f32)?;
    }
    steps.push(Program::execute(zero));
    Ok(Update {
        reduce,
        step: Program::seq(steps),
    })
}

/// The update of each target in turn: its own compute set, with its state on chip, or
/// loaded from and stored to Streaming Memory around it.
fn per_target(
    g: &mut Graph,
    opts: &TrainOptions,
    targets: &[Target],
    powers: Option<&Tensor>,
) -> Result<Vec<Vec<Program>>, TrainError> {
    let mut out = if opts.optimizer_state_location.storage == TensorStorage::OffChip {
        staged(g, opts, targets, powers)?
    } else {
        targets
            .iter()
            .map(|t| {
                let cs = g.add_compute_set(&format!("{} {}", opts.optimizer.name(), t.name));
                let state = state_tensors(g, opts, t)?;
                update_vertices(g, cs, opts, t, &state, powers)?;
                Ok(vec![Program::execute(cs)])
            })
            .collect::<Result<Vec<_>, TrainError>>()?
    };
    for (t, steps) in targets.iter().zip(&mut out) {
        steps.extend(round_to_half(g, std::slice::from_ref(t))?);
    }
    Ok(out)
}

/// The updated f32 master copies of `targets` rounded into their f16 weights (or shares), in
/// one compute set (none without f16 weights).
fn round_to_half(g: &mut Graph, targets: &[Target]) -> Result<Option<Program>, TrainError> {
    let casts: Vec<&Target> = targets.iter().filter(|t| t.cast_to.is_some()).collect();
    if casts.is_empty() {
        return Ok(None);
    }
    let cs = g.add_compute_set("round weights to f16");
    let workers = g.target().workers_per_tile as usize;
    for t in casts {
        let out = t.cast_to.as_ref().expect("filtered");
        // `Cast<float,half>` is single-worker: a vertex per worker's run of each piece.
        for (tile, r) in &t.pieces {
            for run in crate::model::blocks(r.len(), workers) {
                if run.is_empty() {
                    continue;
                }
                let span = r.start + run.start..r.start + run.end;
                let v = g.add_vertex_of::<codelets::half::CastF32F16>(cs)?;
                g.connect(v, "input", &t.params.slice(span.clone())?)?;
                g.connect(v, "out", &out.slice(span)?)?;
                g.set_tile_mapping(v, *tile)?;
            }
        }
    }
    Ok(Some(Program::execute(cs)))
}

/// The all-reduce of the gradients over the replicas (nothing with one replica), in buckets
/// of consecutive tensors, largest first, of at most `all_reduce_bucket_bytes` each (a tensor
/// larger than that alone), one collective per bucket, all sharing one pool of buffers: one
/// collective for a small model (its latency paid once), and buffers no longer than the
/// largest bucket's share for a large one.
fn all_reduce(
    g: &mut Graph,
    opts: &TrainOptions,
    params: &[(String, Tensor, Tensor)],
) -> Result<Program, TrainError> {
    if opts.replicas == 1 {
        return Ok(Program::nop());
    }
    let pooled = collectives::Options::default()
        .with_scratch(&collectives::Scratch::new("all-reduce buffers"));
    let mut order: Vec<&(String, Tensor, Tensor)> = params.iter().collect();
    order.sort_by_key(|p| std::cmp::Reverse(p.2.num_elements()));
    let mut buckets: Vec<Vec<&(String, Tensor, Tensor)>> = Vec::new();
    let mut bytes = usize::MAX;
    for p in order {
        let b = 4 * p.2.num_elements();
        if bytes.saturating_add(b) > opts.all_reduce_bucket_bytes {
            buckets.push(Vec::new());
            bytes = 0;
        }
        bytes += b;
        buckets.last_mut().expect("a bucket").push(p);
    }
    let mut steps = Vec::new();
    for bucket in buckets {
        let grads: Vec<Tensor> = bucket.iter().map(|p| p.2.clone()).collect();
        let names: Vec<&str> = bucket.iter().map(|p| p.0.as_str()).collect();
        let reduce = collectives::all_reduce_in_place(
            g,
            &grads,
            collectives::Op::Add,
            collectives::Group::All,
            &pooled,
            &format!("{ALL_REDUCE_NAME} {}", names.join(" ")),
        )?;
        steps.push(reduce.program);
    }
    Ok(Program::seq(steps))
}

/// Unsharded: each tensor updated where it is, or through an f32 master copy laid out as
/// its f16 weights.
fn unsharded(
    g: &mut Graph,
    params: &[(String, Tensor, Tensor)],
) -> Result<Vec<Target>, TrainError> {
    params
        .iter()
        .map(|(name, p, grad)| {
            let (master, cast_to) = if p.dtype() == DType::F16 {
                let m = laid_out_as(g, p, &format!("{name}/master"))?;
                g.create_host_read_write(&format!("{name}/master"), &m)?;
                (m, Some(p.clone()))
            } else {
                (p.clone(), None)
            };
            Ok(Target {
                name: name.clone(),
                cast_to,
                chip: chip_of(g, p)?,
                params: master,
                grad: grad.clone(),
                pieces: pieces(g, p)?,
            })
        })
        .collect()
}

/// The pieces of `t` (tile, element range), in tile order.
fn pieces(g: &Graph, t: &Tensor) -> Result<Vec<(u32, std::ops::Range<usize>)>, TrainError> {
    let mut out = Vec::new();
    for (tile, ranges) in g.tile_mapping(t)?.into_iter().enumerate() {
        out.extend(ranges.into_iter().map(|r| (tile as u32, r)));
    }
    Ok(out)
}

/// The chip of `t`'s first piece (a layer's tensors are on one chip).
fn chip_of(g: &Graph, t: &Tensor) -> Result<u32, TrainError> {
    let first = pieces(g, t)?.first().map_or(0, |p| p.0);
    Ok(g.target().ipu_of(first))
}

/// A new f32 variable laid out as `like` (same tiles, same pieces).
fn laid_out_as(g: &mut Graph, like: &Tensor, name: &str) -> Result<Tensor, TrainError> {
    laid_out_as_type(g, DType::F32, like, name)
}

fn laid_out_as_type(
    g: &mut Graph,
    dtype: DType,
    like: &Tensor,
    name: &str,
) -> Result<Tensor, TrainError> {
    let t = g.add_variable(dtype, &[like.num_elements()], name);
    for (tile, r) in pieces(g, like)? {
        g.set_tile_mapping(&t.slice(r)?, tile)?;
    }
    Ok(t)
}

/// One sharded tensor: the reduce-scatter of its gradient (and the all-reduce of the shard
/// across groups), the master shard it updates, and the all-gather into the weights.
struct Shard {
    reduce: Program,
    target: Target,
    gather: Program,
}

/// Sharded over `group` replicas, per parameter tensor, longest first (so that the pool of
/// buffers the collectives share never grows).
fn sharded(
    g: &mut Graph,
    opts: &TrainOptions,
    params: &[(String, Tensor, Tensor)],
    group: u32,
) -> Result<Vec<Shard>, TrainError> {
    use collectives::{Group, Op};
    // One pool of send and receive buffers for all of them.
    let seq = collectives::Options {
        ring_order: collectives::RingOrder::Sequential,
        scratch: Some(collectives::Scratch::new("shard buffers")),
        ..Default::default()
    };
    let within = if group == opts.replicas {
        Group::All
    } else {
        Group::Consecutive(group)
    };
    let mut order: Vec<&(String, Tensor, Tensor)> = params.iter().collect();
    order.sort_by_key(|p| std::cmp::Reverse(p.1.num_elements()));
    let mut out = Vec::new();
    for (name, p, grad) in order {
        let label = format!("{ALL_REDUCE_NAME} {name}");
        let rs = collectives::reduce_scatter_in_place(g, grad, Op::Add, within, &seq, &label)?;
        let share = rs.outputs[0].clone();
        let mut reduce = vec![rs.program];
        if group < opts.replicas {
            let across = collectives::all_reduce_in_place(
                g,
                std::slice::from_ref(&share),
                Op::Add,
                Group::Orthogonal(opts.replicas / group),
                &Default::default(),
                &format!("{ALL_REDUCE_NAME} {name} across groups"),
            )?;
            reduce.push(across.program);
        }
        let master = laid_out_as(g, &share, &format!("{name}/master"))?;
        g.create_host_read_write(&format!("{name}/master"), &master)?;
        // f16 weights gather the master shard rounded to f16.
        let cast_to = if p.dtype() == DType::F16 {
            Some(laid_out_as_type(
                g,
                DType::F16,
                &share,
                &format!("{name}/half shard"),
            )?)
        } else {
            None
        };
        let label = format!("gather {name}");
        let from = cast_to.as_ref().unwrap_or(&master);
        let ag = collectives::all_gather_to(g, from, p, within, &seq, &label)?;
        out.push(Shard {
            reduce: Program::seq(reduce),
            target: Target {
                name: name.clone(),
                cast_to,
                chip: chip_of(g, p)?,
                pieces: pieces(g, &master)?,
                params: master,
                grad: share,
            },
            gather: ag.program,
        });
    }
    Ok(out)
}

/// Adam's powers `[β₁ᵗ, β₂ᵗ]` on tile 0, stepped first.
fn adam_powers(
    g: &mut Graph,
    opts: &TrainOptions,
    steps: &mut Vec<Program>,
) -> Result<Option<Tensor>, TrainError> {
    let Optimizer::Adam { beta1, beta2, .. } = opts.optimizer else {
        return Ok(None);
    };
    let powers = g.add_variable(DType::F32, &[2], "opt powers");
    g.set_tile_mapping(&powers, 0)?;
    g.create_host_read_write("opt powers", &powers)?;
    let cs = g.add_compute_set("adam step");
    let v = g.add_vertex_of::<crate::codelets::AdamStep>(cs)?;
    g.connect(v, "powers", &powers)?;
    g.set_vertex_state(v, "beta1", beta1)?;
    g.set_vertex_state(v, "beta2", beta2)?;
    g.set_tile_mapping(v, 0)?;
    steps.push(Program::execute(cs));
    Ok(Some(powers))
}

/// The state of `t` on chip, laid out as its parameters, host readable and writable.
fn state_tensors(
    g: &mut Graph,
    opts: &TrainOptions,
    t: &Target,
) -> Result<Vec<Tensor>, TrainError> {
    STATE[..opts.optimizer.state_per_param()]
        .iter()
        .map(|s| {
            let name = format!("{}/{s}", t.name);
            let st = laid_out_as(g, &t.params, &name)?;
            g.create_host_read_write(&name, &st)?;
            Ok(st)
        })
        .collect()
}

/// The optimizer's vertices over `t`, one per piece, with the state `state` (whole tensors
/// laid out as `t.params`).
fn update_vertices(
    g: &mut Graph,
    cs: ComputeSet,
    opts: &TrainOptions,
    t: &Target,
    state: &[Tensor],
    powers: Option<&Tensor>,
) -> Result<(), TrainError> {
    for (tile, r) in &t.pieces {
        let st: Vec<Tensor> = state
            .iter()
            .map(|s| s.slice(r.clone()))
            .collect::<Result<_, _>>()?;
        let v = update_vertex(g, cs, opts, &st, powers)?;
        g.connect(v, "params", &t.params.slice(r.clone())?)?;
        g.connect(v, "grad", &t.grad.slice(r.clone())?)?;
        g.set_tile_mapping(v, *tile)?;
    }
    Ok(())
}

/// Off chip: per target, a remote buffer per state kind with one row per piece (as long as
/// the longest piece); per tile one staging buffer per state kind, as long as the most any
/// target stages there. Per target in turn: load its rows, update, store them back.
fn staged(
    g: &mut Graph,
    opts: &TrainOptions,
    targets: &[Target],
    powers: Option<&Tensor>,
) -> Result<Vec<Vec<Program>>, TrainError> {
    let kinds = opts.optimizer.state_per_param();
    let row_len = |t: &Target| t.pieces.iter().map(|(_, r)| r.len()).max().unwrap_or(0);
    let mut need: std::collections::BTreeMap<u32, usize> = Default::default();
    for t in targets {
        let mut here: std::collections::BTreeMap<u32, usize> = Default::default();
        for (tile, _) in &t.pieces {
            *here.entry(*tile).or_default() += row_len(t);
        }
        for (tile, n) in here {
            let e = need.entry(tile).or_default();
            *e = (*e).max(n);
        }
    }
    let mut staging: Vec<std::collections::BTreeMap<u32, Tensor>> = vec![Default::default(); kinds];
    for (k, stage) in staging.iter_mut().enumerate() {
        for (&tile, &n) in &need {
            let s = g.add_variable(
                DType::F32,
                &[n],
                &format!("{} (staged) tile {tile}", STATE[k]),
            );
            g.set_tile_mapping(&s, tile)?;
            stage.insert(tile, s);
        }
    }
    let mut steps = Vec::new();
    for t in targets {
        let len = row_len(t);
        let mut used: std::collections::BTreeMap<u32, usize> = Default::default();
        let mut rows: Vec<Vec<Tensor>> = vec![vec![]; kinds];
        let mut state_pieces: Vec<Vec<Tensor>> = vec![vec![]; kinds];
        for (tile, r) in &t.pieces {
            let at = used.entry(*tile).or_default();
            for k in 0..kinds {
                rows[k].push(staging[k][tile].slice(*at..*at + len)?);
                state_pieces[k].push(staging[k][tile].slice(*at..*at + r.len())?);
            }
            *at += len;
        }
        let cs = g.add_compute_set(&format!("{} {}", opts.optimizer.name(), t.name));
        for (j, (tile, r)) in t.pieces.iter().enumerate() {
            let st: Vec<Tensor> = state_pieces.iter().map(|p| p[j].clone()).collect();
            let v = update_vertex(g, cs, opts, &st, powers)?;
            g.connect(v, "params", &t.params.slice(r.clone())?)?;
            g.connect(v, "grad", &t.grad.slice(r.clone())?)?;
            g.set_tile_mapping(v, *tile)?;
        }
        let mut load = Vec::new();
        let mut store = Vec::new();
        for (k, row) in rows.iter().enumerate() {
            let name = format!("{}/{}", t.name, STATE[k]);
            let rows = t.pieces.len() as u64;
            let buf = g.add_remote_buffer_on_chip(&name, DType::F32, len as u64, rows, t.chip)?;
            let all = poplar_compiler::graph::concat(row)?;
            load.push(Program::copy_from_remote(buf, &all, None));
            store.push(Program::copy_to_remote(&all, buf, None));
        }
        let mut mine = load;
        mine.push(Program::execute(cs));
        mine.extend(store);
        steps.push(mine);
    }
    Ok(steps)
}

/// The optimizer's vertex over a block of state `st` (its `params` and `grad` are connected by
/// the caller).
fn update_vertex(
    g: &mut Graph,
    cs: ComputeSet,
    opts: &TrainOptions,
    st: &[Tensor],
    powers: Option<&Tensor>,
) -> Result<poplar_compiler::graph::VertexRef, TrainError> {
    use crate::codelets as c;
    Ok(match opts.optimizer {
        Optimizer::Sgd => {
            let v = g.add_vertex_of::<c::Sgd>(cs)?;
            g.set_vertex_state(v, "scale", opts.update_scale())?;
            v
        }
        Optimizer::Momentum { momentum } => {
            let v = g.add_vertex_of::<c::Momentum>(cs)?;
            g.connect(v, "velocity", &st[0])?;
            g.set_vertex_state(v, "momentum", momentum)?;
            g.set_vertex_state(v, "lr", opts.lr)?;
            g.set_vertex_state(v, "scale", opts.grad_scale())?;
            v
        }
        Optimizer::Adam { beta1, beta2, eps } => {
            let v = g.add_vertex_of::<c::Adam>(cs)?;
            g.connect(v, "m", &st[0])?;
            g.connect(v, "v", &st[1])?;
            if let Some(p) = powers {
                g.connect(v, "powers", p)?;
            }
            for (f, x) in [
                ("lr", opts.lr),
                ("scale", opts.grad_scale()),
                ("beta1", beta1),
                ("beta2", beta2),
                ("eps", eps),
            ] {
                g.set_vertex_state(v, f, x)?;
            }
            v
        }
    })
}

/// Replica `index`'s shard of a tensor with values `v` laid out in pieces of `lens` elements,
/// sharded over `group`: run `index` of each piece, zero-padded to `⌈L/G⌉`.
pub fn shard_of(v: &[f32], lens: &[usize], group: u32, index: u32) -> Vec<f32> {
    let (g, i) = (group.max(1) as usize, index as usize);
    let mut out = Vec::new();
    let mut at = 0;
    for &l in lens {
        let w = l.div_ceil(g);
        let run = (i * w).min(l)..((i + 1) * w).min(l);
        out.extend_from_slice(&v[at + run.start..at + run.end]);
        out.resize(out.len() + w - run.len(), 0.0);
        at += l;
    }
    out
}

/// The tensor whose pieces of `lens` elements the `shards` of one group (in group order) hold:
/// the inverse of [`shard_of`].
pub fn unshard(shards: &[&[f32]], lens: &[usize]) -> Vec<f32> {
    let g = shards.len().max(1);
    let mut out = Vec::with_capacity(lens.iter().sum());
    let mut at = 0;
    for &l in lens {
        let w = l.div_ceil(g);
        for k in 0..l {
            out.push(shards[k / w][at + k % w]);
        }
        at += w;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn shards_are_runs_of_each_piece_zero_padded() {
        let v: Vec<f32> = (0..10).map(|i| i as f32).collect();
        // Pieces of 7 and 3 over 3 replicas: runs of 3 and 1.
        assert_eq!(super::shard_of(&v, &[7, 3], 3, 0), vec![0.0, 1.0, 2.0, 7.0]);
        assert_eq!(super::shard_of(&v, &[7, 3], 3, 2), vec![6.0, 0.0, 0.0, 9.0]);
        let shards: Vec<Vec<f32>> = (0..3).map(|i| super::shard_of(&v, &[7, 3], 3, i)).collect();
        let refs: Vec<&[f32]> = shards.iter().map(Vec::as_slice).collect();
        assert_eq!(super::unshard(&refs, &[7, 3]), v);
    }
}
