//! `cardiac study`: the paper's experiments on a mesh over several chip counts, from compiled
//! executables and the static cycle model (nothing is simulated): Table 1 (partition and halo
//! figures), Table 2 (modelled cycles per phase per tile), Figure 5 (modelled time per
//! simulated millisecond against ideal scaling), and the set-up cost (partition + build,
//! compile, peak memory) of each chip count.

use std::time::Instant;

use anyhow::{ensure, Result};
use poplar::profile::model::{EvenPorts, ExchangeBreakdown};
use poplar::profile::{estimate_program, CycleModel};
use serde::Serialize;

use crate::app::advice;
use crate::app::problem::{self, ProblemSpec};
use crate::partition::{PartitionStats, Strategy, TileStats};
use crate::solver::device;

/// The paper's figures for heart04 on one chip (§7): Table 1's median own and halo cells per
/// tile and the halo share per chip count, Table 2's phases (min, mean, max cycles per tile).
pub const PAPER_OWN_CELLS: usize = 2_058;
pub const PAPER_HALO_CELLS: usize = 2_226;
/// Halo share of a tile's cells with 1, 2, 4, 8 and 16 chips (%).
pub const PAPER_HALO_SHARE: [(u32, f64); 5] =
    [(1, 51.9), (2, 63.33), (4, 72.60), (8, 80.20), (16, 86.13)];
pub const PAPER_PDE_COMPUTE: [f64; 3] = [231e3, 238e3, 245e3];
pub const PAPER_ODE_COMPUTE: [f64; 3] = [2.7e6, 2.8e6, 2.9e6];

/// Distribution of a per-tile figure over the tiles with cells.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub min: f64,
    pub mean: f64,
    pub max: f64,
    pub sd: f64,
}

impl Spread {
    pub fn of(v: &[f64]) -> Spread {
        let n = v.len().max(1) as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        Spread {
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            mean,
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            sd: var.sqrt(),
        }
    }
}

/// Table 1's figures of one chip count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Halo {
    /// The biggest partition: own + halo cells, inbound (halo) cells, unused halo cells.
    pub max_total: usize,
    pub max_inbound: usize,
    pub max_unused: usize,
    /// Median interior + separator and halo cells per tile, and the halo share of a tile's
    /// cells at those medians (%).
    pub median_own: usize,
    pub median_halo: usize,
    pub halo_share: f64,
}

/// Table 2's phases per tile, in modelled cycles: one PDE step's SpMV and its halo exchange,
/// and one ODE step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Phases {
    pub pde_compute: Spread,
    pub pde_exchange: Spread,
    pub ode_compute: Spread,
    /// Tiles' busy share of the halo exchange: mean over max of `pde_exchange` (the paper:
    /// 57.4 %).
    pub exchange_effectiveness: f64,
    /// Bytes one PDE step's halo exchange moves between chips.
    pub inter_chip_bytes: u64,
    /// The busiest ordered chip pair of that exchange: the bytes crossing its links (a
    /// broadcast once per chip), the cycles they take, and its hops; the tiles sending or
    /// receiving over it wait that long plus the hop latency (the cycle model's link floor).
    /// Zero on one chip.
    pub busiest_link_bytes: u64,
    pub busiest_link_cycles: u64,
    pub busiest_link_hops: u32,
    /// The most hops any inter-chip message of the exchange travels (0 on one chip).
    pub max_hops: u32,
    /// What the exchange's slowest tile spends its cycles on.
    pub slowest_exchange: SlowestExchange,
    /// The exchange with every tile's port at the mean and its waits for links and hops as
    /// they are ([`EvenPorts`], the per-tile sums over the exchange's phases): what evening
    /// the tiles' halos could give with this chip-level cut.
    pub even_ports: EvenPorts,
}

