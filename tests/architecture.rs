//! The layers of ARCHITECTURE.md ("Layers"), kept: every top-level module of `src/`
//! imports only modules of lower layers. Test modules (`#[cfg(test)]`) are left out;
//! comments and string literals are not imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Bottom to top, as ARCHITECTURE.md's table lists them. Modules on one line share
/// a layer and may not import each other.
const LAYERS: &[&[&str]] = &[
    &["diagnostic"],
    &["support"],
    &["ir"],
    &["apis"],
    &["analysis"],
    &["rules"],
    &["config"],
    &["source"],
    &["frontend"],
    &["suppress"],
    &["report"],
    &["driver"],
    &["emit"],
    &["diffbase"],
    &["baseline"],
    &["server", "fix"],
];

/// Items of `lib.rs` (`check` and its options), above every layer.
const LIB_ITEMS: &[&str] = &["check", "Options"];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The top-level module a file of `src/` belongs to (`None`: `lib.rs`, `main.rs`).
fn module_of(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (!matches!(name.as_str(), "lib" | "main")).then_some(name)
}

/// One reading of a file's non-test code (test modules, from `#[cfg(test)]` on, are
/// cut).
struct Reading {
    /// The text with comments and string literals left out, line for line.
    code: String,
    /// The string literals.
    strings: Vec<String>,
    /// The comments and doc comments (`//`, `///`, `//!`, `/* */`), one entry for
    /// each line a comment is on: (line, from 1; its text on that line).
    comments: Vec<(usize, String)>,
}

/// Where the reader is at the end of a line: a string or a block comment goes on.
enum Within {
    Code,
    /// A string literal; `Some(n)`: a raw one closed by `"` and `n` `#`s.
    Str(Option<usize>),
    /// A block comment, nested this deep.
    Block(usize),
}

/// Reads `text` as Rust, line by line: a line comment ends a line, a block comment
/// or a string may go on over several.
fn read_code(text: &str) -> Reading {
    let mut r = Reading {
        code: String::with_capacity(text.len()),
        strings: Vec::new(),
        comments: Vec::new(),
    };
    let mut within = Within::Code;
    let mut s = String::new();
    for (n, line) in text.lines().enumerate() {
        if matches!(within, Within::Code) && line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let c: Vec<char> = line.chars().collect();
        let mut comment: Option<String> = None;
        let mut i = 0;
        while i < c.len() {
            let (ch, next) = (c[i], c.get(i + 1).copied());
            match &mut within {
                Within::Block(depth) => {
                    let text = comment.get_or_insert_with(String::new);
                    if ch == '/' && next == Some('*') {
                        *depth += 1;
                        text.push_str("/*");
                        i += 1;
                    } else if ch == '*' && next == Some('/') {
                        *depth -= 1;
                        i += 1;
                        if *depth == 0 {
                            within = Within::Code;
                        } else {
                            text.push_str("*/");
                        }
                    } else {
                        text.push(ch);
                    }
                }
                Within::Str(None) if ch == '\\' => {
                    s.extend(next);
                    i += 1;
                }
                &mut Within::Str(hashes)
                    if ch == '"'
                        && hashes.is_none_or(|h| {
                            c.len() > i + h && c[i + 1..=i + h].iter().all(|&x| x == '#')
                        }) =>
                {
                    i += hashes.unwrap_or(0);
                    r.strings.push(std::mem::take(&mut s));
                    within = Within::Code;
                }
                Within::Str(_) => s.push(ch),
                Within::Code if ch == '/' && next == Some('/') => {
                    r.comments.push((n + 1, c[i + 2..].iter().collect()));
                    break;
                }
                Within::Code if ch == '/' && next == Some('*') => {
                    within = Within::Block(1);
                    comment = Some(String::new());
                    i += 1;
                }
                Within::Code if ch == '"' => {
                    // `r#"…"#`, `br"…"`: the `#`s before the quote close it too.
                    let hashes = r.code.chars().rev().take_while(|&x| x == '#').count();
                    let mut before = r.code.chars().rev().skip(hashes);
                    let raw = before.next() == Some('r')
                        && before
                            .next()
                            .is_none_or(|x| x == 'b' || !(x.is_alphanumeric() || x == '_'));
                    within = Within::Str(raw.then_some(hashes));
                }
                // A character literal (`'"'`, `'\''`), not a lifetime (`'a`).
                Within::Code if ch == '\'' && next == Some('\\') => {
                    let rest = c.get(i + 3..).unwrap_or_default();
                    let close = rest.iter().position(|&x| x == '\'');
                    i += close.map_or(1, |p| p + 3);
                }
                Within::Code if ch == '\'' && c.get(i + 2) == Some(&'\'') => i += 2,
                Within::Code => r.code.push(ch),
            }
            i += 1;
        }
        // The code keeps every line, so that its lines are the file's.
        r.code.push('\n');
        if let Within::Str(_) = within {
            s.push('\n');
        }
        r.comments.extend(comment.map(|text| (n + 1, text)));
    }
    r
}

