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
//! header line (magic, format, key), the output as JSON ([`compact`]ed: what the
//! emitters read of it) and a checksum line. An entry whose header, checksum, JSON
//! or rule codes do not check out is a miss (and is replaced). Writes go to a
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
const FORMAT: u32 = 3;
const TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
# This file is a cache directory tag created by msgaudit.\n\
# For information about cache directory tags see https://bford.info/cachedir/\n";

/// A stable 128-bit hash, fed length-prefixed fields (so that `"ab","c"` and
/// `"a","bc"` differ).
pub(super) struct Hasher(xxhash_rust::xxh3::Xxh3);

impl Hasher {
    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.0.update(&(b.len() as u64).to_le_bytes());
        self.0.update(b);
    }

    pub(super) fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    /// A file's display path, absolute path, crate key, kind and text.
    pub(super) fn file(&mut self, f: &crate::source::SourceFile) {
        self.str(&f.path);
        self.bytes(f.abs.as_os_str().as_encoded_bytes());
        self.str(&f.crate_key);
        self.str(&format!("{:?}", f.kind));
        self.str(&f.text);
    }

    pub(super) fn new() -> Hasher {
        Hasher(xxhash_rust::xxh3::Xxh3::new())
    }

    pub(super) fn hex(&self) -> String {
        format!("{:032x}", self.0.digest128())
    }
}

/// The key of an analysis: a hex string over everything its output depends on (see
/// the module documentation). `api_config` is the config's `[apis]` as applied (the
/// default one when it was in error).
pub fn key(input: &AnalysisInput, api_config: &ApiConfig) -> String {
    let mut h = prefix_hasher(input, api_config);
    h.str(&format!("{:?}", input.deps));
    h.str(&format!("{:?}", input.uses));
    h.str(&format!("{:?}", input.targets));
    h.str(&input.files.len().to_string());
    for f in input.files {
        h.file(f);
    }
    format!("{:032x}", h.0.digest128())
}

/// What every analysis of this run shares, crate by crate too: the version, the
/// binary, the packs, the applied `[apis]`, the switches and the rules that run.
fn prefix_hasher(input: &AnalysisInput, api_config: &ApiConfig) -> Hasher {
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
    for meta in crate::rules::ALL.iter() {
        h.str(&format!("{}={}", meta.code, (input.running)(meta.code)));
    }
    h
}

