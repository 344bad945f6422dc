//! The grid and its fields: `I × J × K` points, `i` fastest, each `k` plane independent, with a
//! halo of [`HALO`] points in `i` and `j` on which no output is computed.

use crate::error::HdiffError;

/// Width of the halo in `i` and `j`: the stencil reads two points beyond the point it updates.
pub const HALO: usize = 2;

/// The extents of a grid. Arrays of it hold `ni * nj * nk` values, `i` fastest, then `j`, then
/// `k` (index `(k * nj + j) * ni + i`), which is also numpy's Fortran order of `a[i, j, k]` and
/// VTK image data's `x, y, z` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Grid {
    pub ni: usize,
    pub nj: usize,
    pub nk: usize,
}

impl Grid {
    /// A grid, checked: the interior `[HALO, n - HALO)` must hold at least one point in `i` and
    /// `j`, and there must be at least one plane.
    pub fn new(ni: usize, nj: usize, nk: usize) -> Result<Grid, HdiffError> {
        for (axis, n) in [("i", ni), ("j", nj)] {
            if n < 2 * HALO + 1 {
                return Err(HdiffError::GridTooSmall {
                    axis,
                    size: n,
                    min: 2 * HALO + 1,
                });
            }
        }
        if nk == 0 {
            return Err(HdiffError::GridTooSmall {
                axis: "k",
                size: 0,
                min: 1,
            });
        }
        ni.checked_mul(nj)
            .and_then(|p| p.checked_mul(nk))
            .filter(|&p| p <= u32::MAX as usize)
            .ok_or(HdiffError::GridTooLarge { ni, nj, nk })?;
        Ok(Grid { ni, nj, nk })
    }

    /// Values in one array of the grid.
    pub fn len(&self) -> usize {
        self.ni * self.nj * self.nk
    }

    /// Never: a checked grid has at least one point.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Index of point `(i, j, k)`.
    #[inline]
    pub fn idx(&self, i: usize, j: usize, k: usize) -> usize {
        (k * self.nj + j) * self.ni + i
    }

    /// Interior points per plane in `i` (the output's width).
    pub fn interior_i(&self) -> usize {
        self.ni - 2 * HALO
    }

    /// Interior points per plane in `j`.
    pub fn interior_j(&self) -> usize {
        self.nj - 2 * HALO
    }

    /// Output points of one application of the stencil: the interior of every plane.
    pub fn output_points(&self) -> u64 {
        (self.interior_i() * self.interior_j() * self.nk) as u64
    }
}

impl std::fmt::Display for Grid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} × {} × {}", self.ni, self.nj, self.nk)
    }
}

/// The input field of gridtools' horizontal-diffusion test, on the unit square:
/// `in = 5 + 8 (2 + cos(π(x + 1.5 y)) + sin(2π(x + 1.5 y))) / 4` with `x = i / ni`,
/// `y = j / nj`, computed in f64 and rounded to f32. Each plane `k` is shifted in phase by
/// `0.1 k`, so that planes differ and a plane mixed up with another is caught.
pub fn test_input(grid: &Grid) -> Vec<f32> {
    let mut v = vec![0.0f32; grid.len()];
    for k in 0..grid.nk {
        let phase = 0.1 * k as f64;
        for j in 0..grid.nj {
            let y = j as f64 / grid.nj as f64;
            for i in 0..grid.ni {
                let x = i as f64 / grid.ni as f64;
                let t = std::f64::consts::PI * (x + 1.5 * y) + phase;
                v[grid.idx(i, j, k)] = (5.0 + 8.0 * (2.0 + t.cos() + (2.0 * t).sin()) / 4.0) as f32;
            }
        }
    }
    v
}

/// How the per-point diffusion coefficient is set.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Coefficient {
    /// The same value everywhere (gridtools' test uses 0.025).
    Constant(f32),
    /// `0.025 (1 + 0.2 sin(7 x + 3 y + k))`: a field that varies per point, so that a
    /// coefficient read at the wrong point is caught.
    Varying,
}

impl Coefficient {
    /// The coefficient field of `grid`.
    pub fn field(&self, grid: &Grid) -> Vec<f32> {
        match *self {
            Coefficient::Constant(c) => vec![c; grid.len()],
            Coefficient::Varying => {
                let mut v = vec![0.0f32; grid.len()];
                for k in 0..grid.nk {
                    for j in 0..grid.nj {
                        let y = j as f64 / grid.nj as f64;
                        for i in 0..grid.ni {
                            let x = i as f64 / grid.ni as f64;
                            let s = (7.0 * x + 3.0 * y + k as f64).sin();
                            v[grid.idx(i, j, k)] = (0.025 * (1.0 + 0.2 * s)) as f32;
                        }
                    }
                }
                v
            }
        }
    }
}

impl std::fmt::Display for Coefficient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Coefficient::Constant(c) => write!(f, "constant {c}"),
            Coefficient::Varying => f.write_str("varying 0.025 (1 + 0.2 sin(7x + 3y + k))"),
        }
    }
}

impl std::str::FromStr for Coefficient {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "varying" {
            return Ok(Coefficient::Varying);
        }
        match s.parse::<f32>() {
            Ok(c) if c.is_finite() => Ok(Coefficient::Constant(c)),
            _ => Err(format!("`{s}` is neither a finite number nor `varying`")),
        }
    }
}
