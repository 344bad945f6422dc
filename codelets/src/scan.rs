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
//! Cycle estimates (ours: poplibs has no scan vertex, and its arg-max is popnn's
//! `ReduceMaxClassGather`, which we do not mirror): [`cost::cumsum`] and [`cost::arg`].

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

/// A value as arg-max/arg-min compare it: `f32` (NaN flagged), or the integer.
pub trait Ordered: Element {
    /// True if `self` replaces the best so far `best` (`max`: larger; else smaller). A NaN
    /// replaces any number and is never replaced.
    fn better(self, best: Self, max: bool) -> bool;
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
}

impl Ordered for f16 {
    #[inline(always)]
    fn better(self, best: f16, max: bool) -> bool {
        self.to_f32().better(best.to_f32(), max)
    }
}

macro_rules! int_ordered {
    ($($t:ty),*) => {$(
        impl Ordered for $t {
            #[inline(always)]
            fn better(self, best: $t, max: bool) -> bool {
                if max { self > best } else { self < best }
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
