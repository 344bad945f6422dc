//! Memory report of an executable: per tile always-live and temporary bytes, by category and by
//! variable, the tiles closest to the budget, and Streaming Memory per chip and per remote
//! buffer.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::data::Stats;
use crate::dtype::DType;
use crate::exe::{Executable, MemoryCategory};
use crate::target::TileId;

/// Bytes of one tile (or a total) by memory category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CategoryBytes {
    /// Variables (data).
    pub variables: u64,
    pub constants: u64,
    pub vertex_state: u64,
    /// Vertex descriptors and field pointers (estimated).
    pub vertex_descriptors: u64,
    /// Code of the codelets used on the tile (estimated).
    pub code: u64,
    /// Receive, gather and staging buffers (peak over supersteps).
    pub temporaries: u64,
    /// Always-live receive space beside variables, for concatenations bound in place.
    #[serde(default)]
    pub receive_slack: u64,
}

impl CategoryBytes {
    fn add(&mut self, c: MemoryCategory, bytes: u64) {
        let f = match c {
            MemoryCategory::Variable => &mut self.variables,
            MemoryCategory::Constant => &mut self.constants,
            MemoryCategory::VertexState => &mut self.vertex_state,
            MemoryCategory::VertexDescriptors => &mut self.vertex_descriptors,
            MemoryCategory::Code => &mut self.code,
            MemoryCategory::Temporary => &mut self.temporaries,
            MemoryCategory::ReceiveSlack => &mut self.receive_slack,
        };
        *f += bytes;
    }

    /// `(label, bytes)` pairs in a fixed order.
    pub fn entries(&self) -> [(&'static str, u64); 7] {
        [
            ("variables", self.variables),
            ("constants", self.constants),
            ("vertex state", self.vertex_state),
            ("vertex descriptors", self.vertex_descriptors),
            ("code", self.code),
            ("temporaries", self.temporaries),
            ("receive slack", self.receive_slack),
        ]
    }
}

/// Memory of one tile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TileMemory {
    pub tile: u32,
    /// Bytes allocated: always-live plus the temporaries' peak (with alignment).
    pub total: u64,
    pub always_live: u64,
    pub temporary: u64,
    pub by_category: CategoryBytes,
    /// Estimated exchange code of the tile (`exchange_code_bytes`); reported beside the
    /// allocation, not part of `total`.
    #[serde(default)]
    pub exchange_code: u64,
}

/// Estimated bytes of exchange code per exchange phase a tile takes part in (its sync and the
/// phase's set-up).
pub(crate) const EXCHANGE_CODE_PHASE_BYTES: u64 = 16;
/// Estimated bytes of exchange code per message a tile sends or receives in a phase (one
/// instruction with its address and length).
pub(crate) const EXCHANGE_CODE_MESSAGE_BYTES: u64 = 8;

/// Estimated exchange code of every tile of `exe` (a replicated executable: of one replica,
/// which every replica holds): per exchange phase in which the tile sends or receives,
/// [`EXCHANGE_CODE_PHASE_BYTES`] plus [`EXCHANGE_CODE_MESSAGE_BYTES`] per message, counting
/// cross-replica transfers at both ends.
pub(crate) fn exchange_code_bytes(exe: &Executable) -> Vec<u64> {
    let n = exe.tiles.len();
    let mut code = vec![0u64; n];
    let mut msgs = vec![0u64; n];
    for ph in exe.exchanges.values() {
        msgs.iter_mut().for_each(|m| *m = 0);
        let mut bump = |t: TileId| {
            if let Some(m) = msgs.get_mut(t.index()) {
                *m += 1;
            }
        };
        for tr in &ph.transfers {
            bump(tr.src_tile);
            for &(d, _) in &tr.dsts {
                bump(d);
            }
        }
        for c in &ph.cross_replica {
            bump(c.src_tile);
            bump(c.dst_tile);
        }
        for (c, &m) in code.iter_mut().zip(&msgs) {
            if m > 0 {
                *c += EXCHANGE_CODE_PHASE_BYTES + EXCHANGE_CODE_MESSAGE_BYTES * m;
            }
        }
    }
    code
}

