//! Every repository path a page cites exists: README.md, ARCHITECTURE.md and `docs/**.md` (not
//! CHANGELOG.md, which is history). A cited path is a link (`[text](target)`, relative to the
//! page, its `#section` checked against the target page's headings) or a word in backticks or
//! in a code block that starts with a top-level folder of the repository (`apps/…`,
//! `docs/…`, `.ci/…`); globs and placeholders (`*`, `<…>`, `{…}`, `…`) are not checked.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use repo_checks::{files_with_ext, rel, root};

fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    pages.extend(files_with_ext(&root().join("docs"), ".md"));
    pages
}

/// The repository's top-level folders (a cited path must start with one).
fn top_folders() -> BTreeSet<String> {
    std::fs::read_dir(root())
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let name = p.file_name()?.to_string_lossy().into_owned();
            let hidden = name.starts_with('.') && name != ".ci";
            (p.is_dir() && !hidden && name != "target" && name != "out").then_some(name)
        })
        .collect()
}

/// `(line number, line, inside a code block)` of every line but the code fences.
fn lines(text: &str) -> Vec<(usize, &str, bool)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else {
            out.push((n + 1, line, fenced));
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings (outside code blocks), duplicates numbered as GitHub does.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, line, fenced) in lines(text) {
        let Some(h) = line.strip_prefix('#').filter(|_| !fenced) else {
            continue;
        };
        let base = slug(h.trim_start_matches('#'));
        let mut s = base.clone();
        let mut n = 0;
        while !out.insert(s.clone()) {
            n += 1;
            s = format!("{base}-{n}");
        }
    }
    out
}

/// `(line, target)` of every markdown link outside code.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line, _) in lines(text).into_iter().filter(|l| !l.2) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((n, after[..end].trim().to_string()));
            rest = &after[end..];
        }
    }
    out
}

/// `(line, word)` of every word in backticks or in a code block.
fn code_words(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line, fenced) in lines(text) {
        let spans: Vec<&str> = if fenced {
            vec![line]
        } else {
            line.split('`').skip(1).step_by(2).collect()
        };
        for span in spans {
            let words = span.split(|c: char| c.is_whitespace() || "(),;=\"'[]".contains(c));
            out.extend(words.filter(|w| !w.is_empty()).map(|w| (n, w.to_string())));
        }
    }
    out
}

/// A word as a repository path: without a trailing `:LINE` or punctuation; `None` if it does
/// not start with a top-level folder or is a pattern.
fn as_repo_path(word: &str, tops: &BTreeSet<String>) -> Option<String> {
    let w = word.trim_end_matches(['.', ',', ':', ';']);
    let w = match w.rsplit_once(':') {
        Some((p, line)) if line.chars().all(|c| c.is_ascii_digit()) => p,
        _ => w,
    };
    let first = w.split('/').next()?;
    if !w.contains('/') || !tops.contains(first) {
        return None;
    }
    if w.contains(['*', '<', '>', '{', '}', '…', '$', '|']) {
        return None;
    }
    Some(w.to_string())
}

/// The problems of one page: `page:line: path` for each cited path or section that is not there.
fn problems(page: &Path, tops: &BTreeSet<String>) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap();
    let dir = page.parent().unwrap();
    let mut out = Vec::new();
    for (n, target) in links(&text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
        let file = if file.is_empty() {
            page.to_path_buf()
        } else {
            dir.join(file)
        };
        if !file.exists() {
            out.push(format!("{}:{n}: link to {target}: no such file", rel(page)));
        } else if !anchor.is_empty() && file.extension().is_some_and(|e| e == "md") {
            let target_text = std::fs::read_to_string(&file).unwrap();
            if !anchors(&target_text).contains(anchor) {
                out.push(format!(
                    "{}:{n}: link to {target}: no such section",
                    rel(page)
                ));
            }
        }
    }
    for (n, word) in code_words(&text) {
        if let Some(p) = as_repo_path(&word, tops) {
            if !root().join(&p).exists() {
                out.push(format!("{}:{n}: `{p}`: no such file or folder", rel(page)));
            }
        }
    }
    out
}

#[test]
fn every_path_a_page_cites_exists() {
    let tops = top_folders();
    let all: Vec<String> = pages().iter().flat_map(|p| problems(p, &tops)).collect();
    assert!(
        all.is_empty(),
        "{} cited paths or sections do not exist:\n{}",
        all.len(),
        all.join("\n")
    );
}

#[test]
fn the_reader_finds_links_paths_and_sections() {
    let tops: BTreeSet<String> = ["apps", "docs"].map(String::from).into();
    assert_eq!(
        as_repo_path("apps/cardiac/src/main.rs:12", &tops).as_deref(),
        Some("apps/cardiac/src/main.rs")
    );
    assert_eq!(
        as_repo_path("docs/x.md.", &tops).as_deref(),
        Some("docs/x.md")
    );
    assert_eq!(as_repo_path("apps/*/tests/mpi.rs", &tops), None);
    assert_eq!(as_repo_path("target/tmp", &tops), None);
    assert_eq!(as_repo_path("poplar::graph", &tops), None);
    let text = "# Run `cardiac` — the slab\n## A, b\n## A, b\n```\n# not a heading\n```\n\
                see [it](docs/x.md#a-b) and `apps/y.rs`\n";
    assert_eq!(
        anchors(text),
        ["run-cardiac--the-slab", "a-b", "a-b-1"]
            .map(String::from)
            .into()
    );
    assert_eq!(links(text), [(7, "docs/x.md#a-b".to_string())]);
    assert!(code_words(text).contains(&(7, "apps/y.rs".to_string())));
}