/// The slowest tile of one PDE step's halo exchange and what its cycles are made of: the cycle
/// model's breakdown, summed over the exchange's phases (its side that of the last);
/// `breakdown.cycles()` is `cycles`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SlowestExchange {
    pub tile: u32,
    pub cycles: u64,
    pub breakdown: ExchangeBreakdown,
}

/// One chip count of the study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub chips: u32,
    pub tiles: usize,
    pub halo: Halo,
    pub phases: Phases,
    /// Modelled chip time per simulated millisecond (s).
    pub seconds_per_ms: f64,
    /// Host set-up: partition, plan and graph build; compile; peak resident memory so far.
    pub build_seconds: f64,
    pub compile_seconds: f64,
    pub peak_rss_mib: f64,
}

/// The whole study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Study {
    pub mesh: String,
    pub cells: usize,
    /// ODE step (ms) and the diffusion (PDE) steps in each.
    pub dt_ode: f32,
    pub pde_steps: u32,
    /// The warning when a few cells bound the diffusion step ([`advice::step_limit_advice`]).
    pub step_limit: Option<String>,
    pub strategy: Strategy,
    pub partition: crate::partition::Partitioning,
    pub rows: Vec<Row>,
}

/// Checks every value of `--study-chips` (1 to 64 chips each, at least one value) before
/// the study's first build.
pub fn check_chips(chips: &[u32]) -> Result<()> {
    ensure!(
        !chips.is_empty(),
        "--study-chips: give at least one chip count"
    );
    if let Some(c) = chips.iter().find(|c| !(1..=64).contains(*c)) {
        let list: Vec<String> = chips.iter().map(u32::to_string).collect();
        anyhow::bail!(
            "--study-chips {}: {c} is not 1 to 64 chips (every value is checked before the study starts)",
            list.join(",")
        );
    }
    Ok(())
}

/// Runs the study of `spec` (its mesh and options; `chips` replaced by each of `chips`, all
/// checked first: [`check_chips`]).
pub fn run(spec: &ProblemSpec, chips: &[u32]) -> Result<Study> {
    check_chips(chips)?;
    let (mesh, _) = problem::load_mesh(spec)?;
    let setup = problem::setup(spec, &mesh)?;
    let mut rows = Vec::new();
    for &c in chips {
        let spec_c = ProblemSpec {
            chips: c,
            ..spec.clone()
        };
        let cfg = problem::device_config(&spec_c)?;
        let t0 = Instant::now();
        let p = device::build(&setup, &cfg)?;
        let build_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let exe = device::compile_problem(&p)?;
        let compile_seconds = t1.elapsed().as_secs_f64();
        let stats = PartitionStats::new(&p.plan);
        let model = CycleModel::new(&exe);
        let step = estimate_program(&exe, &model, 1).map_or(0, |e| e.cycles);
        let steps_per_ms = 1.0 / f64::from(setup.dt_ode);
        rows.push(Row {
            chips: c,
            tiles: stats.tiles.len(),
            halo: halo(&stats),
            phases: phases(&model, &p.plan),
            seconds_per_ms: step as f64 * steps_per_ms / exe.target.clock_hz,
            build_seconds,
            compile_seconds,
            peak_rss_mib: peak_rss_mib(),
        });
    }
    Ok(Study {
        mesh: spec
            .mesh
            .as_ref()
            .map_or(format!("slab dx {} mm", spec.dx), |m| {
                m.display().to_string()
            }),
        cells: setup.n,
        dt_ode: setup.dt_ode,
        pde_steps: setup.pde_steps as u32,
        step_limit: advice::step_limit_advice(&setup, &mesh),
        strategy: spec.strategy,
        partition: spec.partition,
        rows,
    })
}

fn halo(stats: &PartitionStats) -> Halo {
    let own = stats.median(|t: &TileStats| t.cells);
    let halo = stats.median(|t| t.inbound);
    Halo {
        max_total: stats.max(|t| t.total),
        max_inbound: stats.max(|t| t.inbound),
        max_unused: stats.max(|t| t.unused),
        median_own: own,
        median_halo: halo,
        halo_share: 100.0 * halo as f64 / (own + halo).max(1) as f64,
    }
}

