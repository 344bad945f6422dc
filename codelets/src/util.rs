//! Checks shared by the codelets.

use poplar_core::codelet::VertexError;

/// Fails unless field `field` has as many elements as field `other`.
pub(crate) fn same_len(
    codelet: &str,
    field: &str,
    len: usize,
    other: &str,
    other_len: usize,
) -> Result<(), VertexError> {
    if len == other_len {
        Ok(())
    } else {
        Err(VertexError::new(format!(
            "{codelet}: field '{field}' has {len} elements but field '{other}' has {other_len}"
        )))
    }
}

/// Builds a codelet struct from its fields in unit tests (fills in the macro's hidden
/// lifetime marker), so a change of that marker touches only this macro.
#[cfg(test)]
macro_rules! vertex {
    ($name:ident { $($f:ident: $v:expr),* $(,)? }) => {
        $name { $($f: $v,)* __tile: ::std::marker::PhantomData }
    };
}
