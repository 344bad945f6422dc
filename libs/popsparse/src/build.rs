//! The layer in a graph: the sparse weights (buckets the host writes), the dense operands laid
//! out for the plan, and the Fwd, GradA and GradW programs.
//!
//! (About 750 lines. One concept, the layer's graph: the three passes share the operands,
//! buckets and exchange buffers built here, and each pass is its own function below.)
//!
//! Each pass runs
//! 1. **distribution**: the partials are zeroed, the encoded buckets are copied into the
//!    working buffer A on their own tiles, and every tile processes its bucket;
//! 2. **propagation**, only when the encoder spilled (`If(steps)`): a `RepeatWhileTrue` whose
//!    condition is a `Countdown` vertex (counter from `steps`, and the parity of the active
//!    buffer), and whose body is a `Switch` on the parity: shift every bucket one tile forward
//!    from A into B and process B, or from B into A and process A. Two shift exchanges and two
//!    vertex sets are compiled, one per buffer;
//! 3. **reduction** of the partials over the split of the summed dimension (`P_Y` for Fwd,
//!    `P_X` for GradA), with `poplin`'s `SumBlocks<float>`.
//!
//! A new pattern is new bucket contents and a new `steps`, written from the host: the next run
//! of the same executable uses them.

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::{ComputeSet, Graph, GraphError, Tensor, VertexRef};
use poplar_core::dtype::DType;

use crate::cost::{vertex_cycles, Pass, Work};
use crate::plan::FcPlan;

/// Errors of building the layer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FcError {
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error("{0}")]
    Op(String),
    #[error("sparse fc: {0}")]
    Shape(String),
}

impl From<popops::OpError> for FcError {
    fn from(e: popops::OpError) -> Self {
        FcError::Op(e.to_string())
    }
}

/// The sparse weights on the device: every tile's bucket and the propagation steps. Write
/// them from [`crate::Encoded`] through host writes named `{name}.rows`, `{name}.cols`,
/// `{name}.vals` and `{name}.steps`.
#[derive(Debug, Clone)]
pub struct SparseWeights {
    pub rows: Tensor,
    pub cols: Tensor,
    pub vals: Tensor,
    pub steps: Tensor,
    pub name: String,
}

/// A `[tiles · capacity · width]` tensor of `dtype`, tile `t`'s bucket on tile `t` (`width`
/// elements per entry: 1 for coordinates, `block²` for values).
fn buckets(
    graph: &mut Graph,
    plan: &FcPlan,
    dtype: DType,
    width: usize,
    name: &str,
) -> Result<Tensor, FcError> {
    let per = plan.capacity * width;
    let t = graph.add_variable(dtype, &[plan.tiles() * per], name);
    for tile in 0..plan.tiles() {
        graph.set_tile_mapping(&t.slice(tile * per..(tile + 1) * per)?, tile as u32)?;
    }
    Ok(t)
}

/// Elements per bucket of a bucket tensor.
fn per_tile(t: &Tensor, plan: &FcPlan) -> usize {
    t.num_elements() / plan.tiles()
}

/// Tile `t`'s part of a bucket tensor.
fn bucket(t: &Tensor, plan: &FcPlan, tile: usize) -> Result<Tensor, GraphError> {
    let per = per_tile(t, plan);
    t.slice(tile * per..(tile + 1) * per)
}

/// The destination view of a shift: bucket `t` of `src` lands in bucket `next(t)` of `dst`
/// when `src` is copied into the returned view of `dst`.
fn shifted(
    dst: &Tensor,
    plan: &FcPlan,
    next: impl Fn(usize) -> usize,
) -> Result<Tensor, GraphError> {
    let parts = (0..plan.tiles())
        .map(|t| bucket(dst, plan, next(t)))
        .collect::<Result<Vec<_>, _>>()?;
    Tensor::concat(&parts)
}

