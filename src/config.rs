//! `msgaudit.toml`, `--select`/`--ignore`, and per-rule, per-path severities.
//!
//! The config is found by `--config FILE`, or else as `msgaudit.toml` in the
//! directory of the first PATH or any of its ancestors up to the repository root
//! (outside a repository, only in that directory). The schema is strict: unknown
//! keys, unknown rules and invalid levels are errors that carry the config's path
//! and the 1-based line and column of the offending text. An error does not stop a
//! run: the entry in error is left out, or, when the file is not valid TOML or does
//! not fit the schema, the defaults apply ([`Config::load`]).
//!
//! Path globs (`exclude`, `[[overrides]] paths`) are relative to the config
//! file's directory. A path is matched by resolving it against that directory
//! (see [`Config::relative_to_root`]); a path outside it is matched as displayed.
//! A glob without `/` (`*.gen.rs`) matches the file name at any depth, as in
//! `.gitignore`; a glob with `/` matches the whole relative path, and `*` does
//! not cross `/` (use `**` for that).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::support::files::normalize_lexically;
use serde::Deserialize;
use toml::Spanned;

pub use crate::apis::ApiConfig;
use crate::diagnostic::{InputError, Severity};
use crate::support::lines::line_col;

/// The largest `msgaudit.toml` read (a config is a few KB; this bounds what a link to
/// a huge file or a device could cost).
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The file name searched for when no `--config` is given.
pub const CONFIG_FILE_NAME: &str = "msgaudit.toml";

/// Keys allowed in the config's `[apis]` table.
pub const API_KINDS: [&str; 13] = [
    "receive",
    "ack",
    "nack",
    "begin",
    "commit",
    "rollback",
    "write",
    "publish",
    "idgen",
    "effect",
    "retry",
    "dedup_tables",
    "outbox_tables",
];

/// A compiled set of path globs (see the module documentation for the syntax).
#[derive(Clone, Debug, Default)]
pub struct PathGlobs {
    /// Globs with a `/`, matched against the whole relative path.
    full: Option<GlobSet>,
    /// Globs without `/`, matched against the file name.
    name: Option<GlobSet>,
    /// `dir/**` globs with the `/**` removed, so that `dir` itself can be pruned.
    dir: Option<GlobSet>,
}

