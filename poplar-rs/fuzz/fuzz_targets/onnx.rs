//! Fuzzes the ONNX importer (`poponnx`): any bytes give a model or an error, and a model gives
//! a graph on a small chip or an error — never a panic, a hang or a huge allocation.
//!
//! Run with `cargo +nightly fuzz run onnx ../libs/poponnx/tests/corpus` from `poplar-rs/` (the
//! seeds: the models of `libs/poponnx/tests/models/make_models.py`). On stable Rust,
//! `libs/poponnx/tests/fuzz_smoke.rs` replays this property on the seeds and seeded
//! mutations, with the tests.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    poponnx::check_property(data);
});
