//! Tutorial 8's random-numbers-and-slices page quotes its example verbatim and says how to run
//! it (the example itself checks its results against the host when run).

use std::path::Path;

fn norm(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn the_tutorial_quotes_its_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let md = std::fs::read_to_string(root.join("docs/tutorials/tut8_poprand_slices.md")).unwrap();
    let example =
        std::fs::read_to_string(root.join("libs/poprand/examples/tut8_poprand_slices.rs")).unwrap();
    assert!(md.contains("cargo run -p poprand --example tut8_poprand_slices"));
    let ex = norm(&example);
    let mut blocks = 0;
    let mut cur: Option<String> = None;
    for line in md.lines() {
        match (&mut cur, line.trim_start()) {
            (None, l) if l.starts_with("```rust") => cur = Some(String::new()),
            (Some(b), l) if l.starts_with("```") => {
                let b = norm(b).iter().map(|s| s.to_string()).collect::<Vec<_>>();
                let found = ex
                    .windows(b.len())
                    .any(|w| w.iter().zip(&b).all(|(x, y)| x == y));
                assert!(found, "not in the example:\n{}", b.join("\n"));
                blocks += 1;
                cur = None;
            }
            (Some(b), _) => {
                b.push_str(line);
                b.push('\n');
            }
            _ => {}
        }
    }
    assert!(blocks >= 6, "{blocks} code blocks");
}
