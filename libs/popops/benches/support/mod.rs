//! What popops' benches share: medians of timed runs and the per-phase cycle listing.
#![allow(dead_code)] // each bench uses a part of it

use std::time::Instant;

use poplar::profile::Profile;

/// The median of `v` (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median wall seconds of `reps` calls of `f`, and the last call's result.
pub fn median_seconds<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let out = std::hint::black_box(f());
        times.push(t.elapsed().as_secs_f64());
        last = Some(out);
    }
    (median(times), last.expect("at least one run"))
}

/// Each phase of `profile` with its modelled cycles per execution.
pub fn print_phases(profile: &Profile) {
    for p in &profile.phases {
        println!(
            "  phase {:<24} {:?}: {:>9} cycles per run",
            p.name,
            p.kind,
            p.cycles / p.executions.max(1)
        );
    }
}
