//! `msgaudit server` over the protocol: an in-process client on lsp-server's memory
//! connection sends each request and notification and checks what comes back,
//! against `msgaudit::check` run on the same texts (the server and the CLI never
//! disagree). Waiting is bounded by a generous timeout that only guards against a
//! hang; no test measures time.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{json, Value};

use msgaudit::server::convert::path_to_uri;
use msgaudit::server::{run, ServerOptions};

/// How long a test waits for one message before it fails as hung.
const HANG: Duration = Duration::from_secs(300);

type ServerThread = JoinHandle<Result<(), Box<dyn std::error::Error + Send + Sync>>>;

struct Client {
    conn: Connection,
    server: Option<ServerThread>,
    next_id: i32,
    /// The client's view: URI -> the diagnostics last published for it.
    view: BTreeMap<String, Vec<Value>>,
    /// Every publishDiagnostics received: (uri, version, diagnostics).
    published: Vec<(String, Option<i64>, Vec<Value>)>,
    logs: usize,
    /// The text of each log message.
    log_lines: Vec<String>,
    /// Requests from the server (answered with `null`): (method, params).
    requests: Vec<(String, Value)>,
    _docs: tempfile::TempDir,
}

fn uri(path: &Path) -> String {
    path_to_uri(path).unwrap().as_str().to_string()
}

impl Client {
    fn start(root: &Path, capabilities: Value, options: Value) -> (Client, Value) {
        Client::start_with(Some(root), capabilities, options)
    }

    fn start_with(root: Option<&Path>, capabilities: Value, options: Value) -> (Client, Value) {
        Client::start_full(root, capabilities, options, false)
    }

