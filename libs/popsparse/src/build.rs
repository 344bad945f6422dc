//! The layer in a graph: the sparse weights (buckets the host writes), the dense operands laid
//! out for the plan, and the Fwd, GradA and GradW programs.
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

use poplar::{ComputeSet, DType, Graph, GraphError, Program, Tensor, VertexRef};

use crate::codelets::bucket_cycles;
use crate::plan::FcPlan;

/// Errors of building the layer.
#[derive(Debug, Clone, PartialEq)]
pub enum FcError {
    Graph(GraphError),
    Op(String),
    Shape(String),
}

impl std::fmt::Display for FcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FcError::Graph(e) => write!(f, "{e}"),
            FcError::Op(e) => write!(f, "{e}"),
            FcError::Shape(s) => write!(f, "sparse fc: {s}"),
        }
    }
}

impl std::error::Error for FcError {}

impl From<GraphError> for FcError {
    fn from(e: GraphError) -> Self {
        FcError::Graph(e)
    }
}

impl From<codelets::ops::OpError> for FcError {
    fn from(e: codelets::ops::OpError) -> Self {
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

/// The bucket tensor shifted one tile forward: bucket `t` of the result is bucket `t − 1` of
/// `t` (a copy into it moves every bucket to the next tile).
fn rotated(t: &Tensor, plan: &FcPlan) -> Result<Tensor, GraphError> {
    let (n, per) = (t.num_elements(), per_tile(t, plan));
    if plan.tiles() == 1 {
        return Ok(t.clone());
    }
    Tensor::concat(&[t.slice(per..n)?, t.slice(0..per)?])
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
            DType::F32,
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

/// A dense `[rows, batch]` f32 tensor in row blocks, block `i` (rows `ranges[i]`) on `tiles[i]`.
fn row_blocks(
    graph: &mut Graph,
    ranges: &[std::ops::Range<usize>],
    tiles: &[usize],
    batch: usize,
    name: &str,
) -> Result<Tensor, FcError> {
    let mut parts = Vec::new();
    for (i, (r, &tile)) in ranges.iter().zip(tiles).enumerate() {
        let v = graph.add_variable(DType::F32, &[r.len(), batch], &format!("{name}[{i}]"));
        graph.set_tile_mapping(&v, tile as u32)?;
        parts.push(v);
    }
    Ok(Tensor::concat_dim(&parts, 0)?)
}

/// The dense input `X[Y, Z]` laid out for the plan: block `y` on tile `(0, y)`.
pub fn create_input(graph: &mut Graph, plan: &FcPlan, name: &str) -> Result<Tensor, FcError> {
    let ranges: Vec<_> = (0..plan.py).map(|y| plan.y_range(y)).collect();
    let tiles: Vec<_> = (0..plan.py).map(|y| plan.tile(0, y)).collect();
    row_blocks(graph, &ranges, &tiles, plan.params.batch, name)
}

/// The output gradient `Y'[X, Z]` (or any `[X, Z]` dense operand) laid out for the plan:
/// block `x` on tile `(x, 0)`.
pub fn create_output(graph: &mut Graph, plan: &FcPlan, name: &str) -> Result<Tensor, FcError> {
    let ranges: Vec<_> = (0..plan.px).map(|x| plan.x_range(x)).collect();
    let tiles: Vec<_> = (0..plan.px).map(|x| plan.tile(x, 0)).collect();
    row_blocks(graph, &ranges, &tiles, plan.params.batch, name)
}

/// The working buffers and the loop state of one pass.
struct Loop {
    a: [Tensor; 3],
    b: [Tensor; 3],
    counter: Tensor,
    parity: Tensor,
    pred: Tensor,
    zero: Tensor,
    countdown: ComputeSet,
}

fn make_loop(
    graph: &mut Graph,
    plan: &FcPlan,
    w: &SparseWeights,
    third: DType,
    name: &str,
) -> Result<Loop, FcError> {
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
    let zero = graph.add_constant(&[1], &[0u32], &format!("{name}/zero"))?;
    for t in [&counter, &parity, &pred, &zero] {
        graph.set_tile_mapping(t, 0)?;
    }
    let countdown = graph.add_compute_set(&format!("{name}/countdown"));
    let v = graph.add_vertex(countdown, "Countdown")?;
    graph.connect(v, "counter", &counter)?;
    graph.connect(v, "parity", &parity)?;
    graph.connect(v, "pred", &pred)?;
    graph.set_tile_mapping(v, 0)?;
    let _ = w;
    Ok(Loop {
        a,
        b,
        counter,
        parity,
        pred,
        zero,
        countdown,
    })
}

/// The distribution and propagation programs around two compute sets (one per buffer).
fn passes(
    lp: &Loop,
    w: &SparseWeights,
    plan: &FcPlan,
    first: Vec<Program>,
    cs_a: ComputeSet,
    cs_b: ComputeSet,
) -> Result<Program, FcError> {
    let shift = |from: &[Tensor; 3], to: &[Tensor; 3]| -> Result<Program, FcError> {
        let mut v = Vec::new();
        for (f, t) in from.iter().zip(to) {
            v.push(Program::copy(f, &rotated(t, plan)?));
        }
        Ok(Program::seq(v))
    };
    let body = Program::switch(
        &lp.parity,
        vec![
            (
                1,
                Program::seq(vec![shift(&lp.a, &lp.b)?, Program::execute(cs_b)]),
            ),
            (
                0,
                Program::seq(vec![shift(&lp.b, &lp.a)?, Program::execute(cs_a)]),
            ),
        ],
        Program::nop(),
    );
    let propagation = Program::seq(vec![
        Program::copy(&w.steps, &lp.counter),
        Program::copy(&lp.zero, &lp.parity),
        Program::repeat_while_true(Program::execute(lp.countdown), &lp.pred, body),
    ]);
    let mut steps = first;
    steps.push(Program::execute(cs_a));
    steps.push(Program::labelled(
        "propagation",
        vec![Program::if_then(&w.steps, propagation)],
    ));
    Ok(Program::seq(steps))
}

/// The partition, batch and block states of a vertex on `tile`, and its cycle estimate.
fn set_partition(
    graph: &mut Graph,
    v: VertexRef,
    plan: &FcPlan,
    tile: usize,
) -> Result<(), FcError> {
    let (x, y) = (tile / plan.py, tile % plan.py);
    let (xr, yr) = (plan.x_range(x), plan.y_range(y));
    let p = plan.params;
    for (f, val) in [
        ("x0", xr.start),
        ("nx", xr.len()),
        ("y0", yr.start),
        ("ny", yr.len()),
        ("z", p.batch),
        ("block", p.block),
    ] {
        graph.set_vertex_state(v, f, val as u32)?;
    }
    graph.set_cycle_estimate(
        v,
        bucket_cycles(plan.capacity as u64, p.batch as u64, p.block as u64),
    )?;
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
) -> Result<VertexRef, FcError> {
    let v = graph.add_vertex(cs, codelet)?;
    graph.connect(v, "rows", &bucket(&buf[0], plan, tile)?)?;
    graph.connect(v, "cols", &bucket(&buf[1], plan, tile)?)?;
    graph.connect(v, "vals", &bucket(&buf[2], plan, tile)?)?;
    graph.connect(v, input_field, input)?;
    graph.connect(v, "out", out)?;
    set_partition(graph, v, plan, tile)?;
    graph.set_tile_mapping(v, tile as u32)?;
    Ok(v)
}

/// Sums `partials[j]` (each `[rows, batch]`) into a new `[rows, batch]` output, spread over
/// the tiles that hold the partials: output block `i` (rows `ranges[i]`) is cut into
/// `partials.len()` chunks of rows, chunk `j` summed on `tiles[i][j]` (the tile of partial
/// `j`'s block), so no tile receives more than about one block of partials.
fn reduce(
    graph: &mut Graph,
    partials: &[Tensor],
    ranges: &[std::ops::Range<usize>],
    tiles: &[Vec<usize>],
    batch: usize,
    name: &str,
) -> Result<(Tensor, Program), FcError> {
    let cs = graph.add_compute_set(&format!("{name}/reduce"));
    let parts = partials.len();
    let mut out_blocks = Vec::new();
    for (i, (r, ts)) in ranges.iter().zip(tiles).enumerate() {
        let chunk = r.len().div_ceil(parts).max(1);
        for (j, &tile) in ts.iter().enumerate() {
            let rr = (r.start + j * chunk).min(r.end)..(r.start + (j + 1) * chunk).min(r.end);
            if rr.is_empty() {
                continue;
            }
            let out = graph.add_variable(
                DType::F32,
                &[rr.len(), batch],
                &format!("{name}/out[{i}.{j}]"),
            );
            graph.set_tile_mapping(&out, tile as u32)?;
            let blocks = partials
                .iter()
                .map(|p| Ok(p.slice_dim(0, rr.clone())?.flatten()))
                .collect::<Result<Vec<_>, GraphError>>()?;
            let v = graph.add_vertex(cs, "SumBlocks<float>")?;
            graph.connect(v, "partials", &Tensor::concat(&blocks)?)?;
            graph.connect(v, "out", &out.flatten())?;
            graph.set_tile_mapping(v, tile as u32)?;
            out_blocks.push(out);
        }
    }
    Ok((Tensor::concat_dim(&out_blocks, 0)?, Program::execute(cs)))
}

/// Every tile's rows of a dense `[rows, batch]` operand, copied once onto the tile (one copy
/// program for all tiles), so that the distribution and every propagation step read them in
/// place instead of exchanging them again.
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
        let r = rows(tile);
        let v = graph.add_variable(
            DType::F32,
            &[r.len() * plan.params.batch],
            &format!("{name}[{tile}]"),
        );
        graph.set_tile_mapping(&v, tile as u32)?;
        from.push(src.slice_dim(0, r)?.flatten());
        locals.push(v);
    }
    let prog = Program::copy(&Tensor::concat(&from)?, &Tensor::concat(&locals)?);
    Ok((locals, prog))
}

fn check_dense(t: &Tensor, what: &str, want: [usize; 2]) -> Result<(), FcError> {
    if t.shape() != want || t.dtype() != DType::F32 {
        return Err(FcError::Shape(format!(
            "{what} is {:?} {:?}; the plan needs f32 {want:?}",
            t.dtype(),
            t.shape()
        )));
    }
    Ok(())
}

/// The Fwd pass `Y = W · X`: `x` is `[Y, Z]`; returns `Y` (`[X, Z]`; with `P_Y > 1` each row
/// block spread over the tiles of its row of partitions) and the program.
pub fn fwd(
    graph: &mut Graph,
    w: &SparseWeights,
    x: &Tensor,
    plan: &FcPlan,
    name: &str,
) -> Result<(Tensor, Program), FcError> {
    let p = plan.params;
    check_dense(x, "X", [p.input_size, p.batch])?;
    let lp = make_loop(graph, plan, w, DType::F32, name)?;
    let xr: Vec<_> = (0..plan.px).map(|i| plan.x_range(i)).collect();
    // Partial j holds the sums over the columns of partition y = j; block x on tile (x, j).
    let mut partials = Vec::new();
    for y in 0..plan.py {
        let tiles: Vec<_> = (0..plan.px).map(|i| plan.tile(i, y)).collect();
        partials.push(row_blocks(
            graph,
            &xr,
            &tiles,
            p.batch,
            &format!("{name}/partial{y}"),
        )?);
    }
    let zero = graph.add_compute_set(&format!("{name}/zero"));
    for part in &partials {
        codelets::ops::fill(graph, zero, part, 0.0f32)?;
    }
    let (cs_a, cs_b) = (
        graph.add_compute_set(&format!("{name}/A")),
        graph.add_compute_set(&format!("{name}/B")),
    );
    let (xl, xcopy) = local_blocks(
        graph,
        x,
        plan,
        |t| plan.y_range(t % plan.py),
        &format!("{name}/x"),
    )?;
    for (tile, input) in xl.into_iter().enumerate() {
        let (xi, yi) = (tile / plan.py, tile % plan.py);
        let out = partials[yi].slice_dim(0, plan.x_range(xi))?.flatten();
        dense_vertex(
            graph,
            cs_a,
            "SparseFwd<float>",
            &lp.a,
            "x",
            &input,
            &out,
            plan,
            tile,
        )?;
        dense_vertex(
            graph,
            cs_b,
            "SparseFwd<float>",
            &lp.b,
            "x",
            &input,
            &out,
            plan,
            tile,
        )?;
    }
    let mut first = vec![Program::execute(zero), xcopy];
    for (src, dst) in [
        (&w.rows, &lp.a[0]),
        (&w.cols, &lp.a[1]),
        (&w.vals, &lp.a[2]),
    ] {
        first.push(Program::copy(src, dst));
    }
    let mut prog = vec![passes(&lp, w, plan, first, cs_a, cs_b)?];
    let y = if plan.py > 1 {
        let tiles: Vec<Vec<usize>> = (0..plan.px)
            .map(|i| (0..plan.py).map(|j| plan.tile(i, j)).collect())
            .collect();
        let (out, red) = reduce(graph, &partials, &xr, &tiles, p.batch, name)?;
        prog.push(red);
        out
    } else {
        partials.pop().expect("one partial")
    };
    Ok((y, Program::labelled(name, prog)))
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
    let p = plan.params;
    check_dense(yg, "Y'", [p.output_size, p.batch])?;
    let lp = make_loop(graph, plan, w, DType::F32, name)?;
    let yr: Vec<_> = (0..plan.py).map(|j| plan.y_range(j)).collect();
    let mut partials = Vec::new();
    for x in 0..plan.px {
        let tiles: Vec<_> = (0..plan.py).map(|j| plan.tile(x, j)).collect();
        partials.push(row_blocks(
            graph,
            &yr,
            &tiles,
            p.batch,
            &format!("{name}/partial{x}"),
        )?);
    }
    let zero = graph.add_compute_set(&format!("{name}/zero"));
    for part in &partials {
        codelets::ops::fill(graph, zero, part, 0.0f32)?;
    }
    let (cs_a, cs_b) = (
        graph.add_compute_set(&format!("{name}/A")),
        graph.add_compute_set(&format!("{name}/B")),
    );
    let (ygl, xcopy) = local_blocks(
        graph,
        yg,
        plan,
        |t| plan.x_range(t / plan.py),
        &format!("{name}/yg"),
    )?;
    for (tile, input) in ygl.into_iter().enumerate() {
        let (xi, yi) = (tile / plan.py, tile % plan.py);
        let out = partials[xi].slice_dim(0, plan.y_range(yi))?.flatten();
        dense_vertex(
            graph,
            cs_a,
            "SparseGradA<float>",
            &lp.a,
            "yg",
            &input,
            &out,
            plan,
            tile,
        )?;
        dense_vertex(
            graph,
            cs_b,
            "SparseGradA<float>",
            &lp.b,
            "yg",
            &input,
            &out,
            plan,
            tile,
        )?;
    }
    let mut first = vec![Program::execute(zero), xcopy];
    for (src, dst) in [
        (&w.rows, &lp.a[0]),
        (&w.cols, &lp.a[1]),
        (&w.vals, &lp.a[2]),
    ] {
        first.push(Program::copy(src, dst));
    }
    let mut prog = vec![passes(&lp, w, plan, first, cs_a, cs_b)?];
    let xg = if plan.px > 1 {
        let tiles: Vec<Vec<usize>> = (0..plan.py)
            .map(|j| (0..plan.px).map(|i| plan.tile(i, j)).collect())
            .collect();
        let (out, red) = reduce(graph, &partials, &yr, &tiles, p.batch, name)?;
        prog.push(red);
        out
    } else {
        partials.pop().expect("one partial")
    };
    Ok((xg, Program::labelled(name, prog)))
}

/// The GradW pass `W' = Y' · Xᵀ` on the pattern: returns the gradient buckets
/// (`[tiles · capacity]`, shifted `steps` tiles forward; [`crate::decode_grad`] gives the value
/// of each non-zero) and the program.
pub fn grad_w(
    graph: &mut Graph,
    w: &SparseWeights,
    x: &Tensor,
    yg: &Tensor,
    plan: &FcPlan,
    name: &str,
) -> Result<(Tensor, Program), FcError> {
    let p = plan.params;
    check_dense(x, "X", [p.input_size, p.batch])?;
    check_dense(yg, "Y'", [p.output_size, p.batch])?;
    let lp = make_loop(graph, plan, w, DType::F32, name)?;
    let (cs_a, cs_b) = (
        graph.add_compute_set(&format!("{name}/A")),
        graph.add_compute_set(&format!("{name}/B")),
    );
    let (xl, xcopy) = local_blocks(
        graph,
        x,
        plan,
        |t| plan.y_range(t % plan.py),
        &format!("{name}/x"),
    )?;
    let (ygl, ycopy) = local_blocks(
        graph,
        yg,
        plan,
        |t| plan.x_range(t / plan.py),
        &format!("{name}/yg"),
    )?;
    for tile in 0..plan.tiles() {
        let (xin, ygin) = (xl[tile].clone(), ygl[tile].clone());
        for (cs, buf) in [(cs_a, &lp.a), (cs_b, &lp.b)] {
            let v = graph.add_vertex(cs, "SparseGradW<float>")?;
            graph.connect(v, "rows", &bucket(&buf[0], plan, tile)?)?;
            graph.connect(v, "cols", &bucket(&buf[1], plan, tile)?)?;
            graph.connect(v, "grad", &bucket(&buf[2], plan, tile)?)?;
            graph.connect(v, "x", &xin)?;
            graph.connect(v, "yg", &ygin)?;
            set_partition(graph, v, plan, tile)?;
            graph.set_tile_mapping(v, tile as u32)?;
        }
    }
    let zero = graph.add_compute_set(&format!("{name}/zero"));
    codelets::ops::fill(graph, zero, &lp.a[2], 0.0f32)?;
    let first = vec![
        Program::execute(zero),
        xcopy,
        ycopy,
        Program::copy(&w.rows, &lp.a[0]),
        Program::copy(&w.cols, &lp.a[1]),
    ];
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
    // Without propagation the parity is never set: start it at 0 here.
    let prog = vec![
        Program::copy(&lp.zero, &lp.parity),
        passes(&lp, w, plan, first, cs_a, cs_b)?,
        fin,
    ];
    Ok((out, Program::labelled(name, prog)))
}
