//! `check --fix` and `--diff` (SPEC §4, "Fixes"): before/after pairs per YAML
//! dialect and for the rdkafka `ClientConfig` chain, generated into a temporary
//! directory. For each: the fixed file is exactly the expected text (every byte
//! outside the edits kept, CRLF kept), a second `--fix` changes nothing, the
//! re-analysis has no finding of the fixed kind, a YAML file loads to the same
//! document but for the changed values, and the `--diff` output is a patch `git
//! apply` takes to the same text. Unsafe fixes (MA007, MA002, MA008) wait for
//! `--unsafe-fixes`, and findings where the change would stop progress or change
//! the id carry none.

mod common;
use common::{git, git_repo, msgaudit, write};

use std::fs;
use std::path::Path;

use serde_json::{json, Value};

struct Case {
    name: &'static str,
    file: &'static str,
    before: &'static str,
    after: &'static str,
    /// The codes the fix removes.
    codes: &'static [&'static str],
    /// How many findings the fixes remove.
    fixed: usize,
    /// YAML: the values that change (JSON pointer into the documents, new value).
    changed: &'static [(&'static str, &'static str)],
}

/// A transactional producer of `orders`, so that a `read_uncommitted` reader of it
/// is an MA004 finding (the cases put their reader in another file).
const TX_PRODUCER: &str =
    "producer:\n  bootstrap.servers: kafka:9092\n  transactional.id: orders-tx\n  topic: orders\n";

