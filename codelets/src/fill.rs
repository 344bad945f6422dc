//! `Fill<T>`: `out[i] = value`, and the multi-worker `FillMulti<float>`.
//!
//! Cycle estimates: poplibs' `Fill` (`_fillCycleEstimate`), see [`cycles::fill`].
//! `FillMulti<float>` has no poplibs counterpart (popops splits a fill over the workers as
//! separate `Fill` vertices): one worker's share is `Fill` over `ceil(n / workers)` elements.

use poplar_core::codelet::*;
use poplar_core::dtype::Element;

use crate::cycles;

macro_rules! fill_codelets {
    ($($name:ident as $cname:literal: $t:ty;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `out[i] = value`.")]
            pub struct $name as $cname {
                out: Output<Vector<$t>>,
                value: State<$t>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                self.out.fill(self.value);
                Ok(())
            }

            /// `_fillCycleEstimate`: `23 + ceil(n / 2)` for 32- and 16-bit types.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::fill(<$t as Element>::DTYPE, ctx.elements(Self::out)))
            }
        }
    )*};
}

fill_codelets! {
    FillF32 as "Fill<float>": f32;
    FillI32 as "Fill<int>": i32;
    FillU32 as "Fill<unsigned>": u32;
    FillBool as "Fill<bool>": bool;
    FillU8 as "Fill<unsigned char>": u8;
    FillU16 as "Fill<unsigned short>": u16;
}

poplar_core::codelet! {
    /// `FillMulti<float>`: `out[i] = value`, split over the tile's workers.
    pub struct FillMultiF32 as "FillMulti<float>", multi_worker {
        out: Output<Vector<f32>>,
        value: State<f32>,
    }
}

impl Vertex for FillMultiF32<'_> {
    fn compute(&mut self, worker: Worker) -> Result<(), VertexError> {
        let r = worker.split(self.out.len());
        self.out[r].fill(self.value);
        Ok(())
    }

    /// One worker's share: `Fill<float>` over `ceil(n / workers)` elements.
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let w = u64::from(ctx.workers.max(1));
        Some(cycles::fill(
            f32::DTYPE,
            ctx.elements(Self::out).div_ceil(w),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_and_fill_multi() {
        let mut out = [0i32; 5];
        vertex!(FillI32 {
            out: &mut out,
            value: -3,
        })
        .compute(Worker { id: 0, count: 1 })
        .unwrap();
        assert_eq!(out, [-3; 5]);

        let mut out = [0f32; 13];
        for id in 0..6 {
            vertex!(FillMultiF32 {
                out: &mut out,
                value: 1.5,
            })
            .compute(Worker { id, count: 6 })
            .unwrap();
        }
        assert_eq!(out, [1.5; 13]);
    }
}
