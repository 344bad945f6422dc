//! Tile numbers: [`TileId`], one tile of a target, and [`TileRange`], a run of them.

use serde::{Deserialize, Serialize};

#[cfg(doc)]
use super::Target;

/// Identifies one tile of the target: `0..num_tiles()`, chip-major.
///
/// A newtype, so that a tile cannot be confused with a chip, a worker or a byte count: a
/// [`TileMap`](crate::entity::TileMap) is indexed by `TileId` only. Calls that take a tile take
/// `impl Into<TileId>`, so a literal still reads naturally (`graph.set_tile_mapping(&t, 3)`),
/// and [`TileId::range`] walks a run of tiles. It prints and serializes as its number.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TileId(u32);

impl TileId {
    /// The tile with this number.
    #[inline]
    pub const fn new(n: u32) -> TileId {
        TileId(n)
    }

    /// The tile's number.
    #[inline]
    pub const fn as_u32(self) -> u32 {
        self.0
    }

    /// The tile's number as an index into a per-tile table.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The tile `n` places after this one.
    #[inline]
    pub const fn offset(self, n: u32) -> TileId {
        TileId(self.0 + n)
    }

    /// Every tile from `start` up to, not including, `end`.
    pub fn range(start: impl Into<TileId>, end: impl Into<TileId>) -> TileRange {
        TileRange {
            start: start.into(),
            end: end.into(),
        }
    }
}

/// A run of consecutive tiles, `start..end` (end excluded): what [`Target::tiles`],
/// [`Target::tiles_of`] and [`Target::io_tiles_of`] return and what a linear mapping spreads
/// over. A `Range<u32>` of tile numbers converts into one (`graph.map_linearly_over(&t, 8, 0..4)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TileRange {
    /// The first tile.
    pub start: TileId,
    /// The tile after the last.
    pub end: TileId,
}

impl TileRange {
    /// The number of tiles.
    pub fn len(&self) -> usize {
        self.end.0.saturating_sub(self.start.0) as usize
    }

    /// Whether the range holds no tile.
    pub fn is_empty(&self) -> bool {
        self.end.0 <= self.start.0
    }

    /// Whether `tile` is in the range.
    pub fn contains(&self, tile: impl Into<TileId>) -> bool {
        let t = tile.into();
        self.start <= t && t < self.end
    }

    /// The tiles in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = TileId> + ExactSizeIterator + Clone {
        (self.start.0..self.end.0).map(TileId)
    }
}

impl IntoIterator for TileRange {
    type Item = TileId;
    type IntoIter = std::iter::Map<std::ops::Range<u32>, fn(u32) -> TileId>;
    fn into_iter(self) -> Self::IntoIter {
        (self.start.0..self.end.0).map(TileId as fn(u32) -> TileId)
    }
}

impl From<std::ops::Range<u32>> for TileRange {
    fn from(r: std::ops::Range<u32>) -> TileRange {
        TileId::range(r.start, r.end)
    }
}

impl From<std::ops::Range<TileId>> for TileRange {
    fn from(r: std::ops::Range<TileId>) -> TileRange {
        TileId::range(r.start, r.end)
    }
}

impl From<u32> for TileId {
    #[inline]
    fn from(n: u32) -> TileId {
        TileId(n)
    }
}

impl From<TileId> for u32 {
    #[inline]
    fn from(t: TileId) -> u32 {
        t.0
    }
}

impl From<TileId> for u64 {
    #[inline]
    fn from(t: TileId) -> u64 {
        u64::from(t.0)
    }
}

impl From<TileId> for usize {
    #[inline]
    fn from(t: TileId) -> usize {
        t.0 as usize
    }
}

/// `tile == 3` compares with a tile number.
impl PartialEq<u32> for TileId {
    #[inline]
    fn eq(&self, n: &u32) -> bool {
        self.0 == *n
    }
}

impl std::fmt::Debug for TileId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::fmt::Display for TileId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}
