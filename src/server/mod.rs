//! `msgaudit server`: a language server over stdio (LSP), built on rust-analyzer's
//! `lsp-server` and `lsp-types`.
//!
//! The server analyzes the workspace root (the first workspace folder, else the root
//! URI; without either, the crate of the first opened file, its nearest directory
//! with a `Cargo.toml` below any repository root, else that file alone) with
//! [`crate::check`], the function behind
//! `msgaudit check`, with the editor's unsaved buffers of Rust and YAML files as an
//! overlay ([`crate::source::Overlay`]): what it publishes is what `msgaudit check
//! ROOT` prints for the same texts, `msgaudit.toml` included.
//!
//! - Analyses run on a worker thread; the main loop keeps answering requests (hover
//!   and code actions read the last published report). An edit made while an analysis
//!   runs makes its result stale: it is dropped, and the next run (which takes the
//!   newest texts) is published; the run itself stops after the crate it is
//!   lowering (`Options::cancel`), so that the newer one starts sooner.
//! - `didOpen` starts a run at once, `didChange` after a quiet period (`debounceMs`,
//!   default 200 ms); `didSave` cuts the quiet period short, and saving a buffer that
//!   the last run had as it is starts nothing (that run's result stands). `didClose`
//!   drops the buffer (the file is read from disk again). Requests are answered at
//!   once, in order, so `$/cancelRequest` never finds one to cancel.
//! - Every file with findings gets them (a finding of a handler may sit in a file
//!   that is not open); files that no longer have any are cleared.
//!
//! `initializationOptions`: `debounceMs` (number), `rulesUrl` (each diagnostic's code
//! link: by default the rule's published page, [`crate::rules::RuleMeta::doc_url`],
//! the URL that SARIF's `helpUri` and the checklist give too; a URL template with
//! `{code}` and `{name}` for other documentation; or `local`, for a local Markdown
//! file of the rule's `msgaudit explain` text that opens without a network, see
//! [`ServerOptions::docs_dir`]). Hover shows the same text in any case.

mod actions;
pub mod convert;
mod fixes;
pub mod transport;
mod worker;

use worker::{worker, Job, Outcome};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{select, Receiver, Sender};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types as lsp;
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use serde_json::Value;

use crate::diagnostic::{Finding, InputError, Severity};
use crate::report::Report;
use crate::source::{FileKind, Overlay};
use convert::Encoding;

/// What the binary decides for the server (the client decides the rest, in
/// `initializationOptions`).
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// A directory to write each rule's documentation to (`MA0NN.md`, the text of
    /// `msgaudit explain`), linked from each diagnostic's code when the client asks
    /// for local pages (`rulesUrl: "local"`); `None`: such a client gets no link.
    pub docs_dir: Option<PathBuf>,
    /// Threads for each analysis (`--jobs`); `None`: one per core.
    pub jobs: Option<usize>,
    /// Read and write the analysis cache `check` uses (`.msgaudit_cache/`), keyed by
    /// the texts analyzed, unsaved buffers included: an edit re-analyzes the edited
    /// crate and the crates it is linked into, and reads the others back.
    pub cache: bool,
}

/// The `rulesUrl` that links each code to a local page ([`ServerOptions::docs_dir`]).
const LOCAL_RULES: &str = "local";

/// Settings from the client's `initializationOptions`.
#[derive(Clone, Debug)]
struct Settings {
    debounce: Duration,
    rules_url: Option<String>,
}

impl Settings {
    fn from(options: Option<&Value>) -> Settings {
        let get = |key: &str| options.and_then(|o| o.get(key));
        Settings {
            debounce: Duration::from_millis(
                get("debounceMs").and_then(Value::as_u64).unwrap_or(200),
            ),
            rules_url: get("rulesUrl")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|u| !u.is_empty())
                .map(str::to_string),
        }
    }
}

/// An open document.
struct Doc {
    uri: lsp::Uri,
    version: i32,
    text: String,
}

