//! Building the collectives into a graph.
//!
//! # Layout
//! A call on `n` elements per replica in groups of `G` replicas uses `C = ⌈n/G⌉` elements per
//! fragment owner. The data buffer holds `G` fragments of `C` elements, cut into `H` halves
//! (2 for the bidirectional ring pair, else 1) and, within a half, into column blocks over
//! the `k` tiles that hold the inputs: the variable `data[h][j]` on tile `j` is
//! `G × w[h][j]` elements, fragment-major, so each tile's vertices see all fragments of their
//! columns contiguously and every exchange goes from a tile to the same tile of a neighbour
//! replica. Fragment slot `q` belongs to the replica at ring position `q`; in element order the
//! block of the group's `i`-th member (in replica order) is slot `position(member i)`, so a
//! reduce-scatter gives replica `i` of the group elements `i·C .. (i+1)·C`, zero-padded at the
//! end, as GCL does.
//!
//! # Steps
//! A chain is one direction of travel over one half: per tile a send and a receive buffer and
//! a step counter. Each exchange step is one [`Program::CrossReplicaCopy`] of every active
//! chain's send buffers into the neighbours' receive buffers (both directions in one exchange
//! for the two-way methods), followed by one compute set of `gcl::Reduce` (reduce-scatter) or
//! `gcl::Store` (all-gather) vertices. Steps with the same vertices are one `Repeat`.
//!
//! Files: this one has the public functions and the composed all-reduces; `in_place.rs` the
//! reduce-scatter and all-gather on the caller's tensor; `builder.rs` the layout (data blocks
//! over tiles, ring positions, buffers); `steps.rs` the ring steps.

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::Graph;
use poplar_compiler::graph::GraphError;
use poplar_compiler::graph::Tensor;
use poplar_core::target::TileId;

use crate::plan::{Group, Kind, Method, Op, Plan, RingOrder};
use crate::CollectiveError;

mod builder;
mod in_place;
mod scratch;
mod steps;

use builder::Builder;
pub use in_place::{all_gather_to, reduce_scatter_in_place};
pub use scratch::Scratch;

/// Choices a caller may override.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Options {
    pub method: Method,
    pub ring_order: RingOrder,
    /// Replicas per IPU-Link domain for the three-phase all-reduce (`None`: from the target's
    /// `chips_per_link_domain`, see [`replicas_per_domain`]; `Some(0)`: never). An all-reduce over all replicas that
    /// span several domains reduce-scatters inside each domain, all-reduces the fragments
    /// across domains (the same replica in each, over the GW-Links), and all-gathers inside
    /// each domain.
    pub replicas_per_domain: Option<u32>,
    /// Where the send and receive buffers come from: `None`, the collective's own; a
    /// [`Scratch`] pool, shared with the other collectives built with it, which must then not
    /// run at the same time. Taken by the all-reduces, [`reduce_scatter_in_place`] and
    /// [`all_gather_to`] (whose share may be a buffer of the pool: use it before the next
    /// collective of the pool runs); [`reduce_scatter`] and [`all_gather`], whose outputs are
    /// new tensors, refuse it ([`CollectiveError::BadInputs`]).
    pub scratch: Option<Scratch>,
}

impl Options {
    /// These options with the send and receive buffers taken from `scratch` (a handle: the
    /// pool is shared, not copied).
    pub fn with_scratch(&self, scratch: &Scratch) -> Options {
        Options {
            scratch: Some(scratch.clone()),
            ..self.clone()
        }
    }
}

/// Replicas per IPU-Link domain when the replicas span several domains:
/// `opts.replicas_per_domain`, else the target's link domain divided by the chips of a
/// replica; `None` when all replicas are in one domain.
pub fn replicas_per_domain(g: &Graph, opts: &Options) -> Option<u32> {
    let r = g.replication_factor();
    let p = opts.replicas_per_domain.or_else(|| {
        let m = g.machine_target();
        let c = g.target().num_ipus.max(1);
        (m.chips_per_link_domain >= c).then(|| m.chips_per_link_domain / c)
    })?;
    (p >= 1 && p < r && r.is_multiple_of(p)).then_some(p)
}

