//! The tutorials in docs/tutorials quote their examples verbatim, and every tutorial has its
//! example.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Non-empty lines with leading and trailing whitespace removed.
fn norm(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

/// The contents of the ```rust blocks of a markdown file.
fn rust_blocks(md: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for line in md.lines() {
        match (&mut cur, line.trim_start()) {
            (None, l) if l.starts_with("```rust") => cur = Some(String::new()),
            (Some(_), l) if l.starts_with("```") => blocks.extend(cur.take()),
            (Some(b), _) => {
                b.push_str(line);
                b.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

/// Each tutorial, the package of its example and the example's folder.
const TUTORIALS: [(&str, &str, &str); 10] = [
    ("tut1_variables", "codelets", "codelets"),
    ("tut2_using_codelets", "codelets", "codelets"),
    ("tut3_writing_codelets", "codelets", "codelets"),
    ("tut4_profiling", "codelets", "codelets"),
    ("tut5_matvec", "codelets", "codelets"),
    ("tut6_matvec_opt", "codelets", "codelets"),
    ("tut7_streaming_memory", "codelets", "codelets"),
    ("tut8_popops_elementwise", "codelets", "codelets"),
    ("tut8_poprand_slices", "poprand", "libs/poprand"),
    ("tut9_conv_layer", "popnn", "libs/popnn"),
];

#[test]
fn code_blocks_are_excerpts_of_the_examples() {
    let readme = std::fs::read_to_string(root().join("docs/tutorials/README.md")).unwrap();
    for (name, package, dir) in TUTORIALS {
        let md_path = root().join(format!("docs/tutorials/{name}.md"));
        let md = std::fs::read_to_string(&md_path)
            .unwrap_or_else(|e| panic!("{}: {e}", md_path.display()));
        let example_path = format!("{dir}/examples/{name}.rs");
        let example = std::fs::read_to_string(root().join(&example_path)).unwrap();
        let ex = norm(&example);
        assert!(
            md.contains(&format!("cargo run -p {package} --example {name}")),
            "{name}.md does not say how to run its example"
        );
        assert!(
            readme.contains(&format!("({name}.md)")),
            "README lacks {name}"
        );
        let blocks = rust_blocks(&md);
        assert!(!blocks.is_empty(), "{name}.md has no code");
        for block in blocks {
            let b = norm(&block);
            let found = ex.windows(b.len()).any(|w| w == b.as_slice());
            assert!(
                found,
                "{name}.md: this block is not in {example_path}:\n{block}"
            );
        }
    }
}
