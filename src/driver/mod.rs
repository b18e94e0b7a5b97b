//! The driver: groups files into crates, runs the prefilter's rounds, lowers each
//! crate (in parallel, on threads with large stacks) through the front ends, computes
//! the analysis's facts over the model and hands them to the rules. It sits above
//! the front ends, the analysis and the rules; none of them imports it.

mod budget;
pub mod cache;
pub mod crate_cache;
pub mod demand;
pub mod lazy;
mod link;
mod merge;
mod rounds;
mod schedule;
mod seeds;

use std::collections::BTreeMap;

use aho_corasick::AhoCorasick;
use rayon::prelude::*;

use crate::analysis::{flow, inventory};
use crate::apis::Apis;
use crate::diagnostic::{Finding, InputError};
use crate::frontend::{rust, yaml};
use crate::source::{FileKind, SourceFile};
use crate::support::cpu;

pub use crate::support::STACK_SIZE;
use rounds::{check_prefilter, lower_needed, Prefilter};

#[derive(Clone, Copy)]
pub struct AnalysisInput<'a> {
    pub files: &'a [SourceFile],
    pub apis: &'a Apis,
    pub include_tests: bool,
    /// The big-stack pool the crates and YAML files are analyzed on (see [`thread_pool`]).
    pub pool: &'a rayon::ThreadPool,
    /// Parse only the files that mention an API token or that the model of those
    /// files needs (docs/what-is-analyzed.md "Scope and skipping"); false parses every file.
    pub prefilter: bool,
    /// Shows a progress bar (Rust and YAML files analyzed) on stderr.
    pub progress: bool,
    /// Each crate's dependencies inside the tree: (import name, crate key).
    pub deps: &'a BTreeMap<String, Vec<(String, String)>>,
    /// Every dependency each crate's manifest names (`Discovery::crate_uses`): a
    /// library type whose name others share makes a file worth parsing only in a
    /// crate that may import its library.
    pub uses: &'a crate::source::cargo::CrateUses,
    /// Each crate's binary names (Cargo target, package, `[[bin]]`s), by crate key:
    /// what deploy files name a serverless handler by.
    pub targets: &'a BTreeMap<String, Vec<String>>,
    pub hooks: &'a crate::support::DevHooks,
    /// Set when the run's result is no longer wanted (an editor's newer edit): the
    /// crates not yet analyzed are skipped, and what was found is incomplete.
    pub cancel: &'a std::sync::atomic::AtomicBool,
    /// Where crates' results are kept between runs (`None`: no per-crate cache).
    pub crate_store: Option<&'a crate_cache::CrateStore>,
    /// Whether a rule (by code) runs: a rule off for every path is skipped.
    pub running: &'a (dyn Fn(&str) -> bool + Sync),
}

/// Threads per core the pool may have at most: more only costs time (each thread has
/// a [`STACK_SIZE`] stack; `--jobs 5000` spent seconds starting threads).
pub const MAX_JOBS_PER_CORE: usize = 4;

/// The most threads the pool gets: [`MAX_JOBS_PER_CORE`] per core.
pub fn max_jobs() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    cores.saturating_mul(MAX_JOBS_PER_CORE)
}

