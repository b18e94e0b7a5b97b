//! The pack test (issue 42): every pack under `rules/` has at least one bad and one ok
//! fixture per role it declares.
//!
//! A pack's roles are derived from its TOML, by the events of its `[[calls]]`:
//! `receive`, `ack`, `nack`, `begin` (also `tx_closure`, `broker_begin`), `commit`
//! (also `broker_commit`, `broker_offsets`), `rollback` (also `broker_abort`),
//! `write`, `publish`, `claim` (a `key_claim` write or a `claim_result` read), `id`
//! (`idgen`), `effect` (`external`), and `handler` for a pack with a `[worker]` or a
//! `[lambda]` table (the handler's return is the ack).
//!
//! A fixture (a file directly in a `fixtures/<folder>/`, or a sub-folder as a whole,
//! as `tests/fixtures.rs` runs them) exercises a pack when its text names one of the
//! pack's crates or modules as a path (`use fred::…`, `fred::Client`), or every
//! fixture for a pack that names none (`runtime`); it exercises one of the pack's roles
//! when it also calls a method, path or macro of that role (`.xack(`, `run(`,
//! `query!`). It is bad when it carries a `//~` mark, ok when it carries none. This is
//! textual, an approximation: a bad fixture exercising a role need not be bad
//! *because of* that role.
//!
//! The gaps not filled yet are listed in `tests/data/pack_fixture_gaps.txt`, a line
//! `pack<TAB>role<TAB>bad|ok` each: the test fails for a gap not listed, and for a
//! listed gap that a fixture now fills (remove its line). `MSGAUDIT_BLESS=1` rewrites
//! the list to the gaps found.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A pack's role -> the call names that exercise it.
type Roles = BTreeMap<&'static str, BTreeSet<Call>>;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Call {
    Method(String),
    Path(String),
    Macro(String),
}

struct Pack {
    library: String,
    /// Crate and module names whose path marks a file as naming the pack.
    names: BTreeSet<String>,
    roles: Roles,
}

fn strings(v: Option<&toml::Value>) -> Vec<String> {
    v.and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn entries<'t>(pack: &'t toml::Table, key: &str) -> impl Iterator<Item = &'t toml::Value> {
    pack.get(key)
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
}

/// The role a call declares, from its event (and its `sql` kind for claims).
fn role_of(call: &toml::Value) -> Option<&'static str> {
    let event = call.get("event")?.as_str()?;
    let sql = call.get("sql").and_then(toml::Value::as_str);
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

fn last_segment(path: &str) -> String {
    path.rsplit("::").next().unwrap_or(path).to_string()
}

fn add_calls(calls: &mut BTreeSet<Call>, c: &toml::Value) {
    calls.extend(strings(c.get("methods")).into_iter().map(Call::Method));
    calls.extend(
        strings(c.get("paths"))
            .iter()
            .map(|p| Call::Path(last_segment(p))),
    );
    calls.extend(strings(c.get("macros")).into_iter().map(Call::Macro));
}

fn packs() -> Vec<Pack> {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let mut files: Vec<PathBuf> = fs::read_dir(&rules)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let t: toml::Table = toml::from_str(&fs::read_to_string(p).unwrap()).unwrap();
            let library = t["library"].as_str().unwrap().to_string();
            let mut names: BTreeSet<String> = strings(t.get("modules")).into_iter().collect();
            for ty in entries(&t, "types") {
                names.extend(strings(ty.get("crates")));
            }
            let mut roles = Roles::new();
            // A key store whose typed options or argument words make a `SET` a claim
            // (`NX`): its `key_set` calls claim too.
            let nx = entries(&t, "arg_words")
                .any(|w| w.get("means").and_then(toml::Value::as_str) == Some("only_if_absent"));
            for c in entries(&t, "calls") {
                if nx && c.get("sql").and_then(toml::Value::as_str) == Some("key_set") {
                    add_calls(roles.entry("claim").or_default(), c);
                }
                let Some(role) = role_of(c) else { continue };
                // A builder's event happens at its terminal, but the call that starts
                // it is what names the role.
                add_calls(roles.entry(role).or_default(), c);
            }
            if let Some(w) = t.get("worker") {
                let calls = roles.entry("handler").or_default();
                calls.extend(
                    strings(w.get("handler_methods"))
                        .into_iter()
                        .map(Call::Method),
                );
            }
            if let Some(l) = t.get("lambda") {
                let calls = roles.entry("handler").or_default();
                calls.extend(
                    strings(l.get("runs"))
                        .iter()
                        .map(|p| Call::Path(last_segment(p))),
                );
            }
            Pack {
                library,
                names,
                roles,
            }
        })
        .collect()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `word` occurs in `text` not inside a longer identifier, followed by `after`
