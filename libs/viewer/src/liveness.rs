//! Liveness: how many bytes of each tile's temporary area a phase uses.
//!
//! A tile's memory is its always-live area (variables, constants, vertex state, code, receive
//! slack) followed, from the next aligned address, by the temporaries of the superstep that is
//! running: receive buffers, gathers and staging. The compiler places each superstep's
//! temporaries in that area and keeps only their peak ([`TileImage::temporary_bytes`]); the
//! executable still says where every access of every phase lands, so the bytes a phase touches
//! above the always-live area are its temporaries' high-water mark. Their maximum over phases
//! is at most the compiler's peak (equal where the last buffer placed is touched; alignment
//! padding after it is not).
//!
//! [`TileImage::temporary_bytes`]: poplar_exe::exe::TileImage::temporary_bytes

use std::collections::BTreeMap;

use poplar_core::codelet::FieldShape;
use poplar_exe::exe::{ComputePhase, ExchangePhase, Executable};

/// Per phase, per tile (only tiles that use any): temporary bytes in use.
pub struct PhaseTemporaries {
    pub computes: Vec<BTreeMap<u64, u64>>,
    pub exchanges: Vec<BTreeMap<u64, u64>>,
}

/// Start of each tile's temporary area.
fn bases(exe: &Executable) -> Vec<u64> {
    let align = u64::from(exe.target.alignment.max(1));
    exe.tiles
        .iter()
        .map(|t| u64::from(t.always_live_bytes).next_multiple_of(align))
        .collect()
}

struct Acc<'a> {
    base: &'a [u64],
    used: BTreeMap<u64, u64>,
}

impl Acc<'_> {
    fn touch(&mut self, tile: u32, offset: u32, bytes: u64) {
        let Some(&base) = self.base.get(tile as usize) else {
            return;
        };
        let end = u64::from(offset) + bytes;
        if bytes > 0 && end > base {
            let e = self.used.entry(u64::from(tile)).or_default();
            *e = (*e).max(end - base);
        }
    }
}

fn compute(exe: &Executable, base: &[u64], phase: &ComputePhase) -> BTreeMap<u64, u64> {
    let mut acc = Acc {
        base,
        used: BTreeMap::new(),
    };
    for tc in &phase.tiles {
        for c in tc.pre_copies.iter().chain(&tc.post_copies) {
            acc.touch(tc.tile.as_u32(), c.src, u64::from(c.bytes));
            acc.touch(tc.tile.as_u32(), c.dst, u64::from(c.bytes));
        }
        for v in &tc.vertices {
            let Some(codelet) = exe.codelets.get(v.codelet) else {
                continue;
            };
            for (kind, loc) in codelet.fields.iter().zip(&v.fields) {
                let size = kind.dtype.size() as u64;
                match kind.shape {
                    FieldShape::Scalar | FieldShape::Vector => {
                        acc.touch(tc.tile.as_u32(), loc.offset, u64::from(loc.len) * size);
                    }
                    FieldShape::VectorList => {
                        let from = loc.offset as usize;
                        let to = from.saturating_add(loc.len as usize).min(v.lists.len());
                        for sub in v.lists.get(from..to).unwrap_or(&[]) {
                            acc.touch(tc.tile.as_u32(), sub.offset, u64::from(sub.len) * size);
                        }
                    }
                }
            }
        }
    }
    acc.used
}

fn exchange(base: &[u64], phase: &ExchangePhase) -> BTreeMap<u64, u64> {
    let mut acc = Acc {
        base,
        used: BTreeMap::new(),
    };
    for tr in &phase.transfers {
        let b = u64::from(tr.bytes);
        acc.touch(tr.src_tile.as_u32(), tr.src_offset, b);
        for &(d, off) in &tr.dsts {
            acc.touch(d.as_u32(), off, b);
        }
    }
    acc.used
}

/// The temporaries every phase of `exe` uses, per tile.
pub fn phase_temporaries(exe: &Executable) -> PhaseTemporaries {
    let base = bases(exe);
    PhaseTemporaries {
        computes: exe
            .computes
            .values()
            .map(|c| compute(exe, &base, c))
            .collect(),
        exchanges: exe.exchanges.values().map(|x| exchange(&base, x)).collect(),
    }
}
