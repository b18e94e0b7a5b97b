//! The prefilter never changes a finding (issue 6): a generated tree whose handlers
//! reach their effects, or their acks, only through files that mention no API at
//! all, and the fixture tree, give the same findings and errors with and without it,
//! while the prefilter still leaves files unparsed.

mod common;

use std::fs;
use std::path::Path;
use std::time::Duration;

use common::{msgaudit, write};
use serde_json::Value;

fn check(dir: &Path, extra: &[&str]) -> Value {
    let out = msgaudit()
        .env_remove("MSGAUDIT_CHECK_PREFILTER")
        .timeout(Duration::from_secs(300))
        .arg("check")
        .arg(dir)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.code().unwrap() <= 1, "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn skipped(v: &Value) -> u64 {
    v["summary"]["skipped"]["no_relevant_tokens"]
        .as_u64()
        .unwrap_or(0)
}

/// A crate with a Kafka handler and a Postgres repository (the only files that name
/// an API), reached through chains of `depth` pass-through wrappers that name none,
/// plus `noise` ordinary modules.
fn write_crate(root: &Path, name: &str, depth: usize, noise: usize) {
    let src = root.join(name).join("src");
    fs::create_dir_all(&src).unwrap();
    fs::write(
        root.join(name).join("Cargo.toml"),
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n"),
    )
    .unwrap();
    let mut mods = String::from("mod db;\nmod queue;\nmod flow;\n");
    // The repository: the only file naming sqlx.
    fs::write(
        src.join("db.rs"),
        "use sqlx::PgPool;\n\n\
         pub struct Repo {\n    pool: PgPool,\n}\n\n\
         impl Repo {\n    pub async fn insert_order(&self, id: &str) -> anyhow::Result<()> {\n        \
         sqlx::query(\"INSERT INTO orders (id) VALUES ($1)\").bind(id).execute(&self.pool).await?;\n        \
         Ok(())\n    }\n}\n",
    )
    .unwrap();
    // The queue: the only file naming rdkafka; its methods receive and commit.
    fs::write(
        src.join("queue.rs"),
        "use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};\n\
         use rdkafka::message::BorrowedMessage;\n\n\
         pub struct Queue {\n    consumer: StreamConsumer,\n}\n\n\
         impl Queue {\n    pub async fn next(&self) -> anyhow::Result<BorrowedMessage<'_>> {\n        \
         Ok(self.consumer.recv().await?)\n    }\n\n    \
         pub fn done(&self, m: &BorrowedMessage<'_>) -> anyhow::Result<()> {\n        \
         self.consumer.commit_message(m, CommitMode::Sync)?;\n        Ok(())\n    }\n}\n",
    )
    .unwrap();
    // Pass-through wrappers: `step_0` calls the repository, `step_k` calls `step_{k-1}`.
    for k in 0..depth {
        let body = if k == 0 {
            "    repo.insert_order(id).await\n".to_string()
        } else {
            format!(
                "    crate::step_{}::step_{}(repo, id).await\n",
                k - 1,
                k - 1
            )
        };
        // A raw identifier before the wrapper, as serde models have (the scan once
        // read `r#type` as a raw string and lost the rest of the file; see the
        // scan's unit tests).
        let meta = if k + 1 == depth {
            "pub struct Meta {\n    pub r#type: String,\n}\n\n"
        } else {
            ""
        };
        fs::write(
            src.join(format!("step_{k}.rs")),
            format!(
                "use crate::db::Repo;\n\n{meta}\
                 pub async fn step_{k}(repo: &Repo, id: &str) -> anyhow::Result<()> {{\n{body}}}\n"
            ),
        )
        .unwrap();
        mods.push_str(&format!("mod step_{k};\n"));
    }
    let top = depth - 1;
    // The orchestration names no API either: it commits before the effect (MA001),
    // through the queue's wrapper methods and the wrapper chain.
    fs::write(
        src.join("flow.rs"),
        format!(
            "use crate::db::Repo;\nuse crate::queue::Queue;\n\n\
             pub async fn run(queue: &Queue, repo: &Repo) -> anyhow::Result<()> {{\n    \
             loop {{\n        let m = queue.next().await?;\n        \
             queue.done(&m)?;\n        \
             crate::step_{top}::step_{top}(repo, \"id\").await?;\n    }}\n}}\n"
        ),
    )
    .unwrap();
    for k in 0..noise {
        fs::write(
            src.join(format!("util_{k}.rs")),
            format!(
                "/// Ordinary code: no API, nothing the handlers need.\n\
                 pub struct Counter{k} {{\n    pub n: u64,\n}}\n\n\
                 impl Counter{k} {{\n    pub fn bump(&mut self) -> u64 {{\n        \
                 self.n += {k};\n        self.n\n    }}\n}}\n\n\
                 pub fn format_{k}(x: u64) -> String {{\n    format!(\"{{x}}\")\n}}\n"
            ),
        )
        .unwrap();
        mods.push_str(&format!("mod util_{k};\n"));
    }
    fs::write(src.join("main.rs"), format!("{mods}\nfn main() {{}}\n")).unwrap();
}

