//! Sorting rows: the indices that sort each row (the values follow with `GatherElements`),
//! and the merge-split step of a sort that splits one row over tiles.
//!
//! | name | fields | computes |
//! |---|---|---|
//! | `MergeSplit<T>` (`T` = `float`, `half`, `int`, `unsigned`) | `input: Input<Vector<T>>` (two sorted runs, `input[..split]` and `input[split..]`), `positions: Input<Vector<u32>>` (their row positions), `out: Output<Vector<u32>>`, `split`, `row_len: State<u32>`, `upper`, `descending: State<bool>` | the indices into `input` of the first (`upper` false) or last `out.len()` elements of the two runs merged, in order ([`merge_split`]); a position at or past `row_len` is padding and goes last |
//! | `ArgSort<T>` (`T` = `float`, `half`, `int`, `unsigned`) | `input: Input<Vector<T>>` (`r` rows of `row_len`), `out: Output<Vector<u32>>` (`r` rows of `k`), `row_len`, `k: State<u32>`, `descending: State<bool>` | row `i` of `out`: the positions of the first `k` elements of row `i` of `input` in sorted order |
//!
//! The order is stable (equal values keep their order of position), ascending or descending,
//! with NaN last in both (after every number, NaNs in their order of position); `-0` and `+0`
//! are equal (so they keep their order of position). `half` compares by its exact `f32` value.
//! `MergeSplit` orders by (value, position) the same way ([`goes_before`]), so merging runs
//! that came from stable sorts gives the stable sort of their union.
//!
//! Cycle estimate ([`cost::arg_sort`]): poplibs' `HeapSortVertexKV` (a key and a value moved
//! together, here the value and its index), `16 · (19 · n · ⌊log₂ n⌋ + 6n + 2)` per row of
//! `n`. The vertex cannot tell its row count from its field sizes, so the graph side sets the
//! estimate of each vertex; the codelet's own estimate takes the whole input as one row (an
//! upper bound). [`cost::merge_split`] is ours, linear in the kept elements (see its doc).

use std::cmp::Ordering;

use poplar_core::codelet::*;
use poplar_core::f16;

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

impl SortKey for f16 {
    /// By the exact `f32` value: NaN last, `-0 == +0`, subnormals in their place.
    fn order(a: f16, b: f16) -> Ordering {
        f32::order(a.to_f32(), b.to_f32())
    }
    fn is_last(self) -> bool {
        self.is_nan()
    }
}

/// Whether element `(a, pa)` goes before `(b, pb)` in the order of a split sort: padding
/// (a position at or past `row_len`) after everything, then NaN after every number, then by
/// value (descending or not), then by position. Positions are distinct, so this is a total
/// order and merging by it is the stable sort.
pub fn goes_before<T: SortKey>(
    (a, pa): (T, u32),
    (b, pb): (T, u32),
    descending: bool,
    row_len: u32,
) -> bool {
    match (pa >= row_len, pb >= row_len) {
        (false, true) => return true,
        (true, false) => return false,
        (true, true) => return pa < pb,
        _ => {}
    }
    let by_key = match (a.is_last(), b.is_last()) {
        (false, false) if descending => T::order(b, a),
        _ => T::order(a, b),
    };
    by_key.then(pa.cmp(&pb)) == Ordering::Less
}

/// Merge-split of two runs sorted by [`goes_before`], `keys[..split]` and `keys[split..]`
/// (with their `positions`): the indices into `keys` of the first `out.len()` of the merged
/// run (`upper` false), or of its last `out.len()` (`upper` true), in order.
pub fn merge_split<T: SortKey>(
    keys: &[T],
    positions: &[u32],
    split: usize,
    upper: bool,
    descending: bool,
    row_len: u32,
    out: &mut [u32],
) {
    let at = |i: usize| (keys[i], positions[i]);
    let before = |i: usize, j: usize| goes_before(at(i), at(j), descending, row_len);
    let n = keys.len();
    if upper {
        // From the back: the larger of the two run ends, until `out` is full.
        let (mut i, mut j) = (split, n);
        for o in out.iter_mut().rev() {
            let take_a = j == split || (i > 0 && !before(i - 1, j - 1));
            if take_a {
                i -= 1;
                *o = i as u32;
            } else {
                j -= 1;
                *o = j as u32;
            }
        }
    } else {
        let (mut i, mut j) = (0, split);
        for o in out.iter_mut() {
            let take_a = j == n || (i < split && !before(j, i));
            if take_a {
                *o = i as u32;
                i += 1;
            } else {
                *o = j as u32;
                j += 1;
            }
        }
    }
}

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
    f16: ArgSortF16 "ArgSort<half>";
    i32: ArgSortI32 "ArgSort<int>";
    u32: ArgSortU32 "ArgSort<unsigned>";
}

