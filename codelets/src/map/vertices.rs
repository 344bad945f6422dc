//! The `Map<T>` and `MapInPlace<T>` codelets of every element type, over [`run`].

use poplar_core::codelet::*;
use poplar_core::f16;

use super::{run, Inputs, Program, Src};
use crate::cycles;

/// One `Map`-family codelet: `$out` is `Output` (`Map<T>`) or `InOut` (`MapInPlace<T>`).
macro_rules! map_codelet {
    ($name:ident as $cname:literal: $t:ty, $out:ident, $doc:literal) => {
        poplar_core::codelet! {
            #[doc = concat!("`", $cname, "`: ", $doc, ", see [the module](super).")]
            pub struct $name as $cname {
                prog: State<Vector<u32>>,
                in_f32: Input<VectorList<f32>>,
                in_f16: Input<VectorList<f16>>,
                in_i32: Input<VectorList<i32>>,
                in_u32: Input<VectorList<u32>>,
                in_u8: Input<VectorList<u8>>,
                in_u16: Input<VectorList<u16>>,
                in_bool: Input<VectorList<bool>>,
                out: $out<Vector<$t>>,
            }
        }

        impl Vertex for $name<'_> {
            fn compute(&mut self, _worker: Worker) -> Result<(), VertexError> {
                let prog = Program::decode(self.prog, <$t as poplar_core::dtype::Element>::DTYPE)?;
                let mut ins = Inputs::default();
                ins.lists[0].extend(self.in_f32.iter().map(Src::F32));
                ins.lists[1].extend(self.in_f16.iter().map(Src::F16));
                ins.lists[2].extend(self.in_i32.iter().map(Src::I32));
                ins.lists[3].extend(self.in_u32.iter().map(Src::U32));
                ins.lists[4].extend(self.in_u8.iter().map(Src::U8));
                ins.lists[5].extend(self.in_u16.iter().map(Src::U16));
                ins.lists[6].extend(self.in_bool.iter().map(Src::Bool));
                run(&prog, &ins, self.out)
            }

            /// Unset estimate: [`cycles::map_fallback`].
            fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
                Some(cycles::map_fallback(
                    ctx.elements(Self::prog),
                    ctx.elements(Self::out),
                ))
            }
        }
    };
}

macro_rules! map_codelets {
    ($($name:ident as $cname:literal, $inplace:ident as $iname:literal: $t:ty;)*) => {$(
        map_codelet!($name as $cname: $t, Output, "`out[i] = prog(inputs[i])`");
        map_codelet!($inplace as $iname: $t, InOut, "`out[i] = prog(out[i], inputs[i])`");
    )*};
}

map_codelets! {
    MapF32 as "Map<float>", MapInPlaceF32 as "MapInPlace<float>": f32;
    MapF16 as "Map<half>", MapInPlaceF16 as "MapInPlace<half>": f16;
    MapI32 as "Map<int>", MapInPlaceI32 as "MapInPlace<int>": i32;
    MapU32 as "Map<unsigned>", MapInPlaceU32 as "MapInPlace<unsigned>": u32;
    MapU8 as "Map<unsigned char>", MapInPlaceU8 as "MapInPlace<unsigned char>": u8;
    MapU16 as "Map<unsigned short>", MapInPlaceU16 as "MapInPlace<unsigned short>": u16;
    MapBool as "Map<bool>", MapInPlaceBool as "MapInPlace<bool>": bool;
}
