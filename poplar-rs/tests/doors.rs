//! The doors between rooms: which module of the framework may import which (ARCHITECTURE.md,
//! "Doors between rooms"). The rooms live in four crates (`CRATES`), and Cargo already refuses
//! a door between crates that do not depend on each other; this test guards what Cargo cannot
//! see: the doors between rooms of one crate, and the rooms a crate's root imports from the
//! crates below it. It reads every `crate::…` (and `poplar_*::…`) path in `poplar-rs/*/src` and
//! fails when a file reaches into a room its own room may not enter. A new room must be added
//! to `ROOMS` with the rooms it may use, which is the point: a new dependency is a decision made
//! in review, not an accident.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each room and the rooms it may import. A room always may import itself.
const ROOMS: &[(&str, &[&str])] = &[
    // Leaves: plain data and helpers that everything may use.
    ("target", &[]),
    ("dtype", &[]),
    // Typed ids and dense maps; `TileMap` is keyed by the target's `TileId`.
    ("entity", &["target"]),
    // Floating-point modes of host threads (subnormal flushing).
    ("fp", &[]),
    // The host's vector instruction-set level and the kernels compiled for each.
    ("isa", &[]),
    // Deterministic pseudo-random numbers (SplitMix64) for every crate and test.
    ("rand", &[]),
    // Codelets are written against tile memory only: no graph, compiler, exe or engine.
    ("codelet", &["dtype", "entity", "rand", "target"]),
    // The IR users build (graph/, including its programs).
    ("graph", &["codelet", "dtype", "entity", "target"]),
    // The compiler reads the graph and writes the executable; it never runs anything.
    (
        "compiler",
        &["codelet", "dtype", "entity", "exe", "graph", "target"],
    ),
    // Files created exclusively without following links, inputs opened only when regular:
    // plain I/O, the one place every writer and reader of the workspace goes through.
    ("files", &[]),
    // Files written through a temporary and renamed (executables and profiles): plain I/O.
    ("atomic", &["files"]),
    // The executable is self-contained: nothing of the graph IR or the compiler.
    (
        "exe",
        &["atomic", "codelet", "dtype", "entity", "files", "target"],
    ),
    // The profile reads executables and the engine's records; it never runs or compiles.
    (
        "profile",
        &[
            "atomic", "codelet", "dtype", "entity", "exe", "files", "target",
        ],
    ),
    // The ranks of a job and their transport (MPI behind the feature `mpi`): which rank owns
    // which tiles, nothing of what runs on them.
    ("dist", &["target"]),
    // The engine runs executables: no graph IR, no compiler.
    (
        "engine",
        &[
            "codelet", "dist", "dtype", "entity", "exe", "fp", "isa", "profile", "rand", "target",
        ],
    ),
];

/// Pairs that must stay absent whatever the table above says (the one-way doors),
/// checked separately so that widening the table by mistake still fails here.
const NEVER: &[(&str, &str)] = &[
    ("exe", "graph"),
    ("exe", "compiler"),
    ("exe", "engine"),
    ("engine", "graph"),
    ("engine", "compiler"),
    ("profile", "engine"),
    ("profile", "compiler"),
    ("profile", "graph"),
    ("graph", "compiler"),
    ("graph", "exe"),
    ("graph", "engine"),
    ("codelet", "engine"),
    ("codelet", "graph"),
    ("codelet", "compiler"),
    ("dist", "engine"),
    ("dist", "exe"),
];

/// Each crate of the framework (its folder under `poplar-rs/`) and the rooms it holds, in the
/// order of the pipeline: a crate may depend only on crates before it.
const CRATES: &[(&str, &[&str])] = &[
    (
        "core",
        &["codelet", "dtype", "entity", "fp", "isa", "rand", "target"],
    ),
    ("exe", &["atomic", "exe", "files", "profile"]),
    ("compiler", &["compiler", "graph"]),
    ("engine", &["dist", "engine"]),
];

fn src(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(krate)
        .join("src")
}

