//! Dynamic and multi slices against host references written here: edge offsets (first, last,
//! wrapping), out-of-range ones with and without remapping, empty index lists, tables spread
//! over many tiles (by plan, by a linear mapping, rows split in two stages), f32, f16, i32
//! and u32; typed errors for shape and type mistakes.

use poplar::graph::Tensor;
use poplar::{
    compile, f16, CompileOptions, DType, Element, Engine, EngineOptions, Graph, Program, Target,
};
use popops::slice::*;

fn engine(g: &Graph, prog: Vec<Program>) -> Engine {
    let exe = compile(g, &[Program::seq(prog)], &CompileOptions::default()).unwrap();
    Engine::new(&exe, EngineOptions::default()).unwrap()
}

fn offsets_var(g: &mut Graph, n: usize, tile: u32) -> Tensor {
    let o = g.add_variable(DType::U32, &[n], "offsets");
    g.set_tile_mapping(&o, tile).unwrap();
    g.create_host_write("offsets", &o).unwrap();
    o
}

/// The host reference of a dynamic slice of `t` (`shape`) at `offsets` of `dims`.
fn host_dynamic_slice<T: Copy + Default>(
    t: &[T],
    shape: &[usize],
    dims: &[usize],
    sizes: &[usize],
    offsets: &[u32],
    remap: bool,
) -> Vec<T> {
    let mut out_shape = shape.to_vec();
    for (&d, &s) in dims.iter().zip(sizes) {
        out_shape[d] = s;
    }
    let n: usize = out_shape.iter().product();
    let mut out = vec![T::default(); n];
    for (flat, o) in out.iter_mut().enumerate() {
        let mut idx = vec![0; shape.len()];
        let mut rem = flat;
        for d in (0..shape.len()).rev() {
            idx[d] = rem % out_shape[d];
            rem /= out_shape[d];
        }
        let mut zero = false;
        for (k, &d) in dims.iter().enumerate() {
            let mut off = offsets[k] as usize;
            if off >= shape[d] {
                if remap {
                    off = 0;
                } else {
                    zero = true;
                }
            }
            idx[d] = (off + idx[d]) % shape[d];
        }
        if !zero {
            let src = idx.iter().zip(shape).fold(0, |acc, (&i, &s)| acc * s + i);
            *o = t[src];
        }
    }
    out
}

fn host_dynamic_update<T: Copy>(
    t: &mut [T],
    shape: &[usize],
    s: &[T],
    dims: &[usize],
    sizes: &[usize],
    offsets: &[u32],
    remap: bool,
) {
    let mut s_shape = shape.to_vec();
    for (&d, &z) in dims.iter().zip(sizes) {
        s_shape[d] = z;
    }
    'elems: for (flat, &v) in s.iter().enumerate() {
        let mut idx = vec![0; shape.len()];
        let mut rem = flat;
        for d in (0..shape.len()).rev() {
            idx[d] = rem % s_shape[d];
            rem /= s_shape[d];
        }
        for (k, &d) in dims.iter().enumerate() {
            let mut off = offsets[k] as usize;
            if off >= shape[d] {
                if !remap {
                    continue 'elems;
                }
                off = 0;
            }
            idx[d] = (off + idx[d]) % shape[d];
        }
        let dst = idx.iter().zip(shape).fold(0, |acc, (&i, &s)| acc * s + i);
        t[dst] = v;
    }
}

