//! The pipeline bubble: for each schedule, P = 2, 4, 8 stages and M = 4 … 64 micro-batches,
//! the idle fraction measured from a profile of one step's pipeline (`popnn::bubble`: over
//! all stages, and of the busiest stage, the bubble proper) beside the fill-drain figure
//! `(P−1)/(M+P−1)` (Sequential: `(P−1)/P`), the share of time in exchanges, syncs and host
//! transfers (which the figure does not model), and the fullest tile's
//! memory of each schedule (its stash). The model: P equal dense layers of 256 → 256 (GELU,
//! the last one the 256 logits), one stage each, on one tile of each chip, micro-batches of 4.
//! Prints figures; asserts nothing.
//!
//! `cargo bench -p popnn --bench pipeline [-- P]` (one stage count only)

use poplar::profile::{MemoryReport, ProfileOptions};
use poplar::Target;
use poplar::{Engine, EngineOptions};
use popnn::schedule::Schedule;
use popnn::{bubble, Activation, Model, Optimizer, Reduction, TrainOptions, Trainer};

const WIDTH: usize = 256;

fn run(p: usize, m: usize, schedule: Schedule) -> Result<(bubble::Idle, u64), String> {
    let model = Model::mlp(WIDTH, &vec![WIDTH; p - 1], WIDTH, Activation::Gelu).unwrap();
    let opts = TrainOptions {
        replicas: 1,
        stages: p,
        micro_batch: 4,
        accumulate: m,
        tiles: 4,
        schedule,
        recompute: false,
        optimizer: Optimizer::Sgd,
        lr: 0.01,
        reduction: Reduction::Mean,
        ..Default::default()
    };
    let machine = Target {
        num_ipus: p as u32,
        ..Target::custom(4, 624 * 1024)
    };
    let c = match popnn::build(&machine, &model, &opts) {
        Ok(c) => c,
        Err(popnn::TrainError::Compile(poplar::CompileError::OutOfMemory {
            tile, total, ..
        })) => return Err(format!("does not fit: tile {tile} needs {total} B")),
        Err(e) => panic!("building the pipeline: {e}"),
    };
    let fullest = MemoryReport::from_executable(&c.exe).fullest(1)[0].total;
    let engine = Engine::new(&c.exe, EngineOptions::with_threads(2)).expect("an engine");
    let mut t = Trainer::new(&c, engine);
    t.set_params(&model.init(1)).expect("parameters");
    let n = m * opts.micro_batch;
    let x: Vec<f32> = (0..n * WIDTH)
        .map(|i| ((i as f64) * 0.37).sin() as f32)
        .collect();
    let y: Vec<i32> = (0..n).map(|s| (s % WIDTH) as i32).collect();
    t.feed(&[x], &[y]).expect("data");
    t.engine.enable_profiling(ProfileOptions::default());
    t.engine.run(popnn::train::PIPELINE).expect("the pipeline");
    let profile = t.engine.take_profile().expect("a profile");
    let idle = bubble::measure(&profile, p, machine.tiles_per_ipu);
    Ok((idle, fullest))
}

/// The share of elapsed time that is not compute (exchange, syncs, host transfers).
fn overhead(e: &poplar::profile::Split) -> f64 {
    1.0 - e.compute as f64 / e.total().max(1) as f64
}

fn main() {
    popnn::link();
    let only: Option<usize> = std::env::args().skip(1).find_map(|a| a.parse().ok());
    println!("== pipeline bubble: idle fraction measured (profile) against the fill-drain figure");
    println!(
        "  {:<12} {:>3} {:>4} {:>10} {:>11} {:>8} {:>10} {:>8} {:>9} {:>14}",
        "schedule",
        "P",
        "M",
        "all stages",
        "bottleneck",
        "bubble",
        "expected",
        "pp",
        "overhead",
        "fullest tile B"
    );
    for p in [2, 4, 8]
        .into_iter()
        .filter(|p| only.is_none_or(|o| o == *p))
    {
        for m in [4, 8, 16, 32, 64] {
            for schedule in Schedule::ALL {
                let expect = match schedule {
                    Schedule::Sequential => (p as f64 - 1.0) / p as f64,
                    _ => bubble::fill_drain(p, m),
                };
                let name = schedule.name();
                match run(p, m, schedule) {
                    Ok((idle, bytes)) => println!(
                        "  {name:<12} {p:>3} {m:>4} {:>9.1}% {:>10.1}% {:>7.1}% {:>9.1}% {:>+8.2} {:>8.1}% {bytes:>14}",
                        100.0 * idle.fraction,
                        100.0 * idle.bottleneck,
                        100.0 * idle.bubble,
                        100.0 * expect,
                        100.0 * (idle.bubble - expect),
                        100.0 * overhead(&idle.elapsed),
                    ),
                    Err(why) => println!("  {name:<12} {p:>3} {m:>4} {why}"),
                }
            }
        }
    }
}
