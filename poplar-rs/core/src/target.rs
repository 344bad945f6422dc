//! The machine a graph is compiled for: chips, tiles, memory, workers and the cost constants of
//! the exchange and sync model.

use serde::{Deserialize, Serialize};

mod assumptions;
mod tile;
pub use assumptions::{Assumed, Assumption, Moves};
pub use tile::{TileId, TileRange};

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
    /// Fixed cycles to set up one transfer (per message): an assumption (16), no public
    /// figure (see [`Target::assumptions`]).
    pub exchange_setup_cycles: u32,
    /// Bytes per cycle, in each direction, of the IPU-Links between two neighbouring chips of
    /// one link domain, shared by all tiles of the chip: the presets' are the 2 links along a
    /// rail of the ladder × 16 GB/s × the early IPUModel's link efficiency 0.85 (an
    /// assumption), 20.45 at 1.33 GHz ([`IPU_LINK_BYTES_PER_CYCLE`], `docs/cycle-model.md`).
    pub link_bytes_per_cycle: f64,
    /// Cycles of latency added per inter-chip hop: an assumption (800, 0.6 µs), no public
    /// measurement.
    pub link_hop_latency_cycles: u32,
    /// How the chips of one link domain are joined.
    pub topology: ChipTopology,
    /// Chips of one IPU-Link domain (a Pod64 at most); domains are consecutive chips, and
    /// chips of different domains talk over GW-Links. 0: the whole target is one domain
    /// (executables saved before this field existed load so).
    #[serde(default)]
    pub chips_per_link_domain: u32,
    /// Bytes per cycle, in each direction, of the GW-Link share of one chip between two
    /// domains (2 × 100 GbE per IPU-Machine pair, shared by its 4 chips: 4.70).
    #[serde(default = "default_gw_rate")]
    pub gw_link_bytes_per_cycle: f64,
    /// Cycles of latency per GW hop between neighbouring domains (an assumption: 2 µs).
    #[serde(default = "default_gw_latency")]
    pub gw_hop_latency_cycles: u32,
    /// Cycles of a sync among the tiles of one chip: an assumption (150), no public figure.
    pub internal_sync_cycles: u32,
    /// Cycles of a sync among all tiles of all chips: in the presets the chip's internal sync
    /// plus the early IPUModel's sync latency by chip count ([`sync_latency_cycles`]), a model
    /// parameter, not a measurement.
    pub global_sync_cycles: u32,
    /// Memory alignment of every allocation, in bytes (power of two, at least 8).
    pub alignment: u32,
    /// Subnormal f32 inputs read as zero and subnormal results become zero, as on the chip
    /// (on for the GC200 presets; see [`crate::fp`]). Executables saved before this field
    /// existed load with it off, so they keep computing as they did.
    #[serde(default)]
    pub flush_subnormals: bool,
    /// Bytes of Streaming Memory (the DRAM beside the chips) each chip can reach: remote
    /// buffers of one chip may not exceed it (`docs/cycle-model.md`: 448 GB per IPU-M2000, 4
    /// chips, is 112 GB each). Executables saved before this field existed load with it.
    #[serde(default = "default_streaming_memory_bytes")]
    pub streaming_memory_bytes: u64,
    /// Bytes per cycle, in each direction, between one chip and its Streaming Memory (and
    /// the host): PCIe Gen4 x8, 15.75 GB/s at 1.33 GHz is 11.84.
    #[serde(default = "default_streaming_rate")]
    pub streaming_memory_bytes_per_cycle: f64,
    /// Fixed cycles of one transfer between a chip and its Streaming Memory (an assumption: 1
    /// µs, a PCIe read round trip; no public figure was found).
    #[serde(default = "default_streaming_latency")]
    pub streaming_memory_latency_cycles: u32,
    /// Cycles a host-to-device or device-to-host stream copy waits for the host when its data
    /// was not prefetched (an assumption: 10 µs, the host's callback and the gateway's
    /// round trip).
    #[serde(default = "default_host_round_trip")]
    pub host_round_trip_cycles: u32,
    /// Tiles of each chip reserved for host and Streaming Memory transfers (the last
    /// `io_tiles` of each chip): no vertex runs on them, and transfers to them overlap compute
    /// on the others in `Program::overlap_io`. 0 (the default) or an even number: 32–192 on
    /// a chip of at least 1,472 tiles, as PopTorch allows; 2 up to half the tiles on the
    /// small chips of tests and examples.
    #[serde(default)]
    pub io_tiles: u32,
}

