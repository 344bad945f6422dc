//! Field kinds of a codelet and how they bind to tile memory.

use std::marker::PhantomData;

use serde::{Deserialize, Serialize};

use crate::dtype::{DType, Element};

/// Whether a field is read, written, both, or plain per-vertex state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FieldDir {
    Input,
    Output,
    InOut,
    /// A value fixed at graph-build time with `set_initial_value`.
    State,
}

impl FieldDir {
    pub fn reads(self) -> bool {
        matches!(self, FieldDir::Input | FieldDir::InOut)
    }
    pub fn writes(self) -> bool {
        matches!(self, FieldDir::Output | FieldDir::InOut)
    }
}

/// Whether a field is one element, a vector, or a list of vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FieldShape {
    Scalar,
    Vector,
    VectorList,
}

/// One declared field of a codelet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FieldSpec {
    #[serde(skip_deserializing, default)]
    pub name: &'static str,
    pub dir: FieldDir,
    pub shape: FieldShape,
    pub dtype: DType,
}

impl FieldSpec {
    /// The spec of field kind `F` named `name`.
    pub const fn of<F: Field>(name: &'static str) -> FieldSpec {
        FieldSpec {
            name: strip_raw(name),
            dir: F::DIR,
            shape: F::SHAPE,
            dtype: F::DTYPE,
        }
    }
}

const fn strip_raw(s: &'static str) -> &'static str {
    let b = s.as_bytes();
    if b.len() > 2 && b[0] == b'r' && b[1] == b'#' {
        match std::str::from_utf8(b.split_at(2).1) {
            Ok(x) => x,
            Err(_) => s,
        }
    } else {
        s
    }
}

/// Where a bound field lives in tile memory: a byte offset and an element count. For a
/// `VectorList` field, `offset` indexes the vertex's list table and `len` is the number of
/// sub-vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct FieldLoc {
    pub offset: u32,
    pub len: u32,
}

/// The worker context a `compute` call runs on.
///
/// A tile has `Target::workers_per_tile` hardware worker contexts. A single-worker codelet is
/// called once per vertex with `Worker { id: 0, count: 1 }`; the cycle model schedules the
/// vertices of a tile over its workers. A `multi_worker` codelet is called once per worker
/// context, with `id` in `0..count` (`count` = the target's workers per tile), and does its
/// share: [`Worker::split`] gives an even contiguous split of `0..n`. Its calls run one after
/// another on the host, and their writes must be disjoint, so the result does not depend on
/// their order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Worker {
    /// This worker context's index, `0..count`.
    pub id: u32,
    /// Worker contexts taking part in this call: 1 for a single-worker codelet, the tile's
    /// worker count for a multi-worker one.
    pub count: u32,
}

impl Worker {
    /// Reports that `done` of this call's `total` units of work are done (or about to be:
    /// call it before each block of a long loop with the block's end).
    ///
    /// A host-side performance hint, like [`prefetch`](super::prefetch): the simulator uses it
    /// to fetch the memory of the tile its thread runs next in step with this one's work, so
    /// that the next tile starts warm. It never changes results or modelled cycles, and costs a
    /// few nanoseconds per call. Worth calling a few times per vertex from compute-bound
    /// codelets over kilobytes of tile memory: the cardiac TP06 step (≈ 60 ns per cell) ran
    /// 3.6–5 % faster with it. Not from memory-bound ones: the same fetches issued from the
    /// cardiac SpMV (≈ 2 µs per tile) competed with its own loads and made it 15–22 % slower.
    #[inline]
    pub fn progress(&self, done: usize, total: usize) {
        super::hint::report_progress(self.id, self.count, done, total);
    }

    /// The sub-range of `0..n` this worker should handle when work is split evenly.
    #[inline]
    pub fn split(&self, n: usize) -> std::ops::Range<usize> {
        let c = self.count as usize;
        let i = self.id as usize;
        (n * i / c)..(n * (i + 1) / c)
    }

    /// This worker's even share of `planes` planes of `per` outputs each, taken in
    /// plane-major order: the planes it touches and, for each, the range of outputs within the
    /// plane (the first and last may be partial).
    pub fn split_planes(
        &self,
        planes: usize,
        per: usize,
    ) -> impl Iterator<Item = (usize, std::ops::Range<usize>)> {
        let per = per.max(1);
        let range = self.split(planes * per);
        let touched = if range.is_empty() {
            0..0
        } else {
            range.start / per..(range.end - 1) / per + 1
        };
        touched.map(move |p| {
            let lo = range.start.max(p * per) - p * per;
            let hi = range.end.min((p + 1) * per) - p * per;
            (p, lo..hi)
        })
    }
}

/// A codelet's report that it could not compute.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct VertexError(pub String);

impl VertexError {
    pub fn new(msg: impl Into<String>) -> Self {
        VertexError(msg.into())
    }
}

