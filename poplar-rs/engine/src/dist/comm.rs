//! The operations the distributed engine needs from a transport.

/// A transport between the ranks of one job. Every rank calls the collective operations
/// (`max_i64`, `all_gather`, `broadcast`) in the same order; in `exchange` both ends of each
/// message know its length (they compute it from the same executable).
///
/// A transport never hangs on a rank that has gone: MPI's process manager ends the job, the
/// in-process channels report the disconnection (as a panic of the waiting rank, which its
/// engine turns into an error).
pub(crate) trait Comm: Send + Sync {
    /// This rank, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Sends each `(peer, bytes)` of `sends` and receives each `(peer, buffer)` of `recvs`
    /// (exactly the buffer's length), all started before any is waited for. At most one
    /// message per direction and peer.
    fn exchange(&self, sends: &[(usize, &[u8])], recvs: &mut [(usize, &mut [u8])]);
    /// Element-wise maximum over all ranks, in place.
    fn max_i64(&self, v: &mut [i64]);
    /// Every rank's bytes, in rank order.
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>>;
    /// Root's `data` on every rank (other ranks' `data` is replaced).
    fn broadcast(&self, root: usize, data: &mut Vec<u8>);
}
