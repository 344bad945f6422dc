//! The replicated training graph and its programs.
//!
//! Per replica (replica-local tiles): the parameters, the gradient accumulator and the loss
//! statistics on tile 0; the samples of a micro-batch split over tiles `1..=k`, each computing
//! the summed gradient of its samples in three compute sets (`mlp::Hidden`, `mlp::Logits`,
//! `mlp::Backward`, multi-worker vertices that share the work over the tile's six worker
//! contexts), which tile 0 adds to the accumulator (`mlp::Accumulate`). After `GA` micro-batches the accumulators of all replicas are
//! all-reduced in place (the collectives library, `Op::Add`), and every replica applies the
//! same update (`mlp::Sgd`, `mlp::Momentum`, or `mlp::AdamStep` then `mlp::Adam`: `optim`),
//! so the parameters and the optimizer's state stay equal on every replica.
//!
//! Programs: 0 the training step, 1 one micro-batch, 2 the all-reduce alone (1 and 2 are
//! there for the static estimates of the scaling report; they are never run).

use anyhow::Context as _;
use poplar::program::Program;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Executable, Graph, Target};

use crate::config::{split, Config};

/// Index of the training step program.
pub const STEP: usize = 0;
/// Index of the one-micro-batch program.
pub const MICRO_BATCH: usize = 1;
/// Index of the all-reduce program.
pub const ALL_REDUCE: usize = 2;
/// The label of the gradient all-reduce in profiles.
pub const ALL_REDUCE_NAME: &str = "gradients";

/// The labels of the gradient reduction in a profile (prefixes of the collectives' labels):
/// the all-reduce, or with sharding the reduce-scatter, the all-reduce of the shards across
/// groups and the all-gather of the weights.
pub fn reduction_labels(cfg: &Config) -> Vec<String> {
    match cfg.shard {
        None => vec![format!("allReduce({ALL_REDUCE_NAME})")],
        Some(_) => vec![
            format!("reduceScatter({ALL_REDUCE_NAME})"),
            "allReduce(gradient shards)".into(),
            "allGather(params)".into(),
        ],
    }
}

/// The machine a run uses: one chip per replica on a Pod64, or on several Pods beyond 64.
pub fn machine(replicas: u32) -> Target {
    if replicas <= 64 {
        Target::pod64()
    } else {
        Target::pods(replicas.div_ceil(64), 64)
    }
}

/// The compiled training executable and what was chosen for it.
pub struct Compiled {
    pub exe: Executable,
    pub plan: collectives::Plan,
    pub compile_seconds: f64,
}

