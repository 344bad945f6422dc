//! The vertices of each stage. Every codelet is multi-worker: on the chip, worker `w` would
//! compute the rectangle [`Stage::worker_rect`] gives it, so the six worker contexts of a tile
//! share one block, and the cycle estimate (set per vertex by [`crate::device`]) is the
//! slowest worker's, in worker cycles; the cycle model charges the tile six times that (the
//! contexts issue in turn) plus the supervisor's cycles ([`Stage::tile_cycles`]). On the host, the call of worker 0 sweeps the whole block and the others
//! return at once: every point is computed by the same operations whatever the split (the
//! test `worker_split_gives_the_same_bits` checks it), and one sweep over rows of the whole
//! block is 2.5× faster on the host than six over short rows, with the Laplacian of the split's
//! edges computed twice.
//!
//! Fields are views of one plane's rows; `rows × cols` is the block's output window. `pad` is 1
//! when blocks span the whole width of the grid (the views then are whole rows, contiguous in
//! tile memory, and the window starts after the two halo columns) and 0 for two-dimensional
//! blocks (the views are exactly the rectangles the stage needs):
//!
//! | view | rows | row length (stride) | window's (0, 0) at |
//! |---|---|---|---|
//! | `inp` of `Fused`/`Lap` (halo 2) | rows + 4 | cols + 4 | (2, 2) |
//! | `inp` of the flux stages (halo 1) | rows + 2 | cols + 2 + 2·pad | (1, 1 + pad) |
//! | `coeff`, `out` | rows | cols + 4·pad | (0, 2·pad) |
//! | `lap` (Laplacian block) | rows + 2 | cols + 2 | (1, 1) |
//! | `flx` (flux-x block) | rows | cols + 1 | (0, 1) |

use poplar::codelet::*;

use crate::stencil::{
    flux_out, flx_block, fly_out, fused, lap_block, Plane, PlaneMut, Rect, Stage,
};

/// Links this module's registrations into a binary (see `codelets::link`).
pub fn link() {
    codelets::link();
}

/// The rectangle of a `rows × cols` block that host call `w` computes: all of it for worker 0,
/// nothing for the others (see the module's documentation).
fn host_rect(rows: usize, cols: usize, w: Worker) -> Rect {
    if w.id == 0 {
        Rect::whole(rows, cols)
    } else {
        Rect::whole(0, 0)
    }
}

/// The geometry of a vertex's views, from its state.
#[derive(Clone, Copy)]
struct Geometry {
    rows: usize,
    cols: usize,
    pad: usize,
}

impl Geometry {
    fn new(rows: u32, cols: u32, pad: u32) -> Result<Geometry, VertexError> {
        if pad > 1 {
            return Err(VertexError::new(format!("pad is {pad}, must be 0 or 1")));
        }
        Ok(Geometry {
            rows: rows as usize,
            cols: cols as usize,
            pad: pad as usize,
        })
    }

    fn in2<'a>(&self, data: &'a [f32]) -> Result<Plane<'a>, VertexError> {
        let stride = self.cols + 4;
        view(data, "inp", self.rows + 4, stride, 2 * stride + 2)
    }

    fn in1<'a>(&self, data: &'a [f32]) -> Result<Plane<'a>, VertexError> {
        let stride = self.cols + 2 + 2 * self.pad;
        view(data, "inp", self.rows + 2, stride, stride + 1 + self.pad)
    }

    fn own<'a>(&self, data: &'a [f32], name: &str) -> Result<Plane<'a>, VertexError> {
        let stride = self.cols + 4 * self.pad;
        view(data, name, self.rows, stride, 2 * self.pad)
    }

    fn own_mut<'a>(&self, data: &'a mut [f32], name: &str) -> Result<PlaneMut<'a>, VertexError> {
        let stride = self.cols + 4 * self.pad;
        check_len(data.len(), name, self.rows, stride)?;
        Ok(PlaneMut {
            data,
            stride,
            origin: 2 * self.pad,
        })
    }

    fn lap<'a>(&self, data: &'a [f32]) -> Result<Plane<'a>, VertexError> {
        let stride = self.cols + 2;
        view(data, "lap", self.rows + 2, stride, stride + 1)
    }

    fn flx<'a>(&self, data: &'a [f32]) -> Result<Plane<'a>, VertexError> {
        view(data, "flx", self.rows, self.cols + 1, 1)
    }
}

fn check_len(len: usize, name: &str, rows: usize, stride: usize) -> Result<(), VertexError> {
    if len != rows * stride {
        return Err(VertexError::new(format!(
            "field '{name}' has {len} values, the block needs {rows} rows of {stride}"
        )));
    }
    Ok(())
}

fn view<'a>(
    data: &'a [f32],
    name: &str,
    rows: usize,
    stride: usize,
    origin: usize,
) -> Result<Plane<'a>, VertexError> {
    check_len(data.len(), name, rows, stride)?;
    Ok(Plane {
        data,
        stride,
        origin,
    })
}

poplar::codelet! {
    /// `hdiff::Fused`: the whole stencil on a block (single-stage mapping).
    pub struct Fused as "hdiff::Fused", multi_worker {
        inp: Input<Vector<f32>>,
        coeff: Input<Vector<f32>>,
        out: InOut<Vector<f32>>,
        rows: State<u32>,
        cols: State<u32>,
        pad: State<u32>,
    }
}

impl Vertex for Fused<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let g = Geometry::new(self.rows, self.cols, self.pad)?;
        let (inp, coeff) = (g.in2(self.inp)?, g.own(self.coeff, "coeff")?);
        let mut out = g.own_mut(self.out, "out")?;
        let rect = host_rect(g.rows, g.cols, w);
        fused(inp, coeff, &mut out, rect);
        Ok(())
    }
}

