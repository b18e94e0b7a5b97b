//! Issue 15, "Never lose a run": what the output quotes from the analyzed tree is
//! escaped for each format's reader, `--diff-base` sees every changed line, SARIF
//! URIs are percent-encoded, columns count characters everywhere and rustc-json
//! byte offsets are into the file on disk. Every input is generated at test time,
//! and each output is read by what reads it where the repository has such a
//! consumer (cargo_metadata for rustc-json, the SARIF schema, the GitHub
//! workflow-command syntax, a CommonMark parser for the checklist).

mod common;
use common::{check_output, git, git_repo, msgaudit, sarif_schema_errors, write};

use std::fs;
use std::path::Path;

use cargo_metadata::diagnostic::Diagnostic;
use serde_json::Value;

/// A pulsar consumer that acks (line 8) before it inserts into the table whose
/// quoted SQL identifier is `ident`, written as the inside of a Rust string
/// literal (`\n` in `ident` is a newline in the identifier). `before_ack` is
/// Rust put on the line of the ack, before the call (`consumer.ack` starts at
/// column 9 + its length in characters). MA001 at 8:18 plus that.
fn handler(ident: &str, before_ack: &str) -> String {
    format!(
        r#"use futures::StreamExt;
use pulsar::{{Consumer, Pulsar, TokioExecutor}};
use sqlx::PgPool;

pub async fn run(pulsar: Pulsar<TokioExecutor>, pool: PgPool) -> anyhow::Result<()> {{
    let mut consumer: Consumer<Vec<u8>, TokioExecutor> = pulsar.consumer().build().await?;
    while let Some(msg) = consumer.try_next().await? {{
        {before_ack}consumer.ack(&msg).await?;
        sqlx::query("INSERT INTO \"{ident}\" (a) VALUES (1)")
            .execute(&pool)
            .await?;
    }}
    Ok(())
}}
"#
    )
}

/// A table name with a newline that starts a workflow command, a carriage
/// return, an ANSI escape, C1 and bidirectional controls and a line separator.
const HOSTILE: &str =
    r"ev\n::warning title=forged::injected\r::error::cr\u{1b}[31mred\u{85}nel\u{202e}rlo\u{2028}ls";

