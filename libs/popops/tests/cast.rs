//! popops::cast between every pair of the seven element types, against a host reference
//! written here.

#[path = "../../../codelets/tests/common/mod.rs"]
mod common;
mod support;

use poplar::Tensor;
use poplar::{f16, DType, Engine, Graph};
use support::{input, run, target};

/// A value of any element type, for the cast matrix.
#[derive(Debug, Clone, Copy)]
enum V {
    F(f64),
    I(i64),
    B(bool),
}

fn cast_ref(x: V, to: DType) -> V {
    let f = |v: f64| -> V {
        match to {
            DType::F32 => V::F(f64::from(v as f32)),
            DType::F16 => V::F(f64::from(poplar::f16_from_f64(v).to_f32())),
            DType::Bool => V::B(v != 0.0),
            // Truncation toward zero, saturating, NaN → 0.
            DType::I32 => V::I(if v.is_nan() {
                0
            } else {
                v.trunc().clamp(-2147483648.0, 2147483647.0) as i64
            }),
            DType::U32 => V::I(if v.is_nan() {
                0
            } else {
                v.trunc().clamp(0.0, 4294967295.0) as i64
            }),
            DType::U8 => V::I(if v.is_nan() {
                0
            } else {
                v.trunc().clamp(0.0, 255.0) as i64
            }),
            DType::U16 => V::I(if v.is_nan() {
                0
            } else {
                v.trunc().clamp(0.0, 65535.0) as i64
            }),
        }
    };
    match x {
        V::F(v) => f(v),
        V::B(b) => match to {
            DType::Bool => V::B(b),
            DType::F32 | DType::F16 => V::F(f64::from(u8::from(b))),
            _ => V::I(i64::from(b)),
        },
        V::I(i) => match to {
            // Integer → float: to the nearest f32 (then f16: exact below 2^24, and above it
            // the f16 result is infinite either way).
            DType::F32 => V::F(f64::from(i as f32)),
            DType::F16 => V::F(f64::from(f16::from_f32(i as f32).to_f32())),
            DType::Bool => V::B(i != 0),
            // Integer → integer keeps the low bits.
            DType::I32 => V::I(i64::from(i as i32)),
            DType::U32 => V::I(i64::from(i as u32)),
            DType::U8 => V::I(i64::from(i as u8)),
            DType::U16 => V::I(i64::from(i as u16)),
        },
    }
}

const TYPES: [DType; 7] = [
    DType::F32,
    DType::F16,
    DType::I32,
    DType::U32,
    DType::U8,
    DType::U16,
    DType::Bool,
];

fn add_typed(g: &mut Graph, name: &str, dtype: DType, vals: &[V]) -> Tensor {
    let n = vals.len();
    let fv = |v: &V| match *v {
        V::F(f) => f,
        V::I(i) => i as f64,
        V::B(b) => f64::from(u8::from(b)),
    };
    let iv = |v: &V| match *v {
        V::I(i) => i,
        V::F(f) => f as i64,
        V::B(b) => i64::from(b),
    };
    match dtype {
        DType::F32 => input(
            g,
            name,
            &[n],
            &vals.iter().map(|v| fv(v) as f32).collect::<Vec<_>>(),
            2,
        ),
        DType::F16 => input(
            g,
            name,
            &[n],
            &vals
                .iter()
                .map(|v| poplar::f16_from_f64(fv(v)))
                .collect::<Vec<_>>(),
            4,
        ),
        DType::I32 => input(
            g,
            name,
            &[n],
            &vals.iter().map(|v| iv(v) as i32).collect::<Vec<_>>(),
            2,
        ),
        DType::U32 => input(
            g,
            name,
            &[n],
            &vals.iter().map(|v| iv(v) as u32).collect::<Vec<_>>(),
            2,
        ),
        DType::U8 => input(
            g,
            name,
            &[n],
            &vals.iter().map(|v| iv(v) as u8).collect::<Vec<_>>(),
            8,
        ),
        DType::U16 => input(
            g,
            name,
            &[n],
            &vals.iter().map(|v| iv(v) as u16).collect::<Vec<_>>(),
            4,
        ),
        DType::Bool => input(
            g,
            name,
            &[n],
            &vals.iter().map(|v| fv(v) != 0.0).collect::<Vec<_>>(),
            8,
        ),
    }
}

