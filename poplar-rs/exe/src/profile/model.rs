//! The cycle model: a pure function of an [`Executable`] and its [`Target`] giving, for every
//! compute and exchange phase, the modelled cycles of each tile that takes part.
//!
//! Formulas and constants are documented in `docs/cycle-model.md`; in brief:
//! - compute: on-tile pre-copies, then the vertices on `workers_per_tile` barrel-threaded
//!   worker contexts (a single-worker vertex goes to the context that is free first, a
//!   multi-worker vertex runs its per-worker estimate on every context plus the supervisor's
//!   cycles; the schedule's tile time is `workers` times its busiest context), then
//!   post-copies; a copy costs
//!   `LOCAL_COPY_SETUP_CYCLES + ceil(bytes / LOCAL_COPY_BYTES_PER_CYCLE)`;
//! - exchange: per tile `max(send, receive)`; a message costs `exchange_setup_cycles +
//!   ceil(bytes / exchange_bytes_per_cycle)` on each side (a broadcast is sent once); the bytes
//!   from one chip to another share that pair's links (`link_bytes_per_cycle`, or
//!   `gw_link_bytes_per_cycle` between link domains), so a tile with inter-chip messages takes
//!   at least the busiest of its chip pairs' link time, plus once the largest hop latency
//!   (`hops × link_hop_latency_cycles + gw_hops × gw_hop_latency_cycles`);
//! - sync: `internal_sync_cycles` (per chip) or `global_sync_cycles`, after waiting for the
//!   slowest tile of the sync's scope (see the profile's replay).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::exe::{ComputePhase, ExchangePhase, Executable, LocalCopy, TileCompute, Transfer};
use crate::target::{Target, TileId};

/// Bytes per cycle of an on-tile copy (one 64-bit load and store per cycle).
pub const LOCAL_COPY_BYTES_PER_CYCLE: u64 = 8;
/// Fixed cycles of one on-tile copy (address set-up and loop entry).
pub const LOCAL_COPY_SETUP_CYCLES: u64 = 4;

/// Modelled cycles of one tile in one compute phase, and what they consist of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TileComputeCost {
    pub tile: TileId,
    /// Total: `pre_copies + vertices + post_copies`.
    pub cycles: u64,
    /// Cycles of the on-tile copies before and after the vertices.
    pub copy_cycles: u64,
    /// Tile cycles of the vertex schedule: `workers × busiest context + supervisor_cycles`.
    pub vertex_cycles: u64,
    /// Sum of the vertices' worker cycles over all contexts (for worker utilisation:
    /// `worker_cycles / (vertex_cycles - supervisor_cycles)`).
    pub worker_cycles: u64,
    /// Supervisor cycles of the multi-worker vertices.
    pub supervisor_cycles: u64,
}

/// Static cost of one compute phase.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ComputeCost {
    /// The compute set's name.
    pub name: String,
    /// Tiles with work, sorted by tile.
    pub tiles: Vec<TileComputeCost>,
    /// Busiest tile.
    pub max: u64,
    pub vertices: u64,
    /// Vertices whose estimate is the default model's (the codelet gave none).
    pub default_estimates: u64,
}

/// Modelled cycles of one tile in one exchange phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TileExchangeCost {
    pub tile: TileId,
    /// `max(send, receive)`.
    pub cycles: u64,
    /// Each side's cycles: its port's, or its chip pairs' links' when it has inter-chip
    /// messages and they take longer, plus the latency of its farthest hop.
    pub send_cycles: u64,
    pub recv_cycles: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Messages sent (a broadcast once) and received.
    pub messages_sent: u64,
    pub messages_received: u64,
    /// What `cycles` is made of, on the side that sets it.
    pub breakdown: ExchangeBreakdown,
}

