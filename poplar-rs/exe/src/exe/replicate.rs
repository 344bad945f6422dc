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

use super::{
    ComputePhase, CrossReplicaTransfer, ExchangePhase, Executable, HostTensor, InitBlock, MemRun,
    RemoteBufferDesc, RemoteBufferId, RemoteCopy, RemoteCopyId, ReplicaConstant, Replication,
    RowSelect, ScalarLoc, Step, StreamDesc, TileCompute, TileImage, Transfer, NO_REPLICA,
};
use crate::entity::PrimaryMap;
use crate::target::{Target, TileId};

/// What the engine needs to address replica `r`'s copy of a flat executable's entities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaLayout {
    pub replicas: u32,
    pub tiles_per_replica: u32,
    pub host_tensors_per_replica: usize,
    pub streams_per_replica: usize,
    pub remote_buffers_per_replica: usize,
}

impl Executable {
    /// The layout of an executable that is not expanded: one replica, all of it.
    pub fn expand_layout(&self) -> ReplicaLayout {
        ReplicaLayout {
            replicas: 1,
            tiles_per_replica: self.target.num_tiles(),
            host_tensors_per_replica: self.host_tensors.len(),
            streams_per_replica: self.streams.len(),
            remote_buffers_per_replica: self.remote_buffers.len(),
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
        let x = Expander {
            rep,
            replicas: rep.factor,
            tiles_per_replica: rep.tiles_per_replica(&self.target),
            streams: self.streams.len() as u32,
            remote_copies: self.remote_copies.len() as u32,
        };
        let layout = ReplicaLayout {
            replicas: x.replicas,
            tiles_per_replica: x.tiles_per_replica,
            host_tensors_per_replica: self.host_tensors.len(),
            streams_per_replica: self.streams.len(),
            remote_buffers_per_replica: self.remote_buffers.len(),
        };
        let flat = Executable {
            target: Target {
                num_ipus: x.replicas * rep.chips_per_replica,
                ..self.target.clone()
            },
            replication: None,
            codelets: self.codelets.clone(),
            tiles: x.tiles(&self.tiles),
            computes: self.computes.values().map(|p| x.compute(p)).collect(),
            exchanges: self.exchanges.values().map(|p| x.exchange(p)).collect(),
            programs: self.programs.iter().map(|s| x.step(s)).collect(),
            functions: self.functions.values().map(|s| x.step(s)).collect(),
            host_tensors: x.host_tensors(&self.host_tensors),
            streams: x.streams(&self.streams),
            remote_buffers: x.remote_buffers(&self.remote_buffers),
            remote_copies: x.remote_copies(&self.remote_copies, self.remote_buffers.len()),
            variable_names: self.variable_names.clone(),
            app_sections: self.app_sections.clone(),
        };
        (flat, layout)
    }
}

/// The replication of an executable being expanded, with the sizes that place replica `r`'s
/// copy of a replica-local entity in the flat executable.
struct Expander<'a> {
    rep: &'a Replication,
    replicas: u32,
    tiles_per_replica: u32,
    /// Streams of one replica.
    streams: u32,
    /// Remote copies of one replica.
    remote_copies: u32,
}