/// What a cycle estimate can look at: the sizes of the vertex's fields and the target.
pub struct CycleCtx<'a> {
    /// Per field, in declaration order: elements (Scalar/Vector), or sub-vector count (list).
    pub sizes: &'a [u32],
    /// Per field: total elements over all sub-vectors (equal to `sizes` for non-lists).
    pub total_elements: &'a [u64],
    pub workers: u32,
}

impl CycleCtx<'_> {
    /// Elements of field `i` (total over sub-vectors for lists).
    pub fn elements(&self, i: usize) -> u64 {
        self.total_elements.get(i).copied().unwrap_or(0)
    }
}

/// The behaviour of a codelet declared with [`codelet!`](crate::codelet!).
#[diagnostic::on_unimplemented(
    message = "codelet `{Self}` has no behaviour",
    label = "needs `impl Vertex for {Self}` with a `compute` method",
    note = "every type declared with `poplar::codelet!` implements `Vertex`: \
            `impl Vertex for Name<'_>` with `fn compute(&mut self, w: Worker) -> Result<(), VertexError>`"
)]
pub trait Vertex {
    /// Runs the vertex once (or once per worker for multi-worker codelets).
    fn compute(&mut self, worker: Worker) -> Result<(), VertexError>;

    /// Estimated cycles of one run on one worker context (worker-context cycles: the model
    /// multiplies the busiest context's cycles by the tile's worker count, because the
    /// contexts issue in a round-robin barrel — `docs/cycle-model.md`); for a multi-worker
    /// codelet, one context's share. `None` lets the cycle model use its documented default
    /// and flag the estimate.
    fn cycles(_ctx: &CycleCtx<'_>) -> Option<u64>
    where
        Self: Sized,
    {
        None
    }
}

/// Raw access to one vertex's fields during `compute`; built by the engine.
pub struct VertexIo<'a> {
    base: *mut u8,
    fields: &'a [FieldLoc],
    lists: &'a [FieldLoc],
    _tile: PhantomData<&'a mut [u8]>,
}

impl<'a> VertexIo<'a> {
    /// # Safety
    /// `base` points to a tile memory valid for reads and writes for `'a`, exclusively borrowed
    /// by this vertex; every `FieldLoc` (and every list entry) is in bounds and aligned for its
    /// field's element type, and written fields do not overlap any other field.
    #[doc(hidden)]
    #[inline]
    pub unsafe fn new(base: *mut u8, fields: &'a [FieldLoc], lists: &'a [FieldLoc]) -> Self {
        VertexIo {
            base,
            fields,
            lists,
            _tile: PhantomData,
        }
    }

    fn ptr<T>(&self, loc: FieldLoc) -> *mut T {
        // SAFETY: offsets are in bounds of the tile memory (constructor contract).
        unsafe { self.base.add(loc.offset as usize).cast::<T>() }
    }
}

/// A field kind: binds a [`FieldLoc`] to a Rust reference type.
///
/// # Safety
/// Implementations must create references only of the shape and type declared by the
/// associated constants, which is what the compiler checked the binding against.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a codelet field kind",
    label = "not a codelet field",
    note = "a field is `Input<T>`, `Output<T>`, `InOut<T>` or `State<T>`, where T is an element \
            type (f32, i32, u32, u16, u8, bool), `Vector<E>` or `VectorList<E>` (not for State)"
)]
pub unsafe trait Field {
    const DIR: FieldDir;
    const SHAPE: FieldShape;
    const DTYPE: DType;
    type Ref<'a>;
    /// # Safety
    /// Field `idx` of `io` matches this kind and is bound once per `compute` call.
    unsafe fn bind<'a>(io: &VertexIo<'a>, idx: usize) -> Self::Ref<'a>;
}

/// A field read by the vertex.
pub struct Input<T>(PhantomData<T>);
/// A field written by the vertex (its previous contents are unspecified to the codelet).
pub struct Output<T>(PhantomData<T>);
/// A field read and written by the vertex.
pub struct InOut<T>(PhantomData<T>);
/// A per-vertex constant set at graph-build time.
pub struct State<T>(PhantomData<T>);
/// A vector of elements (`&[T]`).
pub struct Vector<T>(PhantomData<T>);
/// A list of vectors, each connected to its own tensor.
pub struct VectorList<T>(PhantomData<T>);

/// Read-only list of vectors.
#[derive(Clone, Copy)]
pub struct ListRef<'a, T> {
    io_base: *const u8,
    locs: &'a [FieldLoc],
    _t: PhantomData<&'a [T]>,
}

impl<'a, T: Element> ListRef<'a, T> {
    pub fn len(&self) -> usize {
        self.locs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.locs.is_empty()
    }
    /// Sub-vector `i`.
    pub fn get(&self, i: usize) -> &'a [T] {
        let l = self.locs[i];
        // SAFETY: list entries are in bounds and aligned (VertexIo contract); inputs are not
        // written by anyone during compute.
        unsafe {
            std::slice::from_raw_parts(
                self.io_base.add(l.offset as usize).cast::<T>(),
                l.len as usize,
            )
        }
    }
    pub fn iter(&self) -> impl Iterator<Item = &'a [T]> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }
}

