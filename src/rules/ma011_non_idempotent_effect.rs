use super::declare_rule;
use super::pairs::{code, report, Wording};
use crate::analysis::flow::{Facts, PairFact, Relation};
use crate::diagnostic::Finding;

declare_rule! {
    /// ## What it does
    ///
    /// Finds an at-least-once handler (it acknowledges the message after the effect
    /// is durable) whose effect is not idempotent, with no dedup record anywhere on
    /// the path: an SQL `UPDATE … SET n = n + …` (the new value depends on the old),
    /// a plain `INSERT` with no conflict clause, Redis `INCR`/`INCRBY`/`LPUSH`/`RPUSH`/
    /// `XADD`, an e-mail, a payment call.
    ///
    /// ## Why is this bad?
    ///
    /// Acking after the effect is right (see MA001), but it means a crash between the
    /// effect and the ack redelivers the message. A redelivered `SET n = n + 1` counts
    /// twice, a plain insert adds a second row, an e-mail goes out twice: the effect is
    /// applied **twice**.
    ///
    /// Boundary broken: idempotency under redelivery.
    ///
    /// ## Example
    ///
    /// ```rust
    /// let mut tx = pool.begin().await?;
    /// sqlx::query("UPDATE accounts SET balance = balance + $1 WHERE id = $2")
    ///     .bind(ev.amount).bind(ev.account).execute(&mut *tx).await?;
    /// tx.commit().await?;
    /// consumer.commit_message(&msg, CommitMode::Async)?;
    /// ```
    ///
    /// Use instead:
    ///
    /// ```rust
    /// let mut tx = pool.begin().await?;
    /// let first = sqlx::query("INSERT INTO processed_events (id) VALUES ($1) ON CONFLICT DO NOTHING")
    ///     .bind(ev.id).execute(&mut *tx).await?.rows_affected() == 1;
    /// if first {
    ///     sqlx::query("UPDATE accounts SET balance = balance + $1 WHERE id = $2")
    ///         .bind(ev.amount).bind(ev.account).execute(&mut *tx).await?;
    /// }
    /// tx.commit().await?;
    /// consumer.commit_message(&msg, CommitMode::Async)?;
    /// ```
    ///
    /// ## Not reported
    ///
    /// - Upserts (`ON CONFLICT … DO UPDATE`) that set values rather than add to them
    ///   (`SET n = t.n + 1` is reported), conflict-ignoring inserts, absolute updates
    ///   (`SET status = 'paid'`), deletes.
    /// - A plain `INSERT` into a table that a `.sql` schema or migration in the tree
    ///   gives a unique business key (a `UNIQUE` column or constraint, a unique index,
    ///   a primary key the database does not generate): a repeat is refused.
    /// - Any dedup record or claim on the path (a `processed_*`/`inbox` write, an
    ///   `ON CONFLICT DO NOTHING` claim, Redis `SET NX`). On the effect's own path: a
    ///   claim in another branch (`if opened { claim } else { balance += n }`, or the
    ///   other implementation a call may reach) covers nothing.
    /// - A plain HTTP `POST`: whether it is idempotent is unknown (declare it in the
    ///   config's `[apis]` if it is not).
    /// - Effects inside a Kafka transaction (MA009's) and handlers that ack before the
    ///   effect (MA001's).
    ///
    /// ## Serverless batch handlers
    ///
    /// A function handed to the Lambda runtime whose event is an SQS, Kinesis,
    /// DynamoDB Streams or Kafka batch (`LambdaEvent<SqsEvent>`, directly or through a
    /// closure that forwards the event) receives its records on entry and acks the
    /// batch by the `Ok(..)` it returns: a non-idempotent per-record effect in it is
    /// reported as in any at-least-once handler, since a failure of any record
    /// redelivers the whole batch. Not seen: a handler returning a helper's result
    /// (the helper's `Ok` is not taken for the ack) and a closure that is itself the
    /// handler.
    pub static MA011 = {
        code: "MA011",
        name: "non-idempotent-effect",
        severity: Warning,
        concern: SideEffect,
        consequence: Duplicate,
        summary: "An at-least-once handler applies a non-idempotent effect with no dedup record.",
        boundary: "idempotency under redelivery",
    };
}

/// A non-idempotent effect durable before the ack, with no dedup record on the path
/// to make the redelivered run skip it; not one inside a Kafka transaction (an
/// aborted transaction's publish is never seen, and MA009 reports a database or
/// external effect there as not covered by it).
pub fn reports(p: &PairFact, _: &Facts) -> bool {
    p.relation
        == Relation::RepeatableEffectBeforeAck {
            dedup_on_path: false,
            in_broker_transaction: false,
        }
}

pub fn check(facts: &Facts) -> Vec<Finding> {
    report(&MA011, facts, reports, |f| {
        Wording {
        message: format!(
            "{} {}, which is not idempotent, and the message is acked after it by {} with no dedup record",
            code(&f.primary.text),
            f.primary.phrase,
            code(&f.other.text)
        ),
        window: "a crash after the effect and before the ack redelivers the message, and the effect is applied twice"
            .into(),
        help: "record the message's stable id in a dedup table in the same transaction and skip the effect \
               when it is already there, or make the effect idempotent (an upsert, an absolute update)"
            .into(),
        other_label: "the message is acked here, after the effect".into(),
    }
    })
}

super::relation_rule!(MA011);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dedup_record_on_the_path_covers_the_repeat() {
        let facts = Facts::default();
        let repeat = |dedup_on_path, in_broker_transaction| {
            super::super::pairs::fact(
                Relation::RepeatableEffectBeforeAck {
                    dedup_on_path,
                    in_broker_transaction,
                },
                (4, 9),
            )
        };
        assert!(reports(&repeat(false, false), &facts));
        assert!(!reports(&repeat(true, false), &facts));
        assert!(!reports(&repeat(false, true), &facts));
        assert!(!reports(
            &super::super::pairs::fact(
                Relation::UntestedClaimBeforeEffect {
                    on_message_path: true,
                    into_named_table: false,
                },
                (4, 9)
            ),
            &facts
        ));
    }
}
