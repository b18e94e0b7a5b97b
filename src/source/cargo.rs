//! The Cargo package and target a file belongs to, named as `cargo check
//! --message-format=json` names them (`package_id`, `manifest_path`, `target`), for
//! the `rustc-json` format: rust-analyzer keys the diagnostics it reads by package,
//! and a message with no package makes it clear every package's diagnostics.
//!
//! The package is the nearest `Cargo.toml` upward from the file's real directory; a
//! manifest with no `[package]` table (a virtual workspace root) means the file is in
//! no package. Manifests are read like every other input ([`super::read_regular`]:
//! regular files only, at most [`MANIFEST_MAX_BYTES`]) and parsed with `cargo_toml`
//! (a manifest Cargo would refuse is an input error with its position, and its
//! crates are analyzed without its dependencies); `cargo` itself is never run (it
//! can build and fetch). `version` and `edition`
//! inherited from the workspace (`version.workspace = true`) are read from the
//! nearest manifest above with a `[workspace]` table. The target follows Cargo's
//! auto-discovery (`src/bin/`, `examples/`, `tests/`, `benches/`, `build.rs`, else
//! the library when there is one, else the main binary) and the `[lib]` and
//! `[[bin]]` tables that name a path.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::read_regular;

/// The largest `Cargo.toml` read: 1 MiB (real ones are a few KiB).
pub const MANIFEST_MAX_BYTES: u64 = 1024 * 1024;

/// A package and target as cargo prints them in a `compiler-message`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CargoTarget {
    /// `path+file:///abs/dir#name@version` (the name is left out when it is the
    /// directory's name), as cargo 1.77 and later print a path package's id.
    #[serde(skip)]
    pub package_id: String,
    /// The absolute path of the package's `Cargo.toml`.
    #[serde(skip)]
    pub manifest_path: String,
    pub kind: Vec<&'static str>,
    pub crate_types: Vec<&'static str>,
    pub name: String,
    pub src_path: String,
    pub edition: String,
    pub doc: bool,
    pub doctest: bool,
    pub test: bool,
}

/// What a manifest says that the target needs.
#[derive(Debug)]
struct Package {
    dir: PathBuf,
    name: String,
    version: String,
    edition: String,
    lib_name: Option<String>,
    lib_path: Option<String>,
    /// `[[bin]]` entries that give a path: (name, path relative to the package).
    bins: Vec<(String, String)>,
}

/// A manifest Cargo would refuse (TOML syntax, a field of the wrong type, a version
/// that is not semver, an unknown edition): where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError {
    /// The `Cargo.toml`'s path (absolute, real).
    pub path: PathBuf,
    /// 1-based line and column (in characters) of the error, when it has one.
    pub position: Option<(u32, u32)>,
    pub message: String,
}

type Manifest = cargo_toml::Manifest;

/// Finds the package of files, reading each directory's manifest at most once.
#[derive(Default)]
pub struct Resolver {
    /// Directory -> the package whose directory holds it, if any.
    dirs: HashMap<PathBuf, Option<Arc<Package>>>,
    /// Manifest directory -> its parsed manifest (`None`: none, unreadable or refused).
    manifests: HashMap<PathBuf, Option<Arc<Manifest>>>,
    /// The manifests refused, in the order read.
    pub errors: Vec<ManifestError>,
}

