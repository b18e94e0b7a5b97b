use std::collections::BTreeSet;

use super::declare_rule;
use super::pairs::{call_text, code, report, Wording};
use crate::analysis::flow::{Facts, PairFact, Relation};
use crate::diagnostic::Finding;

declare_rule! {
    /// ## What it does
    ///
    /// Finds a function (a message handler, an HTTP handler, a service method) that
    /// makes a database change durable (commits a transaction, writes in autocommit,
    /// or puts or updates a DynamoDB item) and publishes to a broker (rdkafka `send`, lapin `basic_publish`,
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
    ///   outbox table (`outbox*` or the config's `outbox_tables`) and publishes; also
    ///   under another name: a transaction that writes, with the business change, the
    ///   table a relay later on the same path reads, publishes and marks.
    /// - A relay under any table name: on a path that reads rows of a table
    ///   (`SELECT … FROM pending_events`), publishes, and then updates or deletes rows
    ///   of that table, the writes to that table (the marking, and the relay's own
    ///   maintenance of its queue table) are bookkeeping, not business changes. A
    ///   handler that reads a row, updates it and then publishes is still reported:
    ///   nothing marks the table after the publish.
    /// - A publish on the side where the database write failed (a dead-letter
    ///   publish in `if let Err(e) = write.await { .. }`, or in the `Err` arm of an
    ///   async block's outcome): that write changed nothing.
    /// - A relay's or tailer's progress cursor stored after the publish: a write whose
    ///   tables all hold a position by their name (`cursor`, `checkpoint`, `watermark`,
    ///   `lsn`, `offset(s)`, `progress`, or `position` in a longer name such as
    ///   `cdc_position`), as in `INSERT INTO relay_offsets … ON CONFLICT DO UPDATE`
    ///   after sending up to that sequence. A business row written with it is still
    ///   reported.
    /// - A cursor stored before the publish, set from the rows that publish sends
    ///   (the last row's id, the highest sequence): the relay's progress record runs
    ///   ahead of the send, and MA001 reports it at the cursor write. A cursor stored
    ///   before a publish of anything else is still reported.
    /// - Caches and locks: a Redis `SET` with an expiry (`EX`, `PX`, `set_ex`), and a
    ///   `SET … NX` whose key names a lock, a lease or a mutex, or that runs in a
    ///   function, type or module so named on a key it is handed (`try_lock(conn, key)`,
    ///   `LeaseManager::acquire`).
    /// - Compensation: a write after a publish that failed on the path (in an `Err`
    ///   arm, or after a helper returned the publish's error): marking an endpoint
    ///   dead, recording the failed send.
    /// - Publishes inside a Kafka transaction (SQL there is MA009's), also in a function
    ///   the crate calls only with such a transaction open (a handler behind a dispatch
    ///   table called between `begin_transaction` and `commit_transaction`).
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

/// A publish and a database change made durable as two steps, except where the
/// change is not a business change or the publish carries no guarantee.
pub fn reports(p: &PairFact, facts: &Facts) -> bool {
    let Relation::PublishApartFromDbChange {
        change_in_broker_transaction,
        change_deletes_only,
        change_after_publish,
    } = p.relation
    else {
        return false;
    };
    let cursor_stored_after = change_after_publish && progress_cursor(p, facts);
    let outbox_written_before = !change_after_publish && writes_relayed_table(p, facts);
    !change_in_broker_transaction
        && !facts.only_in_broker_transaction.contains(&p.entry)
        && !change_deletes_only
        && !relay_bookkeeping(p, facts)
        && !retired_before_publish(p, facts)
        && !cursor_stored_after
        && !outbox_written_before
        && !p.primary.capped
}

// Why each exception is not a dual write:
//
// - `change_in_broker_transaction`: the change is made inside a Kafka transaction;
//   MA009 reports that the transaction does not cover it.
// - `only_in_broker_transaction`: the entry is a function the crate calls only inside
//   a Kafka transaction; its changes are made there (MA009's), not apart from it.
// - `change_deletes_only`: deleting rows that were handled (a relay deleting what it
//   published, a queue consumed) changes no business state a consumer could miss.
// - `relay_bookkeeping`: a relay marking the rows it published.
// - `retired_before_publish`: a relay retiring the rows it read (or advancing its
//   cursor over them) before it publishes them: MA001 reports that order at the write
//   (one defect, one finding).
// - `outbox_written_before`: the change, before the publish, wrote the table the
//   entry relays (the event row beside the business change, in one transaction):
//   the publish is the relay's, the outbox pattern whatever the table is called.
// - `progress_cursor`, after the publish: a relay or tailer storing the position it
//   has published up to (docs/what-is-analyzed.md: not a business change).
// - `capped`: an append to a capped stream is a lossy log by design (docs/what-is-analyzed.md): no
//   guarantee rests on it.

/// The change of `p` writes only tables that hold a position (`Facts::cursor_tables`:
/// a block number, an LSN, an offset or a sequence it has published up to).
pub fn progress_cursor(p: &PairFact, facts: &Facts) -> bool {
    facts
        .durable_tables
        .get(&p.other.loc)
        .is_some_and(|w| !w.is_empty() && w.is_subset(&facts.cursor_tables))
}

/// The change of `p` only retires rows (deletes them, or marks them done) of tables
/// read before it, ahead of this publish, as MA001 reports: the relay's progress
/// record written too early, not a business change.
pub fn retired_before_publish(p: &PairFact, facts: &Facts) -> bool {
    let Some(written) = facts.durable_tables.get(&p.other.loc) else {
        return false;
    };
    !written.is_empty()
        && facts.pairs.iter().any(|q| {
            q.other.loc == p.primary.loc
                && q.entry == p.entry
                && super::ma001_ack_before_commit::reports(q, facts)
                && facts
                    .durable_tables
                    .get(&q.primary.loc)
                    .is_some_and(|r| written.is_subset(r))
        })
}

/// The change of `p` writes only tables its entry relays: rows read from them,
/// published, then updated or deleted (docs/what-is-analyzed.md, "Outbox"), so the change is the
/// relay's bookkeeping (marking what it published, maintaining its queue).
pub fn relay_bookkeeping(p: &PairFact, facts: &Facts) -> bool {
    relayed_and_written(p, facts)
        .is_some_and(|(relayed, written)| !written.is_empty() && written.is_subset(relayed))
}

/// The tables `p`'s entry relays, and those its change made durable.
fn relayed_and_written<'f>(
    p: &PairFact,
    facts: &'f Facts,
) -> Option<(&'f BTreeSet<String>, &'f BTreeSet<String>)> {
    Some((
        facts.relays.get(&p.entry)?,
        facts.durable_tables.get(&p.other.loc)?,
    ))
}

