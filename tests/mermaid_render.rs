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

#[test]
fn the_demo_pipeline_map_renders() {
    if !npx_found() {
        return skip("npx is not installed");
    }
    if !std::path::Path::new(CHROMIUM).exists() {
        return skip("chromium is not installed");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_msgaudit"))
        .args(["checklist", "fixtures/demo"])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    let start = md.find("```mermaid\n").expect("a mermaid block") + "```mermaid\n".len();
    let block = &md[start..start + md[start..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.mmd"), block).unwrap();
    std::fs::write(
        dir.path().join("puppeteer.json"),
        format!(r#"{{"executablePath":"{CHROMIUM}","args":["--no-sandbox","--disable-gpu"]}}"#),
    )
    .unwrap();
    let run = Command::new("npx")
        .current_dir(dir.path())
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
    let svg = std::fs::read_to_string(dir.path().join("x.svg")).unwrap();
    // Drawn, not an error diagram: the nodes' names are in the picture.
    assert!(!svg.contains("Syntax error"), "{svg}");
    for name in [
        "orders.created",
        "KafkaOrders::run",
        "Billing::invoice",
        "invoices.created",
    ] {
        assert!(svg.contains(name), "{name} not drawn");
    }
}
