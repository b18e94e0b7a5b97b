//! The analysis cache (issue 40): [`super::analyze`]'s output, stored on disk under a
//! key that hashes everything the output depends on, so that a rerun of `check` on
//! an unchanged tree reads the files, hashes them and skips the analysis.
//!
//! The key ([`key`]) is an XXH3-128 hash over: the msgaudit version, the cache
//! format, the running binary's size and modification time, the built-in API packs,
//! the config's `[apis]` as applied, `include_tests`, the prefilter switch, the
//! crates' dependencies and binary names, the rules that run, and every input
//! file's display path, absolute path, crate key, kind and text. One entry is one
//! whole-tree output; entries are files `<key>.json` in the cache directory, each a
//! header line (magic, format, key) and the output as JSON. An entry whose header,
//! JSON or rule codes do not check out is a miss (and is replaced). Writes go to a
//! temporary file renamed into place, so concurrent runs never see half an entry.
//! At most [`MAX_ENTRIES`] entries are kept; the least recently used go first.

use std::path::{Path, PathBuf};

use super::{AnalysisInput, AnalysisOutput};
use crate::apis::ApiConfig;

/// The cache directory's name, in the project root.
pub const DIR_NAME: &str = ".msgaudit_cache";
/// Entries kept per cache directory.
pub const MAX_ENTRIES: usize = 8;
const MAGIC: &str = "msgaudit-analysis-cache";
/// Bumped whenever the stored form of [`AnalysisOutput`] changes.
const FORMAT: u32 = 1;
const TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
# This file is a cache directory tag created by msgaudit.\n\
# For information about cache directory tags see https://bford.info/cachedir/\n";

/// A stable 128-bit hash, fed length-prefixed fields (so that `"ab","c"` and
/// `"a","bc"` differ).
struct Hasher(xxhash_rust::xxh3::Xxh3);

impl Hasher {
    fn bytes(&mut self, b: &[u8]) {
        self.0.update(&(b.len() as u64).to_le_bytes());
        self.0.update(b);
    }

    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}

/// The key of an analysis: a hex string over everything its output depends on (see
/// the module documentation). `api_config` is the config's `[apis]` as applied (the
/// default one when it was in error).
pub fn key(input: &AnalysisInput, api_config: &ApiConfig) -> String {
    let mut h = Hasher(xxhash_rust::xxh3::Xxh3::new());
    h.str(MAGIC);
    h.str(env!("CARGO_PKG_VERSION"));
    h.str(&FORMAT.to_string());
    h.str(&binary_identity());
    for (name, text) in crate::apis::PACKS {
        h.str(name);
        h.str(text);
    }
    h.str(&format!("{api_config:?}"));
    h.str(&format!(
        "tests={} prefilter={}",
        input.include_tests, input.prefilter
    ));
    h.str(&format!("{:?}", input.deps));
    h.str(&format!("{:?}", input.targets));
    for meta in crate::rules::ALL.iter() {
        h.str(&format!("{}={}", meta.code, (input.running)(meta.code)));
    }
    h.str(&input.files.len().to_string());
    for f in input.files {
        h.str(&f.path);
        h.bytes(f.abs.as_os_str().as_encoded_bytes());
        h.str(&f.crate_key);
        h.str(&format!("{:?}", f.kind));
        h.str(&f.text);
    }
    format!("{:032x}", h.0.digest128())
}

/// The running binary's size and modification time: a rebuilt msgaudit of the same
/// version (a development build) does not read its predecessor's entries.
fn binary_identity() -> String {
    let meta = std::env::current_exe().and_then(std::fs::metadata);
    match meta {
        Ok(m) => {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{} {mtime}", m.len())
        }
        Err(_) => String::new(),
    }
}

/// The cache directory of a project root: `ROOT/.msgaudit_cache` when it exists or
/// can be created and is writable, else `$XDG_CACHE_HOME/msgaudit/<hash of ROOT>`
/// (`~/.cache` when `XDG_CACHE_HOME` is unset), created with its tag files; `None`
/// when neither can be made (the run goes without a cache).
pub fn dir_for(root: &Path) -> Option<PathBuf> {
    let primary = root.join(DIR_NAME);
    if prepare(&primary) {
        return Some(primary);
    }
    let fallback = fallback_dir(root)?;
    prepare(&fallback).then_some(fallback)
}

/// Every directory [`dir_for`] may use for `root`.
pub fn dirs_of(root: &Path) -> Vec<PathBuf> {
    std::iter::once(root.join(DIR_NAME))
        .chain(fallback_dir(root))
        .collect()
}