/// The pool that reads and analyzes files: `jobs` threads (`None`: one per core, or
/// `RAYON_NUM_THREADS`), at most [`max_jobs`] (a larger number is lowered to it),
/// each with a [`STACK_SIZE`] stack. Results never depend on the number of threads:
/// every parallel step collects in input order. When the system refuses that many
/// threads (an address-space or process limit), the pool has half as many, down to
/// one; under an address-space limit, at most the threads whose stacks take a quarter
/// of it (budget::threads_within). The error
/// is returned only when not even one can start.
pub fn thread_pool(jobs: Option<usize>) -> Result<rayon::ThreadPool, String> {
    let asked = jobs.or_else(|| {
        std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
    });
    let build = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            // 0: one per core.
            .num_threads(n)
            .stack_size(STACK_SIZE)
            .build()
    };
    // Under an address-space limit, only the threads whose stacks fit a quarter of it.
    let wanted = asked.map_or_else(
        || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        |n| n.min(max_jobs()),
    );
    // Refused (a limit on processes or address space): half as many, down to one.
    let mut n = budget::threads_within(budget::address_space_limit(), STACK_SIZE, wanted);
    loop {
        match build(n) {
            Ok(pool) => return Ok(pool),
            Err(e) if n <= 1 => return Err(format!("cannot start an analysis thread: {e}")),
            Err(_) => {
                n /= 2;
                // The threads the refused pool did start end on their own; their
                // stacks are the system's again only once they have.
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
    }
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct AnalysisOutput {
    pub findings: Vec<Finding>,
    pub errors: Vec<InputError>,
    pub skipped: BTreeMap<String, usize>,
    pub analyzed: usize,
    /// Consumers and producers, for the review checklist (docs/review.md).
    pub inventory: inventory::Inventory,
    /// Function bodies of parsed files left unparsed (`lazy`).
    pub unparsed_bodies: usize,
    /// The most crates analyzed at one time (the memory budget admits them).
    pub peak_crates: usize,
    /// Crates whose result was read from the per-crate cache (`crate_cache`).
    pub crates_cached: usize,
}

fn prefilter(apis: &Apis) -> AhoCorasick {
    let mut pats: Vec<&str> = apis
        .tokens
        .iter()
        .map(String::as_str)
        .filter(|t| !apis.common.iter().any(|c| c == t) && t.len() >= 4)
        .collect();
    pats.extend(apis.modules.iter().map(String::as_str));
    AhoCorasick::builder()
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .build(pats)
        .expect("prefilter patterns are valid")
}

/// How much dependency code a crate is analyzed with (docs/what-is-analyzed.md): its dependencies'
/// files that name an API, up to this multiple of its own size plus
/// [`LINK_BUDGET_BYTES`]; a dependency past the budget is left unlinked (calls into
/// it are calls into another crate). Each crate re-reads its dependencies, so this
/// bounds the cost of a workspace to about twice its own.
pub const LINK_BUDGET_RATIO: usize = 1;
pub const LINK_BUDGET_BYTES: usize = 256 * 1024;

/// A crate's key, its Rust files, and which of them name an API (`None`: no prefilter).
type CrateWork<'a> = (&'a str, Vec<&'a SourceFile>, Option<Vec<bool>>);

pub fn analyze(input: &AnalysisInput) -> AnalysisOutput {
    let mut out = AnalysisOutput::default();
    let Sorted {
        crates,
        yaml_files,
        unique_tables,
        included,
    } = sort_files(input.files, input.apis, &mut out);
    let pool = input.pool;
    let crates = without_test_modules(pool, input.include_tests, crates, &mut out);
    let api_filter = prefilter(input.apis);
    let link::Composed {
        crates,
        roots,
        own_files,
    } = link::compose(input, &crates, &api_filter);
    let seeds = input.prefilter.then(|| seeds::Seeds::new(input.apis));
    let lexicon = input.prefilter.then(|| lazy::Lexicon::new(input.apis));
    let work = crate_work(input, crates, seeds.as_ref(), &own_files, &mut out);

    let bar = progress_bar(
        input.progress,
        schedule::progress_total(&work, yaml_files.len()),
    );
    let shared = schedule::Shared {
        unique_tables: &unique_tables,
        included: &included,
        roots: &roots,
        lexicon: lexicon.as_ref(),
    };
    let (results, peak, cached) = schedule::run_crates(input, &work, &shared, &bar);
    out.crates_cached = cached;
    if let Some(store) = input.crate_store {
        store.evict();
    }
    out.peak_crates = peak;
    let yaml_results = merge::lower_yaml(pool, &yaml_files, &bar);
    bar.finish_and_clear();
    let mut crate_facts = merge::crate_results(results, input.targets, &mut out);
    // A dependency's defect is found by its own crate's analysis and again from each
    // crate that uses it: one finding (docs/what-is-analyzed.md, unique by code and primary span),
    // with the labels of all.
    dedup_findings(&mut out.findings);
    let yaml_facts = merge::yaml_results(yaml_results, &mut out);
    // Unknown topics link YAML clients within their directory (docs/what-is-analyzed.md,
    // read_committed for transactional topics).
    crate_facts.clients.extend(
        yaml_facts
            .config_clients
            .iter()
            .map(|c| (c.dir.clone(), c.client.clone())),
    );
    out.findings.extend(crate::rules::check_tree(
        &crate::rules::TreeInput {
            crates: &crate_facts.retention,
            clients: &crate_facts.clients,
            windows: &yaml_facts.windows,
            stages: &yaml_facts.stages,
            config_clients: &yaml_facts.config_clients,
            mappings: &yaml_facts.mappings,
            handlers: &crate_facts.handlers,
        },
        input.running,
    ));
    // A Spring profile's client inherits settings of the default document's: both
    // may report the one setting (unique by code and primary span).
    dedup_findings(&mut out.findings);
    // Serverless consumers: the deploy file's event sources that run them.
    out.inventory
        .link_event_sources(&yaml_facts.mappings, &crate_facts.handlers);
    out
}

/// The input files by kind: Rust files by crate, the YAML files worth parsing, and
/// what the SQL files say.
struct Sorted<'a> {
    crates: BTreeMap<&'a str, Vec<&'a SourceFile>>,
    yaml_files: Vec<&'a SourceFile>,
    /// Tables with a unique business key (sorted, without repeats).
    unique_tables: Vec<String>,
    /// The SQL files `include_str!` may name.
    included: rust::text::Included<'a>,
}

/// Sorts the input files by kind; counts the YAML files skipped and the SQL files read.
fn sort_files<'a>(
    files: &'a [SourceFile],
    apis: &crate::apis::Apis,
    out: &mut AnalysisOutput,
) -> Sorted<'a> {
    // The methods making a collection that names its table (`db.collection("orders")`),
    // for the unique indexes created on one.
    let makers: Vec<String> = apis
        .methods
        .iter()
        .filter(|(_, specs)| specs.iter().any(|c| c.sql.as_deref() == Some("table")))
        .map(|(m, _)| m.clone())
        .collect();
    let mut crates: BTreeMap<&str, Vec<&SourceFile>> = BTreeMap::new();
    let mut yaml_files = Vec::new();
    let mut unique_tables: Vec<String> = Vec::new();
    // The SQL files `include_str!` may name.
    let included = rust::text::Included::new(
        files
            .iter()
            .filter(|f| f.kind == FileKind::Sql)
            .map(|f| (f.abs.as_path(), f.text.as_str())),
    );
    for f in files {
        match f.kind {
            FileKind::Rust => {
                // A schema kept in the code (migrations run from string literals).
                unique_tables.extend(rust::schema_literals::unique_keyed_tables(&f.text));
                // A document store's unique index (`IndexOptions::builder().unique(true)`).
                unique_tables.extend(rust::schema_literals::unique_indexed_tables(
                    &f.text,
                    &apis.unique_indexes,
                    &makers,
                ));
                crates.entry(f.crate_key.as_str()).or_default().push(f)
            }
            FileKind::Yaml
                if yaml::is_relevant(&f.text)
                    || yaml::topics::is_relevant(&f.text)
                    || yaml::pipeline::is_relevant(&f.path, &f.text) =>
            {
                yaml_files.push(f)
            }
            FileKind::Yaml => {
                *out.skipped.entry("no_relevant_tokens".into()).or_default() += 1;
            }
            // Schemas and migrations: which tables have a unique business key
            // (non-idempotent effects).
            FileKind::Sql => {
                let keyed = crate::frontend::rust::sql::unique_keyed_tables(&f.text);
                unique_tables.extend(keyed);
                out.analyzed += 1;
            }
        }
    }
    unique_tables.sort();
    unique_tables.dedup();
    Sorted {
        crates,
        yaml_files,
        unique_tables,
        included,
    }
}

