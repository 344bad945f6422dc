//! The cycle model of transfers between tiles and the world outside the chip: copies to and
//! from remote buffers in Streaming Memory, and host streams (`docs/cycle-model.md`,
//! "Streaming Memory and host I/O").
//!
//! A transfer moves its bytes over the PCIe link of each chip it touches, at
//! `streaming_memory_bytes_per_cycle`, after a fixed `streaming_memory_latency_cycles`; a host
//! stream whose data was not prefetched (buffering depth 0) also waits
//! `host_round_trip_cycles` for the host. Chips move their shares side by side, so the
//! transfer takes as long as its busiest chip; every tile it touches waits for it.

use std::collections::BTreeMap;

use crate::exe::{Executable, MemRun, RemoteCopyId, RemoteDir, StreamDesc, StreamDir};
use crate::target::{Target, TileId};

/// What a transfer moves data between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferKind {
    /// Streaming Memory to tiles.
    RemoteRead,
    /// Tiles to Streaming Memory.
    RemoteWrite,
    /// Host to tiles.
    StreamIn,
    /// Tiles to host.
    StreamOut,
}

/// The static cost of one transfer.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferCost {
    /// `<buffer> (read)`, `<stream> (in)`, …
    pub name: String,
    pub kind: TransferKind,
    /// Tiles whose memory the transfer reads or writes, sorted, each once.
    pub tiles: Vec<TileId>,
    /// Cycles of one execution, the same for every tile it touches.
    pub cycles: u64,
    /// Of which waiting for the host (a stream copy that was not prefetched).
    pub host_wait_cycles: u64,
    pub bytes: u64,
}

/// Cycles to move `bytes_per_chip` (chip, bytes) over the chips' links, plus `host_wait`.
pub(crate) fn transfer_cycles(
    target: &Target,
    bytes_per_chip: &BTreeMap<u32, u64>,
    host_wait: u64,
) -> u64 {
    let busiest = bytes_per_chip.values().copied().max().unwrap_or(0);
    if busiest == 0 {
        return 0;
    }
    let move_cycles = (busiest as f64 / target.streaming_memory_bytes_per_cycle).ceil() as u64;
    u64::from(target.streaming_memory_latency_cycles)
        .saturating_add(move_cycles)
        .saturating_add(host_wait)
}

fn cost(
    target: &Target,
    name: String,
    kind: TransferKind,
    runs: &[MemRun],
    host_wait: u64,
) -> TransferCost {
    let mut per_chip: BTreeMap<u32, u64> = BTreeMap::new();
    let mut tiles: Vec<TileId> = runs.iter().map(|r| r.tile).collect();
    for r in runs {
        *per_chip.entry(target.ipu_of(r.tile)).or_default() += u64::from(r.bytes);
    }
    tiles.sort_unstable();
    tiles.dedup();
    let bytes = per_chip.values().sum();
    let host_wait = if bytes == 0 { 0 } else { host_wait };
    TransferCost {
        name,
        kind,
        tiles,
        cycles: transfer_cycles(target, &per_chip, host_wait),
        host_wait_cycles: host_wait,
        bytes,
    }
}

/// The cost of remote copy `id` of a flat executable.
pub(crate) fn remote_copy_cost(exe: &Executable, id: RemoteCopyId) -> TransferCost {
    let c = &exe.remote_copies[id];
    let b = &exe.remote_buffers[c.buffer];
    let (kind, what) = match c.dir {
        RemoteDir::BufferToTiles => (TransferKind::RemoteRead, "read"),
        RemoteDir::TilesToBuffer => (TransferKind::RemoteWrite, "write"),
    };
    cost(
        &exe.target,
        format!("{} ({what})", b.name),
        kind,
        &c.runs,
        0,
    )
}

/// The cost of a copy of stream `stream` into or out of `runs` in a flat executable.
pub(crate) fn stream_cost(exe: &Executable, stream: u32, runs: &[MemRun]) -> TransferCost {
    stream_copy_cost(&exe.target, &exe.streams[stream as usize], runs)
}

/// The cost of a copy of stream `s` into or out of `runs` on `target`.
pub(crate) fn stream_copy_cost(target: &Target, s: &StreamDesc, runs: &[MemRun]) -> TransferCost {
    let (kind, what) = match s.dir {
        StreamDir::HostToDevice => (TransferKind::StreamIn, "in"),
        StreamDir::DeviceToHost => (TransferKind::StreamOut, "out"),
    };
    let wait = if s.buffering_depth == 0 {
        u64::from(target.host_round_trip_cycles)
    } else {
        0
    };
    cost(target, format!("{} ({what})", s.name), kind, runs, wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transfer_is_latency_plus_bytes_over_the_busiest_chip() {
        let t = Target {
            streaming_memory_bytes_per_cycle: 12.0,
            streaming_memory_latency_cycles: 1000,
            ..Target::gc200_multi(2)
        };
        let one: BTreeMap<u32, u64> = [(0, 1200)].into();
        assert_eq!(transfer_cycles(&t, &one, 0), 1000 + 100);
        // Two chips move side by side: the busier decides.
        let two: BTreeMap<u32, u64> = [(0, 1200), (1, 2400)].into();
        assert_eq!(transfer_cycles(&t, &two, 0), 1000 + 200);
        // Waiting for the host adds to it; nothing moved costs nothing.
        assert_eq!(transfer_cycles(&t, &one, 5), 1105);
        assert_eq!(transfer_cycles(&t, &BTreeMap::new(), 5), 0);
        // A part of a cycle is a whole one.
        let odd: BTreeMap<u32, u64> = [(0, 13)].into();
        assert_eq!(transfer_cycles(&t, &odd, 0), 1002);
    }
}
