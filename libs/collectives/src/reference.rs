//! Host models of the collectives: the test oracle. Plain loops over `[R][n]` arrays in f64
//! (or exact integer and boolean arithmetic), independent of the ring implementation.

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
