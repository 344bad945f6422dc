//! The data behind a report: what the page shows, built from an executable (and optionally a
//! profile of it) by the same functions as `poplar memory` and `poplar profile`
//! ([`MemoryReport::from_executable`], [`CycleModel::new`], the [`Profile`] itself), laid out in
//! columns so that a 16-chip executable stays a few megabytes of JSON.
//!
//! The layout is described field by field in `docs/viewer.md` (schema `poplar-report`,
//! version [`REPORT_VERSION`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use poplar_exe::exe::{
    ExchangePhase, Executable, MemoryCategory, RemoteDir, RowSelect, Step, SyncKind,
};
use poplar_exe::profile::model::{EvenPorts, ExchangeBreakdown};
use poplar_exe::profile::{
    CategoryBytes, CycleModel, LabelProfile, MemoryReport, PhaseKind, Profile, Split, Stats,
    StreamingMemory,
};

use crate::liveness;
use crate::ReportError;

/// Version of the embedded data layout; bumped on any incompatible change.
/// 2: Streaming Memory (`memory.streaming`), the program nodes `remote` and `overlap_io`,
/// `profile.tile_transfer` and timeline spans of kind 4 (transfer); version 1 data still read.
pub const REPORT_VERSION: u32 = 2;

/// Tile ranges of the exchange matrix: at most this many over the whole target, each within
/// one chip.
pub const MATRIX_BINS: u32 = 64;

/// Everything the page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportData {
    pub schema: String,
    pub version: u32,
    pub title: String,
    pub target: TargetInfo,
    pub memory: MemoryData,
    pub codelets: Vec<String>,
    pub computes: Vec<ComputeInfo>,
    pub exchanges: Vec<ExchangeInfo>,
    /// The main programs (index = program id) and the functions they call.
    pub programs: Vec<Node>,
    pub functions: Vec<Node>,
    pub streams: Vec<String>,
    /// Present when the report was made with a profile.
    pub profile: Option<ProfileData>,
}

/// The target, as the page needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    pub chips: u32,
    pub tiles_per_chip: u32,
    pub tiles: u32,
    pub bytes_per_tile: u64,
    pub workers_per_tile: u32,
    pub clock_hz: f64,
    /// Consecutive tiles per range of the exchange matrix (ranges never span two chips).
    pub matrix_bin_tiles: u32,
    pub matrix_bins: u32,
}

/// Per-tile memory, in columns (index = tile id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryData {
    /// Category names, in the order of `by_category`.
    pub categories: Vec<String>,
    pub total: Vec<u64>,
    pub always_live: Vec<u64>,
    pub temporary: Vec<u64>,
    /// `by_category[c][tile]`.
    pub by_category: Vec<Vec<u64>>,
    /// Distributions over tiles, as in `poplar memory --json`.
    pub total_stats: Stats,
    pub always_live_stats: Stats,
    pub temporary_stats: Stats,
    /// Named items (variables, constants, ...): name and category index.
    pub item_names: Vec<String>,
    pub item_categories: Vec<u32>,
    /// Per tile, `[item, bytes, item, bytes, ...]`, largest first.
    pub tile_items: Vec<Vec<u64>>,
    /// Streaming Memory per chip and per remote buffer, as in `poplar memory --json` (over
    /// every replica's chips in a replicated executable, as the tiles).
    #[serde(default)]
    pub streaming: StreamingMemory,
}

/// One compute set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComputeInfo {
    pub name: String,
    pub tiles: u32,
    pub vertices: u64,
    /// `[codelet, vertices]`, most used first.
    pub codelets: Vec<[u64; 2]>,
    /// Vertices without a cycle estimate of their own (the default is used).
    pub default_estimates: u64,
    /// Modelled cycles of one execution (slowest tile).
    pub cycles: u64,
    /// Temporary bytes in use during the phase: `[tile, bytes, ...]` for tiles using any.
    pub temporaries: Vec<u64>,
}

/// One exchange.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExchangeInfo {
    pub name: String,
    pub transfers: u64,
    /// Transfers with more than one destination.
    pub broadcasts: u64,
    /// Bytes sent per execution, a broadcast once.
    pub bytes: u64,
    /// Bytes received per execution, summed over destinations.
    pub bytes_delivered: u64,
    pub inter_chip_bytes: u64,
    pub src_tiles: u32,
    pub dst_tiles: u32,
    /// Modelled cycles of one execution (slowest tile).
    pub cycles: u64,
    /// The slowest tile and what its cycles are made of (the cycle model's breakdown; zeros in
    /// reports of 0.4.0).
    #[serde(default)]
    pub slowest_tile: u32,
    #[serde(default)]
    pub slowest: ExchangeBreakdown,
    /// The phase with every tile's port at the mean and its waits for links and hops as they
    /// are (the cycle model's `EvenPorts`; zeros in reports of 0.4.0).
    #[serde(default)]
    pub even_ports: EvenPorts,
    /// Delivered bytes between tile ranges: `[src range, dst range, bytes, ...]`.
    pub matrix: Vec<u64>,
    /// Temporary bytes in use during the phase: `[tile, bytes, ...]` for tiles using any.
    pub temporaries: Vec<u64>,
}

