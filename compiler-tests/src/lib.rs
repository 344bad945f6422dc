//! Shared fixtures of the compiler tests: a few tiny codelets whose fields exercise every
//! binding kind. The tests themselves are in `tests/`.

use poplar::codelet::*;

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
    /// `out = sum of all sub-vectors`.
    pub struct ListSum as "test::ListSum" {
        parts: Input<VectorList<f32>>,
        out: Output<f32>,
    }
}
impl Vertex for ListSum<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        *self.out = self.parts.iter().map(|p| p.iter().sum::<f32>()).sum();
        Ok(())
    }
}

poplar::codelet! {
    /// Does nothing: for measuring overheads.
    pub struct Empty as "test::Empty" {}
}
impl Vertex for Empty<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        Ok(())
    }
}

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
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

pub mod random;
pub mod ranks;
pub mod remote;

/// Forces the linker to keep this crate's registrations.
pub fn link() {}

/// Compares `actual` with the golden file `compiler-tests/golden/<name>.txt`, the expected
/// text written out in full (offsets included: never derived from the compiler's output).
///
/// To regenerate the files after an intended change, run
/// `UPDATE_GOLDEN=1 cargo test -p compiler-tests`, then review the diff of `golden/` before
/// committing. A mismatch fails with both texts and the first differing line.
pub fn golden(name: &str, actual: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "golden file {} cannot be read ({e}); create it with UPDATE_GOLDEN=1 cargo test -p compiler-tests",
            path.display()
        )
    });
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the compiler's output at line {}:\n--- expected\n{expected}--- actual\n{actual}\
             (if the change is intended: UPDATE_GOLDEN=1 cargo test -p compiler-tests, then review the diff)",
            path.display(),
            first + 1
        );
    }
}
