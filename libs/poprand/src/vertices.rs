//! The poprand codelets: one single-worker vertex per piece of the output (a run of
//! consecutive elements of the generated tensor, `offset_lo + 2³² · offset_hi` the flat index
//! of its first element), computing [`crate::stream`] at the host's vector width
//! (`poplar_core::isa_dispatch!`; integer and plain f64 arithmetic, the same bits at every
//! level).
//!
//! | name | fields (besides `seed: Input<Vector<u32>>` of 2 words and the states `offset_lo`, `offset_hi`, `modifier: u32`) |
//! |---|---|
//! | `poprand::Uniform<float>`, `<half>` | `out: Output<Vector<T>>`, `lo`, `hi: State<f32>` |
//! | `poprand::Uniform<int>` | `out: Output<Vector<i32>>`, `lo`, `hi: State<i32>` |
//! | `poprand::Bernoulli<float>`, `<half>`, `<int>` | `out: Output<Vector<T>>`, `prob: State<f32>` |
//! | `poprand::Normal<float>`, `<half>` | `out: Output<Vector<T>>`, `mean`, `std_dev: State<f32>` |
//! | `poprand::TruncatedNormal<float>`, `<half>` | as `Normal`, and `alpha: State<f32>` |
//! | `poprand::Dropout<float>`, `<half>` | `input: Input<Vector<T>>`, `out: Output<Vector<T>>`, `prob`, `scale: State<f32>` |
//!
//! Cycle estimates ([`cycles`]): poplibs' poprand estimators (`lib/poprand/
//! poprandCycleEstimators.cpp`) for one worker's share, which model the chip's hardware
//! generator (one 64-bit draw per cycle), not Philox in software.

use poplar_core::codelet::*;
use poplar_core::f16;
use poplar_core::fp::f16_from_f64;

use crate::stream::{self, Stream};

/// How a generated f64 is stored in the element type.
pub trait Store: Copy + Default {
    /// `x` rounded once to the element type (to nearest; integers: truncated, for 0 and 1).
    fn store(x: f64) -> Self;
}

impl Store for f32 {
    #[inline(always)]
    fn store(x: f64) -> f32 {
        x as f32
    }
}

impl Store for f16 {
    #[inline(always)]
    fn store(x: f64) -> f16 {
        f16_from_f64(x)
    }
}

impl Store for i32 {
    #[inline(always)]
    fn store(x: f64) -> i32 {
        x as i32
    }
}

fn stream_of(codelet: &str, seed: &[u32], modifier: u32) -> Result<Stream, VertexError> {
    match seed {
        [a, b] => Ok(Stream::new([*a, *b], modifier)),
        _ => Err(VertexError::new(format!(
            "{codelet}: field 'seed' has {} elements, it must have 2",
            seed.len()
        ))),
    }
}

fn first(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | (u64::from(hi) << 32)
}

macro_rules! uniform_real {
    ($($name:ident as $cname:literal: $t:ty;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `out[k]` uniform in `[lo, hi]`.")]
            pub struct $name as $cname {
                seed: Input<Vector<u32>>,
                out: Output<Vector<$t>>,
                offset_lo: State<u32>,
                offset_hi: State<u32>,
                modifier: State<u32>,
                lo: State<f32>,
                hi: State<f32>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let s = stream_of($cname, self.seed, self.modifier)?;
                poplar_core::isa_dispatch! {
                    fn kernel(s: Stream, at: u64, out: &mut [$t], lo: f64, hi: f64) {
                        s.fill(at, out, |b, l| <$t>::store(stream::uniform(b[l], lo, hi)));
                    }
                }
                let at = first(self.offset_lo, self.offset_hi);
                kernel(s, at, self.out, f64::from(self.lo), f64::from(self.hi));
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::uniform(<$t as poplar_core::dtype::Element>::DTYPE, ctx.elements(Self::out)))
            }
        }
    )*};
}

uniform_real! {
    UniformF32 as "poprand::Uniform<float>": f32;
    UniformF16 as "poprand::Uniform<half>": f16;
}

