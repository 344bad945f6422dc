//! popops' cross-tile scans of long lines (`cumsum`, `arg_max`, `arg_min` of lines of at
//! least `CROSS_TILE_MIN_LINE` elements over several tiles) against host references written
//! here: integers exactly (and bit for bit the one-tile path), f32 cumulative sums within the
//! stated `(n + 1)·2⁻²³·Σ|x|` of an f64 sum, arg-max/arg-min exactly (ties, NaNs in different
//! segments), lines along an outer axis, uneven segments, 1 and 2 engine threads, and the
//! cross-tile path observed in the profile (its compute sets, and no line exchanged whole).

#[path = "../../../codelets/tests/common/mod.rs"]
mod common;
mod support;

use common::Rng;
use poplar::profile::{Profile, ProfileOptions};
use poplar::{compile, f16, CompileOptions, Element, Engine, EngineOptions, Graph, Program};
use poplar::{Target, Tensor};
use popops::scan::CROSS_TILE_MIN_LINE;
use support::host_arg;

/// Compiles `prog` and runs it with `threads` engine threads, profiled.
fn run(g: &Graph, prog: Vec<Program>, threads: usize) -> Engine {
    let exe = compile(g, &[Program::seq(prog)], &CompileOptions::default())
        .unwrap_or_else(|e| panic!("compile: {e}"));
    let mut e = Engine::new(&exe, EngineOptions::with_threads(threads)).unwrap();
    e.enable_profiling(ProfileOptions::default());
    e.run(0).unwrap();
    e
}

/// A variable of `data` whose flat elements are cut between tiles `0..` in the pieces
/// `sizes` (cycled until every element is mapped): uneven segments.
fn uneven<T: Element>(
    g: &mut Graph,
    name: &str,
    shape: &[usize],
    data: &[T],
    sizes: &[usize],
) -> Tensor {
    let t = g.add_variable(T::DTYPE, shape, name);
    let flat = t.flatten();
    let tiles = g.target().num_tiles();
    let (mut at, mut k) = (0, 0);
    while at < data.len() {
        let end = (at + sizes[k % sizes.len()]).min(data.len());
        g.set_tile_mapping(&flat.slice(at..end).unwrap(), (k as u32) % tiles)
            .unwrap();
        at = end;
        k += 1;
    }
    g.set_initial_value(&t, data).unwrap();
    t
}

/// The same data, all on `tile` (so its lines are worked whole).
fn on_tile<T: Element>(
    g: &mut Graph,
    name: &str,
    shape: &[usize],
    data: &[T],
    tile: u32,
) -> Tensor {
    let t = g.add_variable(T::DTYPE, shape, name);
    g.set_tile_mapping(&t, tile).unwrap();
    g.set_initial_value(&t, data).unwrap();
    t
}

/// Left-to-right prefix sums along `axis` (`exclusive`: of the elements before).
fn host_cumsum<T: Copy>(
    data: &[T],
    shape: &[usize],
    axis: usize,
    exclusive: bool,
    zero: T,
    add: impl Fn(T, T) -> T,
) -> Vec<T> {
    let inner: usize = shape[axis + 1..].iter().product();
    let n = shape[axis];
    let outer: usize = shape[..axis].iter().product();
    let mut out = data.to_vec();
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = zero;
            for j in 0..n {
                let f = (o * n + j) * inner + i;
                if exclusive {
                    out[f] = acc;
                    acc = add(acc, data[f]);
                } else {
                    acc = add(acc, data[f]);
                    out[f] = acc;
                }
            }
        }
    }
    out
}

/// Bytes exchanged in one run, over all phases.
fn exchanged(p: &Profile) -> u64 {
    p.phases.iter().map(|ph| ph.bytes).sum()
}

