//! Test harness: runs one vertex (or an ops-built graph) through graph → compile → Engine.
#![allow(dead_code)]

use poplar::graph::StateValue;
use poplar::rand::SplitMix64;
use poplar::{
    compile, CompileOptions, DType, Element, Engine, EngineOptions, Graph, Program, Target, Tensor,
};

/// Tiles of the test target.
pub const TILES: u32 = 4;

pub fn target() -> Target {
    Target::custom(TILES, 256 * 1024)
}

/// The tests' deterministic generator (poplar's SplitMix64), so failures reproduce.
pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in `[lo, hi)`.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        self.0.f32_in(lo, hi)
    }
    pub fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32_in(-8.0, 8.0)).collect()
    }
    /// Full-range integers, so wrapping arithmetic is exercised.
    pub fn i32s(&mut self, n: usize) -> Vec<i32> {
        (0..n).map(|_| self.next_u64() as i32).collect()
    }
    pub fn u32s(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| self.next_u64() as u32).collect()
    }
    /// Small integers (for sums and dot products that should not wrap).
    pub fn small_i32s(&mut self, n: usize) -> Vec<i32> {
        (0..n)
            .map(|_| (self.next_u64() % 2001) as i32 - 1000)
            .collect()
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
    pub fn u16s(&mut self, n: usize) -> Vec<u16> {
        (0..n).map(|_| self.next_u64() as u16).collect()
    }
    pub fn bools(&mut self, n: usize) -> Vec<bool> {
        (0..n).map(|_| self.next_u64() & 1 == 1).collect()
    }
}

/// Host data of one field, of any element type.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    F32(Vec<f32>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    Bool(Vec<bool>),
    U8(Vec<u8>),
    U16(Vec<u16>),
}

impl Data {
    pub fn dtype(&self) -> DType {
        match self {
            Data::F32(_) => DType::F32,
            Data::I32(_) => DType::I32,
            Data::U32(_) => DType::U32,
            Data::Bool(_) => DType::Bool,
            Data::U8(_) => DType::U8,
            Data::U16(_) => DType::U16,
        }
    }
    pub fn len(&self) -> usize {
        match self {
            Data::F32(v) => v.len(),
            Data::I32(v) => v.len(),
            Data::U32(v) => v.len(),
            Data::Bool(v) => v.len(),
            Data::U8(v) => v.len(),
            Data::U16(v) => v.len(),
        }
    }
    fn write(&self, e: &mut Engine, name: &str) {
        match self {
            Data::F32(v) => e.write_tensor(name, v),
            Data::I32(v) => e.write_tensor(name, v),
            Data::U32(v) => e.write_tensor(name, v),
            Data::Bool(v) => e.write_tensor(name, v),
            Data::U8(v) => e.write_tensor(name, v),
            Data::U16(v) => e.write_tensor(name, v),
        }
        .unwrap()
    }
    fn read(e: &Engine, name: &str, dtype: DType) -> Data {
        match dtype {
            DType::F32 => Data::F32(e.read_tensor(name).unwrap()),
            DType::I32 => Data::I32(e.read_tensor(name).unwrap()),
            DType::U32 => Data::U32(e.read_tensor(name).unwrap()),
            DType::Bool => Data::Bool(e.read_tensor(name).unwrap()),
            DType::U8 => Data::U8(e.read_tensor(name).unwrap()),
            DType::U16 => Data::U16(e.read_tensor(name).unwrap()),
            d => panic!("no test data type for {d}"),
        }
    }
}

impl From<Vec<f32>> for Data {
    fn from(v: Vec<f32>) -> Data {
        Data::F32(v)
    }
}
impl From<Vec<i32>> for Data {
    fn from(v: Vec<i32>) -> Data {
        Data::I32(v)
    }
}
impl From<Vec<u32>> for Data {
    fn from(v: Vec<u32>) -> Data {
        Data::U32(v)
    }
}
impl From<Vec<bool>> for Data {
    fn from(v: Vec<bool>) -> Data {
        Data::Bool(v)
    }
}
impl From<Vec<u8>> for Data {
    fn from(v: Vec<u8>) -> Data {
        Data::U8(v)
    }
}
impl From<Vec<u16>> for Data {
    fn from(v: Vec<u16>) -> Data {
        Data::U16(v)
    }
}

/// Typed access to results.
pub trait FromData: Sized {
    fn from_data(d: &Data) -> Vec<Self>;
}
macro_rules! from_data {
    ($($t:ty => $v:ident),*) => {$(
        impl FromData for $t {
            fn from_data(d: &Data) -> Vec<$t> {
                match d {
                    Data::$v(v) => v.clone(),
                    other => panic!("expected {} data, got {other:?}", stringify!($t)),
                }
            }
        }
    )*};
}
from_data!(f32 => F32, i32 => I32, u32 => U32, bool => Bool, u8 => U8, u16 => U16);