/// A built collective: the program to run, the tensors it produces, and its plan.
#[derive(Debug, Clone)]
pub struct Collective {
    /// Run it wherever the collective belongs in the program (labelled with the plan).
    pub program: Program,
    /// All-reduce: one tensor per input, same shape. Reduce-scatter: one tensor of
    /// `⌈n/G⌉` elements. All-gather: one tensor `[G, shape…]` per input. In-place
    /// all-reduce: the inputs themselves. In-place reduce-scatter: this replica's share;
    /// all-gather into a destination: the destination (see [`reduce_scatter_in_place`],
    /// [`all_gather_to`]).
    pub outputs: Vec<Tensor>,
    pub plan: Plan,
    /// The plans of the parts of a composed collective (reduce-scatter then all-gather of an
    /// all-reduce; the three phases across link domains), in order.
    pub parts: Vec<Plan>,
}

/// Reduces `inputs` across the replicas of each group; the results go to new tensors mapped
/// like the inputs.
pub fn all_reduce(
    g: &mut Graph,
    inputs: &[Tensor],
    op: Op,
    group: Group,
    opts: &Options,
    name: &str,
) -> Result<Collective, CollectiveError> {
    let err = |source: GraphError| CollectiveError::Graph {
        name: name.to_string(),
        source,
    };
    let mut outputs = Vec::with_capacity(inputs.len());
    for (i, t) in inputs.iter().enumerate() {
        let out = g.add_variable(t.dtype(), t.shape(), &format!("{name}/out{i}"));
        let flat = out.flatten();
        for (tile, ranges) in g.tile_mapping(t).map_err(err)?.into_iter().enumerate() {
            for r in ranges {
                let piece = flat.slice(r).map_err(err)?;
                g.set_tile_mapping(&piece, TileId::new(tile as u32))
                    .map_err(err)?;
            }
        }
        outputs.push(out);
    }
    let mut c = reduce_into(g, inputs, &outputs, op, group, opts, name)?;
    c.outputs = outputs;
    Ok(c)
}

/// Reduces `inputs` across the replicas of each group into `outputs` (the same number of
/// tensors, each of its input's type and shape: [`CollectiveError::BadInputs`] names the
/// first that differs).
pub fn all_reduce_to(
    g: &mut Graph,
    inputs: &[Tensor],
    outputs: &[Tensor],
    op: Op,
    group: Group,
    opts: &Options,
    name: &str,
) -> Result<Collective, CollectiveError> {
    let bad = |reason: String| {
        Err(CollectiveError::BadInputs {
            name: name.to_string(),
            reason,
        })
    };
    if inputs.len() != outputs.len() {
        return bad(format!(
            "{} inputs but {} outputs",
            inputs.len(),
            outputs.len()
        ));
    }
    for (i, (a, b)) in inputs.iter().zip(outputs).enumerate() {
        if a.shape() != b.shape() || a.dtype() != b.dtype() {
            return bad(format!(
                "output {i} is {}{:?} but input {i} is {}{:?}",
                b.dtype(),
                b.shape(),
                a.dtype(),
                a.shape()
            ));
        }
    }
    let mut c = reduce_into(g, inputs, outputs, op, group, opts, name)?;
    c.outputs = outputs.to_vec();
    Ok(c)
}

/// Reduces each tensor across the replicas of each group and writes the result back into it.
pub fn all_reduce_in_place(
    g: &mut Graph,
    tensors: &[Tensor],
    op: Op,
    group: Group,
    opts: &Options,
    name: &str,
) -> Result<Collective, CollectiveError> {
    let mut c = reduce_into(g, tensors, tensors, op, group, opts, name)?;
    c.outputs = tensors.to_vec();
    Ok(c)
}

/// Reduces `inputs` (all of them as one flat vector of `n` elements) across each group and
/// leaves the `i`-th member of a group with elements `i·⌈n/G⌉ .. (i+1)·⌈n/G⌉` of the
/// result (zero-padded at the end): one output tensor of `⌈n/G⌉` elements.
pub fn reduce_scatter(
    g: &mut Graph,
    inputs: &[Tensor],
    op: Op,
    group: Group,
    opts: &Options,
    name: &str,
) -> Result<Collective, CollectiveError> {
    no_scratch(opts, "reduce_scatter", name)?;
    let mut b = Builder::new(g, inputs, Kind::ReduceScatter, op, group, opts, name)?;
    let mut body = Vec::new();
    let src = concat_flat(inputs).map_err(|e| b.err(e))?;
    let out = b.reduce_scatter(&src, &mut body)?;
    let plan = b.plan.clone();
    Ok(Collective {
        program: Program::labelled(&plan.label(name), body),
        outputs: vec![out],
        parts: vec![plan.clone()],
        plan,
    })
}

