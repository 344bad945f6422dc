//! The static graph: variables and constants mapped to tiles, compute sets of vertices, host
//! handles and streams. Built by the user, read by the compiler, never executed directly.
//!
//! (About 700 lines. One concept, the `Graph` type: its methods (variables, mappings, vertices,
//! connections, host access, streams, functions) all guard the same tables and the graph's
//! identity; views are in `tensor.rs`, handles in `handles.rs`.)

mod error;
mod handles;
pub mod mapping;
pub mod program;
mod remote;
mod state;
pub mod tensor;

use std::ops::Range;

use indexmap::IndexMap;

use crate::dtype::{to_le_bytes, DType, Element};
use crate::entity::PrimaryMap;
use crate::target::{Target, TileId, TileRange};
pub(crate) use error::nearest_name;
pub use error::{GraphError, VertexName};
pub use handles::{ComputeSet, Function, RemoteBuffer, Stream, StreamDir, VertexRef};
pub use handles::{ComputeSetKey, FunctionKey, RemoteBufferKey, StreamKey, VertexKey};
pub use mapping::IntervalMap;
use program::Program;
pub use state::StateValue;
pub use tensor::{concat, Region, Tensor, VarId};

pub(crate) struct VarInfo {
    pub name: String,
    pub dtype: DType,
    pub len: u64,
    /// Contents of a constant (little-endian), or of a variable given an initial value.
    pub init: Option<Vec<u8>>,
    pub is_constant: bool,
    pub mapping: IntervalMap,
}

pub(crate) struct ComputeSetInfo {
    pub name: String,
    pub vertices: Vec<VertexRef>,
}

/// What a vertex field is connected to.
#[derive(Debug, Clone)]
pub(crate) enum Binding {
    Tensor(Tensor),
    List(Vec<Tensor>),
}

pub(crate) struct VertexInfo {
    pub cs: ComputeSet,
    pub codelet: String,
    pub tile: Option<TileId>,
    pub conns: IndexMap<String, Binding>,
    pub state: IndexMap<String, StateValue>,
    pub cycles: Option<u64>,
}

pub(crate) struct HostTensorInfo {
    pub tensor: Tensor,
    pub writable: bool,
    pub readable: bool,
}

pub(crate) struct StreamInfo {
    pub name: String,
    pub dtype: DType,
    pub len: usize,
    pub dir: StreamDir,
    /// Copies the host prepares ahead ([`Graph::set_buffering_depth`]).
    pub buffering_depth: u32,
}

/// Something that can be placed on a tile: a tensor (all its elements) or a vertex.
pub trait Mappable {
    fn map_to(self, graph: &mut Graph, tile: TileId) -> Result<(), GraphError>;
}

impl Mappable for &Tensor {
    fn map_to(self, graph: &mut Graph, tile: TileId) -> Result<(), GraphError> {
        graph.map_tensor(self, tile)
    }
}

impl Mappable for VertexRef {
    fn map_to(self, graph: &mut Graph, tile: TileId) -> Result<(), GraphError> {
        graph.check_vertex(self)?;
        graph.check_tile(tile, || format!("vertex {}", self.index))?;
        graph.vertices[self.key()].tile = Some(tile);
        Ok(())
    }
}

static NEXT_GRAPH_ID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

/// A static dataflow graph for one target.
pub struct Graph {
    pub(crate) id: u32,
    pub(crate) target: Target,
    pub(crate) vars: crate::entity::PrimaryMap<VarId, VarInfo>,
    pub(crate) compute_sets: PrimaryMap<ComputeSetKey, ComputeSetInfo>,
    pub(crate) vertices: PrimaryMap<VertexKey, VertexInfo>,
    pub(crate) host_tensors: IndexMap<String, HostTensorInfo>,
    pub(crate) streams: PrimaryMap<StreamKey, StreamInfo>,
    pub(crate) remote_buffers: PrimaryMap<RemoteBufferKey, remote::RemoteBufferInfo>,
    pub(crate) functions: PrimaryMap<FunctionKey, Program>,
    /// `Some` for a replicated graph ([`Graph::new_replicated`]).
    pub(crate) replication: Option<GraphReplication>,
    /// Constants whose value differs per replica: the variable and `R ×` its bytes.
    pub(crate) replica_constants: Vec<(VarId, Vec<u8>)>,
    /// The replication index constant on each tile that asked for it.
    replication_index: std::collections::BTreeMap<TileId, Tensor>,
}

