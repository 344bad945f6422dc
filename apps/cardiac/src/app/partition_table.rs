//! `cardiac partition`: the paper's Table 1 — partition, halo and memory figures of the slab
//! per chip count, partitioning and halo strategy, from compiled executables.

use anyhow::{ensure, Result};

use crate::app::console::memory_max_median;
use crate::app::problem::{self, ProblemSpec};
use crate::partition::{PartitionStats, Partitioning, Strategy};
use crate::solver::device;

/// Prints the table for the slab at `dx` mm on each of `chips` (1 to 64) chip counts, for each
/// of `partitions`.
pub fn print_table(dx: f64, chips: &[u32], partitions: &[Partitioning]) -> Result<()> {
    let spec = ProblemSpec::slab(dx);
    let (mesh, _) = problem::load_mesh(&spec)?;
    let setup = problem::setup(&spec, &mesh)?;
    say!("slab dx {dx} mm: {} cells", setup.n);
    say!(
        "{:>5} {:>12} | {:>7} {:>7} | {}",
        "chips",
        "partition",
        "mem max",
        "mem med",
        PartitionStats::table_header()
    );
    for &c in chips {
        ensure!(
            (1..=64).contains(&c),
            "chip count {c} must be between 1 and 64"
        );
        for (&part, s) in partitions
            .iter()
            .flat_map(|p| Strategy::ALL.iter().map(move |&s| (p, s)))
        {
            let mut cfg = device::DeviceConfig::chips(c, s);
            cfg.partitioning = part;
            let p = device::build(&setup, &cfg)?;
            let exe = device::compile_problem(&p)?;
            let (mx, md) = memory_max_median(&exe);
            say!(
                "{:>5} {:>12} | {:>7} {:>7} | {}",
                c,
                part.name(),
                mx,
                md,
                PartitionStats::new(&p.plan).table_row()
            );
        }
    }
    say!(
        "(memory per tile in bytes, from the compiled executable: max and median over used tiles)"
    );
    Ok(())
}
