use std::collections::BTreeMap;
use std::path::Path;

use super::declare_rule;
use super::pairs::label;
use crate::analysis::kafka_clients::is_consumer;
use crate::diagnostic::{quoted, Finding, Label};
use crate::ir::{DedupRetention, KafkaClient, Loc, PipelineStage, ReplayWindow, RetentionFacts};
use crate::support::duration::{human, UNLIMITED};
use crate::support::files::normalize_lexically;

declare_rule! {
    /// ## What it does
    ///
    /// Compares how long a dedup store keeps its records with how far back the source
    /// of its messages can replay, and reports a retention that is shorter.
    ///
    /// The dedup retention is read from the code: a cleanup statement on a dedup table
    /// (`DELETE FROM processed_events WHERE processed_at < now() - interval '2 days'`,
    /// MySQL `INTERVAL 2 DAY`, SQLite `datetime('now', '-2 days')`, `$1::interval`
    /// with the value bound to it), the TTL of a Redis dedup claim (`SET key 1 NX EX
    /// 86400`, `set_options` with `SetExpiry::EX`, `set_nx` then `expire`), a constant
    /// bound into either (`const DEDUP_TTL: Duration = Duration::from_secs(86_400)`),
    /// or the `dedup.retention` of a stage in the msgaudit pipeline description.
    /// SQLite and PostgreSQL epoch seconds count too (`unixepoch() - 86400`). A table
    /// whose name says nothing is a dedup store when the package claims into it (a
    /// conflict-ignoring insert keyed by the message, tested before an effect).
    ///
    /// The replay window is what the tree states: the topic's `retention.ms` (Strimzi
    /// `KafkaTopic`, topic configuration YAML, rdkafka `NewTopic::set`), or a
    /// `replay_window` declared in the pipeline description (`msgaudit-pipeline.yml`).
    /// A dedup store belongs to the consumers of its crate (`subscribe(&["orders"])`,
    /// a consumer configured in YAML inside the crate) or to the pipeline stage whose
    /// `path` holds it; with several topics, the longest window counts.
    ///
    /// ## Why is this bad?
    ///
    /// Dedup makes at-least-once delivery harmless only while the record of the first
    /// delivery still exists. The broker keeps messages for the topic's retention, and
    /// anything in that window can come back: a consumer group reset to an earlier
    /// offset, a partition reassignment after a long outage, a replay to rebuild a
    /// downstream store. A redelivery after the dedup record expired is not recognised
    /// as a duplicate, and its effect is **applied twice**.
    ///
    /// Boundary broken: dedup retention must cover replay.
    ///
    /// ## Example
    ///
    /// ```rust
    /// // the topic `orders` keeps records 7 days (retention.ms: 604800000)
    /// sqlx::query("DELETE FROM processed_events WHERE processed_at < now() - interval '1 day'")
    ///     .execute(&pool)
    ///     .await?;
    /// ```
    ///
    /// Use instead: keep dedup records at least as long as the replay window,
    ///
    /// ```rust
    /// sqlx::query("DELETE FROM processed_events WHERE processed_at < now() - interval '8 days'")
    ///     .execute(&pool)
    ///     .await?;
    /// ```
    ///
    /// or shorten the topic's retention, or state a shorter replay window in the
    /// pipeline description if replays never reach that far.
    ///
    /// ## Not reported
    ///
    /// - A consumer whose topics are unknown, or topics whose retention the tree does
    ///   not state: the window is unknown, so msgaudit stays silent.
    /// - A queue's message TTL (SQS `MessageRetentionPeriod`, RabbitMQ
    ///   `x-message-ttl`): it is not a replay window.
    /// - Cleanup of tables that are not dedup records (`DELETE FROM sessions …`), by
    ///   name or by use (a conflict-ignoring insert after the effect is not a claim).
    /// - A retention equal to or longer than the window.
    pub static MA012 = {
        code: "MA012",
        name: "dedup-retention-window",
        severity: Warning,
        concern: Retention,
        consequence: Duplicate,
        summary: "The dedup store's retention is shorter than the replay window of the source.",
        boundary: "dedup retention must cover replay",
    };
}

/// Everything the rule links: per crate, its retention facts; Kafka clients (Rust:
/// keyed by crate, YAML: by directory); replay windows; pipeline stages.
pub struct Input<'a> {
    pub crates: &'a [(String, RetentionFacts)],
    pub clients: &'a [(String, KafkaClient)],
    pub windows: &'a [ReplayWindow],
    pub stages: &'a [PipelineStage],
}

/// `path` is `dir` or lies under it (display paths; `.` is the root), compared
/// component by component after `.` and `..` are taken out, so that the answer
/// does not depend on how the PATH argument was spelled (`a/../a`, `./a`).
fn within(path: &str, dir: &str) -> bool {
    let dir = normalize_lexically(Path::new(dir));
    dir.as_os_str().is_empty() || normalize_lexically(Path::new(path)).starts_with(&dir)
}

