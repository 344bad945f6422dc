//! Where the optimizer's state lives, and what it costs: tile 0's memory and the modelled
//! samples per second of one training step for the state on chip or in Streaming Memory,
//! sharded over the replicas or not, beside the published ratios (popxl-addons' MNIST example:
//! off-chip unsharded 0.40 and off-chip sharded 0.68 of on-chip throughput; ZeRO's 4× state
//! saving at 4-way sharding of mixed-precision Adam). Prints figures; asserts nothing.
//!
//! `cargo bench -p mlp --bench state_locations`

use mlp::config::{Config, Reduction};
use mlp::model::Shape;
use mlp::optim::Optimizer;
use poplar::exe::Executable;
use poplar::profile::{estimate_program, CycleModel};

/// Bytes on tile 0 of the optimizer's state and master weights (on chip, staged or sharded).
fn state_bytes(exe: &Executable) -> u64 {
    exe.tiles[0]
        .breakdown
        .iter()
        .filter(|i| i.name.starts_with("opt ") || i.name == "params shard")
        .map(|i| u64::from(i.bytes))
        .sum()
}

fn main() {
    mlp::link();
    let replicas = 4u32;
    let base = Config {
        replicas,
        micro_batch: 32,
        accumulate: 4,
        epochs: 1,
        lr: 0.001,
        reduction: Reduction::Mean,
        tiles: 4,
        shape: Shape {
            inputs: 64,
            hidden: 128,
            classes: 10,
        },
        per_class: 1000,
        seed: 1,
        optimizer: Optimizer::adam(),
        shard: None,
        state_chunks: None,
    };
    let p = base.shape.params();
    println!(
        "== Adam, {p} parameters, R = {replicas}, m = 32, GA = 4, 4 sample tiles a replica (modelled, static estimate)"
    );
    println!(
        "  {:<34} {:>12} {:>12} {:>14} {:>10} {:>9}",
        "state", "tile 0 B", "state B", "samples/s", "of first", "saving"
    );
    let cases: [(&str, Option<u32>, Option<u32>); 4] = [
        ("on chip", None, None),
        ("on chip, sharded over 4", Some(4), None),
        ("Streaming Memory (8 chunks)", None, Some(8)),
        ("Streaming Memory, sharded over 4", Some(4), Some(8)),
    ];
    let mut chip = (0u64, 0f64);
    // Tile 0's bytes per case, for the sharding's saving below.
    let mut tile0 = Vec::new();
    for (name, shard, chunks) in cases {
        let c = Config {
            shard,
            state_chunks: chunks,
            ..base.clone()
        };
        let compiled = match mlp::device::build(&c, &mlp::device::machine(replicas)) {
            Ok(c) => c,
            Err(e) => {
                println!("  {name:<34} does not fit: {}", e.root_cause());
                continue;
            }
        };
        let (flat, _) = compiled.exe.expand_replicas();
        let model = CycleModel::new(&flat);
        let step = estimate_program(&flat, &model, mlp::device::STEP)
            .expect("the step")
            .cycles;
        let sps = c.global_batch() as f64 / (step as f64 / flat.target.clock_hz);
        let state = state_bytes(&compiled.exe);
        tile0.push((shard, chunks, compiled.exe.tiles[0].memory_bytes));
        if chip.1 == 0.0 {
            // The first case that fits is the reference.
            chip = (state, sps);
        }
        println!(
            "  {:<34} {:>12} {:>12} {:>14.0} {:>10.2} {:>8.2}x",
            name,
            compiled.exe.tiles[0].memory_bytes,
            state,
            sps,
            sps / chip.1,
            chip.0 as f64 / state.max(1) as f64
        );
    }
    let s = p.div_ceil(replicas as usize);
    println!(
        "  ideal sharded state: 3 x ceil({p}/{replicas}) x 4 B = {} B (m, v and the master shard) against 2 x {p} x 4 B = {} B on chip: {:.2}x",
        3 * s * 4,
        2 * p * 4,
        (2 * p) as f64 / (3 * s) as f64
    );
    let on_chip = |shard: Option<u32>| {
        tile0
            .iter()
            .find(|&&(s, k, _)| s == shard && k.is_none())
            .map(|&(_, _, b)| b)
    };
    if let (Some(full), Some(sharded)) = (on_chip(None), on_chip(Some(replicas))) {
        // The ideal: the state and weights shrink from 2 full vectors of state to 3 shards
        // (m, v and the master shard), and nothing else on tile 0 grows.
        let ideal = (2 * p - 3 * s) as i64 * 4;
        let saved = full as i64 - sharded as i64;
        println!(
            "  tile 0 saving of sharding over {replicas} on chip: {saved} B against the ideal {ideal} B ({:.1} %)",
            100.0 * saved as f64 / ideal as f64
        );
    }
    println!("  published: popxl-addons MNIST, off-chip unsharded 0.40, off-chip sharded 0.68 of on-chip samples/s; ZeRO: 4x less optimizer state at 4-way sharding (mixed-precision Adam)");
}