impl Resolver {
    /// The target of the file at `path` (absolute, real), or `None` outside every
    /// package.
    pub fn target(&mut self, path: &Path) -> Option<CargoTarget> {
        let package = self.package(path.parent()?)?;
        let rel: Vec<String> = path
            .strip_prefix(&package.dir)
            .ok()?
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => s.to_str().map(str::to_string),
                _ => None,
            })
            .collect();
        Some(target_of(&package, &rel))
    }

    /// The manifest in `dir`, parsed with `cargo_toml` as written (inheritance is
    /// resolved here, from the manifests above, never by reading other files the
    /// way `cargo_toml`'s completion does). One Cargo refuses is recorded in
    /// [`Resolver::errors`] and read as no manifest.
    fn manifest(&mut self, dir: &Path) -> Option<Arc<Manifest>> {
        if let Some(m) = self.manifests.get(dir) {
            return m.clone();
        }
        let path = dir.join("Cargo.toml");
        let parsed = match read_regular(&path, MANIFEST_MAX_BYTES, true) {
            // Unreadable: discovery reports the files it cannot read.
            Err(_) => None,
            Ok(bytes) => match String::from_utf8(bytes) {
                Err(e) => {
                    self.errors.push(ManifestError {
                        path: path.clone(),
                        position: None,
                        message: format!(
                            "Cargo.toml is not UTF-8 (byte {}); its crates are analyzed without its dependencies",
                            e.utf8_error().valid_up_to()
                        ),
                    });
                    None
                }
                Ok(text) => match Manifest::from_str(&text) {
                    Ok(m) => Some(Arc::new(m)),
                    Err(e) => {
                        self.errors.push(manifest_error(&path, &text, &e));
                        None
                    }
                },
            },
        };
        self.manifests.insert(dir.to_path_buf(), parsed.clone());
        parsed
    }

    fn has_manifest(dir: &Path) -> bool {
        dir.join("Cargo.toml").is_file()
    }

    fn package(&mut self, dir: &Path) -> Option<Arc<Package>> {
        if let Some(p) = self.dirs.get(dir) {
            return p.clone();
        }
        let found = if Self::has_manifest(dir) {
            self.read_package(dir)
        } else {
            match dir.parent() {
                Some(parent) => self.package(parent),
                None => None,
            }
        };
        self.dirs.insert(dir.to_path_buf(), found.clone());
        found
    }

    fn read_package(&mut self, dir: &Path) -> Option<Arc<Package>> {
        let manifest = self.manifest(dir)?;
        let package = manifest.package.as_ref()?;
        let mut template = || self.workspace_of(dir).and_then(|w| w.package.clone());
        let version = match &package.version {
            cargo_toml::Inheritable::Set(v) => v.to_string(),
            cargo_toml::Inheritable::Inherited => template()
                .and_then(|t| t.version.map(|v| v.to_string()))
                .unwrap_or_else(|| "0.0.0".into()),
        };
        let edition = match &package.edition {
            cargo_toml::Inheritable::Set(e) => e.to_string(),
            cargo_toml::Inheritable::Inherited => template()
                .and_then(|t| t.edition.map(|e| e.to_string()))
                .unwrap_or_else(|| "2015".into()),
        };
        let relative = |p: &str| p.trim_start_matches("./").to_string();
        let bins = manifest
            .bin
            .iter()
            .filter_map(|b| Some((b.name.clone()?, relative(b.path.as_deref()?))))
            .collect();
        let lib = manifest.lib.as_ref();
        Some(Arc::new(Package {
            dir: dir.to_path_buf(),
            name: package.name.clone(),
            version,
            edition,
            lib_name: lib.and_then(|l| l.name.clone()),
            lib_path: lib.and_then(|l| l.path.as_deref()).map(relative),
            bins,
        }))
    }

    /// The root files of the targets a file at `path` (absolute, real) may belong
    /// to: its own target's, and the package's library, main binary, `[[bin]]`
    /// paths and build script (the library and main binary are analyzed as one
    /// crate). Empty outside every package.
    pub fn roots(&mut self, path: &Path) -> Vec<PathBuf> {
        let Some(package) = path.parent().and_then(|d| self.package(d)) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = self
            .target(path)
            .map(|t| PathBuf::from(t.src_path))
            .into_iter()
            .collect();
        let lib = package.lib_path.as_deref().unwrap_or("src/lib.rs");
        for rel in [lib, "src/main.rs", "build.rs"]
            .into_iter()
            .chain(package.bins.iter().map(|(_, p)| p.as_str()))
        {
            out.push(package.dir.join(rel));
        }
        out
    }

    /// The names a deploy file may give the binary built from the file at `path`
    /// (absolute, real): its Cargo target's, its package's and the package's `[[bin]]`
    /// names, in that order; empty outside every package. A binary of its own
    /// (`src/bin/audit.rs`, a `[[bin]]` other than `src/main.rs`) has only its name:
    /// the package's other binaries are other functions.
    pub fn target_names(&mut self, path: &Path) -> Vec<String> {
        let Some(target) = self.target(path) else {
            return Vec::new();
        };
        let Some(package) = path.parent().and_then(|d| self.package(d)) else {
            return Vec::new();
        };
        let main = package.dir.join("src/main.rs");
        if target.kind == ["bin"] && Path::new(&target.src_path) != main {
            return vec![target.name];
        }
        let mut names = vec![target.name, package.name.clone()];
        names.extend(package.bins.iter().map(|(n, _)| n.clone()));
        let mut seen = std::collections::HashSet::new();
        names.retain(|n| seen.insert(n.clone()));
        names
    }

    /// The name the code imports the library of the package in `dir` by: its
    /// `[lib] name`, else the package's name with `-` written `_`.
    pub fn lib_name(&mut self, dir: &Path) -> Option<String> {
        let manifest = self.manifest(dir)?;
        let declared = manifest.lib.as_ref().and_then(|l| l.name.clone());
        let package = &manifest.package.as_ref()?.name;
        Some(declared.unwrap_or_else(|| package.replace('-', "_")))
    }

    /// The path dependencies the manifest in `dir` names (`[dependencies]`,
    /// `[build-dependencies]`, the same tables under `[target.*]`, and
    /// `[dev-dependencies]` with `dev`): the name the code imports each by (the
    /// key when it renames the package: `store = { package = "order-store", path
    /// = ".." }`; else the dependency's library name), and its directory as written
    /// (relative paths joined to `dir`). `dep.workspace = true` takes the entry of
    /// the workspace's `[workspace.dependencies]`, its path relative to the
    /// workspace root. Dependencies from a registry or git have no path: left out.
    pub fn path_dependencies(&mut self, dir: &Path, dev: bool) -> Vec<(String, PathBuf)> {
        let Some(manifest) = self.manifest(dir) else {
            return Vec::new();
        };
        let mut sets = vec![&manifest.dependencies, &manifest.build_dependencies];
        if dev {
            sets.push(&manifest.dev_dependencies);
        }
        for t in manifest.target.values() {
            sets.push(&t.dependencies);
            sets.push(&t.build_dependencies);
            if dev {
                sets.push(&t.dev_dependencies);
            }
        }
        let mut out = Vec::new();
        for (key, dep) in sets.into_iter().flatten() {
            let (base, detail) = match dep {
                cargo_toml::Dependency::Simple(_) => continue,
                cargo_toml::Dependency::Detailed(d) => (dir.to_path_buf(), (**d).clone()),
                cargo_toml::Dependency::Inherited(_) => match self.workspace_dependency(dir, key) {
                    Some(found) => found,
                    None => continue,
                },
            };
            let Some(path) = detail.path.as_deref() else {
                continue;
            };
            let dep_dir = base.join(path);
            let import = if detail.package.is_some() {
                key.replace('-', "_")
            } else {
                self.lib_name(&dep_dir)
                    .unwrap_or_else(|| key.replace('-', "_"))
            };
            out.push((import, dep_dir));
        }
        out
    }

    /// Every dependency the manifest in `dir` names, from a registry, git or a path
    /// (`[dependencies]`, `[build-dependencies]`, `[dev-dependencies]` and the same
    /// tables under `[target.*]`): each by its key and, when it renames the package,
    /// the package's name too, `-` written `_` (`nats = { package = "async-nats" }`:
    /// `nats` and `async_nats`). `None` without a readable manifest.
    pub fn dependency_names(&mut self, dir: &Path) -> Option<BTreeSet<String>> {
        let manifest = self.manifest(dir)?;
        let mut sets = vec![
            &manifest.dependencies,
            &manifest.build_dependencies,
            &manifest.dev_dependencies,
        ];
        for t in manifest.target.values() {
            sets.extend([&t.dependencies, &t.build_dependencies, &t.dev_dependencies]);
        }
        let mut out = BTreeSet::new();
        for (key, dep) in sets.into_iter().flatten() {
            out.insert(key.replace('-', "_"));
            let package = match dep {
                cargo_toml::Dependency::Simple(_) => None,
                cargo_toml::Dependency::Detailed(d) => d.package.clone(),
                cargo_toml::Dependency::Inherited(_) => self
                    .workspace_dependency(dir, key)
                    .and_then(|(_, d)| d.package),
            };
            if let Some(p) = package {
                out.insert(p.replace('-', "_"));
            }
        }
        Some(out)
    }

    /// The root of the workspace `dir`'s package belongs to: the nearest directory
    /// from `dir` upward, never above `limit`, whose manifest has a `[workspace]` table.
    pub fn workspace_root(&mut self, dir: &Path, limit: &Path) -> Option<PathBuf> {
        let (root, _) = self.workspace_above(dir)?;
        root.starts_with(limit).then_some(root)
    }

    /// The `[workspace]` table of the nearest manifest above `dir` (the package's
    /// own included) that has one, and that directory; `None` when `dir` is in the
    /// workspace's `exclude` list (an excluded package is a workspace of its own).
    /// `members` need not be read: in a workspace Cargo accepts, every package below
    /// the root is a member (by `members` or as a path dependency) or excluded.
    fn workspace_above(&mut self, dir: &Path) -> Option<(PathBuf, Arc<Manifest>)> {
        for d in dir.ancestors() {
            if !Self::has_manifest(d) {
                continue;
            }
            let Some(m) = self.manifest(d) else {
                continue;
            };
            let Some(ws) = m.workspace.as_ref() else {
                continue;
            };
            let rel = dir.strip_prefix(d).unwrap_or(Path::new(""));
            let excluded = ws.exclude.iter().any(|e| {
                !rel.as_os_str().is_empty() && rel.starts_with(e.trim_start_matches("./"))
            });
            return (!excluded).then(|| (d.to_path_buf(), m.clone()));
        }
        None
    }

    fn workspace_of(&mut self, dir: &Path) -> Option<cargo_toml::Workspace> {
        self.workspace_above(dir)
            .and_then(|(_, m)| m.workspace.clone())
    }

    /// The `[workspace.dependencies]` entry `name` of the nearest workspace above
    /// `dir`, with the workspace root its path is relative to.
    fn workspace_dependency(
        &mut self,
        dir: &Path,
        name: &str,
    ) -> Option<(PathBuf, cargo_toml::DependencyDetail)> {
        let (root, m) = self.workspace_above(dir)?;
        match m.workspace.as_ref()?.dependencies.get(name)? {
            cargo_toml::Dependency::Detailed(d) => Some((root, (**d).clone())),
            _ => None,
        }
    }
}

