//! How a codelet's element type computes, so that one macro declares the `float`, `int`,
//! `unsigned` and `half` members of an op family: `float`, `int` and `unsigned` compute in
//! themselves; `half` computes in f32 from its f16 operands and rounds each result once with
//! [`poplar_core::codelet::to_f16`] (to nearest, or stochastically when the engine runs with
//! `EngineOptions::stochastic_rounding`; the element's index in the output picks the random
//! bits). Reductions and dot products of `half` keep the f32 result (the chip's f32 partials).

use poplar_core::codelet::to_f16;
use poplar_core::dtype::Element;
use poplar_core::f16;

/// An element type as the codelets compute with it (module notes).
pub trait Arith: Element {
    /// The type the arithmetic runs in: the element type itself, f32 for `half`.
    type Wide: Copy + Default;
    /// The element as an operand.
    fn widen(self) -> Self::Wide;
    /// A result stored as element `index` of the vertex's output.
    fn narrow(w: Self::Wide, index: usize) -> Self;
}

macro_rules! computes_in_itself {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            type Wide = $t;
            #[inline(always)]
            fn widen(self) -> $t {
                self
            }
            #[inline(always)]
            fn narrow(w: $t, _index: usize) -> $t {
                w
            }
        }
    )*};
}

computes_in_itself!(f32, i32, u32);

impl Arith for f16 {
    type Wide = f32;
    #[inline(always)]
    fn widen(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn narrow(w: f32, index: usize) -> f16 {
        to_f16(w, index)
    }
}