const CASES: &[Case] = &[
    Case {
        name: "plain property map, two weakenings, one finding",
        file: "producer.yaml",
        before: "# producer settings\nproducer:\n  bootstrap.servers: kafka:9092\n  acks: 0   # was 0\n  enable.idempotence: 'false'\n  value.serializer: x\n",
        after: "# producer settings\nproducer:\n  bootstrap.servers: kafka:9092\n  acks: all   # was 0\n  enable.idempotence: 'true'\n  value.serializer: x\n",
        codes: &["MA008"],
        fixed: 1,
        changed: &[("/0/producer/acks", "all"), ("/0/producer/enable.idempotence", "true")],
    },
    Case {
        name: "plain property map reader, upper case kept",
        file: "reader.yaml",
        before: "consumer:\n  bootstrap.servers: kafka:9092\n  group.id: g\n  topics: orders\n  isolation.level: \"READ_UNCOMMITTED\"\n",
        after: "consumer:\n  bootstrap.servers: kafka:9092\n  group.id: g\n  topics: orders\n  isolation.level: \"READ_COMMITTED\"\n",
        codes: &["MA004"],
        fixed: 1,
        changed: &[("/0/consumer/isolation.level", "READ_COMMITTED")],
    },
    Case {
        name: "Spring spring.kafka.* and properties.*",
        file: "application.yml",
        before: "spring:\n  kafka:\n    bootstrap-servers: kafka:9092\n    producer:\n      acks: 1 # leader only\n      properties:\n        \"[enable.idempotence]\": false\n    consumer:\n      group-id: g\n      isolation-level: read_uncommitted\n",
        after: "spring:\n  kafka:\n    bootstrap-servers: kafka:9092\n    producer:\n      acks: all # leader only\n      properties:\n        \"[enable.idempotence]\": true\n    consumer:\n      group-id: g\n      isolation-level: read_uncommitted\n",
        codes: &["MA008"],
        fixed: 1,
        changed: &[
            ("/0/spring/kafka/producer/acks", "all"),
            ("/0/spring/kafka/producer/properties/[enable.idempotence]", "true"),
        ],
    },
    Case {
        name: "Spring profile reads uncommitted from a transactional producer",
        file: "application.yml",
        before: "spring:\n  kafka:\n    producer:\n      transaction-id-prefix: tx-\n    consumer:\n      properties:\n        isolation.level: 'read_uncommitted'\n---\nspring:\n  config:\n    activate:\n      on-profile: replay\n  kafka:\n    consumer:\n      isolation-level: read_uncommitted\n",
        after: "spring:\n  kafka:\n    producer:\n      transaction-id-prefix: tx-\n    consumer:\n      properties:\n        isolation.level: 'read_committed'\n---\nspring:\n  config:\n    activate:\n      on-profile: replay\n  kafka:\n    consumer:\n      isolation-level: read_committed\n",
        codes: &["MA004"],
        fixed: 2,
        changed: &[
            ("/0/spring/kafka/consumer/properties/isolation.level", "read_committed"),
            ("/1/spring/kafka/consumer/isolation-level", "read_committed"),
        ],
    },
    Case {
        name: "Spring profile inherits the default's level: one finding at the value, one edit",
        file: "application.yml",
        before: "spring:\n  kafka:\n    producer:\n      transaction-id-prefix: tx-\n    consumer:\n      isolation-level: read_uncommitted\n---\nspring:\n  config:\n    activate:\n      on-profile: replay\n  kafka:\n    consumer:\n      group-id: replay\n",
        after: "spring:\n  kafka:\n    producer:\n      transaction-id-prefix: tx-\n    consumer:\n      isolation-level: read_committed\n---\nspring:\n  config:\n    activate:\n      on-profile: replay\n  kafka:\n    consumer:\n      group-id: replay\n",
        codes: &["MA004"],
        fixed: 1,
        changed: &[("/0/spring/kafka/consumer/isolation-level", "read_committed")],
    },
    Case {
        name: "Strimzi consumer.override.* and producer.override.*",
        file: "connectors.yaml",
        before: "apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnector\nmetadata:\n  name: sink\nspec:\n  class: io.confluent.connect.jdbc.JdbcSinkConnector\n  config:\n    topics: orders\n    consumer.override.isolation.level: read_uncommitted\n---\napiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnector\nmetadata:\n  name: source\nspec:\n  class: io.debezium.connector.postgresql.PostgresConnector\n  config:\n    producer.override.acks: \"1\"\n",
        after: "apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnector\nmetadata:\n  name: sink\nspec:\n  class: io.confluent.connect.jdbc.JdbcSinkConnector\n  config:\n    topics: orders\n    consumer.override.isolation.level: read_committed\n---\napiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnector\nmetadata:\n  name: source\nspec:\n  class: io.debezium.connector.postgresql.PostgresConnector\n  config:\n    producer.override.acks: \"all\"\n",
        codes: &["MA004", "MA008"],
        fixed: 2,
        changed: &[
            ("/0/spec/config/consumer.override.isolation.level", "read_committed"),
            ("/1/spec/config/producer.override.acks", "all"),
        ],
    },
    Case {
        name: "Redpanda Connect kafka_franz output",
        file: "pipeline.yaml",
        before: "input:\n  generate:\n    mapping: 'root = {}'\noutput:\n  kafka_franz:\n    seed_brokers: [ \"redpanda:9092\" ]\n    topic: generated\n    idempotent_write: false\n",
        after: "input:\n  generate:\n    mapping: 'root = {}'\noutput:\n  kafka_franz:\n    seed_brokers: [ \"redpanda:9092\" ]\n    topic: generated\n    idempotent_write: true\n",
        codes: &["MA008"],
        fixed: 1,
        changed: &[("/0/output/kafka_franz/idempotent_write", "true")],
    },
    Case {
        name: "Vector librdkafka_options",
        file: "vector.yaml",
        before: "sinks:\n  to_kafka:\n    type: kafka\n    inputs: [ logs ]\n    bootstrap_servers: kafka:9092\n    topic: app-logs\n    encoding:\n      codec: json\n    librdkafka_options:\n      acks: \"1\"\n",
        after: "sinks:\n  to_kafka:\n    type: kafka\n    inputs: [ logs ]\n    bootstrap_servers: kafka:9092\n    topic: app-logs\n    encoding:\n      codec: json\n    librdkafka_options:\n      acks: \"all\"\n",
        codes: &["MA008"],
        fixed: 1,
        changed: &[("/0/sinks/to_kafka/librdkafka_options/acks", "all")],
    },
    Case {
        name: "CRLF line endings kept",
        file: "crlf.yaml",
        before: "producer:\r\n  bootstrap.servers: kafka:9092\r\n  acks: 1\r\n",
        after: "producer:\r\n  bootstrap.servers: kafka:9092\r\n  acks: all\r\n",
        codes: &["MA008"],
        fixed: 1,
        changed: &[("/0/producer/acks", "all")],
    },
    Case {
        name: "two rounds: idempotence on makes the in-flight count a finding",
        file: "rounds.yaml",
        before: "producer:\n  bootstrap.servers: kafka:9092\n  enable.idempotence: false\n  max.in.flight.requests.per.connection: 10\n",
        after: "producer:\n  bootstrap.servers: kafka:9092\n  enable.idempotence: true\n  max.in.flight.requests.per.connection: 5\n",
        codes: &["MA008"],
        fixed: 2,
        changed: &[
            ("/0/producer/enable.idempotence", "true"),
            ("/0/producer/max.in.flight.requests.per.connection", "5"),
        ],
    },
    Case {
        name: "Spring consumer leaves the level unset: added to its block, after its properties",
        file: "application.yml",
        before: "spring:\n  kafka:\n    consumer:\n      group-id: billing # the group\n      properties:\n        \"[max.poll.records]\": 10\n    listener:\n      ack-mode: record\n",
        after: "spring:\n  kafka:\n    consumer:\n      group-id: billing # the group\n      properties:\n        \"[max.poll.records]\": 10\n      isolation-level: read_committed\n    listener:\n      ack-mode: record\n",
        codes: &["MA004"],
        fixed: 1,
        changed: &[("/0/spring/kafka/consumer/isolation-level", "read_committed")],
    },
    Case {
        name: "Spring consumer in camel case, CRLF, no final line break",
        file: "application.yaml",
        before: "spring:\r\n  kafka:\r\n    consumer:\r\n      groupId: billing\r\n      autoOffsetReset: earliest",
        after: "spring:\r\n  kafka:\r\n    consumer:\r\n      groupId: billing\r\n      autoOffsetReset: earliest\r\n      isolationLevel: read_committed",
        codes: &["MA004"],
        fixed: 1,
        changed: &[("/0/spring/kafka/consumer/isolationLevel", "read_committed")],
    },
    Case {
        name: "Strimzi sink connector without consumer.override.isolation.level, quotes kept",
        file: "sink.yaml",
        before: "apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnector\nmetadata:\n  name: sink\nspec:\n  class: io.confluent.connect.jdbc.JdbcSinkConnector\n  config:\n    \"topics\": \"orders\"\n    \"connection.url\": \"jdbc:postgresql://db/app\"\n  tasksMax: 1\n",
        after: "apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnector\nmetadata:\n  name: sink\nspec:\n  class: io.confluent.connect.jdbc.JdbcSinkConnector\n  config:\n    \"topics\": \"orders\"\n    \"connection.url\": \"jdbc:postgresql://db/app\"\n    \"consumer.override.isolation.level\": \"read_committed\"\n  tasksMax: 1\n",
        codes: &["MA004"],
        fixed: 1,
        changed: &[("/0/spec/config/consumer.override.isolation.level", "read_committed")],
    },
    Case {
        name: "Redpanda Connect franz-go input without transaction_isolation_level, in a list",
        file: "pipeline.yaml",
        before: "input:\n  broker:\n    inputs:\n      - kafka_franz:\n          seed_brokers: [ redpanda:9092 ]\n          topics: [ orders ]\n          consumer_group: 'billing'\n      - generate:\n          mapping: 'root = {}'\noutput:\n  stdout: {}\n",
        after: "input:\n  broker:\n    inputs:\n      - kafka_franz:\n          seed_brokers: [ redpanda:9092 ]\n          topics: [ orders ]\n          consumer_group: 'billing'\n          transaction_isolation_level: 'read_committed'\n      - generate:\n          mapping: 'root = {}'\noutput:\n  stdout: {}\n",
        codes: &["MA004"],
        fixed: 1,
        changed: &[("/0/input/broker/inputs/0/kafka_franz/transaction_isolation_level", "read_committed")],
    },
    Case {
        name: "rdkafka ClientConfig .set chain",
        file: "src/lib.rs",
        before: "use rdkafka::config::ClientConfig;\nuse rdkafka::producer::FutureProducer;\n\npub fn producer(brokers: &str) -> FutureProducer {\n    ClientConfig::new()\n        .set(\"bootstrap.servers\", brokers)\n        .set(\"acks\", \"1\") // leader only\n        .set(\"enable.idempotence\", \"false\")\n        .create()\n        .unwrap()\n}\n",
        after: "use rdkafka::config::ClientConfig;\nuse rdkafka::producer::FutureProducer;\n\npub fn producer(brokers: &str) -> FutureProducer {\n    ClientConfig::new()\n        .set(\"bootstrap.servers\", brokers)\n        .set(\"acks\", \"all\") // leader only\n        .set(\"enable.idempotence\", \"true\")\n        .create()\n        .unwrap()\n}\n",
        codes: &["MA008"],
        fixed: 1,
        changed: &[],
    },
    Case {
        name: "rdkafka consumer reading uncommitted",
        file: "src/lib.rs",
        before: "use rdkafka::config::ClientConfig;\nuse rdkafka::consumer::{Consumer, StreamConsumer};\nuse rdkafka::producer::FutureProducer;\n\npub fn producer() -> FutureProducer {\n    ClientConfig::new().set(\"transactional.id\", \"w\").create().unwrap()\n}\n\npub fn send(p: &FutureProducer) {\n    let _ = p.send_result(rdkafka::producer::FutureRecord::<(), [u8]>::to(\"orders\"));\n}\n\npub fn reader() -> StreamConsumer {\n    let c: StreamConsumer = ClientConfig::new()\n        .set(\"group.id\", \"g\")\n        .set(\"isolation.level\", \"read_uncommitted\")\n        .create()\n        .unwrap();\n    c.subscribe(&[\"orders\"]).unwrap();\n    c\n}\n",
        after: "use rdkafka::config::ClientConfig;\nuse rdkafka::consumer::{Consumer, StreamConsumer};\nuse rdkafka::producer::FutureProducer;\n\npub fn producer() -> FutureProducer {\n    ClientConfig::new().set(\"transactional.id\", \"w\").create().unwrap()\n}\n\npub fn send(p: &FutureProducer) {\n    let _ = p.send_result(rdkafka::producer::FutureRecord::<(), [u8]>::to(\"orders\"));\n}\n\npub fn reader() -> StreamConsumer {\n    let c: StreamConsumer = ClientConfig::new()\n        .set(\"group.id\", \"g\")\n        .set(\"isolation.level\", \"read_committed\")\n        .create()\n        .unwrap();\n    c.subscribe(&[\"orders\"]).unwrap();\n    c\n}\n",
        codes: &["MA004"],
        fixed: 1,
        changed: &[],
    },
];

