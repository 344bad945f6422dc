//! Host-side tensors: ONNX's element types, initializers and input arrays as the importer holds
//! them, and their conversion to and from the chip's element types.

use std::path::Path;

use poplar::{f16, DType};

use crate::error::{OnnxError, Result};
use crate::proto::{tensor_proto, TensorProto};

/// An ONNX element type (`TensorProto.DataType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElemType {
    Float,
    Float16,
    Double,
    BFloat16,
    Int8,
    Int16,
    Int32,
    Int64,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Bool,
    String,
    /// Any other code (complex, float8, int4, …).
    Other(i32),
}

impl ElemType {
    /// The type of an ONNX `data_type` code.
    pub fn from_code(code: i32) -> ElemType {
        use tensor_proto::DataType as D;
        match D::try_from(code) {
            Ok(D::Float) => ElemType::Float,
            Ok(D::Float16) => ElemType::Float16,
            Ok(D::Double) => ElemType::Double,
            Ok(D::Bfloat16) => ElemType::BFloat16,
            Ok(D::Int8) => ElemType::Int8,
            Ok(D::Int16) => ElemType::Int16,
            Ok(D::Int32) => ElemType::Int32,
            Ok(D::Int64) => ElemType::Int64,
            Ok(D::Uint8) => ElemType::Uint8,
            Ok(D::Uint16) => ElemType::Uint16,
            Ok(D::Uint32) => ElemType::Uint32,
            Ok(D::Uint64) => ElemType::Uint64,
            Ok(D::Bool) => ElemType::Bool,
            Ok(D::String) => ElemType::String,
            _ => ElemType::Other(code),
        }
    }

    /// ONNX's `data_type` code.
    pub fn code(self) -> i32 {
        use tensor_proto::DataType as D;
        match self {
            ElemType::Float => D::Float as i32,
            ElemType::Float16 => D::Float16 as i32,
            ElemType::Double => D::Double as i32,
            ElemType::BFloat16 => D::Bfloat16 as i32,
            ElemType::Int8 => D::Int8 as i32,
            ElemType::Int16 => D::Int16 as i32,
            ElemType::Int32 => D::Int32 as i32,
            ElemType::Int64 => D::Int64 as i32,
            ElemType::Uint8 => D::Uint8 as i32,
            ElemType::Uint16 => D::Uint16 as i32,
            ElemType::Uint32 => D::Uint32 as i32,
            ElemType::Uint64 => D::Uint64 as i32,
            ElemType::Bool => D::Bool as i32,
            ElemType::String => D::String as i32,
            ElemType::Other(c) => c,
        }
    }

    /// The chip's type holding this type, as PopART maps them: `int64` is held as `i32` (its
    /// values must fit), the other integer and floating types as themselves; `None` for the
    /// types no tile holds (`double`, `int8`, `int16`, 64-bit unsigned, strings, …).
    pub fn device(self) -> Option<DType> {
        Some(match self {
            ElemType::Float => DType::F32,
            ElemType::Float16 => DType::F16,
            ElemType::Int32 | ElemType::Int64 => DType::I32,
            ElemType::Uint8 => DType::U8,
            ElemType::Uint16 => DType::U16,
            ElemType::Uint32 => DType::U32,
            ElemType::Bool => DType::Bool,
            _ => return None,
        })
    }

    /// The ONNX type a chip type stands for when an op creates a value of it.
    pub fn of_device(d: DType) -> ElemType {
        match d {
            DType::F32 => ElemType::Float,
            DType::F16 => ElemType::Float16,
            DType::I32 => ElemType::Int32,
            DType::U32 => ElemType::Uint32,
            DType::U8 => ElemType::Uint8,
            DType::U16 => ElemType::Uint16,
            DType::Bool => ElemType::Bool,
        }
    }