    fn start_full(
        root: Option<&Path>,
        capabilities: Value,
        options: Value,
        cache: bool,
    ) -> (Client, Value) {
        let (server, client) = Connection::memory();
        let docs = tempfile::tempdir().unwrap();
        let server_options = ServerOptions {
            docs_dir: Some(docs.path().join("rules")),
            jobs: Some(2),
            cache,
        };
        let thread = std::thread::spawn(move || run(server, server_options));
        let mut c = Client {
            conn: client,
            server: Some(thread),
            next_id: 0,
            view: BTreeMap::new(),
            published: Vec::new(),
            logs: 0,
            log_lines: Vec::new(),
            requests: Vec::new(),
            _docs: docs,
        };
        let result = c.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": root.map(uri),
                "capabilities": capabilities,
                "initializationOptions": options,
            }),
        );
        c.notify("initialized", json!({}));
        (c, result)
    }

    fn notify(&self, method: &str, params: Value) {
        self.conn
            .sender
            .send(Notification::new(method.into(), params).into())
            .unwrap();
    }

    /// Handles a notification from the server (keeps diagnostics, counts logs).
    fn take(&mut self, n: Notification) {
        match n.method.as_str() {
            "textDocument/publishDiagnostics" => {
                let uri = n.params["uri"].as_str().unwrap().to_string();
                let diagnostics = n.params["diagnostics"].as_array().unwrap().clone();
                let version = n.params["version"].as_i64();
                self.view.insert(uri.clone(), diagnostics.clone());
                self.published.push((uri, version, diagnostics));
            }
            "window/logMessage" => {
                self.logs += 1;
                let text = n.params["message"].as_str().unwrap_or_default();
                self.log_lines.push(text.to_string());
            }
            "window/showMessage" => panic!("server showed an error: {}", n.params),
            _ => {}
        }
    }

    /// The next message that is not a request from the server (those are answered).
    fn recv(&mut self) -> Message {
        loop {
            let m = self
                .conn
                .receiver
                .recv_timeout(HANG)
                .expect("the server went silent");
            match m {
                Message::Request(r) => {
                    self.conn
                        .sender
                        .send(lsp_server::Response::new_ok(r.id.clone(), Value::Null).into())
                        .unwrap();
                    self.requests.push((r.method, r.params));
                }
                other => return other,
            }
        }
    }

    /// Sends a request and returns its result (panics on an error response).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.request_raw(method, params);
        match response.response_result {
            Ok(result) => result,
            Err(e) => panic!("{method}: {e:?}"),
        }
    }

    fn request_raw(&mut self, method: &str, params: Value) -> lsp_server::Response {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.conn
            .sender
            .send(Request::new(id.clone(), method.into(), params).into())
            .unwrap();
        loop {
            match self.recv() {
                Message::Response(r) if r.id == id => return r,
                Message::Notification(n) => self.take(n),
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    /// Waits until the diagnostics of `uri` computed from `version` of its text
    /// arrive, then until that run is over (its log line): the view is then the
    /// whole result of the run.
    fn settle(&mut self, uri: &str, version: Option<i64>) -> Vec<Value> {
        let from = self.published.len();
        loop {
            let found = self.published[from..]
                .iter()
                .rev()
                .find(|(u, v, _)| u == uri && *v == version)
                .map(|(_, _, d)| d.clone());
            if let Some(d) = found {
                let logs = self.logs;
                while self.logs == logs {
                    match self.recv() {
                        Message::Notification(n) => self.take(n),
                        other => panic!("unexpected {other:?}"),
                    }
                }
                return d;
            }
            match self.recv() {
                Message::Notification(n) => self.take(n),
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    fn open(&mut self, path: &Path, text: &str, version: i64) -> Vec<Value> {
        let kind = if path.extension().is_some_and(|e| e == "rs") {
            "rust"
        } else {
            "yaml"
        };
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(path), "languageId": kind, "version": version, "text": text}}),
        );
        self.settle(&uri(path), Some(version))
    }

    fn change(&mut self, path: &Path, text: &str, version: i64) -> Vec<Value> {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri(path), "version": version},
                   "contentChanges": [{"text": text}]}),
        );
        self.settle(&uri(path), Some(version))
    }

    fn shutdown(mut self) {
        assert_eq!(self.request("shutdown", Value::Null), Value::Null);
        // Between shutdown and exit: a notification is ignored, a request refused.
        self.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": "file:///nowhere.rs"}}),
        );
        let late = self.request_raw("textDocument/hover", json!({}));
        assert_eq!(
            late.response_result.unwrap_err().code,
            lsp_server::ErrorCode::InvalidRequest as i32
        );
        self.notify("exit", Value::Null);
        let server = self.server.take().unwrap();
        server.join().unwrap().unwrap();
    }
}

/// A copy of `src` (a directory or a file) in a temporary directory: the tests
/// write to it.
fn copy_tree(src: &Path, dst: &Path) {
    if src.is_file() {
        fs::copy(src, dst.join(src.file_name().unwrap())).unwrap();
        return;
    }
    for entry in fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            fs::create_dir_all(&to).unwrap();
            copy_tree(&entry.path(), &to);
        } else {
            fs::copy(entry.path(), &to).unwrap();
        }
    }
}