/// One IPU-Link, each way: 128 Gb/s (PCIe Gen4 ×8 signalling), 16 GB/s; a GC200 has 10
/// links, 320 GB/s in all both ways (Graphcore's product figures). The early IPUModel of
/// graphcore/poplibs (`addGlobalExchangeConstraints`) takes 128 × 2^30 bit/s.
pub const IPU_LINK_BYTES_PER_SECOND: f64 = 16.0e9;
/// IPU-Links from a chip to its neighbour along a rail of the ladder, each way (chip `c` to
/// `c ± 2`): 2 up and 2 down in the early IPUModel, with 4 to its rung partner for their own
/// traffic and 2 more for traffic routed across the rung (10 in all).
pub const IPU_LINKS_PER_RAIL: u32 = 2;
/// IPU-Links between the two chips of a rung (`2k`, `2k + 1`) that carry the pair's own
/// traffic in the early IPUModel (of the 6 between them). The cycle model charges every chip
/// pair at [`Target::link_bytes_per_cycle`], the rail's rate, so rung traffic is modelled at
/// half this: see `docs/cycle-model.md`.
pub const IPU_LINKS_PER_RUNG: u32 = 4;
/// Fraction of an IPU-Link's raw rate that carries data: 0.85 in the early IPUModel, a model
/// parameter, not a measurement (an assumption, see [`Target::assumptions`]).
pub const IPU_LINK_EFFICIENCY: f64 = 0.85;
/// One direction of the IPU-Links between neighbouring chips of a rail:
/// [`IPU_LINKS_PER_RAIL`] × [`IPU_LINK_BYTES_PER_SECOND`] × [`IPU_LINK_EFFICIENCY`] =
/// 27.2 GB/s, at 1.33 GHz 20.45 bytes per cycle. (Before the per-link figures: 32 GB/s, 24.06.)
pub const IPU_LINK_BYTES_PER_CYCLE: f64 =
    IPU_LINKS_PER_RAIL as f64 * IPU_LINK_BYTES_PER_SECOND * IPU_LINK_EFFICIENCY / 1.33e9;
/// The early IPUModel's sync latency per hop of the sync network, in seconds (15 ns).
pub const SYNC_LATENCY_PER_HOP_SECONDS: f64 = 15e-9;

/// Cycles the sync signal takes across `num_ipus` chips in the early IPUModel of
/// graphcore/poplibs (`setGlobalSyncLatency`): 15 ns per hop, there and back, over
/// `1 + num_ipus / 4` hops (one inside a card of two chips, one per pair of cards), rounded
/// up: 40 cycles on 1 chip at 1.33 GHz, 80 on 4, 200 on 16, 679 on 64. A model parameter,
/// not a measurement.
pub fn sync_latency_cycles(num_ipus: u32, clock_hz: f64) -> u32 {
    let hops = 1 + num_ipus / 2 / 2;
    (SYNC_LATENCY_PER_HOP_SECONDS * clock_hz * f64::from(hops) * 2.0).ceil() as u32
}

/// One chip's share of the GW-Links between two IPU-Machines of neighbouring Pods: 2 × 100 GbE
/// (25 GB/s each way) shared by the machine's 4 chips, at 1.33 GHz.
pub const GW_LINK_BYTES_PER_CYCLE: f64 = 25.0e9 / 4.0 / 1.33e9;
/// Latency of one GW hop (IPU-Gateway to switch to IPU-Gateway): an assumption of 2 µs, about
/// four times an Ethernet switch round trip; no public figure was found.
pub const GW_HOP_LATENCY_CYCLES: u32 = 2660;
/// Latency of one IPU-Link hop: an assumption of 800 cycles (0.6 µs at 1.33 GHz); no public
/// measurement was found.
pub const LINK_HOP_LATENCY_CYCLES: u32 = 800;
/// Sync among the tiles of one chip: an assumption of 150 cycles; no public figure was found.
pub const INTERNAL_SYNC_CYCLES: u32 = 150;
/// Set-up cycles of one exchange message: an assumption of 16; no public figure was found.
pub const EXCHANGE_SETUP_CYCLES: u32 = 16;