/// One variable (or constant, or other named item) over all tiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemBytes {
    pub name: String,
    pub category: MemoryCategory,
    pub total: u64,
    /// Bytes on the tile that holds most of it.
    pub max_tile: u64,
    pub tiles: u32,
}

/// Where the memory goes (see `docs/profile-schema.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryReport {
    pub bytes_per_tile: u64,
    /// Replicas that each hold these tiles (1 unless the executable is replicated: the report
    /// is of one replica, and the machine holds `replicas` copies).
    #[serde(default = "one")]
    pub replicas: u32,
    /// Distribution over tiles of the estimated exchange code (`exchange_code_bytes`).
    #[serde(default)]
    pub exchange_code: Stats,
    pub tiles: Vec<TileMemory>,
    /// Distribution of `total` over tiles.
    pub total: Stats,
    pub always_live: Stats,
    pub temporary: Stats,
    /// Totals over all tiles by category.
    pub by_category: CategoryBytes,
    /// Items by total bytes, largest first.
    pub items: Vec<ItemBytes>,
    /// Streaming Memory: the remote buffers per chip and one by one (empty in reports written
    /// before it existed).
    #[serde(default)]
    pub streaming: StreamingMemory,
}

fn one() -> u32 {
    1
}

/// Streaming Memory use of an executable: its remote buffers, per chip and one by one. Of one
/// replica in a replicated executable (chips numbered from 0 within the replica), as the tiles.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StreamingMemory {
    /// Streaming Memory of each chip (the target's `streaming_memory_bytes`).
    pub bytes_per_chip: u64,
    /// Every chip the report describes, in chip order (index = chip).
    pub chips: Vec<ChipStreamingMemory>,
    /// The remote buffers in the executable's order (index = remote buffer id).
    pub buffers: Vec<RemoteBufferBytes>,
}

/// Streaming Memory of one chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ChipStreamingMemory {
    pub chip: u32,
    /// Bytes of the chip's remote buffers (all their rows).
    pub bytes: u64,
    /// Remote buffers held by the chip.
    pub buffers: u32,
}

/// One remote buffer: `rows` rows of `elements` elements of `dtype` on chip `chip`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteBufferBytes {
    pub name: String,
    pub dtype: DType,
    /// Elements of one row.
    pub elements: u64,
    pub rows: u64,
    /// Bytes of the whole buffer: `rows × elements × dtype size`.
    pub bytes: u64,
    pub chip: u32,
}

impl StreamingMemory {
    /// Streaming Memory of `exe`: its chips (one replica's when replicated) and its remote
    /// buffers.
    pub fn from_executable(exe: &Executable) -> StreamingMemory {
        let chips = match &exe.replication {
            Some(r) => r.chips_per_replica,
            None => exe.target.num_ipus,
        };
        let mut per_chip: Vec<ChipStreamingMemory> = (0..chips)
            .map(|chip| ChipStreamingMemory {
                chip,
                ..Default::default()
            })
            .collect();
        let buffers: Vec<RemoteBufferBytes> = exe
            .remote_buffers
            .values()
            .map(|b| RemoteBufferBytes {
                name: b.name.clone(),
                dtype: b.dtype,
                elements: b.elements,
                rows: b.rows,
                bytes: b.bytes(),
                chip: b.chip,
            })
            .collect();
        for b in &buffers {
            // A buffer on a chip the target does not have (an executable the checker would
            // refuse) still counts: the list grows to hold it.
            let c = b.chip as usize;
            if c >= per_chip.len() {
                let from = per_chip.len() as u32;
                per_chip.extend((from..=b.chip).map(|chip| ChipStreamingMemory {
                    chip,
                    ..Default::default()
                }));
            }
            per_chip[c].bytes = per_chip[c].bytes.saturating_add(b.bytes);
            per_chip[c].buffers += 1;
        }
        StreamingMemory {
            bytes_per_chip: exe.target.streaming_memory_bytes,
            chips: per_chip,
            buffers,
        }
    }

