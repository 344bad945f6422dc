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
//! `gcl::Place` (all-gather) vertices. Steps with the same vertices are one `Repeat`.

use poplar::program::CrossReplicaCopy;
use poplar::{DType, Graph, GraphError, Program, Tensor, TileId};

use crate::codelets::type_name;
use crate::plan::{Group, Kind, Method, Op, Plan, RingOrder};
use crate::CollectiveError;

/// Choices a caller may override.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    pub method: Method,
    pub ring_order: RingOrder,
    /// Replicas per IPU-Link domain for the three-phase all-reduce (`None`: from the target's
    /// `chips_per_link_domain`, see [`replicas_per_domain`]; `Some(0)`: never). An all-reduce over all replicas that
    /// span several domains reduce-scatters inside each domain, all-reduces the fragments
    /// across domains (the same replica in each, over the GW-Links), and all-gathers inside
    /// each domain.
    pub replicas_per_domain: Option<u32>,
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
    /// all-reduce: the inputs themselves.
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
                g.set_tile_mapping(&piece, tile as TileId).map_err(err)?;
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
        let all = poplar::concat(&rows)
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

fn concat_flat(ts: &[Tensor]) -> Result<Tensor, GraphError> {
    let flat: Vec<Tensor> = ts.iter().map(Tensor::flatten).collect();
    poplar::concat(&flat)
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
    let inner = Options {
        replicas_per_domain: Some(0),
        ..*opts
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

/// One direction of travel over one half of the data.
struct Chain {
    half: usize,
    /// Sends to the next replica in ring order (clockwise) or the previous.
    up_ring: bool,
    /// Per tile of the half: send and receive buffers and the step counter.
    send: Vec<Tensor>,
    recv: Vec<Tensor>,
    step: Vec<Tensor>,
}

struct Builder<'g> {
    g: &'g mut Graph,
    name: String,
    plan: Plan,
    dtype: DType,
    ty: &'static str,
    /// Elements per replica.
    n: u64,
    /// Tiles of the layout (those holding the inputs, at most `C`).
    tiles: Vec<TileId>,
    /// Per half: per tile, the columns (`w`, possibly 0).
    widths: Vec<Vec<usize>>,
    /// Per half: per tile with `w > 0`, the data variable (`G × w`).
    data: Vec<Vec<Option<Tensor>>>,
    /// The ring position of this replica, one element per layout tile.
    pos: Tensor,
    /// Ring position of each member index (`perm[i]`), the same for every group.
    perm: Vec<u32>,
    /// Replica maps: to the next and to the previous in ring order.
    map_next: Vec<(u32, u32)>,
    map_prev: Vec<(u32, u32)>,
    counter: u32,
}

impl<'g> Builder<'g> {
    fn err(&self, source: GraphError) -> CollectiveError {
        CollectiveError::Graph {
            name: self.name.clone(),
            source,
        }
    }

    fn new(
        g: &'g mut Graph,
        inputs: &[Tensor],
        kind: Kind,
        op: Op,
        group: Group,
        opts: &Options,
        name: &str,
    ) -> Result<Builder<'g>, CollectiveError> {
        Builder::with_layout(g, inputs, kind, op, group, opts, name, None)
    }

    /// `aligned`: reduce in place over this tensor's own pieces (see [`Builder::aligned`]);
    /// else the padded fragment layout of the module notes.
    #[allow(clippy::too_many_arguments)]
    fn with_layout(
        g: &'g mut Graph,
        inputs: &[Tensor],
        kind: Kind,
        op: Op,
        group: Group,
        opts: &Options,
        name: &str,
        aligned: Option<&Tensor>,
    ) -> Result<Builder<'g>, CollectiveError> {
        let name = name.to_string();
        if inputs.is_empty() {
            return Err(CollectiveError::BadInputs {
                name,
                reason: "no tensors given".into(),
            });
        }
        let dtype = inputs[0].dtype();
        if let Some((index, t)) = inputs.iter().enumerate().find(|(_, t)| t.dtype() != dtype) {
            return Err(CollectiveError::MixedTypes {
                name,
                index,
                first: dtype,
                other: t.dtype(),
            });
        }
        let ty = type_name(dtype).ok_or(CollectiveError::OpType {
            name: name.clone(),
            op: op.name(),
            dtype,
        })?;
        let allowed = match op {
            Op::LogicalAnd | Op::LogicalOr => dtype == DType::Bool,
            Op::Local => true,
            Op::Mean => matches!(dtype, DType::F32 | DType::F16),
            Op::Add | Op::Mul | Op::Min | Op::Max | Op::SquareAdd => dtype != DType::Bool,
        };
        if !allowed {
            return Err(CollectiveError::OpType {
                name,
                op: op.name(),
                dtype,
            });
        }
        let replicas = g.replication_factor();
        let groups = group.members(replicas)?;
        let gsz = groups[0].len() as u32;
        let machine = g.machine_target().clone();
        let chips_per_replica = g.target().num_ipus;
        let mut rings = Vec::new();
        let mut ring_order = opts.ring_order;
        for m in &groups {
            let (ring, order) = Plan::ring(m, opts.ring_order, &machine, chips_per_replica);
            ring_order = order;
            rings.push(ring);
        }
        // Member index -> ring position (the same pattern in every group).
        let perm: Vec<u32> = groups[0]
            .iter()
            .map(|r| {
                rings[0]
                    .iter()
                    .position(|x| x == r)
                    .expect("member in its ring") as u32
            })
            .collect();
        let mut pos_of = vec![0u32; replicas as usize];
        let (mut map_next, mut map_prev) = (Vec::new(), Vec::new());
        for ring in &rings {
            let k = ring.len();
            for (q, &r) in ring.iter().enumerate() {
                pos_of[r as usize] = q as u32;
                if k > 1 {
                    map_next.push((r, ring[(q + 1) % k]));
                    map_prev.push((r, ring[(q + k - 1) % k]));
                }
            }
        }

        let mut n = 0u64;
        let mut tiles = std::collections::BTreeSet::new();
        let errg = |source: GraphError| CollectiveError::Graph {
            name: name.clone(),
            source,
        };
        for (index, t) in inputs.iter().enumerate() {
            let len = t.num_elements() as u64;
            n += len;
            let mapping = g.tile_mapping(t).map_err(errg)?;
            let mapped: u64 = mapping
                .iter()
                .flatten()
                .map(|r| (r.end - r.start) as u64)
                .sum();
            if mapped != len {
                return Err(CollectiveError::Unmapped { name, index });
            }
            for (tile, ranges) in mapping.iter().enumerate() {
                if !ranges.is_empty() {
                    tiles.insert(tile as TileId);
                }
            }
        }
        let c = if kind == Kind::AllGather {
            n
        } else {
            n.div_ceil(u64::from(gsz))
        };
        let bytes_per_chip =
            c * u64::from(gsz) * dtype.size() as u64 / u64::from(chips_per_replica.max(1));
        let method = match opts.method {
            Method::Auto => Plan::auto_method(kind, gsz, chips_per_replica, bytes_per_chip),
            m => m,
        };
        let method = if gsz <= 1 { Method::Clockwise } else { method };
        let halves = if method == Method::BidirectionalRingPair {
            2
        } else {
            1
        };
        let (tiles, widths, aligned_data) = match aligned {
            None => {
                let k = (tiles.len() as u64).min(c.max(1)) as usize;
                let tiles: Vec<TileId> = tiles.into_iter().take(k.max(1)).collect();
                let tiles = if tiles.is_empty() { vec![0] } else { tiles };
                let k = tiles.len();
                let half_cols = [c.div_ceil(halves as u64), c / halves as u64];
                let widths: Vec<Vec<usize>> = (0..halves)
                    .map(|h| split(half_cols[h] as usize, k))
                    .collect();
                (tiles, widths, None)
            }
            Some(t) => {
                let (tiles, widths, data) =
                    Builder::aligned(g, t, halves, gsz as usize).map_err(errg)?;
                (tiles, widths, Some(data))
            }
        };
        let k = tiles.len();
        let steps = match (kind, method) {
            (_, _) if gsz <= 1 => 0,
            (_, Method::MeetInTheMiddle) => gsz / 2,
            _ => gsz - 1,
        };
        let plan = Plan {
            kind,
            op,
            group,
            replicas,
            group_size: gsz,
            rings,
            ring_order,
            method,
            fragments: gsz * halves as u32,
            elements: n,
            element_bytes: dtype.size() as u32,
            steps,
            tiles: k as u32,
        };

        let mut data = Vec::new();
        for (h, ws) in widths.iter().enumerate() {
            if let Some(a) = &aligned_data {
                data.push(a[h].clone());
                continue;
            }
            let mut row = Vec::new();
            for (j, &w) in ws.iter().enumerate() {
                if w == 0 {
                    row.push(None);
                    continue;
                }
                let v = g.add_variable(dtype, &[gsz as usize * w], &format!("{name}/data{h}.{j}"));
                g.set_tile_mapping(&v, tiles[j]).map_err(errg)?;
                row.push(Some(v));
            }
            data.push(row);
        }
        let pos_values: Vec<u32> = (0..replicas)
            .flat_map(|r| std::iter::repeat_n(pos_of[r as usize], k))
            .collect();
        let pos = g
            .add_replica_constant(&[k], &pos_values, &format!("{name}/ring position"))
            .map_err(errg)?;
        for (j, &t) in tiles.iter().enumerate() {
            let e = pos.slice(j..j + 1).map_err(errg)?;
            g.set_tile_mapping(&e, t).map_err(errg)?;
        }
        Ok(Builder {
            g,
            name,
            plan,
            dtype,
            ty,
            n,
            tiles,
            widths,
            data,
            pos,
            perm,
            map_next,
            map_prev,
            counter: 0,
        })
    }

    /// The in-place layout of an all-reduce: each contiguous piece of `t` on a tile (split in
    /// two halves for the bidirectional pair) is a block whose `G` fragments are its
    /// consecutive `w = ⌈L/G⌉`-element runs, the last ones shorter or empty. The data are
    /// reduced where they are: no copy in or out and no exchange inside a replica. Returns
    /// the block tiles and, per half, their widths and pieces.
    #[allow(clippy::type_complexity)]
    fn aligned(
        g: &Graph,
        t: &Tensor,
        halves: usize,
        gsz: usize,
    ) -> Result<(Vec<TileId>, Vec<Vec<usize>>, Vec<Vec<Option<Tensor>>>), GraphError> {
        let flat = t.flatten();
        let mut tiles = Vec::new();
        let mut widths = vec![Vec::new(); halves];
        let mut data = vec![Vec::new(); halves];
        for (tile, ranges) in g.tile_mapping(t)?.into_iter().enumerate() {
            for r in ranges {
                tiles.push(tile as TileId);
                let len = r.end - r.start;
                let first = len.div_ceil(halves);
                for h in 0..halves {
                    let (a, b) = if h == 0 {
                        (r.start, r.start + first)
                    } else {
                        (r.start + first, r.end)
                    };
                    if b > a {
                        widths[h].push((b - a).div_ceil(gsz));
                        data[h].push(Some(flat.slice(a..b)?));
                    } else {
                        widths[h].push(0);
                        data[h].push(None);
                    }
                }
            }
        }
        Ok((tiles, widths, data))
    }

    /// The data in element order: member `i`'s block is slot `perm[i]`.
    fn ordered(&self) -> Result<Tensor, CollectiveError> {
        let mut parts = Vec::new();
        for &slot in &self.perm {
            for (h, ws) in self.widths.iter().enumerate() {
                for (j, &w) in ws.iter().enumerate() {
                    if let Some(d) = &self.data[h][j] {
                        let s = slot as usize * w;
                        parts.push(d.slice(s..s + w).map_err(|e| self.err(e))?);
                    }
                }
            }
        }
        poplar::concat(&parts).map_err(|e| self.err(e))
    }

    /// A buffer per tile of half `h` (`w` elements each), named `what`.
    fn buffers(
        &mut self,
        h: usize,
        what: &str,
        dtype: DType,
    ) -> Result<Vec<Tensor>, CollectiveError> {
        let mut out = Vec::new();
        for j in 0..self.tiles.len() {
            let w = self.widths[h][j];
            if w == 0 {
                continue;
            }
            let len = if dtype == DType::U32 { 1 } else { w };
            let v = self
                .g
                .add_variable(dtype, &[len], &format!("{}/{what}{h}.{j}", self.name));
            self.g
                .set_tile_mapping(&v, self.tiles[j])
                .map_err(|e| self.err(e))?;
            out.push(v);
        }
        Ok(out)
    }

    fn chain(&mut self, half: usize, up_ring: bool) -> Result<Chain, CollectiveError> {
        self.counter += 1;
        let c = self.counter;
        let dt = self.dtype;
        Ok(Chain {
            half,
            up_ring,
            send: self.buffers(half, &format!("send{c}."), dt)?,
            recv: self.buffers(half, &format!("recv{c}."), dt)?,
            step: self.buffers(half, &format!("step{c}."), DType::U32)?,
        })
    }

    /// Tiles (index into `tiles`) of half `h` with columns, in the order of a chain's buffers.
    fn live(&self, h: usize) -> Vec<usize> {
        (0..self.tiles.len())
            .filter(|&j| self.widths[h][j] > 0)
            .collect()
    }

    /// Sets every counter of the chains to `start`.
    fn reset(
        &mut self,
        chains: &[(&Chain, u32)],
        body: &mut Vec<Program>,
    ) -> Result<(), CollectiveError> {
        for (ch, start) in chains {
            if ch.step.is_empty() {
                continue;
            }
            let steps = poplar::concat(&ch.step).map_err(|e| self.err(e))?;
            let init = vec![*start; ch.step.len()];
            self.counter += 1;
            let k = self
                .g
                .add_constant(
                    &[ch.step.len()],
                    &init,
                    &format!("{}/step start{}", self.name, self.counter),
                )
                .map_err(|e| self.err(e))?;
            for (i, j) in self.live(ch.half).into_iter().enumerate() {
                let e = k.slice(i..i + 1).map_err(|e| self.err(e))?;
                self.g
                    .set_tile_mapping(&e, self.tiles[j])
                    .map_err(|e| self.err(e))?;
            }
            body.push(Program::copy(&k, &steps));
        }
        Ok(())
    }

    /// One exchange step: every chain's send buffers to its neighbours' receive buffers.
    fn exchange(&self, chains: &[&Chain]) -> Result<Program, CollectiveError> {
        self.exchange_dir(chains, true)
    }

    /// One exchange step, send → receive buffers (`forward`) or receive → send buffers (the
    /// second half of the all-gather's ping-pong).
    fn exchange_dir(&self, chains: &[&Chain], forward: bool) -> Result<Program, CollectiveError> {
        let mut copies = Vec::new();
        for ch in chains {
            if ch.send.is_empty() {
                continue;
            }
            let (from, to) = if forward {
                (&ch.send, &ch.recv)
            } else {
                (&ch.recv, &ch.send)
            };
            copies.push(CrossReplicaCopy {
                src: poplar::concat(from).map_err(|e| self.err(e))?,
                dst: poplar::concat(to).map_err(|e| self.err(e))?,
                map: if ch.up_ring {
                    self.map_next.clone()
                } else {
                    self.map_prev.clone()
                },
            });
        }
        Ok(Program::cross_replica_copies(copies))
    }

    fn pos_at(&self, j: usize) -> Result<Tensor, CollectiveError> {
        self.pos
            .slice(j..j + 1)
            .and_then(|t| t.reshape(&[]))
            .map_err(|e| self.err(e))
    }

    fn vertex(
        &mut self,
        cs: poplar::ComputeSet,
        codelet: &str,
        j: usize,
        fields: &[(&str, &Tensor)],
        state: &[(&str, poplar::graph::StateValue)],
    ) -> Result<(), CollectiveError> {
        let v = self.g.add_vertex(cs, codelet).map_err(|e| self.err(e))?;
        for (f, t) in fields {
            self.g.connect(v, f, t).map_err(|e| self.err(e))?;
        }
        for (f, s) in state {
            self.g
                .set_vertex_state(v, f, s.clone())
                .map_err(|e| self.err(e))?;
        }
        self.g
            .set_tile_mapping(v, self.tiles[j])
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// `gcl::Slice`: each chain's send buffers = data fragment `pos + off`.
    fn slice(
        &mut self,
        chains: &[(&Chain, u32)],
        body: &mut Vec<Program>,
    ) -> Result<(), CollectiveError> {
        let cs = self.g.add_compute_set(&format!("{}/slice", self.name));
        let codelet = format!("gcl::Slice<{}>", self.ty);
        let gsz = self.plan.group_size;
        for (ch, off) in chains {
            for (i, j) in self.live(ch.half).into_iter().enumerate() {
                let d = self.data[ch.half][j].clone().expect("live tile");
                let p = self.pos_at(j)?;
                self.vertex(
                    cs,
                    &codelet,
                    j,
                    &[("data", &d), ("pos", &p), ("out", &ch.send[i])],
                    &[
                        ("g", gsz.into()),
                        ("off", (off % gsz.max(1)).into()),
                        ("up", true.into()),
                    ],
                )?;
            }
        }
        body.push(Program::execute(cs));
        Ok(())
    }

    /// `gcl::Reduce` on each chain: send = recv ⊕ data[pos + off ± step].
    fn reduce_step(&mut self, chains: &[(&Chain, u32, bool)]) -> Result<Program, CollectiveError> {
        let cs = self.g.add_compute_set(&format!("{}/reduce", self.name));
        let codelet = format!("gcl::Reduce<{}>", self.ty);
        let gsz = self.plan.group_size;
        let op = self.plan.op.code();
        for (ch, off, up) in chains {
            for (i, j) in self.live(ch.half).into_iter().enumerate() {
                let d = self.data[ch.half][j].clone().expect("live tile");
                let p = self.pos_at(j)?;
                let step = ch.step[i].reshape(&[]).map_err(|e| self.err(e))?;
                self.vertex(
                    cs,
                    &codelet,
                    j,
                    &[
                        ("data", &d),
                        ("recv", &ch.recv[i]),
                        ("pos", &p),
                        ("step", &step),
                        ("out", &ch.send[i]),
                    ],
                    &[
                        ("g", gsz.into()),
                        ("off", (off % gsz).into()),
                        ("up", (*up).into()),
                        ("op", op.into()),
                    ],
                )?;
            }
        }
        Ok(Program::execute(cs))
    }

    /// `gcl::Store` on each chain: data[pos ± step] = its receive buffers (`in_recv`) or its
    /// send buffers. One compute set per chain: two chains over one half (meet in the middle)
    /// write the same data variable.
    fn store_step(
        &mut self,
        chains: &[(&Chain, bool)],
        in_recv: bool,
    ) -> Result<Program, CollectiveError> {
        let codelet = format!("gcl::Store<{}>", self.ty);
        let gsz = self.plan.group_size;
        let mut sets = Vec::new();
        for (ch, up) in chains {
            let cs = self.g.add_compute_set(&format!("{}/store", self.name));
            for (i, j) in self.live(ch.half).into_iter().enumerate() {
                let d = self.data[ch.half][j].clone().expect("live tile");
                let p = self.pos_at(j)?;
                let step = ch.step[i].reshape(&[]).map_err(|e| self.err(e))?;
                let src = if in_recv { &ch.recv[i] } else { &ch.send[i] };
                self.vertex(
                    cs,
                    &codelet,
                    j,
                    &[("data", &d), ("recv", src), ("pos", &p), ("step", &step)],
                    &[
                        ("g", gsz.into()),
                        ("off", 0u32.into()),
                        ("up", (*up).into()),
                    ],
                )?;
            }
            sets.push(Program::execute(cs));
        }
        Ok(Program::seq(sets))
    }

    /// `count` all-gather steps of `chains` whose current fragment is in their receive
    /// buffers (`in_recv`) or send buffers: each step forwards the current buffers to the
    /// neighbour's other buffers and stores what arrived, so the buffers alternate and nothing
    /// is copied twice. Returns where the current fragment is afterwards.
    fn gather_steps(
        &mut self,
        chains: &[(&Chain, bool)],
        count: u32,
        in_recv: bool,
        body: &mut Vec<Program>,
    ) -> Result<bool, CollectiveError> {
        if count == 0 {
            return Ok(in_recv);
        }
        let only: Vec<&Chain> = chains.iter().map(|(c, _)| *c).collect();
        // From the receive buffers to the neighbours' send buffers is "backward".
        let there = self.exchange_dir(&only, !in_recv)?;
        let store_there = self.store_step(chains, !in_recv)?;
        if count >= 2 {
            let back = self.exchange_dir(&only, in_recv)?;
            let store_back = self.store_step(chains, in_recv)?;
            body.push(Program::repeat(
                count / 2,
                Program::seq(vec![there.clone(), store_there.clone(), back, store_back]),
            ));
        }
        if count % 2 == 1 {
            body.push(there);
            body.push(store_there);
            return Ok(!in_recv);
        }
        Ok(in_recv)
    }

    /// `gcl::Map` over every data variable (`op` 0 squares, 1 scales) or over `ts`.
    fn map(&mut self, ts: &[Tensor], op: u32, scale: f32) -> Result<Program, CollectiveError> {
        let cs = self.g.add_compute_set(&format!("{}/map", self.name));
        let codelet = format!("gcl::Map<{}>", self.ty);
        for t in ts {
            let mapping = self.g.tile_mapping(t).map_err(|e| self.err(e))?;
            let flat = t.flatten();
            for (tile, ranges) in mapping.into_iter().enumerate() {
                for r in ranges {
                    let x = flat.slice(r).map_err(|e| self.err(e))?;
                    let v = self.g.add_vertex(cs, &codelet).map_err(|e| self.err(e))?;
                    self.g.connect(v, "x", &x).map_err(|e| self.err(e))?;
                    self.g
                        .set_vertex_state(v, "op", op)
                        .map_err(|e| self.err(e))?;
                    self.g
                        .set_vertex_state(v, "scale", scale)
                        .map_err(|e| self.err(e))?;
                    self.g
                        .set_tile_mapping(v, tile as TileId)
                        .map_err(|e| self.err(e))?;
                }
            }
        }
        Ok(Program::execute(cs))
    }

    /// Copies the inputs (and zero padding) into the data buffer.
    fn load(&mut self, src: &Tensor, body: &mut Vec<Program>) -> Result<(), CollectiveError> {
        let ordered = self.ordered()?;
        let n = src.num_elements();
        body.push(Program::copy(
            src,
            &ordered.slice(0..n).map_err(|e| self.err(e))?,
        ));
        let pad = ordered.num_elements() - n;
        if pad > 0 {
            self.counter += 1;
            let zeros = zero_constant(
                self.g,
                self.dtype,
                pad,
                &format!("{}/padding{}", self.name, self.counter),
            )
            .map_err(|e| self.err(e))?;
            let dst = ordered.slice(n..n + pad).map_err(|e| self.err(e))?;
            // Map the zeros where they go, so the padding is an on-tile copy.
            let mapping = self.g.tile_mapping(&dst).map_err(|e| self.err(e))?;
            for (tile, ranges) in mapping.into_iter().enumerate() {
                for r in ranges {
                    let z = zeros.slice(r).map_err(|e| self.err(e))?;
                    self.g
                        .set_tile_mapping(&z, tile as TileId)
                        .map_err(|e| self.err(e))?;
                }
            }
            body.push(Program::copy(&zeros, &dst));
        }
        if self.plan.op == Op::SquareAdd {
            let all: Vec<Tensor> = self.data.iter().flatten().flatten().cloned().collect();
            let p = self.map(&all, 0, 1.0)?;
            body.push(p);
        }
        Ok(())
    }

    /// `gcl::Finish`: out = (a ⊕ b) ⊕ data[pos] into new buffers.
    fn finish(
        &mut self,
        a: &Chain,
        b: Option<&Chain>,
    ) -> Result<(Program, Vec<Tensor>), CollectiveError> {
        let outs = self.buffers(a.half, "result", self.dtype)?;
        let cs = self.g.add_compute_set(&format!("{}/finish", self.name));
        let codelet = format!("gcl::Finish<{}>", self.ty);
        let gsz = self.plan.group_size;
        let op = self.plan.op.code();
        for (i, j) in self.live(a.half).into_iter().enumerate() {
            let d = self.data[a.half][j].clone().expect("live tile");
            let p = self.pos_at(j)?;
            let bt = b.map_or(&a.recv[i], |b| &b.recv[i]);
            self.vertex(
                cs,
                &codelet,
                j,
                &[
                    ("data", &d),
                    ("a", &a.recv[i]),
                    ("b", bt),
                    ("pos", &p),
                    ("out", &outs[i]),
                ],
                &[
                    ("g", gsz.into()),
                    ("op", op.into()),
                    ("with_b", b.is_some().into()),
                ],
            )?;
        }
        Ok((Program::execute(cs), outs))
    }

    /// Loads `src` and reduce-scatters it; returns this replica's reduced block (`⌈n/G⌉`
    /// elements, in element order).
    fn reduce_scatter(
        &mut self,
        src: &Tensor,
        body: &mut Vec<Program>,
    ) -> Result<Tensor, CollectiveError> {
        self.load(src, body)?;
        self.rs_steps(body)
    }

    /// The reduce-scatter steps over the data as they are; returns the reduced fragment this
    /// replica owns, block after block.
    fn rs_steps(&mut self, body: &mut Vec<Program>) -> Result<Tensor, CollectiveError> {
        let gsz = self.plan.group_size;
        let result: Vec<Tensor> = if gsz == 1 || self.plan.op == Op::Local {
            // Each replica keeps its own fragment, in every half.
            let mut all = Vec::new();
            for h in 0..self.widths.len() {
                let ch = self.chain(h, true)?;
                self.slice(&[(&ch, 0)], body)?;
                all.extend(ch.send);
            }
            all
        } else {
            match self.plan.method {
                Method::Clockwise | Method::Anticlockwise | Method::Auto => {
                    let cw = self.plan.method != Method::Anticlockwise;
                    let ch = self.chain(0, cw)?;
                    self.reset(&[(&ch, 0)], body)?;
                    self.slice(&[(&ch, if cw { gsz - 1 } else { 1 })], body)?;
                    let x = self.exchange(&[&ch])?;
                    let r = self.reduce_step(&[(&ch, if cw { gsz - 2 } else { 2 }, !cw)])?;
                    body.push(Program::repeat(gsz - 1, Program::seq(vec![x, r])));
                    ch.send
                }
                Method::BidirectionalRingPair => {
                    let c0 = self.chain(0, true)?;
                    let c1 = self.chain(1, false)?;
                    self.reset(&[(&c0, 0), (&c1, 0)], body)?;
                    self.slice(&[(&c0, gsz - 1), (&c1, 1)], body)?;
                    let x = self.exchange(&[&c0, &c1])?;
                    let r = self.reduce_step(&[(&c0, gsz - 2, false), (&c1, 2 % gsz, true)])?;
                    body.push(Program::repeat(gsz - 1, Program::seq(vec![x, r])));
                    let mut all = c0.send;
                    all.extend(c1.send);
                    all
                }
                Method::MeetInTheMiddle => {
                    let a = gsz / 2; // ⌈(G−1)/2⌉ steps clockwise
                    let b = (gsz - 1) / 2; // ⌊(G−1)/2⌋ anticlockwise
                    let cw = self.chain(0, true)?;
                    let acw = if b > 0 {
                        Some(self.chain(0, false)?)
                    } else {
                        None
                    };
                    let mut starts = vec![(&cw, 0u32)];
                    let mut slices = vec![(&cw, a % gsz)];
                    if let Some(acw) = &acw {
                        starts.push((acw, 0));
                        slices.push((acw, gsz - b));
                    }
                    self.reset(&starts, body)?;
                    self.slice(&slices, body)?;
                    let cw_off = (a + gsz - 1) % gsz;
                    if let Some(acw) = &acw {
                        let acw_off = (gsz + 1 - b) % gsz;
                        let both = self.exchange(&[&cw, acw])?;
                        if b > 1 {
                            let r =
                                self.reduce_step(&[(&cw, cw_off, false), (acw, acw_off, true)])?;
                            body.push(Program::repeat(b - 1, Program::seq(vec![both.clone(), r])));
                        }
                        body.push(both);
                        if a > b {
                            let r = self.reduce_step(&[(&cw, cw_off, false)])?;
                            body.push(r);
                            body.push(self.exchange(&[&cw])?);
                        }
                    } else {
                        body.push(self.exchange(&[&cw])?);
                    }
                    let (p, outs) = self.finish(&cw, acw.as_ref())?;
                    body.push(p);
                    outs
                }
            }
        };
        if self.plan.op == Op::Mean && gsz > 1 {
            let p = self.map(&result, 1, 1.0 / gsz as f32)?;
            body.push(p);
        }
        poplar::concat(&result).map_err(|e| self.err(e))
    }

    /// Gathers every member's `src` (`n` elements); returns the `G·n` elements in member order.
    fn all_gather(
        &mut self,
        src: &Tensor,
        body: &mut Vec<Program>,
    ) -> Result<Tensor, CollectiveError> {
        let gsz = self.plan.group_size;
        if gsz == 1 {
            let ordered = self.ordered()?;
            body.push(Program::copy(src, &ordered));
            return Ok(ordered);
        }
        self.gather(src, body)?;
        self.ordered()
    }

    /// The all-gather steps: every member's `src` (its own fragment, block after block) into
    /// the data.
    fn gather(&mut self, src: &Tensor, body: &mut Vec<Program>) -> Result<(), CollectiveError> {
        let gsz = self.plan.group_size;
        match self.plan.method {
            Method::Clockwise | Method::Anticlockwise | Method::Auto => {
                let cw = self.plan.method != Method::Anticlockwise;
                let ch = self.chain(0, cw)?;
                self.reset(&[(&ch, 0)], body)?;
                body.push(Program::copy(
                    src,
                    &poplar::concat(&ch.recv).map_err(|e| self.err(e))?,
                ));
                body.push(self.store_step(&[(&ch, !cw)], true)?);
                self.gather_steps(&[(&ch, !cw)], gsz - 1, true, body)?;
            }
            Method::BidirectionalRingPair => {
                let c0 = self.chain(0, true)?;
                let c1 = self.chain(1, false)?;
                self.reset(&[(&c0, 0), (&c1, 0)], body)?;
                let mut recv = c0.recv.clone();
                recv.extend(c1.recv.iter().cloned());
                body.push(Program::copy(
                    src,
                    &poplar::concat(&recv).map_err(|e| self.err(e))?,
                ));
                body.push(self.store_step(&[(&c0, false), (&c1, true)], true)?);
                self.gather_steps(&[(&c0, false), (&c1, true)], gsz - 1, true, body)?;
            }
            Method::MeetInTheMiddle => {
                let a = gsz / 2;
                let b = (gsz - 1) / 2;
                let cw = self.chain(0, true)?;
                let acw = if b > 0 {
                    Some(self.chain(0, false)?)
                } else {
                    None
                };
                let mut starts = vec![(&cw, 0u32)];
                if let Some(acw) = &acw {
                    starts.push((acw, 1));
                }
                self.reset(&starts, body)?;
                let own = poplar::concat(&cw.recv).map_err(|e| self.err(e))?;
                body.push(Program::copy(src, &own));
                body.push(self.store_step(&[(&cw, false)], true)?);
                let mut at = true;
                if let Some(acw) = &acw {
                    body.push(Program::copy(
                        &own,
                        &poplar::concat(&acw.recv).map_err(|e| self.err(e))?,
                    ));
                    at = self.gather_steps(&[(&cw, false), (acw, true)], b, true, body)?;
                }
                self.gather_steps(&[(&cw, false)], a - b, at, body)?;
            }
        }
        Ok(())
    }
}

/// `n` balanced parts of `total` (the first `total % n` one larger).
fn split(total: usize, n: usize) -> Vec<usize> {
    (0..n)
        .map(|j| total / n + usize::from(j < total % n))
        .collect()
}

fn zero_constant(
    g: &mut Graph,
    dtype: DType,
    len: usize,
    name: &str,
) -> Result<Tensor, GraphError> {
    match dtype {
        DType::F32 => g.add_constant(&[len], &vec![0f32; len], name),
        DType::F16 => g.add_constant(&[len], &vec![poplar::f16::ZERO; len], name),
        DType::I32 => g.add_constant(&[len], &vec![0i32; len], name),
        _ => g.add_constant(&[len], &vec![false; len], name),
    }
}