fn crate_of(room: &str) -> usize {
    CRATES
        .iter()
        .position(|(_, rooms)| rooms.contains(&room))
        .unwrap_or_else(|| panic!("room '{room}' is in no crate of CRATES"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The room of a source file: its first path component under its crate's src/, without `.rs`.
fn room_of(krate: &str, file: &Path) -> String {
    let rel = file.strip_prefix(src(krate)).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// Every room named by a `crate::room` or `poplar_x::room` path in `text` (in `use` lines,
/// braces and code), skipping line comments. `crate::{a, b::{c, d}}` names `a` and `b`, over
/// several lines too.
fn rooms_used(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    for prefix in [
        "crate::",
        "poplar_core::",
        "poplar_exe::",
        "poplar_compiler::",
        "poplar_engine::",
    ] {
        out.extend(paths_after(&code, prefix));
    }
    out.remove("");
    out
}

/// The first components of every path that starts with `prefix` in `code`.
fn paths_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let after = &rest[i + prefix.len()..];
        if let Some(inner) = after.strip_prefix('{') {
            // Top-level items of the group: split at commas outside nested braces.
            let mut depth = 0usize;
            let mut item_start = 0;
            let mut end = inner.len();
            for (j, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        end = j;
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(&inner[item_start..j]));
                        item_start = j + 1;
                    }
                    _ => {}
                }
            }
            out.insert(ident(&inner[item_start..end]));
            rest = &inner[end..];
        } else {
            out.insert(ident(after));
            rest = after;
        }
    }
    out
}

