//! Tile images: what each tile holds when the engine starts (its memory size, initial data
//! and a breakdown of where the memory goes), and the check of every tile against the target's
//! memory budget.

use super::error::CompileError;
use super::layout::Layout;
use super::lower::Lowered;
use crate::exe::{MemoryCategory, MemoryItem, TileImage};
use crate::graph::Graph;

/// The tile images of a laid-out and lowered graph. A tile over its budget is
/// [`CompileError::OutOfMemory`] (the fullest such tile) unless `allow_out_of_memory`.
pub(crate) fn build(
    graph: &Graph,
    layout: &Layout,
    lowered: &Lowered,
    allow_out_of_memory: bool,
) -> Result<Vec<TileImage>, CompileError> {
    let mut tiles = Vec::with_capacity(layout.tiles.len());
    let mut worst: Option<(u32, u64)> = None;
    for (tile, ta) in layout.tiles.iter() {
        let base = lowered.temp_base[tile];
        let peak = lowered.temp_peak[tile];
        let total = (base + peak).next_multiple_of(layout.align);
        let mut breakdown: Vec<MemoryItem> = ta
            .items
            .iter()
            .map(|((name, cat), &bytes)| MemoryItem {
                name: name.clone(),
                category: *cat,
                bytes: bytes as u32,
            })
            .collect();
        if peak > 0 {
            breakdown.push(MemoryItem {
                name: "temporaries (peak)".into(),
                category: MemoryCategory::Temporary,
                bytes: peak as u32,
            });
        }
        breakdown.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.name.cmp(&b.name)));
        if total > u64::from(graph.target.bytes_per_tile) && worst.is_none_or(|(_, w)| total > w) {
            worst = Some((tile.as_u32(), total));
        }
        tiles.push(TileImage {
            memory_bytes: u32::try_from(total).unwrap_or(u32::MAX),
            always_live_bytes: ta.next as u32,
            temporary_bytes: peak as u32,
            init: ta.init.clone(),
            breakdown,
        });
    }
    if let Some((tile, total)) = worst {
        if !allow_out_of_memory || total > u64::from(u32::MAX) {
            let largest = tiles[tile as usize]
                .breakdown
                .iter()
                .take(5)
                .map(|m| (m.name.clone(), u64::from(m.bytes)))
                .collect();
            return Err(CompileError::OutOfMemory {
                tile: tile.into(),
                total,
                budget: u64::from(graph.target.bytes_per_tile),
                largest,
            });
        }
    }
    Ok(tiles)
}