/// `msgaudit check --format FORMAT ARGS` in `dir`: exit code and stdout.
fn check(dir: &Path, format: &str, args: &[&str]) -> (i32, String) {
    let out = msgaudit()
        .current_dir(dir)
        .args(["check", "--format", format])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn json(dir: &Path, args: &[&str]) -> Value {
    let out = check_output(dir, args);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The diagnostic in a rustc-json line (a cargo `compiler-message`).
fn rustc_diagnostic(line: &str) -> Diagnostic {
    match serde_json::from_str::<cargo_metadata::Message>(line) {
        Ok(cargo_metadata::Message::CompilerMessage(m)) => m.message,
        other => panic!("not a compiler message: {other:?}: {line}"),
    }
}

/// Characters that no line of a text format may carry from the analyzed code.
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn assert_clean_lines(format: &str, out: &str) {
    for line in out.lines() {
        assert!(
            !line.trim_start().starts_with("::"),
            "{format}: a line starts a workflow command: {line:?}\n{out}"
        );
        assert!(
            !line.chars().any(unsafe_char),
            "{format}: a control character reached the output: {line:?}"
        );
    }
}

/// The hostile table name as each text format prints it: escaped, on one line.
const ESCAPED: &str =
    r"ev\n::warning title=forged::injected\r::error::cr\x1B[31mred\u{85}nel\u{202E}rlo\u{2028}ls";

#[test]
fn quoted_code_cannot_inject_lines_into_text_formats() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/lib.rs", handler(HOSTILE, ""));
    // rustc-json leaves out files in no package.
    write(dir.path(), "Cargo.toml", "[package]\nname = \"hostile\"\n");
    let v = json(dir.path(), &["."]);
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{v}");
    // JSON keeps the identifier as it is (serde escapes it).
    let message = findings[0]["message"].as_str().unwrap();
    assert!(message.contains("ev\n::warning"), "{message}");

    // short: one line per finding, each read by a gcc-style problem matcher.
    let (code, short) = check(dir.path(), "short", &["."]);
    assert_eq!(code, 1);
    assert_eq!(short.lines().count(), 1, "{short}");
    let line = short.lines().next().unwrap();
    assert!(
        line.starts_with("src/lib.rs:8:18: error[MA001]: message acked by `consumer.ack`"),
        "{line}"
    );
    assert!(line.ends_with(&format!("`{ESCAPED}`")), "{line}");
    assert_clean_lines("short", &short);

    // human: the message, the label and the window show the escaped name.
    let (_, human) = check(dir.path(), "human", &["."]);
    assert_clean_lines("human", &human);
    assert_eq!(human.matches(ESCAPED).count(), 3, "{human}");

    // github: one workflow command; the runner decodes `%0A` to the annotation's
    // own line breaks, and no line of the annotation is the quoted text's.
    let (_, github) = check(dir.path(), "github", &["."]);
    assert_eq!(github.lines().count(), 1, "{github}");
    assert!(github.starts_with("::error file=src/lib.rs,line=8,col=18,"));
    let data = github
        .split_once("::")
        .unwrap()
        .1
        .split_once("::")
        .unwrap()
        .1;
    let annotation = data
        .trim_end()
        .replace("%0A", "\n")
        .replace("%0D", "\r")
        .replace("%25", "%");
    assert_eq!(annotation.lines().count(), 4, "{annotation}");
    assert_clean_lines("github annotation", &annotation);
    assert!(annotation.lines().next().unwrap().contains(ESCAPED));

    // rustc-json: each line a rustc diagnostic (cargo_metadata); `message` keeps
    // the text as it is, `rendered` (printed to terminals) escapes it.
    let (_, rustc) = check(dir.path(), "rustc-json", &["."]);
    assert_eq!(rustc.lines().count(), 1);
    let d: Diagnostic = rustc_diagnostic(rustc.trim_end());
    assert_eq!(d.message, message);
    let rendered = d.rendered.unwrap();
    assert_clean_lines("rendered", &rendered);
    assert!(rendered.starts_with("error[MA001]: "), "{rendered}");
    assert!(rendered.lines().next().unwrap().contains(ESCAPED));
}

/// Char index of `pat` in `line`.
fn char_index(line: &str, pat: &str) -> Option<usize> {
    line.find(pat).map(|i| line[..i].chars().count())
}

#[test]
fn source_lines_drawn_by_human_are_escaped_and_stay_aligned() {
    // A lone carriage return and an escape sequence in a comment on the line
    // before the ack (miette would read the `\r` as a line break), and an escape
    // and a bidirectional override in a comment before the ack on its line.
    let dir = tempfile::tempdir().unwrap();
    let before = "/* \u{1b}[2J\u{202e} */ ";
    let text = handler("events", before).replace(
        "        /*",
        "        // done\r::error::forged \u{1b}[2J\n        /*",
    );
    write(dir.path(), "src/lib.rs", text);
    let column = 18 + before.chars().count();
    let (code, human) = check(dir.path(), "human", &["."]);
    assert_eq!(code, 1, "{human}");
    assert_clean_lines("human", &human);
    assert!(
        human.contains(&format!("╭─[src/lib.rs:9:{column}]")),
        "{human}"
    );
    // Each replaced character is one visible character, and the line numbers are
    // msgaudit's: the comment on line 8, the ack on line 9, underlined at `ack`.
    let lines: Vec<&str> = human.lines().collect();
    let comment = lines
        .iter()
        .find(|l| l.contains("// done"))
        .unwrap_or_else(|| panic!("{human}"));
    assert!(comment.starts_with("  8 │"), "{comment}");
    assert!(
        comment.contains("// done\u{240d}::error::forged \u{241b}[2J"),
        "{comment}"
    );
    let ack = lines
        .iter()
        .position(|l| l.starts_with("  9 │"))
        .unwrap_or_else(|| panic!("{human}"));
    assert!(lines[ack].contains("/* \u{241b}[2J\u{fffd} */ consumer.ack"));
    assert_eq!(
        char_index(lines[ack + 1], "─"),
        char_index(lines[ack], "ack(&msg)"),
        "{human}"
    );
}

#[test]
fn human_snippet_header_counts_characters() {
    let dir = tempfile::tempdir().unwrap();
    // 7 characters, 19 bytes: `let é = "日本語"; ` before the ack.
    let before = "let é = \"日本語\"; ";
    write(dir.path(), "src/lib.rs", handler("events", before));
    let v = json(dir.path(), &["."]);
    let f = &v["findings"][0];
    let column = 18 + before.chars().count() as u64;
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(8), Some(column))
    );
    let (_, human) = check(dir.path(), "human", &["."]);
    assert!(
        human.starts_with(&format!("src/lib.rs:8:{column}: MA001")),
        "{human}"
    );
    assert!(
        human.contains(&format!("╭─[src/lib.rs:8:{column}]")),
        "the header's column is not {column}:\n{human}"
    );
    let (_, short) = check(dir.path(), "short", &["."]);
    assert!(short.starts_with(&format!("src/lib.rs:8:{column}: ")));
}