/// Per used tile: the first PDE compute set (one SpMV), the exchange that feeds it, and the
/// ODE compute set, from a cycle model of the problem's executable (public so that a
/// sensitivity study can re-cost one build under other targets).
pub fn phases(model: &CycleModel, plan: &crate::partition::PartitionPlan) -> Phases {
    let tiles = plan.tiles.len();
    let compute = |name: &str| -> Vec<f64> {
        let mut v = vec![0.0; tiles];
        if let Some(c) = model.computes.iter().find(|c| c.name == name) {
            for t in &c.tiles {
                if let Some(x) = v.get_mut(t.tile.index()) {
                    *x += t.cycles as f64;
                }
            }
        }
        v
    };
    // Per tile, its breakdown summed over the exchange's phases (its cycles are their sum).
    let mut parts = vec![ExchangeBreakdown::default(); tiles];
    let mut inter_chip_bytes = 0;
    let mut busiest = (0u64, 0u64, 0u32);
    let mut max_hops = 0;
    for e in model
        .exchanges
        .iter()
        .filter(|e| e.name.starts_with("PDE V->w"))
    {
        inter_chip_bytes += e.inter_chip_bytes;
        for l in &e.links {
            let hops = model.target.hops(l.src_chip, l.dst_chip);
            max_hops = max_hops.max(hops);
            if (l.cycles, l.bytes) > (busiest.1, busiest.0) {
                busiest = (l.bytes, l.cycles, hops);
            }
        }
        for t in &e.tiles {
            if let Some(sum) = parts.get_mut(t.tile.index()) {
                *sum += t.breakdown;
            }
        }
    }
    // The slowest tile (the lowest of equals).
    let slowest_exchange = parts
        .iter()
        .enumerate()
        .max_by_key(|(i, b)| (b.cycles(), std::cmp::Reverse(*i)))
        .map_or(SlowestExchange::default(), |(i, b)| SlowestExchange {
            tile: i as u32,
            cycles: b.cycles(),
            breakdown: *b,
        });
    let exchange: Vec<f64> = parts.iter().map(|b| b.cycles() as f64).collect();
    let pde_exchange = Spread::of(&exchange);
    Phases {
        pde_compute: Spread::of(&compute("PDE V->w")),
        exchange_effectiveness: pde_exchange.mean / pde_exchange.max.max(1.0),
        pde_exchange,
        ode_compute: Spread::of(&compute("ODE")),
        inter_chip_bytes,
        busiest_link_bytes: busiest.0,
        busiest_link_cycles: busiest.1,
        busiest_link_hops: busiest.2,
        max_hops,
        slowest_exchange,
        even_ports: EvenPorts::of(&parts, tiles),
    }
}