/// Gathers every group member's `inputs`: for each input of shape `S`, an output `[G, S]`
/// whose row `i` is the group's `i`-th member's (in replica order).
pub fn all_gather(
    g: &mut Graph,
    inputs: &[Tensor],
    group: Group,
    opts: &Options,
    name: &str,
) -> Result<Collective, CollectiveError> {
    no_scratch(opts, "all_gather", name)?;
    let mut b = Builder::new(g, inputs, Kind::AllGather, Op::Local, group, opts, name)?;
    let mut body = Vec::new();
    let src = concat_flat(inputs).map_err(|e| b.err(e))?;
    let gathered = b.all_gather(&src, &mut body)?;
    // Row i of input t: elements i·n + offset(t) .. + len(t) of the gathered vector.
    let n = b.n as usize;
    let gsz = b.plan.group_size as usize;
    let mut outputs = Vec::new();
    let mut off = 0usize;
    for t in inputs {
        let len = t.num_elements();
        let rows: Vec<Tensor> = (0..gsz)
            .map(|i| gathered.slice(i * n + off..i * n + off + len))
            .collect::<Result<_, _>>()
            .map_err(|e| b.err(e))?;
        let mut shape = vec![gsz];
        shape.extend_from_slice(t.shape());
        let all = poplar_compiler::graph::concat(&rows)
            .and_then(|c| c.reshape(&shape))
            .map_err(|e| b.err(e))?;
        outputs.push(all);
        off += len;
    }
    let plan = b.plan.clone();
    Ok(Collective {
        program: Program::labelled(&plan.label(name), body),
        outputs,
        parts: vec![plan.clone()],
        plan,
    })
}

/// [`CollectiveError::BadInputs`] for a scratch pool given to `collective`, whose outputs are
/// new tensors (a pool's buffers are overwritten by the next collective that uses them).
fn no_scratch(opts: &Options, collective: &str, name: &str) -> Result<(), CollectiveError> {
    match opts.scratch {
        None => Ok(()),
        Some(_) => Err(CollectiveError::BadInputs {
            name: name.to_string(),
            reason: format!(
                "Options::scratch is for the all-reduces and the in-place collectives; \
                 {collective} returns new tensors"
            ),
        }),
    }
}

fn concat_flat(ts: &[Tensor]) -> Result<Tensor, GraphError> {
    let flat: Vec<Tensor> = ts.iter().map(Tensor::flatten).collect();
    poplar_compiler::graph::concat(&flat)
}

