//! Unsafe code lives only in the rooms ARCHITECTURE.md lists (its invariant "Unsafe code lives
//! in"), each listed room has some, and every `unsafe` block and `unsafe impl` of the sources
//! has a `// SAFETY:` comment directly above it. A room is a crate's top-level module (the
//! first path component under `src/`), named `package::room`. Sources are the workspace
//! members' `src/`, not their tests; the scan is of the text, so code inside macros counts.

use std::collections::{BTreeMap, BTreeSet};

use repo_checks::{members, rel, root, sources};

/// What follows the `unsafe` keyword, or `None` if this is not the keyword (`unsafe_code`).
fn keyword_at(line: &str, at: usize) -> Option<&str> {
    let before = line[..at].chars().next_back();
    if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let after = &line[at + "unsafe".len()..];
    if after.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
        return None;
    }
    Some(after.trim_start())
}

/// The code of a line: before any `//` comment.
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

fn unsafe_uses(line: &str) -> Vec<&str> {
    let code = code(line);
    code.match_indices("unsafe")
        .filter_map(|(at, _)| keyword_at(code, at))
        .collect()
}

/// Whether the lines right above `n` (0-based; up to a blank line or another line with unsafe
/// code, at most 12) hold a `// SAFETY:` comment.
fn justified(lines: &[&str], n: usize) -> bool {
    if lines[n].contains("// SAFETY:") {
        return true;
    }
    for l in lines[..n].iter().rev().take(12) {
        let t = l.trim();
        if t.starts_with("// SAFETY:") {
            return true;
        }
        if t.is_empty() || !unsafe_uses(l).is_empty() {
            return false;
        }
    }
    false
}

/// The rooms `package::room` with unsafe code, and the unjustified blocks and impls.
fn scan() -> (BTreeMap<String, usize>, Vec<String>) {
    let mut rooms = BTreeMap::new();
    let mut unjustified = Vec::new();
    for m in members() {
        for file in sources(&m) {
            let text = std::fs::read_to_string(&file).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let r = file.strip_prefix(m.dir.join("src")).unwrap();
            let room = r.components().next().unwrap().as_os_str().to_string_lossy();
            let room = room.trim_end_matches(".rs");
            for (n, line) in lines.iter().enumerate() {
                let uses = unsafe_uses(line);
                if uses.is_empty() {
                    continue;
                }
                *rooms.entry(format!("{}::{room}", m.name)).or_insert(0) += uses.len();
                let needs = uses
                    .iter()
                    .any(|u| u.starts_with('{') || u.is_empty() || u.starts_with("impl"));
                if needs && !justified(&lines, n) {
                    unjustified.push(format!("{}:{}: {}", rel(&file), n + 1, line.trim()));
                }
            }
        }
    }
    (rooms, unjustified)
}

/// The `package::room` names of ARCHITECTURE.md's bullet "Unsafe code lives in".
fn documented() -> BTreeSet<String> {
    let packages: Vec<String> = members().into_iter().map(|m| m.name).collect();
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text
        .find("- **Unsafe code lives in")
        .expect("ARCHITECTURE.md has the invariant \"- **Unsafe code lives in\"");
    let bullet = &text[start..];
    let end = bullet[2..]
        .find("\n- ")
        .or_else(|| bullet.find("\n\n"))
        .map_or(bullet.len(), |e| e + 2);
    bullet[..end]
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            s.split_once("::")
                .is_some_and(|(package, _)| packages.iter().any(|p| p == package))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn unsafe_code_lives_where_architecture_md_says() {
    let (rooms, _) = scan();
    let found: BTreeSet<String> = rooms.keys().cloned().collect();
    let listed = documented();
    let unlisted: Vec<_> = found
        .difference(&listed)
        .map(|r| format!("{r} ({} uses)", rooms[r]))
        .collect();
    let gone: Vec<_> = listed.difference(&found).collect();
    assert!(
        unlisted.is_empty() && gone.is_empty(),
        "ARCHITECTURE.md's \"Unsafe code lives in\" is not the code's: unsafe code in rooms it \
         does not list: {unlisted:?}; listed rooms without unsafe code: {gone:?}"
    );
}

#[test]
fn every_unsafe_block_and_impl_says_why_it_is_sound() {
    let (_, unjustified) = scan();
    assert!(
        unjustified.is_empty(),
        "unsafe without a `// SAFETY:` comment directly above:\n{}",
        unjustified.join("\n")
    );
}

#[test]
fn the_scanner_tells_the_keyword_from_its_lookalikes() {
    assert_eq!(unsafe_uses("let x = unsafe { f() };"), ["{ f() };"]);
    assert_eq!(
        unsafe_uses("unsafe impl Send for M {}"),
        ["impl Send for M {}"]
    );
    assert!(unsafe_uses("#![forbid(unsafe_code)]").is_empty());
    assert!(unsafe_uses("// unsafe { in a comment }").is_empty());
    let lines = [
        "// SAFETY: in bounds.",
        "debug_assert!(ok);",
        "unsafe { g() }",
        "",
        "unsafe { h() }",
    ];
    assert!(justified(&lines, 2));
    assert!(!justified(&lines, 4));
}
