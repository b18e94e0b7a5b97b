use super::declare_rule;
use super::pairs::{call_text, code, report, Wording};
use crate::analysis::flow::{Facts, PairFact, Relation};
use crate::diagnostic::Finding;

declare_rule! {
    /// ## What it does
    ///
    /// Finds a function (a message handler, an HTTP handler, a service method) that
    /// makes a database change durable (commits a transaction, or writes in
    /// autocommit) and publishes to a broker (rdkafka `send`, lapin `basic_publish`,
    /// async-nats `publish`, SQS `send_message`, redis `xadd`) as two separate steps,
    /// in either order, with no outbox. It follows calls into the crate's other
    /// functions and files.
    ///
    /// ## Why is this bad?
    ///
    /// Two systems cannot commit atomically. Publish first and the DB commit fails (or
    /// the process dies): consumers act on an event for a fact that never happened.
    /// Commit first and the process dies before the publish: the event is **lost** and
    /// downstream never hears of the change.
    ///
    /// Boundary broken: DB/broker atomicity.
    ///
    /// ## Example
    ///
    /// ```rust
    /// let mut tx = pool.begin().await?;
    /// sqlx::query("INSERT INTO orders (id, total) VALUES ($1, $2)")
    ///     .bind(order.id).bind(order.total).execute(&mut *tx).await?;
    /// tx.commit().await?;
    /// producer.send(FutureRecord::to("orders").key(&key).payload(&body), timeout).await?;
    /// ```
    ///
    /// Use instead (transactional outbox):
    ///
    /// ```rust
    /// let mut tx = pool.begin().await?;
    /// sqlx::query("INSERT INTO orders (id, total) VALUES ($1, $2)")
    ///     .bind(order.id).bind(order.total).execute(&mut *tx).await?;
    /// sqlx::query("INSERT INTO outbox (topic, key, payload) VALUES ($1, $2, $3)")
    ///     .bind("orders").bind(&key).bind(&body).execute(&mut *tx).await?;
    /// tx.commit().await?;
    /// // a relay reads `outbox`, publishes, and marks rows sent
    /// ```
    ///
    /// The relay still re-sends after a crash, so consumers must still deduplicate.
    ///
    /// ## Not reported
    ///
    /// - An outbox row written in the same transaction, and the relay that reads an
    ///   outbox table (`outbox*` or the config's `outbox_tables`) and publishes.
    /// - A relay under any table name: on a path that reads rows of a table
    ///   (`SELECT … FROM pending_events`), publishes, and then updates or deletes rows
    ///   of that table, the writes to that table (the marking, and the relay's own
    ///   maintenance of its queue table) are bookkeeping, not business changes. A
    ///   handler that reads a row, updates it and then publishes is still reported:
    ///   nothing marks the table after the publish.
    /// - Caches and locks: a Redis `SET` with an expiry (`EX`, `PX`, `set_ex`), and a
    ///   `SET … NX` whose key names a lock, a lease or a mutex.
    /// - Compensation: a write after a publish that failed on the path (in an `Err`
    ///   arm, or after a helper returned the publish's error): marking an endpoint
    ///   dead, recording the failed send.
    /// - Publishes inside a Kafka transaction (SQL there is MA009's).
    /// - Publishing with no database write on the path.
    /// - Appending to a capped stream (`XADD … MAXLEN`/`MINID`, `xadd_maxlen`): a lossy
    ///   log by design, which no delivery guarantee rests on.
    pub static MA006 = {
        code: "MA006",
        name: "dual-write",
        severity: Warning,
        concern: DualWrite,
        consequence: Duplicate,
        summary: "A function commits a DB transaction and publishes to a broker as two separate steps, with no outbox.",
        boundary: "DB/broker atomicity",
    };
}

/// A publish and a database change made durable as two steps, except a relay's
/// writes to the tables it relays (its bookkeeping: marking what it published,
/// maintaining its queue), an append to a capped stream (a lossy log by design:
/// no guarantee rests on it, SPEC §2), and a change made inside a Kafka
/// transaction (MA009 reports that it is not covered by it).
pub fn reports(p: &PairFact, facts: &Facts) -> bool {
    p.relation
        == Relation::PublishApartFromDbChange {
            change_in_broker_transaction: false,
        }
        && !facts.relay_bookkeeping(p)
        && !p.primary.capped
}

pub fn check(facts: &Facts) -> Vec<Finding> {
    report(&MA006, facts, reports, |f| {
        Wording {
            message: format!(
                "{} publishes the {} as a separate step from the database change {} ({})",
                code(&f.primary.text),
                f.primary.describe,
                code(&call_text(&f.other)),
                f.other.describe
            ),
            window: "a crash or failure between the publish and the database commit either loses the event \
                     or publishes an event for a change that never committed"
                .into(),
            help: "write the event to an outbox table in the same transaction and publish it from a relay \
                   (consumers still deduplicate)"
                .into(),
            other_label: "the database change becomes durable here, separately from the publish".into(),
        }
    })
}

super::relation_rule!(MA006);
