//! Issue 38, items 5-9 (part of `--test server`): the server is never crashed or
//! hung by its input. Each test generates its input (raw bytes on the binary's
//! standard input, temporary trees) and failed on the server as it was.

use super::*;

/// `msgaudit server` as a process, driven over its standard input with raw bytes.
struct Proc {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    /// Each message the server writes; closed with its standard output.
    out: std::sync::mpsc::Receiver<Value>,
    _cache: tempfile::TempDir,
}

impl Proc {
    fn spawn() -> Proc {
        use std::io::{BufRead, BufReader, Read};
        let cache = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_msgaudit"))
            .args(["server", "--jobs", "2"])
            .env("XDG_CACHE_HOME", cache.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || loop {
            let mut length = None;
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(n) = line.strip_prefix("Content-Length: ") {
                    length = Some(n.parse::<usize>().unwrap());
                }
            }
            let mut body = vec![0; length.expect("a message without Content-Length")];
            if stdout.read_exact(&mut body).is_err() {
                return;
            }
            if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                return;
            }
        });
        Proc {
            child,
            stdin,
            out: rx,
            _cache: cache,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send_json(&mut self, v: &Value) {
        self.send(&frame(v));
    }

    /// The next message the server writes that `wanted` accepts (the others are
    /// skipped); `None` when the server closes its output first.
    fn wait_for(&self, wanted: impl Fn(&Value) -> bool) -> Option<Value> {
        loop {
            match self.out.recv_timeout(HANG) {
                Ok(m) if wanted(&m) => return Some(m),
                Ok(_) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
                Err(e) => panic!("the server went silent: {e}"),
            }
        }
    }

    fn initialize(&mut self, root: Option<&Path>) {
        self.send_json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": null, "rootUri": root.map(uri), "capabilities": {}}}));
        self.wait_for(|m| m["id"] == 1)
            .expect("no answer to initialize");
        self.send_json(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    }

    /// Waits for the process to end, at most `bound` (standard input stays open).
    fn wait_exit(&mut self, bound: Duration) -> std::process::ExitStatus {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if start.elapsed() > bound {
                self.child.kill().unwrap();
                panic!("the server did not exit within {bound:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Issue 38 item 5: a `Content-Length` over 64 MiB gets an error reply and the
/// server exits (status 2) without waiting for the body and without allocating it.
/// Before: 4 GiB aborted the process (SIGABRT), 3 GB waited for a body that never
/// came (no reply, no exit).
#[test]
fn a_message_announced_over_the_limit_is_refused_and_the_server_exits() {
    for length in [4_294_967_296u64, 3_000_000_000, (64 << 20) + 1] {
        let mut p = Proc::spawn();
        p.initialize(None);
        p.send(format!("Content-Length: {length}\r\n\r\n{{\"jsonrpc\":").as_bytes());
        let reply = p
            .wait_for(|m| m.get("error").is_some())
            .unwrap_or_else(|| panic!("{length}: no error reply"));
        assert_eq!(reply["id"], Value::Null);
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(&length.to_string()), "{message}");
        // Standard input is still open: the server ends by itself.
        let status = p.wait_exit(HANG);
        assert_eq!(status.code(), Some(2), "{length}: {status:?}");
    }
}

/// Issue 38 item 9: malformed messages get the JSON-RPC error or are dropped, and
/// the session goes on. Before: the first one ended the session (the reader failed
/// on invalid JSON or a lone surrogate, and nothing more was answered).
#[test]
fn malformed_messages_get_an_error_and_the_session_goes_on() {
    let (_t, root) = demo();
    let consumer = root.join("src/consumer.rs");
    let mut p = Proc::spawn();
    p.initialize(Some(&root));
    let raw = |body: &[u8]| {
        let mut m = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        m.extend_from_slice(body);
        m
    };
    let error_of = |p: &Proc, id: Value| {
        p.wait_for(|m| m["id"] == id && m.get("method").is_none())
            .expect("the server closed")["error"]["code"]
            .as_i64()
    };
    // Invalid JSON, invalid UTF-8, a lone surrogate in a buffer: parse errors.
    p.send(&raw(br#"{"jsonrpc": "2.0", "id": 2, "method": "#));
    assert_eq!(error_of(&p, Value::Null), Some(-32700));
    p.send(&raw(
        b"{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"x\xff\"}",
    ));
    assert_eq!(error_of(&p, Value::Null), Some(-32700));
    let open = format!(
        r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":
        {{"uri":"{}","languageId":"rust","version":1,"text":"fn f() {{ \ud800 }}"}}}}}}"#,
        uri(&consumer)
    );
    p.send(&raw(open.as_bytes()));
    assert_eq!(error_of(&p, Value::Null), Some(-32700));
    // Not a request (a method that is a number): invalid request, with its id.
    p.send(&raw(br#"{"jsonrpc":"2.0","id":4,"method":5}"#));
    assert_eq!(error_of(&p, json!(4)), Some(-32600));
    // An unknown method with bad params; a known one with bad params.
    p.send_json(&json!({"jsonrpc": "2.0", "id": 5, "method": "msgaudit/nothing", "params": 5}));
    assert_eq!(error_of(&p, json!(5)), Some(-32601));
    p.send_json(&json!({"jsonrpc": "2.0", "id": 6, "method": "textDocument/hover", "params": [1]}));
    assert_eq!(error_of(&p, json!(6)), Some(-32602));
    // Notifications with bad params are dropped.
    p.send_json(&json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": "x"}));
    p.send_json(&json!({"jsonrpc": "2.0", "method": "msgaudit/unknown", "params": 7}));
    // The session goes on: a buffer is analyzed, shutdown and exit end it cleanly.
    let text = fs::read_to_string(&consumer).unwrap();
    p.send_json(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri(&consumer), "languageId": "rust",
                                    "version": 2, "text": text}}}));
    let published = p
        .wait_for(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri(&consumer)
                && m["params"]["version"] == 2
        })
        .expect("no diagnostics after the malformed messages");
    assert_eq!(
        published["params"]["diagnostics"].as_array().unwrap().len(),
        3
    );
    p.send_json(&json!({"jsonrpc": "2.0", "id": 8, "method": "shutdown"}));
    assert_eq!(p.wait_for(|m| m["id"] == 8).unwrap()["result"], Value::Null);
    p.send_json(&json!({"jsonrpc": "2.0", "method": "exit"}));
    assert!(p.wait_exit(HANG).success());
}

