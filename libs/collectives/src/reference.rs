//! Host models of the collectives: the test oracle. Plain loops over `[R][n]` arrays in f64
//! (or exact integer and boolean arithmetic), independent of the ring implementation; and,
//! for f16, the order in which the rings add and round ([`all_reduce_f16_ring`]), which decides
//! the bits of the result.

use poplar_core::f16;

use crate::plan::{Group, Op};
use crate::CollectiveError;

/// The all-reduce of `data[r]` (one vector per replica) under `op` and `group`.
pub fn all_reduce(
    data: &[Vec<f64>],
    op: Op,
    group: Group,
) -> Result<Vec<Vec<f64>>, CollectiveError> {
    let r = data.len() as u32;
    let mut out = data.to_vec();
    for members in group.members(r)? {
        let n = data[0].len();
        for i in 0..n {
            let vals: Vec<f64> = members.iter().map(|&m| data[m as usize][i]).collect();
            let v = combine(op, &vals);
            for &m in &members {
                out[m as usize][i] = if op == Op::Local {
                    data[m as usize][i]
                } else {
                    v
                };
            }
        }
    }
    Ok(out)
}

fn combine(op: Op, vals: &[f64]) -> f64 {
    match op {
        Op::Add | Op::Local => vals.iter().sum(),
        Op::Mean => vals.iter().sum::<f64>() / vals.len() as f64,
        Op::Mul => vals.iter().product(),
        Op::Min => vals.iter().copied().fold(f64::INFINITY, f64::min),
        Op::Max => vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        Op::LogicalAnd => f64::from(u8::from(vals.iter().all(|&v| v != 0.0))),
        Op::LogicalOr => f64::from(u8::from(vals.iter().any(|&v| v != 0.0))),
        Op::SquareAdd => vals.iter().map(|v| v * v).sum(),
    }
}

/// The reduce-scatter: member `i` of each group gets elements `i·⌈n/G⌉ ..` of the reduced
/// vector, zero-padded to `⌈n/G⌉`.
pub fn reduce_scatter(
    data: &[Vec<f64>],
    op: Op,
    group: Group,
) -> Result<Vec<Vec<f64>>, CollectiveError> {
    let r = data.len() as u32;
    let gsz = group.size(r)? as usize;
    let n = data[0].len();
    let c = n.div_ceil(gsz);
    let reduced = all_reduce(data, op, group)?;
    let mut out = vec![Vec::new(); data.len()];
    for members in group.members(r)? {
        for (i, &m) in members.iter().enumerate() {
            out[m as usize] = (i * c..(i + 1) * c)
                .map(|e| if e < n { reduced[m as usize][e] } else { 0.0 })
                .collect();
        }
    }
    Ok(out)
}

/// The all-gather: each replica gets its group members' vectors, concatenated in replica order.
pub fn all_gather(data: &[Vec<f64>], group: Group) -> Result<Vec<Vec<f64>>, CollectiveError> {
    let r = data.len() as u32;
    let mut out = vec![Vec::new(); data.len()];
    for members in group.members(r)? {
        let all: Vec<f64> = members
            .iter()
            .flat_map(|&m| data[m as usize].iter().copied())
            .collect();
        for &m in &members {
            out[m as usize] = all.clone();
        }
    }
    Ok(out)
}

/// Where the elements of a call travel in the rings: which fragment (so which replica's ring
/// position owns it) and which half of it (the bidirectional ring pair sends half 0
/// clockwise and half 1 anticlockwise). The reduced value of an f16 element depends on it,
/// because the ring rounds every partial sum (see [`all_reduce_f16_ring`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// `reduce_scatter` (and `all_gather`): the call's `n` elements (all tensors, flattened
    /// and concatenated) cut into `G` blocks of `C = ⌈n/G⌉`, the last zero-padded; block `i`
    /// is the fragment of the group's `i`-th member (in replica order). With the
    /// bidirectional ring pair the first `⌈C/2⌉` elements of a block are half 0, the rest
    /// half 1.
    Padded,
    /// The all-reduces (`all_reduce`, `all_reduce_to`, `all_reduce_in_place`), and
    /// `reduce_scatter_in_place` and `all_gather_to` (one half: one-way rings): reduced in
    /// place over the outputs' pieces, given here as `Graph::tile_mapping` lists them for the
    /// outputs flattened and concatenated (tile after tile, each tile's ranges in order).
    /// Each piece of `L` elements is split into halves (for the bidirectional ring pair: the
    /// first `⌈L/2⌉` elements, then the rest; else one), and each half of `l` elements into
    /// `G` fragments of `⌈l/G⌉` consecutive elements (the last ones shorter or empty);
    /// fragment `q` belongs to ring position `q`.
    InPlace(Vec<std::ops::Range<usize>>),
}