macro_rules! merge_codelets {
    ($($t:ty: $name:ident $cname:literal;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: the indices of the kept half of two merged sorted runs.")]
            pub struct $name as $cname {
                input: Input<Vector<$t>>,
                positions: Input<Vector<u32>>,
                out: Output<Vector<u32>>,
                split: State<u32>,
                row_len: State<u32>,
                upper: State<bool>,
                descending: State<bool>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let (n, split) = (self.input.len(), self.split as usize);
                if self.positions.len() != n || split > n || self.out.len() > n {
                    return Err(VertexError::new(format!(
                        "{}: fields 'input' ({n}), 'positions' ({}) and 'out' ({}) do not \
                         fit a split at {split}",
                        Self::NAME,
                        self.positions.len(),
                        self.out.len()
                    )));
                }
                merge_split(
                    &self.input,
                    &self.positions,
                    split,
                    self.upper,
                    self.descending,
                    self.row_len,
                    &mut self.out,
                );
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::merge_split(ctx.elements(Self::out)))
            }
        }
    )*};
}

merge_codelets! {
    f32: MergeSplitF32 "MergeSplit<float>";
    f16: MergeSplitF16 "MergeSplit<half>";
    i32: MergeSplitI32 "MergeSplit<int>";
    u32: MergeSplitU32 "MergeSplit<unsigned>";
}

/// The estimates of `ArgSort` and `MergeSplit`.
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

    /// `MergeSplit` keeping `n` elements, ours (poplibs has no merge vertex: its sort moves
    /// one element between neighbours per step and re-heaps with `HeapSortVertexKV`): a scalar
    /// loop of 12 single-issue instructions per kept element (the two candidates' key and
    /// position loads, the padding and NaN class tests, the key compare, the position
    /// tie-break, the branch, the index store and the two pointer updates), plus 30 cycles of
    /// entry, state loads and loop setup: `12n + 30`.
    pub const fn merge_split(n: u64) -> u64 {
        12 * n + 30
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn heap_sort_kv() {
            assert_eq!(super::arg_sort(2, 8), 2 * 16 * (19 * 8 * 3 + 48 + 2));
            assert_eq!(super::arg_sort(1, 1), 16 * 8);
        }

        #[test]
        fn merge_split_is_linear() {
            assert_eq!(super::merge_split(0), 30);
            assert_eq!(super::merge_split(100), 1230);
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

    #[test]
    fn half_keys_order_by_value_nan_last() {
        let h = |x: f32| f16::from_f32(x);
        let sub = f16::from_bits(1); // the smallest subnormal
        let row = [
            h(1.0),
            f16::NAN,
            h(-0.0),
            sub,
            h(0.0),
            f16::NEG_INFINITY,
            h(1.0),
        ];
        let mut out = [0u32; 7];
        arg_sort_row(&row, false, &mut out);
        assert_eq!(out, [5, 2, 4, 3, 0, 6, 1]);
        arg_sort_row(&row, true, &mut out);
        assert_eq!(out, [0, 6, 3, 2, 4, 5, 1]);
    }

    #[test]
    fn merge_split_keeps_either_half_by_value_then_position() {
        // Runs [1, 2 (pos 5), NaN] and [2 (pos 1), 3, pad]: merged 1, 2@1, 2@5, 3, NaN, pad.
        let keys = [1.0f32, 2.0, f32::NAN, 2.0, 3.0, 0.0];
        let pos = [4, 5, 0, 1, 2, 9];
        let mut lo = [0u32; 3];
        merge_split(&keys, &pos, 3, false, false, 6, &mut lo);
        assert_eq!(lo, [0, 3, 1]);
        let mut hi = [0u32; 3];
        merge_split(&keys, &pos, 3, true, false, 6, &mut hi);
        assert_eq!(hi, [4, 2, 5]);
        // Descending: 3, 2@1, 2@5, 1, NaN, pad (runs sorted that way first).
        let keys = [2.0f32, 1.0, f32::NAN, 3.0, 2.0, 0.0];
        let pos = [5, 4, 0, 2, 1, 9];
        merge_split(&keys, &pos, 3, false, true, 6, &mut lo);
        assert_eq!(lo, [3, 4, 0]);
        merge_split(&keys, &pos, 3, true, true, 6, &mut hi);
        assert_eq!(hi, [1, 2, 5]);
    }

    #[test]
    fn merge_split_vertex_of_halves_and_its_field_check() {
        let h = |x: f32| f16::from_f32(x);
        // Runs [-0, 1, NaN] and [+0, 1, 2] at positions [0, 3, 4] and [1, 2, 5].
        let input = [h(-0.0), h(1.0), f16::NAN, h(0.0), h(1.0), h(2.0)];
        let positions = [0u32, 3, 4, 1, 2, 5];
        let mut out = [0u32; 3];
        let mut v = vertex!(MergeSplitF16 {
            input: &input,
            positions: &positions,
            out: &mut out,
            split: 3,
            row_len: 6,
            upper: true,
            descending: false,
        });
        v.compute(Worker { id: 0, count: 1 }).unwrap();
        // Merged: -0@0, +0@1, 1@2, 1@3, 2@5, NaN@4; the upper three.
        assert_eq!(out, [1, 5, 2]);
        let mut long = [0u32; 7];
        let mut v = vertex!(MergeSplitF16 {
            input: &input,
            positions: &positions,
            out: &mut long,
            split: 3,
            row_len: 6,
            upper: false,
            descending: false,
        });
        let e = v
            .compute(Worker { id: 0, count: 1 })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("MergeSplit<half>") && e.contains("'out' (7)"),
            "{e}"
        );
    }
}
