//! The Cargo package and target a file belongs to, named as `cargo check
//! --message-format=json` names them (`package_id`, `manifest_path`, `target`), for
//! the `rustc-json` format: rust-analyzer keys the diagnostics it reads by package,
//! and a message with no package makes it clear every package's diagnostics.
//!
//! The package is the nearest `Cargo.toml` upward from the file's real directory; a
//! manifest with no `[package]` table (a virtual workspace root) means the file is in
//! no package. Manifests are read like every other input ([`super::read_regular`]:
//! regular files only, at most [`MANIFEST_MAX_BYTES`]) and parsed with `toml`;
//! `cargo` itself is never run (it can build and fetch). `version` and `edition`
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

/// Finds the package of files, reading each directory's manifest at most once.
#[derive(Default)]
pub struct Resolver {
    /// Directory -> the package whose directory holds it, if any.
    dirs: HashMap<PathBuf, Option<Arc<Package>>>,
    /// Manifest directory -> its parsed table (`None`: none, unreadable or invalid).
    tables: HashMap<PathBuf, Option<Arc<toml::Table>>>,
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

    fn table(&mut self, dir: &Path) -> Option<Arc<toml::Table>> {
        if let Some(t) = self.tables.get(dir) {
            return t.clone();
        }
        let table = read_regular(&dir.join("Cargo.toml"), MANIFEST_MAX_BYTES, true)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| text.parse::<toml::Table>().ok())
            .map(Arc::new);
        self.tables.insert(dir.to_path_buf(), table.clone());
        table
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
        let table = self.table(dir)?;
        let package = table.get("package")?.as_table()?;
        let name = package.get("name")?.as_str()?.to_string();
        let mut inherited = |key: &str| -> Option<String> {
            let workspace = self.workspace_package(dir)?;
            workspace.get(key)?.as_str().map(str::to_string)
        };
        let field =
            |key: &str, default: &str, inherited: &mut dyn FnMut(&str) -> Option<String>| {
                match package.get(key) {
                    Some(toml::Value::String(s)) => s.clone(),
                    Some(toml::Value::Table(t))
                        if t.get("workspace").and_then(toml::Value::as_bool) == Some(true) =>
                    {
                        inherited(key).unwrap_or_else(|| default.to_string())
                    }
                    _ => default.to_string(),
                }
            };
        let version = field("version", "0.0.0", &mut inherited);
        let edition = field("edition", "2015", &mut inherited);
        let lib = table.get("lib").and_then(toml::Value::as_table);
        let lib_field = |key: &str| {
            lib.and_then(|l| l.get(key))
                .and_then(toml::Value::as_str)
                .map(str::to_string)
        };
        let bins = table
            .get("bin")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|b| {
                let b = b.as_table()?;
                let name = b.get("name")?.as_str()?.to_string();
                let path = b.get("path")?.as_str()?;
                Some((name, path.trim_start_matches("./").to_string()))
            })
            .collect();
        Some(Arc::new(Package {
            dir: dir.to_path_buf(),
            name,
            version,
            edition,
            lib_name: lib_field("name"),
            lib_path: lib_field("path").map(|p| p.trim_start_matches("./").to_string()),
            bins,
        }))
    }

    /// The name the code imports the library of the package in `dir` by: its
    /// `[lib] name`, else the package's name with `-` written `_`.
    pub fn lib_name(&mut self, dir: &Path) -> Option<String> {
        let table = self.table(dir)?;
        let declared = table
            .get("lib")
            .and_then(toml::Value::as_table)
            .and_then(|l| l.get("name"))
            .and_then(toml::Value::as_str)
            .map(str::to_string);
        let package = table.get("package")?.as_table()?.get("name")?.as_str()?;
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
        let Some(table) = self.table(dir) else {
            return Vec::new();
        };
        let mut kinds = vec!["dependencies", "build-dependencies"];
        if dev {
            kinds.push("dev-dependencies");
        }
        let mut sections: Vec<&toml::Table> = kinds
            .iter()
            .filter_map(|k| table.get(*k).and_then(toml::Value::as_table))
            .collect();
        if let Some(targets) = table.get("target").and_then(toml::Value::as_table) {
            for t in targets.values().filter_map(toml::Value::as_table) {
                sections.extend(
                    kinds
                        .iter()
                        .filter_map(|k| t.get(*k).and_then(toml::Value::as_table)),
                );
            }
        }
        let mut out = Vec::new();
        for (key, spec) in sections.into_iter().flatten() {
            let Some(spec) = spec.as_table() else {
                continue;
            };
            let inherited = spec.get("workspace").and_then(toml::Value::as_bool) == Some(true);
            let (base, entry) = if inherited {
                match self.workspace_dependency(dir, key) {
                    Some(found) => found,
                    None => continue,
                }
            } else {
                (dir.to_path_buf(), spec.clone())
            };
            let Some(path) = entry.get("path").and_then(toml::Value::as_str) else {
                continue;
            };
            let dep_dir = base.join(path);
            let renamed = entry.contains_key("package") || spec.contains_key("package");
            let import = if renamed {
                key.replace('-', "_")
            } else {
                self.lib_name(&dep_dir)
                    .unwrap_or_else(|| key.replace('-', "_"))
            };
            out.push((import, dep_dir));
        }
        out
    }

    /// The root of the workspace `dir`'s package belongs to: the nearest directory
    /// from `dir` upward, never above `limit`, whose manifest has a `[workspace]` table.
    pub fn workspace_root(&mut self, dir: &Path, limit: &Path) -> Option<PathBuf> {
        for d in dir.ancestors() {
            if !d.starts_with(limit) {
                return None;
            }
            let workspace = Self::has_manifest(d)
                && self
                    .table(d)
                    .is_some_and(|t| t.get("workspace").is_some_and(toml::Value::is_table));
            if workspace {
                return Some(d.to_path_buf());
            }
        }
        None
    }

    /// The `[workspace.dependencies]` entry `name` of the nearest workspace above
    /// `dir`, with the workspace root its path is relative to.
    fn workspace_dependency(&mut self, dir: &Path, name: &str) -> Option<(PathBuf, toml::Table)> {
        for d in dir.ancestors() {
            if !Self::has_manifest(d) {
                continue;
            }
            let Some(table) = self.table(d) else {
                continue;
            };
            if let Some(ws) = table.get("workspace").and_then(toml::Value::as_table) {
                let entry = ws.get("dependencies")?.as_table()?.get(name)?;
                return entry.as_table().map(|t| (d.to_path_buf(), t.clone()));
            }
        }
        None
    }

    /// `[workspace.package]` of the nearest manifest above `dir` that has a
    /// `[workspace]` table (the package's own manifest included).
    fn workspace_package(&mut self, dir: &Path) -> Option<toml::Table> {
        for d in dir.ancestors() {
            if !Self::has_manifest(d) {
                continue;
            }
            let Some(table) = self.table(d) else {
                continue;
            };
            if let Some(ws) = table.get("workspace").and_then(toml::Value::as_table) {
                return ws.get("package")?.as_table().cloned();
            }
        }
        None
    }
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

/// Which crates depend on which (SPEC §3): a package on the packages it names by
/// `path` (their libraries), a binary or an example on its package's library. Only
/// dependencies inside the analyzed tree are returned; the others are named in the
/// second set.
pub(super) fn crate_dependencies(
    files: &[super::SourceFile],
    package_dirs: &BTreeMap<String, PathBuf>,
    dev: bool,
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
    let mut resolver = Resolver::default();
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
        // A binary or an example uses its package's library.
        if k != p && libs.contains(p) {
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
