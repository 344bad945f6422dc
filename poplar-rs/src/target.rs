//! The machine a graph is compiled for: chips, tiles, memory, workers and the cost constants of
//! the exchange and sync model.

use serde::{Deserialize, Serialize};

/// Topology of the links between chips; it decides the hop count of an inter-chip transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChipTopology {
    /// Chips in a ladder (a line of pairs); hops grow with the distance in the line.
    Ladder,
    /// Chips in a ring; hops are the shorter way round.
    Torus,
}

/// A description of the simulated machine. All cost figures are in tile clock cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// Number of chips (IPUs).
    pub num_ipus: u32,
    /// Tiles on each chip.
    pub tiles_per_ipu: u32,
    /// SRAM bytes per tile.
    pub bytes_per_tile: u32,
    /// Hardware worker contexts per tile.
    pub workers_per_tile: u32,
    /// Tile clock in Hz.
    pub clock_hz: f64,
    /// Bytes a tile can send (and receive) per cycle over the on-chip exchange.
    pub exchange_bytes_per_cycle: u32,
    /// Fixed cycles to set up one transfer (per message).
    pub exchange_setup_cycles: u32,
    /// Bytes per cycle of one inter-chip link (as seen from the tile clock).
    pub link_bytes_per_cycle: f64,
    /// Cycles of latency added per inter-chip hop.
    pub link_hop_latency_cycles: u32,
    pub topology: ChipTopology,
    /// Cycles of a sync among the tiles of one chip.
    pub internal_sync_cycles: u32,
    /// Cycles of a sync among all tiles of all chips.
    pub global_sync_cycles: u32,
    /// Memory alignment of every allocation, in bytes (power of two, at least 8).
    pub alignment: u32,
}

/// Identifies one tile of the target: `0..num_tiles()`, chip-major.
pub type TileId = u32;

impl Target {
    /// One GC200-class chip: 1,472 tiles × 624 KiB, six workers, 1.33 GHz.
    pub fn gc200() -> Target {
        Target::gc200_multi(1)
    }

    /// `num_ipus` GC200-class chips joined by IPU links in a ladder.
    pub fn gc200_multi(num_ipus: u32) -> Target {
        Target {
            num_ipus,
            tiles_per_ipu: 1472,
            bytes_per_tile: 624 * 1024,
            workers_per_tile: 6,
            clock_hz: 1.33e9,
            exchange_bytes_per_cycle: 4,
            exchange_setup_cycles: 16,
            link_bytes_per_cycle: 0.1,
            link_hop_latency_cycles: 800,
            topology: ChipTopology::Ladder,
            internal_sync_cycles: 150,
            global_sync_cycles: 1500,
            alignment: 8,
        }
    }

    /// A small single-chip target for tests and examples.
    pub fn custom(tiles: u32, bytes_per_tile: u32) -> Target {
        Target {
            tiles_per_ipu: tiles,
            bytes_per_tile,
            ..Target::gc200()
        }
    }

    /// Total tiles across all chips.
    pub fn num_tiles(&self) -> u32 {
        self.num_ipus * self.tiles_per_ipu
    }

    /// The chip a tile belongs to.
    pub fn ipu_of(&self, tile: TileId) -> u32 {
        tile / self.tiles_per_ipu
    }

    /// Tile index within its chip.
    pub fn tile_in_ipu(&self, tile: TileId) -> u32 {
        tile % self.tiles_per_ipu
    }

    /// Inter-chip hops between two chips under the target's topology.
    pub fn hops(&self, a: u32, b: u32) -> u32 {
        let d = a.abs_diff(b);
        match self.topology {
            // Ladder: chips 2k and 2k+1 form a rung; one hop across the rung, one per rung along.
            ChipTopology::Ladder => (a / 2).abs_diff(b / 2) + u32::from(a % 2 != b % 2),
            ChipTopology::Torus => d.min(self.num_ipus - d),
        }
    }

    /// Checks the target is usable; returns what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.num_ipus == 0 || self.tiles_per_ipu == 0 {
            return Err("target has no tiles".into());
        }
        if self.workers_per_tile == 0 {
            return Err("target has no worker contexts".into());
        }
        if !self.alignment.is_power_of_two() || self.alignment < 8 {
            return Err(format!(
                "alignment {} is not a power of two >= 8",
                self.alignment
            ));
        }
        if self.exchange_bytes_per_cycle == 0 || self.link_bytes_per_cycle <= 0.0 {
            return Err("exchange bandwidth must be positive".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_ids_are_chip_major() {
        let t = Target::gc200_multi(4);
        assert_eq!(t.num_tiles(), 4 * 1472);
        assert_eq!(t.ipu_of(1471), 0);
        assert_eq!(t.ipu_of(1472), 1);
        assert_eq!(t.tile_in_ipu(1473), 1);
    }

    #[test]
    fn hop_counts() {
        let mut t = Target::gc200_multi(8);
        assert_eq!(t.hops(0, 1), 1);
        assert_eq!(t.hops(0, 2), 1);
        assert_eq!(t.hops(0, 7), 4);
        t.topology = ChipTopology::Torus;
        assert_eq!(t.hops(0, 7), 1);
        assert_eq!(t.hops(1, 5), 4);
    }
}