#[test]
fn dynamic_slice_and_update_of_two_dimensions_match_the_host() {
    codelets::link();
    let shape = [5usize, 6, 7];
    let (dims, sizes) = ([0usize, 2], [3usize, 4]);
    let data: Vec<f32> = (0..210).map(|i| i as f32 * 0.5 - 3.0).collect();
    let upd: Vec<f32> = (0..3 * 6 * 4).map(|i| 1000.0 + i as f32).collect();
    for remap in [false, true] {
        let mut g = Graph::new(&Target::custom(4, 1 << 20));
        let t = g.add_variable(DType::F32, &shape, "t");
        g.map_linearly(&t, 3).unwrap();
        g.set_initial_value(&t, &data).unwrap();
        g.create_host_read_write("t", &t).unwrap();
        let s = g.add_variable(DType::F32, &[3, 6, 4], "s");
        g.map_linearly(&s, 2).unwrap();
        g.set_initial_value(&s, &upd).unwrap();
        let off = offsets_var(&mut g, 2, 3);
        let opts = SliceOptions {
            remap_out_of_bound_indices: remap,
        };
        let mut prog = Vec::new();
        let out = dynamic_slice(&mut g, &t, &off, &dims, &sizes, &opts, &mut prog, "ds").unwrap();
        assert_eq!(out.shape(), &[3, 6, 4]);
        g.create_host_read("out", &out).unwrap();
        let slice_prog = prog;
        let mut up = Vec::new();
        dynamic_update(&mut g, &t, &s, &off, &dims, &sizes, &opts, &mut up, "du").unwrap();
        let exe = compile(
            &g,
            &[Program::seq(slice_prog), Program::seq(up)],
            &CompileOptions::default(),
        )
        .unwrap();
        let mut e = Engine::new(&exe, EngineOptions::default()).unwrap();
        for offs in [[0u32, 0], [4, 6], [2, 3], [5, 0], [1, 100], [u32::MAX, 7]] {
            e.write_tensor("offsets", &offs).unwrap();
            e.write_tensor("t", &data).unwrap();
            e.run(0).unwrap();
            let want = host_dynamic_slice(&data, &shape, &dims, &sizes, &offs, remap);
            assert_eq!(
                e.read_tensor::<f32>("out").unwrap(),
                want,
                "slice {offs:?}, remap {remap}"
            );
            e.run(1).unwrap();
            let mut want = data.clone();
            host_dynamic_update(&mut want, &shape, &upd, &dims, &sizes, &offs, remap);
            assert_eq!(
                e.read_tensor::<f32>("t").unwrap(),
                want,
                "update {offs:?}, remap {remap}"
            );
        }
    }
}

fn dynamic_slice_1d<T: Element + Default + std::fmt::Debug>(data: Vec<T>) {
    let mut g = Graph::new(&Target::custom(3, 1 << 20));
    let t = g.add_variable(T::DTYPE, &[10, 3], "t");
    g.map_linearly(&t, 1).unwrap();
    g.set_initial_value(&t, &data).unwrap();
    let off = offsets_var(&mut g, 1, 0);
    let mut prog = Vec::new();
    let out = dynamic_slice(
        &mut g,
        &t,
        &off,
        &[0],
        &[10],
        &SliceOptions::default(),
        &mut prog,
        "ds",
    )
    .unwrap();
    g.create_host_read("out", &out).unwrap();
    let mut e = engine(&g, prog);
    for o in [0u32, 9, 10] {
        e.write_tensor("offsets", &[o]).unwrap();
        e.run(0).unwrap();
        let want = host_dynamic_slice(&data, &[10, 3], &[0], &[10], &[o], false);
        assert_eq!(
            e.read_tensor::<T>("out").unwrap(),
            want,
            "{} offset {o}",
            T::DTYPE
        );
    }
}

#[test]
fn dynamic_slices_of_every_type_wrap_whole_dimensions() {
    codelets::link();
    dynamic_slice_1d((0..30).map(|i| i - 15).collect::<Vec<i32>>());
    dynamic_slice_1d((0..30).map(|i| u32::MAX - i).collect::<Vec<u32>>());
    dynamic_slice_1d(
        (0..30)
            .map(|i| f16::from_f32(i as f32 * 0.25))
            .collect::<Vec<f16>>(),
    );
}

/// How the table is mapped in a multi-slice test.
#[derive(Debug, Clone, Copy)]
enum Table {
    /// By [`create_sliceable_tensor`] with the plan.
    ByPlan,
    /// Linearly over the tiles, whatever the plan.
    Linear,
}

struct Case {
    tiles: u32,
    rows: usize,
    cols: usize,
    plan: SlicePlan,
    table: Table,
}

fn host_multi_slice<T: Copy + Default>(t: &[T], cols: usize, idx: &[u32], remap: bool) -> Vec<T> {
    let rows = t.len() / cols;
    idx.iter()
        .flat_map(|&i| {
            let r = if (i as usize) < rows {
                Some(i as usize)
            } else if remap {
                Some(0)
            } else {
                None
            };
            (0..cols).map(move |c| r.map_or(T::default(), |r| t[r * cols + c]))
        })
        .collect()
}

