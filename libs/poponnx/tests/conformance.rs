//! ONNX's backend conformance suite: every node test of the pinned `onnx` package
//! (`onnx/backend/test/data/node`, generated from its case files), imported, run on a small
//! simulated chip and compared with its reference outputs at the suite's tolerances (rtol 1e-3,
//! atol 1e-7).
//!
//! `tests/conformance.expect` lists each test as `pass` or as an expected failure with its
//! reason. The test fails when a listed pass fails, when an expected failure passes, and when
//! the suite holds a test the list lacks, so the list stays true. Regenerate it (and the
//! per-op table of `docs/onnx.md`) with
//! `UPDATE_GOLDEN=1 cargo test -p poponnx --test conformance`.
//!
//! The suite is found through `POPONNX_ONNX_NODE_TESTS` (a folder of node tests) or the `onnx`
//! package of the Python `POPLAR_PYTHON` names (`scripts/test` installs the pinned one).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use support::conformance::{run_case, Outcome};

const EXPECT: &str = "tests/conformance.expect";
const DOC: &str = "../../docs/onnx.md";

fn suite_dir() -> PathBuf {
    if let Ok(d) = std::env::var("POPONNX_ONNX_NODE_TESTS") {
        return PathBuf::from(d);
    }
    let python = std::env::var("POPLAR_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = std::process::Command::new(&python)
        .args([
            "-c",
            "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend', 'test', 'data', 'node')); print(onnx.__version__)",
        ])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let s = String::from_utf8_lossy(&o.stdout);
            let mut lines = s.lines();
            let dir = PathBuf::from(lines.next().unwrap_or_default());
            let version = lines.next().unwrap_or_default().to_string();
            assert_eq!(
                version,
                support::conformance::ONNX_VERSION,
                "{python} has onnx {version}; the expectations are for onnx {} (pip install onnx=={})",
                support::conformance::ONNX_VERSION,
                support::conformance::ONNX_VERSION
            );
            dir
        }
        _ => panic!(
            "the conformance suite needs the `onnx` Python package {v}: run scripts/test (it installs it), \
             or `pip install onnx=={v}` and set POPLAR_PYTHON, or set POPONNX_ONNX_NODE_TESTS to its node tests",
            v = support::conformance::ONNX_VERSION
        ),
    }
}

fn read_expectations() -> BTreeMap<String, Outcome> {
    let text = std::fs::read_to_string(EXPECT).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut parts = l.splitn(3, '\t');
            let name = parts.next().unwrap().to_string();
            let kind = parts.next().unwrap_or("");
            let outcome = match kind {
                "pass" => Outcome::Pass {
                    fixed: parts.next().map(str::to_string),
                },
                _ => Outcome::Fail(parts.next().unwrap_or("").to_string()),
            };
            (name, outcome)
        })
        .collect()
}

fn write_expectations(results: &BTreeMap<String, (String, Outcome)>) {
    let mut s = String::from(
        "# ONNX node tests (onnx 1.17.0): pass, or fail with the reason. Generated:\n\
         # UPDATE_GOLDEN=1 cargo test -p poponnx --test conformance\n",
    );
    for (name, (_, o)) in results {
        match o {
            Outcome::Pass { fixed: None } => s += &format!("{name}\tpass\n"),
            Outcome::Pass { fixed: Some(f) } => s += &format!("{name}\tpass\t{f}\n"),
            Outcome::Fail(r) => s += &format!("{name}\tfail\t{r}\n"),
        }
    }
    std::fs::write(EXPECT, s).unwrap();
}

/// Why a failing test is outside what a tiled chip runs, or `None`: element types no tile
/// holds, values that are not tensors, other domains' models, shapes known only at run time.
fn outside(reason: &str) -> Option<&'static str> {
    if reason.starts_with("type ") || reason.contains("element type") {
        Some("element types no tile holds (double, int8, int16, 64-bit unsigned, bfloat16, float8, 4-bit, strings)")
    } else if reason.contains("is not a tensor") {
        Some("sequences, maps and optionals")
    } else if reason.contains("imports no opset of the default domain") {
        Some("models of other domains only (ai.onnx.ml, ai.onnx.preview.training)")
    } else if reason.contains("dynamic shape") {
        Some("shapes known only at run time")
    } else {
        None
    }
}

