//! Checks that hold over the whole repository rather than one crate (its tests, in `tests/`):
//! the docs' cited paths exist (`doc_paths`), ARCHITECTURE.md's doors table is the doors
//! test's (`doors_table`), no source function is over 120 lines without a reason written above
//! it (`long_functions`), and unsafe code lives only where ARCHITECTURE.md says
//! (`unsafe_code`). This library holds what they share: where the repository's files are.

use std::path::{Path, PathBuf};

/// The repository's root folder (two above this crate's).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("tools/repo-checks sits two folders below the root")
        .to_path_buf()
}

/// `path` relative to the root, with `/` separators, for messages.
pub fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Every file under `dir` whose name ends with `ext`, sorted; build output (`target/`) and
/// hidden folders left out.
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(dir, ext, &mut out);
    out.sort();
    out
}

fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.expect("a readable folder entry").path();
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if p.is_dir() {
            walk(&p, ext, out);
        } else if name.ends_with(ext) {
            out.push(p);
        }
    }
}

/// A crate of the workspace: its package name and folder.
#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    pub dir: PathBuf,
}

/// The workspace's members, from the root `Cargo.toml`'s `members` (a trailing `/*` names
/// every folder with a `Cargo.toml` below it), sorted by folder.
pub fn members() -> Vec<Member> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("root Cargo.toml");
    let list = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("members"))
        .and_then(|l| l.trim().strip_prefix('='))
        .expect("a one-line `members = [...]` in the root Cargo.toml");
    let mut dirs = Vec::new();
    for entry in list.split('"').skip(1).step_by(2) {
        if let Some(parent) = entry.strip_suffix("/*") {
            for e in std::fs::read_dir(root().join(parent)).expect("a members folder") {
                let p = e.expect("a folder entry").path();
                if p.join("Cargo.toml").is_file() {
                    dirs.push(p);
                }
            }
        } else {
            dirs.push(root().join(entry));
        }
    }
    dirs.sort();
    dirs.into_iter()
        .map(|dir| Member {
            name: package_name(&dir),
            dir,
        })
        .collect()
}

fn package_name(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a member's Cargo.toml");
    text.lines()
        .find_map(|l| {
            let v = l.trim().strip_prefix("name")?.trim().strip_prefix('=')?;
            Some(v.trim().trim_matches('"').to_string())
        })
        .unwrap_or_else(|| panic!("{}: no package name", rel(dir)))
}

/// The non-test Rust sources of a member: its `src/**.rs`, without files that hold only tests
/// (`tests.rs`, anything under a `tests/` folder of `src/`).
pub fn sources(m: &Member) -> Vec<PathBuf> {
    files_with_ext(&m.dir.join("src"), ".rs")
        .into_iter()
        .filter(|p| {
            let r = p.strip_prefix(m.dir.join("src")).unwrap();
            p.file_name().is_some_and(|n| n != "tests.rs")
                && !r.components().any(|c| c.as_os_str() == "tests")
        })
        .collect()
}
