//! A small builder of hand-made executables (the compiler is not used), for the tests of the
//! engine, the executable file and profiles, and the helpers they share.

use poplar_core::codelet::{lookup, FieldLoc};
use poplar_core::dtype::DType;
use poplar_core::target::Target;
use poplar_exe::exe::*;

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
            codelet: poplar_exe::exe::CodeletId::from_u32(self.codelet(codelet)),
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

pub fn opts(threads: usize) -> poplar_engine::EngineOptions {
    poplar_engine::EngineOptions::with_threads(threads)
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
            Step::Exchange(poplar_exe::exe::ExchangePhaseId::from_u32(e)),
            Step::Sync(SyncKind::Internal),
            Step::Compute(poplar_exe::exe::ComputePhaseId::from_u32(c)),
            Step::Exchange(poplar_exe::exe::ExchangePhaseId::from_u32(bcast as u32)),
        ])),
    });
    b.build()
}
