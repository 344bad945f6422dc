//! Cycle estimates of the standard codelets.
//!
//! Every codelet in this crate reports `cycles(ctx)` with one of these formulas, so the
//! estimates are consistent and documented in one place. All figures are cycles of one run on
//! one worker context:
//!
//! | formula | used by |
//! |---|---|
//! | `OVERHEAD + per_elem * ceil(n / width)` | element-wise, fill, copy, reduce, dot |
//! | `OVERHEAD + per_elem * ceil(ceil(n / workers) / width)` | `*Multi` (multi-worker) variants |
//! | `OVERHEAD + rows * (ROW_OVERHEAD + ceil(cols / width))` | `MatVec` |
//! | `OVERHEAD + parts * (ROW_OVERHEAD + ceil(len / width))` | `Reduce*Partials` |
//!
//! `n` is the number of elements of the output (or of the input of a reduction), `width` the
//! SIMD width of the element type ([`vector_width`]: 2 for `float`, 4 for one-byte types,
//! 1 for `int`/`unsigned`), and `per_elem` the cost of one vector operation (1 for add, sub, mul,
//! max, min, copy, fill; more for div, sqrt, exp, see each codelet).

use poplar::DType;

/// Fixed cost of starting a vertex (loading field pointers, loop setup, return).
pub const OVERHEAD: u64 = 20;
/// Extra cost per row (or per partial) of the two-level loops.
pub const ROW_OVERHEAD: u64 = 6;

/// Elements processed per cycle by one worker for element type `dtype`.
pub const fn vector_width(dtype: DType) -> u64 {
    match dtype {
        DType::F32 => 2,
        DType::F16 => 4,
        // Integer and byte types: one 32-bit lane of sub-word elements per cycle.
        _ => match dtype.size() {
            1 => 4,
            2 => 2,
            _ => 1,
        },
    }
}

/// `OVERHEAD + per_elem * ceil(n / width)`.
pub const fn elementwise(n: u64, dtype: DType, per_elem: u64) -> u64 {
    OVERHEAD + per_elem * n.div_ceil(vector_width(dtype))
}

/// `OVERHEAD + per_elem * ceil(ceil(n / workers) / width)`: one worker's share of a
/// multi-worker vertex.
pub const fn multi_worker(n: u64, workers: u32, dtype: DType, per_elem: u64) -> u64 {
    let w = if workers == 0 { 1 } else { workers as u64 };
    OVERHEAD + per_elem * n.div_ceil(w).div_ceil(vector_width(dtype))
}

/// `OVERHEAD + rows * (ROW_OVERHEAD + ceil(cols / width))`.
pub const fn rows(rows: u64, cols: u64, dtype: DType) -> u64 {
    OVERHEAD + rows * (ROW_OVERHEAD + cols.div_ceil(vector_width(dtype)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas() {
        assert_eq!(elementwise(0, DType::F32, 1), OVERHEAD);
        assert_eq!(elementwise(5, DType::F32, 1), OVERHEAD + 3);
        assert_eq!(elementwise(5, DType::I32, 2), OVERHEAD + 10);
        assert_eq!(multi_worker(60, 6, DType::F32, 1), OVERHEAD + 5);
        assert_eq!(multi_worker(60, 0, DType::I32, 1), OVERHEAD + 60);
        assert_eq!(rows(3, 4, DType::F32), OVERHEAD + 3 * (ROW_OVERHEAD + 2));
    }
}
