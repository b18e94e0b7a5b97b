//! The generated pages of `docs/`: one per rule (`docs/rules/CODE-name.md`)
//! and their index, made from each rule's own documentation, the text `msgaudit
//! explain` prints, so that the page and the command never disagree; and one per
//! client pack (`docs/packs/lapin.md`), made from the pack (`rules/lapin.toml`). `tests/docs.rs`
//! compares them with the committed files and writes them with `MSGAUDIT_BLESS=1`.

use std::fmt::Write as _;

use crate::diagnostic::Consequence;
use crate::rules::RuleMeta;

/// Every generated page: its path under `docs/` and its text.
pub fn pages() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = crate::rules::ALL
        .iter()
        .map(|r| (format!("rules/{}", r.page_file()), rule_page(r)))
        .collect();
    out.push(("rules/README.md".to_string(), rules_index()));
    let packs = packs();
    for pack in &packs {
        out.push((format!("packs/{}.md", pack.library), pack_page(pack)));
    }
    out.push(("packs/README.md".to_string(), packs_index(&packs)));
    out
}

/// Every built-in pack, in the order `apis::PACKS` lists them.
pub fn packs() -> Vec<Pack> {
    crate::apis::PACKS
        .iter()
        .filter_map(|(file, text)| Pack::read(file, text))
        .collect()
}

/// The delivery roles a pack can declare, in the order they are listed: what its
/// calls do to a message (`[[calls]]` `event`; a `key_claim` write or a
/// `claim_result` read claims; `idgen` mints an id, `external` is an effect) and
/// `handler` for a pack that runs a handler whose return acks (`[worker]`, `[lambda]`).
pub const DELIVERY_ROLES: &[&str] = &[
    "receive", "ack", "nack", "begin", "commit", "rollback", "write", "claim", "publish", "id",
    "effect", "handler",
];

/// The delivery role of a call's event (and `sql` kind), if it has one.
fn delivery_role(event: &str, sql: Option<&str>) -> Option<&'static str> {
    if sql == Some("key_claim") || event == "claim_result" {
        return Some("claim");
    }
    Some(match event {
        "receive" => "receive",
        "ack" => "ack",
        "nack" => "nack",
        "begin" | "tx_closure" | "broker_begin" => "begin",
        "commit" | "broker_commit" | "broker_offsets" => "commit",
        "rollback" | "broker_abort" => "rollback",
        "write" => "write",
        "publish" => "publish",
        "idgen" => "id",
        "external" => "effect",
        _ => return None,
    })
}

/// A rule's page: a title, the rule's properties, then the explanation of `msgaudit
/// explain` (its header line become the title), and how to configure it.
pub fn rule_page(rule: &RuleMeta) -> String {
    let explain = super::explain(rule);
    // The first line of `explain` is `CODE name (severity)`: the title says it.
    let body = explain.split_once("\n\n").map_or("", |(_, rest)| rest);
    let mut out = format!("# {} {}\n\n", rule.code, rule.name);
    let _ = writeln!(out, "{}\n", rule.summary);
    let _ = writeln!(out, "| Code | Name | Default severity | Consequence |");
    let _ = writeln!(out, "| --- | --- | --- | --- |");
    let _ = writeln!(
        out,
        "| {} | `{}` | {} | {} |\n",
        rule.code,
        rule.name,
        rule.default_severity.as_str(),
        rule.consequence.as_str()
    );
    out.push_str(body.trim_end());
    out.push_str("\n\n");
    options(&mut out, rule);
    out.push_str("\n---\n\n");
    let _ = writeln!(
        out,
        "Generated from the rule's documentation, the text of `msgaudit explain {}`. \
         [All rules](README.md).",
        rule.code
    );
    out
}

