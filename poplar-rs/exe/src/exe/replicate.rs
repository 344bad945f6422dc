//! Expanding a replicated executable into the flat executable of the whole machine that the
//! engine runs.
//!
//! The file and the compiler keep one replica ([`Replication`]); the engine simulates every
//! replica, so it runs a flat executable in which each phase lists the tiles of all replicas.
//! Expansion is linear in `R ×` the size of the executable and runs once per engine, never in
//! the compiler: compile time does not depend on the replication factor.
//!
//! The flat executable numbers tiles machine-wide (replica `r`'s tile `t` is
//! `r·tiles_per_replica + t`), lists host tensors and streams replica-major (replica `r`'s copy
//! of the `i`-th of `n` is entry `r·n + i`, named `name[replica r]` after replica 0's), and turns every cross-replica
//! transfer into an ordinary inter-chip transfer. Control-flow predicates keep replica 0's
//! location; the engine compares the other replicas' values against it.

use super::{Executable, MemRun, Replication, Step, TileImage, Transfer, NO_REPLICA};
use crate::target::{Target, TileId};

/// What the engine needs to address replica `r`'s copy of a flat executable's entities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaLayout {
    pub replicas: u32,
    pub tiles_per_replica: u32,
    pub host_tensors_per_replica: usize,
    pub streams_per_replica: usize,
}

impl Executable {
    /// The layout of an executable that is not expanded: one replica, all of it.
    pub fn expand_layout(&self) -> ReplicaLayout {
        ReplicaLayout {
            replicas: 1,
            tiles_per_replica: self.target.num_tiles(),
            host_tensors_per_replica: self.host_tensors.len(),
            streams_per_replica: self.streams.len(),
        }
    }

