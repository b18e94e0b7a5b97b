//! The checklist as a CommonMark reader with GitHub's extensions sees it (pulldown-cmark:
//! task lists, tables, strikethrough, math): on `fixtures/demo` and on a generated tree
//! whose names (directory, crate, topics, table) hold Markdown's syntax characters and
//! newlines. Every link is well formed and names an existing file and line (relative, or
//! under `--link-base`); every `- [ ]`/`- [x]` line is a task item; the headings are the
//! checklist's; and the names from the code open or close no emphasis, code span, table,
//! link or HTML: the hostile tree's document is its plain twin's with the names swapped.

mod common;
use common::{msgaudit, write};

use std::fs;
use std::path::Path;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// Where the rules' pages are published; the checklist links each finding's rule there.
const RULE_PAGES: &str = "https://github.com/msgaudit/msgaudit/blob/main/docs/rules/";

fn options() -> Options {
    Options::ENABLE_TASKLISTS
        | Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_MATH
}

fn checklist(cwd: &Path, args: &[&str]) -> String {
    let out = msgaudit()
        .current_dir(cwd)
        .arg("checklist")
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// Checks every link of `md`: a rule's page exists in `docs/rules/`; any other link
/// is `PATH#LLINE` (under `base` when given, else relative), PATH (percent-decoded,
/// relative to `cwd`) is a file with at least LINE lines, and the link's text is
/// `PATH:LINE`. Returns the number of file links.
fn check_links(md: &str, cwd: &Path, base: Option<&str>) -> usize {
    let mut files = 0;
    let mut open: Option<(String, String)> = None;
    for event in Parser::new_ext(md, options()) {
        match event {
            Event::Start(Tag::Link { dest_url, .. }) => {
                open = Some((dest_url.to_string(), String::new()));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, text)) = open.as_mut() {
                    text.push_str(&t);
                }
            }
            Event::End(TagEnd::Link) => {
                let (dest, text) = open.take().unwrap();
                if let Some(page) = dest.strip_prefix(RULE_PAGES) {
                    let page = Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("docs/rules")
                        .join(page);
                    assert!(page.is_file(), "no rule page {dest}");
                    assert!(text.starts_with("MA"), "[{text}]({dest})");
                    continue;
                }
                let rel = match base {
                    Some(base) => dest
                        .strip_prefix(base)
                        .unwrap_or_else(|| panic!("{dest} is not under {base}")),
                    None => {
                        assert!(
                            !dest.contains("://") && !dest.starts_with('/'),
                            "not relative: {dest}"
                        );
                        &dest
                    }
                };
                let (path, line) = rel
                    .split_once("#L")
                    .unwrap_or_else(|| panic!("no #L in {dest}"));
                assert!(
                    !path.contains([' ', '(', ')', '<', '>', '`', '|', '\n']),
                    "unencoded: {dest}"
                );
                let path = percent_decode(path);
                let line: usize = line.parse().unwrap_or_else(|_| panic!("{dest}"));
                let text_of = fs::read_to_string(cwd.join(&path))
                    .unwrap_or_else(|e| panic!("{dest} -> {path}: {e}"));
                assert!(
                    line >= 1 && line <= text_of.lines().count(),
                    "{path} has no line {line}"
                );
                assert_eq!(text, format!("{path}:{line}"), "link text of {dest}");
                files += 1;
            }
            _ => {}
        }
    }
    files
}

/// Every line written as a task item is read as one, in a list item.
fn check_task_items(md: &str) -> usize {
    let written = md
        .lines()
        .filter(|l| l.starts_with("- [x] ") || l.starts_with("- [ ] "))
        .count();
    let events: Vec<Event> = Parser::new_ext(md, options()).collect();
    let mut markers = 0;
    for (i, e) in events.iter().enumerate() {
        if let Event::TaskListMarker(done) = e {
            assert!(
                matches!(events[i - 1], Event::Start(Tag::Item)),
                "a task marker outside a list item"
            );
            let _ = done;
            markers += 1;
        }
    }
    assert_eq!(markers, written, "task lines not read as task items");
    let checked = md.lines().filter(|l| l.starts_with("- [x] ")).count();
    let read_checked = events
        .iter()
        .filter(|e| matches!(e, Event::TaskListMarker(true)))
        .count();
    assert_eq!(read_checked, checked);
    markers
}

