//! The per-crate cache (issue 40): each crate's analysis result, stored under a key
//! that hashes what that result depends on, so that a run after an edit analyzes
//! only the crates whose files changed (the edited crate, and the crates it is
//! linked into as a dependency), and takes the others' results from disk.
//!
//! A crate's key hashes the run's shared part ([`super::cache::crate_prefix`]: the
//! version, the binary, the packs, the applied `[apis]`, the switches, the rules that
//! run and the SQL files), the tables with a unique business key (the SQL files'
//! and those of schemas in any crate's string literals), the crate's key, the module roots its dependencies are
//! reached by, which of its files the prefilter starts from, and every file it is
//! analyzed with (its own and its dependencies' that are linked): display path,
//! absolute path, crate key, kind and text. Entries live in the cache directory's
//! `crates/` directory, in the whole-run cache's entry format (header, JSON,
//! checksum; written to a temporary file renamed into place), and at most
//! [`MAX_CRATE_ENTRIES`] are kept, the least recently used going first. An entry that
//! does not check out is a miss and is replaced.

use std::path::{Path, PathBuf};

use super::cache::{self, Hasher};
use super::CrateResult;
use crate::frontend::rust;
use crate::source::SourceFile;

/// Crate entries kept per cache directory.
pub const MAX_CRATE_ENTRIES: usize = 4096;

/// Where a run keeps its crates' results, and the key part they share.
pub struct CrateStore {
    dir: PathBuf,
    prefix: String,
}

impl CrateStore {
    /// The store in the cache directory `cache_dir` (its `crates/` directory); `None`
    /// when that cannot be made.
    pub fn open(cache_dir: &Path, prefix: String) -> Option<CrateStore> {
        let dir = cache_dir.join("crates");
        cache::prepare(&dir).then_some(CrateStore { dir, prefix })
    }

    /// The key of the crate `key` analyzed with `files`.
    pub(super) fn key(
        &self,
        key: &str,
        files: &[&SourceFile],
        roots: &rust::Roots,
        named: Option<&[bool]>,
        unique_tables: &[String],
    ) -> String {
        let mut h = Hasher::new();
        h.str(&self.prefix);
        h.str(key);
        // Tables with a unique business key, from SQL files and from schemas in any
        // crate's string literals.
        h.str(&format!("{unique_tables:?}"));
        let modules: std::collections::BTreeMap<_, _> = roots.modules.iter().collect();
        h.str(&format!("{modules:?} {:?}", roots.reexports));
        h.str(&format!("{named:?}"));
        h.str(&files.len().to_string());
        for f in files {
            h.file(f);
        }
        h.hex()
    }

    /// The stored result of the crate whose key is `key`, when it checks out: its
    /// findings name rules of this msgaudit.
    pub(super) fn load(&self, key: &str) -> Option<CrateResult> {
        let path = self.dir.join(format!("{key}.json"));
        let result: CrateResult =
            cache::read_entry(&path, key, |body| serde_json::from_str(body).ok())?;
        if !cache::rules_known(&result.findings, &result.inventory) {
            return None;
        }
        cache::touch(&path);
        Some(result)
    }

    /// Stores `result` under `key`; a failure only costs the next run its speed.
    pub(super) fn store(&self, key: &str, result: &CrateResult) {
        let _ = cache::write_entry(&self.dir, key, |out| serde_json::to_writer(out, result));
    }

    /// Drops the least recently used entries past [`MAX_CRATE_ENTRIES`] (once a run).
    pub(super) fn evict(&self) {
        cache::evict(&self.dir, MAX_CRATE_ENTRIES);
    }
}
