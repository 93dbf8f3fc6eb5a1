//! The tokenizer and per-file scan of the module-cycle test: tokens with comments and most
//! literals gone, and what one file declares and refers to.

use std::collections::BTreeSet;

// ------------------------------------------------------------------------------------------------
// Tokens

/// One token of a source file; comments, whitespace, numbers, lifetimes and (most) literals are
/// gone, so a path inside a comment or a string can never create a dependency.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
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
pub(super) struct Token {
    pub(super) tok: Tok,
    /// 1-based line the token starts on.
    pub(super) line: usize,
}

pub(super) fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

pub(super) fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

pub(super) fn lex(src: &str) -> Vec<Token> {
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
pub(super) struct Scope {
    /// `mod name;`: a child module in its own file.
    pub(super) file_mods: Vec<String>,
    /// `mod name { .. }`: a child module in this file, with its scope.
    pub(super) inline_mods: Vec<(String, usize)>,
    /// Names of the items defined here (impl blocks define none).
    pub(super) items: BTreeSet<String>,
    pub(super) imports: Vec<Import>,
}

/// One name a `use` binds (or one glob it opens).
#[derive(Debug, Clone)]
pub(super) struct Import {
    /// The bound name (the `as` rename if any); None for globs and `as _`.
    pub(super) name: Option<String>,
    /// The path as written, `self` leaves already folded into their parent.
    pub(super) segs: Vec<String>,
    pub(super) glob: bool,
    /// `pub use` / `pub(..) use`: a re-export.
    pub(super) public: bool,
    /// Inside a function body: visible to that body only, not to other modules.
    pub(super) local: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum RefKind {
    /// A private `use` leaf: the `use` line is the dependency.
    Use,
    /// A qualified path in code (`a::b::c`), or a path in an attribute string.
    Path,
    /// A bare identifier, which matters only when it names a re-export or a glob-imported item.
    Name,
}

#[derive(Debug, Clone)]
pub(super) struct Reference {
    pub(super) scope: usize,
    pub(super) segs: Vec<String>,
    /// The line of the referring name.
    pub(super) line: usize,
    /// Where the `use` declaration starts (the same as `line` except inside multi-line `use`s).
    pub(super) stmt_line: usize,
    pub(super) kind: RefKind,
}

#[derive(Debug, Default)]
pub(super) struct FileScan {
    pub(super) scopes: Vec<Scope>,
    pub(super) refs: Vec<Reference>,
}

/// The keywords that define a named module item; the name follows (after the `!` for macros).
pub(super) const DEFINING: &[&str] =
    &["struct", "enum", "union", "trait", "type", "fn", "const", "static", "macro_rules"];

/// Words that can follow a defining keyword without being the item's name.
pub(super) const NOT_A_NAME: &[&str] = &["fn", "mut", "_", "unsafe", "async", "extern"];

pub(super) fn ident(tokens: &[Token], i: usize) -> Option<&str> {
    match tokens.get(i).map(|t| &t.tok) {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

pub(super) fn is_punct(tokens: &[Token], i: usize, c: char) -> bool {
    matches!(tokens.get(i).map(|t| &t.tok), Some(Tok::Punct(p)) if *p == c)
}

pub(super) fn is_path_sep(tokens: &[Token], i: usize) -> bool {
    matches!(tokens.get(i).map(|t| &t.tok), Some(Tok::PathSep))
}

/// The index just past the attribute starting at `#` (`#[..]` or `#![..]`).
pub(super) fn attribute_end(tokens: &[Token], i: usize) -> usize {
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
pub(super) fn is_cfg_test(attr: &[Token]) -> bool {
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
pub(super) fn item_end(tokens: &[Token], i: usize) -> usize {
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
pub(super) fn is_public(tokens: &[Token], i: usize) -> bool {
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
pub(super) struct UseLeaf {
    pub(super) segs: Vec<String>,
    pub(super) alias: Option<String>,
    pub(super) glob: bool,
    pub(super) line: usize,
}

/// Parses the `use` tree at `*i` (just after `use`, or inside a `{ .. }` group) under `prefix`.
pub(super) fn parse_use_tree(tokens: &[Token], i: &mut usize, mut prefix: Vec<String>, out: &mut Vec<UseLeaf>) {
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
pub(super) fn path_in_string(s: &str) -> Option<Vec<String>> {
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
pub(super) fn read_attribute(attr: &[Token], scope: usize, f: &mut FileScan) {
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
pub(super) fn scan(tokens: &[Token]) -> FileScan {
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
pub(super) fn read_path(tokens: &[Token], i: usize, first: &str) -> (Vec<String>, usize) {
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