/// The Bow's tile clock (Graphcore's Bow IPU: 1.85 GHz, the GC200's 1.33 raised by wafer-on-wafer
/// power delivery).
pub const BOW_CLOCK_HZ: f64 = 1.85e9;

/// One chip's Streaming Memory on an IPU-M2000: up to 448 GB for its 4 chips.
pub const STREAMING_MEMORY_BYTES: u64 = 448_000_000_000 / 4;
/// One chip's PCIe Gen4 x8 to the IPU-Gateway (and so to Streaming Memory and the host):
/// 16 GT/s × 8 lanes × 128/130 encoding is 15.75 GB/s each way, at 1.33 GHz.
pub const STREAMING_MEMORY_BYTES_PER_CYCLE: f64 = 15.75e9 / 1.33e9;
/// Latency of one Streaming Memory transfer: an assumption of 1 µs (a PCIe read round trip).
pub const STREAMING_MEMORY_LATENCY_CYCLES: u32 = 1330;
/// A stream copy that was not prefetched waits for the host: an assumption of 10 µs.
pub const HOST_ROUND_TRIP_CYCLES: u32 = 13_300;

fn default_streaming_memory_bytes() -> u64 {
    STREAMING_MEMORY_BYTES
}

fn default_streaming_rate() -> f64 {
    STREAMING_MEMORY_BYTES_PER_CYCLE
}

fn default_streaming_latency() -> u32 {
    STREAMING_MEMORY_LATENCY_CYCLES
}

fn default_host_round_trip() -> u32 {
    HOST_ROUND_TRIP_CYCLES
}

fn default_gw_rate() -> f64 {
    GW_LINK_BYTES_PER_CYCLE
}

fn default_gw_latency() -> u32 {
    GW_HOP_LATENCY_CYCLES
}

impl Target {
    /// One GC200-class chip: 1,472 tiles × 624 KiB, six workers, 1.33 GHz.
    pub fn gc200() -> Target {
        Target::gc200_multi(1)
    }

    /// `num_ipus` GC200-class chips joined by IPU-Links in a ladder, one link domain: chips
    /// `2k` and `2k + 1` form a rung, chip `c` is joined to `c ± 2` along a rail (the early
    /// IPUModel's wiring, `docs/cycle-model.md`). The global sync grows with the chip count
    /// ([`sync_latency_cycles`]).
    pub fn gc200_multi(num_ipus: u32) -> Target {
        Target {
            num_ipus,
            tiles_per_ipu: 1472,
            bytes_per_tile: 624 * 1024,
            workers_per_tile: 6,
            clock_hz: 1.33e9,
            exchange_bytes_per_cycle: 4,
            exchange_setup_cycles: EXCHANGE_SETUP_CYCLES,
            link_bytes_per_cycle: IPU_LINK_BYTES_PER_CYCLE,
            link_hop_latency_cycles: LINK_HOP_LATENCY_CYCLES,
            topology: ChipTopology::Ladder,
            chips_per_link_domain: 0,
            gw_link_bytes_per_cycle: GW_LINK_BYTES_PER_CYCLE,
            gw_hop_latency_cycles: GW_HOP_LATENCY_CYCLES,
            internal_sync_cycles: INTERNAL_SYNC_CYCLES,
            global_sync_cycles: INTERNAL_SYNC_CYCLES + sync_latency_cycles(num_ipus, 1.33e9),
            alignment: 8,
            flush_subnormals: true,
            streaming_memory_bytes: STREAMING_MEMORY_BYTES,
            streaming_memory_bytes_per_cycle: STREAMING_MEMORY_BYTES_PER_CYCLE,
            streaming_memory_latency_cycles: STREAMING_MEMORY_LATENCY_CYCLES,
            host_round_trip_cycles: HOST_ROUND_TRIP_CYCLES,
            io_tiles: 0,
        }
    }

