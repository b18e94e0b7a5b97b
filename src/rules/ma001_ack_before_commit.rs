use std::collections::BTreeMap;

use super::declare_rule;
use super::group::{by_primary, Labels};
use super::pairs::{call_text, code, report, Wording};
use crate::analysis::flow::{AckBeforeEffect, EffectKind, Facts, PairFact, Relation};
use crate::diagnostic::Finding;
use crate::ir::Loc;

declare_rule! {
    /// ## What it does
    ///
    /// Finds a message that is acknowledged (acked, its offset committed or stored,
    /// deleted from the queue, `XACK`ed) before the effect of handling it is durable:
    /// before the database transaction that holds the effect commits, or before the
    /// effect runs at all. It follows the handler's control flow (branches, loops, `?`
    /// and early returns, closures, spawned tasks) and the calls it makes into other
    /// functions and files of the same crate, and reports only when *some path* acks
    /// first and then applies an effect.
    ///
    /// Rows written through a client that keeps them in a buffer (the packs'
    /// `buffering`: clickhouse's `Inserter::commit` sends them only once a row, byte or
    /// time limit is reached) are not durable after that call: an ack after it, before
    /// a call that sends every buffered row (`end`, `force_commit`), is reported.
    ///
    /// An outbox relay's progress record is the write that retires the rows it read
    /// (a `DELETE` of them, an `UPDATE` that marks them sent, or a progress cursor
    /// advanced over them: an update or upsert of a table that holds a position by
    /// its name, `cursor`, `checkpoint`, `watermark`, `offset(s)`, `lsn`,
    /// `progress`, set to a value taken from the rows, such as the last row's id or
    /// the highest sequence or block number). A relay or tailer that makes that write
    /// durable before it publishes the rows (a payload, key or record taken from
    /// them) is reported at the write, also when the write is in a helper of another
    /// file.
    ///
    /// ## Why is this bad?
    ///
    /// The ack is the progress record of the message (C); the effect is the business
    /// write (E). If C commits before E, a crash between them (a deploy, an OOM kill, a
    /// failed commit) leaves the broker believing the message was handled while the
    /// effect never happened. The message is **lost**: it is not redelivered. This is
    /// at-most-once delivery, usually by accident.
    ///
    /// Boundary broken: the order of effect and progress record.
    ///
    /// ## Example
    ///
    /// ```rust
    /// let msg = consumer.recv().await?;
    /// let mut tx = pool.begin().await?;
    /// sqlx::query("UPDATE stock SET n = n - $1 WHERE sku = $2")
    ///     .bind(qty).bind(sku).execute(&mut *tx).await?;
    /// consumer.commit_message(&msg, CommitMode::Async)?; // offset committed first
    /// tx.commit().await?;                                // a crash before this loses the update
    /// ```
    ///
    /// Use instead:
    ///
    /// ```rust
    /// let msg = consumer.recv().await?;
    /// let mut tx = pool.begin().await?;
    /// sqlx::query("UPDATE stock SET n = n - $1 WHERE sku = $2")
    ///     .bind(qty).bind(sku).execute(&mut *tx).await?;
    /// tx.commit().await?;                                 // effect durable first
    /// consumer.commit_message(&msg, CommitMode::Async)?;  // then progress
    /// ```
    ///
    /// Committing the effect first makes the handler at-least-once: a crash between
    /// the two redelivers the message, so make the effect idempotent (a dedup record
    /// keyed by the message's stable id, written in the same transaction).
    ///
    /// ## Not reported
    ///
    /// - Acking a poison message (or a duplicate, after rolling back) on a path that
    ///   applies no effect afterwards.
    /// - Acking after the transaction commits, or after awaiting a spawned task's handle.
    /// - Acking after a value was sent on an in-process channel when the worker's reply
    ///   (a oneshot) is awaited first, or when the worker acks or commits itself.
    /// - An ack before the send (effects handed on afterwards are not that ack's).
    /// - Nacks and rejects: they ask for redelivery.
    /// - Writes into a transaction that is rolled back or dropped after the ack.
    /// - A relay that publishes the rows it read before deleting or marking them (or
    ///   advancing its cursor over them), or that marks them in a transaction
    ///   committed only after the publish; a lease
    ///   (`SET locked_by = $1, locked_until = …`) before the publish; one business row
    ///   of a table other than an outbox set to a done status before a publish
    ///   (`UPDATE orders SET status = 'completed' WHERE id = $1`: MA006's).
    /// - Messages of a queue the consuming function declares to be deleted with its
    ///   connection (`exclusive: true` or `auto_delete: true` in lapin's or amiquip's
    ///   `QueueDeclareOptions`, and no queue declared without them there): a crash
    ///   loses its unacked messages too, so the order of ack and effect changes nothing.
    ///
    /// ## Known limits
    ///
    /// Calls into other crates and values whose role cannot be resolved (a client
    /// built at run time behind a trait object with many implementations) are not
    /// followed: the rule stays silent there. A value sent on an in-process channel is
    /// followed into the loops receiving from its channel (followed from the `channel()`
    /// call through arguments and struct fields, else by element type); a send whose
    /// receiving loop cannot be found is silent. A relay's publish is one that sends
    /// values taken from the rows the query returned, followed within the function
    /// that runs the query: rows read in a helper that returns them, and a publish of
    /// something else after the rows were retired, are not reported. A cursor is
    /// recognized by its table's name and its value's origin in rows the path read;
    /// a tailer whose position comes from elsewhere (a block number an RPC returned)
    /// is not followed.
    pub static MA001 = {
        code: "MA001",
        name: "ack-before-commit",
        severity: Error,
        concern: AckOrder,
        consequence: Loss,
        summary: "A message is acked, its offset committed or it is deleted before the transaction holding its effect commits, or before the effect runs at all.",
        boundary: "effect/progress order",
    };
}

