//! Which crates a unit is analyzed with, beyond its manifest's dependencies: the
//! code it takes in by `#[path]` module declarations (SPEC §3), and the facades
//! that re-export another crate of the tree (SPEC §2).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::frontend::rust;
use crate::source::{FileKind, SourceFile};
use crate::support::files::normalize_lexically;

/// The crates' dependencies with the code they take in by `#[path]` (SPEC §3: a
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
            let dep = deps
                .get(k)
                .into_iter()
                .flatten()
                .find(|(import, _)| import == first);
            let Some(to_root) = dep.and_then(|(_, d)| roots.modules.get(d)) else {
                continue;
            };
            let mut from = rust::file_module(roots, f);
            from.extend(re.module.iter().cloned());
            from.extend(re.name.clone());
            let mut to = to_root.clone();
            to.extend(rest.iter().cloned());
            if !from.is_empty() && from != to && !out.contains(&(from.clone(), to.clone())) {
                out.push((from, to));
            }
        }
    }
    out
}