/// (after spaces) and, for `before`, preceded by it.
fn occurs(text: &str, word: &str, before: Option<char>, after: &str) -> bool {
    let mut from = 0;
    while let Some(i) = text[from..].find(word) {
        let at = from + i;
        from = at + word.len();
        let prev = text[..at].chars().next_back();
        if prev.is_some_and(is_ident) {
            continue;
        }
        if let Some(b) = before {
            if !text[..at].trim_end().ends_with(b) {
                continue;
            }
        }
        let rest = &text[from..];
        if rest.chars().next().is_some_and(is_ident) {
            continue;
        }
        // A turbofish between the name and its arguments (`collection::<T>(`).
        let rest = rest.trim_start();
        let rest = match rest.strip_prefix("::<") {
            Some(r) => r.find('>').map_or(r, |e| &r[e + 1..]),
            None => rest,
        };
        if rest.trim_start().starts_with(after) {
            return true;
        }
    }
    false
}

/// The text names one of the pack's crates as a path's start (`fred::Client`) or in a
/// `use` (`use paho_mqtt as mqtt;`).
fn names_pack(text: &str, pack: &Pack) -> bool {
    pack.names.is_empty()
        || pack.names.iter().any(|n| {
            occurs(text, n, None, "::")
                || text.lines().any(|l| {
                    let l = l.trim_start();
                    let l = l.strip_prefix("pub ").unwrap_or(l);
                    l.strip_prefix("use ").is_some_and(|r| {
                        let r = r.trim_start().strip_prefix("::").unwrap_or(r);
                        r.strip_prefix(n.as_str())
                            .is_some_and(|rest| !rest.starts_with(is_ident))
                    })
                })
        })
}

fn calls(text: &str, call: &Call) -> bool {
    match call {
        Call::Method(m) => occurs(text, m, Some('.'), "("),
        Call::Path(p) => occurs(text, p, None, "("),
        Call::Macro(m) => occurs(text, m, None, "!"),
    }
}

/// Every fixture, as `tests/fixtures.rs` runs them: (path, text of its `.rs` files).
fn fixtures() -> Vec<(String, String)> {
    fn rs_under(p: &Path, out: &mut String) {
        if p.is_dir() {
            let mut entries: Vec<_> = fs::read_dir(p)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect();
            entries.sort();
            for e in entries {
                rs_under(&e, out);
            }
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push_str(&fs::read_to_string(p).unwrap());
            out.push('\n');
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut out = Vec::new();
    let mut dirs: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for d in dirs.into_iter().filter(|d| d.is_dir()) {
        let mut cases: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        cases.sort();
        for c in cases {
            if !(c.is_dir() || c.extension().is_some_and(|e| e == "rs")) {
                continue;
            }
            let mut text = String::new();
            rs_under(&c, &mut text);
            if !text.is_empty() {
                let rel = c
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, text));
            }
        }
    }
    out
}

fn has_mark(text: &str) -> bool {
    text.lines().any(|l| {
        l.match_indices("//~").any(|(i, _)| {
            l[i + 3..]
                .trim_start_matches('^')
                .trim_start()
                .starts_with("MA")
        })
    })
}

/// (pack, role, "bad" | "ok") for each role of each pack no fixture of that kind
/// exercises.
fn gaps() -> BTreeSet<String> {
    let fixtures = fixtures();
    let mut gaps = BTreeSet::new();
    for pack in packs() {
        let named: Vec<&(String, String)> = fixtures
            .iter()
            .filter(|(_, text)| names_pack(text, &pack))
            .collect();
        for (role, role_calls) in &pack.roles {
            let (mut bad, mut ok) = (false, false);
            for (_, text) in &named {
                if role_calls.iter().any(|c| calls(text, c)) {
                    if has_mark(text) {
                        bad = true;
                    } else {
                        ok = true;
                    }
                }
            }
            for (kind, found) in [("bad", bad), ("ok", ok)] {
                if !found {
                    gaps.insert(format!("{}\t{role}\t{kind}", pack.library));
                }
            }
        }
    }
    gaps
}