fn table<T: Element>(g: &mut Graph, c: &Case, data: &[T]) -> Tensor {
    let t = match c.table {
        Table::ByPlan => {
            create_sliceable_tensor(g, T::DTYPE, c.rows, c.cols, &c.plan, "table").unwrap()
        }
        Table::Linear => {
            let t = g.add_variable(T::DTYPE, &[c.rows, c.cols], "table");
            g.map_linearly(&t, 5).unwrap();
            t
        }
    };
    g.set_initial_value(&t, data).unwrap();
    t
}

fn check_multi_slice<T: Element + Default + std::fmt::Debug>(
    c: &Case,
    data: &[T],
    idx: &[u32],
    remap: bool,
) {
    let mut g = Graph::new(&Target::custom(c.tiles, 1 << 20));
    let t = table(&mut g, c, data);
    let off = offsets_var(&mut g, idx.len(), c.tiles - 1);
    let opts = SliceOptions {
        remap_out_of_bound_indices: remap,
    };
    let mut prog = Vec::new();
    let out = multi_slice(&mut g, &t, &off, &c.plan, &opts, &mut prog, "ms").unwrap();
    assert_eq!(out.shape(), &[idx.len(), c.cols]);
    g.create_host_read("out", &out).unwrap();
    let mut e = engine(&g, prog);
    e.write_tensor("offsets", idx).unwrap();
    e.run(0).unwrap();
    let want = host_multi_slice(data, c.cols, idx, remap);
    assert_eq!(
        e.read_tensor::<T>("out").unwrap(),
        want,
        "{} {:?} {:?} remap {remap}",
        T::DTYPE,
        c.plan,
        c.table
    );
}

fn cases() -> Vec<Case> {
    let (rows, cols) = (50, 12);
    let planned = plan_multi_slice(&Target::custom(16, 1 << 20), DType::F32, rows, cols, 9);
    vec![
        Case {
            tiles: 1,
            rows,
            cols,
            plan: SlicePlan::single(),
            table: Table::ByPlan,
        },
        Case {
            tiles: 16,
            rows,
            cols,
            plan: planned,
            table: Table::ByPlan,
        },
        Case {
            tiles: 16,
            rows,
            cols,
            plan: SlicePlan {
                sliced_split: 4,
                unsliced_split: 3,
                start_tile: 2,
            },
            table: Table::ByPlan,
        },
        Case {
            tiles: 16,
            rows,
            cols,
            plan: SlicePlan {
                sliced_split: 3,
                unsliced_split: 5,
                start_tile: 0,
            },
            table: Table::Linear,
        },
    ]
}

#[test]
fn multi_slices_match_the_host_on_every_plan_and_type() {
    codelets::link();
    let idx = [0u32, 49, 50, 7, 7, u32::MAX, 13, 36, 25];
    for c in cases() {
        let n = c.rows * c.cols;
        for remap in [false, true] {
            check_multi_slice(
                &c,
                &(0..n).map(|i| i as f32 - 100.5).collect::<Vec<_>>(),
                &idx,
                remap,
            );
        }
        check_multi_slice(
            &c,
            &(0..n)
                .map(|i| f16::from_f32(i as f32 / 8.0))
                .collect::<Vec<_>>(),
            &idx,
            false,
        );
        check_multi_slice(
            &c,
            &(0..n as i32).map(|i| -i).collect::<Vec<_>>(),
            &idx,
            false,
        );
        check_multi_slice(&c, &(0..n as u32).collect::<Vec<_>>(), &idx[..1], false);
    }
}

#[test]
fn the_planner_splits_big_tables_and_keeps_small_ones_whole() {
    let chip = Target::gc200();
    let p = plan_multi_slice(&chip, DType::F32, 50_000, 768, 4096);
    let tiles = p.sliced_split * p.unsliced_split;
    assert!(tiles > 300 && tiles <= 1472, "{p:?}");
    // Each block fits in half a tile.
    let block = 50_000usize.div_ceil(p.sliced_split) * 768usize.div_ceil(p.unsliced_split) * 4;
    assert!(block < 312 * 1024, "{p:?}: block of {block} bytes");
    let small = plan_multi_slice(&chip, DType::F32, 10, 4, 2);
    assert!(small.sliced_split * small.unsliced_split <= 4, "{small:?}");
}