/// Issue 38 item 9, in-process: an `initialize` whose params are no
/// InitializeParams is refused (-32602) and a later one is served. Before: the
/// server returned an error and the session ended.
#[test]
fn an_initialize_with_bad_params_is_refused_and_another_is_served() {
    let (server, client) = Connection::memory();
    let thread = std::thread::spawn(move || run(server, ServerOptions::default()));
    let send = |id: i32, params: Value| {
        client
            .sender
            .send(Request::new(id.into(), "initialize".into(), params).into())
            .unwrap();
        match client.receiver.recv_timeout(HANG).unwrap() {
            Message::Response(r) => r,
            other => panic!("unexpected {other:?}"),
        }
    };
    let bad = send(1, json!({"capabilities": 5}));
    assert_eq!(bad.response_result.unwrap_err().code, -32602);
    let good = send(
        2,
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    assert_eq!(
        good.response_result.unwrap()["serverInfo"]["name"],
        "msgaudit"
    );
    for method in ["initialized", "exit"] {
        client
            .sender
            .send(Notification::new(method.into(), json!({})).into())
            .unwrap();
    }
    thread.join().unwrap().unwrap();
}

/// A crate of `files` files, each with a consumer that acks before it writes.
fn large_crate(dir: &Path, files: usize) {
    let handler =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "fixtures/ma001_ack_before_commit/bad_lapin_qualified_acker_ack_before_insert.rs",
        ))
        .unwrap();
    fs::create_dir_all(dir.join("src")).unwrap();
    fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"large\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nlapin = \"2\"\nsqlx = \"0.8\"\nfutures = \"0.3\"\n",
    )
    .unwrap();
    let mut main = String::new();
    for i in 0..files {
        main.push_str(&format!("mod m{i};\n"));
        let text = handler
            .replace("ShipmentDispatched", &format!("ShipmentDispatched{i}"))
            .replace("fn consume", &format!("fn consume{i}"));
        fs::write(dir.join(format!("src/m{i}.rs")), text).unwrap();
    }
    main.push_str("fn main() {}\n");
    fs::write(dir.join("src/main.rs"), main).unwrap();
}