/// The all-reduce of f16 data as the rings compute it: every step adds the incoming f16
/// partial to the local f16 value in f32 and rounds the sum to f16 (to nearest, ties to
/// even), so a result of `G` terms is rounded `G − 1` times, in ring order. `rings` are the
/// groups' rings (replica indices in ring order, [`crate::Plan::rings`], one per group in
/// the order of [`Group::members`]); `method` is the plan's. The order of the terms for the
/// fragment owned by ring position `q` (positions mod `G`, `x[p]` the value of the replica at
/// position `p`, `⊕` rounding each time):
///
/// - clockwise (and half 0 of the bidirectional ring pair):
///   `((x[q+1] ⊕ x[q+2]) ⊕ …) ⊕ x[q+G−1]) ⊕ x[q]`;
/// - anticlockwise (and half 1 of the pair): `x[q−1] ⊕ x[q−2] ⊕ … ⊕ x[q−G+1] ⊕ x[q]`, from
///   the left;
/// - meet in the middle, with `a = ⌊G/2⌋` and `b = ⌊(G−1)/2⌋`: the clockwise chain
///   `cw = x[q−a] ⊕ … ⊕ x[q−1]` and the anticlockwise one `acw = x[q+b] ⊕ … ⊕ x[q+1]`, then
///   `(cw ⊕ acw) ⊕ x[q]` (`cw ⊕ x[q]` when `b = 0`).
///
/// `SquareAdd` squares each value first (rounded to f16), `Mean` multiplies the result by
/// `1/G` (as an f32, rounded to f16), `Local` and groups of one keep each replica's value.
pub fn all_reduce_f16_ring(
    data: &[Vec<f16>],
    op: Op,
    group: Group,
    rings: &[Vec<u32>],
    method: crate::Method,
    layout: &Layout,
) -> Result<Vec<Vec<f16>>, CollectiveError> {
    let n = data.first().map_or(0, Vec::len);
    let halves = if method == crate::Method::BidirectionalRingPair {
        2
    } else {
        1
    };
    let mut out = data.to_vec();
    for (members, ring) in group.members(data.len() as u32)?.iter().zip(rings) {
        let g = ring.len();
        for e in 0..n {
            let (q, h) = match layout {
                Layout::Padded => padded_slot(e, n, g, halves, members, ring),
                Layout::InPlace(pieces) => in_place_slot(e, pieces, g, halves),
            };
            let x: Vec<f16> = ring.iter().map(|&r| data[r as usize][e]).collect();
            let v = reduce_f16(op, &x, q, h, method);
            for (p, &r) in ring.iter().enumerate() {
                out[r as usize][e] = if op == Op::Local || g == 1 && op != Op::SquareAdd {
                    x[p]
                } else {
                    v
                };
            }
        }
    }
    Ok(out)
}

