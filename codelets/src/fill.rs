//! `Fill<T>`: `out[i] = value`, and the multi-worker `FillMulti<float>`.

use poplar::codelet::*;
use poplar::Element;

use crate::cycles;

macro_rules! fill_codelets {
    ($($name:ident as $cname:literal: $t:ty;)*) => {$(
        poplar::codelet! {
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

            /// `OVERHEAD + ceil(n / width)`.
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::elementwise(ctx.elements(Self::out), <$t as Element>::DTYPE, 1))
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

poplar::codelet! {
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

    /// `OVERHEAD + ceil(ceil(n / workers) / width)`.
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(cycles::multi_worker(
            ctx.elements(Self::out),
            ctx.workers,
            f32::DTYPE,
            1,
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
