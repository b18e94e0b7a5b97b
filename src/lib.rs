//! msgaudit: a static analyzer for message delivery guarantees.
//!
//! `check` is the one entry point: paths in, a sorted [`Report`] out. The binary
//! (`src/main.rs`) only parses the command line, calls it and prints the report.

pub mod analysis;
pub mod apis;
pub mod baseline;
pub mod config;
pub mod diagnostic;
pub mod diffbase;
pub mod driver;
pub mod emit;
pub mod fix;
pub mod frontend;
pub mod ir;
pub mod report;
pub mod rules;
pub mod server;
pub mod source;
pub mod support;
pub mod suppress;

use std::path::PathBuf;
use std::time::Instant;

pub use diagnostic::{Finding, InputError, Label, Severity, Span};
pub use report::{Report, Summary, Timings};

/// What a `check` run should do, besides the paths.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--config FILE`; when `None`, `msgaudit.toml` is searched upward from the first
    /// path, up to the repository root.
    pub config: Option<PathBuf>,
    /// `--select`: when non-empty, only these rules (codes or names) run.
    pub select: Vec<String>,
    /// `--ignore`: these rules (codes or names) do not run.
    pub ignore: Vec<String>,
    /// `--baseline FILE`: findings recorded in it are not reported.
    pub baseline: Option<PathBuf>,
    /// `--write-baseline FILE`: record the findings (after suppressions) in it,
    /// atomically; they are then not reported.
    pub write_baseline: Option<PathBuf>,
    /// `--diff-base REV`: report only findings on lines changed since this git revision.
    pub diff_base: Option<String>,
    /// `--jobs N`: threads that read and analyze files; `None`: one per core. At most
    /// [`driver::max_jobs`] (four per core): a larger number is lowered to it. The
    /// report is the same whatever the number.
    pub jobs: Option<usize>,
    /// `--no-prefilter`: parse every file, also those that mention no API token and
    /// that nothing parsed needs. The findings are the same; the run is slower.
    pub no_prefilter: bool,
    /// Show a progress bar on stderr (the binary sets it when stderr is a terminal
    /// and `--quiet` is not given).
    pub progress: bool,
    /// `--max-file-size`: files larger than this many bytes are input errors. Wins over
    /// the config's `max_file_size`; `None` and no config key: [`source::MAX_FILE_BYTES`].
    pub max_file_size: Option<u64>,
    /// Texts that replace files on disk (canonical path -> text): an editor's unsaved
    /// buffers, for `msgaudit server`.
    pub overlay: std::sync::Arc<source::Overlay>,
    /// Development and test hooks (`msgaudit` reads them from the environment).
    pub hooks: support::DevHooks,
    /// Set from another thread when the result is no longer wanted (`msgaudit
    /// server`, on a newer edit): the run stops after the crate it is lowering and
    /// returns [`cancelled`] instead of an incomplete report.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Read and write the analysis cache ([`driver::cache`]) in the project root's
    /// `.msgaudit_cache/`. The binary's `check` sets it (unless `--no-cache` or
    /// `MSGAUDIT_NO_CACHE=1`); the language server does not.
    pub cache: bool,
}

