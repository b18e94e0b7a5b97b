//! msgaudit's own pipeline description: what a pipeline's stages consume, how far back
//! their sources can replay, and how long their dedup stores keep records (the dedup
//! window against the replay window). It is a file named `msgaudit-pipeline.yml` (or
//! `.yaml`), or the top-level `msgaudit:` key of any YAML document:
//!
//! ```yaml
//! version: 1
//! name: orders
//! topics:
//!   orders:
//!     replay_window: 7d        # how far back consumers of `orders` can be replayed
//!   payments: 3d               # shorthand for `replay_window`
//! stages:
//!   - name: billing
//!     path: services/billing   # the stage's code, relative to this file
//!     consumes: [orders]
//!     produces: [invoices]
//!     guarantee: effectively-once
//!     replay_window: 14d       # a window for this stage's sources as a whole
//!     dedup:
//!       store: postgres
//!       table: processed_events
//!       retention: 1d
//! ```
//!
//! The schema is strict: unknown keys, values of the wrong shape and durations that
//! do not parse are input errors with their position.

use std::path::Path;
use std::sync::Arc;

use crate::support::files::normalize_lexically;

use super::kafka_props;
use super::tree::{Node, Value};
use crate::diagnostic::InputError;
use crate::ir::{DedupRetention, Loc, PipelineStage, ReplayWindow};
use crate::support::duration;

/// What one pipeline description declares.
#[derive(Debug, Default)]
pub struct Description {
    pub stages: Vec<PipelineStage>,
    pub windows: Vec<ReplayWindow>,
    pub errors: Vec<InputError>,
}

/// Whether the file is a pipeline description by its name.
pub fn is_pipeline_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(name, "msgaudit-pipeline.yml" | "msgaudit-pipeline.yaml")
}

/// Whether a YAML file may hold a pipeline description (parse it).
pub fn is_relevant(path: &str, text: &str) -> bool {
    is_pipeline_file(path) || text.contains("msgaudit:")
}

const TOP_KEYS: &[&str] = &["version", "name", "description", "topics", "stages"];
const TOPIC_KEYS: &[&str] = &["replay_window", "description"];
const STAGE_KEYS: &[&str] = &[
    "name",
    "description",
    "path",
    "consumes",
    "produces",
    "guarantee",
    "replay_window",
    "dedup",
];
const DEDUP_KEYS: &[&str] = &["store", "table", "key", "retention"];
const GUARANTEES: &[&str] = &[
    "at-most-once",
    "at-least-once",
    "effectively-once",
    "exactly-once",
];

struct Cx<'a> {
    path: Arc<str>,
    /// Directory of the file (display path), for stage paths.
    dir: &'a str,
    out: Description,
}

impl Cx<'_> {
    fn error(&mut self, at: &Node, message: String) {
        self.out.errors.push(InputError {
            path: self.path.to_string(),
            line: Some(at.span.line),
            column: Some(at.span.column),
            message: format!("pipeline description: {message}"),
        });
    }

    fn loc(&self, n: &Node) -> Loc {
        Loc {
            path: self.path.clone(),
            span: n.span,
        }
    }

    /// Reports keys outside `allowed`; `what` names the map in the message.
    fn keys(&mut self, map: &Node, allowed: &[&str], what: &str) {
        for e in map.entries() {
            let k = e.key.as_str().unwrap_or("");
            if !allowed.contains(&k) {
                self.error(
                    &e.key,
                    format!(
                        "unknown key `{k}` in {what} (expected one of: {})",
                        allowed.join(", ")
                    ),
                );
            }
        }
    }

    fn map<'n>(&mut self, n: &'n Node, what: &str) -> Option<&'n Node> {
        if n.is_map() {
            Some(n)
        } else {
            self.error(n, format!("{what} must be a map"));
            None
        }
    }

    fn string(&mut self, n: &Node, what: &str) -> Option<String> {
        match n.as_str() {
            Some(s) => Some(s.to_string()),
            None => {
                self.error(n, format!("{what} must be a string"));
                None
            }
        }
    }

    /// A string or a list of strings.
    fn strings(&mut self, n: &Node, what: &str) -> Vec<String> {
        match &n.value {
            Value::Scalar(s) => vec![s.clone()],
            Value::Seq(items) => items
                .iter()
                .filter_map(|i| self.string(i, &format!("each entry of {what}")))
                .collect(),
            _ => {
                self.error(n, format!("{what} must be a string or a list of strings"));
                Vec::new()
            }
        }
    }

    fn duration(&mut self, n: &Node, what: &str) -> Option<u64> {
        let Some(text) = kafka_props::literal(n) else {
            self.error(n, format!("{what} must be a duration such as `7d`"));
            return None;
        };
        let d = duration::parse(&text, None).filter(|_| !text.trim_start().starts_with('-'));
        if d.is_none() {
            self.error(
                n,
                format!(
                    "{what}: `{text}` is not a duration (write it as `7d`, `168h`, `P7D` or `7 days`)"
                ),
            );
        }
        d
    }

    /// `services/billing` relative to the description's directory, as a display path.
    fn stage_path(&self, rel: &str) -> String {
        // A stage's path is relative to the description's directory, spelled as the
        // walk spells it: an absolute directory keeps its root, so that the stage
        // matches the crates under it however the PATH argument was written.
        let joined = Path::new(self.dir).join(rel.trim_start_matches('/'));
        let normal = normalize_lexically(&joined);
        let text = normal.to_string_lossy();
        text.strip_prefix("./").unwrap_or(&text).to_string()
    }
}

