//! The executables the framework benchmark times (empty supersteps on 1,472 tiles, a large halo
//! exchange) run correctly. Their speed is measured by `cargo bench -p poplar --bench framework`,
//! not here.

use poplar_core::target::Target;
use poplar_engine::Engine;
use poplar_exe::exe::*;
use poplar_testkit::builder::*;

/// 1,472 tiles, each with one empty vertex; program 0 repeats the compute `reps` times.
fn empty_supersteps(reps: u32) -> Executable {
    let mut b = Builder::with_target(Target::gc200(), 64);
    let vs = (0..1472)
        .map(|t| (t, b.vertex("test::Nop", t, vec![], vec![])))
        .collect();
    let c = b.compute_simple("nop", vs);
    b.program(Step::Repeat {
        count: reps,
        body: Box::new(Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(c))),
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
    b.program(Step::Exchange(poplar_exe::exe::ExchangePhaseId::from_u32(
        x,
    )));
    b.build()
}

#[test]
fn supersteps_run() {
    let mut e = Engine::new(&empty_supersteps(3), opts(2)).unwrap();
    e.run(0).unwrap();
    let mut e = Engine::new(&halo(16, 4096), opts(2)).unwrap();
    e.run(0).unwrap();
    assert_eq!(
        e.read_memory(5.into(), 4096, 4096).unwrap(),
        vec![4u8; 4096]
    );
}
