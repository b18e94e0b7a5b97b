//! Fixes as code actions (part of `--test server`): a quickfix per fix on the
//! requested lines, `source.fixAll.msgaudit` for the document; applying the edit
//! gives the fixed text, and nothing is offered once the buffer has changed since
//! the analysis (the edits are positional).

use super::*;

/// `text` with the `edits` (LSP TextEdits, positions in UTF-16 code units) applied.
fn apply_edits(text: &str, edits: &[Value]) -> String {
    let offset = |p: &Value| {
        let line = p["line"].as_u64().unwrap() as usize;
        let mut units = p["character"].as_u64().unwrap() as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        let mut at = start;
        for c in text[start..].chars() {
            if units == 0 || c == '\n' {
                break;
            }
            units -= c.len_utf16();
            at += c.len_utf8();
        }
        at
    };
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap(),
            )
        })
        .collect();
    spans.sort();
    let mut out = String::new();
    let mut at = 0;
    for (a, b, new) in spans {
        out.push_str(&text[at..a]);
        out.push_str(new);
        at = b;
    }
    out.push_str(&text[at..]);
    out
}

fn actions(c: &mut Client, path: &Path, line: u64, only: Option<&[&str]>) -> Vec<Value> {
    let mut context = json!({"diagnostics": []});
    if let Some(only) = only {
        context["only"] = json!(only);
    }
    let result = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(path)},
               "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
               "context": context}),
    );
    result.as_array().unwrap().clone()
}

fn titled<'a>(actions: &'a [Value], title: &str) -> Option<&'a Value> {
    actions.iter().find(|a| a["title"] == title)
}

const WRITER: &str =
    "ledgerWriter:\n  bootstrap.servers: kafka:9092\n  transactional.id: ledger-writer\n  topic: ledger\n";
const READER: &str = "# reader\nledgerReader:\n  bootstrap.servers: kafka:9092\n  group.id: ledger-reader\n  topics: ledger\n  isolation.level: read_uncommitted # dirty\n";
const RDKAFKA: &str = "use rdkafka::config::ClientConfig;\nuse rdkafka::producer::FutureProducer;\n\npub fn producer(brokers: &str) -> FutureProducer {\n    ClientConfig::new()\n        .set(\"bootstrap.servers\", brokers)\n        /*é𝄞*/ .set(\"acks\", \"1\") // leader only\n        .set(\"enable.idempotence\", \"false\")\n        .create()\n        .unwrap()\n}\n";

fn tree() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(t.path()).unwrap();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nrdkafka = \"0.36\"\n",
    )
    .unwrap();
    fs::write(root.join("src/lib.rs"), RDKAFKA).unwrap();
    fs::write(root.join("writer.yaml"), WRITER).unwrap();
    fs::write(root.join("reader.yaml"), READER).unwrap();
    (t, root)
}

#[test]
fn a_yaml_reader_gets_its_fix_as_a_preferred_quickfix_and_in_fix_all() {
    let (_t, root) = tree();
    let reader = root.join("reader.yaml");
    let (mut c, init) = Client::start(&root, json!({}), json!({"debounceMs": 0}));
    let kinds = &init["capabilities"]["codeActionProvider"]["codeActionKinds"];
    assert_eq!(kinds, &json!(["quickfix", "source.fixAll.msgaudit"]));
    let diagnostics = c.open(&reader, READER, 1);
    assert!(
        on_line(&diagnostics, "MA004", 5).is_some(),
        "{diagnostics:?}"
    );
    let all = actions(&mut c, &reader, 5, None);
    // The fix first, then the suppression, then the document's fix-all.
    let titles: Vec<&str> = all.iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        [
            "set `isolation.level` to `read_committed`",
            "Suppress MA004 (missing-read-committed) on this line",
            "msgaudit: apply every safe fix",
        ]
    );
    let fix = &all[0];
    assert_eq!(fix["kind"], "quickfix");
    assert_eq!(fix["isPreferred"], true);
    assert_eq!(fix["diagnostics"][0]["code"], "MA004");
    assert_eq!(fix["diagnostics"][0]["range"]["start"]["line"], 5);
    let changes = fix["edit"]["changes"].as_object().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    let fixed = apply_edits(READER, changes[&uri(&reader)].as_array().unwrap());
    assert_eq!(fixed, READER.replace("read_uncommitted", "read_committed"));
    // Asked for fix-all only (as on save): that action alone, the same text.
    let only = actions(&mut c, &reader, 0, Some(&["source.fixAll"]));
    assert_eq!(only.len(), 1, "{only:?}");
    assert_eq!(only[0]["kind"], "source.fixAll.msgaudit");
    let edits = only[0]["edit"]["changes"][uri(&reader)].as_array().unwrap();
    assert_eq!(apply_edits(READER, edits), fixed);
    // Quickfixes only: no fix-all.
    let quick = actions(&mut c, &reader, 5, Some(&["quickfix"]));
    assert!(quick.iter().all(|a| a["kind"] == "quickfix"), "{quick:?}");
    // Applied: the finding is gone, and so are the fixes.
    let after = c.change(&reader, &fixed, 2);
    assert!(on_line(&after, "MA004", 5).is_none(), "{after:?}");
    assert_eq!(actions(&mut c, &reader, 5, None), Vec::<Value>::new());
    c.shutdown();
}

