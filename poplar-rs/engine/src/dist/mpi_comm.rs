//! The MPI transport (feature `mpi`): the world communicator through rsmpi.
//!
//! Exchanges post every receive and every send as non-blocking calls and then wait for all of
//! them; the collectives are MPI's own (`MPI_Allreduce`, `MPI_Allgatherv`, `MPI_Bcast`). MPI's
//! default error handler ends the job on a communication failure, and MPICH's process manager
//! ends every rank when one exits without finalizing, so no rank waits forever for a dead one.

use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use mpi::Threading;

use super::{Comm, DistError};

/// The world communicator. It holds no handle (rsmpi's world is a constant), so it can be
/// shared with the engine's interpreter thread; MPI is initialized with
/// `MPI_THREAD_SERIALIZED` and the engine makes its calls from one thread at a time.
pub(crate) struct MpiComm {
    rank: usize,
    size: usize,
}

/// Message tag of the engine's exchanges and host transfers.
const TAG: i32 = 17;
/// The longest single MPI message (bytes): MPI counts are `int`.
const PIECE: usize = 1 << 30;

pub(crate) fn initialize() -> Result<mpi::environment::Universe, DistError> {
    let (universe, got) = mpi::initialize_with_threading(Threading::Serialized)
        .ok_or(DistError::AlreadyInitialized)?;
    if got < Threading::Serialized {
        return Err(DistError::ThreadSupport {
            wanted: "serialized",
            got: format!("{got:?}").to_lowercase(),
        });
    }
    Ok(universe)
}

impl MpiComm {
    /// The world, if MPI is initialized and not yet finalized.
    pub(crate) fn world() -> Option<MpiComm> {
        if !mpi::environment::is_initialized() || mpi::environment::is_finalized() {
            return None;
        }
        let w = SimpleCommunicator::world();
        Some(MpiComm {
            rank: w.rank() as usize,
            size: w.size() as usize,
        })
    }
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }

    fn exchange(&self, sends: &[(usize, &[u8])], recvs: &mut [(usize, &mut [u8])]) {
        let world = SimpleCommunicator::world();
        mpi::request::scope(|scope| {
            // A message longer than MPI's count type is several, in order (MPI does not
            // reorder messages between two ranks with one tag); both ends cut alike.
            let mut pending = Vec::with_capacity(recvs.len());
            for (peer, buf) in recvs.iter_mut() {
                for piece in buf.chunks_mut(PIECE) {
                    pending.push(
                        world
                            .process_at_rank(*peer as i32)
                            .immediate_receive_into_with_tag(scope, piece, TAG),
                    );
                }
            }
            let mut sent = Vec::with_capacity(sends.len());
            for (peer, bytes) in sends {
                for piece in bytes.chunks(PIECE) {
                    sent.push(
                        world
                            .process_at_rank(*peer as i32)
                            .immediate_send_with_tag(scope, piece, TAG),
                    );
                }
            }
            for r in pending {
                r.wait();
            }
            for s in sent {
                s.wait();
            }
        });
    }

    fn max_i64(&self, v: &mut [i64]) {
        let world = SimpleCommunicator::world();
        let mine = v.to_vec();
        world.all_reduce_into(&mine[..], v, SystemOperation::max());
    }

    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let world = SimpleCommunicator::world();
        let n = mine.len() as i32;
        let mut counts = vec![0i32; self.size];
        world.all_gather_into(&n, &mut counts[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0i32, |acc, &c| {
                let d = *acc;
                *acc += c;
                Some(d)
            })
            .collect();
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut all = vec![0u8; total];
        {
            let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            world.all_gather_varcount_into(mine, &mut part);
        }
        counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec())
            .collect()
    }

    fn broadcast(&self, root: usize, data: &mut Vec<u8>) {
        let world = SimpleCommunicator::world();
        let root = world.process_at_rank(root as i32);
        let mut len = data.len() as u64;
        root.broadcast_into(&mut len);
        data.resize(len as usize, 0);
        root.broadcast_into(&mut data[..]);
    }
}