fn fallback_dir(root: &Path) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let id = xxhash_rust::xxh3::xxh3_64(root.as_os_str().as_encoded_bytes());
    Some(base.join("msgaudit").join(format!("{id:016x}")))
}

/// Creates `dir` with its `CACHEDIR.TAG` and `.gitignore` (`*`); false when it
/// cannot be written.
fn prepare(dir: &Path) -> bool {
    if std::fs::create_dir_all(dir).is_err()
        || std::fs::metadata(dir).is_ok_and(|m| m.permissions().readonly())
    {
        return false;
    }
    let files = [("CACHEDIR.TAG", TAG), (".gitignore", "*\n")];
    files.iter().all(|(name, text)| {
        let path = dir.join(name);
        path.is_file() || crate::support::files::write_atomic(&path, text, "cache tag").is_ok()
    })
}

fn entry(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.json"))
}

fn header(key: &str) -> String {
    format!("{MAGIC} {FORMAT} {key}\n")
}

/// The stored output for `key`, when an entry exists and checks out: the header
/// names this format and key, the JSON reads back, and every finding names a rule
/// of this msgaudit. Anything else is a miss.
pub fn load(dir: &Path, key: &str) -> Option<AnalysisOutput> {
    let path = entry(dir, key);
    let text = std::fs::read_to_string(&path).ok()?;
    let body = text.strip_prefix(&header(key))?;
    let output: AnalysisOutput = serde_json::from_str(body).ok()?;
    let known = |code: &str, name: &str| {
        crate::rules::ALL
            .iter()
            .any(|m| m.code == code && m.name == name)
    };
    let findings_known = output.findings.iter().all(|f| known(f.code, f.name));
    let refs_known = output
        .inventory
        .consumers
        .iter()
        .flat_map(|c| &c.findings)
        .chain(output.inventory.producers.iter().flat_map(|p| &p.findings))
        .all(|f| known(f.code, f.name));
    if !(findings_known && refs_known) {
        return None;
    }
    // Recently used: the last to be evicted.
    if let Ok(f) = std::fs::File::options().append(true).open(&path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
    Some(output)
}

/// Stores `output` under `key` (atomically), then evicts the least recently used
/// entries past [`MAX_ENTRIES`]. `Err` says why it could not be written; the caller
/// goes on without it.
pub fn store(dir: &Path, key: &str, output: &AnalysisOutput) -> Result<(), String> {
    let mut text = Capped {
        buf: Vec::new(),
        cap: MAX_ENTRY_BYTES,
    };
    std::io::Write::write_all(&mut text, header(key).as_bytes()).map_err(|e| e.to_string())?;
    serde_json::to_writer(&mut text, output).map_err(|e| e.to_string())?;
    let text = String::from_utf8(text.buf).map_err(|e| e.to_string())?;
    crate::support::files::write_atomic(&entry(dir, key), &text, "cache entry")?;
    evict(dir);
    Ok(())
}

/// The largest entry stored: a larger output is not cached. Storing must never cost
/// the run that found it (issue 38): the entry's text is taken with `try_reserve`, so
/// that memory refused fails the store, not the run.
pub const MAX_ENTRY_BYTES: usize = 32 << 20;

/// A buffer that refuses to grow past `cap` bytes, or when the system refuses memory.
struct Capped {
    buf: Vec<u8>,
    cap: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() + data.len() > self.cap {
            return Err(std::io::Error::other("the entry is too large to cache"));
        }
        self.buf
            .try_reserve(data.len())
            .map_err(|_| std::io::Error::other("no memory for the cache entry"))?;
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Removes the oldest entries past [`MAX_ENTRIES`], and temporary files an
/// interrupted write left more than an hour ago.
fn evict(dir: &Path) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    let mut entries = Vec::new();
    for e in read.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let modified = e
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        if name.ends_with(".tmp") && name.starts_with('.') {
            let age = now.duration_since(modified).unwrap_or_default();
            if age > std::time::Duration::from_secs(3600) {
                let _ = std::fs::remove_file(&path);
            }
        } else if name.ends_with(".json") && !name.starts_with('.') {
            entries.push((modified, name, path));
        }
    }
    if entries.len() <= MAX_ENTRIES {
        return;
    }
    entries.sort();
    let extra = entries.len() - MAX_ENTRIES;
    for (_, _, path) in entries.into_iter().take(extra) {
        let _ = std::fs::remove_file(path);
    }
}

/// `msgaudit clean`: removes the cache directories of `root` ([`dirs_of`]); returns
/// those removed.
pub fn clean(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut removed = Vec::new();
    for dir in dirs_of(root) {
        if !dir.is_dir() {
            continue;
        }
        std::fs::remove_dir_all(&dir)
            .map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
        removed.push(dir);
    }
    Ok(removed)
}
