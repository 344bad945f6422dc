//! The model that does not fit (`popnn::presets::wide` on the 64-tile `wide_chip`): where the
//! optimizer's state lives, or how the layers are split, against the fullest tile's memory
//! and the modelled throughput of a training step (static estimate), beside the published
//! figures: popxl-addons' MNIST example (off-chip unsharded 0.40 and off-chip sharded 0.68 of
//! on-chip throughput) and ZeRO's optimizer-state saving (4× for mixed-precision Adam at
//! large R; `(k+1)·⌈n/R⌉` of `k·n` elements here, the master copy included). On chip the model
//! does not fit: its row is the compiler's refusal, and the throughput ratios use the same
//! model on a chip with twice the tile memory as the on-chip baseline. Then two steps of
//! training per configuration that fits (the loss must fall). Prints figures; asserts nothing.
//!
//! `cargo bench -p popnn --bench locations [-- --no-train]`

use poplar::profile::{estimate_program, CycleModel, MemoryReport};
use poplar::{Engine, EngineOptions};
use popnn::presets::{wide, wide_chip};
use popnn::{Optimizer, TensorLocation, TensorStorage, TrainOptions, Trainer};

const R: u32 = 4;

struct Case {
    name: &'static str,
    replicas: u32,
    stages: usize,
    location: TensorLocation,
}

fn location(storage: TensorStorage, sharded: bool) -> TensorLocation {
    TensorLocation {
        storage,
        replicated_tensor_sharding: sharded,
    }
}

fn options(c: &Case) -> TrainOptions {
    TrainOptions {
        replicas: c.replicas,
        stages: c.stages,
        micro_batch: 4,
        accumulate: 4,
        tiles: popnn::presets::WIDE_CHIP_TILES as usize,
        optimizer: Optimizer::adam(),
        lr: 1e-4,
        optimizer_state_location: c.location,
        ..Default::default()
    }
}

/// Samples per second of one step (static estimate of the step program).
fn samples_per_second(c: &popnn::Compiled) -> f64 {
    let (flat, _) = c.exe.expand_replicas();
    let model = CycleModel::new(&flat);
    let cycles = estimate_program(&flat, &model, popnn::train::STEP).map_or(0, |e| e.cycles);
    c.opts.global_batch() as f64 * flat.target.clock_hz / cycles.max(1) as f64
}

/// Bytes of the optimizer's state and master shards on `tile`.
fn state_bytes(exe: &poplar::Executable, tile: usize) -> u64 {
    exe.tiles[tile]
        .breakdown
        .iter()
        .filter(|i| {
            i.name.contains("/opt ") || i.name.ends_with("/master") || i.name.contains("(staged)")
        })
        .map(|i| u64::from(i.bytes))
        .sum()
}

