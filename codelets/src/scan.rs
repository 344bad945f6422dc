//! Scans and index reductions over lines: `popops::cumsum` and `popops::arg_max`/`arg_min`.
//!
//! A *line* is `len` consecutive elements of `input` (`len = input.len() / lines`); the
//! vertices take whole lines, each worked by one worker from its first element to its last.
//!
//! | name | fields | computes |
//! |---|---|---|
//! | `CumSum<T>` (`float`, `int`, `unsigned`) | `input: Input<Vector<T>>`, `out: Output<Vector<T>>`, `len: State<u32>`, `exclusive: State<bool>` | per line, `out[j] = x[0] + … + x[j]` (exclusive: `x[0] + … + x[j−1]`, `out[0] = 0`), left to right; integers wrap |
//! | `ArgMax<T>`, `ArgMin<T>` (`float`, `half`, `int`, `unsigned`) | `input: Input<Vector<T>>`, `out: Output<Vector<u32>>` (one per line) | the index in its line of the first largest (smallest) element; a NaN counts as larger and smaller than any number, so the first NaN wins (numpy's `argmax`) |
//!
//! | `CumSumCarries<T>` (`float`, `int`, `unsigned`) | `last: Input<Vector<T>>`, `tail: Input<Vector<T>>`, `out: Output<Vector<T>>`, `exclusive: State<bool>` | a long line's segment carries: `out[s] = t_0 + … + t_{s−1}` left to right (`out[0] = 0`), the total `t_s = last[s]` (each segment's last inclusive prefix) or, exclusive, `last[s] + tail[s]` (its last exclusive prefix and last element; `tail` is empty when inclusive) |
//! | `AddCarry<T>` (`float`, `int`, `unsigned`) | `out: InOut<Vector<T>>`, `carry: Input<Vector<T>>` (one) | `out[j] = out[j] + carry` (integers wrap) |
//! | `ArgMaxSegment<T>`, `ArgMinSegment<T>` (`float`, `half`, `int`, `unsigned`) | `input: Input<Vector<T>>`, `out: Output<Vector<u32>>` (two), `base: State<u32>` | the segment's candidate: `out = [bits of its first extreme element (the first NaN), base + its index]` |
//! | `ArgMaxCombine<T>`, `ArgMinCombine<T>` (same types) | `candidates: Input<Vector<u32>>` (pairs), `out: Output<Vector<u32>>` (one) | the index of the first extreme candidate value (the first NaN), candidates in segment order |
//!
//! These are the stages of popops' cross-tile scans of long lines (popops' `scan` notes):
//! `CumSum` per segment, `CumSumCarries` on one tile, `AddCarry` per segment; or
//! `ArgMaxSegment` per segment and `ArgMaxCombine` on one tile.
//!
//! Cycle estimates (ours: poplibs has no scan vertex, and its arg-max is popnn's
//! `ReduceMaxClassGather`, which we do not mirror): [`cost::cumsum`], [`cost::arg`],
//! [`cost::carries`], [`cost::add_carry`] and [`cost::arg_combine`].

use poplar_core::codelet::*;
use poplar_core::dtype::Element;
use poplar_core::f16;

fn line_len(codelet: &str, input: usize, out: usize) -> Result<usize, VertexError> {
    if out == 0 {
        return if input == 0 {
            Ok(0)
        } else {
            Err(VertexError::new(format!(
                "{codelet}: field 'input' has {input} elements but field 'out' none"
            )))
        };
    }
    if !input.is_multiple_of(out) {
        return Err(VertexError::new(format!(
            "{codelet}: field 'input' has {input} elements, not a whole line per element of \
             field 'out' ({out})"
        )));
    }
    Ok(input / out)
}