    /// One Bow chip: the GC200's tile (1,472 tiles × 624 KiB, six workers) at 1.85 GHz, so
    /// its cycle counts are a GC200's and its times shorter ([`Target::bow_multi`]).
    pub fn bow() -> Target {
        Target::bow_multi(1)
    }

    /// `num_ipus` Bow chips (Bow-2000 machines) joined as [`Target::gc200_multi`]'s. The
    /// same tile, exchange and sync cycles; the clock 1.85 GHz (Graphcore's Bow figures), so
    /// every rate given in bytes per second (IPU-Links, GW-Links, Streaming Memory: the same
    /// links as the M2000's) is fewer bytes per cycle, and every latency given in seconds more
    /// cycles.
    pub fn bow_multi(num_ipus: u32) -> Target {
        let mk2 = Target::gc200_multi(num_ipus);
        let clock_hz = BOW_CLOCK_HZ;
        let per_cycle = |bytes_per_cycle: f64| bytes_per_cycle * mk2.clock_hz / clock_hz;
        let cycles = |c: u32| (f64::from(c) * clock_hz / mk2.clock_hz).round() as u32;
        Target {
            clock_hz,
            link_bytes_per_cycle: per_cycle(mk2.link_bytes_per_cycle),
            link_hop_latency_cycles: cycles(mk2.link_hop_latency_cycles),
            gw_link_bytes_per_cycle: per_cycle(mk2.gw_link_bytes_per_cycle),
            gw_hop_latency_cycles: cycles(mk2.gw_hop_latency_cycles),
            streaming_memory_bytes_per_cycle: per_cycle(mk2.streaming_memory_bytes_per_cycle),
            streaming_memory_latency_cycles: cycles(mk2.streaming_memory_latency_cycles),
            host_round_trip_cycles: cycles(mk2.host_round_trip_cycles),
            global_sync_cycles: mk2.internal_sync_cycles + sync_latency_cycles(num_ipus, clock_hz),
            ..mk2
        }
    }

    /// An IPU-Machine: 4 chips joined by IPU-Links (chips 0–1 and 2–3 on the east edge, 0–2 and
    /// 1–3 on the west: a ladder of two rungs).
    pub fn ipu_machine() -> Target {
        Target::gc200_multi(4)
    }

    /// A Pod16: 4 IPU-Machines, 16 chips in one IPU-Link domain, a ladder.
    pub fn pod16() -> Target {
        Target::gc200_multi(16)
    }

    /// A Pod64: 16 IPU-Machines, 64 chips, the largest IPU-Link domain.
    pub fn pod64() -> Target {
        Target::gc200_multi(64)
    }

    /// `pods` Pods of `chips_per_pod` chips (16 or 64), each its own IPU-Link domain, joined
    /// by GW-Links in a ring (the same slot of neighbouring Pods, the last Pod next to the
    /// first). Chips are numbered Pod after Pod.
    pub fn pods(pods: u32, chips_per_pod: u32) -> Target {
        Target {
            chips_per_link_domain: chips_per_pod,
            ..Target::gc200_multi(pods * chips_per_pod)
        }
    }

    /// Chips of one link domain (the whole target when `chips_per_link_domain` is 0).
    pub fn domain_chips(&self) -> u32 {
        if self.chips_per_link_domain == 0 {
            self.num_ipus
        } else {
            self.chips_per_link_domain.min(self.num_ipus)
        }
    }

    /// The link domain of a chip.
    pub fn domain_of(&self, chip: u32) -> u32 {
        chip / self.domain_chips().max(1)
    }

