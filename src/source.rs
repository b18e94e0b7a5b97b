//! Discovery and reading of input files. The only module that touches the disk
//! for inputs (config.rs reads msgaudit.toml).
//!
//! OWNER: shell helper. Interface fixed; implementation to be filled in.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::config::Config;
use crate::diagnostic::InputError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileKind {
    Rust,
    Yaml,
}

/// One input file, read and decoded.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Display path: as reached from the PATH argument, leading `./` dropped, `/` separators.
    pub path: String,
    /// Path on disk.
    pub abs: PathBuf,
    /// UTF-8 text with a leading BOM removed.
    pub text: String,
    pub kind: FileKind,
    /// Identifies the crate the file belongs to (SPEC §3): the display path of the
    /// directory of the nearest `Cargo.toml` (searched upward, never above the PATH
    /// argument), or the file's own display path when there is none.
    pub crate_key: String,
}

/// The result of walking the PATH arguments.
#[derive(Clone, Debug, Default)]
pub struct Discovery {
    /// Files to analyze, sorted by display path.
    pub files: Vec<SourceFile>,
    /// Unreadable, non-UTF-8 or oversized files.
    pub errors: Vec<InputError>,
    /// reason -> count (e.g. `templated_yaml`)
    pub skipped: BTreeMap<String, usize>,
    /// Number of candidate files seen (`.rs`, `.yml`, `.yaml`).
    pub seen: usize,
}

pub fn discover(_paths: &[PathBuf], _config: &Config) -> Discovery {
    Discovery::default()
}