/// Turns the ordering facts into findings: one per ack call, at the ack, with
/// labels for the effect, its transaction and the call sites that reach them.
pub fn check(facts: &Facts) -> Vec<Finding> {
    // (A consumer commit in a consume-transform-produce path with a transactional
    // producer is MA010's: see `super::PRECEDENCE`.)
    let acks = facts.acks.iter().filter(|f| redelivered_after_crash(f));
    by_primary(acks, |f| &f.ack.loc, depth)
        .into_iter()
        .map(finding)
        .collect()
}

/// The window this rule names is a crash between the ack and the effect, which the
/// broker would otherwise repair by redelivering. A queue deleted with the consumer's
/// connection (declared `exclusive` or `auto_delete` where it is consumed) loses its
/// unacked messages in that crash too: acking later would save nothing.
fn redelivered_after_crash(f: &AckBeforeEffect) -> bool {
    !f.transient_source
}

fn depth(f: &AckBeforeEffect) -> usize {
    f.ack.via.len() + f.effect.via.len()
}

fn finding(facts: Vec<&AckBeforeEffect>) -> Finding {
    // The first fact (in a deterministic order) names the effect in the message.
    // The same (ack, effect) pair is found from every entry function that reaches it;
    // keep the one seen from the closest entry, so labels show only the calls that
    // connect the ack with its effect.
    // The group comes closest first: the first fact seen per effect is its closest.
    let mut closest: BTreeMap<&Loc, &AckBeforeEffect> = BTreeMap::new();
    for f in facts {
        closest.entry(&f.effect.loc).or_insert(f);
    }
    let mut facts: Vec<&AckBeforeEffect> = closest.into_values().collect();
    facts.sort();
    let first = facts[0];
    let ack = &first.ack;
    let what = if ack.describe.is_empty() {
        "message acked"
    } else {
        ack.describe.as_str()
    };
    let ack_call = code(&ack.text);
    let effect_call = code(&first.effect.text);
    let (message, window, help) = match &first.kind {
        EffectKind::Committed { commit, .. } => {
            let commit_call = code(&call_text(commit));
            (
                format!("{what} by {ack_call} before {commit_call} commits the {}", first.effect.describe),
                format!(
                    "a crash after {ack_call} and before {commit_call} loses the message: the {} never \
                     commits and the message is not redelivered",
                    first.effect.describe
                ),
                "commit the transaction first, then acknowledge the message (and make the effect \
                 idempotent, since a crash between the two redelivers it)"
                    .to_string(),
            )
        }
        EffectKind::Immediate => (
            format!(
                "{what} by {ack_call} before {effect_call} {}",
                first.effect.phrase
            ),
            format!(
                "a crash after {ack_call} and before {effect_call} loses the message: the {} never \
                 happens and the message is not redelivered",
                first.effect.describe
            ),
            "apply the effect first, then acknowledge the message (and make the effect \
             idempotent, since a crash between the two redelivers it)"
                .to_string(),
        ),
        EffectKind::Buffered => buffered_wording(what, &ack_call, &effect_call, &first.effect.describe),
        EffectKind::Spawned { .. } => (
            format!(
                "{what} by {ack_call} while a spawned task may still run {effect_call}, which {}",
                first.effect.phrase
            ),
            format!(
                "a crash after {ack_call} and before the spawned task finishes loses the message: \
                 the {} never happens and the message is not redelivered",
                first.effect.describe
            ),
            "await the task's handle (and check its result) before acknowledging the message"
                .to_string(),
        ),
        EffectKind::Handed { .. } => (
            format!(
                "{what} by {ack_call} while the worker it was sent to may still run {effect_call}, which {}",
                first.effect.phrase
            ),
            format!(
                "a crash after {ack_call} and before the worker finishes loses the message: \
                 the {} never happens and the message is not redelivered",
                first.effect.describe
            ),
            "have the worker acknowledge the message, or wait for its reply (a oneshot) \
             before acknowledging"
                .to_string(),
        ),
    };

    let mut labels = Labels::default();
    let mut push = |loc: &Loc, msg: String| labels.push(loc, msg);
    for f in &facts {
        for site in &f.ack.via {
            push(
                site,
                format!(
                    "the ack is reached through this call in {}",
                    crate::diagnostic::quoted(&f.entry)
                ),
            );
        }
        let effect = &f.effect;
        match &f.kind {
            EffectKind::Committed { begin, commit } => {
                if let Some(b) = begin {
                    push(&b.loc, "transaction begins here".into());
                }
                push(
                    &effect.loc,
                    format!("the {} is written in the transaction here", effect.describe),
                );
                push(
                    &commit.loc,
                    "the transaction commits here, after the ack".into(),
                );
                for site in commit.via.iter().chain(&effect.via) {
                    push(
                        site,
                        "the transaction's work happens inside this call".into(),
                    );
                }
            }
            EffectKind::Immediate => {
                push(
                    &effect.loc,
                    format!("the {} happens here, after the ack", effect.describe),
                );
                for site in &effect.via {
                    push(site, "the effect happens inside this call".into());
                }
            }
            EffectKind::Handed { send } => {
                push(
                    send,
                    "the message is sent to a worker here, with no reply awaited before the ack"
                        .into(),
                );
                push(&effect.loc, format!("the worker {} here", effect.phrase));
            }
            EffectKind::Buffered => {
                for (loc, msg) in buffered_labels(effect) {
                    push(&loc, msg);
                }
            }
            EffectKind::Spawned { spawn } => {
                push(
                    spawn,
                    "the task is spawned here and not awaited before the ack".into(),
                );
                push(
                    &effect.loc,
                    format!("the spawned task {} here", effect.phrase),
                );
            }
        }
    }
    MA001.finding(&ack.loc, message, window, labels.sorted(), help)
}