/// Builds and compiles the graph of `cfg` for `machine`.
pub fn build(cfg: &Config, machine: &Target) -> anyhow::Result<Compiled> {
    let t0 = std::time::Instant::now();
    let shape = cfg.shape;
    let p = shape.params();
    let mut g = Graph::new_replicated(machine, cfg.replicas, 1)?;
    let params = g.add_variable(DType::F32, &[p], "params");
    let grad = g.add_variable(DType::F32, &[p], "grad");
    let stats = g.add_variable(DType::F32, &[2], "stats");
    for t in [&params, &grad, &stats] {
        g.set_tile_mapping(t, 0)?;
    }
    g.create_host_read_write("params", &params)?;
    g.create_host_read_write("stats", &stats)?;
    g.create_host_read_write("grad", &grad)?;
    let m = cfg.micro_batch;
    let d = shape.inputs;
    let x_stream = g.add_host_to_device_stream("x", DType::F32, m * d)?;
    let y_stream = g.add_host_to_device_stream("y", DType::I32, m)?;

    let (h, c) = (shape.hidden, shape.classes);
    let (b1_at, w2_at, b2_at) = shape.offsets();
    let w1 = params.slice(0..b1_at)?;
    let b1 = params.slice(b1_at..w2_at)?;
    let w2 = params.slice(w2_at..b2_at)?;
    let b2 = params.slice(b2_at..p)?;
    let hidden = g.add_compute_set("hidden");
    let logits = g.add_compute_set("logits");
    let backward = g.add_compute_set("backward");
    let acc = g.add_compute_set("accumulate");
    let (mut xs, mut ys, mut parts, mut part_stats) = (vec![], vec![], vec![], vec![]);
    for (k, r) in split(m, cfg.tiles).into_iter().enumerate() {
        let tile = 1 + k as u32;
        let n = r.len();
        let x = g.add_variable(DType::F32, &[n * d], &format!("x{k}"));
        let y = g.add_variable(DType::I32, &[n], &format!("y{k}"));
        let act = g.add_variable(DType::F32, &[n * h], &format!("act{k}"));
        let lg = g.add_variable(DType::F32, &[n * c], &format!("logits{k}"));
        let gp = g.add_variable(DType::F32, &[p], &format!("grad{k}"));
        let sp = g.add_variable(DType::F32, &[2], &format!("stats{k}"));
        for t in [&x, &y, &act, &lg, &gp, &sp] {
            g.set_tile_mapping(t, tile)?;
        }
        let v = g.add_vertex_of::<crate::codelets::Hidden>(hidden)?;
        for (f, t) in [("w1", &w1), ("b1", &b1), ("x", &x), ("act", &act)] {
            g.connect(v, f, t)?;
        }
        g.set_tile_mapping(v, tile)?;
        let v = g.add_vertex_of::<crate::codelets::Logits>(logits)?;
        for (f, t) in [("w2", &w2), ("b2", &b2), ("act", &act), ("logits", &lg)] {
            g.connect(v, f, t)?;
        }
        g.set_tile_mapping(v, tile)?;
        let v = g.add_vertex_of::<crate::codelets::Backward>(backward)?;
        for (f, t) in [
            ("w2", &w2),
            ("x", &x),
            ("y", &y),
            ("act", &act),
            ("logits", &lg),
            ("grad", &gp),
            ("stats", &sp),
        ] {
            g.connect(v, f, t)?;
        }
        g.set_tile_mapping(v, tile)?;
        xs.push(x);
        ys.push(y);
        parts.push(gp);
        part_stats.push(sp);
    }
    for (list, into) in [(&parts, &grad), (&part_stats, &stats)] {
        let v = g.add_vertex_of::<crate::codelets::Accumulate>(acc)?;
        g.connect_list(v, "parts", list)?;
        g.connect(v, "acc", into)?;
        g.set_tile_mapping(v, 0)?;
    }
    let Reduction {
        reduce,
        plan,
        update,
        gather,
    } = match cfg.shard {
        None => {
            let update = optimizer_update(&mut g, cfg, &params, &grad)?;
            let reduce = collectives::all_reduce_in_place(
                &mut g,
                std::slice::from_ref(&grad),
                collectives::Op::Add,
                collectives::Group::All,
                &collectives::Options::default(),
                ALL_REDUCE_NAME,
            )
            .context("building the gradient all-reduce")?;
            Reduction {
                reduce: reduce.program,
                plan: reduce.plan,
                update,
                gather: Program::nop(),
            }
        }
        Some(group) => sharded(&mut g, cfg, &params, &grad, group)?,
    };
    let micro = Program::seq(vec![
        Program::stream_to_device(x_stream, &poplar::concat(&xs)?),
        Program::stream_to_device(y_stream, &poplar::concat(&ys)?),
        Program::execute(hidden),
        Program::execute(logits),
        Program::execute(backward),
        Program::execute(acc),
    ]);
    let step = Program::seq(vec![
        Program::labelled(
            "micro-batches",
            vec![Program::repeat(cfg.accumulate as u32, micro.clone())],
        ),
        reduce.clone(),
        Program::labelled("update", vec![update]),
        gather,
    ]);
    let exe = compile(&g, &[step, micro, reduce], &CompileOptions::default())
        .context("compiling the training graph")?;
    Ok(Compiled {
        exe,
        plan,
        compile_seconds: t0.elapsed().as_secs_f64(),
    })
}

/// How the gradients are combined and the parameters updated: the reduction's program (and
/// its plan), the update's compute sets, and what follows the update.
struct Reduction {
    reduce: Program,
    plan: collectives::Plan,
    update: Program,
    gather: Program,
}