/// What a tile's exchange cycles are made of, on the side (send or receive) that sets them:
/// `value_cycles + setup_cycles + link_wait_cycles + latency_cycles` is the tile's `cycles`.
/// Serialised as is in `cardiac study`'s JSON and the HTML report's data (missing fields read
/// as zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ExchangeBreakdown {
    /// The side: receive (true) or send (false); receive when both take as long.
    pub receive: bool,
    /// Moving the values through the tile's port: `ceil(bytes / exchange_bytes_per_cycle)` per
    /// message.
    pub value_cycles: u64,
    /// `exchange_setup_cycles` per message.
    pub setup_cycles: u64,
    /// The messages on that side (a broadcast is sent once).
    pub messages: u64,
    /// Waiting, beyond the port's cycles, for its chip pairs' links to carry the phase's bytes.
    pub link_wait_cycles: u64,
    /// The latency of the farthest hop among its inter-chip messages.
    pub latency_cycles: u64,
}

impl ExchangeBreakdown {
    /// The cycles it makes up.
    pub fn cycles(&self) -> u64 {
        self.value_cycles
            .saturating_add(self.setup_cycles)
            .saturating_add(self.link_wait_cycles)
            .saturating_add(self.latency_cycles)
    }
}

/// A tile's breakdowns over several phases: every part summed, the side the later phase's.
impl std::ops::AddAssign for ExchangeBreakdown {
    fn add_assign(&mut self, later: ExchangeBreakdown) {
        self.receive = later.receive;
        self.value_cycles = self.value_cycles.saturating_add(later.value_cycles);
        self.setup_cycles = self.setup_cycles.saturating_add(later.setup_cycles);
        self.messages = self.messages.saturating_add(later.messages);
        self.link_wait_cycles = self.link_wait_cycles.saturating_add(later.link_wait_cycles);
        self.latency_cycles = self.latency_cycles.saturating_add(later.latency_cycles);
    }
}

/// An exchange phase as it would be if every tile's port took the tiles' mean port cycles
/// (values and set-ups) while each tile still waited as long for links and hops: it would last
/// `mean_port_cycles + max_link_and_hop_cycles` and be `effectiveness` effective (the tiles'
/// mean unchanged). An estimate, not a bound, of what evening the tiles' traffic could reach
/// without changing which chips exchange: 1 when no tile waits for links or hops.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct EvenPorts {
    /// The tiles' mean of value and set-up cycles.
    pub mean_port_cycles: f64,
    /// The most any tile waits for links plus hop latency.
    pub max_link_and_hop_cycles: u64,
    /// The tiles' mean exchange cycles over `mean_port_cycles + max_link_and_hop_cycles`.
    pub effectiveness: f64,
}

impl EvenPorts {
    /// From the breakdowns of the tiles that take part, over `tiles` tiles (the others count
    /// as zero, as in the phase's effectiveness).
    pub fn of<'a>(
        breakdowns: impl IntoIterator<Item = &'a ExchangeBreakdown>,
        tiles: usize,
    ) -> EvenPorts {
        let (mut total, mut port, mut max_wait) = (0u64, 0u64, 0u64);
        for b in breakdowns {
            total = total.saturating_add(b.cycles());
            port = port.saturating_add(b.value_cycles.saturating_add(b.setup_cycles));
            max_wait = max_wait.max(b.link_wait_cycles.saturating_add(b.latency_cycles));
        }
        let n = tiles.max(1) as f64;
        let mean_port_cycles = port as f64 / n;
        let phase = mean_port_cycles + max_wait as f64;
        EvenPorts {
            mean_port_cycles,
            max_link_and_hop_cycles: max_wait,
            effectiveness: if phase > 0.0 {
                total as f64 / n / phase
            } else {
                1.0
            },
        }
    }
}

/// The traffic of one exchange phase over the links from one chip to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkLoad {
    pub src_chip: u32,
    pub dst_chip: u32,
    /// Bytes crossing (a broadcast to several tiles of one chip crosses once).
    pub bytes: u64,
    /// `ceil(bytes / rate)`: the link rate inside a domain, the GW rate between domains.
    pub cycles: u64,
    /// Between link domains (over GW-Links).
    pub gw: bool,
}