/// The pipeline description in `doc`, if it is one: the whole document of a
/// `msgaudit-pipeline.yml`, or the value of a top-level `msgaudit:` key.
pub fn lower(doc: &Node, path: &str, dir: &str, out: &mut Description) {
    let body = if is_pipeline_file(path) {
        doc
    } else {
        match doc.get("msgaudit") {
            Some(b) => b,
            None => return,
        }
    };
    let mut cx = Cx {
        path: Arc::from(path),
        dir,
        out: Description::default(),
    };
    describe(&mut cx, body);
    out.stages.extend(cx.out.stages);
    out.windows.extend(cx.out.windows);
    out.errors.extend(cx.out.errors);
}

fn describe(cx: &mut Cx, body: &Node) {
    let Some(body) = cx.map(body, "the pipeline description") else {
        return;
    };
    cx.keys(body, TOP_KEYS, "the pipeline description");
    if let Some(v) = body.get("version") {
        if v.as_str() != Some("1") {
            cx.error(v, "`version` must be 1".into());
        }
    }
    if let Some(topics) = body.get("topics") {
        if let Some(topics) = cx.map(topics, "`topics`") {
            for e in topics.entries() {
                let Some(name) = e.key.as_str() else { continue };
                let window_node = if e.value.is_map() {
                    cx.keys(
                        &e.value,
                        TOPIC_KEYS,
                        &format!("topic {}", crate::diagnostic::quoted(name)),
                    );
                    e.value.get("replay_window")
                } else {
                    Some(&e.value)
                };
                if let Some(w) = window_node {
                    if let Some(millis) = cx.duration(
                        w,
                        &format!(
                            "the replay window of topic {}",
                            crate::diagnostic::quoted(name)
                        ),
                    ) {
                        let loc = cx.loc(w);
                        cx.out.windows.push(ReplayWindow {
                            topic: Some(name.to_string()),
                            millis,
                            loc,
                            source: "the pipeline description".into(),
                        });
                    }
                }
            }
        }
    }
    if let Some(stages) = body.get("stages") {
        if !matches!(stages.value, Value::Seq(_)) {
            cx.error(stages, "`stages` must be a list".into());
            return;
        }
        for s in stages.items() {
            stage(cx, s);
        }
    }
}