/// How a replicated graph is laid out on its machine.
#[derive(Debug, Clone)]
pub(crate) struct GraphReplication {
    pub factor: u32,
    pub chips_per_replica: u32,
    /// The whole machine; the graph's own target is one replica's share of it.
    pub machine: Target,
}

impl Graph {
    /// An empty graph for `target`.
    pub fn new(target: &Target) -> Graph {
        Graph {
            id: NEXT_GRAPH_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            target: target.clone(),
            vars: Default::default(),
            compute_sets: Default::default(),
            vertices: Default::default(),
            host_tensors: IndexMap::new(),
            streams: Default::default(),
            remote_buffers: Default::default(),
            functions: Default::default(),
            replication: None,
            replica_constants: Vec::new(),
            replication_index: Default::default(),
        }
    }

    /// A graph for one replica of `replicas`, each of `chips_per_replica` chips of
    /// `machine`. The graph is built once, with replica-local tile numbers
    /// (`0..chips_per_replica × tiles_per_ipu`; [`Graph::target`] describes one replica), and
    /// the compiled program runs on every replica: replica `r` occupies chips
    /// `r·chips_per_replica .. (r+1)·chips_per_replica` of `machine`. Replicas differ only in
    /// their data, their replica constants ([`Graph::add_replica_constant`],
    /// [`Graph::replication_index`]) and where cross-replica copies send
    /// ([`Program::cross_replica_copy`](crate::graph::program::Program::cross_replica_copy)).
    ///
    /// `replicas` must be a power of two (the collectives' rings need it) and
    /// `replicas × chips_per_replica` at most the machine's chips.
    pub fn new_replicated(
        machine: &Target,
        replicas: u32,
        chips_per_replica: u32,
    ) -> Result<Graph, GraphError> {
        machine.validate()?;
        let bad = |reason: String| Err(GraphError::InvalidReplication { reason });
        if replicas == 0 || !replicas.is_power_of_two() {
            return bad(format!(
                "{replicas} replicas: the replication factor must be a power of two"
            ));
        }
        if chips_per_replica == 0 {
            return bad("a replica needs at least one chip".into());
        }
        let need = u64::from(replicas) * u64::from(chips_per_replica);
        if need > u64::from(machine.num_ipus) {
            return bad(format!(
                "{replicas} replicas × {chips_per_replica} chips = {need} chips, but the target has {}",
                machine.num_ipus
            ));
        }
        // One replica's view: its chips, and the link domains inside it (none when the
        // replica fits in one domain).
        let domain = machine.domain_chips();
        let mut g = Graph::new(&Target {
            num_ipus: chips_per_replica,
            chips_per_link_domain: if domain < chips_per_replica
                && chips_per_replica.is_multiple_of(domain)
            {
                domain
            } else {
                0
            },
            ..machine.clone()
        });
        g.replication = Some(GraphReplication {
            factor: replicas,
            chips_per_replica,
            machine: machine.clone(),
        });
        Ok(g)
    }

    /// The target of one replica (the whole target when the graph is not replicated).
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Number of replicas the graph is built for (1 unless [`Graph::new_replicated`]).
    pub fn replication_factor(&self) -> u32 {
        self.replication.as_ref().map_or(1, |r| r.factor)
    }

    /// The whole machine a replicated graph runs on (the graph's own target otherwise).
    pub fn machine_target(&self) -> &Target {
        self.replication
            .as_ref()
            .map_or(&self.target, |r| &r.machine)
    }

    /// A constant whose value differs per replica: `values` holds `R` values of `shape`, one
    /// after the other (a leading `[R, …]` dimension). Its elements must be mapped like any
    /// constant's. Programs cannot write it.
    pub fn add_replica_constant<T: Element>(
        &mut self,
        shape: &[usize],
        values: &[T],
        name: &str,
    ) -> Result<Tensor, GraphError> {
        let n: usize = shape.iter().product();
        let r = self.replication_factor() as usize;
        if values.len() != n * r {
            return Err(GraphError::BadData {
                what: format!("replica constant '{name}' ({r} replicas of {n} elements)"),
                dtype: T::DTYPE,
                expected: n * r,
                got: values.len(),
            });
        }
        let t = self.add_constant(shape, &values[..n], name)?;
        let var = VarId::from_u32(self.vars.len() as u32 - 1);
        self.replica_constants.push((var, to_le_bytes(values)));
        Ok(t)
    }

