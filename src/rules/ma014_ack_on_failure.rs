use super::declare_rule;
use super::group::{by_primary, Labels};
use super::pairs::{call_text, code};
use crate::analysis::flow::{AckAfterFailure, Facts, WriteAfterFailure};
use crate::diagnostic::Finding;

declare_rule! {
    /// ## What it does
    ///
    /// Finds a message handler that acknowledges the message (an ack, an offset
    /// commit or store, an SQS delete, an `XACK`) on a path where the message's
    /// effect failed and the error was handled without being propagated:
    ///
    /// - `if let Err(e) = handle(&msg).await { error!(..) }` before the ack;
    /// - a `match` whose `Err(e)` (or `_`) arm logs, with the ack in the arm or after
    ///   the `match`, shared with the success path;
    /// - `let _ = op.await;`, `op.await;`, `.ok()`, `.unwrap_or_default()`,
    ///   `.unwrap_or(..)`, `.unwrap_or_else(..)`, `let Ok(v) = op else { .. }`,
    ///   `if op.await.is_err() { .. }`, and the same tests of a bound outcome
    ///   (`let r = op.await; if r.is_err() { .. }`);
    /// - a helper that catches its effect's error, logs it and returns `Ok(())`.
    ///
    /// The effect is a database write or commit, a publish, or an external call
    /// (HTTP, e-mail, payment), written in the handler or reached through the
    /// crate's functions: a helper returning a `Result` is judged by which of its
    /// error returns come from a failed effect (`query.execute(..).await?`).
    /// An outbox relay that ignores a publish's failure and then deletes the row it
    /// read before the publish is the same defect: the row is its progress record
    /// (rows read after the failed publish are not what it published). So is a relay
    /// or tailer that advances its cursor (an `UPDATE` or upsert of a table named for a
    /// position: `relay_checkpoint`, `cdc_lsn`) after a failed publish of rows it read,
    /// when its loop went on to the later rows; one that stops at the failure
    /// (`break`) stores only the position it reached.
    ///
    /// A batch call whose response carries per-entry failures (SQS
    /// `send_message_batch`, SNS `publish_batch`, Kinesis `put_records`, Firehose
    /// `put_record_batch`, EventBridge `put_events`, DynamoDB `batch_write_item`; the
    /// packs' `entry_failures`) can fail in part while the request succeeds: when
    /// nothing acts on its failed entries (the response dropped, or only logged), it
    /// is a failure ignored, and the ack, delete or commit after it is reported, also
    /// the delete of each message of a loop over the batch, and an outbox relay's
    /// marking `UPDATE` of the rows it published.
    ///
    /// ## Why is this bad?
    ///
    /// At-least-once delivery rests on retry: a message whose effect failed must come
    /// back. Acknowledging it anyway turns the guarantee into at-most-once for exactly
    /// the messages that needed a retry: the effect never happens and the message is
    /// not redelivered, so it is **lost**. No error reaches a dashboard but the log
    /// line.
    ///
    /// Boundary broken: retry on failure.
    ///
    /// ## Example
    ///
    /// ```rust
    /// while let Some(msg) = stream.next().await {
    ///     let msg = msg?;
    ///     if let Err(e) = store_order(&pool, &msg).await {
    ///         tracing::error!("could not store the order: {e}");
    ///     }
    ///     consumer.commit_message(&msg, CommitMode::Async)?;
    /// }
    /// ```
    ///
    /// Use instead:
    ///
    /// ```rust
    /// while let Some(msg) = stream.next().await {
    ///     let msg = msg?;
    ///     if let Err(e) = store_order(&pool, &msg).await {
    ///         tracing::error!("could not store the order: {e}");
    ///         // keep it: send it to a dead-letter topic (then commit), or stop and
    ///         // let the group redeliver it
    ///         dead_letter.send(FutureRecord::to("orders.dlq").payload(msg.payload().unwrap_or_default()).key(""), Timeout::Never).await.map_err(|(e, _)| e)?;
    ///     }
    ///     consumer.commit_message(&msg, CommitMode::Async)?;
    /// }
    /// ```
    ///
    /// ## Not reported
    ///
    /// - A failure path that keeps the message before the ack: a publish (to a
    ///   dead-letter, retry or parking topic or queue; a delayed re-publish), a write
    ///   (a failure record, a `retry_at` row), a nack or reject (lapin
    ///   `basic_nack`/`basic_reject`, JetStream `AckKind::Nak`, pulsar `nack`, SQS
    ///   `change_message_visibility`).
    /// - A failure path that never acks: the error is returned or `?`-ed, the loop
    ///   `break`s or `continue`s past the ack, the code panics (`.unwrap()`,
    ///   `.expect(..)`).
    /// - A message skipped because it does not decode or validate (a poison message,
    ///   before any effect): only effects' failures count.
    /// - An `Err` arm for one error variant or with a guard that tests the error
    ///   (`Err(e) if is_unique_violation(&e)`): a duplicate acked on purpose. A guard
    ///   that does not look at the error (`Err(e) if attempts >= 3`) picks when, not
    ///   which failure: a logging arm behind it is reported.
    /// - A failed dedup-record write, a failed Redis `SET` (a cache, a lock) and a
    ///   failed cache entry (a value written with an expiry: `set_ex`, `pset_ex`,
    ///   `SET … EX`; any key-store write in a function, type or module named for a
    ///   cache, the packs' `cache_names`: `fn invalidate`, `impl BalanceCache`): not
    ///   the message's effect. A dedup record is a table named as
    ///   one, or an insert shaped as a claim (`ON CONFLICT DO NOTHING` keyed by the
    ///   message) that another effect follows; a claim-shaped insert with no effect
    ///   after it before the ack is the message's effect, and its failure counts.
    /// - A retry loop that retries the effect until it succeeds: the ack follows the
    ///   success. (A loop that gives up after a few attempts and acks is reported.)
    /// - A batch whose failed entries are retried, turned into an error or recorded
    ///   (any use of them beyond logging), and an SQS `delete_message_batch` whose
    ///   failures are ignored: a message not deleted comes back.
    /// - A serverless batch handler (see "Serverless batch handlers" in
    ///   docs/what-is-analyzed.md) whose failed record is listed in the partial-batch
    ///   response (`batch_item_failures.push(..)`, a push of a `BatchItemFailure`,
    ///   also one bound to a local first):
    ///   that record is redelivered. The handler's
    ///   `Ok(..)` is its ack: a failure logged or ignored and not listed before it is
    ///   reported at that `Ok`; `Err` and `?` redeliver the batch.
    ///
    /// ## Known limits
    ///
    /// - A batch handler that returns a helper's result (`apply_batch(..).await` as its
    ///   tail): the helper's `Ok` is not yet taken for the ack, so a failure ignored in
    ///   the helper is not reported. A closure handed to the runtime whose own body is
    ///   the handler is recognized for MA015 but not lowered as a consumer.
    pub static MA014 = {
        code: "MA014",
        name: "ack-on-failure",
        severity: Warning,
        concern: AckOnFailure,
        consequence: Loss,
        summary: "A handler acks the message on a path where its effect failed and nothing keeps the message.",
        boundary: "retry on failure",
    };
}