/// Creates the sparse weights for `plan`, with their host writes.
pub fn create_weights(
    graph: &mut Graph,
    plan: &FcPlan,
    name: &str,
) -> Result<SparseWeights, FcError> {
    let w = SparseWeights {
        rows: buckets(graph, plan, DType::U32, 1, &format!("{name}.rows"))?,
        cols: buckets(graph, plan, DType::U32, 1, &format!("{name}.cols"))?,
        vals: buckets(
            graph,
            plan,
            plan.data_type,
            plan.block_values(),
            &format!("{name}.vals"),
        )?,
        steps: graph.add_variable(DType::U32, &[1], &format!("{name}.steps")),
        name: name.to_string(),
    };
    graph.set_tile_mapping(&w.steps, 0)?;
    for (t, n) in [
        (&w.rows, "rows"),
        (&w.cols, "cols"),
        (&w.vals, "vals"),
        (&w.steps, "steps"),
    ] {
        graph.create_host_write(&format!("{name}.{n}"), t)?;
    }
    Ok(w)
}

/// A dense `[rows, cols]` f32 tensor of blocks, block `(i, j)` (rows `rows[i]`, columns
/// `cols[j]`) a variable on `tile(i, j)`.
fn grid(
    graph: &mut Graph,
    dtype: DType,
    rows: &[std::ops::Range<usize>],
    cols: &[std::ops::Range<usize>],
    tile: impl Fn(usize, usize) -> usize,
    name: &str,
) -> Result<Tensor, FcError> {
    let mut row_parts = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let mut parts = Vec::with_capacity(cols.len());
        for (j, c) in cols.iter().enumerate() {
            let v = graph.add_variable(dtype, &[r.len(), c.len()], &format!("{name}[{i},{j}]"));
            graph.set_tile_mapping(&v, tile(i, j) as u32)?;
            parts.push(v);
        }
        row_parts.push(Tensor::concat_dim(&parts, 1)?);
    }
    Ok(Tensor::concat_dim(&row_parts, 0)?)
}

fn x_ranges(plan: &FcPlan) -> Vec<std::ops::Range<usize>> {
    (0..plan.px).map(|i| plan.x_range(i)).collect()
}
fn y_ranges(plan: &FcPlan) -> Vec<std::ops::Range<usize>> {
    (0..plan.py).map(|j| plan.y_range(j)).collect()
}
fn z_ranges(plan: &FcPlan) -> Vec<std::ops::Range<usize>> {
    (0..plan.pz).map(|z| plan.z_range(z)).collect()
}

/// The dense input `X[Y, Z]` laid out for the plan: block `(y, z)` on tile `(0, y, z)`.
pub fn create_input(graph: &mut Graph, plan: &FcPlan, name: &str) -> Result<Tensor, FcError> {
    grid(
        graph,
        plan.data_type,
        &y_ranges(plan),
        &z_ranges(plan),
        |y, z| plan.tile(0, y, z),
        name,
    )
}

/// The output gradient `Y'[X, Z]` (or any `[X, Z]` dense operand) laid out for the plan:
/// block `(x, z)` on tile `(x, 0, z)`.
pub fn create_output(graph: &mut Graph, plan: &FcPlan, name: &str) -> Result<Tensor, FcError> {
    grid(
        graph,
        plan.data_type,
        &x_ranges(plan),
        &z_ranges(plan),
        |x, z| plan.tile(x, 0, z),
        name,
    )
}

/// The compute sets of a pass: the distribution's over buffers A and B, and the
/// propagation's over A and B (which process only spilled entries).
struct Sets {
    /// The first compute of the distribution, over the encoded buckets themselves (it
    /// zeroes the outputs first).
    first: ComputeSet,
    dist: [ComputeSet; 2],
    prop: [ComputeSet; 2],
}

/// Which buckets a vertex set reads.
#[derive(Clone, Copy, PartialEq)]
enum Buf {
    A,
    B,
    /// The encoded buckets (and for GradW the gradient buffer A).
    W,
}

impl Sets {
    fn new(graph: &mut Graph, name: &str) -> Sets {
        Sets {
            first: graph.add_compute_set(&format!("{name}/distribute")),
            dist: [
                graph.add_compute_set(&format!("{name}/A")),
                graph.add_compute_set(&format!("{name}/B")),
            ],
            prop: [
                graph.add_compute_set(&format!("{name}/propagate A")),
                graph.add_compute_set(&format!("{name}/propagate B")),
            ],
        }
    }