/// A refused manifest's error, positioned by the TOML error's span.
fn manifest_error(path: &Path, text: &str, e: &cargo_toml::Error) -> ManifestError {
    let (position, message) = match e {
        cargo_toml::Error::Parse(p) => (
            p.span().map(|s| line_col(text, s.start)),
            p.message().trim().to_string(),
        ),
        other => (None, other.to_string()),
    };
    ManifestError {
        path: path.to_path_buf(),
        position,
        message: format!(
            "Cargo would refuse this manifest: {message}; its crates are analyzed without its dependencies"
        ),
    }
}

/// 1-based line and column (in characters) of byte `at` of `text`.
fn line_col(text: &str, at: usize) -> (u32, u32) {
    let at = (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(col).unwrap_or(u32::MAX),
    )
}

/// `s` as a URL path: bytes outside the characters a URL path keeps are
/// percent-encoded, as `Url::from_file_path` does.
fn url_path(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        let keep = b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b);
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn target_of(p: &Package, rel: &[String]) -> CargoTarget {
    let dir = p.dir.to_string_lossy();
    let id = if p.dir.file_name().and_then(|n| n.to_str()) == Some(p.name.as_str()) {
        format!("path+file://{}#{}", url_path(&dir), p.version)
    } else {
        format!("path+file://{}#{}@{}", url_path(&dir), p.name, p.version)
    };
    let path_of = |rel: &str| p.dir.join(rel).to_string_lossy().into_owned();
    let stem = |file: &str| file.strip_suffix(".rs").unwrap_or(file).to_string();
    let rel_str = rel.join("/");
    // (kind, name, src_path relative to the package)
    let (kind, name, src): (&'static str, String, String) =
        if let Some((name, path)) = p.bins.iter().find(|(_, path)| *path == rel_str) {
            ("bin", name.clone(), path.clone())
        } else {
            match rel
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice()
            {
                ["build.rs"] => (
                    "custom-build",
                    "build-script-build".into(),
                    "build.rs".into(),
                ),
                ["src", "bin", file] => ("bin", stem(file), rel_str.clone()),
                ["src", "bin", d, ..] => ("bin", d.to_string(), format!("src/bin/{d}/main.rs")),
                [dir @ ("examples" | "tests" | "benches"), file] if file.ends_with(".rs") => {
                    (kind_of(dir), stem(file), rel_str.clone())
                }
                [dir @ ("examples" | "tests" | "benches"), d, ..] if rel.len() > 2 => {
                    (kind_of(dir), d.to_string(), format!("{dir}/{d}/main.rs"))
                }
                _ => {
                    let lib = p.lib_path.clone().unwrap_or_else(|| "src/lib.rs".into());
                    let has_main = p.dir.join("src/main.rs").is_file();
                    if p.lib_path.is_some() || p.dir.join(&lib).is_file() || !has_main {
                        let name = p
                            .lib_name
                            .clone()
                            .unwrap_or_else(|| p.name.replace('-', "_"));
                        ("lib", name, lib)
                    } else {
                        let name = p
                            .bins
                            .iter()
                            .find(|(_, path)| path == "src/main.rs")
                            .map_or_else(|| p.name.clone(), |(n, _)| n.clone());
                        ("bin", name, "src/main.rs".into())
                    }
                }
            }
        };
    let crate_types = if kind == "lib" { "lib" } else { "bin" };
    let (doc, doctest, test) = match kind {
        "lib" => (true, true, true),
        "bin" => (true, false, true),
        "test" => (false, false, true),
        _ => (false, false, false),
    };
    CargoTarget {
        package_id: id,
        manifest_path: path_of("Cargo.toml"),
        kind: vec![kind],
        crate_types: vec![crate_types],
        name,
        src_path: path_of(&src),
        edition: p.edition.clone(),
        doc,
        doctest,
        test,
    }
}

fn kind_of(dir: &str) -> &'static str {
    match dir {
        "examples" => "example",
        "tests" => "test",
        _ => "bench",
    }
}