/// What `msgaudit check ROOT` finds with `overlay`, as the server publishes it: URI
/// -> sorted (code, 0-based line, 0-based character) of each diagnostic (the texts
/// are ASCII, so characters are columns).
fn cli_view(root: &Path, overlay: &[(&Path, &str)]) -> BTreeMap<String, Vec<(String, u64, u64)>> {
    let options = msgaudit::Options {
        overlay: std::sync::Arc::new(
            overlay
                .iter()
                .map(|(p, t)| {
                    // A file not on disk: its directory's canonical path.
                    let real = fs::canonicalize(p).unwrap_or_else(|_| {
                        fs::canonicalize(p.parent().unwrap())
                            .unwrap()
                            .join(p.file_name().unwrap())
                    });
                    (real, t.to_string())
                })
                .collect(),
        ),
        ..msgaudit::Options::default()
    };
    let report = msgaudit::check(&[root.to_path_buf()], &options).unwrap();
    let mut out: BTreeMap<String, Vec<(String, u64, u64)>> = BTreeMap::new();
    for f in &report.findings {
        out.entry(uri(Path::new(&f.path))).or_default().push((
            f.code.to_string(),
            u64::from(f.span.line - 1),
            u64::from(f.span.column - 1),
        ));
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

fn summary(view: &BTreeMap<String, Vec<Value>>) -> BTreeMap<String, Vec<(String, u64, u64)>> {
    let mut out = BTreeMap::new();
    for (uri, diagnostics) in view {
        if diagnostics.is_empty() {
            continue;
        }
        let mut v: Vec<(String, u64, u64)> = diagnostics
            .iter()
            .map(|d| {
                (
                    d["code"].as_str().unwrap().to_string(),
                    d["range"]["start"]["line"].as_u64().unwrap(),
                    d["range"]["start"]["character"].as_u64().unwrap(),
                )
            })
            .collect();
        v.sort();
        out.insert(uri.clone(), v);
    }
    out
}

fn demo() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(t.path()).unwrap();
    copy_tree(Path::new("fixtures/demo"), &root);
    (t, root)
}

/// The diagnostic of `code` on 0-based `line`, if any.
fn on_line<'a>(diagnostics: &'a [Value], code: &str, line: u64) -> Option<&'a Value> {
    diagnostics
        .iter()
        .find(|d| d["code"] == code && d["range"]["start"]["line"] == line)
}