poplar_core::codelet! {
    /// `poprand::Uniform<int>`: `out[k]` uniform in `[lo, hi]`.
    pub struct UniformI32 as "poprand::Uniform<int>" {
        seed: Input<Vector<u32>>,
        out: Output<Vector<i32>>,
        offset_lo: State<u32>,
        offset_hi: State<u32>,
        modifier: State<u32>,
        lo: State<i32>,
        hi: State<i32>,
    }
}

impl Vertex for UniformI32<'_> {
    fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
        let s = stream_of(Self::NAME, self.seed, self.modifier)?;
        if self.lo > self.hi {
            return Err(VertexError::new(format!(
                "{}: state 'lo' ({}) is above 'hi' ({})",
                Self::NAME,
                self.lo,
                self.hi
            )));
        }
        poplar_core::isa_dispatch! {
            fn kernel(s: Stream, at: u64, out: &mut [i32], lo: i32, hi: i32) {
                s.fill(at, out, |b, l| stream::uniform_int(b[l], lo, hi));
            }
        }
        let at = first(self.offset_lo, self.offset_hi);
        kernel(s, at, self.out, self.lo, self.hi);
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(cycles::uniform(
            poplar_core::dtype::DType::I32,
            ctx.elements(Self::out),
        ))
    }
}

macro_rules! bernoulli {
    ($($name:ident as $cname:literal: $t:ty;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `out[k]` is 1 with probability `prob`, else 0.")]
            pub struct $name as $cname {
                seed: Input<Vector<u32>>,
                out: Output<Vector<$t>>,
                offset_lo: State<u32>,
                offset_hi: State<u32>,
                modifier: State<u32>,
                prob: State<f32>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let s = stream_of($cname, self.seed, self.modifier)?;
                poplar_core::isa_dispatch! {
                    fn kernel(s: Stream, at: u64, out: &mut [$t], t: u64) {
                        s.fill(at, out, |b, l| {
                            <$t>::store(if stream::bernoulli(b[l], t) { 1.0 } else { 0.0 })
                        });
                    }
                }
                let at = first(self.offset_lo, self.offset_hi);
                kernel(s, at, self.out, stream::bernoulli_threshold(f64::from(self.prob)));
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::bernoulli(<$t as poplar_core::dtype::Element>::DTYPE, ctx.elements(Self::out)))
            }
        }
    )*};
}

bernoulli! {
    BernoulliF32 as "poprand::Bernoulli<float>": f32;
    BernoulliF16 as "poprand::Bernoulli<half>": f16;
    BernoulliI32 as "poprand::Bernoulli<int>": i32;
}

macro_rules! normal {
    ($($name:ident as $cname:literal, $tname:ident as $tcname:literal: $t:ty;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `out[k] = mean + std_dev · z`, `z` standard normal.")]
            pub struct $name as $cname {
                seed: Input<Vector<u32>>,
                out: Output<Vector<$t>>,
                offset_lo: State<u32>,
                offset_hi: State<u32>,
                modifier: State<u32>,
                mean: State<f32>,
                std_dev: State<f32>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let s = stream_of($cname, self.seed, self.modifier)?;
                poplar_core::isa_dispatch! {
                    fn kernel(s: Stream, at: u64, out: &mut [$t], mean: f64, sd: f64) {
                        s.fill(at, out, |b, l| <$t>::store(mean + sd * stream::normal(b, l)));
                    }
                }
                let at = first(self.offset_lo, self.offset_hi);
                kernel(s, at, self.out, f64::from(self.mean), f64::from(self.std_dev));
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::normal(<$t as poplar_core::dtype::Element>::DTYPE, ctx.elements(Self::out)))
            }
        }

        poplar_core::codelet! {
            #[doc = concat!("`", $tcname, "`: `out[k] = mean + std_dev · z`, `z` standard normal ",
                "truncated to `[−alpha, alpha]`.")]
            pub struct $tname as $tcname {
                seed: Input<Vector<u32>>,
                out: Output<Vector<$t>>,
                offset_lo: State<u32>,
                offset_hi: State<u32>,
                modifier: State<u32>,
                mean: State<f32>,
                std_dev: State<f32>,
                alpha: State<f32>,
            }
        }

        impl Vertex for $tname<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let s = stream_of($tcname, self.seed, self.modifier)?;
                if self.alpha.is_nan() || self.alpha <= 0.0 {
                    return Err(VertexError::new(format!(
                        "{}: state 'alpha' is {}, it must be above 0", $tcname, self.alpha
                    )));
                }
                poplar_core::isa_dispatch! {
                    fn kernel(s: Stream, at: u64, out: &mut [$t], mean: f64, sd: f64, alpha: f64) {
                        for (k, o) in out.iter_mut().enumerate() {
                            let z = stream::truncated_normal(&s, at + k as u64, alpha);
                            *o = <$t>::store(mean + sd * z);
                        }
                    }
                }
                let at = first(self.offset_lo, self.offset_hi);
                let (m, sd, a) = (f64::from(self.mean), f64::from(self.std_dev), f64::from(self.alpha));
                kernel(s, at, self.out, m, sd, a);
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::truncated_normal(<$t as poplar_core::dtype::Element>::DTYPE, ctx.elements(Self::out)))
            }
        }
    )*};
}