/// Crate key -> (the name its code imports a dependency by, the dependency's crate key).
pub type CrateDeps = BTreeMap<String, Vec<(String, String)>>;

/// Which crates depend on which (docs/what-is-analyzed.md): a package on the packages it names by
/// `path` (their libraries), a binary or an example on its package's library (a
/// main binary in the library's own crate names it too). Only
/// dependencies inside the analyzed tree are returned; the others are named in the
/// second set.
pub(super) fn crate_dependencies(
    files: &[super::SourceFile],
    package_dirs: &BTreeMap<String, PathBuf>,
    dev: bool,
    resolver: &mut Resolver,
) -> (CrateDeps, BTreeSet<String>) {
    let rust = || files.iter().filter(|f| f.kind == super::FileKind::Rust);
    // Packages with a library (or main binary) target among the files.
    let libs: BTreeSet<&str> = rust()
        .filter(|f| f.crate_key == f.package_key)
        .map(|f| f.crate_key.as_str())
        .collect();
    let by_dir: HashMap<PathBuf, &str> = package_dirs
        .iter()
        .map(|(k, d)| (d.clone(), k.as_str()))
        .collect();
    let mut outside = BTreeSet::new();
    let mut package_deps: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    let packages: BTreeSet<&str> = rust().map(|f| f.package_key.as_str()).collect();
    for p in packages {
        let Some(dir) = package_dirs.get(p) else {
            continue;
        };
        let mut deps = Vec::new();
        for (import, dep_dir) in resolver.path_dependencies(dir, dev) {
            let real = std::fs::canonicalize(&dep_dir).unwrap_or(dep_dir);
            match by_dir.get(&real) {
                Some(q) if libs.contains(q) && *q != p => deps.push((import, q.to_string())),
                Some(_) => {}
                None => {
                    outside.insert(import);
                }
            }
        }
        package_deps.insert(p, deps);
    }
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let crates: BTreeSet<(&str, &str)> = rust()
        .map(|f| (f.crate_key.as_str(), f.package_key.as_str()))
        .collect();
    for (k, p) in crates {
        let mut deps = package_deps.get(p).cloned().unwrap_or_default();
        // A binary or an example uses its package's library. So does the main
        // binary sharing the library's crate (`src/main.rs` beside `src/lib.rs`):
        // `use payments_svc::store;` names the crate itself.
        let main_beside_lib = k == p
            && package_dirs
                .get(p)
                .is_some_and(|d| d.join("src/main.rs").is_file() && d.join("src/lib.rs").is_file());
        if (k != p || main_beside_lib) && libs.contains(p) {
            if let Some(name) = package_dirs.get(p).and_then(|d| resolver.lib_name(d)) {
                deps.push((name, p.to_string()));
            }
        }
        if !deps.is_empty() {
            out.insert(k.to_string(), deps);
        }
    }
    (out, outside)
}