#[test]
fn open_change_save_close_hover_code_action_shutdown() {
    let (_t, root) = demo();
    let consumer = root.join("src/consumer.rs");
    let text = fs::read_to_string(&consumer).unwrap();
    let (mut c, init) = Client::start(&root, json!({}), json!({"debounceMs": 20}));

    let caps = &init["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-16");
    assert_eq!(caps["textDocumentSync"]["openClose"], true);
    assert_eq!(caps["textDocumentSync"]["change"], 1);
    assert_eq!(caps["hoverProvider"], true);
    assert_eq!(
        caps["codeActionProvider"]["codeActionKinds"],
        json!(["quickfix", "source.fixAll.msgaudit"])
    );
    assert_eq!(init["serverInfo"]["name"], "msgaudit");

    // didOpen: every file's findings, as `msgaudit check ROOT` reports them.
    let diagnostics = c.open(&consumer, &text, 1);
    assert_eq!(summary(&c.view), cli_view(&root, &[]));
    let ack = on_line(&diagnostics, "MA001", 75).expect("MA001 at consumer.rs:76");
    assert_eq!(ack["range"]["start"]["character"], 22);
    assert_eq!(ack["severity"], 1);
    assert_eq!(ack["source"], "msgaudit");
    let message = ack["message"].as_str().unwrap();
    assert!(message.starts_with("offset committed by `self.consumer.commit_message`"));
    assert!(message.contains("\nwindow: a crash after"), "{message}");
    assert!(
        message.contains("\nhelp: apply the effect first"),
        "{message}"
    );
    // The code links to the rule's published page, the URL of SARIF's `helpUri`.
    let rule = msgaudit::rules::lookup("MA001").unwrap();
    assert_eq!(ack["codeDescription"]["href"], rule.doc_url());
    assert!(
        rule.doc_url()
            .ends_with("/docs/rules/MA001-ack-before-commit.md"),
        "{}",
        rule.doc_url()
    );
    // Labels are related information, in this file and in others.
    let related = ack["relatedInformation"].as_array().unwrap();
    assert!(
        related
            .iter()
            .any(|r| r["location"]["uri"] == uri(&root.join("src/db.rs"))
                && r["location"]["range"]["start"]["line"] == 79),
        "{related:?}"
    );

    // hover: the rule's explanation on the finding, nothing elsewhere.
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri(&consumer)}, "position": {"line": 75, "character": 30}}),
    );
    let shown = hover["contents"]["value"].as_str().unwrap();
    assert_eq!(hover["contents"]["kind"], "markdown");
    assert!(shown.contains("MA001 ack-before-commit (error)"), "{shown}");
    assert!(shown.contains("## What it does"), "{shown}");
    let nothing = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri(&consumer)}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(nothing, Value::Null);

    // codeAction: suppress on this line; applying its edit silences the finding
    // (and makes no MA900: the suppression is used).
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&consumer)},
               "range": {"start": {"line": 75, "character": 0}, "end": {"line": 75, "character": 0}},
               "context": {"diagnostics": []}}),
    );
    let actions = actions.as_array().unwrap();
    assert_eq!(actions.len(), 1, "{actions:?}");
    let other_kinds = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&consumer)},
               "range": {"start": {"line": 75, "character": 0}, "end": {"line": 75, "character": 0}},
               "context": {"diagnostics": [], "only": ["source.organizeImports"]}}),
    );
    assert_eq!(other_kinds, json!([]));
    assert_eq!(
        actions[0]["title"],
        "Suppress MA001 (ack-before-commit) on this line"
    );
    assert_eq!(actions[0]["kind"], "quickfix");
    let edits = &actions[0]["edit"]["changes"][uri(&consumer)];
    assert_eq!(
        edits,
        &json!([{"range": {"start": {"line": 75, "character": 0}, "end": {"line": 75, "character": 0}},
                 "newText": "        // msgaudit:allow(MA001) reason\n"}])
    );
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    lines.insert(75, "        // msgaudit:allow(MA001) reason\n");
    let suppressed = lines.concat();
    let after = c.change(&consumer, &suppressed, 2);
    assert!(on_line(&after, "MA001", 76).is_none(), "{after:?}");
    assert!(after.iter().all(|d| d["code"] != "MA900"), "{after:?}");
    assert_eq!(after.len(), diagnostics.len() - 1);
    assert_eq!(
        summary(&c.view),
        cli_view(&root, &[(&consumer, &suppressed)])
    );
    // The file on disk is unchanged: the unsaved buffer is what was analyzed.
    assert_eq!(fs::read_to_string(&consumer).unwrap(), text);

    // didChange: two lines above move the finding down.
    let shifted = format!("\n\n{text}");
    let moved = c.change(&consumer, &shifted, 3);
    assert!(on_line(&moved, "MA001", 77).is_some(), "{moved:?}");
    assert!(on_line(&moved, "MA001", 75).is_none());

    // didSave of what was analyzed: the result stands (saving_starts_the_run_that_
    // typing_left_waiting tests a save that runs).
    fs::write(&consumer, &shifted).unwrap();
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri(&consumer)}}),
    );

    // didClose: the buffer is dropped, the file is read from disk (version none).
    fs::write(&consumer, &text).unwrap();
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri(&consumer)}}),
    );
    let closed = c.settle(&uri(&consumer), None);
    assert!(on_line(&closed, "MA001", 75).is_some(), "{closed:?}");
    assert_eq!(summary(&c.view), cli_view(&root, &[]));

    // An unknown request is an error, not a hang.
    let unknown = c.request_raw("msgaudit/unknown", json!({}));
    assert_eq!(
        unknown.response_result.unwrap_err().code,
        lsp_server::ErrorCode::MethodNotFound as i32
    );
    c.shutdown();
}

