//! Which crates a unit is analyzed with, beyond its manifest's dependencies: the
//! code it takes in by `#[path]` module declarations (docs/what-is-analyzed.md), and the facades
//! that re-export another crate of the tree (docs/what-is-analyzed.md).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use aho_corasick::AhoCorasick;
use rayon::prelude::*;

use super::{AnalysisInput, LINK_BUDGET_BYTES, LINK_BUDGET_RATIO};
use crate::frontend::rust;
use crate::source::{FileKind, SourceFile};
use crate::support::cpu;
use crate::support::files::normalize_lexically;

/// The crates' dependencies with the code they take in by `#[path]` (docs/what-is-analyzed.md: a
/// crate is the module tree of its root file): a file that declares `#[path =
/// "../common/lib.rs"] mod common;` makes the crate holding `common/lib.rs` a
/// dependency imported as `common`, when that crate is an example or a binary of
/// its own (a directory of code several examples share); a package's library is a
/// dependency of its examples and binaries already.
pub(super) fn with_path_modules(
    deps: &crate::source::cargo::CrateDeps,
    files: &[SourceFile],
) -> crate::source::cargo::CrateDeps {
    let mut out = deps.clone();
    let rust: Vec<&SourceFile> = files.iter().filter(|f| f.kind == FileKind::Rust).collect();
    let by_abs: BTreeMap<&Path, &SourceFile> = rust.iter().map(|f| (f.abs.as_path(), *f)).collect();
    for f in &rust {
        for (name, rel) in rust::scan::path_module_decls(&f.text) {
            let Some(dir) = f.abs.parent() else { continue };
            let target = normalize_lexically(&dir.join(rel));
            let Some(g) = by_abs.get(target.as_path()) else {
                continue;
            };
            if g.crate_key == f.crate_key || g.crate_key == g.package_key {
                continue;
            }
            let entry = out.entry(f.crate_key.clone()).or_default();
            if !entry.iter().any(|(_, d)| *d == g.crate_key) {
                entry.push((name.to_string(), g.crate_key.clone()));
            }
        }
    }
    out
}

/// Each crate's top-level re-exports (`pub use notify::mailer;`), with the file
/// that makes them; crates without any left out.
pub(super) type Reexports<'a> = BTreeMap<&'a str, Vec<(&'a SourceFile, rust::scan::Reexport)>>;

pub(super) fn reexports_of<'a>(crates: &BTreeMap<&'a str, Vec<&'a SourceFile>>) -> Reexports<'a> {
    let mut out = Reexports::new();
    for (key, files) in crates {
        for f in files.iter().filter(|f| f.crate_key == *key) {
            for re in rust::scan::reexports(&f.text) {
                out.entry(*key).or_default().push((*f, re));
            }
        }
    }
    out
}

/// Adds to `relevant` (the crates worth linking) the facades: a crate that
/// re-exports something of a relevant dependency is relevant, to the fixpoint
/// (a facade of a facade).
pub(super) fn with_facades<'a>(
    relevant: &mut BTreeSet<&'a str>,
    deps: &crate::source::cargo::CrateDeps,
    reexports: &Reexports<'a>,
) {
    loop {
        let mut grew = false;
        for (key, list) in reexports {
            if relevant.contains(key) {
                continue;
            }
            let through = deps.get(*key).into_iter().flatten().any(|(import, dep)| {
                relevant.contains(dep.as_str())
                    && list.iter().any(|(_, re)| re.path.first() == Some(import))
            });
            if through {
                relevant.insert(key);
                grew = true;
            }
        }
        if !grew {
            return;
        }
    }
}