/// Issue 38 item 6: `exit` ends the process while a large crate is being analyzed,
/// without waiting for the analysis (the bound is generous: the process ends within
/// milliseconds; `bench/lsp_hostile.py exit` measures it). Before: the server joined
/// the analysis thread, and exited only when the run was over, seconds later.
#[test]
fn exit_ends_the_process_while_an_analysis_runs() {
    let t = tempfile::tempdir().unwrap();
    large_crate(t.path(), LARGE_CRATE_FILES);
    let mut p = Proc::spawn();
    p.initialize(Some(t.path()));
    // The run starts at `initialized`; give it a moment to be under way.
    std::thread::sleep(Duration::from_millis(300));
    p.send_json(&json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    assert_eq!(p.wait_for(|m| m["id"] == 2).unwrap()["result"], Value::Null);
    p.send_json(&json!({"jsonrpc": "2.0", "method": "exit"}));
    assert!(p.wait_exit(Duration::from_secs(2)).success());
}

/// A handler that acks a lapin delivery before its sqlx write (MA001).
fn ack_first() -> String {
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "fixtures/ma001_ack_before_commit/bad_lapin_qualified_acker_ack_before_insert.rs",
        ),
    )
    .unwrap()
}

/// Issue 38 item 7: without a workspace root, a file outside any crate is analyzed
/// alone, and a file in a crate with its crate, not the directory around it. Before:
/// opening `DIR/h.rs` analyzed all of DIR (here `stray.rs` got diagnostics).
#[test]
fn without_a_workspace_a_file_is_analyzed_with_its_crate_or_alone() {
    let t = tempfile::tempdir().unwrap();
    let dir = fs::canonicalize(t.path()).unwrap();
    fs::write(dir.join("h.rs"), ack_first()).unwrap();
    fs::write(dir.join("stray.rs"), ack_first()).unwrap();
    let (mut c, _) = Client::start_with(None, json!({}), json!({"debounceMs": 0}));
    let diagnostics = c.open(&dir.join("h.rs"), &ack_first(), 1);
    assert!(diagnostics.iter().any(|d| d["code"] == "MA001"));
    assert_eq!(c.view.keys().collect::<Vec<_>>(), [&uri(&dir.join("h.rs"))]);
    c.shutdown();

    // In a crate (below DIR, which holds another stray file): the crate is analyzed.
    let krate = dir.join("app");
    large_crate(&krate, 2);
    let (mut c, _) = Client::start_with(None, json!({}), json!({"debounceMs": 0}));
    let m0 = krate.join("src/m0.rs");
    c.open(&m0, &ack_first(), 1);
    let uris: Vec<&String> = c.view.keys().collect();
    assert_eq!(uris, [&uri(&m0), &uri(&krate.join("src/m1.rs"))]);
    c.shutdown();
}

