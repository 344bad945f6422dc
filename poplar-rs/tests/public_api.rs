//! The public API of the framework's crates, recorded in `poplar-rs/api/<crate>.txt` so that a
//! change to it shows in review (CHANGELOG.md says how versions follow it).
//!
//! The listing is read from the sources with `syn` and printed with `prettyplease`: every
//! module, and in it every `pub` item with its signature (function bodies, private fields,
//! private methods and documentation left out), every `pub use`, every trait implementation
//! and every exported macro. A module that is not itself public is marked `(private module)`:
//! its `pub` items reach users only through the `pub use` lines that name them.
//!
//! Regenerate after an intended change, then read the diff:
//! `UPDATE_GOLDEN=1 cargo test -p poplar --test public_api` (the same switch as the compiler's
//! golden files).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use syn::{ImplItem, Item, TraitItem, Visibility};

/// The framework crates: listing name and folder under `poplar-rs/`.
const CRATES: &[(&str, &str)] = &[
    ("poplar", "."),
    ("poplar-core", "core"),
    ("poplar-exe", "exe"),
    ("poplar-compiler", "compiler"),
    ("poplar-engine", "engine"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn is_pub(v: &Visibility) -> bool {
    matches!(v, Visibility::Public(_))
}

/// Attributes that are part of an item's contract; the rest (docs, lints, cfgs of tests) are
/// dropped from the listing.
fn keep_attrs(attrs: &mut Vec<syn::Attribute>) {
    attrs.retain(|a| {
        let p = a.path();
        p.is_ident("non_exhaustive")
            || p.is_ident("must_use")
            || p.is_ident("derive")
            || p.is_ident("repr")
            || p.is_ident("deprecated")
            || p.is_ident("doc") && a.to_token_stream_string().contains("hidden")
    });
}

trait AttrText {
    fn to_token_stream_string(&self) -> String;
}

impl AttrText for syn::Attribute {
    fn to_token_stream_string(&self) -> String {
        quote::ToTokens::to_token_stream(self).to_string()
    }
}

fn is_test_cfg(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.to_token_stream_string().contains("test")
            || a.path().is_ident("test")
    })
}

fn empty_body() -> syn::Block {
    syn::parse_quote!({})
}

/// The public surface of one item, or `None` if it has none.
fn surface(item: &Item) -> Option<Item> {
    let mut item = item.clone();
    let keep = match &mut item {
        Item::Fn(f) => {
            keep_attrs(&mut f.attrs);
            *f.block = empty_body();
            is_pub(&f.vis)
        }
        Item::Struct(s) => {
            keep_attrs(&mut s.attrs);
            if let syn::Fields::Named(named) = &mut s.fields {
                named.named = named
                    .named
                    .iter()
                    .filter(|f| is_pub(&f.vis))
                    .cloned()
                    .map(|mut f| {
                        keep_attrs(&mut f.attrs);
                        f
                    })
                    .collect();
            }
            if let syn::Fields::Unnamed(unnamed) = &mut s.fields {
                for f in unnamed.unnamed.iter_mut() {
                    keep_attrs(&mut f.attrs);
                    if !is_pub(&f.vis) {
                        f.ty = syn::parse_quote!(_);
                    }
                }
            }
            is_pub(&s.vis)
        }
        Item::Enum(e) => {
            keep_attrs(&mut e.attrs);
            for v in e.variants.iter_mut() {
                keep_attrs(&mut v.attrs);
                v.discriminant = None;
                for f in v.fields.iter_mut() {
                    keep_attrs(&mut f.attrs);
                }
            }
            is_pub(&e.vis)
        }
        Item::Trait(t) => {
            keep_attrs(&mut t.attrs);
            for it in t.items.iter_mut() {
                match it {
                    TraitItem::Fn(f) => {
                        keep_attrs(&mut f.attrs);
                        if f.default.is_some() {
                            f.default = Some(empty_body());
                        }
                    }
                    TraitItem::Const(c) => {
                        keep_attrs(&mut c.attrs);
                        c.default = None;
                    }
                    TraitItem::Type(ty) => keep_attrs(&mut ty.attrs),
                    _ => {}
                }
            }
            is_pub(&t.vis)
        }
        Item::Type(t) => {
            keep_attrs(&mut t.attrs);
            is_pub(&t.vis)
        }
        Item::Const(c) => {
            keep_attrs(&mut c.attrs);
            *c.expr = syn::parse_quote!(_);
            is_pub(&c.vis)
        }
        Item::Static(s) => {
            keep_attrs(&mut s.attrs);
            *s.expr = syn::parse_quote!(_);
            is_pub(&s.vis)
        }
        Item::Use(u) => {
            keep_attrs(&mut u.attrs);
            is_pub(&u.vis)
        }
        Item::Impl(i) => {
            if is_test_cfg(&i.attrs) {
                return None;
            }
            keep_attrs(&mut i.attrs);
            let is_trait_impl = i.trait_.is_some();
            i.items = i
                .items
                .iter()
                .filter_map(|it| impl_item_surface(it, is_trait_impl))
                .collect();
            is_trait_impl || !i.items.is_empty()
        }
        _ => false,
    };
    keep.then_some(item)
}

