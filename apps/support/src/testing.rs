//! For the apps' multi-rank tests: the app's binary run on N ranks under `mpiexec`
//! ([`poplar::dist::mpiexec`], with a time limit), or as one plain process for N = 1.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

/// How long a multi-rank run may take before it is killed (a hang fails the test instead of
/// stalling it).
pub const TIME_LIMIT: Duration = Duration::from_secs(300);

/// Runs `program args…` on `ranks` ranks and returns its output (status, stdout, stderr): a
/// plain process for one rank, `mpiexec -n ranks` otherwise, killed after [`TIME_LIMIT`].
/// Panics, naming the command, if it cannot be started or runs out of time.
pub fn run_on_ranks(ranks: usize, program: impl AsRef<Path>, args: &[&str]) -> Output {
    let program = program.as_ref();
    let name = program.file_name().map_or_else(
        || program.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if ranks == 1 {
        return Command::new(program)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{name} {args:?}: {e}"));
    }
    poplar::dist::mpiexec(ranks, program, args, TIME_LIMIT)
        .unwrap_or_else(|e| panic!("mpiexec -n {ranks} {name} {args:?}: {e}"))
        .0
}