macro_rules! cumsum_vertices {
    ($($name:ident as $cname:literal: $t:ty, $zero:expr, |$a:ident, $x:ident| $add:expr;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: inclusive or exclusive prefix sums of each line.")]
            pub struct $name as $cname {
                input: Input<Vector<$t>>,
                out: Output<Vector<$t>>,
                len: State<u32>,
                exclusive: State<bool>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let len = self.len as usize;
                if self.input.len() != self.out.len() || (len == 0 && !self.out.is_empty())
                    || (len > 0 && !self.out.len().is_multiple_of(len))
                {
                    return Err(VertexError::new(format!(
                        "{}: fields 'input' ({}) and 'out' ({}) are not whole lines of {len}",
                        $cname,
                        self.input.len(),
                        self.out.len()
                    )));
                }
                if len == 0 {
                    return Ok(());
                }
                for (o, i) in self.out.chunks_exact_mut(len).zip(self.input.chunks_exact(len)) {
                    let mut $a: $t = $zero;
                    for (y, &$x) in o.iter_mut().zip(i) {
                        if self.exclusive {
                            *y = $a;
                            $a = $add;
                        } else {
                            $a = $add;
                            *y = $a;
                        }
                    }
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::cumsum(<$t as Element>::DTYPE, ctx.elements(Self::out)))
            }
        }
    )*};
}

cumsum_vertices! {
    CumSumF32 as "CumSum<float>": f32, 0.0, |a, x| a + x;
    CumSumI32 as "CumSum<int>": i32, 0, |a, x| a.wrapping_add(x);
    CumSumU32 as "CumSum<unsigned>": u32, 0, |a, x| a.wrapping_add(x);
}

/// `field` must hold exactly one element.
fn one(codelet: &str, field: &str, len: usize) -> Result<(), VertexError> {
    if len == 1 {
        return Ok(());
    }
    Err(VertexError::new(format!(
        "{codelet}: field '{field}' has {len} elements, not one"
    )))
}

macro_rules! carry_vertices {
    ($($carries:ident as $sname:literal, $carry:ident as $cname:literal:
        $t:ty, $zero:expr, |$a:ident, $x:ident| $add:expr;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $sname, "`: the carries of a long line's segments.")]
            pub struct $carries as $sname {
                last: Input<Vector<$t>>,
                tail: Input<Vector<$t>>,
                out: Output<Vector<$t>>,
                exclusive: State<bool>,
            }
        }

        impl Vertex for $carries<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let s = self.out.len();
                let tail = if self.exclusive { s } else { 0 };
                if self.last.len() != s || self.tail.len() != tail {
                    return Err(VertexError::new(format!(
                        "{}: fields 'last' ({}) and 'tail' ({}) do not match 'out' ({s}, \
                         exclusive {})",
                        $sname,
                        self.last.len(),
                        self.tail.len(),
                        self.exclusive
                    )));
                }
                let mut acc: $t = $zero;
                for k in 0..s {
                    self.out[k] = acc;
                    // The segment's total, left to right: its last inclusive prefix, or its
                    // last exclusive prefix and then its last element.
                    let total = if self.exclusive {
                        let ($a, $x) = (self.last[k], self.tail[k]);
                        $add
                    } else {
                        self.last[k]
                    };
                    let ($a, $x) = (acc, total);
                    acc = $add;
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::carries(ctx.elements(Self::out)))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: a segment's carry added to each of its prefix sums.")]
            pub struct $carry as $cname {
                out: InOut<Vector<$t>>,
                carry: Input<Vector<$t>>,
            }
        }

        impl Vertex for $carry<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                one($cname, "carry", self.carry.len())?;
                let $x = self.carry[0];
                for y in self.out.iter_mut() {
                    let $a = *y;
                    *y = $add;
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::add_carry(<$t as Element>::DTYPE, ctx.elements(Self::out)))
            }
        }
    )*};
}

carry_vertices! {
    CumSumCarriesF32 as "CumSumCarries<float>", AddCarryF32 as "AddCarry<float>":
        f32, 0.0, |a, x| a + x;
    CumSumCarriesI32 as "CumSumCarries<int>", AddCarryI32 as "AddCarry<int>":
        i32, 0, |a, x| a.wrapping_add(x);
    CumSumCarriesU32 as "CumSumCarries<unsigned>", AddCarryU32 as "AddCarry<unsigned>":
        u32, 0, |a, x| a.wrapping_add(x);
}

/// A value as arg-max/arg-min compare it: `f32` (NaN flagged), or the integer.
pub trait Ordered: Element {
    /// True if `self` replaces the best so far `best` (`max`: larger; else smaller). A NaN
    /// replaces any number and is never replaced.
    fn better(self, best: Self, max: bool) -> bool;
    /// The value's bits as a 32-bit word (a candidate of `ArgMaxSegment`).
    fn to_word(self) -> u32;
    /// The value of [`to_word`](Ordered::to_word)'s word.
    fn from_word(w: u32) -> Self;
}