impl PathGlobs {
    /// Compiles `globs`; a glob that does not compile is an error in `errors` and is
    /// left out (the others still apply).
    fn build(globs: &[Spanned<String>], ctx: &ParseCtx, errors: &mut Vec<InputError>) -> PathGlobs {
        let mut full = GlobSetBuilder::new();
        let mut name = GlobSetBuilder::new();
        let mut dir = GlobSetBuilder::new();
        let (mut n_full, mut n_name, mut n_dir) = (0, 0, 0);
        for g in globs {
            let pat = g.get_ref().trim_start_matches("./");
            let compile = |p: &str| -> Result<Glob, InputError> {
                GlobBuilder::new(p)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| {
                        ctx.error(
                            g.span().start,
                            format!("invalid glob `{}`: {}", g.get_ref(), e.kind()),
                        )
                    })
            };
            if pat.contains('/') {
                let pat = pat.trim_start_matches('/');
                let compiled = compile(pat).and_then(|glob| {
                    let prefix = match pat.strip_suffix("/**") {
                        Some(prefix) => Some(compile(prefix)?),
                        None => None,
                    };
                    Ok((glob, prefix))
                });
                match compiled {
                    Ok((glob, prefix)) => {
                        full.add(glob);
                        n_full += 1;
                        if let Some(prefix) = prefix {
                            dir.add(prefix);
                            n_dir += 1;
                        }
                    }
                    Err(e) => errors.push(e),
                }
            } else {
                match compile(pat) {
                    Ok(glob) => {
                        name.add(glob);
                        n_name += 1;
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
        let finish = |b: GlobSetBuilder, n: usize| -> Option<GlobSet> {
            if n == 0 {
                None
            } else {
                b.build().ok()
            }
        };
        PathGlobs {
            full: finish(full, n_full),
            name: finish(name, n_name),
            dir: finish(dir, n_dir),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.full.is_none() && self.name.is_none()
    }

    /// Whether `rel` (a `/`-separated path relative to the config directory) matches.
    /// `is_dir` also matches a directory `d` against `d/**`.
    pub fn matches(&self, rel: &str, is_dir: bool) -> bool {
        let rel = rel.trim_start_matches("./");
        if let Some(full) = &self.full {
            if full.is_match(rel) {
                return true;
            }
        }
        if is_dir {
            if let Some(dir) = &self.dir {
                if dir.is_match(rel) {
                    return true;
                }
            }
        }
        if let Some(name) = &self.name {
            let base = rel.rsplit('/').next().unwrap_or(rel);
            if name.is_match(base) {
                return true;
            }
        }
        false
    }
}

/// One `[[overrides]]` entry, compiled.
#[derive(Clone, Debug, Default)]
pub struct Override {
    pub paths: PathGlobs,
    /// The `paths` globs as written.
    pub patterns: Vec<String>,
    /// code -> level (`None` = off)
    pub rules: BTreeMap<&'static str, Option<Severity>>,
}

#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Directory of the config file (globs are relative to it), canonicalized.
    pub root: Option<PathBuf>,
    /// The config file as displayed in messages.
    pub file: Option<String>,
    pub exclude: Vec<String>,
    pub include_tests: bool,
    pub apis: ApiConfig,
    /// `[rules]`: code -> level (`None` = off).
    pub rules: BTreeMap<&'static str, Option<Severity>>,
    /// `[[overrides]]`, in file order (later entries win).
    pub overrides: Vec<Override>,
    /// `exclude`, compiled.
    pub exclude_globs: PathGlobs,
    /// `max_file_size`: files larger than this many bytes are not read (an input
    /// error). `None`: not set here (`--max-file-size`, or else the default).
    pub max_file_size: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    include_tests: bool,
    #[serde(default)]
    rules: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    overrides: Vec<RawOverride>,
    #[serde(default)]
    apis: BTreeMap<Spanned<String>, Vec<String>>,
    /// An integer number of bytes, or a string with a unit (`"10MB"`, `"1MiB"`).
    #[serde(default)]
    max_file_size: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOverride {
    paths: Vec<Spanned<String>>,
    #[serde(default)]
    rules: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

/// A config read leniently ([`Config::load`], [`Config::parse_lenient`]).
#[derive(Debug, Default)]
pub struct Parsed {
    /// What applies: the valid part of the file, or the default config.
    pub config: Config,
    /// The config's errors, in file order, each naming the file.
    pub errors: Vec<InputError>,
    /// Whether nothing of the file applies (it could not be read, was not TOML or did
    /// not fit the schema).
    pub whole: bool,
}

/// Text and display path of the config being parsed, to position errors.
struct ParseCtx<'a> {
    path: &'a str,
    text: &'a str,
}

impl ParseCtx<'_> {
    fn error(&self, byte: usize, message: String) -> InputError {
        let (line, column) = line_col(self.text, byte);
        InputError {
            path: self.path.to_string(),
            line: Some(line),
            column: Some(column),
            message,
        }
    }
}

fn parse_level(
    ctx: &ParseCtx,
    rule: &Spanned<String>,
    level: &Spanned<toml::Value>,
) -> Result<(&'static str, Option<Severity>), InputError> {
    let meta = crate::rules::lookup(rule.get_ref()).ok_or_else(|| {
        ctx.error(
            rule.span().start,
            crate::rules::unknown_rule_message(rule.get_ref()),
        )
    })?;
    let sev = match level.get_ref().as_str() {
        Some("off") => None,
        Some("warning") => Some(Severity::Warning),
        Some("error") => Some(Severity::Error),
        other => {
            // `CODE = false`: a level is one of three strings.
            let written = other.map_or_else(|| level.get_ref().to_string(), str::to_string);
            return Err(ctx.error(
                level.span().start,
                format!(
                    "invalid level `{written}` for {}: expected \"off\", \"warning\" or \"error\" \
                     (`{} = \"off\"` turns it off)",
                    meta.code, meta.code
                ),
            ));
        }
    };
    Ok((meta.code, sev))
}

/// The levels of a `rules` table. An entry in error (an unknown rule, an invalid
/// level, a rule set twice) is an error in `errors` and is left out.
fn parse_levels(
    ctx: &ParseCtx,
    raw: &BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    errors: &mut Vec<InputError>,
) -> BTreeMap<&'static str, Option<Severity>> {
    // Report errors in file order, not in key order.
    let mut entries: Vec<_> = raw.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    let mut out = BTreeMap::new();
    let mut written: BTreeMap<&'static str, &str> = BTreeMap::new();
    for (rule, level) in entries {
        let (code, sev) = match parse_level(ctx, rule, level) {
            Ok(parsed) => parsed,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        if let Some(first) = written.insert(code, rule.get_ref()) {
            errors.push(ctx.error(
                rule.span().start,
                format!(
                    "rule {code} is set twice (as `{first}` and as `{}`)",
                    rule.get_ref()
                ),
            ));
            continue;
        }
        out.insert(code, sev);
    }
    out
}

/// Path of `p` relative to the current directory when it is inside it, `/`-separated.
fn display_path(p: &Path) -> String {
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| p.to_path_buf());
    shown.to_string_lossy().replace('\\', "/")
}

impl Config {
    /// Loads `explicit` (an error when it does not exist), or else the first
    /// `msgaudit.toml` found upward from `first_path` (see [`Config::find`]). No config
    /// found is the default config.
    ///
    /// A config in error never stops the run: a file that cannot be read or parsed is
    /// the default config, an entry in error is left out ([`Config::parse_lenient`]),
    /// and each error, positioned in the file, says which.
    pub fn load(explicit: Option<&Path>, first_path: &Path) -> Parsed {
        let file = match explicit {
            Some(p) => Some((p.to_path_buf(), p.to_string_lossy().replace('\\', "/"))),
            None => Self::find(first_path).map(|p| {
                let shown = display_path(&p);
                (p, shown)
            }),
        };
        let Some((file, shown)) = file else {
            return Parsed {
                config: Config::default(),
                errors: Vec::new(),
                whole: false,
            };
        };
        let root = file
            .canonicalize()
            .ok()
            .and_then(|f| f.parent().map(Path::to_path_buf));
        let mut parsed = match Self::read(&file, &shown) {
            Ok(text) => Self::parse_lenient(&text, &shown),
            Err(e) => Parsed {
                config: Config::default(),
                errors: vec![e],
                whole: true,
            },
        };
        if parsed.whole {
            parsed.config.file = Some(shown.clone());
        }
        // The directory stays the project root (baselines are relative to it) even
        // when nothing in the file applies.
        parsed.config.root = root;
        let consequence = if parsed.whole {
            "the config is not applied: this run uses the default settings"
        } else {
            "this entry is left out: the rest of the config applies"
        };
        for e in &mut parsed.errors {
            e.message = format!("{} ({consequence})", e.message);
        }
        parsed
    }

    /// The text of the config file `file` (shown as `shown` in errors). Read like a
    /// source file: a regular file (a link to one is followed, as the config may be
    /// shared), never more than a config could sensibly hold.
    fn read(file: &Path, shown: &str) -> Result<String, InputError> {
        let unpositioned = |message: String| InputError {
            path: shown.to_string(),
            line: None,
            column: None,
            message,
        };
        let text =
            crate::support::files::read_regular(file, MAX_CONFIG_BYTES, true).map_err(|r| {
                use crate::support::files::Refusal;
                unpositioned(match r {
                    Refusal::TooLarge(size) => format!(
                        "config file too large ({}; the limit is {MAX_CONFIG_BYTES} bytes)",
                        size.map_or_else(
                            || "grew while read".to_string(),
                            |n| format!("{n} bytes")
                        )
                    ),
                    Refusal::Missing if file.symlink_metadata().is_ok() => {
                        "config file is a symlink to nothing".to_string()
                    }
                    Refusal::Missing => "config file not found".to_string(),
                    Refusal::NotRegular | Refusal::Symlink => {
                        "config file is not a regular file".to_string()
                    }
                    Refusal::Io(e) => format!("cannot read config: {e}"),
                })
            })?;
        String::from_utf8(text).map_err(|e| {
            let bytes = e.as_bytes();
            let valid = e.utf8_error().valid_up_to();
            let prefix = std::str::from_utf8(&bytes[..valid]).unwrap_or("");
            let (line, column) = line_col(prefix, valid);
            InputError {
                path: shown.to_string(),
                line: Some(line),
                column: Some(column),
                message: "invalid UTF-8 in config".to_string(),
            }
        })
    }

    /// The `msgaudit.toml` that applies to `first_path`: the first one in its directory
    /// (the directory itself when it is one) or a directory above, up to the repository
    /// root (the nearest directory holding `.git`, as for ignore files); outside a
    /// repository, only in that directory. A config above the repository could be
    /// anyone's (`/tmp/msgaudit.toml`). Anything by that name counts, so that a FIFO
    /// or a link to a device is an error, not ignored.
    fn find(first_path: &Path) -> Option<PathBuf> {
        let start = first_path.canonicalize().ok()?;
        let start = if start.is_file() {
            start.parent()?.to_path_buf()
        } else {
            start
        };
        let in_repository = start
            .ancestors()
            .any(crate::support::files::is_repository_root);
        for dir in start.ancestors() {
            let candidate = dir.join(CONFIG_FILE_NAME);
            if candidate.symlink_metadata().is_ok() {
                return Some(candidate);
            }
            if !in_repository || crate::support::files::is_repository_root(dir) {
                return None;
            }
        }
        None
    }

    /// Parses config text; `path` is used in error messages. `root` is left unset.
    /// The first error in file order, if any, is the result.
    pub fn parse(text: &str, path: &str) -> Result<Config, InputError> {
        let parsed = Self::parse_lenient(text, path);
        match parsed.errors.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(parsed.config),
        }
    }

    /// Parses config text, keeping what is valid: a text that is not TOML or does not
    /// fit the schema (an unknown key, a value of the wrong type) is the default config;
    /// an entry in error inside it (an unknown rule, an invalid level or glob, an
    /// unknown API kind, an invalid `max_file_size`) is left out and the rest applies.
    /// The errors are in file order.
    pub fn parse_lenient(text: &str, path: &str) -> Parsed {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let ctx = ParseCtx { path, text };
        let raw: RawConfig = match toml::from_str(text) {
            Ok(raw) => raw,
            Err(e) => {
                let start = e.span().map(|s| s.start).unwrap_or(0);
                let message: Vec<&str> = e
                    .message()
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect();
                return Parsed {
                    config: Config::default(),
                    errors: vec![ctx.error(start, message.join(": "))],
                    whole: true,
                };
            }
        };
        let mut errors = Vec::new();
        let exclude_globs = PathGlobs::build(&raw.exclude, &ctx, &mut errors);
        let rules = parse_levels(&ctx, &raw.rules, &mut errors);
        let mut overrides = Vec::new();
        for o in &raw.overrides {
            overrides.push(Override {
                paths: PathGlobs::build(&o.paths, &ctx, &mut errors),
                patterns: o.paths.iter().map(|p| p.get_ref().clone()).collect(),
                rules: parse_levels(&ctx, &o.rules, &mut errors),
            });
        }
        let mut lists = BTreeMap::new();
        for (kind, entries) in &raw.apis {
            if !API_KINDS.contains(&kind.get_ref().as_str()) {
                errors.push(ctx.error(
                    kind.span().start,
                    format!(
                        "unknown API kind `{}`: expected one of {}",
                        kind.get_ref(),
                        API_KINDS.join(", ")
                    ),
                ));
                continue;
            }
            lists.insert(kind.get_ref().clone(), entries.clone());
        }
        let max_file_size = match &raw.max_file_size {
            None => None,
            Some(v) => {
                let parsed = match v.get_ref() {
                    toml::Value::Integer(n) => match u64::try_from(*n) {
                        Ok(0) | Err(_) => {
                            Err(format!("must be a positive number of bytes, not {n}"))
                        }
                        Ok(n) => Ok(n),
                    },
                    toml::Value::String(text) => parse_size(text),
                    other => Err(format!(
                        "expected a number of bytes or a size such as \"10MB\", found {}",
                        other.type_str()
                    )),
                };
                parsed
                    .map_err(|m| {
                        errors.push(
                            ctx.error(v.span().start, format!("invalid `max_file_size`: {m}")),
                        );
                    })
                    .ok()
            }
        };
        errors.sort_by_key(|e| (e.line, e.column));
        let config = Config {
            root: None,
            file: Some(path.to_string()),
            exclude: raw.exclude.iter().map(|g| g.get_ref().clone()).collect(),
            include_tests: raw.include_tests,
            apis: ApiConfig {
                lists,
                origin: Some(path.to_string()),
            },
            rules,
            overrides,
            exclude_globs,
            max_file_size,
        };
        Parsed {
            config,
            errors,
            whole: false,
        }
    }

    /// The path of `path` (a display path, relative to the current directory, or
    /// absolute) relative to the config directory, `/`-separated; `None` when the
    /// file lies outside that directory or there is no config file.
    ///
    /// The path is resolved lexically against the current directory first; when
    /// that fails (a symlinked PATH), its parent directory is canonicalized.
    pub fn relative_to_root(&self, path: &Path) -> Option<String> {
        let root = self.root.as_ref()?;
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir().ok()?.join(path)
        };
        let abs = normalize_lexically(&abs);
        let rel = match abs.strip_prefix(root) {
            Ok(rel) => rel.to_path_buf(),
            Err(_) => {
                let parent = abs.parent()?.canonicalize().ok()?;
                let joined = match abs.file_name() {
                    Some(name) => parent.join(name),
                    None => parent,
                };
                joined.strip_prefix(root).ok()?.to_path_buf()
            }
        };
        let s = rel.to_string_lossy().replace('\\', "/");
        Some(if s.is_empty() { ".".to_string() } else { s })
    }

