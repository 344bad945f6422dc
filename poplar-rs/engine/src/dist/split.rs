//! Which rank owns which tiles.

use crate::target::{Target, TileId, TileRange};

/// The tiles of each rank: contiguous blocks of whole chips when the target has at least as
/// many chips as there are ranks (the first `chips % ranks` ranks take one chip more), else
/// contiguous blocks of tiles (the first `tiles % ranks` take one tile more). A rank may own no
/// tile at all (more ranks than tiles); it then only takes part in the collectives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankSplit {
    /// `starts[r]..starts[r + 1]` are rank `r`'s tiles.
    starts: Vec<TileId>,
}

impl RankSplit {
    /// The split of `target`'s tiles over `ranks` ranks (at least one).
    pub fn new(target: &Target, ranks: usize) -> RankSplit {
        let ranks = ranks.max(1) as u64;
        let (units, unit) = if u64::from(target.num_ipus) >= ranks {
            (u64::from(target.num_ipus), u64::from(target.tiles_per_ipu))
        } else {
            (u64::from(target.num_tiles()), 1)
        };
        let (q, extra) = (units / ranks, units % ranks);
        let mut starts = Vec::with_capacity(ranks as usize + 1);
        let mut at = 0u64;
        for r in 0..ranks {
            starts.push(TileId::new((at * unit) as u32));
            at += q + u64::from(r < extra);
        }
        starts.push(TileId::new((at * unit) as u32));
        RankSplit { starts }
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.starts.len() - 1
    }

    /// The tiles of rank `rank`.
    pub fn tiles(&self, rank: usize) -> TileRange {
        TileId::range(self.starts[rank], self.starts[rank + 1])
    }

    /// The rank that owns `tile`.
    pub(crate) fn owner(&self, tile: TileId) -> usize {
        self.starts[1..].partition_point(|&s| s <= tile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chips_when_there_are_enough_else_tiles_and_every_tile_has_one_owner() {
        let t = Target::custom(10, 1024);
        let mut t16 = t.clone();
        t16.num_ipus = 16;
        // 16 chips of 10 tiles over 3 ranks: 6, 5, 5 chips.
        let s = RankSplit::new(&t16, 3);
        assert_eq!(
            (0..3).map(|r| s.tiles(r)).collect::<Vec<_>>(),
            [0..60, 60..110, 110..160].map(TileRange::from)
        );
        // One chip of 10 tiles over 3 ranks: 4, 3, 3 tiles.
        let s = RankSplit::new(&t, 3);
        assert_eq!(
            (0..3).map(|r| s.tiles(r)).collect::<Vec<_>>(),
            [0..4, 4..7, 7..10].map(TileRange::from)
        );
        for (target, ranks) in [(&t, 1), (&t, 2), (&t, 3), (&t, 10), (&t, 13), (&t16, 5)] {
            let s = RankSplit::new(target, ranks);
            assert_eq!(s.ranks(), ranks);
            for tile in 0..target.num_tiles() {
                let r = s.owner(tile.into());
                assert!(s.tiles(r).contains(tile), "{ranks}: tile {tile} rank {r}");
            }
            assert_eq!(s.tiles(ranks - 1).end, target.num_tiles());
        }
        // More ranks than tiles: the last ranks own nothing.
        assert!(RankSplit::new(&t, 13).tiles(12).is_empty());
    }
}