static NOT_CANCELLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Options {
    pub fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// What [`check`] returns for a cancelled run.
pub fn cancelled() -> InputError {
    InputError {
        path: String::new(),
        line: None,
        column: None,
        message: "analysis cancelled: a newer run replaces it".into(),
    }
}

/// The PATHs of a run: `.` when none is given.
fn paths_or_dot(paths: &[PathBuf]) -> &[PathBuf] {
    static DOT: std::sync::OnceLock<[PathBuf; 1]> = std::sync::OnceLock::new();
    if paths.is_empty() {
        DOT.get_or_init(|| [PathBuf::from(".")])
    } else {
        paths
    }
}

/// The file size limit: `--max-file-size`, else the config's, else the default.
fn max_file_bytes(options: &Options, config: &config::Config) -> u64 {
    options
        .max_file_size
        .or(config.max_file_size)
        .unwrap_or(source::MAX_FILE_BYTES)
}

/// The config of a run and its errors ([`config::Config::load`]), with the APIs it
/// adds: an `[apis]` entry in error leaves the config's APIs out (the built-in ones
/// apply) and is one more error.
/// Also the `[apis]` as applied (the default one when the config's is in error).
fn load_config(
    paths: &[PathBuf],
    options: &Options,
) -> (config::Config, apis::Apis, apis::ApiConfig, Vec<InputError>) {
    let config::Parsed {
        config, mut errors, ..
    } = config::Config::load(options.config.as_deref(), &paths[0]);
    let mut applied = config.apis.clone();
    let apis = apis::Apis::with_user(&config.apis).unwrap_or_else(|e| {
        applied = apis::ApiConfig::default();
        errors.push(InputError {
            message: format!(
                "{} (the config's [apis] are not applied: this run uses the built-in APIs)",
                e.message
            ),
            ..e
        });
        apis::Apis::with_user(&apis::ApiConfig::default())
            .expect("the built-in APIs alone are valid")
    });
    (config, apis, applied, errors)
}

/// Runs the whole analysis. `Err` is a usage error that stops the run before any
/// file is read (exit code 2); input errors in individual files, and errors in the
/// config (which then applies in part or not at all), are in `Report::errors`
/// instead, and the tree is still analyzed.
pub fn check(paths: &[PathBuf], options: &Options) -> Result<Report, InputError> {
    let start = Instant::now();
    // A long-lived caller (the language server) gets its memory reserve back.
    support::alloc::rearm();
    let paths = paths_or_dot(paths);
    let selection = config::Selection::new(&options.select, &options.ignore)?;
    let (config, apis, applied_apis, config_errors) = load_config(paths, options);
    let max_file_bytes = max_file_bytes(options, &config);
    let baseline = match &options.baseline {
        Some(file) => Some(baseline::Baseline::load(file, max_file_bytes)?),
        None => None,
    };
    let changed = match &options.diff_base {
        Some(rev) => Some(diffbase::collect(&paths[0], rev)?),
        None => None,
    };

    let pool = driver::thread_pool(options.jobs).map_err(|message| InputError {
        path: String::new(),
        line: None,
        column: None,
        message,
    })?;
    let setup_done = Instant::now();
    // Reading runs on the same pool, so that `--jobs` bounds every thread msgaudit starts.
    let discovery =
        pool.install(|| source::discover_with(paths, &config, max_file_bytes, &options.overlay));
    let discovery_done = Instant::now();
    if options.cancelled() {
        return Err(cancelled());
    }
    let cpu_before = support::cpu::snapshot();
    // Rules that are off for every path (`--select`/`--ignore`, the config) do not run.
    let running = |code: &str| selection.enabled(code) && !config.off_everywhere(code);
    let input = driver::AnalysisInput {
        files: &discovery.files,
        apis: &apis,
        include_tests: config.include_tests,
        pool: &pool,
        prefilter: !options.no_prefilter,
        progress: options.progress,
        deps: &discovery.crate_deps,
        uses: &discovery.crate_uses,
        targets: &discovery.target_names,
        hooks: &options.hooks,
        cancel: options.cancel.as_deref().unwrap_or(&NOT_CANCELLED),
        crate_store: None,
        running: &running,
    };
    let (output, cache_hit) = analyze_cached(&input, &applied_apis, &config, paths, options);
    if options.cancelled() {
        return Err(cancelled());
    }

    let mut report = Report::default();
    report.summary.files = discovery.seen;
    report.summary.outside_deps = discovery.outside_deps.iter().cloned().collect();
    report.summary.crates = discovery.crates;
    report.summary.workspaces = discovery.workspaces;
    report.summary.skipped = discovery.skipped.clone();
    for (reason, n) in &output.skipped {
        *report.summary.skipped.entry(reason.clone()).or_default() += n;
    }
    report.summary.analyzed = output.analyzed;
    report.errors.extend(config_errors);
    report.errors.extend(discovery.errors);
    report.errors.extend(output.errors);

    configured_findings(
        &mut report,
        output.findings,
        &discovery.files,
        &selection,
        &config,
    );
    keep_sources(&mut report, &discovery.files);
    // The checklist's answers come from the analysis: the inventory gets the findings
    // as they are before the adoption filters, which only choose what is shown.
    let analyzed_findings =
        (baseline.is_some() || options.write_baseline.is_some() || changed.is_some())
            .then(|| report.findings.clone());
    adoption_filters(
        &mut report,
        options,
        &config,
        &paths[0],
        baseline.as_ref(),
        changed.as_ref(),
    )?;
    report.finish();
    report.inventory = output.inventory;
    report.inventory.attach(
        analyzed_findings.as_deref().unwrap_or(&report.findings),
        &rules::properties,
    );
    // With --diff-base the checklist shows the consumers and producers whose code,
    // or code they call, the change touches (docs/review.md); their answers stay those of
    // the whole analysis.
    if let (Some(changed), Some(rev)) = (&changed, &options.diff_base) {
        report.inventory.retain_code(rev.clone(), |l| {
            changed.touches(&l.path, l.span.line, l.span.end_line.max(l.span.line))
        });
    }
    report.cargo = cargo_targets(&report, &discovery.files);
    report.crates = crates_of(&report, &discovery.files);
    report.timings = Timings {
        setup: setup_done - start,
        discovery: discovery_done - setup_done,
        analysis: discovery_done.elapsed(),
        threads: pool.current_num_threads(),
        cpu: support::cpu::since(cpu_before),
        unparsed_bodies: output.unparsed_bodies,
        peak_crates: output.peak_crates,
        crates_cached: output.crates_cached,
        cache_hit,
    };
    Ok(report)
}

/// The findings the configuration keeps, at its levels (severity per rule and path,
/// then the rule selection), with the suppressions applied: into `report`.
fn configured_findings(
    report: &mut Report,
    found: Vec<Finding>,
    files: &[source::SourceFile],
    selection: &config::Selection,
    config: &config::Config,
) {
    let mut findings = Vec::new();
    for mut f in found {
        if !selection.enabled(f.code) {
            continue;
        }
        match config.level_for(f.code, &f.path) {
            None => continue,
            Some(sev) => f.severity = sev,
        }
        findings.push(f);
    }
    let suppressed = suppress::apply(files, &mut findings, &|code, path| {
        selection.enabled(code) && config.level_for(code, path).is_some()
    });
    // Unused-suppression findings are made by `suppress::apply`: give them their
    // configured level too.
    for f in findings
        .iter_mut()
        .filter(|f| f.code == rules::UNUSED_SUPPRESSION.code)
    {
        if let Some(sev) = config.level_for(f.code, &f.path) {
            f.severity = sev;
        }
    }
    report.summary.suppressed = suppressed.len();
    report.suppressed = suppressed;
    report.findings = findings;
}

/// The analyzed files' texts, paths on disk, raw displays and byte-order marks, for
/// the output formats and fixes.
fn keep_sources(report: &mut Report, files: &[source::SourceFile]) {
    for f in files {
        if let Some(raw) = source::raw_display(&f.path, &f.abs) {
            report.raw_paths.insert(f.path.clone(), raw);
        }
        report.sources.insert(f.path.clone(), f.text.clone());
        report.disk.insert(f.path.clone(), f.abs.clone());
        if f.bom {
            report.bom.insert(f.path.clone());
        }
    }
}

/// The adoption filters, after suppressions: `--write-baseline` (writes the
/// findings and hides them), `--baseline` (hides those it holds), `--diff-base`
/// (hides those outside the change); the summary counts what each hid.
fn adoption_filters(
    report: &mut Report,
    options: &Options,
    config: &config::Config,
    first_path: &std::path::Path,
    baseline: Option<&baseline::Baseline>,
    changed: Option<&diffbase::ChangedLines>,
) -> Result<(), InputError> {
    if options.baseline.is_some() || options.write_baseline.is_some() {
        let root = baseline::project_root(config, first_path);
        let mut hidden = 0;
        if let Some(file) = &options.write_baseline {
            let entries = baseline::entries(report, &root);
            baseline::write_atomic(file, &baseline::render(&entries))?;
            hidden = report.findings.len();
            report.findings.clear();
        }
        if let Some(b) = baseline {
            hidden += baseline::filter(report, b, &root);
        }
        report.summary.baselined = Some(hidden);
    }
    if let Some(changed) = changed {
        report.summary.outside_diff = Some(diffbase::filter(report, changed));
    }
    Ok(())
}

/// A Rust file in a package of the tree (its manifest not above the PATH
/// arguments: docs/what-is-analyzed.md) is in the crate of its Cargo target: file -> crate name.
fn crates_of(
    report: &Report,
    files: &[source::SourceFile],
) -> std::collections::BTreeMap<String, String> {
    files
        .iter()
        .filter(|f| f.kind == source::FileKind::Rust && f.package_key != f.path)
        .filter_map(|f| {
            let target = report.cargo.get(&f.path)?;
            Some((f.path.clone(), target.name.clone()))
        })
        .collect()
}

/// The analysis's output, from the cache when an entry for this input is there
/// ([`driver::cache`]), else analyzed (and stored, when the run was not cancelled).
/// Runs with development hooks set (debug output, fault injection) are never cached.
/// The flag: read from the cache (`Some(true)`), stored in it (`Some(false)`), neither.
fn analyze_cached(
    input: &driver::AnalysisInput,
    applied_apis: &apis::ApiConfig,
    config: &config::Config,
    paths: &[PathBuf],
    options: &Options,
) -> (driver::AnalysisOutput, Option<bool>) {
    let hooked = format!("{:?}", options.hooks) != format!("{:?}", support::DevHooks::default());
    if !options.cache || hooked {
        return (driver::analyze(input), None);
    }
    let Some(dir) = driver::cache::dir_for(&baseline::project_root(config, &paths[0])) else {
        return (driver::analyze(input), None);
    };
    let key = driver::cache::key(input, applied_apis);
    if let Some(output) = driver::cache::load(&dir, &key) {
        return (output, Some(true));
    }
    // Not the whole tree as before: each crate as before is taken from its entry.
    let store = driver::crate_cache::CrateStore::open(
        &dir,
        driver::cache::crate_prefix(input, applied_apis),
    );
    let input = driver::AnalysisInput {
        crate_store: store.as_ref(),
        ..*input
    };
    let mut output = driver::analyze(&input);
    if !options.cancelled() {
        // What is stored is what this run prints from, so warm and cold runs agree.
        driver::cache::compact(&mut output);
        // A cache that cannot be written only costs the next run its speed.
        let stored = driver::cache::store(&dir, &key, &output).is_ok();
        return (output, stored.then_some(false));
    }
    (output, None)
}

/// `msgaudit clean`: removes the analysis cache of the project `paths` are in (the
/// directories `check` would use), and returns those removed.
pub fn clean_cache(paths: &[PathBuf], options: &Options) -> Result<Vec<PathBuf>, InputError> {
    let paths = paths_or_dot(paths);
    let parsed = config::Config::load(options.config.as_deref(), &paths[0]);
    let root = baseline::project_root(&parsed.config, &paths[0]);
    driver::cache::clean(&root).map_err(|message| InputError {
        path: String::new(),
        line: None,
        column: None,
        message,
    })
}

/// The Cargo package and target of every file a finding or an input error names
/// (`Report::cargo`).
fn cargo_targets(
    report: &Report,
    files: &[source::SourceFile],
) -> std::collections::BTreeMap<String, source::cargo::CargoTarget> {
    let mut resolver = source::cargo::Resolver::default();
    let abs: std::collections::HashMap<&str, &std::path::Path> = files
        .iter()
        .map(|f| (f.path.as_str(), f.abs.as_path()))
        .collect();
    let named = report
        .findings
        .iter()
        .flat_map(|f| std::iter::once(&f.path).chain(f.labels.iter().map(|l| &l.path)))
        .map(String::as_str)
        .chain(report.errors.iter().map(|e| e.path.as_str()))
        .chain(report.inventory.places());
    let mut out = std::collections::BTreeMap::new();
    for path in named {
        if out.contains_key(path) {
            continue;
        }
        // A file that was not read (an input error) is found from its display path,
        // which is relative to the current directory or absolute.
        let real = match abs.get(path) {
            Some(p) => Some(p.to_path_buf()),
            None => {
                let p = std::path::Path::new(path);
                let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
                let dir = std::fs::canonicalize(parent.unwrap_or(std::path::Path::new(".")));
                dir.ok().zip(p.file_name()).map(|(d, n)| d.join(n))
            }
        };
        if let Some(t) = real.and_then(|r| resolver.target(&r)) {
            out.insert(path.to_string(), t);
        }
    }
    out
}

/// `check --show-files`: the files a check of `paths` would read, as it prints them
/// (walked, ignore files and `exclude` applied, test targets left out), with the
/// input errors met while finding them.
pub fn show_files(
    paths: &[PathBuf],
    options: &Options,
) -> Result<(Vec<String>, Vec<InputError>), InputError> {
    let paths = paths_or_dot(paths);
    let config::Parsed {
        config,
        errors: config_errors,
        ..
    } = config::Config::load(options.config.as_deref(), &paths[0]);
    let max_file_bytes = max_file_bytes(options, &config);
    let discovery = source::discover_with(paths, &config, max_file_bytes, &options.overlay);
    let files = discovery.files.into_iter().map(|f| f.path).collect();
    Ok((
        files,
        config_errors.into_iter().chain(discovery.errors).collect(),
    ))
}

/// `check --show-settings`: the settings a check of `paths` would run with, each
/// with where it comes from (the config file, a flag, or the default), as text.
pub fn show_settings(paths: &[PathBuf], options: &Options) -> Result<String, InputError> {
    use std::fmt::Write;
    let paths = paths_or_dot(paths);
    // The settings of a config in error would not be the config's: the error is the
    // answer.
    let parsed = config::Config::load(options.config.as_deref(), &paths[0]);
    if let Some(e) = parsed.errors.into_iter().next() {
        return Err(e);
    }
    let config = parsed.config;
    let selection = config::Selection::new(&options.select, &options.ignore)?;
    let file = config.file.clone();
    let from_config = || format!("from {}", file.as_deref().unwrap_or("the config"));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "config file: {}",
        match (&file, &options.config) {
            (Some(f), Some(_)) => format!("{f} (--config)"),
            (Some(f), None) => format!("{f} (found upward from {})", paths[0].display()),
            (None, _) => "none (defaults)".to_string(),
        }
    );
    let (size, size_from) = match (options.max_file_size, config.max_file_size) {
        (Some(n), _) => (n, "--max-file-size".to_string()),
        (None, Some(n)) => (n, from_config()),
        (None, None) => (source::MAX_FILE_BYTES, "default".to_string()),
    };
    let _ = writeln!(out, "max_file_size: {size} bytes ({size_from})");
    let _ = writeln!(
        out,
        "include_tests: {} ({})",
        config.include_tests,
        if config.include_tests {
            from_config()
        } else {
            "default".into()
        }
    );
    if config.exclude.is_empty() {
        let _ = writeln!(out, "exclude: none (default)");
    } else {
        let _ = writeln!(out, "exclude: {:?} ({})", config.exclude, from_config());
    }
    let _ = writeln!(out, "rules:");
    for meta in rules::ALL.iter() {
        let (level, from) = match config.rules.get(meta.code) {
            Some(l) => (*l, from_config()),
            None => (Some(meta.default_severity), "default".to_string()),
        };
        let (shown, from) = if !selection.enabled(meta.code) {
            let flag = match (options.select.is_empty(), options.ignore.is_empty()) {
                (true, _) => "--ignore",
                (false, true) => "--select",
                (false, false) => "--select/--ignore",
            };
            ("off".to_string(), flag.to_string())
        } else {
            (level.map_or("off", |l| l.as_str()).to_string(), from)
        };
        let _ = writeln!(out, "  {} {:<34} {shown:<7} ({from})", meta.code, meta.name);
    }
    for o in &config.overrides {
        let levels: Vec<String> = o
            .rules
            .iter()
            .map(|(code, l)| format!("{code} = {}", l.map_or("off", |l| l.as_str())))
            .collect();
        let _ = writeln!(
            out,
            "override: paths {:?}: {} ({})",
            o.patterns,
            levels.join(", "),
            from_config()
        );
    }
    let entries: usize = config.apis.lists.values().map(Vec::len).sum();
    let _ = writeln!(
        out,
        "apis: {} built-in packs{}",
        apis::PACKS.len(),
        if entries == 0 {
            String::new()
        } else {
            format!(", plus {entries} entries ({})", from_config())
        }
    );
    Ok(out)
}