    /// The path to match globs against: relative to the config directory when
    /// the file is inside it, or else the display path itself.
    fn glob_path(&self, path: &str) -> String {
        self.relative_to_root(Path::new(path))
            .unwrap_or_else(|| path.trim_start_matches("./").to_string())
    }

    /// Whether a walked path (as reached from a PATH argument) is excluded by the
    /// config's `exclude` globs.
    pub fn is_excluded(&self, path: &Path, is_dir: bool) -> bool {
        if self.exclude_globs.is_empty() {
            return false;
        }
        let shown = path.to_string_lossy().replace('\\', "/");
        let rel = self.glob_path(&shown);
        self.exclude_globs.matches(&rel, is_dir)
    }

    /// Whether rule `code` is off for every path: turned off in `[rules]` (or by
    /// default) and turned on by no `[[overrides]]` entry. Such a rule need not run.
    pub fn off_everywhere(&self, code: &str) -> bool {
        let Some(meta) = crate::rules::lookup(code) else {
            return true;
        };
        let base = self
            .rules
            .get(meta.code)
            .copied()
            .unwrap_or(Some(meta.default_severity));
        base.is_none()
            && !self
                .overrides
                .iter()
                .any(|o| o.rules.get(meta.code).is_some_and(Option::is_some))
    }

