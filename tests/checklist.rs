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

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    for entry in walk(from) {
        let dest = to.join(entry.strip_prefix(from).unwrap());
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&entry, dest).unwrap();
    }
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(ok.status.success(), "git {args:?}: {ok:?}");
}

/// The headings of the consumer and producer sections.
fn headings(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix("### "))
        .filter(|h| h.starts_with("Consumer") || h.starts_with("Producer"))
        .map(String::from)
        .collect()
}

const TWO_CONSUMERS: &str = "use rdkafka::consumer::StreamConsumer;

async fn apply_order(n: u32) -> u32 {
    n + 1
}

async fn apply_payment(n: u32) -> u32 {
    n + 2
}

async fn run_orders(c: StreamConsumer) {
    loop {
        let m = c.recv().await;
        apply_order(1).await;
    }
}

async fn run_payments(c: StreamConsumer) {
    loop {
        let m = c.recv().await;
        apply_payment(1).await;
    }
}
";

/// `--diff-base REV` shows the consumers whose code, or code they call, changed
/// since REV (SPEC §6): a change inside the function one of two consumers calls
/// leaves only that consumer's section, in both commands.
#[test]
fn diff_base_scopes_the_checklist_to_the_change() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"two\"\n").unwrap();
    std::fs::write(src.join("main.rs"), TWO_CONSUMERS).unwrap();
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-q", "-m", "two consumers"]);
    let root = dir.path().to_str().unwrap();
    let (code, all) = run(&["checklist", root]);
    assert_eq!(code, 0);
    assert_eq!(
        headings(&all),
        [
            "Consumer `run_orders`: unknown",
            "Consumer `run_payments`: unknown"
        ],
        "{all}"
    );
    // Nothing changed yet: no section.
    let (code, none) = run(&["checklist", "--diff-base", "HEAD", root]);
    assert_eq!(code, 0, "{none}");
    assert!(headings(&none).is_empty(), "{none}");
    std::fs::write(src.join("main.rs"), TWO_CONSUMERS.replace("n + 2", "n + 3")).unwrap();
    let (code, sub) = run(&["checklist", "--diff-base", "HEAD", root]);
    assert_eq!(code, 0, "{sub}");
    assert_eq!(
        headings(&sub),
        ["Consumer `run_payments`: unknown"],
        "{sub}"
    );
    assert!(
        sub.contains("1 of 2 consumers and 0 of 0 producers shown"),
        "{sub}"
    );
    let (_, fmt) = run(&[
        "check",
        "--format",
        "checklist",
        "--diff-base",
        "HEAD",
        root,
    ]);
    assert_eq!(fmt, sub);
}

