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

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::OnceLock;

mod lex;
mod tree;

use tree::*;

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
