//! Which files of a crate the prefilter parses first (docs/what-is-analyzed.md
//! "Scope and skipping"): those naming an API token. A library type name other
//! crates share (async-nats' `Batch`, `Stream`; `Context`) has a role only through
//! a path into its library, so it makes a file worth parsing only in a crate that
//! may import that library: one whose manifest, or the manifest of a dependency of
//! it in the tree, names the library. A crate without a manifest may import anything.

use std::collections::{BTreeMap, BTreeSet};

use aho_corasick::AhoCorasick;

use crate::apis::Apis;

/// The seed criterion of every crate.
pub(super) struct Seeds {
    /// The API tokens and module names, the shared type names left out.
    open: AhoCorasick,
    /// The shared type names, by pattern index: each with its libraries.
    shared: AhoCorasick,
    shared_crates: Vec<Vec<String>>,
}

/// What one crate may import: `None` for anything.
pub(super) type Imports = Option<BTreeSet<String>>;

impl Seeds {
    pub fn new(apis: &Apis) -> Seeds {
        let kept = |t: &&String| !apis.common.iter().any(|c| c == *t) && t.len() >= 4;
        let mut open: Vec<&str> = apis
            .tokens
            .iter()
            .filter(kept)
            .filter(|t| !apis.shared_types.contains_key(*t))
            .map(String::as_str)
            .collect();
        open.extend(apis.modules.iter().map(String::as_str));
        let mut shared: Vec<(&String, &Vec<String>)> =
            apis.shared_types.iter().filter(|(t, _)| kept(t)).collect();
        shared.sort();
        let build = |pats: Vec<&str>| {
            AhoCorasick::builder()
                .kind(Some(aho_corasick::AhoCorasickKind::DFA))
                .build(pats)
                .expect("prefilter patterns are valid")
        };
        Seeds {
            open: build(open),
            shared: build(shared.iter().map(|(t, _)| t.as_str()).collect()),
            shared_crates: shared.into_iter().map(|(_, c)| c.clone()).collect(),
        }
    }

    /// Whether `text`, a file of a crate that may import `imports`, names an API.
    pub fn names_api(&self, text: &str, imports: &Imports) -> bool {
        if self.open.is_match(text) {
            return true;
        }
        let Some(imports) = imports else {
            return self.shared.is_match(text);
        };
        self.shared.find_overlapping_iter(text).any(|m| {
            self.shared_crates[m.pattern().as_usize()]
                .iter()
                .any(|c| imports.contains(c))
        })
    }
}

/// What the crate `key` may import: the dependencies its manifest names and, to
/// the fixpoint, those of its dependencies in the tree (a re-export passes a
/// library's type on); `None` when one of them has no manifest read.
pub(super) fn imports(
    key: &str,
    uses: &BTreeMap<String, BTreeSet<String>>,
    deps: &BTreeMap<String, Vec<(String, String)>>,
) -> Imports {
    let mut out = BTreeSet::new();
    let mut seen = BTreeSet::from([key]);
    let mut queue = vec![key];
    while let Some(k) = queue.pop() {
        out.extend(uses.get(k)?.iter().cloned());
        for (_, d) in deps.get(k).into_iter().flatten() {
            if seen.insert(d.as_str()) {
                queue.push(d);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn imports_follow_dependencies_in_the_tree() {
        let uses = map(&[
            ("app", &["tracing", "core"]),
            ("core", &["async_nats"]),
            ("loose", &[]),
        ]);
        let deps = BTreeMap::from([(
            "app".to_string(),
            vec![("core".to_string(), "core".to_string())],
        )]);
        let app = imports("app", &uses, &deps).unwrap();
        assert!(app.contains("async_nats") && app.contains("tracing"));
        assert_eq!(imports("loose", &uses, &deps), Some(BTreeSet::new()));
        // No manifest: anything.
        assert_eq!(imports("src/orphan.rs", &uses, &deps), None);
    }

    #[test]
    fn a_shared_type_name_counts_only_where_its_library_may_be_imported() {
        let apis = crate::apis::Apis::builtin();
        let (name, crates) = apis
            .shared_types
            .iter()
            .filter(|(n, _)| n.len() >= 4 && !apis.common.contains(n))
            .min()
            .expect("a shared type name");
        let seeds = Seeds::new(&apis);
        let text = format!("enum Kind {{ {name}, Single }}");
        assert!(!seeds.names_api(&text, &Some(BTreeSet::from(["tracing".to_string()]))));
        assert!(seeds.names_api(&text, &Some(BTreeSet::from([crates[0].clone()]))));
        assert!(seeds.names_api(&text, &None));
        // A token of a method is open everywhere.
        let method = apis
            .methods
            .keys()
            .filter(|m| m.len() >= 6 && !apis.common.contains(m))
            .min()
            .unwrap();
        assert!(seeds.names_api(&format!("x.{method}()"), &Some(BTreeSet::new())));
    }
}
