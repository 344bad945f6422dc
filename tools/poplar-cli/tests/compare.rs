//! `--compare`: two executables (and profiles) that differ, made here, compared by the `poplar`
//! binary; the printed differences are checked against figures computed here from each run's
//! `MemoryReport` and `Profile`.

use poplar::profile::{MemoryReport, Profile, ProfileOptions};
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};
use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("poplar-cmp-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// 2 chips × 4 tiles of 64 KiB.
fn two_chips() -> Target {
    let mut t = Target::custom(4, 64 * 1024);
    t.num_ipus = 2;
    t
}

/// One run: its files and what they hold.
struct Run {
    exe: PathBuf,
    profile: PathBuf,
    memory: MemoryReport,
    prof: Profile,
}

/// `y = x + x` three times (`x` in pieces of 16 elements, `y` of `y_grain`: the mapping of `y`
/// is the "partitioning" that differs), and with `extra` a labelled `z = x + y` once more.
fn run(d: &Path, name: &str, target: &Target, y_grain: usize, extra: bool) -> Run {
    codelets::link();
    let mut g = Graph::new(target);
    let x = g.add_variable(DType::F32, &[400], "x");
    let y = g.add_variable(DType::F32, &[400], "y");
    g.map_linearly(&x, 16).unwrap();
    g.map_linearly(&y, y_grain).unwrap();
    g.create_host_write("x", &x).unwrap();
    let cs = g.add_compute_set("double");
    popops::add(&mut g, cs, &x, &x, &y).unwrap();
    let mut body = vec![Program::repeat(3, Program::execute(cs))];
    if extra {
        let z = g.add_variable(DType::F32, &[400], "z");
        g.map_linearly(&z, 100).unwrap();
        let cs2 = g.add_compute_set("sum");
        popops::add(&mut g, cs2, &x, &y, &z).unwrap();
        body.push(Program::labelled("extra", vec![Program::execute(cs2)]));
    }
    let p = Program::labelled("main", body);
    let exe = compile(&g, &[p], &CompileOptions::default()).unwrap();
    let exe_path = d.join(format!("{name}.popexe"));
    exe.save(&exe_path).unwrap();
    let mut e = Engine::new(&exe, EngineOptions::default()).unwrap();
    e.enable_profiling(ProfileOptions::default());
    e.write_tensor("x", &[1.0f32; 400]).unwrap();
    e.run(0).unwrap();
    let profile = d.join(format!("{name}.profile.json"));
    let prof = e.profile().unwrap().clone();
    prof.save(&profile).unwrap();
    Run {
        exe: exe_path,
        profile,
        memory: MemoryReport::from_executable(&exe),
        prof,
    }
}

fn poplar(args: &[&OsStr]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_poplar"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn os(p: &Path) -> &OsStr {
    p.as_os_str()
}

/// `{"a": a, "b": b, "diff": b - a}`.
fn pair(a: u64, b: u64) -> Value {
    serde_json::json!({"a": a, "b": b, "diff": b as i64 - a as i64})
}

/// The line of `what` in a printed table: `what  A  B  B-A  change`.
fn line<'a>(text: &'a str, what: &str) -> Vec<&'a str> {
    let l = text
        .lines()
        .find(|l| l.trim_start().starts_with(what))
        .unwrap_or_else(|| panic!("no line '{what}' in:\n{text}"));
    l[l.find(what).unwrap() + what.len()..]
        .split_whitespace()
        .collect()
}

fn signed(d: i64) -> String {
    if d > 0 {
        format!("+{d}")
    } else {
        d.to_string()
    }
}

/// `poplar CMD A --compare B [EXTRA…]`.
fn compare(cmd: &str, a: &Path, b: &Path, extra: &[&str]) -> (bool, String, String) {
    let mut args: Vec<&OsStr> = vec![cmd.as_ref(), os(a), "--compare".as_ref(), os(b)];
    args.extend(extra.iter().map(|e| OsStr::new(*e)));
    poplar(&args)
}

