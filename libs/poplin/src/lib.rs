//! Linear algebra on poplar-rs, in the style of Poplar's poplin: a planned dense matrix
//! multiply `C[g, m, n] = A[g, m, k] · B[g, k, n]` with f32 operands, or f16 operands and f32
//! partials ([`MatMulOptions::input_type`]); `C` is f32 either way, and both operands must be
//! of the plan's type.
//!
//! ```
//! use poplar::{compile, CompileOptions, Engine, EngineOptions, Graph, Target};
//! use poplin::{MatMulOptions, MatMulParams};
//!
//! poplin::link();
//! let target = Target::custom(16, 64 * 1024);
//! let params = MatMulParams { groups: 1, m: 20, k: 30, n: 10 };
//! let plan = poplin::plan(&target, params, &MatMulOptions::default())?;
//! println!("{plan}");
//! let mut graph = Graph::new(&target);
//! let a = poplin::create_lhs(&mut graph, &plan, "A")?.index(0)?;
//! let b = poplin::create_rhs(&mut graph, &plan, "B")?.index(0)?;
//! let (c, prog) = poplin::matmul(&mut graph, &a, &b, &plan, "mm")?;
//! graph.create_host_write("a", &a)?;
//! graph.create_host_write("b", &b)?;
//! graph.create_host_read("c", &c)?;
//! let exe = compile(&graph, &[prog], &CompileOptions::default())?;
//! let mut engine = Engine::new(&exe, EngineOptions::default())?;
//! engine.write_tensor("a", &vec![1.0f32; 20 * 30])?;
//! engine.write_tensor("b", &vec![0.5f32; 30 * 10])?;
//! engine.run(0)?;
//! assert!(engine.read_tensor::<f32>("c")?.iter().all(|&x| x == 15.0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - [`mod@plan`]: the planner and its cost model ([`Plan`] prints itself);
//! - [`mod@build`]: operands laid out for a plan ([`create_lhs`], [`create_rhs`]) and the multiply
//!   ([`matmul`]);
//! - [`mod@conv`]: convolutions — parameters, the three passes of training as one canonical
//!   convolution, the planner, the `ConvPartial` codelets and the graph builder
//!   ([`convolution`], [`convolution_input_gradient`], [`convolution_weight_gradient`], with
//!   operands laid out by [`create_conv_input`], [`create_conv_weights`],
//!   [`create_conv_output_gradient`]);
//! - [`mod@codelets`]: `MatMulBlock<float>`, `MatMulBlock<half>` and `SumBlocks<float>`, with
//!   the AMP rates the cycle model assumes.
//!
//! A binary that uses this crate calls [`link()`] once, so that the linker keeps the codelet
//! registrations (as for the standard codelets).

pub mod build;
pub mod codelets;
pub mod conv;
pub mod plan;

pub use build::{create_lhs, create_rhs, host_matmul, matmul, MatMulError};
pub use conv::{
    convolution, convolution_input_gradient, convolution_weight_gradient, create_conv_input,
    create_conv_output_gradient, create_conv_weights, plan_convolution, ConvError, ConvOptions,
    ConvParams, ConvPass, ConvPlan, ConvPlanError,
};
pub use plan::{plan, Estimate, MatMulOptions, MatMulParams, Plan, PlanError, PlanParams};

/// Keeps this crate's codelet registrations (and the standard codelets') linked.
pub fn link() {
    ::codelets::link();
}