/// The last analysis published, for hover and code actions.
#[derive(Default)]
struct Published {
    report: Report,
    /// Path of each finding's file -> indexes into `report.findings`.
    by_path: HashMap<PathBuf, Vec<usize>>,
    /// URIs that carry diagnostics now.
    uris: HashSet<String>,
}

struct Server {
    /// The analyzed directory; `None` until a file is opened when the client gave no
    /// root.
    root: Option<PathBuf>,
    encoding: Encoding,
    settings: Settings,
    docs_dir: Option<PathBuf>,
    docs: HashMap<PathBuf, Doc>,
    edits: u64,
    /// When the next run starts (`didChange` waits for a quiet period).
    deadline: Option<Instant>,
    jobs: Sender<Job>,
    /// The versions of the open documents in the last job sent.
    sent: HashMap<PathBuf, i32>,
    /// The last job's cancellation flag.
    running: Option<Arc<AtomicBool>>,
    /// `shutdown` was answered: only `exit` is awaited.
    shut_down: bool,
    published: Published,
}

/// What saving an open Rust or YAML document does.
#[derive(Debug, PartialEq, Eq)]
enum OnSave {
    /// A run, at once (the buffer changed since the last run, which may be stale).
    Run,
    /// The run that waits for the quiet period starts at once.
    Now,
    /// Nothing: the last run had the buffer as it is (its result stands, or is coming).
    Nothing,
}

/// [`OnSave`] for a document at `version`, given whether a run waits for the quiet
/// period and the document's version in the last run sent (`None`: not in it).
fn on_save(waiting: bool, sent: Option<i32>, version: i32) -> OnSave {
    if waiting {
        OnSave::Now
    } else if sent == Some(version) {
        OnSave::Nothing
    } else {
        OnSave::Run
    }
}

/// Runs the server on `connection` until `shutdown` and `exit`, or until the client
/// goes away.
pub fn run(
    connection: Connection,
    options: ServerOptions,
) -> Result<(), Box<dyn Error + Send + Sync>> {
    // An `initialize` whose params are not InitializeParams is refused; the client
    // may send another.
    let (id, params) = loop {
        let (id, params) = connection.initialize_start()?;
        match serde_json::from_value::<lsp::InitializeParams>(params) {
            Ok(params) => break (id, params),
            Err(e) => connection.sender.send(invalid(id, e).into())?,
        }
    };
    let encoding = Encoding::negotiate(
        params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_deref()),
    );
    let root = root_of(&params);
    let settings = Settings::from(params.initialization_options.as_ref());
    let result = lsp::InitializeResult {
        capabilities: capabilities(encoding),
        server_info: Some(lsp::ServerInfo {
            name: "msgaudit".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
    };
    connection.initialize_finish(id, serde_json::to_value(result)?)?;
    let watch = params
        .capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|d| d.dynamic_registration)
        == Some(true);
    if watch {
        watch_files(&connection)?;
    }

    // The local pages are written only for a client that links to them.
    let docs_dir = match settings.rules_url.as_deref() {
        Some(LOCAL_RULES) => options.docs_dir.as_deref().and_then(write_rule_docs),
        _ => None,
    };
    let (job_tx, job_rx) = crossbeam_channel::unbounded();
    let (out_tx, out_rx) = crossbeam_channel::unbounded();
    let (jobs, cache) = (options.jobs, options.cache);
    // The stack of the analysis threads: `check` does its work on its own pool, but
    // whatever runs on the calling thread gets as much room as there.
    let worker = std::thread::Builder::new()
        .name("msgaudit-analysis".into())
        .stack_size(crate::support::STACK_SIZE)
        .spawn(move || worker(jobs, cache, job_rx, out_tx))?;
    let mut server = Server {
        // Analyzed at once when known; else from the first opened file.
        deadline: root.is_some().then(Instant::now),
        root,
        encoding,
        settings,
        docs_dir,
        docs: HashMap::new(),
        edits: 0,
        jobs: job_tx,
        sent: HashMap::new(),
        running: None,
        shut_down: false,
        published: Published::default(),
    };
    let result = server.main_loop(&connection, &out_rx);
    // A run in progress is cancelled (see `main_loop`) and not waited for: the
    // worker ends when it sees its job channel closed, and the binary exits without
    // waiting for it, so that `exit` ends the process at once.
    drop(server);
    drop(worker);
    result
}