#[test]
fn an_rdkafka_chain_gets_both_edits_in_utf16_positions() {
    let (_t, root) = tree();
    let lib = root.join("src/lib.rs");
    let (mut c, _) = Client::start(&root, json!({}), json!({"debounceMs": 0}));
    let diagnostics = c.open(&lib, RDKAFKA, 1);
    assert!(
        on_line(&diagnostics, "MA008", 6).is_some(),
        "{diagnostics:?}"
    );
    let all = actions(&mut c, &lib, 6, Some(&["quickfix"]));
    let fix = titled(&all, "set `acks=all` and `enable.idempotence=true`").expect("the fix");
    assert_eq!(fix["isPreferred"], true);
    let edits = fix["edit"]["changes"][uri(&lib)].as_array().unwrap();
    assert_eq!(edits.len(), 2);
    // `/*é𝄞*/` before the value: 𝄞 is two UTF-16 code units.
    assert_eq!(edits[0]["range"]["start"]["character"], 30);
    let expected = RDKAFKA
        .replace("\"acks\", \"1\"", "\"acks\", \"all\"")
        .replace("\"false\"", "\"true\"");
    assert_eq!(apply_edits(RDKAFKA, edits), expected);
    // The fix is offered wherever the finding is asked for, not on other lines.
    assert!(titled(
        &actions(&mut c, &lib, 2, None),
        fix["title"].as_str().unwrap()
    )
    .is_none());
    let after = c.change(&lib, &expected, 2);
    assert!(on_line(&after, "MA008", 6).is_none(), "{after:?}");
    c.shutdown();
}

#[test]
fn no_fix_is_offered_once_the_buffer_changed_since_the_analysis() {
    let (_t, root) = tree();
    let reader = root.join("reader.yaml");
    let lib = root.join("src/lib.rs");
    // A long quiet period: the edits below are not analyzed before the requests.
    let (mut c, _) = Client::start(&root, json!({}), json!({"debounceMs": 600000}));
    c.open(&reader, READER, 1);
    c.open(&lib, RDKAFKA, 1);
    assert!(titled(
        &actions(&mut c, &lib, 6, None),
        "set `acks=all` and `enable.idempotence=true`"
    )
    .is_some());
    for (path, text) in [(&reader, READER), (&lib, RDKAFKA)] {
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri(path), "version": 2},
                   "contentChanges": [{"text": format!("\n{text}")}]}),
        );
    }
    for (path, line) in [(&reader, 5), (&lib, 6)] {
        let stale = actions(&mut c, path, line, None);
        assert!(
            stale
                .iter()
                .all(|a| a["title"].as_str().unwrap().starts_with("Suppress")),
            "{stale:?}"
        );
    }
    c.shutdown();
}

/// The code actions for `diagnostic`'s range, the diagnostic in the context (as an
/// editor asks for the quick fixes of a squiggle).
fn actions_for(c: &mut Client, path: &Path, diagnostic: &Value) -> Vec<Value> {
    let result = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(path)},
               "range": diagnostic["range"].clone(),
               "context": {"diagnostics": [diagnostic.clone()], "only": ["quickfix"]}}),
    );
    result.as_array().unwrap().clone()
}

/// The one diagnostic of `code` the server published for `path`.
fn only_one<'a>(diagnostics: &'a [Value], code: &str) -> &'a Value {
    let of: Vec<&Value> = diagnostics.iter().filter(|d| d["code"] == code).collect();
    assert_eq!(of.len(), 1, "{diagnostics:?}");
    of[0]
}

/// A transactional producer of `orders` in another file: a reader of `orders` that
/// leaves its level unset (Spring's default reads uncommitted) is an MA004 finding.
const TX_PRODUCER: &str =
    "producer:\n  bootstrap.servers: kafka:9092\n  transactional.id: orders-tx\n  topic: orders\n";
