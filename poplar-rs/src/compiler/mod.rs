//! The compiler: graph + programs → executable, as a pipeline of passes with a verifier after
//! each:
//!
//! 1. [`validate`]: everything later passes assume (codelets registered, fields connected with
//!    the right types, every element and vertex mapped, no data races);
//! 2. [`layout`]: always-live memory of every tile (variables, constants, vertex state, and the
//!    receive slack that [`in_place`] asks for beside variables);
//! 3. [`lower`]: exchange inference and lowering of programs into BSP supersteps, placing each
//!    superstep's temporaries above the always-live area;
//! 4. memory check against the per-tile budget, and the executable's own consistency check.

pub mod in_place;
pub mod layout;
pub mod lower;
pub mod validate;

use crate::error::CompileError;
use crate::exe::{Executable, HostTensor, MemoryCategory, MemoryItem, StreamDesc, TileImage};
use crate::graph::program::Program;
use crate::graph::Graph;

/// Options of [`compile`].
#[derive(Debug, Clone)]
pub struct CompileOptions {
    /// Produce an executable even if a tile is over its memory budget (the engine refuses to
    /// run it), so that the memory report can still be read.
    pub allow_out_of_memory: bool,
    /// When to bind read-only concatenations such as `[halo…, own slice, halo…]` in place
    /// (see [`InPlaceConcat`]).
    pub in_place_concat: InPlaceConcat,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            allow_out_of_memory: false,
            in_place_concat: InPlaceConcat::IfNoLarger,
        }
    }
}

/// When the compiler binds a read-only concatenation around its local slice in place: it
/// reserves always-live receive space ("slack") beside the slice's variable segment, the
/// exchange fills it directly, and the slice is not copied next to a received halo every
/// superstep (see [`in_place`]). Slack is always-live while temporaries are shared by all
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

/// Compiles `programs` (run later by index) over `graph`.
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

    let validated = validate::validate(graph, programs).map_err(CompileError::Invalid)?;
    let codelet_opts: Vec<_> = validated.codelets.iter().map(|&d| Some(d)).collect();

    let segs = layout::segments(graph);
    let slack = match options.in_place_concat {
        InPlaceConcat::Never => Vec::new(),
        mode => in_place::slack_needs(
            graph,
            programs,
            &validated.codelets,
            &segs,
            mode == InPlaceConcat::IfNoLarger,
        ),
    };
    let layout = layout::layout(graph, &codelet_opts, segs, slack);
    verify_layout(graph, &layout)?;

    let mut lw = lower::Lowerer::new(graph, &layout, &validated.codelets);
    let progs: Vec<_> = programs.iter().map(|p| lw.program(p)).collect();
    let functions: Vec<_> = graph.functions.iter().map(|p| lw.program(p)).collect();
    let host_tensors = graph
        .host_tensors
        .iter()
        .map(|(name, h)| HostTensor {
            name: name.clone(),
            dtype: h.tensor.dtype,
            shape: h.tensor.shape.clone(),
            runs: lw.runs(&h.tensor),
            writable: h.writable,
            readable: h.readable,
        })
        .collect();

    // Tile images and the memory check.
    let mut tiles = Vec::with_capacity(layout.tiles.len());
    let mut worst: Option<(u32, u64)> = None;
    for (i, ta) in layout.tiles.iter().enumerate() {
        let base = lw.temp_base()[i];
        let peak = lw.temp_peak[i];
        let total = (base + peak).next_multiple_of(layout.align);
        let mut breakdown: Vec<MemoryItem> = ta
            .items
            .iter()
            .map(|((name, cat), &bytes)| MemoryItem {
                name: name.clone(),
                category: *cat,
                bytes: bytes as u32,
            })
            .collect();
        if peak > 0 {
            breakdown.push(MemoryItem {
                name: "temporaries (peak)".into(),
                category: MemoryCategory::Temporary,
                bytes: peak as u32,
            });
        }
        breakdown.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.name.cmp(&b.name)));
        if total > u64::from(graph.target.bytes_per_tile) && worst.is_none_or(|(_, w)| total > w) {
            worst = Some((i as u32, total));
        }
        tiles.push(TileImage {
            memory_bytes: u32::try_from(total).unwrap_or(u32::MAX),
            always_live_bytes: ta.next as u32,
            temporary_bytes: peak as u32,
            init: ta.init.clone(),
            breakdown,
        });
    }
    if let Some((tile, total)) = worst {
        if !options.allow_out_of_memory || total > u64::from(u32::MAX) {
            let largest = tiles[tile as usize]
                .breakdown
                .iter()
                .take(5)
                .map(|m| (m.name.clone(), u64::from(m.bytes)))
                .collect();
            return Err(CompileError::OutOfMemory {
                tile,
                total,
                budget: u64::from(graph.target.bytes_per_tile),
                largest,
            });
        }
    }

    let exe = Executable {
        target: graph.target.clone(),
        codelets: lw.codelet_refs.into(),
        tiles,
        computes: lw.computes.into(),
        exchanges: lw.exchanges.into(),
        programs: progs,
        functions: functions.into(),
        host_tensors,
        streams: graph
            .streams
            .iter()
            .map(|s| StreamDesc {
                name: s.name.clone(),
                dtype: s.dtype,
                len: s.len,
                dir: match s.dir {
                    crate::graph::StreamDir::HostToDevice => crate::exe::StreamDir::HostToDevice,
                    crate::graph::StreamDir::DeviceToHost => crate::exe::StreamDir::DeviceToHost,
                },
            })
            .collect(),
        variable_names: graph.vars.values().map(|v| v.name.clone()).collect(),
        app_sections: Default::default(),
    };
    exe.check().map_err(|e| CompileError::Verifier {
        pass: "lower",
        reason: e.to_string(),
    })?;
    Ok(exe)
}

/// Verifier after the layout pass: every variable element has exactly one location and no two
/// allocations of a tile overlap.
fn verify_layout(graph: &Graph, layout: &layout::Layout) -> Result<(), CompileError> {
    let fail = |reason: String| {
        Err(CompileError::Verifier {
            pass: "layout",
            reason,
        })
    };
    let mut per_tile: Vec<Vec<(u64, u64)>> = vec![Vec::new(); layout.tiles.len()];
    for (vi, segs) in layout.segs.iter() {
        let var = &graph.vars[vi];
        let mut next = 0;
        for s in segs {
            if s.start != next {
                return fail(format!("variable '{}' has a gap at {next}", var.name));
            }
            next = s.end;
            per_tile[s.tile as usize].push((
                s.offset,
                s.offset + (s.end - s.start) * var.dtype.size() as u64,
            ));
        }
        if next != var.len {
            return fail(format!(
                "variable '{}' covers {next} of {} elements",
                var.name, var.len
            ));
        }
    }
    for (t, mut v) in per_tile.into_iter().enumerate() {
        v.sort_unstable();
        if let Some(w) = v.windows(2).find(|w| w[0].1 > w[1].0) {
            return fail(format!(
                "tile {t}: allocations {:?} and {:?} overlap",
                w[0], w[1]
            ));
        }
        if v.last().is_some_and(|l| l.1 > layout.tiles[t].next) {
            return fail(format!("tile {t}: allocation beyond the always-live area"));
        }
    }
    Ok(())
}