    /// The flat executable of all replicas and its layout; for an executable that is not
    /// replicated, a copy and a layout of one replica. Run [`Executable::check`] first: on an
    /// executable that fails it, the expansion does not panic but leaves out what is
    /// inconsistent (a transfer with an unknown replica map, a replica constant whose values
    /// do not fit its runs), and the flat result may fail its own check.
    pub fn expand_replicas(&self) -> (Executable, ReplicaLayout) {
        let Some(rep) = &self.replication else {
            return (self.clone(), self.expand_layout());
        };
        let r_count = rep.factor;
        let t_count = rep.tiles_per_replica(&self.target);
        let layout = ReplicaLayout {
            replicas: r_count,
            tiles_per_replica: t_count,
            host_tensors_per_replica: self.host_tensors.len(),
            streams_per_replica: self.streams.len(),
        };
        let at = |r: u32, t: TileId| r * t_count + t;
        let target = Target {
            num_ipus: r_count * rep.chips_per_replica,
            ..self.target.clone()
        };

        let mut tiles: Vec<TileImage> = Vec::with_capacity(self.tiles.len() * r_count as usize);
        for _ in 0..r_count {
            tiles.extend(self.tiles.iter().cloned());
        }
        for c in &rep.constants {
            for (r, value) in c.values.iter().enumerate().take(r_count as usize) {
                let mut pos = 0usize;
                for run in &c.runs {
                    let n = run.bytes as usize;
                    let (Some(data), Some(tile)) = (
                        value.get(pos..pos + n),
                        tiles.get_mut(at(r as u32, run.tile) as usize),
                    ) else {
                        break;
                    };
                    tile.init.push(super::InitBlock {
                        offset: run.offset,
                        data: data.to_vec(),
                        len: run.bytes,
                    });
                    pos += n;
                }
            }
        }

        let computes = self
            .computes
            .values()
            .map(|ph| super::ComputePhase {
                name: ph.name.clone(),
                tiles: (0..r_count)
                    .flat_map(|r| {
                        ph.tiles.iter().map(move |tc| super::TileCompute {
                            tile: at(r, tc.tile),
                            ..tc.clone()
                        })
                    })
                    .collect(),
            })
            .collect();

        let exchanges = self
            .exchanges
            .values()
            .map(|ph| {
                let mut transfers: Vec<Transfer> = (0..r_count)
                    .flat_map(|r| {
                        ph.transfers.iter().map(move |t| Transfer {
                            src_tile: at(r, t.src_tile),
                            src_offset: t.src_offset,
                            bytes: t.bytes,
                            dsts: t.dsts.iter().map(|&(d, o)| (at(r, d), o)).collect(),
                        })
                    })
                    .collect();
                for c in &ph.cross_replica {
                    let Some(map) = rep.maps.get(c.map as usize) else {
                        continue;
                    };
                    for (r, &d) in map.iter().enumerate() {
                        if d != NO_REPLICA {
                            transfers.push(Transfer {
                                src_tile: at(r as u32, c.src_tile),
                                src_offset: c.src_offset,
                                bytes: c.bytes,
                                dsts: vec![(at(d, c.dst_tile), c.dst_offset)],
                            });
                        }
                    }
                }
                transfers.sort_by_key(|t| (t.src_tile, t.src_offset));
                super::ExchangePhase {
                    name: ph.name.clone(),
                    transfers,
                    cross_replica: Vec::new(),
                }
            })
            .collect();

        let shift_runs = |r: u32, runs: &[MemRun]| -> Vec<MemRun> {
            runs.iter()
                .map(|m| MemRun {
                    tile: at(r, m.tile),
                    ..*m
                })
                .collect()
        };
        let n_streams = self.streams.len() as u32;
        let expand_step = |s: &Step| -> Step {
            fn walk(s: &Step, f: &dyn Fn(&Step) -> Option<Step>) -> Step {
                if let Some(x) = f(s) {
                    return x;
                }
                match s {
                    Step::Seq(v) => Step::Seq(v.iter().map(|c| walk(c, f)).collect()),
                    Step::Label { name, body } => Step::Label {
                        name: name.clone(),
                        body: Box::new(walk(body, f)),
                    },
                    Step::Repeat { count, body } => Step::Repeat {
                        count: *count,
                        body: Box::new(walk(body, f)),
                    },
                    Step::While {
                        cond,
                        predicate,
                        body,
                    } => Step::While {
                        cond: Box::new(walk(cond, f)),
                        predicate: *predicate,
                        body: Box::new(walk(body, f)),
                    },
                    Step::If {
                        predicate,
                        then,
                        else_,
                    } => Step::If {
                        predicate: *predicate,
                        then: Box::new(walk(then, f)),
                        else_: Box::new(walk(else_, f)),
                    },
                    Step::Switch {
                        control,
                        cases,
                        default,
                    } => Step::Switch {
                        control: *control,
                        cases: cases.iter().map(|(v, c)| (*v, walk(c, f))).collect(),
                        default: Box::new(walk(default, f)),
                    },
                    other => other.clone(),
                }
            }
            walk(s, &|s| match s {
                Step::StreamIn { stream, runs } => Some(Step::Seq(
                    (0..r_count)
                        .map(|r| Step::StreamIn {
                            stream: r * n_streams + stream,
                            runs: shift_runs(r, runs),
                        })
                        .collect(),
                )),
                Step::StreamOut { stream, runs } => Some(Step::Seq(
                    (0..r_count)
                        .map(|r| Step::StreamOut {
                            stream: r * n_streams + stream,
                            runs: shift_runs(r, runs),
                        })
                        .collect(),
                )),
                _ => None,
            })
        };

        let flat = Executable {
            target,
            replication: None,
            codelets: self.codelets.clone(),
            tiles,
            computes,
            exchanges,
            programs: self.programs.iter().map(expand_step).collect(),
            functions: self.functions.values().map(expand_step).collect(),
            host_tensors: (0..r_count)
                .flat_map(|r| {
                    self.host_tensors.iter().map(move |h| super::HostTensor {
                        name: replica_name(&h.name, r),
                        runs: shift_runs(r, &h.runs),
                        ..h.clone()
                    })
                })
                .collect(),
            streams: (0..r_count)
                .flat_map(|r| {
                    self.streams.iter().map(move |s| super::StreamDesc {
                        name: replica_name(&s.name, r),
                        ..s.clone()
                    })
                })
                .collect(),
            variable_names: self.variable_names.clone(),
            app_sections: self.app_sections.clone(),
        };
        (flat, layout)
    }
}

/// The name of replica `r`'s copy of a host tensor or stream in a flat executable: replica 0
/// keeps the name (the engine looks names up there), the others are `name[replica r]`.
fn replica_name(name: &str, r: u32) -> String {
    if r == 0 {
        name.to_string()
    } else {
        format!("{name}[replica {r}]")
    }
}

/// The replica maps of a [`Replication`] are what a cross-replica copy may use: `factor`
/// entries, each a replica or [`NO_REPLICA`], no replica receiving twice. Returns the index of
/// the first bad map and why.
pub(super) fn bad_map(rep: &Replication) -> Option<(usize, String)> {
    for (m, map) in rep.maps.iter().enumerate() {
        if map.len() != rep.factor as usize {
            return Some((
                m,
                format!("has {} entries for {} replicas", map.len(), rep.factor),
            ));
        }
        let mut seen = vec![false; rep.factor as usize];
        for (r, &d) in map.iter().enumerate() {
            if d == NO_REPLICA {
                continue;
            }
            if d >= rep.factor {
                return Some((
                    m,
                    format!("sends replica {r} to replica {d}, which does not exist"),
                ));
            }
            if std::mem::replace(&mut seen[d as usize], true) {
                return Some((m, format!("sends two replicas to replica {d}")));
            }
        }
    }
    None
}