#[test]
fn yaml_buffers_get_findings_and_a_yaml_suppression() {
    let t = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(t.path()).unwrap();
    let src = Path::new(
        "fixtures/ma004_missing_read_committed/bad_read_uncommitted_through_merge_key.yaml",
    );
    copy_tree(src, &root);
    let yaml = root.join(src.file_name().unwrap());
    let text = fs::read_to_string(&yaml).unwrap();
    let (mut c, _) = Client::start(
        &root,
        json!({}),
        json!({"debounceMs": 0, "rulesUrl": "https://example.test/rules/{code}-{name}"}),
    );
    let diagnostics = c.open(&yaml, &text, 7);
    let finding = on_line(&diagnostics, "MA004", 4).expect("MA004 at line 5");
    assert_eq!(finding["severity"], 2);
    assert_eq!(
        finding["codeDescription"]["href"],
        "https://example.test/rules/MA004-missing-read-committed"
    );
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(&yaml)},
               "range": {"start": {"line": 4, "character": 3}, "end": {"line": 4, "character": 9}},
               "context": {"diagnostics": []}}),
    );
    // The fix comes first; the suppression after it.
    let suppress = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Suppress MA004 (missing-read-committed) on this line")
        .expect("a suppression");
    let edit = &suppress["edit"]["changes"][uri(&yaml)][0];
    assert_eq!(edit["newText"], "  # msgaudit:allow(MA004) reason\n");
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    lines.insert(4, "  # msgaudit:allow(MA004) reason\n");
    // The file's findings are cleared: an empty list for it.
    let after = c.change(&yaml, &lines.concat(), 8);
    assert_eq!(after, Vec::<Value>::new());
    c.shutdown();
}

#[test]
fn local_rule_pages_are_written_and_linked_for_offline_use() {
    let (_t, root) = demo();
    let consumer = root.join("src/consumer.rs");
    let text = fs::read_to_string(&consumer).unwrap();
    let (mut c, _) = Client::start(
        &root,
        json!({}),
        json!({"debounceMs": 0, "rulesUrl": "local"}),
    );
    let diagnostics = c.open(&consumer, &text, 1);
    let ack = on_line(&diagnostics, "MA001", 75).expect("MA001 at consumer.rs:76");
    // The code links to a local page: the text of `msgaudit explain MA001`.
    let href = ack["codeDescription"]["href"].as_str().unwrap();
    assert!(
        href.starts_with("file://") && href.ends_with("/MA001.md"),
        "{href}"
    );
    let page = msgaudit::server::convert::uri_to_path(&href.parse().unwrap()).unwrap();
    assert_eq!(
        fs::read_to_string(page).unwrap(),
        msgaudit::emit::explain(msgaudit::rules::lookup("MA001").unwrap())
    );
    c.shutdown();
}

#[test]
fn msgaudit_toml_is_honoured_and_positions_follow_the_negotiated_encoding() {
    let (_t, root) = demo();
    fs::write(root.join("msgaudit.toml"), "[rules]\nMA001 = \"warning\"\n").unwrap();
    let consumer = root.join("src/consumer.rs");
    let text = fs::read_to_string(&consumer).unwrap();
    let (mut c, init) = Client::start(
        &root,
        json!({"general": {"positionEncodings": ["utf-32", "utf-16"]}}),
        json!({"debounceMs": 0}),
    );
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-32");
    // Non-ASCII characters before the ack on its line: the column counts characters.
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    lines[75] = lines[75].replacen("        self", "/*é𝄞*/  self", 1);
    let edited = lines.concat();
    let diagnostics = c.open(&consumer, &edited, 1);
    let ack = on_line(&diagnostics, "MA001", 75).expect("MA001");
    assert_eq!(ack["severity"], 2, "msgaudit.toml makes MA001 a warning");
    assert_eq!(ack["range"]["start"]["character"], 22);
    c.shutdown();
}

#[test]
fn exit_without_shutdown_and_a_closed_connection_end_the_server() {
    let (_t, root) = demo();
    let (c, _) = Client::start(&root, json!({}), json!({}));
    c.notify("exit", Value::Null);
    let mut c = c;
    c.server.take().unwrap().join().unwrap().unwrap();

    let (mut c, _) = Client::start(&root, json!({}), json!({}));
    let server = c.server.take().unwrap();
    drop(c);
    server.join().unwrap().unwrap();
}

#[test]
fn without_a_workspace_the_root_is_found_from_the_first_file() {
    let (_t, root) = demo();
    // The marker above src/: the whole package is analyzed, billing.rs included.
    fs::write(root.join("msgaudit.toml"), "").unwrap();
    let consumer = root.join("src/consumer.rs");
    let text = fs::read_to_string(&consumer).unwrap();
    let (mut c, _) = Client::start_with(None, json!({}), json!({"debounceMs": 0}));
    let diagnostics = c.open(&consumer, &text, 1);
    assert!(on_line(&diagnostics, "MA001", 75).is_some());
    assert_eq!(summary(&c.view), cli_view(&root, &[]));
    assert!(c.view.contains_key(&uri(&root.join("src/billing.rs"))));
    c.shutdown();
}