/// The workspace root the client gives: the first workspace folder, else the root
/// URI, else the root path; canonical when it exists. The file system root is no
/// workspace (an editor started on a single file may give it, or its working
/// directory): `None` then.
fn root_of(params: &lsp::InitializeParams) -> Option<PathBuf> {
    #[allow(deprecated)]
    let given = params
        .workspace_folders
        .as_ref()
        .and_then(|f| f.first())
        .and_then(|f| convert::uri_to_path(&f.uri))
        .or_else(|| params.root_uri.as_ref().and_then(convert::uri_to_path))
        .or_else(|| params.root_path.as_ref().map(PathBuf::from))?;
    let root = std::fs::canonicalize(&given).unwrap_or(given);
    (root.parent().is_some()).then_some(root)
}

/// The files whose changes on disk (a `git checkout`, another program) change the
/// findings: sources, schemas, manifests and the config.
pub const WATCHED: [&str; 3] = [
    "**/*.{rs,yml,yaml,sql}",
    "**/msgaudit.toml",
    "**/Cargo.toml",
];

/// Asks the client to report changes of the [`WATCHED`] files
/// (`workspace/didChangeWatchedFiles`, each starting a run). Its answer needs no
/// handling.
fn watch_files(connection: &Connection) -> Result<(), Box<dyn Error + Send + Sync>> {
    let options = lsp::DidChangeWatchedFilesRegistrationOptions {
        watchers: WATCHED
            .iter()
            .map(|glob| lsp::FileSystemWatcher {
                glob_pattern: lsp::GlobPattern::String(glob.to_string()),
                kind: None,
            })
            .collect(),
    };
    let params = lsp::RegistrationParams {
        registrations: vec![lsp::Registration {
            id: "msgaudit-watched-files".into(),
            method: lsp::notification::DidChangeWatchedFiles::METHOD.into(),
            register_options: Some(serde_json::to_value(options)?),
        }],
    };
    connection.sender.send(
        Request::new(
            RequestId::from("msgaudit-watch".to_string()),
            lsp::request::RegisterCapability::METHOD.into(),
            params,
        )
        .into(),
    )?;
    Ok(())
}

/// What to analyze for a file opened without a workspace: its crate, the nearest
/// directory above it with a `Cargo.toml`, looked for no higher than a repository
/// root (a directory with `.git`) and never at the file system root; without one,
/// the file alone (opening `/tmp/h.rs` never analyzes all of `/tmp`).
fn root_for_file(path: &Path) -> Option<PathBuf> {
    let dir = path.parent()?;
    for d in dir.ancestors() {
        if d.parent().is_none() {
            break;
        }
        if d.join("Cargo.toml").is_file() {
            return Some(d.to_path_buf());
        }
        if d.join(".git").exists() {
            break;
        }
    }
    Some(path.to_path_buf())
}

fn capabilities(encoding: Encoding) -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        position_encoding: Some(encoding.kind()),
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::FULL),
                save: Some(lsp::TextDocumentSyncSaveOptions::SaveOptions(
                    lsp::SaveOptions {
                        include_text: Some(false),
                    },
                )),
                ..lsp::TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
            lsp::CodeActionOptions {
                code_action_kinds: Some(vec![
                    lsp::CodeActionKind::QUICKFIX,
                    lsp::CodeActionKind::new(fixes::FIX_ALL),
                ]),
                ..lsp::CodeActionOptions::default()
            },
        )),
        ..lsp::ServerCapabilities::default()
    }
}