/// The text with comments and string literals blanked and the test modules cut.
fn code_of(text: &str) -> String {
    read_code(text).code
}

/// Modules named by `crate::x` paths and `use crate::{x, y::..}` groups.
fn imports(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            // Top-level entries of the group only: a nested group names submodules.
            let mut depth = 0;
            let mut start = true;
            for (j, c) in group[..end].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && depth == 0 && !c.is_whitespace() => {
                        start = false;
                        out.insert(ident(&group[j..]));
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            // `#[cfg(test)] mod tests;` out of line: test code, like the inline ones.
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

/// The source files of `src/` outside `src/rules/` (whose wording may name what a
/// rule is about), as (path below `src/`, text), sorted.
fn sources_outside_rules() -> Vec<(std::path::PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|f| (f.strip_prefix(&src).unwrap().to_path_buf(), f))
        .filter(|(rel, _)| !rel.starts_with("rules"))
        .map(|(rel, f)| (rel, std::fs::read_to_string(f).unwrap()))
        .collect()
}

/// (module -> modules it imports, with a file that does) over `src/`.
fn graph() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut g: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let Some(module) = module_of(rel) else {
            continue;
        };
        let code = code_of(&std::fs::read_to_string(&f).unwrap());
        let entry = g.entry(module.clone()).or_default();
        for m in imports(&code) {
            if m != module && !m.is_empty() {
                entry.entry(m).or_insert_with(|| rel.display().to_string());
            }
        }
    }
    g
}

#[test]
fn every_module_has_a_layer() {
    let missing: Vec<String> = graph()
        .keys()
        .filter(|m| layer_of(m).is_none())
        .cloned()
        .collect();
    assert!(
        missing.is_empty(),
        "modules missing from ARCHITECTURE.md's layer table (and LAYERS here): {missing:?}"
    );
}