/// A node of the program tree (the lowered program: supersteps and control flow).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum Node {
    Seq {
        c: Vec<Node>,
    },
    Label {
        name: String,
        c: Vec<Node>,
    },
    Sync {
        global: bool,
    },
    Compute {
        id: u32,
    },
    Exchange {
        id: u32,
    },
    Repeat {
        count: u32,
        c: Vec<Node>,
    },
    While {
        cond: Vec<Node>,
        c: Vec<Node>,
    },
    If {
        then: Vec<Node>,
        else_: Vec<Node>,
    },
    Switch {
        cases: Vec<(i64, Node)>,
        default: Vec<Node>,
    },
    Call {
        f: u32,
    },
    StreamIn {
        stream: u32,
        bytes: u64,
    },
    StreamOut {
        stream: u32,
        bytes: u64,
    },
    /// A copy between tile memory and a remote buffer.
    Remote {
        /// Index into `memory.streaming.buffers`.
        buffer: u32,
        /// `"read"` (buffer to tiles) or `"write"` (tiles to buffer).
        dir: String,
        /// Rows moved.
        rows: u64,
        /// The first of consecutive rows; `None` when each row is read from an offset tensor
        /// in tile memory as the copy runs.
        first: Option<u64>,
        bytes: u64,
        /// Modelled cycles of one execution.
        cycles: u64,
    },
    /// Transfers to the I/O tiles (`io`) overlapped with `compute` on the other tiles.
    OverlapIo {
        io: Vec<Node>,
        compute: Vec<Node>,
    },
}

/// What a profile adds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileData {
    pub runs: u64,
    pub elapsed: Split,
    pub wall_ns: u64,
    pub syncs_internal: u64,
    pub syncs_global: u64,
    /// Per tile cycles over all runs (index = tile id).
    pub tile_compute: Vec<u64>,
    pub tile_exchange: Vec<u64>,
    pub tile_sync: Vec<u64>,
    /// Per tile transfer cycles over all runs (zeros for a version 1 profile).
    #[serde(default)]
    pub tile_transfer: Vec<u64>,
    pub phases: Vec<PhaseData>,
    pub labels: Vec<LabelProfile>,
    pub timeline: TimelineData,
}

/// One phase that ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseData {
    /// `"compute"`, `"exchange"` or `"transfer"`.
    pub kind: String,
    pub index: u32,
    pub name: String,
    pub executions: u64,
    pub per_execution: Stats,
    pub cycles: u64,
    pub items: u64,
    pub bytes: u64,
    pub inter_chip_bytes: u64,
    pub wall_ns: u64,
}

/// The timeline, spans in columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineData {
    pub tracks: Vec<String>,
    pub names: Vec<String>,
    pub truncated: bool,
    pub track: Vec<u32>,
    /// 0 compute, 1 exchange, 2 sync, 3 label, 4 transfer.
    pub kind: Vec<u8>,
    pub name: Vec<u32>,
    pub start: Vec<u64>,
    pub dur: Vec<u64>,
}

/// Flat `[key, value, ...]` of the non-zero entries of a map.
fn flat(m: &BTreeMap<u64, u64>) -> Vec<u64> {
    m.iter()
        .filter(|(_, &v)| v > 0)
        .flat_map(|(&k, &v)| [k, v])
        .collect()
}