    /// `(compute set, buckets, propagation flag, first flag)` of the five vertex sets.
    fn all(&self) -> [(ComputeSet, Buf, u32, u32); 5] {
        [
            (self.first, Buf::W, 0, 1),
            (self.dist[0], Buf::A, 0, 0),
            (self.dist[1], Buf::B, 0, 0),
            (self.prop[0], Buf::A, 1, 0),
            (self.prop[1], Buf::B, 1, 0),
        ]
    }
}

/// The working buffers and the loop state of one pass.
struct Loop {
    a: [Tensor; 3],
    b: [Tensor; 3],
    /// The encoded buckets as a buffer: rows, columns, and values (for GradW the gradient
    /// buffer A, which the first compute zeroes).
    w: [Tensor; 3],
    counter: Tensor,
    parity: Tensor,
    pred: Tensor,
    consts: [Tensor; 2],
    countdown: ComputeSet,
}

impl Loop {
    fn buffer(&self, b: Buf) -> &[Tensor; 3] {
        match b {
            Buf::A => &self.a,
            Buf::B => &self.b,
            Buf::W => &self.w,
        }
    }
}

/// The loop state of a pass; `gradient` for GradW (its third buffer holds the gradient, f32).
fn make_loop(
    graph: &mut Graph,
    plan: &FcPlan,
    w: &SparseWeights,
    gradient: bool,
    name: &str,
) -> Result<Loop, FcError> {
    let third = if gradient { DType::F32 } else { plan.data_type };
    let width = plan.block_values();
    let mk = |graph: &mut Graph, tag: &str| -> Result<[Tensor; 3], FcError> {
        Ok([
            buckets(graph, plan, DType::U32, 1, &format!("{name}/{tag}.rows"))?,
            buckets(graph, plan, DType::U32, 1, &format!("{name}/{tag}.cols"))?,
            buckets(graph, plan, third, width, &format!("{name}/{tag}.third"))?,
        ])
    };
    let (a, b) = (mk(graph, "A")?, mk(graph, "B")?);
    let counter = graph.add_variable(DType::U32, &[1], &format!("{name}/counter"));
    let parity = graph.add_variable(DType::U32, &[1], &format!("{name}/parity"));
    let pred = graph.add_variable(DType::U32, &[1], &format!("{name}/pred"));
    let consts = [
        graph.add_constant(&[1], &[0u32], &format!("{name}/zero"))?,
        graph.add_constant(&[1], &[1u32], &format!("{name}/one"))?,
    ];
    for t in [&counter, &parity, &pred, &consts[0], &consts[1]] {
        graph.set_tile_mapping(t, 0)?;
    }
    let countdown = graph.add_compute_set(&format!("{name}/countdown"));
    let v = graph.add_vertex(countdown, "Countdown")?;
    graph.connect(v, "counter", &counter)?;
    graph.connect(v, "parity", &parity)?;
    graph.connect(v, "pred", &pred)?;
    graph.set_tile_mapping(v, 0)?;
    // Fwd and GradA read the encoded values; GradW's third buffer is its gradient.
    let w_third = if gradient {
        a[2].clone()
    } else {
        w.vals.clone()
    };
    Ok(Loop {
        w: [w.rows.clone(), w.cols.clone(), w_third],
        a,
        b,
        counter,
        parity,
        pred,
        consts,
        countdown,
    })
}

