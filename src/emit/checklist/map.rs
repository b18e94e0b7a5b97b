//! The pipeline map that opens the checklist (docs/review.md): a Mermaid `flowchart LR` of
//! the topics and queues and the consumers and producers between them. Each
//! consumer's edge (from what it consumes) is labelled with the guarantee it
//! provides, each producer's edge (to what it sends to) with what its sends promise;
//! functions with findings are marked (`⚠` and the codes, class `finding`).
//!
//! Deterministic (the inventory's order), every label escaped for Mermaid, and
//! capped at [`MAX_NODES`] nodes so the comment keeps its budget.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::analysis::inventory::{self, FindingRef, Inventory};

/// Nodes drawn at most; past it, a last node says how many functions are left out.
pub const MAX_NODES: usize = 60;
/// Characters of a label at most (a long generic type in a name).
const MAX_LABEL: usize = 80;

/// One label as a quoted Mermaid string: quotes, brackets, pipes, backticks,
/// `#`, `<`, `>` and `&` become entity codes, so no analyzed text can end the
/// label, start Markdown strings or HTML, or end the code block. A line break in
/// the text (a raw string literal naming a topic) stays one: `<br>`, the only markup
/// the label holds; runs of breaks are one, tabs and other whitespace controls a
/// space, and other control characters are dropped.
pub fn label(text: &str) -> String {
    let mut chars: Vec<char> = Vec::new();
    for c in text.trim().chars() {
        match c {
            '\n' | '\r' | '\u{2028}' | '\u{2029}' | '\u{85}' => {
                if chars.last() == Some(&' ') {
                    chars.pop();
                }
                if chars.last() != Some(&'\n') {
                    chars.push('\n');
                }
            }
            c if c.is_whitespace() => {
                if !matches!(chars.last(), Some(' ' | '\n')) {
                    chars.push(' ');
                }
            }
            c if c.is_control() => {}
            c => chars.push(c),
        }
    }
    if chars.len() > MAX_LABEL {
        chars.truncate(MAX_LABEL - 1);
        chars.push('…');
    }
    let mut out = String::from("\"");
    for c in chars {
        match c {
            '\n' => out.push_str("<br>"),
            '"' => out.push_str("#quot;"),
            '#' => out.push_str("#35;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '&' => out.push_str("#amp;"),
            '|' => out.push_str("#124;"),
            '`' => out.push_str("#96;"),
            '[' => out.push_str("#91;"),
            ']' => out.push_str("#93;"),
            '(' => out.push_str("#40;"),
            ')' => out.push_str("#41;"),
            '{' => out.push_str("#123;"),
            '}' => out.push_str("#125;"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A function of the map: a consumer, a producer, or both under one name.
struct Function {
    id: String,
    name: String,
    codes: Vec<&'static str>,
}

/// One function's edges: `(from, to, label)` by node key (`t:topic`, `f:name`, `s:N`).
type Edges = Vec<(String, String, String)>;
/// One function's part of the map: its name, findings, edges and the nodes of
/// sources or destinations that are not literal (key, label).
type Group<'a> = (String, Vec<&'a FindingRef>, Edges, Vec<(String, String)>);

/// How the map names a function: by its name, and its file too when functions of
/// one name are defined in several files (two binaries' `handler`s), so each is a
/// node of its own.
fn names(inv: &Inventory) -> impl Fn(&str, Option<&crate::ir::Loc>) -> String {
    let mut files: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    let all = (inv.consumers.iter().map(|c| (&c.name, &c.loc)))
        .chain(inv.producers.iter().map(|p| (&p.name, &p.loc)));
    for (name, loc) in all {
        let path = loc.as_ref().map_or(String::new(), |l| l.path.to_string());
        files.entry(name.clone()).or_default().insert(path);
    }
    move |name, loc| match loc {
        Some(l) if files.get(name).is_some_and(|f| f.len() > 1) => {
            let file = l.path.rsplit('/').next().unwrap_or(&l.path);
            format!("{name} ({file})")
        }
        _ => name.to_string(),
    }
}

/// The map of `inv`, with `promise` giving each producer's edge label; empty when
/// there is nothing to draw.
pub fn render(inv: &Inventory, promise: &dyn Fn(&inventory::Producer) -> &'static str) -> String {
    // Per function (in the inventory's order): its edges and the nodes they need.
    let shown = names(inv);
    let mut groups: Vec<Group> = Vec::new();
    let mut sources = 0usize;
    let mut unknown = |what: &str, lib: Option<&str>| {
        sources += 1;
        let key = format!("s:{sources}");
        let text = match lib {
            Some(l) => format!("{what} not literal ({l})"),
            None => format!("{what} not literal"),
        };
        (key, text)
    };
    for c in &inv.consumers {
        let name = shown(&c.name, c.loc.as_ref());
        let f = format!("f:{name}");
        let g = inventory::infer(c).guarantee.as_str().to_string();
        let mut edges = Vec::new();
        let mut extra = Vec::new();
        // A serverless handler: the event sources its deploy file declares.
        super::serverless::source_nodes(c, (&f, &g), &mut edges, &mut extra);
        if c.topics.is_empty() && c.event_sources.is_empty() {
            let what = if c.broker == Some(crate::apis::Broker::Kafka) {
                "topic"
            } else {
                "queue"
            };
            let (k, t) = unknown(what, c.library.as_deref());
            edges.push((k.clone(), f.clone(), g.clone()));
            extra.push((k, t));
        }
        for t in &c.topics {
            edges.push((format!("t:{t}"), f.clone(), g.clone()));
        }
        groups.push((name, c.findings.iter().collect(), edges, extra));
    }
    for p in &inv.producers {
        let name = shown(&p.name, p.loc.as_ref());
        let f = format!("f:{name}");
        let g = promise(p).to_string();
        let mut edges = Vec::new();
        let mut extra = Vec::new();
        if p.topics.is_empty() {
            let what = if p.broker == Some(crate::apis::Broker::Kafka) {
                "topic"
            } else {
                "destination"
            };
            let (k, t) = unknown(what, p.library.as_deref());
            edges.push((f.clone(), k.clone(), g.clone()));
            extra.push((k, t));
        }
        for t in &p.topics {
            edges.push((f.clone(), format!("t:{t}"), g.clone()));
        }
        groups.push((name, p.findings.iter().collect(), edges, extra));
    }
    if groups.is_empty() {
        return String::new();
    }
    // Nodes by key, in the order first drawn; functions with their findings' codes.
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    let mut nodes: Vec<(String, String)> = Vec::new();
    let mut functions: BTreeMap<String, Function> = BTreeMap::new();
    let mut edges: Vec<(String, String, String)> = Vec::new();
    let mut left_out: Vec<&str> = Vec::new();
    for (name, findings, group_edges, extra) in &groups {
        let fkey = format!("f:{name}");
        let mut new: Vec<&str> = Vec::new();
        for (a, b, _) in group_edges {
            for k in [a, b] {
                if !ids.contains_key(k.as_str()) && !new.contains(&k.as_str()) {
                    new.push(k);
                }
            }
        }
        if !left_out.is_empty() || nodes.len() + new.len() > MAX_NODES {
            if !functions.contains_key(&fkey) && !left_out.contains(&name.as_str()) {
                left_out.push(name);
            }
            continue;
        }
        for k in new {
            let id = format!("n{}", ids.len());
            ids.insert(k.to_string(), id.clone());
            let text = match k.split_once(':') {
                Some(("t", t)) => t.to_string(),
                Some(("f", _)) => name.clone(),
                _ => extra
                    .iter()
                    .find(|(e, _)| e == k)
                    .map_or(String::new(), |(_, t)| t.clone()),
            };
            nodes.push((k.to_string(), text));
        }
        let entry = functions.entry(fkey.clone()).or_insert_with(|| Function {
            id: ids[&fkey].clone(),
            name: name.clone(),
            codes: Vec::new(),
        });
        entry.codes.extend(findings.iter().map(|f| f.code));
        entry.codes.sort();
        entry.codes.dedup();
        for e in group_edges {
            if !edges.contains(e) {
                edges.push(e.clone());
            }
        }
    }
    let mut out = String::from("```mermaid\nflowchart LR\n");
    out.push_str("  classDef finding fill:#fde2e1,stroke:#c0392b,color:#000\n");
    for (key, text) in &nodes {
        let id = &ids[key];
        match key.split_once(':') {
            Some(("t", _)) => {
                let _ = writeln!(out, "  {id}([{}])", label(text));
            }
            Some(("f", _)) => {
                let f = &functions[key];
                if f.codes.is_empty() {
                    let _ = writeln!(out, "  {id}[{}]", label(&f.name));
                } else {
                    let text = format!("{} ⚠ {}", f.name, f.codes.join(" "));
                    let _ = writeln!(out, "  {}[{}]:::finding", f.id, label(&text));
                }
            }
            _ => {
                let _ = writeln!(out, "  {id}([{}])", label(text));
            }
        }
    }
    for (a, b, l) in &edges {
        let _ = writeln!(out, "  {} -->|{}| {}", ids[a], label(l), ids[b]);
    }
    if !left_out.is_empty() {
        let _ = writeln!(
            out,
            "  more[{}]",
            label(&format!(
                "… {} more consumer{} and producer{} not drawn",
                left_out.len(),
                if left_out.len() == 1 { "" } else { "s" },
                if left_out.len() == 1 { "" } else { "s" },
            ))
        );
    }
    out.push_str("```\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::inventory::{Consumer, Producer};

    #[test]
    fn labels_cannot_break_out() {
        let l = label("a\"]) --> x[\"<b>`|#&{}");
        assert!(!l[1..l.len() - 1].contains(['"', ']', ')', '<', '>', '`', '|', '[', '(']));
        assert!(l.starts_with('"') && l.ends_with('"'));
        assert_eq!(label(&"x".repeat(200)).chars().count(), MAX_LABEL + 2);
    }

    #[test]
    fn line_breaks_stay_readable() {
        assert_eq!(label("orders\nretry"), "\"orders<br>retry\"");
        assert_eq!(label("a \r\n\n b"), "\"a<br>b\"");
        assert_eq!(label("a\tb\u{7}c"), "\"a bc\"");
        assert_eq!(label("\nx\n"), "\"x\"");
        // The break is the only markup: text cannot write its own.
        assert_eq!(label("<br>"), "\"#lt;br#gt;\"");
    }

    #[test]
    fn capped_with_a_note() {
        let mut inv = Inventory::default();
        for i in 0..100 {
            inv.consumers.push(Consumer {
                name: format!("C{i}"),
                topics: vec![format!("t{i}")],
                ..Consumer::default()
            });
        }
        inv.producers.push(Producer {
            name: "P".into(),
            topics: vec!["t0".into()],
            ..Producer::default()
        });
        let out = render(&inv, &|_| "at-least-once");
        let nodes = out
            .lines()
            .filter(|l| l.contains("([") || l.contains("[\""))
            .count();
        assert!(nodes <= MAX_NODES + 1, "{nodes}");
        assert!(
            out.contains("… 71 more consumers and producers not drawn"),
            "{out}"
        );
        assert_eq!(out, render(&inv, &|_| "at-least-once"));
    }
}