normal! {
    NormalF32 as "poprand::Normal<float>", TruncatedNormalF32 as "poprand::TruncatedNormal<float>": f32;
    NormalF16 as "poprand::Normal<half>", TruncatedNormalF16 as "poprand::TruncatedNormal<half>": f16;
}

/// The dropout of one element: `x · scale` (in f32, rounded once) if kept, else 0.
pub trait Dropped: Copy {
    /// `x · scale` if `keep`, else 0.
    fn dropped(self, keep: bool, scale: f32) -> Self;
}

impl Dropped for f32 {
    #[inline(always)]
    fn dropped(self, keep: bool, scale: f32) -> f32 {
        if keep {
            self * scale
        } else {
            0.0
        }
    }
}

impl Dropped for f16 {
    #[inline(always)]
    fn dropped(self, keep: bool, scale: f32) -> f16 {
        if keep {
            f16::from_f32(self.to_f32() * scale)
        } else {
            f16::ZERO
        }
    }
}

macro_rules! dropout {
    ($($name:ident as $cname:literal: $t:ty;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `out[k] = input[k] · scale` with probability `prob`, else 0.")]
            pub struct $name as $cname {
                seed: Input<Vector<u32>>,
                input: Input<Vector<$t>>,
                out: Output<Vector<$t>>,
                offset_lo: State<u32>,
                offset_hi: State<u32>,
                modifier: State<u32>,
                prob: State<f32>,
                scale: State<f32>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let s = stream_of($cname, self.seed, self.modifier)?;
                if self.input.len() != self.out.len() {
                    return Err(VertexError::new(format!(
                        "{}: field 'input' has {} elements but field 'out' has {}",
                        $cname, self.input.len(), self.out.len()
                    )));
                }
                poplar_core::isa_dispatch! {
                    fn kernel(s: Stream, at: u64, out: &mut [$t], input: &[$t], t: u64, scale: f32) {
                        let mut cached = u64::MAX;
                        let mut b = [0u32; 4];
                        for (k, (o, &x)) in out.iter_mut().zip(input).enumerate() {
                            let i = at + k as u64;
                            if i >> 2 != cached {
                                cached = i >> 2;
                                b = s.block(cached, 0);
                            }
                            *o = x.dropped(stream::bernoulli(b[(i & 3) as usize], t), scale);
                        }
                    }
                }
                let at = first(self.offset_lo, self.offset_hi);
                let t = stream::bernoulli_threshold(f64::from(self.prob));
                kernel(s, at, self.out, self.input, t, self.scale);
                Ok(())
            }

            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::dropout(<$t as poplar_core::dtype::Element>::DTYPE, ctx.elements(Self::out)))
            }
        }
    )*};
}

dropout! {
    DropoutF32 as "poprand::Dropout<float>": f32;
    DropoutF16 as "poprand::Dropout<half>": f16;
}

/// One worker's cycles of the poprand vertices over `n` elements: poplibs' estimators
/// (`lib/poprand/poprandCycleEstimators.cpp`) with one worker context (their per-thread
/// preparation once, their loop over this worker's elements) and without the supervisor's
/// call (4 or 6 cycles, there per supervisor vertex). Vectors are the 64-bit data path: 2
/// `float`s or `int`s, 4 `half`s. (poplibs' `Uniform` and `Bernoulli` estimators divide the
/// data path width by 2 or 4 where `Normal` divides it by 32 or 16; this module takes the
/// 64-bit vector for all, as their loops store.)
pub mod cycles {
    use poplar_core::dtype::DType;