/// Writes `MA0NN.md` … for every rule into `dir` (unless already there with the same
/// text); `Some(dir)` when they are all there.
fn write_rule_docs(dir: &Path) -> Option<PathBuf> {
    std::fs::create_dir_all(dir).ok()?;
    let dir = std::fs::canonicalize(dir).ok()?;
    for rule in crate::rules::ALL.iter() {
        let path = dir.join(format!("{}.md", rule.code));
        let text = crate::emit::explain(rule);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        // Write beside, then rename: a reader never sees half a file.
        let tmp = dir.join(format!(".{}.md.{}", rule.code, std::process::id()));
        std::fs::write(&tmp, &text).ok()?;
        std::fs::rename(&tmp, &path).ok()?;
    }
    Some(dir)
}

/// `path` made canonical; when it does not exist, its nearest existing ancestor is,
/// and the rest is kept as written.
fn canonical(path: PathBuf) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(&path) {
        return real;
    }
    for dir in path.ancestors().skip(1) {
        if let (Ok(real), Ok(rest)) = (std::fs::canonicalize(dir), path.strip_prefix(dir)) {
            return real.join(rest);
        }
    }
    path
}

/// The kind of a file the server tracks buffers of.
fn tracked_kind(path: &Path) -> Option<FileKind> {
    match FileKind::from_path(path)? {
        FileKind::Sql => None,
        k => Some(k),
    }
}

impl Server {
    fn main_loop(
        &mut self,
        connection: &Connection,
        outcomes: &Receiver<Outcome>,
    ) -> Result<(), Box<dyn Error + Send + Sync>> {
        loop {
            let timer = match self.deadline {
                Some(d) => crossbeam_channel::at(d),
                None => crossbeam_channel::never(),
            };
            select! {
                recv(connection.receiver) -> msg => {
                    let Ok(msg) = msg else {
                        self.cancel_run();
                        return Ok(());
                    };
                    match msg {
                        Message::Request(req) => {
                            // After `shutdown`, only `exit` is expected; whatever
                            // else comes is refused or ignored, not fatal.
                            let response = if self.shut_down {
                                Response::new_err(
                                    req.id,
                                    ErrorCode::InvalidRequest as i32,
                                    "the server is shut down".into(),
                                )
                            } else if req.method == lsp::request::Shutdown::METHOD {
                                self.shut_down = true;
                                self.deadline = None;
                                self.cancel_run();
                                Response::new_ok(req.id, ())
                            } else {
                                self.on_request(req)
                            };
                            connection.sender.send(response.into())?;
                        }
                        Message::Notification(n) => {
                            if n.method == lsp::notification::Exit::METHOD {
                                self.cancel_run();
                                return Ok(());
                            }
                            if !self.shut_down {
                                self.on_notification(n);
                            }
                        }
                        Message::Response(_) => {}
                    }
                }
                recv(outcomes) -> outcome => {
                    if let Ok(outcome) = outcome {
                        if !self.shut_down {
                            self.on_outcome(connection, outcome)?;
                        }
                    }
                }
                recv(timer) -> _ => {
                    self.deadline = None;
                    self.start_run();
                }
            }
        }
    }

    /// Sends the worker a job with the current buffers.
    fn start_run(&mut self) {
        let Some(root) = self.root.clone() else {
            return;
        };
        let mut overlay = Overlay::new();
        let mut versions = HashMap::new();
        for (path, doc) in &self.docs {
            overlay.insert(path.clone(), doc.text.clone());
            versions.insert(path.clone(), doc.version);
        }
        self.sent = versions.clone();
        let cancel = Arc::new(AtomicBool::new(false));
        self.running = Some(cancel.clone());
        let _ = self.jobs.send(Job {
            root,
            edits: self.edits,
            overlay: Arc::new(overlay),
            versions,
            cancel,
        });
    }

    /// Stops the run under way, if any, early (its result is no longer wanted).
    fn cancel_run(&mut self) {
        if let Some(cancel) = self.running.take() {
            cancel.store(true, Ordering::Relaxed);
        }
    }

