//! Fuzzes the applications' `.npy` reader (`app_support::npy`): any input gives an error or a
//! file whose header agrees with its size, never a panic, a hang or a huge allocation; what
//! loads reads back as many values as its shape claims.
//!
//! Run with `cargo +nightly fuzz run npy` from `poplar-rs/`. On stable Rust,
//! `libs/support/tests/npy_fuzz.rs` replays this property on a seed corpus (and
//! `fuzz/corpus/npy/`) plus seeded mutations, with the tests.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    app_support::npy::check_property(data);
});
