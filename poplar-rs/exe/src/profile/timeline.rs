//! The profile's timeline: its tracks (labels, then groups of tiles per chip) and the builder
//! that turns the replayed steps into spans on them.

use std::collections::HashMap;

use super::data::*;

/// The timeline's tracks: track 0 for labels, then groups of consecutive tiles of each chip.
#[inline]
pub(crate) fn timeline_layout(target: &crate::target::Target, max_tracks: u32) -> Timeline {
    let (chips, tpi) = (target.num_ipus, target.tiles_per_ipu.max(1));
    let per_chip = (max_tracks.max(1) / chips.max(1)).clamp(1, tpi);
    let group = tpi.div_ceil(per_chip);
    let mut tracks = vec![Track {
        name: "labels".into(),
        chip: None,
        first_tile: 0,
        last_tile: target.num_tiles().saturating_sub(1),
    }];
    for c in 0..chips {
        let mut s = 0;
        while s < tpi {
            let e = (s + group).min(tpi) - 1;
            let (first, last) = (c * tpi + s, c * tpi + e);
            tracks.push(Track {
                name: if first == last {
                    format!("tile {first}")
                } else {
                    format!("tiles {first}-{last}")
                },
                chip: Some(c),
                first_tile: first,
                last_tile: last,
            });
            s += group;
        }
    }
    Timeline {
        tracks,
        ..Timeline::default()
    }
}

/// Draws replayed phases into a [`Timeline`], one span per track per phase.
pub(crate) struct TraceBuilder<'a> {
    pub(crate) tl: &'a mut Timeline,
    pub(crate) tiles_per_ipu: usize,
    pub(crate) group: usize,
    pub(crate) per_chip: usize,
    pub(crate) lo: Vec<u64>,
    pub(crate) hi: Vec<u64>,
    pub(crate) touched: Vec<u32>,
    pub(crate) names: HashMap<String, u32>,
    /// Open labels: (name index, start).
    pub(crate) open: Vec<(u32, u64)>,
}

impl<'a> TraceBuilder<'a> {
    #[inline]
    pub(crate) fn new(target: &crate::target::Target, tl: &'a mut Timeline) -> TraceBuilder<'a> {
        let tracks = tl.tracks.len().saturating_sub(1);
        let tpi = target.tiles_per_ipu.max(1) as usize;
        let per_chip = tracks / target.num_ipus.max(1) as usize;
        let group = tpi.div_ceil(per_chip.max(1));
        let names = tl
            .names
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i as u32))
            .collect();
        TraceBuilder {
            tl,
            tiles_per_ipu: tpi,
            group,
            per_chip,
            lo: vec![u64::MAX; tracks],
            hi: vec![0; tracks],
            touched: Vec::new(),
            names,
            open: Vec::new(),
        }
    }

    #[inline]
    pub(crate) fn tile(&mut self, tile: usize, start: u64, end: u64) {
        if end <= start {
            return;
        }
        let (c, t) = (tile / self.tiles_per_ipu, tile % self.tiles_per_ipu);
        let g = c * self.per_chip + t / self.group;
        if self.lo[g] == u64::MAX {
            self.touched.push(g as u32);
        }
        self.lo[g] = self.lo[g].min(start);
        self.hi[g] = self.hi[g].max(end);
    }

    #[inline]
    pub(crate) fn name(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.names.get(name) {
            return i;
        }
        let i = self.tl.names.len() as u32;
        self.tl.names.push(name.to_string());
        self.names.insert(name.to_string(), i);
        i
    }

    #[inline]
    pub(crate) fn flush(&mut self, kind: SpanKind, name: &str) {
        if self.touched.is_empty() {
            return;
        }
        let name = self.name(name);
        self.touched.sort_unstable();
        for &g in &self.touched {
            let g = g as usize;
            self.tl.spans.push(Span {
                track: g as u32 + 1,
                kind,
                name,
                start: self.lo[g],
                dur: self.hi[g] - self.lo[g],
            });
            self.lo[g] = u64::MAX;
            self.hi[g] = 0;
        }
        self.touched.clear();
    }

    #[inline]
    pub(crate) fn close(&mut self, end: u64) {
        if let Some((name, start)) = self.open.pop() {
            self.tl.spans.push(Span {
                track: 0,
                kind: SpanKind::Label,
                name,
                start,
                dur: end - start,
            });
        }
    }
}
