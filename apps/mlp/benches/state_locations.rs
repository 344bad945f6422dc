//! Where the optimizer's state lives, and what it costs: the state's bytes on replica 0's
//! tiles (popnn's per-tensor state, staging buffers or master shards), the fullest tile and
//! the modelled samples per second of one training step for the state on chip or in
//! Streaming Memory (`--state-location`), sharded over the replicas or not (`--shard`),
//! beside the published ratios (popxl-addons' MNIST example: off-chip unsharded 0.40 and
//! off-chip sharded 0.68 of on-chip throughput; ZeRO's 4× state saving at 4-way sharding of
//! mixed-precision Adam). Prints figures; asserts nothing.
//!
//! `cargo bench -p mlp --bench state_locations`

use mlp::config::{Config, TensorStorage};
use poplar::exe::Executable;
use poplar::profile::{estimate_program, CycleModel};

/// Bytes on replica 0's tiles of the optimizer's state and master shards (on chip, staged
/// or sharded).
fn state_bytes(exe: &Executable) -> u64 {
    exe.tiles
        .iter()
        .flat_map(|t| &t.breakdown)
        .filter(|i| {
            i.name.contains("/opt ") || i.name.ends_with("/master") || i.name.contains("(staged)")
        })
        .map(|i| u64::from(i.bytes))
        .sum()
}

/// The benchmark's run: Adam, 64 → 128 → 10, R = 4, m = 32, GA = 4, 4 tiles a layer.
fn base(replicas: u32) -> Config {
    Config::adam_bench(replicas)
}

fn main() {
    mlp::link();
    let replicas = 4u32;
    let base = base(replicas);
    let p = base.shape.params();
    println!(
        "== Adam, {p} parameters, R = {replicas}, m = 32, GA = 4, 4 tiles a layer (modelled, static estimate)"
    );
    println!(
        "  {:<34} {:>12} {:>12} {:>14} {:>10} {:>9}",
        "state", "fullest B", "state B", "samples/s", "of first", "saving"
    );
    let cases = [
        ("on chip", None, TensorStorage::OnChip),
        ("on chip, sharded over 4", Some(4), TensorStorage::OnChip),
        ("Streaming Memory", None, TensorStorage::OffChip),
        (
            "Streaming Memory, sharded over 4",
            Some(4),
            TensorStorage::OffChip,
        ),
    ];
    let mut first = (0u64, 0f64);
    for (name, shard, location) in cases {
        let c = Config {
            shard,
            state_location: location,
            ..base.clone()
        };
        let compiled = match mlp::run::build(&c) {
            Ok(c) => c.popnn,
            Err(e) => {
                println!("  {name:<34} does not fit: {}", e.root_cause());
                continue;
            }
        };
        let (flat, _) = compiled.exe.expand_replicas();
        let model = CycleModel::new(&flat);
        let step = estimate_program(&flat, &model, popnn::train::STEP)
            .expect("the step")
            .cycles;
        let sps = c.global_batch() as f64 / (step as f64 / flat.target.clock_hz);
        let state = state_bytes(&compiled.exe);
        let fullest = compiled.exe.tiles.iter().map(|t| t.memory_bytes).max();
        if first.1 == 0.0 {
            // The first case that fits is the reference.
            first = (state, sps);
        }
        println!(
            "  {:<34} {:>12} {:>12} {:>14.0} {:>10.2} {:>8.2}x",
            name,
            fullest.unwrap_or(0),
            state,
            sps,
            sps / first.1,
            first.0 as f64 / state.max(1) as f64
        );
    }
    let s = p.div_ceil(replicas as usize);
    println!(
        "  ideal sharded state: 3 x ceil({p}/{replicas}) x 4 B = {} B (m, v and the master shard) against 2 x {p} x 4 B = {} B on chip: {:.2}x",
        3 * s * 4,
        2 * p * 4,
        (2 * p) as f64 / (3 * s) as f64
    );
    println!("  published: popxl-addons MNIST, off-chip unsharded 0.40, off-chip sharded 0.68 of on-chip samples/s; ZeRO: 4x less optimizer state at 4-way sharding (mixed-precision Adam)");
}