/// All-reduce of `inputs` into `outputs` (which may be the inputs): a reduce-scatter, then
/// an all-gather of each member's reduced fragment.
fn reduce_into(
    g: &mut Graph,
    inputs: &[Tensor],
    outputs: &[Tensor],
    op: Op,
    group: Group,
    opts: &Options,
    name: &str,
) -> Result<Collective, CollectiveError> {
    let err = |source: GraphError| CollectiveError::Graph {
        name: name.to_string(),
        source,
    };
    if inputs.is_empty() {
        return Err(CollectiveError::BadInputs {
            name: name.to_string(),
            reason: "no tensors given".into(),
        });
    }
    if let Some(first) = inputs.first() {
        if let Some((index, t)) = inputs
            .iter()
            .chain(outputs)
            .enumerate()
            .find(|(_, t)| t.dtype() != first.dtype())
        {
            return Err(CollectiveError::MixedTypes {
                name: name.to_string(),
                index,
                first: first.dtype(),
                other: t.dtype(),
            });
        }
    }
    let dst = concat_flat(outputs).map_err(err)?;
    let src = concat_flat(inputs).map_err(err)?;
    let mut body = Vec::new();
    if src.dtype() != dst.dtype() || src.num_elements() != dst.num_elements() {
        return Err(CollectiveError::BadInputs {
            name: name.to_string(),
            reason: format!(
                "outputs are {}[{}] but inputs {}[{}]",
                dst.dtype(),
                dst.num_elements(),
                src.dtype(),
                src.num_elements()
            ),
        });
    }
    // Reduce in place over the destination's own pieces: copy the inputs there first (an
    // on-tile copy: the outputs are mapped like the inputs), then reduce-scatter and
    // all-gather the same blocks with the same method.
    // Several link domains: the first and last phases run inside each domain.
    let three_phase = match group {
        Group::All => {
            replicas_per_domain(g, opts).map(|p| (p, g.replication_factor() / p, op, opts))
        }
        _ => None,
    };
    let phase_group = three_phase.map_or(group, |(p, ..)| Group::Consecutive(p));
    let mut b = Builder::with_layout(
        g,
        inputs,
        Kind::AllReduce,
        op,
        phase_group,
        opts,
        name,
        Some(&dst),
    )?;
    if !same_elements(&src, &dst) {
        body.push(Program::copy(&src, &dst));
    }
    if op == Op::Local || b.plan.group_size == 1 && op != Op::SquareAdd {
        // Nothing to combine: each replica keeps its data.
        let plan = b.plan.clone();
        return Ok(Collective {
            program: Program::labelled(&plan.label(name), body),
            outputs: outputs.to_vec(),
            parts: vec![plan.clone()],
            plan,
        });
    }
    if op == Op::SquareAdd {
        let all: Vec<Tensor> = b.data.iter().flatten().flatten().cloned().collect();
        let p = b.map(&all, 0, 1.0)?;
        body.push(p);
    }
    if let Some(three) = three_phase {
        return three_phase_all_reduce(b, three, body, outputs, name);
    }
    let fragment = b.rs_steps(&mut body)?;
    b.gather(&fragment, &mut body)?;
    let mut plan = b.plan.clone();
    let mut rs_plan = plan.clone();
    rs_plan.kind = Kind::ReduceScatter;
    let mut ag_plan = plan.clone();
    ag_plan.kind = Kind::AllGather;
    plan.steps *= 2;
    plan.kind = Kind::AllReduce;
    let label = format!("{} in place", plan.label(name));
    Ok(Collective {
        program: Program::labelled(&label, body),
        outputs: outputs.to_vec(),
        parts: vec![rs_plan, ag_plan],
        plan,
    })
}

/// GCL's all-reduce over several IPU-Link domains (`seeds/scaling-over-replicas.txt` §7.9.2):
/// reduce-scatter inside each domain (`b` is built for `Consecutive(p)`), all-reduce each
/// replica's fragment with the same replica of the other domains (`Orthogonal(d)`, over the
/// GW-Links), then all-gather inside each domain.
fn three_phase_all_reduce(
    mut b: Builder<'_>,
    (p, d, op, opts): (u32, u32, Op, &Options),
    mut body: Vec<Program>,
    outputs: &[Tensor],
    name: &str,
) -> Result<Collective, CollectiveError> {
    let fragment = b.rs_steps(&mut body)?;
    // The squares were taken in the first phase; across domains the partial sums add.
    let op2 = if op == Op::SquareAdd { Op::Add } else { op };
    // The phase across domains runs between the two inside them, with its own buffers.
    let inner = Options {
        replicas_per_domain: Some(0),
        scratch: None,
        ..opts.clone()
    };
    let gw = reduce_into(
        b.g,
        std::slice::from_ref(&fragment),
        std::slice::from_ref(&fragment),
        op2,
        Group::Orthogonal(d),
        &inner,
        &format!("{name}/across domains"),
    )?;
    body.push(gw.program);
    b.gather(&fragment, &mut body)?;
    let mut rs_plan = b.plan.clone();
    rs_plan.kind = Kind::ReduceScatter;
    let mut ag_plan = b.plan.clone();
    ag_plan.kind = Kind::AllGather;
    let mut plan = b.plan.clone();
    plan.kind = Kind::AllReduce;
    plan.group = Group::All;
    plan.group_size = p * d;
    plan.steps = 2 * rs_plan.steps + gw.plan.steps;
    let label = format!(
        "{} three-phase: {d} domains of {p} replicas",
        plan.label(name)
    );
    let mut parts = vec![rs_plan];
    parts.extend(gw.parts);
    parts.push(ag_plan);
    Ok(Collective {
        program: Program::labelled(&label, body),
        outputs: outputs.to_vec(),
        parts,
        plan,
    })
}

fn same_elements(a: &Tensor, b: &Tensor) -> bool {
    a.regions() == b.regions()
}
