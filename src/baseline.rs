//! Baselines (`--baseline FILE`, `--write-baseline FILE`): adopt msgaudit in a
//! codebase that already has findings, and report only the new ones.
//!
//! A baseline is a JSON file listing the findings of one run. An entry matches a
//! finding by its rule code, its path relative to the *project root* and a
//! fingerprint of the finding's own source text (whitespace collapsed), never
//! by its line number: it survives edits that move the code up or down. Entries
//! are counted, so two identical findings in one file need two entries.
//!
//! The project root is the config file's directory, or else the root of the git
//! repository holding the first PATH, or else the first PATH itself (its
//! directory when it is a file). Paths are stored relative to it, so that one
//! baseline serves `msgaudit check .` on a laptop and `msgaudit check
//! $GITHUB_WORKSPACE` in CI.
//!
//! Writing is atomic: the entries go to a temporary file beside the target,
//! which is then renamed over it, so a crash never leaves half a baseline.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::diagnostic::{Finding, InputError};
use crate::emit::Sources;
use crate::report::Report;

/// The baseline format's version; a file of another version is refused.
pub const VERSION: u32 = 1;

/// One recorded finding.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub code: String,
    /// Relative to the project root, `/`-separated (or the display path when the
    /// file lies outside the root).
    pub path: String,
    /// FNV-1a (64 bits, hex) of the finding's source text, whitespace collapsed.
    pub fingerprint: String,
    /// The finding's message when it was recorded, for the reader (not matched).
    #[serde(default)]
    pub message: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BaselineFile {
    version: u32,
    findings: Vec<Entry>,
}

/// A loaded baseline: for each (code, path, fingerprint), the messages of its entries.
#[derive(Clone, Debug, Default)]
pub struct Baseline {
    entries: BTreeMap<(String, String, String), Vec<String>>,
}

fn error(path: &Path, line: Option<u32>, column: Option<u32>, message: String) -> InputError {
    InputError {
        path: path.to_string_lossy().replace('\\', "/"),
        line,
        column,
        message,
    }
}

