//! Reading inputs with limits, and sizes as messages write them.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// `path` with `.` and `..` taken out by their names, without touching the disk (no
/// link is followed): `..` at the root stays at the root, and a relative path keeps
/// the `..` it cannot take out.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Whether `dir` is the root of a git repository: it holds `.git` (a directory, or a
/// file for a worktree or a submodule; a link is not followed). The root bounds which
/// ignore files count here, and where `msgaudit.toml` is searched.
pub fn is_repository_root(dir: &Path) -> bool {
    dir.join(".git").symlink_metadata().is_ok()
}

/// Why a file that must be a regular file was not read ([`read_regular`]).
#[derive(Debug)]
pub enum Refusal {
    /// Nothing at that path.
    Missing,
    /// A symbolic link, not followed.
    Symlink,
    /// A directory, a FIFO, a socket or a device: never opened (a FIFO would block,
    /// `/dev/zero` never ends).
    NotRegular,
    /// Over the limit: the size, when it was known before reading.
    TooLarge(Option<u64>),
    Io(std::io::Error),
}

/// Reads a file that must be a regular file of at most `max_bytes`: the one way
/// msgaudit reads its inputs (source files, ignore files, baselines). A FIFO or a
/// device is never opened; with `follow` false, neither is a symlink. A file that
/// grows past the limit while it is read is refused too.
pub fn read_regular(path: &Path, max_bytes: u64, follow: bool) -> Result<Vec<u8>, Refusal> {
    let meta = if follow {
        fs::metadata(path)
    } else {
        fs::symlink_metadata(path)
    };
    let meta = match meta {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Refusal::Missing),
        Err(e) => return Err(Refusal::Io(e)),
    };
    if meta.file_type().is_symlink() {
        return Err(Refusal::Symlink);
    }
    if !meta.is_file() {
        return Err(Refusal::NotRegular);
    }
    if meta.len() > max_bytes {
        return Err(Refusal::TooLarge(Some(meta.len())));
    }
    let file = fs::File::open(path).map_err(Refusal::Io)?;
    // The file could have been replaced since it was looked at.
    let len = match file.metadata() {
        Ok(m) if !m.is_file() => return Err(Refusal::NotRegular),
        Ok(m) if m.len() > max_bytes => return Err(Refusal::TooLarge(Some(m.len()))),
        Ok(m) => m.len(),
        Err(e) => return Err(Refusal::Io(e)),
    };
    // Sized to the file, so that the texts the run keeps take what they hold (a
    // buffer grown by doubling holds up to twice that). A file that grew since is
    // still read to its end, up to the limit.
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Refusal::Io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(Refusal::TooLarge(None));
    }
    Ok(bytes)
}

/// A byte count for messages: `10485760 bytes (10 MiB)`, `2000000 bytes (2 MB)`,
/// `1234 bytes`.
pub fn describe_size(bytes: u64) -> String {
    let units: [(u64, &str); 6] = [
        (1 << 30, "GiB"),
        (1_000_000_000, "GB"),
        (1 << 20, "MiB"),
        (1_000_000, "MB"),
        (1 << 10, "KiB"),
        (1_000, "KB"),
    ];
    for (factor, unit) in units {
        if bytes >= factor && bytes.is_multiple_of(factor) {
            return format!("{bytes} bytes ({} {unit})", bytes / factor);
        }
    }
    if bytes == 1 {
        "1 byte".to_string()
    } else {
        format!("{bytes} bytes")
    }
}

/// Writes `text` to `path` atomically: a new temporary file in the same
/// directory, flushed to disk, then renamed over `path`. The temporary file is
/// removed when any step fails. A `path` that exists and is not a regular file
/// (`/dev/null`, a FIFO, a directory) is refused: the rename would replace it. So is
/// a regular file the user could not write in place: one without write permission
/// (also for root) or one the system refuses to open for writing, as `cp` refuses
/// it. A file that can be written keeps its permissions (a `0600` baseline stays
/// private).
pub fn write_atomic(path: &Path, text: &str, what: &str) -> Result<(), String> {
    let existing = match fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            return Err(format!(
                "cannot write {what}: the path exists and is not a regular file"
            ))
        }
        Ok(m) => Some(m.permissions()),
        Err(_) => None,
    };
    if let Some(permissions) = &existing {
        // A file without write permission is read-only on purpose, even for root; for
        // the rest, opening for writing (without truncating) asks the system what `cp`
        // would (a file of another user).
        let refused = if permissions.readonly() {
            Some("the file is read-only".to_string())
        } else {
            match fs::OpenOptions::new().write(true).open(path) {
                Ok(_) => None,
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    Some("permission denied".to_string())
                }
                Err(e) => Some(e.to_string()),
            }
        };
        if let Some(why) = refused {
            return Err(format!(
                "cannot write {what}: {why}; msgaudit leaves it as it is (make it writable, \
                 or write to another file)"
            ));
        }
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| format!("{what} path has no file name"))?
        .to_string_lossy()
        .into_owned();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut attempt = 0u32;
    let (tmp, mut file) = loop {
        let tmp = dir.join(format!(
            ".{name}.{}.{stamp}.{attempt}.tmp",
            std::process::id()
        ));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        // Never more open than the file it replaces, not even while it is written.
        #[cfg(unix)]
        if let Some(permissions) = &existing {
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            options.mode(permissions.mode() & 0o777);
        }
        match options.open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(e) => return Err(format!("cannot write {what}: {e}")),
        }
    };
    // The umask may have taken bits the file had (`0664`): its permissions exactly.
    let kept = match &existing {
        Some(permissions) => file.set_permissions(permissions.clone()),
        None => Ok(()),
    };
    let written = kept
        .and_then(|()| file.write_all(text.as_bytes()))
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            fs::rename(&tmp, path)
        });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(format!("cannot write {what}: {e}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{describe_size, normalize_lexically};
    use std::path::Path;

    #[test]
    fn lexical_normalization() {
        let n = |p: &str| normalize_lexically(Path::new(p));
        assert_eq!(n("/a/b/../c/./d.rs"), Path::new("/a/c/d.rs"));
        assert_eq!(n("/../x"), Path::new("/x"));
        assert_eq!(n("../a/./b"), Path::new("../a/b"));
        assert_eq!(n("a/../../b"), Path::new("../b"));
    }

    #[test]
    fn sizes_name_their_unit() {
        assert_eq!(describe_size(10 << 20), "10485760 bytes (10 MiB)");
        assert_eq!(describe_size(2_000_000), "2000000 bytes (2 MB)");
        assert_eq!(describe_size(1234), "1234 bytes");
        assert_eq!(describe_size(1), "1 byte");
        assert_eq!(describe_size(1024), "1024 bytes (1 KiB)");
    }
}
