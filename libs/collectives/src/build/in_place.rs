//! The reduce-scatter and all-gather that work on the caller's tensor itself, with no copy of
//! the whole vector: [`reduce_scatter_in_place`] and [`all_gather_to`].
//!
//! Both use the in-place layout of [`all_reduce_in_place`](super::all_reduce_in_place): each
//! contiguous piece of the tensor on a tile (`L` elements; pieces in tile order, then element
//! order) is a block of `G` runs of `w = ⌈L/G⌉` elements, the last ones shorter or empty, and
//! run `q` belongs to the replica at ring position `q` of its group (`Plan::rings`). With the
//! tensor in one piece on one tile and [`RingOrder::Sequential`](crate::RingOrder) (ring
//! position = index in the group), replica `i` of a group owns elements
//! `i·⌈n/G⌉ .. (i+1)·⌈n/G⌉`, as [`reduce_scatter`](super::reduce_scatter) gives. The rings are
//! one-way (clockwise, anticlockwise, meet in the middle): the bidirectional ring pair would
//! cut each run in two.

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::Graph;
use poplar_compiler::graph::Tensor;

use super::builder::Builder;
use super::{Collective, Options};
use crate::plan::{Group, Kind, Op};
use crate::CollectiveError;

/// Reduces `tensor` (flat, `n` elements) across the replicas of each group where it lies:
/// the tensor is clobbered (it ends with partial sums), and the only new memory is a few
/// buffers of this replica's share per tile (two for the one-way rings, five for meet in
/// the middle). `outputs[0]` is that share: the reduced run
/// this replica owns of each piece (see the module notes), zero-padded to `⌈L/G⌉` elements
/// each and concatenated in piece order; for a tensor in one piece, `⌈n/G⌉` elements. With
/// groups of one replica it is the tensor itself (its pieces in that order).
pub fn reduce_scatter_in_place(
    g: &mut Graph,
    tensor: &Tensor,
    op: Op,
    group: Group,
    opts: &Options,
    name: &str,
) -> Result<Collective, CollectiveError> {
    rs_in_place(g, tensor, op, group, opts, name)
}

fn rs_in_place(
    g: &mut Graph,
    tensor: &Tensor,
    op: Op,
    group: Group,
    opts: &Options,
    name: &str,
) -> Result<Collective, CollectiveError> {
    check_mapped(g, tensor, 0, name)?;
    let mut b = Builder::with_layout(
        g,
        std::slice::from_ref(tensor),
        Kind::ReduceScatter,
        op,
        group,
        opts,
        name,
        Some(tensor),
    )?;
    let mut body = Vec::new();
    if op == Op::SquareAdd {
        let all: Vec<Tensor> = b.data.iter().flatten().flatten().cloned().collect();
        body.push(b.map(&all, 0, 1.0)?);
    }
    let out = if b.plan.group_size == 1 {
        let pieces: Vec<Tensor> = b.data[0].iter().flatten().cloned().collect();
        poplar_compiler::graph::concat(&pieces).map_err(|e| b.err(e))?
    } else {
        if has_short_runs(&b) {
            // Buffers that start at zero keep zero past a short run's end (the ring steps
            // touch only a run's own elements there), so the share is zero-padded.
            let zero = b.g.add_compute_set(&format!("{name}/zero buffers"));
            b.zero = Some(zero);
        }
        let mut steps = Vec::new();
        let out = b.rs_steps(&mut steps)?;
        if let Some(zero) = b.zero {
            body.push(Program::execute(zero));
        }
        body.extend(b.zero_buffers()?);
        body.extend(steps);
        out
    };
    Ok(collective(&b, body, out, name))
}

/// Gathers every group member's `input` into `dest`, the full-size tensor, directly: the
/// replica at ring position `q` of its group contributes run `q` of each piece of `dest` (see
/// the module notes), so `input` has `Σ ⌈L/G⌉` elements over the pieces (`⌈n/G⌉` for a
/// destination in one piece), of which each run takes its first `min(⌈L/G⌉, rest of L)`: a
/// zero padding never reaches `dest`. Every element of `dest` is written; the only new
/// memory is a few buffers of one share per tile (two per ring). `outputs[0]` is `dest`.
pub fn all_gather_to(
    g: &mut Graph,
    input: &Tensor,
    dest: &Tensor,
    group: Group,
    opts: &Options,
    name: &str,
) -> Result<Collective, CollectiveError> {
    gather_to(g, input, dest, group, opts, name)
}

