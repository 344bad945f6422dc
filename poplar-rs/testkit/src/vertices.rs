//! The test codelets, one definition per name: every framework crate's tests use these (by
//! name, `"test::…"`), so that one test binary may link them all. A test binary registers them
//! only if it links this crate: call [`crate::link`] where nothing else of it is used.

use poplar_core::codelet::*;

poplar_core::codelet! {
    /// `out = sum(in)`.
    pub struct Sum as "test::Sum" {
        input: Input<Vector<f32>>,
        out: Output<f32>,
    }
}
impl Vertex for Sum<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        *self.out = self.input.iter().sum();
        Ok(())
    }
    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        Some(10 + ctx.elements(Self::input))
    }
}

poplar_core::codelet! {
    /// `out[i] = in[i] * k`.
    pub struct Scale as "test::Scale" {
        input: Input<Vector<f32>>,
        out: Output<Vector<f32>>,
        k: State<f32>,
    }
}
impl Vertex for Scale<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        if self.input.len() != self.out.len() {
            return Err(VertexError::new("input and out differ in length"));
        }
        for (o, i) in self.out.iter_mut().zip(self.input.iter()) {
            *o = i * self.k;
        }
        Ok(())
    }
}

poplar_core::codelet! {
    /// `x[i] += 1`.
    pub struct Inc as "test::Inc" {
        x: InOut<Vector<f32>>,
    }
}
impl Vertex for Inc<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        self.x.iter_mut().for_each(|v| *v += 1.0);
        Ok(())
    }
}

poplar_core::codelet! {
    /// `x[i] += n` for a count `n` given as state.
    pub struct AddCount as "test::AddCount" {
        x: InOut<Vector<f32>>,
        n: State<u32>,
    }
}
impl Vertex for AddCount<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let n = self.n as f32;
        self.x.iter_mut().for_each(|v| *v += n);
        Ok(())
    }
}

poplar_core::codelet! {
    /// `x[i] += k * y[i]`.
    pub struct AddScaled as "test::AddScaled" {
        x: InOut<Vector<f32>>,
        y: Input<Vector<f32>>,
        k: State<f32>,
    }
}
impl Vertex for AddScaled<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        if self.x.len() != self.y.len() {
            return Err(VertexError::new("x and y differ in length"));
        }
        let k = self.k;
        for (x, y) in self.x.iter_mut().zip(self.y.iter()) {
            *x += k * y;
        }
        Ok(())
    }
}

poplar_core::codelet! {
    /// `x[i] += k * s` for a scalar `s` (read from wherever it lives: a broadcast).
    pub struct AddScalar as "test::AddScalar" {
        x: InOut<Vector<f32>>,
        s: Input<f32>,
        k: State<f32>,
    }
}
impl Vertex for AddScalar<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let add = self.k * self.s;
        self.x.iter_mut().for_each(|v| *v += add);
        Ok(())
    }
}

poplar_core::codelet! {
    /// `n -= 1; go = n > 0`: the condition of a counted loop.
    pub struct CountDown as "test::CountDown" {
        n: InOut<i32>,
        go: Output<bool>,
    }
}
impl Vertex for CountDown<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        *self.n -= 1;
        *self.go = *self.n > 0;
        Ok(())
    }
}

poplar_core::codelet! {
    /// Fails when `x` exceeds `limit` (a vertex failure on demand).
    pub struct FailAbove as "test::FailAbove" {
        x: Input<f32>,
        limit: State<f32>,
    }
}
impl Vertex for FailAbove<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        if self.x > self.limit {
            return Err(VertexError::new(format!(
                "x = {} is above the limit {}",
                self.x, self.limit
            )));
        }
        Ok(())
    }
}

poplar_core::codelet! {
    /// Ends the process with status `code` when `x` exceeds `limit`: a rank that dies in the
    /// middle of a run (for the multi-rank checks only).
    pub struct ExitAbove as "test::ExitAbove" {
        x: Input<f32>,
        limit: State<f32>,
        code: State<i32>,
    }
}
impl Vertex for ExitAbove<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        if self.x > self.limit {
            std::process::exit(self.code);
        }
        Ok(())
    }
}

poplar_core::codelet! {
    /// `rows[i] += by`: offsets of remote-buffer copies computed on the device.
    pub struct BumpRows as "test::BumpRows" {
        rows: InOut<Vector<i32>>,
        by: State<i32>,
    }
}
impl Vertex for BumpRows<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let by = self.by;
        self.rows.iter_mut().for_each(|r| *r = r.wrapping_add(by));
        Ok(())
    }
}