    /// Severity of rule `code` for a finding in `path`; `None` means the rule is off there.
    ///
    /// The rule's default, then `[rules]`, then every `[[overrides]]` entry whose
    /// `paths` match, in file order, the later winning.
    pub fn level_for(&self, code: &str, path: &str) -> Option<Severity> {
        let meta = crate::rules::lookup(code)?;
        let mut level = Some(meta.default_severity);
        if let Some(l) = self.rules.get(meta.code) {
            level = *l;
        }
        if self
            .overrides
            .iter()
            .any(|o| o.rules.contains_key(meta.code))
        {
            let rel = self.glob_path(path);
            for o in &self.overrides {
                if let Some(l) = o.rules.get(meta.code) {
                    if o.paths.matches(&rel, false) {
                        level = *l;
                    }
                }
            }
        }
        level
    }
}

/// Parses a file size: a number of bytes (`1048576`), or a number with a unit,
/// case-insensitive, with or without a space: `B`, `KB`/`MB`/`GB` (powers of 1000),
/// `KiB`/`MiB`/`GiB` (powers of 1024). Zero is refused. The error is a phrase for
/// `invalid size: …` messages.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = t.split_at(digits);
    let unit = unit.trim_start();
    let invalid = || {
        format!(
            "`{text}` is not a size: expected a number of bytes, or a number with a unit \
             (B, KB, MB, GB, KiB, MiB, GiB), such as `10MB` or `512KiB`"
        )
    };
    if number.is_empty() {
        return Err(invalid());
    }
    let factor: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return Err(invalid()),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is too large"))?;
    let bytes = n
        .checked_mul(factor)
        .ok_or_else(|| format!("`{text}` is too large"))?;
    if bytes == 0 {
        return Err(format!(
            "`{text}` is zero: the limit must be at least 1 byte"
        ));
    }
    Ok(bytes)
}