/// Replicated tensor sharding over groups of `group` consecutive replicas (ZeRO's optimizer
/// state partitioning): a reduce-scatter in place on the accumulator leaves member `i` of
/// each group with elements `i·S .. (i+1)·S` of the group's summed gradient (`S = ⌈P/G⌉`,
/// zero-padded at the end; the rings are sequential, so ring position = member index), an
/// all-reduce across the groups (`Orthogonal`, when there are several) completes the sum, the
/// accumulator is zeroed, the optimizer updates the replica's shard of the master weights
/// (`params shard`) with `S` elements of state, and an all-gather within the group writes the
/// shards straight into `params` (the padding never reaches it). Neither collective stages a
/// copy of the whole vector.
fn sharded(
    g: &mut Graph,
    cfg: &Config,
    params: &poplar::Tensor,
    grad: &poplar::Tensor,
    group: u32,
) -> anyhow::Result<Reduction> {
    use collectives::{Group, Op};
    let opts = collectives::Options::default();
    // Ring position = index in the group: member `i` owns elements `i·S ..` (`set_params`).
    let seq = collectives::Options {
        ring_order: collectives::RingOrder::Sequential,
        ..opts
    };
    let within = if group == cfg.replicas {
        Group::All
    } else {
        Group::Consecutive(group)
    };
    let rs = collectives::reduce_scatter_in_place(g, grad, Op::Add, within, &seq, ALL_REDUCE_NAME)
        .context("building the gradient reduce-scatter")?;
    let gshard = rs.outputs[0].clone();
    let mut reduce = vec![rs.program];
    if group < cfg.replicas {
        let across = collectives::all_reduce_in_place(
            g,
            std::slice::from_ref(&gshard),
            Op::Add,
            Group::Orthogonal(cfg.replicas / group),
            &opts,
            "gradient shards",
        )
        .context("building the all-reduce of the shards across groups")?;
        reduce.push(across.program);
    }
    let zero = g.add_compute_set("zero gradients");
    codelets::ops::fill(g, zero, grad, 0f32).context("zeroing the gradients")?;
    reduce.push(Program::execute(zero));
    let pshard = g.add_variable(DType::F32, &[cfg.shard_len()], "params shard");
    g.set_tile_mapping(&pshard, 0)?;
    g.create_host_read_write("params shard", &pshard)?;
    let update = optimizer_update(g, cfg, &pshard, &gshard)?;
    let ag = collectives::all_gather_to(g, &pshard, params, within, &seq, "params")
        .context("building the all-gather of the weights")?;
    Ok(Reduction {
        reduce: Program::seq(reduce),
        plan: rs.plan,
        update,
        gather: ag.program,
    })
}