    /// Whether the type is a floating-point one.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElemType::Float | ElemType::Float16 | ElemType::Double | ElemType::BFloat16
        )
    }

    /// ONNX's name of the type (`tensor(float)` without the wrapper).
    pub fn name(self) -> String {
        match self {
            ElemType::Float => "float".into(),
            ElemType::Float16 => "float16".into(),
            ElemType::Double => "double".into(),
            ElemType::BFloat16 => "bfloat16".into(),
            ElemType::Int8 => "int8".into(),
            ElemType::Int16 => "int16".into(),
            ElemType::Int32 => "int32".into(),
            ElemType::Int64 => "int64".into(),
            ElemType::Uint8 => "uint8".into(),
            ElemType::Uint16 => "uint16".into(),
            ElemType::Uint32 => "uint32".into(),
            ElemType::Uint64 => "uint64".into(),
            ElemType::Bool => "bool".into(),
            ElemType::String => "string".into(),
            ElemType::Other(c) => format!("data type {c}"),
        }
    }
}

impl std::fmt::Display for ElemType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// The values of a host tensor: floating types as `f64` (exact for every type ONNX has up to
/// `double`), integer and `bool` types as `i64` (exact for all but `uint64` above `i64::MAX`).
#[derive(Debug, Clone, PartialEq)]
pub enum HostData {
    Float(Vec<f64>),
    Int(Vec<i64>),
}