impl Expander<'_> {
    /// Replica `r`'s copy of replica-local tile `t`.
    #[inline]
    fn at(&self, r: u32, t: TileId) -> TileId {
        t.offset(r * self.tiles_per_replica)
    }

    /// `runs` moved onto replica `r`'s tiles.
    fn shift_runs(&self, r: u32, runs: &[MemRun]) -> Vec<MemRun> {
        runs.iter()
            .map(|m| MemRun {
                tile: self.at(r, m.tile),
                ..*m
            })
            .collect()
    }

    /// The tile images of all replicas, each replica's with its values of the replica
    /// constants as init blocks.
    fn tiles(&self, one: &[TileImage]) -> Vec<TileImage> {
        let mut tiles: Vec<TileImage> = Vec::with_capacity(one.len() * self.replicas as usize);
        for _ in 0..self.replicas {
            tiles.extend(one.iter().cloned());
        }
        for c in &self.rep.constants {
            self.place_constant(c, &mut tiles);
        }
        tiles
    }

    /// Appends each replica's value of `c` to its tiles' init blocks, run by run, up to the
    /// first run that the value or the tiles do not cover.
    fn place_constant(&self, c: &ReplicaConstant, tiles: &mut [TileImage]) {
        for (r, value) in c.values.iter().enumerate().take(self.replicas as usize) {
            let mut pos = 0usize;
            for run in &c.runs {
                let n = run.bytes as usize;
                let (Some(data), Some(tile)) = (
                    value.get(pos..pos + n),
                    tiles.get_mut(self.at(r as u32, run.tile).index()),
                ) else {
                    break;
                };
                tile.init.push(InitBlock {
                    offset: run.offset,
                    data: data.into(),
                    len: run.bytes,
                });
                pos += n;
            }
        }
    }

    /// A compute phase over the tiles of every replica.
    fn compute(&self, ph: &ComputePhase) -> ComputePhase {
        ComputePhase {
            name: ph.name.clone(),
            tiles: (0..self.replicas)
                .flat_map(|r| {
                    ph.tiles.iter().map(move |tc| TileCompute {
                        tile: self.at(r, tc.tile),
                        ..tc.clone()
                    })
                })
                .collect(),
        }
    }

    /// An exchange phase over the tiles of every replica, its cross-replica transfers turned
    /// into ordinary ones; transfers sorted by source.
    fn exchange(&self, ph: &ExchangePhase) -> ExchangePhase {
        let mut transfers: Vec<Transfer> = (0..self.replicas)
            .flat_map(|r| {
                ph.transfers.iter().map(move |t| Transfer {
                    src_tile: self.at(r, t.src_tile),
                    src_offset: t.src_offset,
                    bytes: t.bytes,
                    dsts: t.dsts.iter().map(|&(d, o)| (self.at(r, d), o)).collect(),
                })
            })
            .collect();
        for c in &ph.cross_replica {
            self.cross_replica(c, &mut transfers);
        }
        transfers.sort_by_key(|t| (t.src_tile, t.src_offset));
        ExchangePhase {
            name: ph.name.clone(),
            transfers,
            cross_replica: Vec::new(),
        }
    }

    /// Pushes one transfer per replica that `c`'s map sends somewhere (none if the map is
    /// unknown).
    fn cross_replica(&self, c: &CrossReplicaTransfer, transfers: &mut Vec<Transfer>) {
        let Some(map) = self.rep.maps.get(c.map as usize) else {
            return;
        };
        for (r, &d) in map.iter().enumerate() {
            if d != NO_REPLICA {
                transfers.push(Transfer {
                    src_tile: self.at(r as u32, c.src_tile),
                    src_offset: c.src_offset,
                    bytes: c.bytes,
                    dsts: vec![(self.at(d, c.dst_tile), c.dst_offset)],
                });
            }
        }
    }

    /// A step with each stream copy replaced by the sequence of every replica's copy.
    fn step(&self, s: &Step) -> Step {
        map_steps(s, &|s| match s {
            Step::StreamIn { stream, runs } => Some(Step::Seq(
                (0..self.replicas)
                    .map(|r| Step::StreamIn {
                        stream: r * self.streams + stream,
                        runs: self.shift_runs(r, runs),
                    })
                    .collect(),
            )),
            Step::StreamOut { stream, runs } => Some(Step::Seq(
                (0..self.replicas)
                    .map(|r| Step::StreamOut {
                        stream: r * self.streams + stream,
                        runs: self.shift_runs(r, runs),
                    })
                    .collect(),
            )),
            Step::Remote(c) => Some(Step::Seq(
                (0..self.replicas)
                    .map(|r| {
                        Step::Remote(RemoteCopyId::from_u32(r * self.remote_copies + c.as_u32()))
                    })
                    .collect(),
            )),
            _ => None,
        })
    }

    /// The remote buffers of all replicas, replica-major, each on its replica's chip.
    fn remote_buffers(
        &self,
        one: &PrimaryMap<RemoteBufferId, RemoteBufferDesc>,
    ) -> PrimaryMap<RemoteBufferId, RemoteBufferDesc> {
        (0..self.replicas)
            .flat_map(|r| {
                one.values().map(move |b| RemoteBufferDesc {
                    name: replica_name(&b.name, r),
                    chip: r * self.rep.chips_per_replica + b.chip,
                    ..b.clone()
                })
            })
            .collect()
    }

    /// The remote copies of all replicas, replica-major, each between its replica's tiles and
    /// buffer (`buffers`: remote buffers of one replica).
    fn remote_copies(
        &self,
        one: &PrimaryMap<RemoteCopyId, RemoteCopy>,
        buffers: usize,
    ) -> PrimaryMap<RemoteCopyId, RemoteCopy> {
        (0..self.replicas)
            .flat_map(|r| {
                one.values().map(move |c| RemoteCopy {
                    buffer: RemoteBufferId::from_u32(r * buffers as u32 + c.buffer.as_u32()),
                    dir: c.dir,
                    rows: match &c.rows {
                        RowSelect::Offsets(o) => RowSelect::Offsets(
                            o.iter()
                                .map(|s| ScalarLoc {
                                    tile: self.at(r, s.tile),
                                    ..*s
                                })
                                .collect(),
                        ),
                        rows => rows.clone(),
                    },
                    runs: self.shift_runs(r, &c.runs),
                })
            })
            .collect()
    }

    /// The host tensors of all replicas, replica-major.
    fn host_tensors(&self, one: &[HostTensor]) -> Vec<HostTensor> {
        (0..self.replicas)
            .flat_map(|r| {
                one.iter().map(move |h| HostTensor {
                    name: replica_name(&h.name, r),
                    runs: self.shift_runs(r, &h.runs),
                    ..h.clone()
                })
            })
            .collect()
    }

    /// The streams of all replicas, replica-major.
    fn streams(&self, one: &[StreamDesc]) -> Vec<StreamDesc> {
        (0..self.replicas)
            .flat_map(|r| {
                one.iter().map(move |s| StreamDesc {
                    name: replica_name(&s.name, r),
                    ..s.clone()
                })
            })
            .collect()
    }
}