/// The re-exports of unit `key` as module paths (`ir::Crate::reexports`): for a
/// `pub use notify::mailer;` in the library of the dependency imported as
/// `platform`, `platform::mailer` stands for `notify::mailer` (where `notify`'s files
/// sit in the unit); a glob `pub use ledger::*;` makes `platform` stand for `ledger`.
/// A crate's re-exports of its own items count the same (`pub mod fluvio { pub use
/// crate::offsets::commit; }`: `fluvio::commit` stands for `offsets::commit`, in the
/// crate and, below its import name, in the crates that depend on it).
/// Only re-exports of linked crates count.
pub(super) fn reexport_paths(
    key: &str,
    roots: &rust::Roots,
    deps: &crate::source::cargo::CrateDeps,
    reexports: &Reexports,
) -> Vec<(Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    let crates = std::iter::once(key).chain(roots.modules.keys().map(String::as_str));
    for k in crates {
        for (f, re) in reexports.get(k).into_iter().flatten() {
            let Some((first, rest)) = re.path.split_first() else {
                continue;
            };
            // The module the re-export is made in (`mod fluvio { pub use .. }`).
            let mut here = rust::file_module(roots, f);
            here.extend(re.module.iter().cloned());
            let Some(mut to) = reexported_root(k, first, rest, &here, roots, deps) else {
                continue;
            };
            to.extend(rest.iter().skip_while(|s| *s == "super").cloned());
            let mut from = here;
            from.extend(re.name.clone());
            if !from.is_empty() && from != to && !out.contains(&(from.clone(), to.clone())) {
                out.push((from, to));
            }
        }
    }
    out
}

/// The module path (in the unit) a re-exported path's first segment `first` stands
/// for, in crate `k` with the re-export made in module `here`: a dependency's root
/// (`pub use notify::mailer;`), or the crate's own modules (`pub use
/// crate::kafka::commit;`, `self::`, `super::`, the `super`s that follow `first`
/// in `rest` too; a child module named without prefix, `pub use connections::mailer;`).
/// `None`: a dependency outside the unit.
fn reexported_root(
    k: &str,
    first: &str,
    rest: &[String],
    here: &[String],
    roots: &rust::Roots,
    deps: &crate::source::cargo::CrateDeps,
) -> Option<Vec<String>> {
    let own_root = || roots.modules.get(k).cloned().unwrap_or_default();
    match first {
        "crate" => Some(own_root()),
        "self" | "super" => {
            let ups =
                usize::from(first == "super") + rest.iter().take_while(|s| *s == "super").count();
            // Not above the crate's root.
            let floor = own_root().len();
            let keep = here.len().checked_sub(ups).filter(|n| *n >= floor)?;
            Some(here[..keep].to_vec())
        }
        _ => {
            let dep = deps
                .get(k)
                .into_iter()
                .flatten()
                .find(|(import, _)| import == first);
            match dep {
                Some((_, d)) => roots.modules.get(d).cloned(),
                // Rust 2018 paths: a name that is no dependency is a child module of
                // the module the re-export is made in (`mod connections; pub use
                // connections::mailer;`), or a crate outside the tree, whose path
                // then reaches nothing.
                None => {
                    let mut child = here.to_vec();
                    child.push(first.to_string());
                    Some(child)
                }
            }
        }
    }
}

/// The crates as analyzed: each with its dependencies in the tree, the import
/// names those are reached by, and how many files are its own.
pub(super) struct Composed<'a> {
    pub crates: BTreeMap<&'a str, Vec<&'a SourceFile>>,
    pub roots: BTreeMap<&'a str, rust::Roots>,
    pub own_files: BTreeMap<&'a str, usize>,
}