impl ReportData {
    /// The report of an executable, without a profile.
    pub fn from_executable(exe: &Executable, title: &str) -> ReportData {
        if exe.replication.is_some() {
            // Every replica's tiles, as the engine runs them (the file stores one replica).
            let (flat, _) = exe.expand_replicas();
            return ReportData::from_executable(&flat, title);
        }
        let t = &exe.target;
        let tiles = t.num_tiles();
        let per_chip_bins = (MATRIX_BINS / t.num_ipus.max(1)).max(1);
        let bin_tiles = t.tiles_per_ipu.div_ceil(per_chip_bins).max(1);
        let bins_per_chip = t.tiles_per_ipu.div_ceil(bin_tiles);
        let target = TargetInfo {
            chips: t.num_ipus,
            tiles_per_chip: t.tiles_per_ipu,
            tiles,
            bytes_per_tile: u64::from(t.bytes_per_tile),
            workers_per_tile: t.workers_per_tile,
            clock_hz: t.clock_hz,
            matrix_bin_tiles: bin_tiles,
            matrix_bins: bins_per_chip * t.num_ipus,
        };
        let bin = |tile: u32| t.ipu_of(tile) * bins_per_chip + t.tile_in_ipu(tile) / bin_tiles;

        let memory = memory_data(exe);
        let model = CycleModel::new(exe);
        let temps = liveness::phase_temporaries(exe);

        let computes = exe
            .computes
            .values()
            .zip(&model.computes)
            .zip(temps.computes)
            .map(|((c, cost), temporaries)| {
                let mut by_codelet: BTreeMap<u64, u64> = BTreeMap::new();
                for tc in &c.tiles {
                    for v in &tc.vertices {
                        *by_codelet.entry(u64::from(v.codelet.as_u32())).or_default() += 1;
                    }
                }
                let mut codelets: Vec<[u64; 2]> =
                    by_codelet.into_iter().map(|(k, n)| [k, n]).collect();
                codelets.sort_by(|a, b| b[1].cmp(&a[1]).then(a[0].cmp(&b[0])));
                ComputeInfo {
                    name: c.name.clone(),
                    tiles: c.tiles.iter().filter(|tc| !tc.vertices.is_empty()).count() as u32,
                    vertices: cost.vertices,
                    codelets,
                    default_estimates: cost.default_estimates,
                    cycles: cost.max,
                    temporaries: flat(&temporaries),
                }
            })
            .collect();
        let tiles = exe.target.num_tiles() as usize;
        let exchanges = exe
            .exchanges
            .values()
            .zip(&model.exchanges)
            .zip(temps.exchanges)
            .map(|((x, cost), temporaries)| exchange_info(x, cost, &temporaries, &bin, tiles))
            .collect();
        let cx = Ctx { exe, model: &model };
        ReportData {
            schema: "poplar-report".into(),
            version: REPORT_VERSION,
            title: title.to_string(),
            target,
            memory,
            codelets: exe.codelets.values().map(|c| c.name.clone()).collect(),
            computes,
            exchanges,
            programs: exe.programs.iter().map(|s| node(&cx, s)).collect(),
            functions: exe.functions.values().map(|s| node(&cx, s)).collect(),
            streams: exe.streams.iter().map(|s| s.name.clone()).collect(),
            profile: None,
        }
    }

    /// Adds a profile of the same executable: a profile of another target, or naming phases
    /// the executable does not have, is [`ReportError::ProfileMismatch`].
    pub fn with_profile(mut self, p: &Profile) -> Result<ReportData, ReportError> {
        let mismatch = |what: String| Err(ReportError::ProfileMismatch { what });
        let tiles = self.target.tiles as usize;
        if p.target.num_tiles() as usize != tiles || p.target.num_ipus != self.target.chips {
            return mismatch(format!(
                "the profile is of {} chips × {} tiles, the executable of {} × {}",
                p.target.num_ipus,
                p.target.tiles_per_ipu,
                self.target.chips,
                self.target.tiles_per_chip
            ));
        }
        // A version 1 profile has no transfers: none per tile.
        let tile_transfer = if p.tiles.transfer.is_empty() {
            vec![0; tiles]
        } else {
            p.tiles.transfer.clone()
        };
        for (name, v) in [
            ("compute", &p.tiles.compute),
            ("exchange", &p.tiles.exchange),
            ("sync", &p.tiles.sync),
            ("transfer", &tile_transfer),
        ] {
            if v.len() != tiles {
                return mismatch(format!(
                    "its per-tile {name} cycles have {} entries for {tiles} tiles",
                    v.len()
                ));
            }
        }
        let mut phases = Vec::with_capacity(p.phases.len());
        for ph in &p.phases {
            let (kind, name) = match ph.kind {
                PhaseKind::Compute => (
                    "compute",
                    self.computes.get(ph.index as usize).map(|c| &c.name),
                ),
                PhaseKind::Exchange => (
                    "exchange",
                    self.exchanges.get(ph.index as usize).map(|c| &c.name),
                ),
                // Named by their buffer or stream, not by a phase of the executable.
                PhaseKind::Transfer => ("transfer", Some(&ph.name)),
            };
            if name != Some(&ph.name) {
                return mismatch(format!(
                    "its {kind} phase {} is '{}', the executable's is {}",
                    ph.index,
                    ph.name,
                    name.map_or("missing".to_string(), |n| format!("'{n}'"))
                ));
            }
            phases.push(PhaseData {
                kind: kind.into(),
                index: ph.index,
                name: ph.name.clone(),
                executions: ph.executions,
                per_execution: ph.per_execution,
                cycles: ph.cycles,
                items: ph.items,
                bytes: ph.bytes,
                inter_chip_bytes: ph.inter_chip_bytes,
                wall_ns: ph.wall_ns,
            });
        }
        let tl = &p.timeline;
        let timeline = TimelineData {
            tracks: tl.tracks.iter().map(|t| t.name.clone()).collect(),
            names: tl.names.clone(),
            truncated: tl.truncated,
            track: tl.spans.iter().map(|s| s.track).collect(),
            kind: tl
                .spans
                .iter()
                .map(|s| match s.kind {
                    poplar_exe::profile::SpanKind::Compute => 0,
                    poplar_exe::profile::SpanKind::Exchange => 1,
                    poplar_exe::profile::SpanKind::Sync => 2,
                    poplar_exe::profile::SpanKind::Label => 3,
                    poplar_exe::profile::SpanKind::Transfer => 4,
                })
                .collect(),
            name: tl.spans.iter().map(|s| s.name).collect(),
            start: tl.spans.iter().map(|s| s.start).collect(),
            dur: tl.spans.iter().map(|s| s.dur).collect(),
        };
        self.profile = Some(ProfileData {
            runs: p.runs,
            elapsed: p.elapsed,
            wall_ns: p.wall_ns,
            syncs_internal: p.syncs.internal,
            syncs_global: p.syncs.global,
            tile_compute: p.tiles.compute.clone(),
            tile_exchange: p.tiles.exchange.clone(),
            tile_sync: p.tiles.sync.clone(),
            tile_transfer,
            phases,
            labels: p.labels.clone(),
            timeline,
        });
        Ok(self)
    }
}

