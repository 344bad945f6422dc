//! The compiler: graph + programs → executable, as a pipeline of passes with a verifier after
//! each:
//!
//! 1. `validate`: everything later passes assume (codelets registered, fields connected with
//!    the right types, every element and vertex mapped, no data races);
//! 2. `layout`: always-live memory of every tile (variables, constants, vertex state, and the
//!    receive slack that `in_place` asks for beside variables);
//! 3. `in_place`: which read-only concatenations are bound around their local piece, and
//!    the receive slack the layout reserves for them (run before the layout places segments);
//! 4. `lower`: exchange inference and lowering of programs into BSP supersteps, placing each
//!    superstep's temporaries above the always-live area;
//! 5. `images`: the tile images and the memory check against the per-tile budget;
//! 6. the executable's own consistency check ([`Executable::check`]).
//!
//! `verify` runs after each pass (switch: [`CompileOptions::verify`]) and reports a typed
//! [`VerifierError`] naming the pass, tile and entity; the final check always runs.

mod assemble;
mod error;
mod images;
mod in_place;
mod layout;
mod lower;
mod validate;
mod validate_io;
mod verify;

use crate::exe::Executable;
use crate::graph::program::Program;
use crate::graph::Graph;
pub use error::{CompileError, Pass, ValidationError, VerifierError};

/// Options of [`compile`].
#[derive(Debug, Clone)]
pub struct CompileOptions {
    /// Produce an executable even if a tile is over its memory budget (the engine refuses to
    /// run it), so that the memory report can still be read.
    pub allow_out_of_memory: bool,
    /// When to bind read-only concatenations such as `[halo…, own slice, halo…]` in place
    /// (see [`InPlaceConcat`]).
    pub in_place_concat: InPlaceConcat,
    /// Run the verifier after each pass (`verify`): on by default. The final check of the
    /// executable always runs. Turning it off saves a little compile time on very large graphs;
    /// a verifier failure is a compiler bug, reported as [`CompileError::Verifier`].
    pub verify: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            allow_out_of_memory: false,
            in_place_concat: InPlaceConcat::IfNoLarger,
            verify: true,
        }
    }
}

/// When the compiler binds a read-only concatenation around its local slice in place: it
/// reserves always-live receive space ("slack") beside the slice's variable segment, the
/// exchange fills it directly, and the slice is not copied next to a received halo every
/// superstep (see `in_place`). Slack is always-live while temporaries are shared by all
/// supersteps, so with several concatenations around different slices of one tile (e.g. the
/// two buffers of a ping-pong) the slack can outgrow the temporaries it replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InPlaceConcat {
    /// Never: every such field is gathered into a temporary.
    Never,
    /// On each tile where the slack is no larger than the gathered buffers it replaces in the
    /// superstep that gathers the most there (so these buffers cost the tile no more memory
    /// than as temporaries); elsewhere gathered.
    #[default]
    IfNoLarger,
    /// Wherever possible, whatever the slack costs.
    Always,
}

/// Compiles `programs` (run later by index) over `graph`: the passes in order, each followed by
/// its verifier when [`CompileOptions::verify`] is on, then the executable's own check.
pub fn compile(
    graph: &Graph,
    programs: &[Program],
    options: &CompileOptions,
) -> Result<Executable, CompileError> {
    graph.target.validate()?;
    let _span = tracing::info_span!(
        "compile",
        vertices = graph.vertices.len(),
        variables = graph.vars.len()
    )
    .entered();
    let verify = options.verify;

    let validated = validate::validate(graph, programs).map_err(CompileError::Invalid)?;
    let codelets = &validated.codelets;

    // In place runs before the layout places segments: it sizes the slack beside them.
    let segs = layout::segments(graph);
    let in_place = in_place::plan(graph, programs, codelets, &segs, options.in_place_concat);
    let layout = layout::layout(graph, codelets, segs, &in_place.slack);
    if verify {
        verify::layout(graph, &layout)?;
        verify::in_place(graph, &layout, &in_place)?;
    }

    let lowered = lower::lower(graph, programs, &layout, &in_place.anchors, codelets);
    if verify {
        verify::lower(
            &lowered.programs,
            &lowered.functions,
            lowered.computes.len(),
            lowered.exchanges.len(),
        )?;
    }

    let tiles = images::build(graph, &layout, &lowered, options.allow_out_of_memory)?;
    let exe = assemble::executable(graph, lowered, tiles);
    if verify {
        verify::images(&exe)?;
    }

    // The executable's own consistency check, always: the engine relies on it.
    exe.check().map_err(|e| VerifierError {
        pass: Pass::Check,
        tile: None,
        entity: None,
        reason: e.to_string(),
    })?;
    Ok(exe)
}
