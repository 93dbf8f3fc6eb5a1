//! No import cycle anywhere in `src/`, counted between files.
//!
//! File A depends on file B when A's code names an item *defined* in B: through a `use`
//! declaration or a qualified path (`crate::units::format_bytes(..)`, `super::graph::OpGraph`,
//! `fusionscope::trace::Trace` in the command line). Two files that depend on each other, directly
//! or through others, can only be read, tested and changed together, and such a cycle usually
//! means one of them holds something that belongs to the other or to a lower file. Rust accepts
//! cycles between modules, so only this test keeps them out.
//!
//! What counts, and why:
//! * Paths are followed through `use` and `pub use` re-exports to the file that *defines* the
//!   item. A re-export line (`pub use`, `pub(crate) use`) is not a dependency of the file it is
//!   in: `fusion/mod.rs` saying `pub use graph::OpGraph` only publishes the name, and counting it
//!   would put every `mod.rs` in a cycle with each child that uses `super::Something`. The
//!   re-exporting file does depend on the files of the re-exported names that its *own* code uses
//!   (found by looking for those names as bare identifiers).
//! * `mod child;` is not a dependency: it says where the child is, not what the parent uses.
//! * `#[cfg(test)]` items (the `mod tests` blocks, and the `tests.rs` files of `#[cfg(test)] mod tests;`) are skipped: a test belongs to its file, and
//!   its `use super::*` and fixtures from anywhere would otherwise tie every file to its parent.
//! * Code under any other `cfg` counts (the wasm-only page, the native-only command line): a
//!   cycle in either build is a cycle.
//!
//! The sources are read as text at test time. The reader is a small tokenizer and name resolver
//! (the crate does not depend on `syn`, and this test does not need a full parser). It strips
//! comments and string literals (except string paths in attributes such as
//! `#[serde(with = "crate::share::compact::compact_or_full")]`, which the compiler does follow),
//! handles grouped, nested, multi-line and renamed `use` trees, globs, inline modules, `self`,
//! `super`, `crate`, `$crate` and the library's name in the binaries. A module imported by `use`
//! (`use super::browser;`) counts where its items are used (`browser::read_blob(..)`).
//! Known limits: macros are not expanded (the only macro-made names it knows are Yew's
//! `#[function_component(Name)]` types, and names inside a macro call are seen only as its tokens);
//! `#[path]` and `include!` are not followed; items defined inside function bodies are not module
//! items; a bare identifier that merely shares its name with a re-exported item of its own file
//! counts as a use of it. A `crate::`/`super::`/`self::`/`fusionscope::` path that the resolver
//! cannot follow fails the test, so a gap in the resolver shows up instead of silently hiding
//! edges; and the resolver is itself tested on small made-up crates at the end of this file.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::OnceLock;

// ------------------------------------------------------------------------------------------------
// Tokens

/// One token of a source file; comments, whitespace, numbers, lifetimes and (most) literals are
/// gone, so a path inside a comment or a string can never create a dependency.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
    /// A string literal's text, kept only so that paths in attributes can be followed.
    Str(String),
    /// A number, a lifetime or a character literal.
    Other,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    /// 1-based line the token starts on.
    line: usize,
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn lex(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let start = line;
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if ch == 'r' && at(i + 1) == '#' && is_ident_start(at(i + 2)) {
            // A raw identifier, `r#type`.
            let mut j = i + 2;
            while is_ident_char(at(j)) {
                j += 1;
            }
            out.push(Token { tok: Tok::Ident(c[i + 2..j].iter().collect()), line: start });
            i = j;
        } else if let Some(mut j) = match (ch, at(i + 1), at(i + 2)) {
            ('r', '"' | '#', _) => Some(i + 1),
            ('b' | 'c', 'r', '"' | '#') => Some(i + 2),
            _ => None,
        } {
            // A raw string: r"..", r#".."#, br"..", cr"..".
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1; // the opening quote
            let begin = j;
            while j < c.len() && !(c[j] == '"' && (0..hashes).all(|h| at(j + 1 + h) == '#')) {
                line += usize::from(c[j] == '\n');
                j += 1;
            }
            out.push(Token { tok: Tok::Str(c[begin..j.min(c.len())].iter().collect()), line: start });
            i = j + 1 + hashes;
        } else if ch == '"' || (matches!(ch, 'b' | 'c') && at(i + 1) == '"') {
            let mut j = if ch == '"' { i + 1 } else { i + 2 };
            let begin = j;
            while j < c.len() && c[j] != '"' {
                if c[j] == '\\' {
                    j += 1;
                }
                line += usize::from(at(j) == '\n');
                j += 1;
            }
            out.push(Token { tok: Tok::Str(c[begin..j.min(c.len())].iter().collect()), line: start });
            i = j + 1;
        } else if ch == '\'' || (ch == 'b' && at(i + 1) == '\'') {
            let q = if ch == '\'' { i } else { i + 1 };
            if at(q + 1) == '\\' {
                // An escaped character: skip the escaped one, then up to the closing quote.
                let mut j = q + 3;
                while j < c.len() && c[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
            } else if at(q + 2) == '\'' {
                i = q + 3;
            } else {
                // A lifetime or a loop label.
                let mut j = q + 1;
                while is_ident_char(at(j)) {
                    j += 1;
                }
                i = j;
            }
            out.push(Token { tok: Tok::Other, line: start });
        } else if is_ident_start(ch) {
            let mut j = i;
            while is_ident_char(at(j)) {
                j += 1;
            }
            out.push(Token { tok: Tok::Ident(c[i..j].iter().collect()), line: start });
            i = j;
        } else if ch.is_ascii_digit() {
            while is_ident_char(at(i)) {
                i += 1;
            }
            out.push(Token { tok: Tok::Other, line: start });
        } else if ch == ':' && at(i + 1) == ':' {
            out.push(Token { tok: Tok::PathSep, line: start });
            i += 2;
        } else {
            out.push(Token { tok: Tok::Punct(ch), line: start });
            i += 1;
        }
    }
    out
}

// ------------------------------------------------------------------------------------------------
// What one file declares and refers to