impl MemoryData {
    /// Memory per tile of an executable, from its [`MemoryReport`], as `poplar memory` shows
    /// it: of one replica in a replicated executable (where [`ReportData::from_executable`]
    /// holds every replica's tiles).
    pub fn from_executable(exe: &Executable) -> MemoryData {
        memory_data(exe)
    }
}

fn memory_data(exe: &Executable) -> MemoryData {
    let m = MemoryReport::from_executable(exe);
    let categories: Vec<String> = CategoryBytes::default()
        .entries()
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    let mut by_category = vec![Vec::with_capacity(m.tiles.len()); categories.len()];
    for t in &m.tiles {
        for (c, (_, b)) in t.by_category.entries().iter().enumerate() {
            by_category[c].push(*b);
        }
    }
    // The item table, in the memory report's order (largest total first).
    let mut index: BTreeMap<(&str, u32), u64> = BTreeMap::new();
    let mut item_names = Vec::with_capacity(m.items.len());
    let mut item_categories = Vec::with_capacity(m.items.len());
    for (k, it) in m.items.iter().enumerate() {
        let c = category_index(it.category);
        index.insert((it.name.as_str(), c), k as u64);
        item_names.push(it.name.clone());
        item_categories.push(c);
    }
    let tile_items = exe
        .tiles
        .iter()
        .map(|img| {
            img.breakdown
                .iter()
                .flat_map(|it| {
                    let k = index[&(it.name.as_str(), category_index(it.category))];
                    [k, u64::from(it.bytes)]
                })
                .collect()
        })
        .collect();
    MemoryData {
        categories,
        total: m.tiles.iter().map(|t| t.total).collect(),
        always_live: m.tiles.iter().map(|t| t.always_live).collect(),
        temporary: m.tiles.iter().map(|t| t.temporary).collect(),
        by_category,
        total_stats: m.total,
        always_live_stats: m.always_live,
        temporary_stats: m.temporary,
        item_names,
        item_categories,
        tile_items,
        streaming: m.streaming,
    }
}

/// The position of a category in [`CategoryBytes::entries`] (the order of `by_category`).
///
/// [`CategoryBytes::entries`]: poplar_exe::profile::CategoryBytes::entries
fn category_index(c: MemoryCategory) -> u32 {
    let mut one = CategoryBytes::default();
    let field = match c {
        MemoryCategory::Variable => &mut one.variables,
        MemoryCategory::Constant => &mut one.constants,
        MemoryCategory::VertexState => &mut one.vertex_state,
        MemoryCategory::VertexDescriptors => &mut one.vertex_descriptors,
        MemoryCategory::Code => &mut one.code,
        MemoryCategory::Temporary => &mut one.temporaries,
        MemoryCategory::ReceiveSlack => &mut one.receive_slack,
    };
    *field = 1;
    one.entries().iter().position(|(_, b)| *b == 1).unwrap_or(0) as u32
}

