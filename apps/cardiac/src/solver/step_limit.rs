//! Which cells bound the diffusion step: the operator's stable step is the smallest of the
//! cells' own ([`crate::matrix::Operator::cell_stable_dt`]), so a few slivers can make every
//! ODE step take several times the diffusion steps the rest of the mesh needs.

/// The cells that bound a mesh's stable diffusion step, against the rest of the mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct StepLimit {
    /// The median cell's own stable step (ms).
    pub median_dt: f64,
    /// The cells with the smallest own stable steps, smallest first, at most
    /// [`StepLimit::WORST`] of them: (cell, its step in ms).
    pub worst: Vec<(u32, f64)>,
    /// For `k` in [`StepLimit::WITHOUT`] (those below the cell count): the stable step of the
    /// mesh without its `k` smallest cells, i.e. the `k + 1`-th smallest own step (ms).
    pub without: Vec<(usize, f64)>,
}

impl StepLimit {
    /// How many of the bounding cells [`StepLimit::worst`] keeps.
    pub const WORST: usize = 5;
    /// The counts of smallest cells [`StepLimit::without`] leaves out.
    pub const WITHOUT: [usize; 3] = [10, 100, 1000];

    /// The limit of per-cell steps `cell_dt` (one per cell, ms).
    pub fn of(cell_dt: &[f64]) -> StepLimit {
        let n = cell_dt.len();
        let mut scratch = cell_dt.to_vec();
        let mut nth = |k: usize| -> f64 {
            if k >= n {
                return f64::INFINITY;
            }
            *scratch.select_nth_unstable_by(k, f64::total_cmp).1
        };
        let median_dt = nth(n / 2);
        let without = Self::WITHOUT
            .iter()
            .filter(|&&k| k < n)
            .map(|&k| (k, nth(k)))
            .collect();
        let mut worst: Vec<(u32, f64)> = Vec::new();
        if n > 0 {
            let bound = nth(Self::WORST.min(n) - 1);
            worst = cell_dt
                .iter()
                .enumerate()
                .filter(|(_, &dt)| dt <= bound)
                .map(|(c, &dt)| (c as u32, dt))
                .collect();
            worst.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            worst.truncate(Self::WORST);
        }
        StepLimit {
            median_dt,
            worst,
            without,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_cells_are_named_smallest_first() {
        let mut dt: Vec<f64> = (0..2001).map(|i| 0.01 + 1e-6 * i as f64).collect();
        dt[7] = 0.001;
        dt[3] = 0.004;
        let l = StepLimit::of(&dt);
        assert_eq!(l.median_dt, 0.01 + 1e-6 * 1000.0);
        assert_eq!(l.worst[..3], [(7, 0.001), (3, 0.004), (0, 0.01)]);
        assert_eq!(l.worst.len(), StepLimit::WORST);
        // Without the 10 smallest (cells 7, 3 and 0, 1, 2, 4, 5, 6, 8, 9): cell 10's step.
        assert_eq!(l.without[0], (10, 0.01 + 1e-6 * 10.0));
        assert_eq!(l.without.len(), 3);
    }

    #[test]
    fn small_meshes_leave_out_only_what_they_have() {
        let l = StepLimit::of(&[0.02, 0.021, 0.019]);
        assert_eq!(l.worst, vec![(2, 0.019), (0, 0.02), (1, 0.021)]);
        assert!(l.without.is_empty());
        assert_eq!(l.median_dt, 0.02);
        let empty = StepLimit::of(&[]);
        assert!(empty.worst.is_empty() && empty.without.is_empty());
    }
}
