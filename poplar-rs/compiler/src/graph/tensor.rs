//! Tensors: typed, shaped views over variables, made of runs of variable elements.
//!
//! A tensor never owns data. It is a list of [`Region`]s — runs of consecutive elements of one
//! variable — in the tensor's row-major element order. Every view (slice, concat, reshape,
//! transpose, broadcast, reverse) only rewrites that list, so a halo-extended vector
//! `concat(&[local, v.slice(a..b)?, v.slice(c..d)?])` is as cheap to build as to describe.

use std::ops::{Deref, Range};
use std::sync::{Arc, OnceLock};

use super::GraphError;
use crate::dtype::DType;

crate::entity::entity_id!(
    /// Dense index of a variable (or constant) in its graph.
    pub struct VarId, "var";
);

/// A run of `len` consecutive elements of variable `var`, from element `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Region {
    pub var: VarId,
    pub start: u64,
    pub len: u64,
}

impl Region {
    pub fn end(&self) -> u64 {
        self.start + self.len
    }

    /// Whether two lists of regions share any variable element (each list may hold several
    /// variables, in any order).
    pub(crate) fn lists_overlap(a: &[Region], b: &[Region]) -> bool {
        let mut ev: Vec<(VarId, u64, u64, bool)> =
            a.iter().map(|r| (r.var, r.start, r.end(), false)).collect();
        ev.extend(b.iter().map(|r| (r.var, r.start, r.end(), true)));
        ev.sort_by_key(|e| (e.0, e.1));
        let mut reach: [Option<(VarId, u64)>; 2] = [None, None];
        for (var, s, e, side) in ev {
            let other = reach[usize::from(!side)];
            if matches!(other, Some((v, end)) if v == var && end > s) {
                return true;
            }
            let mine = &mut reach[usize::from(side)];
            match mine {
                Some((v, end)) if *v == var => *end = (*end).max(e),
                _ => *mine = Some((var, e)),
            }
        }
        false
    }
}

/// A tensor's regions and, once a view of it is taken, their prefix offsets: finding a flat
/// element is a binary search, computed once per region list rather than once per view (a
/// voltage view of 94,208 tiles' rows, sliced by every tile for its halo, cost O(tiles²)).
/// Views that keep the list (clones, reshapes, flattens) share it and its offsets.
pub(crate) struct RegionList {
    regions: Box<[Region]>,
    offsets: OnceLock<Box<[u64]>>,
}

impl RegionList {
    fn new(regions: Vec<Region>) -> Arc<RegionList> {
        Arc::new(RegionList {
            regions: regions.into_boxed_slice(),
            offsets: OnceLock::new(),
        })
    }

    /// Flat offset of each region's first element, and the total length last.
    fn offsets(&self) -> &[u64] {
        self.offsets.get_or_init(|| {
            let mut offs = Vec::with_capacity(self.regions.len() + 1);
            let mut acc = 0u64;
            offs.push(0);
            for r in self.regions.iter() {
                acc += r.len;
                offs.push(acc);
            }
            offs.into_boxed_slice()
        })
    }
}

impl Deref for RegionList {
    type Target = [Region];

    fn deref(&self) -> &[Region] {
        &self.regions
    }
}

impl PartialEq for RegionList {
    fn eq(&self, other: &RegionList) -> bool {
        self.regions == other.regions
    }
}

/// A typed, shaped view over variable elements. Cheap to clone.
#[derive(Clone, PartialEq)]
pub struct Tensor {
    pub(crate) graph: u32,
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<usize>,
    pub(crate) regions: Arc<RegionList>,
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Tensor<{}>{:?} ({} regions)",
            self.dtype,
            self.shape,
            self.regions.len()
        )
    }
}

/// Appends a region, merging it with the previous one when they are adjacent.
fn push_region(out: &mut Vec<Region>, r: Region) {
    if r.len == 0 {
        return;
    }
    if let Some(last) = out.last_mut() {
        if last.var == r.var && last.end() == r.start {
            last.len += r.len;
            return;
        }
    }
    out.push(r);
}