poplar_core::codelet! {
    /// `test::Scale` reporting its progress (`Worker::progress`) before every element, plus
    /// calls with out-of-range and zero totals: the hint must change nothing.
    pub struct ScaleProgress as "test::ScaleProgress" {
        input: Input<Vector<f32>>,
        out: Output<Vector<f32>>,
        k: State<f32>,
    }
}
impl Vertex for ScaleProgress<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let n = self.out.len();
        w.progress(0, 0);
        for (i, (o, a)) in self.out.iter_mut().zip(self.input.iter()).enumerate() {
            w.progress(i + 1, n);
            *o = a * self.k;
        }
        w.progress(2 * n + 7, n);
        w.progress(usize::MAX, usize::MAX);
        Ok(())
    }
}

poplar_core::codelet! {
    /// `x[i] += y[i]`
    pub struct AddTo as "test::AddTo" {
        x: InOut<Vector<f32>>,
        y: Input<Vector<f32>>,
    }
}
impl Vertex for AddTo<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        for (x, y) in self.x.iter_mut().zip(self.y.iter()) {
            *x += y;
        }
        Ok(())
    }
}

poplar_core::codelet! {
    /// Each worker adds `100 * calls_so_far + id + 1` to `out[id]` and bumps `calls`: checks
    /// that workers run once each, in id order.
    pub struct Workers as "test::Workers", multi_worker {
        out: InOut<Vector<u32>>,
        calls: InOut<u32>,
    }
}
impl Vertex for Workers<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        if self.out.len() != w.count as usize {
            return Err(VertexError::new(format!(
                "expected {} workers",
                self.out.len()
            )));
        }
        self.out[w.id as usize] += 100 * *self.calls + w.id + 1;
        *self.calls += 1;
        Ok(())
    }
}

poplar_core::codelet! {
    /// `out = sum of all elements of all sub-vectors`
    pub struct ListSum as "test::ListSum" {
        xs: Input<VectorList<f32>>,
        out: Output<f32>,
    }
}
impl Vertex for ListSum<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        *self.out = self.xs.iter().map(|v| v.iter().sum::<f32>()).sum();
        Ok(())
    }
}

poplar_core::codelet! {
    /// Fills sub-vector `i` with `v + i`.
    pub struct ListFill as "test::ListFill" {
        xs: Output<VectorList<f32>>,
        v: State<f32>,
    }
}
impl Vertex for ListFill<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        for i in 0..self.xs.len() {
            let v = self.v + i as f32;
            self.xs.get_mut(i).fill(v);
        }
        Ok(())
    }
}

poplar_core::codelet! {
    /// Fails when `x < 0`.
    pub struct FailNeg as "test::FailNeg" {
        x: Input<f32>,
    }
}
impl Vertex for FailNeg<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        if self.x < 0.0 {
            return Err(VertexError::new(format!("negative input {}", self.x)));
        }
        Ok(())
    }
}

poplar_core::codelet! {
    /// Panics when `x < 0`.
    pub struct PanicNeg as "test::PanicNeg" {
        x: Input<f32>,
    }
}
impl Vertex for PanicNeg<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        if self.x < 0.0 {
            panic!("boom on {}", self.x);
        }
        Ok(())
    }
}

poplar_core::codelet! {
    /// `out[i] = a[i] / b[i]`
    pub struct Div as "test::Div" {
        a: Input<Vector<f32>>,
        b: Input<Vector<f32>>,
        out: Output<Vector<f32>>,
    }
}
impl Vertex for Div<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        for ((o, a), b) in self.out.iter_mut().zip(self.a.iter()).zip(self.b.iter()) {
            *o = a / b;
        }
        Ok(())
    }
}

poplar_core::codelet! {
    /// `c += 1`
    pub struct Incr as "test::Incr" {
        c: InOut<u32>,
    }
}
impl Vertex for Incr<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        *self.c += 1;
        Ok(())
    }
}

poplar_core::codelet! {
    /// Copies bools to u32 (to observe how the engine presents bool memory).
    pub struct BoolToU32 as "test::BoolToU32" {
        b: Input<Vector<bool>>,
        out: Output<Vector<u32>>,
    }
}
impl Vertex for BoolToU32<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        for (o, b) in self.out.iter_mut().zip(self.b.iter()) {
            *o = u32::from(*b);
        }
        Ok(())
    }
}

poplar_core::codelet! {
    /// Does nothing (superstep overhead benchmarks).
    pub struct Nop as "test::Nop" {}
}
impl Vertex for Nop<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        Ok(())
    }
}