/// Renders Markdown as GitHub does (CommonMark with task lists, tables and
/// strikethrough) and returns the HTML and the tags opened, in order.
fn render_markdown(md: &str) -> (String, Vec<String>) {
    use pulldown_cmark::{Event, Options, Parser};
    let options = Options::ENABLE_TASKLISTS
        | Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_MATH;
    let events: Vec<Event> = Parser::new_ext(md, options).collect();
    let tags = events
        .iter()
        .filter_map(|e| match e {
            Event::Start(tag) => Some(format!("{tag:?}")),
            Event::TaskListMarker(done) => Some(format!("task {done}")),
            Event::Html(h) | Event::InlineHtml(h) => Some(format!("html {h}")),
            Event::InlineMath(m) | Event::DisplayMath(m) => Some(format!("math {m}")),
            _ => None,
        })
        // Link targets are compared apart; their place in the structure stays.
        .map(|t| {
            if t.starts_with("Link") {
                "Link".to_string()
            } else {
                t
            }
        })
        .collect();
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    (html, tags)
}

#[test]
fn checklist_renders_analyzed_text_as_text() {
    // Markdown that would add a checked item, a heading, HTML, a link, an image,
    // emphasis and math, and backticks that would close the code span.
    // (No dot: msgaudit names a table by the last part of a dotted name.)
    let hostile = r"ev\n- [x] **forged** answer\n# Heading\n<img src=x onerror=alert(1)> [click](https://evil) ![i](https://evil/ipng) _em_ *em* ~~s~~ $x$ `tick` &amp; \\` end";
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "bad/src/lib.rs", handler(hostile, ""));
    write(dir.path(), "good/src/lib.rs", handler("events", ""));
    let checklist = |path: &str| {
        let out = msgaudit()
            .current_dir(dir.path())
            .args(["checklist", path])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    let bad = checklist("bad");
    let good = checklist("good");
    assert_eq!(bad.lines().count(), good.lines().count(), "{bad}");
    let (bad_html, bad_tags) = render_markdown(&bad);
    let (_, good_tags) = render_markdown(&good);
    // The same document structure as with an ordinary table name: no item,
    // heading, emphasis, link, image, HTML or math added.
    assert_eq!(bad_tags, good_tags, "{bad}");
    for forged in [
        "<img",
        "href=\"https://evil",
        "<em>",
        "<h1>",
        "<del>",
        "<strong>forged",
    ] {
        assert!(!bad_html.contains(forged), "{forged} in\n{bad_html}");
    }
    // The text is all there, as text.
    // (msgaudit prints table names in lower case.)
    for shown in [
        "<code>ev\\n- [x] **forged** answer\\n# heading\\n&lt;img src=x",
        // One code span holds the whole name, its backticks included.
        "[click](https://evil) ![i](https://evil/ipng) _em_ *em* ~~s~~ $x$ `tick` &amp;amp; \\` end</code>",
        "&amp;amp;",
    ] {
        assert!(bad_html.contains(shown), "{shown} not in\n{bad_html}");
    }
}

#[test]
fn diff_base_reads_files_that_gitattributes_mark_binary() {
    for attributes in ["*.rs -diff\n", "*.rs diff=opaque\n"] {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        git_repo(&repo);
        write(&repo, ".gitattributes", attributes);
        write(&repo, "src/lib.rs", "pub fn helper() -> u32 {\n    1\n}\n");
        git(&repo, &["config", "diff.opaque.binary", "true"]);
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", "base"]);
        // The handler is appended to the tracked file: its lines are changed lines.
        let text = format!(
            "pub fn helper() -> u32 {{\n    1\n}}\n{}",
            handler("events", "")
        );
        write(&repo, "src/lib.rs", text);
        let diff = git(&repo, &["diff", "HEAD"]);
        assert!(diff.contains("Binary files"), "{attributes}: {diff}");
        let v = json(&repo, &[".", "--diff-base", "HEAD"]);
        let lines: Vec<u64> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["line"].as_u64().unwrap())
            .collect();
        assert_eq!(lines, [11], "{attributes}: {v}");
        assert_eq!(v["summary"]["outside_diff"], 0, "{attributes}");
    }
}