/// The longest known window among `topics` and the stages' own windows.
fn longest<'a>(
    topics: &[String],
    stage_windows: impl Iterator<Item = &'a ReplayWindow>,
    windows: &'a [ReplayWindow],
) -> Option<&'a ReplayWindow> {
    windows
        .iter()
        .filter(|w| w.topic.as_ref().is_some_and(|t| topics.contains(t)))
        .chain(stage_windows)
        .max_by(|a, b| a.millis.cmp(&b.millis).then(b.loc.cmp(&a.loc)))
}

pub fn check(input: &Input) -> Vec<Finding> {
    // Topic retention set in Rust (rdkafka admin) counts like the YAML's.
    let mut all_windows: Vec<ReplayWindow> = input.windows.to_vec();
    for (_, facts) in input.crates {
        all_windows.extend(facts.windows.iter().cloned());
    }
    all_windows.sort_by(|a, b| a.loc.cmp(&b.loc));
    all_windows.dedup();
    let windows = &all_windows[..];
    let mut found: BTreeMap<Loc, Finding> = BTreeMap::new();
    let mut report = |r: &DedupRetention, w: &ReplayWindow, via: Option<&PipelineStage>| {
        if r.millis >= w.millis {
            return;
        }
        found
            .entry(r.loc.clone())
            .or_insert_with(|| finding(r, w, via));
    };

    // A table the package's code uses as a claim that gates an effect is a dedup
    // store whatever its name (docs/what-is-analyzed.md, a dedup record by its shape): its cleanups count.
    let mut claims: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (key, facts) in input.crates {
        let e = claims.entry(key.as_str()).or_default();
        e.extend(facts.claim_tables.iter().map(String::as_str));
    }
    for (key, facts) in input.crates {
        let claimed = claims.get(key.as_str());
        let dedup: Vec<&DedupRetention> = facts
            .dedup
            .iter()
            .chain(
                facts
                    .cleanups
                    .iter()
                    .filter(|(t, _)| claimed.is_some_and(|c| c.contains(&t.as_str())))
                    .map(|(_, r)| r),
            )
            .collect();
        if dedup.is_empty() {
            continue;
        }
        let mut topics = facts.consumer_topics.clone();
        for (at, c) in input.clients {
            if is_consumer(c) && within(at, key) {
                topics.extend(c.topics.iter().cloned());
            }
        }
        let stages: Vec<&PipelineStage> = input
            .stages
            .iter()
            .filter(|s| s.paths.iter().any(|p| within(key, p)))
            .collect();
        for s in &stages {
            topics.extend(s.consumes.iter().cloned());
        }
        let stage_windows = stages.iter().filter_map(|s| s.replay_window.as_ref());
        let Some(w) = longest(&topics, stage_windows, windows) else {
            continue;
        };
        let via = stages
            .iter()
            .find(|s| {
                s.replay_window.as_ref() == Some(w)
                    || w.topic.as_ref().is_some_and(|t| s.consumes.contains(t))
            })
            .copied();
        for r in dedup {
            report(r, w, via);
        }
    }
    for s in input.stages {
        let Some(r) = &s.dedup else { continue };
        if let Some(w) = longest(&s.consumes, s.replay_window.iter(), windows) {
            report(r, w, Some(s));
        }
    }
    found.into_values().collect()
}

fn finding(r: &DedupRetention, w: &ReplayWindow, via: Option<&PipelineStage>) -> Finding {
    let kept = human(r.millis);
    let window = human(w.millis);
    let replay = if w.millis == UNLIMITED {
        "can replay its whole history".to_string()
    } else {
        format!("can replay {window}")
    };
    let source = match (&w.topic, via) {
        (Some(t), _) => format!("topic {} {replay}", quoted(t)),
        (None, Some(s)) => format!(
            "stage {} declares a replay window of {window}",
            quoted(&s.name)
        ),
        (None, None) => format!("the source {replay}"),
    };
    let mut labels: Vec<Label> = Vec::new();
    labels.push(label(
        &w.loc,
        match &w.topic {
            Some(t) if w.millis == UNLIMITED => {
                format!(
                    "topic {} keeps its records forever ({})",
                    quoted(t),
                    w.source
                )
            }
            Some(t) => format!("topic {} keeps records {window} ({})", quoted(t), w.source),
            None => format!("replay window of {window} declared here"),
        },
    ));
    if r.write != r.loc {
        labels.push(label(
            &r.write,
            format!("{} drops dedup records after {kept}", r.store),
        ));
    }
    MA012.finding(
        &r.loc,
        format!("dedup records kept {kept}, but {source}"),
        format!(
            "a redelivery or replay of a message older than {kept} finds no dedup record: \
             its effect is applied twice"
        ),
        labels,
        if w.millis == UNLIMITED {
            "keep dedup records as long as the topic keeps its records, or give the topic a finite retention".into()
        } else {
            format!(
                "keep dedup records at least {window} (the replay window), or shorten the topic's retention"
            )
        },
    )
}

/// MA012 as the dispatcher runs it ([`super::Rule`]).
pub struct Check;

impl super::Rule for Check {
    fn meta(&self) -> &'static super::RuleMeta {
        &MA012
    }

    fn check_tree(&self, tree: &super::TreeInput) -> Vec<Finding> {
        check(&Input {
            crates: tree.crates,
            clients: tree.clients,
            windows: tree.windows,
            stages: tree.stages,
        })
    }
}
