//! One simulation over several processes: the ranks of an MPI job.
//!
//! With the cargo feature `mpi` and a program started under `mpiexec -n P`, each of the `P`
//! processes (ranks) owns a contiguous block of the target's chips (or of its tiles, when there
//! are fewer chips than ranks; see [`RankSplit`]), holds only their memories and runs their
//! compute phases with its own threads. The engine ([`Engine`](crate::engine::Engine)) does the rest: it packs
//! the copies that cross ranks into one message per pair of ranks per exchange phase, gets
//! control-flow predicates to every rank, routes host reads, writes and streams through rank 0
//! and makes an error on any rank the error of every rank.
//!
//! An application is written once: it calls [`init`] at the start of `main` (and keeps the
//! returned [`Cluster`] alive until the end), runs its engines as usual, and writes its files
//! only where [`is_root`] holds. Without `mpiexec`, or without the feature, it is a job of one
//! rank and runs exactly as before.
//!
//! Transport: MPI through the `mpi` crate (rsmpi) when the feature is on; [`Ranks::in_process`]
//! connects engines on threads of one process with channels, which the tests use to check the
//! distributed engine without a system MPI. Both implement the same few operations (`Comm`):
//! point-to-point messages started together and waited for together, an element-wise maximum,
//! an all-gather and a broadcast.

mod comm;
mod local;
#[cfg(feature = "mpi")]
mod mpi_comm;
mod split;

pub(crate) use comm::Comm;
pub use split::RankSplit;

use std::sync::Arc;

/// The ranks one engine runs on, and this process's place among them.
#[derive(Clone)]
pub struct Ranks {
    pub(crate) comm: Arc<dyn Comm>,
}

impl std::fmt::Debug for Ranks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ranks({} of {})", self.rank(), self.size())
    }
}

impl Ranks {
    /// This process alone (the engine runs the whole executable here).
    pub fn single() -> Ranks {
        Ranks {
            comm: Arc::new(local::Single),
        }
    }

    /// The MPI world when MPI has been initialized ([`init`]) with the feature `mpi`, else
    /// this process alone.
    pub(crate) fn world() -> Ranks {
        #[cfg(feature = "mpi")]
        if let Some(c) = mpi_comm::MpiComm::world() {
            return Ranks { comm: Arc::new(c) };
        }
        Ranks::single()
    }

    /// `n` ranks inside this process, connected by channels: give one to each of `n` engines,
    /// each created and run on its own thread, exactly as `n` MPI processes would. For tests
    /// of the distributed engine on machines without MPI; a rank whose thread ends early makes
    /// the others fail instead of waiting.
    pub fn in_process(n: usize) -> Vec<Ranks> {
        local::Channels::connect(n.max(1))
            .into_iter()
            .map(|c| Ranks { comm: Arc::new(c) })
            .collect()
    }

    /// This process's rank, `0..size()`.
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.comm.size()
    }

    /// Whether this is rank 0 (the one that reports and writes files).
    pub fn is_root(&self) -> bool {
        self.rank() == 0
    }
}

/// Errors of [`init`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DistError {
    /// MPI was already initialized (by an earlier [`init`] or by other code).
    #[error("MPI is already initialized in this process")]
    AlreadyInitialized,
    /// The MPI library cannot give the thread support the engine needs (its interpreter thread
    /// makes MPI calls, one thread at a time: `MPI_THREAD_SERIALIZED`).
    #[error("the MPI library gives thread support '{got}', the engine needs '{wanted}'")]
    ThreadSupport { wanted: &'static str, got: String },
}

/// An initialized MPI environment (or nothing, without the feature `mpi`): keep it alive until
/// the end of `main`; dropping it finalizes MPI.
pub struct Cluster {
    #[cfg(feature = "mpi")]
    _universe: Option<mpi::environment::Universe>,
    ranks: Ranks,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cluster({:?})", self.ranks)
    }
}

impl Cluster {
    /// The world's ranks.
    pub fn ranks(&self) -> &Ranks {
        &self.ranks
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.ranks.rank()
    }

    /// Number of ranks of the job.
    pub fn size(&self) -> usize {
        self.ranks.size()
    }

    /// Whether this is rank 0.
    pub fn is_root(&self) -> bool {
        self.ranks.is_root()
    }

    /// Reports an application's error and ends: `chain` is the error and its causes, in
    /// words; `shared` whether every rank has it (see [`crate::engine::is_shared_error`]).
    /// A shared error is printed by rank 0 alone and every rank returns failure; any other is
    /// printed by the rank that has it (naming the rank) and ends the whole job
    /// ([`Cluster::abort`]), since the other ranks would wait for this one.
    #[must_use = "the exit code says the job failed: return it from main"]
    pub fn fail(&self, chain: &[String], shared: bool) -> std::process::ExitCode {
        if self.is_root() || !shared {
            let who = if self.size() > 1 && !shared {
                format!(" (rank {} of {})", self.rank(), self.size())
            } else {
                String::new()
            };
            let mut lines = chain.iter();
            if let Some(first) = lines.next() {
                eprintln!("error{who}: {first}");
            }
            for c in lines {
                eprintln!("  caused by: {c}");
            }
        }
        if self.size() > 1 && !shared {
            self.abort(1);
        }
        std::process::ExitCode::FAILURE
    }