/// One finding per ack, at the ack, labelled with the failed effect, where its error
/// was handled and the calls that reach them.
pub fn check(facts: &Facts) -> Vec<Finding> {
    // A delivery report nothing reads is MA008's, at the send (docs/what-is-analyzed.md).
    let seen = facts.failures.iter().filter(|f| !f.delivery);
    by_primary(seen, |f| &f.ack.loc, depth)
        .into_iter()
        .map(finding)
        .collect()
}

/// A write on a failure path that is the message's progress record, not a record of
/// the failure: an outbox relay whose publish failed and that then deletes the row it
/// read before the publish (or marks it done) loses the row, as an ack would lose a
/// message. Any other write there (a retry count, a failure row, an insert of the row
/// again) records the failure: the path after it is not reported. For the entries of
/// a batch nothing read, an update of the rows read is progress too: it records nothing
/// of which entries failed. A delete of only the rows marked done (`WHERE status =
/// 'complete'`) is a clean-up of rows already retired: a row whose publish failed is
/// among them only if a progress write marked it, and its loss is reported there.
/// A relay's or tailer's cursor (SPEC §2: "an ack, delete, commit or cursor advance
/// after it") advanced after rows it read were published is progress past the failed
/// one when the failure is a batch's unread entries, or when the loop over the rows
/// went on to later rows (a loop that stops at the failure, `break`, stores the
/// position it reached).
pub fn progress_write(w: &WriteAfterFailure) -> bool {
    let retires =
        (w.verb == "DELETE" && !w.clears_done) || (w.verb == "UPDATE" && (w.batch || w.marks_done));
    let cursor = w.advances_cursor && w.read_any_before && (w.batch || w.went_past);
    w.publish_failed && ((w.rows_read_before && retires) || cursor)
}

