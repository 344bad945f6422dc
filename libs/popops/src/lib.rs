//! Graph-building element-wise ops, fills and reductions in the style of popops, over the
//! vertices of the standard codelets (`codelets`).
//!
//! Each helper adds vertices of the standard codelets to a compute set over the tile mapping of
//! the output (the tensor written), with every operand sliced to the same flat element range.
//! As popops does (`splitRegionsBetweenWorkers`), each tile's elements are split between its
//! worker contexts ([`split_between_workers`]): up to `workers_per_tile` pieces of about equal
//! size, whole 64-bit vectors except at the end of a region, each a single-worker vertex, so
//! that the six barrel-threaded contexts share the work (one vertex doing a tile's work alone
//! takes six times as long, see `docs/cycle-model.md`). Operands may live on other tiles (the
//! compiler adds the exchange) and an operand of exactly one element is broadcast. They use
//! only the graph IR (`poplar-compiler`) and the codelets: a graph-building library links no
//! engine.
//!
//! ```
//! use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
//!
//! codelets::link();
//! let mut graph = Graph::new(&Target::custom(4, 64 * 1024));
//! let x = graph.add_variable(DType::F32, &[100], "x");
//! let y = graph.add_variable(DType::F32, &[100], "y");
//! let s = graph.add_variable(DType::F32, &[1], "s");
//! graph.map_linearly(&x, 8)?;
//! graph.map_linearly(&y, 8)?;
//! graph.set_tile_mapping(&s, 0)?;
//! graph.create_host_read("s", &s)?;
//!
//! let init = graph.add_compute_set("init");
//! popops::fill(&mut graph, init, &x, 1.0f32)?; // x = 1
//! popops::fill(&mut graph, init, &y, 2.0f32)?; // y = 2
//! let step = graph.add_compute_set("step");
//! popops::scaled_add(&mut graph, step, &x, &y, 0.5)?; // x += 0.5 * y
//! let sum = popops::reduce_sum(&mut graph, &x, &s, "sum")?; // s = sum(x), a Program
//!
//! let prog = Program::seq(vec![Program::execute(init), Program::execute(step), sum]);
//! let exe = compile(&graph, &[prog], &CompileOptions::default())?;
//! let mut engine = Engine::new(&exe, EngineOptions::default())?;
//! engine.run(0)?;
//! assert_eq!(engine.read_tensor::<f32>("s")?, vec![200.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod basic;
pub mod cast;
pub mod elementwise;
mod error;
pub mod expr;
pub mod gather;
pub mod map;
pub mod pad;
pub mod pieces;
pub mod reduce;
pub mod reduction;
pub mod scan;

pub mod slice;
pub mod sort;

pub use gather::{
    encode_one_hot, gather, gather_elements, gather_nd, one_hot, scatter_elements, scatter_nd,
};
pub use pad::{concat, pad, split};
pub use sort::{argsort, sort, sort_with_indices, top_k};

pub use slice::{
    create_sliceable_tensor, dynamic_slice, dynamic_update, estimate_multi_slice, multi_slice,
    multi_update, multi_update_add, plan_multi_slice, SliceOptions, SlicePlan,
};

/// The op families, named here with the helpers that take them.
pub use codelets::family::{BinaryOp, UnaryOp};

pub use basic::{
    add, add_in_place, binary, binary_in_place, copy, elementwise, fill, mul, scaled_add, sub,
    unary, MULTI_WORKER_MIN_ELEMENTS,
};
pub use error::{Broadcast, OpError};
pub use map::{map, map_in_place, map_into, Sequence};
pub use pieces::{codelet_name, mapped_regions, split_between_workers, worker_pieces};
pub use reduce::{dot, reduce_all, reduce_sum};
pub use reduction::{reduce, reduce_with_output, Operation, ReduceParams};
pub use scan::{arg_max, arg_min, cumsum};
