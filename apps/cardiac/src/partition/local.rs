//! Localisation: each tile's ELLPACK rows with columns in its halo-extended numbering.

use super::*;

/// One tile's share of `Z`: its rows in its new order, columns pointing into its local vector
/// (`halo ranges ++ [own cells]`, see [`PartitionPlan::gather_local`]). Slot order is the
/// global row's, so [`LocalEllpack::spmv`] reproduces [`Ellpack::spmv`] bit for bit.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalEllpack {
    /// Rows (own cells).
    pub n_own: usize,
    /// Length of the local input vector.
    pub n_local: usize,
    /// Position of the own cells in the local vector (after the halo): `n_local - n_own`.
    pub own_offset: usize,
    pub diag: Vec<f32>,
    pub values: Vec<f32>,
    pub cols: Vec<u32>,
}

impl LocalEllpack {
    /// `y = D∘x + Σ A x[I]` over the local vector, in [`Ellpack::spmv`]'s order.
    ///
    /// # Panics
    /// If `x` is not `n_local` long or `y` not `n_own` long (caller bug).
    pub fn spmv(&self, x: &[f32], y: &mut [f32]) {
        assert_eq!(
            x.len(),
            self.n_local,
            "LocalEllpack::spmv: x has the wrong length"
        );
        assert_eq!(
            y.len(),
            self.n_own,
            "LocalEllpack::spmv: y has the wrong length"
        );
        ell_rows(y, &self.diag, &self.values, &self.cols, x, self.own_offset);
    }
}

/// Splits `ell` (old numbering) into per-tile local matrices following `plan`.
pub fn localize(ell: &Ellpack, plan: &PartitionPlan) -> Result<Vec<LocalEllpack>, PartitionError> {
    let n = plan.new_to_old.len();
    if ell.n != n || ell.cols.len() != n * ELL_WIDTH || ell.values.len() != n * ELL_WIDTH {
        return Err(PartitionError::LengthMismatch {
            what: "Ellpack rows",
            got: ell.n,
            expected: n,
        });
    }
    let mut out = Vec::with_capacity(plan.tiles.len());
    for (tile, t) in plan.tiles.iter().enumerate() {
        // Local offset of each halo range, for binary search by start.
        let mut offsets = Vec::with_capacity(t.halo_ranges.len());
        let mut off = 0;
        for r in &t.halo_ranges {
            offsets.push(off);
            off += r.len();
        }
        let own = off;
        let locate = |g: usize| -> Option<usize> {
            if t.cells.contains(&g) {
                return Some(own + g - t.cells.start);
            }
            let idx = t.halo_ranges.partition_point(|r| r.start <= g);
            let r = t.halo_ranges.get(idx.checked_sub(1)?)?;
            r.contains(&g).then(|| offsets[idx - 1] + g - r.start)
        };
        let m = t.cells.len();
        let mut le = LocalEllpack {
            n_own: m,
            n_local: own + m,
            own_offset: own,
            diag: Vec::with_capacity(m),
            values: Vec::with_capacity(m * ELL_WIDTH),
            cols: Vec::with_capacity(m * ELL_WIDTH),
        };
        for (r, g) in t.cells.clone().enumerate() {
            let old = plan.new_to_old[g] as usize;
            le.diag.push(ell.diag[old]);
            for s in old * ELL_WIDTH..(old + 1) * ELL_WIDTH {
                let c = ell.cols[s] as usize;
                let lc = if c == old {
                    own + r // padding (or a self-reference) stays on the row itself
                } else {
                    let gc = *plan.old_to_new.get(c).ok_or(PartitionError::BadColumn {
                        cell: old,
                        col: c as u32,
                    })? as usize;
                    locate(gc).ok_or(PartitionError::MissingHalo {
                        tile,
                        col: gc as u32,
                    })?
                };
                le.cols.push(lc as u32);
                le.values.push(ell.values[s]);
            }
        }
        out.push(le);
    }
    Ok(out)
}