/// The options every rule has: none of its own, the selection, the severity and the
/// suppression comment.
fn options(out: &mut String, rule: &RuleMeta) {
    let code = rule.code;
    // The example gives the severity the rule does not have by default.
    let other = match rule.default_severity {
        crate::diagnostic::Severity::Error => "warning",
        crate::diagnostic::Severity::Warning => "error",
    };
    let _ = writeln!(out, "## Options\n");
    let _ = writeln!(
        out,
        "The rule has no options of its own. It runs by default; like every rule it is:\n"
    );
    let _ = writeln!(
        out,
        "- selected or left out on the command line: `--select {code}`, `--ignore {code}` \
         (by code or by name, `{}`);",
        rule.name
    );
    let _ = writeln!(
        out,
        "- turned off or given another severity in `msgaudit.toml`, for the whole tree or \
         for some paths:\n\n  ```toml\n  [rules]\n  {code} = \"{other}\"   # off | warning | error\n\n  \
         [[overrides]]\n  paths = [\"services/legacy/**\"]\n  rules = {{ {code} = \"off\" }}\n  ```\n"
    );
    // The unused-suppression diagnostic is about the comments themselves.
    if rule.code != crate::rules::UNUSED_SUPPRESSION.code {
        let _ = writeln!(
            out,
            "- suppressed for one finding with a comment on its line or the line above, with the \
             reason: `// msgaudit:allow({code}) reason` (`# msgaudit:allow({code}) reason` in YAML)."
        );
    }
}

/// `docs/rules/README.md`: every rule, with its severity, consequence and summary.
pub fn rules_index() -> String {
    let mut out = String::from("# Rules\n\n");
    out.push_str(
        "Every rule msgaudit checks, in code order. Each page says what the rule finds, why \
         it loses or duplicates messages, a bad and a fixed example, what it does not report, \
         and its options; `msgaudit explain CODE` prints the same text, and `msgaudit rules` \
         lists them.\n\n",
    );
    out.push_str("| Code | Name | Default severity | Consequence | What it finds |\n");
    out.push_str("| --- | --- | --- | --- | --- |\n");
    for r in crate::rules::ALL.iter() {
        let consequence = match r.consequence {
            Consequence::Nothing => "none".to_string(),
            c => c.as_str().to_string(),
        };
        let _ = writeln!(
            out,
            "| [{}]({}) | [`{}`]({}) | {} | {} | {} |",
            r.code,
            r.page_file(),
            r.name,
            r.page_file(),
            r.default_severity.as_str(),
            consequence,
            r.summary.replace('|', "\\|")
        );
    }
    out.push_str(
        "\nConsequences: **loss**: a crash or a failure at a finding can lose the message, or \
         what it should cause; **duplicate**: a redelivery or a retry at a finding can apply \
         the effect twice; **visibility**: a reader can see records that never committed.\n",
    );
    out
}

/// A client pack (`rules/*.toml`), read as TOML: its pages show what it declares
/// whatever shape its tables have.
pub struct Pack {
    /// The pack's file name (`lapin.toml`).
    pub file: String,
    /// Its `library`, the page's name.
    pub library: String,
    table: toml::Table,
}

impl Pack {
    fn read(file: &str, text: &str) -> Option<Pack> {
        let table: toml::Table = text.parse().ok()?;
        let library = table.get("library")?.as_str()?.to_string();
        Some(Pack {
            file: file.to_string(),
            library,
            table,
        })
    }

    /// Its broker (`broker`), for a pack whose calls receive.
    pub fn broker(&self) -> Option<&str> {
        self.str("broker")
    }

    /// The roles its types have and its calls return (`kafka.consumer`, `db.tx`).
    pub fn type_roles(&self) -> Vec<String> {
        self.roles().into_iter().map(|(r, _, _)| r).collect()
    }