/// The change of `p` wrote (among others) a table its entry relays: the event
/// written into the relay's table with the business change.
pub fn writes_relayed_table(p: &PairFact, facts: &Facts) -> bool {
    relayed_and_written(p, facts).is_some_and(|(relayed, written)| !written.is_disjoint(relayed))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::pairs::fact;

    fn apart(in_broker: bool, deletes_only: bool) -> Relation {
        Relation::PublishApartFromDbChange {
            change_in_broker_transaction: in_broker,
            change_deletes_only: deletes_only,
            change_after_publish: true,
        }
    }

    #[test]
    fn a_publish_apart_from_a_business_change_is_reported() {
        assert!(reports(
            &fact(apart(false, false), (3, 5)),
            &Facts::default()
        ));
    }

    #[test]
    fn a_change_in_a_broker_transaction_is_left_to_ma009() {
        assert!(!reports(
            &fact(apart(true, false), (3, 5)),
            &Facts::default()
        ));
    }

    #[test]
    fn a_function_called_only_inside_a_broker_transaction_is_left_to_ma009() {
        let p = fact(apart(false, false), (3, 5));
        let mut facts = Facts::default();
        assert!(reports(&p, &facts));
        facts.only_in_broker_transaction.insert(p.entry.clone());
        assert!(!reports(&p, &facts));
    }

    #[test]
    fn deleting_handled_rows_is_not_a_business_change() {
        assert!(!reports(
            &fact(apart(false, true), (3, 5)),
            &Facts::default()
        ));
    }

    #[test]
    fn a_relay_marking_the_rows_it_published_is_bookkeeping() {
        let p = fact(apart(false, false), (3, 5));
        let mut facts = Facts::default();
        facts
            .durable_tables
            .insert(p.other.loc.clone(), ["outgoing".to_string()].into());
        assert!(reports(&p, &facts), "no relay known: a dual write");
        facts
            .relays
            .insert(p.entry.clone(), ["outgoing".to_string()].into());
        assert!(relay_bookkeeping(&p, &facts));
        assert!(!reports(&p, &facts));
        // A change to a table it does not relay is still a business change.
        facts.durable_tables.insert(
            p.other.loc.clone(),
            ["outgoing".to_string(), "orders".to_string()].into(),
        );
        assert!(reports(&p, &facts));
    }

    #[test]
    fn a_transaction_writing_the_relayed_table_before_the_publish_is_an_outbox() {
        let before = Relation::PublishApartFromDbChange {
            change_in_broker_transaction: false,
            change_deletes_only: false,
            change_after_publish: false,
        };
        let p = fact(before, (3, 5));
        let mut facts = Facts::default();
        facts.durable_tables.insert(
            p.other.loc.clone(),
            ["order_events".to_string(), "orders".to_string()].into(),
        );
        assert!(reports(&p, &facts), "no relay known: a dual write");
        facts
            .relays
            .insert(p.entry.clone(), ["order_events".to_string()].into());
        assert!(!reports(&p, &facts));
    }

    #[test]
    fn a_cursor_stored_after_the_publish_is_progress_not_business() {
        let p = fact(apart(false, false), (3, 5));
        let mut facts = Facts::default();
        facts
            .durable_tables
            .insert(p.other.loc.clone(), ["relay_offsets".to_string()].into());
        assert!(reports(&p, &facts), "not known as a cursor table: reported");
        facts.cursor_tables.insert("relay_offsets".to_string());
        assert!(!reports(&p, &facts));
        // Stored before the publish, the cursor runs ahead of what was published.
        let mut before = p.clone();
        before.relation = Relation::PublishApartFromDbChange {
            change_in_broker_transaction: false,
            change_deletes_only: false,
            change_after_publish: false,
        };
        assert!(reports(&before, &facts));
        // Set from the rows that publish sends, it is the relay's progress record written
        // ahead of the send: MA001's, at the cursor write (one defect, one finding).
        let mut covered = facts.clone();
        covered.pairs.push(fact(
            Relation::RowsRetiredBeforePublish {
                deletes: false,
                many_rows: true,
                outbox_table: false,
                cursor: true,
            },
            (5, 3),
        ));
        assert!(!reports(&before, &covered));
        // A business row written with it is still a business change.
        facts.durable_tables.insert(
            p.other.loc.clone(),
            ["relay_offsets".to_string(), "balances".to_string()].into(),
        );
        assert!(reports(&p, &facts));
    }

    #[test]
    fn an_append_to_a_capped_stream_carries_no_guarantee() {
        let mut p = fact(apart(false, false), (3, 5));
        let mut data = (*p.primary).clone();
        data.capped = true;
        p.primary = crate::analysis::flow::EvRef::new(data);
        assert!(!reports(&p, &Facts::default()));
    }
}