/// How one field of the vertex under test is connected.
pub enum Conn {
    /// An input vector (or scalar if `scalar`) holding this data.
    In(Data),
    /// An in/out vector starting with this data; read back after the run.
    InOut(Data),
    /// An output vector of this type and length; read back after the run.
    Out(DType, usize),
    /// An output scalar (one element).
    OutScalar(DType),
    /// A list of input vectors.
    List(Vec<Data>),
    /// A state value.
    State(StateValue),
}

/// Runs one vertex of `codelet` on tile `TILES - 1`. Field `k`'s tensor lives on tile
/// `k % TILES`, so most operands travel through the exchange. Returns the written fields.
pub fn run_vertex(codelet: &str, fields: Vec<(&str, Conn)>) -> Result<Vec<(String, Data)>, String> {
    codelets::link();
    let mut g = Graph::new(&target());
    let cs = g.add_compute_set("test");
    let v = g.add_vertex(cs, codelet).unwrap();
    g.set_tile_mapping(v, TILES - 1).unwrap();
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let mut k = 0u32;
    let mut var = |g: &mut Graph, dtype: DType, shape: &[usize], name: &str| -> Tensor {
        let t = g.add_variable(dtype, shape, name);
        g.set_tile_mapping(&t, k % TILES).unwrap();
        k += 1;
        t
    };
    for (field, conn) in fields {
        match conn {
            Conn::In(d) => {
                let t = var(&mut g, d.dtype(), &[d.len()], field);
                g.create_host_write(field, &t).unwrap();
                g.connect(v, field, &t).unwrap();
                inputs.push((field.to_string(), d));
            }
            Conn::InOut(d) => {
                let t = var(&mut g, d.dtype(), &[d.len()], field);
                g.create_host_read_write(field, &t).unwrap();
                g.connect(v, field, &t).unwrap();
                outputs.push((field.to_string(), d.dtype()));
                inputs.push((field.to_string(), d));
            }
            Conn::Out(dtype, n) => {
                let t = var(&mut g, dtype, &[n], field);
                g.create_host_read(field, &t).unwrap();
                g.connect(v, field, &t).unwrap();
                outputs.push((field.to_string(), dtype));
            }
            Conn::OutScalar(dtype) => {
                let t = var(&mut g, dtype, &[1], field);
                g.create_host_read(field, &t).unwrap();
                g.connect(v, field, &t).unwrap();
                outputs.push((field.to_string(), dtype));
            }
            Conn::List(ds) => {
                let mut ts = Vec::new();
                for (i, d) in ds.into_iter().enumerate() {
                    let name = format!("{field}[{i}]");
                    let t = var(&mut g, d.dtype(), &[d.len()], &name);
                    g.create_host_write(&name, &t).unwrap();
                    ts.push(t);
                    inputs.push((name, d));
                }
                g.connect_list(v, field, &ts).unwrap();
            }
            Conn::State(s) => g.set_vertex_state(v, field, s).unwrap(),
        }
    }
    let exe = compile(&g, &[Program::execute(cs)], &CompileOptions::default())
        .map_err(|e| format!("compile: {e}"))?;
    let mut e = engine(&exe);
    for (name, d) in &inputs {
        d.write(&mut e, name);
    }
    e.run(0).map_err(|e| e.to_string())?;
    Ok(outputs
        .into_iter()
        .map(|(name, dtype)| {
            let d = Data::read(&e, &name, dtype);
            (name, d)
        })
        .collect())
}

/// The single output of `run_vertex`, typed.
pub fn out<T: FromData>(r: Result<Vec<(String, Data)>, String>) -> Vec<T> {
    let r = r.unwrap_or_else(|e| panic!("run failed: {e}"));
    assert_eq!(r.len(), 1, "expected one written field");
    T::from_data(&r[0].1)
}

pub fn engine(exe: &poplar::Executable) -> Engine {
    Engine::new(exe, EngineOptions::with_threads(2)).unwrap()
}

/// Bitwise equality of float vectors (so NaN == NaN and -0 != +0 are caught).
pub fn assert_bits_eq(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "{what}[{i}]: got {g}, want {w}");
    }
}

/// Elements of type `T` built from a host closure.
pub fn host<T: Element, U: Copy>(xs: &[U], f: impl Fn(U) -> T) -> Vec<T> {
    xs.iter().map(|&x| f(x)).collect()
}