/// The summary and the per-op table between the markers of `docs/onnx.md`.
fn write_doc_table(results: &BTreeMap<String, (String, Outcome)>) {
    // op -> (passed, outside the chip, tests)
    let mut per_op: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut why_outside: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, (op, o)) in results {
        // An expanded test (the op's function body) counts for the op it expands.
        let base = name.find("_expanded").map(|i| &name[..i]);
        let op = base
            .and_then(|b| results.get(b))
            .map_or(op.as_str(), |(o, _)| o.as_str());
        let e = per_op.entry(op).or_default();
        e.2 += 1;
        match o {
            Outcome::Pass { .. } => e.0 += 1,
            Outcome::Fail(r) => {
                if let Some(w) = outside(r) {
                    e.1 += 1;
                    *why_outside.entry(w).or_default() += 1;
                }
            }
        }
    }
    let passed: usize = per_op.values().map(|v| v.0).sum();
    let out: usize = per_op.values().map(|v| v.1).sum();
    let total = results.len();
    let inside = total - out;
    let ops_passing = per_op.values().filter(|v| v.0 > 0).count();
    let mut t = format!(
        "**{passed} of {total} node tests pass** ({:.1} %); of the {inside} whose values a tile can hold, {passed} ({:.1} %). \
         {ops_passing} of {} ops pass at least one test. Outside what a tile holds ({out} tests):\n\n",
        100.0 * passed as f64 / total as f64,
        100.0 * passed as f64 / inside.max(1) as f64,
        per_op.len()
    );
    for (why, k) in &why_outside {
        t += &format!("- {why}: {k}\n");
    }
    t += "\n| op | passed | outside a tile | tests |\n|---|---|---|---|\n";
    for (op, (p, o, n)) in &per_op {
        t += &format!("| {op} | {p} | {o} | {n} |\n");
    }
    let doc = std::fs::read_to_string(DOC).unwrap_or_default();
    let (begin, end) = ("<!-- conformance:begin -->\n", "<!-- conformance:end -->");
    let (Some(a), Some(b)) = (doc.find(begin), doc.find(end)) else {
        panic!("{DOC} lacks the markers {begin:?} … {end:?}");
    };
    let new = format!("{}{begin}{t}{}", &doc[..a], &doc[b..]);
    std::fs::write(DOC, new).unwrap();
}

#[test]
fn every_node_test_of_the_onnx_suite_passes_or_fails_as_listed() {
    let dir = suite_dir();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("model.onnx").is_file())
        .collect();
    cases.sort();
    if let Ok(filter) = std::env::var("POPONNX_CASES") {
        cases.retain(|c| c.file_name().unwrap().to_string_lossy().contains(&filter));
    }
    let results: BTreeMap<String, (String, Outcome)> = cases
        .iter()
        .map(|c| {
            let name = c.file_name().unwrap().to_string_lossy().into_owned();
            (name, run_case(Path::new(c)))
        })
        .collect();
    let passed = results
        .values()
        .filter(|(_, o)| matches!(o, Outcome::Pass { .. }))
        .count();
    println!("conformance: {passed} of {} node tests pass", results.len());
    if std::env::var_os("POPONNX_CASES").is_some() {
        // A developer's filter: print each outcome; the list is checked on whole runs only.
        for (name, (op, o)) in &results {
            println!("{name} ({op}): {o:?}");
        }
        assert!(
            std::env::var_os("UPDATE_GOLDEN").is_none(),
            "UPDATE_GOLDEN needs the whole suite (unset POPONNX_CASES)"
        );
        return;
    }
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        write_expectations(&results);
        write_doc_table(&results);
        return;
    }
    let expected = read_expectations();
    let mut wrong = Vec::new();
    for (name, (_, got)) in &results {
        match (expected.get(name), got) {
            (None, _) => wrong.push(format!("{name}: not listed in {EXPECT}")),
            (Some(Outcome::Pass { .. }), Outcome::Fail(r)) => {
                wrong.push(format!("{name}: listed as pass, fails: {r}"))
            }
            (Some(Outcome::Fail(r)), Outcome::Pass { .. }) => wrong.push(format!(
                "{name}: listed as failing ({r}), passes: list it as pass"
            )),
            _ => {}
        }
    }
    for name in expected.keys().filter(|k| !results.contains_key(*k)) {
        wrong.push(format!("{name}: listed, but not in the suite"));
    }
    assert!(
        wrong.is_empty(),
        "{} tests differ from {EXPECT}:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
