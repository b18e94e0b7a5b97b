//! Snapshot tests of every output format over one constructed report: two
//! findings (one with a label in another file), an input error with a position
//! and one without.

use msgaudit::emit::{self, Format, HumanOptions};
use msgaudit::source::cargo::CargoTarget;
use msgaudit::{Finding, InputError, Label, Report, Severity, Span};

mod support;
use support::sarif_for_snapshot;

const CONSUMER: &str = "\
async fn handle(consumer: &StreamConsumer, pool: &PgPool, m: &BorrowedMessage<'_>) -> Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query(\"UPDATE stock SET n = n - 1 WHERE sku = $1\")
        .bind(sku(m))
        .execute(&mut *tx)
        .await?;
    consumer.commit_message(m, CommitMode::Sync)?;
    tx.commit().await?;
    Ok(())
}
";

const RETRY: &str = "\
pub async fn send_with_retry(client: &Client, order: &Order) -> Result<()> {
    for attempt in 0..5 {
        let key = Uuid::new_v4();
        match client.post(URL).header(\"Idempotency-Key\", key.to_string()).send().await {
            Ok(_) => return Ok(()),
            Err(_) => sleep(backoff(attempt)).await,
        }
    }
    Ok(())
}
";

fn span(line: u32, column: u32, end_line: u32, end_column: u32) -> Span {
    Span {
        line,
        column,
        end_line,
        end_column,
        byte_start: 0,
        byte_end: 0,
    }
}

fn report() -> Report {
    let mut r = Report::default();
    r.sources
        .insert("src/consumer.rs".to_string(), CONSUMER.to_string());
    r.sources
        .insert("src/retry.rs".to_string(), RETRY.to_string());
    r.findings.push(Finding {
        code: "MA002",
        name: "fresh-id-per-attempt",
        severity: Severity::Error,
        path: "src/retry.rs".into(),
        span: span(3, 19, 3, 33),
        message: "idempotency key `Uuid::new_v4()` is generated inside the retry loop, so each attempt carries a new key".into(),
        boundary: "stable event identity".into(),
        window: "a retry after a timeout that did succeed sends the request again under a new key: the payment is made twice".into(),
        labels: vec![
            Label {
                path: "src/retry.rs".into(),
                span: span(2, 5, 2, 8),
                message: "retry loop starts here".into(),
            },
            Label {
                path: "src/consumer.rs".into(),
                span: span(7, 5, 7, 50),
                message: "called from the handler here".into(),
            },
        ],
        help: "create the key once, before the loop, from the event's id".into(),
        fix: None,
    });
    r.findings.push(Finding {
        code: "MA001",
        name: "ack-before-commit",
        severity: Severity::Warning,
        path: "src/consumer.rs".into(),
        span: span(7, 14, 7, 50),
        message: "offset committed by `consumer.commit_message` before `tx.commit()` commits the stock update".into(),
        boundary: "effect/progress order".into(),
        window: "a crash after the commit and before tx.commit() loses the message: it is never redelivered".into(),
        labels: vec![Label {
            path: "src/consumer.rs".into(),
            span: span(2, 18, 2, 30),
            message: "transaction begins here".into(),
        }],
        help: "commit the transaction first, then commit the offset".into(),
        fix: None,
    });
    r.errors.push(InputError {
        path: "src/broken.rs".into(),
        line: Some(3),
        column: Some(1),
        message: "expected `;`".into(),
    });
    r.errors.push(InputError {
        path: "src/unreadable.rs".into(),
        line: None,
        column: None,
        message: "cannot read file: Permission denied".into(),
    });
    // Every file but src/unreadable.rs is in package `svc` (rustc-json leaves out
    // the others).
    let target = CargoTarget {
        package_id: "path+file:///work/svc#0.1.0".into(),
        manifest_path: "/work/svc/Cargo.toml".into(),
        kind: vec!["bin"],
        crate_types: vec!["bin"],
        name: "svc".into(),
        src_path: "/work/svc/src/main.rs".into(),
        edition: "2021".into(),
        doc: true,
        doctest: false,
        test: true,
    };
    for path in ["src/consumer.rs", "src/retry.rs", "src/broken.rs"] {
        r.cargo.insert(path.into(), target.clone());
        r.crates.insert(path.into(), "svc".into());
    }
    r.summary.files = 5;
    r.summary.analyzed = 2;
    r.summary.skipped.insert("no_relevant_tokens".into(), 1);
    r.summary.suppressed = 1;
    r.finish();
    r
}

#[test]
fn human() {
    insta::assert_snapshot!(emit::render(&report(), Format::Human));
}

#[test]
fn human_ascii() {
    let options = HumanOptions {
        unicode: false,
        ..HumanOptions::default()
    };
    insta::assert_snapshot!(emit::human::render(&report(), &options));
}

#[test]
fn short() {
    insta::assert_snapshot!(emit::render(&report(), Format::Short));
}

#[test]
fn json() {
    insta::assert_snapshot!(emit::render(&report(), Format::Json));
}

#[test]
fn sarif() {
    let text = emit::render(&report(), Format::Sarif);
    insta::assert_snapshot!(sarif_for_snapshot(&text));
}

#[test]
fn github() {
    insta::assert_snapshot!(emit::render(&report(), Format::Github));
}

#[test]
fn rustc_json() {
    insta::assert_snapshot!(emit::render(&report(), Format::RustcJson));
}

#[test]
fn json_field_order() {
    let text = emit::render(&report(), Format::Json);
    let keys = [
        "\"code\"",
        "\"name\"",
        "\"severity\"",
        "\"path\"",
        "\"line\"",
        "\"column\"",
        "\"end_line\"",
        "\"end_column\"",
        "\"message\"",
        "\"boundary\"",
        "\"window\"",
        "\"labels\"",
        "\"help\"",
    ];
    let mut at = 0;
    for k in keys {
        at += text[at..]
            .find(k)
            .unwrap_or_else(|| panic!("{k} out of order"));
    }
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["findings"][0]["path"], "src/consumer.rs");
    assert_eq!(v["summary"]["errors"], 2);
    assert_eq!(v["errors"][1].get("line"), None);
}

#[test]
fn human_input_error_in_a_file_with_source() {
    let mut r = Report::default();
    r.sources.insert(
        "src/broken.rs".into(),
        "fn a() {\n    let x = 1\n}\n".into(),
    );
    r.errors.push(InputError {
        path: "src/broken.rs".into(),
        line: Some(2),
        column: Some(14),
        message: "expected `;`".into(),
    });
    r.summary.files = 1;
    r.finish();
    insta::assert_snapshot!(emit::render(&r, Format::Human));
}
