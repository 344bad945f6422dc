//! The README's 20-line example is `examples/readme.rs`, verbatim.

#[test]
fn readme_example_is_the_example_file() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let start = readme.find("```rust\n").expect("README has a rust block") + "```rust\n".len();
    let end = start + readme[start..].find("```").unwrap();
    let example =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/readme.rs"))
            .unwrap();
    assert!(
        example.ends_with(&readme[start..end]),
        "examples/readme.rs differs from the README block"
    );
}
