//! poplar
