//! The review checklist (SPEC §6): `msgaudit checklist` and `check --format checklist`.

use assert_cmd::Command;

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("msgaudit")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn demo_checklist_snapshot() {
    let (code, out) = run(&["checklist", "fixtures/demo"]);
    // The subcommand reports; it fails only on input errors.
    assert_eq!(code, 0);
    insta::assert_snapshot!("demo_checklist", out);
}

#[test]
fn format_checklist_and_subcommand_agree() {
    let (code, sub) = run(&["checklist", "fixtures/demo"]);
    assert_eq!(code, 0);
    let (code, fmt) = run(&["check", "--format", "checklist", "fixtures/demo"]);
    // `check` keeps its exit code: the demo has findings.
    assert_eq!(code, 1);
    assert_eq!(sub, fmt);
}

#[test]
fn checklist_answers_from_the_analysis() {
    let (_, out) = run(&["checklist", "fixtures/demo"]);
    // The SQS shipment consumer acks after idempotent upserts.
    let shipments = out
        .split("### ")
        .find(|s| s.starts_with("Consumer `SqsQueues::run_shipments`"))
        .expect("a section for the shipments consumer");
    assert!(shipments.contains(": effectively-once"));
    assert!(!shipments.contains("- [ ]"));
    // The Kafka consumer acks before two of its effects: at-most-once, with MA001.
    let kafka = out
        .split("### ")
        .find(|s| s.starts_with("Consumer `KafkaOrders::run`"))
        .unwrap();
    assert!(kafka.contains("**Guarantee: at-most-once**"));
    // Each rule's code links to its page, the URL of SARIF's `helpUri`.
    let rule = |code: &str| {
        let r = msgaudit::rules::lookup(code).unwrap();
        format!("[{code}]({}) {}", r.doc_url(), r.name)
    };
    assert!(kafka.contains(&format!(
        "Decided by {} [fixtures/demo/src/consumer.rs:76](fixtures/demo/src/consumer.rs#L76)",
        rule("MA001")
    )));
    assert!(kafka.contains("- [ ] **3."));
    assert!(out.contains(&format!(
        "**Findings by rule:** 3 {}, 1 {}, 1 {} (5 in total).",
        rule("MA001"),
        rule("MA003"),
        rule("MA006")
    )));
}

#[test]
fn checklist_exits_2_on_input_errors() {
    let (code, out) = run(&["checklist", "tests/data/broken"]);
    assert_eq!(code, 2);
    assert!(out.contains("input error"));
}

/// Futures joined with `join!`/`try_join!` run beside each other; the function
/// joining them is no consumer (it receives nothing), unlike a handler callback.
#[test]
fn joined_futures_make_no_consumer() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"j\"\n").unwrap();
    std::fs::write(
        src.join("main.rs"),
        "use rdkafka::consumer::StreamConsumer;\n\
         async fn a() {}\n\
         async fn b() {}\n\
         async fn both() { tokio::join!(a(), b()); }\n\
         async fn run(c: StreamConsumer) { let m = c.recv().await; }\n",
    )
    .unwrap();
    let (code, out) = run(&["checklist", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("1 consumer and 0 producers found"), "{out}");
    assert!(out.contains("### Consumer `run`"), "{out}");
    assert!(!out.contains("Consumer `both`"), "{out}");
}

/// Answers come from the analysis; `--baseline` only chooses which findings are
/// listed (issue 20): with every finding baselined, each consumer's and producer's
/// answers are as without the baseline, and only the lists of findings empty.
#[test]
fn a_baseline_hides_findings_but_not_the_answers() {
    let dir = tempfile::tempdir().unwrap();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    for entry in walk(&demo) {
        let to = dir.path().join(entry.strip_prefix(&demo).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&entry, to).unwrap();
    }
    let root = dir.path().to_str().unwrap();
    let baseline = dir.path().join("b.json");
    let baseline = baseline.to_str().unwrap();
    let (code, _) = run(&["check", root, "--write-baseline", baseline]);
    assert_eq!(code, 0);
    let sections = |out: &str| -> String {
        let body = out.split("\n---\n").next().unwrap_or_default();
        body.split("### ")
            .filter(|s| s.starts_with("Consumer") || s.starts_with("Producer"))
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("### ")
    };
    let (_, plain) = run(&["check", "--format", "checklist", root]);
    let (_, hidden) = run(&[
        "check",
        "--format",
        "checklist",
        "--baseline",
        baseline,
        root,
    ]);
    assert!(plain.contains("No: "), "{plain}");
    assert_eq!(sections(&hidden), sections(&plain));
    assert!(hidden.contains("**Findings by rule:** none."), "{hidden}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
