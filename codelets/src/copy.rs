//! `Copy<T>`: `out[i] = input[i]`.
//!
//! The input field is called `input` (`in` is a Rust keyword and the `codelet!` macro registers
//! field names exactly as written).
//!
//! Cycle estimate: poplibs has no copy vertex to follow (Poplar's on-tile copies are its own
//! code); [`cycles::copy`] assumes `Fill`'s overhead and one 64-bit load and store per cycle.

use poplar_core::codelet::*;
use poplar_core::dtype::Element;

use crate::cycles;
use crate::util::same_len;

macro_rules! copy_codelets {
    ($($name:ident as $cname:literal: $t:ty;)*) => {$(
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: `out[i] = input[i]`.")]
            pub struct $name as $cname {
                input: Input<Vector<$t>>,
                out: Output<Vector<$t>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                same_len($cname, "out", self.out.len(), "input", self.input.len())?;
                self.out.copy_from_slice(self.input);
                Ok(())
            }

            /// `23 + ceil(n / (8 bytes))`: no poplibs estimator, see [`cycles::copy`].
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::copy(<$t as Element>::DTYPE).cycles(ctx.elements(Self::out)))
            }
        }
    )*};
}

copy_codelets! {
    CopyF32 as "Copy<float>": f32;
    CopyI32 as "Copy<int>": i32;
    CopyU32 as "Copy<unsigned>": u32;
    CopyBool as "Copy<bool>": bool;
    CopyU8 as "Copy<unsigned char>": u8;
    CopyU16 as "Copy<unsigned short>": u16;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_checks_lengths() {
        let mut out = [0u32; 3];
        let w = Worker { id: 0, count: 1 };
        vertex!(CopyU32 {
            input: &[1, 2, 3],
            out: &mut out,
        })
        .compute(w)
        .unwrap();
        assert_eq!(out, [1, 2, 3]);
        let e = vertex!(CopyU32 {
            input: &[1, 2],
            out: &mut out,
        })
        .compute(w)
        .unwrap_err();
        assert!(
            e.0.contains("Copy<unsigned>") && e.0.contains("'out'"),
            "{e}"
        );
    }
}
