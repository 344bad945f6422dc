//! Pipeline schedules: in which order the stages run the forward and backward passes of the
//! micro-batches of a step, and how many micro-batches each stage holds at once.
//!
//! A schedule is a list of **groups**. The passes of one group run side by side on their
//! stages' chips (they share compute sets, so a group lasts as long as its slowest pass); a
//! pass's result reaches the next stage at the end of its group. A pass is ready once what it
//! needs finished in an earlier group: the forward pass of stage `s` needs stage `s−1`'s, the
//! backward pass needs its own forward pass and stage `s+1`'s backward pass.
//!
//! | schedule | groups | micro-batches in flight at stage `s` |
//! |---|---|---|
//! | `Sequential` | one pass each: micro-batch 0 forward through every stage and back, then 1, … (no overlap; for debugging) | 1 |
//! | `Interleaved` | forward groups and backward groups alternate; each stage forwards or backwards its next micro-batch when it is ready (one forward, one backward) | `2·(P−1−s) + 1` at most |
//! | `Grouped` | every forward group first (stage `s` forwards micro-batch `t − s` in group `t`), then every backward group | `M` |
//!
//! With `P` stages and `M` micro-batches, Interleaved and Grouped both take `M + P − 1`
//! forward and `M + P − 1` backward groups, each stage busy in `M` of each: the idle fraction
//! of a fill-drain pipeline, `(P−1)/(M+P−1)`; Sequential takes `2·P·M` groups, idle
//! `(P−1)/P`.

use serde::Serialize;

/// How micro-batches flow through the pipeline's stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    Sequential,
    Interleaved,
    Grouped,
}

impl Schedule {
    pub const ALL: [Schedule; 3] = [
        Schedule::Sequential,
        Schedule::Interleaved,
        Schedule::Grouped,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Schedule::Sequential => "sequential",
            Schedule::Interleaved => "interleaved",
            Schedule::Grouped => "grouped",
        }
    }
}

/// A forward or backward pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Pass {
    Forward,
    Backward,
}

/// One stage's pass over one micro-batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Op {
    pub stage: usize,
    pub micro_batch: usize,
    pub pass: Pass,
}

/// The groups of a schedule, in order, and the depth of each stage's stash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub groups: Vec<Vec<Op>>,
    /// Per stage: micro-batches held at once (its stage inputs, and the activations kept for
    /// the backward pass when they are not recomputed).
    pub stash: Vec<usize>,
}

/// The plan of `schedule` for `stages` stages and `micro_batches` micro-batches (both ≥ 1).
pub fn plan(schedule: Schedule, stages: usize, micro_batches: usize) -> Plan {
    let (p, m) = (stages.max(1), micro_batches.max(1));
    let groups = match schedule {
        Schedule::Sequential => sequential(p, m),
        Schedule::Interleaved => greedy(p, m, true),
        Schedule::Grouped => greedy(p, m, false),
    };
    let stash = stash_depths(&groups, p, m);
    Plan { groups, stash }
}

fn sequential(p: usize, m: usize) -> Vec<Vec<Op>> {
    let op = |stage, micro_batch, pass| {
        vec![Op {
            stage,
            micro_batch,
            pass,
        }]
    };
    (0..m)
        .flat_map(|i| {
            let fwd = (0..p).map(move |s| op(s, i, Pass::Forward));
            fwd.chain((0..p).rev().map(move |s| op(s, i, Pass::Backward)))
        })
        .collect()
}

/// Progress of the greedy scheduler: per stage, the next forward and backward micro-batch,
/// and the group each pass finished in.
struct Progress {
    next: [Vec<usize>; 2],
    done: [Vec<Vec<Option<usize>>>; 2],
}

impl Progress {
    fn ready(&self, op: Op, group: usize, p: usize) -> bool {
        let before =
            |pass: usize, s: usize| self.done[pass][s][op.micro_batch].is_some_and(|g| g < group);
        match op.pass {
            Pass::Forward => op.stage == 0 || before(0, op.stage - 1),
            Pass::Backward => before(0, op.stage) && (op.stage + 1 == p || before(1, op.stage + 1)),
        }
    }
}