/// The distribution and propagation programs. `first` copies the dense blocks onto the tiles.
/// The distribution processes the encoded buckets in place (the first compute zeroes the
/// outputs), then passes the buckets through the other `P_Z − 1` tiles of their partition
/// (static shifts within the partition, into B, A, B, …). The propagation, only when
/// `steps > 0`, shifts every bucket one tile around the ring per step, between A and B
/// (the first step from the encoded buckets into B when `P_Z = 1`). `parity` ends as the
/// active working buffer (0: A, 1: B).
fn passes(
    lp: &Loop,
    w: &SparseWeights,
    plan: &FcPlan,
    first: Vec<Program>,
    sets: &Sets,
) -> Result<Program, FcError> {
    let (pa, pb) = (sets.prop[0], sets.prop[1]);
    let pz = plan.pz;
    let t = plan.tiles();
    let shift = |from: &[Tensor; 3],
                 to: &[Tensor; 3],
                 next: &dyn Fn(usize) -> usize|
     -> Result<Program, FcError> {
        let mut v = Vec::new();
        for (f, d) in from.iter().zip(to) {
            v.push(Program::copy(f, &shifted(d, plan, next)?));
        }
        Ok(Program::seq(v))
    };
    let within = |s: usize| s / pz * pz + (s % pz + 1) % pz;
    let around = |s: usize| (s + 1) % t;
    let mut steps = first;
    steps.push(Program::execute(sets.first));
    let mut active = Buf::W;
    for _ in 1..pz {
        let (from, to, to_buf, cs) = match active {
            Buf::W => (&lp.w, &lp.b, Buf::B, sets.dist[1]),
            Buf::B => (&lp.b, &lp.a, Buf::A, sets.dist[0]),
            Buf::A => (&lp.a, &lp.b, Buf::B, sets.dist[1]),
        };
        steps.push(shift(from, to, &within)?);
        steps.push(Program::execute(cs));
        active = to_buf;
    }
    // GradW's gradient of the encoded buckets is buffer A's.
    let parity = usize::from(active == Buf::B);
    steps.push(Program::copy(&lp.consts[parity], &lp.parity));
    let body = Program::switch(
        &lp.parity,
        vec![
            (
                1,
                Program::seq(vec![shift(&lp.a, &lp.b, &around)?, Program::execute(pb)]),
            ),
            (
                0,
                Program::seq(vec![shift(&lp.b, &lp.a, &around)?, Program::execute(pa)]),
            ),
        ],
        Program::nop(),
    );
    let mut propagation = vec![Program::copy(&w.steps, &lp.counter)];
    if active == Buf::W {
        // The first step shifts the encoded buckets themselves into B (with its own
        // countdown, so the loop then runs the remaining `steps − 1`).
        propagation.push(Program::execute(lp.countdown));
        propagation.push(shift(&lp.w, &lp.b, &around)?);
        propagation.push(Program::execute(pb));
    }
    propagation.push(Program::repeat_while_true(
        Program::execute(lp.countdown),
        &lp.pred,
        body,
    ));
    steps.push(Program::labelled(
        "propagation",
        vec![Program::if_then(&w.steps, Program::seq(propagation))],
    ));
    Ok(Program::seq(steps))
}