/// Peak resident memory of this process so far (MiB; 0 where `/proc` has none).
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The study as text: the three tables beside the paper's figures.
pub fn text(s: &Study) -> String {
    let mut out = format!(
        "study of {} ({} cells), strategy {}, partition {}; ODE step {} ms with {} PDE steps\n",
        s.mesh,
        s.cells,
        s.strategy.name(),
        s.partition.name(),
        s.dt_ode,
        s.pde_steps
    );
    if let Some(note) = &s.step_limit {
        out += note;
        out.push('\n');
    }
    out += "Table 1: halo cells (biggest partition: total, inbound, unused; median own and halo per tile; halo share; paper's heart04 share)\n";
    for r in &s.rows {
        let h = &r.halo;
        let paper = PAPER_HALO_SHARE
            .iter()
            .find(|p| p.0 == r.chips)
            .map_or("-".to_string(), |p| format!("{:.1} %", p.1));
        out += &format!(
            "  {:>2} chips {:>6} tiles | max {:>6} {:>6} {:>6} | median {:>6} {:>6} | {:>5.1} % (paper {paper})\n",
            r.chips, r.tiles, h.max_total, h.max_inbound, h.max_unused, h.median_own, h.median_halo, h.halo_share
        );
    }
    out += &format!(
        "  (paper, heart04 on 1 chip: median {PAPER_OWN_CELLS} own and {PAPER_HALO_CELLS} halo cells per tile)\n"
    );
    out += "Table 2: modelled cycles per tile (min / mean / max, sd): one PDE step's SpMV and its exchange, one ODE step\n";
    for r in &s.rows {
        let p = &r.phases;
        let f = |x: &Spread| format!("{:.0} / {:.0} / {:.0} ({:.0})", x.min, x.mean, x.max, x.sd);
        out += &format!(
            "  {:>2} chips | PDE compute {} | PDE exchange {}, {:.1} % effective, {} B between chips | ODE compute {}\n",
            r.chips,
            f(&p.pde_compute),
            f(&p.pde_exchange),
            100.0 * p.exchange_effectiveness,
            p.inter_chip_bytes,
            f(&p.ode_compute)
        );
        let (x, b) = (&p.slowest_exchange, &p.slowest_exchange.breakdown);
        out += &format!(
            "           slowest exchange tile {}: {} cycles {} = {} values + {} set-up ({} messages) + {} waiting for links + {} hop latency\n",
            x.tile,
            x.cycles,
            if b.receive { "receiving" } else { "sending" },
            b.value_cycles,
            b.setup_cycles,
            b.messages,
            b.link_wait_cycles,
            b.latency_cycles
        );
        let e = &p.even_ports;
        if e.max_link_and_hop_cycles > 0 {
            out += &format!(
                "           with every tile's port at the mean ({:.0} cycles) and links and hops as they are (at most {} cycles), {:.1} % effective\n",
                e.mean_port_cycles,
                e.max_link_and_hop_cycles,
                100.0 * e.effectiveness
            );
        }
        if p.busiest_link_bytes > 0 {
            out += &format!(
                "           busiest chip pair {} B in {} cycles over {} hop(s); messages travel at most {} hop(s)\n",
                p.busiest_link_bytes, p.busiest_link_cycles, p.busiest_link_hops, p.max_hops
            );
        }
    }
    out += &format!(
        "  (paper, heart04 on 1 chip: PDE compute {:.0} / {:.0} / {:.0}, ODE compute {:.1}M / {:.1}M / {:.1}M)\n",
        PAPER_PDE_COMPUTE[0],
        PAPER_PDE_COMPUTE[1],
        PAPER_PDE_COMPUTE[2],
        PAPER_ODE_COMPUTE[0] / 1e6,
        PAPER_ODE_COMPUTE[1] / 1e6,
        PAPER_ODE_COMPUTE[2] / 1e6
    );
    out += "Figure 5: modelled chip time per simulated ms, and ideal scaling from the first row; set-up\n";
    let first = s.rows.first();
    for r in &s.rows {
        let ideal = first.map_or(0.0, |f| f.seconds_per_ms * f.chips as f64 / r.chips as f64);
        out += &format!(
            "  {:>2} chips | {:>9.3} ms (ideal {:>9.3} ms, {:>5.1} % efficient) | build {:>6.1} s, compile {:>6.1} s, peak RSS {:>7.0} MiB\n",
            r.chips,
            r.seconds_per_ms * 1e3,
            ideal * 1e3,
            100.0 * ideal / r.seconds_per_ms.max(1e-30),
            r.build_seconds,
            r.compile_seconds,
            r.peak_rss_mib
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_by_hand() {
        let s = Spread::of(&[1.0, 2.0, 3.0, 6.0]);
        assert_eq!((s.min, s.mean, s.max), (1.0, 3.0, 6.0));
        assert!((s.sd - 3.5f64.sqrt()).abs() < 1e-12);
    }
}