#[test]
fn modules_import_only_lower_layers() {
    let mut upward = Vec::new();
    for (module, deps) in graph() {
        let Some(own) = layer_of(&module) else {
            continue;
        };
        for (dep, file) in deps {
            match layer_of(&dep) {
                Some(l) if l < own => {}
                // The language server runs the same `check` as the CLI (issue 17), and
                // `check --fix` runs it in rounds (issue 21): the one layer that may
                // call into lib.rs, which composes the rest.
                None if matches!(module.as_str(), "server" | "fix")
                    && LIB_ITEMS.contains(&dep.as_str()) => {}
                None => upward.push(format!("{file}: {module} imports unknown `crate::{dep}`")),
                Some(_) => upward.push(format!("{file}: {module} imports {dep}, not below it")),
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports against the layers:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_reader_sees_imports_and_skips_text() {
    let code = code_of(
        "use crate::{ir::Loc, apis::{self, Apis}};\n\
         // crate::frontend in a comment\n\
         let s = \"crate::rules in a string\";\n\
         fn f() { crate::support::cpu::snapshot(); } // crate::emit\n\
         #[cfg(test)]\nmod tests { use crate::driver; }\n",
    );
    let found: Vec<String> = imports(&code).into_iter().collect();
    assert_eq!(found, ["apis", "ir", "support"]);
}

/// The string literals of a file's code, test modules and comments left out.
fn strings_of(text: &str) -> Vec<String> {
    read_code(text).strings
}

/// `MA` and three digits: a rule code (`MA001`, `MA900`).
fn spells_a_rule_code(s: &str) -> bool {
    s.as_bytes()
        .windows(5)
        .any(|w| w.starts_with(b"MA") && w[2..].iter().all(u8::is_ascii_digit))
}

/// Rule codes are the rules' own (issue 16): the checklist, the guarantee and the
/// configuration read rule properties (`RuleMeta::concern`, `consequence`) or the
/// registry's statics, never a spelled code.
#[test]
fn rule_codes_are_spelled_only_in_the_rules() {
    let mut spelled = Vec::new();
    for (rel, text) in sources_outside_rules() {
        for s in strings_of(&text) {
            if spells_a_rule_code(&s) {
                spelled.push(format!("{}: \"{s}\"", rel.display()));
            }
        }
        // Nor as a name in the code (`rules::MA900`): the registry's statics outside
        // the rules are named for what they are.
        for (n, line) in code_of(&text).lines().enumerate() {
            if spells_a_rule_code(line) {
                spelled.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        spelled.is_empty(),
        "rule codes spelled outside src/rules/:\n{}",
        spelled.join("\n")
    );
}

/// One dispatcher (issue 41): outside `src/rules/`, code reaches the rules through
/// `rules::check_crate`, `rules::check_tree` and the registry, never a rule's module
/// (`rules::ma012_…::check`), so a rule added to `rules::RULES` runs everywhere.
#[test]
fn no_rule_module_is_named_outside_the_rules() {
    let mut named = Vec::new();
    for (rel, text) in sources_outside_rules() {
        for (n, line) in code_of(&text).lines().enumerate() {
            let hit = line.match_indices("rules::ma").any(|(i, _)| {
                line.as_bytes()
                    .get(i + "rules::ma".len()..i + "rules::ma".len() + 3)
                    .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
            });
            if hit {
                named.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        named.is_empty(),
        "rule modules named outside src/rules/:\n{}",
        named.join("\n")
    );
}

/// One finding builder (issue 41): a rule makes its findings with
/// `RuleMeta::finding`, which fills the code, name, severity and boundary from the
/// rule's metadata; no rule file spells a `Finding { … }` literal.
#[test]
fn rules_build_findings_through_their_metadata() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rules");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    files.sort();
    let mut literals = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("mod.rs")) {
        for (n, line) in code_of(&std::fs::read_to_string(f).unwrap())
            .lines()
            .enumerate()
        {
            let t = line.trim_end();
            if t.ends_with("Finding {") && !t.contains("->") {
                literals.push(format!("{}:{}: {}", f.display(), n + 1, t.trim()));
            }
        }
    }
    assert!(
        literals.is_empty(),
        "Finding literals in rule files:\n{}",
        literals.join("\n")
    );
}

/// Comments and doc comments outside `src/rules/` name what a rule is about (an ack
/// after a failure, the dedup window against the replay window), not its code; an
/// example of an output format shows a placeholder (`error[MA0NN]`). Test code may
/// name codes.
#[test]
fn comments_name_no_rule_codes_outside_the_rules() {
    let mut named = Vec::new();
    for (rel, text) in sources_outside_rules() {
        for (line, comment) in read_code(&text).comments {
            if spells_a_rule_code(&comment) {
                let source = text.lines().nth(line - 1).unwrap_or_default().trim();
                named.push(format!("src/{}:{line}: {source}", rel.display()));
            }
        }
    }
    assert!(
        named.is_empty(),
        "rule codes named in comments outside src/rules/:\n{}",
        named.join("\n")
    );
}

#[test]
fn the_reader_sees_comments_and_strings() {
    let r = read_code(
        "//! MA001 in a module doc\n\
         let s = \"// not a comment\"; // after code\n\
         let q = '\"'; let t = r#\"a \"quoted\" /* word\"#; /* one */ f();\n\
         /* two,\n   nested /* three */ MA012 */ let u = \"x\n// y\";\n\
         fn f<'a>(x: &'a str) -> char { '\\'' } // MA014\n\
         #[cfg(test)]\nmod tests { // MA002\n}\n",
    );
    let lines: Vec<usize> = r.comments.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, [1, 2, 3, 4, 5, 7]);
    assert_eq!(r.comments[1].1, " after code");
    assert_eq!(r.comments[4].1, "   nested /* three */ MA012 ");
    assert_eq!(
        r.strings,
        ["// not a comment", "a \"quoted\" /* word", "x\n// y"]
    );
    let named: Vec<usize> = r
        .comments
        .iter()
        .filter(|(_, c)| spells_a_rule_code(c))
        .map(|(l, _)| *l)
        .collect();
    assert_eq!(named, [1, 5, 7]);
    assert!(r.code.contains("f();") && !r.code.contains("one"));
}

/// Every name the packs define: crate and module names, type names, the names of
/// calls, macros and builder terminals, of the calls that give keys a TTL
/// (`[[ttls]]`) and of the calls that create or subscribe to topics (`[topics]`).
fn pack_names() -> BTreeSet<String> {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let mut names = BTreeSet::new();
    let mut packs: Vec<_> = std::fs::read_dir(&rules)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    packs.sort();
    let strings = |v: Option<&toml::Value>| -> Vec<String> {
        v.and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    // The entries of an `[[array]]` of tables.
    fn entries<'t>(pack: &'t toml::Table, key: &str) -> impl Iterator<Item = &'t toml::Value> {
        pack.get(key)
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
    }
    let mut events = BTreeSet::new();
    for p in packs {
        let pack: toml::Table = toml::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        names.extend(strings(pack.get("modules")));
        names.extend(strings(pack.get("retry_methods")));
        for t in entries(&pack, "types") {
            names.extend(strings(t.get("names")));
            names.extend(strings(t.get("crates")));
        }
        for c in entries(&pack, "calls") {
            for key in ["methods", "macros", "terminals", "write_terminals"] {
                names.extend(strings(c.get(key)));
            }
            for path in strings(c.get("paths")) {
                names.extend(path.rsplit("::").next().map(str::to_string));
            }
            events.extend(c.get("event").and_then(|e| e.as_str()).map(str::to_string));
        }
        for t in entries(&pack, "ttls") {
            names.extend(strings(t.get("methods")));
        }
        for w in entries(&pack, "arg_words") {
            names.extend(strings(w.get("words")));
        }
        for table in [
            "builder_steps",
            "chain_idents",
            "chain_verbs",
            "macro_kinds",
        ] {
            let keys = pack.get(table).and_then(toml::Value::as_table);
            names.extend(keys.into_iter().flat_map(|t| t.keys().cloned()));
        }
        for list in [
            "wrappers",
            "collections",
            "std_types",
            "text_methods",
            "lock_keys",
            "cache_names",
            "wrapper_suffixes",
            "serializers",
        ] {
            names.extend(strings(pack.get(list)));
        }
        for path in strings(pack.get("text_conversions")) {
            names.extend(path.split("::").map(str::to_string));
        }
        if let Some(d) = pack.get("dsl_tables") {
            names.extend(d.get("item").and_then(|i| i.as_str()).map(str::to_string));
            names.extend(strings(d.get("modules")));
        }
        if let Some(r) = pack.get("results") {
            for list in [
                "ok",
                "err",
                "some",
                "panics",
                "keeps",
                "swallows",
                "error_macros",
            ] {
                names.extend(strings(r.get(list)));
            }
            let tests = r.get("tests").and_then(toml::Value::as_table);
            names.extend(tests.into_iter().flat_map(|t| t.keys().cloned()));
        }
        if let Some(d) = pack.get("durations") {
            names.extend(strings(d.get("types")));
            for table in ["constructors", "typed_constructors", "readers"] {
                let keys = d.get(table).and_then(toml::Value::as_table);
                names.extend(keys.into_iter().flat_map(|t| t.keys().cloned()));
            }
        }
        if let Some(l) = pack.get("lambda") {
            names.extend(strings(l.get("handler_wrappers")));
            names.extend(strings(l.get("event_wrappers")));
            names.extend(strings(l.get("failure_lists")));
            names.extend(strings(l.get("failure_adders")));
        }
        for b in entries(&pack, "batch_events") {
            for list in ["events", "responses", "failure_items"] {
                for path in strings(b.get(list)) {
                    names.extend(path.rsplit("::").next().map(str::to_string));
                }
            }
        }
        if let Some(t) = pack.get("topics") {
            for path in strings(t.get("create")) {
                names.extend(path.split("::").map(str::to_string));
            }
            names.extend(strings(t.get("configure")));
            names.extend(strings(t.get("subscribe")));
        }
    }
    // The model's own vocabulary (`ack`, `commit`, `write`: event names, the
    // `[apis]` keys) is no library's, even where a library's call has that name.
    names.retain(|n| !events.contains(n) && n != "*" && n != "?");
    names
}

/// Every key a pack uses (top-level keys, `[table]` and `[[array]]` names and the
/// keys of their entries) is shown in rules/README.md, so the page stays the whole
/// reference of the packs.
#[test]
fn every_pack_key_is_documented() {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let readme = std::fs::read_to_string(rules.join("README.md")).unwrap();
    let shown = |key: &str| {
        readme.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with(&format!("{key} ="))
                || l.starts_with(&format!("[{key}]"))
                || l.starts_with(&format!("[[{key}]]"))
        })
    };
    let mut missing = BTreeSet::new();
    for entry in std::fs::read_dir(&rules).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let pack: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for (key, value) in &pack {
            if !shown(key) {
                missing.insert(format!("{name}: {key}"));
            }
            let entries: Vec<&toml::Table> = match value {
                toml::Value::Array(a) => a.iter().filter_map(toml::Value::as_table).collect(),
                _ => Vec::new(),
            };
            // Keys of a `[table]` are its own names (methods, prefixes); the
            // entries of an `[[array]]` have documented keys.
            for e in entries {
                for k in e.keys().filter(|k| !shown(k)) {
                    missing.insert(format!("{name}: {key}.{k}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "pack keys not shown in rules/README.md: {missing:#?}"
    );
}

/// Library knowledge lives in `rules/*.toml` (issue 16): a string literal in `src/`
/// that is a pack's crate, type or call name must be listed in
/// `tests/data/library_names_in_rust.txt` with the reason it is no library's name
/// there (an SQL keyword, a Cargo manifest key, the model's own word). A name not
/// listed fails, and so does a listed one that is gone (`MSGAUDIT_BLESS=1` rewrites
/// the list, keeping the reasons; a new entry's reason is then to be written).
#[test]
fn library_names_stay_in_the_packs() {
    let names = pack_names();
    assert!(names.contains("rdkafka") && names.contains("commit_message"));
    let mut found = BTreeSet::new();
    for (rel, text) in sources_outside_rules() {
        for s in strings_of(&text) {
            if names.contains(&s) {
                found.insert(format!("{}\t{s}", rel.display()));
            }
        }
    }
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/library_names_in_rust.txt");
    let listed_text = std::fs::read_to_string(&list).unwrap();
    // Entry (path and name) -> reason.
    let listed: std::collections::BTreeMap<String, String> = listed_text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| match l.rsplit_once('\t') {
            Some((entry, why)) if entry.contains('\t') => (entry.to_string(), why.to_string()),
            _ => (l.to_string(), String::new()),
        })
        .collect();
    // `MSGAUDIT_BLESS=1` rewrites the list (after moving code between files); the
    // diff shows in review whether a name was added.
    if std::env::var_os("MSGAUDIT_BLESS").is_some() {
        let header: String = listed_text
            .lines()
            .take_while(|l| l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        let body: String = found
            .iter()
            .map(|l| format!("{l}\t{}\n", listed.get(l).map_or("", String::as_str)))
            .collect();
        std::fs::write(&list, header + &body).unwrap();
        return;
    }
    let keys: BTreeSet<String> = listed.keys().cloned().collect();
    let new: Vec<&String> = found.difference(&keys).collect();
    let gone: Vec<&String> = keys.difference(&found).collect();
    let unexplained: Vec<&String> = listed
        .iter()
        .filter(|(_, why)| why.trim().is_empty())
        .map(|(entry, _)| entry)
        .collect();
    assert!(
        new.is_empty() && gone.is_empty() && unexplained.is_empty(),
        "library names spelled in src/ (put them in a pack):\n{new:#?}\n\
         listed in tests/data/library_names_in_rust.txt but no longer spelled (remove them):\n{gone:#?}\n\
         listed without the reason they are no library's name:\n{unexplained:#?}"
    );
}

/// Words that name a rule's decision rather than what a path does: a rule's name
/// (`dual-write` as `dual_write` or `DualWrite`) and the vocabulary of exceptions.
fn decision_words() -> Vec<String> {
    let mut words: Vec<String> = ["bookkeeping", "business", "exempt", "compensat"]
        .iter()
        .map(|w| w.to_string())
        .collect();
    for meta in msgaudit::rules::ALL.iter() {
        let parts: Vec<&str> = meta.name.split('-').collect();
        words.push(parts.join("_"));
        words.push(
            parts
                .iter()
                .map(|p| {
                    let mut c = p.chars();
                    c.next()
                        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                        .unwrap_or_default()
                })
                .collect(),
        );
    }
    words
}

/// Identifiers of `src/analysis/` (its code, comments and strings left out) that
/// spell a rule's name or decision, as `file: identifier`.
fn rule_specific_identifiers() -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/analysis");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let words = decision_words();
    let mut found = BTreeSet::new();
    for f in files {
        let code = code_of(&std::fs::read_to_string(&f).unwrap());
        let rel = f.strip_prefix(&dir).unwrap().display().to_string();
        for ident in code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            let lower = ident.to_ascii_lowercase();
            if words
                .iter()
                .any(|w| ident.contains(w.as_str()) || lower.contains(w.as_str()))
            {
                found.insert(format!("{rel}: {ident}"));
            }
        }
    }
    found
}

/// Neutral path facts (issue 41): `src/analysis/` says what a path does (a publish
/// apart from a database change that only deletes rows, tables read, published and
/// marked), and each rule decides in its own file what of it is a defect. So no
/// identifier there spells a rule's name or an exception's vocabulary. The rules not
/// yet moved are listed; the list may only shrink (an entry that no longer occurs
/// fails too, so that it is taken off).
#[test]
fn no_rule_specific_field_in_the_analysis() {
    // The review inventory: its concern of ack-on-failure and its auto-ack settings.
    const NOT_YET_MOVED: &[&str] = &[
        "inventory.rs: AutoAck",
        "inventory.rs: auto_ack",
        "inventory/infer.rs: AckOnFailure",
        "inventory/infer.rs: auto_ack",
    ];
    let found = rule_specific_identifiers();
    let allowed: BTreeSet<String> = NOT_YET_MOVED.iter().map(|s| s.to_string()).collect();
    let new: Vec<&String> = found.difference(&allowed).collect();
    let gone: Vec<&String> = allowed.difference(&found).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "rule-specific identifiers in src/analysis/: {new:?}; listed but gone: {gone:?}"
    );
}

/// The most lines a production function may span (issue 41): a longer one is split by
/// responsibility.
const MAX_FUNCTION_LINES: usize = 150;

/// The functions of `src/` outside test code, as (path below `src/`, name, lines from
/// the `fn` line to its closing brace). Comments and strings are blanked first, so
/// their braces do not count; a bodiless declaration (`fn f();`) is none.
fn function_lengths() -> Vec<(String, String, usize)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        let code = code_of(&std::fs::read_to_string(&f).unwrap());
        let lines: Vec<&str> = code.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(name) = declared_fn(line) else {
                continue;
            };
            let mut depth = 0usize;
            let mut opened = false;
            let mut end = None;
            'scan: for (j, l) in lines.iter().enumerate().skip(i) {
                for ch in l.chars() {
                    match ch {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth = depth.saturating_sub(1),
                        ';' if !opened => break 'scan,
                        _ => {}
                    }
                    if opened && depth == 0 {
                        end = Some(j);
                        break 'scan;
                    }
                }
            }
            if let Some(j) = end {
                out.push((rel.clone(), name, j - i + 1));
            }
        }
    }
    out
}