/// Static cost of one exchange phase.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExchangeCost {
    /// The exchange's name.
    pub name: String,
    /// Tiles that send or receive, sorted by tile.
    pub tiles: Vec<TileExchangeCost>,
    pub max: u64,
    /// Bytes leaving source tiles (a broadcast counts once).
    pub bytes: u64,
    /// Bytes delivered (a broadcast counts once per destination).
    pub bytes_delivered: u64,
    /// Bytes delivered to a tile on another chip than the source.
    pub inter_chip_bytes: u64,
    pub transfers: u64,
    /// Per ordered pair of chips that exchange anything, sorted.
    pub links: Vec<LinkLoad>,
}

/// The static costs of every phase of an executable.
#[derive(Debug, Clone, PartialEq)]
pub struct CycleModel {
    pub target: Target,
    pub computes: Vec<ComputeCost>,
    pub exchanges: Vec<ExchangeCost>,
    /// Transfers to and from Streaming Memory and the host: first one per remote copy
    /// (indexed like [`Executable::remote_copies`]), then the stream copies a recorder met.
    pub transfers: Vec<super::TransferCost>,
}

/// Cycles of a list of on-tile copies.
pub(crate) fn copy_cycles(copies: &[LocalCopy]) -> u64 {
    copies
        .iter()
        .map(|c| local_copy_cycles(u64::from(c.bytes)))
        .sum()
}

/// Tile cycles of one on-tile copy of `bytes`:
/// `LOCAL_COPY_SETUP_CYCLES + ceil(bytes / LOCAL_COPY_BYTES_PER_CYCLE)`.
pub fn local_copy_cycles(bytes: u64) -> u64 {
    LOCAL_COPY_SETUP_CYCLES + bytes.div_ceil(LOCAL_COPY_BYTES_PER_CYCLE)
}

/// Tile cycles the supervisor spends starting one multi-worker vertex and waiting for its
/// workers: poplibs' `ScaledAdd` supervisor (21 per type + 11 common + 7 + 12), the middle of
/// its published supervisor overheads (25 for `BroadcastScalar`, up to about 70).
pub const SUPERVISOR_CYCLES: u64 = 51;

/// The vertex schedule of one tile on the barrel-threaded worker contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VertexSchedule {
    /// Tile cycles: `workers × busiest context + supervisor`.
    pub tile_cycles: u64,
    /// The busiest context's worker cycles.
    pub busiest_worker: u64,
    /// Worker cycles summed over all contexts (for worker utilisation).
    pub worker_cycles: u64,
    /// Supervisor cycles of the multi-worker vertices ([`SUPERVISOR_CYCLES`] each).
    pub supervisor_cycles: u64,
}

/// Schedules one tile's vertices, given as `(worker cycles, multi-worker)`, on `workers`
/// barrel-threaded contexts.
///
/// Estimates are worker-context cycles. The contexts issue in a round-robin barrel: a context
/// issues once every `workers` tile cycles whether the others are busy or not, so a context's
/// `c` worker cycles take `workers × c` tile cycles and the schedule takes `workers` times its
/// busiest context. Vertices are taken in order: a single-worker vertex runs on the context
/// that becomes free first (lowest index on ties); a multi-worker vertex starts when every
/// context is free, runs its per-context estimate on all of them, and adds
/// [`SUPERVISOR_CYCLES`].
pub fn schedule_vertices(
    vertices: impl IntoIterator<Item = (u64, bool)>,
    workers: u32,
) -> VertexSchedule {
    // Bounded by the target's validation (1..=MAX_WORKERS); clamped again here so that the
    // model never allocates from an unchecked count.
    let w = workers.clamp(1, crate::target::MAX_WORKERS) as usize;
    let mut free = vec![0u64; w];
    let mut s = VertexSchedule::default();
    for (cycles, multi) in vertices {
        if multi {
            let start = free.iter().copied().max().unwrap_or(0);
            free.fill(start.saturating_add(cycles));
            s.worker_cycles = s
                .worker_cycles
                .saturating_add(cycles.saturating_mul(w as u64));
            s.supervisor_cycles = s.supervisor_cycles.saturating_add(SUPERVISOR_CYCLES);
        } else {
            let (k, _) = free
                .iter()
                .enumerate()
                .min_by_key(|&(k, &f)| (f, k))
                .expect("at least one worker");
            free[k] = free[k].saturating_add(cycles);
            s.worker_cycles = s.worker_cycles.saturating_add(cycles);
        }
    }
    s.busiest_worker = free.into_iter().max().unwrap_or(0);
    s.tile_cycles = s
        .busiest_worker
        .saturating_mul(w as u64)
        .saturating_add(s.supervisor_cycles);
    s
}