/// Checks each f32 prefix against the f64 one within `(n + 1)·2⁻²³·Σ|x|` (module notes of
/// `popops::scan`).
fn check_f32_bound(got: &[f32], data: &[f32], shape: &[usize], axis: usize, exclusive: bool) {
    let wide: Vec<f64> = data.iter().map(|&v| f64::from(v)).collect();
    let exact = host_cumsum(&wide, shape, axis, exclusive, 0.0, |a, b| a + b);
    let mags: Vec<f64> = wide.iter().map(|v| v.abs()).collect();
    let mag = host_cumsum(&mags, shape, axis, false, 0.0, |a, b| a + b);
    let n = shape[axis] as f64;
    let eps = 2f64.powi(-23);
    for (i, ((&g, &w), &m)) in got.iter().zip(&exact).zip(&mag).enumerate() {
        let bound = (n + 1.0) * eps * m;
        assert!(
            (f64::from(g) - w).abs() <= bound,
            "element {i}: {g} vs {w} (bound {bound}, exclusive {exclusive})"
        );
    }
}

const N: usize = 12_000;

/// One long line (1-D) of f32, i32, u32 over 64 tiles in uneven pieces, inclusive and
/// exclusive: integers equal the host and the one-tile path bit for bit, f32 within the
/// bound; the same bits with 1 and 2 threads; the cross-tile compute sets ran and far less
/// than a line was exchanged.
#[test]
fn long_line_cumsum_across_tiles() {
    let mut r = Rng::new(7);
    let df = r.f32s(N);
    let di = r.i32s(N);
    let du = r.u32s(N);
    let sizes = [97, 250, 131, 402, 60, 188];
    let mut g = Graph::new(&Target::custom(64, 256 * 1024));
    let xf = uneven(&mut g, "xf", &[N], &df, &sizes);
    let xi = uneven(&mut g, "xi", &[N], &di, &sizes);
    let xu = uneven(&mut g, "xu", &[N], &du, &sizes);
    let mut prog = Vec::new();
    for ex in [false, true] {
        let tag = if ex { "ex" } else { "in" };
        for (x, stem) in [(&xf, "f"), (&xi, "i"), (&xu, "u")] {
            let name = format!("c{stem}{tag}");
            let c = popops::cumsum(&mut g, x, 0, ex, &mut prog, &name).unwrap();
            g.create_host_read(&name, &c).unwrap();
        }
    }
    let mut one = Vec::new();
    let oi = on_tile(&mut g, "oi", &[N], &di, 1);
    let ou = on_tile(&mut g, "ou", &[N], &du, 2);
    for (x, stem) in [(&oi, "i"), (&ou, "u")] {
        for ex in [false, true] {
            let name = format!("o{stem}{}", if ex { "ex" } else { "in" });
            let c = popops::cumsum(&mut g, x, 0, ex, &mut one, &name).unwrap();
            g.create_host_read(&name, &c).unwrap();
        }
    }
    let all: Vec<Program> = prog.iter().cloned().chain(one).collect();
    let e1 = run(&g, all.clone(), 1);
    let e2 = run(&g, all, 2);
    for ex in [false, true] {
        let tag = if ex { "ex" } else { "in" };
        let got = e2.read_tensor::<f32>(&format!("cf{tag}")).unwrap();
        check_f32_bound(&got, &df, &[N], 0, ex);
        let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
        let again = e1.read_tensor::<f32>(&format!("cf{tag}")).unwrap();
        assert_eq!(bits(got), bits(again), "f32 {tag}: 1 vs 2 threads");
        let want = host_cumsum(&di, &[N], 0, ex, 0, i32::wrapping_add);
        let got = e2.read_tensor::<i32>(&format!("ci{tag}")).unwrap();
        assert_eq!(got, want, "i32 {tag}");
        assert_eq!(got, e2.read_tensor::<i32>(&format!("oi{tag}")).unwrap());
        assert_eq!(got, e1.read_tensor::<i32>(&format!("ci{tag}")).unwrap());
        let want = host_cumsum(&du, &[N], 0, ex, 0, u32::wrapping_add);
        let got = e2.read_tensor::<u32>(&format!("cu{tag}")).unwrap();
        assert_eq!(got, want, "u32 {tag}");
        assert_eq!(got, e2.read_tensor::<u32>(&format!("ou{tag}")).unwrap());
        assert_eq!(got, e1.read_tensor::<u32>(&format!("cu{tag}")).unwrap());
    }
    // The cross-tile path ran for the spread lines and not for the one-tile ones.
    let p = e2.profile().unwrap();
    assert!(p.phases_named("cfin/carries").count() > 0);
    assert!(p.phases_named("ciex/add_carries").count() > 0);
    assert_eq!(p.phases_named("oiin/carries").count(), 0);
    // Only the cross-tile part: no line (48,000 bytes) is exchanged, a few bytes per segment.
    let mut g2 = Graph::new(&Target::custom(64, 256 * 1024));
    let x = uneven(&mut g2, "x", &[N], &df, &sizes);
    let mut prog = Vec::new();
    popops::cumsum(&mut g2, &x, 0, false, &mut prog, "c").unwrap();
    let e = run(&g2, prog, 2);
    let bytes = exchanged(e.profile().unwrap());
    assert!(bytes > 0 && bytes < 4096, "{bytes} bytes exchanged");
}