/// Test modules declared out of line are test code like inline ones: left out of
/// each crate (on the pool) before crates are composed with their dependencies.
fn without_test_modules<'a>(
    pool: &rayon::ThreadPool,
    include_tests: bool,
    crates: BTreeMap<&'a str, Vec<&'a SourceFile>>,
    out: &mut AnalysisOutput,
) -> BTreeMap<&'a str, Vec<&'a SourceFile>> {
    let filtered: Vec<(&str, Vec<&SourceFile>, usize)> = pool.install(|| {
        crates
            .into_par_iter()
            .map(|(key, files)| {
                let n = files.len();
                let files = if include_tests {
                    files
                } else {
                    cpu::timed(cpu::Phase::Lexical, || rust::without_test_modules(files))
                };
                let tests = n - files.len();
                (key, files, tests)
            })
            .collect()
    });
    let test_files: usize = filtered.iter().map(|(_, _, n)| n).sum();
    if test_files > 0 {
        *out.skipped.entry("test_modules".into()).or_default() += test_files;
    }
    filtered.into_iter().map(|(k, f, _)| (k, f)).collect()
}

/// The crates to analyze, with which of their files name an API (`None`: all are
/// parsed), marked on the pool; a crate whose own files name none is skipped.
fn crate_work<'a>(
    input: &AnalysisInput,
    crates: BTreeMap<&'a str, Vec<&'a SourceFile>>,
    seeds: Option<&seeds::Seeds>,
    own_files: &BTreeMap<&str, usize>,
    out: &mut AnalysisOutput,
) -> Vec<CrateWork<'a>> {
    let crates: Vec<CrateWork> = input.pool.install(|| {
        crates
            .into_par_iter()
            .map(|(key, files)| {
                // A dependency's files are parsed only as far as the crate's own code
                // needs them (its own crate's analysis seeds from them).
                let named = seeds.map(|seeds| {
                    let imports = seeds::imports(key, input.uses, input.deps);
                    cpu::timed(cpu::Phase::Lexical, || {
                        files
                            .iter()
                            .map(|f| f.crate_key == key && seeds.names_api(&f.text, &imports))
                            .collect()
                    })
                });
                (key, files, named)
            })
            .collect()
    });
    let mut work = Vec::new();
    for (key, files, named) in crates {
        if named
            .as_ref()
            .is_some_and(|n: &Vec<bool>| !n.contains(&true))
        {
            *out.skipped.entry("no_relevant_tokens".into()).or_default() +=
                own_files.get(key).copied().unwrap_or(files.len());
            continue;
        }
        work.push((key, files, named));
    }
    work
}

