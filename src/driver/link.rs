//! Which crates a unit is analyzed with, beyond its manifest's dependencies: the
//! code it takes in by `#[path]` module declarations (SPEC §3).

use std::collections::BTreeMap;
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