/// A module's namespace as written in one file: the file's own module (scope 0) or an inline
/// `mod name { .. }` inside it.
#[derive(Debug, Default)]
struct Scope {
    /// `mod name;`: a child module in its own file.
    file_mods: Vec<String>,
    /// `mod name { .. }`: a child module in this file, with its scope.
    inline_mods: Vec<(String, usize)>,
    /// Names of the items defined here (impl blocks define none).
    items: BTreeSet<String>,
    imports: Vec<Import>,
}

/// One name a `use` binds (or one glob it opens).
#[derive(Debug, Clone)]
struct Import {
    /// The bound name (the `as` rename if any); None for globs and `as _`.
    name: Option<String>,
    /// The path as written, `self` leaves already folded into their parent.
    segs: Vec<String>,
    glob: bool,
    /// `pub use` / `pub(..) use`: a re-export.
    public: bool,
    /// Inside a function body: visible to that body only, not to other modules.
    local: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum RefKind {
    /// A private `use` leaf: the `use` line is the dependency.
    Use,
    /// A qualified path in code (`a::b::c`), or a path in an attribute string.
    Path,
    /// A bare identifier, which matters only when it names a re-export or a glob-imported item.
    Name,
}

#[derive(Debug, Clone)]
struct Reference {
    scope: usize,
    segs: Vec<String>,
    /// The line of the referring name.
    line: usize,
    /// Where the `use` declaration starts (the same as `line` except inside multi-line `use`s).
    stmt_line: usize,
    kind: RefKind,
}

#[derive(Debug, Default)]
struct FileScan {
    scopes: Vec<Scope>,
    refs: Vec<Reference>,
}

/// The keywords that define a named module item; the name follows (after the `!` for macros).
const DEFINING: &[&str] = &["struct", "enum", "union", "trait", "type", "fn", "const", "static", "macro_rules"];

/// Words that can follow a defining keyword without being the item's name.
const NOT_A_NAME: &[&str] = &["fn", "mut", "_", "unsafe", "async", "extern"];

fn ident(tokens: &[Token], i: usize) -> Option<&str> {
    match tokens.get(i).map(|t| &t.tok) {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

fn is_punct(tokens: &[Token], i: usize, c: char) -> bool {
    matches!(tokens.get(i).map(|t| &t.tok), Some(Tok::Punct(p)) if *p == c)
}

fn is_path_sep(tokens: &[Token], i: usize) -> bool {
    matches!(tokens.get(i).map(|t| &t.tok), Some(Tok::PathSep))
}

/// The index just past the attribute starting at `#` (`#[..]` or `#![..]`).
fn attribute_end(tokens: &[Token], i: usize) -> usize {
    let mut j = i + 1;
    if is_punct(tokens, j, '!') {
        j += 1;
    }
    if !is_punct(tokens, j, '[') {
        return i + 1;
    }
    let mut depth = 0;
    while j < tokens.len() {
        match tokens[j].tok {
            Tok::Punct('[') => depth += 1,
            Tok::Punct(']') => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    j
}

/// `#[cfg(test)]` or `#[cfg(all(test, ..))]`: the item is compiled for unit tests only.
fn is_cfg_test(attr: &[Token]) -> bool {
    let words: Vec<&str> = attr
        .iter()
        .filter_map(|t| match &t.tok {
            Tok::Ident(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    matches!(words.as_slice(), ["cfg", "test"]) || (words.starts_with(&["cfg", "all"]) && words.contains(&"test"))
}

/// The index just past the item starting at `i`: after its `;` or its closing `}`.
fn item_end(tokens: &[Token], i: usize) -> usize {
    let mut depth = 0usize;
    let mut j = i;
    while j < tokens.len() {
        match tokens[j].tok {
            Tok::Punct('{' | '(' | '[') => depth += 1,
            Tok::Punct(')' | ']') => depth = depth.saturating_sub(1),
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            Tok::Punct(';') if depth == 0 => return j + 1,
            _ => {}
        }
        j += 1;
    }
    j
}

/// Whether the `use` at `i` has a visibility (`pub`, `pub(crate)`, `pub(super)`, `pub(in ..)`).
fn is_public(tokens: &[Token], i: usize) -> bool {
    if i == 0 {
        return false;
    }
    if ident(tokens, i - 1) == Some("pub") {
        return true;
    }
    if is_punct(tokens, i - 1, ')') {
        let mut j = i - 1;
        while j > 0 && !is_punct(tokens, j, '(') {
            j -= 1;
        }
        return j > 0 && ident(tokens, j - 1) == Some("pub");
    }
    false
}

/// One leaf of a `use` tree.
struct UseLeaf {
    segs: Vec<String>,
    alias: Option<String>,
    glob: bool,
    line: usize,
}

/// Parses the `use` tree at `*i` (just after `use`, or inside a `{ .. }` group) under `prefix`.
fn parse_use_tree(tokens: &[Token], i: &mut usize, mut prefix: Vec<String>, out: &mut Vec<UseLeaf>) {
    if is_path_sep(tokens, *i) {
        // `use ::name`: always another crate.
        *i += 1;
        prefix.push("::".to_string());
    }
    while let Some(t) = tokens.get(*i) {
        match &t.tok {
            Tok::Punct('{') => {
                *i += 1;
                while *i < tokens.len() && !is_punct(tokens, *i, '}') {
                    let before = *i;
                    parse_use_tree(tokens, i, prefix.clone(), out);
                    if is_punct(tokens, *i, ',') {
                        *i += 1;
                    } else if *i == before {
                        *i += 1; // something this reader does not know; never loop on it
                    }
                }
                *i += 1;
                return;
            }
            Tok::Punct('*') => {
                *i += 1;
                out.push(UseLeaf { segs: prefix, alias: None, glob: true, line: t.line });
                return;
            }
            Tok::Punct('$') if ident(tokens, *i + 1) == Some("crate") => {
                prefix.push("$crate".to_string());
                *i += 2;
                if is_path_sep(tokens, *i) {
                    *i += 1;
                }
            }
            Tok::Ident(name) => {
                prefix.push(name.clone());
                *i += 1;
                if is_path_sep(tokens, *i) {
                    *i += 1;
                    continue;
                }
                let mut alias = None;
                if ident(tokens, *i) == Some("as") {
                    alias = ident(tokens, *i + 1).map(str::to_string);
                    *i += 2;
                }
                if prefix.last().is_some_and(|s| s == "self") && prefix.len() > 1 {
                    prefix.pop(); // `use a::{self}` binds `a`
                }
                out.push(UseLeaf { segs: prefix, alias, glob: false, line: t.line });
                return;
            }
            _ => return,
        }
    }
}

/// A string in an attribute that is a path into this crate (`"crate::share::compact::x"`).
fn path_in_string(s: &str) -> Option<Vec<String>> {
    let segs: Vec<String> = s.split("::").map(str::to_string).collect();
    let is_path = segs.len() > 1
        && matches!(segs[0].as_str(), "crate" | "self" | "super")
        && segs.iter().all(|p| p.chars().next().is_some_and(is_ident_start) && p.chars().all(is_ident_char));
    is_path.then_some(segs)
}

/// What an attribute adds: paths in strings that the compiler follows
/// (`#[serde(with = "crate::share::compact::compact_or_full")]`), and the component type that
/// Yew's `#[function_component(Name)]` defines from the function below it (the one macro-made
/// name this crate's paths refer to).
fn read_attribute(attr: &[Token], scope: usize, f: &mut FileScan) {
    for (k, t) in attr.iter().enumerate() {
        match &t.tok {
            Tok::Str(s) => {
                if let Some(segs) = path_in_string(s) {
                    f.refs.push(Reference { scope, segs, line: t.line, stmt_line: t.line, kind: RefKind::Path });
                }
            }
            Tok::Ident(w) if w == "function_component" && is_punct(attr, k + 1, '(') => {
                if let Some(name) = ident(attr, k + 2) {
                    f.scopes[scope].items.insert(name.to_string());
                }
            }
            _ => {}
        }
    }
}

/// Reads one file: its scopes (its own module and inline ones), what each defines and imports,
/// and every reference that may name an item of another file.
fn scan(tokens: &[Token]) -> FileScan {
    let mut f = FileScan { scopes: vec![Scope::default()], refs: Vec::new() };
    // What each open `{` belongs to: Some(scope) for an inline module's body, None otherwise.
    let mut frames: Vec<Option<usize>> = Vec::new();
    let mut skip_next_item = false;
    let mut i = 0;
    while i < tokens.len() {
        let scope = frames.iter().rev().find_map(|&s| s).unwrap_or(0);
        let item_level = frames.last().is_none_or(|s| s.is_some());
        let line = tokens[i].line;
        let word = ident(tokens, i);
        match &tokens[i].tok {
            Tok::Punct('#') => {
                let end = attribute_end(tokens, i);
                if is_cfg_test(&tokens[i..end]) {
                    skip_next_item = true;
                } else {
                    read_attribute(&tokens[i..end], scope, &mut f);
                }
                i = end;
                continue;
            }
            _ if skip_next_item => {
                skip_next_item = false;
                i = item_end(tokens, i);
                continue;
            }
            _ if word == Some("use") => {
                let public = is_public(tokens, i);
                let mut j = i + 1;
                let mut leaves = Vec::new();
                parse_use_tree(tokens, &mut j, Vec::new(), &mut leaves);
                while j < tokens.len() && !is_punct(tokens, j, ';') {
                    j += 1;
                }
                for leaf in leaves {
                    let name = match (&leaf.alias, leaf.glob) {
                        (_, true) => None,
                        (Some(a), _) if a == "_" => None,
                        (Some(a), _) => Some(a.clone()),
                        (None, _) => leaf.segs.last().cloned(),
                    };
                    if !public {
                        f.refs.push(Reference {
                            scope,
                            segs: leaf.segs.clone(),
                            line: leaf.line,
                            stmt_line: line,
                            kind: RefKind::Use,
                        });
                    }
                    let import = Import { name, segs: leaf.segs, glob: leaf.glob, public, local: !item_level };
                    f.scopes[scope].imports.push(import);
                }
                i = j + 1;
                continue;
            }
            _ if word == Some("mod") && item_level => {
                if let Some(name) = ident(tokens, i + 1) {
                    let name = name.to_string();
                    if is_punct(tokens, i + 2, ';') {
                        f.scopes[scope].file_mods.push(name);
                        i += 3;
                        continue;
                    }
                    if is_punct(tokens, i + 2, '{') {
                        let inner = f.scopes.len();
                        f.scopes.push(Scope::default());
                        f.scopes[scope].inline_mods.push((name, inner));
                        frames.push(Some(inner));
                        i += 3;
                        continue;
                    }
                }
            }
            Tok::Ident(w) if item_level && DEFINING.contains(&w.as_str()) => {
                let k = if w == "macro_rules" { i + 2 } else { i + 1 };
                match ident(tokens, k) {
                    Some(name) if !NOT_A_NAME.contains(&name) => {
                        f.scopes[scope].items.insert(name.to_string());
                        i = k + 1;
                    }
                    _ => i += 1,
                }
                continue;
            }
            Tok::Punct('{') => frames.push(None),
            Tok::Punct('}') => {
                frames.pop();
            }
            Tok::Punct('$') if ident(tokens, i + 1) == Some("crate") => {
                let (segs, end) = read_path(tokens, i + 1, "$crate");
                f.refs.push(Reference { scope, segs, line, stmt_line: line, kind: RefKind::Path });
                i = end;
                continue;
            }
            Tok::Ident(w) => {
                // A path's head: not the continuation of another path, nor a field or method.
                let continues = i > 0 && (is_path_sep(tokens, i - 1) || is_punct(tokens, i - 1, '.'));
                if !continues {
                    let (segs, end) = read_path(tokens, i, w);
                    if segs.len() > 1 {
                        f.refs.push(Reference { scope, segs, line, stmt_line: line, kind: RefKind::Path });
                    } else if !is_punct(tokens, i + 1, ':') && !is_punct(tokens, i + 1, '!') {
                        // Not a field or parameter name (`name: T`), nor a macro call.
                        f.refs.push(Reference { scope, segs, line, stmt_line: line, kind: RefKind::Name });
                    }
                    i = end;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    f
}

/// The path `first::a::b` starting at token `i` (stops at a turbofish or a group), and the index
/// just past it.
fn read_path(tokens: &[Token], i: usize, first: &str) -> (Vec<String>, usize) {
    let mut segs = vec![first.to_string()];
    let mut j = i + 1;
    while is_path_sep(tokens, j) {
        match ident(tokens, j + 1) {
            Some(s) => {
                segs.push(s.to_string());
                j += 2;
            }
            None => break,
        }
    }
    (segs, j)
}

// ------------------------------------------------------------------------------------------------
// Modules and name resolution

struct SourceFile {
    /// Relative to the package root: `src/fusion/graph.rs`.
    path: String,
    lines: Vec<String>,
    scan: FileScan,
}

/// One module of one crate: a file, or an inline `mod` in a file.
struct Module {
    file: usize,
    scope: usize,
    parent: Option<usize>,
    /// The crate root module this module belongs to.
    root: usize,
    children: BTreeMap<String, usize>,
}

/// What a name or path can mean: a module, an item (known by the module defining it), or both
/// (`trace::classify` is a module and a function), as Rust keeps the two in separate namespaces.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Resolved {
    module: Option<usize>,
    item: Option<usize>,
}

impl Resolved {
    fn is_empty(&self) -> bool {
        self.module.is_none() && self.item.is_none()
    }

    fn or(self, other: Resolved) -> Resolved {
        Resolved { module: self.module.or(other.module), item: self.item.or(other.item) }
    }
}

/// One line that creates an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Evidence {
    line: usize,
    stmt_line: usize,
}

/// All of `src/` read: crates, modules and the file dependency graph.
struct Tree {
    files: Vec<SourceFile>,
    modules: Vec<Module>,
    lib_root: Option<usize>,
    /// (from file, to file) → the lines that create the edge.
    edges: BTreeMap<(usize, usize), BTreeSet<Evidence>>,
    /// Paths into this crate that the resolver could not follow.
    unresolved: Vec<String>,
    /// Files no crate declares, and `mod` declarations without a file.
    problems: Vec<String>,
}

/// Guards resolution against re-export loops: the (module, name) lookups under way.
type Stack = Vec<(usize, String)>;

impl Tree {
    /// `sources` maps package-relative paths (`src/lib.rs`) to their text.
    fn new(sources: &BTreeMap<String, String>) -> Tree {
        let files: Vec<SourceFile> = sources
            .iter()
            .map(|(path, text)| SourceFile {
                path: path.clone(),
                lines: text.lines().map(str::to_string).collect(),
                scan: scan(&lex(text)),
            })
            .collect();
        let mut tree = Tree {
            files,
            modules: Vec::new(),
            lib_root: None,
            edges: BTreeMap::new(),
            unresolved: Vec::new(),
            problems: Vec::new(),
        };
        // Crate roots, as Cargo finds them: the library, the default binary and src/bin/*.
        let roots: Vec<usize> = (0..tree.files.len())
            .filter(|&f| {
                let p = tree.files[f].path.as_str();
                p == "src/lib.rs"
                    || p == "src/main.rs"
                    || (p.starts_with("src/bin/") && (p.matches('/').count() == 2 || p.ends_with("/main.rs")))
            })
            .collect();
        for f in roots {
            let dir = tree.files[f].path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
            let root = tree.add_module(f, 0, None, None, &dir);
            if tree.files[f].path == "src/lib.rs" {
                tree.lib_root = Some(root);
            }
        }
        let declared: BTreeSet<usize> = tree.modules.iter().map(|m| m.file).collect();
        for (f, file) in tree.files.iter().enumerate() {
            if !declared.contains(&f) {
                tree.problems.push(format!("{} is in no crate (no `mod` declares it)", file.path));
            }
        }
        tree.link();
        tree
    }

    /// Adds the module in `file`/`scope` and, recursively, its children. `dir` is where its
    /// `mod child;` files are.
    fn add_module(
        &mut self,
        file: usize,
        scope: usize,
        parent: Option<usize>,
        root: Option<usize>,
        dir: &str,
    ) -> usize {
        let id = self.modules.len();
        let root = root.unwrap_or(id);
        self.modules.push(Module { file, scope, parent, root, children: BTreeMap::new() });
        let s = &self.files[file].scan.scopes[scope];
        let inline = s.inline_mods.clone();
        let file_mods = s.file_mods.clone();
        for (name, inner) in inline {
            let child = self.add_module(file, inner, Some(id), Some(root), &format!("{dir}/{name}"));
            self.modules[id].children.insert(name, child);
        }
        for name in file_mods {
            let candidates = [format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")];
            let found: Vec<usize> =
                candidates.iter().filter_map(|c| self.files.iter().position(|f| &f.path == c)).collect();
            match found.as_slice() {
                [f] => {
                    let child = self.add_module(*f, 0, Some(id), Some(root), &format!("{dir}/{name}"));
                    self.modules[id].children.insert(name, child);
                }
                [] => self.problems.push(format!("`mod {name};` in {}: no file", self.files[file].path)),
                _ => {
                    self.problems.push(format!("`mod {name};` in {}: both {candidates:?} exist", self.files[file].path))
                }
            }
        }
        id
    }

    fn scope_of(&self, m: usize) -> &Scope {
        &self.files[self.modules[m].file].scan.scopes[self.modules[m].scope]
    }

    /// What `name` means inside module `m`: a child module, an item defined there, or what an
    /// import binding `name` resolves to (so re-exports lead to the defining file).
    /// `local` admits imports made inside function bodies (only for the module's own code).
    fn lookup(&self, m: usize, name: &str, local: bool, stack: &mut Stack) -> Resolved {
        let scope = self.scope_of(m);
        let mut r = Resolved {
            module: self.modules[m].children.get(name).copied(),
            item: scope.items.contains(name).then_some(m),
        };
        if (r.module.is_some() && r.item.is_some()) || stack.iter().any(|(sm, sn)| *sm == m && sn == name) {
            return r;
        }
        stack.push((m, name.to_string()));
        let visible = |imp: &&Import| local || !imp.local;
        for imp in scope.imports.iter().filter(visible).filter(|imp| imp.name.as_deref() == Some(name)) {
            if let Some(t) = self.resolve(m, &imp.segs, imp.local, stack) {
                r = r.or(t);
            } else if imp.public && self.leads_outside(m, &imp.segs, imp.local, stack) {
                // Re-exported from another crate (`pub use hardware::peaks::Unit`): within this
                // crate, the re-exporting file is where the name comes from.
                r = r.or(Resolved { module: None, item: Some(m) });
            }
        }
        if r.is_empty() {
            for imp in scope.imports.iter().filter(visible).filter(|imp| imp.glob) {
                if let Some(Resolved { module: Some(g), .. }) = self.resolve(m, &imp.segs, imp.local, stack) {
                    r = r.or(self.lookup(g, name, false, stack));
                }
            }
        }
        stack.pop();
        r
    }

    /// Whether the path `segs`, written in module `m`, starts outside the crate: at another
    /// crate's name, not at `crate`, `self`, `super` or a name bound in `m`.
    fn leads_outside(&self, m: usize, segs: &[String], local: bool, stack: &mut Stack) -> bool {
        segs.first().is_some_and(|first| {
            !matches!(first.as_str(), "crate" | "$crate" | "self" | "super" | "fusionscope")
                && self.lookup(m, first, local, stack).is_empty()
        })
    }

    /// What the path `segs`, written in module `m`, names. None when it leads outside the crate
    /// (std, serde, a generic parameter) or cannot be followed.
    fn resolve(&self, m: usize, segs: &[String], local: bool, stack: &mut Stack) -> Option<Resolved> {
        let (start, rest) = match segs.first()?.as_str() {
            "crate" => (self.modules[m].root, &segs[1..]),
            "$crate" => (self.lib_root?, &segs[1..]),
            "fusionscope" if Some(self.modules[m].root) != self.lib_root => (self.lib_root?, &segs[1..]),
            "self" => (m, &segs[1..]),
            "super" => {
                let mut cur = m;
                let mut k = 0;
                while segs.get(k).is_some_and(|s| s == "super") {
                    cur = self.modules[cur].parent?;
                    k += 1;
                }
                (cur, &segs[k..])
            }
            first => {
                let head = self.lookup(m, first, local, stack);
                return if head.is_empty() { None } else { self.walk(head, &segs[1..], stack) };
            }
        };
        self.walk(Resolved { module: Some(start), item: None }, rest, stack)
    }

    /// Follows `rest` from `r`, module by module, until an item (whose variants or associated
    /// items the remaining segments then are) or the end.
    fn walk(&self, mut r: Resolved, rest: &[String], stack: &mut Stack) -> Option<Resolved> {
        for seg in rest {
            let Some(m) = r.module else { return Some(r) };
            let next = self.lookup(m, seg, false, stack);
            if next.is_empty() {
                return None;
            }
            r = next;
        }
        Some(r)
    }

    /// Resolves every reference and records the file edges.
    fn link(&mut self) {
        let mut edges: BTreeMap<(usize, usize), BTreeSet<Evidence>> = BTreeMap::new();
        let mut unresolved = Vec::new();
        for (m, module) in self.modules.iter().enumerate() {
            let file = &self.files[module.file];
            let scope = &file.scan.scopes[module.scope];
            let reexported: BTreeSet<&str> =
                scope.imports.iter().filter(|i| i.public && !i.local).filter_map(|i| i.name.as_deref()).collect();
            let has_glob = scope.imports.iter().any(|i| i.glob);
            let bound = |name: &str| {
                scope.items.contains(name)
                    || module.children.contains_key(name)
                    || scope.imports.iter().any(|i| i.name.as_deref() == Some(name))
            };
            // Names a private `use` binds to an item: that `use` line already is the evidence for
            // the edge, so paths through them (`WorkloadError::Param`) would only repeat it.
            let used_items: BTreeSet<&str> = scope
                .imports
                .iter()
                .filter(|i| !i.public)
                .filter_map(|i| i.name.as_deref())
                .filter(|name| {
                    let r = self.lookup(m, name, true, &mut Vec::new());
                    r.item.is_some() && r.module.is_none()
                })
                .collect();
            for r in file.scan.refs.iter().filter(|r| r.scope == module.scope) {
                if r.kind == RefKind::Path && used_items.contains(r.segs[0].as_str()) {
                    continue;
                }
                if r.kind == RefKind::Name {
                    let name = r.segs[0].as_str();
                    if !reexported.contains(name) && (bound(name) || !has_glob) {
                        continue;
                    }
                }
                let target = self.resolve(m, &r.segs, true, &mut Vec::new());
                let into_crate = matches!(r.segs[0].as_str(), "crate" | "$crate" | "self" | "super")
                    || (r.segs[0] == "fusionscope" && Some(module.root) != self.lib_root);
                let to = match target {
                    None if into_crate && r.kind != RefKind::Name => {
                        unresolved.push(format!("{}:{}: {}", file.path, r.line, r.segs.join("::")));
                        continue;
                    }
                    None => continue,
                    Some(Resolved { item: Some(d), .. }) => self.modules[d].file,
                    // A module named by a code path (`#[serde(with = "..")]`) is used as a whole;
                    // a module imported by `use` is counted where its items are used.
                    Some(Resolved { module: Some(c), .. }) if r.kind == RefKind::Path => self.modules[c].file,
                    Some(_) => continue,
                };
                if to != module.file {
                    edges
                        .entry((module.file, to))
                        .or_default()
                        .insert(Evidence { line: r.line, stmt_line: r.stmt_line });
                }
            }
        }
        self.edges = edges;
        self.unresolved = unresolved;
    }

    fn file_index(&self, path: &str) -> Option<usize> {
        self.files.iter().position(|f| f.path == path)
    }

    fn depends(&self, from: &str, to: &str) -> bool {
        match (self.file_index(from), self.file_index(to)) {
            (Some(a), Some(b)) => self.edges.contains_key(&(a, b)),
            _ => false,
        }
    }

    /// Strongly connected components of the file graph with more than one file.
    fn cycles(&self) -> Vec<Vec<usize>> {
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); self.files.len()];
        for &(a, b) in self.edges.keys() {
            next[a].push(b);
        }
        components(&next)
    }

    /// The folder (or single file) at the crate's top level each file is in: `src/time/waits.rs`
    /// and `src/time.rs` are both `time`; the crate's root (`src/lib.rs`) is none.
    fn top_module(&self, file: usize) -> Option<String> {
        let rest = self.files[file].path.strip_prefix("src/")?;
        let first = rest.split('/').next()?.trim_end_matches(".rs");
        (first != "lib" && first != "main").then(|| first.to_string())
    }

    /// Cycles between the crate's top-level modules (folders), each as the modules in it and
    /// one file edge per pair that makes it: a folder is one idea that a lower one must not
    /// reach back into.
    fn folder_cycle_report(&self) -> String {
        let names: BTreeSet<String> = (0..self.files.len()).filter_map(|f| self.top_module(f)).collect();
        let names: Vec<String> = names.into_iter().collect();
        let index = |f: usize| self.top_module(f).and_then(|n| names.iter().position(|m| *m == n));
        let mut example: BTreeMap<(usize, usize), (usize, usize)> = BTreeMap::new();
        for &(a, b) in self.edges.keys() {
            if let (Some(x), Some(y)) = (index(a), index(b)) {
                if x != y {
                    example.entry((x, y)).or_insert((a, b));
                }
            }
        }
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
        for &(x, y) in example.keys() {
            next[x].push(y);
        }
        let mut out = String::new();
        for component in components(&next) {
            let inside: BTreeSet<usize> = component.iter().copied().collect();
            let listed: Vec<&str> = component.iter().map(|&m| names[m].as_str()).collect();
            out.push_str(&format!("{}:\n", listed.join(", ")));
            for (&(x, y), &(a, b)) in &example {
                if inside.contains(&x) && inside.contains(&y) {
                    out.push_str(&format!(
                        "  {} -> {} ({} -> {})\n",
                        names[x], names[y], self.files[a].path, self.files[b].path
                    ));
                }
            }
        }
        out
    }

    /// The cycles, as chains `a.rs -> b.rs -> a.rs` covering every edge inside each component,
    /// each edge with the lines that create it.
    fn cycle_report(&self) -> String {
        let mut out = String::new();
        for component in self.cycles() {
            let inside: BTreeSet<usize> = component.iter().copied().collect();
            let names: Vec<&str> = component.iter().map(|&f| self.files[f].path.as_str()).collect();
            writeln!(out, "\n{} files depend on each other: {}", component.len(), names.join(", ")).unwrap();
            let internal: Vec<(usize, usize)> =
                self.edges.keys().copied().filter(|(a, b)| inside.contains(a) && inside.contains(b)).collect();
            let mut shown: BTreeSet<(usize, usize)> = BTreeSet::new();
            for &(a, b) in &internal {
                if shown.contains(&(a, b)) {
                    continue;
                }
                // The shortest way back from b to a closes the cycle through this edge.
                let mut chain = vec![a];
                chain.extend(self.shortest_path(b, a, &inside));
                let chain_names: Vec<&str> = chain.iter().map(|&f| self.files[f].path.as_str()).collect();
                writeln!(out, "  {}", chain_names.join(" -> ")).unwrap();
                for pair in chain.windows(2) {
                    let (from, to) = (pair[0], pair[1]);
                    if !shown.insert((from, to)) {
                        writeln!(out, "    {} -> {}: (lines above)", self.files[from].path, self.files[to].path)
                            .unwrap();
                        continue;
                    }
                    writeln!(out, "    {} -> {}:", self.files[from].path, self.files[to].path).unwrap();
                    // Enough lines to see what the edge is made of; the rest only by number.
                    const SHOWN_LINES: usize = 6;
                    let evidence = &self.edges[&(from, to)];
                    for e in evidence.iter().take(SHOWN_LINES) {
                        let file = &self.files[from];
                        let text = file.lines.get(e.line - 1).map_or("", |l| l.trim());
                        let within = if e.stmt_line != e.line {
                            format!(" (in the `use` at line {})", e.stmt_line)
                        } else {
                            String::new()
                        };
                        writeln!(out, "      {}:{}{within}: {text}", file.path, e.line).unwrap();
                    }
                    if evidence.len() > SHOWN_LINES {
                        let rest: Vec<String> = evidence.iter().skip(SHOWN_LINES).map(|e| e.line.to_string()).collect();
                        writeln!(out, "      and lines {}", rest.join(", ")).unwrap();
                    }
                }
            }
        }
        out
    }

    /// Breadth-first path from `from` to `to` through files in `inside` (both ends included).
    fn shortest_path(&self, from: usize, to: usize, inside: &BTreeSet<usize>) -> Vec<usize> {
        let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
        let mut queue = VecDeque::from([from]);
        let mut seen = BTreeSet::from([from]);
        while let Some(v) = queue.pop_front() {
            if v == to {
                break;
            }
            for &(_, w) in self.edges.range((v, 0)..(v + 1, 0)).map(|(k, _)| k) {
                if inside.contains(&w) && seen.insert(w) {
                    came_from.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
        let mut path = vec![to];
        while let Some(&p) = came_from.get(path.last().expect("starts non-empty")) {
            path.push(p);
        }
        path.reverse();
        path
    }
}

// ------------------------------------------------------------------------------------------------
// The crate's own sources

/// Every `.rs` file under `dir`, keyed by its path relative to `package`.
fn read_sources(package: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            read_sources(package, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(package).expect("under the package").to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {rel}: {e}"));
            out.insert(rel, text);
        }
    }
}

/// Leaves out the unit tests kept in a file of their own (`#[cfg(test)] mod tests;` in
/// `x.rs` or `x/mod.rs`, the tests in `x/tests.rs` and its own modules in `x/tests/`): like a `mod tests { .. }` block, they belong
/// to their module and are not its dependencies.
fn drop_unit_test_files(sources: &mut BTreeMap<String, String>) {
    let declares_tests = |owner: &str| {
        sources.get(owner).is_some_and(|text| {
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            lines.windows(2).any(|w| w[0] == "#[cfg(test)]" && w[1] == "mod tests;")
        })
    };
    let test_files: Vec<String> = sources
        .keys()
        .filter_map(|path| {
            let dir = path.strip_suffix("/tests.rs")?;
            (declares_tests(&format!("{dir}.rs"))
                || declares_tests(&format!("{dir}/mod.rs"))
                || declares_tests(&format!("{dir}/lib.rs")))
            .then(|| path.clone())
        })
        .collect();
    for path in test_files {
        // A tests.rs with modules of its own keeps them in the folder beside it (`x/tests/`).
        let folder = format!("{}/", path.trim_end_matches(".rs"));
        sources.retain(|p, _| !p.starts_with(&folder));
        sources.remove(&path);
    }
}

/// Strongly connected components with more than one node of the graph `next` (Tarjan).
fn components(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = next.len();
    struct Tarjan<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        out: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.counter);
            self.low[v] = self.counter;
            self.counter += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.next[v] {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = self.stack.pop().expect("v is on the stack");
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.out.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        next,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        out: Vec::new(),
    };
    // Every node starts a search unless an earlier one reached it.
    (0..n).for_each(|v| {
        if t.index[v].is_none() {
            t.visit(v);
        }
    });
    t.out.sort();
    t.out
}

/// Each crate of the workspace (a folder of `src/` with a `Cargo.toml`), read once for all tests
/// in this file: its folder and its module tree, whose files are named as in a package of their
/// own (`src/analysis/lib.rs` is the tree's `src/lib.rs`). Cargo keeps the crates from importing
/// each other both ways; this test keeps the files inside each crate from doing so.
fn crate_trees() -> &'static [(String, Tree)] {
    static TREES: OnceLock<Vec<(String, Tree)>> = OnceLock::new();
    TREES.get_or_init(|| {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut crates: Vec<String> = std::fs::read_dir(workspace.join("src"))
            .expect("src/ is readable")
            .filter_map(|e| {
                let path = e.expect("a directory entry").path();
                path.join("Cargo.toml").is_file().then(|| path.file_name().unwrap().to_string_lossy().into_owned())
            })
            .collect();
        crates.sort();
        crates
            .into_iter()
            .map(|name| {
                let dir = workspace.join("src").join(&name);
                let mut sources = BTreeMap::new();
                read_sources(&dir, &dir, &mut sources);
                let mut sources: BTreeMap<String, String> =
                    sources.into_iter().map(|(rel, text)| (format!("src/{rel}"), text)).collect();
                drop_unit_test_files(&mut sources);
                (format!("src/{name}"), Tree::new(&sources))
            })
            .collect()
    })
}

/// The tree of the crate in `src/{name}`.
fn crate_tree(name: &str) -> &'static Tree {
    let dir = format!("src/{name}");
    &crate_trees().iter().find(|(d, _)| *d == dir).unwrap_or_else(|| panic!("no crate in {dir}")).1
}

#[test]
fn no_import_cycle_between_files_of_a_crate() {
    let trees = crate_trees();
    assert!(trees.len() >= 10, "only {} crates found under src/", trees.len());
    for (dir, tree) in trees {
        assert!(tree.problems.is_empty(), "{dir}: the module tree could not be read:\n{}", tree.problems.join("\n"));
        assert!(
            tree.unresolved.is_empty(),
            "{dir}: these paths into the crate could not be followed to a definition (teach the resolver in \
             tests/module_cycles.rs, or they may not compile):\n{}",
            tree.unresolved.join("\n")
        );
        let report = tree.cycle_report();
        assert!(
            report.is_empty(),
            "files of {dir} (named from its folder) import each other; move what both need to one side \
             (or a lower file):\n{report}"
        );
    }
}

/// The resolver must see dependencies that are known to exist, or the cycle test above could pass
/// by seeing nothing. Each is a `super::` `use` from a file at a crate's root into a module of
/// the same crate. If one of these files stops using the item, pick another dependency that
/// does exist. Paths are named from the crate's folder (`src/lib.rs` is the crate's root).
#[test]
fn no_import_cycle_between_folders_of_a_crate() {
    let report: String = crate_trees()
        .iter()
        .map(|(dir, tree)| (dir, tree.folder_cycle_report()))
        .filter(|(_, r)| !r.is_empty())
        .map(|(dir, r)| format!("{dir}: {r}"))
        .collect();
    assert!(
        report.is_empty(),
        "top-level modules of a crate import each other (each line one file edge that does it); move what \
         both need into the lower one:\n{report}"
    );
}

#[test]
fn resolver_sees_known_dependencies_in_src() {
    for (krate, from, to, how) in [
        ("analysis", "src/summary.rs", "src/structure/analysis.rs", "uses super::structure::search"),
        ("fusion", "src/analysis.rs", "src/graph.rs", "uses super::graph::OpGraph"),
        ("cli", "src/graph.rs", "src/io.rs", "uses super::io::read_parsed"),
    ] {
        assert!(crate_tree(krate).depends(from, to), "src/{krate}: {from} should depend on {to} (it {how})");
    }
    let files: usize = crate_trees().iter().map(|(_, t)| t.files.len()).sum();
    let edges: usize = crate_trees().iter().map(|(_, t)| t.edges.len()).sum();
    assert!(files > 200, "only {files} files read");
    assert!(edges > 300, "only {edges} file dependencies found; the resolver is missing some");
}

// ------------------------------------------------------------------------------------------------
// The resolver on small made-up crates, where every edge is known

fn made_up(files: &[(&str, &str)]) -> Tree {
    Tree::new(&files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect())
}

fn edge_names(tree: &Tree) -> BTreeSet<(String, String)> {
    tree.edges.keys().map(|&(a, b)| (tree.files[a].path.clone(), tree.files[b].path.clone())).collect()
}

fn pairs(list: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn resolver_follows_reexports_groups_renames_and_skips_tests() {
    let tree = made_up(&[
        ("src/lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        // A re-export of a child's item is no dependency of the parent on the child.
        ("src/a/mod.rs", "mod inner;\npub use inner::{Thing as Renamed, helper};\npub fn top() {}\n"),
        ("src/a/inner.rs", "use super::top;\npub struct Thing;\npub fn helper() { top() }\n"),
        (
            "src/b.rs",
            "use crate::a::{Renamed, helper as h};\n\
             // crate::c::in_a_comment\n\
             const S: &str = \"crate::c::in_a_string\";\n\
             pub fn f() -> Renamed { h(); crate::c::g() }\n",
        ),
        (
            "src/c.rs",
            "pub fn g() {}\npub fn back() { super::b::f(); }\n\
             #[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::a::top;\n}\n",
        ),
        ("src/main.rs", "mod cli;\nfn main() { cli::run() }\n"),
        (
            "src/cli/mod.rs",
            "use fusionscope::{\n    a::{helper, Renamed},\n    b,\n};\npub fn run() { helper(); b::f(); }\n",
        ),
    ]);
    assert!(tree.problems.is_empty(), "{:?}", tree.problems);
    assert!(tree.unresolved.is_empty(), "{:?}", tree.unresolved);
    assert_eq!(
        edge_names(&tree),
        pairs(&[
            ("src/a/inner.rs", "src/a/mod.rs"),
            ("src/b.rs", "src/a/inner.rs"),
            ("src/b.rs", "src/c.rs"),
            ("src/c.rs", "src/b.rs"),
            ("src/cli/mod.rs", "src/a/inner.rs"),
            ("src/cli/mod.rs", "src/b.rs"),
            ("src/main.rs", "src/cli/mod.rs"),
        ])
    );
    let b = tree.file_index("src/b.rs").unwrap();
    let c = tree.file_index("src/c.rs").unwrap();
    assert_eq!(tree.cycles(), [vec![b, c]]);
    let report = tree.cycle_report();
    assert!(report.contains("src/b.rs -> src/c.rs -> src/b.rs"), "{report}");
    assert!(report.contains("src/b.rs:4: pub fn f() -> Renamed { h(); crate::c::g() }"), "{report}");
    assert!(report.contains("src/c.rs:2: pub fn back() { super::b::f(); }"), "{report}");
    let cli = tree.file_index("src/cli/mod.rs").unwrap();
    let inner = tree.file_index("src/a/inner.rs").unwrap();
    assert_eq!(
        tree.edges[&(cli, inner)].iter().map(|e| (e.line, e.stmt_line)).collect::<Vec<_>>(),
        [(2, 1)],
        "both names are on line 2 of the `use` starting on line 1"
    );
}

#[test]
fn resolver_counts_reexported_names_the_file_itself_uses() {
    // a/mod.rs re-exports `Thing` and also builds one in its own code, while the child uses the
    // parent's `Config`: a real cycle, even though the parent names the child only in `pub use`.
    let tree = made_up(&[
        ("src/lib.rs", "pub mod a;\n"),
        ("src/a/mod.rs", "mod child;\npub use child::Thing;\npub struct Config;\npub fn make() -> Thing { Thing }\n"),
        ("src/a/child.rs", "use super::Config;\npub struct Thing(Config);\n"),
    ]);
    assert_eq!(edge_names(&tree), pairs(&[("src/a/child.rs", "src/a/mod.rs"), ("src/a/mod.rs", "src/a/child.rs")]));
    assert!(tree.cycle_report().contains("src/a/mod.rs:4: pub fn make() -> Thing { Thing }"));
}

#[test]
fn resolver_handles_inline_modules_attribute_paths_and_files_with_folders() {
    let tree = made_up(&[
        ("src/lib.rs", "pub mod share;\npub mod trace;\n"),
        (
            "src/share/mod.rs",
            "pub mod compact;\n#[derive(Serialize)]\nstruct S {\n    #[serde(with = \"crate::share::compact::full\")]\n    x: u8,\n}\n",
        ),
        ("src/share/compact.rs", "pub mod full {\n    pub fn serialize() { crate::trace::classify::name::short() }\n}\n"),
        ("src/trace/mod.rs", "pub mod classify;\npub use classify::classify;\n"),
        ("src/trace/classify.rs", "pub mod name;\nuse name::short;\npub fn classify() { short() }\n"),
        ("src/trace/classify/name.rs", "pub fn short() {}\nfn long() { let c = '}'; let s = r#\"}\"#; }\n"),
    ]);
    assert!(tree.problems.is_empty(), "{:?}", tree.problems);
    assert!(tree.unresolved.is_empty(), "{:?}", tree.unresolved);
    assert_eq!(
        edge_names(&tree),
        pairs(&[
            ("src/share/compact.rs", "src/trace/classify/name.rs"),
            ("src/share/mod.rs", "src/share/compact.rs"),
            ("src/trace/classify.rs", "src/trace/classify/name.rs"),
        ])
    );
}

/// The whole file graph, for reading when a cycle needs untangling: every dependency names the
/// lines that make it. Printed with
/// `FUSIONSCOPE_PRINT_DEPS=1 cargo test --test integration module_cycles -- --nocapture`, named from the
/// workspace root.
#[test]
fn every_file_dependency_names_its_lines() {
    let print = std::env::var_os("FUSIONSCOPE_PRINT_DEPS").is_some();
    for (dir, tree) in crate_trees() {
        for (&(from, to), evidence) in &tree.edges {
            let (from, to) = (&tree.files[from].path, &tree.files[to].path);
            assert!(!evidence.is_empty(), "{dir}: {from} -> {to} has no line");
            if print {
                let lines: Vec<String> = evidence.iter().map(|e| e.line.to_string()).collect();
                let [from, to] = [from, to].map(|p| p.replacen("src", dir, 1));
                println!("{from} -> {to} (lines {})", lines.join(", "));
            }
        }
        if print {
            println!("{dir}: {} files, {} dependencies", tree.files.len(), tree.edges.len());
        }
    }
}