    /// GW hops between two chips: the shorter way round the ring of domains (0 inside one).
    pub fn gw_hops(&self, a: u32, b: u32) -> u32 {
        let per = self.domain_chips().max(1);
        let domains = self.num_ipus.div_ceil(per);
        let d = (a / per).abs_diff(b / per);
        d.min(domains - d)
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

    /// Every tile of the target, in order.
    pub fn tiles(&self) -> TileRange {
        TileId::range(0, self.num_tiles())
    }

    /// The tiles of chip `chip`, in order.
    pub fn tiles_of(&self, chip: u32) -> TileRange {
        TileId::range(chip * self.tiles_per_ipu, (chip + 1) * self.tiles_per_ipu)
    }

    /// The chip a tile belongs to.
    pub fn ipu_of(&self, tile: impl Into<TileId>) -> u32 {
        tile.into().as_u32() / self.tiles_per_ipu
    }

    /// Tile index within its chip.
    pub fn tile_in_ipu(&self, tile: impl Into<TileId>) -> u32 {
        tile.into().as_u32() % self.tiles_per_ipu
    }

    /// Whether `tile` is one of its chip's I/O tiles (the last [`Target::io_tiles`]).
    pub fn is_io_tile(&self, tile: impl Into<TileId>) -> bool {
        self.tile_in_ipu(tile) >= self.tiles_per_ipu - self.io_tiles.min(self.tiles_per_ipu)
    }

    /// The I/O tiles of chip `chip`, in order.
    pub fn io_tiles_of(&self, chip: u32) -> TileRange {
        let end = (chip + 1) * self.tiles_per_ipu;
        TileId::range(end - self.io_tiles.min(self.tiles_per_ipu), end)
    }

    /// IPU-Link hops between two chips under the target's topology. Inside a link domain:
    /// on a ladder, chips `2k` and `2k+1` form a rung, one hop across it and one per rung
    /// along; on a torus, the shorter way round. Between domains the GW-Links join the same
    /// position of neighbouring domains, so the IPU-Link hops are those between the two
    /// positions (plus [`Target::gw_hops`]).
    pub fn hops(&self, a: u32, b: u32) -> u32 {
        let per = self.domain_chips().max(1);
        let (a, b) = (a % per, b % per);
        let d = a.abs_diff(b);
        match self.topology {
            ChipTopology::Ladder => (a / 2).abs_diff(b / 2) + u32::from(a % 2 != b % 2),
            ChipTopology::Torus => d.min(per - d),
        }
    }

    /// Checks that every field lies in the range the chip model can mean (see
    /// [`TargetError`] and the constants `MAX_*`), so that nothing downstream (the compiler,
    /// the cycle model, the engine) sizes an allocation or a loop from an absurd figure. Run by
    /// the compiler, `Executable::check` (so by every loader)
    /// and the engine.
    pub fn validate(&self) -> Result<(), TargetError> {
        fn int(field: &'static str, v: u32, lo: u32, hi: u32) -> Result<(), TargetError> {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(TargetError {
                    field,
                    value: v.to_string(),
                    allowed: format!("{lo}..={hi}"),
                })
            }
        }
        fn real(field: &'static str, v: f64, hi: f64) -> Result<(), TargetError> {
            if v.is_finite() && v > 0.0 && v <= hi {
                Ok(())
            } else {
                Err(TargetError {
                    field,
                    value: v.to_string(),
                    allowed: format!("finite, > 0 and <= {hi:e}"),
                })
            }
        }
        int("num_ipus", self.num_ipus, 1, MAX_CHIPS)?;
        int("tiles_per_ipu", self.tiles_per_ipu, 1, MAX_TILES_PER_CHIP)?;
        int("bytes_per_tile", self.bytes_per_tile, 1, MAX_BYTES_PER_TILE)?;
        int("workers_per_tile", self.workers_per_tile, 1, MAX_WORKERS)?;
        real("clock_hz", self.clock_hz, 1e11)?;
        int(
            "exchange_bytes_per_cycle",
            self.exchange_bytes_per_cycle,
            1,
            1 << 16,
        )?;
        real("link_bytes_per_cycle", self.link_bytes_per_cycle, 1e6)?;
        real("gw_link_bytes_per_cycle", self.gw_link_bytes_per_cycle, 1e6)?;
        int(
            "chips_per_link_domain",
            self.chips_per_link_domain,
            0,
            MAX_CHIPS,
        )?;
        if self.chips_per_link_domain != 0
            && !self.num_ipus.is_multiple_of(self.chips_per_link_domain)
        {
            return Err(TargetError {
                field: "chips_per_link_domain",
                value: self.chips_per_link_domain.to_string(),
                allowed: format!("0 or a divisor of num_ipus ({})", self.num_ipus),
            });
        }
        if !self.alignment.is_power_of_two() {
            return Err(TargetError {
                field: "alignment",
                value: self.alignment.to_string(),
                allowed: "a power of two from 8 to 4096".into(),
            });
        }
        int("alignment", self.alignment, 8, 4096)?;
        real(
            "streaming_memory_bytes_per_cycle",
            self.streaming_memory_bytes_per_cycle,
            1e6,
        )?;
        if self.streaming_memory_bytes > MAX_STREAMING_MEMORY_BYTES {
            return Err(TargetError {
                field: "streaming_memory_bytes",
                value: self.streaming_memory_bytes.to_string(),
                allowed: format!("0..={MAX_STREAMING_MEMORY_BYTES}"),
            });
        }
        self.validate_io_tiles()?;
        let tiles = u64::from(self.num_ipus) * u64::from(self.tiles_per_ipu);
        if tiles > u64::from(MAX_TILES) {
            return Err(TargetError {
                field: "num_ipus x tiles_per_ipu",
                value: tiles.to_string(),
                allowed: format!("1..={MAX_TILES} tiles in all"),
            });
        }
        Ok(())
    }
}