/// `--select` / `--ignore`.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// When non-empty, only these codes run (the unused-suppression check always runs
    /// unless ignored).
    select: Vec<&'static str>,
    ignore: Vec<&'static str>,
}

fn resolve_codes(values: &[String], flag: &str) -> Result<Vec<&'static str>, InputError> {
    let mut out = Vec::new();
    for v in values {
        for item in v.split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let metas = crate::rules::matching(item);
            if metas.is_empty() {
                return Err(InputError {
                    path: flag.to_string(),
                    line: None,
                    column: None,
                    message: crate::rules::unknown_rule_message(item),
                });
            }
            for meta in metas {
                if !out.contains(&meta.code) {
                    out.push(meta.code);
                }
            }
        }
    }
    Ok(out)
}

impl Selection {
    /// Resolves `--select` and `--ignore` values (codes, names, `ALL` or code
    /// prefixes such as `MA00`; comma-separated lists allowed). An unknown rule is an
    /// error whose `path` is the flag.
    pub fn new(select: &[String], ignore: &[String]) -> Result<Selection, InputError> {
        Ok(Selection {
            select: resolve_codes(select, "--select")?,
            ignore: resolve_codes(ignore, "--ignore")?,
        })
    }

    pub fn enabled(&self, code: &str) -> bool {
        let Some(meta) = crate::rules::lookup(code) else {
            return false;
        };
        if self.ignore.contains(&meta.code) {
            return false;
        }
        meta.code == crate::rules::UNUSED_SUPPRESSION.code
            || self.select.is_empty()
            || self.select.contains(&meta.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> InputError {
        Config::parse(text, "msgaudit.toml").unwrap_err()
    }

    #[test]
    fn parses_full_config() {
        let c = Config::parse(
            r#"
exclude = ["target/**", "vendor/**"]
include_tests = true
[[overrides]]
paths = ["services/legacy/**"]
rules = { MA011 = "off", dual-write = "error" }
[rules]
MA007 = "off"
ack-before-commit = "warning"
[apis]
ack = ["crate::queue::Queue::done"]
dedup_tables = ["processed_events", "inbox"]
"#,
            "msgaudit.toml",
        )
        .unwrap();
        assert!(c.include_tests);
        assert_eq!(c.exclude, ["target/**", "vendor/**"]);
        assert_eq!(c.rules["MA007"], None);
        assert_eq!(c.rules["MA001"], Some(Severity::Warning));
        assert_eq!(c.overrides.len(), 1);
        assert_eq!(c.overrides[0].rules["MA006"], Some(Severity::Error));
        assert_eq!(c.apis.lists["ack"], ["crate::queue::Queue::done"]);
        assert_eq!(c.apis.origin.as_deref(), Some("msgaudit.toml"));
    }

    #[test]
    fn unknown_key_is_positioned() {
        let e = err("include_tests = true\nbogus = 1\n");
        assert_eq!((e.line, e.column), (Some(2), Some(1)));
        assert!(e.message.contains("unknown field `bogus`"), "{}", e.message);
        assert_eq!(e.path, "msgaudit.toml");
    }

    #[test]
    fn unknown_rule_and_bad_level() {
        let e = err("[rules]\nMA001 = \"off\"\nMA099 = \"off\"\n");
        assert_eq!(e.message, "unknown rule `MA099` (did you mean `MA009`?)");
        assert_eq!((e.line, e.column), (Some(3), Some(1)));
        let e = err("[rules]\nMA001 = \"warn\"\n");
        assert_eq!(
            e.message,
            "invalid level `warn` for MA001: expected \"off\", \"warning\" or \"error\" \
             (`MA001 = \"off\"` turns it off)"
        );
        assert_eq!((e.line, e.column), (Some(2), Some(9)));
        // Not a string: the same message, with the value as written.
        let e = err("[rules]\nMA006 = false\n");
        assert!(
            e.message
                .starts_with("invalid level `false` for MA006: expected \"off\""),
            "{}",
            e.message
        );
        assert_eq!((e.line, e.column), (Some(2), Some(9)));
        let e = err("[[overrides]]\npaths = [\"a/**\"]\nrules = { MA01 = \"off\" }\n");
        assert_eq!(e.message, "unknown rule `MA01` (did you mean `MA001`?)");
        assert_eq!((e.line, e.column), (Some(3), Some(11)));
    }

    #[test]
    fn syntax_error_column_counts_characters() {
        let e = err("exclude = [\"é\", ]\nx = = 1\n");
        assert_eq!(e.line, Some(2));
        assert_eq!(e.column, Some(5));
        let e = err("# é\n[rules\n");
        assert_eq!(e.line, Some(2));
    }

    #[test]
    fn multi_line_toml_messages_are_joined_and_duplicates_refused() {
        let e = err("[rules\nMA001 = \"off\"\n");
        assert!(!e.message.contains('\n'), "{}", e.message);
        assert_eq!(e.line, Some(1));
        let e = err("[rules]\nMA001 = \"off\"\nack-before-commit = \"error\"\n");
        assert_eq!(
            e.message,
            "rule MA001 is set twice (as `MA001` and as `ack-before-commit`)"
        );
        assert_eq!((e.line, e.column), (Some(3), Some(1)));
    }

    #[test]
    fn bad_api_kind_and_bad_glob() {
        let e = err("[apis]\nacks = [\"x\"]\n");
        assert!(e.message.starts_with("unknown API kind `acks`"));
        assert_eq!((e.line, e.column), (Some(2), Some(1)));
        let e = err("exclude = [\"a/[\"]\n");
        assert!(e.message.starts_with("invalid glob `a/[`"), "{}", e.message);
        assert_eq!((e.line, e.column), (Some(1), Some(12)));
    }

    #[test]
    fn max_file_size_takes_bytes_or_a_size_with_a_unit() {
        let size = |text: &str| Config::parse(text, "m").unwrap().max_file_size;
        assert_eq!(size(""), None);
        assert_eq!(size("max_file_size = 1048576"), Some(1 << 20));
        assert_eq!(size("max_file_size = \"10MB\""), Some(10_000_000));
        assert_eq!(size("max_file_size = \"512 KiB\""), Some(512 << 10));
        assert_eq!(size("max_file_size = \"1mib\""), Some(1 << 20));
        assert_eq!(size("max_file_size = \"2GB\""), Some(2_000_000_000));
        assert_eq!(size("max_file_size = \"300\""), Some(300));
        let e = err("include_tests = true\nmax_file_size = 0\n");
        assert_eq!(
            e.message,
            "invalid `max_file_size`: must be a positive number of bytes, not 0"
        );
        assert_eq!((e.line, e.column), (Some(2), Some(17)));
        let e = err("max_file_size = \"ten megs\"\n");
        assert!(
            e.message
                .starts_with("invalid `max_file_size`: `ten megs` is not a size"),
            "{}",
            e.message
        );
        assert_eq!((e.line, e.column), (Some(1), Some(17)));
        let e = err("max_file_size = -5\n");
        assert!(e.message.ends_with("not -5"), "{}", e.message);
        let e = err("max_file_size = 1.5\n");
        assert!(e.message.ends_with("found float"), "{}", e.message);
        let e = err("max_file_size = \"0 KB\"\n");
        assert!(e.message.contains("is zero"), "{}", e.message);
        let e = err("max_file_size = \"99999999999999999999GB\"\n");
        assert!(e.message.ends_with("is too large"), "{}", e.message);
    }

    #[test]
    fn sizes_parse_and_describe() {
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size(" 10 mb "), Ok(10_000_000));
        assert_eq!(parse_size("10MiB"), Ok(10 << 20));
        assert_eq!(parse_size("7B"), Ok(7));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_size("").is_err());
        assert!(parse_size("MB").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("1.5MB").is_err());
        assert!(parse_size("10 TB").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("20000000000GB").is_err());
    }