fn tile_compute(exe: &Executable, tc: &TileCompute) -> TileComputeCost {
    let copies = copy_cycles(&tc.pre_copies) + copy_cycles(&tc.post_copies);
    let schedule = schedule_vertices(
        tc.vertices.iter().map(|v| {
            let multi = exe.codelets.get(v.codelet).is_some_and(|c| c.multi_worker);
            (v.cycles, multi)
        }),
        exe.target.workers_per_tile,
    );
    TileComputeCost {
        tile: tc.tile,
        cycles: copies.saturating_add(schedule.tile_cycles),
        copy_cycles: copies,
        vertex_cycles: schedule.tile_cycles,
        worker_cycles: schedule.worker_cycles,
        supervisor_cycles: schedule.supervisor_cycles,
    }
}

/// The static cost of one compute phase.
pub(crate) fn compute_cost(exe: &Executable, phase: &ComputePhase) -> ComputeCost {
    let tiles: Vec<TileComputeCost> = phase.tiles.iter().map(|t| tile_compute(exe, t)).collect();
    let vertices = phase.tiles.iter().map(|t| t.vertices.len() as u64).sum();
    let default_estimates = phase
        .tiles
        .iter()
        .flat_map(|t| &t.vertices)
        .filter(|v| !v.cycles_estimated)
        .count() as u64;
    ComputeCost {
        name: phase.name.clone(),
        max: tiles.iter().map(|t| t.cycles).max().unwrap_or(0),
        tiles,
        vertices,
        default_estimates,
    }
}

fn div_ceil_f(bytes: u64, per_cycle: f64) -> u64 {
    if per_cycle <= 0.0 {
        return u64::MAX;
    }
    let c = (bytes as f64 / per_cycle).ceil();
    if c >= u64::MAX as f64 {
        u64::MAX
    } else {
        c as u64
    }
}

/// The static cost of one exchange phase.
pub(crate) fn exchange_cost(target: &Target, phase: &ExchangePhase) -> ExchangeCost {
    let mut cost = ExchangeCost {
        name: phase.name.clone(),
        transfers: phase.transfers.len() as u64,
        ..Default::default()
    };
    let mut traffic = Traffic::default();
    let mut chips: Vec<u32> = Vec::new();
    for tr in &phase.transfers {
        traffic.add(target, tr, &mut cost, &mut chips);
    }
    cost.links = link_loads(target, &traffic.pairs);
    let floor = link_floors(&cost.links, traffic.tile_pairs);
    cost.tiles = traffic
        .tiles
        .into_iter()
        .filter(|(_, a)| a.used)
        .map(|(tile, a)| a.cost(target, tile, floor.get(&tile).copied().unwrap_or(0)))
        .collect();
    cost.max = cost.tiles.iter().map(|t| t.cycles).max().unwrap_or(0);
    cost
}

impl ExchangeCost {
    /// The slowest tile (the lowest of equals), if any tile takes part.
    pub fn slowest(&self) -> Option<&TileExchangeCost> {
        // Tiles are sorted by tile: the last maximum of the reversed list is the lowest.
        self.tiles.iter().rev().max_by_key(|t| t.cycles)
    }

