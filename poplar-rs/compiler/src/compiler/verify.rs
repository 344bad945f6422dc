//! Verifiers run between the compiler's passes: each checks invariants of one pass's output
//! that later passes rely on, and reports a typed [`VerifierError`] naming the pass, the tile
//! and the entity at fault. A verifier failure is a compiler bug, never a user error; they run
//! when `CompileOptions::verify` is on (the default), except the final check of the executable,
//! which always runs.

use std::collections::BTreeMap;

use super::error::{Pass, VerifierError};
use super::in_place::InPlace;
use super::layout::Layout;
use crate::entity::TileMap;
use crate::exe::{Executable, Step};
use crate::graph::Graph;
use crate::target::TileId;

fn err(pass: Pass, tile: Option<TileId>, entity: Option<String>, reason: String) -> VerifierError {
    VerifierError {
        pass,
        tile,
        entity,
        reason,
    }
}

/// After layout: every variable element has exactly one location, and no two always-live
/// allocations of a tile overlap or lie beyond its always-live area, counting the receive slack
/// reserved before and after each segment (slack is never part of another allocation).
pub(crate) fn layout(graph: &Graph, layout: &Layout) -> Result<(), VerifierError> {
    let mut per_tile: TileMap<Vec<(u64, u64, String)>> =
        TileMap::filled(graph.target.num_tiles(), Vec::new());
    for (k, (vi, segs)) in layout.segs.iter().enumerate() {
        let var = &graph.vars[vi];
        let entity = || Some(format!("variable '{}'", var.name));
        let slack = layout.slack.get(k);
        let mut next = 0;
        for (j, s) in segs.iter().enumerate() {
            if s.start != next {
                return Err(err(
                    Pass::Layout,
                    Some(s.tile),
                    entity(),
                    format!("gap at element {next}"),
                ));
            }
            if s.offset % layout.align != 0 {
                return Err(err(
                    Pass::Layout,
                    Some(s.tile),
                    entity(),
                    format!(
                        "segment at offset {} is not {}-byte aligned",
                        s.offset, layout.align
                    ),
                ));
            }
            next = s.end;
            let sl = slack.and_then(|v| v.get(j)).copied().unwrap_or_default();
            if sl.before > s.offset {
                return Err(err(
                    Pass::Layout,
                    Some(s.tile),
                    entity(),
                    format!("{} bytes of slack before offset {}", sl.before, s.offset),
                ));
            }
            per_tile[s.tile].push((
                s.offset - sl.before,
                s.offset + (s.end - s.start) * var.dtype.size() as u64 + sl.after,
                var.name.clone(),
            ));
        }
        if next != var.len {
            return Err(err(
                Pass::Layout,
                None,
                entity(),
                format!("segments cover {next} of {} elements", var.len),
            ));
        }
    }
    for (t, v) in per_tile.iter_mut() {
        v.sort_unstable();
        if let Some(w) = v.windows(2).find(|w| w[0].1 > w[1].0) {
            return Err(err(
                Pass::Layout,
                Some(t),
                Some(format!("variables '{}' and '{}'", w[0].2, w[1].2)),
                format!(
                    "allocations {}..{} and {}..{} overlap",
                    w[0].0, w[0].1, w[1].0, w[1].1
                ),
            ));
        }
        if let Some(l) = v.last().filter(|l| l.1 > layout.tiles[t].next) {
            return Err(err(
                Pass::Layout,
                Some(t),
                Some(format!("variable '{}'", l.2)),
                "allocation beyond the always-live area".into(),
            ));
        }
    }
    Ok(())
}