    /// The index of the replica running the program (`0..R`), as a `u32` scalar constant on
    /// `tile` (one per tile, created on first use).
    pub fn replication_index(&mut self, tile: impl Into<TileId>) -> Result<Tensor, GraphError> {
        let tile = tile.into();
        if let Some(t) = self.replication_index.get(&tile) {
            return Ok(t.clone());
        }
        self.check_tile(tile, || "replication index".to_string())?;
        let values: Vec<u32> = (0..self.replication_factor()).collect();
        let t = self.add_replica_constant(&[], &values, &format!("replication index@{tile}"))?;
        self.set_tile_mapping(&t, tile)?;
        self.replication_index.insert(tile, t.clone());
        Ok(t)
    }

    pub(crate) fn whole(&self, var: VarId, dtype: DType, shape: &[usize]) -> Tensor {
        let len: usize = shape.iter().product();
        let regions = if len == 0 {
            vec![]
        } else {
            vec![Region {
                var,
                start: 0,
                len: len as u64,
            }]
        };
        Tensor::new(self.id, dtype, shape.to_vec(), regions)
    }

    /// A new variable of `shape`; its elements must be mapped to tiles before compiling.
    pub fn add_variable(&mut self, dtype: DType, shape: &[usize], name: &str) -> Tensor {
        let var = self.vars.push(VarInfo {
            name: name.to_string(),
            dtype,
            len: shape.iter().product::<usize>() as u64,
            init: None,
            is_constant: false,
            mapping: IntervalMap::default(),
        });
        self.whole(var, dtype, shape)
    }

    /// A new constant holding `data`; its elements must be mapped like a variable's.
    pub fn add_constant<T: Element>(
        &mut self,
        shape: &[usize],
        data: &[T],
        name: &str,
    ) -> Result<Tensor, GraphError> {
        let n: usize = shape.iter().product();
        if data.len() != n {
            return Err(GraphError::BadData {
                what: format!("constant '{name}'"),
                dtype: T::DTYPE,
                expected: n,
                got: data.len(),
            });
        }
        let t = self.add_variable(T::DTYPE, shape, name);
        // The new variable is the last one (a zero-length tensor has no regions to ask).
        let v = self.vars.last_mut().expect("just added");
        v.init = Some(to_le_bytes(data));
        v.is_constant = true;
        Ok(t)
    }

    /// Gives a variable the contents it has when an engine is created.
    pub fn set_initial_value<T: Element>(
        &mut self,
        tensor: &Tensor,
        data: &[T],
    ) -> Result<(), GraphError> {
        self.check_tensor(tensor, "set_initial_value")?;
        if data.len() != tensor.num_elements() || T::DTYPE != tensor.dtype {
            return Err(GraphError::BadData {
                what: "set_initial_value".into(),
                dtype: tensor.dtype,
                expected: tensor.num_elements(),
                got: data.len(),
            });
        }
        let size = T::DTYPE.size() as u64;
        let bytes = to_le_bytes(data);
        let mut off = 0usize;
        for r in tensor.regions.iter() {
            let v = &mut self.vars[r.var];
            let len = v.len as usize * size as usize;
            let init = v.init.get_or_insert_with(|| vec![0; len]);
            let n = (r.len * size) as usize;
            init[(r.start * size) as usize..][..n].copy_from_slice(&bytes[off..off + n]);
            off += n;
        }
        Ok(())
    }

    fn check_tensor(&self, t: &Tensor, what: &str) -> Result<(), GraphError> {
        if t.graph != self.id {
            return Err(GraphError::ForeignTensor {
                what: what.to_string(),
            });
        }
        Ok(())
    }

    fn check_tile(&self, tile: TileId, what: impl FnOnce() -> String) -> Result<(), GraphError> {
        if tile.as_u32() >= self.target.num_tiles() {
            return Err(GraphError::TileOutOfRange {
                what: what(),
                tile,
                num_tiles: self.target.num_tiles(),
            });
        }
        Ok(())
    }

