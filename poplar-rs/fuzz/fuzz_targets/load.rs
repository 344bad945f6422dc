//! Fuzzes `Executable::from_bytes`: any input must give an error or a valid executable, never
//! a panic or a huge allocation; whatever loads must save and load back to the same bytes.
//!
//! Run with `cargo +nightly fuzz run load` from `poplar-rs/`. A seed corpus can be made by
//! saving small executables (e.g. from the engine tests) into `fuzz/corpus/load/`.
//!
//! On stable Rust, `poplar-rs/exe/tests/fuzz_smoke.rs` replays both targets' property on a seed
//! corpus (and `fuzz/corpus/<target>/`) plus random mutations for a bounded time, with the
//! tests; CI runs it longer when the file formats change (`.ci/run`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use poplar::Executable;

fuzz_target!(|data: &[u8]| {
    codelets::link();
    if let Ok(exe) = Executable::from_bytes(data) {
        exe.check().expect("a loaded executable passes check()");
        let bytes = exe.to_bytes();
        let again = Executable::from_bytes(&bytes).expect("a saved executable loads");
        assert_eq!(again.to_bytes(), bytes, "save/load is stable");
    }
});
