//! The fuzz target `onnx` of `poplar-rs/fuzz` on stable Rust, for a bounded time: the
//! importer's property (`poponnx::check_property`: a model or an error, a graph or an error,
//! never a panic) on the seed corpus (`tests/corpus/`, the models of
//! `tests/models/make_models.py`) and on seeded mutations of it. cargo-fuzz needs a nightly
//! toolchain, which CI does not have; this runs with every `cargo test`.
//!
//! Time bound: `ONNX_FUZZ_SECS` seconds (default 3), and at most `ONNX_FUZZ_RUNS` mutated
//! inputs (default 20,000), whichever ends first. The seed comes from `ONNX_FUZZ_SEED`
//! (default fixed, so that a failure reproduces); a failing input is written to the temporary
//! folder, named in the failure, for `cargo +nightly fuzz run onnx FILE`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use poplar::rand::SplitMix64;
use poponnx::check_property;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn seeds() -> Vec<Vec<u8>> {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(corpus)
        .unwrap_or_else(|e| panic!("{corpus}: {e}"))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "onnx"))
        .collect();
    files.sort();
    files.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// Varints a lying field might hold: sizes, dimensions and counts at their limits.
const VARINTS: [u64; 6] = [0, 1, 0x7fff_ffff, 0xffff_ffff, 1 << 40, u64::MAX];

fn varint(mut v: u64) -> Vec<u8> {
    let mut b = Vec::new();
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            b.push(byte);
            return b;
        }
        b.push(byte | 0x80);
    }
}

fn mutate(rng: &mut SplitMix64, seed: &[u8]) -> Vec<u8> {
    let mut d = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = d.len();
        let at = rng.below(len.max(1) as u64) as usize;
        match rng.below(6) {
            0 if len > 0 => d[at] ^= 1 << rng.below(8),
            1 if len > 0 => d[at] = rng.next_u64() as u8,
            2 => d.insert(at.min(len), rng.next_u64() as u8),
            3 if len > 0 => {
                d.remove(at);
            }
            4 => d.truncate(at),
            _ if len > 0 => {
                // A byte replaced by a varint at a limit (a length, a dimension, a count).
                let v = VARINTS[rng.below(VARINTS.len() as u64) as usize];
                d.splice(at..at + 1, varint(v));
            }
            _ => {}
        }
    }
    d
}

fn fails(data: &[u8]) -> bool {
    catch_unwind(AssertUnwindSafe(|| check_property(data))).is_err()
}

#[test]
fn the_importer_never_panics_on_seeds_or_their_mutations() {
    let secs = env_u64("ONNX_FUZZ_SECS", 3);
    let runs = env_u64("ONNX_FUZZ_RUNS", 20_000);
    let mut rng = SplitMix64::new(env_u64("ONNX_FUZZ_SEED", 0x0000_0e4e_f022));
    let seeds = seeds();
    assert!(seeds.len() >= 3, "the seed corpus is missing");
    for s in &seeds {
        assert!(!fails(s), "a seed fails the property");
    }
    let start = Instant::now();
    let (mut n, mut decoded) = (0u64, 0u64);
    while n < runs && start.elapsed() < Duration::from_secs(secs) {
        let seed = &seeds[rng.below(seeds.len() as u64) as usize];
        let input = mutate(&mut rng, seed);
        if fails(&input) {
            let path =
                std::env::temp_dir().join(format!("poponnx-fuzz-{}.onnx", std::process::id()));
            std::fs::write(&path, &input).unwrap();
            panic!(
                "input {n} breaks the property: written to {}",
                path.display()
            );
        }
        decoded += poponnx::Model::from_bytes(&input).is_ok() as u64;
        n += 1;
    }
    println!(
        "onnx fuzz smoke: {n} mutated inputs in {:.1} s, {decoded} of them decoded to models and imported",
        start.elapsed().as_secs_f64()
    );
    // The mutations must reach the importer, not only the decoder's refusals.
    assert!(decoded * 20 >= n, "only {decoded} of {n} mutations decoded");
}