/// The partition, batch and block states of a vertex of `pass` on `tile`, and its cycle
/// estimate ([`vertex_cycles`]: a worker's share, of the batch columns for Fwd and GradA, of
/// the entries for GradW).
/// `first` vertices zero `zeroed` output elements first (a worker's share of their cost is
/// added).
#[allow(clippy::too_many_arguments)]
fn set_partition(
    graph: &mut Graph,
    v: VertexRef,
    plan: &FcPlan,
    tile: usize,
    propagation: u32,
    first: u32,
    zeroed: usize,
    pass: Pass,
) -> Result<(), FcError> {
    graph.set_vertex_state(v, "propagation", propagation)?;
    graph.set_vertex_state(v, "first", first)?;
    let (x, y, z) = plan.coords(tile);
    let (xr, yr, zr) = (plan.x_range(x), plan.y_range(y), plan.z_range(z));
    let p = plan.params;
    for (f, val) in [
        ("x0", xr.start),
        ("nx", xr.len()),
        ("y0", yr.start),
        ("ny", yr.len()),
        ("z", zr.len()),
        ("block", p.block),
    ] {
        graph.set_vertex_state(v, f, val as u32)?;
    }
    let half = plan.data_type == DType::F16;
    let workers = graph.target().workers_per_tile;
    let zero = if first != 0 {
        codelets::cycles::multi_worker(zeroed as u64, workers, DType::F32, 1)
    } else {
        0
    };
    let work = Work {
        entries: plan.capacity as u64,
        rows: xr.len() as u64,
        cols: yr.len() as u64,
        z: zr.len() as u64,
        block: p.block as u64,
        half,
    };
    graph.set_cycle_estimate(v, vertex_cycles(pass, work, workers) + zero)?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn dense_vertex(
    graph: &mut Graph,
    cs: ComputeSet,
    codelet: &str,
    buf: &[Tensor; 3],
    input_field: &str,
    input: &Tensor,
    out: &Tensor,
    plan: &FcPlan,
    tile: usize,
    propagation: u32,
    first: u32,
    pass: Pass,
) -> Result<VertexRef, FcError> {
    let v = graph.add_vertex(cs, codelet)?;
    graph.connect(v, "rows", &bucket(&buf[0], plan, tile)?)?;
    graph.connect(v, "cols", &bucket(&buf[1], plan, tile)?)?;
    graph.connect(v, "vals", &bucket(&buf[2], plan, tile)?)?;
    graph.connect(v, input_field, input)?;
    graph.connect(v, "out", out)?;
    set_partition(
        graph,
        v,
        plan,
        tile,
        propagation,
        first,
        out.num_elements(),
        pass,
    )?;
    graph.set_tile_mapping(v, tile as u32)?;
    Ok(v)
}

/// Sums `partials[j]` (each `[rows, batch]`) into a new `[rows, batch]` output, spread over
/// the tiles that hold the partials: output block `(i, c)` (rows `rows[i]`, batch columns
/// `cols[c]`) is cut into `partials.len()` chunks of rows, chunk `j` summed on `tiles(i, j, c)`
/// (the tile of partial `j`'s block), so no tile receives more than about one block.
fn reduce(
    graph: &mut Graph,
    partials: &[Tensor],
    rows: &[std::ops::Range<usize>],
    cols: &[std::ops::Range<usize>],
    tiles: impl Fn(usize, usize, usize) -> usize,
    name: &str,
) -> Result<(Tensor, Program), FcError> {
    let cs = graph.add_compute_set(&format!("{name}/reduce"));
    let parts = partials.len();
    let mut row_blocks = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let chunk = r.len().div_ceil(parts).max(1);
        for j in 0..parts {
            let rr = (r.start + j * chunk).min(r.end)..(r.start + (j + 1) * chunk).min(r.end);
            if rr.is_empty() {
                continue;
            }
            let mut col_blocks = Vec::new();
            for (c, cr) in cols.iter().enumerate() {
                let tile = tiles(i, j, c);
                let out = graph.add_variable(
                    DType::F32,
                    &[rr.len(), cr.len()],
                    &format!("{name}/out[{i}.{j},{c}]"),
                );
                graph.set_tile_mapping(&out, tile as u32)?;
                let blocks = partials
                    .iter()
                    .map(|p| {
                        Ok(p.slice_dim(0, rr.clone())?
                            .slice_dim(1, cr.clone())?
                            .flatten())
                    })
                    .collect::<Result<Vec<_>, GraphError>>()?;
                let v = graph.add_vertex(cs, "SumBlocks<float>")?;
                graph.connect(v, "partials", &Tensor::concat(&blocks)?)?;
                graph.connect(v, "out", &out.flatten())?;
                graph.set_tile_mapping(v, tile as u32)?;
                col_blocks.push(out);
            }
            row_blocks.push(Tensor::concat_dim(&col_blocks, 1)?);
        }
    }
    Ok((Tensor::concat_dim(&row_blocks, 0)?, Program::execute(cs)))
}