/// One message in the base protocol's framing.
fn frame(v: &Value) -> Vec<u8> {
    let body = v.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

#[test]
fn the_binary_serves_over_stdio_and_exits_cleanly() {
    use std::io::{BufRead, BufReader, Read, Write};
    let (_t, root) = demo();
    let cache = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_msgaudit"))
        .arg("server")
        .env("XDG_CACHE_HOME", cache.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut read = || -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "stdout closed");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    };
    let consumer = root.join("src/consumer.rs");
    let text = fs::read_to_string(&consumer).unwrap();
    for m in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"processId": null, "rootUri": uri(&root), "capabilities": {}}}),
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
               "params": {"textDocument": {"uri": uri(&consumer), "languageId": "rust",
                                           "version": 1, "text": text}}}),
    ] {
        stdin.write_all(&frame(&m)).unwrap();
    }
    stdin.flush().unwrap();
    let mut initialized = false;
    loop {
        let m = read();
        if m["id"] == 1 {
            assert_eq!(m["result"]["serverInfo"]["name"], "msgaudit");
            initialized = true;
        }
        if m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri(&consumer)
            && m["params"]["version"] == 1
        {
            assert_eq!(m["params"]["diagnostics"].as_array().unwrap().len(), 3);
            break;
        }
    }
    assert!(initialized);
    stdin
        .write_all(&frame(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
        ))
        .unwrap();
    stdin.flush().unwrap();
    loop {
        let m = read();
        if m["id"] == 2 {
            assert_eq!(m["result"], Value::Null);
            break;
        }
    }
    stdin
        .write_all(&frame(&json!({"jsonrpc": "2.0", "method": "exit"})))
        .unwrap();
    stdin.flush().unwrap();
    // exit after shutdown: status 0, without the client closing stdin.
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > HANG {
            child.kill().unwrap();
            panic!("the server did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    drop(stdin);
}

#[test]
fn saving_starts_the_run_that_typing_left_waiting() {
    let (_t, root) = demo();
    let consumer = root.join("src/consumer.rs");
    let text = fs::read_to_string(&consumer).unwrap();
    // A quiet period longer than any test: only the save can start the run.
    let (mut c, _) = Client::start(&root, json!({}), json!({"debounceMs": 3_600_000}));
    assert!(on_line(&c.open(&consumer, &text, 1), "MA001", 75).is_some());
    let shifted = format!("\n{text}");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&consumer), "version": 2},
               "contentChanges": [{"text": shifted}]}),
    );
    fs::write(&consumer, &shifted).unwrap();
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri(&consumer)}}),
    );
    let saved = c.settle(&uri(&consumer), Some(2));
    assert!(on_line(&saved, "MA001", 76).is_some(), "{saved:?}");
    c.shutdown();
}

/// `text` with the code action's edits applied (one edit, on one line range).
fn apply(text: &str, action: &Value, uri: &str) -> String {
    let edits = action["edit"]["changes"][uri].as_array().unwrap();
    assert_eq!(edits.len(), 1);
    let e = &edits[0];
    let offset = |p: &Value| {
        let line = p["line"].as_u64().unwrap() as usize;
        let character = p["character"].as_u64().unwrap() as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        // ASCII text: characters are bytes.
        start + character
    };
    let (a, b) = (offset(&e["range"]["start"]), offset(&e["range"]["end"]));
    format!(
        "{}{}{}",
        &text[..a],
        e["newText"].as_str().unwrap(),
        &text[b..]
    )
}

