//! Shared helpers of the engine and executable-file tests: test codelets and a small builder of
//! hand-made executables (the compiler is not used).
#![allow(dead_code)]

use poplar::codelet::*;
use poplar::exe::StreamDir;
use poplar::exe::*;
use poplar::{DType, Target};

poplar::codelet! {
    /// `out[i] = a[i] * k`
    pub struct Scale as "test::Scale" {
        a: Input<Vector<f32>>,
        out: Output<Vector<f32>>,
        k: State<f32>,
    }
}
impl Vertex for Scale<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        for (o, a) in self.out.iter_mut().zip(self.a.iter()) {
            *o = a * self.k;
        }
        Ok(())
    }
}

poplar::codelet! {
    /// `test::Scale` reporting its progress (`Worker::progress`) before every element, plus
    /// calls with out-of-range and zero totals: the hint must change nothing.
    pub struct ScaleProgress as "test::ScaleProgress" {
        a: Input<Vector<f32>>,
        out: Output<Vector<f32>>,
        k: State<f32>,
    }
}
impl Vertex for ScaleProgress<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let n = self.out.len();
        w.progress(0, 0);
        for (i, (o, a)) in self.out.iter_mut().zip(self.a.iter()).enumerate() {
            w.progress(i + 1, n);
            *o = a * self.k;
        }
        w.progress(2 * n + 7, n);
        w.progress(usize::MAX, usize::MAX);
        Ok(())
    }
}

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
    /// `n -= 1; more = n > 0`
    pub struct Countdown as "test::Countdown" {
        n: InOut<i32>,
        more: Output<bool>,
    }
}
impl Vertex for Countdown<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        *self.n -= 1;
        *self.more = *self.n > 0;
        Ok(())
    }
}

poplar::codelet! {
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

poplar::codelet! {
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

poplar::codelet! {
    /// Does nothing (superstep overhead benchmarks).
    pub struct Nop as "test::Nop" {}
}
impl Vertex for Nop<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        Ok(())
    }
}

/// The executable's reference to a registered codelet.
pub fn cref(name: &str) -> CodeletRef {
    let d = lookup(name).unwrap_or_else(|| panic!("test codelet {name} not registered"));
    CodeletRef {
        name: d.name.to_string(),
        signature: d.signature(),
        fields: d.fields.iter().map(FieldKind::from).collect(),
        multi_worker: d.multi_worker,
    }
}

pub fn loc(offset: u32, len: u32) -> FieldLoc {
    FieldLoc { offset, len }
}

pub fn run(tile: u32, offset: u32, bytes: u32) -> MemRun {
    MemRun {
        tile: tile.into(),
        offset,
        bytes,
    }
}