    #[test]
    fn level_for_applies_rules_then_overrides() {
        let c = Config::parse(
            r#"
[rules]
MA006 = "error"
[[overrides]]
paths = ["legacy/**"]
rules = { MA006 = "off", MA001 = "warning" }
[[overrides]]
paths = ["legacy/keep/**", "*.gen.rs"]
rules = { MA006 = "warning" }
"#,
            "msgaudit.toml",
        )
        .unwrap();
        // Without a root, globs match the display path.
        assert_eq!(c.level_for("MA006", "src/a.rs"), Some(Severity::Error));
        assert_eq!(c.level_for("dual-write", "legacy/a.rs"), None);
        assert_eq!(c.level_for("MA001", "legacy/a.rs"), Some(Severity::Warning));
        assert_eq!(
            c.level_for("MA006", "legacy/keep/a.rs"),
            Some(Severity::Warning)
        );
        assert_eq!(c.level_for("MA006", "x/y.gen.rs"), Some(Severity::Warning));
        assert_eq!(c.level_for("MA002", "legacy/a.rs"), Some(Severity::Error));
        assert_eq!(c.level_for("MA999", "legacy/a.rs"), None);
    }

    #[test]
    fn globs_with_slash_do_not_cross_directories_with_star() {
        let c = Config::parse("exclude = [\"src/*.rs\", \"gen\", \"vendor/**\"]", "m").unwrap();
        let g = &c.exclude_globs;
        assert!(g.matches("src/a.rs", false));
        assert!(!g.matches("src/x/a.rs", false));
        assert!(g.matches("x/gen", true));
        assert!(g.matches("vendor", true));
        assert!(!g.matches("vendor", false));
        assert!(g.matches("vendor/a/b.rs", false));
    }