/// The optimizer's update of `params` from `grad` (the whole vectors, or a replica's shards),
/// as a program. On chip (`Config::state_chunks` `None`) the state lives on tile 0 next to the
/// parameters, host readable and writable: `opt a` (momentum's velocity, Adam's `m`), `opt b`
/// (Adam's `v`). In Streaming Memory (`Some(K)`) the same names are remote buffers of `K` rows
/// of `⌈n/K⌉` elements; for each row in turn the update loads it into a staging tensor on
/// tile 0, updates that chunk of the parameters, and stores it back, so tile 0 holds one
/// chunk of state instead of all of it. Adam's powers `[β₁ᵗ, β₂ᵗ]` (`opt powers`) stay on chip.
fn optimizer_update(
    g: &mut Graph,
    cfg: &Config,
    params: &poplar::Tensor,
    grad: &poplar::Tensor,
) -> anyhow::Result<Program> {
    use crate::optim::Optimizer;
    let n = params.num_elements();
    let per_param = cfg.optimizer.state_per_param();
    let names = ["opt a", "opt b"];
    let mut steps = Vec::new();
    let powers = match cfg.optimizer {
        Optimizer::Adam { beta1, beta2, .. } => {
            let powers = g.add_variable(DType::F32, &[2], "opt powers");
            g.set_tile_mapping(&powers, 0)?;
            g.create_host_read_write("opt powers", &powers)?;
            let step = g.add_compute_set("adam step");
            let s = g.add_vertex_of::<crate::codelets::AdamStep>(step)?;
            g.connect(s, "powers", &powers)?;
            g.set_vertex_state(s, "beta1", beta1)?;
            g.set_vertex_state(s, "beta2", beta2)?;
            g.set_tile_mapping(s, 0)?;
            steps.push(Program::execute(step));
            Some(powers)
        }
        _ => None,
    };
    let Some(chunks) = cfg.state_chunks else {
        let state: Vec<poplar::Tensor> = names[..per_param]
            .iter()
            .map(|name| {
                let t = g.add_variable(DType::F32, &[n], name);
                g.set_tile_mapping(&t, 0)?;
                g.create_host_read_write(name, &t)?;
                Ok(t)
            })
            .collect::<anyhow::Result<_>>()?;
        let cs = g.add_compute_set(cfg.optimizer.name());
        update_vertex(g, cs, cfg, params, grad, &state, powers.as_ref())?;
        steps.push(Program::execute(cs));
        return Ok(Program::seq(steps));
    };
    let k = chunks as usize;
    let c = n.div_ceil(k);
    let mut buffers = Vec::new();
    let mut stages = Vec::new();
    for name in &names[..per_param] {
        buffers.push(g.add_remote_buffer(name, DType::F32, c as u64, chunks as u64)?);
        let t = g.add_variable(DType::F32, &[c], &format!("{name} (staged)"));
        g.set_tile_mapping(&t, 0)?;
        stages.push(t);
    }
    for (i, r) in split_chunks(n, k).into_iter().enumerate() {
        let row = g.add_constant(&[1], &[i as i32], &format!("state row {i}"))?;
        g.set_tile_mapping(&row, 0)?;
        let staged: Vec<poplar::Tensor> = stages
            .iter()
            .map(|t| t.slice(0..r.len()))
            .collect::<Result<_, _>>()?;
        let cs = g.add_compute_set(&format!("{} (chunk {i})", cfg.optimizer.name()));
        update_vertex(
            g,
            cs,
            cfg,
            &params.slice(r.clone())?,
            &grad.slice(r)?,
            &staged,
            powers.as_ref(),
        )?;
        for (b, t) in buffers.iter().zip(&stages) {
            steps.push(Program::copy_from_remote(*b, t, Some(&row)));
        }
        steps.push(Program::execute(cs));
        for (b, t) in buffers.iter().zip(&stages) {
            steps.push(Program::copy_to_remote(t, *b, Some(&row)));
        }
    }
    Ok(Program::seq(steps))
}

/// `n` elements in `k` chunks of `⌈n/k⌉` (the last shorter, empty ones dropped).
fn split_chunks(n: usize, k: usize) -> Vec<std::ops::Range<usize>> {
    let c = n.div_ceil(k.max(1)).max(1);
    (0..n).step_by(c).map(|a| a..(a + c).min(n)).collect()
}

/// The optimizer's vertex in `cs` on tile 0, over `params`, `grad` and the state `state`
/// (`opt a`, `opt b` or chunks of them), with Adam's `powers`.
fn update_vertex(
    g: &mut Graph,
    cs: poplar::ComputeSet,
    cfg: &Config,
    params: &poplar::Tensor,
    grad: &poplar::Tensor,
    state: &[poplar::Tensor],
    powers: Option<&poplar::Tensor>,
) -> anyhow::Result<()> {
    use crate::optim::Optimizer;
    let v = match cfg.optimizer {
        Optimizer::Sgd => {
            let v = g.add_vertex_of::<crate::codelets::Sgd>(cs)?;
            g.set_vertex_state(v, "scale", cfg.update_scale())?;
            v
        }
        Optimizer::Momentum { momentum } => {
            let v = g.add_vertex_of::<crate::codelets::Momentum>(cs)?;
            g.connect(v, "velocity", &state[0])?;
            g.set_vertex_state(v, "momentum", momentum)?;
            g.set_vertex_state(v, "lr", cfg.lr)?;
            g.set_vertex_state(v, "scale", cfg.grad_scale())?;
            v
        }
        Optimizer::Adam { beta1, beta2, eps } => {
            let v = g.add_vertex_of::<crate::codelets::Adam>(cs)?;
            g.connect(v, "m", &state[0])?;
            g.connect(v, "v", &state[1])?;
            g.connect(v, "powers", powers.expect("Adam's powers"))?;
            for (f, x) in [
                ("lr", cfg.lr),
                ("scale", cfg.grad_scale()),
                ("beta1", beta1),
                ("beta2", beta2),
                ("eps", eps),
            ] {
                g.set_vertex_state(v, f, x)?;
            }
            v
        }
    };
    g.connect(v, "params", params)?;
    g.connect(v, "grad", grad)?;
    g.set_tile_mapping(v, 0)?;
    Ok(())
}