fn gather_to(
    g: &mut Graph,
    input: &Tensor,
    dest: &Tensor,
    group: Group,
    opts: &Options,
    name: &str,
) -> Result<Collective, CollectiveError> {
    if input.dtype() != dest.dtype() {
        return Err(CollectiveError::MixedTypes {
            name: name.to_string(),
            index: 1,
            first: input.dtype(),
            other: dest.dtype(),
        });
    }
    check_mapped(g, input, 0, name)?;
    check_mapped(g, dest, 1, name)?;
    let mut b = Builder::with_layout(
        g,
        std::slice::from_ref(dest),
        Kind::AllGather,
        Op::Local,
        group,
        opts,
        name,
        Some(dest),
    )?;
    b.plan.elements = check_share(&b, input, dest, name)? as u64;
    let src = input.flatten();
    let mut body = Vec::new();
    if b.plan.group_size == 1 {
        let pieces: Vec<Tensor> = b.data[0].iter().flatten().cloned().collect();
        let all = poplar_compiler::graph::concat(&pieces).map_err(|e| b.err(e))?;
        body.push(Program::copy(&src, &all));
    } else {
        b.gather(&src, &mut body)?;
    }
    Ok(collective(&b, body, dest.clone(), name))
}

/// The collective of `b`'s plan: `body` labelled, and its output.
fn collective(b: &Builder<'_>, body: Vec<Program>, output: Tensor, name: &str) -> Collective {
    let plan = b.plan.clone();
    Collective {
        program: Program::labelled(&format!("{} in place", plan.label(name)), body),
        outputs: vec![output],
        parts: vec![plan.clone()],
        plan,
    }
}

/// The elements of a share of `dest` (`Σ ⌈L/G⌉` over its pieces), which `input` must have
/// ([`CollectiveError::BadInputs`] otherwise).
fn check_share(
    b: &Builder<'_>,
    input: &Tensor,
    dest: &Tensor,
    name: &str,
) -> Result<usize, CollectiveError> {
    let want: usize = b.widths[0].iter().sum();
    if input.num_elements() == want {
        return Ok(want);
    }
    Err(CollectiveError::BadInputs {
        name: name.to_string(),
        reason: format!(
            "the input has {} elements but a share of the destination ({} elements in {} \
             piece(s) over groups of {}) is {want}",
            input.num_elements(),
            dest.num_elements(),
            b.widths[0].len(),
            b.plan.group_size
        ),
    })
}

/// Whether a piece has fewer than `G` whole runs (its last runs short or empty).
fn has_short_runs(b: &Builder<'_>) -> bool {
    let gsz = b.plan.group_size as usize;
    b.data[0]
        .iter()
        .zip(&b.widths[0])
        .any(|(d, &w)| d.as_ref().is_some_and(|d| d.num_elements() < gsz * w))
}

/// [`CollectiveError::Unmapped`] unless every element of `t` (tensor `index` of the call) is
/// on a tile; [`CollectiveError::BadInputs`] if it has none.
fn check_mapped(g: &Graph, t: &Tensor, index: usize, name: &str) -> Result<(), CollectiveError> {
    if t.num_elements() == 0 {
        return Err(CollectiveError::BadInputs {
            name: name.to_string(),
            reason: format!("tensor {index} has no elements"),
        });
    }
    let mapping = g.tile_mapping(t).map_err(|source| CollectiveError::Graph {
        name: name.to_string(),
        source,
    })?;
    let mapped: usize = mapping.iter().flatten().map(|r| r.end - r.start).sum();
    if mapped != t.num_elements() {
        return Err(CollectiveError::Unmapped {
            name: name.to_string(),
            index,
        });
    }
    Ok(())
}