    /// A run at once, or after the quiet period.
    fn schedule(&mut self, now: bool) {
        self.edits += 1;
        // The run under way analyzes texts that are no longer the editor's: its
        // result would be dropped, so it stops early.
        self.cancel_run();
        let at = if now {
            Instant::now()
        } else {
            Instant::now() + self.settings.debounce
        };
        self.deadline = Some(match self.deadline {
            Some(d) if now => d.min(at),
            _ => at,
        });
    }

    fn on_notification(&mut self, n: Notification) {
        use lsp::notification as notif;
        match n.method.as_str() {
            notif::DidOpenTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp::DidOpenTextDocumentParams>(n.params)
                else {
                    return;
                };
                let Some(path) = self.doc_path(&p.text_document.uri) else {
                    return;
                };
                if self.root.is_none() {
                    self.root = root_for_file(&path);
                }
                self.docs.insert(
                    path,
                    Doc {
                        uri: p.text_document.uri,
                        version: p.text_document.version,
                        text: p.text_document.text,
                    },
                );
                self.schedule(true);
            }
            notif::DidChangeTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp::DidChangeTextDocumentParams>(n.params)
                else {
                    return;
                };
                let Some(path) = self.doc_path(&p.text_document.uri) else {
                    return;
                };
                let encoding = self.encoding;
                let Some(doc) = self.docs.get_mut(&path) else {
                    return;
                };
                for change in p.content_changes {
                    match change.range {
                        None => doc.text = change.text,
                        Some(r) => {
                            let start = convert::offset(&doc.text, r.start, encoding);
                            let end = convert::offset(&doc.text, r.end, encoding).max(start);
                            doc.text.replace_range(start..end, &change.text);
                        }
                    }
                }
                doc.version = p.text_document.version;
                self.schedule(false);
            }
            notif::DidSaveTextDocument::METHOD => {
                let doc = serde_json::from_value::<lsp::DidSaveTextDocumentParams>(n.params)
                    .ok()
                    .and_then(|p| self.doc_path(&p.text_document.uri))
                    .and_then(|path| Some((self.sent.get(&path).copied(), self.docs.get(&path)?)));
                let action = match doc {
                    Some((sent, doc)) => on_save(self.deadline.is_some(), sent, doc.version),
                    None => OnSave::Run,
                };
                match action {
                    OnSave::Run => self.schedule(true),
                    OnSave::Now => self.deadline = Some(Instant::now()),
                    OnSave::Nothing => {}
                }
            }
            notif::DidChangeWatchedFiles::METHOD => self.schedule(true),
            notif::DidCloseTextDocument::METHOD => {
                let Ok(p) = serde_json::from_value::<lsp::DidCloseTextDocumentParams>(n.params)
                else {
                    return;
                };
                if let Some(path) = self.doc_path(&p.text_document.uri) {
                    if self.docs.remove(&path).is_some() {
                        self.schedule(true);
                    }
                }
            }
            _ => {}
        }
    }

    /// The canonical path of a tracked document (a Rust or YAML file); of one not on
    /// disk (a new buffer never saved), its canonical directory's.
    fn doc_path(&self, uri: &lsp::Uri) -> Option<PathBuf> {
        let path = convert::uri_to_path(uri)?;
        tracked_kind(&path)?;
        Some(canonical(path))
    }

    fn on_request(&mut self, req: Request) -> Response {
        use lsp::request as r;
        let id = req.id.clone();
        match req.method.as_str() {
            r::HoverRequest::METHOD => match serde_json::from_value::<lsp::HoverParams>(req.params)
            {
                Ok(p) => ok(id, self.hover(&p)),
                Err(e) => invalid(id, e),
            },
            r::CodeActionRequest::METHOD => {
                match serde_json::from_value::<lsp::CodeActionParams>(req.params) {
                    Ok(p) => ok(id, self.code_actions(&p)),
                    Err(e) => invalid(id, e),
                }
            }
            _ => Response::new_err(
                id,
                ErrorCode::MethodNotFound as i32,
                format!("unknown request {}", req.method),
            ),
        }
    }

    fn on_outcome(
        &mut self,
        connection: &Connection,
        outcome: Outcome,
    ) -> Result<(), Box<dyn Error + Send + Sync>> {
        // Edited since the job was made: a newer run follows, with the newer texts.
        if outcome.edits != self.edits {
            return Ok(());
        }
        match outcome.result {
            Ok(report) => {
                let message = format!(
                    "msgaudit: {} findings, {} input errors in {} files analyzed, {} ms{}",
                    report.findings.len(),
                    report.errors.len(),
                    report.summary.analyzed,
                    outcome.elapsed.as_millis(),
                    cache_use(&report.timings),
                );
                self.publish(connection, report, &outcome.versions)?;
                notify::<lsp::notification::LogMessage>(
                    connection,
                    lsp::LogMessageParams {
                        typ: lsp::MessageType::INFO,
                        message,
                    },
                )?;
            }
            Err(e) => {
                let at = if e.path.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", e.path)
                };
                notify::<lsp::notification::ShowMessage>(
                    connection,
                    lsp::ShowMessageParams {
                        typ: lsp::MessageType::ERROR,
                        message: format!("msgaudit: {at}{}", e.message),
                    },
                )?;
            }
        }
        Ok(())
    }

    /// The URI to publish a file's diagnostics under: the client's own for an open
    /// document, else the file's.
    fn uri_of(&self, path: &Path) -> Option<lsp::Uri> {
        match self.docs.get(path) {
            Some(doc) => Some(doc.uri.clone()),
            None => convert::path_to_uri(path),
        }
    }

    fn publish(
        &mut self,
        connection: &Connection,
        report: Report,
        versions: &HashMap<PathBuf, i32>,
    ) -> Result<(), Box<dyn Error + Send + Sync>> {
        let mut by_path: HashMap<PathBuf, Vec<usize>> = HashMap::new();
        let mut diagnostics: BTreeMap<PathBuf, Vec<lsp::Diagnostic>> = BTreeMap::new();
        for (i, f) in report.findings.iter().enumerate() {
            let path = PathBuf::from(&f.path);
            by_path.entry(path.clone()).or_default().push(i);
            diagnostics
                .entry(path)
                .or_default()
                .push(self.diagnostic(&report, f));
        }
        for e in &report.errors {
            if e.path.is_empty() {
                continue;
            }
            diagnostics
                .entry(PathBuf::from(&e.path))
                .or_default()
                .push(self.error_diagnostic(&report, e));
        }
        let mut uris = HashSet::new();
        for (path, diagnostics) in diagnostics {
            let Some(uri) = self.uri_of(&path) else {
                continue;
            };
            uris.insert(uri.as_str().to_string());
            notify::<lsp::notification::PublishDiagnostics>(
                connection,
                lsp::PublishDiagnosticsParams {
                    uri,
                    diagnostics,
                    version: versions.get(&path).copied(),
                },
            )?;
        }
        // Files whose findings are gone.
        for stale in self.published.uris.difference(&uris) {
            let Ok(uri) = stale.parse::<lsp::Uri>() else {
                continue;
            };
            let version = convert::uri_to_path(&uri)
                .map(canonical)
                .and_then(|p| versions.get(&p).copied());
            notify::<lsp::notification::PublishDiagnostics>(
                connection,
                lsp::PublishDiagnosticsParams {
                    uri,
                    diagnostics: Vec::new(),
                    version,
                },
            )?;
        }
        self.published = Published {
            report,
            by_path,
            uris,
        };
        Ok(())
    }

    fn source<'a>(&self, report: &'a Report, path: &str) -> &'a str {
        report.sources.get(path).map_or("", String::as_str)
    }

    /// The link of a rule's code: the rule's published page (the URL of SARIF's
    /// `helpUri`), else `rulesUrl` filled in, or the rule's local page
    /// (`rulesUrl: "local"`).
    fn rule_link(&self, code: &str, name: &str) -> Option<lsp::Uri> {
        match self.settings.rules_url.as_deref() {
            None => crate::rules::lookup(code)?.doc_url().parse().ok(),
            Some(LOCAL_RULES) => {
                convert::path_to_uri(&self.docs_dir.as_ref()?.join(format!("{code}.md")))
            }
            Some(template) => template
                .replace("{code}", code)
                .replace("{name}", name)
                .parse()
                .ok(),
        }
    }

    fn diagnostic(&self, report: &Report, f: &Finding) -> lsp::Diagnostic {
        let text = self.source(report, &f.path);
        let mut message = f.message.clone();
        if !f.window.is_empty() {
            message.push_str(&format!("\nwindow: {}", f.window));
        }
        if !f.help.is_empty() {
            message.push_str(&format!("\nhelp: {}", f.help));
        }
        let related: Vec<lsp::DiagnosticRelatedInformation> = f
            .labels
            .iter()
            .filter_map(|l| {
                let uri = self.uri_of(Path::new(&l.path))?;
                let range = convert::range(self.source(report, &l.path), &l.span, self.encoding);
                Some(lsp::DiagnosticRelatedInformation {
                    location: lsp::Location::new(uri, range),
                    message: l.message.clone(),
                })
            })
            .collect();
        lsp::Diagnostic {
            range: convert::range(text, &f.span, self.encoding),
            severity: Some(match f.severity {
                Severity::Error => lsp::DiagnosticSeverity::ERROR,
                Severity::Warning => lsp::DiagnosticSeverity::WARNING,
            }),
            code: Some(lsp::NumberOrString::String(f.code.to_string())),
            code_description: self
                .rule_link(f.code, f.name)
                .map(|href| lsp::CodeDescription { href }),
            source: Some("msgaudit".into()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            tags: (f.code == crate::rules::UNUSED_SUPPRESSION.code)
                .then(|| vec![lsp::DiagnosticTag::UNNECESSARY]),
            data: None,
        }
    }

    fn error_diagnostic(&self, report: &Report, e: &InputError) -> lsp::Diagnostic {
        let text = self.source(report, &e.path);
        let line = e.line.unwrap_or(0);
        let column = e.column.unwrap_or(1);
        let at = convert::position(text, line, column, self.encoding);
        lsp::Diagnostic {
            range: lsp::Range::new(at, at),
            severity: Some(lsp::DiagnosticSeverity::ERROR),
            code: Some(lsp::NumberOrString::String("input-error".into())),
            source: Some("msgaudit".into()),
            message: e.message.clone(),
            ..lsp::Diagnostic::default()
        }
    }
}

