//! The checklist's pipeline map (SPEC §6) renders with the Mermaid CLI
//! (`npx @mermaid-js/mermaid-cli`, headless Chromium through puppeteer).
//!
//! Skipped with a message without `npx` or Chromium, unless `CI` or
//! `MSGAUDIT_REQUIRE_NPX` is set (`.ci/run` installs npm and chromium).

use std::process::Command;

mod common;
use common::{npx_found, skip_npx_test};

/// The CLI, pinned so that a new release shows up as a deliberate update.
const MERMAID_CLI: &str = "@mermaid-js/mermaid-cli@11.4.2";
const CHROMIUM: &str = "/usr/bin/chromium";

fn skip(why: &str) {
    skip_npx_test(why, "install npm and chromium", "the Mermaid render test");
}

/// The first Mermaid block of `msgaudit checklist DIR` drawn as SVG, or `None`
/// (after saying why) without npx or Chromium.
fn draw(dir: &std::path::Path) -> Option<String> {
    if !npx_found() {
        skip("npx is not installed");
        return None;
    }
    if !std::path::Path::new(CHROMIUM).exists() {
        skip("chromium is not installed");
        return None;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_msgaudit"))
        .arg("checklist")
        .arg(dir)
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    let start = md.find("```mermaid\n").expect("a mermaid block") + "```mermaid\n".len();
    let block = &md[start..start + md[start..].find("```").unwrap()];
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("x.mmd"), block).unwrap();
    std::fs::write(
        tmp.path().join("puppeteer.json"),
        format!(r#"{{"executablePath":"{CHROMIUM}","args":["--no-sandbox","--disable-gpu"]}}"#),
    )
    .unwrap();
    let run = Command::new("npx")
        .current_dir(tmp.path())
        .env("PUPPETEER_SKIP_DOWNLOAD", "1")
        .args([
            "-y",
            MERMAID_CLI,
            "-p",
            "puppeteer.json",
            "-i",
            "x.mmd",
            "-o",
            "x.svg",
        ])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "mmdc failed: {log}");
    let svg = std::fs::read_to_string(tmp.path().join("x.svg")).unwrap();
    // Drawn, not an error diagram.
    assert!(!svg.contains("Syntax error"), "{svg}");
    Some(svg)
}

#[test]
fn the_demo_pipeline_map_renders() {
    let Some(svg) = draw(std::path::Path::new("fixtures/demo")) else {
        return;
    };
    // The nodes' names are in the picture.
    for name in [
        "orders.created",
        "KafkaOrders::run",
        "Billing::invoice",
        "invoices.created",
    ] {
        assert!(svg.contains(name), "{name} not drawn");
    }
}

/// Topic names holding line breaks are drawn on two lines, not run together.
#[test]
fn line_breaks_in_labels_render() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"j\"\n").unwrap();
    std::fs::write(
        dir.path().join("src/main.rs"),
        "use rdkafka::consumer::{Consumer, StreamConsumer};\n\
         async fn run(c: StreamConsumer) {\n\
         c.subscribe(&[\"audit\\nlog\"]).unwrap();\n\
         let m = c.recv().await;\n\
         }\n",
    )
    .unwrap();
    let Some(svg) = draw(dir.path()) else {
        return;
    };
    assert!(!svg.contains("auditlog"), "{svg}");
    assert!(svg.contains("audit") && svg.contains("log"), "{svg}");
    assert!(svg.contains("<br"), "no line break drawn: {svg}");
}