    /// Places a tensor's elements, or a vertex, on `tile` (a [`TileId`], or a tile number).
    pub fn set_tile_mapping(
        &mut self,
        what: impl Mappable,
        tile: impl Into<TileId>,
    ) -> Result<(), GraphError> {
        what.map_to(self, tile.into())
    }

    fn map_tensor(&mut self, tensor: &Tensor, tile: TileId) -> Result<(), GraphError> {
        self.check_tensor(tensor, "set_tile_mapping")?;
        self.check_tile(tile, || format!("set_tile_mapping of {tensor:?}"))?;
        for r in tensor.regions.iter() {
            self.vars[r.var].mapping.assign(r.start..r.end(), tile);
        }
        Ok(())
    }

    /// Spreads the elements of `tensor` evenly over all tiles, in blocks of at least `grain`
    /// elements (Poplar's `mapTensorLinearly`).
    pub fn map_linearly(&mut self, tensor: &Tensor, grain: usize) -> Result<(), GraphError> {
        let tiles = self.target.tiles();
        self.map_linearly_over(tensor, grain, tiles)
    }

    /// Like [`map_linearly`](Self::map_linearly) over a run of tiles (a [`TileRange`], or a
    /// `Range<u32>` of tile numbers).
    pub fn map_linearly_over(
        &mut self,
        tensor: &Tensor,
        grain: usize,
        tiles: impl Into<TileRange>,
    ) -> Result<(), GraphError> {
        let tiles = tiles.into();
        self.check_tensor(tensor, "map_linearly")?;
        if tiles.is_empty() {
            return Err(GraphError::BadView {
                op: "map_linearly",
                reason: "empty tile range".into(),
            });
        }
        self.check_tile(TileId::new(tiles.end.as_u32() - 1), || {
            "map_linearly".into()
        })?;
        let n = tensor.num_elements();
        let grain = grain.max(1);
        let grains = n.div_ceil(grain);
        let nt = tiles.len();
        let per = grains.div_ceil(nt).max(1);
        let flat = tensor.flatten();
        let mut start = 0usize;
        let mut tile = tiles.start;
        while start < n {
            let end = (start + per * grain).min(n);
            let part = flat.slice(start..end)?;
            self.set_tile_mapping(&part, tile)?;
            start = end;
            tile = tile.offset(1);
        }
        Ok(())
    }

    /// The tile mapping of `tensor`: for each tile, the intervals of the tensor's flat element
    /// indices it holds. Unmapped elements appear nowhere.
    pub fn tile_mapping(&self, tensor: &Tensor) -> Result<Vec<Vec<Range<usize>>>, GraphError> {
        self.check_tensor(tensor, "tile_mapping")?;
        let mut out = vec![Vec::<Range<usize>>::new(); self.target.num_tiles() as usize];
        let mut flat = 0u64;
        for r in tensor.regions.iter() {
            for (piece, tile) in self.vars[r.var].mapping.pieces(r.start..r.end()) {
                let s = (flat + piece.start - r.start) as usize;
                let e = s + (piece.end - piece.start) as usize;
                let list = &mut out[tile.index()];
                match list.last_mut() {
                    Some(last) if last.end == s => last.end = e,
                    _ => list.push(s..e),
                }
            }
            flat += r.len;
        }
        Ok(out)
    }

    /// Name of the variable behind `var`.
    pub fn var_name(&self, var: VarId) -> &str {
        &self.vars[var].name
    }

    /// A new, empty compute set.
    pub fn add_compute_set(&mut self, name: &str) -> ComputeSet {
        self.compute_sets.push(ComputeSetInfo {
            name: name.to_string(),
            vertices: Default::default(),
        });
        ComputeSet {
            graph: self.id,
            index: self.compute_sets.len() as u32 - 1,
        }
    }

    /// Checks that `h` is a handle of this graph to something that exists.
    fn check_handle(
        &self,
        graph: u32,
        index: u32,
        count: usize,
        what: &str,
    ) -> Result<(), GraphError> {
        if graph != self.id {
            return Err(GraphError::ForeignHandle {
                what: format!("{what} {index}"),
            });
        }
        if index as usize >= count {
            return Err(GraphError::UnknownHandle {
                what: format!("{what} {index}"),
                count,
            });
        }
        Ok(())
    }