/// The part of every crate's key ([`super::crate_cache`]) that all crates share:
/// [`prefix_hasher`]'s and the SQL files (what a crate's unique business keys and
/// `include_str!`s read).
pub fn crate_prefix(input: &AnalysisInput, api_config: &ApiConfig) -> String {
    let mut h = prefix_hasher(input, api_config);
    h.str("crates");
    for f in input
        .files
        .iter()
        .filter(|f| f.kind == crate::source::FileKind::Sql)
    {
        h.file(f);
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
pub(super) fn prepare(dir: &Path) -> bool {
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
/// names this format and key, the trailer's checksum is that of the body, the JSON
/// reads back, and every finding names a rule of this msgaudit. Anything else is a
/// miss.
pub fn load(dir: &Path, key: &str) -> Option<AnalysisOutput> {
    let path = entry(dir, key);
    let output = read_entry(&path, key, stored::read)?;
    if !rules_known(&output.findings, &output.inventory) {
        return None;
    }
    touch(&path);
    Some(output)
}

/// Whether every finding, and every finding the inventory's sections refer to,
/// names a rule of this msgaudit (a stored entry that does not is foreign).
pub(super) fn rules_known(
    findings: &[crate::diagnostic::Finding],
    inventory: &crate::analysis::inventory::Inventory,
) -> bool {
    let known = |code: &str, name: &str| {
        crate::rules::ALL
            .iter()
            .any(|m| m.code == code && m.name == name)
    };
    let mut refs = (inventory.consumers.iter())
        .flat_map(|c| &c.findings)
        .chain(inventory.producers.iter().flat_map(|p| &p.findings));
    findings.iter().all(|f| known(f.code, f.name)) && refs.all(|f| known(f.code, f.name))
}

/// The body of the entry at `path` read by `read`, when its header names this
/// format and `key` and its trailer's checksum is the body's.
pub(super) fn read_entry<T>(
    path: &Path,
    key: &str,
    read: impl FnOnce(&str) -> Option<T>,
) -> Option<T> {
    let text = std::fs::read_to_string(path).ok()?;
    let rest = text.strip_prefix(&header(key))?;
    let (body, sum) = rest.strip_suffix('\n')?.rsplit_once('\n')?;
    if sum != format!("{:016x}", xxhash_rust::xxh3::xxh3_64(body.as_bytes())) {
        return None;
    }
    read(body)
}

/// Recently used: the last to be evicted.
pub(super) fn touch(path: &Path) {
    if let Ok(f) = std::fs::File::options().append(true).open(path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// Drops from `output` what only the analysis used: what the emitters read of an
/// output (the findings, errors, counts and the inventory as [`Inventory::attach`],
/// [`Inventory::retain_code`], `infer` and the checklist read it) is kept, so that
/// an output compacted and one not print the same in every format. Of a consumer's
/// path facts (`pairs`) the emitters ask only whether there are any and whether one
/// is a dedup-and-effect or untested-claim relation: one pair answers both. A
/// producer's pairs are not read. Of the places a section's code is at (`locs`),
/// only those a finding points at (its location or a label's) can take a finding in
/// `attach` (the findings it is given are those of the analysis, filtered, plus
/// unused-suppression findings, which point at comments, where no event is). Called
/// on every output the cache stores, before it is used: cold and warm runs print
/// from the same data. A field newly read by an emitter must be kept here (and
/// [`FORMAT`] bumped).
///
/// [`Inventory::attach`]: crate::analysis::inventory::Inventory::attach
/// [`Inventory::retain_code`]: crate::analysis::inventory::Inventory::retain_code
pub fn compact(output: &mut AnalysisOutput) {
    use crate::analysis::flow::Relation;
    let pointed: std::collections::HashSet<(&str, u32, u32)> = output
        .findings
        .iter()
        .flat_map(|f| {
            std::iter::once((f.path.as_str(), f.span.line, f.span.column)).chain(
                f.labels
                    .iter()
                    .map(|l| (l.path.as_str(), l.span.line, l.span.column)),
            )
        })
        .collect();
    let keep_locs = |locs: &mut std::collections::BTreeSet<(String, u32, u32)>| {
        locs.retain(|(path, line, column)| pointed.contains(&(path.as_str(), *line, *column)));
    };
    for c in &mut output.inventory.consumers {
        let gating = c.pairs.iter().position(|p| {
            matches!(
                p.relation,
                Relation::DedupAndEffect { .. } | Relation::UntestedClaimBeforeEffect { .. }
            )
        });
        if let Some(i) = gating.or((!c.pairs.is_empty()).then_some(0)) {
            let one = c.pairs.swap_remove(i);
            c.pairs = vec![one];
        }
        keep_locs(&mut c.locs);
    }
    for p in &mut output.inventory.producers {
        p.pairs = Vec::new();
        keep_locs(&mut p.locs);
    }
}

/// Stores `output` under `key`, then evicts the least recently used entries past
/// [`MAX_ENTRIES`]. The entry is the header line, the output as JSON, and a trailer
/// line with the XXH3-64 checksum of the JSON; it is written to a temporary file
/// renamed into place, not synced to disk (a cache: an entry a crash tore fails its
/// checksum and is a miss). `Err` says why it could not be written; the caller goes
/// on without it.
pub fn store(dir: &Path, key: &str, output: &AnalysisOutput) -> Result<(), String> {
    write_entry(dir, key, |out| stored::write(out, output))?;
    evict(dir, MAX_ENTRIES);
    Ok(())
}

/// Writes the entry `key` of `dir` (header, the body `write` writes, checksum) to a
/// temporary file renamed into place.
pub(super) fn write_entry(
    dir: &Path,
    key: &str,
    write: impl FnOnce(&mut dyn std::io::Write) -> serde_json::Result<()>,
) -> Result<(), String> {
    let path = entry(dir, key);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tmp = dir.join(format!(".{key}.json.{}.{stamp}.tmp", std::process::id()));
    let written = write_tmp(&tmp, key, write).and_then(|()| {
        std::fs::rename(&tmp, &path).map_err(|e| format!("cannot write cache entry: {e}"))
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn write_tmp(
    tmp: &Path,
    key: &str,
    write: impl FnOnce(&mut dyn std::io::Write) -> serde_json::Result<()>,
) -> Result<(), String> {
    use std::io::Write;
    let file = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(tmp)
        .map_err(|e| format!("cannot write cache entry: {e}"))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    out.write_all(header(key).as_bytes())
        .map_err(|e| e.to_string())?;
    let mut body = Summed {
        out,
        hash: xxhash_rust::xxh3::Xxh3::new(),
        written: 0,
        cap: MAX_ENTRY_BYTES,
    };
    write(&mut body).map_err(|e| e.to_string())?;
    let sum = format!("\n{:016x}\n", body.hash.digest());
    let mut out = body.out;
    out.write_all(sum.as_bytes()).map_err(|e| e.to_string())?;
    out.into_inner()
        .map_err(|e| e.error().to_string())?
        .flush()
        .map_err(|e| e.to_string())
}

/// The largest entry stored: a larger output is not cached (its write stops there
/// and the temporary file is removed). The entry is written as it is serialized, so
/// storing holds no copy of it in memory: storing must never cost the run that
/// found it (issue 38).
pub const MAX_ENTRY_BYTES: usize = 32 << 20;

/// The entry's body on its way to the file: hashed for the trailer, and refused
/// past `cap` bytes.
struct Summed<W> {
    out: W,
    hash: xxhash_rust::xxh3::Xxh3,
    written: usize,
    cap: usize,
}

impl<W: std::io::Write> std::io::Write for Summed<W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.written + data.len() > self.cap {
            return Err(std::io::Error::other("the entry is too large to cache"));
        }
        self.out.write_all(data)?;
        self.hash.update(data);
        self.written += data.len();
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Removes the oldest entries past `max`, and temporary files an interrupted write
/// left more than an hour ago.
pub(super) fn evict(dir: &Path, max: usize) {
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
    if entries.len() <= max {
        return;
    }
    entries.sort();
    let extra = entries.len() - max;
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

/// The stored form of an output: the findings' strings (paths, messages, the rules'
/// texts, repeated finding after finding) once each in a table, each finding an
/// array that indexes it, spans as arrays; the rest of the output as it serializes.
mod stored {
    use std::collections::{BTreeMap, HashMap};

    use crate::analysis::inventory::Inventory;
    use crate::diagnostic::{Finding, Fix, InputError, Label, Severity, Span, StaticStr};

    use super::AnalysisOutput;

    /// line, column, end line, end column, byte start, byte end.
    type SpanT = (u32, u32, u32, u32, usize, usize);

    /// code, name, severity, path, span, message, boundary, window, labels (path,
    /// span, message), help, fix.
    #[derive(serde::Serialize, serde::Deserialize)]
    struct StoredFinding(
        #[serde(with = "crate::diagnostic::static_str")] StaticStr,
        #[serde(with = "crate::diagnostic::static_str")] StaticStr,
        Severity,
        u32,
        SpanT,
        u32,
        u32,
        u32,
        Vec<(u32, SpanT, u32)>,
        u32,
        Option<Fix>,
    );

    #[derive(serde::Serialize)]
    struct RestRef<'a> {
        errors: &'a [InputError],
        skipped: &'a BTreeMap<String, usize>,
        analyzed: usize,
        inventory: &'a Inventory,
        unparsed_bodies: usize,
    }

    #[derive(serde::Deserialize)]
    struct Rest {
        errors: Vec<InputError>,
        skipped: BTreeMap<String, usize>,
        analyzed: usize,
        inventory: Inventory,
        unparsed_bodies: usize,
    }

    fn span_t(s: &Span) -> SpanT {
        let Span {
            line,
            column,
            end_line,
            end_column,
            byte_start,
            byte_end,
        } = *s;
        (line, column, end_line, end_column, byte_start, byte_end)
    }

    fn span(t: SpanT) -> Span {
        let (line, column, end_line, end_column, byte_start, byte_end) = t;
        Span {
            line,
            column,
            end_line,
            end_column,
            byte_start,
            byte_end,
        }
    }

    #[derive(Default)]
    struct Table<'a> {
        index: HashMap<&'a str, u32>,
        strings: Vec<&'a str>,
    }

    impl<'a> Table<'a> {
        fn id(&mut self, s: &'a str) -> u32 {
            *self.index.entry(s).or_insert_with(|| {
                self.strings.push(s);
                (self.strings.len() - 1) as u32
            })
        }
    }

    /// Writes `output` in the stored form: `[strings, findings, rest]`. The
    /// destructuring (no `..`) makes a field added to [`AnalysisOutput`] or
    /// [`Finding`] a compile error here until it is stored.
    pub fn write(out: impl std::io::Write, output: &AnalysisOutput) -> serde_json::Result<()> {
        let AnalysisOutput {
            findings,
            errors,
            skipped,
            analyzed,
            inventory,
            unparsed_bodies,
            // How this run went (crates at one time, crates read back): not the
            // stored output's; a run that reads the entry analyzes none.
            peak_crates: _,
            crates_cached: _,
        } = output;
        let mut table = Table::default();
        let findings: Vec<StoredFinding> = findings
            .iter()
            .map(|f| {
                let Finding {
                    code,
                    name,
                    severity,
                    path,
                    span,
                    message,
                    boundary,
                    window,
                    labels,
                    help,
                    fix,
                } = f;
                let labels = labels
                    .iter()
                    .map(|l| {
                        let Label {
                            path,
                            span,
                            message,
                        } = l;
                        (table.id(path), span_t(span), table.id(message))
                    })
                    .collect();
                StoredFinding(
                    code,
                    name,
                    *severity,
                    table.id(path),
                    span_t(span),
                    table.id(message),
                    table.id(boundary),
                    table.id(window),
                    labels,
                    table.id(help),
                    fix.clone(),
                )
            })
            .collect();
        let rest = RestRef {
            errors,
            skipped,
            analyzed: *analyzed,
            inventory,
            unparsed_bodies: *unparsed_bodies,
        };
        serde_json::to_writer(out, &(&table.strings, &findings, &rest))
    }

    /// Reads what [`write`] wrote; `None` when it does not read back (an index out of
    /// the table included).
    pub fn read(body: &str) -> Option<AnalysisOutput> {
        let (strings, stored, rest): (Vec<String>, Vec<StoredFinding>, Rest) =
            serde_json::from_str(body).ok()?;
        let s = |i: u32| strings.get(i as usize).cloned();
        let mut findings = Vec::with_capacity(stored.len());
        for f in stored {
            let StoredFinding(
                code,
                name,
                severity,
                path,
                at,
                message,
                boundary,
                window,
                labels,
                help,
                fix,
            ) = f;
            let labels = labels
                .into_iter()
                .map(|(path, at, message)| {
                    Some(Label {
                        path: s(path)?,
                        span: span(at),
                        message: s(message)?,
                    })
                })
                .collect::<Option<Vec<Label>>>()?;
            findings.push(Finding {
                code,
                name,
                severity,
                path: s(path)?,
                span: span(at),
                message: s(message)?,
                boundary: s(boundary)?,
                window: s(window)?,
                labels,
                help: s(help)?,
                fix,
            });
        }
        let Rest {
            errors,
            skipped,
            analyzed,
            inventory,
            unparsed_bodies,
        } = rest;
        Some(AnalysisOutput {
            findings,
            errors,
            skipped,
            analyzed,
            inventory,
            unparsed_bodies,
            peak_crates: 0,
            crates_cached: 0,
        })
    }
}