#[test]
fn no_room_imports_what_its_doors_do_not_allow() {
    let mut files = Vec::new();
    for (krate, _) in CRATES {
        let mut these = Vec::new();
        rust_files(&src(krate), &mut these);
        these.sort();
        files.extend(these.into_iter().map(|f| (*krate, f)));
    }
    let known: BTreeSet<&str> = ROOMS.iter().map(|(r, _)| *r).collect();
    // Names that are not rooms: crate-root items and re-exports used by macros.
    let not_rooms = [
        "inventory",
        "__codelet_multi_worker",
        "codelet_macro",
        "entity_id",
    ];
    let mut problems = Vec::new();
    for (krate, f) in &files {
        let room = room_of(krate, f);
        if room == "lib" {
            continue; // the crate root: `a_crate_root_imports_only_what_its_rooms_may_use`
        }
        let Some((_, allowed)) = ROOMS.iter().find(|(r, _)| *r == room) else {
            problems.push(format!(
                "{}: room '{room}' is not in the doors table (tests/doors.rs)",
                f.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        for used in rooms_used(&text) {
            if used == room || not_rooms.contains(&used.as_str()) {
                continue;
            }
            if !known.contains(used.as_str()) {
                // A crate-root item (a re-export such as crate::Tensor): resolve it by name.
                problems.push(format!(
                    "{}: `crate::{used}` is not a room; import from the room that defines it",
                    f.display()
                ));
                continue;
            }
            if !allowed.contains(&used.as_str()) {
                problems.push(format!(
                    "{}: room '{room}' may not import '{used}' (allowed: {allowed:?})",
                    f.display()
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "doors crossed:\n{}",
        problems.join("\n")
    );
}

/// A crate's root imports the rooms of crates below it (`use poplar_core::{codelet, …};`) so
/// that its files name every room alike (`crate::target::…`); it may import only rooms that
/// one of its own rooms may use, and those must live in a crate before it in the pipeline.
#[test]
fn a_crate_root_imports_only_what_its_rooms_may_use() {
    let mut problems = Vec::new();
    for (k, (krate, rooms)) in CRATES.iter().enumerate() {
        let lib = src(krate).join("lib.rs");
        let text = std::fs::read_to_string(&lib).unwrap();
        let used: BTreeSet<String> = ["poplar_core::", "poplar_exe::", "poplar_compiler::"]
            .iter()
            .flat_map(|p| paths_after(&text, p))
            .filter(|r| ROOMS.iter().any(|(room, _)| room == r))
            .collect();
        for u in &used {
            let wanted = rooms.iter().any(|r| {
                let (_, allowed) = ROOMS.iter().find(|(room, _)| room == r).unwrap();
                allowed.contains(&u.as_str())
            });
            if !wanted {
                problems.push(format!(
                    "{}: imports room '{u}' that none of {rooms:?} may use",
                    lib.display()
                ));
            }
            if crate_of(u) >= k {
                problems.push(format!(
                    "{}: imports room '{u}' of a crate not before it",
                    lib.display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every room is in exactly one crate, and a room's doors lead only into its own crate or into
/// crates before it (which Cargo then enforces).
#[test]
fn every_room_lives_in_one_crate_and_looks_down_the_pipeline() {
    for (room, allowed) in ROOMS {
        let k = crate_of(room);
        let homes = CRATES.iter().filter(|(_, rs)| rs.contains(room)).count();
        assert_eq!(homes, 1, "room '{room}' is in {homes} crates");
        for a in *allowed {
            assert!(
                crate_of(a) <= k,
                "room '{room}' may import '{a}', which lives in a crate after its own"
            );
        }
        assert!(
            src(CRATES[k].0).join(format!("{room}.rs")).exists()
                || src(CRATES[k].0).join(room).is_dir(),
            "room '{room}' has no file or folder in poplar-rs/{}/src",
            CRATES[k].0
        );
    }
}

/// The `poplar-*` crates named in a section (`[dependencies]`, `[dev-dependencies]`) of a
/// Cargo.toml, without their `poplar-` prefix (the façade `poplar` as itself).
fn framework_deps(manifest: &str, section: &str) -> BTreeSet<String> {
    let mut inside = false;
    let mut out = BTreeSet::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == section;
        } else if inside {
            let name = line.split(['=', '.', ' ']).next().unwrap_or("");
            if name == "poplar" {
                out.insert(name.to_string());
            } else if let Some(k) = name.strip_prefix("poplar-") {
                out.insert(k.to_string());
            }
        }
    }
    out
}

/// Cargo agrees with the doors: a framework crate's `[dependencies]` are exactly the crates
/// whose rooms its rooms may import (so compiler and engine stay apart), never the façade or
/// the test support; crates test themselves (`tests/`), and only their tests, through
/// `[dev-dependencies]`, may use crates above them.
#[test]
fn each_crate_depends_on_what_its_rooms_may_import_and_tests_itself() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (krate, rooms) in CRATES {
        let manifest = std::fs::read_to_string(root.join(krate).join("Cargo.toml")).unwrap();
        let deps = framework_deps(&manifest, "[dependencies]");
        let mut want = BTreeSet::new();
        for (_, allowed) in ROOMS.iter().filter(|(r, _)| rooms.contains(r)) {
            for a in *allowed {
                let home = CRATES[crate_of(a)].0;
                if home != *krate {
                    want.insert(home.to_string());
                }
            }
        }
        assert_eq!(
            deps, want,
            "poplar-rs/{krate}/Cargo.toml: its [dependencies] on the framework are not the crates its rooms may import (tests/doors.rs)"
        );
        assert!(
            root.join(krate).join("tests").is_dir(),
            "poplar-{krate} has no tests/ of its own"
        );
    }
    let kit = std::fs::read_to_string(root.join("testkit/Cargo.toml")).unwrap();
    assert!(
        kit.contains("publish = false")
            && !framework_deps(&kit, "[dependencies]").contains("poplar"),
        "the testkit is not published and builds on the framework's crates, not the façade"
    );
}

#[test]
fn the_one_way_doors_are_not_in_the_table() {
    for (from, to) in NEVER {
        let (_, allowed) = ROOMS.iter().find(|(r, _)| r == from).unwrap();
        assert!(
            !allowed.contains(to),
            "'{from}' must never import '{to}' (ARCHITECTURE.md, doors)"
        );
    }
}

#[test]
fn the_reader_sees_grouped_and_nested_paths() {
    let text = "use crate::{graph::Tensor, exe::Step};\nuse crate::target::TileId;\n\
                // use crate::engine::Engine;\nlet x = crate::dtype::DType::F32;\n\
                use crate::{\n    profile::Profile,\n    codelet::{Worker, Vertex},\n};\n";
    let got: Vec<String> = rooms_used(text).into_iter().collect();
    assert_eq!(
        got,
        ["codelet", "dtype", "exe", "graph", "profile", "target"]
    );
}