    /// The phase with even ports over the target's `tiles` tiles ([`EvenPorts`]).
    pub fn even_ports(&self, tiles: usize) -> EvenPorts {
        EvenPorts::of(self.tiles.iter().map(|t| &t.breakdown), tiles)
    }
}

/// Cycles of a message of `b` bytes at a tile's own exchange port, on-chip and off-chip
/// messages alike.
#[inline]
fn port_cycles(target: &Target, b: u64) -> u64 {
    u64::from(target.exchange_setup_cycles)
        + b.div_ceil(u64::from(target.exchange_bytes_per_cycle.max(1)))
}

/// The latency of the hops from chip `a` to chip `b`.
#[inline]
fn hop_latency(target: &Target, a: u32, b: u32) -> u64 {
    u64::from(target.link_hop_latency_cycles) * u64::from(target.hops(a, b))
        + u64::from(target.gw_hop_latency_cycles) * u64::from(target.gw_hops(a, b))
}

/// What one tile sends and receives in an exchange phase.
#[derive(Default, Clone, Copy)]
struct TileTraffic {
    /// Port cycles of sending and of receiving.
    send: u64,
    recv: u64,
    /// The largest hop latency of what it sends to and receives from other chips.
    send_lat: u64,
    recv_lat: u64,
    /// Bytes sent and received.
    sent: u64,
    received: u64,
    /// Messages sent (a broadcast once) and received.
    sends: u64,
    recvs: u64,
    /// Whether it sends to or receives from another chip.
    sends_off_chip: bool,
    recvs_off_chip: bool,
    used: bool,
}

impl TileTraffic {
    /// One side of the tile's exchange: its port's cycles, then the wait for the links
    /// (`floor`) if that side has inter-chip messages, then their farthest hop's latency.
    fn side(&self, target: &Target, receive: bool, floor: u64) -> ExchangeBreakdown {
        let (port, messages, off_chip, latency) = if receive {
            (self.recv, self.recvs, self.recvs_off_chip, self.recv_lat)
        } else {
            (self.send, self.sends, self.sends_off_chip, self.send_lat)
        };
        let setup_cycles = messages.saturating_mul(u64::from(target.exchange_setup_cycles));
        ExchangeBreakdown {
            receive,
            value_cycles: port.saturating_sub(setup_cycles),
            setup_cycles,
            messages,
            link_wait_cycles: if off_chip {
                floor.saturating_sub(port)
            } else {
                0
            },
            latency_cycles: latency,
        }
    }

    /// The tile's cost, given `floor`: the cycles its chip pairs' links take to carry the
    /// phase's bytes, which inter-chip sends or receives wait for.
    fn cost(self, target: &Target, tile: TileId, floor: u64) -> TileExchangeCost {
        let send = self.side(target, false, floor);
        let recv = self.side(target, true, floor);
        let (send_cycles, recv_cycles) = (send.cycles(), recv.cycles());
        TileExchangeCost {
            tile,
            cycles: send_cycles.max(recv_cycles),
            send_cycles,
            recv_cycles,
            bytes_sent: self.sent,
            bytes_received: self.received,
            messages_sent: self.sends,
            messages_received: self.recvs,
            breakdown: if recv_cycles >= send_cycles {
                recv
            } else {
                send
            },
        }
    }
}

/// The traffic of an exchange phase, gathered transfer by transfer.
#[derive(Default)]
struct Traffic {
    tiles: BTreeMap<TileId, TileTraffic>,
    /// Bytes per ordered chip pair.
    pairs: BTreeMap<(u32, u32), u64>,
    /// The chip pairs each tile sends over or receives from.
    tile_pairs: Vec<(TileId, (u32, u32))>,
}