/// Every tile's block of a dense `[rows, batch]` operand (rows `rows(tile)`, its batch columns),
/// copied once onto the tile (one copy program for all tiles), so that the distribution and
/// every propagation step read it in place instead of exchanging it again.
fn local_blocks(
    graph: &mut Graph,
    src: &Tensor,
    plan: &FcPlan,
    rows: impl Fn(usize) -> std::ops::Range<usize>,
    name: &str,
) -> Result<(Vec<Tensor>, Program), FcError> {
    let mut locals = Vec::with_capacity(plan.tiles());
    let mut from = Vec::with_capacity(plan.tiles());
    for tile in 0..plan.tiles() {
        let (r, zr) = (rows(tile), plan.z_range(plan.coords(tile).2));
        let v = graph.add_variable(
            src.dtype(),
            &[r.len() * zr.len()],
            &format!("{name}[{tile}]"),
        );
        graph.set_tile_mapping(&v, tile as u32)?;
        from.push(src.slice_dim(0, r)?.slice_dim(1, zr)?.flatten());
        locals.push(v);
    }
    let prog = Program::copy(&Tensor::concat(&from)?, &Tensor::concat(&locals)?);
    Ok((locals, prog))
}

fn check_dense(t: &Tensor, what: &str, want: [usize; 2], plan: &FcPlan) -> Result<(), FcError> {
    if t.shape() != want || t.dtype() != plan.data_type {
        return Err(FcError::Shape(format!(
            "{what} is {:?} {:?}; the plan needs {:?} {want:?}",
            t.dtype(),
            t.shape(),
            plan.data_type
        )));
    }
    Ok(())
}

/// The codelet `base<float>` or `base<half>` for the plan's data type.
fn codelet(base: &str, plan: &FcPlan) -> String {
    format!("{base}<{}>", plan.data_type.poplar_name())
}

/// The Fwd pass `Y = W · X`: `x` is `[Y, Z]`; returns `Y` (`[X, Z]`; with `P_Y > 1` each block
/// spread over the tiles of its row of partitions) and the program.
pub fn fwd(
    graph: &mut Graph,
    w: &SparseWeights,
    x: &Tensor,
    plan: &FcPlan,
    name: &str,
) -> Result<(Tensor, Program), FcError> {
    dense_output_pass(graph, w, x, plan, name, false)
}

/// The GradA pass `X' = Wᵀ · Y'`: `yg` is `[X, Z]`; returns `X'` (`[Y, Z]`; with `P_X > 1`
/// each block spread over the tiles of its column of partitions) and the program.
pub fn grad_a(
    graph: &mut Graph,
    w: &SparseWeights,
    yg: &Tensor,
    plan: &FcPlan,
    name: &str,
) -> Result<(Tensor, Program), FcError> {
    dense_output_pass(graph, w, yg, plan, name, true)
}

/// Fwd (`grad_a` false) or GradA (true): the pass whose output is dense. Fwd sums over the
/// `P_Y` partitions of a row of `W`, GradA over the `P_X` of a column; the tile `(x, y, z)`
/// reads its input block (rows `y` of `X`, or `x` of `Y'`) and adds into partial `y` (or `x`)
/// at output rows `x` (or `y`).
fn dense_output_pass(
    graph: &mut Graph,
    w: &SparseWeights,
    input: &Tensor,
    plan: &FcPlan,
    name: &str,
    grad_a: bool,
) -> Result<(Tensor, Program), FcError> {
    let p = plan.params;
    let (what, field, codelet_base) = if grad_a {
        ("Y'", "yg", "SparseGradA")
    } else {
        ("X", "x", "SparseFwd")
    };
    let in_rows = if grad_a { p.output_size } else { p.input_size };
    check_dense(input, what, [in_rows, p.batch], plan)?;
    let lp = make_loop(graph, plan, w, false, name)?;
    // For a tile (x, y, z): which index its input rows, output rows and partial follow.
    let in_index = |x: usize, y: usize| if grad_a { x } else { y };
    let out_index = |x: usize, y: usize| if grad_a { y } else { x };
    let (out_ranges, parts) = if grad_a {
        (y_ranges(plan), plan.px)
    } else {
        (x_ranges(plan), plan.py)
    };
    let zr = z_ranges(plan);
    // The tile of (output rows o, partial j, batch part z).
    let tile_of = |o: usize, j: usize, z: usize| {
        if grad_a {
            plan.tile(j, o, z)
        } else {
            plan.tile(o, j, z)
        }
    };
    let mut partials = Vec::new();
    for j in 0..parts {
        partials.push(grid(
            graph,
            DType::F32,
            &out_ranges,
            &zr,
            |o, z| tile_of(o, j, z),
            &format!("{name}/partial{j}"),
        )?);
    }
    let sets = Sets::new(graph, name);
    let in_range = |t: usize| {
        let (x, y, _) = plan.coords(t);
        if grad_a {
            plan.x_range(x)
        } else {
            plan.y_range(y)
        }
    };
    let (locals, copy) = local_blocks(graph, input, plan, in_range, &format!("{name}/{field}"))?;
    let name_of = codelet(codelet_base, plan);
    for (tile, local) in locals.into_iter().enumerate() {
        let (xi, yi, zi) = plan.coords(tile);
        let o = out_index(xi, yi);
        let out = partials[in_index(xi, yi)]
            .slice_dim(0, out_ranges[o].clone())?
            .slice_dim(1, plan.z_range(zi))?
            .flatten();
        for (cs, buf, prop, first) in sets.all() {
            let buf = lp.buffer(buf);
            let pass = if grad_a { Pass::GradA } else { Pass::Fwd };
            dense_vertex(
                graph, cs, &name_of, buf, field, &local, &out, plan, tile, prop, first, pass,
            )?;
        }
    }
    let mut prog = vec![passes(&lp, w, plan, vec![copy], &sets)?];
    let result = if parts > 1 {
        let (out, red) = reduce(graph, &partials, &out_ranges, &zr, tile_of, name)?;
        prog.push(red);
        out
    } else {
        partials.pop().expect("one partial")
    };
    Ok((result, Program::labelled(name, prog)))
}

