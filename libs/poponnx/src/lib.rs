//! ONNX models on poplar-rs, in the manner of PopART: read an `.onnx` file ([`Model`]), lower
//! its nodes onto the graph-building ops of popops, poplin and popnn ([`import`]), and compile
//! and run it on the simulated chip ([`Session`]).
//!
//! ```no_run
//! use std::collections::BTreeMap;
//! use poponnx::{HostTensor, ImportOptions, Model, Session};
//!
//! let model = Model::load("model.onnx")?;
//! let mut session = Session::new(&model, &poplar::Target::custom(16, 256 * 1024), &ImportOptions::default())?;
//! let mut inputs = BTreeMap::new();
//! inputs.insert("x".to_string(), HostTensor::float(poponnx::ElemType::Float, &[2, 3], vec![0.5; 6]));
//! for (name, value) in session.run(&inputs)? {
//!     println!("{name}: {:?}", value.to_f64());
//! }
//! # Ok::<(), poponnx::OnnxError>(())
//! ```
//!
//! The messages of `onnx.proto` are decoded with `prost` (module `proto`, generated from the
//! vendored `proto/onnx.proto`). Shapes are static: a symbolic or unknown dimension of a graph
//! input is an error naming the input and the axis. Values known when the graph is built
//! (initializers, `Constant`, `Shape` and what is computed from them) stay on the host; the
//! rest are tensors spread over the tiles by the ops' planners. See `docs/onnx.md`.

mod error;
mod fold;
mod host;
mod io;
mod lower;
mod model;
mod proto;
mod rewrite;
mod session;

pub use error::{At, OnnxError, Result};

/// The fuzz target's property (`poplar-rs/fuzz`, target `onnx`; replayed on stable Rust by
/// `tests/fuzz_smoke.rs`): any bytes give a model or an error, and a model gives a graph on a
/// small chip or an error — never a panic, a hang or an allocation far beyond the input's
/// size (host values are bounded; large fills stay on the chip as views).
pub fn check_property(data: &[u8]) {
    if let Ok(model) = Model::from_bytes(data) {
        let _ = import(
            &model,
            &poplar::Target::custom(4, 64 * 1024),
            &ImportOptions::default(),
        );
    }
}
pub use host::{ElemType, HostData, HostTensor};
pub use lower::MAX_ELEMENTS;
pub use model::{
    read_tensor_file, AttrValue, Dim, Model, ModelGraph, Node, ValueInfo, OPSETS, SOFTMAX_OPSET,
};
pub use session::{import, ImportOptions, Imported, Port, Session};