const SPRING_UNSET: &str = "spring:\n  kafka:\n    consumer:\n      group-id: billing # the group\n      properties:\n        \"[max.poll.records]\": 10\n    listener:\n      ack-mode: record\n";

#[test]
fn a_missing_isolation_level_is_inserted_by_the_quickfix() {
    let t = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(t.path()).unwrap();
    fs::write(root.join("tx-producer.yaml"), TX_PRODUCER).unwrap();
    let app = root.join("application.yml");
    fs::write(&app, SPRING_UNSET).unwrap();
    let (mut c, _) = Client::start(&root, json!({}), json!({"debounceMs": 0}));
    let diagnostics = c.open(&app, SPRING_UNSET, 1);
    let diagnostic = only_one(&diagnostics, "MA004");
    let all = actions_for(&mut c, &app, diagnostic);
    let fix = titled(
        &all,
        "add `isolation.level=read_committed` to the consumer's configuration",
    )
    .unwrap_or_else(|| panic!("no fix among {all:?}"));
    assert_eq!(fix["kind"], "quickfix");
    assert_eq!(fix["isPreferred"], true);
    assert_eq!(fix["diagnostics"][0]["code"], "MA004");
    let changes = fix["edit"]["changes"].as_object().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    let fixed = apply_edits(SPRING_UNSET, changes[&uri(&app)].as_array().unwrap());
    let expected = SPRING_UNSET.replace(
        "        \"[max.poll.records]\": 10\n",
        "        \"[max.poll.records]\": 10\n      isolation-level: read_committed\n",
    );
    assert_eq!(fixed, expected);
    // The same edit is the document's fix-all.
    let only = actions(&mut c, &app, 0, Some(&["source.fixAll"]));
    assert_eq!(only.len(), 1, "{only:?}");
    let edits = only[0]["edit"]["changes"][uri(&app)].as_array().unwrap();
    assert_eq!(apply_edits(SPRING_UNSET, edits), expected);
    // Applied: the finding is gone.
    let after = c.change(&app, &expected, 2);
    assert!(after.iter().all(|d| d["code"] != "MA004"), "{after:?}");
    c.shutdown();
}

const LAPIN: &str = "use lapin::options::{BasicPublishOptions};\nuse lapin::{BasicProperties, Connection};\n\npub async fn publish(conn: &Connection, body: &[u8]) -> anyhow::Result<()> {\n    let channel = conn.create_channel().await?; // orders\n    channel\n        .basic_publish(\"\", \"orders\", BasicPublishOptions::default(), body, BasicProperties::default())\n        .await?;\n    Ok(())\n}\n";

#[test]
fn an_unconfirmed_lapin_channel_gets_the_unsafe_confirm_mode_quickfix() {
    let t = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(t.path()).unwrap();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nlapin = \"2\"\nanyhow = \"1\"\n",
    )
    .unwrap();
    let lib = root.join("src/lib.rs");
    fs::write(&lib, LAPIN).unwrap();
    let (mut c, _) = Client::start(&root, json!({}), json!({"debounceMs": 0}));
    let diagnostics = c.open(&lib, LAPIN, 1);
    let diagnostic = only_one(&diagnostics, "MA008");
    let all = actions_for(&mut c, &lib, diagnostic);
    let fix = titled(
        &all,
        "put `channel` in confirm mode where it is made and await the publishes' confirmations",
    )
    .unwrap_or_else(|| panic!("no fix among {all:?}"));
    assert_eq!(fix["kind"], "quickfix");
    // Unsafe: offered, but neither preferred nor part of the fix-all.
    assert!(fix["isPreferred"].is_null(), "{fix}");
    let edits = fix["edit"]["changes"][uri(&lib)].as_array().unwrap();
    assert_eq!(edits.len(), 3, "{edits:?}");
    let expected = "use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};\nuse lapin::{BasicProperties, Connection};\n\npub async fn publish(conn: &Connection, body: &[u8]) -> anyhow::Result<()> {\n    let channel = conn.create_channel().await?; // orders\n    channel.confirm_select(ConfirmSelectOptions::default()).await?;\n    channel\n        .basic_publish(\"\", \"orders\", BasicPublishOptions::default(), body, BasicProperties::default())\n        .await?.await?;\n    Ok(())\n}\n";
    assert_eq!(apply_edits(LAPIN, edits), expected);
    assert_eq!(
        actions(&mut c, &lib, 0, Some(&["source.fixAll"])),
        Vec::<Value>::new()
    );
    let after = c.change(&lib, expected, 2);
    assert!(after.iter().all(|d| d["code"] != "MA008"), "{after:?}");
    c.shutdown();
}
