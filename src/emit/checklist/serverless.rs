//! What the checklist says of serverless batch handlers (docs/review.md, docs/what-is-analyzed.md serverless
//! event sources): the event sources that run a consumer, as the pipeline map names
//! them, and what becomes of the records its handler lists as failed (question 2).

use crate::analysis::inventory::{Consumer, EventSource};
use crate::diagnostic::Concern;

use super::{call, code, finding, join};

/// The service's source as the map and the questions name it.
fn kind(s: &EventSource) -> &'static str {
    s.source.map_or("event source", |k| k.describe())
}

/// A map node's label: what the deploy file names the source by, and the function
/// whose event it is (`DynamoDB Streams AccountsTable.StreamArn (SyncFunction)`),
/// or `DynamoDB Streams of SyncFunction` when it names none.
fn source_label(s: &EventSource) -> String {
    match &s.reference {
        Some(r) => format!("{} {r} ({})", kind(s), s.function),
        None => format!("{} of {}", kind(s), s.function),
    }
}

/// The map's nodes of a serverless handler's event sources, each keyed by its place
/// in the deploy file (two handlers of one mapping share it), with its edge to the
/// handler `(function node, guarantee)`.
pub(super) fn source_nodes(
    c: &Consumer,
    (f, g): (&str, &str),
    edges: &mut Vec<(String, String, String)>,
    extra: &mut Vec<(String, String)>,
) {
    for s in &c.event_sources {
        let l = &s.loc;
        let k = format!("e:{}:{}:{}", l.path, l.span.line, l.span.column);
        edges.push((k.clone(), f.to_string(), g.to_string()));
        extra.push((k, source_label(s)));
    }
}

/// `` `A`'s event source ``, `` the event sources of `A`, `B` ``.
fn sources_of(sources: &[&EventSource]) -> String {
    let mut names: Vec<String> = sources.iter().map(|s| code(&s.function)).collect();
    names.dedup();
    if sources.len() == 1 {
        format!("{}'s event source", names[0])
    } else {
        format!("the event sources of {}", join(&names))
    }
}

/// Question 2's step for a serverless handler's failure listings (its nacks), with
/// whether some are ignored (the question stays open); `None` when the consumer is
/// no serverless handler or lists nothing.
pub(super) fn listed_failures(c: &Consumer) -> Option<(String, bool)> {
    if c.event_sources.is_empty() || c.nacks.is_empty() {
        return None;
    }
    let calls = join(&c.nacks.iter().map(call).collect::<Vec<_>>());
    let (enabled, ignored): (Vec<&EventSource>, Vec<&EventSource>) =
        c.event_sources.iter().partition(|s| s.reports_failures);
    let mut parts = Vec::new();
    if !enabled.is_empty() {
        parts.push(format!(
            "{} enables `ReportBatchItemFailures`, so the listed records are redelivered",
            sources_of(&enabled)
        ));
    }
    if !ignored.is_empty() {
        let cited: Vec<String> = c
            .findings
            .iter()
            .filter(|f| f.concern == Concern::AckOnFailure)
            .filter(|f| {
                ignored
                    .iter()
                    .any(|s| *s.loc.path == *f.path && s.loc.span.line == f.line)
            })
            .map(finding)
            .collect();
        parts.push(format!(
            "{} does not enable `ReportBatchItemFailures`: the list is ignored and the batch is \
             deleted{}",
            sources_of(&ignored),
            if cited.is_empty() {
                String::new()
            } else {
                format!(" ({})", join(&cited))
            }
        ));
    }
    let link = if enabled.is_empty() { ", but " } else { ": " };
    Some((
        format!("{calls} lists the record{link}{}", parts.join("; ")),
        !ignored.is_empty(),
    ))
}
