use std::collections::BTreeMap;

use super::declare_rule;
use crate::analysis::flow::{AckBeforeEffect, EffectKind, EvRef};
use crate::diagnostic::{Finding, Label};
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
    /// - Nacks and rejects: they ask for redelivery.
    /// - Writes into a transaction that is rolled back or dropped after the ack.
    ///
    /// ## Known limits
    ///
    /// Calls into other crates and values whose role cannot be resolved (a client
    /// built at run time behind a trait object with many implementations) are not
    /// followed: the rule stays silent there. Messages that cross a channel between
    /// tasks are not tracked.
    pub static MA001 = {
        code: "MA001",
        name: "ack-before-commit",
        severity: Error,
        summary: "A message is acked, its offset committed or it is deleted before the transaction holding its effect commits, or before the effect runs at all.",
        boundary: "effect/progress order",
    };
}

/// Turns the ordering facts into findings: one per ack call, at the ack, with
/// labels for the effect, its transaction and the call sites that reach them.
pub fn check(facts: &[AckBeforeEffect]) -> Vec<Finding> {
    let mut by_ack: BTreeMap<&Loc, Vec<&AckBeforeEffect>> = BTreeMap::new();
    for f in facts {
        by_ack.entry(&f.ack.loc).or_default().push(f);
    }
    by_ack.into_values().map(finding).collect()
}

fn code(text: &str) -> String {
    format!("`{text}`")
}

fn call_text(e: &EvRef) -> String {
    if e.text.ends_with(')') || e.text.ends_with('!') || e.text.ends_with("block") {
        e.text.clone()
    } else {
        format!("{}()", e.text)
    }
}

fn finding(facts: Vec<&AckBeforeEffect>) -> Finding {
    // The first fact (in a deterministic order) names the effect in the message.
    let mut facts = facts;
    facts.sort();
    let first = facts[0];
    let ack = &first.ack;
    let what = if ack.describe.is_empty() {
        "message acked"
    } else {
        ack.describe.as_str()
    };
    let effect_desc = effect_words(&first.effect);
    let (message, window, help) = match &first.kind {
        EffectKind::Committed { commit, .. } => (
            format!(
                "{what} by {} before {} commits the {effect_desc}",
                code(&ack.text),
                code(&call_text(commit))
            ),
            format!(
                "a crash after {} and before {} loses the message: it is never redelivered",
                code(&ack.text),
                code(&call_text(commit))
            ),
            "commit the transaction first, then acknowledge the message".to_string(),
        ),
        EffectKind::Immediate => (
            format!("{what} by {} before the {effect_desc} runs", code(&ack.text)),
            format!(
                "a crash after {} and before the {effect_desc} loses the message: it is never redelivered",
                code(&ack.text)
            ),
            "apply the effect first, then acknowledge the message".to_string(),
        ),
        EffectKind::Spawned { .. } => (
            format!(
                "{what} by {} while a spawned task may still apply the {effect_desc}",
                code(&ack.text)
            ),
            format!(
                "a crash after {} and before the spawned task finishes loses the message: it is never redelivered",
                code(&ack.text)
            ),
            "await the task's handle (and check its result) before acknowledging the message".to_string(),
        ),
    };

    let mut labels: Vec<Label> = Vec::new();
    let mut push = |loc: &Loc, msg: String| {
        let l = Label {
            path: loc.path.to_string(),
            span: loc.span,
            message: msg,
        };
        if !labels.iter().any(|x| x.path == l.path && x.span == l.span) {
            labels.push(l);
        }
    };
    for f in &facts {
        for site in &f.ack.via {
            push(
                site,
                format!("the ack is reached through this call in `{}`", f.entry),
            );
        }
        match &f.kind {
            EffectKind::Committed { begin, commit } => {
                if let Some(b) = begin {
                    push(&b.loc, "transaction begins here".into());
                }
                push(
                    &f.effect.loc,
                    format!("the {} is written here", effect_words(&f.effect)),
                );
                push(
                    &commit.loc,
                    "the transaction commits here, after the ack".into(),
                );
                for site in &commit.via {
                    push(site, "the transaction commits inside this call".into());
                }
            }
            EffectKind::Immediate => {
                push(
                    &f.effect.loc,
                    format!("the {} runs here, after the ack", effect_words(&f.effect)),
                );
                for site in &f.effect.via {
                    push(site, "the effect runs inside this call".into());
                }
            }
            EffectKind::Spawned { spawn } => {
                push(
                    spawn,
                    "the task is spawned here and not awaited before the ack".into(),
                );
                push(
                    &f.effect.loc,
                    format!("the {} runs in the spawned task", effect_words(&f.effect)),
                );
            }
        }
    }
    labels.sort();

    Finding {
        code: MA001.code,
        name: MA001.name,
        severity: MA001.default_severity,
        path: ack.loc.path.to_string(),
        span: ack.loc.span,
        message,
        boundary: MA001.boundary.to_string(),
        window,
        labels,
        help,
    }
}

/// `write (INSERT on orders)`, `record sent`, `HTTP request`: how the effect is named.
fn effect_words(e: &EvRef) -> String {
    let d = if e.describe.is_empty() {
        "effect"
    } else {
        e.describe.as_str()
    };
    format!("{d} {}", code(&e.text))
}