    #[test]
    fn selection_by_code_name_and_lists() {
        let s = Selection::new(&["MA001,dual-write".to_string()], &[]).unwrap();
        assert!(s.enabled("MA001"));
        assert!(s.enabled("MA006"));
        assert!(!s.enabled("MA002"));
        assert!(s.enabled("MA900"));
        let s = Selection::new(&[], &["unused-suppression".to_string()]).unwrap();
        assert!(!s.enabled("MA900"));
        assert!(s.enabled("MA002"));
        let e = Selection::new(&["MA099".to_string()], &[]).unwrap_err();
        assert_eq!(e.message, "unknown rule `MA099` (did you mean `MA009`?)");
        assert_eq!(e.path, "--select");
        let e = Selection::new(&["dual-writes".to_string()], &[]).unwrap_err();
        assert_eq!(
            e.message,
            "unknown rule `dual-writes` (did you mean `dual-write`?)"
        );
        let e = Selection::new(&["frobnicate".to_string()], &[]).unwrap_err();
        assert_eq!(e.message, "unknown rule `frobnicate`");
        // Prefixes, as ruff reads them; `ALL`.
        let s = Selection::new(&["MA00".to_string()], &["MA003".to_string()]).unwrap();
        assert!(s.enabled("MA001") && s.enabled("MA009"));
        assert!(!s.enabled("MA003") && !s.enabled("MA010"));
        let s = Selection::new(&["ma01".to_string()], &[]).unwrap();
        assert!(s.enabled("MA014") && !s.enabled("MA009"));
        let s = Selection::new(&["ALL".to_string()], &["MA".to_string()]).unwrap();
        assert!(!s.enabled("MA001") && !s.enabled("MA900"));
        assert!(Selection::new(&["M".to_string()], &[]).is_err());
        assert!(Selection::new(&["MA0*".to_string()], &[]).is_err());
    }

    #[test]
    fn a_rule_is_off_everywhere_unless_an_override_turns_it_on() {
        let c = |text: &str| Config::parse(text, "msgaudit.toml").unwrap();
        assert!(!c("").off_everywhere("MA007"));
        let off = c("[rules]\nMA007 = \"off\"\n");
        assert!(off.off_everywhere("MA007") && off.off_everywhere("auto-ack"));
        assert!(!off.off_everywhere("MA001"));
        let back_on = c(
            "[rules]\nMA007 = \"off\"\n[[overrides]]\npaths = [\"legacy/**\"]\nrules = { MA007 = \"warning\" }\n",
        );
        assert!(!back_on.off_everywhere("MA007"));
        let off_in_part =
            c("[[overrides]]\npaths = [\"legacy/**\"]\nrules = { MA007 = \"off\" }\n");
        assert!(!off_in_part.off_everywhere("MA007"));
    }
}
