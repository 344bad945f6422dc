//! No source function over 120 lines unless a line comment directly above it (above its doc
//! comment and attributes, or between them and `fn`) starts with `// Long:` and gives the
//! reason. Sources are the workspace members' `src/` (not their tests, benches or examples,
//! and not `#[cfg(test)]` modules); functions written inside macros are not seen.

use std::path::Path;

use proc_macro2::Span;
use repo_checks::{members, rel, sources};
use syn::visit::Visit;

const LIMIT: usize = 120;
const MARKER: &str = "// Long:";

/// A function's name (with its impl's type), first line of its signature and last line.
struct Function {
    name: String,
    first_attr_line: usize,
    fn_line: usize,
    end_line: usize,
}

#[derive(Default)]
struct Finder {
    within: Vec<String>,
    found: Vec<Function>,
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        (a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test")))
            || a.path().is_ident("test")
    })
}

impl Finder {
    fn record(&mut self, name: &syn::Ident, attrs: &[syn::Attribute], fn_span: Span, end: Span) {
        let fn_line = fn_span.start().line;
        let first_attr_line = attrs
            .iter()
            .map(|a| a.pound_token.span.start().line)
            .chain([fn_line])
            .min()
            .unwrap();
        let mut path = self.within.clone();
        path.push(name.to_string());
        self.found.push(Function {
            name: path.join("::"),
            first_attr_line,
            fn_line,
            end_line: end.end().line,
        });
    }
}

impl Finder {
    /// Records a function with a body unless it is test-only; whether to look inside it.
    fn function(
        &mut self,
        attrs: &[syn::Attribute],
        sig: &syn::Signature,
        body: &syn::Block,
    ) -> bool {
        if is_test_only(attrs) {
            return false;
        }
        self.record(
            &sig.ident,
            attrs,
            sig.fn_token.span,
            body.brace_token.span.close(),
        );
        true
    }
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test_only(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if self.function(&f.attrs, &f.sig, &f.block) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if is_test_only(&i.attrs) {
            return;
        }
        let ty = &i.self_ty;
        self.within.push(quote_type(ty));
        syn::visit::visit_item_impl(self, i);
        self.within.pop();
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if self.function(&f.attrs, &f.sig, &f.block) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(body) = &f.default {
            let span = f.sig.fn_token.span;
            self.record(&f.sig.ident, &f.attrs, span, body.brace_token.span.close());
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// The last segment of an impl's type (`Engine` of `impl<'a> crate::Engine<'a>`).
fn quote_type(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map_or_else(|| "_".to_string(), |s| s.ident.to_string()),
        _ => "_".to_string(),
    }
}

/// Whether a `// Long:` line sits directly above `f`: in the comments and attributes between
/// its first attribute (or doc comment) and `fn`, or in the plain comments right above them.
fn has_reason(lines: &[&str], f: &Function) -> bool {
    let line = |n: usize| lines.get(n - 1).map_or("", |l| l.trim());
    let mut top = f.first_attr_line;
    while top > 1 && line(top - 1).starts_with("//") {
        top -= 1;
    }
    (top..f.fn_line).any(|n| line(n).starts_with(MARKER))
}

fn long_functions(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("a readable source");
    let ast =
        syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: does not parse: {e}", rel(file)));
    let mut finder = Finder::default();
    finder.visit_file(&ast);
    let lines: Vec<&str> = text.lines().collect();
    finder
        .found
        .iter()
        .filter(|f| f.end_line - f.fn_line + 1 > LIMIT && !has_reason(&lines, f))
        .map(|f| {
            format!(
                "{}:{}: fn {} is {} lines",
                rel(file),
                f.fn_line,
                f.name,
                f.end_line - f.fn_line + 1
            )
        })
        .collect()
}

#[test]
fn no_function_is_over_120_lines_without_a_reason_above_it() {
    let offenders: Vec<String> = members()
        .into_iter()
        .flat_map(|m| sources(&m))
        .flat_map(|f| long_functions(&f))
        .collect();
    assert!(
        offenders.is_empty(),
        "{} functions over {LIMIT} lines without a `{MARKER} <reason>` comment above them \
         (split them, or say why not):\n{}",
        offenders.len(),
        offenders.join("\n")
    );
}

/// The checker itself: a long function is found with its impl's type, a reason above its doc
/// comment excuses it, a short one and a `#[cfg(test)]` module are not reported.
#[test]
fn the_checker_sees_long_functions_and_their_reasons() {
    let body = "    let x = 1;\n".repeat(LIMIT);
    let src = format!(
        "struct S;\nimpl S {{\n    /// Doc.\n    fn long() {{\n{body}    }}\n    fn short() {{}}\n}}\n\
         // Long: one table, read top to bottom.\n/// Doc.\n#[inline]\nfn excused() {{\n{body}}}\n\
         fn plain() {{\n{body}}}\n#[cfg(test)]\nmod tests {{\n    fn t() {{\n{body}    }}\n}}\n"
    );
    let dir = std::env::temp_dir().join(format!("repo-checks-long-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("x.rs");
    std::fs::write(&file, src).unwrap();
    let found = long_functions(&file);
    std::fs::remove_dir_all(&dir).unwrap();
    let names: Vec<&str> = found
        .iter()
        .map(|l| l.split("fn ").nth(1).unwrap().split(' ').next().unwrap())
        .collect();
    assert_eq!(names, ["S::long", "plain"], "{found:#?}");
}