fn stage(cx: &mut Cx, s: &Node) {
    let Some(s) = cx.map(s, "a stage") else {
        return;
    };
    cx.keys(s, STAGE_KEYS, "a stage");
    let name = match s.get("name") {
        Some(n) => cx.string(n, "a stage's `name`").unwrap_or_default(),
        None => {
            cx.error(s, "a stage needs a `name`".into());
            String::new()
        }
    };
    let paths = s
        .get("path")
        .map(|p| cx.strings(p, "`path`"))
        .unwrap_or_default()
        .iter()
        .map(|p| cx.stage_path(p))
        .collect();
    let consumes = s
        .get("consumes")
        .map(|p| cx.strings(p, "`consumes`"))
        .unwrap_or_default();
    if let Some(p) = s.get("produces") {
        cx.strings(p, "`produces`");
    }
    if let Some(g) = s.get("guarantee") {
        if let Some(v) = cx.string(g, "`guarantee`") {
            if !GUARANTEES.contains(&v.as_str()) {
                cx.error(
                    g,
                    format!(
                        "`guarantee` must be one of {}, not `{v}`",
                        GUARANTEES.join(", ")
                    ),
                );
            }
        }
    }
    let replay_window = s.get("replay_window").and_then(|w| {
        let millis = cx.duration(
            w,
            &format!(
                "the replay window of stage {}",
                crate::diagnostic::quoted(&name)
            ),
        )?;
        Some(ReplayWindow {
            topic: None,
            millis,
            loc: cx.loc(w),
            source: "the pipeline description".into(),
        })
    });
    let dedup = s.get("dedup").and_then(|d| {
        let d = cx.map(d, "`dedup`")?;
        cx.keys(d, DEDUP_KEYS, "`dedup`");
        for k in ["store", "table", "key"] {
            if let Some(v) = d.get(k) {
                cx.string(v, &format!("`dedup.{k}`"));
            }
        }
        let r = d.get("retention")?;
        let millis = cx.duration(
            r,
            &format!(
                "the dedup retention of stage {}",
                crate::diagnostic::quoted(&name)
            ),
        )?;
        let store = d
            .get("table")
            .or_else(|| d.get("store"))
            .and_then(Node::as_str)
            .map(|t| {
                format!(
                    "the dedup store {} of stage {}",
                    crate::diagnostic::quoted(t),
                    crate::diagnostic::quoted(&name)
                )
            })
            .unwrap_or_else(|| {
                format!(
                    "the dedup store of stage {}",
                    crate::diagnostic::quoted(&name)
                )
            });
        let write = d
            .entry("retention")
            .map(|e| cx.loc(&e.key))
            .unwrap_or_else(|| cx.loc(r));
        Some(DedupRetention {
            millis,
            loc: cx.loc(r),
            write,
            store,
        })
    });
    cx.out.stages.push(PipelineStage {
        name,
        paths,
        consumes,
        replay_window,
        dedup,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(path: &str, text: &str) -> Description {
        let docs = super::super::tree::parse(text).unwrap();
        let mut out = Description::default();
        for d in &docs {
            lower(d, path, "deploy", &mut out);
        }
        out
    }

    #[test]
    fn a_full_description() {
        let d = run(
            "deploy/msgaudit-pipeline.yml",
            "version: 1\ntopics:\n  orders:\n    replay_window: 7d\n  payments: P3D\nstages:\n  - name: billing\n    path: ../services/billing\n    consumes: orders\n    guarantee: effectively-once\n    dedup:\n      table: processed_events\n      retention: 1 day\n",
        );
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(d.windows.len(), 2);
        let s = &d.stages[0];
        assert_eq!(s.paths, vec!["services/billing"]);
        assert_eq!(s.consumes, vec!["orders"]);
        assert_eq!(s.dedup.as_ref().unwrap().millis, duration::DAY);
    }

    #[test]
    fn an_absolute_directory_keeps_its_root() {
        let text = "version: 1\nstages:\n  - name: billing\n    path: ../services/billing\n";
        let docs = super::super::tree::parse(text).unwrap();
        let mut out = Description::default();
        lower(&docs[0], "msgaudit-pipeline.yml", "/repo/deploy", &mut out);
        assert_eq!(out.stages[0].paths, vec!["/repo/services/billing"]);
        let mut out = Description::default();
        lower(&docs[0], "msgaudit-pipeline.yml", "./deploy", &mut out);
        assert_eq!(out.stages[0].paths, vec!["services/billing"]);
    }

    #[test]
    fn errors_have_positions() {
        let d = run(
            "msgaudit-pipeline.yaml",
            "topics:\n  orders:\n    replay_windw: 7d\nstages:\n  - name: a\n    guarantee: twice\n    dedup:\n      retention: 2 dayz\n",
        );
        let msgs: Vec<(Option<u32>, &str)> = d
            .errors
            .iter()
            .map(|e| (e.line, e.message.as_str()))
            .collect();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert_eq!(msgs[0].0, Some(3));
        assert!(msgs[0].1.contains("unknown key `replay_windw`"));
        assert_eq!(msgs[1].0, Some(6));
        assert_eq!(msgs[2].0, Some(8));
        assert!(msgs[2].1.contains("`2 dayz` is not a duration"));
    }

    #[test]
    fn embedded_under_a_msgaudit_key() {
        let d = run(
            "deploy/values.yaml",
            "msgaudit:\n  topics:\n    orders: 7d\nother: 1\n",
        );
        assert!(d.errors.is_empty());
        assert_eq!(d.windows.len(), 1);
        assert!(run("deploy/values.yaml", "topics:\n  orders: 7d\n")
            .windows
            .is_empty());
    }
}
