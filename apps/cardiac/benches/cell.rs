//! Single-cell mode (`cardiac cell`): beats per second of one paced TP06 cell on the tissue
//! solver's f32 kernel, and of the S1–S2 sweep, whose cells run side by side in the kernel's
//! vector lanes.
//!
//! `cargo bench -p cardiac --bench cell [-- --reps 5]`

use std::time::Instant;

use cardiac::cell::{self, Protocol};
use cardiac::mesh::CellType;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let reps = args
        .iter()
        .position(|a| a == "--reps")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(5usize)
        .max(1);
    for dt in [0.02, 0.01] {
        let p = Protocol {
            beats: 10,
            dt,
            tail: None,
            ..Protocol::reference(CellType::Epi)
        };
        let times: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                let run = cell::pace(&p).expect("pace");
                assert!(run.beats.iter().all(|b| b.is_some()));
                t.elapsed().as_secs_f64()
            })
            .collect();
        let m = median(times.clone());
        // The run is 10 ms before the first pulse, 10 beats of 1000 ms and one more BCL after
        // the last pulse: 10,010 ms, i.e. 10.01 beats of 1000 ms.
        let beats = 10.01;
        println!(
            "one cell, TP06 epi, dt {dt} ms, 10 beats at 1000 ms: median {m:.3} s (min {:.3}, max {:.3}; {reps} runs): {:.1} beats/s, {:.2} µs per step",
            times.iter().cloned().fold(f64::INFINITY, f64::min),
            times.iter().cloned().fold(0.0, f64::max),
            beats / m,
            m / (beats * 1000.0 / dt) * 1e6
        );
    }
    let p = Protocol {
        beats: 3,
        ..Protocol::reference(CellType::Epi)
    };
    let s2: Vec<f64> = (0..64).map(|k| 250.0 + 12.5 * k as f64).collect();
    let times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            let (_, c) = cell::restitution(&p, &s2).expect("restitution");
            assert_eq!(c.len(), 64);
            t.elapsed().as_secs_f64()
        })
        .collect();
    let m = median(times);
    // Each of the 64 cells simulates 3 S1 beats, its S2 beat and a 1000 ms tail.
    let longest = s2.iter().cloned().fold(0.0, f64::max);
    let ms = 2.0 * 1000.0 + 10.0 + longest + 1000.0;
    println!(
        "S1-S2 sweep, 64 intervals (250..1037.5 ms), 3 S1 beats, dt 0.02: median {m:.3} s: {:.1} cell-beats/s ({:.0} simulated cell-ms per second)",
        64.0 * ms / 1000.0 / m,
        64.0 * ms / m
    );
}
