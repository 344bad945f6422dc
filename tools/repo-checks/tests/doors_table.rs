//! ARCHITECTURE.md's table "Doors between rooms" is the doors test's (`poplar-rs/tests/doors.rs`:
//! `CRATES`, `ROOMS`, `NEVER`): one row per room, in the pipeline's order, its crate, the rooms
//! it may import and the ones it must never import. The table between the markers is rendered
//! from the test's tables and must equal the page's; `UPDATE_GOLDEN=1 cargo test -p repo-checks
//! --test doors_table` writes it, keeping each room's "why" column (the one column written by
//! hand).

use repo_checks::root;

const BEGIN: &str = "<!-- doors table: generated from poplar-rs/tests/doors.rs by \
                     `UPDATE_GOLDEN=1 cargo test -p repo-checks --test doors_table` -->";
const END: &str = "<!-- end of the doors table -->";

/// A table of the doors test: `(name, [names])` pairs or `(a, b)` pairs.
fn strings(e: &syn::Expr) -> Vec<String> {
    let syn::Expr::Reference(r) = e else {
        panic!("expected `&[...]`")
    };
    let syn::Expr::Array(a) = &*r.expr else {
        panic!("expected `&[...]`")
    };
    a.elems.iter().map(lit).collect()
}

fn lit(e: &syn::Expr) -> String {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => s.value(),
        _ => panic!("expected a string literal"),
    }
}

fn tuples(e: &syn::Expr) -> Vec<(syn::Expr, syn::Expr)> {
    let syn::Expr::Reference(r) = e else {
        panic!("expected `&[...]`")
    };
    let syn::Expr::Array(a) = &*r.expr else {
        panic!("expected `&[...]`")
    };
    a.elems
        .iter()
        .map(|t| match t {
            syn::Expr::Tuple(t) if t.elems.len() == 2 => (t.elems[0].clone(), t.elems[1].clone()),
            _ => panic!("expected a pair"),
        })
        .collect()
}

struct Doors {
    crates: Vec<(String, Vec<String>)>,
    rooms: Vec<(String, Vec<String>)>,
    never: Vec<(String, String)>,
}

fn doors() -> Doors {
    let path = root().join("poplar-rs/tests/doors.rs");
    let ast = syn::parse_file(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let table = |name: &str| -> syn::Expr {
        ast.items
            .iter()
            .find_map(|i| match i {
                syn::Item::Const(c) if c.ident == name => Some((*c.expr).clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("poplar-rs/tests/doors.rs has no const {name}"))
    };
    let named = |name: &str| -> Vec<(String, Vec<String>)> {
        tuples(&table(name))
            .iter()
            .map(|(k, v)| (lit(k), strings(v)))
            .collect()
    };
    Doors {
        crates: named("CRATES"),
        rooms: named("ROOMS"),
        never: tuples(&table("NEVER"))
            .iter()
            .map(|(a, b)| (lit(a), lit(b)))
            .collect(),
    }
}

/// The page's "why" cell of each room, from its current table.
fn whys(table: &str) -> Vec<(String, String)> {
    table
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            let room = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((room.to_string(), cells.last()?.to_string()))
        })
        .collect()
}

fn list(names: &[String], none: &str) -> String {
    if names.is_empty() {
        none.to_string()
    } else {
        names.join(", ")
    }
}

/// The table as the page must show it.
fn render(d: &Doors, whys: &[(String, String)]) -> String {
    let mut out = String::from(
        "| crate | room | may import | never imports | why |\n|---|---|---|---|---|\n",
    );
    for (krate, rooms) in &d.crates {
        for room in rooms {
            let allowed = d
                .rooms
                .iter()
                .find(|(r, _)| r == room)
                .map(|(_, a)| a.clone())
                .unwrap_or_else(|| panic!("room '{room}' of CRATES is not in ROOMS"));
            let never: Vec<String> = d
                .never
                .iter()
                .filter(|(from, _)| from == room)
                .map(|(_, to)| to.clone())
                .collect();
            let why = whys
                .iter()
                .find(|(r, _)| r == room)
                .map_or("(say why)", |(_, w)| w.as_str());
            out += &format!(
                "| {krate} | `{room}` | {} | {} | {why} |\n",
                list(&allowed, "nothing"),
                list(&never, "—")
            );
        }
    }
    out
}

#[test]
fn architecture_md_shows_the_doors_of_the_doors_test() {
    let path = root().join("ARCHITECTURE.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let begin = page
        .find(BEGIN)
        .expect("ARCHITECTURE.md has the doors table's begin marker")
        + BEGIN.len()
        + 1;
    let end = page
        .find(END)
        .expect("ARCHITECTURE.md has the doors table's end marker");
    let current = &page[begin..end];
    let want = render(&doors(), &whys(current));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let updated = format!("{}{want}{}", &page[..begin], &page[end..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert!(
        current == want,
        "ARCHITECTURE.md's doors table is not poplar-rs/tests/doors.rs's; regenerate it with \
         `UPDATE_GOLDEN=1 cargo test -p repo-checks --test doors_table` and review the diff.\n\
         page:\n{current}\nthe doors test:\n{want}"
    );
}

/// Every room of `ROOMS` is in the table (through `CRATES`), so none can be left out.
#[test]
fn every_room_of_the_doors_test_is_in_a_crate() {
    let d = doors();
    for (room, _) in &d.rooms {
        assert!(
            d.crates.iter().any(|(_, rs)| rs.contains(room)),
            "room '{room}' of ROOMS is in no crate of CRATES"
        );
    }
}
