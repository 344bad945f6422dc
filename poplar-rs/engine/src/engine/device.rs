//! The engine as a [`Device`]: the trait's calls are the engine's own methods of the same
//! names, so that a library written against the trait drives an engine without linking one.

use crate::dtype::Element;
use crate::exe::{Device, Executable};

use super::{Engine, EngineError};

impl Device for Engine {
    type Error = EngineError;

    fn executable(&self) -> &Executable {
        Engine::executable(self)
    }

    fn write_tensor<T: Element>(&mut self, name: &str, data: &[T]) -> Result<(), EngineError> {
        Engine::write_tensor(self, name, data)
    }

    fn write_tensor_replica<T: Element>(
        &mut self,
        name: &str,
        replica: u32,
        data: &[T],
    ) -> Result<(), EngineError> {
        Engine::write_tensor_replica(self, name, replica, data)
    }

    fn read_tensor_all_replicas<T: Element>(&self, name: &str) -> Result<Vec<T>, EngineError> {
        Engine::read_tensor_all_replicas(self, name)
    }

    fn write_remote_buffer<T: Element>(
        &mut self,
        name: &str,
        data: &[T],
    ) -> Result<(), EngineError> {
        Engine::write_remote_buffer(self, name, data)
    }

    fn connect_stream_replica<T: Element>(
        &mut self,
        name: &str,
        replica: u32,
        data: Vec<T>,
    ) -> Result<(), EngineError> {
        Engine::connect_stream_replica(self, name, replica, data)
    }

    fn run(&mut self, index: usize) -> Result<(), EngineError> {
        Engine::run(self, index)
    }
}