poplar::codelet! {
    /// `hdiff::Lap`: the Laplacian block (the window grown by one point on each side).
    pub struct Lap as "hdiff::Lap", multi_worker {
        inp: Input<Vector<f32>>,
        lap: Output<Vector<f32>>,
        rows: State<u32>,
        cols: State<u32>,
    }
}

impl Vertex for Lap<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let g = Geometry::new(self.rows, self.cols, 0)?;
        let inp = g.in2(self.inp)?;
        let stride = g.cols + 2;
        check_len(self.lap.len(), "lap", g.rows + 2, stride)?;
        let mut lap = PlaneMut {
            data: self.lap,
            stride,
            origin: 0,
        };
        let rect = host_rect(g.rows + 2, g.cols + 2, w);
        lap_block(inp, &mut lap, rect);
        Ok(())
    }
}

poplar::codelet! {
    /// `hdiff::FluxOut`: both fluxes and the update from a forwarded Laplacian block
    /// (dual-stage mapping).
    pub struct FluxOut as "hdiff::FluxOut", multi_worker {
        inp: Input<Vector<f32>>,
        lap: Input<Vector<f32>>,
        coeff: Input<Vector<f32>>,
        out: InOut<Vector<f32>>,
        rows: State<u32>,
        cols: State<u32>,
        pad: State<u32>,
    }
}

impl Vertex for FluxOut<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let g = Geometry::new(self.rows, self.cols, self.pad)?;
        let (inp, lap) = (g.in1(self.inp)?, g.lap(self.lap)?);
        let coeff = g.own(self.coeff, "coeff")?;
        let mut out = g.own_mut(self.out, "out")?;
        let rect = host_rect(g.rows, g.cols, w);
        flux_out(inp, lap, coeff, &mut out, rect);
        Ok(())
    }
}

poplar::codelet! {
    /// `hdiff::Flx`: the limited flux in `i` from a forwarded Laplacian block (tri-stage).
    pub struct Flx as "hdiff::Flx", multi_worker {
        inp: Input<Vector<f32>>,
        lap: Input<Vector<f32>>,
        flx: Output<Vector<f32>>,
        rows: State<u32>,
        cols: State<u32>,
        pad: State<u32>,
    }
}

impl Vertex for Flx<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let g = Geometry::new(self.rows, self.cols, self.pad)?;
        let (inp, lap) = (g.in1(self.inp)?, g.lap(self.lap)?);
        check_len(self.flx.len(), "flx", g.rows, g.cols + 1)?;
        let mut flx = PlaneMut {
            data: self.flx,
            stride: g.cols + 1,
            origin: 0,
        };
        let rect = host_rect(g.rows, g.cols + 1, w);
        flx_block(inp, lap, &mut flx, rect);
        Ok(())
    }
}

poplar::codelet! {
    /// `hdiff::FlyOut`: the limited flux in `j` and the update, from forwarded Laplacian and
    /// flux-x blocks (tri-stage).
    pub struct FlyOut as "hdiff::FlyOut", multi_worker {
        inp: Input<Vector<f32>>,
        lap: Input<Vector<f32>>,
        flx: Input<Vector<f32>>,
        coeff: Input<Vector<f32>>,
        out: InOut<Vector<f32>>,
        rows: State<u32>,
        cols: State<u32>,
        pad: State<u32>,
    }
}

impl Vertex for FlyOut<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let g = Geometry::new(self.rows, self.cols, self.pad)?;
        let (inp, lap, flx) = (g.in1(self.inp)?, g.lap(self.lap)?, g.flx(self.flx)?);
        let coeff = g.own(self.coeff, "coeff")?;
        let mut out = g.own_mut(self.out, "out")?;
        let rect = host_rect(g.rows, g.cols, w);
        fly_out(inp, lap, flx, coeff, &mut out, rect);
        Ok(())
    }
}

/// The codelet of a stage.
pub fn codelet_of(stage: Stage) -> &'static str {
    match stage {
        Stage::Fused => Fused::NAME,
        Stage::Lap => Lap::NAME,
        Stage::FluxOut => FluxOut::NAME,
        Stage::Flx => Flx::NAME,
        Stage::FlyOut => FlyOut::NAME,
    }
}

#[cfg(test)]
mod tests {
    use crate::grid::{test_input, Coefficient, Grid};
    use crate::stencil::{fused, Plane, PlaneMut, Rect, Stage};

    #[test]
    fn worker_split_gives_the_same_bits() {
        // A 13 × 40 block of a 17 × 44 plane: the whole block in one sweep, and the six
        // rectangles of the chip's worker split, give the same values.
        let grid = Grid::new(44, 17, 1).unwrap();
        let inp = test_input(&grid);
        let coeff = Coefficient::Varying.field(&grid);
        let origin = 2 * grid.ni + 2;
        let (rows, cols) = (13, 40);
        let mut whole = vec![0.0f32; grid.len()];
        let mut split = vec![0.0f32; grid.len()];
        let p = |d| Plane {
            data: d,
            stride: grid.ni,
            origin,
        };
        fused(
            p(&inp),
            p(&coeff),
            &mut PlaneMut {
                data: &mut whole,
                stride: grid.ni,
                origin,
            },
            Rect::whole(rows, cols),
        );
        for w in 0..6 {
            let r = Stage::Fused.worker_rect(rows, cols, w, 6);
            fused(
                p(&inp),
                p(&coeff),
                &mut PlaneMut {
                    data: &mut split,
                    stride: grid.ni,
                    origin,
                },
                r,
            );
        }
        assert_eq!(Stage::Fused.split(rows, cols, 6), (1, 6));
        assert!(whole.iter().any(|&v| v != 0.0));
        assert_eq!(whole, split);
    }
}