impl Traffic {
    /// Adds transfer `tr` to the traffic and to `cost`'s byte counts. `chips` is scratch space.
    fn add(
        &mut self,
        target: &Target,
        tr: &Transfer,
        cost: &mut ExchangeCost,
        chips: &mut Vec<u32>,
    ) {
        let bytes = u64::from(tr.bytes);
        let src_chip = target.ipu_of(tr.src_tile);
        cost.bytes += bytes;
        chips.clear();
        for &(d, _) in &tr.dsts {
            let dc = target.ipu_of(d);
            cost.bytes_delivered += bytes;
            let a = self.tiles.entry(d).or_default();
            a.used = true;
            a.received += bytes;
            a.recvs += 1;
            a.recv = a.recv.saturating_add(port_cycles(target, bytes));
            if dc != src_chip {
                cost.inter_chip_bytes += bytes;
                a.recvs_off_chip = true;
                a.recv_lat = a.recv_lat.max(hop_latency(target, src_chip, dc));
                self.tile_pairs.push((d, (src_chip, dc)));
                if !chips.contains(&dc) {
                    chips.push(dc);
                }
            }
        }
        let s = self.tiles.entry(tr.src_tile).or_default();
        s.used = true;
        s.sent += bytes;
        s.sends += 1;
        s.sends_off_chip |= !chips.is_empty();
        // A broadcast leaves the tile once; it crosses to each other chip once.
        s.send = s.send.saturating_add(port_cycles(target, bytes));
        for &c in chips.iter() {
            s.send_lat = s.send_lat.max(hop_latency(target, src_chip, c));
            *self.pairs.entry((src_chip, c)).or_default() += bytes;
            self.tile_pairs.push((tr.src_tile, (src_chip, c)));
        }
    }
}

/// The load of each chip pair's links, sorted by pair.
fn link_loads(target: &Target, pairs: &BTreeMap<(u32, u32), u64>) -> Vec<LinkLoad> {
    pairs
        .iter()
        .map(|(&(a, b), &bytes)| {
            let gw = target.domain_of(a) != target.domain_of(b);
            let rate = if gw {
                target.gw_link_bytes_per_cycle
            } else {
                target.link_bytes_per_cycle
            };
            LinkLoad {
                src_chip: a,
                dst_chip: b,
                bytes,
                cycles: div_ceil_f(bytes, rate),
                gw,
            }
        })
        .collect()
}

/// Per tile that sends over (or receives from) a chip pair, the cycles before which it cannot
/// finish: the slowest of its pairs' links carrying the phase's bytes.
fn link_floors(links: &[LinkLoad], tile_pairs: Vec<(TileId, (u32, u32))>) -> BTreeMap<TileId, u64> {
    let link_cycles: BTreeMap<(u32, u32), u64> = links
        .iter()
        .map(|l| ((l.src_chip, l.dst_chip), l.cycles))
        .collect();
    let mut floor: BTreeMap<TileId, u64> = BTreeMap::new();
    for (t, pair) in tile_pairs {
        let c = link_cycles[&pair];
        let f = floor.entry(t).or_default();
        *f = (*f).max(c);
    }
    floor
}

impl CycleModel {
    /// A model with no phases.
    pub fn empty() -> CycleModel {
        CycleModel {
            target: Target::custom(1, 0),
            computes: Vec::new(),
            exchanges: Vec::new(),
            transfers: Vec::new(),
        }
    }

    /// Computes the static cost of every phase of `exe` (linear in the size of the executable).
    /// A replicated executable is modelled as the flat executable of all its replicas
    /// ([`Executable::expand_replicas`]), whose phases have the same indices.
    pub fn new(exe: &Executable) -> CycleModel {
        if exe.replication.is_some() {
            let (flat, _) = exe.expand_replicas();
            return CycleModel::new(&flat);
        }
        CycleModel {
            target: exe.target.clone(),
            computes: exe
                .computes
                .values()
                .map(|c| compute_cost(exe, c))
                .collect(),
            exchanges: exe
                .exchanges
                .values()
                .map(|e| exchange_cost(&exe.target, e))
                .collect(),
            transfers: exe
                .remote_copies
                .keys()
                .map(|id| super::remote_copy_cost(exe, id))
                .collect(),
        }
    }
}