/// `s` rebuilt with every step for which `f` gives a replacement replaced (not descending
/// into it); the other steps are copied around their rebuilt bodies.
fn map_steps(s: &Step, f: &dyn Fn(&Step) -> Option<Step>) -> Step {
    if let Some(x) = f(s) {
        return x;
    }
    match s {
        Step::Seq(v) => Step::Seq(v.iter().map(|c| map_steps(c, f)).collect()),
        Step::Label { name, body } => Step::Label {
            name: name.clone(),
            body: Box::new(map_steps(body, f)),
        },
        Step::Repeat { count, body } => Step::Repeat {
            count: *count,
            body: Box::new(map_steps(body, f)),
        },
        Step::While {
            cond,
            predicate,
            body,
        } => Step::While {
            cond: Box::new(map_steps(cond, f)),
            predicate: *predicate,
            body: Box::new(map_steps(body, f)),
        },
        Step::If {
            predicate,
            then,
            else_,
        } => Step::If {
            predicate: *predicate,
            then: Box::new(map_steps(then, f)),
            else_: Box::new(map_steps(else_, f)),
        },
        Step::Switch {
            control,
            cases,
            default,
        } => Step::Switch {
            control: *control,
            cases: cases.iter().map(|(v, c)| (*v, map_steps(c, f))).collect(),
            default: Box::new(map_steps(default, f)),
        },
        Step::OverlapIo { io, compute } => Step::OverlapIo {
            io: Box::new(map_steps(io, f)),
            compute: Box::new(map_steps(compute, f)),
        },
        other => other.clone(),
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
pub(crate) fn bad_map(rep: &Replication) -> Option<(usize, String)> {
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