/// The headings: the checklist's title (h2), then h3 sections of known kinds.
fn check_headings(md: &str) -> Vec<String> {
    let mut headings = Vec::new();
    let mut open: Option<(HeadingLevel, String)> = None;
    for event in Parser::new_ext(md, options()) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => open = Some((level, String::new())),
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, text)) = open.as_mut() {
                    text.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let (level, text) = open.take().unwrap();
                headings.push((level, text));
            }
            _ => {}
        }
    }
    assert_eq!(
        headings[0],
        (HeadingLevel::H2, "msgaudit review checklist".to_string())
    );
    for (level, text) in &headings[1..] {
        assert_eq!(*level, HeadingLevel::H3, "{text}");
        assert!(
            text == "Pipeline map"
                || text.starts_with("Consumer ")
                || text.starts_with("Producer ")
                || text == "Findings outside these message paths"
                || text == "Without findings",
            "unexpected heading {text:?}"
        );
    }
    headings.into_iter().map(|(_, t)| t).collect()
}

/// The document as a reader sees it, outside code blocks: each tag opened and closed
/// (links without their target), each code span, each run of text, breaks, HTML and
/// math, in order.
fn document(md: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_block = false;
    for event in Parser::new_ext(md, options()) {
        let item = match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                in_block = true;
                match kind {
                    CodeBlockKind::Fenced(info) => format!("code block {info}"),
                    CodeBlockKind::Indented => "indented code block".to_string(),
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                in_block = false;
                "end code block".to_string()
            }
            _ if in_block => continue,
            Event::Start(Tag::Link { .. }) => "link".to_string(),
            Event::Start(tag) => format!("{tag:?}"),
            Event::End(tag) => format!("end {tag:?}"),
            Event::Text(t) => {
                if let Some(last) = out.last_mut().filter(|l| l.starts_with("text ")) {
                    last.push_str(&t);
                    continue;
                }
                format!("text {t}")
            }
            Event::Code(c) => format!("code {c}"),
            other => format!("{other:?}"),
        };
        out.push(item);
    }
    out
}

#[test]
fn the_demo_checklist_is_well_formed_commonmark() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let md = checklist(root, &["fixtures/demo"]);
    let links = check_links(&md, root, None);
    assert!(links > 20, "{links} links");
    assert!(check_task_items(&md) >= 20);
    let headings = check_headings(&md);
    assert!(headings.iter().any(|h| h == "Pipeline map"), "{headings:?}");
    assert!(headings.iter().any(|h| h.starts_with("Consumer ")));
    assert!(headings.iter().any(|h| h.starts_with("Producer ")));
    // No HTML, image, table or math anywhere.
    for item in document(&md) {
        for forbidden in ["Html", "Image", "Table", "Math"] {
            assert!(!item.contains(forbidden), "{item}");
        }
    }

    let base = "https://github.com/o/r/blob/0123abc/";
    let with_base = checklist(root, &["fixtures/demo", "--link-base", base]);
    assert_eq!(check_links(&with_base, root, Some(base)), links);
}

/// The names a tree gives to the things the checklist quotes, written as the inside of
/// Rust (and TOML) string literals: `\n` is a newline in the name.
struct Names {
    dir: &'static str,
    krate: &'static str,
    topic: &'static str,
    table: &'static str,
    out: &'static str,
}

const PLAIN: Names = Names {
    dir: "dirname",
    krate: "cratename",
    topic: "topicname",
    table: "tablename",
    out: "outname",
};