    /// Bytes of all remote buffers.
    pub fn total(&self) -> u64 {
        self.buffers
            .iter()
            .fold(0u64, |a, b| a.saturating_add(b.bytes))
    }

    /// The chips whose remote buffers exceed their Streaming Memory.
    pub fn over_budget(&self) -> Vec<u32> {
        self.chips
            .iter()
            .filter(|c| c.bytes > self.bytes_per_chip)
            .map(|c| c.chip)
            .collect()
    }

    /// The text section of [`MemoryReport::text`]: per chip holding buffers, then the largest
    /// `top` buffers (or "none").
    pub fn text(&self, top: usize) -> String {
        let mut s = String::new();
        let budget = self.bytes_per_chip;
        let share = |b: u64| {
            if budget == 0 {
                0.0
            } else {
                100.0 * b as f64 / budget as f64
            }
        };
        if self.buffers.is_empty() {
            let _ = writeln!(
                s,
                "Streaming Memory ({} B per chip): none (no remote buffers)",
                budget
            );
            return s;
        }
        let used: Vec<&ChipStreamingMemory> = self.chips.iter().filter(|c| c.buffers > 0).collect();
        let _ = writeln!(
            s,
            "Streaming Memory ({} B per chip): {} B in {} remote buffers on {} of {} chips",
            budget,
            self.total(),
            self.buffers.len(),
            used.len(),
            self.chips.len()
        );
        for c in used {
            let _ = writeln!(
                s,
                "  chip {:>4}: {:>14} B ({:5.1}%) in {} buffers{}",
                c.chip,
                c.bytes,
                share(c.bytes),
                c.buffers,
                if c.bytes > budget {
                    "  OVER the chip's Streaming Memory"
                } else {
                    ""
                }
            );
        }
        let mut order: Vec<&RemoteBufferBytes> = self.buffers.iter().collect();
        order.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.name.cmp(&b.name)));
        let _ = writeln!(s, "  Largest remote buffers:");
        for b in order.iter().take(top) {
            let _ = writeln!(
                s,
                "    {:<32} {:>4} {:>10} rows × {:>10} elements = {:>14} B on chip {}",
                truncate(&b.name, 32),
                format!("{:?}", b.dtype).to_lowercase(),
                b.rows,
                b.elements,
                b.bytes,
                b.chip
            );
        }
        if order.len() > top {
            let _ = writeln!(s, "    ... and {} more", order.len() - top);
        }
        s
    }
}

impl MemoryReport {
    /// Builds the report from the executable's tile images.
    pub fn from_executable(exe: &Executable) -> MemoryReport {
        let code = exchange_code_bytes(exe);
        let mut tiles = Vec::with_capacity(exe.tiles.len());
        let mut by_category = CategoryBytes::default();
        let mut items: BTreeMap<(String, MemoryCategory), ItemBytes> = BTreeMap::new();
        for (t, img) in exe.tiles.iter().enumerate() {
            let mut cat = CategoryBytes::default();
            for it in &img.breakdown {
                let b = u64::from(it.bytes);
                cat.add(it.category, b);
                by_category.add(it.category, b);
                let e = items
                    .entry((it.name.clone(), it.category))
                    .or_insert_with(|| ItemBytes {
                        name: it.name.clone(),
                        category: it.category,
                        total: 0,
                        max_tile: 0,
                        tiles: 0,
                    });
                e.total += b;
                e.max_tile = e.max_tile.max(b);
                e.tiles += 1;
            }
            tiles.push(TileMemory {
                tile: t as u32,
                total: u64::from(img.memory_bytes),
                always_live: u64::from(img.always_live_bytes),
                temporary: u64::from(img.temporary_bytes),
                by_category: cat,
                exchange_code: code[t],
            });
        }
        let col = |f: fn(&TileMemory) -> u64| Stats::of(&tiles.iter().map(f).collect::<Vec<_>>());
        let mut items: Vec<ItemBytes> = items.into_values().collect();
        items.sort_by(|a, b| b.total.cmp(&a.total).then(a.name.cmp(&b.name)));
        MemoryReport {
            bytes_per_tile: u64::from(exe.target.bytes_per_tile),
            replicas: exe.replicas(),
            exchange_code: Stats::of(&code),
            total: col(|t| t.total),
            always_live: col(|t| t.always_live),
            temporary: col(|t| t.temporary),
            tiles,
            by_category,
            items,
            streaming: StreamingMemory::from_executable(exe),
        }
    }