/// The GradW pass `W' = Y' · Xᵀ` on the pattern: returns the gradient buckets
/// (`[tiles · capacity · block²]`, moved by the distribution and `steps` propagation steps;
/// [`crate::decode_grad`] gives the value of each non-zero) and the program.
pub fn grad_w(
    graph: &mut Graph,
    w: &SparseWeights,
    x: &Tensor,
    yg: &Tensor,
    plan: &FcPlan,
    name: &str,
) -> Result<(Tensor, Program), FcError> {
    let p = plan.params;
    check_dense(x, "X", [p.input_size, p.batch], plan)?;
    check_dense(yg, "Y'", [p.output_size, p.batch], plan)?;
    let lp = make_loop(graph, plan, w, true, name)?;
    let sets = Sets::new(graph, name);
    let (xl, xcopy) = local_blocks(
        graph,
        x,
        plan,
        |t| plan.y_range(plan.coords(t).1),
        &format!("{name}/x"),
    )?;
    let (ygl, ycopy) = local_blocks(
        graph,
        yg,
        plan,
        |t| plan.x_range(plan.coords(t).0),
        &format!("{name}/yg"),
    )?;
    for (tile, (xin, ygin)) in xl.into_iter().zip(ygl).enumerate() {
        for (cs, buf, prop, first) in sets.all() {
            let buf = lp.buffer(buf);
            let v = graph.add_vertex(cs, &codelet("SparseGradW", plan))?;
            graph.connect(v, "rows", &bucket(&buf[0], plan, tile)?)?;
            graph.connect(v, "cols", &bucket(&buf[1], plan, tile)?)?;
            graph.connect(v, "grad", &bucket(&buf[2], plan, tile)?)?;
            graph.connect(v, "x", &xin)?;
            graph.connect(v, "yg", &ygin)?;
            set_partition(
                graph,
                v,
                plan,
                tile,
                prop,
                first,
                plan.capacity * plan.block_values(),
                Pass::GradW,
            )?;
            graph.set_tile_mapping(v, tile as u32)?;
        }
    }
    let first = vec![xcopy, ycopy];
    let out = buckets(
        graph,
        plan,
        DType::F32,
        plan.block_values(),
        &format!("{name}/grad"),
    )?;
    let fin = Program::switch(
        &lp.parity,
        vec![
            (0, Program::copy(&lp.a[2], &out)),
            (1, Program::copy(&lp.b[2], &out)),
        ],
        Program::nop(),
    );
    let prog = vec![passes(&lp, w, plan, first, &sets)?, fin];
    Ok((out, Program::labelled(name, prog)))
}