impl Target {
    /// `io_tiles`: 0, or even and 32–192 on a chip of at least 1,472 tiles (PopTorch's
    /// range), or even and 2 up to half the tiles on a smaller chip.
    fn validate_io_tiles(&self) -> Result<(), TargetError> {
        let n = self.io_tiles;
        if n == 0 {
            return Ok(());
        }
        let (lo, hi) = if self.tiles_per_ipu >= 1472 {
            (32, 192)
        } else {
            (2, self.tiles_per_ipu / 2)
        };
        if n.is_multiple_of(2) && (lo..=hi).contains(&n) {
            return Ok(());
        }
        Err(TargetError {
            field: "io_tiles",
            value: n.to_string(),
            allowed: format!("0 or an even number from {lo} to {hi}"),
        })
    }
}

/// Most bytes of Streaming Memory per chip a target may have (1 PiB).
pub const MAX_STREAMING_MEMORY_BYTES: u64 = 1 << 50;
/// Most chips a target may have (several Pods of 64).
pub const MAX_CHIPS: u32 = 1024;
/// Most tiles per chip.
pub const MAX_TILES_PER_CHIP: u32 = 1 << 16;
/// Most tiles in all (chips × tiles per chip).
pub const MAX_TILES: u32 = 1 << 22;
/// Most SRAM bytes per tile (64 MiB; a GC200 tile has 624 KiB).
pub const MAX_BYTES_PER_TILE: u32 = 64 << 20;
/// Most hardware worker contexts per tile (a GC200 tile has 6).
pub const MAX_WORKERS: u32 = 16;

/// A field of a [`Target`] outside what the chip model can mean.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("target field `{field}` is {value}; allowed: {allowed}")]
pub struct TargetError {
    /// The field at fault (or the product of fields).
    pub field: &'static str,
    /// Its value as given.
    pub value: String,
    /// The range the model accepts.
    pub allowed: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Bow is a GC200 tile at 1.85 GHz: the same cycles on the chip, the links' bytes per
    /// second and the latencies' seconds kept.
    #[test]
    fn a_bow_keeps_the_tile_and_the_links_seconds() {
        let (mk2, bow) = (Target::gc200_multi(4), Target::bow_multi(4));
        assert_eq!(bow.validate(), Ok(()));
        assert_eq!(bow.clock_hz, 1.85e9);
        assert_eq!(
            (bow.tiles_per_ipu, bow.bytes_per_tile, bow.workers_per_tile),
            (mk2.tiles_per_ipu, mk2.bytes_per_tile, mk2.workers_per_tile)
        );
        assert_eq!(bow.exchange_bytes_per_cycle, mk2.exchange_bytes_per_cycle);
        assert_eq!(bow.internal_sync_cycles, mk2.internal_sync_cycles);
        let gbps = |t: &Target, r: f64| r * t.clock_hz;
        assert!(
            (gbps(&bow, bow.link_bytes_per_cycle) - gbps(&mk2, mk2.link_bytes_per_cycle)).abs()
                < 1.0
        );
        let secs = |t: &Target, c: u32| f64::from(c) / t.clock_hz;
        let (a, b) = (
            secs(&bow, bow.link_hop_latency_cycles),
            secs(&mk2, mk2.link_hop_latency_cycles),
        );
        assert!((a / b - 1.0).abs() < 1e-3, "{a} {b}");
        assert_eq!(Target::bow().num_ipus, 1);
    }

