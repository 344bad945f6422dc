//! The fuzz target `npy` of `poplar-rs/fuzz` on stable Rust, for a bounded time: the reader's
//! property (`app_support::npy::check_property`: an error or a file whose sizes agree, read
//! back in full, never a panic) on a seed corpus and on seeded mutations of it. cargo-fuzz
//! needs a nightly toolchain, which CI does not have; this runs with every `cargo test`.
//!
//! Time bound: `NPY_FUZZ_SECS` seconds (default 3), and at most `NPY_FUZZ_RUNS` mutated inputs
//! (default 20,000), whichever ends first. The seed comes from `NPY_FUZZ_SEED` (default fixed,
//! so that a failure reproduces); a failing input is written to the temporary folder, named
//! in the failure, for `cargo +nightly fuzz run npy FILE`. Files in `poplar-rs/fuzz/corpus/npy/`
//! are seeds too.

use poplar_core::rand::SplitMix64;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use app_support::npy::check_property;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A `.npy` file of format version `major` with header dict `dict` and raw `data`.
fn npy(major: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let mut h = dict.to_string();
    let pre = if major == 1 { 10 } else { 12 };
    while !(pre + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut b = vec![0x93, b'N', b'U', b'M', b'P', b'Y', major, 0];
    if major == 1 {
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
    } else {
        b.extend_from_slice(&(h.len() as u32).to_le_bytes());
    }
    b.extend_from_slice(h.as_bytes());
    b.extend_from_slice(data);
    b
}

fn dict(descr: &str, fortran: bool, shape: &str) -> String {
    let f = if fortran { "True" } else { "False" };
    format!("{{'descr': '{descr}', 'fortran_order': {f}, 'shape': {shape}, }}")
}

fn seeds() -> Vec<Vec<u8>> {
    let f32s: Vec<u8> = (0..12)
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect();
    let i64s: Vec<u8> = (0..4i64).flat_map(|i| i.to_le_bytes()).collect();
    let mut s = vec![
        npy(1, &dict("<f4", false, "(3, 4)"), &f32s),
        npy(1, &dict("<f4", true, "(4, 3)"), &f32s),
        npy(2, &dict("<f4", false, "(2, 3, 2)"), &f32s),
        npy(3, &dict(">f4", false, "(12,)"), &f32s),
        npy(1, &dict("<i8", false, "(4,)"), &i64s),
        npy(1, &dict("|u1", false, "(5,)"), &[0, 1, 2, 3, 4]),
        npy(1, &dict("<f8", false, "()"), &1.5f64.to_le_bytes()),
        npy(1, &dict("<i4", false, "(0, 7)"), &[]),
        // The lie: a shape whose product wraps to 200, over 200 values.
        npy(
            1,
            &dict("<f4", true, "(9223372036854775908, 2)"),
            &f32s.repeat(17)[..800],
        ),
    ];
    let corpus = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../poplar-rs/fuzz/corpus/npy"
    );
    if let Ok(rd) = std::fs::read_dir(corpus) {
        s.extend(rd.flatten().filter_map(|e| std::fs::read(e.path()).ok()));
    }
    s
}

/// The seeded generator of the mutations: core's SplitMix64, indices drawn below a length.
struct Rng(SplitMix64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
}

/// Numbers a lying header might hold.
const NUMBERS: [&str; 8] = [
    "0",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775908",
    "4294967296",
    "-1",
    "((((",
    "'<f4'",
];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut d = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = d.len();
        match rng.below(7) {
            0 if len > 0 => {
                let i = rng.below(len);
                d[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                d[i] = rng.next() as u8;
            }
            2 => {
                let i = rng.below(len + 1);
                d.insert(i, rng.next() as u8);
            }
            3 if len > 0 => {
                d.remove(rng.below(len));
            }
            4 => d.truncate(rng.below(len + 1)),
            5 => {
                // A digit of the header replaced by a lie.
                let digits: Vec<usize> = (0..len).filter(|&i| d[i].is_ascii_digit()).collect();
                if !digits.is_empty() {
                    let at = digits[rng.below(digits.len())];
                    let n = NUMBERS[rng.below(NUMBERS.len())];
                    d.splice(at..at + 1, n.bytes());
                }
            }
            _ => {
                // The header length field.
                if len >= 10 {
                    d[8] = rng.next() as u8;
                    d[9] = rng.next() as u8;
                }
            }
        }
    }
    d
}

fn fails(data: &[u8]) -> bool {
    catch_unwind(AssertUnwindSafe(|| check_property(data))).is_err()
}

#[test]
fn the_npy_reader_never_panics_on_seeds_or_their_mutations() {
    let secs = env_u64("NPY_FUZZ_SECS", 3);
    let runs = env_u64("NPY_FUZZ_RUNS", 20_000);
    let mut rng = Rng(SplitMix64::new(env_u64("NPY_FUZZ_SEED", 0x005e_ed0f_4e9f)));
    let seeds = seeds();
    for s in &seeds {
        assert!(!fails(s), "a seed fails the property");
    }
    let t0 = Instant::now();
    let mut n = 0;
    while n < runs && t0.elapsed() < Duration::from_secs(secs) {
        let seed = &seeds[rng.below(seeds.len())];
        let input = mutate(&mut rng, seed);
        if fails(&input) {
            let p = std::env::temp_dir().join(format!("npy-fuzz-failure-{}", std::process::id()));
            std::fs::write(&p, &input).unwrap();
            panic!("input {} fails the property", p.display());
        }
        n += 1;
    }
    eprintln!("{n} mutated inputs in {:.1} s", t0.elapsed().as_secs_f64());
    assert!(n > 100, "only {n} inputs tried");
}