/// `MSGAUDIT_DEBUG_IR=name` prints the model of the functions so named (development aid).
fn print_ir(krate: &crate::ir::Crate, name: &str) {
    for f in krate.functions.iter().filter(|f| f.name.contains(name)) {
        eprintln!("{} ({}):\n{:#?}", f.name, f.loc.path, f.body);
    }
}

/// A function with too many paths, named where it is declared.
fn over_budget_error((name, loc): (String, crate::ir::Loc)) -> InputError {
    InputError {
        path: loc.path.to_string(),
        line: Some(loc.span.line),
        column: Some(loc.span.column),
        message: format!(
            "{} has too many paths to analyze within the per-function budget \
             ({} steps); not analyzed",
            crate::diagnostic::quoted(&name),
            flow::MAX_WORK_PER_ENTRY
        ),
    }
}

/// The Kafka clients of the crate's own functions, each with the package they link in,
/// and the topics they send to.
fn kafka_clients(krate: &crate::ir::Crate, package: &str) -> Vec<(String, crate::ir::KafkaClient)> {
    let mut clients: Vec<(String, crate::ir::KafkaClient)> = krate
        .functions
        .iter()
        .filter(|f| !f.dependency)
        .flat_map(|f| f.kafka_clients.iter().cloned())
        .map(|c| (package.to_string(), c))
        .collect();
    // The crate's one producer (of a kind) sends the records the crate sends.
    let sent: Vec<String> = krate
        .functions
        .iter()
        .filter(|f| !f.dependency)
        .flat_map(|f| f.kafka_sent_topics.iter().cloned())
        .collect();
    attribute_sent_topics(&mut clients, &sent);
    clients
}

/// Merges the findings with one code and primary span into the first, with the
/// labels of all (bounded again).
fn dedup_findings(findings: &mut Vec<Finding>) {
    let mut first: foldhash::HashMap<(&'static str, String, crate::diagnostic::Span), usize> =
        Default::default();
    let mut keep = Vec::with_capacity(findings.len());
    for f in std::mem::take(findings) {
        match first.get(&(f.code, f.path.clone(), f.span)) {
            Some(&i) => {
                let into: &mut Finding = &mut keep[i];
                for l in f.labels {
                    if !into
                        .labels
                        .iter()
                        .any(|x| x.path == l.path && x.span == l.span)
                    {
                        into.labels.push(l);
                    }
                }
                into.labels.sort();
                into.bound_labels();
            }
            None => {
                first.insert((f.code, f.path.clone(), f.span), keep.len());
                keep.push(f);
            }
        }
    }
    *findings = keep;
}

/// A progress bar on stderr, or a hidden one: drawn at most a few times a second.
fn progress_bar(show: bool, len: u64) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(len),
        indicatif::ProgressDrawTarget::stderr_with_hz(4),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} analyzing: {pos}/{len} files {wide_bar} {elapsed}",
    ) {
        bar.set_style(style);
    }
    bar
}