impl<'a, T: Element> std::ops::Index<usize> for ListRef<'a, T> {
    type Output = [T];
    fn index(&self, i: usize) -> &[T] {
        self.get(i)
    }
}

/// Writable list of vectors; sub-vectors never overlap (checked by the compiler).
pub struct ListMut<'a, T> {
    io_base: *mut u8,
    locs: &'a [FieldLoc],
    _t: PhantomData<&'a mut [T]>,
}

impl<'a, T: Element> ListMut<'a, T> {
    pub fn len(&self) -> usize {
        self.locs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.locs.is_empty()
    }
    pub fn get(&self, i: usize) -> &[T] {
        let l = self.locs[i];
        // SAFETY: as for ListRef; the shared borrow of self prevents a live &mut.
        unsafe {
            std::slice::from_raw_parts(
                self.io_base.add(l.offset as usize).cast::<T>(),
                l.len as usize,
            )
        }
    }
    pub fn get_mut(&mut self, i: usize) -> &mut [T] {
        let l = self.locs[i];
        // SAFETY: sub-vectors of a written list are pairwise disjoint (compiler check), and the
        // &mut borrow of self makes this the only live borrow of the list.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.io_base.add(l.offset as usize).cast::<T>(),
                l.len as usize,
            )
        }
    }
}

macro_rules! impl_fields {
    ($($dir:ident => $d:expr, $scalar_ref:ty, $scalar_bind:ident, $vec_ref:ty, $vec_bind:ident, $list:ident;)*) => {$(
        // SAFETY: binds exactly the declared shape/type.
        unsafe impl<T: Element> Field for $dir<T> {
            const DIR: FieldDir = $d;
            const SHAPE: FieldShape = FieldShape::Scalar;
            const DTYPE: DType = T::DTYPE;
            type Ref<'a> = $scalar_ref;
            unsafe fn bind<'a>(io: &VertexIo<'a>, idx: usize) -> Self::Ref<'a> {
                let p = io.ptr::<T>(io.fields[idx]);
                // SAFETY: caller contract of Field::bind.
                unsafe { $scalar_bind!(p) }
            }
        }
        // SAFETY: binds exactly the declared shape/type.
        unsafe impl<T: Element> Field for $dir<Vector<T>> {
            const DIR: FieldDir = $d;
            const SHAPE: FieldShape = FieldShape::Vector;
            const DTYPE: DType = T::DTYPE;
            type Ref<'a> = $vec_ref;
            unsafe fn bind<'a>(io: &VertexIo<'a>, idx: usize) -> Self::Ref<'a> {
                let loc = io.fields[idx];
                let p = io.ptr::<T>(loc);
                // SAFETY: caller contract of Field::bind.
                unsafe { $vec_bind(p, loc.len as usize) }
            }
        }
    )*};
}

macro_rules! read_scalar {
    ($p:expr) => {
        *$p
    };
}
macro_rules! mut_scalar {
    ($p:expr) => {
        &mut *$p
    };
}

impl_fields! {
    Input => FieldDir::Input, T, read_scalar, &'a [T], slice_ref, ListRef;
    Output => FieldDir::Output, &'a mut T, mut_scalar, &'a mut [T], slice_mut, ListMut;
    InOut => FieldDir::InOut, &'a mut T, mut_scalar, &'a mut [T], slice_mut, ListMut;
    State => FieldDir::State, T, read_scalar, &'a [T], slice_ref, ListRef;
}

unsafe fn slice_ref<'a, T>(p: *mut T, n: usize) -> &'a [T] {
    // SAFETY: forwarded from Field::bind.
    unsafe { std::slice::from_raw_parts(p, n) }
}
unsafe fn slice_mut<'a, T>(p: *mut T, n: usize) -> &'a mut [T] {
    // SAFETY: forwarded from Field::bind.
    unsafe { std::slice::from_raw_parts_mut(p, n) }
}

macro_rules! impl_lists {
    ($($dir:ident => $d:expr, $list:ident, $base:ident;)*) => {$(
        // SAFETY: binds exactly the declared shape/type.
        unsafe impl<T: Element> Field for $dir<VectorList<T>> {
            const DIR: FieldDir = $d;
            const SHAPE: FieldShape = FieldShape::VectorList;
            const DTYPE: DType = T::DTYPE;
            type Ref<'a> = $list<'a, T>;
            unsafe fn bind<'a>(io: &VertexIo<'a>, idx: usize) -> Self::Ref<'a> {
                let loc = io.fields[idx];
                let locs = &io.lists[loc.offset as usize..(loc.offset + loc.len) as usize];
                $list { io_base: io.base as $base, locs, _t: PhantomData }
            }
        }
    )*};
}

impl_lists! {
    Input => FieldDir::Input, ListRef, _ConstPtr;
    Output => FieldDir::Output, ListMut, _MutPtr;
    InOut => FieldDir::InOut, ListMut, _MutPtr;
}

type _ConstPtr = *const u8;
type _MutPtr = *mut u8;
