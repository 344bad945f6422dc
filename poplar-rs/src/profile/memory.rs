//! Memory report of an executable: per tile always-live and temporary bytes, by category and by
//! variable, and the tiles closest to the budget.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::data::Stats;
use crate::exe::{Executable, MemoryCategory};

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
    pub tiles: Vec<TileMemory>,
    /// Distribution of `total` over tiles.
    pub total: Stats,
    pub always_live: Stats,
    pub temporary: Stats,
    /// Totals over all tiles by category.
    pub by_category: CategoryBytes,
    /// Items by total bytes, largest first.
    pub items: Vec<ItemBytes>,
}

impl MemoryReport {
    /// Builds the report from the executable's tile images.
    pub fn from_executable(exe: &Executable) -> MemoryReport {
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
            });
        }
        let col = |f: fn(&TileMemory) -> u64| Stats::of(&tiles.iter().map(f).collect::<Vec<_>>());
        let mut items: Vec<ItemBytes> = items.into_values().collect();
        items.sort_by(|a, b| b.total.cmp(&a.total).then(a.name.cmp(&b.name)));
        MemoryReport {
            bytes_per_tile: u64::from(exe.target.bytes_per_tile),
            total: col(|t| t.total),
            always_live: col(|t| t.always_live),
            temporary: col(|t| t.temporary),
            tiles,
            by_category,
            items,
        }
    }

    /// The `n` tiles with the most memory, fullest first.
    pub fn fullest(&self, n: usize) -> Vec<&TileMemory> {
        let mut v: Vec<&TileMemory> = self.tiles.iter().collect();
        v.sort_by(|a, b| b.total.cmp(&a.total).then(a.tile.cmp(&b.tile)));
        v.truncate(n);
        v
    }

    /// A text report: distributions, categories, largest items and the `top` fullest tiles.
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