/// A git repository in `dir` holding the case's file (and the transactional
/// producer of `orders` an MA004 case needs), committed.
fn setup(dir: &Path, case: &Case) {
    git_repo(dir);
    if case.file.ends_with(".rs") {
        write(dir, "Cargo.toml", "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nrdkafka = \"0.36\"\n");
    } else if case.codes.contains(&"MA004") {
        write(dir, "tx-producer.yaml", TX_PRODUCER);
    }
    write(dir, case.file, case.before);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "before"]);
}

/// `msgaudit check --format json ARGS .` in `dir`: (exit code, stdout, stderr).
fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = msgaudit()
        .current_dir(dir)
        .args(["check", "--format", "json"])
        .args(args)
        .arg(".")
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn codes_of(json: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

fn yaml_docs(text: &str) -> Value {
    Value::Array(serde_saphyr::from_multiple::<Value>(text).unwrap())
}

#[test]
fn each_case_is_found_and_carries_a_safe_fix() {
    for case in CASES {
        let tmp = tempfile::tempdir().unwrap();
        setup(tmp.path(), case);
        let (_, out, err) = run(tmp.path(), &[]);
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
        let with_fix: Vec<&Value> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| case.codes.contains(&f["code"].as_str().unwrap()))
            .collect();
        assert!(!with_fix.is_empty(), "{}: no finding\n{out}", case.name);
        for f in with_fix {
            assert_eq!(
                f["fix"]["applicability"],
                json!("safe"),
                "{}: {f}",
                case.name
            );
            assert!(
                !f["fix"]["edits"].as_array().unwrap().is_empty(),
                "{}",
                case.name
            );
        }
    }
}

#[test]
fn fix_rewrites_only_the_values_and_a_second_run_changes_nothing() {
    for case in CASES {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        setup(dir, case);
        let (_, out, err) = run(dir, &["--fix"]);
        let after = fs::read(dir.join(case.file)).unwrap();
        assert_eq!(
            String::from_utf8(after).unwrap(),
            case.after,
            "{}: {err}",
            case.name
        );
        assert!(
            err.contains(&format!("msgaudit: fixed {} finding", case.fixed)),
            "{}: {err}",
            case.name
        );
        let left = codes_of(&out);
        assert!(
            !left.iter().any(|c| case.codes.contains(&c.as_str())),
            "{}: still {left:?}",
            case.name
        );
        // The re-analysis of the written file agrees.
        let (_, out2, err2) = run(dir, &["--fix"]);
        assert_eq!(
            fs::read_to_string(dir.join(case.file)).unwrap(),
            case.after,
            "{}",
            case.name
        );
        assert!(
            err2.contains("msgaudit: fixed 0 findings"),
            "{}: {err2}",
            case.name
        );
        assert_eq!(codes_of(&out2), left, "{}", case.name);
        if !case.file.ends_with(".rs") {
            let mut expected = yaml_docs(case.before);
            for (pointer, value) in case.changed {
                match expected.pointer_mut(pointer) {
                    Some(v) => *v = json!(value),
                    // A key the fix adds: into the map that lacked it.
                    None => {
                        let (map, key) = pointer.rsplit_once('/').unwrap();
                        expected
                            .pointer_mut(map)
                            .and_then(Value::as_object_mut)
                            .unwrap_or_else(|| panic!("{}: no {map}", case.name))
                            .insert(key.to_string(), json!(value));
                    }
                }
            }
            // Numbers and booleans compare by their text: `acks: 1` becomes `acks: all`.
            assert_eq!(
                normalize(yaml_docs(case.after)),
                normalize(expected),
                "{}",
                case.name
            );
        }
    }
}

/// Scalars as strings, so that a value's type may change with its text.
fn normalize(v: Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.into_iter().map(normalize).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, normalize(v))).collect()),
        Value::Null => Value::Null,
        Value::String(s) => Value::String(s),
        other => Value::String(other.to_string()),
    }
}

/// `--diff` left `file` as `texts.0`, said `fixed`, and its output applies with git
/// (`apply --check`, then `apply`) to give `texts.1`.
fn diff_applies(
    dir: &Path,
    name: &str,
    file: &str,
    texts: (&str, &str),
    diff: &str,
    err: &str,
    fixed: &str,
) {
    assert_eq!(
        fs::read_to_string(dir.join(file)).unwrap(),
        texts.0,
        "{name}: --diff wrote"
    );
    assert!(err.contains(fixed), "{name}: {err}");
    let patch = dir.join(".git").join("fix.patch");
    fs::write(&patch, diff).unwrap();
    let patch = patch.to_str().unwrap();
    git(dir, &["apply", "--check", patch]);
    git(dir, &["apply", patch]);
    assert_eq!(
        fs::read_to_string(dir.join(file)).unwrap(),
        texts.1,
        "{name}: the diff\n{diff}"
    );
}

#[test]
fn diff_writes_nothing_and_git_applies_it_to_the_fixed_text() {
    for case in CASES {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        setup(dir, case);
        let (_, diff, err) = run(dir, &["--diff"]);
        let fixed = format!("msgaudit: would fix {} finding", case.fixed);
        diff_applies(
            dir,
            case.name,
            case.file,
            (case.before, case.after),
            &diff,
            &err,
            &fixed,
        );
    }
}

#[test]
fn a_value_through_an_alias_or_a_constant_is_not_fixed() {
    let cases = [
        (
            "defaults.yaml",
            "consumerDefaults: &d\n  bootstrap.servers: kafka:9092\n  isolation.level: read_uncommitted\nreader:\n  <<: *d\n  group.id: g\n  topics: orders\n",
        ),
        (
            "src/lib.rs",
            "use rdkafka::config::ClientConfig;\nuse rdkafka::producer::FutureProducer;\nconst ACKS: &str = \"1\";\npub fn producer() -> FutureProducer {\n    ClientConfig::new().set(\"acks\", ACKS).create().unwrap()\n}\n",
        ),
    ];
    for (file, text) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write(dir, "tx-producer.yaml", TX_PRODUCER);
        write(dir, file, text);
        let (_, out, err) = run(dir, &["--fix"]);
        assert_eq!(fs::read_to_string(dir.join(file)).unwrap(), text, "{file}");
        assert!(err.contains("msgaudit: fixed 0 findings"), "{file}: {err}");
        assert!(!codes_of(&out).is_empty(), "{file}: {out}");
    }
}