    /// The delivery roles it declares, in `DELIVERY_ROLES` order.
    pub fn delivery_roles(&self) -> Vec<&'static str> {
        fn str_of<'t>(t: &'t toml::Table, k: &str) -> Option<&'t str> {
            t.get(k).and_then(toml::Value::as_str)
        }
        // A key store whose argument words make a `SET` a claim (`NX`): its `key_set`
        // calls claim too.
        let nx = self
            .entries("arg_words")
            .iter()
            .any(|w| str_of(w, "means") == Some("only_if_absent"));
        let mut found: Vec<&str> = Vec::new();
        for c in self.entries("calls") {
            let sql = str_of(c, "sql");
            found.extend(str_of(c, "event").and_then(|e| delivery_role(e, sql)));
            if nx && sql == Some("key_set") {
                found.push("claim");
            }
        }
        if self.table.contains_key("worker") || self.table.contains_key("lambda") {
            found.push("handler");
        }
        DELIVERY_ROLES
            .iter()
            .copied()
            .filter(|r| found.contains(r))
            .collect()
    }

    fn str(&self, key: &str) -> Option<&str> {
        self.table.get(key).and_then(toml::Value::as_str)
    }

    fn entries(&self, key: &str) -> Vec<&toml::Table> {
        self.table
            .get(key)
            .and_then(toml::Value::as_array)
            .map(|a| a.iter().filter_map(toml::Value::as_table).collect())
            .unwrap_or_default()
    }

    /// The roles the pack declares: each with the types that have it (`[[types]]`)
    /// and the calls that return it (`[[calls]]` `returns`), in order of first mention.
    fn roles(&self) -> Vec<(String, Vec<String>, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
        let mut at = |role: &str| -> usize {
            match out.iter().position(|(r, _, _)| r == role) {
                Some(i) => i,
                None => {
                    out.push((role.to_string(), Vec::new(), Vec::new()));
                    out.len() - 1
                }
            }
        };
        let mut adds: Vec<(usize, bool, Vec<String>)> = Vec::new();
        for t in self.entries("types") {
            if let Some(role) = t.get("role").and_then(toml::Value::as_str) {
                adds.push((at(role), true, strings(t.get("names"))));
            }
        }
        for c in self.entries("calls") {
            if let Some(role) = c.get("returns").and_then(toml::Value::as_str) {
                let mut names = strings(c.get("methods"));
                names.extend(strings(c.get("paths")));
                names.extend(strings(c.get("macros")).into_iter().map(|m| m + "!"));
                adds.push((at(role), false, names));
            }
        }
        for (i, is_type, names) in adds {
            let list = if is_type {
                &mut out[i].1
            } else {
                &mut out[i].2
            };
            for n in names {
                if !list.contains(&n) {
                    list.push(n);
                }
            }
        }
        out
    }
}

