//! `cardiac partition`: the paper's Table 1 — partition, halo and memory figures of the slab
//! per chip count and halo strategy, from compiled executables.

use anyhow::{ensure, Result};

use crate::app::console::memory_max_median;
use crate::app::problem::{self, ProblemSpec};
use crate::partition::{PartitionStats, Strategy};
use crate::solver::device;

/// Prints the table for the slab at `dx` mm on each of `chips` (1 to 64) chip counts.
pub fn print_table(dx: f64, chips: &[u32]) -> Result<()> {
    let spec = ProblemSpec::slab(dx);
    let (mesh, _) = problem::load_mesh(&spec)?;
    let setup = problem::setup(&spec, &mesh)?;
    say!("slab dx {dx} mm: {} cells", setup.n);
    say!(
        "{:>5} | {:>7} {:>7} | {}",
        "chips",
        "mem max",
        "mem med",
        PartitionStats::table_header()
    );
    for &c in chips {
        ensure!(
            (1..=64).contains(&c),
            "chip count {c} must be between 1 and 64"
        );
        for s in Strategy::ALL {
            let cfg = device::DeviceConfig::chips(c, s);
            let p = device::build(&setup, &cfg)?;
            let exe = device::compile_problem(&p)?;
            let (mx, md) = memory_max_median(&exe);
            say!(
                "{:>5} | {:>7} {:>7} | {}",
                c,
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