/// Past GitHub's comment limit the checklist shortens: sections with findings
/// first, and a final line saying how many sections were left out (SPEC §6).
#[test]
fn a_large_tree_stays_under_the_comment_limit() {
    let dir = tempfile::tempdir().unwrap();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
    for i in 0..150 {
        copy_tree(&demo, &dir.path().join(format!("service_{i:02}")));
    }
    let (code, out) = run(&["checklist", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    let chars = out.chars().count();
    assert!(chars <= 65_536, "{chars} characters");
    let last = out.trim_end().lines().last().unwrap();
    assert!(
        last.contains(" sections ") && last.contains("left out**"),
        "{last}"
    );
    assert!(last.contains("msgaudit checklist"), "{last}");
    // The counts add up: sections shown (whole, shortened or one line) and left out.
    let shown = headings(&out).len()
        + out
            .lines()
            .filter(|l| l.starts_with("- Consumer") || l.starts_with("- Producer"))
            .count();
    let left: usize = last
        .trim_start_matches("**")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let (_, one) = run(&["checklist", demo.to_str().unwrap()]);
    assert_eq!(shown + left, 150 * headings(&one).len(), "{out}");
    // Sections with findings come first.
    let first = out.split("\n### ").nth(1).unwrap();
    assert!(first.contains("MA00"), "{first}");
}

/// Question 3 and question 4 agree (issue 20): where the ack runs before the
/// effect, question 4 is not ticked "the ack follows the effect", with or without
/// the findings shown (a baseline, --diff-base).
#[test]
fn ack_order_answers_agree_under_filters() {
    let dir = tempfile::tempdir().unwrap();
    let service = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/services/ma001_ma003_ma006_ma007_service_ledger-projector");
    copy_tree(&service, dir.path());
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-q", "-m", "service"]);
    let root = dir.path().to_str().unwrap();
    let baseline = dir.path().join("b.json");
    let baseline = baseline.to_str().unwrap();
    let (code, _) = run(&["check", root, "--write-baseline", baseline]);
    assert_eq!(code, 0);
    // Every file changed: --diff-base shows every section, and the findings.
    for f in walk(&dir.path().join("src")) {
        let text = std::fs::read_to_string(&f).unwrap();
        std::fs::write(&f, text.replace('\n', " \n")).unwrap();
    }
    let runs = [
        run(&["check", "--format", "checklist", root]).1,
        run(&[
            "check",
            "--format",
            "checklist",
            "--baseline",
            baseline,
            root,
        ])
        .1,
        run(&[
            "check",
            "--format",
            "checklist",
            "--diff-base",
            "HEAD",
            root,
        ])
        .1,
    ];
    let mut early = 0;
    for out in &runs {
        for s in out.split("\n### ").filter(|s| s.starts_with("Consumer")) {
            let q = |n: &str| s.lines().find(|l| l.contains(&format!("**{n}. "))).unwrap();
            if q("3").starts_with("- [ ]") && q("3").contains("No: ") {
                early += 1;
                assert!(q("4").starts_with("- [ ]"), "{s}");
                assert!(!q("4").contains("the ack follows the effect"), "{s}");
            }
        }
    }
    assert!(early >= 3, "{runs:?}");
}

fn section<'a>(out: &'a str, start: &str) -> &'a str {
    out.split("\n### ")
        .find(|s| s.starts_with(start))
        .unwrap_or_else(|| panic!("no section {start} in {out}"))
}

/// Question 6 is not ticked "nothing to retain" while an effect a redelivery
/// repeats is not idempotent (issue 20).
#[test]
fn retention_is_open_when_effects_repeat() {
    let (_, out) = run(&[
        "checklist",
        "fixtures/ma011_non_idempotent_effect/bad_kafka_sqlx_balance_increment.rs",
    ]);
    assert!(!out.contains("nothing to retain"), "{out}");
    let q6 = out.lines().find(|l| l.contains("**6.")).unwrap();
    assert!(q6.starts_with("- [ ]"), "{q6}");
    assert!(
        q6.contains("UPDATE of `wallets`") && q6.contains("not idempotent"),
        "{q6}"
    );
}

/// Question 6 says how long the source keeps messages when the analysis reads it
/// (a topic's `retention.ms`), and that it is unknown otherwise.
#[test]
fn retention_of_the_source_is_stated() {
    let (_, out) = run(&[
        "checklist",
        "fixtures/ma012_dedup_retention_window/ok_admin_client_topic_fourteen_day_cleanup",
    ]);
    let q6 = out.lines().find(|l| l.contains("**6.")).unwrap();
    assert!(
        q6.contains("Source messages are kept for 7 days on `payments`"),
        "{q6}"
    );
    let (_, demo) = run(&["checklist", "fixtures/demo"]);
    for q6 in demo.lines().filter(|l| l.contains("**6.")) {
        assert!(
            q6.contains("How long the source keeps messages is not stated"),
            "{q6}"
        );
    }
}

/// Producers get a line on what their sends promise (issue 20).
#[test]
fn producers_say_what_a_send_promises() {
    let (_, demo) = run(&["checklist", "fixtures/demo"]);
    let billing = section(&demo, "Producer `Billing::invoice`");
    assert!(
        billing.contains(
            "Sends are **at-least-once**: a send counts as sent when all in-sync replicas \
             have written it (`acks` is not set: librdkafka's default is `all`); a retried \
             send may be written twice"
        ),
        "{billing}"
    );
    let (_, ok) = run(&[
        "checklist",
        "fixtures/ma008_unconfirmed_publish/ok_acks_minus_one_idempotent.rs",
    ]);
    assert!(ok.contains("Sends are **effectively-once**"), "{ok}");
    let (_, rabbit) = run(&[
        "checklist",
        "fixtures/ma008_unconfirmed_publish/ok_batch_publish_then_wait_for_confirms.rs",
    ]);
    assert!(
        rabbit.contains("a send counts as sent when the broker has confirmed it"),
        "{rabbit}"
    );
}