    #[test]
    fn every_field_is_bounded_and_named() {
        assert_eq!(Target::gc200_multi(16).validate(), Ok(()));
        let bad: Vec<(&str, Target)> = vec![
            (
                "workers_per_tile",
                Target {
                    workers_per_tile: u32::MAX,
                    ..Target::gc200()
                },
            ),
            (
                "workers_per_tile",
                Target {
                    workers_per_tile: 0,
                    ..Target::gc200()
                },
            ),
            (
                "clock_hz",
                Target {
                    clock_hz: f64::NAN,
                    ..Target::gc200()
                },
            ),
            (
                "clock_hz",
                Target {
                    clock_hz: -1.0,
                    ..Target::gc200()
                },
            ),
            (
                "clock_hz",
                Target {
                    clock_hz: f64::INFINITY,
                    ..Target::gc200()
                },
            ),
            (
                "bytes_per_tile",
                Target {
                    bytes_per_tile: 0,
                    ..Target::gc200()
                },
            ),
            (
                "bytes_per_tile",
                Target {
                    bytes_per_tile: u32::MAX,
                    ..Target::gc200()
                },
            ),
            (
                "num_ipus",
                Target {
                    num_ipus: 0,
                    ..Target::gc200()
                },
            ),
            (
                "tiles_per_ipu",
                Target {
                    tiles_per_ipu: u32::MAX,
                    ..Target::gc200()
                },
            ),
            (
                "link_bytes_per_cycle",
                Target {
                    link_bytes_per_cycle: 0.0,
                    ..Target::gc200()
                },
            ),
            (
                "alignment",
                Target {
                    alignment: 12,
                    ..Target::gc200()
                },
            ),
            (
                "alignment",
                Target {
                    alignment: 4,
                    ..Target::gc200()
                },
            ),
            (
                "exchange_bytes_per_cycle",
                Target {
                    exchange_bytes_per_cycle: 0,
                    ..Target::gc200()
                },
            ),
            (
                "io_tiles",
                Target {
                    io_tiles: 33,
                    ..Target::gc200()
                },
            ),
            (
                "io_tiles",
                Target {
                    io_tiles: 16,
                    ..Target::gc200()
                },
            ),
            (
                "io_tiles",
                Target {
                    io_tiles: 10,
                    ..Target::custom(16, 1024)
                },
            ),
            (
                "streaming_memory_bytes_per_cycle",
                Target {
                    streaming_memory_bytes_per_cycle: 0.0,
                    ..Target::gc200()
                },
            ),
            (
                "num_ipus x tiles_per_ipu",
                Target {
                    num_ipus: 1024,
                    tiles_per_ipu: 1 << 16,
                    ..Target::gc200()
                },
            ),
        ];
        for (field, t) in bad {
            let e = t.validate().unwrap_err();
            assert_eq!(e.field, field, "{e}");
            assert!(e.to_string().contains(field), "{e}");
        }
    }

    #[test]
    fn io_tiles_are_the_last_of_each_chip() {
        let t = Target {
            io_tiles: 32,
            ..Target::gc200_multi(2)
        };
        assert_eq!(t.validate(), Ok(()));
        assert_eq!(t.io_tiles_of(1), TileRange::from(2912..2944));
        assert!(!t.is_io_tile(1439) && t.is_io_tile(1440) && t.is_io_tile(1471));
        assert!(!t.is_io_tile(1472) && t.is_io_tile(2943));
        assert!(!Target::gc200().is_io_tile(1471));
        let small = Target {
            io_tiles: 2,
            ..Target::custom(8, 1024)
        };
        assert_eq!(small.validate(), Ok(()));
        assert_eq!(small.io_tiles_of(0), TileRange::from(6..8));
    }

