//! The messages of ONNX's `onnx.proto` (proto2, onnx 1.17.0), as prost code generated from the
//! vendored `proto/onnx.proto` and checked in (`proto/README.md` says how to regenerate it).

#![allow(clippy::all, clippy::pedantic, missing_docs, rustdoc::all)]

include!("onnx.rs");