#[test]
fn diff_base_reads_hunks_by_their_line_counts() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    git_repo(&repo);
    let filler: String = (0..10).map(|i| format!("// line {i}\n")).collect();
    write(&repo, "src/lib.rs", &filler);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    // Added lines whose text looks like file and hunk headers (`+++ b/…`,
    // `--- a/…`, `@@ … @@` in the diff), then unchanged lines, then the handler:
    // a second hunk.
    let headers = "pub const S: &str = \"\n++ b/other.rs\n-- a/other.rs\n@@ -1 +1 @@\ndiff --git a/x b/x\n\";\n";
    write(
        &repo,
        "src/lib.rs",
        format!("{headers}{filler}{}", handler("events", "")),
    );
    let diff = git(&repo, &["diff", "-U0", "HEAD"]);
    assert!(diff.contains("\n+++ b/other.rs\n"), "{diff}");
    let v = json(&repo, &[".", "--diff-base", "HEAD"]);
    let found: Vec<(String, u64)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(found, [("src/lib.rs".to_string(), 24)], "{v}");
    assert_eq!(v["summary"]["outside_diff"], 0);
}

/// Decodes `%XX` escapes (the SARIF consumer's side of `uri`).
fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

#[cfg(unix)]
#[test]
fn sarif_uris_percent_encode_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "src/back\\slash.rs",
        "src/a b#c?d%e.rs",
        "src/x:y[z]@w;v=u&t+s,r!q$p'o(n)m*.rs",
        "src/é.rs",
        // A colon in the first segment would read as a URI scheme (or a drive).
        "c:d.rs",
        "C:/x.rs",
    ];
    for name in names {
        write(dir.path(), name, handler("events", ""));
    }
    let (code, out) = check(dir.path(), "sarif", &["."]);
    assert_eq!(code, 1);
    let log: Value = serde_json::from_str(&out).unwrap();
    let errors = sarif_schema_errors(&log);
    assert!(errors.is_empty(), "invalid SARIF:\n{}", errors.join("\n"));
    let uris: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(uris.len(), names.len(), "{uris:?}");
    assert!(uris.contains(&"src/back%5Cslash.rs"), "{uris:?}");
    let mut decoded: Vec<String> = uris
        .iter()
        .map(|u| {
            // Only unreserved characters, `/` and escapes: one segment per name.
            assert!(
                u.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~/%".contains(&b)),
                "{u}"
            );
            String::from_utf8(percent_decode(u)).unwrap()
        })
        .collect();
    decoded.sort();
    let mut expected: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    expected.sort();
    assert_eq!(decoded, expected);
}

/// A control character or a byte that is not UTF-8 in a file name prints as `\xNN`;
/// a link once percent-encoded that escape (`tab%5Cx09x.rs`, and a checklist link to
/// a name with byte 0xFF led nowhere). Links encode the name's own bytes; a name
/// with a real backslash keeps it.
#[cfg(unix)]
#[test]
fn links_encode_the_bytes_of_escaped_file_names() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    let names: [&[u8]; 3] = [b"src/tab\tx.rs", b"src/ff\xFFx.rs", b"src/lit\\x41.rs"];
    for name in names {
        let path = root.join(std::ffi::OsStr::from_bytes(name));
        fs::write(path, handler("events", "")).unwrap();
    }
    let expected = ["src/ff%FFx.rs", "src/lit%5Cx41.rs", "src/tab%09x.rs"];
    let (code, out) = check(root, "sarif", &["."]);
    assert_eq!(code, 1, "{out}");
    let log: Value = serde_json::from_str(&out).unwrap();
    let mut uris: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    uris.sort();
    uris.dedup();
    assert_eq!(uris, expected);
    let mut decoded: Vec<Vec<u8>> = uris.iter().map(|u| percent_decode(u)).collect();
    decoded.sort();
    let mut raw: Vec<Vec<u8>> = names.iter().map(|n| n.to_vec()).collect();
    raw.sort();
    assert_eq!(decoded, raw);
    // The checklist links the same files by the same bytes.
    let out = msgaudit()
        .current_dir(root)
        .args(["checklist", "."])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    for uri in expected {
        assert!(
            md.contains(&format!("]({uri}#L")),
            "{uri} not linked:\n{md}"
        );
    }
    assert!(!md.contains("%5Cx09") && !md.contains("%5CxFF"), "{md}");
}

