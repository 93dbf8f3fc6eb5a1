//! The module tree of one crate and its file dependency graph: modules, name resolution
//! through `use` and re-exports, cycles between files and between top-level folders.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::Path;

use super::lex::*;

// ------------------------------------------------------------------------------------------------
// Modules and name resolution

pub(super) struct SourceFile {
    /// Relative to the package root: `src/fusion/graph.rs`.
    pub(super) path: String,
    pub(super) lines: Vec<String>,
    pub(super) scan: FileScan,
}

/// One module of one crate: a file, or an inline `mod` in a file.
pub(super) struct Module {
    pub(super) file: usize,
    pub(super) scope: usize,
    pub(super) parent: Option<usize>,
    /// The crate root module this module belongs to.
    pub(super) root: usize,
    pub(super) children: BTreeMap<String, usize>,
}

/// What a name or path can mean: a module, an item (known by the module defining it), or both
/// (`trace::classify` is a module and a function), as Rust keeps the two in separate namespaces.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Resolved {
    pub(super) module: Option<usize>,
    pub(super) item: Option<usize>,
}

impl Resolved {
    pub(super) fn is_empty(&self) -> bool {
        self.module.is_none() && self.item.is_none()
    }

    pub(super) fn or(self, other: Resolved) -> Resolved {
        Resolved { module: self.module.or(other.module), item: self.item.or(other.item) }
    }
}

/// One line that creates an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Evidence {
    pub(super) line: usize,
    pub(super) stmt_line: usize,
}

/// All of `src/` read: crates, modules and the file dependency graph.
pub(super) struct Tree {
    pub(super) files: Vec<SourceFile>,
    pub(super) modules: Vec<Module>,
    pub(super) lib_root: Option<usize>,
    /// (from file, to file) → the lines that create the edge.
    pub(super) edges: BTreeMap<(usize, usize), BTreeSet<Evidence>>,
    /// Paths into this crate that the resolver could not follow.
    pub(super) unresolved: Vec<String>,
    /// Files no crate declares, and `mod` declarations without a file.
    pub(super) problems: Vec<String>,
}

/// Guards resolution against re-export loops: the (module, name) lookups under way.
pub(super) type Stack = Vec<(usize, String)>;

impl Tree {
    /// `sources` maps package-relative paths (`src/lib.rs`) to their text.
    pub(super) fn new(sources: &BTreeMap<String, String>) -> Tree {
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
    pub(super) fn add_module(
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

    pub(super) fn scope_of(&self, m: usize) -> &Scope {
        &self.files[self.modules[m].file].scan.scopes[self.modules[m].scope]
    }

    /// What `name` means inside module `m`: a child module, an item defined there, or what an
    /// import binding `name` resolves to (so re-exports lead to the defining file).
    /// `local` admits imports made inside function bodies (only for the module's own code).
    pub(super) fn lookup(&self, m: usize, name: &str, local: bool, stack: &mut Stack) -> Resolved {
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
    pub(super) fn leads_outside(&self, m: usize, segs: &[String], local: bool, stack: &mut Stack) -> bool {
        segs.first().is_some_and(|first| {
            !matches!(first.as_str(), "crate" | "$crate" | "self" | "super" | "fusionscope")
                && self.lookup(m, first, local, stack).is_empty()
        })
    }

    /// What the path `segs`, written in module `m`, names. None when it leads outside the crate
    /// (std, serde, a generic parameter) or cannot be followed.
    pub(super) fn resolve(&self, m: usize, segs: &[String], local: bool, stack: &mut Stack) -> Option<Resolved> {
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
    pub(super) fn walk(&self, mut r: Resolved, rest: &[String], stack: &mut Stack) -> Option<Resolved> {
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
    pub(super) fn link(&mut self) {
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

    pub(super) fn file_index(&self, path: &str) -> Option<usize> {
        self.files.iter().position(|f| f.path == path)
    }

    pub(super) fn depends(&self, from: &str, to: &str) -> bool {
        match (self.file_index(from), self.file_index(to)) {
            (Some(a), Some(b)) => self.edges.contains_key(&(a, b)),
            _ => false,
        }
    }

    /// Strongly connected components of the file graph with more than one file.
    pub(super) fn cycles(&self) -> Vec<Vec<usize>> {
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); self.files.len()];
        for &(a, b) in self.edges.keys() {
            next[a].push(b);
        }
        components(&next)
    }

    /// The folder (or single file) at the crate's top level each file is in: `src/time/waits.rs`
    /// and `src/time.rs` are both `time`; the crate's root (`src/lib.rs`) is none.
    pub(super) fn top_module(&self, file: usize) -> Option<String> {
        let rest = self.files[file].path.strip_prefix("src/")?;
        let first = rest.split('/').next()?.trim_end_matches(".rs");
        (first != "lib" && first != "main").then(|| first.to_string())
    }

    /// Cycles between the crate's top-level modules (folders), each as the modules in it and
    /// one file edge per pair that makes it: a folder is one idea that a lower one must not
    /// reach back into.
    pub(super) fn folder_cycle_report(&self) -> String {
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
    pub(super) fn cycle_report(&self) -> String {
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
    pub(super) fn shortest_path(&self, from: usize, to: usize, inside: &BTreeSet<usize>) -> Vec<usize> {
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
pub(super) fn read_sources(package: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
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
pub(super) fn drop_unit_test_files(sources: &mut BTreeMap<String, String>) {
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
pub(super) fn components(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
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