    pub(crate) fn check_vertex(&self, v: VertexRef) -> Result<(), GraphError> {
        self.check_handle(v.graph, v.index, self.vertices.len(), "vertex")
    }

    pub(crate) fn check_compute_set(&self, cs: ComputeSet) -> Result<(), GraphError> {
        self.check_handle(cs.graph, cs.index, self.compute_sets.len(), "compute set")
    }

    pub(crate) fn check_function(&self, f: Function) -> Result<(), GraphError> {
        self.check_handle(f.graph, f.index, self.functions.len(), "function")
    }

    pub(crate) fn check_stream(&self, s: Stream) -> Result<(), GraphError> {
        self.check_handle(s.graph, s.index, self.streams.len(), "stream")
    }

    /// A new vertex running codelet type `C` (declared with [`codelet!`](crate::codelet!)) in
    /// compute set `cs`: `g.add_vertex_of::<Scale>(cs)`. A typo in the type is a compile
    /// error, where a typo in a name string is found only by validation.
    pub fn add_vertex_of<C: crate::codelet::Codelet>(
        &mut self,
        cs: ComputeSet,
    ) -> Result<VertexRef, GraphError> {
        self.add_vertex(cs, C::NAME)
    }

    /// A new vertex running codelet `codelet` in compute set `cs`. The codelet name, fields and
    /// connections are checked by the compiler's validation pass; a compute set of another
    /// graph, or one that does not exist, is an error here.
    pub fn add_vertex(&mut self, cs: ComputeSet, codelet: &str) -> Result<VertexRef, GraphError> {
        self.check_compute_set(cs)?;
        let v = VertexRef {
            graph: self.id,
            index: self.vertices.len() as u32,
        };
        self.vertices.push(VertexInfo {
            cs,
            codelet: codelet.to_string(),
            tile: None,
            conns: IndexMap::new(),
            state: IndexMap::new(),
            cycles: None,
        });
        self.compute_sets[cs.key()].vertices.push(v);
        Ok(v)
    }

    /// Connects a Scalar or Vector field of `v` to `tensor` (flattened). A vertex or tensor of
    /// another graph is an error; the field itself is checked by validation.
    pub fn connect(
        &mut self,
        v: VertexRef,
        field: &str,
        tensor: &Tensor,
    ) -> Result<(), GraphError> {
        self.check_vertex(v)?;
        self.check_own(tensor, || {
            format!("tensor connected to {v} field '{field}'")
        })?;
        self.vertices[v.key()]
            .conns
            .insert(field.to_string(), Binding::Tensor(tensor.clone()));
        Ok(())
    }

    /// Connects a VectorList field of `v`: sub-vector `i` is `tensors[i]`.
    pub fn connect_list(
        &mut self,
        v: VertexRef,
        field: &str,
        tensors: &[Tensor],
    ) -> Result<(), GraphError> {
        self.check_vertex(v)?;
        for (i, t) in tensors.iter().enumerate() {
            self.check_own(t, || {
                format!("tensor {i} of the list connected to {v} field '{field}'")
            })?;
        }
        self.vertices[v.key()]
            .conns
            .insert(field.to_string(), Binding::List(tensors.to_vec()));
        Ok(())
    }

    /// A typed error if `t` belongs to another graph.
    fn check_own(&self, t: &Tensor, what: impl FnOnce() -> String) -> Result<(), GraphError> {
        if t.graph != self.id {
            return Err(GraphError::ForeignTensor { what: what() });
        }
        Ok(())
    }