fn read_typed(e: &Engine, name: &str, dtype: DType) -> Vec<V> {
    match dtype {
        DType::F32 => e
            .read_tensor::<f32>(name)
            .unwrap()
            .into_iter()
            .map(|v| V::F(f64::from(v)))
            .collect(),
        DType::F16 => e
            .read_tensor::<f16>(name)
            .unwrap()
            .into_iter()
            .map(|v| V::F(f64::from(v.to_f32())))
            .collect(),
        DType::I32 => e
            .read_tensor::<i32>(name)
            .unwrap()
            .into_iter()
            .map(|v| V::I(i64::from(v)))
            .collect(),
        DType::U32 => e
            .read_tensor::<u32>(name)
            .unwrap()
            .into_iter()
            .map(|v| V::I(i64::from(v)))
            .collect(),
        DType::U8 => e
            .read_tensor::<u8>(name)
            .unwrap()
            .into_iter()
            .map(|v| V::I(i64::from(v)))
            .collect(),
        DType::U16 => e
            .read_tensor::<u16>(name)
            .unwrap()
            .into_iter()
            .map(|v| V::I(i64::from(v)))
            .collect(),
        DType::Bool => e
            .read_tensor::<bool>(name)
            .unwrap()
            .into_iter()
            .map(V::B)
            .collect(),
    }
}

fn same(a: V, b: V) -> bool {
    match (a, b) {
        (V::F(x), V::F(y)) => (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits(),
        (V::I(x), V::I(y)) => x == y,
        (V::B(x), V::B(y)) => x == y,
        _ => false,
    }
}

#[test]
fn cast_between_every_pair_of_types() {
    // Source values per type, as the type holds them.
    let floats: Vec<f64> = vec![
        0.0,
        -0.0,
        0.4,
        -0.6,
        1.5,
        2.5,
        -2.5,
        255.9,
        256.0,
        65504.0,
        65520.0,
        70000.0,
        -1.0,
        3e9,
        -3e9,
        1e-8,
        1.0009765625,
        1.00048828125,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        2147483520.0,
        16777217.0,
    ];
    let ints: Vec<i64> = vec![
        0,
        1,
        -1,
        255,
        256,
        65535,
        65536,
        2049,
        16777217,
        i32::MAX as i64,
        i32::MIN as i64,
        70000,
    ];
    let mut g = Graph::new(&target(false));
    codelets::link();
    let mut prog = Vec::new();
    let mut cases = Vec::new();
    for from in TYPES {
        // The source values as `from` holds them (through the host reference's own cast).
        let raw: Vec<V> = match from {
            DType::F32 | DType::F16 => floats.iter().map(|&f| V::F(f)).collect(),
            DType::Bool => vec![V::B(false), V::B(true), V::B(true)],
            _ => ints.iter().map(|&i| V::I(i)).collect(),
        };
        let vals: Vec<V> = raw.into_iter().map(|v| cast_ref(v, from)).collect();
        let t = add_typed(&mut g, &format!("src{from}"), from, &vals);
        for to in TYPES {
            let name = format!("{from}->{to}");
            let out = popops::cast::cast(&mut g, &t, to, &mut prog, &name).unwrap();
            assert_eq!(out.dtype(), to);
            g.create_host_read(&name, &out).unwrap();
            cases.push((name, vals.clone(), to));
        }
    }
    let e = run(&g, prog);
    for (name, vals, to) in cases {
        let got = read_typed(&e, &name, to);
        for (v, gv) in vals.iter().zip(&got) {
            let want = cast_ref(*v, to);
            assert!(same(*gv, want), "{name}: {v:?} gave {gv:?}, want {want:?}");
        }
    }
}
