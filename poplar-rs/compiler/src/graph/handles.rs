//! Handles to the entities of a graph (compute sets, vertices, functions, streams): an index
//! and the id of the graph it belongs to.

/// Declares a handle to an entity of one graph: its index in that graph and the graph's id, so
/// that a handle of another graph is a typed error ([`GraphError::ForeignHandle`]), never an
/// index into the wrong graph.
macro_rules! graph_handle {
    ($(#[$m:meta])* $name:ident, $key:ident, $what:literal) => {
        crate::entity::entity_id!(
            #[doc = concat!("Dense index of a ", $what, " in its graph's table (the graph checks a [`", stringify!($name), "`] and turns it into this key).")]
            pub struct $key, $what;
        );

        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name {
            pub(crate) graph: u32,
            pub(crate) index: u32,
        }

        impl $name {
            /// Its number in its graph (order of creation), for messages and reports.
            pub fn index(self) -> u32 {
                self.index
            }
            /// The key of this handle in its graph's table (after the graph has checked it).
            #[inline]
            pub(crate) fn key(self) -> $key {
                <$key as crate::entity::EntityId>::new(self.index as usize)
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($what, " {}"), self.index)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($what, " {}"), self.index)
            }
        }
    };
}

graph_handle!(
    /// A compute set: vertices that run in the same superstep.
    ComputeSet, ComputeSetKey, "compute set"
);
graph_handle!(
    /// A vertex: one instance of a codelet, placed on one tile.
    VertexRef, VertexKey, "vertex"
);
graph_handle!(
    /// A program registered as a callable function.
    Function, FunctionKey, "function"
);
graph_handle!(
    /// A host stream: data flowing between host buffers and device tensors.
    Stream, StreamKey, "stream"
);

graph_handle!(
    /// A remote buffer: rows in the Streaming Memory of one chip, reached only by copies
    /// ([`Program::copy_to_remote`](crate::graph::program::Program::copy_to_remote),
    /// [`Program::copy_from_remote`](crate::graph::program::Program::copy_from_remote)).
    RemoteBuffer, RemoteBufferKey, "remote buffer"
);

/// Direction of a host stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamDir {
    /// The host writes, the device reads (`Program::StreamToDevice`).
    HostToDevice,
    /// The device writes, the host reads (`Program::StreamFromDevice`).
    DeviceToHost,
}
