//! The remote-buffer case shared by the in-process checks (`poplar-rs/engine/tests/remote.rs`)
//! and the MPI checks (`poplar-rs/engine/tests/mpi.rs`): one buffer of every element type on two chips, rows read
//! and written at offsets a vertex computes, and a host model of the same rows.
//!
//! The graph: 2 chips of 3 tiles. For each dtype, a buffer of 6 rows of 5 elements on chip
//! `d % 2`, a tensor `t` of 2 rows spread over that chip's tiles, and an offset tensor `off`
//! (2 × i32) on the chip's last tile. Program 0 copies rows `off` into `t` and adds 1 to
//! `off`; program 1 copies `t` into rows `off2` (written by the host); program 2 copies rows
//! 0..2 into `t` (no offset tensor).

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::Graph;
use poplar_compiler::{compile, CompileOptions};
use poplar_core::dtype::{from_le_bytes, to_le_bytes, DType};
use poplar_core::rand::SplitMix64;
use poplar_core::target::Target;
use poplar_engine::dist::Ranks;
use poplar_engine::{Engine, EngineError, EngineOptions};

/// Every element type a remote buffer can hold.
pub const DTYPES: [DType; 7] = [
    DType::F32,
    DType::F16,
    DType::I32,
    DType::U32,
    DType::U16,
    DType::U8,
    DType::Bool,
];
const ROWS: u64 = 6;
const ELEMS: u64 = 5;

/// What the case ends with, per dtype in [`DTYPES`] order: every buffer's bytes and `t`'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteResult {
    pub buffers: Vec<Vec<u8>>,
    pub tensors: Vec<Vec<u8>>,
}

/// Deterministic bytes of a buffer of `dtype` (bools 0 or 1).
pub fn initial_bytes(dtype: DType) -> Vec<u8> {
    let n = (ROWS * ELEMS) as usize * dtype.size();
    let mut rng = SplitMix64::new(dtype.size() as u64 ^ ((dtype as u64) << 17));
    (0..n)
        .map(|_| {
            let b = rng.next_u32() as u8;
            if dtype == DType::Bool {
                b & 1
            } else {
                b
            }
        })
        .collect()
}

/// The graph and its three programs.
pub fn remote_graph() -> (Graph, Vec<Program>) {
    let target = Target {
        num_ipus: 2,
        ..Target::custom(3, 16 * 1024)
    };
    let mut g = Graph::new(&target);
    let (mut p0, mut p1, mut p2) = (Vec::new(), Vec::new(), Vec::new());
    let bump = g.add_compute_set("bump offsets");
    for (d, &dtype) in DTYPES.iter().enumerate() {
        let chip = (d % 2) as u32;
        let name = format!("{dtype}");
        let buf = g
            .add_remote_buffer_on_chip(&name, dtype, ELEMS, ROWS, chip)
            .unwrap();
        let t = g.add_variable(dtype, &[2, ELEMS as usize], &format!("t {name}"));
        g.map_linearly_over(&t, 1, chip * 3..chip * 3 + 3).unwrap();
        let off = g.add_variable(DType::I32, &[2], &format!("off {name}"));
        let off2 = g.add_variable(DType::I32, &[2], &format!("off2 {name}"));
        g.set_tile_mapping(&off, chip * 3 + 2).unwrap();
        g.set_tile_mapping(&off2, chip * 3 + 1).unwrap();
        for (h, x) in [("t", &t), ("off", &off), ("off2", &off2)] {
            g.create_host_read_write(&format!("{h} {name}"), x).unwrap();
        }
        let v = g.add_vertex(bump, "test::BumpRows").unwrap();
        g.connect(v, "rows", &off).unwrap();
        g.set_vertex_state(v, "by", 1i32).unwrap();
        g.set_tile_mapping(v, chip * 3 + 2).unwrap();
        p0.push(Program::copy_from_remote(buf, &t, Some(&off)));
        p1.push(Program::copy_to_remote(&t, buf, Some(&off2)));
        p2.push(Program::copy_from_remote(buf, &t, None));
    }
    p0.push(Program::execute(bump));
    (
        g,
        vec![Program::seq(p0), Program::seq(p1), Program::seq(p2)],
    )
}

/// Runs `f` with `T` the element type of `dtype`.
macro_rules! with_element {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            DType::F32 => {
                type $t = f32;
                $body
            }
            DType::F16 => {
                type $t = poplar_core::f16;
                $body
            }
            DType::I32 => {
                type $t = i32;
                $body
            }
            DType::U32 => {
                type $t = u32;
                $body
            }
            DType::U16 => {
                type $t = u16;
                $body
            }
            DType::U8 => {
                type $t = u8;
                $body
            }
            DType::Bool => {
                type $t = bool;
                $body
            }
        }
    };
}

/// Runs the case: buffers written by the host, program 0 with offsets (3, 0), program 1
/// with offsets (5, 1), program 0 again (offsets now (4, 1)); returns every buffer and `t`.
pub fn run_remote(threads: usize, ranks: Option<Ranks>) -> Result<RemoteResult, EngineError> {
    crate::link();
    let (g, progs) = remote_graph();
    let exe = compile(&g, &progs, &CompileOptions::default()).expect("the remote case compiles");
    let mut e = Engine::new(
        &exe,
        EngineOptions {
            ranks,
            ..EngineOptions::with_threads(threads)
        },
    )?;
    for &dtype in &DTYPES {
        let name = format!("{dtype}");
        with_element!(dtype, T => e.write_remote_buffer::<T>(&name, &from_le_bytes::<T>(&initial_bytes(dtype)))?);
        e.write_tensor(&format!("off {name}"), &[3i32, 0])?;
        e.write_tensor(&format!("off2 {name}"), &[5i32, 1])?;
    }
    e.run(0)?;
    e.run(1)?;
    e.run(0)?;
    let mut out = RemoteResult {
        buffers: Vec::new(),
        tensors: Vec::new(),
    };
    for &dtype in &DTYPES {
        let name = format!("{dtype}");
        with_element!(dtype, T => {
            out.buffers.push(to_le_bytes(&e.read_remote_buffer::<T>(&name)?));
            out.tensors.push(to_le_bytes(&e.read_tensor::<T>(&format!("t {name}"))?));
        });
    }
    Ok(out)
}

/// The host model of [`run_remote`]: the same rows moved in the same order.
pub fn remote_expect() -> RemoteResult {
    let mut out = RemoteResult {
        buffers: Vec::new(),
        tensors: Vec::new(),
    };
    for &dtype in &DTYPES {
        let row = ELEMS as usize * dtype.size();
        let mut rows: Vec<Vec<u8>> = initial_bytes(dtype)
            .chunks(row)
            .map(<[u8]>::to_vec)
            .collect();
        let read =
            |rows: &[Vec<u8>], a: usize, b: usize| [rows[a].clone(), rows[b].clone()].concat();
        let t = read(&rows, 3, 0); // program 0, offsets (3, 0)
        rows[5] = t[..row].to_vec(); // program 1, offsets (5, 1)
        rows[1] = t[row..].to_vec();
        let t = read(&rows, 4, 1); // program 0 again, offsets (4, 1)
        out.buffers.push(rows.concat());
        out.tensors.push(t);
    }
    out
}