#[test]
fn empty_index_lists_give_empty_slices_and_change_nothing() {
    codelets::link();
    let mut g = Graph::new(&Target::custom(4, 1 << 20));
    let plan = SlicePlan {
        sliced_split: 2,
        unsliced_split: 2,
        start_tile: 0,
    };
    let t = create_sliceable_tensor(&mut g, DType::F32, 6, 4, &plan, "t").unwrap();
    let data: Vec<f32> = (0..24).map(|i| i as f32).collect();
    g.set_initial_value(&t, &data).unwrap();
    g.create_host_read("t", &t).unwrap();
    let off = g.add_variable(DType::U32, &[0], "none");
    let s = g.add_variable(DType::F32, &[0, 4], "s");
    let scale = g.add_constant(&[1], &[1.0f32], "scale").unwrap();
    g.set_tile_mapping(&scale, 0).unwrap();
    let mut prog = Vec::new();
    let out = multi_slice(
        &mut g,
        &t,
        &off,
        &plan,
        &SliceOptions::default(),
        &mut prog,
        "ms",
    )
    .unwrap();
    assert_eq!(out.shape(), &[0, 4]);
    multi_update_add(
        &mut g,
        &t,
        &s,
        &off,
        &scale,
        &plan,
        &SliceOptions::default(),
        &mut prog,
        "mu",
    )
    .unwrap();
    let mut e = engine(&g, prog);
    e.run(0).unwrap();
    assert_eq!(e.read_tensor::<f32>("t").unwrap(), data);
}

/// Host `t[idx[i]] = s[i]` (or `+= scale · s[i]` in f32, rounded by `round`), in order,
/// indices past the table ignored.
fn host_update<T: Copy>(t: &mut [T], cols: usize, s: &[T], idx: &[u32], f: impl Fn(T, T) -> T) {
    let rows = t.len() / cols;
    for (o, &i) in idx.iter().enumerate() {
        if (i as usize) < rows {
            for c in 0..cols {
                let a = &mut t[i as usize * cols + c];
                *a = f(*a, s[o * cols + c]);
            }
        }
    }
}

fn check_update<T: Element + Copy + std::fmt::Debug>(
    c: &Case,
    data: &[T],
    s: &[T],
    idx: &[u32],
    scale: Option<Tensor>,
    add: impl Fn(T, T) -> T,
    scale_data: impl FnOnce(&mut Graph) -> Tensor,
) {
    let _ = scale;
    let mut g = Graph::new(&Target::custom(c.tiles, 1 << 20));
    let t = table(&mut g, c, data);
    g.create_host_read("t", &t).unwrap();
    let sv = g.add_variable(T::DTYPE, &[idx.len(), c.cols], "s");
    g.map_linearly(&sv, 4).unwrap();
    g.set_initial_value(&sv, s).unwrap();
    let off = offsets_var(&mut g, idx.len(), 0);
    let scale = scale_data(&mut g);
    let mut set = Vec::new();
    multi_update(
        &mut g,
        &t,
        &sv,
        &off,
        &c.plan,
        &SliceOptions::default(),
        &mut set,
        "set",
    )
    .unwrap();
    let mut acc = Vec::new();
    multi_update_add(
        &mut g,
        &t,
        &sv,
        &off,
        &scale,
        &c.plan,
        &SliceOptions::default(),
        &mut acc,
        "add",
    )
    .unwrap();
    let exe = compile(
        &g,
        &[Program::seq(set), Program::seq(acc)],
        &CompileOptions::default(),
    )
    .unwrap();
    let mut e = Engine::new(&exe, EngineOptions::default()).unwrap();
    e.write_tensor("offsets", idx).unwrap();
    e.run(0).unwrap();
    let mut want = data.to_vec();
    host_update(&mut want, c.cols, s, idx, |_, b| b);
    assert_eq!(
        e.read_tensor::<T>("t").unwrap(),
        want,
        "update {} {:?}",
        T::DTYPE,
        c.plan
    );
    e.run(1).unwrap();
    host_update(&mut want, c.cols, s, idx, &add);
    assert_eq!(
        e.read_tensor::<T>("t").unwrap(),
        want,
        "update-add {} {:?}",
        T::DTYPE,
        c.plan
    );
}

