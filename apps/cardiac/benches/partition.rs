//! Flat against hierarchical partitioning ([`Partitioning`]); prints figures.
//!
//! `cargo bench -p cardiac --bench partition -- [--dx 0.1] [--chips 4,16] [--partition flat,hierarchical] [--only-partition]`
//!
//! Per chip count and partitioning, on the Niederer slab (mixed-clean halos, dt_ode 0.02 ms):
//! set-up time (partition, graph build, compile), inter-chip bytes per PDE step, max halo cells
//! per tile, modelled cycles of one PDE halo exchange, its exchange effectiveness (mean over
//! all tiles of the tile's exchange cycles over the phase's, idle tiles counting 0: the
//! profile's `Stats::effectiveness`), and the modelled time per simulated ms (the static,
//! bulk-synchronous estimate of one ODE step with its PDE steps, times steps per ms); then the
//! peak RSS of the process. `--only-partition` stops after the partition (cut, part sizes,
//! imbalance), for chip counts too large to compile quickly.

use std::time::Instant;

use cardiac::matrix::Conductivity;
use cardiac::mesh::TetMesh;
use cardiac::partition::{PartitionStats, Partitioning, Strategy};
use cardiac::solver::device::{self, DeviceConfig};
use cardiac::solver::{Setup, Stimulus};
use poplar::profile::{estimate_program, CycleModel, Stats};

fn peak_rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The value of `--name` in the arguments, if given.
fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn list<T: std::str::FromStr>(name: &str, default: &str) -> Vec<T> {
    arg(name)
        .unwrap_or_else(|| default.into())
        .split(',')
        .map(|x| x.parse().unwrap_or_else(|_| panic!("bad {name} value {x}")))
        .collect()
}

fn main() {
    let dx: f64 = arg("--dx").map_or(0.1, |s| s.parse().expect("--dx"));
    let chips: Vec<u32> = list("--chips", "4,16");
    let parts: Vec<Partitioning> = arg("--partition")
        .unwrap_or_else(|| "flat,hierarchical".into())
        .split(',')
        .map(|p| <Partitioning as clap::ValueEnum>::from_str(p, true).expect("--partition"))
        .collect();
    let only_partition = std::env::args().any(|a| a == "--only-partition");
    let t = Instant::now();
    let mesh = TetMesh::slab(20.0, 7.0, 3.0, dx);
    let stim = Stimulus::niederer(&mesh);
    let setup = Setup::new(&mesh, &Conductivity::niederer(), 0.02, &stim).expect("setup");
    println!(
        "slab dx {dx} mm: {} cells, p = {} PDE steps per ODE step; mesh + setup {:.1} s",
        setup.n,
        setup.pde_steps,
        t.elapsed().as_secs_f64()
    );
    for &c in &chips {
        for &p in &parts {
            let mut cfg = DeviceConfig::chips(c, Strategy::MixedClean);
            cfg.partitioning = p;
            if only_partition {
                partition_only(&setup, &cfg);
            } else {
                full(&setup, &cfg);
            }
        }
    }
    println!("peak RSS {:.0} MiB", peak_rss_mib());
}

/// The partition alone: time, cut between chips (cells of other chips read), part sizes.
fn partition_only(setup: &Setup, cfg: &DeviceConfig) {
    let t = Instant::now();
    let k = cfg.tiles.min(setup.n);
    let (parts, tile_of) = device::cut(setup, cfg, k).expect("partition");
    let cut_s = t.elapsed().as_secs_f64();
    let mut sizes = vec![0usize; tile_of.len()];
    for &q in &parts {
        sizes[q as usize] += 1;
    }
    let tpc = cfg.target.tiles_per_ipu;
    let chip = |cell: usize| tile_of[parts[cell] as usize] / tpc;
    let inter: usize = (0..setup.n)
        .map(|i| {
            let mut cols: Vec<u32> = setup
                .ell
                .row_cols(i)
                .filter(|&c| chip(c as usize) != chip(i))
                .collect();
            cols.sort_unstable();
            cols.dedup();
            cols.len()
        })
        .sum();
    let mean = setup.n as f64 / sizes.len() as f64;
    println!(
        "{:>2} chips {:<12} partition {:.1} s: {} of {} tiles used, cells per tile {}..{} (imbalance {:.3}); row reads of other chips' cells {}",
        cfg.target.num_ipus,
        cfg.partitioning.name(),
        cut_s,
        tile_of.len(),
        k,
        sizes.iter().min().unwrap_or(&0),
        sizes.iter().max().unwrap_or(&0),
        *sizes.iter().max().unwrap_or(&0) as f64 / mean,
        inter
    );
}

/// Partition, build and compile, then the modelled figures.
fn full(setup: &Setup, cfg: &DeviceConfig) {
    let t = Instant::now();
    let k = cfg.tiles.min(setup.n);
    device::cut(setup, cfg, k).expect("partition");
    let cut_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let prob = device::build(setup, cfg).expect("build");
    // The build partitions again (a second cut, timed above apart): set-up is the build with
    // its cut, plus the compile.
    let build_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let exe = device::compile_problem(&prob).expect("compile");
    let compile_s = t.elapsed().as_secs_f64();
    let stats = PartitionStats::new(&prob.plan);
    let model = CycleModel::new(&exe);
    let n_tiles = exe.target.num_tiles() as usize;
    // The PDE halo exchanges: one per PDE step (before `PDE V->w` and before `PDE w->V`).
    let pde: Vec<_> = model
        .exchanges
        .iter()
        .filter(|e| e.name.starts_with("PDE"))
        .collect();
    let one = pde.first().expect("a PDE exchange");
    let mut per_tile = vec![0u64; n_tiles];
    for t in &one.tiles {
        per_tile[t.tile.index()] = t.cycles;
    }
    let eff = Stats::of(&per_tile).effectiveness;
    let step = estimate_program(&exe, &model, 1).expect("program 1");
    let steps_per_ms = 1.0 / f64::from(setup.dt_ode);
    let ms_per_sim_ms = step.cycles as f64 * steps_per_ms / exe.target.clock_hz * 1e3;
    println!(
        "{:>2} chips {:<12} set-up {:.1} s (partition alone {:.1}; build with its partition {:.1}, compile {:.1}): inter-chip bytes/PDE step {}, max halo cells/tile {} (median {}), PDE exchange {} cycles, exchange effectiveness {:.1} %, modelled {:.3} ms per simulated ms (exchange {:.1} %, {} PDE exchange phases: {:?})",
        cfg.target.num_ipus,
        cfg.partitioning.name(),
        build_s + compile_s,
        cut_s,
        build_s,
        compile_s,
        one.inter_chip_bytes,
        stats.max(|t| t.inbound),
        stats.median(|t| t.inbound),
        one.max,
        100.0 * eff,
        ms_per_sim_ms,
        100.0 * step.exchange as f64 / step.cycles as f64,
        pde.len(),
        pde.iter().map(|e| e.name.as_str()).collect::<Vec<_>>()
    );
}