impl Ordered for f32 {
    #[inline(always)]
    fn better(self, best: f32, max: bool) -> bool {
        if best.is_nan() {
            false
        } else if self.is_nan() {
            true
        } else if max {
            self > best
        } else {
            self < best
        }
    }
    fn to_word(self) -> u32 {
        self.to_bits()
    }
    fn from_word(w: u32) -> f32 {
        f32::from_bits(w)
    }
}

impl Ordered for f16 {
    #[inline(always)]
    fn better(self, best: f16, max: bool) -> bool {
        self.to_f32().better(best.to_f32(), max)
    }
    fn to_word(self) -> u32 {
        u32::from(self.to_bits())
    }
    fn from_word(w: u32) -> f16 {
        f16::from_bits(w as u16)
    }
}

macro_rules! int_ordered {
    ($($t:ty),*) => {$(
        impl Ordered for $t {
            #[inline(always)]
            fn better(self, best: $t, max: bool) -> bool {
                if max { self > best } else { self < best }
            }
            fn to_word(self) -> u32 {
                self as u32
            }
            fn from_word(w: u32) -> $t {
                w as $t
            }
        }
    )*};
}

int_ordered!(i32, u32);

/// The index of the first best element of `line` (0 for an empty line).
pub fn arg_best<T: Ordered>(line: &[T], max: bool) -> u32 {
    let mut best = 0usize;
    for (j, &x) in line.iter().enumerate().skip(1) {
        if x.better(line[best], max) {
            best = j;
        }
    }
    best as u32
}

macro_rules! arg_vertices {
    ($($name:ident as $cname:literal: $t:ty, $max:expr;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: the index of each line's first extreme element.")]
            pub struct $name as $cname {
                input: Input<Vector<$t>>,
                out: Output<Vector<u32>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let len = line_len($cname, self.input.len(), self.out.len())?;
                if len == 0 {
                    self.out.fill(0);
                    return Ok(());
                }
                for (o, line) in self.out.iter_mut().zip(self.input.chunks_exact(len)) {
                    *o = arg_best(line, $max);
                }
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::arg(ctx.elements(Self::input), ctx.elements(Self::out)))
            }
        }
    )*};
}

macro_rules! arg_segment_vertices {
    ($($seg:ident as $sname:literal, $comb:ident as $cname:literal: $t:ty, $max:expr;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $sname, "`: one segment's first extreme element and its index.")]
            pub struct $seg as $sname {
                input: Input<Vector<$t>>,
                out: Output<Vector<u32>>,
                base: State<u32>,
            }
        }

        impl Vertex for $seg<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                if self.out.len() != 2 || self.input.is_empty() {
                    return Err(VertexError::new(format!(
                        "{}: field 'out' has {} elements (not 2) or field 'input' is empty",
                        $sname,
                        self.out.len()
                    )));
                }
                let k = arg_best(&self.input, $max);
                self.out[0] = self.input[k as usize].to_word();
                self.out[1] = self.base.wrapping_add(k);
                Ok(())
            }

            /// [`cost::arg`] of one line and 2 cycles to store the value.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::arg(ctx.elements(Self::input), 1) + 2)
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: the line's answer from its segments' candidates.")]
            pub struct $comb as $cname {
                candidates: Input<Vector<u32>>,
                out: Output<Vector<u32>>,
            }
        }

        impl Vertex for $comb<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                one($cname, "out", self.out.len())?;
                let c = &self.candidates;
                if c.is_empty() || c.len() % 2 != 0 {
                    return Err(VertexError::new(format!(
                        "{}: field 'candidates' has {} elements, not (value, index) pairs",
                        $cname,
                        c.len()
                    )));
                }
                let values: Vec<$t> = c.iter().step_by(2).map(|&w| <$t>::from_word(w)).collect();
                self.out[0] = c[2 * arg_best(&values, $max) as usize + 1];
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cost::arg_combine(ctx.elements(Self::candidates) / 2))
            }
        }
    )*};
}