/// Crate key -> every dependency its package's manifest names (see
/// [`Resolver::dependency_names`]); a crate with no readable manifest is left out.
pub type CrateUses = BTreeMap<String, BTreeSet<String>>;

/// What each crate may import from outside itself (docs/what-is-analyzed.md): the
/// dependencies its package's manifest names, registry ones included.
pub(super) fn crate_uses(
    files: &[super::SourceFile],
    package_dirs: &BTreeMap<String, PathBuf>,
    resolver: &mut Resolver,
) -> CrateUses {
    let crates: BTreeSet<(&str, &str)> = files
        .iter()
        .filter(|f| f.kind == super::FileKind::Rust)
        .map(|f| (f.crate_key.as_str(), f.package_key.as_str()))
        .collect();
    let mut by_package: HashMap<&str, Option<BTreeSet<String>>> = HashMap::new();
    let mut out = CrateUses::new();
    for (k, p) in crates {
        let names = by_package.entry(p).or_insert_with(|| {
            package_dirs
                .get(p)
                .and_then(|dir| resolver.dependency_names(dir))
        });
        if let Some(names) = names {
            out.insert(k.to_string(), names.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &Path, rel: &str, content: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }

    /// Path dependencies as Cargo reads them: plain, renamed, inherited from
    /// `[workspace.dependencies]`, target-specific; registry ones left out; the
    /// import name from `[lib] name` or the package name.
    #[test]
    fn path_dependencies_follow_cargo() {
        let t = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(t.path()).unwrap();
        write(
            &root,
            "Cargo.toml",
            "[workspace]\nmembers = [\"app\", \"db\", \"order-store\"]\n\
             [workspace.dependencies]\ndb = { path = \"db\" }\n",
        );
        write(
            &root,
            "app/Cargo.toml",
            "[package]\nname = \"app\"\n[dependencies]\ndb.workspace = true\n\
             store = { package = \"order-store\", path = \"../order-store\" }\n\
             serde = \"1\"\n[target.'cfg(unix)'.dependencies]\nunixy = { path = \"../unixy\" }\n\
             [dev-dependencies]\ntesty = { path = \"../testy\" }\n",
        );
        write(
            &root,
            "db/Cargo.toml",
            "[package]\nname = \"db\"\n[lib]\nname = \"db_core\"\n",
        );
        write(
            &root,
            "order-store/Cargo.toml",
            "[package]\nname = \"order-store\"\n",
        );
        write(&root, "unixy/Cargo.toml", "[package]\nname = \"unix-y\"\n");
        let mut r = Resolver::default();
        let deps = r.path_dependencies(&root.join("app"), false);
        let names: Vec<(&str, PathBuf)> = deps
            .iter()
            .map(|(n, d)| (n.as_str(), fs::canonicalize(d).unwrap()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("db_core", root.join("db")),
                ("store", root.join("order-store")),
                ("unix_y", root.join("unixy")),
            ]
        );
        assert_eq!(r.path_dependencies(&root.join("app"), true).len(), 4);
        assert_eq!(
            r.lib_name(&root.join("order-store")).as_deref(),
            Some("order_store")
        );
    }

    /// A manifest Cargo refuses is an error with its position, and its package has
    /// no dependencies; a sound manifest beside it is read as before.
    #[test]
    fn refused_manifests_are_errors_with_positions() {
        let t = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(t.path()).unwrap();
        write(
            &root,
            "bad/Cargo.toml",
            "[package]\nname = \"bad\"\nversion = \"one\"\n[dependencies]\ngood = { path = \"../good\" }\n",
        );
        write(&root, "syntax/Cargo.toml", "[package\nname = \"s\"\n");
        write(
            &root,
            "good/Cargo.toml",
            "[package]\nname = \"good\"\nedition = \"2021\"\n",
        );
        let mut r = Resolver::default();
        assert!(r.path_dependencies(&root.join("bad"), false).is_empty());
        assert_eq!(r.lib_name(&root.join("syntax")), None);
        assert_eq!(r.lib_name(&root.join("good")).as_deref(), Some("good"));
        let errors: Vec<_> = r
            .errors
            .iter()
            .map(|e| {
                (
                    e.path.strip_prefix(&root).unwrap().to_path_buf(),
                    e.position,
                )
            })
            .collect();
        assert_eq!(
            errors,
            vec![
                (PathBuf::from("bad/Cargo.toml"), Some((3, 11))),
                (PathBuf::from("syntax/Cargo.toml"), Some((1, 9))),
            ]
        );
        assert!(r.errors[0]
            .message
            .starts_with("Cargo would refuse this manifest"));
        // Read once: asking again adds no error.
        r.lib_name(&root.join("bad"));
        assert_eq!(r.errors.len(), 2);
    }

    /// An excluded package is a workspace of its own: it inherits nothing from the
    /// workspace above it and is not counted in it.
    #[test]
    fn excluded_packages_are_outside_the_workspace() {
        let t = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(t.path()).unwrap();
        write(
            &root,
            "Cargo.toml",
            "[workspace]\nmembers = [\"crates/*\"]\nexclude = [\"crates/legacy\"]\n\
             [workspace.package]\nversion = \"2.0.0\"\n\
             [workspace.dependencies]\ndb = { path = \"crates/db\" }\n",
        );
        for name in ["app", "legacy"] {
            write(
                &root,
                &format!("crates/{name}/Cargo.toml"),
                &format!(
                    "[package]\nname = \"{name}\"\nversion.workspace = true\n\
                     [dependencies]\ndb.workspace = true\n"
                ),
            );
            write(&root, &format!("crates/{name}/src/lib.rs"), "");
        }
        write(&root, "crates/db/Cargo.toml", "[package]\nname = \"db\"\n");
        let mut r = Resolver::default();
        let app = root.join("crates/app");
        let legacy = root.join("crates/legacy");
        assert_eq!(r.workspace_root(&app, &root), Some(root.clone()));
        assert_eq!(r.workspace_root(&legacy, &root), None);
        assert_eq!(r.path_dependencies(&app, false).len(), 1);
        assert!(r.path_dependencies(&legacy, false).is_empty());
        let id =
            |r: &mut Resolver, dir: &Path| r.target(&dir.join("src/lib.rs")).unwrap().package_id;
        assert!(id(&mut r, &app).ends_with("#2.0.0"), "{}", id(&mut r, &app));
        assert!(id(&mut r, &legacy).ends_with("#0.0.0"));
    }

    #[test]
    fn package_ids_and_targets_follow_cargo() {
        let t = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(t.path()).unwrap();
        write(
            &root,
            "Cargo.toml",
            "[workspace]\nmembers = [\"a\", \"b dir\"]\n[workspace.package]\nversion = \"1.2.3\"\nedition = \"2021\"\n",
        );
        write(
            &root,
            "a/Cargo.toml",
            "[package]\nname = \"a\"\nversion.workspace = true\nedition.workspace = true\n",
        );
        write(&root, "a/src/main.rs", "");
        write(&root, "a/src/db.rs", "");
        write(&root, "a/src/bin/tool.rs", "");
        write(&root, "a/examples/ex/util.rs", "");
        write(&root, "a/deploy/k.yaml", "");
        write(&root, "b dir/Cargo.toml", "[package]\nname = \"b-x\"\n");
        write(&root, "b dir/src/lib.rs", "");
        write(&root, "b dir/tests/t.rs", "");
        write(&root, "loose/x.rs", "");
        let mut r = Resolver::default();
        let a = r.target(&root.join("a/src/db.rs")).unwrap();
        let base = root.to_string_lossy();
        assert_eq!(
            a.package_id,
            format!("path+file://{}/a#1.2.3", url_path(&base))
        );
        assert_eq!(a.manifest_path, format!("{base}/a/Cargo.toml"));
        assert_eq!((a.kind[0], a.name.as_str()), ("bin", "a"));
        assert_eq!(a.src_path, format!("{base}/a/src/main.rs"));
        assert_eq!(a.edition, "2021");
        assert_eq!(r.target(&root.join("a/deploy/k.yaml")).unwrap(), a);
        let tool = r.target(&root.join("a/src/bin/tool.rs")).unwrap();
        assert_eq!((tool.kind[0], tool.name.as_str()), ("bin", "tool"));
        let ex = r.target(&root.join("a/examples/ex/util.rs")).unwrap();
        assert_eq!((ex.kind[0], ex.name.as_str()), ("example", "ex"));
        assert_eq!(ex.src_path, format!("{base}/a/examples/ex/main.rs"));
        let b = r.target(&root.join("b dir/src/lib.rs")).unwrap();
        assert_eq!(
            b.package_id,
            format!("path+file://{}/b%20dir#b-x@0.0.0", url_path(&base))
        );
        assert_eq!(
            (b.kind[0], b.name.as_str(), b.edition.as_str()),
            ("lib", "b_x", "2015")
        );
        let t = r.target(&root.join("b dir/tests/t.rs")).unwrap();
        assert_eq!(
            (t.kind[0], t.name.as_str(), t.test, t.doc),
            ("test", "t", true, false)
        );
        // The workspace root has no [package]: a file there is in no package.
        assert_eq!(r.target(&root.join("loose/x.rs")), None);
    }
}
