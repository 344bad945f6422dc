//! Separator layouts: the order of a tile's separator cells for each strategy
//! (`[clean | mixed | clean]` for the paper's three, grouped destination sets in a short
//! Hamming tour for `runs`).

use super::*;

/// Orders one tile's separator cells as `[clean blocks L][mixed][clean blocks R]` and returns
/// the order and the mixed block's position within it.
///
/// Why this shape: mixed-clean needs the mixed block and every destination's clean block to
/// be contiguous; ranged wants each destination's cells close together. Destinations are sorted
/// by clean-block size and dealt alternately to the left and right of the mixed block, smallest
/// innermost (a destination's enclosing range also spans the clean blocks between it and the
/// mixed block, so those should be short). Each destination gets a coordinate (−1, −2, … on the
/// left, +1, +2, … on the right) and mixed groups are sorted by the mean coordinate of their
/// destination set, so a destination's mixed cells lean towards its own clean block.
pub(super) fn separator_layout(separator: &[u32], dests: &[Vec<u32>]) -> (Vec<u32>, Range<usize>) {
    let mut clean_size: Vec<(u32, usize)> = Vec::new();
    for &c in separator {
        if let [p] = dests[c as usize][..] {
            match clean_size.iter_mut().find(|e| e.0 == p) {
                Some(e) => e.1 += 1,
                None => clean_size.push((p, 1)),
            }
        }
    }
    // Destinations that only need mixed cells still get a coordinate.
    for &c in separator {
        for &p in &dests[c as usize] {
            if !clean_size.iter().any(|e| e.0 == p) {
                clean_size.push((p, 0));
            }
        }
    }
    clean_size.sort_by_key(|&(p, size)| (size, p));
    let coord = |p: u32| -> f64 {
        let i = clean_size.iter().position(|e| e.0 == p).unwrap_or(0);
        let rank = (i / 2 + 1) as f64;
        if i % 2 == 0 {
            -rank
        } else {
            rank
        }
    };
    let key = |c: u32| -> f64 {
        let d = &dests[c as usize];
        d.iter().map(|&p| coord(p)).sum::<f64>() / d.len() as f64
    };
    let mut keyed: Vec<(f64, u32)> = separator.iter().map(|&c| (key(c), c)).collect();
    // Clean cells sit at their destination's coordinate, mixed cells at the mean; sort clean
    // blocks outside the mixed block by pushing them out by the number of destinations.
    let span = clean_size.len() as f64 + 1.0;
    for (k, c) in keyed.iter_mut() {
        if dests[*c as usize].len() == 1 {
            *k += k.signum() * span;
        }
    }
    keyed.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then_with(|| dests[a.1 as usize].cmp(&dests[b.1 as usize]))
            .then(a.1.cmp(&b.1))
    });
    let order: Vec<u32> = keyed.iter().map(|e| e.1).collect();
    let first = order.iter().position(|&c| dests[c as usize].len() >= 2);
    let mixed = match first {
        Some(a) => {
            let b = order
                .iter()
                .rposition(|&c| dests[c as usize].len() >= 2)
                .unwrap_or(a)
                + 1;
            a..b
        }
        None => {
            let left = keyed.iter().filter(|e| e.0 < 0.0).count();
            left..left
        }
    };

    // The one-sided alternative `[mixed sorted by (max D, D)][clean blocks by destination]`
    // wins on very small tiles (nearly everything mixed); keep whichever gives the shorter
    // ranged ranges. Only this tile's outgoing ranges depend on its layout, so choosing per
    // tile is optimal among the two.
    let mut one_sided: Vec<u32> = separator.to_vec();
    one_sided.sort_by(|&a, &b| {
        let (da, db) = (&dests[a as usize], &dests[b as usize]);
        let ka = (da.len() == 1, da.last(), da, a);
        let kb = (db.len() == 1, db.last(), db, b);
        ka.cmp(&kb)
    });
    let n_mixed = one_sided
        .iter()
        .take_while(|&&c| dests[c as usize].len() >= 2)
        .count();
    if ranged_cost(&one_sided, dests) < ranged_cost(&order, dests) {
        return (one_sided, 0..n_mixed);
    }
    (order, mixed)
}