fn ok<T: serde::Serialize>(id: RequestId, result: T) -> Response {
    Response::new_ok(id, result)
}

fn invalid(id: RequestId, e: serde_json::Error) -> Response {
    Response::new_err(id, ErrorCode::InvalidParams as i32, e.to_string())
}

fn notify<N: lsp::notification::Notification>(
    connection: &Connection,
    params: N::Params,
) -> Result<(), Box<dyn Error + Send + Sync>> {
    connection
        .sender
        .send(Notification::new(N::METHOD.to_string(), params).into())?;
    Ok(())
}

/// What the analysis cache gave a run, for the log: nothing when it went without it.
fn cache_use(t: &crate::report::Timings) -> String {
    match t.cache_hit {
        Some(true) => "; read from the analysis cache".into(),
        Some(false) => format!("; {} crates read from the per-crate cache", t.crates_cached),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saving_runs_only_when_the_last_run_had_another_text() {
        // Typing, then saving before the quiet period is over: the run starts now.
        assert_eq!(on_save(true, Some(3), 4), OnSave::Now);
        // Saving what the last run analyzed (running or done): nothing more to do.
        assert_eq!(on_save(false, Some(4), 4), OnSave::Nothing);
        // A buffer the last run did not have as it is now.
        assert_eq!(on_save(false, Some(3), 4), OnSave::Run);
        assert_eq!(on_save(false, None, 1), OnSave::Run);
    }
}