#[test]
fn a_bom_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "p.yaml",
        "\u{feff}producer:\n  bootstrap.servers: k:9092\n  acks: 0\n",
    );
    run(dir, &["--fix"]);
    assert_eq!(
        fs::read_to_string(dir.join("p.yaml")).unwrap(),
        "\u{feff}producer:\n  bootstrap.servers: k:9092\n  acks: all\n"
    );
}

/// An unsafe fix (SPEC §4): applied only with `--unsafe-fixes`.
struct UnsafeCase {
    name: &'static str,
    /// The `[dependencies]` of the crate (Rust cases).
    deps: &'static str,
    file: &'static str,
    before: &'static str,
    after: &'static str,
    code: &'static str,
}

const RDKAFKA_COMMITS_BEFORE: &str = "use rdkafka::config::ClientConfig;\nuse rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};\nuse rdkafka::Message;\n\npub async fn run(pool: &sqlx::PgPool) -> anyhow::Result<()> {\n    let consumer: StreamConsumer = ClientConfig::new()\n        .set(\"group.id\", \"billing\")\n        .set(\"enable.auto.commit\", \"true\") // timer\n        .create()?;\n    consumer.subscribe(&[\"orders\"])?;\n    loop {\n        let msg = consumer.recv().await?;\n        sqlx::query(\"INSERT INTO charges (id) VALUES ($1) ON CONFLICT DO NOTHING\")\n            .bind(msg.offset())\n            .execute(pool)\n            .await?;\n        consumer.commit_message(&msg, CommitMode::Async)?;\n    }\n}\n";