#[test]
fn wrappers_without_api_tokens_keep_their_findings() {
    let dir = tempfile::tempdir().unwrap();
    for (i, depth) in [1, 2, 3, 5].into_iter().enumerate() {
        write_crate(dir.path(), &format!("svc{i}"), depth, 6);
    }
    let with = check(dir.path(), &[]);
    let without = check(dir.path(), &["--no-prefilter"]);
    assert_eq!(with["findings"], without["findings"]);
    assert_eq!(with["errors"], without["errors"]);
    // Each crate's orchestration commits before the wrapped insert: one MA001 at the
    // commit in queue.rs, found only through flow.rs and the wrapper chain.
    let ma001: Vec<&str> = with["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "MA001")
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(ma001.len(), 4, "{:#}", with["findings"]);
    assert!(
        ma001.iter().all(|p| p.ends_with("src/queue.rs")),
        "{ma001:?}"
    );
    // The ordinary modules are left unparsed (main.rs names them, but needs nothing).
    assert!(skipped(&with) >= 4 * 6, "{}", with["summary"]);
    assert_eq!(skipped(&without), 0, "{}", without["summary"]);
}

#[test]
fn fixture_tree_findings_do_not_depend_on_the_prefilter() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let with = check(&fixtures, &[]);
    let without = check(&fixtures, &["--no-prefilter"]);
    assert!(with["findings"].as_array().unwrap().len() > 100);
    assert_eq!(with["findings"], without["findings"]);
    assert_eq!(with["errors"], without["errors"]);
    assert!(skipped(&with) > skipped(&without), "{}", with["summary"]);
}

/// `MSGAUDIT_CHECK_PREFILTER=1` lowers every crate whole as well and reports each
/// function the prefilter's rounds model differently, and each function relevant
/// from a file naming an API that they leave unparsed: stronger than equal findings.
fn model_differences(dir: &Path) -> Vec<String> {
    let out = msgaudit()
        .timeout(Duration::from_secs(300))
        .env("MSGAUDIT_CHECK_PREFILTER", "1")
        .arg("check")
        .arg(dir)
        .args(["--format", "json", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.code().unwrap() <= 1, "{out:?}");
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("prefilter check:"))
        .map(String::from)
        .collect()
}

#[test]
fn parsed_functions_are_modeled_as_in_the_whole_crate() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    assert_eq!(model_differences(&fixtures), Vec::<String>::new());
    let dir = tempfile::tempdir().unwrap();
    for (i, depth) in [1, 3].into_iter().enumerate() {
        write_crate(dir.path(), &format!("svc{i}"), depth, 6);
    }
    assert_eq!(model_differences(dir.path()), Vec::<String>::new());
}

/// The model check itself sees a difference: two structs named alike, one per file,
/// have their fields merged by name; a file reading `Param.input` needs both parsed,
/// else its call on the field resolves otherwise. (Before field reads were followed,
/// the prefilter left `b.rs` unparsed and the check reported `run`.)
#[test]
fn fields_read_are_parsed_wherever_their_type_is_declared() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "svc/Cargo.toml", "[package]\nname = \"svc\"\n");
    write(
        root,
        "svc/src/main.rs",
        "mod a;\nmod b;\nmod stream;\nfn main() {}\n",
    );
    write(
        root,
        "svc/src/a.rs",
        "use rdkafka::consumer::StreamConsumer;\nuse crate::stream::Fixed;\n\n\
         struct Param {\n    input: Fixed,\n}\n\n\
         pub async fn run(c: &StreamConsumer) {\n    let p = Param { input: Fixed };\n    \
         let _m = c.recv().await;\n    p.input.size();\n}\n",
    );
    write(root, "svc/src/b.rs", "struct Param {\n    input: u64,\n}\n\npub fn other() -> u64 {\n    Param { input: 1 }.input\n}\n",
    );
    write(root, "svc/src/stream.rs", "pub struct Fixed;\n\nimpl Fixed {\n    pub fn size(&self) -> usize {\n        0\n    }\n}\n",
    );
    assert_eq!(model_differences(root), Vec::<String>::new());
    let with = check(root, &[]);
    assert_eq!(
        with["findings"],
        check(root, &["--no-prefilter"])["findings"]
    );
}

