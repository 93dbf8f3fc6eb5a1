//! The maps of the code tell the truth: every path that `src/README.md` (the architecture map),
//! `README.md` and `docs/` name exists, and the map's dependency column is what each crate's
//! `Cargo.toml` says. A map that drifts from the code misleads the next reader, so it fails here.

use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
}

/// The Markdown files whose paths are checked, relative to the repository root.
fn maps() -> Vec<String> {
    let mut files = vec!["README.md".to_string(), "src/README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ is readable")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| format!("docs/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Relative link targets of a Markdown text (`[text](target)`), without any `#fragment`.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or("").trim();
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            out.push(target.to_string());
        }
    }
    out
}

/// Code spans that name a file or folder of the repository (`src/…`, `tests/…`, `docs/…`,
/// `scripts/…`, `www/…`): the way the maps name paths outside links.
fn path_spans(text: &str) -> Vec<String> {
    const TOP: [&str; 6] = ["src/", "tests/", "docs/", "scripts/", "www/", ".ci/"];
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| TOP.iter().any(|t| span.starts_with(t)))
        .filter(|span| !span.contains(|c: char| c.is_whitespace() || "*{}<>$|".contains(c)))
        .map(|span| span.trim_end_matches(':').to_string())
        .collect()
}

#[test]
fn every_path_the_maps_name_exists() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in maps() {
        let text = read(&file);
        let dir = Path::new(&file).parent().unwrap();
        for target in link_targets(&text) {
            checked += 1;
            if !root().join(dir).join(&target).exists() {
                missing.push(format!("{file}: link to {target}"));
            }
        }
        for span in path_spans(&text) {
            checked += 1;
            // A path may name a module the way Rust does (`src/view/fusion_pair` for its file).
            let p = root().join(&span);
            if !p.exists() && !p.with_extension("rs").exists() {
                missing.push(format!("{file}: `{span}`"));
            }
        }
    }
    assert!(checked > 100, "only {checked} paths found: is the search still reading the maps?");
    assert!(missing.is_empty(), "paths named in the maps that do not exist:\n{}", missing.join("\n"));
}

/// The crates `src/{name}/Cargo.toml` depends on among the workspace's own (dev-dependencies
/// left out: a test may reach further than the code).
fn workspace_deps(name: &str) -> BTreeSet<String> {
    let manifest = read(&format!("src/{name}/Cargo.toml"));
    let mut in_dev = false;
    let mut deps = BTreeSet::new();
    for line in manifest.lines() {
        if line.starts_with('[') {
            in_dev = line.contains("dev-dependencies");
        } else if !in_dev && line.contains("package = \"fusionscope-") {
            deps.insert(line.split('=').next().unwrap().trim().to_string());
        }
    }
    deps
}

#[test]
fn the_code_map_lists_every_crate_with_its_dependencies() {
    let map = read("src/README.md");
    let rows: Vec<(String, BTreeSet<String>)> = map
        .lines()
        .filter(|l| l.starts_with("| [`"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            let name = cells[0].trim_start_matches("[`").split('`').next().unwrap().to_string();
            let deps = cells.last().unwrap();
            let deps: BTreeSet<String> =
                if *deps == "—" { BTreeSet::new() } else { deps.split(", ").map(str::to_string).collect() };
            (name, deps)
        })
        .collect();
    let mut crates: Vec<String> = std::fs::read_dir(root().join("src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    crates.sort();
    let mut listed: Vec<String> = rows.iter().map(|(n, _)| n.clone()).collect();
    listed.sort();
    assert_eq!(listed, crates, "the code map's rows and the crates in src/");
    let members = read("Cargo.toml");
    for (i, (name, deps)) in rows.iter().enumerate() {
        assert!(members.contains(&format!("\"src/{name}\"")), "src/{name} is not a workspace member");
        assert_eq!(deps, &workspace_deps(name), "src/{name}: the map's dependencies and its Cargo.toml");
        // Lower crates first: a row depends only on rows above it.
        for d in deps {
            let at = rows
                .iter()
                .position(|(n, _)| n == d)
                .unwrap_or_else(|| panic!("{name} depends on {d}, not in the map"));
            assert!(at < i, "{name} depends on {d}, which the map lists below it");
        }
    }
}

/// The packages a wasm32 build of the `fusionscope` package compiles, by name, with `features`.
fn wasm_packages(features: &[&str]) -> BTreeSet<String> {
    let mut cmd = std::process::Command::new(env!("CARGO"));
    cmd.current_dir(root()).args([
        "tree",
        "--locked",
        "-p",
        "fusionscope",
        "--target",
        "wasm32-unknown-unknown",
        "-e",
        "normal",
        "--prefix",
        "none",
    ]);
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    let out = cmd.output().expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.split_whitespace().next()).map(String::from).collect()
}

/// Cargo, not a constant in the code, keeps the large readers' dependencies out of the page's
/// first download: the page's build compiles no protobuf decoder and no SQLite; its analysis
/// worker (feature `page-worker`) compiles both.
#[test]
fn the_page_compiles_no_protobuf_or_sqlite_and_its_worker_does() {
    let page = wasm_packages(&[]);
    assert!(page.contains("fusionscope-formats") && page.contains("yew"), "{page:?}");
    for heavy in ["prost", "rusqlite"] {
        assert!(!page.contains(heavy), "the page's wasm32 build compiles {heavy}");
    }
    let worker = wasm_packages(&["page-worker"]);
    for heavy in ["prost", "rusqlite"] {
        assert!(worker.contains(heavy), "the worker's build lacks {heavy}: {worker:?}");
    }
}

/// Every Rust file of `src/` and `tests/` (less installed packages) under `dir`, relative to the
/// repository root.
fn rust_files(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())) {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "node_modules" && n != "target") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(root()).unwrap_or(&path).display().to_string());
        }
    }
}

/// A file is one idea a reader can hold: past 600 lines it is split by concept, tests too.
#[test]
fn no_rust_file_is_over_600_lines() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("tests"), &mut files);
    assert!(files.len() > 300, "only {} files found", files.len());
    let long: Vec<String> = files
        .iter()
        .map(|f| (f, read(f).lines().count()))
        .filter(|(_, n)| *n > 600)
        .map(|(f, n)| format!("{f}: {n} lines"))
        .collect();
    assert!(long.is_empty(), "split these by concept:\n{}", long.join("\n"));
}