/// The message, window and help of an ack while the rows `effect_call` wrote may
/// still sit in the client's buffer.
fn buffered_wording(
    what: &str,
    ack_call: &str,
    effect_call: &str,
    describe: &str,
) -> (String, String, String) {
    (
        format!(
            "{what} by {ack_call} while the rows {effect_call} wrote may still be buffered in the client, not sent",
        ),
        format!(
            "a crash after {ack_call} and before the client sends its buffer loses the message: \
             the {describe} never happens and the message is not redelivered",
        ),
        "acknowledge only after a call that sends every buffered row (not one that sends \
         only once a limit is reached), and make the effect idempotent, since a crash \
         between the two redelivers it"
            .to_string(),
    )
}

fn buffered_labels(effect: &crate::analysis::flow::EvRef) -> Vec<(Loc, String)> {
    let mut out = vec![(
        effect.loc.clone(),
        format!(
            "the {} goes into the client's buffer here, sent only once a limit is reached",
            effect.describe
        ),
    )];
    for site in &effect.via {
        out.push((
            site.clone(),
            "the rows are buffered inside this call".into(),
        ));
    }
    out
}

/// A relay's progress record written before the publish it records: rows of a
/// table it read deleted, or marked done, or a progress cursor set past them, and
/// made durable before the publish. A relay retires its rows in a batch (`WHERE id
/// = ANY($1)`, `IN (…)`), from an outbox table, or by a cursor (which covers every
/// row up to it: `many_rows`); a single row of another table marked done (`UPDATE
/// orders SET status = 'completed' WHERE id = $1`) before a publish is a business
/// change (MA006's), not a relay's bookkeeping.
pub fn reports(p: &PairFact, _facts: &Facts) -> bool {
    matches!(
        p.relation,
        Relation::RowsRetiredBeforePublish { many_rows, outbox_table, .. }
            if many_rows || outbox_table
    )
}