/// The printed `total` line starts `A  B  B-A`.
fn assert_total_line(text: &str, a: u64, b: u64) {
    let total = line(text, "total");
    assert_eq!(
        total[..3],
        [a.to_string(), b.to_string(), signed(b as i64 - a as i64)],
        "{text}"
    );
}

#[test]
fn memory_compare_prints_the_differences_of_the_memory_reports() {
    let d = dir("memory");
    let a = run(&d, "a", &two_chips(), 150, false);
    let b = run(&d, "b", &two_chips(), 40, false);
    let (ok, json, err) = compare("memory", &a.exe, &b.exe, &["--json", "--top", "3"]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&json).unwrap();
    let (ma, mb) = (&a.memory, &b.memory);
    let sum = |m: &MemoryReport, f: fn(&poplar::profile::TileMemory) -> u64| {
        m.tiles.iter().map(f).sum::<u64>()
    };
    assert_eq!(v["total"], pair(sum(ma, |t| t.total), sum(mb, |t| t.total)));
    assert_eq!(
        v["always_live"],
        pair(sum(ma, |t| t.always_live), sum(mb, |t| t.always_live))
    );
    assert_eq!(v["max_tile"], pair(ma.total.max, mb.total.max));
    for (k, ((name, x), (_, y))) in ma
        .by_category
        .entries()
        .iter()
        .zip(mb.by_category.entries())
        .enumerate()
    {
        assert_eq!(v["categories"][k]["name"], *name);
        assert_eq!(v["categories"][k]["diff"], y as i64 - *x as i64, "{name}");
        assert_eq!(v["categories"][k]["a"], *x, "{name}");
    }
    // The tiles whose total changed most, computed here.
    let mut want: Vec<(u32, i64)> = ma
        .tiles
        .iter()
        .zip(&mb.tiles)
        .filter(|(x, y)| x.total != y.total)
        .map(|(x, y)| (x.tile, y.total as i64 - x.total as i64))
        .collect();
    assert!(want.len() >= 2, "the mappings differ: {want:?}");
    assert_eq!(v["changed_tiles"], want.len());
    want.sort_by(|x, y| y.1.abs().cmp(&x.1.abs()).then(x.0.cmp(&y.0)));
    want.truncate(3);
    let got: Vec<(u32, i64)> = v["tiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["tile"].as_u64().unwrap() as u32,
                t["diff"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want);

    // The text shows the same numbers.
    let (ok, text, err) = compare("memory", &a.exe, &b.exe, &[]);
    assert!(ok, "{err}");
    assert_total_line(&text, sum(ma, |t| t.total), sum(mb, |t| t.total));
    let (tile, diff) = want[0];
    let t = line(&text, &format!("tile {tile} "));
    let (x, y) = (ma.tiles[tile as usize].total, mb.tiles[tile as usize].total);
    assert_eq!(t[..3], [x.to_string(), y.to_string(), signed(diff)]);
    println!("{text}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn profile_compare_matches_phases_by_name_and_lists_the_others() {
    let d = dir("profile");
    let a = run(&d, "a", &two_chips(), 150, false);
    let b = run(&d, "b", &two_chips(), 40, true);
    let (ok, json, err) = compare("profile", &a.profile, &b.profile, &["--json"]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["elapsed"]["total"],
        pair(a.prof.total_cycles(), b.prof.total_cycles())
    );
    assert_eq!(
        v["elapsed"]["exchange"],
        pair(a.prof.elapsed.exchange, b.prof.elapsed.exchange)
    );
    let rows = v["phases"].as_array().unwrap();
    // Every phase of A matches one of B (B has the same graph and one compute set more).
    for p in &a.prof.phases {
        let q = b
            .prof
            .phases
            .iter()
            .find(|q| q.kind == p.kind && q.name == p.name)
            .expect("in B too");
        let r = rows
            .iter()
            .find(|r| r["name"] == p.name.as_str() && r["kind"] == p.kind.name())
            .expect("a row");
        assert_eq!(r["a"]["cycles"], p.cycles, "{}", p.name);
        assert_eq!(r["b"]["cycles"], q.cycles, "{}", p.name);
    }
    let only_b: Vec<&str> = rows
        .iter()
        .filter(|r| r["a"].is_null())
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = b
        .prof
        .phases
        .iter()
        .filter(|q| {
            !a.prof
                .phases
                .iter()
                .any(|p| p.kind == q.kind && p.name == q.name)
        })
        .map(|q| q.name.as_str())
        .collect();
    assert!(want.contains(&"sum"), "{want:?}");
    assert_eq!(only_b, want);
    let extra = v["labels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "extra")
        .unwrap();
    assert!(extra["a"].is_null(), "{extra}");

    // The text: the total line, the phase's line and the unmatched section.
    let (ok, text, err) = compare("profile", &a.profile, &b.profile, &[]);
    assert!(ok, "{err}");
    assert_total_line(&text, a.prof.total_cycles(), b.prof.total_cycles());
    let p = &a.prof.phases[0];
    let q = b.prof.phases_named(&p.name).next().unwrap();
    let l = line(&text, &format!("{:<9} {}", p.kind.name(), p.name));
    assert_eq!(
        l[l.len() - 3..],
        [
            p.cycles.to_string(),
            q.cycles.to_string(),
            signed(q.cycles as i64 - p.cycles as i64)
        ]
    );
    let unmatched = text.find("Phases without a match").expect("listed");
    assert!(text[unmatched..].contains("compute   sum"), "{text}");
    println!("{text}");

    // Two executables: their static models.
    let (ok, text, err) = compare("profile", &a.exe, &b.exe, &[]);
    assert!(ok, "{err}");
    assert!(text.contains("modelled cycles of one execution"), "{text}");
    // A profile against an executable: refused, saying why.
    let (ok, _, err) = compare("profile", &a.profile, &b.exe, &[]);
    assert!(
        !ok && err.contains("give two profiles, or two executables"),
        "{err}"
    );
    assert!(err.starts_with("poplar: cannot compare"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn report_compare_embeds_both_reports_and_their_differences() {
    let d = dir("report");
    let a = run(&d, "a", &two_chips(), 150, false);
    let b = run(&d, "b", &two_chips(), 40, true);
    let page = d.join("cmp.html");
    let args = |out: &Path| -> Vec<PathBuf> {
        vec![
            "report".into(),
            a.exe.clone(),
            a.profile.clone(),
            "--compare".into(),
            b.exe.clone(),
            b.profile.clone(),
            "-o".into(),
            out.to_path_buf(),
        ]
    };
    let run_args = |v: &[PathBuf]| poplar(&v.iter().map(|p| p.as_os_str()).collect::<Vec<_>>());
    let (ok, _, err) = run_args(&args(&page));
    assert!(ok, "{err}");
    let data = poplar_viewer::embedded_compare(&std::fs::read_to_string(&page).unwrap()).unwrap();
    assert_eq!(data.schema, "poplar-compare");
    assert_eq!(data.title, "a.popexe vs b.popexe");
    // Each side is the report `poplar report` makes of it.
    let single = d.join("a.html");
    let (ok, _, err) = poplar(&[
        "report".as_ref(),
        os(&a.exe),
        os(&a.profile),
        "-o".as_ref(),
        os(&single),
    ]);
    assert!(ok, "{err}");
    let alone = poplar_viewer::embedded(&std::fs::read_to_string(&single).unwrap()).unwrap();
    assert_eq!(data.a, alone);
    // The differences, from the memory reports and profiles.
    let m = data.diff.memory.as_ref().unwrap();
    let sum = |r: &MemoryReport| r.tiles.iter().map(|t| t.total).sum::<u64>();
    assert_eq!((m.total.a, m.total.b), (sum(&a.memory), sum(&b.memory)));
    let e = data.diff.elapsed.as_ref().unwrap();
    assert_eq!(
        e.total.diff,
        b.prof.total_cycles() as i64 - a.prof.total_cycles() as i64
    );
    // Bytes between chips over the run, from the profiles' phases (per execution × executions).
    let between = |p: &Profile| {
        p.phases
            .iter()
            .map(|ph| ph.inter_chip_bytes * ph.executions)
            .sum::<u64>()
    };
    let x = data.diff.exchange.as_ref().unwrap();
    assert_eq!(x.weight, "run");
    let off = |m: &[u64]| m[1] + m[2];
    assert_eq!(off(&x.a), between(&a.prof));
    assert_eq!(off(&x.b), between(&b.prof));
    let xd = x.diff.as_ref().unwrap();
    assert_eq!(
        xd[1] + xd[2],
        between(&b.prof) as i64 - between(&a.prof) as i64
    );

    // The output rule: kept unless --force, never an input.
    let (ok, _, err) = run_args(&args(&page));
    assert!(!ok && err.contains("--force"), "{err}");
    let mut v = args(&b.profile);
    v.push("--force".into());
    let before = std::fs::read(&b.profile).unwrap();
    let (ok, _, err) = run_args(&v);
    assert!(!ok && err.contains("is an input"), "{err}");
    assert_eq!(std::fs::read(&b.profile).unwrap(), before);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn runs_that_cannot_be_compared_are_refused_and_other_targets_are_noted() {
    let d = dir("refuse");
    let a = run(&d, "a", &two_chips(), 150, false);
    let b = run(&d, "b", &two_chips(), 40, false);
    let c = run(&d, "c", &Target::custom(6, 64 * 1024), 40, false);
    let out = d.join("o.html");
    let o = out.as_os_str();
    let cases: [(Vec<&OsStr>, &str); 4] = [
        // One profile only.
        (
            vec![os(&a.exe), os(&a.profile), "--compare".as_ref(), os(&b.exe)],
            "only A has a profile",
        ),
        // B's profile is A's: the checksum says so.
        (
            vec![
                os(&a.exe),
                os(&a.profile),
                "--compare".as_ref(),
                os(&b.exe),
                os(&a.profile),
            ],
            "a profile of another executable",
        ),
        // A missing file, named.
        (
            vec![
                os(&a.exe),
                "--compare".as_ref(),
                d.join("nothing.popexe").into_os_string().leak(),
            ],
            "nothing.popexe",
        ),
        // Garbage as B.
        (
            vec![os(&a.exe), "--compare".as_ref(), os(&a.profile)],
            "a.profile.json",
        ),
    ];
    for (args, want) in cases {
        let mut all: Vec<&OsStr> = vec!["report".as_ref()];
        all.extend(args);
        all.extend(["-o".as_ref(), o]);
        let (ok, _, err) = poplar(&all);
        assert!(!ok, "{all:?}");
        assert!(
            err.contains(want) && !err.contains("panicked"),
            "{all:?}: {err}"
        );
        assert!(!out.exists(), "nothing written");
    }
    // Another target: compared where it means something, with notes.
    let (ok, _, err) = poplar(&[
        "report".as_ref(),
        os(&a.exe),
        "--compare".as_ref(),
        os(&c.exe),
        "-o".as_ref(),
        o,
    ]);
    assert!(ok, "{err}");
    assert!(
        err.contains("note: different targets: 8 tiles in A, 6 in B"),
        "{err}"
    );
    let data = poplar_viewer::embedded_compare(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let m = data.diff.memory.as_ref().unwrap();
    assert_eq!(m.changed_tiles, None);
    assert!(m.tiles.is_empty());
    assert!(data.diff.exchange.as_ref().unwrap().diff.is_none());
    assert_eq!(data.diff.phase_source, "model");
    let (ok, text, err) = compare("memory", &a.exe, &c.exe, &[]);
    assert!(ok, "{err}");
    assert!(
        text.contains("not compared (different tile counts)"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
