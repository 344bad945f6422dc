//! The fuzz targets of `poplar-rs/fuzz` on stable Rust, for a bounded time: each target's
//! property on a seed corpus and on random mutations of it. cargo-fuzz needs a nightly
//! toolchain, which CI does not have; this runs with every `cargo test --workspace`.
//!
//! The property (as in `fuzz/fuzz_targets/load.rs` and `load_fixed_crc.rs`): any input gives an
//! error or a valid executable, never a panic; whatever loads passes `check()` and saves and
//! loads back to the same bytes. `load_fixed_crc` first rewrites every checksum to match, so
//! that mutations reach the manifest, the section bookkeeping and `check()`.
//!
//! Time bound: `POPLAR_FUZZ_SMOKE_SECS` seconds per target (default 5), and at most
//! `POPLAR_FUZZ_SMOKE_RUNS` mutated inputs per target (default 20,000), whichever ends first.
//! The seed comes from `POPLAR_FUZZ_SMOKE_SEED` (default fixed, so a failure reproduces); a
//! failing input is written to the temporary folder, named in the failure, for
//! `cargo +nightly fuzz run TARGET FILE`. Seed files in `fuzz/corpus/<target>/` are used too.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use poplar_core::rand::SplitMix64;
use poplar_exe::exe::{Executable, Step, SyncKind};
use poplar_testkit::builder::*;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The property of both targets.
fn property(data: &[u8]) {
    if let Ok(exe) = Executable::from_bytes(data) {
        exe.check().expect("a loaded executable passes check()");
        let bytes = exe.to_bytes();
        let again = Executable::from_bytes(&bytes).expect("a saved executable loads");
        assert_eq!(again.to_bytes(), bytes, "save/load is stable");
    }
}

/// Recomputes the manifest and section CRCs in place, following the lengths as far as they go
/// (the same as `fuzz_targets/load_fixed_crc.rs`).
fn fix_crcs(d: &mut [u8]) {
    let u64_at = |d: &[u8], i: usize| {
        d.get(i..i + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    };
    let Some(mlen) = u64_at(d, 12) else { return };
    let Some(mend) = 24usize.checked_add(mlen as usize).filter(|&e| e <= d.len()) else {
        return;
    };
    let crc = crc32fast::hash(&d[24..mend]);
    d[20..24].copy_from_slice(&crc.to_le_bytes());
    let Some(count) = d
        .get(mend..mend + 4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    else {
        return;
    };
    let mut pos = mend + 4;
    for _ in 0..count.min(16) {
        let Some(len) = u64_at(d, pos + 4) else {
            return;
        };
        let start = pos + 16;
        let Some(end) = start.checked_add(len as usize).filter(|&e| e <= d.len()) else {
            return;
        };
        let crc = crc32fast::hash(&d[start..end]);
        d[pos + 12..pos + 16].copy_from_slice(&crc.to_le_bytes());
        pos = end;
    }
}

/// An index in `0..n` from core's SplitMix64 (`n = 0` is taken as 1).
trait Pick {
    fn pick(&mut self, n: usize) -> usize;
}
impl Pick for SplitMix64 {
    fn pick(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}

/// One random mutation of `d`: byte flips, interesting integers, JSON digits, truncation,
/// insertion, duplication of a run (libFuzzer's usual moves, fewer of them).
fn mutate(rng: &mut SplitMix64, d: &mut Vec<u8>) {
    if d.is_empty() {
        d.push(rng.next_u64() as u8);
        return;
    }
    let at = rng.pick(d.len());
    match rng.pick(8) {
        0 => d[at] ^= 1 << rng.pick(8),
        1 => d[at] = rng.next_u64() as u8,
        2 => {
            let v: [u8; 4] = match rng.pick(4) {
                0 => 0u32.to_le_bytes(),
                1 => u32::MAX.to_le_bytes(),
                2 => 0x8000_0000u32.to_le_bytes(),
                _ => (rng.next_u64() as u32).to_le_bytes(),
            };
            for (k, b) in v.iter().enumerate() {
                if let Some(x) = d.get_mut(at + k) {
                    *x = *b;
                }
            }
        }
        3 => {
            // A digit of the JSON manifest: counts, offsets, lengths, tile numbers.
            if d[at].is_ascii_digit() {
                d[at] = b"0123456789"[rng.pick(10)];
            } else if let Some(p) = d[at..].iter().position(u8::is_ascii_digit) {
                d[at + p] = b"09"[rng.pick(2)];
            }
        }
        4 => d.truncate(at),
        5 => {
            let n = 1 + rng.pick(8);
            for _ in 0..n {
                d.insert(at, rng.next_u64() as u8);
            }
        }
        6 => {
            let end = (at + 1 + rng.pick(32)).min(d.len());
            let run = d[at..end].to_vec();
            let to = rng.pick(d.len());
            d.splice(to..to, run);
        }
        _ => {
            let end = (at + 1 + rng.pick(16)).min(d.len());
            d.drain(at..end);
        }
    }
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    let mut e = sample_exe();
    seeds.push(e.to_bytes());
    e.functions.push(Step::Sync(SyncKind::Global));
    e.programs.push(Step::Repeat {
        count: 3,
        body: Box::new(Step::Call(poplar_exe::exe::FunctionId::from_u32(0))),
    });
    e.app_sections.insert("app".into(), vec![1, 2, 3]);
    seeds.push(e.to_bytes());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    if let Ok(rd) = std::fs::read_dir(dir) {
        for f in rd.flatten() {
            if f.file_type().is_ok_and(|t| t.is_file()) {
                if let Ok(b) = std::fs::read(f.path()) {
                    seeds.push(b);
                }
            }
        }
    }
    seeds
}

/// Runs `target` on its corpus, then on mutations for the time bound; on a panic, saves the
/// input and fails naming it.
fn smoke(target: &str, fix: bool) {
    let secs = env_u64("POPLAR_FUZZ_SMOKE_SECS", 5);
    let runs = env_u64("POPLAR_FUZZ_SMOKE_RUNS", 20_000);
    let seed = env_u64("POPLAR_FUZZ_SMOKE_SEED", 0x5eed_f00d);
    let seeds = corpus(target);
    let mut rng = SplitMix64::new(seed ^ ((target.len() as u64) << 32));
    let start = Instant::now();
    let run_one = |input: &[u8]| {
        let mut d = input.to_vec();
        if fix {
            fix_crcs(&mut d);
        }
        if catch_unwind(AssertUnwindSafe(|| property(&d))).is_err() {
            let path = std::env::temp_dir().join(format!(
                "poplar-fuzz-smoke-{target}-{}.bin",
                std::process::id()
            ));
            std::fs::write(&path, input).unwrap();
            panic!(
                "fuzz target {target}: the input saved as {} breaks the property (seed {seed:#x})",
                path.display()
            );
        }
    };
    for s in &seeds {
        run_one(s);
    }
    let mut done = 0u64;
    while done < runs && start.elapsed() < Duration::from_secs(secs) {
        let mut d = seeds[rng.pick(seeds.len())].clone();
        for _ in 0..1 + rng.pick(4) {
            mutate(&mut rng, &mut d);
        }
        run_one(&d);
        done += 1;
    }
    eprintln!(
        "fuzz smoke {target}: {} seeds and {done} mutations in {:.1} s",
        seeds.len(),
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn fuzz_target_load() {
    smoke("load", false);
}

#[test]
fn fuzz_target_load_fixed_crc() {
    smoke("load_fixed_crc", true);
}