/// Counts units of work done (files) when dropped (also when the work panicked).
struct Tick<'a>(&'a indicatif::ProgressBar, u64);

impl Drop for Tick<'_> {
    fn drop(&mut self) {
        self.0.inc(self.1);
    }
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
struct CrateResult {
    /// The crate's key and its dedup retention facts (the dedup window against the
    /// replay window).
    key: String,
    retention: crate::ir::RetentionFacts,
    findings: Vec<Finding>,
    inventory: inventory::Inventory,
    /// Kafka clients, for linking consumers and producers across the tree
    /// (read_committed for transactional topics).
    clients: Vec<(String, crate::ir::KafkaClient)>,
    /// Serverless batch handlers, each with its crate key (for its binary's names).
    handlers: Vec<(String, crate::ir::BatchHandler)>,
    errors: Vec<InputError>,
    analyzed: usize,
    skipped_tests: usize,
    /// Files the prefilter left unparsed.
    unparsed: usize,
    /// Function bodies of parsed files it left unparsed.
    unparsed_bodies: usize,
}

fn analyze_crate(
    key: &str,
    files: &[&SourceFile],
    unique_tables: &[String],
    cancel: &std::sync::atomic::AtomicBool,
    running: &dyn Fn(&str) -> bool,
    inputs: rust::Inputs,
    prefilter: Option<Prefilter>,
) -> CrateResult {
    let apis = inputs.apis;
    let (mut lowered, unparsed) = lower_needed(key, files, inputs, prefilter);
    // Parsing and lowering are most of a crate's time: a cancelled run stops here.
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        return CrateResult::default();
    }
    // The system refused memory while this crate was read: its trees are dropped and
    // its files named (the reserve given back keeps the rest of the run going).
    if crate::support::alloc::exhausted() {
        drop(lowered);
        return not_analyzed(key, files, OUT_OF_MEMORY);
    }
    // The crate's own files; the others are its dependencies' (docs/what-is-analyzed.md): their
    // functions are followed into but are not entries here, and what they define
    // (consumers, clients, errors, counts) is their own crate's to report.
    let own: std::collections::HashSet<&str> = files
        .iter()
        .filter(|f| f.crate_key == key)
        .map(|f| f.path.as_str())
        .collect();
    let linked = own.len() < files.len();
    // Clients and retention link within the package (an example or a binary is a crate
    // of its own, but configured beside the package's library).
    let package = files
        .first()
        .map_or_else(|| key.to_string(), |f| f.package_key.clone());
    // `MSGAUDIT_CHECK_PREFILTER=1` lowers the whole crate too and reports on stderr
    // every function modeled differently (development aid for the prefilter's
    // exactness, stronger than comparing findings).
    if let Some(p) = prefilter.filter(|_| inputs.hooks.check_prefilter) {
        check_prefilter(key, files, p.named, inputs, &lowered.krate, &unparsed);
    }
    if let Some(name) = &inputs.hooks.debug_ir {
        print_ir(&lowered.krate, name);
    }
    if linked {
        for f in &mut lowered.krate.functions {
            f.dependency = !own.contains(&*f.loc.path);
        }
    }
    // Client configurations built in helpers, applied where the helpers are called.
    crate::analysis::kafka_clients::apply_config_helpers(&mut lowered.krate);
    crate::analysis::kafka_clients::apply_factory_topics(&mut lowered.krate);
    let tables = flow::Tables {
        dedup: apis.dedup_tables.clone(),
        outbox: apis.outbox_tables.clone(),
        unique: unique_tables.to_vec(),
    };
    let (findings, inventory, over_budget, claim_tables) = cpu::timed(cpu::Phase::Rules, || {
        let mut facts = flow::crate_facts(&lowered.krate, &tables, &crate::rules::path_policy());
        let findings = crate::rules::check_crate(
            &crate::rules::CrateInput {
                krate: &lowered.krate,
                facts: &facts,
            },
            running,
        );
        crate::rules::keep_reported(&mut facts);
        let inventory = inventory::crate_inventory(&inventory::CrateInput {
            krate: &lowered.krate,
            facts: &facts,
            tables: &tables,
            apis,
            retention: &lowered.retention,
        });
        let claims = std::mem::take(&mut facts.claim_tables);
        (
            findings,
            inventory,
            std::mem::take(&mut facts.over_budget),
            claims,
        )
    });
    // Which tables the crate claims into: a cleanup of one of them is a dedup store's.
    lowered.retention.claim_tables = claim_tables.into_iter().collect();
    let mut inventory = inventory;
    let mut errors = lowered.errors;
    let mut analyzed = lowered.analyzed;
    let mut unparsed_files = unparsed.files;
    let mut skipped_tests = lowered.skipped_tests;
    if linked {
        let is_own = |l: &Option<crate::ir::Loc>| l.as_ref().is_none_or(|l| own.contains(&*l.path));
        inventory.consumers.retain(|c| is_own(&c.loc));
        inventory.producers.retain(|p| is_own(&p.loc));
        errors.retain(|e| own.contains(e.path.as_str()));
        // The counts are of its own files; its dependencies' are theirs.
        let own_lowered: Vec<usize> = lowered
            .lowered
            .iter()
            .filter(|(p, _)| own.contains(p.as_str()))
            .map(|(_, n)| *n)
            .collect();
        skipped_tests = own_lowered.iter().sum();
        analyzed = own_lowered.len();
        let refused: std::collections::HashSet<&str> =
            errors.iter().map(|e| e.path.as_str()).collect();
        unparsed_files = own.len().saturating_sub(analyzed + refused.len());
    }
    // A function with too many paths is named where it is declared (its file was
    // analyzed: the rest of it is reported).
    errors.extend(over_budget.into_iter().map(over_budget_error));
    let clients = kafka_clients(&lowered.krate, &package);
    let own_files: Vec<&SourceFile> = files
        .iter()
        .copied()
        .filter(|f| f.crate_key == key)
        .collect();
    let handlers = rust::lambda::batch_handlers(&own_files, apis)
        .into_iter()
        .map(|h| (key.to_string(), h))
        .collect();
    CrateResult {
        handlers,
        key: package,
        retention: lowered.retention,
        findings,
        inventory,
        clients,
        errors,
        analyzed,
        skipped_tests,
        unparsed: unparsed_files,
        unparsed_bodies: unparsed.bodies.len(),
    }
}