#[test]
fn unused_suppressions_of_one_rule_can_be_removed() {
    let (_t, root) = demo();
    let consumer = root.join("src/consumer.rs");
    let original = fs::read_to_string(&consumer).unwrap();
    let mut lines: Vec<String> = original.split_inclusive('\n').map(str::to_string).collect();
    let ok = lines.iter().position(|l| l.trim() == "Ok(())").unwrap();
    lines[ok] = lines[ok].replace("Ok(())", "Ok(()) // msgaudit:allow(dual_write) stale");
    lines.insert(
        0,
        "// msgaudit:allow(MA006, MA002) two stale rules\n".into(),
    );
    lines.insert(0, "    // msgaudit:allow(MA006) stale\n".into());
    let ok = ok + 2;
    let text = lines.concat();
    let (mut c, _) = Client::start(&root, json!({}), json!({"debounceMs": 0}));
    let u = uri(&consumer);
    let diagnostics = c.open(&consumer, &text, 1);
    for line in [0, 1, ok as u64] {
        assert!(
            on_line(&diagnostics, "MA900", line).is_some(),
            "{line}: {diagnostics:?}"
        );
    }
    let actions_on = |c: &mut Client, line: usize| {
        c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": u},
                   "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
                   "context": {"diagnostics": []}}),
        )
    };
    // Two rules in one comment: no removal offered (nor a suppression of MA900).
    assert_eq!(actions_on(&mut c, 1), json!([]));
    // Alone on its line: the line goes.
    let alone = actions_on(&mut c, 0);
    assert_eq!(alone[0]["title"], "Remove the unused suppression");
    let text = apply(&text, &alone[0], &u);
    assert!(
        text.starts_with("// msgaudit:allow(MA006, MA002)"),
        "{text}"
    );
    let after = c.change(&consumer, &text, 2);
    assert!(on_line(&after, "MA900", 0).is_some());
    assert!(on_line(&after, "MA900", ok as u64 - 1).is_some());
    // After code: the comment and the spaces before it go, the code stays.
    let trailing = actions_on(&mut c, ok - 1);
    let text = apply(&text, &trailing[0], &u);
    assert_eq!(text.split('\n').nth(ok - 1).unwrap().trim_start(), "Ok(())");
    let after = c.change(&consumer, &text, 3);
    let stale: Vec<u64> = after
        .iter()
        .filter(|d| d["code"] == "MA900")
        .map(|d| d["range"]["start"]["line"].as_u64().unwrap())
        .collect();
    // (One MA900 for the comment: a report keeps one finding per code and span.)
    assert_eq!(stale, [0], "the two-rule comment is left: {after:?}");
    c.shutdown();
}

#[test]
fn files_changed_on_disk_start_a_run_where_the_client_watches_them() {
    let (_t, root) = demo();
    let consumer = root.join("src/consumer.rs");
    let text = fs::read_to_string(&consumer).unwrap();
    let watching = json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}});
    let (mut c, _) = Client::start(&root, watching, json!({"debounceMs": 0}));
    let diagnostics = c.open(&consumer, &text, 1);
    assert!(on_line(&diagnostics, "MA001", 75).is_some());
    let (method, params) = &c.requests[0];
    assert_eq!(method, "client/registerCapability");
    let registration = &params["registrations"][0];
    assert_eq!(registration["method"], "workspace/didChangeWatchedFiles");
    let globs: Vec<&str> = registration["registerOptions"]["watchers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["globPattern"].as_str().unwrap())
        .collect();
    assert_eq!(globs, msgaudit::server::WATCHED);
    // msgaudit.toml written by another program: the next run honours it.
    fs::write(root.join("msgaudit.toml"), "[rules]\nMA001 = \"off\"\n").unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&root.join("msgaudit.toml")), "type": 1}]}),
    );
    let after = c.settle(&uri(&consumer), Some(1));
    assert!(after.iter().all(|d| d["code"] != "MA001"), "{after:?}");
    c.shutdown();

    // A client without dynamic registration is not asked.
    fs::remove_file(root.join("msgaudit.toml")).unwrap();
    let (mut c, _) = Client::start(&root, json!({}), json!({"debounceMs": 0}));
    c.open(&consumer, &text, 1);
    assert!(c.requests.is_empty(), "{:?}", c.requests);
    c.shutdown();
}