const UNSAFE_CASES: &[UnsafeCase] = &[
    UnsafeCase {
        name: "MA007 rdkafka consumer that commits each message after its effect",
        deps: "rdkafka = \"0.36\"\nsqlx = \"0.7\"\n",
        file: "src/lib.rs",
        before: RDKAFKA_COMMITS_BEFORE,
        after: "use rdkafka::config::ClientConfig;\nuse rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};\nuse rdkafka::Message;\n\npub async fn run(pool: &sqlx::PgPool) -> anyhow::Result<()> {\n    let consumer: StreamConsumer = ClientConfig::new()\n        .set(\"group.id\", \"billing\")\n        .set(\"enable.auto.commit\", \"false\") // timer\n        .create()?;\n    consumer.subscribe(&[\"orders\"])?;\n    loop {\n        let msg = consumer.recv().await?;\n        sqlx::query(\"INSERT INTO charges (id) VALUES ($1) ON CONFLICT DO NOTHING\")\n            .bind(msg.offset())\n            .execute(pool)\n            .await?;\n        consumer.commit_message(&msg, CommitMode::Async)?;\n    }\n}\n",
        code: "MA007",
    },
    UnsafeCase {
        name: "MA007 rdkafka chain that leaves auto commit unset, the consumer commits after its effect",
        deps: "rdkafka = \"0.36\"\nsqlx = \"0.7\"\n",
        file: "src/lib.rs",
        before: "use rdkafka::config::ClientConfig;\nuse rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};\nuse rdkafka::Message;\n\npub async fn run(pool: &sqlx::PgPool) -> anyhow::Result<()> {\n    let consumer: StreamConsumer = ClientConfig::new()\n        .set(\"bootstrap.servers\", \"kafka:9092\")\n        .set(\"group.id\", \"billing\") // team billing\n        .create()?;\n    consumer.subscribe(&[\"orders\"])?;\n    loop {\n        let msg = consumer.recv().await?;\n        sqlx::query(\"INSERT INTO charges (id) VALUES ($1) ON CONFLICT DO NOTHING\")\n            .bind(msg.offset())\n            .execute(pool)\n            .await?;\n        consumer.commit_message(&msg, CommitMode::Async)?;\n    }\n}\n",
        after: "use rdkafka::config::ClientConfig;\nuse rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};\nuse rdkafka::Message;\n\npub async fn run(pool: &sqlx::PgPool) -> anyhow::Result<()> {\n    let consumer: StreamConsumer = ClientConfig::new()\n        .set(\"bootstrap.servers\", \"kafka:9092\")\n        .set(\"group.id\", \"billing\")\n        .set(\"enable.auto.commit\", \"false\") // team billing\n        .create()?;\n    consumer.subscribe(&[\"orders\"])?;\n    loop {\n        let msg = consumer.recv().await?;\n        sqlx::query(\"INSERT INTO charges (id) VALUES ($1) ON CONFLICT DO NOTHING\")\n            .bind(msg.offset())\n            .execute(pool)\n            .await?;\n        consumer.commit_message(&msg, CommitMode::Async)?;\n    }\n}\n",
        code: "MA007",
    },
    UnsafeCase {
        name: "MA007 rdkafka config set in statements, auto commit unset",
        deps: "rdkafka = \"0.36\"\nsqlx = \"0.7\"\n",
        file: "src/lib.rs",
        before: "use rdkafka::config::ClientConfig;\nuse rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};\nuse rdkafka::Message;\n\npub async fn run(pool: &sqlx::PgPool) -> anyhow::Result<()> {\n    let mut cfg = ClientConfig::new();\n    cfg.set(\"group.id\", \"billing\");\n    let consumer: StreamConsumer = cfg.create()?;\n    consumer.subscribe(&[\"orders\"])?;\n    loop {\n        let msg = consumer.recv().await?;\n        sqlx::query(\"INSERT INTO charges (id) VALUES ($1) ON CONFLICT DO NOTHING\")\n            .bind(msg.offset())\n            .execute(pool)\n            .await?;\n        consumer.commit_message(&msg, CommitMode::Async)?;\n    }\n}\n",
        after: "use rdkafka::config::ClientConfig;\nuse rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};\nuse rdkafka::Message;\n\npub async fn run(pool: &sqlx::PgPool) -> anyhow::Result<()> {\n    let mut cfg = ClientConfig::new();\n    cfg.set(\"group.id\", \"billing\").set(\"enable.auto.commit\", \"false\");\n    let consumer: StreamConsumer = cfg.create()?;\n    consumer.subscribe(&[\"orders\"])?;\n    loop {\n        let msg = consumer.recv().await?;\n        sqlx::query(\"INSERT INTO charges (id) VALUES ($1) ON CONFLICT DO NOTHING\")\n            .bind(msg.offset())\n            .execute(pool)\n            .await?;\n        consumer.commit_message(&msg, CommitMode::Async)?;\n    }\n}\n",
        code: "MA007",
    },
    UnsafeCase {
        name: "MA007 Spring consumer (the listener container commits)",
        deps: "",
        file: "application.yml",
        before: "spring:\n  kafka:\n    bootstrap-servers: kafka:9092\n    consumer:\n      group-id: billing\n      enable-auto-commit: true # timer\n",
        after: "spring:\n  kafka:\n    bootstrap-servers: kafka:9092\n    consumer:\n      group-id: billing\n      enable-auto-commit: false # timer\n",
        code: "MA007",
    },
    UnsafeCase {
        name: "MA002 id minted at the top of a retry loop",
        deps: "reqwest = \"0.12\"\nuuid = \"1\"\ntokio = \"1\"\n",
        file: "src/lib.rs",
        before: "use uuid::Uuid;\n\npub async fn charge(http: &reqwest::Client, url: &str) -> Result<(), reqwest::Error> {\n    for attempt in 0..5 {\n        let key = Uuid::new_v4();\n        match http.post(url).header(\"Idempotency-Key\", key.to_string()).send().await {\n            Ok(r) if r.status().is_success() => break,\n            _ => tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await,\n        }\n    }\n    Ok(())\n}\n",
        after: "use uuid::Uuid;\n\npub async fn charge(http: &reqwest::Client, url: &str) -> Result<(), reqwest::Error> {\n    let key = Uuid::new_v4();\n    for attempt in 0..5 {\n        match http.post(url).header(\"Idempotency-Key\", key.to_string()).send().await {\n            Ok(r) if r.status().is_success() => break,\n            _ => tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await,\n        }\n    }\n    Ok(())\n}\n",
        code: "MA002",
    },
    UnsafeCase {
        name: "MA002 id minted at the top of a retry closure, CRLF and a comment kept",
        deps: "reqwest = \"0.12\"\nulid = \"1\"\nbackoff = \"0.4\"\n",
        file: "src/lib.rs",
        before: "use backoff::ExponentialBackoff;\r\nuse ulid::Ulid;\r\n\r\npub async fn publish(http: &reqwest::Client, url: &str) -> Result<(), backoff::Error<reqwest::Error>> {\r\n    let r = backoff::future::retry(ExponentialBackoff::default(), || async {\r\n        let id = Ulid::new(); // event id\r\n        http.post(url).header(\"Idempotency-Key\", id.to_string()).send().await?;\r\n        Ok(())\r\n    })\r\n    .await;\r\n    r\r\n}\r\n",
        after: "use backoff::ExponentialBackoff;\r\nuse ulid::Ulid;\r\n\r\npub async fn publish(http: &reqwest::Client, url: &str) -> Result<(), backoff::Error<reqwest::Error>> {\r\n    let id = Ulid::new(); // event id\r\n    let r = backoff::future::retry(ExponentialBackoff::default(), || async {\r\n        http.post(url).header(\"Idempotency-Key\", id.to_string()).send().await?;\r\n        Ok(())\r\n    })\r\n    .await;\r\n    r\r\n}\r\n",
        code: "MA002",
    },
    UnsafeCase {
        name: "MA002 id bound over two lines at the top of a retry loop, a comment kept",
        deps: "reqwest = \"0.12\"\nuuid = \"1\"\ntokio = \"1\"\n",
        file: "src/lib.rs",
        before: "use uuid::Uuid;\n\npub async fn charge(http: &reqwest::Client, url: &str) -> Result<(), reqwest::Error> {\n    for attempt in 0..5 {\n        let key =\n            Uuid::new_v4(); // one per charge\n        match http.post(url).header(\"Idempotency-Key\", key.to_string()).send().await {\n            Ok(r) if r.status().is_success() => break,\n            _ => tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await,\n        }\n    }\n    Ok(())\n}\n",
        after: "use uuid::Uuid;\n\npub async fn charge(http: &reqwest::Client, url: &str) -> Result<(), reqwest::Error> {\n    let key =\n        Uuid::new_v4(); // one per charge\n    for attempt in 0..5 {\n        match http.post(url).header(\"Idempotency-Key\", key.to_string()).send().await {\n            Ok(r) if r.status().is_success() => break,\n            _ => tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await,\n        }\n    }\n    Ok(())\n}\n",
        code: "MA002",
    },
    UnsafeCase {
        name: "MA002 generator call over several lines at the top of a retry closure, CRLF",
        deps: "reqwest = \"0.12\"\nuuid = \"1\"\nbackoff = \"0.4\"\n",
        file: "src/lib.rs",
        before: "use backoff::ExponentialBackoff;\r\nuse uuid::{ContextV7, Timestamp, Uuid};\r\n\r\npub async fn publish(http: &reqwest::Client, url: &str, ctx: &ContextV7) -> Result<(), backoff::Error<reqwest::Error>> {\r\n    let r = backoff::future::retry(ExponentialBackoff::default(), || async {\r\n        let id: Uuid = Uuid::new_v7(\r\n            Timestamp::now(ctx),\r\n        );\r\n        http.post(url).header(\"Idempotency-Key\", id.to_string()).send().await?;\r\n        Ok(())\r\n    })\r\n    .await;\r\n    r\r\n}\r\n",
        after: "use backoff::ExponentialBackoff;\r\nuse uuid::{ContextV7, Timestamp, Uuid};\r\n\r\npub async fn publish(http: &reqwest::Client, url: &str, ctx: &ContextV7) -> Result<(), backoff::Error<reqwest::Error>> {\r\n    let id: Uuid = Uuid::new_v7(\r\n        Timestamp::now(ctx),\r\n    );\r\n    let r = backoff::future::retry(ExponentialBackoff::default(), || async {\r\n        http.post(url).header(\"Idempotency-Key\", id.to_string()).send().await?;\r\n        Ok(())\r\n    })\r\n    .await;\r\n    r\r\n}\r\n",
        code: "MA002",
    },
    UnsafeCase {
        name: "MA008 lapin channel never put in confirm mode, a `use` list of the options",
        deps: "lapin = \"2\"\nanyhow = \"1\"\n",
        file: "src/lib.rs",
        before: "use lapin::options::{BasicPublishOptions};\nuse lapin::{BasicProperties, Connection};\n\npub async fn publish(conn: &Connection, body: &[u8]) -> anyhow::Result<()> {\n    let channel = conn.create_channel().await?; // orders\n    channel\n        .basic_publish(\"\", \"orders\", BasicPublishOptions::default(), body, BasicProperties::default())\n        .await?;\n    Ok(())\n}\n",
        after: "use lapin::options::{BasicPublishOptions, ConfirmSelectOptions};\nuse lapin::{BasicProperties, Connection};\n\npub async fn publish(conn: &Connection, body: &[u8]) -> anyhow::Result<()> {\n    let channel = conn.create_channel().await?; // orders\n    channel.confirm_select(ConfirmSelectOptions::default()).await?;\n    channel\n        .basic_publish(\"\", \"orders\", BasicPublishOptions::default(), body, BasicProperties::default())\n        .await?.await?;\n    Ok(())\n}\n",
        code: "MA008",
    },
    UnsafeCase {
        name: "MA008 lapin channel in a nested block, a sorted multi-line `use` list, CRLF",
        deps: "lapin = \"2\"\n",
        file: "src/lib.rs",
        before: "use lapin::options::{\r\n    BasicAckOptions,\r\n    BasicPublishOptions,\r\n    QueueDeclareOptions,\r\n};\r\nuse lapin::{BasicProperties, Connection};\r\n\r\npub async fn publish(conn: &Connection, body: &[u8]) -> Result<(), lapin::Error> {\r\n    if !body.is_empty() {\r\n        let out: lapin::Channel = conn\r\n            .create_channel()\r\n            .await?;\r\n        out.basic_publish(\"\", \"q\", BasicPublishOptions::default(), body, BasicProperties::default()).await?;\r\n    }\r\n    Ok(())\r\n}\r\n",
        after: "use lapin::options::{\r\n    BasicAckOptions,\r\n    BasicPublishOptions,\r\n    ConfirmSelectOptions,\r\n    QueueDeclareOptions,\r\n};\r\nuse lapin::{BasicProperties, Connection};\r\n\r\npub async fn publish(conn: &Connection, body: &[u8]) -> Result<(), lapin::Error> {\r\n    if !body.is_empty() {\r\n        let out: lapin::Channel = conn\r\n            .create_channel()\r\n            .await?;\r\n        out.confirm_select(ConfirmSelectOptions::default()).await?;\r\n        out.basic_publish(\"\", \"q\", BasicPublishOptions::default(), body, BasicProperties::default()).await?.await?;\r\n    }\r\n    Ok(())\r\n}\r\n",
        code: "MA008",
    },
    UnsafeCase {
        name: "MA008 lapin channel, an unsorted `use` list: the name goes last",
        deps: "lapin = \"2\"\n",
        file: "src/lib.rs",
        before: "use lapin::options::{QueueDeclareOptions, BasicPublishOptions};\nuse lapin::{BasicProperties, Connection};\n\npub async fn publish(conn: &Connection, body: &[u8]) -> lapin::Result<()> {\n    let ch = conn.create_channel().await?;\n    ch.queue_declare(\"q\", QueueDeclareOptions::default(), Default::default()).await?;\n    ch.basic_publish(\"\", \"q\", BasicPublishOptions::default(), body, BasicProperties::default()).await?;\n    Ok(())\n}\n",
        after: "use lapin::options::{QueueDeclareOptions, BasicPublishOptions, ConfirmSelectOptions};\nuse lapin::{BasicProperties, Connection};\n\npub async fn publish(conn: &Connection, body: &[u8]) -> lapin::Result<()> {\n    let ch = conn.create_channel().await?;\n    ch.confirm_select(ConfirmSelectOptions::default()).await?;\n    ch.queue_declare(\"q\", QueueDeclareOptions::default(), Default::default()).await?;\n    ch.basic_publish(\"\", \"q\", BasicPublishOptions::default(), body, BasicProperties::default()).await?.await?;\n    Ok(())\n}\n",
        code: "MA008",
    },
    UnsafeCase {
        name: "MA008 lapin channel, no `use` list of the options: the full path",
        deps: "lapin = \"2\"\n",
        file: "src/lib.rs",
        before: "use lapin::{options::BasicPublishOptions, BasicProperties, Connection};\n\npub async fn publish(conn: &Connection, body: &[u8]) -> Result<(), lapin::Error> {\n    let channel = conn.create_channel().await?;\n    channel.basic_publish(\"\", \"q\", BasicPublishOptions::default(), body, BasicProperties::default()).await?;\n    Ok(())\n}\n",
        after: "use lapin::{options::BasicPublishOptions, BasicProperties, Connection};\n\npub async fn publish(conn: &Connection, body: &[u8]) -> Result<(), lapin::Error> {\n    let channel = conn.create_channel().await?;\n    channel.confirm_select(lapin::options::ConfirmSelectOptions::default()).await?;\n    channel.basic_publish(\"\", \"q\", BasicPublishOptions::default(), body, BasicProperties::default()).await?.await?;\n    Ok(())\n}\n",
        code: "MA008",
    },
];

