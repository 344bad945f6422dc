//! Initial values of vertex state fields.

use crate::dtype::{to_le_bytes, DType, Element};

/// The initial value of a state field.
#[derive(Debug, Clone, PartialEq)]
pub struct StateValue {
    pub(crate) dtype: DType,
    pub(crate) bytes: Vec<u8>,
    pub(crate) is_vector: bool,
}

impl StateValue {
    /// A vector state value.
    pub fn vector<T: Element>(data: &[T]) -> StateValue {
        StateValue {
            dtype: T::DTYPE,
            bytes: to_le_bytes(data),
            is_vector: true,
        }
    }
    pub fn len(&self) -> usize {
        self.bytes.len() / self.dtype.size()
    }

    /// This value as `to`, if it is a scalar `i32` (an untyped integer literal) whose value
    /// `to` represents exactly.
    pub(crate) fn int_literal_as(&self, to: DType) -> Option<StateValue> {
        if self.is_vector || self.dtype != DType::I32 {
            return None;
        }
        let x = i32::from_le_bytes(self.bytes.as_slice().try_into().ok()?);
        Some(match to {
            DType::U32 => StateValue::from(u32::try_from(x).ok()?),
            DType::U16 => StateValue::from(u16::try_from(x).ok()?),
            DType::U8 => StateValue::from(u8::try_from(x).ok()?),
            DType::F32 if x.unsigned_abs() <= 1 << 24 => StateValue::from(x as f32),
            _ => return None,
        })
    }
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

macro_rules! state_from {
    ($($t:ty),*) => {$(
        impl From<$t> for StateValue {
            fn from(x: $t) -> StateValue {
                StateValue { dtype: <$t as Element>::DTYPE, bytes: to_le_bytes(&[x]), is_vector: false }
            }
        }
        impl From<Vec<$t>> for StateValue {
            fn from(x: Vec<$t>) -> StateValue {
                StateValue::vector(&x)
            }
        }
        impl From<&[$t]> for StateValue {
            fn from(x: &[$t]) -> StateValue {
                StateValue::vector(x)
            }
        }
    )*};
}
state_from!(f32, i32, u32, u8, u16, bool);