/// After the in-place pre-pass: one slack entry per segment, each a whole number of the
/// variable's elements (the exchange writes elements into it), and every anchor on a segment
/// of its own tile.
pub(crate) fn in_place(
    graph: &Graph,
    layout: &Layout,
    in_place: &InPlace,
) -> Result<(), VerifierError> {
    let slack = &in_place.slack;
    if slack.is_empty() {
        return Ok(());
    }
    if slack.len() != layout.segs.len() {
        return Err(err(
            Pass::InPlace,
            None,
            None,
            format!(
                "slack for {} variables, the graph has {}",
                slack.len(),
                layout.segs.len()
            ),
        ));
    }
    for ((tile, _), a) in &in_place.anchors {
        let seg = layout
            .segs
            .values()
            .nth(a.var)
            .and_then(|segs| segs.get(a.seg));
        if seg.is_none_or(|g| g.tile != *tile) {
            return Err(err(
                Pass::InPlace,
                Some(*tile),
                Some(format!("variable {} segment {}", a.var, a.seg)),
                "an anchor names a segment that is not on its tile".into(),
            ));
        }
    }
    for ((vi, segs), sl) in layout.segs.iter().zip(slack) {
        let var = &graph.vars[vi];
        if segs.len() != sl.len() {
            return Err(err(
                Pass::InPlace,
                None,
                Some(format!("variable '{}'", var.name)),
                format!("{} slack entries for {} segments", sl.len(), segs.len()),
            ));
        }
        let size = var.dtype.size() as u64;
        for (s, k) in segs.iter().zip(sl) {
            if k.before % size != 0 || k.after % size != 0 {
                return Err(err(
                    Pass::InPlace,
                    Some(s.tile),
                    Some(format!("variable '{}'", var.name)),
                    format!(
                        "slack {}+{} bytes is not whole elements of {size} bytes",
                        k.before, k.after
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// After lowering: every phase a step names exists, every phase is used, and the exchange
/// destinations of a phase do not overlap (before the images are built).
pub(crate) fn lower(
    programs: &[Step],
    functions: &[Step],
    computes: usize,
    exchanges: usize,
) -> Result<(), VerifierError> {
    fn walk(s: &Step, f: &mut impl FnMut(&Step)) {
        f(s);
        for c in s.children() {
            walk(c, f);
        }
    }
    let mut used: BTreeMap<(&str, u32), u32> = BTreeMap::new();
    let mut bad = None;
    for s in programs.iter().chain(functions) {
        walk(s, &mut |s| match s {
            Step::Compute(i) => {
                *used.entry(("compute", i.as_u32())).or_default() += 1;
                if i.as_u32() as usize >= computes {
                    bad = Some(format!("compute phase {}", i.as_u32()));
                }
            }
            Step::Exchange(i) => {
                *used.entry(("exchange", i.as_u32())).or_default() += 1;
                if i.as_u32() as usize >= exchanges {
                    bad = Some(format!("exchange phase {}", i.as_u32()));
                }
            }
            _ => {}
        });
    }
    if let Some(b) = bad {
        return Err(err(
            Pass::Lower,
            None,
            Some(b),
            "named by a step but never created".into(),
        ));
    }
    for (kind, n) in [("compute", computes), ("exchange", exchanges)] {
        if let Some(i) = (0..n as u32).find(|i| !used.contains_key(&(kind, *i))) {
            return Err(err(
                Pass::Lower,
                None,
                Some(format!("{kind} phase {i}")),
                "created but never named by a step".into(),
            ));
        }
    }
    Ok(())
}

/// After the images: each tile allocates its always-live area plus its temporaries.
pub(crate) fn images(exe: &Executable) -> Result<(), VerifierError> {
    for (t, img) in exe.tiles.iter().enumerate() {
        if u64::from(img.memory_bytes)
            < u64::from(img.always_live_bytes) + u64::from(img.temporary_bytes)
        {
            return Err(err(
                Pass::Images,
                Some(TileId::new(t as u32)),
                None,
                format!(
                    "memory {} < always-live {} + temporaries {}",
                    img.memory_bytes, img.always_live_bytes, img.temporary_bytes
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::layout::Slack;
    use super::*;
    use crate::exe::{ComputePhaseId, ExchangePhaseId};

    /// Two variables on tile 1, laid out; then the layout is corrupted three ways.
    #[test]
    fn a_broken_layout_is_caught_naming_the_pass_tile_and_variable() {
        let mut g = crate::graph::Graph::new(&crate::target::Target::custom(2, 4096));
        let a = g.add_variable(crate::dtype::DType::F32, &[8], "a");
        let b = g.add_variable(crate::dtype::DType::F32, &[8], "b");
        g.set_tile_mapping(&a, 1).unwrap();
        g.set_tile_mapping(&b, 1).unwrap();
        let segs = super::super::layout::segments(&g);
        let good = super::super::layout::layout(&g, &Default::default(), segs, &[]);
        layout(&g, &good).unwrap();
        in_place(
            &g,
            &good,
            &InPlace {
                slack: good.slack.clone(),
                anchors: Default::default(),
            },
        )
        .unwrap();

        let mut overlap = super::super::layout::layout(
            &g,
            &Default::default(),
            super::super::layout::segments(&g),
            &[],
        );
        let first = overlap.segs.keys().next().unwrap();
        let second = overlap.segs.keys().nth(1).unwrap();
        overlap.segs[second][0].offset = overlap.segs[first][0].offset + 8;
        let e = layout(&g, &overlap).unwrap_err();
        assert_eq!((e.pass, e.tile), (Pass::Layout, Some(TileId::new(1))));
        assert!(e.entity.as_deref().unwrap().contains("'a'"), "{e}");

        let mut gap = super::super::layout::layout(
            &g,
            &Default::default(),
            super::super::layout::segments(&g),
            &[],
        );
        gap.segs[first][0].end = 4;
        let e = layout(&g, &gap).unwrap_err();
        assert_eq!(e.entity.as_deref(), Some("variable 'a'"));
        assert!(e.reason.contains("cover 4 of 8"), "{e}");

        let odd = vec![
            vec![Slack {
                before: 6,
                after: 0,
            }],
            vec![Slack::default()],
        ];
        let odd = InPlace {
            slack: odd,
            anchors: Default::default(),
        };
        let e = in_place(&g, &good, &odd).unwrap_err();
        assert_eq!((e.pass, e.tile), (Pass::InPlace, Some(TileId::new(1))));
        assert!(e.to_string().contains("after pass 'in-place'"), "{e}");
    }

    #[test]
    fn a_step_naming_a_missing_phase_or_a_phase_never_used_is_caught() {
        let p = [Step::Seq(vec![
            Step::Compute(ComputePhaseId::from_u32(0)),
            Step::Exchange(ExchangePhaseId::from_u32(0)),
        ])];
        lower(&p, &[], 1, 1).unwrap();
        let e = lower(&p, &[], 1, 0).unwrap_err();
        assert_eq!(
            (e.pass, e.entity.as_deref()),
            (Pass::Lower, Some("exchange phase 0"))
        );
        let e = lower(&p, &[], 2, 1).unwrap_err();
        assert_eq!(e.entity.as_deref(), Some("compute phase 1"));
        assert!(e.to_string().contains("after pass 'lower'"), "{e}");
    }
}