/// `macro_rules! name { ... }` for a `#[macro_export]` macro (its rules are not listed), marked
/// when hidden from the docs.
fn exported_macro(item: &Item) -> Option<String> {
    let Item::Macro(m) = item else { return None };
    if !m.attrs.iter().any(|a| a.path().is_ident("macro_export")) {
        return None;
    }
    let name = m.ident.as_ref()?;
    let hidden = m
        .attrs
        .iter()
        .any(|a| a.path().is_ident("doc") && a.to_token_stream_string().contains("hidden"));
    let mark = if hidden { "#[doc(hidden)] " } else { "" };
    Some(format!(
        "{mark}#[macro_export] macro_rules! {name} {{ ... }}"
    ))
}

/// The part of an impl's item that is API: every item of a trait impl (by name), the `pub`
/// items of an inherent impl.
fn impl_item_surface(it: &ImplItem, in_trait_impl: bool) -> Option<ImplItem> {
    let mut it = it.clone();
    match &mut it {
        ImplItem::Fn(f) => {
            if in_trait_impl {
                return None; // the trait's signature says it
            }
            keep_attrs(&mut f.attrs);
            f.block = empty_body();
            is_pub(&f.vis).then_some(it)
        }
        ImplItem::Const(c) => {
            if in_trait_impl {
                return None;
            }
            keep_attrs(&mut c.attrs);
            c.expr = syn::parse_quote!(_);
            is_pub(&c.vis).then_some(it)
        }
        ImplItem::Type(t) => {
            keep_attrs(&mut t.attrs);
            (in_trait_impl || is_pub(&t.vis)).then_some(it)
        }
        _ => None,
    }
}

/// A module's file: `dir/name.rs` or `dir/name/mod.rs`.
fn module_file(dir: &Path, name: &str) -> Option<(PathBuf, PathBuf)> {
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        return Some((flat, dir.join(name)));
    }
    let nested = dir.join(name).join("mod.rs");
    nested.exists().then(|| (nested, dir.join(name)))
}

/// Lists a module's items, then its submodules in order.
fn list_module(out: &mut String, path: &str, public: bool, items: &[Item], dir: &Path) {
    let surface: Vec<Item> = items
        .iter()
        .filter(|i| !matches!(i, Item::Mod(_)))
        .filter_map(surface)
        .collect();
    let private = if public { "" } else { " (private module)" };
    writeln!(out, "// ---- mod {path}{private}").unwrap();
    for m in items.iter().filter_map(exported_macro) {
        writeln!(out, "{m}").unwrap();
    }
    if !surface.is_empty() {
        let file = syn::File {
            shebang: None,
            attrs: vec![],
            items: surface,
        };
        out.push_str(&prettyplease::unparse(&file));
    }
    out.push('\n');
    for item in items {
        let Item::Mod(m) = item else { continue };
        if is_test_cfg(&m.attrs) {
            continue;
        }
        let name = m.ident.to_string();
        let child_public = public && is_pub(&m.vis);
        let child_path = format!("{path}::{name}");
        if let Some((_, inline)) = &m.content {
            list_module(out, &child_path, child_public, inline, &dir.join(&name));
            continue;
        }
        let (file, child_dir) = module_file(dir, &name)
            .unwrap_or_else(|| panic!("module {child_path}: no file in {}", dir.display()));
        let parsed = parse(&file);
        list_module(out, &child_path, child_public, &parsed.items, &child_dir);
    }
}

fn parse(file: &Path) -> syn::File {
    let text = std::fs::read_to_string(file).unwrap();
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

fn listing(krate: &str, folder: &str) -> String {
    let src = root().join(folder).join("src");
    let lib = parse(&src.join("lib.rs"));
    let ident = krate.replace('-', "_");
    let mut out = format!(
        "// The public API of `{krate}`: regenerate with\n\
         // UPDATE_GOLDEN=1 cargo test -p poplar --test public_api\n\n"
    );
    list_module(&mut out, &ident, true, &lib.items, &src);
    out
}

#[test]
fn the_public_api_is_the_recorded_one() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut changed = Vec::new();
    for (krate, folder) in CRATES {
        let got = listing(krate, folder);
        let file = root().join("api").join(format!("{krate}.txt"));
        if update {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&file).unwrap_or_default();
        if got != want {
            let first = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| got.lines().count().min(want.lines().count()));
            changed.push(format!(
                "{krate}: {} differs from line {} on:\n  now:      {}\n  recorded: {}",
                file.display(),
                first + 1,
                got.lines().nth(first).unwrap_or("(end)"),
                want.lines().nth(first).unwrap_or("(end)"),
            ));
        }
    }
    assert!(
        changed.is_empty(),
        "the public API changed; if intended, record it with \
         `UPDATE_GOLDEN=1 cargo test -p poplar --test public_api`, note it in CHANGELOG.md \
         (a breaking change bumps the minor version) and review the diff:\n{}",
        changed.join("\n")
    );
}

/// The listing sees what it claims to: a known public function with its signature, a private
/// module's mark, and nothing of a function body.
#[test]
fn the_listing_shows_signatures_not_bodies() {
    let core = listing("poplar-core", "core");
    assert!(core.contains("// ---- mod poplar_core::target\n"), "{core}");
    assert!(
        core.contains("pub fn gc200() -> Target"),
        "Target::gc200 missing"
    );
    let compiler = listing("poplar-compiler", "compiler");
    assert!(compiler.contains("mod poplar_compiler::compiler::lower (private module)"));
    assert!(
        compiler.contains(
            "    pub fn add_vertex(\n        &mut self,\n        cs: ComputeSet,\n        \
             codelet: &str,\n    ) -> Result<VertexRef, GraphError> {}"
        ),
        "Graph::add_vertex missing"
    );
    assert!(!compiler.contains("check_compute_set"), "a body leaked");
}