/// Composes each crate with its dependencies in the tree (`api_filter` matches the
/// files that name an API).
pub(super) fn compose<'a>(
    input: &AnalysisInput<'a>,
    crates: &BTreeMap<&'a str, Vec<&'a SourceFile>>,
    api_filter: &AhoCorasick,
) -> Composed<'a> {
    let pool = input.pool;
    // Each crate is analyzed with its dependencies in the tree (docs/what-is-analyzed.md): their files
    // join its own, below the names it imports them by, so that calls into them are
    // followed like calls within the crate.
    // API knowledge wins over bodies (docs/what-is-analyzed.md): a dependency that is a library the
    // API packs describe (a client library's examples use it) is not linked.
    let libraries: BTreeSet<&str> = input
        .apis
        .types
        .values()
        .flatten()
        .flat_map(|t| t.crates.iter().map(String::as_str))
        .collect();
    let deps = with_path_modules(input.deps, input.files);
    // The files a dependency contributes: those that name an API, and those that
    // declare a trait (what a `dyn Trait` receiver dispatches over: the trait of a
    // plain library crate, its implementations elsewhere); the others hold no
    // delivery event and type no receiver.
    let typing: BTreeSet<&str> = pool.install(|| {
        crates
            .par_iter()
            .flat_map_iter(|(_, files)| files.iter())
            .filter(|f| {
                api_filter.is_match(&f.text)
                    || (f.text.contains("trait")
                        && cpu::timed(cpu::Phase::Lexical, || {
                            rust::scan::scan(&f.text).types.iter().any(|t| t.is_trait)
                        }))
            })
            .map(|f| f.path.as_str())
            .collect()
    });
    // A dependency with none of those files is left unlinked: calls into it stay
    // unresolved, as calls into another crate are (cheaper on big workspaces; the
    // same with or without the prefilter).
    let mut relevant: BTreeSet<&str> = crates
        .iter()
        .filter(|(_, files)| files.iter().any(|f| typing.contains(f.path.as_str())))
        .map(|(k, _)| *k)
        .collect();
    // A facade (a crate that re-exports another's modules or items, `pub use
    // notify::mailer;`) is linked when what it re-exports is: calls through it reach
    // the real definitions (docs/what-is-analyzed.md).
    let reexports = reexports_of(crates);
    with_facades(&mut relevant, &deps, &reexports);
    let mut roots: BTreeMap<&str, rust::Roots> = BTreeMap::new();
    let mut own_files: BTreeMap<&str, usize> = BTreeMap::new();
    let crates: BTreeMap<&str, Vec<&SourceFile>> = crates
        .iter()
        .map(|(key, own)| {
            own_files.insert(key, own.len());
            let mut files = own.clone();
            let mut unit_roots = rust::Roots::default();
            let mut queue = std::collections::VecDeque::from([*key]);
            let mut seen = BTreeSet::from([*key]);
            // Every crate that uses a dependency parses it again: a budget bounds
            // that work (a vendored client many times the crate's size is left
            // unlinked, as a crate outside the tree is).
            let own_bytes: usize = own.iter().map(|f| f.text.len()).sum();
            let mut budget = own_bytes.saturating_mul(LINK_BUDGET_RATIO) + LINK_BUDGET_BYTES;
            while let Some(k) = queue.pop_front() {
                let deps = deps.get(k).into_iter().flatten();
                let linked = deps.filter(|(i, d)| {
                    !libraries.contains(i.as_str()) && relevant.contains(d.as_str())
                });
                for (import, dep) in linked {
                    let Some((dep, dep_files)) = crates.get_key_value(dep.as_str()) else {
                        continue;
                    };
                    if seen.insert(dep) {
                        // The budget counts its files that name an API; those that
                        // declare a trait join too (`Vec<Box<dyn Handler>>` then
                        // dispatches to the handlers' impls), parsed only as far as
                        // the crate needs.
                        let bytes: usize = dep_files
                            .iter()
                            .filter(|f| api_filter.is_match(&f.text))
                            .map(|f| f.text.len())
                            .sum();
                        if bytes > budget {
                            continue;
                        }
                        budget -= bytes;
                        files.extend(
                            dep_files
                                .iter()
                                .copied()
                                .filter(|f| typing.contains(f.path.as_str())),
                        );
                        unit_roots
                            .modules
                            .insert(dep.to_string(), vec![import.clone()]);
                        queue.push_back(dep);
                    }
                }
            }
            files.sort_by(|a, b| a.path.cmp(&b.path));
            unit_roots.reexports = reexport_paths(key, &unit_roots, &deps, &reexports);
            // The crate named by its own library name (its main binary's `use
            // payments_svc::store;`): that path is the crate's root.
            for (import, dep) in deps.get(*key).into_iter().flatten() {
                if dep == key && !libraries.contains(import.as_str()) {
                    unit_roots
                        .reexports
                        .push((vec![import.clone()], Vec::new()));
                }
            }
            roots.insert(key, unit_roots);
            (*key, files)
        })
        .collect();
    Composed {
        crates,
        roots,
        own_files,
    }
}
