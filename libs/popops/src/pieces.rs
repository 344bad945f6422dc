//! How the element-wise functions spread work: the tile mapping of the output, each tile's
//! elements split between its worker contexts.

use std::ops::Range;

use codelets::cycles::data_path_width;
use poplar_compiler::graph::{Graph, Tensor};
use poplar_core::codelet::lookup;
use poplar_core::dtype::DType;
use poplar_core::target::TileId;

use crate::error::{shape_err, OpError};

/// The templated codelet name `"{op}<{type}>"`, if registered.
pub fn codelet_name(op: &str, dtype: DType) -> Result<String, OpError> {
    codelets::link();
    let name = format!("{op}<{}>", dtype.poplar_name());
    match lookup(&name) {
        Some(_) => Ok(name),
        None => Err(OpError::Unsupported { codelet: name }),
    }
}

/// The tile mapping of `t` as `(tile, flat range)` pieces; every element must be mapped.
pub fn mapped_regions(
    graph: &Graph,
    t: &Tensor,
    op: &str,
) -> Result<Vec<(TileId, Range<usize>)>, OpError> {
    let mapping = graph.tile_mapping(t)?;
    let mut out = Vec::new();
    let mut covered = 0;
    for (tile, ranges) in mapping.into_iter().enumerate() {
        for r in ranges {
            covered += r.len();
            out.push((TileId::new(tile as u32), r));
        }
    }
    if covered != t.num_elements() {
        return Err(shape_err(
            op,
            format!(
                "only {covered} of the {} elements of the output are mapped to tiles",
                t.num_elements()
            ),
        ));
    }
    Ok(out)
}
/// Splits one tile's `regions` (flat element ranges, in order) between `workers` worker
/// contexts, in the manner of popops' `splitRegionsBetweenWorkers`: at most `workers` groups
/// of consecutive elements, each a multiple of `grain` elements (but for the last) and, when
/// there are enough elements, at least `min` of them; a group that crosses the end of a region
/// has one range per region. Every element is in exactly one range, in order.
pub fn split_between_workers(
    regions: &[Range<usize>],
    workers: usize,
    grain: usize,
    min: usize,
) -> Vec<Vec<Range<usize>>> {
    let total: usize = regions.iter().map(|r| r.len()).sum();
    if total == 0 {
        return Vec::new();
    }
    let grain = grain.max(1);
    let groups = total.div_ceil(min.max(1)).clamp(1, workers.max(1));
    let per = total.div_ceil(groups).div_ceil(grain) * grain;
    let mut out: Vec<Vec<Range<usize>>> = Vec::new();
    let mut left = 0; // elements the current group can still take
    for r in regions {
        let mut at = r.start;
        while at < r.end {
            if left == 0 {
                out.push(Vec::new());
                left = per;
            }
            let end = (at + left).min(r.end);
            out.last_mut().expect("a group").push(at..end);
            left -= end - at;
            at = end;
        }
    }
    out
}

/// The pieces of `t`'s tile mapping that single-worker vertices take: per tile, its regions
/// split between the target's workers ([`split_between_workers`], 64-bit grains, at least two
/// of them per piece).
pub fn worker_pieces(
    graph: &Graph,
    t: &Tensor,
    op: &str,
) -> Result<Vec<(TileId, Range<usize>)>, OpError> {
    let workers = graph.target().workers_per_tile as usize;
    let grain = data_path_width(t.dtype()) as usize;
    let mut out = Vec::new();
    let regions = mapped_regions(graph, t, op)?;
    let mut i = 0;
    while i < regions.len() {
        let tile = regions[i].0;
        let n = regions[i..].iter().take_while(|r| r.0 == tile).count();
        let ranges: Vec<Range<usize>> = regions[i..i + n].iter().map(|r| r.1.clone()).collect();
        for group in split_between_workers(&ranges, workers, grain, 2 * grain) {
            out.extend(group.into_iter().map(|r| (tile, r)));
        }
        i += n;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::split_between_workers;

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // lists of ranges that happen to hold one
    fn regions_split_between_workers() {
        // 100 floats on one region: 6 pieces of 18 (whole vectors) but the last.
        let g = split_between_workers(&[0..100], 6, 2, 4);
        let lens: Vec<usize> = g.iter().map(|p| p.iter().map(|r| r.len()).sum()).collect();
        assert_eq!(lens, [18, 18, 18, 18, 18, 10]);
        assert_eq!(g[1], [18..36]);
        // Few elements: fewer pieces, at least `min` each but for the last.
        let g = split_between_workers(&[10..15], 6, 2, 4);
        assert_eq!(g, [vec![10..14], vec![14..15]]);
        // Pieces cross region ends: 2 regions of 7, 3 workers, grain 1.
        let g = split_between_workers(&[0..7, 20..27], 3, 1, 1);
        assert_eq!(g, [vec![0..5], vec![5..7, 20..23], vec![23..27]]);
        assert!(split_between_workers(&[3..3], 6, 2, 4).is_empty());
        // One worker: everything in one piece.
        assert_eq!(split_between_workers(&[0..9], 1, 4, 8), [vec![0..9]]);
    }
}
