//! Engine performance: superstep overhead and exchange throughput. The timing assertions are
//! `#[ignore]`d (they need a quiet machine): run with
//! `cargo test -p poplar --test engine_perf -- --ignored --nocapture`.

#[path = "engine_support/mod.rs"]
mod support;

use std::time::Instant;

use poplar::exe::*;
use poplar::{Engine, Target};
use support::*;

/// 1,472 tiles, each with one empty vertex; program 0 repeats the compute `reps` times.
fn empty_supersteps(reps: u32) -> Executable {
    let mut b = Builder::with_target(Target::gc200(), 64);
    let vs = (0..1472)
        .map(|t| (t, b.vertex("test::Nop", t, vec![], vec![])))
        .collect();
    let c = b.compute_simple("nop", vs);
    b.program(Step::Repeat {
        count: reps,
        body: Box::new(Step::Compute(c)),
    });
    b.build()
}

/// `tiles` tiles, each sending `bytes` to the next tile (a ring halo exchange).
fn halo(tiles: u32, bytes: u32) -> Executable {
    let mut b = Builder::with_target(Target::custom(tiles, 2 * bytes), 2 * bytes);
    for t in 0..tiles {
        b.init(t, 0, vec![t as u8; bytes as usize]);
    }
    let x = b.exchange(
        "halo",
        (0..tiles)
            .map(|t| transfer(t, 0, bytes, vec![((t + 1) % tiles, bytes)]))
            .collect(),
    );
    b.program(Step::Exchange(x));
    b.build()
}

fn superstep_micros(threads: usize) -> f64 {
    let reps = 2000;
    let exe = empty_supersteps(reps);
    let mut e = Engine::new(&exe, opts(threads)).unwrap();
    e.run(0).unwrap(); // warm up
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        e.run(0).unwrap();
        best = best.min(t.elapsed().as_secs_f64() * 1e6 / f64::from(reps));
    }
    best
}

#[test]
fn supersteps_run() {
    let mut e = Engine::new(&empty_supersteps(3), opts(2)).unwrap();
    e.run(0).unwrap();
    let mut e = Engine::new(&halo(16, 4096), opts(2)).unwrap();
    e.run(0).unwrap();
    assert_eq!(e.read_memory(5, 4096, 4096).unwrap(), vec![4u8; 4096]);
}

#[test]
#[ignore]
fn superstep_overhead_at_most_20us() {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let one = superstep_micros(1);
    let all = superstep_micros(threads);
    eprintln!(
        "empty superstep on 1472 tiles: {one:.2} us (1 thread), {all:.2} us ({threads} threads)"
    );
    assert!(all <= 20.0, "{all:.2} us per superstep");
}

#[test]
#[ignore]
fn exchange_at_least_half_memcpy() {
    let tiles = 1472;
    let bytes = 64 * 1024;
    let exe = halo(tiles, bytes);
    let mut e = Engine::new(&exe, poplar::EngineOptions::default()).unwrap();
    e.run(0).unwrap();
    let total = f64::from(tiles) * f64::from(bytes);
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        e.run(0).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
    }
    let engine = total / best / 1e9;
    // Plain memcpy of the same bytes between warm buffers, one thread.
    let src: Vec<Vec<u8>> = (0..tiles).map(|t| vec![t as u8; bytes as usize]).collect();
    let mut dst: Vec<Vec<u8>> = (0..tiles).map(|_| vec![1u8; bytes as usize]).collect();
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for (d, s) in dst.iter_mut().zip(&src) {
            d.copy_from_slice(s);
        }
        std::hint::black_box(&dst);
        best = best.min(t.elapsed().as_secs_f64());
    }
    let memcpy = total / best / 1e9;
    eprintln!("halo exchange {engine:.2} GB/s, memcpy {memcpy:.2} GB/s");
    assert!(
        engine >= 0.5 * memcpy,
        "exchange {engine:.2} GB/s vs memcpy {memcpy:.2} GB/s"
    );
}