/// Orders one tile's separator cells for [`Strategy::Runs`]: cells with the same destination
/// set form one group, and the groups are ordered so that consecutive groups' destination sets
/// differ little, so that each destination's cells form few runs.
///
/// A destination's runs start or end wherever the order enters or leaves a group it reads, so
/// the number of runs summed over destinations is half the summed size of the symmetric
/// differences between consecutive destination sets, with an empty set before the first group
/// and after the last. Ordering the groups is then a travelling-salesman tour through an empty
/// "depot" under that Hamming distance: nearest neighbour, then 2-opt and or-opt moves until
/// none shortens it (all deterministic).
pub(super) fn runs_layout(separator: &[u32], dests: &[Vec<u32>]) -> Vec<u32> {
    let mut sorted = separator.to_vec();
    sorted.sort_by(|&a, &b| dests[a as usize].cmp(&dests[b as usize]).then(a.cmp(&b)));
    // Groups as ranges of `sorted`; node 0 is the depot (empty set).
    let mut groups: Vec<Range<usize>> = std::iter::once(0..0).collect();
    let mut a = 0;
    while a < sorted.len() {
        let sig = &dests[sorted[a] as usize];
        let mut b = a + 1;
        while b < sorted.len() && dests[sorted[b] as usize] == *sig {
            b += 1;
        }
        groups.push(a..b);
        a = b;
    }
    let m = groups.len();
    // Up to 3 groups any order is optimal. The search below is quadratic in the groups per
    // round (or-opt cubic); tiles have tens of destination sets (at most 109 on the 0.1 mm
    // slab), so past 1,024 the sorted order stays, and or-opt runs up to 256.
    if m <= 3 || m > 1024 {
        return sorted;
    }
    let sig = |g: usize| -> &[u32] {
        if g == 0 {
            &[]
        } else {
            &dests[sorted[groups[g].start] as usize]
        }
    };
    let mut dist = vec![0u32; m * m];
    for i in 0..m {
        for j in i + 1..m {
            let d = symmetric_difference(sig(i), sig(j));
            dist[i * m + j] = d;
            dist[j * m + i] = d;
        }
    }
    let d = |i: usize, j: usize| dist[i * m + j];
    // Nearest neighbour from the depot (ties: lowest index).
    let mut tour = vec![0usize];
    let mut used = vec![false; m];
    used[0] = true;
    for _ in 1..m {
        let last = *tour.last().unwrap_or(&0);
        let next = (0..m)
            .filter(|&j| !used[j])
            .min_by_key(|&j| (d(last, j), j))
            .unwrap_or(0);
        used[next] = true;
        tour.push(next);
    }
    // 2-opt and or-opt moves on the closed tour (the depot stays at position 0), until none
    // shortens it (at most 100 rounds).
    let mut improved = true;
    let mut rounds = 0;
    while improved && rounds < 100 {
        improved = false;
        rounds += 1;
        // 2-opt: reverse tour[i+1..=j].
        for i in 0..m - 1 {
            for j in i + 2..m {
                let (a, b) = (tour[i], tour[i + 1]);
                let (c, e) = (tour[j], tour[(j + 1) % m]);
                if a != e && d(a, c) + d(b, e) < d(a, b) + d(c, e) {
                    tour[i + 1..=j].reverse();
                    improved = true;
                }
            }
        }
        // Or-opt: move the segment tour[i..i+len] (either way round) to the best other edge.
        let w = |a: usize, b: usize| i64::from(d(a, b));
        for len in (1..=3usize).filter(|_| m <= 256) {
            let mut i = 1;
            while i + len <= m {
                let (p, q) = (tour[i - 1], tour[(i + len) % m]);
                let (s0, s1) = (tour[i], tour[i + len - 1]);
                let saved = w(p, s0) + w(s1, q) - w(p, q);
                let rest: Vec<usize> = tour[..i].iter().chain(&tour[i + len..]).copied().collect();
                let mut best: Option<(i64, usize, bool)> = None;
                for k in 0..rest.len() {
                    let (x, y) = (rest[k], rest[(k + 1) % rest.len()]);
                    for reversed in [false, true] {
                        let (first, last) = if reversed { (s1, s0) } else { (s0, s1) };
                        let cost = w(x, first) + w(last, y) - w(x, y);
                        if cost < saved && best.is_none_or(|b| cost < b.0) {
                            best = Some((cost, k, reversed));
                        }
                    }
                }
                if let Some((_, k, reversed)) = best {
                    let mut segment = tour[i..i + len].to_vec();
                    if reversed {
                        segment.reverse();
                    }
                    let mut moved = rest[..=k].to_vec();
                    moved.extend(segment);
                    moved.extend_from_slice(&rest[k + 1..]);
                    // The depot back at position 0 (it is in `rest`, never in a segment).
                    let z = moved.iter().position(|&g| g == 0).unwrap_or(0);
                    moved.rotate_left(z);
                    tour = moved;
                    improved = true;
                }
                i += 1;
            }
        }
    }
    tour[1..]
        .iter()
        .flat_map(|&g| sorted[groups[g].clone()].iter().copied())
        .collect()
}

