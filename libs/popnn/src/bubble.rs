//! The pipeline's idle fraction, measured from a profile of the pipeline program
//! ([`crate::train::PIPELINE`]) of replica 0: a stage's chip is busy while its busiest tile
//! computes, idle otherwise (waiting for other stages, exchanging, syncing), so
//! `idle = 1 − Σ_stages busy / (P · elapsed)`. A fill-drain pipeline of balanced stages
//! idles `(P−1)/(M+P−1)` ([`fill_drain`]). Stages are rarely balanced (the first has no input
//! gradient to compute, the last has the loss), and a pipeline runs at the pace of its
//! slowest stage: the bubble proper is that stage's idle fraction, `1 − max busy / elapsed`
//! ([`Idle::bottleneck`]). The fill-drain figure models compute only: [`Idle::bubble`] is the
//! busiest stage's idle fraction of the compute phases (`1 − max busy / elapsed compute`);
//! the rest of the bottleneck's idle time is the exchanges, syncs and host transfers of the
//! pipeline, which the profile's split reports.

use poplar_exe::profile::Profile;

/// What a profile of the pipeline says about its stages.
#[derive(Debug, Clone, PartialEq)]
pub struct Idle {
    /// Modelled elapsed cycles of the profiled runs, split by what advanced the slowest tile.
    pub elapsed: poplar_exe::profile::Split,
    /// Per stage: compute cycles of its chip's busiest tile.
    pub busy: Vec<u64>,
    /// `1 − Σ busy / (P · elapsed)`.
    pub fraction: f64,
    /// The busiest stage's idle fraction, `1 − max busy / elapsed`.
    pub bottleneck: f64,
    /// The busiest stage's idle fraction of the compute phases, `1 − max busy / compute`.
    pub bubble: f64,
}

/// The idle fraction of `stages` stages of `tiles_per_chip` tiles each (replica 0's chips
/// `0..stages`) in `profile`.
pub fn measure(profile: &Profile, stages: usize, tiles_per_chip: u32) -> Idle {
    let per = tiles_per_chip as usize;
    let busy: Vec<u64> = (0..stages)
        .map(|s| {
            let tiles = profile.tiles.compute.iter().skip(s * per).take(per);
            tiles.copied().max().unwrap_or(0)
        })
        .collect();
    let idle = |busy: u64, of: usize, elapsed: u64| {
        if elapsed == 0 {
            0.0
        } else {
            1.0 - busy as f64 / (of as f64 * elapsed as f64)
        }
    };
    let (total, compute) = (profile.elapsed.total(), profile.elapsed.compute);
    let max = busy.iter().copied().max().unwrap_or(0);
    Idle {
        elapsed: profile.elapsed,
        fraction: idle(busy.iter().sum(), stages, total),
        bottleneck: idle(max, 1, total),
        bubble: idle(max, 1, compute),
        busy,
    }
}

/// `(P−1)/(M+P−1)`: the idle fraction of a fill-drain pipeline of `p` balanced stages and `m`
/// micro-batches (GPipe).
pub fn fill_drain(p: usize, m: usize) -> f64 {
    (p as f64 - 1.0) / (m + p - 1).max(1) as f64
}