#[test]
fn roles_are_derived_from_the_packs() {
    let packs = packs();
    let by_name = |n: &str| packs.iter().find(|p| p.library == n).unwrap();
    let fred = by_name("fred");
    assert!(fred.names.contains("fred"));
    for role in ["receive", "ack", "publish", "claim", "effect"] {
        assert!(fred.roles.contains_key(role), "fred {role}");
    }
    assert!(fred.roles["ack"].contains(&Call::Method("xack".into())));
    assert!(by_name("apalis").roles.contains_key("handler"));
    assert!(by_name("mongodb").roles.contains_key("begin"));
    assert!(by_name("sqlx").roles.contains_key("write"));
    assert!(
        by_name("kafka").names.contains("kafka"),
        "a pack's type crates name it"
    );
    assert!(by_name("runtime").roles.contains_key("id"));
}

#[test]
fn fixtures_are_tied_to_packs_by_the_names_they_use() {
    let packs = packs();
    let fred = packs.iter().find(|p| p.library == "fred").unwrap();
    assert!(names_pack("use fred::prelude::*;", fred));
    assert!(names_pack("let c: fred::clients::Client;", fred));
    assert!(!names_pack("let fred = 1; // fred", fred));
    let paho = packs.iter().find(|p| p.library == "paho-mqtt").unwrap();
    assert!(names_pack("use paho_mqtt as mqtt;", paho));
    assert!(!names_pack("use paho_mqtt_x as mqtt;", paho));
    let redis = packs.iter().find(|p| p.library == "redis").unwrap();
    assert!(redis.roles["claim"].contains(&Call::Path("cmd".into())));
    assert!(calls("conn.xack(&k, &g, id)", &Call::Method("xack".into())));
    assert!(calls(
        "db . collection::<Order>(\"o\")",
        &Call::Method("collection".into())
    ));
    assert!(!calls("conn.xack_all(&k)", &Call::Method("xack".into())));
    assert!(!calls("xack(&k)", &Call::Method("xack".into())));
    assert!(calls("sqlx::query!(\"x\")", &Call::Macro("query".into())));
    assert!(has_mark("x(); //~ MA011") && has_mark("//~^ MA001"));
    assert!(!has_mark("// no marks //~ here"));
}

#[test]
fn every_pack_role_has_a_bad_and_an_ok_fixture() {
    let found = gaps();
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pack_fixture_gaps.txt");
    let text = fs::read_to_string(&list).unwrap_or_default();
    if std::env::var_os("MSGAUDIT_BLESS").is_some() {
        let header: String = text
            .lines()
            .take_while(|l| l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        let body: String = found.iter().map(|g| format!("{g}\n")).collect();
        fs::write(&list, header + &body).unwrap();
        return;
    }
    let listed: BTreeSet<String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    let new: Vec<&String> = found.difference(&listed).collect();
    let filled: Vec<&String> = listed.difference(&found).collect();
    assert!(
        new.is_empty() && filled.is_empty(),
        "pack roles with no bad or no ok fixture (write one; pack, role, kind):\n{new:#?}\n\
         listed in tests/data/pack_fixture_gaps.txt but filled now (remove the line):\n{filled:#?}"
    );
}

/// `msgaudit rules --packs` lists every pack with the delivery roles it declares,
/// the same roles this test derives from the TOML, in text and in JSON.
#[test]
fn rules_packs_lists_every_client_and_its_roles() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_msgaudit"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let packs = packs();
    let text = run(&["rules", "--packs"]);
    assert!(text.starts_with("PACK "), "{text}");
    for pack in &packs {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(pack.library.as_str()))
            .unwrap_or_else(|| panic!("{} not listed:\n{text}", pack.library));
        for role in pack.roles.keys() {
            assert!(
                line.contains(role),
                "{}: {role} missing in {line}",
                pack.library
            );
        }
    }
    let json: serde_json::Value =
        serde_json::from_str(&run(&["rules", "--packs", "--format", "json"])).unwrap();
    let listed = json.as_array().unwrap();
    assert_eq!(listed.len(), packs.len());
    for pack in &packs {
        let entry = listed
            .iter()
            .find(|e| e["library"] == pack.library.as_str())
            .unwrap_or_else(|| panic!("{} not in the JSON", pack.library));
        let roles: BTreeSet<&str> = entry["roles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        let derived: BTreeSet<&str> = pack.roles.keys().copied().collect();
        assert_eq!(roles, derived, "{}", pack.library);
    }
    let fred = listed.iter().find(|e| e["library"] == "fred").unwrap();
    assert_eq!(fred["broker"], "redis");
    assert!(fred["type_roles"]
        .as_array()
        .unwrap()
        .contains(&"fred.client".into()));
    let sqlx = listed.iter().find(|e| e["library"] == "sqlx").unwrap();
    assert!(sqlx["broker"].is_null());
}