    /// The `n` tiles with the most memory, fullest first.
    pub fn fullest(&self, n: usize) -> Vec<&TileMemory> {
        let mut v: Vec<&TileMemory> = self.tiles.iter().collect();
        v.sort_by(|a, b| b.total.cmp(&a.total).then(a.tile.cmp(&b.tile)));
        v.truncate(n);
        v
    }

    /// A text report: distributions, categories, largest items, the `top` fullest tiles and
    /// Streaming Memory (per chip and the `top` largest remote buffers).
    pub fn text(&self, top: usize) -> String {
        let mut s = String::new();
        let budget = self.bytes_per_tile;
        let share = |b: u64| {
            if budget == 0 {
                0.0
            } else {
                100.0 * b as f64 / budget as f64
            }
        };
        let _ = writeln!(
            s,
            "Memory ({} tiles, {} B per tile)",
            self.tiles.len(),
            budget
        );
        if self.replicas > 1 {
            let _ = writeln!(
                s,
                "  per replica: every one of the {} replicas holds these tiles",
                self.replicas
            );
        }
        for (name, st) in [
            ("total", &self.total),
            ("always-live", &self.always_live),
            ("temporary", &self.temporary),
        ] {
            let _ = writeln!(
                s,
                "  {name:<12} max {:>9} B ({:5.1}%)  median {:>9} B  min {:>9} B  mean {:>11.1} B",
                st.max,
                share(st.max),
                st.median,
                st.min,
                st.mean
            );
        }
        let st = &self.exchange_code;
        let _ = writeln!(
            s,
            "  {:<12} max {:>9} B ({:5.1}%)  median {:>9} B  min {:>9} B  mean {:>11.1} B  (estimate, beside the total)",
            "exchange code",
            st.max,
            share(st.max),
            st.median,
            st.min,
            st.mean
        );
        let all: u64 = self.by_category.entries().iter().map(|e| e.1).sum();
        let _ = writeln!(s, "\nBy category (all tiles):");
        for (name, b) in self.by_category.entries() {
            let p = if all == 0 {
                0.0
            } else {
                100.0 * b as f64 / all as f64
            };
            let _ = writeln!(s, "  {name:<20} {b:>12} B  {p:5.1}%");
        }
        let _ = writeln!(s, "\nLargest items (all tiles):");
        for it in self.items.iter().take(10) {
            let _ = writeln!(
                s,
                "  {:<32} {:<18} {:>12} B on {:>6} tiles (max {} B on one tile)",
                truncate(&it.name, 32),
                format!("{:?}", it.category),
                it.total,
                it.tiles,
                it.max_tile
            );
        }
        let _ = writeln!(s, "\nTiles closest to the limit:");
        for t in self.fullest(top) {
            let _ = writeln!(
                s,
                "  tile {:>6}: {:>9} B ({:5.1}%) = {} always-live + {} temporary",
                t.tile,
                t.total,
                share(t.total),
                t.always_live,
                t.temporary
            );
        }
        let _ = writeln!(s);
        s.push_str(&self.streaming.text(top));
        s
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('~');
        t
    }
}