#[test]
fn rustc_json_byte_offsets_count_the_bom() {
    let dir = tempfile::tempdir().unwrap();
    let text = handler("events", "");
    write(dir.path(), "plain/src/lib.rs", &text);
    write(dir.path(), "bom/src/lib.rs", format!("\u{feff}{text}"));
    write(
        dir.path(),
        "plain/Cargo.toml",
        "[package]\nname = \"plain\"\n",
    );
    write(dir.path(), "bom/Cargo.toml", "[package]\nname = \"bom\"\n");
    let spans = |path: &str| {
        let (code, out) = check(dir.path(), "rustc-json", &[path]);
        assert_eq!(code, 1, "{out}");
        let d: Diagnostic = rustc_diagnostic(out.lines().next().unwrap());
        let raw = fs::read(dir.path().join(path).join("src/lib.rs")).unwrap();
        d.spans
            .iter()
            .map(|s| {
                // The bytes the offsets point at, in the file on disk, are the
                // span's own text.
                let first = &s.text[0];
                let chars: Vec<char> = first.text.chars().collect();
                let highlighted: String = chars
                    [first.highlight_start - 1..(first.highlight_end - 1).min(chars.len())]
                    .iter()
                    .collect();
                let on_disk =
                    String::from_utf8(raw[s.byte_start as usize..s.byte_end as usize].to_vec())
                        .unwrap();
                if s.line_start == s.line_end {
                    assert_eq!(on_disk, highlighted, "{path}: {s:?}");
                } else {
                    assert!(on_disk.starts_with(&highlighted), "{path}: {s:?}");
                }
                (s.byte_start, s.byte_end, s.line_start, s.column_start)
            })
            .collect::<Vec<_>>()
    };
    let plain = spans("plain");
    let bom = spans("bom");
    assert_eq!(plain.len(), bom.len());
    for (p, b) in plain.iter().zip(&bom) {
        assert_eq!((p.0 + 3, p.1 + 3, p.2, p.3), *b);
    }
}

/// `--link-base` makes every checklist link absolute (SPEC §6), for a pull-request
/// comment; a base with characters a link target cannot hold stays one link.
#[test]
fn checklist_links_take_the_link_base() {
    use pulldown_cmark::{Event, Parser, Tag};
    let targets = |md: &str| -> Vec<String> {
        Parser::new(md)
            .filter_map(|e| match e {
                Event::Start(Tag::Link { dest_url, .. }) => Some(dest_url.to_string()),
                _ => None,
            })
            // The rules' pages are published URLs, the same with any link base.
            .filter(|t| !t.contains("/docs/rules/"))
            .collect()
    };
    let out = |args: &[&str]| {
        let o = assert_cmd::Command::cargo_bin("msgaudit")
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap()
    };
    let relative = targets(&out(&["checklist", "fixtures/demo"]));
    assert!(!relative.is_empty());
    assert!(
        relative.iter().all(|t| t.starts_with("fixtures/demo/")),
        "{relative:?}"
    );
    let base = "https://github.com/o/r/blob/0123abc";
    let absolute = targets(&out(&["checklist", "fixtures/demo", "--link-base", base]));
    assert_eq!(absolute.len(), relative.len());
    for (a, r) in absolute.iter().zip(&relative) {
        assert_eq!(*a, format!("{base}/{r}"));
    }
    let via_check = targets(&out(&[
        "check",
        "--format",
        "checklist",
        "fixtures/demo",
        "--link-base",
        &format!("{base}/"),
    ]));
    assert_eq!(via_check, absolute);
    let odd = targets(&out(&[
        "checklist",
        "fixtures/demo",
        "--link-base",
        "https://x/a b(c)/",
    ]));
    assert_eq!(odd.len(), relative.len());
    assert!(
        odd[0].starts_with("https://x/a%20b%28c%29/fixtures/demo/"),
        "{odd:?}"
    );
}