/// Findings of these carry no fix, not even an unsafe one.
const NO_FIX_CASES: &[UnsafeCase] = &[
    UnsafeCase {
        name: "MA007 rdkafka consumer that never commits explicitly",
        deps: "rdkafka = \"0.36\"\nsqlx = \"0.7\"\n",
        file: "src/lib.rs",
        before: "use rdkafka::config::ClientConfig;\nuse rdkafka::consumer::{Consumer, StreamConsumer};\nuse rdkafka::Message;\n\npub async fn run(pool: &sqlx::PgPool) -> anyhow::Result<()> {\n    let consumer: StreamConsumer = ClientConfig::new()\n        .set(\"group.id\", \"billing\")\n        .set(\"enable.auto.commit\", \"true\")\n        .create()?;\n    consumer.subscribe(&[\"orders\"])?;\n    loop {\n        let msg = consumer.recv().await?;\n        sqlx::query(\"INSERT INTO charges (id) VALUES ($1) ON CONFLICT DO NOTHING\")\n            .bind(msg.offset())\n            .execute(pool)\n            .await?;\n    }\n}\n",
        after: "",
        code: "MA007",
    },
    UnsafeCase {
        name: "MA007 rdkafka chain without auto commit whose consumer never commits explicitly",
        deps: "rdkafka = \"0.36\"\nsqlx = \"0.7\"\n",
        file: "src/lib.rs",
        before: "use rdkafka::config::ClientConfig;\nuse rdkafka::consumer::{Consumer, StreamConsumer};\nuse rdkafka::Message;\n\npub async fn run(pool: &sqlx::PgPool) -> anyhow::Result<()> {\n    let consumer: StreamConsumer = ClientConfig::new()\n        .set(\"group.id\", \"billing\")\n        .create()?;\n    consumer.subscribe(&[\"orders\"])?;\n    loop {\n        let msg = consumer.recv().await?;\n        sqlx::query(\"INSERT INTO charges (id) VALUES ($1) ON CONFLICT DO NOTHING\")\n            .bind(msg.offset())\n            .execute(pool)\n            .await?;\n    }\n}\n",
        after: "",
        code: "MA007",
    },
    UnsafeCase {
        name: "MA007 raw property map: the commits are in code YAML does not show",
        deps: "",
        file: "consumer.yaml",
        before: "consumer:\n  bootstrap.servers: kafka:9092\n  group.id: g\n  enable.auto.commit: \"true\"\n",
        after: "",
        code: "MA007",
    },
    UnsafeCase {
        name: "MA002 id made from the loop variable",
        deps: "reqwest = \"0.12\"\nuuid = \"1\"\ntokio = \"1\"\n",
        file: "src/lib.rs",
        before: "use uuid::{Timestamp, Uuid};\n\npub async fn charge(http: &reqwest::Client, url: &str, ctx: &uuid::ContextV7) -> Result<(), reqwest::Error> {\n    for attempt in 0..5u64 {\n        let key = Uuid::new_v7(Timestamp::from_unix(ctx, 1_700_000_000 + attempt, 0));\n        match http.post(url).header(\"Idempotency-Key\", key.to_string()).send().await {\n            Ok(r) if r.status().is_success() => break,\n            _ => tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await,\n        }\n    }\n    Ok(())\n}\n",
        after: "",
        code: "MA002",
    },
    UnsafeCase {
        name: "MA002 id bound over several lines from the loop variable",
        deps: "reqwest = \"0.12\"\nuuid = \"1\"\ntokio = \"1\"\n",
        file: "src/lib.rs",
        before: "use uuid::{Timestamp, Uuid};\n\npub async fn charge(http: &reqwest::Client, url: &str, ctx: &uuid::ContextV7) -> Result<(), reqwest::Error> {\n    for attempt in 0..5u64 {\n        let key =\n            Uuid::new_v7(\n                Timestamp::from_unix(ctx, 1_700_000_000 + attempt, 0),\n            );\n        match http.post(url).header(\"Idempotency-Key\", key.to_string()).send().await {\n            Ok(r) if r.status().is_success() => break,\n            _ => tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await,\n        }\n    }\n    Ok(())\n}\n",
        after: "",
        code: "MA002",
    },
    UnsafeCase {
        name: "MA007 rdkafka consumer that stores offsets for the auto commit (offset store left on)",
        deps: "rdkafka = \"0.36\"\nsqlx = \"0.7\"\n",
        file: "src/lib.rs",
        before: "use rdkafka::config::ClientConfig;\nuse rdkafka::consumer::{Consumer, StreamConsumer};\nuse rdkafka::Message;\n\npub async fn run(pool: &sqlx::PgPool) -> anyhow::Result<()> {\n    let consumer: StreamConsumer = ClientConfig::new()\n        .set(\"group.id\", \"billing\")\n        .set(\"enable.auto.commit\", \"true\")\n        .create()?;\n    consumer.subscribe(&[\"orders\"])?;\n    loop {\n        let msg = consumer.recv().await?;\n        sqlx::query(\"INSERT INTO charges (id) VALUES ($1) ON CONFLICT DO NOTHING\")\n            .bind(msg.offset())\n            .execute(pool)\n            .await?;\n        consumer.store_offset_from_message(&msg)?;\n    }\n}\n",
        after: "",
        code: "MA007",
    },
    UnsafeCase {
        name: "MA002 id that is more than the generator call",
        deps: "reqwest = \"0.12\"\nuuid = \"1\"\ntokio = \"1\"\n",
        file: "src/lib.rs",
        before: "use uuid::Uuid;\n\npub async fn charge(http: &reqwest::Client, url: &str) -> Result<(), reqwest::Error> {\n    for attempt in 0..5 {\n        let key = Uuid::new_v4().to_string();\n        match http.post(url).header(\"Idempotency-Key\", &key).send().await {\n            Ok(r) if r.status().is_success() => break,\n            _ => tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await,\n        }\n    }\n    Ok(())\n}\n",
        after: "",
        code: "MA002",
    },
    UnsafeCase {
        name: "MA008 lapin channel handed in as a parameter",
        deps: "lapin = \"2\"\nanyhow = \"1\"\n",
        file: "src/lib.rs",
        before: "use lapin::options::{BasicPublishOptions};\nuse lapin::{BasicProperties, Channel, Connection};\n\npub async fn open(conn: &Connection) -> Result<Channel, lapin::Error> {\n    let channel = conn.create_channel().await?;\n    Ok(channel)\n}\n\npub async fn send(channel: &Channel, body: &[u8]) -> anyhow::Result<()> {\n    channel.basic_publish(\"\", \"q\", BasicPublishOptions::default(), body, BasicProperties::default()).await?;\n    Ok(())\n}\n",
        after: "",
        code: "MA008",
    },
    UnsafeCase {
        name: "MA008 lapin channel made in a function returning ()",
        deps: "lapin = \"2\"\n",
        file: "src/lib.rs",
        before: "use lapin::options::{BasicPublishOptions};\nuse lapin::{BasicProperties, Connection};\n\npub async fn publish(conn: &Connection, body: &[u8]) {\n    let channel = conn.create_channel().await.expect(\"channel\");\n    channel.basic_publish(\"\", \"q\", BasicPublishOptions::default(), body, BasicProperties::default()).await.expect(\"publish\");\n}\n",
        after: "",
        code: "MA008",
    },
    UnsafeCase {
        name: "MA008 lapin channel made in an async block (its `?` is the block's)",
        deps: "lapin = \"2\"\nanyhow = \"1\"\ntokio = \"1\"\n",
        file: "src/lib.rs",
        before: "use lapin::options::{BasicPublishOptions};\nuse lapin::{BasicProperties, Connection};\n\npub async fn publish(conn: Connection, body: Vec<u8>) -> anyhow::Result<()> {\n    tokio::spawn(async move {\n        let channel = conn.create_channel().await?;\n        channel.basic_publish(\"\", \"q\", BasicPublishOptions::default(), &body, BasicProperties::default()).await?;\n        Ok::<_, lapin::Error>(())\n    });\n    Ok(())\n}\n",
        after: "",
        code: "MA008",
    },
    UnsafeCase {
        name: "MA008 lapin channel with a publish whose confirmation the fix cannot await",
        deps: "lapin = \"2\"\nanyhow = \"1\"\n",
        file: "src/lib.rs",
        before: "use lapin::options::{BasicPublishOptions};\nuse lapin::{BasicProperties, Connection};\n\npub async fn publish(conn: &Connection, body: &[u8]) -> anyhow::Result<()> {\n    let channel = conn.create_channel().await?;\n    channel.basic_publish(\"\", \"q\", BasicPublishOptions::default(), body, BasicProperties::default()).await?;\n    let _sent = channel.basic_publish(\"\", \"r\", BasicPublishOptions::default(), body, BasicProperties::default()).await?;\n    Ok(())\n}\n",
        after: "",
        code: "MA008",
    },
];

