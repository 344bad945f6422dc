//! Tests of the compiler passes live in tests/.
