//! The `msgaudit` command line: parses arguments, calls `msgaudit::check`,
//! prints the report and chooses the exit code. Nothing else.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use msgaudit::config::Selection;

/// syn allocates a node for nearly every token: a faster allocator is a large share
/// of the run time on big trees. Wrapped with a reserve so that running out of
/// memory ends the run with what it found (support::alloc).
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static GLOBAL: msgaudit::support::alloc::Reserved<mimalloc::MiMalloc> =
    msgaudit::support::alloc::Reserved::new(mimalloc::MiMalloc);
/// The C allocator, for heap profilers (`--features system-alloc`; docs/speed.md).
#[cfg(feature = "system-alloc")]
#[global_allocator]
static GLOBAL: msgaudit::support::alloc::Reserved<std::alloc::System> =
    msgaudit::support::alloc::Reserved::new(std::alloc::System);
use msgaudit::emit::{self, Format, HumanOptions};
use msgaudit::{rules, InputError, Options, Report, Severity};

/// Exit code: no finding at or above `--fail-on`.
const EXIT_OK: u8 = 0;
/// Exit code: findings at or above `--fail-on`.
const EXIT_FINDINGS: u8 = 1;
/// Exit code: usage, configuration or input error.
const EXIT_ERROR: u8 = 2;

#[derive(Parser)]
#[command(
    name = "msgaudit",
    version,
    about = "Static analyzer for message delivery guarantees",
    long_about = "Static analyzer for message delivery guarantees.\n\n\
        Reads Rust message consumers and producers and pipeline YAML, and reports where \
        the code breaks a boundary its delivery guarantee depends on: an ack before the \
        commit, a retry that mints a new idempotency key, a dedup record committed apart \
        from its effect, a consumer that reads uncommitted transactional records."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyze files and directories and report findings.
    ///
    /// Exit status: 0 when no finding is at or above --fail-on, 1 when some are,
    /// 2 on a usage, configuration or input error (findings are still printed).
    Check(CheckArgs),
    /// Print a rule's full explanation, with a bad and a fixed example.
    Explain {
        /// Rule code or name, as `msgaudit rules` lists them (`ack-before-commit`).
        rule: String,
    },
    /// List every rule with its code, name, default severity and summary.
    Rules {
        /// Output format.
        #[arg(long, value_enum, default_value_t = RulesFormat::Text)]
        format: RulesFormat,
        /// List the supported client libraries (the packs) and the delivery roles
        /// each declares (receive, ack, commit, publish, ...) instead of the rules.
        #[arg(long)]
        packs: bool,
    },
    /// Print the pull-request review checklist (Markdown) for the consumers and
    /// producers found: `check --format checklist`, exiting 0 unless an input fails.
    Checklist(ChecklistArgs),
    /// Run the language server (LSP) over standard input and output: diagnostics for
    /// Rust and YAML files as you edit, hover with the rule's explanation, and a code
    /// action that suppresses a finding on its line.
    Server {
        /// Threads for each analysis [default: one per core].
        #[arg(long, value_name = "N", value_parser = parse_jobs)]
        jobs: Option<usize>,
        /// Neither read nor write the analysis cache that `check` shares
        /// (`MSGAUDIT_NO_CACHE=1` does the same): each edit re-analyzes every crate.
        #[arg(long)]
        no_cache: bool,
    },
    /// Remove the analysis cache of the project PATH is in (`.msgaudit_cache/` in
    /// the directory of `msgaudit.toml`, else the repository root or PATH, and its
    /// fallback under `$XDG_CACHE_HOME/msgaudit/`).
    Clean {
        /// A file or directory of the project.
        #[arg(value_name = "PATH", default_value = ".")]
        path: PathBuf,
        /// The config file `check --config` would read (it decides the project root).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Print a shell completion script (`msgaudit completions bash >
    /// ~/.local/share/bash-completion/completions/msgaudit`).
    Completions {
        /// The shell to complete in.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff: `msgaudit man > msgaudit.1`, then `man ./msgaudit.1`);
    /// with a subcommand, its own page (`msgaudit man check > msgaudit-check.1`).
    Man {
        /// The subcommand whose page to print.
        subcommand: Option<String>,
    },
}

#[derive(clap::Args)]
struct ChecklistArgs {
    /// Files or directories to analyze.
    #[arg(value_name = "PATH", default_value = ".")]
    paths: Vec<PathBuf>,

    /// Configuration file [default: `msgaudit.toml` found upward from the first PATH].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Prefix of every link, so that links work in a pull-request comment
    /// (`https://github.com/ORG/REPO/blob/SHA/`); links are relative without it.
    #[arg(long, value_name = "URL")]
    link_base: Option<String>,

    /// Show only the consumers and producers whose code, or code they call, changed
    /// since this git revision (commits since it, staged, unstaged and untracked
    /// files), and the findings on changed lines; answers still come from the whole tree.
    #[arg(long, value_name = "REV")]
    diff_base: Option<String>,

    /// Leave the findings recorded in this baseline file out of the lists of
    /// findings; answers still come from the whole tree.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Files or directories to analyze (`.rs`, `.yml`, `.yaml`). Directories are
    /// walked honouring `.gitignore` and `.ignore`; a file named here is analyzed
    /// even when ignored.
    #[arg(value_name = "PATH", default_value = ".")]
    paths: Vec<PathBuf>,

    /// Apply the safe fixes findings carry, then report what remains (docs/getting-started.md).
    #[arg(long)]
    fix: bool,
    /// With `--fix` or `--diff`: take the unsafe fixes too.
    #[arg(long)]
    unsafe_fixes: bool,
    /// Print the fixes as a unified diff (`git apply` reads it) and write nothing.
    #[arg(long)]
    diff: bool,

    /// Output format.
    #[arg(long, alias = "output-format", value_enum, default_value_t = Format::Human)]
    format: Format,

    /// Write the report to FILE instead of standard output (atomically: a temporary
    /// file beside it, renamed over it).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Colour in the human format: `auto` colours a terminal unless `NO_COLOR` is set
    /// (or `FORCE_COLOR` is, whatever the output is).
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,

    /// Configuration file [default: `msgaudit.toml` found upward from the first PATH].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Run only these rules (codes, names, `ALL` or code prefixes such as `MA00`;
    /// comma-separated or repeated).
    #[arg(long, value_name = "CODES")]
    select: Vec<String>,

    /// Do not run these rules (the same forms as --select).
    #[arg(long, value_name = "CODES")]
    ignore: Vec<String>,

    /// Print the files a check would read, one per line, and exit (ruff's
    /// `--show-files`).
    #[arg(long, conflicts_with = "show_settings")]
    show_files: bool,

    /// Print the settings a check would run with (config file, limits, each rule's
    /// level) and where each comes from, and exit.
    #[arg(long)]
    show_settings: bool,

    /// Lowest finding severity that makes the exit status 1.
    #[arg(long, value_enum, default_value_t = FailOn::Warning)]
    fail_on: FailOn,

    /// Exit 0 whatever is found, as `--fail-on never` (input errors still exit 2).
    #[arg(long, conflicts_with = "fail_on")]
    exit_zero: bool,

    /// Do not report findings recorded in this baseline file (see --write-baseline).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,

    /// Record the current findings (after suppressions) in this baseline file,
    /// written atomically; they are then not reported. Paths in it are relative
    /// to the project root (the config's directory, or the git repository's root).
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,

    /// Report only findings on lines added or changed since this git revision
    /// (commits since it, staged, unstaged and untracked files).
    #[arg(long, value_name = "REV")]
    diff_base: Option<String>,

    /// Threads that read and analyze files [default: one per core]; more than four
    /// per core are lowered to four per core. The output is the same whatever the
    /// number.
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    jobs: Option<usize>,

    /// Print to stderr the files seen, analyzed and skipped (by reason) and the time
    /// spent in each phase. Standard output is unchanged.
    #[arg(long)]
    statistics: bool,

    /// Parse every file, also those that mention no API msgaudit knows and that no
    /// parsed code needs. The findings are the same; the run is slower.
    #[arg(long)]
    no_prefilter: bool,

    /// Neither read nor write the analysis cache (`.msgaudit_cache/` in the project
    /// root; `MSGAUDIT_NO_CACHE=1` does the same). The findings are the same.
    #[arg(long)]
    no_cache: bool,

    /// No progress bar on stderr (it is shown only when stderr is a terminal).
    #[arg(long, short)]
    quiet: bool,
    /// Larger files are not read (an input error): a number of bytes, or a size with
    /// a unit (`20MB`, `512KiB`; KB/MB/GB are powers of 1000, KiB/MiB/GiB of 1024).
    /// Wins over `max_file_size` in the config [default: 10MiB].
    #[arg(long, value_name = "BYTES|SIZE", value_parser = msgaudit::config::parse_size)]
    max_file_size: Option<u64>,

    /// With `--format checklist`: prefix of every link, so that links work in a
    /// pull-request comment (`https://github.com/ORG/REPO/blob/SHA/`; in GitHub
    /// Actions `${{ github.server_url }}/${{ github.repository }}/blob/${{ github.sha }}/`).
    #[arg(long, value_name = "URL")]
    link_base: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum RulesFormat {
    /// A table.
    Text,
    /// A JSON array.
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Color {
    /// On a terminal, unless `NO_COLOR` is set; always when `FORCE_COLOR` is.
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FailOn {
    /// Exit 1 on error findings only.
    Error,
    /// Exit 1 on warning or error findings.
    Warning,
    /// Exit 0 whatever is found (input errors still exit 2).
    Never,
}

/// `eprintln!` that never panics: a standard error that cannot be written (closed,
/// full) has nowhere to report to, and must not turn a result into a crash.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// A usage or config error on stderr, one line (what it quotes is escaped).
fn print_error(e: &InputError) {
    let path = emit::escape::text(&e.path);
    let location = match (e.line, e.column) {
        (Some(l), Some(c)) => format!("{path}:{l}:{c}: "),
        (Some(l), None) => format!("{path}:{l}: "),
        _ if e.path.is_empty() => String::new(),
        _ => format!("{path}: "),
    };
    say!("{location}error: {}", emit::escape::text(&e.message));
}

/// Writes the report. A closed pipe (`msgaudit ... | head`) is the reader's choice;
/// any other failure (a full disk, `/dev/full`) is reported, and the run exits 2, so
/// that CI never uploads a cut SARIF file as if it were whole.
#[must_use]
fn write_stdout(text: &str) -> bool {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => true,
        Err(e) => {
            say!("error: cannot write the report to standard output: {e}");
            false
        }
    }
}

/// Writes generated text (a completion script, the manual page) to standard output:
/// the exit code.
fn write_bytes(bytes: &[u8]) -> u8 {
    if write_stdout(&String::from_utf8_lossy(bytes)) {
        EXIT_OK
    } else {
        EXIT_ERROR
    }
}

/// `--statistics`: counts and time per phase, on stderr, one item per line.
fn print_statistics(report: &Report, output: Duration, total: Duration) {
    let s = &report.summary;
    let t = &report.timings;
    let secs = |d: Duration| format!("{:.3} s", d.as_secs_f64());
    let mut lines = vec![
        format!("files seen: {}", s.files),
        format!("files analyzed: {}", s.analyzed),
    ];
    for (reason, n) in &s.skipped {
        lines.push(format!("skipped ({reason}): {n}"));
    }
    lines.push(format!("function bodies not parsed: {}", t.unparsed_bodies));
    lines.push(format!(
        "analysis cache: {}",
        match t.cache_hit {
            Some(true) => "hit (the analysis was read from .msgaudit_cache)",
            Some(false) => "miss (analyzed and stored)",
            None => "not used",
        }
    ));
    lines.push(format!(
        "crates analyzed at one time, at most: {}",
        t.peak_crates
    ));
    lines.push(format!(
        "crates read from the per-crate cache: {}",
        t.crates_cached
    ));
    lines.push(format!("input errors: {}", s.errors));
    // Findings per rule, most first (ruff's `--statistics`), then by code.
    let mut per_rule: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for f in &report.findings {
        *per_rule.entry((f.code, f.name)).or_default() += 1;
    }
    let mut per_rule: Vec<_> = per_rule.into_iter().collect();
    per_rule.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for ((code, name), n) in per_rule {
        lines.push(format!("findings {code} {name}: {n}"));
    }
    lines.push(format!("threads: {}", t.threads));
    lines.push(format!("time setup: {}", secs(t.setup)));
    lines.push(format!("time discovery+reading: {}", secs(t.discovery)));
    lines.push(format!("time analysis: {}", secs(t.analysis)));
    for (phase, d) in &t.cpu {
        lines.push(format!("cpu {phase}: {}", secs(*d)));
    }
    lines.push(format!("time output: {}", secs(output)));
    lines.push(format!("time total: {}", secs(total)));
    let mut err = std::io::stderr().lock();
    for line in lines {
        let _ = writeln!(err, "msgaudit: {line}");
    }
}

/// Whether the human format is coloured: `--color`, else `FORCE_COLOR`, else a
/// terminal without `NO_COLOR` (an empty variable counts as unset, as no-color.org
/// and force-color.org say).
fn colored(color: Color, to_terminal: bool) -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    match color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto if set("FORCE_COLOR") => true,
        Color::Auto => to_terminal && !set("NO_COLOR"),
    }
}

/// The report in `format`.
fn render(report: &Report, format: Format, color: bool, link_base: Option<&str>) -> String {
    match format {
        Format::Checklist => emit::checklist::render_with(
            report,
            &emit::checklist::ChecklistOptions {
                link_base: link_base.map(str::to_string),
            },
        ),
        Format::Human => emit::human::render(
            report,
            &HumanOptions {
                color,
                ..HumanOptions::default()
            },
        ),
        other => emit::render(report, other),
    }
}

/// A run that stops before analyzing (a bad selection, baseline or --diff-base) still prints a
/// machine-readable format's document, with the error in it: a CI step that parses
/// standard output gets the reason, not nothing. (It is on standard error already.)
fn print_error_document(e: InputError, format: Format) {
    if matches!(format, Format::Human | Format::Short) {
        return;
    }
    let mut report = Report {
        errors: vec![e],
        ..Report::default()
    };
    report.finish();
    let _ = write_stdout(&render(&report, format, false, None));
}

/// `check --show-files` / `--show-settings`.
fn show(args: &CheckArgs) -> u8 {
    let options = Options {
        config: args.config.clone(),
        select: args.select.clone(),
        ignore: args.ignore.clone(),
        max_file_size: args.max_file_size,
        ..Options::default()
    };
    let result = if args.show_files {
        msgaudit::show_files(&args.paths, &options).map(|(files, errors)| {
            let text: String = files.iter().map(|f| format!("{f}\n")).collect();
            for e in &errors {
                say!("error: {}: {}", e.path, e.message);
            }
            (text, errors.is_empty())
        })
    } else {
        msgaudit::show_settings(&args.paths, &options).map(|t| (t, true))
    };
    match result {
        Ok((text, clean)) => {
            if write_stdout(&text) && clean {
                EXIT_OK
            } else {
                EXIT_ERROR
            }
        }
        Err(e) => {
            print_error(&e);
            EXIT_ERROR
        }
    }
}

fn check(args: CheckArgs) -> u8 {
    let start = Instant::now();
    // Validate the selection first so that a typo fails as a usage error.
    if let Err(e) = Selection::new(&args.select, &args.ignore) {
        say!("error: {} in {}", e.message, e.path);
        print_error_document(e, args.format);
        return EXIT_ERROR;
    }
    if args.show_files || args.show_settings {
        return show(&args);
    }
    let options = Options {
        config: args.config,
        select: args.select,
        ignore: args.ignore,
        baseline: args.baseline,
        write_baseline: args.write_baseline,
        diff_base: args.diff_base,
        jobs: args.jobs,
        no_prefilter: args.no_prefilter,
        progress: !args.quiet && std::io::stderr().is_terminal(),
        max_file_size: args.max_file_size,
        hooks: msgaudit::support::DevHooks::from_env(),
        cache: cache_wanted(args.no_cache),
        ..Options::default()
    };
    let fixing = args.fix || args.diff || args.unsafe_fixes;
    let run = if fixing {
        msgaudit::fix::fix_tree(&args.paths, &options, args.unsafe_fixes, !args.diff).map(
            |(report, outcome)| {
                for (path, why) in &outcome.refused {
                    say!("msgaudit: {path} not fixed: {why}");
                }
                let noun = |n: usize| if n == 1 { "finding" } else { "findings" };
                let (fixed, remain) = (outcome.fixed, report.findings.len());
                let verb = if args.diff { "would fix" } else { "fixed" };
                let remains = if remain == 1 { "remains" } else { "remain" };
                say!(
                    "msgaudit: {verb} {fixed} {}, {remain} {} {remains}",
                    noun(fixed),
                    noun(remain)
                );
                (report, Some(outcome.diff))
            },
        )
    } else {
        msgaudit::check(&args.paths, &options).map(|r| (r, None))
    };
    let report = match run {
        Ok((r, Some(diff))) if args.diff => {
            if !write_stdout(&diff) {
                return EXIT_ERROR;
            }
            return exit_status(&r, args.fail_on, args.exit_zero);
        }
        Ok((r, _)) => r,
        Err(e) => {
            print_error(&e);
            print_error_document(e, args.format);
            return EXIT_ERROR;
        }
    };
    if let Some(file) = &options.write_baseline {
        let n = report.summary.baselined.unwrap_or(0);
        let noun = if n == 1 { "finding" } else { "findings" };
        say!("msgaudit: wrote {n} {noun} to {}", file.display());
    }
    let output_start = Instant::now();
    let to_terminal = args.output.is_none() && std::io::stdout().is_terminal();
    let text = render(
        &report,
        args.format,
        colored(args.color, to_terminal),
        args.link_base.as_deref(),
    );
    match &args.output {
        Some(file) => {
            if let Err(e) = msgaudit::support::files::write_atomic(file, &text, "report") {
                say!("error: {}: {e}", file.display());
                return EXIT_ERROR;
            }
        }
        None if !write_stdout(&text) => return EXIT_ERROR,
        None => {}
    }
    if args.format == Format::RustcJson {
        let outside = report
            .findings
            .iter()
            .filter(|f| !report.cargo.contains_key(&f.path))
            .count();
        if outside > 0 {
            let noun = if outside == 1 { "finding" } else { "findings" };
            say!(
                "msgaudit: {outside} {noun} in files outside every Cargo package left out of \
                 rustc-json (a message without a package would clear rust-analyzer's \
                 diagnostics); `msgaudit server` or another format shows them"
            );
        }
    }
    if args.statistics {
        print_statistics(&report, output_start.elapsed(), start.elapsed());
    }
    exit_status(&report, args.fail_on, args.exit_zero)
}

/// The exit code for what `report` found (docs/getting-started.md).
fn exit_status(report: &Report, fail_on: FailOn, exit_zero: bool) -> u8 {
    if !report.errors.is_empty() {
        return EXIT_ERROR;
    }
    let threshold = match fail_on {
        _ if exit_zero => return EXIT_OK,
        FailOn::Never => return EXIT_OK,
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
    };
    if report.findings.iter().any(|f| f.severity >= threshold) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

/// `--jobs N`: a whole number of threads, at least 1.
fn parse_jobs(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err(format!(
            "0 threads cannot analyze anything: give 1 or more (at most {} here, four per \
             core; a larger number is lowered to it), or leave --jobs out for one per core",
            msgaudit::driver::max_jobs()
        )),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "`{text}` is not a whole number of threads (1 or more)"
        )),
    }
}

