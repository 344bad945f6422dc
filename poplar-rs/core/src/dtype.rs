//! Element types of tensors and the Rust types that carry them.

use serde::{Deserialize, Serialize};

/// The element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum DType {
    F32,
    /// Half precision (IEEE binary16, [`half::f16`], re-exported as `poplar::f16`): the
    /// standard library's `<half>` codelets compute in it, rounding each result to nearest or
    /// stochastically (`codelet::rounding`).
    F16,
    I32,
    U32,
    /// Unsigned byte (Poplar's `unsigned char`), e.g. for small per-element tags.
    U8,
    /// Unsigned 16-bit integer (Poplar's `unsigned short`), e.g. tile-local indices: a tile's
    /// memory holds far fewer than 65,536 four-byte elements, so they halve index storage.
    U16,
    /// One byte per element, always 0 or 1.
    Bool,
}

impl DType {
    /// The Rust literal suffix of this type (`5u32`), for messages; empty for bool and f16.
    pub fn rust_suffix(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::F16 | DType::Bool => "",
        }
    }

    /// Bytes per element in tile memory.
    pub const fn size(self) -> usize {
        match self {
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F16 | DType::U16 => 2,
            DType::U8 | DType::Bool => 1,
        }
    }

    /// Poplar-style name used in templated codelet names, e.g. `Fill<float>`.
    pub const fn poplar_name(self) -> &'static str {
        match self {
            DType::F32 => "float",
            DType::F16 => "half",
            DType::I32 => "int",
            DType::U32 => "unsigned",
            DType::U8 => "unsigned char",
            DType::U16 => "unsigned short",
            DType::Bool => "bool",
        }
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::Bool => "bool",
        })
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for bool {}
    impl Sealed for half::f16 {}
}

/// A Rust type that is the element of tensors of one [`DType`].
///
/// Sealed: tile memory is reinterpreted as slices of these types, which is sound only because
/// every bit pattern of the stored bytes is a valid value (for `bool`, the engine and codelets
/// only ever store 0 or 1; see the engine's invariants).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an element type of the chip",
    label = "not f32, f16, i32, u32, u16, u8 or bool",
    note = "codelet fields and tensors hold f32, f16 (`poplar::f16`), i32, u32, u16, u8 or bool: \
            e.g. `Input<f32>`, `Output<Vector<u32>>`, `InOut<VectorList<f32>>`, `State<u8>`"
)]
pub trait Element:
    sealed::Sealed + Copy + Send + Sync + Default + PartialEq + std::fmt::Debug + 'static
{
    const DTYPE: DType;
    /// Appends the little-endian bytes of `self`.
    fn write_le(self, out: &mut Vec<u8>);
    /// Reads one value from exactly `DTYPE.size()` little-endian bytes.
    fn read_le(bytes: &[u8]) -> Self;
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn read_le(b: &[u8]) -> Self {
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}
impl Element for i32 {
    const DTYPE: DType = DType::I32;
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn read_le(b: &[u8]) -> Self {
        i32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}
impl Element for u32 {
    const DTYPE: DType = DType::U32;
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn read_le(b: &[u8]) -> Self {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}
impl Element for u8 {
    const DTYPE: DType = DType::U8;
    fn write_le(self, out: &mut Vec<u8>) {
        out.push(self);
    }
    fn read_le(b: &[u8]) -> Self {
        b[0]
    }
}
impl Element for u16 {
    const DTYPE: DType = DType::U16;
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn read_le(b: &[u8]) -> Self {
        u16::from_le_bytes([b[0], b[1]])
    }
}
impl Element for half::f16 {
    const DTYPE: DType = DType::F16;
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bits().to_le_bytes());
    }
    fn read_le(b: &[u8]) -> Self {
        half::f16::from_bits(u16::from_le_bytes([b[0], b[1]]))
    }
}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn write_le(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
    fn read_le(b: &[u8]) -> Self {
        b[0] != 0
    }
}

/// Encodes a slice of elements as little-endian bytes.
pub fn to_le_bytes<T: Element>(data: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(data));
    for &x in data {
        x.write_le(&mut out);
    }
    out
}

/// Decodes little-endian bytes (length a multiple of the element size) into elements.
pub fn from_le_bytes<T: Element>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(T::DTYPE.size())
        .map(T::read_le)
        .collect()
}