pub fn f32_bytes(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn u32_bytes(xs: &[u32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `exe` as an engine keeps it: every init block's offset and length, none of its bytes.
pub fn without_init_data(exe: &Executable) -> Executable {
    let mut e = exe.clone();
    for b in e.tiles.iter_mut().flat_map(|t| &mut t.init) {
        b.data = Default::default();
    }
    e
}

pub fn init(offset: u32, data: Vec<u8>) -> InitBlock {
    InitBlock {
        offset,
        len: data.len() as u32,
        data: data.into(),
    }
}

/// A hand-made executable under construction.
pub struct Builder {
    pub exe: Executable,
}

impl Builder {
    /// `tiles` tiles of `mem` bytes each, on a target with `budget` bytes per tile.
    pub fn new(tiles: u32, mem: u32) -> Builder {
        Builder::with_target(Target::custom(tiles, 64 * 1024), mem)
    }

    pub fn with_target(target: Target, mem: u32) -> Builder {
        let n = target.num_tiles() as usize;
        Builder {
            exe: Executable {
                target,
                replication: None,
                codelets: Default::default(),
                tiles: (0..n)
                    .map(|_| TileImage {
                        memory_bytes: mem,
                        ..Default::default()
                    })
                    .collect(),
                computes: Default::default(),
                exchanges: Default::default(),
                programs: Vec::new(),
                functions: Default::default(),
                host_tensors: Vec::new(),
                streams: Vec::new(),
                remote_buffers: Default::default(),
                remote_copies: Default::default(),
                variable_names: Vec::new(),
                app_sections: Default::default(),
            },
        }
    }

    /// Index of codelet `name`, adding it if new.
    pub fn codelet(&mut self, name: &str) -> u32 {
        if let Some(i) = self.exe.codelets.values().position(|c| c.name == name) {
            return i as u32;
        }
        self.exe.codelets.push(cref(name));
        self.exe.codelets.len() as u32 - 1
    }

    pub fn init(&mut self, tile: u32, offset: u32, data: Vec<u8>) {
        self.exe.tiles[tile as usize].init.push(init(offset, data));
    }

    pub fn init_f32(&mut self, tile: u32, offset: u32, xs: &[f32]) {
        self.init(tile, offset, f32_bytes(xs));
    }

    /// A host tensor of `dtype` over `runs` (shape is the element count).
    pub fn host(&mut self, name: &str, dtype: DType, runs: Vec<MemRun>) {
        let elems = runs.iter().map(|r| r.bytes as usize).sum::<usize>() / dtype.size();
        self.exe.host_tensors.push(HostTensor {
            name: name.to_string(),
            dtype,
            shape: vec![elems],
            runs,
            writable: true,
            readable: true,
        });
    }

    pub fn stream(&mut self, name: &str, dtype: DType, len: usize, dir: StreamDir) -> u32 {
        self.exe.streams.push(StreamDesc {
            name: name.to_string(),
            dtype,
            len,
            dir,
            buffering_depth: 1,
        });
        self.exe.streams.len() as u32 - 1
    }

    pub fn vertex(
        &mut self,
        codelet: &str,
        id: u32,
        fields: Vec<FieldLoc>,
        lists: Vec<FieldLoc>,
    ) -> VertexInst {
        VertexInst {
            codelet: poplar::exe::CodeletId::from_u32(self.codelet(codelet)),
            id,
            fields,
            lists,
            cycles: 10,
            cycles_estimated: false,
        }
    }

    /// Adds a compute phase; returns its index.
    pub fn compute(&mut self, name: &str, tiles: Vec<TileCompute>) -> u32 {
        self.exe.computes.push(ComputePhase {
            name: name.to_string(),
            tiles,
        });
        self.exe.computes.len() as u32 - 1
    }

    /// A compute phase with one vertex on each given tile.
    pub fn compute_simple(&mut self, name: &str, vertices: Vec<(u32, VertexInst)>) -> u32 {
        let tiles = vertices
            .into_iter()
            .map(|(tile, v)| TileCompute {
                tile: tile.into(),
                pre_copies: vec![],
                vertices: vec![v],
                post_copies: vec![],
            })
            .collect();
        self.compute(name, tiles)
    }

    pub fn exchange(&mut self, name: &str, transfers: Vec<Transfer>) -> u32 {
        self.exe.exchanges.push(ExchangePhase {
            name: name.to_string(),
            transfers,
            cross_replica: Vec::new(),
        });
        self.exe.exchanges.len() as u32 - 1
    }

    pub fn program(&mut self, step: Step) -> usize {
        self.exe.programs.push(step);
        self.exe.programs.len() - 1
    }

    pub fn function(&mut self, step: Step) -> u32 {
        self.exe.functions.push(step);
        self.exe.functions.len() as u32 - 1
    }

    pub fn build(self) -> Executable {
        self.exe
    }
}

pub fn transfer(src_tile: u32, src_offset: u32, bytes: u32, dsts: Vec<(u32, u32)>) -> Transfer {
    Transfer {
        src_tile: src_tile.into(),
        src_offset,
        bytes,
        dsts: dsts.into_iter().map(|(t, o)| (t.into(), o)).collect(),
    }
}

pub fn scalar(tile: u32, offset: u32, dtype: DType) -> ScalarLoc {
    ScalarLoc {
        tile: tile.into(),
        offset,
        dtype,
    }
}

pub fn opts(threads: usize) -> poplar::EngineOptions {
    poplar::EngineOptions::with_threads(threads)
}

/// A mid-sized executable touching most features, used by determinism and file tests:
/// 8 tiles; every tile scales its block, a ring exchange shifts blocks, a broadcast, repeated.
pub fn sample_exe() -> Executable {
    let tiles = 8u32;
    let n = 64u32; // elements per block
    let mut b = Builder::new(tiles, 4096);
    // Layout per tile: x at 0 (n f32), y at 256 (n f32), k state at 512, incoming at 1024.
    let mut computes = Vec::new();
    for t in 0..tiles {
        let xs: Vec<f32> = (0..n).map(|i| (t * n + i) as f32 * 0.37 - 3.0).collect();
        b.init_f32(t, 0, &xs);
        b.init_f32(t, 512, &[1.0 + t as f32 * 0.01]);
        let scale = b.vertex(
            "test::Scale",
            2 * t,
            vec![loc(0, n), loc(256, n), loc(512, 1)],
            vec![],
        );
        let add = b.vertex(
            "test::AddTo",
            2 * t + 1,
            vec![loc(256, n), loc(1024, n)],
            vec![],
        );
        computes.push(TileCompute {
            tile: t.into(),
            pre_copies: vec![],
            vertices: vec![scale, add],
            post_copies: vec![LocalCopy {
                src: 256,
                dst: 0,
                bytes: n * 4,
            }],
        });
    }
    let c = b.compute("scale_add", computes);
    let ring = (0..tiles)
        .map(|t| transfer(t, 0, n * 4, vec![((t + 1) % tiles, 1024)]))
        .collect();
    let e = b.exchange("ring", ring);
    let bcast = b.exchange(
        "bcast",
        vec![transfer(0, 0, 16, (1..tiles).map(|t| (t, 2048)).collect())],
    );
    b.host("x0", DType::F32, vec![run(0, 0, n * 4)]);
    b.host(
        "all",
        DType::F32,
        (0..tiles).map(|t| run(t, 0, n * 4)).collect(),
    );
    b.exe.variable_names = vec!["x".into(), "y".into()];
    b.program(Step::Repeat {
        count: 5,
        body: Box::new(Step::Seq(vec![
            Step::Exchange(poplar::exe::ExchangePhaseId::from_u32(e)),
            Step::Sync(SyncKind::Internal),
            Step::Compute(poplar::exe::ComputePhaseId::from_u32(c)),
            Step::Exchange(poplar::exe::ExchangePhaseId::from_u32(bcast as u32)),
        ])),
    });
    b.build()
}