/// The analysis cache is used unless `--no-cache` or `MSGAUDIT_NO_CACHE=1` says not to.
fn cache_wanted(no_cache: bool) -> bool {
    !no_cache && std::env::var_os("MSGAUDIT_NO_CACHE").is_none_or(|v| v != "1")
}

/// `msgaudit server`: the language server on stdio, until the client says `exit`.
fn server(jobs: Option<usize>, no_cache: bool) -> u8 {
    let (connection, transport) = msgaudit::server::transport::stdio();
    let options = msgaudit::server::ServerOptions {
        docs_dir: rule_docs_dir(),
        jobs,
        cache: cache_wanted(no_cache),
    };
    // `run` drops the connection when it returns: the writer thread then ends once
    // it has written what it was given. An analysis still running is not waited
    // for: returning from `main` ends the process.
    let result = msgaudit::server::run(connection, options);
    let stopped = transport.finish();
    match (result, stopped) {
        (Ok(()), Ok(())) => EXIT_OK,
        (Err(e), _) => {
            say!("msgaudit server: {e}");
            EXIT_ERROR
        }
        (Ok(()), Err(e)) => {
            say!("msgaudit server: {e}");
            EXIT_ERROR
        }
    }
}

/// Where the server writes the rules' pages that diagnostics link to:
/// `$XDG_CACHE_HOME/msgaudit/VERSION/rules`, else `$HOME/.cache/…`.
fn rule_docs_dir() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(
        cache
            .join("msgaudit")
            .join(env!("CARGO_PKG_VERSION"))
            .join("rules"),
    )
}