/// The closure follows calls as resolution does: a method that many types define
/// (`build`) links only through a value of a known type, so files that merely
/// define or call another `build` stay unparsed, while the caller holding the
/// repository is parsed and keeps its finding.
#[test]
fn common_method_names_do_not_pull_in_unrelated_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "svc/Cargo.toml", "[package]\nname = \"svc\"\n");
    let mut mods = String::from("mod db;\nmod queue;\nmod flow;\nmod user;\n");
    write(root, "svc/src/db.rs", "use sqlx::PgPool;\n\npub struct Repo {\n    pool: PgPool,\n}\n\n\
         impl Repo {\n    pub async fn build(&self, id: &str) -> anyhow::Result<()> {\n        \
         sqlx::query(\"INSERT INTO orders (id) VALUES ($1)\").bind(id).execute(&self.pool).await?;\n        \
         Ok(())\n    }\n}\n",
    );
    write(
        root,
        "svc/src/queue.rs",
        "use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};\n\
         use crate::db::Repo;\n\n\
         pub async fn run(c: &StreamConsumer, repo: &Repo) -> anyhow::Result<()> {\n    \
         loop {\n        let m = c.recv().await?;\n        \
         c.commit_message(&m, CommitMode::Sync)?;\n        \
         crate::flow::store(repo).await?;\n    }\n}\n",
    );
    // Names no API; holds the repository: needed, and the effect is found through it.
    write(
        root,
        "svc/src/flow.rs",
        "use crate::db::Repo;\n\npub async fn store(repo: &Repo) -> anyhow::Result<()> {\n    \
         repo.build(\"id\").await\n}\n",
    );
    // Four more `build` methods, and a call of `.build()` on a generic value.
    for k in 0..4 {
        write(root, &format!("svc/src/part_{k}.rs"), format!(
                "pub struct Part{k};\n\nimpl Part{k} {{\n    pub fn build(&self) -> u8 {{\n        {k}\n    }}\n}}\n"
            ),
        );
        mods.push_str(&format!("mod part_{k};\n"));
    }
    write(
        root,
        "svc/src/user.rs",
        "pub trait Make {\n    fn build(&self) -> u8;\n}\n\n\
         pub fn total<T: Make>(items: &[T]) -> u64 {\n    \
         items.iter().map(|i| u64::from(i.build())).sum()\n}\n",
    );
    write(root, "svc/src/main.rs", format!("{mods}\nfn main() {{}}\n"));

    let with = check(root, &[]);
    let without = check(root, &["--no-prefilter"]);
    assert_eq!(with["findings"], without["findings"]);
    let codes: Vec<&str> = with["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"MA001"), "{:#}", with["findings"]);
    // main.rs, the four parts and user.rs stay unparsed; flow.rs is parsed.
    assert_eq!(skipped(&with), 6, "{}", with["summary"]);
    assert_eq!(model_differences(root), Vec::<String>::new());
}

/// A library type name other crates share (async-nats' `Batch` and `Stream`, a role
/// only through a path into the library) makes a file worth parsing only in a crate
/// that may import the library: its manifest, or a dependency's in the tree, names
/// it. A file with no manifest may import anything.
#[test]
fn shared_type_names_count_only_where_their_library_may_be_imported() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let body = "pub enum Step {\n    Batch,\n    Stream,\n}\n\npub fn first() -> Step {\n    Step::Batch\n}\n";
    write(
        root,
        "plain/Cargo.toml",
        "[package]\nname = \"plain\"\n\n[dependencies]\ntracing = \"0.1\"\n",
    );
    write(root, "plain/src/lib.rs", body);
    write(
        root,
        "bus/Cargo.toml",
        "[package]\nname = \"bus\"\n\n[dependencies]\nnats = { package = \"async-nats\", version = \"0.38\" }\n",
    );
    write(root, "bus/src/lib.rs", body);
    // Uses `bus` from the tree: what `bus` imports, it may pass on.
    write(
        root,
        "app/Cargo.toml",
        "[package]\nname = \"app\"\n\n[dependencies]\nbus = { path = \"../bus\" }\n",
    );
    write(root, "app/src/lib.rs", body);
    write(root, "loose.rs", body);

    let with = check(root, &[]);
    let without = check(root, &["--no-prefilter"]);
    assert_eq!(with["findings"], without["findings"]);
    // Only plain's file stays unparsed.
    assert_eq!(skipped(&with), 1, "{}", with["summary"]);
    assert_eq!(skipped(&without), 0, "{}", without["summary"]);
}