/// Why crates are left out once the system has refused memory.
const OUT_OF_MEMORY: &str = "not analyzed: the system refused memory during the run, so the \
                             crates not yet analyzed were left out (see `--jobs` and the memory \
                             budget in docs/bad-input.md)";

/// A crate left out (memory): each of its own files is named, so the report says
/// what was not analyzed.
fn not_analyzed(key: &str, files: &[&SourceFile], why: &str) -> CrateResult {
    let errors = files
        .iter()
        .filter(|f| f.crate_key == key)
        .map(|f| InputError {
            path: f.path.clone(),
            line: None,
            column: None,
            message: why.to_string(),
        })
        .collect();
    CrateResult {
        errors,
        ..CrateResult::default()
    }
}

fn internal_error(files: &[&SourceFile], panic: Box<dyn std::any::Any + Send>) -> CrateResult {
    let what = crate::diagnostic::panic_message(&*panic);
    let errors = files
        .iter()
        .take(1)
        .map(|f| InputError {
            path: f.path.clone(),
            line: None,
            column: None,
            message: format!(
                "internal error while analyzing the crate of this file ({} files not analyzed): {what}; please report",
                files.len()
            ),
        })
        .collect();
    CrateResult {
        errors,
        ..CrateResult::default()
    }
}

/// Topics sent by code that does not show which producer it uses (a producer held
/// in a field, passed as a parameter) belong to the crate's only producer whose own
/// topics are unknown, preferring its only transactional one.
fn attribute_sent_topics(clients: &mut [(String, crate::ir::KafkaClient)], sent: &[String]) {
    if sent.is_empty() {
        return;
    }
    use crate::analysis::kafka_clients::is_producer;
    let candidates: Vec<usize> = (0..clients.len())
        .filter(|&i| is_producer(&clients[i].1) && clients[i].1.topics.is_empty())
        .collect();
    let transactional: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&i| clients[i].1.prop("transactional.id").is_some())
        .collect();
    let target = match (transactional.as_slice(), candidates.as_slice()) {
        ([t], _) => Some(*t),
        ([], [c]) => Some(*c),
        _ => None,
    };
    if let Some(t) = target {
        let topics = &mut clients[t].1.topics;
        for s in sent {
            if !topics.contains(s) {
                topics.push(s.clone());
            }
        }
    }
}