/// Interleaved (`alternate`: forward and backward groups alternate) or Grouped (every
/// forward group, then every backward group).
fn greedy(p: usize, m: usize, alternate: bool) -> Vec<Vec<Op>> {
    let mut pr = Progress {
        next: [vec![0; p], vec![0; p]],
        done: [vec![vec![None; m]; p], vec![vec![None; m]; p]],
    };
    let mut groups = Vec::new();
    let mut pass = Pass::Forward;
    while pr.next[1].iter().any(|&i| i < m) {
        let k = pass as usize;
        let at = groups.len();
        let group: Vec<Op> = (0..p)
            .filter(|&s| pr.next[k][s] < m)
            .map(|s| Op {
                stage: s,
                micro_batch: pr.next[k][s],
                pass,
            })
            .filter(|&op| pr.ready(op, at, p))
            .collect();
        for op in &group {
            pr.next[k][op.stage] += 1;
            pr.done[k][op.stage][op.micro_batch] = Some(at);
        }
        if !group.is_empty() {
            groups.push(group);
        }
        let forwards_left = pr.next[0].iter().any(|&i| i < m);
        pass = match (alternate, pass) {
            (true, Pass::Forward) => Pass::Backward,
            (true, Pass::Backward) if forwards_left => Pass::Forward,
            (false, _) if forwards_left => Pass::Forward,
            _ => Pass::Backward,
        };
    }
    groups
}

/// Per stage, the most micro-batches whose stash is live at once: from the group that writes
/// the stage's input (the previous stage's forward pass, or its own for stage 0) to the group
/// of its backward pass.
fn stash_depths(groups: &[Vec<Op>], p: usize, m: usize) -> Vec<usize> {
    let mut when = vec![[usize::MAX; 2]; p * m];
    for (g, group) in groups.iter().enumerate() {
        for op in group {
            when[op.stage * m + op.micro_batch][op.pass as usize] = g;
        }
    }
    (0..p)
        .map(|s| {
            let window = |i: usize| {
                let from = if s == 0 { s } else { s - 1 };
                (when[from * m + i][0], when[s * m + i][1])
            };
            (0..m)
                .map(|i| {
                    let (start, _) = window(i);
                    (0..m)
                        .filter(|&j| {
                            let (a, b) = window(j);
                            a <= start && start <= b
                        })
                        .count()
                })
                .max()
                .unwrap_or(1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pass appears once, after what it needs.
    fn check(plan: &Plan, p: usize, m: usize) {
        let mut when = std::collections::HashMap::new();
        for (g, group) in plan.groups.iter().enumerate() {
            for op in group {
                assert!(when
                    .insert((op.stage, op.micro_batch, op.pass), g)
                    .is_none());
            }
        }
        assert_eq!(when.len(), 2 * p * m);
        for s in 0..p {
            for i in 0..m {
                let f = when[&(s, i, Pass::Forward)];
                let b = when[&(s, i, Pass::Backward)];
                assert!(b > f);
                if s > 0 {
                    assert!(f > when[&(s - 1, i, Pass::Forward)]);
                }
                if s + 1 < p {
                    assert!(b > when[&(s + 1, i, Pass::Backward)]);
                }
            }
        }
    }

    #[test]
    fn schedules_respect_dependencies_and_count_groups() {
        for (p, m) in [(1, 1), (2, 4), (4, 8), (8, 3)] {
            for s in Schedule::ALL {
                let plan = plan(s, p, m);
                check(&plan, p, m);
                let expect = match s {
                    Schedule::Sequential => 2 * p * m,
                    _ => 2 * (m + p - 1),
                };
                assert_eq!(plan.groups.len(), expect, "{s:?} p {p} m {m}");
            }
        }
    }

    #[test]
    fn stash_depths_per_schedule() {
        let (p, m) = (4, 16);
        assert_eq!(plan(Schedule::Sequential, p, m).stash, vec![1; p]);
        assert_eq!(plan(Schedule::Grouped, p, m).stash, vec![m; p]);
        let inter = plan(Schedule::Interleaved, p, m).stash;
        for (s, d) in inter.iter().enumerate() {
            assert!(*d <= 2 * (p - 1 - s) + 2, "stage {s}: {d}");
        }
        assert!(inter[0] < m);
    }
}