/// Many lines along an outer axis (`[n, 5]` over axis 0, and `[3, n]` over axis 1), each
/// across 16 tiles: integers exact, f32 within the bound, 1 and 2 threads alike.
#[test]
fn cumsum_along_an_outer_axis_across_tiles() {
    let n = 3000;
    let mut r = Rng::new(11);
    let df = r.f32s(n * 5);
    let di = r.i32s(n * 5);
    let mut g = Graph::new(&Target::custom(16, 256 * 1024));
    let xf = uneven(&mut g, "xf", &[n, 5], &df, &[900, 1100, 1000]);
    let xi = uneven(&mut g, "xi", &[n, 5], &di, &[900, 1100, 1000]);
    let yi = uneven(&mut g, "yi", &[3, n * 5 / 3], &di, &[700, 1300]);
    let mut prog = Vec::new();
    for ex in [false, true] {
        let t = if ex { "ex" } else { "in" };
        let cf = popops::cumsum(&mut g, &xf, 0, ex, &mut prog, &format!("f{t}")).unwrap();
        let ci = popops::cumsum(&mut g, &xi, 0, ex, &mut prog, &format!("i{t}")).unwrap();
        let cy = popops::cumsum(&mut g, &yi, 1, ex, &mut prog, &format!("y{t}")).unwrap();
        g.create_host_read(&format!("f{t}"), &cf).unwrap();
        g.create_host_read(&format!("i{t}"), &ci).unwrap();
        g.create_host_read(&format!("y{t}"), &cy).unwrap();
    }
    let e1 = run(&g, prog.clone(), 1);
    let e2 = run(&g, prog, 2);
    for ex in [false, true] {
        let t = if ex { "ex" } else { "in" };
        let got = e2.read_tensor::<f32>(&format!("f{t}")).unwrap();
        check_f32_bound(&got, &df, &[n, 5], 0, ex);
        let again = e1.read_tensor::<f32>(&format!("f{t}")).unwrap();
        assert!(got
            .iter()
            .zip(&again)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        let want = host_cumsum(&di, &[n, 5], 0, ex, 0, i32::wrapping_add);
        assert_eq!(e2.read_tensor::<i32>(&format!("i{t}")).unwrap(), want);
        assert_eq!(e1.read_tensor::<i32>(&format!("i{t}")).unwrap(), want);
        let want = host_cumsum(&di, &[3, n * 5 / 3], 1, ex, 0, i32::wrapping_add);
        assert_eq!(e2.read_tensor::<i32>(&format!("y{t}")).unwrap(), want);
    }
    let p = e2.profile().unwrap();
    assert!(p.phases_named("fin/carries").count() > 0);
    assert!(p.phases_named("yex/carries").count() > 0);
}

/// Arg-max/arg-min data of 4 lines of `n`: ties (few distinct values, the extreme planted
/// in two segments), NaNs in two segments (line 1), a NaN only late (line 2), all equal
/// (line 3).
fn arg_data(n: usize, nan: bool) -> Vec<f32> {
    let mut r = Rng::new(5);
    let mut d: Vec<f32> = (0..4 * n)
        .map(|_| (r.next_u64() % 7) as f32 - 3.0)
        .collect();
    for (line, at) in [(0, n / 3), (0, 2 * n / 3), (1, n / 5), (1, 4 * n / 5)] {
        d[line * n + at] = 9.0;
        d[line * n + at + 1] = -9.0;
    }
    if nan {
        d[n + n / 2] = f32::NAN;
        d[n + 7 * n / 8] = f32::NAN;
        d[2 * n + n - 3] = f32::NAN;
        d[2 * n + 10] = f32::INFINITY;
        d[2 * n + 11] = f32::NEG_INFINITY;
    }
    for v in &mut d[3 * n..] {
        *v = 1.0;
    }
    d
}

/// `arg_max`/`arg_min` of long lines over 8–32 tiles, f32/f16/i32/u32, rows and an outer
/// axis, uneven segments: exactly the host's (and the one-tile path's) answers.
#[test]
fn long_line_arg_max_and_min_across_tiles() {
    let n = 5000;
    let df = arg_data(n, true);
    let dh: Vec<f16> = df.iter().map(|&v| f16::from_f32(v)).collect();
    let plain = arg_data(n, false);
    let di: Vec<i32> = plain.iter().map(|&v| v as i32).collect();
    let du: Vec<u32> = plain.iter().map(|&v| (v + 9.0) as u32).collect();
    let wide = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<_>>();
    for (tiles, sizes) in [(8usize, vec![2600, 1900, 3100]), (32, vec![333, 901, 120])] {
        let mut g = Graph::new(&Target::custom(tiles as u32, 256 * 1024));
        let shape = [4, n];
        let xf = uneven(&mut g, "xf", &shape, &df, &sizes);
        let xh = uneven(&mut g, "xh", &shape, &dh, &sizes);
        let xi = uneven(&mut g, "xi", &shape, &di, &sizes);
        let xu = uneven(&mut g, "xu", &shape, &du, &sizes);
        let of = on_tile(&mut g, "of", &shape, &df, 3);
        // The outer axis: the transpose's lines are the columns of `[n, 4]`.
        let tf = uneven(&mut g, "tf", &[n, 4], &df, &sizes);
        let mut prog = Vec::new();
        let mut names = Vec::new();
        for max in [true, false] {
            let f = if max {
                popops::arg_max
            } else {
                popops::arg_min
            };
            let m = if max { "max" } else { "min" };
            for (x, s, axis) in [
                (&xf, "f", 1),
                (&xh, "h", 1),
                (&xi, "i", 1),
                (&xu, "u", 1),
                (&of, "o", 1),
                (&tf, "t", 0),
            ] {
                let name = format!("{s}{m}");
                let a = f(&mut g, x, axis, &mut prog, &name).unwrap();
                g.create_host_read(&name, &a).unwrap();
                names.push(name);
            }
        }
        let e1 = run(&g, prog.clone(), 1);
        let e2 = run(&g, prog, 2);
        for name in &names {
            let got = e2.read_tensor::<u32>(name).unwrap();
            assert_eq!(got, e1.read_tensor::<u32>(name).unwrap(), "{name}: threads");
        }
        for (max, m) in [(true, "max"), (false, "min")] {
            let want = host_arg(&wide(&df), &[4, n], 1, max);
            let what = format!("{tiles} tiles {m}");
            assert_eq!(
                e2.read_tensor::<u32>(&format!("f{m}")).unwrap(),
                want,
                "f32 {what}"
            );
            assert_eq!(
                e2.read_tensor::<u32>(&format!("h{m}")).unwrap(),
                want,
                "f16 {what}"
            );
            assert_eq!(
                e2.read_tensor::<u32>(&format!("o{m}")).unwrap(),
                want,
                "one tile {what}"
            );
            // Ties: the first of the two planted extremes; NaN lines: the first NaN.
            let first = if max { n / 3 } else { n / 3 + 1 };
            assert_eq!(want[0] as usize, first, "{what}");
            assert_eq!(want[1] as usize, n / 2, "{what}");
            assert_eq!(want[2] as usize, n - 3, "{what}");
            assert_eq!(want[3], 0, "{what}");
            let want = host_arg(&wide(&plain), &[4, n], 1, max);
            assert_eq!(want[0] as usize, first, "{what}");
            assert_eq!(
                e2.read_tensor::<u32>(&format!("i{m}")).unwrap(),
                want,
                "i32 {what}"
            );
            assert_eq!(
                e2.read_tensor::<u32>(&format!("u{m}")).unwrap(),
                want,
                "u32 {what}"
            );
            let want = host_arg(&wide(&df), &[n, 4], 0, max);
            assert_eq!(
                e2.read_tensor::<u32>(&format!("t{m}")).unwrap(),
                want,
                "outer {what}"
            );
        }
        let p = e2.profile().unwrap();
        assert!(p.phases_named("fmax/combine").count() > 0);
        assert!(p.phases_named("tmin/combine").count() > 0);
        assert_eq!(p.phases_named("omax/combine").count(), 0);
    }
}

/// Lines just under the threshold stay whole; at it, across tiles (and the same answer).
#[test]
fn threshold_between_whole_and_cross_tile_lines() {
    let n = CROSS_TILE_MIN_LINE;
    let d: Vec<i32> = (0..2 * n as i32).map(|v| (v * 37) % 101 - 50).collect();
    let mut g = Graph::new(&Target::custom(8, 256 * 1024));
    let short = uneven(&mut g, "s", &[2, n - 1], &d[..2 * n - 2], &[100]);
    let long = uneven(&mut g, "l", &[2, n], &d, &[100]);
    let mut prog = Vec::new();
    let cs = popops::cumsum(&mut g, &short, 1, false, &mut prog, "cs").unwrap();
    let cl = popops::cumsum(&mut g, &long, 1, false, &mut prog, "cl").unwrap();
    g.create_host_read("cs", &cs).unwrap();
    g.create_host_read("cl", &cl).unwrap();
    let e = run(&g, prog, 2);
    let add = i32::wrapping_add;
    assert_eq!(
        e.read_tensor::<i32>("cs").unwrap(),
        host_cumsum(&d[..2 * n - 2], &[2, n - 1], 1, false, 0, add)
    );
    assert_eq!(
        e.read_tensor::<i32>("cl").unwrap(),
        host_cumsum(&d, &[2, n], 1, false, 0, add)
    );
    let p = e.profile().unwrap();
    assert_eq!(p.phases_named("cs/carries").count(), 0);
    assert!(p.phases_named("cl/carries").count() > 0);
}

/// A 1-D line of 10⁶ elements over 512 tiles (it would not fit on one): i32 exact, f32
/// within the bound, arg-max exact.
#[test]
fn million_element_line_over_512_tiles() {
    let n = 1_000_000;
    let mut r = Rng::new(3);
    let di = r.i32s(n);
    let df: Vec<f32> = (0..n).map(|_| r.f32_in(-1.0, 1.0)).collect();
    let mut g = Graph::new(&Target::custom(512, 256 * 1024));
    let xi = g.add_variable(poplar::DType::I32, &[n], "xi");
    let xf = g.add_variable(poplar::DType::F32, &[n], "xf");
    for (x, d) in [(&xi, None), (&xf, Some(&df))] {
        g.map_linearly(x, 2).unwrap();
        match d {
            Some(d) => g.set_initial_value(x, d).unwrap(),
            None => g.set_initial_value(x, &di).unwrap(),
        }
    }
    let mut prog = Vec::new();
    let ci = popops::cumsum(&mut g, &xi, 0, false, &mut prog, "ci").unwrap();
    let cf = popops::cumsum(&mut g, &xf, 0, true, &mut prog, "cf").unwrap();
    let a = popops::arg_max(&mut g, &xi, 0, &mut prog, "a").unwrap();
    g.create_host_read("ci", &ci).unwrap();
    g.create_host_read("cf", &cf).unwrap();
    g.create_host_read("a", &a).unwrap();
    let e = run(&g, prog, 2);
    let want = host_cumsum(&di, &[n], 0, false, 0, i32::wrapping_add);
    assert_eq!(e.read_tensor::<i32>("ci").unwrap(), want);
    check_f32_bound(&e.read_tensor::<f32>("cf").unwrap(), &df, &[n], 0, true);
    let wi: Vec<f64> = di.iter().map(|&v| f64::from(v)).collect();
    assert_eq!(
        e.read_tensor::<u32>("a").unwrap(),
        host_arg(&wi, &[n], 0, true)
    );
}