    /// Sets a State field of `v`.
    ///
    /// An untyped integer literal (Rust infers `i32`) given to a state field of another numeric
    /// type is converted when its value fits that type exactly: `set_vertex_state(v, "n", 5)`
    /// sets a `State<u32>` to `5u32`. Anything else must match the field's type (validation
    /// reports a [`StateDType`](crate::compiler::ValidationError::StateDType) error otherwise).
    pub fn set_vertex_state(
        &mut self,
        v: VertexRef,
        field: &str,
        value: impl Into<StateValue>,
    ) -> Result<(), GraphError> {
        self.check_vertex(v)?;
        let mut value = value.into();
        let vertex = &mut self.vertices[v.key()];
        let field_dtype = crate::codelet::lookup(&vertex.codelet)
            .and_then(|d| d.fields.iter().find(|f| f.name == field))
            .map(|f| f.dtype);
        if let Some(to) = field_dtype.filter(|&t| t != value.dtype) {
            if let Some(c) = value.int_literal_as(to) {
                value = c;
            }
        }
        vertex.state.insert(field.to_string(), value);
        Ok(())
    }

    /// Overrides the codelet's cycle estimate for this vertex.
    pub fn set_cycle_estimate(&mut self, v: VertexRef, cycles: u64) -> Result<(), GraphError> {
        self.check_vertex(v)?;
        self.vertices[v.key()].cycles = Some(cycles);
        Ok(())
    }

    /// Replaces the body of function `f` (to build functions that call each other, or
    /// themselves: recursion is then reported by validation).
    pub fn set_function_body(&mut self, f: Function, body: Program) -> Result<(), GraphError> {
        self.check_function(f)?;
        self.functions[f.key()] = body;
        Ok(())
    }

    /// Registers a program that `Program::Call` can run.
    pub fn add_function(&mut self, body: Program) -> Function {
        self.functions.push(body);
        Function {
            graph: self.id,
            index: self.functions.len() as u32 - 1,
        }
    }

    fn add_host_tensor(
        &mut self,
        name: &str,
        tensor: &Tensor,
        writable: bool,
        readable: bool,
    ) -> Result<(), GraphError> {
        self.check_tensor(tensor, name)?;
        if self.host_tensors.contains_key(name) {
            return Err(GraphError::DuplicateName {
                kind: "host tensor",
                name: name.into(),
            });
        }
        self.host_tensors.insert(
            name.to_string(),
            HostTensorInfo {
                tensor: tensor.clone(),
                writable,
                readable,
            },
        );
        Ok(())
    }

    /// Lets the host write `tensor` by `name` with `Engine::write_tensor`.
    pub fn create_host_write(&mut self, name: &str, tensor: &Tensor) -> Result<(), GraphError> {
        self.add_host_tensor(name, tensor, true, false)
    }

    /// Lets the host read `tensor` by `name` with `Engine::read_tensor`.
    pub fn create_host_read(&mut self, name: &str, tensor: &Tensor) -> Result<(), GraphError> {
        self.add_host_tensor(name, tensor, false, true)
    }

    /// Lets the host both read and write `tensor` by `name`.
    pub fn create_host_read_write(
        &mut self,
        name: &str,
        tensor: &Tensor,
    ) -> Result<(), GraphError> {
        self.add_host_tensor(name, tensor, true, true)
    }

    fn add_stream(
        &mut self,
        name: &str,
        dtype: DType,
        len: usize,
        dir: StreamDir,
    ) -> Result<Stream, GraphError> {
        if self.streams.values().any(|s| s.name == name) {
            return Err(GraphError::DuplicateName {
                kind: "stream",
                name: name.into(),
            });
        }
        self.streams.push(StreamInfo {
            name: name.to_string(),
            dtype,
            len,
            dir,
            buffering_depth: 1,
        });
        Ok(Stream {
            graph: self.id,
            index: self.streams.len() as u32 - 1,
        })
    }

    /// A stream whose each copy moves `len` elements from the host to the device.
    pub fn add_host_to_device_stream(
        &mut self,
        name: &str,
        dtype: DType,
        len: usize,
    ) -> Result<Stream, GraphError> {
        self.add_stream(name, dtype, len, StreamDir::HostToDevice)
    }

    /// A stream whose each copy moves `len` elements from the device to the host.
    pub fn add_device_to_host_stream(
        &mut self,
        name: &str,
        dtype: DType,
        len: usize,
    ) -> Result<Stream, GraphError> {
        self.add_stream(name, dtype, len, StreamDir::DeviceToHost)
    }

    /// Name of compute set `cs`.
    pub fn compute_set_name(&self, cs: ComputeSet) -> Option<&str> {
        self.check_compute_set(cs).ok()?;
        Some(self.compute_sets[cs.key()].name.as_str())
    }
}
