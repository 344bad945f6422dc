//! Lowering the transfers to and from Streaming Memory: remote-buffer copies (`[Sync,
//! Remote]`) and overlapped I/O (`[Sync, OverlapIo, Sync]`, its transfers without syncs).

use super::{u32_of, Lowerer};
use crate::exe::{RemoteDir, RowSelect, ScalarLoc, Step, SyncKind};
use crate::graph::program::Program;
use crate::graph::Tensor;

impl Lowerer<'_> {
    /// `io` overlapped with `compute`, between two syncs.
    pub(crate) fn overlap_io(&mut self, io: &Program, compute: &Program) -> Step {
        let sync = Step::Sync(self.sync_of_chips());
        Step::Seq(vec![
            sync.clone(),
            Step::OverlapIo {
                // The transfers follow each other on the I/O tiles, which the sync before has
                // joined; the compute tiles never wait for them.
                io: Box::new(without_syncs(self.program(io))),
                compute: Box::new(self.program(compute)),
            },
            sync,
        ])
    }

    /// The sync before a transfer: among the tiles of each chip on one chip, else of all.
    fn sync_of_chips(&self) -> SyncKind {
        if self.graph.target.num_ipus == 1 {
            SyncKind::Internal
        } else {
            SyncKind::Global
        }
    }

    /// `[Sync, Remote]`: a copy between `t` and rows of `buffer` (validated: `t` holds whole
    /// rows on the buffer's chip; `offset`, if any, one `i32`/`u32` entry per row).
    pub(crate) fn remote(
        &mut self,
        buffer: crate::graph::RemoteBuffer,
        t: &Tensor,
        offset: Option<&Tensor>,
        dir: RemoteDir,
    ) -> Step {
        let b = &self.graph.remote_buffers[buffer.key()];
        let rows = match offset {
            None => RowSelect::Consecutive {
                first: 0,
                count: t.num_elements() as u64 / b.elements,
            },
            Some(o) => {
                let size = o.dtype.size() as u64;
                RowSelect::Offsets(
                    self.pieces(o)
                        .iter()
                        .flat_map(|p| {
                            (0..p.len).map(move |e| ScalarLoc {
                                tile: p.tile,
                                offset: u32_of(p.offset + e * size),
                                dtype: o.dtype,
                            })
                        })
                        .collect(),
                )
            }
        };
        let id = crate::exe::RemoteCopyId::from_u32(self.remote_copies.len() as u32);
        self.remote_copies.push(crate::exe::RemoteCopy {
            buffer: crate::exe::RemoteBufferId::from_u32(buffer.index()),
            dir,
            rows,
            runs: self.runs(t),
        });
        // The buffer's chip alone takes part: its tiles sync among themselves.
        Step::Seq(vec![Step::Sync(SyncKind::Internal), Step::Remote(id)])
    }
}

/// `s` (a sequence of transfers) without its syncs.
fn without_syncs(s: Step) -> Step {
    match s {
        Step::Seq(v) => Step::Seq(
            v.into_iter()
                .filter(|s| !matches!(s, Step::Sync(_)))
                .map(without_syncs)
                .collect(),
        ),
        s => s,
    }
}
