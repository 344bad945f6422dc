//! The optimizer's state in Streaming Memory (`--state-chunks K`).
//!
//! Specification: keeping the state in remote buffers and updating it chunk by chunk changes
//! where it lives, not one bit of training: the parameters and the state equal the on-chip
//! run's, sharded or not, on 1 and 2 threads; tile 0 holds one chunk of state instead of all
//! of it; and the transfers appear in the step's modelled cycles.

mod common;

use common::{device_params, small};
use mlp::config::Config;
use mlp::optim::Optimizer;

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn with(opt: Optimizer, r: u32, shard: Option<u32>, chunks: Option<u32>) -> Config {
    Config {
        optimizer: opt,
        shard,
        state_chunks: chunks,
        ..small(r, 4)
    }
}

#[test]
fn state_in_streaming_memory_gives_the_on_chip_bits() {
    use mlp::config::Reduction;
    for opt in [Optimizer::Momentum { momentum: 0.9 }, Optimizer::adam()] {
        for (r, shard, reduction) in [
            (1u32, None, Reduction::Mean),
            (2, None, Reduction::Sum),
            (4, Some(4), Reduction::Mean),
            (4, Some(2), Reduction::Sum),
        ] {
            let with = |opt, r, shard, chunks| Config {
                reduction,
                lr: if reduction == Reduction::Sum {
                    0.002
                } else {
                    0.05
                },
                ..with(opt, r, shard, chunks)
            };
            let chip = with(opt, r, shard, None);
            let (train, _) = mlp::run::data(&chip);
            let want = device_params(&chip, &train, 5, 2);
            for k in [1, 3, 7] {
                let c = with(opt, r, shard, Some(k));
                let threads = 1 + (k as usize % 2);
                assert_eq!(
                    bits(&device_params(&c, &train, 5, threads)),
                    bits(&want),
                    "{opt:?} {reduction:?}, R = {r}, shard {shard:?}, {k} chunks"
                );
            }
        }
    }
}

#[test]
fn the_state_read_back_from_streaming_memory_is_the_on_chip_state() {
    mlp::link();
    let run = |chunks| {
        let c = with(Optimizer::adam(), 1, None, chunks);
        let (train, _) = mlp::run::data(&c);
        let exe = mlp::device::build(&c, &mlp::device::machine(1))
            .unwrap()
            .exe;
        let mut d = mlp::device::Device::new(&exe, &c, 1).unwrap();
        d.set_params(&mlp::model::init(c.shape, c.seed)).unwrap();
        d.feed(&train, 0, 3).unwrap();
        for _ in 0..3 {
            d.step().unwrap();
        }
        let n = c.shape.params();
        let read = |name: &str| match chunks {
            None => d.engine.read_tensor::<f32>(name).unwrap(),
            Some(_) => d.engine.read_remote_buffer::<f32>(name).unwrap()[..n].to_vec(),
        };
        (read("opt a"), read("opt b"), exe)
    };
    let (m0, v0, chip) = run(None);
    let (m1, v1, streamed) = run(Some(4));
    assert_eq!(bits(&m0), bits(&m1));
    assert_eq!(bits(&v0), bits(&v1));
    assert!(m0.iter().any(|&x| x != 0.0), "the state moved");
    // Tile 0 holds a quarter of each state vector (rounded up) instead of all of it: 212
    // parameters, 2 vectors, 53-element chunks. Each chunk costs its own vertex (descriptors
    // and state) and row constant; nothing else differs.
    use poplar::exe::MemoryCategory as M;
    let bytes = |e: &poplar::Executable, f: &dyn Fn(&poplar::exe::MemoryItem) -> bool| -> i64 {
        e.tiles[0]
            .breakdown
            .iter()
            .filter(|i| f(i))
            .map(|i| i64::from(i.bytes))
            .sum()
    };
    let state_chip = bytes(&chip, &|i| i.name == "opt a" || i.name == "opt b");
    let state_streamed = bytes(&streamed, &|i| i.name.ends_with("(staged)"));
    assert_eq!(state_chip, 2 * 212 * 4);
    assert!(
        (2 * 53 * 4..=2 * 53 * 4 + 8).contains(&state_streamed),
        "{state_streamed}"
    );
    let per_chunk = |e: &poplar::Executable| {
        bytes(e, &|i| {
            matches!(
                i.category,
                M::VertexDescriptors | M::VertexState | M::Constant
            )
        })
    };
    let overhead = per_chunk(&streamed) - per_chunk(&chip);
    let (a, b) = (chip.tiles[0].memory_bytes, streamed.tiles[0].memory_bytes);
    let saved = i64::from(a) - i64::from(b);
    assert_eq!(
        saved,
        state_chip - state_streamed - overhead,
        "{a} B on chip, {b} B streamed"
    );
    assert!(saved > 900, "saved {saved} B of tile 0's {a}");
    assert_eq!(streamed.remote_buffers.len(), 2);
}

#[test]
fn the_transfers_are_in_the_step_cycles() {
    mlp::link();
    let c = Config {
        epochs: 1,
        ..with(Optimizer::adam(), 2, None, Some(2))
    };
    let (h, _) = mlp::run::train(&c, 1, |_| {}).unwrap();
    let s = &h.step_cycles;
    // 2 chunks × (2 loads + 2 stores) of 106 floats, beside the batches' streams.
    let plain = Config {
        state_chunks: None,
        ..c.clone()
    };
    let (h0, _) = mlp::run::train(&plain, 1, |_| {}).unwrap();
    assert!(
        s.transfer > h0.step_cycles.transfer + 8 * 1330,
        "{:?} against {:?}",
        s,
        h0.step_cycles
    );
}

#[test]
fn chunks_are_bounded() {
    let (train, _) = mlp::run::data(&small(1, 4));
    for k in [0, 213] {
        let e = with(Optimizer::adam(), 1, None, Some(k))
            .check(train.len())
            .unwrap_err();
        assert_eq!(e.option, "state-chunks", "{e}");
    }
}
