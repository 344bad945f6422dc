//! Capping part sizes: boundary cells move out of parts larger than a cap into adjacent parts,
//! so that a METIS cut (balanced only within 3 %) gives no tile more cells per worker than an
//! even split would.

/// Passes over the cells before giving up on parts that stay over the cap.
const MAX_PASSES: usize = 64;

/// Moves boundary cells of the parts with more than `cap` cells into adjacent parts, until no
/// part exceeds `cap` or 64 passes are done; returns the parts.
///
/// A pass visits the cells in index order; a cell of a part over the cap moves to the
/// smallest adjacent part (ties: the lowest part) that is below the cap, preferring, in the
/// first two passes, cells with at least two faces on that part (so borders stay smooth).
/// When a pass can move no cell into a part below the cap, cells of parts over it may move
/// into neighbours at the cap, which then pass cells on: the excess diffuses towards parts
/// with room. A part never empties. Deterministic: the same parts for the same input.
///
/// `cap · k` must be at least the cell count for the parts to fit; with less, parts stay over.
pub fn cap_part_sizes(
    adjacency: &[[u32; 4]],
    mut parts: Vec<u32>,
    k: usize,
    cap: usize,
) -> Vec<u32> {
    let mut size = vec![0usize; k];
    for &p in &parts {
        size[p as usize] += 1;
    }
    for pass in 0..MAX_PASSES {
        if size.iter().all(|&s| s <= cap) {
            break;
        }
        // Two passes of smooth moves (two faces on the new part); then any boundary cell,
        // and when none can move, moves into full parts; when none of those either, stop.
        let smooth = pass < 2;
        let min_faces = if smooth { 2 } else { 1 };
        if move_pass(adjacency, &mut parts, &mut size, cap, min_faces, false) == 0
            && !smooth
            && move_pass(adjacency, &mut parts, &mut size, cap, 1, true) == 0
        {
            break;
        }
    }
    parts
}

/// One pass of [`cap_part_sizes`]; returns the cells moved. With `into_full`, a cell may also
/// move into a part at the cap (never over it); the smallest neighbour is still preferred.
fn move_pass(
    adjacency: &[[u32; 4]],
    parts: &mut [u32],
    size: &mut [usize],
    cap: usize,
    min_faces: usize,
    into_full: bool,
) -> usize {
    let mut moved = 0;
    for c in 0..adjacency.len() {
        let p = parts[c] as usize;
        if size[p] <= cap || size[p] == 1 {
            continue;
        }
        let room = |q: usize| size[q] < cap || (into_full && size[q] == cap);
        let mut best: Option<usize> = None;
        for &j in adjacency[c].iter().filter(|&&j| j != u32::MAX) {
            let q = parts[j as usize] as usize;
            if q == p || !room(q) {
                continue;
            }
            let faces = adjacency[c]
                .iter()
                .filter(|&&l| l != u32::MAX && parts[l as usize] as usize == q)
                .count();
            if faces < min_faces {
                continue;
            }
            if best.is_none_or(|b| (size[q], q) < (size[b], b)) {
                best = Some(q);
            }
        }
        if let Some(q) = best {
            parts[c] = q as u32;
            size[p] -= 1;
            size[q] += 1;
            moved += 1;
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The face adjacency of an `nx × ny` grid of cells (4 faces each, as tetrahedra have).
    fn grid(nx: usize, ny: usize) -> Vec<[u32; 4]> {
        let id = |x: usize, y: usize| (y * nx + x) as u32;
        let mut adj = vec![[u32::MAX; 4]; nx * ny];
        for y in 0..ny {
            for x in 0..nx {
                let a = &mut adj[y * nx + x];
                if x > 0 {
                    a[0] = id(x - 1, y);
                }
                if x + 1 < nx {
                    a[1] = id(x + 1, y);
                }
                if y > 0 {
                    a[2] = id(x, y - 1);
                }
                if y + 1 < ny {
                    a[3] = id(x, y + 1);
                }
            }
        }
        adj
    }

    /// Vertical strips of an `nx × ny` grid, `widths` columns each, numbered left to right.
    fn strips(nx: usize, ny: usize, widths: &[usize]) -> Vec<u32> {
        let column: Vec<u32> = (0..widths.len() as u32)
            .flat_map(|p| std::iter::repeat_n(p, widths[p as usize]))
            .collect();
        assert_eq!(column.len(), nx);
        (0..nx * ny).map(|c| column[c % nx]).collect()
    }

    fn sizes(parts: &[u32], k: usize) -> Vec<usize> {
        let mut s = vec![0; k];
        for &p in parts {
            s[p as usize] += 1;
        }
        s
    }

    /// Every part's cells are connected through faces (checked by a walk inside the part).
    fn connected(adj: &[[u32; 4]], parts: &[u32], k: usize) -> bool {
        (0..k as u32).all(|p| {
            let cells: Vec<usize> = (0..parts.len()).filter(|&c| parts[c] == p).collect();
            let mut seen = vec![false; parts.len()];
            let mut stack = vec![cells[0]];
            seen[cells[0]] = true;
            let mut count = 0;
            while let Some(c) = stack.pop() {
                count += 1;
                for &j in adj[c].iter().filter(|&&j| j != u32::MAX) {
                    if parts[j as usize] == p && !seen[j as usize] {
                        seen[j as usize] = true;
                        stack.push(j as usize);
                    }
                }
            }
            count == cells.len()
        })
    }

    #[test]
    fn an_oversized_strip_gives_its_excess_to_its_neighbours() {
        // 4 vertical strips of a 20 × 10 grid: 70, 50, 40, 40 cells; the cap is the mean.
        let adj = grid(20, 10);
        let capped = cap_part_sizes(&adj, strips(20, 10, &[7, 5, 4, 4]), 4, 50);
        assert_eq!(sizes(&capped, 4), [50, 50, 50, 50]);
        // The excess passed through part 1 (at the cap) to parts 2 and 3, and every part is
        // still one piece.
        assert!(connected(&adj, &capped, 4));
    }

    #[test]
    fn excess_diffuses_through_full_parts_to_the_far_one_with_room() {
        // Strips of 60, 50, 50, 40: part 0 only touches part 1, which is at the cap.
        let adj = grid(20, 10);
        let capped = cap_part_sizes(&adj, strips(20, 10, &[6, 5, 5, 4]), 4, 50);
        assert_eq!(sizes(&capped, 4), [50, 50, 50, 50]);
    }

    #[test]
    fn parts_within_the_cap_are_left_alone_and_an_impossible_cap_stops() {
        let adj = grid(8, 8);
        let parts: Vec<u32> = (0..64).map(|c| (c % 8 / 4) as u32).collect();
        assert_eq!(cap_part_sizes(&adj, parts.clone(), 2, 32), parts);
        // A cap of 20 for 64 cells in 2 parts cannot be met: the passes end, no part empties.
        let capped = cap_part_sizes(&adj, parts, 2, 20);
        assert!(sizes(&capped, 2).iter().all(|&s| s > 0));
    }
}
