//! Tile mapping of variable elements, stored as intervals (never one entry per element).

use std::collections::BTreeMap;
use std::ops::Range;

use crate::target::TileId;

/// Which tile owns each element of one variable: disjoint, sorted intervals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntervalMap {
    /// start -> (end, tile); intervals are disjoint and adjacent intervals on the same tile are
    /// merged.
    map: BTreeMap<u64, (u64, TileId)>,
}

impl IntervalMap {
    /// Assigns `range` to `tile`, overwriting earlier assignments of those elements.
    pub(crate) fn assign(&mut self, range: Range<u64>, tile: TileId) {
        if range.is_empty() {
            return;
        }
        let (s, e) = (range.start, range.end);
        // Split an interval straddling `s`.
        if let Some((&ps, &(pe, pt))) = self.map.range(..s).next_back() {
            if pe > s {
                self.map.insert(ps, (s, pt));
                self.map.insert(s, (pe, pt));
            }
        }
        // Split an interval straddling `e`.
        if let Some((&ps, &(pe, pt))) = self.map.range(..e).next_back() {
            if pe > e {
                self.map.insert(ps, (e, pt));
                self.map.insert(e, (pe, pt));
            }
        }
        let inside: Vec<u64> = self.map.range(s..e).map(|(&k, _)| k).collect();
        for k in inside {
            self.map.remove(&k);
        }
        let mut ns = s;
        let mut ne = e;
        if let Some((&ps, &(pe, pt))) = self.map.range(..s).next_back() {
            if pe == s && pt == tile {
                self.map.remove(&ps);
                ns = ps;
            }
        }
        if let Some(&(ne2, nt)) = self.map.get(&e) {
            if nt == tile {
                self.map.remove(&e);
                ne = ne2;
            }
        }
        self.map.insert(ns, (ne, tile));
    }

    /// The mapped pieces overlapping `range`, clipped to it, in order. Gaps are unmapped.
    pub fn pieces(&self, range: Range<u64>) -> impl Iterator<Item = (Range<u64>, TileId)> + '_ {
        let (s, e) = (range.start, range.end);
        let first = self
            .map
            .range(..=s)
            .next_back()
            .filter(|(_, &(pe, _))| pe > s)
            .map(|(&k, _)| k)
            .unwrap_or(s);
        self.map
            .range(first..e)
            .map(move |(&ps, &(pe, t))| (ps.max(s)..pe.min(e), t))
            .filter(|(r, _)| !r.is_empty())
    }

    /// All intervals in order.
    pub fn iter(&self) -> impl Iterator<Item = (Range<u64>, TileId)> + '_ {
        self.map.iter().map(|(&s, &(e, t))| (s..e, t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces with plain tile numbers, to compare with literals.
    fn plain(pieces: impl Iterator<Item = (Range<u64>, TileId)>) -> Vec<(Range<u64>, u32)> {
        pieces.map(|(r, t)| (r, t.as_u32())).collect()
    }

    #[test]
    fn assign_splits_and_merges() {
        let mut m = IntervalMap::default();
        m.assign(0..100, TileId::new(1));
        m.assign(10..20, TileId::new(2));
        assert_eq!(plain(m.iter()), vec![(0..10, 1), (10..20, 2), (20..100, 1)]);
        m.assign(10..20, TileId::new(1));
        assert_eq!(plain(m.iter()), vec![(0..100, 1)]);
        m.assign(90..120, TileId::new(3));
        assert_eq!(plain(m.iter()), vec![(0..90, 1), (90..120, 3)]);
        assert_eq!(plain(m.pieces(85..95)), vec![(85..90, 1), (90..95, 3)]);
        assert_eq!(m.pieces(200..300).count(), 0);
        let mapped: u64 = m.iter().map(|(r, _)| r.end - r.start).sum();
        assert_eq!(mapped, 120);
    }

    #[test]
    fn pieces_reports_gaps_by_omission() {
        let mut m = IntervalMap::default();
        m.assign(0..5, TileId::new(0));
        m.assign(8..10, TileId::new(1));
        assert_eq!(plain(m.pieces(0..10)), vec![(0..5, 0), (8..10, 1)]);
    }
}