/// Backticks (one and three), `|`, `<…>`, `]`, `*`, `#`, `(…)`, `%`, spaces and
/// newlines followed by what would start a list item, a task, a heading or a fence.
const HOSTILE: Names = Names {
    dir: "we`ird|<b>]*(x) #1%",
    krate: r"ord`er|<b>]*x\nq",
    topic: r"t`o|p<i>c]*\n```\n# H",
    table: r"ta`b|l<e>]*\n- [x] f",
    out: r"o`u|t<b>]*\n* x",
};

/// An rdkafka consumer that commits before its UPDATE (MA001) and sends on (MA006).
fn tree(root: &Path, n: &Names) {
    write(
        root,
        "svc/Cargo.toml",
        format!(
            "[package]\nname = \"{}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            n.krate
        ),
    );
    write(
        root,
        "svc/src/lib.rs",
        format!("#[path = \"{}/consumer.rs\"]\npub mod consumer;\n", n.dir),
    );
    write(
        root,
        &format!("svc/src/{}/consumer.rs", n.dir),
        format!(
            r#"use rdkafka::consumer::{{CommitMode, Consumer, StreamConsumer}};
use rdkafka::producer::{{FutureProducer, FutureRecord}};
use sqlx::PgPool;

pub async fn run(consumer: StreamConsumer, pool: PgPool, producer: FutureProducer) -> anyhow::Result<()> {{
    consumer.subscribe(&["{}"])?;
    loop {{
        let msg = consumer.recv().await?;
        consumer.commit_message(&msg, CommitMode::Sync)?;
        sqlx::query("UPDATE \"{}\" SET n = n + 1 WHERE id = $1")
            .bind(1)
            .execute(&pool)
            .await?;
        producer
            .send(FutureRecord::to("{}").payload("p").key("k"), std::time::Duration::from_secs(1))
            .await
            .ok();
    }}
}}
"#,
            n.topic, n.table, n.out
        ),
    );
}

#[test]
fn names_from_the_code_cannot_change_the_checklists_structure() {
    let dir = tempfile::tempdir().unwrap();
    let plain_root = dir.path().join("plain");
    let hostile_root = dir.path().join("hostile");
    tree(&plain_root, &PLAIN);
    tree(&hostile_root, &HOSTILE);
    let plain = checklist(&plain_root, &["svc"]);
    let hostile = checklist(&hostile_root, &["svc"]);

    // The plain tree's checklist quotes every name (the topics in the map only).
    for name in [PLAIN.dir, PLAIN.krate, PLAIN.table, PLAIN.topic, PLAIN.out] {
        assert!(plain.contains(name), "{name} not in\n{plain}");
    }
    assert!(
        plain.contains("MA001") && plain.contains("MA006"),
        "{plain}"
    );

    for (md, root) in [(&plain, &plain_root), (&hostile, &hostile_root)] {
        assert!(check_links(md, root, None) >= 8);
        let base = "https://example.com/a b/";
        let based = checklist(root, &["svc", "--link-base", base]);
        assert!(check_links(&based, root, Some("https://example.com/a%20b/")) >= 8);
        assert!(check_task_items(md) >= 8);
        check_headings(md);
    }
    assert_eq!(plain.lines().count(), hostile.lines().count(), "{hostile}");

    // The hostile document is the plain one with each name shown in its place (as
    // msgaudit shows text: a newline as `\n`; table names in lower case), in the
    // same code spans and runs of text, with nothing opened or closed around it.
    let swap = |s: &str| {
        s.replace(PLAIN.dir, HOSTILE.dir)
            .replace(PLAIN.krate, HOSTILE.krate)
            .replace(PLAIN.table, HOSTILE.table)
            .replace(PLAIN.topic, HOSTILE.topic)
            .replace(PLAIN.out, HOSTILE.out)
    };
    let expected: Vec<String> = document(&plain).iter().map(|e| swap(e)).collect();
    let actual = document(&hostile);
    assert_eq!(actual.len(), expected.len(), "{hostile}");
    for (a, e) in actual.iter().zip(&expected) {
        assert_eq!(a, e, "in\n{hostile}");
    }
}