/// The strings of a TOML array (or the one string).
fn strings(v: Option<&toml::Value>) -> Vec<String> {
    match v {
        Some(toml::Value::String(s)) => vec![s.clone()],
        Some(toml::Value::Array(a)) => a
            .iter()
            .filter_map(toml::Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// A value as Markdown code, fit for a table cell.
fn code_span(text: &str) -> String {
    let text = text.replace('|', "\\|");
    if text.contains('`') {
        format!("`` {text} ``")
    } else {
        format!("`{text}`")
    }
}

fn codes(items: &[String]) -> String {
    items
        .iter()
        .map(|s| code_span(s))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A TOML value as the text of a table cell.
fn cell(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => code_span(s),
        toml::Value::Array(a) => a.iter().map(cell).collect::<Vec<_>>().join(", "),
        toml::Value::Table(t) => t
            .iter()
            .map(|(k, v)| format!("{k}: {}", cell(v)))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

/// `entries` as one Markdown table, a column for each key in order of first use.
fn table_of(out: &mut String, entries: &[&toml::Table]) {
    let mut keys: Vec<&str> = Vec::new();
    for e in entries {
        for k in e.keys() {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    let _ = writeln!(out, "| {} |", keys.join(" | "));
    let _ = writeln!(out, "|{}", " --- |".repeat(keys.len()));
    for e in entries {
        let cells: Vec<String> = keys
            .iter()
            .map(|k| e.get(*k).map(cell).unwrap_or_default())
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}

/// A client pack's page: the roles it declares, then every table of the pack.
pub fn pack_page(pack: &Pack) -> String {
    let mut out = format!("# Pack `{}`\n\n", pack.library);
    let _ = writeln!(
        out,
        "What msgaudit knows of `{}`, from [`rules/{}`](../../rules/{}): which types have \
         which *role*, and which calls are which delivery *event*. Extend it with the \
         `[apis]` table of `msgaudit.toml`.\n",
        pack.library, pack.file, pack.file
    );
    if let Some(broker) = pack.str("broker") {
        let _ = writeln!(out, "Broker: {}.\n", code_span(broker));
    }
    let modules = strings(pack.table.get("modules"));
    if !modules.is_empty() {
        let _ = writeln!(
            out,
            "Files that name {} are read for it.\n",
            codes(&modules)
        );
    }
    let roles = pack.roles();
    out.push_str("## Roles\n\n");
    if roles.is_empty() {
        out.push_str("The pack declares no role.\n\n");
    } else {
        out.push_str("| Role | Types | Returned by |\n| --- | --- | --- |\n");
        for (role, types, calls) in &roles {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                code_span(role),
                codes(types),
                codes(calls)
            );
        }
        out.push('\n');
    }
    // Every other declaration, by key.
    let shown = ["library", "broker", "modules"];
    let mut lists = Vec::new();
    for (key, value) in &pack.table {
        if shown.contains(&key.as_str()) {
            continue;
        }
        match value {
            toml::Value::Array(a) if a.iter().all(toml::Value::is_table) && !a.is_empty() => {
                let entries: Vec<&toml::Table> =
                    a.iter().filter_map(toml::Value::as_table).collect();
                let _ = writeln!(out, "## `[[{key}]]`\n");
                table_of(&mut out, &entries);
            }
            toml::Value::Table(t) => {
                let _ = writeln!(out, "## `[{key}]`\n");
                table_of(&mut out, &[t]);
            }
            other => lists.push(format!("- `{key}`: {}", cell(other))),
        }
    }
    if !lists.is_empty() {
        out.push_str("## Lists\n\n");
        out.push_str(&lists.join("\n"));
        out.push_str("\n\n");
    }
    out.push_str("---\n\n");
    let _ = writeln!(
        out,
        "Generated from [`rules/{}`](../../rules/{}). [All packs](README.md).",
        pack.file, pack.file
    );
    out
}

/// `docs/packs/README.md`: every pack, with its broker and roles.
pub fn packs_index(packs: &[Pack]) -> String {
    let mut out = String::from("# Client packs\n\n");
    out.push_str(
        "msgaudit's knowledge of libraries is data: one TOML pack per library in \
         [`rules/`](../../rules/README.md), compiled into the binary. Rules never name a \
         library call; the packs say which types have which role and which calls ack, \
         commit, publish or write. Each page lists what its pack declares.\n\n",
    );
    out.push_str(
        "*Delivery roles* are what the pack's calls do to a message (receive, ack, nack, \
         begin, commit, rollback, write, claim, publish, id, effect; handler: a handler \
         whose return acks); *type roles* are the roles its types have. `msgaudit rules \
         --packs` prints the same list.\n\n",
    );
    out.push_str(
        "| Pack | File | Broker | Delivery roles | Type roles |\n| --- | --- | --- | --- | --- |\n",
    );
    for p in packs {
        let delivery: Vec<String> = p.delivery_roles().into_iter().map(String::from).collect();
        let _ = writeln!(
            out,
            "| [`{}`]({}.md) | [`{}`](../../rules/{}) | {} | {} | {} |",
            p.library,
            p.library,
            p.file,
            p.file,
            p.str("broker").map(code_span).unwrap_or_default(),
            delivery.join(", "),
            codes(&p.type_roles())
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_holds_the_explain_text_under_a_title() {
        let rule = crate::rules::lookup("MA001").unwrap();
        let page = rule_page(rule);
        assert!(page.starts_with("# MA001 ack-before-commit\n\n"));
        let explain = super::super::explain(rule);
        let body = explain.split_once("\n\n").unwrap().1;
        assert!(page.contains(body.trim_end()));
        assert!(page.contains("## Options"));
    }
}