    fn split(dtype: DType, n: u64) -> (u64, u64) {
        let w = if dtype == DType::F16 { 4 } else { 2 };
        (n.div_ceil(w), u64::from(!n.is_multiple_of(w)))
    }

    /// `Uniform`: `float` `22 + 4·⌈n/2⌉ + 4·[n odd]`; `half` `24 + 4·⌈n/4⌉ + 12·[n%4 ≠ 0]`;
    /// `int` `22 + 6·⌊n/2⌋ + 2·(n % 2)`.
    pub fn uniform(dtype: DType, n: u64) -> u64 {
        let (v, rem) = split(dtype, n);
        match dtype {
            DType::F16 => 24 + 4 * v + 12 * rem,
            DType::I32 => 22 + 6 * (n / 2) + 2 * (n % 2),
            _ => 22 + 4 * v + 4 * rem,
        }
    }

    /// `Bernoulli`: `float`, `int` `23 + ⌈n/2⌉ + [n odd]`; `half` `21 + ⌈n/4⌉ + 9·[n%4 ≠ 0]`.
    pub fn bernoulli(dtype: DType, n: u64) -> u64 {
        let (v, rem) = split(dtype, n);
        match dtype {
            DType::F16 => 21 + v + 9 * rem,
            _ => 23 + v + rem,
        }
    }

    /// `Normal`: `float` `22 + 4·⌈n/2⌉ + 3·[n odd]`; `half` `24 + 4·⌈n/4⌉ + 12·[n%4 ≠ 0]`.
    pub fn normal(dtype: DType, n: u64) -> u64 {
        let (v, rem) = split(dtype, n);
        match dtype {
            DType::F16 => 24 + 4 * v + 12 * rem,
            _ => 22 + 4 * v + 3 * rem,
        }
    }

    /// The iterations poplibs' `TruncatedNormal` estimate is given here: 2 (this module's
    /// rejection takes one attempt of two candidates with probability above 0.6, and poplibs'
    /// vertex a fixed count chosen by its caller).
    pub const TRUNCATED_ITERATIONS: u64 = 2;

    /// `TruncatedNormal` with `it` = [`TRUNCATED_ITERATIONS`]: `float`
    /// `26 + (11·it + 5)·⌈n/2⌉ + (13·it + 2)·[n odd]`; `half`
    /// `28 + (12·it + 5)·⌈n/4⌉ + (12·it + 10)·[n%4 ≠ 0]`.
    pub fn truncated_normal(dtype: DType, n: u64) -> u64 {
        let it = TRUNCATED_ITERATIONS;
        let (v, rem) = split(dtype, n);
        match dtype {
            DType::F16 => 28 + (12 * it + 5) * v + (12 * it + 10) * rem,
            _ => 26 + (11 * it + 5) * v + (13 * it + 2) * rem,
        }
    }

    /// `Dropout`: `24 + 2·⌈n/w⌉ + [rem]·(float 1, half 9)`.
    pub fn dropout(dtype: DType, n: u64) -> u64 {
        let (v, rem) = split(dtype, n);
        24 + 2 * v + rem * if dtype == DType::F16 { 9 } else { 1 }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn estimates_follow_poplibs_for_one_worker() {
            // poplibs' Normal<float> for 6 workers over 120 floats: 4 + 22·6 + 4·60; one
            // worker's share of 20 floats here: 22 + 4·10.
            assert_eq!(normal(DType::F32, 20), 22 + 40);
            assert_eq!(normal(DType::F32, 21), 22 + 44 + 3);
            assert_eq!(uniform(DType::F16, 9), 24 + 12 + 12);
            assert_eq!(uniform(DType::I32, 9), 22 + 24 + 2);
            assert_eq!(bernoulli(DType::I32, 4), 23 + 2);
            assert_eq!(bernoulli(DType::F16, 5), 21 + 2 + 9);
            assert_eq!(truncated_normal(DType::F32, 4), 26 + 27 * 2);
            assert_eq!(dropout(DType::F16, 8), 24 + 4);
        }
    }
}