    #[test]
    fn streaming_memory_figures_are_the_m2000s() {
        let t = Target::gc200();
        assert_eq!(t.streaming_memory_bytes, 112_000_000_000);
        assert!((t.streaming_memory_bytes_per_cycle - 11.84).abs() < 0.01);
    }

    /// The global sync of the presets: the assumed internal sync (150) plus the early
    /// IPUModel's 15 ns per hop there and back over 1 + chips/4 hops, rounded up: at 1.33 GHz
    /// one hop is 2 × 19.95 = 39.9 cycles.
    #[test]
    fn global_sync_grows_with_the_chips_as_the_early_model_gives_it() {
        for (chips, hops) in [(1u32, 1.0f64), (2, 1.0), (4, 2.0), (16, 5.0), (64, 17.0)] {
            let want = (39.9 * hops).ceil() as u32;
            assert_eq!(sync_latency_cycles(chips, 1.33e9), want, "{chips} chips");
            assert_eq!(Target::gc200_multi(chips).global_sync_cycles, 150 + want);
        }
        assert_eq!(Target::pod16().global_sync_cycles, 350);
        assert_eq!(Target::pod64().global_sync_cycles, 150 + 679);
        // A Bow at 1.85 GHz: 15 ns is 27.75 cycles, so 55.5 per hop; its internal sync is the
        // GC200's cycles.
        assert_eq!(Target::bow_multi(16).global_sync_cycles, 150 + 278);
        assert_eq!(Target::bow().global_sync_cycles, 150 + 56);
    }

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

    #[test]
    fn link_domains_are_bounded_and_hops_cross_them() {
        for t in [
            Target::ipu_machine(),
            Target::pod16(),
            Target::pod64(),
            Target::pods(4, 16),
            Target::pods(2, 64),
        ] {
            assert_eq!(t.validate(), Ok(()));
        }
        let bad = Target {
            chips_per_link_domain: 24,
            ..Target::pod64()
        };
        assert_eq!(bad.validate().unwrap_err().field, "chips_per_link_domain");
        let bad = Target {
            gw_link_bytes_per_cycle: f64::NAN,
            ..Target::pod64()
        };
        assert_eq!(bad.validate().unwrap_err().field, "gw_link_bytes_per_cycle");

        let t = Target::pods(4, 16);
        assert_eq!(t.num_ipus, 64);
        assert_eq!((t.domain_of(15), t.domain_of(16)), (0, 1));
        // Inside a Pod: the ladder. Chip 3 of Pod 0 to chip 3 of Pod 1: one GW hop, no
        // IPU-Link hop; to Pod 3, one GW hop the other way round the ring of Pods.
        assert_eq!((t.hops(0, 3), t.gw_hops(0, 3)), (2, 0));
        assert_eq!((t.hops(3, 19), t.gw_hops(3, 19)), (0, 1));
        assert_eq!(t.gw_hops(3, 51), 1);
        assert_eq!(t.gw_hops(3, 35), 2);
        assert_eq!((t.hops(0, 21), t.gw_hops(0, 21)), (3, 1));
        // One domain: no GW hop anywhere.
        let p = Target::pod64();
        assert_eq!(p.gw_hops(0, 63), 0);
        assert_eq!(p.hops(0, 63), 32);
        // The link constants are the public figures at the chip clock: 2 links of 16 GB/s
        // along a rail at the early IPUModel's efficiency 0.85, 27.2 GB/s, over 1.33 GHz.
        assert!((p.link_bytes_per_cycle - 27.2 / 1.33).abs() < 1e-9);
        assert!((p.link_bytes_per_cycle - 20.45).abs() < 0.01);
        assert!((p.gw_link_bytes_per_cycle - 4.70).abs() < 0.01);
    }
}