/// The relay findings: one per retiring write, at the write.
fn relay_findings(facts: &Facts) -> Vec<Finding> {
    report(&MA001, facts, reports, |f| {
        let (deletes, cursor) = match f.relation {
            Relation::RowsRetiredBeforePublish {
                deletes, cursor, ..
            } => (deletes, cursor),
            _ => (false, false),
        };
        let (done, gone) = if cursor {
            (
                "advances the relay's progress cursor over the rows it read",
                "are behind the cursor",
            )
        } else if deletes {
            ("deletes the rows the relay read", "are deleted")
        } else {
            ("marks the rows the relay read as sent", "are marked sent")
        };
        let write = code(&call_text(&f.primary));
        let publish = code(&f.other.text);
        let help = if cursor {
            "publish the rows first, then store the cursor (or store it in a transaction that \
             commits only after the publish succeeded); consumers deduplicate the re-sends"
        } else {
            "publish the rows first, then delete or mark them (or mark them in a transaction \
             that commits only after the publish succeeded); consumers deduplicate the re-sends"
        };
        Wording {
            message: format!(
                "{write} ({}) {done} before {publish} publishes them: the relay's progress record runs ahead of the send",
                f.primary.describe
            ),
            window: format!(
                "the rows {gone} before they are published: if {publish} fails or the relay crashes \
                 between the two, those events are lost and never re-sent"
            ),
            help: help.into(),
            other_label: if cursor {
                "the rows are published here, after the cursor passed them".into()
            } else {
                "the rows are published here, after they were retired".into()
            },
        }
    })
}

/// MA001 as the dispatcher runs it ([`super::Rule`]).
pub struct Check;

impl super::Rule for Check {
    fn meta(&self) -> &'static super::RuleMeta {
        &MA001
    }

    fn check_crate(&self, cx: &super::CrateInput) -> Vec<Finding> {
        let mut out = check(cx.facts);
        out.extend(relay_findings(cx.facts));
        out
    }

    fn reports(&self, p: &PairFact, facts: &Facts) -> bool {
        reports(p, facts)
    }
}