/// A finding inside the function of a section is listed in that section, not
/// under "outside these message paths" (issue 20: an MA003 in `Billing::invoice`).
#[test]
fn a_finding_in_a_sections_function_is_listed_there() {
    let (_, demo) = run(&["checklist", "fixtures/demo"]);
    assert!(!demo.contains("outside these message paths"), "{demo}");
    let billing = section(&demo, "Producer `Billing::invoice`");
    let findings = billing
        .lines()
        .find(|l| l.starts_with("Findings here:"))
        .unwrap();
    assert!(
        findings.contains("MA003") && findings.contains("fixtures/demo/src/billing.rs#L22"),
        "{findings}"
    );
}

/// The checklist opens with the pipeline map (SPEC §6): topics to consumers
/// labelled with their guarantee, producers to topics with their promise,
/// findings marked.
#[test]
fn the_checklist_opens_with_a_pipeline_map() {
    let (_, demo) = run(&["checklist", "fixtures/demo"]);
    let start = demo
        .find("```mermaid\nflowchart LR\n")
        .expect("a mermaid block");
    assert!(start < demo.find("### Consumer").unwrap());
    let block = &demo[start..];
    let block = &block[..block[3..].find("```").unwrap() + 6];
    assert!(block.contains("([\"orders.created\"])"), "{block}");
    assert!(
        block.contains("[\"KafkaOrders::run ⚠ MA001\"]:::finding"),
        "{block}"
    );
    assert!(
        block.contains("[\"Billing::invoice ⚠ MA003 MA006\"]:::finding"),
        "{block}"
    );
    assert!(block.contains("-->|\"at-most-once\"|"), "{block}");
    assert!(block.contains("-->|\"effectively-once\"|"), "{block}");
    assert!(block.contains("-->|\"at-least-once\"|"), "{block}");
    // Deterministic.
    let (_, again) = run(&["checklist", "fixtures/demo"]);
    assert_eq!(demo, again);
}

/// A serverless batch handler (SPEC §2, serverless event sources): the map names the
/// event source its SAM template declares; question 2 says whether the records the
/// handler lists as failed are redelivered (`ReportBatchItemFailures`) or deleted with
/// the batch; in the latter case MA015 is the handler's, and decides at-most-once.
#[test]
fn serverless_event_sources_in_the_checklist() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ma015_batch_failures_not_reported/ok_sam_sqs_function_response_types");
    let checklist = |report: bool| -> String {
        let dir = tempfile::tempdir().unwrap();
        for entry in walk(&fixture) {
            let to = dir.path().join(entry.strip_prefix(&fixture).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            let text = std::fs::read_to_string(&entry).unwrap();
            let text = if report {
                text
            } else {
                text.replace(
                    "            FunctionResponseTypes:\n              - ReportBatchItemFailures\n",
                    "",
                )
            };
            std::fs::write(to, text).unwrap();
        }
        let (code, out) = run(&["checklist", dir.path().to_str().unwrap()]);
        assert_eq!(code, 0);
        // Paths are those of the temporary copy.
        out.replace(&format!("{}/", dir.path().display()), "")
    };
    let label = "([\"SQS RefundLinesQueue.Arn #40;RefundIntakeFunction#41;\"])";

    let on = checklist(true);
    assert!(on.contains(label), "{on}");
    assert!(!on.contains("not literal"), "{on}");
    assert!(
        on.contains("lists the record: `RefundIntakeFunction`'s event source enables `ReportBatchItemFailures`, so the listed records are redelivered."),
        "{on}"
    );
    assert!(on.contains("- [x] **2."), "{on}");
    assert!(!on.contains("MA015"), "{on}");
    assert!(!on.contains("**Guarantee: at-most-once**"), "{on}");

    let off = checklist(false);
    assert!(off.contains(label), "{off}");
    let section = off
        .split("### ")
        .find(|s| s.starts_with("Consumer `handler`"))
        .expect("a section for the handler");
    assert!(
        section.contains("lists the record, but `RefundIntakeFunction`'s event source does not enable `ReportBatchItemFailures`: the list is ignored and the batch is deleted ([MA015]"),
        "{section}"
    );
    assert!(section.contains("- [ ] **2."), "{section}");
    assert!(
        section.contains(
            "**Guarantee: at-most-once**: the records the handler lists as failed are lost"
        ),
        "{section}"
    );
    assert!(section.contains("Decided by [MA015]"), "{section}");
    assert!(
        !off.contains("Findings outside these message paths"),
        "{off}"
    );
    assert!(off.contains("-->|\"at-most-once\"|"), "{off}");
}