fn depth(f: &AckAfterFailure) -> usize {
    f.ack.via.len() + f.failed.via.len()
}

/// The facts of one ack, the closest entry's first (it explains best).
fn finding(facts: Vec<&AckAfterFailure>) -> Finding {
    let first = facts[0];
    let ack = &first.ack;
    let what = if ack.describe.is_empty() {
        "message acked"
    } else {
        ack.describe.as_str()
    };
    let ack_call = code(&ack.text);
    let failed_call = code(&call_text(&first.failed));
    let message = format!(
        "{what} by {ack_call} on the path where {failed_call} failed: the error is handled \
         without keeping the message (no nack, retry or dead-letter publish)"
    );
    let window = format!(
        "when {failed_call} fails, the message is acknowledged anyway: the {} never happens \
         and the message is not redelivered (lost)",
        first.failed.describe
    );
    let help = "on failure, do not acknowledge: return the error (the message is redelivered), \
                nack or reject it with requeue, or publish it to a dead-letter or retry topic \
                before the ack"
        .to_string();
    let mut labels = Labels::default();
    for f in &facts {
        labels.push(
            &f.failed.loc,
            format!("the {} can fail here", f.failed.describe),
        );
        if let Some(h) = &f.handled {
            labels.push(h, "its error is handled here and the code goes on");
        }
        if depth(f) != depth(first) {
            continue;
        }
        for site in &f.ack.via {
            labels.push(
                site,
                format!(
                    "the ack is reached through this call in {}",
                    crate::diagnostic::quoted(&f.entry)
                ),
            );
        }
        for site in &f.failed.via {
            labels.push(site, "the failing effect runs inside this call");
        }
    }
    MA014.finding(&ack.loc, message, window, labels.sorted(), help)
}

/// MA014 as the dispatcher runs it ([`super::Rule`]).
pub struct Check;

impl super::Rule for Check {
    fn meta(&self) -> &'static super::RuleMeta {
        &MA014
    }

    fn check_crate(&self, cx: &super::CrateInput) -> Vec<Finding> {
        check(cx.facts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(verb: &str) -> WriteAfterFailure<'_> {
        WriteAfterFailure {
            verb,
            marks_done: false,
            clears_done: false,
            rows_read_before: true,
            publish_failed: true,
            batch: false,
            advances_cursor: false,
            read_any_before: true,
            went_past: false,
        }
    }

    #[test]
    fn a_relay_deleting_the_row_it_failed_to_publish_records_progress() {
        assert!(progress_write(&write("DELETE")));
    }

    #[test]
    fn an_update_is_progress_only_when_it_marks_rows_done_or_follows_an_unread_batch() {
        assert!(!progress_write(&write("UPDATE")));
        assert!(progress_write(&WriteAfterFailure {
            marks_done: true,
            ..write("UPDATE")
        }));
        assert!(progress_write(&WriteAfterFailure {
            batch: true,
            ..write("UPDATE")
        }));
    }

    #[test]
    fn a_cursor_advanced_past_a_failed_publish_is_progress() {
        let cursor = WriteAfterFailure {
            advances_cursor: true,
            rows_read_before: false,
            ..write("UPDATE")
        };
        // The loop over the rows went on to later rows, or a batch's entries failed.
        assert!(progress_write(&WriteAfterFailure {
            went_past: true,
            ..cursor
        }));
        assert!(progress_write(&WriteAfterFailure {
            batch: true,
            ..cursor
        }));
        // A loop that stopped at the failure stores the position it reached; a path
        // that read nothing publishes no rows it read.
        assert!(!progress_write(&cursor));
        assert!(!progress_write(&WriteAfterFailure {
            went_past: true,
            read_any_before: false,
            ..cursor
        }));
    }

    #[test]
    fn a_write_that_records_the_failure_ends_the_failure_path() {
        // A failure row, a retry count, rows read after the failure, a failed effect
        // that is not a publish: none is the message's progress.
        assert!(!progress_write(&write("INSERT")));
        assert!(!progress_write(&WriteAfterFailure {
            clears_done: true,
            ..write("DELETE")
        }));
        assert!(!progress_write(&WriteAfterFailure {
            rows_read_before: false,
            ..write("DELETE")
        }));
        assert!(!progress_write(&WriteAfterFailure {
            publish_failed: false,
            ..write("DELETE")
        }));
    }
}
