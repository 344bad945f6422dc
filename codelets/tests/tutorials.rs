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

const TUTORIALS: [&str; 8] = [
    "tut1_variables",
    "tut2_using_codelets",
    "tut3_writing_codelets",
    "tut4_profiling",
    "tut5_matvec",
    "tut6_matvec_opt",
    "tut7_streaming_memory",
    "tut8_popops_elementwise",
];

#[test]
fn code_blocks_are_excerpts_of_the_examples() {
    let readme = std::fs::read_to_string(root().join("docs/tutorials/README.md")).unwrap();
    for name in TUTORIALS {
        let md_path = root().join(format!("docs/tutorials/{name}.md"));
        let md = std::fs::read_to_string(&md_path)
            .unwrap_or_else(|e| panic!("{}: {e}", md_path.display()));
        let example =
            std::fs::read_to_string(root().join(format!("codelets/examples/{name}.rs"))).unwrap();
        let ex = norm(&example);
        assert!(
            md.contains(&format!("cargo run -p codelets --example {name}")),
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
                "{name}.md: this block is not in codelets/examples/{name}.rs:\n{block}"
            );
        }
    }
}