impl HostData {
    /// The number of values.
    pub fn len(&self) -> usize {
        match self {
            HostData::Float(v) => v.len(),
            HostData::Int(v) => v.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A tensor on the host: an initializer, a constant, an input given by the user or an output
/// read back from the chip.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTensor {
    pub ty: ElemType,
    pub shape: Vec<usize>,
    pub data: HostData,
}

impl HostTensor {
    /// A floating tensor of type `ty` (its values are rounded to it).
    pub fn float(ty: ElemType, shape: &[usize], values: Vec<f64>) -> HostTensor {
        let values = values.into_iter().map(|v| round_to(ty, v)).collect();
        HostTensor {
            ty,
            shape: shape.to_vec(),
            data: HostData::Float(values),
        }
    }

    /// An integer (or `bool`) tensor of type `ty`.
    pub fn int(ty: ElemType, shape: &[usize], values: Vec<i64>) -> HostTensor {
        HostTensor {
            ty,
            shape: shape.to_vec(),
            data: HostData::Int(values),
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The values as `f64`.
    pub fn to_f64(&self) -> Vec<f64> {
        match &self.data {
            HostData::Float(v) => v.clone(),
            HostData::Int(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    /// The values as `i64` (floats truncated toward zero).
    pub fn to_i64(&self) -> Vec<i64> {
        match &self.data {
            HostData::Float(v) => v.iter().map(|&x| x as i64).collect(),
            HostData::Int(v) => v.clone(),
        }
    }

    /// Reads a `TensorProto`: its data inline (typed fields or `raw_data`) or in an external
    /// file beside the model (`base`, the model's folder). `what` names it in errors.
    pub fn from_proto(t: &TensorProto, base: Option<&Path>, what: &str) -> Result<HostTensor> {
        let ty = ElemType::from_code(t.data_type.unwrap_or(0));
        let mut shape = Vec::with_capacity(t.dims.len());
        for &d in &t.dims {
            let d = usize::try_from(d).map_err(|_| invalid(what, format!("dimension {d} < 0")))?;
            shape.push(d);
        }
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| invalid(what, format!("shape {shape:?} overflows")))?;
        let external = t.data_location == Some(tensor_proto::DataLocation::External as i32);
        let raw = if external {
            Some(read_external(t, base, what)?)
        } else {
            t.raw_data.clone()
        };
        let data = match raw {
            Some(bytes) => from_raw(ty, &bytes, n, what)?,
            None => from_typed(ty, t, what)?,
        };
        if data.len() != n {
            return Err(invalid(
                what,
                format!("{} values for shape {shape:?} ({n} elements)", data.len()),
            ));
        }
        Ok(HostTensor { ty, shape, data })
    }

    /// Writes the tensor as a `TensorProto` (raw little-endian data), as ONNX's test data are.
    pub fn to_proto(&self, name: &str) -> TensorProto {
        let mut raw = Vec::new();
        match (&self.data, self.ty) {
            (HostData::Float(v), ElemType::Float) => {
                v.iter().for_each(|&x| raw.extend((x as f32).to_le_bytes()))
            }
            (HostData::Float(v), ElemType::Float16) => v
                .iter()
                .for_each(|&x| raw.extend(poplar::f16_from_f64(x).to_le_bytes())),
            (HostData::Float(v), _) => v.iter().for_each(|&x| raw.extend(x.to_le_bytes())),
            (HostData::Int(v), ty) => {
                let width = int_width(ty);
                v.iter()
                    .for_each(|&x| raw.extend_from_slice(&x.to_le_bytes()[..width]))
            }
        }
        TensorProto {
            dims: self.shape.iter().map(|&d| d as i64).collect(),
            data_type: Some(self.ty.code()),
            name: Some(name.to_string()),
            raw_data: Some(raw),
            ..Default::default()
        }
    }

    /// Checks that every value fits the chip's type for this tensor (an `int64` held as
    /// `i32`); `what` names the tensor.
    pub(crate) fn check_fits_device(&self, what: &str) -> Result<()> {
        if let (HostData::Int(v), Some(DType::I32)) = (&self.data, self.ty.device()) {
            if let Some(bad) = v.iter().find(|&&x| i32::try_from(x).is_err()) {
                return Err(OnnxError::Input {
                    input: what.into(),
                    reason: format!(
                        "value {bad} does not fit the chip's 32-bit integers (int64 is held as i32)"
                    ),
                });
            }
        }
        Ok(())
    }
}

/// Rounds `v` to the precision of the floating type `ty`.
pub(crate) fn round_to(ty: ElemType, v: f64) -> f64 {
    match ty {
        ElemType::Float => v as f32 as f64,
        ElemType::Float16 => poplar::f16_from_f64(v).to_f64(),
        _ => v,
    }
}

fn invalid(what: &str, reason: String) -> OnnxError {
    OnnxError::Invalid {
        what: what.into(),
        reason,
    }
}

fn int_width(ty: ElemType) -> usize {
    match ty {
        ElemType::Int8 | ElemType::Uint8 | ElemType::Bool => 1,
        ElemType::Int16 | ElemType::Uint16 => 2,
        ElemType::Int32 | ElemType::Uint32 => 4,
        _ => 8,
    }
}

fn item_size(ty: ElemType, what: &str) -> Result<usize> {
    Ok(match ty {
        ElemType::Float | ElemType::Int32 | ElemType::Uint32 => 4,
        ElemType::Float16 | ElemType::BFloat16 | ElemType::Int16 | ElemType::Uint16 => 2,
        ElemType::Double | ElemType::Int64 | ElemType::Uint64 => 8,
        ElemType::Int8 | ElemType::Uint8 | ElemType::Bool => 1,
        other => {
            return Err(invalid(
                what,
                format!("element type {other} cannot be read"),
            ))
        }
    })
}

fn from_raw(ty: ElemType, bytes: &[u8], n: usize, what: &str) -> Result<HostData> {
    let size = item_size(ty, what)?;
    if bytes.len() != n.saturating_mul(size) {
        return Err(invalid(
            what,
            format!("{} bytes of data for {n} elements of {ty}", bytes.len()),
        ));
    }
    let items = bytes.chunks_exact(size);
    Ok(match ty {
        ElemType::Float => HostData::Float(
            items
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()) as f64)
                .collect(),
        ),
        ElemType::Float16 => HostData::Float(
            items
                .map(|b| f16::from_le_bytes([b[0], b[1]]).to_f64())
                .collect(),
        ),
        ElemType::BFloat16 => HostData::Float(
            items
                .map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16) as f64)
                .collect(),
        ),
        ElemType::Double => HostData::Float(
            items
                .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
                .collect(),
        ),
        _ => HostData::Int(items.map(|b| int_from_le(ty, b)).collect()),
    })
}

fn int_from_le(ty: ElemType, b: &[u8]) -> i64 {
    match ty {
        ElemType::Int8 => b[0] as i8 as i64,
        ElemType::Uint8 => b[0] as i64,
        ElemType::Bool => (b[0] != 0) as i64,
        ElemType::Int16 => i16::from_le_bytes([b[0], b[1]]) as i64,
        ElemType::Uint16 => u16::from_le_bytes([b[0], b[1]]) as i64,
        ElemType::Int32 => i32::from_le_bytes(b.try_into().unwrap()) as i64,
        ElemType::Uint32 => u32::from_le_bytes(b.try_into().unwrap()) as i64,
        _ => i64::from_le_bytes(b.try_into().unwrap()),
    }
}

fn from_typed(ty: ElemType, t: &TensorProto, what: &str) -> Result<HostData> {
    Ok(match ty {
        ElemType::Float => HostData::Float(t.float_data.iter().map(|&x| x as f64).collect()),
        ElemType::Double => HostData::Float(t.double_data.clone()),
        // float16 and bfloat16 are kept as their bit patterns in int32_data.
        ElemType::Float16 => HostData::Float(
            t.int32_data
                .iter()
                .map(|&x| f16::from_bits(x as u16).to_f64())
                .collect(),
        ),
        ElemType::BFloat16 => HostData::Float(
            t.int32_data
                .iter()
                .map(|&x| f32::from_bits((x as u32 & 0xffff) << 16) as f64)
                .collect(),
        ),
        ElemType::Int64 => HostData::Int(t.int64_data.clone()),
        ElemType::Uint32 | ElemType::Uint64 => {
            HostData::Int(t.uint64_data.iter().map(|&x| x as i64).collect())
        }
        ElemType::Int8
        | ElemType::Int16
        | ElemType::Int32
        | ElemType::Uint8
        | ElemType::Uint16
        | ElemType::Bool => HostData::Int(
            t.int32_data
                .iter()
                .map(|&x| int_from_le(ty, &(x as i64).to_le_bytes()[..int_width(ty).max(1)]))
                .collect(),
        ),
        other => {
            return Err(invalid(
                what,
                format!("element type {other} cannot be read"),
            ))
        }
    })
}

/// The bytes of a tensor kept in an external file (`location`, `offset`, `length`), which must
/// lie inside the model's folder.
fn read_external(t: &TensorProto, base: Option<&Path>, what: &str) -> Result<Vec<u8>> {
    let get = |k: &str| {
        t.external_data
            .iter()
            .find(|e| e.key.as_deref() == Some(k))
            .and_then(|e| e.value.clone())
    };
    let location =
        get("location").ok_or_else(|| invalid(what, "external data without a location".into()))?;
    let base = base.ok_or_else(|| {
        invalid(
            what,
            "external data, but the model was not read from a file".into(),
        )
    })?;
    let rel = Path::new(&location);
    if rel.is_absolute()
        || rel
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(invalid(
            what,
            format!("external data location '{location}' leaves the model's folder"),
        ));
    }
    let path = base.join(rel);
    let bytes = std::fs::read(&path).map_err(|source| OnnxError::Read {
        path: path.clone(),
        source,
    })?;
    let parse = |k: &str| -> Result<Option<usize>> {
        get(k)
            .map(|v| {
                v.parse::<usize>()
                    .map_err(|_| invalid(what, format!("external data {k} '{v}' is not a number")))
            })
            .transpose()
    };
    let offset = parse("offset")?.unwrap_or(0);
    let length = parse("length")?.unwrap_or(bytes.len().saturating_sub(offset));
    let end = offset
        .checked_add(length)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| {
            invalid(
                what,
                format!(
                    "external data {offset}+{length} beyond the {} bytes of {}",
                    bytes.len(),
                    path.display()
                ),
            )
        })?;
    Ok(bytes[offset..end].to_vec())
}