/// A run whose cancellation flag is set stops and says so instead of returning an
/// incomplete report (the server sets it when an edit makes the run stale).
#[test]
fn a_cancelled_run_returns_no_report() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    let flag = std::sync::Arc::new(AtomicBool::new(false));
    let options = msgaudit::Options {
        cancel: Some(flag.clone()),
        ..msgaudit::Options::default()
    };
    let full = msgaudit::check(std::slice::from_ref(&demo), &options).unwrap();
    assert!(!full.findings.is_empty());
    flag.store(true, Ordering::Relaxed);
    let err = msgaudit::check(std::slice::from_ref(&demo), &options).unwrap_err();
    assert_eq!(err, msgaudit::cancelled());
}

// Issue 38, items 5-9: the server is never crashed or hung by its input.
#[path = "server/fixes.rs"]
mod fixes;
#[path = "server/hostile.rs"]
mod hostile;

/// A workspace of two independent member crates, `a` and `b`, each with a consumer that
/// acks before its write (MA001).
fn two_members() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(t.path()).unwrap();
    fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"a\", \"b\"]\n",
    )
    .unwrap();
    let consumer =
        fs::read_to_string("fixtures/ma001_ack_before_commit/bad_ack_in_if_branch.rs").unwrap();
    for member in ["a", "b"] {
        fs::create_dir_all(root.join(member).join("src")).unwrap();
        fs::write(
            root.join(member).join("Cargo.toml"),
            format!("[package]\nname = \"{member}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nlapin = \"2\"\nsqlx = \"0.8\"\n"),
        )
        .unwrap();
        fs::write(root.join(member).join("src/lib.rs"), &consumer).unwrap();
    }
    (t, root)
}

#[test]
fn the_server_shares_the_analysis_cache_and_reanalyzes_only_the_edited_crate() {
    let (_t, root) = two_members();
    let a = root.join("a/src/lib.rs");
    let text = fs::read_to_string(&a).unwrap();
    let (mut c, _) = Client::start_full(Some(&root), json!({}), json!({}), true);
    let first = c.open(&a, &text, 1);
    assert!(on_line(&first, "MA001", 36).is_some(), "{first:?}");
    let cold = summary(&c.view);
    assert_eq!(cold, cli_view(&root, &[]));
    assert_eq!(cold.len(), 2, "both members have their finding: {cold:?}");
    // An unsaved edit of `a`: `a` is analyzed again with the buffer's text, `b` is
    // read back from its entry.
    let edited = format!("// a note\n{text}");
    let after = c.change(&a, &edited, 2);
    assert!(on_line(&after, "MA001", 37).is_some(), "{after:?}");
    assert_eq!(summary(&c.view), cli_view(&root, &[(&a, &edited)]));
    let log = c.log_lines.last().unwrap().clone();
    assert!(
        log.ends_with("; 1 crates read from the per-crate cache"),
        "{log}"
    );
    // Back to the text on disk: the whole run's entry answers, with what a cold
    // run finds.
    let back = c.change(&a, &text, 3);
    assert!(on_line(&back, "MA001", 36).is_some(), "{back:?}");
    assert_eq!(summary(&c.view), cold);
    let log = c.log_lines.last().unwrap().clone();
    assert!(log.ends_with("; read from the analysis cache"), "{log}");
    c.shutdown();
    assert!(root.join(".msgaudit_cache").is_dir());

    // Without the cache, the log says nothing of it and the findings are the same.
    let (mut c, _) = Client::start_full(Some(&root), json!({}), json!({}), false);
    c.open(&a, &text, 1);
    assert_eq!(summary(&c.view), cold);
    let log = c.log_lines.last().unwrap().clone();
    assert!(log.ends_with(" ms"), "{log}");
    c.shutdown();
}