fn exchange_info(
    x: &ExchangePhase,
    cost: &poplar_exe::profile::model::ExchangeCost,
    temporaries: &BTreeMap<u64, u64>,
    bin: &dyn Fn(u32) -> u32,
    tiles: usize,
) -> ExchangeInfo {
    let slowest = cost.slowest();
    let mut matrix: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    let mut src = std::collections::BTreeSet::new();
    let mut dst = std::collections::BTreeSet::new();
    let mut broadcasts = 0;
    for tr in &x.transfers {
        src.insert(tr.src_tile);
        if tr.dsts.len() > 1 {
            broadcasts += 1;
        }
        for &(d, _) in &tr.dsts {
            dst.insert(d);
            *matrix
                .entry((bin(tr.src_tile.as_u32()), bin(d.as_u32())))
                .or_default() += u64::from(tr.bytes);
        }
    }
    ExchangeInfo {
        name: x.name.clone(),
        transfers: cost.transfers,
        broadcasts,
        bytes: cost.bytes,
        bytes_delivered: cost.bytes_delivered,
        inter_chip_bytes: cost.inter_chip_bytes,
        src_tiles: src.len() as u32,
        dst_tiles: dst.len() as u32,
        cycles: cost.max,
        slowest_tile: slowest.map_or(0, |t| t.tile.as_u32()),
        slowest: slowest.map_or_else(Default::default, |t| t.breakdown),
        even_ports: cost.even_ports(tiles),
        matrix: matrix
            .into_iter()
            .flat_map(|((s, d), b)| [u64::from(s), u64::from(d), b])
            .collect(),
        temporaries: flat(temporaries),
    }
}

/// What the program tree needs besides the steps: the remote copies and their modelled cost.
struct Ctx<'a> {
    exe: &'a Executable,
    model: &'a CycleModel,
}

fn body(cx: &Ctx, s: &Step) -> Vec<Node> {
    match s {
        Step::Seq(v) => v.iter().map(|x| node(cx, x)).collect(),
        other => vec![node(cx, other)],
    }
}

fn run_bytes(runs: &[poplar_exe::exe::MemRun]) -> u64 {
    runs.iter().map(|r| u64::from(r.bytes)).sum()
}

fn node(cx: &Ctx, s: &Step) -> Node {
    match s {
        Step::Seq(v) => Node::Seq {
            c: v.iter().map(|x| node(cx, x)).collect(),
        },
        Step::Label { name, body: b } => Node::Label {
            name: name.clone(),
            c: body(cx, b),
        },
        Step::Sync(k) => Node::Sync {
            global: *k == SyncKind::Global,
        },
        Step::Exchange(id) => Node::Exchange { id: id.as_u32() },
        Step::Compute(id) => Node::Compute { id: id.as_u32() },
        Step::Repeat { count, body: b } => Node::Repeat {
            count: *count,
            c: body(cx, b),
        },
        Step::While { cond, body: b, .. } => Node::While {
            cond: body(cx, cond),
            c: body(cx, b),
        },
        Step::If { then, else_, .. } => Node::If {
            then: body(cx, then),
            else_: body(cx, else_),
        },
        Step::Switch { cases, default, .. } => Node::Switch {
            cases: cases.iter().map(|(k, s)| (*k, node(cx, s))).collect(),
            default: body(cx, default),
        },
        Step::Call(f) => Node::Call { f: f.as_u32() },
        Step::StreamIn { stream, runs } => Node::StreamIn {
            stream: *stream,
            bytes: run_bytes(runs),
        },
        Step::StreamOut { stream, runs } => Node::StreamOut {
            stream: *stream,
            bytes: run_bytes(runs),
        },
        Step::Remote(id) => {
            let c = &cx.exe.remote_copies[*id];
            Node::Remote {
                buffer: c.buffer.as_u32(),
                dir: match c.dir {
                    RemoteDir::BufferToTiles => "read",
                    RemoteDir::TilesToBuffer => "write",
                }
                .into(),
                rows: c.rows.count(),
                first: match &c.rows {
                    RowSelect::Consecutive { first, .. } => Some(*first),
                    RowSelect::Offsets(_) => None,
                },
                bytes: c.bytes(),
                cycles: cx
                    .model
                    .transfers
                    .get(id.as_u32() as usize)
                    .map_or(0, |t| t.cycles),
            }
        }
        Step::OverlapIo { io, compute } => Node::OverlapIo {
            io: body(cx, io),
            compute: body(cx, compute),
        },
    }
}