impl Tensor {
    pub(crate) fn new(graph: u32, dtype: DType, shape: Vec<usize>, regions: Vec<Region>) -> Tensor {
        Tensor {
            graph,
            dtype,
            shape,
            regions: RegionList::new(regions),
        }
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    pub fn num_elements(&self) -> usize {
        self.shape.iter().product()
    }

    /// The variable runs this tensor is made of, in element order.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// True when every element is a distinct variable element (no broadcast repeats).
    pub(crate) fn is_one_to_one(&self) -> bool {
        let mut rs: Vec<Region> = self.regions.to_vec();
        rs.sort_by_key(|r| (r.var, r.start));
        rs.windows(2)
            .all(|w| w[0].var != w[1].var || w[0].end() <= w[1].start)
    }

    fn with(&self, shape: Vec<usize>, regions: Vec<Region>) -> Tensor {
        Tensor::new(self.graph, self.dtype, shape, regions)
    }

    /// The same regions (shared, with their offsets) under another shape.
    fn with_shape(&self, shape: Vec<usize>) -> Tensor {
        Tensor {
            shape,
            ..self.clone()
        }
    }

    fn check_dim(&self, dim: usize, op: &'static str) -> Result<(), GraphError> {
        if dim >= self.rank() {
            return Err(GraphError::BadView {
                op,
                reason: format!("dimension {dim} out of range for shape {:?}", self.shape),
            });
        }
        Ok(())
    }

    /// Extracts the given flat element ranges, in order, as regions.
    fn take_flat(&self, ranges: impl IntoIterator<Item = (u64, u64)>) -> Vec<Region> {
        let offs = self.regions.offsets();
        let mut out = Vec::new();
        for (mut s, len) in ranges {
            let e = s + len;
            while s < e {
                // Region containing flat element s.
                let i = offs.partition_point(|&o| o <= s) - 1;
                let r = self.regions[i];
                let within = s - offs[i];
                let take = (r.len - within).min(e - s);
                push_region(
                    &mut out,
                    Region {
                        var: r.var,
                        start: r.start + within,
                        len: take,
                    },
                );
                s += take;
            }
        }
        out
    }

    /// Elements `range` of dimension `dim`.
    pub fn slice_dim(&self, dim: usize, range: Range<usize>) -> Result<Tensor, GraphError> {
        self.check_dim(dim, "slice")?;
        if range.start > range.end || range.end > self.shape[dim] {
            return Err(GraphError::BadView {
                op: "slice",
                reason: format!(
                    "range {range:?} out of bounds for dimension {dim} of size {}",
                    self.shape[dim]
                ),
            });
        }
        let outer: usize = self.shape[..dim].iter().product();
        let inner: usize = self.shape[dim + 1..].iter().product();
        let n = self.shape[dim];
        let ranges = (0..outer).map(|o| {
            (
                ((o * n + range.start) * inner) as u64,
                ((range.end - range.start) * inner) as u64,
            )
        });
        let regions = self.take_flat(ranges);
        let mut shape = self.shape.clone();
        shape[dim] = range.end - range.start;
        Ok(self.with(shape, regions))
    }

    /// Elements `range` of the first dimension.
    pub fn slice(&self, range: Range<usize>) -> Result<Tensor, GraphError> {
        if self.rank() == 0 {
            return Err(GraphError::BadView {
                op: "slice",
                reason: "scalar tensor".into(),
            });
        }
        self.slice_dim(0, range)
    }

    /// Element `i` of the first dimension, with that dimension removed.
    pub fn index(&self, i: usize) -> Result<Tensor, GraphError> {
        let mut t = self.slice(i..i + 1)?;
        t.shape.remove(0);
        Ok(t)
    }

    /// Joins tensors along dimension `dim`; all other dimensions must agree.
    pub fn concat_dim(tensors: &[Tensor], dim: usize) -> Result<Tensor, GraphError> {
        let first = tensors.first().ok_or_else(|| GraphError::BadView {
            op: "concat",
            reason: "no tensors".into(),
        })?;
        first.check_dim(dim, "concat")?;
        for (i, t) in tensors.iter().enumerate() {
            if t.graph != first.graph {
                return Err(GraphError::ForeignTensor {
                    what: format!("concat operand {i}"),
                });
            }
            if t.dtype != first.dtype {
                return Err(GraphError::BadView {
                    op: "concat",
                    reason: format!(
                        "operand {i} is {} but operand 0 is {}",
                        t.dtype, first.dtype
                    ),
                });
            }
            let same = t.rank() == first.rank()
                && t.shape
                    .iter()
                    .zip(&first.shape)
                    .enumerate()
                    .all(|(d, (a, b))| d == dim || a == b);
            if !same {
                return Err(GraphError::BadView {
                    op: "concat",
                    reason: format!(
                        "operand {i} has shape {:?}, incompatible with {:?} along dimension {dim}",
                        t.shape, first.shape
                    ),
                });
            }
        }
        let outer: usize = first.shape[..dim].iter().product();
        let mut regions = Vec::new();
        if outer == 1 {
            for t in tensors {
                for &r in t.regions.iter() {
                    push_region(&mut regions, r);
                }
            }
        } else {
            let blocks: Vec<Vec<Vec<Region>>> = tensors
                .iter()
                .map(|t| {
                    let inner: usize = t.shape[dim..].iter().product();
                    (0..outer)
                        .map(|o| t.take_flat([((o * inner) as u64, inner as u64)]))
                        .collect()
                })
                .collect();
            for o in 0..outer {
                for b in &blocks {
                    for &r in &b[o] {
                        push_region(&mut regions, r);
                    }
                }
            }
        }
        let mut shape = first.shape.clone();
        shape[dim] = tensors.iter().map(|t| t.shape[dim]).sum();
        Ok(first.with(shape, regions))
    }

    /// Joins tensors along the first dimension.
    pub fn concat(tensors: &[Tensor]) -> Result<Tensor, GraphError> {
        Tensor::concat_dim(tensors, 0)
    }

    /// The same elements with another shape of the same size.
    pub fn reshape(&self, shape: &[usize]) -> Result<Tensor, GraphError> {
        let n: usize = shape.iter().product();
        if n != self.num_elements() {
            return Err(GraphError::BadView {
                op: "reshape",
                reason: format!(
                    "cannot reshape {:?} ({} elements) to {shape:?}",
                    self.shape,
                    self.num_elements()
                ),
            });
        }
        Ok(self.with_shape(shape.to_vec()))
    }

    /// The same elements as one dimension.
    #[must_use = "a view changes nothing: use the tensor it returns"]
    pub fn flatten(&self) -> Tensor {
        self.with_shape(vec![self.num_elements()])
    }

    /// Permutes dimensions: dimension `i` of the result is dimension `perm[i]` of `self`.
    pub fn dim_shuffle(&self, perm: &[usize]) -> Result<Tensor, GraphError> {
        let r = self.rank();
        let mut seen = vec![false; r];
        if perm.len() != r
            || perm
                .iter()
                .any(|&p| p >= r || std::mem::replace(&mut seen[p], true))
        {
            return Err(GraphError::BadView {
                op: "dim_shuffle",
                reason: format!("{perm:?} is not a permutation of 0..{r}"),
            });
        }
        // Row-major strides of the source.
        let mut stride = vec![1usize; r];
        for d in (0..r.saturating_sub(1)).rev() {
            stride[d] = stride[d + 1] * self.shape[d + 1];
        }
        let shape: Vec<usize> = perm.iter().map(|&p| self.shape[p]).collect();
        let n = self.num_elements();
        let mut ranges = Vec::new();
        if n > 0 {
            let mut idx = vec![0usize; r];
            // Innermost result dimension maps to source stride `stride[perm[r-1]]`.
            for _ in 0..n {
                let src: usize = (0..r).map(|d| idx[d] * stride[perm[d]]).sum();
                match ranges.last_mut() {
                    Some((s, l)) if *s + *l == src as u64 => *l += 1,
                    _ => ranges.push((src as u64, 1u64)),
                }
                for d in (0..r).rev() {
                    idx[d] += 1;
                    if idx[d] < shape[d] {
                        break;
                    }
                    idx[d] = 0;
                }
            }
        }
        Ok(self.with(shape, self.take_flat(ranges)))
    }

    /// Swaps the two dimensions of a matrix.
    pub fn transpose(&self) -> Result<Tensor, GraphError> {
        if self.rank() != 2 {
            return Err(GraphError::BadView {
                op: "transpose",
                reason: format!("needs a 2-D tensor, got shape {:?}", self.shape),
            });
        }
        self.dim_shuffle(&[1, 0])
    }

    /// Repeats the tensor `times` times along dimension `dim` (the elements are aliased, not
    /// copied, so a broadcast tensor can only be read).
    pub fn broadcast(&self, times: usize, dim: usize) -> Result<Tensor, GraphError> {
        self.check_dim(dim, "broadcast")?;
        let outer: usize = self.shape[..dim].iter().product();
        let inner: usize = self.shape[dim..].iter().product();
        let ranges =
            (0..outer).flat_map(|o| std::iter::repeat_n(((o * inner) as u64, inner as u64), times));
        let regions = self.take_flat(ranges);
        let mut shape = self.shape.clone();
        shape[dim] *= times;
        Ok(self.with(shape, regions))
    }

    /// Reverses the order of elements along dimension `dim`.
    pub fn reverse(&self, dim: usize) -> Result<Tensor, GraphError> {
        self.check_dim(dim, "reverse")?;
        let outer: usize = self.shape[..dim].iter().product();
        let n = self.shape[dim];
        let inner: usize = self.shape[dim + 1..].iter().product();
        let ranges = (0..outer).flat_map(|o| {
            (0..n)
                .rev()
                .map(move |i| (((o * n + i) * inner) as u64, inner as u64))
        });
        Ok(self.with(self.shape.clone(), self.take_flat(ranges)))
    }

    /// Adds a leading dimension of size 1 (`[n] -> [1, n]`).
    pub fn expand(&self, dim: usize) -> Result<Tensor, GraphError> {
        if dim > self.rank() {
            return Err(GraphError::BadView {
                op: "expand",
                reason: format!("dimension {dim} > rank {}", self.rank()),
            });
        }
        let mut shape = self.shape.clone();
        shape.insert(dim, 1);
        Ok(self.with_shape(shape))
    }

    /// The variable element behind flat element `i` of this tensor.
    pub fn element(&self, i: u64) -> Option<(VarId, u64)> {
        let offs = self.regions.offsets();
        if i >= *offs.last()? {
            return None;
        }
        let k = offs.partition_point(|&o| o <= i) - 1;
        let r = self.regions[k];
        Some((r.var, r.start + (i - offs[k])))
    }
}

/// Shorthand for [`Tensor::concat`].
pub fn concat(tensors: &[Tensor]) -> Result<Tensor, GraphError> {
    Tensor::concat(tensors)
}
