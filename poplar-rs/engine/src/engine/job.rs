//! The `main` of an application that runs unchanged alone or under `mpiexec`.

use std::process::ExitCode;

/// Runs an application's `body` as one rank of its job and ends the job as
/// [`crate::dist::Cluster::fail`] does on an error: initializes [`crate::dist`] (MPI, when
/// built with the feature `mpi` and started by `mpiexec -n P`; else this process alone), runs
/// `body`, and on an error reports it with its causes, one per line, and no backtrace. An
/// error every rank shares ([`super::is_shared_error`]) is printed by rank 0 and every rank
/// returns failure; any other is printed by the rank that has it and ends the whole job.
///
/// The error type is anything that lends itself as a `dyn Error`: `anyhow::Error`, or a boxed
/// error.
///
/// ```no_run
/// type BoxError = Box<dyn std::error::Error + Send + Sync>;
///
/// fn main() -> std::process::ExitCode {
///     poplar_engine::engine::job_main(|| -> Result<(), BoxError> {
///         let text = std::fs::read_to_string("input.txt")?;
///         println!("{} bytes", text.len());
///         Ok(())
///     })
/// }
/// ```
#[must_use = "the exit code says whether the job failed: return it from main"]
pub fn job_main<E>(body: impl FnOnce() -> Result<(), E>) -> ExitCode
where
    E: AsRef<dyn std::error::Error + Send + Sync + 'static>,
{
    let cluster = match crate::dist::init() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match body() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let top: &(dyn std::error::Error + 'static) = e.as_ref();
            let mut chain = Vec::new();
            let mut cur = Some(top);
            while let Some(c) = cur {
                chain.push(c.to_string());
                cur = c.source();
            }
            cluster.fail(&chain, super::is_shared_error(top))
        }
    }
}
