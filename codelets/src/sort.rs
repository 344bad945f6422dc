//! Sorting rows: the indices that sort each row (the values follow with `GatherElements`).
//!
//! | name | fields | computes |
//! |---|---|---|
//! | `ArgSort<T>` (`T` = `float`, `int`, `unsigned`) | `input: Input<Vector<T>>` (`r` rows of `row_len`), `out: Output<Vector<u32>>` (`r` rows of `k`), `row_len`, `k: State<u32>`, `descending: State<bool>` | row `i` of `out`: the positions of the first `k` elements of row `i` of `input` in sorted order |
//!
//! The order is stable (equal values keep their order of position), ascending or descending,
//! with NaN last in both (after every number, NaNs in their order of position); `-0` and `+0`
//! are equal (so they keep their order of position).
//!
//! Cycle estimate ([`cost::arg_sort`]): poplibs' `HeapSortVertexKV` (a key and a value moved
//! together, here the value and its index), `16 · (19 · n · ⌊log₂ n⌋ + 6n + 2)` per row of
//! `n`. The vertex cannot tell its row count from its field sizes, so the graph side sets the
//! estimate of each vertex; the codelet's own estimate takes the whole input as one row (an
//! upper bound).

use std::cmp::Ordering;

use poplar_core::codelet::*;

/// How `ArgSort` orders its elements.
pub trait SortKey: Copy {
    /// The ascending order of `a` and `b`, NaN after everything (and equal to NaN).
    fn order(a: Self, b: Self) -> Ordering;
    /// Whether the element goes last in both directions (NaN).
    fn is_last(self) -> bool;
}

impl SortKey for f32 {
    fn order(a: f32, b: f32) -> Ordering {
        match (a.is_nan(), b.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        }
    }
    fn is_last(self) -> bool {
        self.is_nan()
    }
}

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            fn order(a: $t, b: $t) -> Ordering {
                a.cmp(&b)
            }
            fn is_last(self) -> bool {
                false
            }
        }
    )*};
}

int_key!(i32, u32);

/// The positions of `row` in sorted order (stable, NaN last), the first `out.len()` of them.
pub fn arg_sort_row<T: SortKey>(row: &[T], descending: bool, out: &mut [u32]) {
    let mut idx: Vec<u32> = (0..row.len() as u32).collect();
    idx.sort_by(|&i, &j| {
        let (a, b) = (row[i as usize], row[j as usize]);
        match (a.is_last(), b.is_last()) {
            (false, false) if descending => T::order(b, a),
            _ => T::order(a, b),
        }
    });
    out.copy_from_slice(&idx[..out.len()]);
}

macro_rules! sort_codelets {
    ($($t:ty: $name:ident $cname:literal;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: the positions of each row's first `k` in sorted order.")]
            pub struct $name as $cname {
                input: Input<Vector<$t>>,
                out: Output<Vector<u32>>,
                row_len: State<u32>,
                k: State<u32>,
                descending: State<bool>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let (len, k) = (self.row_len as usize, self.k as usize);
                let r = self.input.len().checked_div(len).unwrap_or(0);
                if r * len != self.input.len() || r * k != self.out.len() || k > len {
                    return Err(VertexError::new(format!(
                        "{}: fields 'input' ({}) and 'out' ({}) are not rows of {len} and {k}",
                        Self::NAME,
                        self.input.len(),
                        self.out.len()
                    )));
                }
                for i in 0..r {
                    arg_sort_row(
                        &self.input[i * len..][..len],
                        self.descending,
                        &mut self.out[i * k..][..k],
                    );
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::arg_sort(1, ctx.elements(Self::input)))
            }
        }
    )*};
}

sort_codelets! {
    f32: ArgSortF32 "ArgSort<float>";
    i32: ArgSortI32 "ArgSort<int>";
    u32: ArgSortU32 "ArgSort<unsigned>";
}

/// The estimate of `ArgSort`.
pub mod cost {
    /// poplibs' `HeapSortVertexKV` over `rows` rows of `n`: `16 · (19 · n · ⌊log₂ n⌋ + 6n +
    /// 2)` each.
    pub const fn arg_sort(rows: u64, n: u64) -> u64 {
        let log = if n > 1 {
            63 - n.leading_zeros() as u64
        } else {
            0
        };
        rows * 16 * (19 * n * log + 6 * n + 2)
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn heap_sort_kv() {
            assert_eq!(super::arg_sort(2, 8), 2 * 16 * (19 * 8 * 3 + 48 + 2));
            assert_eq!(super::arg_sort(1, 1), 16 * 8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_last_and_stable_both_ways() {
        let row = [1.0f32, f32::NAN, -0.0, 0.0, 1.0, f32::NEG_INFINITY];
        let mut out = [0u32; 6];
        arg_sort_row(&row, false, &mut out);
        assert_eq!(out, [5, 2, 3, 0, 4, 1]);
        arg_sort_row(&row, true, &mut out);
        assert_eq!(out, [0, 4, 2, 3, 5, 1]);
    }
}