impl CycleModel {
    /// The static model as text: cycles of one execution of each phase, over tiles.
    pub fn text_summary(&self) -> String {
        use std::fmt::Write as _;
        let n = self.target.num_tiles() as usize;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Static cycle model ({} chip(s) x {} tiles): one execution of each phase",
            self.target.num_ipus, self.target.tiles_per_ipu
        );
        let _ = writeln!(
            s,
            "  {:<9} {:>5} {:<28} {:>7} {:>9} {:>9} {:>9} {:>7} {:>10}",
            "kind", "index", "name", "tiles", "min", "median", "max", "effect.", "bytes"
        );
        let mut flagged = false;
        let mut row = |kind: &str,
                       i: usize,
                       name: &str,
                       cycles: Vec<(TileId, u64)>,
                       bytes: String,
                       flag: bool| {
            let mut per = vec![0u64; n];
            for &(t, c) in &cycles {
                if let Some(x) = per.get_mut(t.index()) {
                    *x = c;
                }
            }
            let st = super::Stats::of(&per);
            flagged |= flag;
            let name = format!("{name}{}", if flag { "*" } else { "" });
            let _ = writeln!(
                s,
                "  {kind:<9} {i:>5} {name:<28} {:>7} {:>9} {:>9} {:>9} {:>6.1}% {bytes:>10}",
                cycles.len(),
                st.min,
                st.median,
                st.max,
                100.0 * st.effectiveness
            );
        };
        for (i, c) in self.computes.iter().enumerate() {
            row(
                "compute",
                i,
                &c.name,
                c.tiles.iter().map(|t| (t.tile, t.cycles)).collect(),
                "-".into(),
                c.default_estimates > 0,
            );
        }
        for (i, e) in self.exchanges.iter().enumerate() {
            row(
                "exchange",
                i,
                &e.name,
                e.tiles.iter().map(|t| (t.tile, t.cycles)).collect(),
                e.bytes.to_string(),
                false,
            );
        }
        if flagged {
            let _ = writeln!(
                s,
                "  * some vertices use the default cycle estimate (their codelet gives none)"
            );
        }
        self.slowest_exchange_tiles(&mut s, n);
        s
    }

    /// Per exchange phase, what its slowest tile's cycles are made of, and, when some tile
    /// waits for links or hops, the phase with even ports ([`EvenPorts`]) over `tiles` tiles.
    fn slowest_exchange_tiles(&self, s: &mut String, tiles: usize) {
        use std::fmt::Write as _;
        let mut header = false;
        for (i, e) in self.exchanges.iter().enumerate() {
            let Some(t) = e.slowest() else {
                continue;
            };
            if !header {
                let _ = writeln!(
                    s,
                    "  slowest tile of each exchange: values + set-ups (messages) + link wait + hop latency"
                );
                if self.target.num_ipus > 1 {
                    let _ = writeln!(
                        s,
                        "  (between chips: even ports = mean port + most link wait and latency, effectiveness)"
                    );
                }
                header = true;
            }
            let b = &t.breakdown;
            let side = if b.receive { "receives" } else { "sends" };
            let _ = write!(
                s,
                "  exchange {i:>5} tile {:>6} {side}: {} = {} + {} ({}) + {} + {}",
                t.tile,
                t.cycles,
                b.value_cycles,
                b.setup_cycles,
                b.messages,
                b.link_wait_cycles,
                b.latency_cycles
            );
            let even = e.even_ports(tiles);
            if even.max_link_and_hop_cycles > 0 {
                let _ = write!(
                    s,
                    "; even ports = {:.0} + {}, {:.1}%",
                    even.mean_port_cycles,
                    even.max_link_and_hop_cycles,
                    100.0 * even.effectiveness
                );
            }
            s.push('\n');
        }
    }
}