fn setup_unsafe(dir: &Path, case: &UnsafeCase) {
    git_repo(dir);
    if case.file.ends_with(".rs") {
        write(
            dir,
            "Cargo.toml",
            format!(
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{}",
                case.deps
            ),
        );
    }
    write(dir, case.file, case.before);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "before"]);
}

fn fixes_of(json: &str, code: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == json!(code))
        .map(|f| f["fix"].clone())
        .collect()
}

/// After a run whose stderr is `err`: `case`'s file reads `want` and the summary says
/// `fixed` (`"fixed 0 findings"`, `"fixed 1 finding"`).
fn assert_fixed(dir: &Path, case: &UnsafeCase, want: &str, err: &str, fixed: &str, why: &str) {
    assert_eq!(
        fs::read_to_string(dir.join(case.file)).unwrap(),
        want,
        "{}: {why} {err}",
        case.name
    );
    assert!(
        err.contains(&format!("msgaudit: {fixed}")),
        "{}: {err}",
        case.name
    );
}

#[test]
fn unsafe_fixes_wait_for_the_flag_then_apply_once() {
    for case in UNSAFE_CASES {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        setup_unsafe(dir, case);
        // `--fix` alone: the finding carries an unsafe fix, which waits.
        let (_, out, err) = run(dir, &["--fix"]);
        let fixes = fixes_of(&out, case.code);
        assert_eq!(fixes.len(), 1, "{}: {out}", case.name);
        assert_eq!(fixes[0]["applicability"], json!("unsafe"), "{}", case.name);
        let applied = "--fix applied an unsafe fix";
        assert_fixed(dir, case, case.before, &err, "fixed 0 findings", applied);
        // With `--unsafe-fixes`.
        let (_, out, err) = run(dir, &["--fix", "--unsafe-fixes"]);
        assert_fixed(dir, case, case.after, &err, "fixed 1 finding", "");
        let left = codes_of(&out);
        assert!(
            !left.contains(&case.code.to_string()),
            "{}: {left:?}",
            case.name
        );
        // A second run changes nothing, and the written file agrees.
        let (_, out2, err2) = run(dir, &["--fix", "--unsafe-fixes"]);
        assert_fixed(dir, case, case.after, &err2, "fixed 0 findings", "");
        assert_eq!(codes_of(&out2), left, "{}", case.name);
    }
}

