//! Host implementations: the point-wise oracle and the native loop.
//!
//! [`naive`] is the gridtools formulas written point by point, each `lap`, `flx` and `fly`
//! recomputed where it is used, sharing no code with the kernels of [`crate::stencil`] except
//! the grid's indexing; it is the tests' oracle. [`Native`] runs the streaming kernel
//! ([`crate::stencil::fused`]) over whole planes, planes in parallel: the speed baseline the
//! simulator is measured against.
//!
//! Both apply the stencil `iterations` times: each application reads `in` and writes the
//! interior of `out`, the halo of `out` keeps the input's values (fixed boundary), and `out`
//! is the next application's `in`.

use rayon::prelude::*;

use crate::grid::{Grid, HALO};
use crate::stencil::{fused, Plane, PlaneMut, Rect};

/// One application of the stencil, point by point, straight from the formulas.
pub fn naive_step(grid: &Grid, inp: &[f32], coeff: &[f32], out: &mut [f32]) {
    naive_step_with(
        grid,
        inp,
        coeff,
        out,
        |f, d| if f * d > 0.0 { 0.0 } else { f },
    );
}

/// [`naive_step`] with the limiter given: the tests pass an inverted one to show that their
/// data takes both of the limiter's branches.
pub fn naive_step_with(
    grid: &Grid,
    inp: &[f32],
    coeff: &[f32],
    out: &mut [f32],
    limiter: impl Fn(f32, f32) -> f32,
) {
    assert_eq!(inp.len(), grid.len());
    out.copy_from_slice(inp);
    for k in 0..grid.nk {
        let at = |i: usize, j: usize| inp[grid.idx(i, j, k)];
        let lap = |i: usize, j: usize| {
            4.0 * at(i, j) - (((at(i + 1, j) + at(i - 1, j)) + at(i, j + 1)) + at(i, j - 1))
        };
        let flx = |i: usize, j: usize| limiter(lap(i + 1, j) - lap(i, j), at(i + 1, j) - at(i, j));
        let fly = |i: usize, j: usize| limiter(lap(i, j + 1) - lap(i, j), at(i, j + 1) - at(i, j));
        for j in HALO..grid.nj - HALO {
            for i in HALO..grid.ni - HALO {
                let p = grid.idx(i, j, k);
                out[p] = at(i, j)
                    - coeff[p] * (((flx(i, j) - flx(i - 1, j)) + fly(i, j)) - fly(i, j - 1));
            }
        }
    }
}

/// The point-wise oracle applied `iterations` times.
pub fn naive(grid: &Grid, input: &[f32], coeff: &[f32], iterations: usize) -> Vec<f32> {
    let mut a = input.to_vec();
    let mut b = input.to_vec();
    for _ in 0..iterations {
        naive_step(grid, &a, coeff, &mut b);
        std::mem::swap(&mut a, &mut b);
    }
    a
}

/// The native loop: the streaming kernel over whole planes, planes in parallel on a rayon
/// pool of `threads` threads.
pub struct Native {
    grid: Grid,
    pool: rayon::ThreadPool,
    flush: bool,
}

impl Native {
    /// The native loop with IEEE arithmetic.
    pub fn new(grid: Grid, threads: usize) -> Native {
        Native::with_flush(grid, threads, false)
    }

    /// The native loop flushing subnormals as the chip does (`flush`), to compare bit for bit
    /// with a simulation whose target flushes (`poplar::fp`).
    pub fn with_flush(grid: Grid, threads: usize, flush: bool) -> Native {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .expect("a rayon pool of a few threads");
        Native { grid, pool, flush }
    }

    /// One application: the interior of every plane of `out` from `inp`.
    pub fn step(&self, inp: &[f32], coeff: &[f32], out: &mut [f32]) {
        let g = self.grid;
        let plane = g.ni * g.nj;
        let origin = HALO * g.ni + HALO;
        let rect = Rect::whole(g.interior_j(), g.interior_i());
        let flush = self.flush;
        self.pool.install(|| {
            out.par_chunks_mut(plane)
                .zip(inp.par_chunks(plane).zip(coeff.par_chunks(plane)))
                .for_each(|(o, (i, c))| {
                    let _fp = poplar::fp::FlushGuard::new(flush);
                    let view = |d| Plane {
                        data: d,
                        stride: g.ni,
                        origin,
                    };
                    let mut o = PlaneMut {
                        data: o,
                        stride: g.ni,
                        origin,
                    };
                    fused(view(i), view(c), &mut o, rect);
                })
        });
    }

    /// The stencil applied `iterations` times.
    pub fn run(&self, input: &[f32], coeff: &[f32], iterations: usize) -> Vec<f32> {
        let mut a = input.to_vec();
        let mut b = input.to_vec();
        for _ in 0..iterations {
            self.step(&a, coeff, &mut b);
            std::mem::swap(&mut a, &mut b);
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{test_input, Coefficient};

    #[test]
    fn native_equals_the_pointwise_oracle_bit_for_bit() {
        for (ni, nj, nk) in [(5, 5, 1), (9, 7, 2), (37, 23, 3)] {
            let g = Grid::new(ni, nj, nk).unwrap();
            let inp = test_input(&g);
            let c = Coefficient::Varying.field(&g);
            let want = naive(&g, &inp, &c, 3);
            let got = Native::new(g, 2).run(&inp, &c, 3);
            assert_eq!(
                want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{g}"
            );
        }
    }

    #[test]
    fn a_linear_field_is_left_unchanged() {
        // lap = 0 everywhere on a linear field, so both fluxes and the update vanish.
        let g = Grid::new(12, 10, 2).unwrap();
        let inp: Vec<f32> = (0..g.len())
            .map(|p| {
                let (i, j) = (p % g.ni, (p / g.ni) % g.nj);
                (2 * i + 3 * j) as f32
            })
            .collect();
        let c = Coefficient::Constant(0.025).field(&g);
        assert_eq!(Native::new(g, 1).run(&inp, &c, 2), inp);
        assert_eq!(naive(&g, &inp, &c, 2), inp);
    }

    #[test]
    fn a_single_spike_diffuses_as_worked_by_hand() {
        // in = 1 at (3, 3), 0 elsewhere; coeff = 0.1. lap(3,3) = 4, lap of its four neighbours
        // = −1. At (3,3): flx(3) = lap(4) − lap(3) = −5, Δin = −1, product 5 > 0 → limited to
        // 0; flx(2) = lap(3) − lap(2) = 5, Δin = 1 → limited to 0; the same in j. out = 1.
        // At (4,3): flx(4) = lap(5) − lap(4) = 0 − (−1) = 1, Δin = 0 → 1; flx(3) = 0 (above);
        // fly(4,3) = lap(4,4) − lap(4,3) = 0 + 1 = 1, Δin = 0 → 1; fly(4,2) = lap(4,3) −
        // lap(4,2) = −1, Δin = 0 → −1. out = 0 − 0.1 (1 − 0 + 1 + 1) = −0.3.
        let g = Grid::new(8, 8, 1).unwrap();
        let mut inp = vec![0.0f32; g.len()];
        inp[g.idx(3, 3, 0)] = 1.0;
        let c = Coefficient::Constant(0.1).field(&g);
        for out in [naive(&g, &inp, &c, 1), Native::new(g, 1).run(&inp, &c, 1)] {
            assert_eq!(out[g.idx(3, 3, 0)], 1.0);
            assert_eq!(
                out[g.idx(4, 3, 0)],
                0.0 - 0.1 * (((1.0 - 0.0) + 1.0) - -1.0)
            );
        }
    }
}