/// The reduce-scatter of f16 data as the rings compute it (the order of
/// [`all_reduce_f16_ring`], over [`Layout::Padded`]): member `i` of each group gets elements
/// `i·⌈n/G⌉ ..` of the reduced vector, zero-padded to `⌈n/G⌉`.
pub fn reduce_scatter_f16_ring(
    data: &[Vec<f16>],
    op: Op,
    group: Group,
    rings: &[Vec<u32>],
    method: crate::Method,
) -> Result<Vec<Vec<f16>>, CollectiveError> {
    let r = data.len() as u32;
    let gsz = group.size(r)? as usize;
    let n = data.first().map_or(0, Vec::len);
    let c = n.div_ceil(gsz);
    // The padding takes part in the reduction as zeros.
    let padded: Vec<Vec<f16>> = data
        .iter()
        .map(|v| {
            let mut v = v.clone();
            v.resize(c * gsz, f16::ZERO);
            v
        })
        .collect();
    let reduced = all_reduce_f16_ring(&padded, op, group, rings, method, &Layout::Padded)?;
    let mut out = vec![Vec::new(); data.len()];
    for members in group.members(r)? {
        for (i, &m) in members.iter().enumerate() {
            out[m as usize] = reduced[m as usize][i * c..(i + 1) * c].to_vec();
        }
    }
    Ok(out)
}

/// Ring position owning element `e` of a padded vector of `n = G·C` elements, and its half.
fn padded_slot(
    e: usize,
    n: usize,
    g: usize,
    halves: usize,
    members: &[u32],
    ring: &[u32],
) -> (usize, usize) {
    let c = n.div_ceil(g).max(1);
    let owner = members[e / c];
    let q = ring
        .iter()
        .position(|&r| r == owner)
        .expect("member in its ring");
    let h = usize::from(halves == 2 && e % c >= c.div_ceil(2));
    (q, h)
}

/// Ring position owning element `e` of the in-place layout over `pieces`, and its half.
fn in_place_slot(
    e: usize,
    pieces: &[std::ops::Range<usize>],
    g: usize,
    halves: usize,
) -> (usize, usize) {
    let piece = pieces
        .iter()
        .find(|p| p.contains(&e))
        .expect("every element in a piece");
    let first = piece.len().div_ceil(halves);
    let (h, start, len) = if e < piece.start + first {
        (0, piece.start, first)
    } else {
        (1, piece.start + first, piece.len() - first)
    };
    (((e - start) / len.div_ceil(g)), h)
}

/// `a ⊕ b` for f16 under `op`, computed in f32 and rounded once to f16.
fn combine_f16(op: Op, a: f16, b: f16) -> f16 {
    let (a, b) = (a.to_f32(), b.to_f32());
    f16::from_f32(match op {
        Op::Mul => a * b,
        Op::Min => a.min(b),
        Op::Max => a.max(b),
        _ => a + b,
    })
}

/// The fragment owned by ring position `q`, half `h`: `x[p]` is the value at ring position
/// `p` (the order of [`all_reduce_f16_ring`]).
fn reduce_f16(op: Op, x: &[f16], q: usize, h: usize, method: crate::Method) -> f16 {
    use crate::Method;
    let g = x.len();
    let x: Vec<f16> = if op == Op::SquareAdd {
        x.iter()
            .map(|v| f16::from_f32(v.to_f32() * v.to_f32()))
            .collect()
    } else {
        x.to_vec()
    };
    if g == 1 {
        return x[0];
    }
    let at = |p: isize| x[(q as isize + p).rem_euclid(g as isize) as usize];
    let fold = |terms: &mut dyn Iterator<Item = f16>| {
        let first = terms.next().expect("one term at least");
        terms.fold(first, |acc, v| combine_f16(op, acc, v))
    };
    let gi = g as isize;
    let v = match (method, h) {
        (Method::MeetInTheMiddle, _) => {
            let (a, b) = (gi / 2, (gi - 1) / 2);
            let cw = fold(&mut (-a..0).map(at));
            let partial = if b > 0 {
                let acw = fold(&mut (1..=b).rev().map(at));
                combine_f16(op, cw, acw)
            } else {
                cw
            };
            combine_f16(op, partial, at(0))
        }
        (Method::Anticlockwise, _) | (Method::BidirectionalRingPair, 1) => {
            fold(&mut (1..gi).map(|k| at(-k)).chain(std::iter::once(at(0))))
        }
        // Clockwise, half 0 of the pair, and `Auto` (which the builder runs as clockwise).
        _ => fold(&mut (1..=gi).map(at)),
    };
    if op == Op::Mean {
        f16::from_f32(v.to_f32() * (1.0 / g as f32))
    } else {
        v
    }
}