#[test]
fn unsafe_diff_writes_nothing_and_git_applies_it() {
    for case in UNSAFE_CASES {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        setup_unsafe(dir, case);
        let (_, diff, _) = run(dir, &["--diff"]);
        assert!(
            diff.is_empty() || !diff.contains("diff --git"),
            "{}: {diff}",
            case.name
        );
        let (_, diff, err) = run(dir, &["--diff", "--unsafe-fixes"]);
        let fixed = "msgaudit: would fix 1 finding";
        diff_applies(
            dir,
            case.name,
            case.file,
            (case.before, case.after),
            &diff,
            &err,
            fixed,
        );
    }
}

#[test]
fn no_fix_where_the_change_would_stop_progress_or_change_the_id() {
    for case in NO_FIX_CASES {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        setup_unsafe(dir, case);
        let (_, out, err) = run(dir, &["--fix", "--unsafe-fixes"]);
        let fixes = fixes_of(&out, case.code);
        assert!(!fixes.is_empty(), "{}: no finding\n{out}", case.name);
        assert!(fixes.iter().all(Value::is_null), "{}: {fixes:?}", case.name);
        assert_eq!(
            fs::read_to_string(dir.join(case.file)).unwrap(),
            case.before,
            "{}",
            case.name
        );
        assert!(
            err.contains("msgaudit: fixed 0 findings"),
            "{}: {err}",
            case.name
        );
    }
}

/// A consumer that leaves its level unset where the block a fix would extend is not
/// unambiguous: no key is added (no fix is better than a wrong one). Helm templates
/// (`{{ … }}`) are not analyzed as YAML at all.
#[test]
fn a_missing_level_is_not_added_to_an_ambiguous_block() {
    let cases = [
        (
            "templated value",
            "application.yml",
            "spring:\n  kafka:\n    consumer:\n      group-id: ${GROUP_ID}\n",
        ),
        (
            "templated key",
            "application.yml",
            "spring:\n  kafka:\n    consumer:\n      group-id: g\n      ${EXTRA_KEY}: x\n",
        ),
        (
            "keys merged in from an anchor",
            "application.yml",
            "defaults: &d\n  group-id: g\nspring:\n  kafka:\n    consumer:\n      <<: *d\n",
        ),
        (
            "an anchored block others alias",
            "application.yml",
            "spring:\n  kafka:\n    consumer: &c\n      group-id: g\nother: *c\n",
        ),
        (
            "dotted keys, no block",
            "application.yml",
            "spring:\n  kafka.consumer.group-id: g\n",
        ),
        (
            "flow-style connector config",
            "sink.yaml",
            "apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaConnector\nmetadata:\n  name: sink\nspec:\n  class: io.confluent.connect.jdbc.JdbcSinkConnector\n  config: { topics: orders, connection.url: \"jdbc:postgresql://db/app\" }\n",
        ),
        (
            "last value folded over two lines",
            "pipeline.yaml",
            "input:\n  kafka_franz:\n    seed_brokers: [ redpanda:9092 ]\n    topics: [ orders ]\n    consumer_group: billing\n    client_id: >-\n      billing\n      reader\n",
        ),
    ];
    for (name, file, text) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write(dir, "tx-producer.yaml", TX_PRODUCER);
        write(dir, file, text);
        let (_, out, err) = run(dir, &["--fix", "--unsafe-fixes"]);
        let fixes = fixes_of(&out, "MA004");
        assert!(!fixes.is_empty(), "{name}: no finding\n{out}");
        assert!(fixes.iter().all(Value::is_null), "{name}: {fixes:?}");
        assert_eq!(fs::read_to_string(dir.join(file)).unwrap(), text, "{name}");
        assert!(err.contains("msgaudit: fixed 0 findings"), "{name}: {err}");
    }
}

/// librdkafka's at-least-once pattern: `enable.auto.offset.store=false`, each
/// message's offset stored after its effect, and auto commit committing what is
/// stored. Auto commit is the mechanism here: turning it off would stop the
/// commits, so there is no finding and nothing to fix, with `store_offset` or
/// `store_offsets`.
#[test]
fn auto_commit_with_stored_offsets_is_left_on() {
    let head = "use rdkafka::config::ClientConfig;\nuse rdkafka::consumer::{Consumer, StreamConsumer};\nuse rdkafka::{Message, Offset, TopicPartitionList};\n\npub async fn run(pool: &sqlx::PgPool) -> anyhow::Result<()> {\n    let consumer: StreamConsumer = ClientConfig::new()\n        .set(\"group.id\", \"billing\")\n        .set(\"enable.auto.commit\", \"true\")\n        .set(\"enable.auto.offset.store\", \"false\")\n        .create()?;\n    consumer.subscribe(&[\"orders\"])?;\n    loop {\n        let msg = consumer.recv().await?;\n        sqlx::query(\"INSERT INTO charges (id) VALUES ($1) ON CONFLICT DO NOTHING\")\n            .bind(msg.offset())\n            .execute(pool)\n            .await?;\n";
    let stores = [
        "        consumer.store_offset(msg.topic(), msg.partition(), msg.offset())?;\n",
        "        let mut tpl = TopicPartitionList::new();\n        tpl.add_partition_offset(msg.topic(), msg.partition(), Offset::Offset(msg.offset() + 1))?;\n        consumer.store_offsets(&tpl)?;\n",
    ];
    for store in stores {
        let text: &'static str = format!("{head}{store}    }}\n}}\n").leak();
        let case = UnsafeCase {
            name: "store pattern",
            deps: "rdkafka = \"0.36\"\nsqlx = \"0.7\"\n",
            file: "src/lib.rs",
            before: text,
            after: "",
            code: "MA007",
        };
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        setup_unsafe(dir, &case);
        let (_, out, err) = run(dir, &["--fix", "--unsafe-fixes"]);
        assert!(fixes_of(&out, "MA007").is_empty(), "{store}: {out}");
        assert_eq!(fs::read_to_string(dir.join("src/lib.rs")).unwrap(), text);
        assert!(err.contains("msgaudit: fixed 0 findings"), "{err}");
    }
}