fn main() {
    popnn::link();
    let train = !std::env::args().any(|a| a == "--no-train");
    let model = wide();
    let cases = [
        Case {
            name: "on chip",
            replicas: R,
            stages: 1,
            location: TensorLocation::default(),
        },
        Case {
            name: "(a) on chip, sharded over 4",
            replicas: R,
            stages: 1,
            location: location(TensorStorage::OnChip, true),
        },
        Case {
            name: "(b) off chip",
            replicas: R,
            stages: 1,
            location: location(TensorStorage::OffChip, false),
        },
        Case {
            name: "(c) off chip, sharded over 4",
            replicas: R,
            stages: 1,
            location: location(TensorStorage::OffChip, true),
        },
        Case {
            name: "(d) pipelined over 2 chips",
            replicas: R,
            stages: 2,
            location: TensorLocation::default(),
        },
        Case {
            name: "(d) pipelined over 4 chips",
            replicas: R,
            stages: 4,
            location: TensorLocation::default(),
        },
    ];
    println!(
        "== {} parameters, Adam, R = {R}, m = 4, M = 4, {} tiles of 624 KiB a chip (modelled, static estimate)",
        model.params(),
        popnn::presets::WIDE_CHIP_TILES
    );
    // The on-chip baseline's throughput, on a chip with twice the memory.
    let roomy = poplar::Target {
        bytes_per_tile: 2 * 624 * 1024,
        ..wide_chip(R)
    };
    let base = popnn::build(&roomy, &model, &options(&cases[0])).expect("the roomy baseline");
    let base_rate = samples_per_second(&base);
    let base_state = state_bytes(&base.exe, 0);
    let base_total = MemoryReport::from_executable(&base.exe).fullest(1)[0].total;
    println!(
        "  {:<30} {:>14} {:>10} {:>10} {:>9} {:>7} {:>10} {:>10}",
        "state",
        "fullest tile B",
        "state B",
        "samples/s",
        "of on-chip",
        "saving",
        "tile saved",
        "of ideal"
    );
    for c in &cases {
        let machine = wide_chip(c.replicas * c.stages as u32);
        match popnn::build(&machine, &model, &options(c)) {
            Ok(compiled) => {
                let report = MemoryReport::from_executable(&compiled.exe);
                let fullest = report.fullest(1)[0];
                let rate = samples_per_second(&compiled);
                let st = state_bytes(&compiled.exe, fullest.tile as usize);
                // The ideal saving of the fullest tile: its state, `k·n` elements, down to
                // `(k+1)·⌈n/R⌉` sharded (the master copy), or to nothing but staging off chip.
                let saved = base_total as i64 - fullest.total as i64;
                let ideal = base_state as i64 - st as i64;
                let of_ideal = if c.stages > 1 {
                    "-".to_string()
                } else {
                    format!("{:.0}%", 100.0 * saved as f64 / ideal.max(1) as f64)
                };
                println!(
                    "  {:<30} {:>14} {:>10} {:>10.0} {:>9.2} {:>6.2}x {:>10} {:>10}",
                    c.name,
                    fullest.total,
                    st,
                    rate,
                    rate / base_rate,
                    base_state as f64 / st.max(1) as f64,
                    saved,
                    of_ideal
                );
                if train {
                    print_training(&compiled, &model);
                }
            }
            Err(e) => println!("  {:<30} refused: {e}", c.name),
        }
    }
    println!(
        "  (on-chip baseline on 2 × 624 KiB tiles: {base_total} B on its fullest tile, {base_rate:.0} samples/s, state {base_state} B on tile 0)"
    );
    println!("  published: off chip 0.40, off chip sharded 0.68 of on chip (popxl-addons); ZeRO 4x state saving");
}

/// Two steps of training on generated data: the loss of each.
fn print_training(c: &popnn::Compiled, model: &popnn::Model) {
    let engine = Engine::new(&c.exe, EngineOptions::with_threads(2)).expect("an engine");
    let mut t = Trainer::new(c, engine);
    t.set_params(&model.init(1)).expect("parameters");
    let per = c.opts.micro_batch * c.opts.accumulate * 2;
    let d = model.inputs();
    let (mut xs, mut ys) = (vec![], vec![]);
    for r in 0..c.opts.replicas as usize {
        let x: Vec<f32> = (0..per * d)
            .map(|i| (((i + 31 * r) as f64) * 0.013).sin() as f32)
            .collect();
        // The label: the largest of the first ten features (learnable by the first layer).
        let y: Vec<i32> = (0..per)
            .map(|s| popnn::math::best_class(&x[s * d..s * d + 10]) as i32)
            .collect();
        xs.push(x);
        ys.push(y);
    }
    t.feed(&xs, &ys).expect("data");
    let mut losses = Vec::new();
    for _ in 0..2 {
        t.step().expect("a step");
        let (loss, _) = t.take_stats().expect("stats");
        losses.push(loss / c.opts.global_batch() as f64);
    }
    println!(
        "      trained: mean loss {:.4} then {:.4}",
        losses[0], losses[1]
    );
}