impl Baseline {
    /// Reads a baseline file; a missing or malformed file is a usage error, and so
    /// is one that is not a regular file (`/dev/zero`, a FIFO: never opened) or is
    /// larger than `max_bytes` (the `max_file_size` limit). A symlink is followed.
    pub fn load(path: &Path, max_bytes: u64) -> Result<Baseline, InputError> {
        use crate::support::files::{read_regular, Refusal};
        let fail = |message: String| error(path, None, None, message);
        let bytes = read_regular(path, max_bytes, true).map_err(|r| {
            fail(match r {
                Refusal::Missing => {
                    "baseline file not found (create it with --write-baseline)".to_string()
                }
                Refusal::Symlink | Refusal::NotRegular => {
                    "cannot read baseline: not a regular file".to_string()
                }
                Refusal::TooLarge(size) => format!(
                    "baseline file too large: {}, over the limit of {}; raise it with \
                     `--max-file-size` or `max_file_size` in msgaudit.toml",
                    size.map_or_else(|| "more bytes".to_string(), |n| format!("{n} bytes")),
                    crate::support::files::describe_size(max_bytes)
                ),
                Refusal::Io(e) => format!("cannot read baseline: {e}"),
            })
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|e| fail(format!("cannot read baseline: {}", e.utf8_error())))?;
        Self::parse(&text).map_err(|(line, column, message)| error(path, line, column, message))
    }

    /// Parses baseline text; the error carries an optional line and column.
    pub fn parse(text: &str) -> Result<Baseline, (Option<u32>, Option<u32>, String)> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let file: BaselineFile = serde_json::from_str(text).map_err(|e| {
            (
                Some(e.line() as u32),
                Some(e.column() as u32),
                format!("invalid baseline: {e}"),
            )
        })?;
        if file.version != VERSION {
            return Err((
                None,
                None,
                format!(
                    "unsupported baseline version {} (expected {VERSION})",
                    file.version
                ),
            ));
        }
        let mut entries: BTreeMap<_, Vec<String>> = BTreeMap::new();
        for e in file.findings {
            entries
                .entry((e.code, e.path, e.fingerprint))
                .or_default()
                .push(e.message);
        }
        Ok(Baseline { entries })
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The directory baseline paths are relative to (see the module documentation),
/// canonicalized when possible.
pub fn project_root(config: &Config, first_path: &Path) -> PathBuf {
    if let Some(root) = &config.root {
        return root.clone();
    }
    let dir = if first_path.is_dir() {
        first_path.to_path_buf()
    } else {
        match first_path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    };
    if let Some(top) = crate::diffbase::git_toplevel(&dir) {
        return top;
    }
    dir.canonicalize().unwrap_or(dir)
}

/// `path` (a display path) relative to `root`, `/`-separated; the display path
/// itself when it lies outside.
pub fn relative_path(root: &Path, path: &str) -> String {
    let resolver = Config {
        root: Some(root.to_path_buf()),
        ..Config::default()
    };
    resolver
        .relative_to_root(Path::new(path))
        .unwrap_or_else(|| path.to_string())
}

/// FNV-1a, 64 bits: stable across Rust releases and runs.
fn fnv1a(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The fingerprint of a finding: its own source text (the primary span), with
/// whitespace collapsed; the message when the report has no text for it.
pub(crate) fn fingerprint(finding: &Finding, sources: &mut Sources<'_>) -> String {
    let snippet = sources
        .snippet(&finding.path, &finding.span)
        .filter(|s| !s.trim().is_empty())
        .unwrap_or(&finding.message);
    let normalized = snippet.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{:016x}", fnv1a(&normalized))
}

/// The baseline entries of every finding in `report`, sorted.
pub fn entries(report: &Report, root: &Path) -> Vec<Entry> {
    let mut sources = Sources::new(report);
    let mut out: Vec<Entry> = report
        .findings
        .iter()
        .map(|f| Entry {
            code: f.code.to_string(),
            path: relative_path(root, &f.path),
            fingerprint: fingerprint(f, &mut sources),
            message: f.message.clone(),
        })
        .collect();
    out.sort();
    out
}

/// Removes from `report.findings` those the baseline accepts; returns how many.
///
/// Each entry hides at most one finding. Entries are matched by code, path and
/// fingerprint; where several findings share these (the same call written twice
/// in a file), those whose message is also the recorded one are matched first,
/// so that a fixed finding does not leave its entry to hide a different new one.
pub fn filter(report: &mut Report, baseline: &Baseline, root: &Path) -> usize {
    let mut remaining = baseline.entries.clone();
    let keys: Vec<(String, String, String)> = {
        let mut sources = Sources::new(report);
        report
            .findings
            .iter()
            .map(|f| {
                (
                    f.code.to_string(),
                    relative_path(root, &f.path),
                    fingerprint(f, &mut sources),
                )
            })
            .collect()
    };
    let mut hidden = vec![false; keys.len()];
    // First the findings whose message is recorded too, then the others.
    for exact in [true, false] {
        for (i, key) in keys.iter().enumerate() {
            if hidden[i] {
                continue;
            }
            let Some(messages) = remaining.get_mut(key) else {
                continue;
            };
            let position = if exact {
                messages
                    .iter()
                    .position(|m| *m == report.findings[i].message)
            } else if messages.is_empty() {
                None
            } else {
                Some(0)
            };
            if let Some(p) = position {
                messages.swap_remove(p);
                hidden[i] = true;
            }
        }
    }
    let before = report.findings.len();
    let mut hidden = hidden.into_iter();
    report.findings.retain(|_| !hidden.next().unwrap_or(false));
    before - report.findings.len()
}

/// Serializes entries as a baseline file (pretty JSON, final newline).
pub fn render(entries: &[Entry]) -> String {
    let file = BaselineFile {
        version: VERSION,
        findings: entries.to_vec(),
    };
    let mut s = serde_json::to_string_pretty(&file).unwrap_or_default();
    s.push('\n');
    s
}

/// Writes `text` to `path` atomically (see [`crate::support::files::write_atomic`]).
pub fn write_atomic(path: &Path, text: &str) -> Result<(), InputError> {
    crate::support::files::write_atomic(path, text, "baseline")
        .map_err(|message| error(path, None, None, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_counts_entries_and_refuses_other_versions() {
        let b = Baseline::parse(
            r#"{"version": 1, "findings": [
                {"code": "MA001", "path": "src/a.rs", "fingerprint": "00", "message": "m"},
                {"code": "MA001", "path": "src/a.rs", "fingerprint": "00"}
            ]}"#,
        )
        .unwrap();
        assert_eq!(b.len(), 2);
        let (_, _, msg) = Baseline::parse(r#"{"version": 2, "findings": []}"#).unwrap_err();
        assert!(msg.contains("unsupported baseline version 2"), "{msg}");
        let (line, _, _) = Baseline::parse("{\n  \"version\": 1,\n  oops\n}").unwrap_err();
        assert_eq!(line, Some(3));
    }

    #[test]
    fn render_round_trips() {
        let e = Entry {
            code: "MA006".into(),
            path: "src/b.rs".into(),
            fingerprint: "0123456789abcdef".into(),
            message: "dual write".into(),
        };
        let b = Baseline::parse(&render(&[e.clone(), e])).unwrap();
        assert_eq!(b.len(), 2);
    }

    #[test]
    fn fnv1a_is_the_standard_64_bit_hash() {
        // Published FNV-1a test vectors: the fingerprint must never change.
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
    }

    fn finding(line: u32, message: &str) -> Finding {
        Finding {
            code: "MA001",
            name: "ack-before-commit",
            severity: crate::Severity::Error,
            path: "src/a.rs".into(),
            span: crate::Span {
                line,
                column: 1,
                end_line: line,
                end_column: 6,
                ..crate::Span::default()
            },
            message: message.into(),
            boundary: String::new(),
            window: String::new(),
            labels: Vec::new(),
            help: String::new(),
            fix: None,
        }
    }

    #[test]
    fn same_text_findings_match_their_own_message_first() {
        let mut report = Report::default();
        report
            .sources
            .insert("src/a.rs".into(), "ack()\nack()\nack()\n".into());
        report.findings = vec![finding(1, "old")];
        let root = Path::new("/nonexistent-root");
        let b = Baseline::parse(&render(&entries(&report, root))).unwrap();
        // The recorded finding moved to line 3; a new one with the same text is on line 1.
        report.findings = vec![finding(1, "new"), finding(3, "old")];
        assert_eq!(filter(&mut report, &b, root), 1);
        assert_eq!(report.findings, [finding(1, "new")]);
        // When messages changed (a new msgaudit version), text alone still matches.
        report.findings = vec![finding(2, "reworded")];
        assert_eq!(filter(&mut report, &b, root), 1);
        assert!(report.findings.is_empty());
    }
}
