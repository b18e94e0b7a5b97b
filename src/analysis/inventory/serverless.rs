//! The serverless event sources of the inventory's consumers (docs/what-is-analyzed.md, serverless
//! event sources; docs/review.md): each event source mapping of the deploy YAML, tied to
//! the consumer its handler is, so the checklist can name what triggers it and
//! whether the records the handler lists as failed are redelivered.

use super::*;
use crate::ir::{BatchHandler, BatchSource, EventSourceMapping};

/// An event source mapping that runs a consumer (a serverless batch handler).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct EventSource {
    /// The function the deploy file declares (`SyncFunction`).
    pub function: String,
    pub source: Option<BatchSource>,
    /// What the YAML names the queue, stream or topics by, as written.
    pub reference: Option<String>,
    /// The event's block in the deploy file.
    pub loc: Loc,
    /// `ReportBatchItemFailures` is enabled.
    pub reports_failures: bool,
    /// The handler returns a partial-batch response (lists the records that failed).
    pub lists_failures: bool,
}

impl EventSource {
    /// The handler lists failed records but the service does not read the list: the
    /// `Ok` return deletes them with the batch.
    pub fn ignores_listed(&self) -> bool {
        self.lists_failures && !self.reports_failures
    }
}

/// Whether `loc` lies in the whole function `code` starts with.
fn inside(code: &[Loc], loc: &Loc) -> bool {
    code.first().is_some_and(|l| {
        l.path == loc.path && l.span.line <= loc.span.line && loc.span.line <= l.span.end_line
    })
}

impl Inventory {
    /// Ties each event source mapping to the consumers its handlers are (the
    /// consumer whose function is the handler, else one that reaches it), and its
    /// event block to their locations, so a finding there is theirs.
    pub fn link_event_sources(
        &mut self,
        mappings: &[EventSourceMapping],
        handlers: &[BatchHandler],
    ) {
        for m in mappings {
            for h in crate::analysis::serverless::linked(m, mappings, handlers) {
                let own = self.consumers.iter().position(|c| inside(&c.code, &h.loc));
                let reaching = || {
                    self.consumers.iter().position(|c| {
                        c.code
                            .iter()
                            .any(|l| inside(std::slice::from_ref(l), &h.loc))
                    })
                };
                let Some(i) = own.or_else(reaching) else {
                    continue;
                };
                let c = &mut self.consumers[i];
                c.event_sources.push(EventSource {
                    function: m.function.clone(),
                    source: m.source,
                    reference: m.reference.clone(),
                    loc: m.loc.clone(),
                    reports_failures: m.reports_failures,
                    lists_failures: h.partial_return.is_some(),
                });
                c.event_sources.sort();
                c.event_sources.dedup();
                c.locs.insert(key(&m.loc));
            }
        }
    }
}