/// One template, two functions: each handler's section says what its own event
/// source does with the records it lists, and the finding is the one whose event
/// source ignores them.
#[test]
fn serverless_two_functions_one_ignoring_failures() {
    let (code, out) = run(&[
        "checklist",
        "fixtures/ma015_batch_failures_not_reported/bad_sam_two_functions_one_missing",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Kinesis LedgerStream.Arn #40;LedgerFunction#41;"),
        "{out}"
    );
    assert!(
        out.contains("DynamoDB Streams AccountsTable.StreamArn #40;SyncFunction#41;"),
        "{out}"
    );
    // Two functions of one name are two nodes, each named with its file.
    assert!(
        out.contains("[\"handler #40;stream_ledger.rs#41;\"]"),
        "{out}"
    );
    assert!(
        out.contains("[\"handler #40;table_sync.rs#41; ⚠ MA015\"]:::finding"),
        "{out}"
    );
    assert!(
        !out.contains("Findings outside these message paths"),
        "{out}"
    );
    let sections: Vec<&str> = out
        .split("### ")
        .filter(|s| s.starts_with("Consumer `handler`"))
        .collect();
    assert_eq!(sections.len(), 2, "{out}");
    let (ledger, sync) = if sections[0].contains("stream_ledger.rs") {
        (sections[0], sections[1])
    } else {
        (sections[1], sections[0])
    };
    assert!(
        ledger.contains("`LedgerFunction`'s event source enables"),
        "{ledger}"
    );
    assert!(!ledger.contains("MA015"), "{ledger}");
    assert!(
        ledger.contains("**Guarantee: effectively-once**"),
        "{ledger}"
    );
    assert!(
        sync.contains("`SyncFunction`'s event source does not enable"),
        "{sync}"
    );
    assert!(sync.contains("**Guarantee: at-most-once**"), "{sync}");
    assert!(sync.contains("Decided by [MA015]"), "{sync}");
}

/// A topic name holding a line break (a raw string literal, an escape) stays
/// readable in the map: the break is a `<br>`, and the label still ends where it
/// should, so the map renders (tests/mermaid_render.rs draws it).
#[test]
fn line_breaks_in_map_labels_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"j\"\n").unwrap();
    std::fs::write(src.join("main.rs"), NEWLINE_TOPICS).unwrap();
    let (code, out) = run(&["checklist", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0);
    let start = out.find("```mermaid\n").expect("a mermaid block");
    let block = &out[start..];
    let block = &block[..block[3..].find("```").unwrap() + 6];
    assert!(block.contains("([\"orders<br>retry\"])"), "{block}");
    assert!(block.contains("([\"audit<br>log\"])"), "{block}");
    // One node per line: no label runs over a line of the block.
    for line in block.lines().skip(3) {
        if line != "```" {
            assert!(line.starts_with("  n"), "{line:?} in {block}");
        }
    }
}

/// A consumer subscribing to topics whose names hold line breaks.
const NEWLINE_TOPICS: &str = "use rdkafka::consumer::{Consumer, StreamConsumer};\n\
async fn run(c: StreamConsumer) {\n\
    c.subscribe(&[r\"orders\nretry\", \"audit\\nlog\"]).unwrap();\n\
    let m = c.recv().await;\n\
}\n";
