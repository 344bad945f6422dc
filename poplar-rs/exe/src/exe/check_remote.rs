//! The checks of Streaming Memory: remote buffers (names, chips, capacity) and the copies to
//! and from them, and overlapped I/O (transfers on I/O tiles only, compute off them).

use std::collections::{BTreeMap, HashSet};

use super::check::Checker;
use super::{
    CheckError, ExchangePhase, FunctionId, MemRun, RemoteCopyId, RowSelect, Step,
    MAX_TRANSFER_BYTES,
};
use crate::dtype::DType;
use crate::target::TileId;

impl Checker<'_> {
    /// Remote buffers: unique names, on a chip of the executable, within the Streaming Memory
    /// of their chip.
    pub(crate) fn check_remote_buffers(&self) -> Result<(), CheckError> {
        let t = &self.exe.target;
        let chips = self.num_tiles / t.tiles_per_ipu.max(1);
        let mut names = HashSet::new();
        let mut per_chip: BTreeMap<u32, u64> = BTreeMap::new();
        for (id, b) in self.exe.remote_buffers.iter() {
            let bad = |reason: String| CheckError::BadRemote {
                owner: format!("remote buffer '{}' ({id:?})", b.name),
                reason,
            };
            if !names.insert(b.name.as_str()) {
                return Err(CheckError::DuplicateName {
                    kind: "remote buffer",
                    name: b.name.clone(),
                });
            }
            if b.chip >= chips {
                return Err(bad(format!(
                    "on chip {}, but the executable has {chips} chips",
                    b.chip
                )));
            }
            let bytes = b
                .elements
                .checked_mul(b.dtype.size() as u64)
                .and_then(|r| r.checked_mul(b.rows))
                .ok_or_else(|| bad("its size overflows 64 bits".into()))?;
            let used = per_chip.entry(b.chip).or_default();
            *used = used.saturating_add(bytes);
            if *used > t.streaming_memory_bytes {
                return Err(bad(format!(
                    "the remote buffers of chip {} need {} bytes; its Streaming Memory holds {}",
                    b.chip, used, t.streaming_memory_bytes
                )));
            }
        }
        Ok(())
    }

    /// A copy: its buffer exists, its rows lie in the buffer, its tile side has exactly the
    /// rows' bytes on the buffer's chip, and one transfer moves at most 128 MiB.
    pub(crate) fn check_remote_copy(
        &self,
        owner: &str,
        id: RemoteCopyId,
    ) -> Result<(), CheckError> {
        let c = &self.exe.remote_copies[id];
        let what = format!("{owner}: remote copy {id:?}");
        let bad = |reason: String| CheckError::BadRemote {
            owner: what.clone(),
            reason,
        };
        let Some(b) = self.exe.remote_buffers.get(c.buffer) else {
            return Err(bad(format!("buffer {:?} does not exist", c.buffer)));
        };
        let size = b.dtype.size() as u64;
        let total = self.check_runs(&what, &c.runs, size)?;
        let expected = c.rows.count().saturating_mul(b.row_bytes());
        if total != expected {
            return Err(CheckError::RunTotal {
                owner: what,
                expected,
                found: total,
            });
        }
        if total > MAX_TRANSFER_BYTES {
            return Err(bad(format!(
                "moves {total} bytes; one transfer moves at most {MAX_TRANSFER_BYTES}"
            )));
        }
        match &c.rows {
            RowSelect::Consecutive { first, count } => {
                if first.checked_add(*count).is_none_or(|end| end > b.rows) {
                    return Err(bad(format!(
                        "rows {first}..{first}+{count} exceed the {} rows of '{}'",
                        b.rows, b.name
                    )));
                }
            }
            RowSelect::Offsets(offsets) => {
                for o in offsets {
                    self.check_scalar(&what, "row offset", o)?;
                    if o.dtype == DType::Bool {
                        return Err(bad("a row offset must be i32 or u32".into()));
                    }
                }
            }
        }
        let tpi = self.exe.target.tiles_per_ipu;
        if let Some(r) = c.runs.iter().find(|r| r.tile.as_u32() / tpi != b.chip) {
            return Err(bad(format!(
                "tile {} is on chip {}, but '{}' is in the Streaming Memory of chip {}",
                r.tile,
                r.tile.as_u32() / tpi,
                b.name,
                b.chip
            )));
        }
        Ok(())
    }

    /// Overlapped I/O: `io` holds only transfers (streams and remote copies) whose tile side
    /// is on I/O tiles, and `compute` touches no I/O tile, so they share no data.
    pub(crate) fn check_overlap_io(
        &self,
        owner: &str,
        io: &Step,
        compute: &Step,
    ) -> Result<(), CheckError> {
        let t = &self.exe.target;
        let bad = |reason: String| CheckError::BadOverlapIo {
            owner: owner.to_string(),
            reason,
        };
        if t.io_tiles == 0 {
            return Err(bad("the target reserves no I/O tiles".into()));
        }
        let mut io_runs = Vec::new();
        self.transfer_runs(io, &mut io_runs)
            .map_err(|kind| bad(format!("the I/O part holds a {kind} step")))?;
        let mut seen = HashSet::new();
        if let Some(r) = io_runs.iter().find(|r| !t.is_io_tile(r.tile)) {
            return Err(bad(format!(
                "a transfer reaches tile {}, not an I/O tile",
                r.tile
            )));
        }
        if let Some(tile) = self.first_io_tile_touched(compute, &mut seen) {
            return Err(bad(format!("the compute part touches I/O tile {tile}")));
        }
        Ok(())
    }

    /// The tile-side runs of the transfers in `s`; `Err` names a step kind that is not a
    /// transfer.
    fn transfer_runs<'s>(
        &'s self,
        s: &'s Step,
        out: &mut Vec<&'s MemRun>,
    ) -> Result<(), &'static str> {
        match s {
            Step::Seq(v) => v.iter().try_for_each(|s| self.transfer_runs(s, out)),
            Step::Sync(_) => Ok(()),
            Step::StreamIn { runs, .. } | Step::StreamOut { runs, .. } => {
                out.extend(runs);
                Ok(())
            }
            Step::Remote(i) => {
                let c = &self.exe.remote_copies[*i];
                out.extend(&c.runs);
                match &c.rows {
                    // The offsets are read by the transfer: they must sit on I/O tiles too.
                    RowSelect::Offsets(o)
                        if o.iter().any(|o| !self.exe.target.is_io_tile(o.tile)) =>
                    {
                        Err("row offset read off the I/O tiles, in a remote copy")
                    }
                    _ => Ok(()),
                }
            }
            Step::Compute(_) => Err("compute"),
            Step::Exchange(_) => Err("exchange"),
            _ => Err("control-flow"),
        }
    }

    /// The first I/O tile that a step of `s` reads or writes, if any (each called function
    /// is looked into once: `seen`).
    fn first_io_tile_touched(&self, s: &Step, seen: &mut HashSet<FunctionId>) -> Option<TileId> {
        let t = &self.exe.target;
        let io = |tile: TileId| t.is_io_tile(tile).then_some(tile);
        let runs = |r: &[MemRun]| r.iter().find_map(|r| io(r.tile));
        let exchange = |x: &ExchangePhase| {
            x.transfers
                .iter()
                .find_map(|tr| io(tr.src_tile).or_else(|| tr.dsts.iter().find_map(|&(d, _)| io(d))))
        };
        match s {
            Step::Compute(i) => self.exe.computes[*i].tiles.iter().find_map(|c| io(c.tile)),
            Step::Exchange(i) => exchange(&self.exe.exchanges[*i]),
            Step::StreamIn { runs: r, .. } | Step::StreamOut { runs: r, .. } => runs(r),
            Step::Remote(i) => runs(&self.exe.remote_copies[*i].runs),
            Step::Call(f) => match seen.insert(*f) {
                true => self.first_io_tile_touched(&self.exe.functions[*f], seen),
                false => None,
            },
            Step::While { predicate: p, .. }
            | Step::If { predicate: p, .. }
            | Step::Switch { control: p, .. }
                if t.is_io_tile(p.tile) =>
            {
                Some(p.tile)
            }
            _ => s
                .children()
                .into_iter()
                .find_map(|c| self.first_io_tile_touched(c, seen)),
        }
    }
}