/// An engine loaded with a training executable.
pub struct Device {
    pub engine: Engine,
    pub cfg: Config,
}

impl Device {
    pub fn new(exe: &Executable, cfg: &Config, threads: usize) -> anyhow::Result<Device> {
        let engine = Engine::new(exe, EngineOptions::with_threads(threads))?;
        Ok(Device {
            engine,
            cfg: cfg.clone(),
        })
    }

    /// Writes the same parameters to every replica (and each replica's shard of them when
    /// sharded, zero-padded) and zeroes the accumulators and the optimizer's state.
    pub fn set_params(&mut self, p: &[f32]) -> anyhow::Result<()> {
        self.engine.write_tensor("params", p)?;
        self.engine.write_tensor("grad", &vec![0f32; p.len()])?;
        self.engine.write_tensor("stats", &[0f32; 2])?;
        let n = self.cfg.shard_len();
        if let Some(group) = self.cfg.shard {
            for r in 0..self.cfg.replicas {
                let at = ((r % group) as usize * n).min(p.len());
                let mut shard = p[at..(at + n).min(p.len())].to_vec();
                shard.resize(n, 0.0);
                self.engine
                    .write_tensor_replica("params shard", r, &shard)?;
            }
        }
        let st = crate::optim::State::new(self.cfg.optimizer, n);
        for (name, v) in [("opt a", &st.a), ("opt b", &st.b)] {
            if v.is_empty() {
                continue;
            }
            match self.cfg.state_chunks {
                None => self.engine.write_tensor(name, v)?,
                Some(k) => {
                    let rows = n.div_ceil(k as usize) * k as usize;
                    self.engine.write_remote_buffer(name, &vec![0f32; rows])?;
                }
            }
        }
        if let crate::optim::Optimizer::Adam { .. } = self.cfg.optimizer {
            self.engine.write_tensor("opt powers", &st.powers)?;
        }
        Ok(())
    }

    /// Connects each replica's streams to its samples of `steps` steps from step `first`, in
    /// the order the steps read them.
    pub fn feed(
        &mut self,
        data: &crate::data::Dataset,
        first: usize,
        steps: usize,
    ) -> anyhow::Result<()> {
        let c = &self.cfg;
        let d = c.shape.inputs;
        for r in 0..c.replicas as usize {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            for s in first..first + steps {
                for a in 0..c.accumulate {
                    let at = c.first_sample(s, a, r);
                    x.extend_from_slice(&data.x[at * d..(at + c.micro_batch) * d]);
                    y.extend_from_slice(&data.y[at..at + c.micro_batch]);
                }
            }
            self.engine.connect_stream_replica("x", r as u32, x)?;
            self.engine.connect_stream_replica("y", r as u32, y)?;
        }
        Ok(())
    }

    pub fn step(&mut self) -> anyhow::Result<()> {
        self.engine.run(STEP)?;
        Ok(())
    }

    /// The parameters, checked equal on every replica.
    pub fn params(&self) -> anyhow::Result<Vec<f32>> {
        let all = self.engine.read_tensor_all_replicas::<f32>("params")?;
        let p = self.cfg.shape.params();
        let first = all[..p].to_vec();
        for r in 1..self.cfg.replicas as usize {
            let other = &all[r * p..(r + 1) * p];
            if other
                .iter()
                .zip(&first)
                .any(|(a, b)| a.to_bits() != b.to_bits())
            {
                anyhow::bail!("the parameters of replica {r} differ from replica 0's");
            }
        }
        Ok(first)
    }

    /// Loss sum and correct predictions over all replicas since the last call, then zeroed.
    pub fn take_stats(&mut self) -> anyhow::Result<(f64, f64)> {
        let all = self.engine.read_tensor_all_replicas::<f32>("stats")?;
        self.engine.write_tensor("stats", &[0f32; 2])?;
        Ok(all.chunks(2).fold((0.0, 0.0), |(l, c), s| {
            (l + f64::from(s[0]), c + f64::from(s[1]))
        }))
    }
}