#[test]
fn multi_updates_and_adds_match_the_host_with_repeats_and_out_of_range_indices() {
    codelets::link();
    let idx = [3u32, 49, 50, 3, 0, u32::MAX, 3];
    for c in cases() {
        let n = c.rows * c.cols;
        let m = idx.len() * c.cols;
        let scalar = |v: f32| {
            move |g: &mut Graph| {
                let s = g.add_constant(&[1], &[v], "scale").unwrap();
                g.set_tile_mapping(&s, 0).unwrap();
                s
            }
        };
        let data: Vec<f32> = (0..n).map(|i| i as f32 * 0.1).collect();
        let s: Vec<f32> = (0..m).map(|i| 1.0 + i as f32 * 0.37).collect();
        check_update(&c, &data, &s, &idx, None, |a, b| a + -0.5 * b, scalar(-0.5));
        let data: Vec<f16> = (0..n).map(|i| f16::from_f32(i as f32 * 0.1)).collect();
        let s: Vec<f16> = (0..m)
            .map(|i| f16::from_f32(1.0 + i as f32 * 0.37))
            .collect();
        check_update(
            &c,
            &data,
            &s,
            &idx,
            None,
            |a, b| f16::from_f32(a.to_f32() + 0.25 * b.to_f32()),
            scalar(0.25),
        );
        let data: Vec<i32> = (0..n as i32).collect();
        let s: Vec<i32> = (0..m as i32).map(|i| i * 3 - 7).collect();
        check_update(
            &c,
            &data,
            &s,
            &idx,
            None,
            |a, b| a.wrapping_add(-2i32.wrapping_mul(b)),
            |g: &mut Graph| {
                let s = g.add_constant(&[1], &[-2i32], "scale").unwrap();
                g.set_tile_mapping(&s, 0).unwrap();
                s
            },
        );
    }
}

#[test]
fn shape_and_type_mistakes_are_typed_errors_naming_the_tensor() {
    codelets::link();
    let mut g = Graph::new(&Target::custom(2, 1 << 20));
    let t = g.add_variable(DType::F32, &[4, 3], "t");
    g.map_linearly(&t, 1).unwrap();
    let off = offsets_var(&mut g, 1, 0);
    let foff = g.add_variable(DType::F32, &[1], "f");
    let o = SliceOptions::default();
    let mut p = Vec::new();
    let msg = |e: popops::OpError| e.to_string();
    assert!(
        msg(dynamic_slice(&mut g, &t, &foff, &[0], &[1], &o, &mut p, "x").unwrap_err())
            .contains("'offset'")
    );
    assert!(
        msg(dynamic_slice(&mut g, &t, &off, &[0], &[5], &o, &mut p, "x").unwrap_err())
            .contains("size 5")
    );
    assert!(
        msg(dynamic_slice(&mut g, &t, &off, &[2], &[1], &o, &mut p, "x").unwrap_err())
            .contains("dimension 2")
    );
    let s = g.add_variable(DType::F32, &[2, 3], "s");
    assert!(
        msg(dynamic_update(&mut g, &t, &s, &off, &[0], &[1], &o, &mut p, "x").unwrap_err())
            .contains("'s'")
    );
    let plan = SlicePlan::single();
    assert!(
        msg(multi_slice(&mut g, &t, &foff, &plan, &o, &mut p, "x").unwrap_err())
            .contains("'offsets'")
    );
    assert!(
        msg(multi_update(&mut g, &t, &s, &off, &plan, &o, &mut p, "x").unwrap_err())
            .contains("'s'")
    );
    let s1 = g.add_variable(DType::F32, &[1, 3], "s1");
    let iscale = g.add_variable(DType::I32, &[1], "iscale");
    assert!(msg(
        multi_update_add(&mut g, &t, &s1, &off, &iscale, &plan, &o, &mut p, "x").unwrap_err()
    )
    .contains("'scale'"));
    let empty = g.add_variable(DType::F32, &[0, 3], "empty");
    assert!(
        msg(multi_slice(&mut g, &empty, &off, &plan, &o, &mut p, "x").unwrap_err())
            .contains("no rows")
    );
    let b = g.add_variable(DType::Bool, &[4, 3], "b");
    g.map_linearly(&b, 1).unwrap();
    assert!(matches!(
        multi_slice(&mut g, &b, &off, &plan, &o, &mut p, "x").unwrap_err(),
        popops::OpError::Unsupported { .. }
    ));
}