    /// Ends the whole job with status `code` (`MPI_Abort` over several ranks, else
    /// `std::process::exit`): for an error that only this rank has (a file it cannot read,
    /// say), after which the other ranks would otherwise wait for it forever. Errors the
    /// engine shared with every rank ([`crate::engine::EngineError::is_shared`]) need no abort.
    pub fn abort(&self, code: i32) -> ! {
        #[cfg(feature = "mpi")]
        if self.size() > 1 {
            use mpi::topology::Communicator;
            use std::io::Write;
            // MPICH's process manager forwards each rank's output through pipes and stops
            // forwarding when the job is aborted: give the message just printed time to get
            // out (it was lost otherwise, measured on MPICH 4.0).
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().flush();
            std::thread::sleep(std::time::Duration::from_millis(500));
            mpi::topology::SimpleCommunicator::world().abort(code);
        }
        std::process::exit(code)
    }
}

/// Initializes MPI (with the feature `mpi`): under `mpiexec -n P` the job has `P` ranks;
/// started alone it is one rank. Without the feature, a job of one rank. Every engine created
/// afterwards runs over the world's ranks (unless [`crate::engine::EngineOptions::ranks`] says
/// otherwise).
pub fn init() -> Result<Cluster, DistError> {
    #[cfg(feature = "mpi")]
    {
        let universe = mpi_comm::initialize()?;
        Ok(Cluster {
            _universe: Some(universe),
            ranks: Ranks::world(),
        })
    }
    #[cfg(not(feature = "mpi"))]
    Ok(Cluster {
        ranks: Ranks::single(),
    })
}

/// An error that one rank had and every rank now reports ([`agree`]).
/// Displayed as `rank R of N: message`, or as the message alone in a job of one rank.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", rank_prefix(*.rank, *.ranks))]
pub struct RankError {
    pub rank: usize,
    pub ranks: usize,
    pub message: String,
}

/// `rank R of N: ` in a job of several ranks, nothing in a job of one.
fn rank_prefix(rank: usize, ranks: usize) -> String {
    if ranks > 1 {
        format!("rank {rank} of {ranks}: ")
    } else {
        String::new()
    }
}

/// Makes the outcome of something only some ranks did (checking and creating an output folder
/// on rank 0, say) every rank's: every rank of the MPI world calls it, each with its own
/// result; if any failed, every rank gets the failure of the lowest failing rank, naming it,
/// so that all end alike and none waits for another. With one rank, the result as it is.
pub fn agree<E: std::fmt::Display>(result: Result<(), E>) -> Result<(), RankError> {
    let ranks = Ranks::world();
    let (rank, size) = (ranks.rank(), ranks.size());
    let mut v = [match &result {
        Ok(()) => 0,
        Err(_) => (size - rank) as i64,
    }];
    ranks.comm.max_i64(&mut v);
    if v[0] == 0 {
        return Ok(());
    }
    let failed = size - v[0] as usize;
    let mut message = match &result {
        Err(e) if failed == rank => e.to_string().into_bytes(),
        _ => Vec::new(),
    };
    ranks.comm.broadcast(failed, &mut message);
    Err(RankError {
        rank: failed,
        ranks: size,
        message: String::from_utf8_lossy(&message).into_owned(),
    })
}

/// Whether `flag` holds on any rank of the MPI world: every rank calls it, each with its own
/// flag, and every rank gets the same answer (an element-wise maximum). For a decision that
/// one rank may take alone but all must act on at the same point, such as stopping a run at
/// the next step boundary after a signal that reached some ranks only. With one rank, `flag`.
pub fn any(flag: bool) -> bool {
    let ranks = Ranks::world();
    if ranks.size() == 1 {
        return flag;
    }
    let mut v = [i64::from(flag)];
    ranks.comm.max_i64(&mut v);
    v[0] != 0
}

/// Rank 0's `data` on every rank of the MPI world (every rank calls it; the others' `data` is
/// replaced, whatever its length): for what rank 0 alone read, such as a file that only rank
/// 0 writes. With one rank, `data` as it is.
pub fn broadcast_from_root(data: &mut Vec<u8>) {
    let ranks = Ranks::world();
    if ranks.size() > 1 {
        ranks.comm.broadcast(0, data);
    }
}

/// This process's rank in the MPI world (0 without MPI).
pub fn rank() -> usize {
    Ranks::world().rank()
}

/// Ranks of the MPI world (1 without MPI).
pub fn size() -> usize {
    Ranks::world().size()
}

/// Whether this process is rank 0 of the MPI world (always, without MPI): the rank that
/// writes an application's files and reports.
pub fn is_root() -> bool {
    rank() == 0
}

/// Runs `program args…` under `mpiexec -n ranks` and waits for it, killing it after `timeout`
/// (for tests and scripts: a hang becomes an error, never a stuck run). Returns the output
/// and how long it took; `mpiexec` must be on the path (MPICH or Open MPI).
pub fn mpiexec(
    ranks: usize,
    program: &std::path::Path,
    args: &[&str],
    timeout: std::time::Duration,
) -> std::io::Result<(std::process::Output, std::time::Duration)> {
    use std::process::{Command, Stdio};
    let start = std::time::Instant::now();
    let mut child = Command::new("mpiexec")
        .arg("-n")
        .arg(ranks.to_string())
        .arg(program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Drain both pipes while waiting, so that a chatty job cannot fill them and stall.
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut b);
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut b);
        b
    });
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "mpiexec -n {ranks} {} still ran after {timeout:?}",
                    program.display()
                ),
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let output = std::process::Output {
        status,
        stdout: out_t.join().unwrap_or_default(),
        stderr: err_t.join().unwrap_or_default(),
    };
    Ok((output, start.elapsed()))
}