arg_segment_vertices! {
    ArgMaxSegmentF32 as "ArgMaxSegment<float>", ArgMaxCombineF32 as "ArgMaxCombine<float>": f32, true;
    ArgMaxSegmentF16 as "ArgMaxSegment<half>", ArgMaxCombineF16 as "ArgMaxCombine<half>": f16, true;
    ArgMaxSegmentI32 as "ArgMaxSegment<int>", ArgMaxCombineI32 as "ArgMaxCombine<int>": i32, true;
    ArgMaxSegmentU32 as "ArgMaxSegment<unsigned>", ArgMaxCombineU32 as "ArgMaxCombine<unsigned>": u32, true;
    ArgMinSegmentF32 as "ArgMinSegment<float>", ArgMinCombineF32 as "ArgMinCombine<float>": f32, false;
    ArgMinSegmentF16 as "ArgMinSegment<half>", ArgMinCombineF16 as "ArgMinCombine<half>": f16, false;
    ArgMinSegmentI32 as "ArgMinSegment<int>", ArgMinCombineI32 as "ArgMinCombine<int>": i32, false;
    ArgMinSegmentU32 as "ArgMinSegment<unsigned>", ArgMinCombineU32 as "ArgMinCombine<unsigned>": u32, false;
}

arg_vertices! {
    ArgMaxF32 as "ArgMax<float>": f32, true;
    ArgMaxF16 as "ArgMax<half>": f16, true;
    ArgMaxI32 as "ArgMax<int>": i32, true;
    ArgMaxU32 as "ArgMax<unsigned>": u32, true;
    ArgMinF32 as "ArgMin<float>": f32, false;
    ArgMinF16 as "ArgMin<half>": f16, false;
    ArgMinI32 as "ArgMin<int>": i32, false;
    ArgMinU32 as "ArgMin<unsigned>": u32, false;
}

/// Our estimates (no poplibs vertex).
pub mod cost {
    use poplar_core::dtype::DType;

    /// `CumSum<T>` over `n` elements: 20 cycles of entry, state and exit, then per element a
    /// load, an add (two for an integer: it does not pair with the load) and a store:
    /// `20 + 3·n` (`float`), `20 + 4·n` (integers). A scan is a dependent chain, so no
    /// vector speed-up is counted.
    pub const fn cumsum(dtype: DType, n: u64) -> u64 {
        let per = if matches!(dtype, DType::F32) { 3 } else { 4 };
        20 + per * n
    }

    /// `ArgMax`/`ArgMin` over `n` elements in `lines` lines: 20 cycles of entry, 10 per line
    /// (set-up and the index store), 3 per element (load, compare, conditional move).
    pub const fn arg(n: u64, lines: u64) -> u64 {
        20 + 10 * lines + 3 * n
    }

    /// `CumSumCarries<T>` over `s` segments: 20 cycles of entry and state, then per segment
    /// two loads, up to two dependent adds and a store: `20 + 5·s`.
    pub const fn carries(s: u64) -> u64 {
        20 + 5 * s
    }

    /// `AddCarry<T>` over `n` elements: 20 cycles of entry and the carry's load, then per
    /// element a load, an add (two for an integer, as in [`cumsum`]) and a store, the loads
    /// and stores not paired: `20 + 3·n` (`float`), `20 + 4·n` (integers).
    pub const fn add_carry(dtype: DType, n: u64) -> u64 {
        cumsum(dtype, n)
    }

    /// `ArgMaxCombine`/`ArgMinCombine` over `n` candidates: [`arg`] of one line of `n`
    /// values, then 4 cycles to load the winner's index and store it.
    pub const fn arg_combine(n: u64) -> u64 {
        arg(n, 1) + 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arg_rules() {
        assert_eq!(arg_best(&[1.0f32, 3.0, 3.0, 2.0], true), 1);
        assert_eq!(arg_best(&[1.0f32, f32::NAN, 9.0, f32::NAN], true), 1);
        assert_eq!(arg_best(&[1.0f32, f32::NAN, -9.0], false), 1);
        assert_eq!(arg_best(&[5u32, 1, 1], false), 1);
        assert_eq!(arg_best::<i32>(&[], true), 0);
    }
}
