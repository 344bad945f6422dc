//! What a host does with a loaded executable, as a trait: write and read its tensors, fill its
//! remote buffers, feed its streams and run its programs. The engine implements it; a library
//! that drives runs (popnn's trainer, popsparse's pattern writer) is written against it, so
//! that the library builds without linking an engine.

use crate::dtype::Element;

use super::Executable;

/// A device running one executable: the host side of its tensors, remote buffers, streams and
/// programs, by name. `Engine` is one.
pub trait Device {
    /// The device's error: a name it does not know, data of the wrong size or type, a failed
    /// run.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The executable it runs.
    fn executable(&self) -> &Executable;

    /// Writes host tensor `name` on every replica.
    fn write_tensor<T: Element>(&mut self, name: &str, data: &[T]) -> Result<(), Self::Error>;

    /// Writes host tensor `name` on replica `replica` only.
    fn write_tensor_replica<T: Element>(
        &mut self,
        name: &str,
        replica: u32,
        data: &[T],
    ) -> Result<(), Self::Error>;

    /// Host tensor `name` of every replica, replica after replica.
    fn read_tensor_all_replicas<T: Element>(&self, name: &str) -> Result<Vec<T>, Self::Error>;

    /// Writes the whole of remote buffer `name` on every replica.
    fn write_remote_buffer<T: Element>(
        &mut self,
        name: &str,
        data: &[T],
    ) -> Result<(), Self::Error>;

    /// Connects host-to-device stream `name` of replica `replica` to `data`.
    fn connect_stream_replica<T: Element>(
        &mut self,
        name: &str,
        replica: u32,
        data: Vec<T>,
    ) -> Result<(), Self::Error>;

    /// Runs program `index`.
    fn run(&mut self, index: usize) -> Result<(), Self::Error>;
}