/// The name of the function a line declares (`pub(crate) async fn name<..>(`).
fn declared_fn(line: &str) -> Option<String> {
    let mut rest = line.trim_start();
    if let Some(r) = rest.strip_prefix("pub") {
        rest = r.trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
    }
    for word in ["const ", "async ", "unsafe "] {
        rest = rest.strip_prefix(word).unwrap_or(rest).trim_start();
    }
    let rest = rest.strip_prefix("fn ")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// No production function spans more than [`MAX_FUNCTION_LINES`] lines, except those
/// listed in `tests/data/long_functions.txt` (still to split). A listed function that
/// is now short enough, or gone, must leave the list, so that it only shrinks.
#[test]
fn functions_stay_short() {
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/long_functions.txt");
    let listed: BTreeSet<String> = std::fs::read_to_string(&list)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut parts = l.split('\t');
            format!("{}\t{}", parts.next().unwrap(), parts.next().unwrap_or(""))
        })
        .collect();
    let long: BTreeMap<String, usize> = function_lengths()
        .into_iter()
        .filter(|(_, _, n)| *n > MAX_FUNCTION_LINES)
        .map(|(path, name, n)| (format!("{path}\t{name}"), n))
        .collect();
    let new: Vec<String> = long
        .iter()
        .filter(|(k, _)| !listed.contains(*k))
        .map(|(k, n)| format!("{k}\t{n}"))
        .collect();
    let done: Vec<&String> = listed.iter().filter(|k| !long.contains_key(*k)).collect();
    assert!(
        new.is_empty() && done.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (split them by responsibility):\n{new:#?}\n\
         listed in tests/data/long_functions.txt but no longer over the limit (remove them):\n{done:#?}"
    );
}

#[test]
fn function_lengths_are_measured_from_code() {
    assert_eq!(
        declared_fn("    pub(super) async fn go<'a>("),
        Some("go".into())
    );
    assert_eq!(declared_fn("fn f() {}"), Some("f".into()));
    assert_eq!(declared_fn("let fn_name = 1;"), None);
    let lengths = function_lengths();
    // `fn analyze` spans a known number of lines and is found with it.
    assert!(lengths
        .iter()
        .any(|(p, n, l)| p.ends_with("driver/mod.rs") && n == "analyze" && *l > 10));
}