/// Issue 38 item 8: a buffer of a file not on disk is analyzed as part of the crate
/// its path belongs to (`mod consumer;` in main.rs). Before: it got no diagnostics.
#[test]
fn an_unsaved_new_file_is_analyzed_with_its_crate() {
    let t = tempfile::tempdir().unwrap();
    let krate = fs::canonicalize(t.path()).unwrap();
    large_crate(&krate, 0);
    fs::write(krate.join("src/main.rs"), "mod consumer;\nfn main() {}\n").unwrap();
    let consumer = krate.join("src/consumer.rs");
    assert!(!consumer.exists());
    let (mut c, _) = Client::start(&krate, json!({}), json!({"debounceMs": 0}));
    let diagnostics = c.open(&consumer, &ack_first(), 1);
    let ma001 = diagnostics
        .iter()
        .find(|d| d["code"] == "MA001")
        .expect("no MA001 on the unsaved buffer");
    assert_eq!(ma001["range"]["start"]["line"], 31);
    assert_eq!(
        summary(&c.view),
        cli_view(&krate, &[(&consumer, &ack_first())])
    );
    c.shutdown();
}

/// Issue 38 items 7 and 8 together: without a workspace root, a new file never saved
/// and in no crate (its directory may not exist yet) is analyzed alone, from its
/// buffer. Before: its only diagnostic was `cannot read path`.
#[test]
fn without_a_workspace_an_unsaved_file_in_no_crate_is_analyzed_alone() {
    let t = tempfile::tempdir().unwrap();
    let dir = fs::canonicalize(t.path()).unwrap();
    for file in [dir.join("new.rs"), dir.join("not/yet/made/new.rs")] {
        assert!(!file.exists());
        let (mut c, _) = Client::start_with(None, json!({}), json!({"debounceMs": 0}));
        let diagnostics = c.open(&file, &ack_first(), 1);
        let codes: Vec<&Value> = diagnostics.iter().map(|d| &d["code"]).collect();
        let ma001 = diagnostics
            .iter()
            .find(|d| d["code"] == "MA001")
            .unwrap_or_else(|| panic!("no MA001 on the unsaved buffer: {codes:?}"));
        assert_eq!(ma001["range"]["start"]["line"], 31);
        assert!(
            !diagnostics.iter().any(|d| d["code"] == "input-error"),
            "{codes:?}"
        );
        c.shutdown();
    }
}

/// Files of the crate the exit test analyzes: enough that its analysis takes seconds
/// (3 000 take 1.5 s with two threads here, 8 000 about 4 s).
const LARGE_CRATE_FILES: usize = 8000;

/// Issue 38 item 6, a client that stops reading: `exit` still ends the process
/// within a second. The client here never reads the server's output and sends
/// requests whose replies fill the pipe (the writer blocks, then the main loop on
/// its next reply), then `exit`. Before: the reader was blocked handing the main
/// loop a request and never read `exit`; the process never ended.
#[test]
fn exit_ends_the_process_when_the_client_stops_reading_its_output() {
    use std::io::Write;
    let cache = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_msgaudit"))
        .args(["server", "--jobs", "1"])
        .env("XDG_CACHE_HOME", cache.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Held open and never read.
    let _stdout = child.stdout.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut bytes = frame(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"processId": null, "rootUri": null, "capabilities": {}}}));
    bytes.extend(frame(
        &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    ));
    // Each reply is about 150 bytes: 4 000 are ten times a 64 KiB pipe.
    for id in 1..=4000 {
        bytes.extend(frame(&json!({"jsonrpc": "2.0", "id": id,
            "method": "msgaudit/no-such-method", "params": {}})));
    }
    bytes.extend(frame(&json!({"jsonrpc": "2.0", "method": "exit"})));
    // Written on its own thread: a server that stops reading blocks the write.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&bytes);
        let _ = stdin.flush();
        stdin
    });
    let start = std::time::Instant::now();
    let ended = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > Duration::from_secs(10) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = child.kill();
    let _ = child.wait();
    drop(writer);
    assert!(
        ended.is_some(),
        "the server did not exit while its output was not read"
    );
}