fn main() -> ExitCode {
    GLOBAL.hold();
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => check(args),
        Command::Explain { rule } => match msgaudit::suppress::rule_named(&rule) {
            Some(meta) => {
                if write_stdout(&emit::explain(meta)) {
                    EXIT_OK
                } else {
                    EXIT_ERROR
                }
            }
            None => {
                say!(
                    "error: {} (run `msgaudit rules` for the list)",
                    msgaudit::rules::unknown_rule_message(&rule)
                );
                EXIT_ERROR
            }
        },
        Command::Checklist(args) => check(CheckArgs {
            paths: args.paths,
            format: Format::Checklist,
            output: None,
            color: Color::Never,
            exit_zero: false,
            fix: false,
            unsafe_fixes: false,
            diff: false,
            config: args.config,
            select: Vec::new(),
            ignore: Vec::new(),
            fail_on: FailOn::Never,
            baseline: args.baseline,
            write_baseline: None,
            diff_base: args.diff_base,
            jobs: None,
            statistics: false,
            no_prefilter: false,
            no_cache: false,
            quiet: false,
            max_file_size: None,
            link_base: args.link_base,
            show_files: false,
            show_settings: false,
        }),
        Command::Server { jobs, no_cache } => server(jobs, no_cache),
        Command::Clean { path, config } => {
            let options = Options {
                config,
                ..Options::default()
            };
            match msgaudit::clean_cache(&[path], &options) {
                Ok(removed) => {
                    for dir in removed {
                        say!("removed {}", dir.display());
                    }
                    EXIT_OK
                }
                Err(e) => {
                    say!("error: {}", e.message);
                    EXIT_ERROR
                }
            }
        }
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "msgaudit", &mut out);
            write_bytes(&out)
        }
        Command::Man { subcommand } => {
            let cli = Cli::command();
            let page = match &subcommand {
                None => Some(cli),
                Some(name) => cli.find_subcommand(name).map(|c| {
                    c.clone()
                        .display_name(format!("msgaudit-{name}"))
                        .bin_name(format!("msgaudit {name}"))
                }),
            };
            let Some(page) = page else {
                say!(
                    "error: no subcommand `{}` (run `msgaudit --help`)",
                    subcommand.unwrap_or_default()
                );
                return ExitCode::from(EXIT_ERROR);
            };
            let mut out = Vec::new();
            match clap_mangen::Man::new(page).render(&mut out) {
                Ok(()) => write_bytes(&out),
                Err(e) => {
                    say!("error: cannot render the manual page: {e}");
                    EXIT_ERROR
                }
            }
        }
        Command::Rules { format, packs } => {
            let text = match (format, packs) {
                (RulesFormat::Text, false) => emit::rules_table(&rules::ALL),
                (RulesFormat::Json, false) => emit::json::render_rules(&rules::ALL),
                (RulesFormat::Text, true) => emit::packs_table(&emit::pages::packs()),
                (RulesFormat::Json, true) => emit::json::render_packs(&emit::pages::packs()),
            };
            if write_stdout(&text) {
                EXIT_OK
            } else {
                EXIT_ERROR
            }
        }
    };
    ExitCode::from(code)
}