/// Size of the symmetric difference of two sorted, duplicate-free lists.
pub(super) fn symmetric_difference(a: &[u32], b: &[u32]) -> u32 {
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (a.len() + b.len() - 2 * common) as u32
}

/// Total length of the smallest enclosing range per destination for a separator order.
pub(super) fn ranged_cost(order: &[u32], dests: &[Vec<u32>]) -> usize {
    let mut span: Vec<(u32, usize, usize)> = Vec::new();
    for (pos, &c) in order.iter().enumerate() {
        for &p in &dests[c as usize] {
            match span.iter_mut().find(|e| e.0 == p) {
                Some(e) => e.2 = pos,
                None => span.push((p, pos, pos)),
            }
        }
    }
    span.iter().map(|e| e.2 - e.1 + 1).sum()
}

/// Orders one tile's separator cells for [`Strategy::ChipMixedClean`]:
/// `[clean blocks by destination][mixed, read on this chip only][mixed, read on other chips]`,
/// the last part sorted by the set of other chips reading each cell, so that the cells one
/// other chip reads lie together. `chip_of` maps a destination (a part) to its chip, `own` is
/// this tile's chip. Returns the order, the mixed block and the start of its part read on
/// other chips, as positions in the order.
pub(super) fn chip_layout(
    separator: &[u32],
    dests: &[Vec<u32>],
    chip_of: &[u32],
    own: u32,
) -> (Vec<u32>, Range<usize>, usize) {
    let key = |c: u32| {
        let d = &dests[c as usize];
        let remote = remote_chips(d, chip_of, own);
        let class = match (d.len(), remote.is_empty()) {
            (1, _) => 0u8,
            (_, true) => 1,
            (_, false) => 2,
        };
        (class, remote, d.clone(), c)
    };
    let mut keyed: Vec<_> = separator.iter().map(|&c| key(c)).collect();
    keyed.sort_unstable();
    let start = keyed.partition_point(|e| e.0 == 0);
    let remote = keyed.partition_point(|e| e.0 <= 1);
    let order = keyed.into_iter().map(|e| e.3).collect::<Vec<_>>();
    let end = order.len();
    (order, start..end, remote)
}

/// The chips other than `own` that hold a destination in `d`, sorted and duplicate-free.
pub(super) fn remote_chips(d: &[u32], chip_of: &[u32], own: u32) -> Vec<u32> {
    let mut chips: Vec<u32> = d
        .iter()
        .map(|&p| chip_of[p as usize])
        .filter(|&c| c != own)
        .collect();
    chips.sort_unstable();
    chips.dedup();
    chips
}
