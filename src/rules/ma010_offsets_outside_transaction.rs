use super::declare_rule;
use super::pairs::{code, report, Wording};
use crate::analysis::flow::{Facts, PairFact, Relation};
use crate::diagnostic::Finding;

declare_rule! {
    /// ## What it does
    ///
    /// Finds consume-transform-produce code with a transactional producer
    /// (`begin_transaction` … `commit_transaction`) whose consumer commits or stores
    /// its own offsets (`commit_message`, `commit`, `commit_consumer_state`,
    /// `store_offset*`) instead of handing them to the transaction with
    /// `send_offsets_to_transaction`.
    ///
    /// ## Why is this bad?
    ///
    /// Exactly-once consume-transform-produce needs the output records and the input
    /// offsets to commit atomically. Committed by the consumer, the offsets move
    /// independently: commit them before the transaction commits and a crash **loses**
    /// the input; after it, and a crash re-processes the input and produces the output
    /// **twice**.
    ///
    /// Boundary broken: atomicity of output and progress.
    ///
    /// ## Example
    ///
    /// ```rust
    /// producer.begin_transaction()?;
    /// producer.send(FutureRecord::to("out").payload(&result), timeout).await?;
    /// producer.commit_transaction(timeout)?;
    /// consumer.commit_message(&msg, CommitMode::Async)?;
    /// ```
    ///
    /// Use instead:
    ///
    /// ```rust
    /// producer.begin_transaction()?;
    /// producer.send(FutureRecord::to("out").payload(&result), timeout).await?;
    /// let mut offsets = TopicPartitionList::new();
    /// offsets.add_partition_offset(msg.topic(), msg.partition(), Offset::Offset(msg.offset() + 1))?;
    /// producer.send_offsets_to_transaction(&offsets, &consumer.group_metadata().unwrap(), timeout)?;
    /// producer.commit_transaction(timeout)?;
    /// ```
    ///
    /// This takes precedence over MA001 for the same commit.
    ///
    /// ## Not reported
    ///
    /// - Offsets handed to the transaction (`send_offsets_to_transaction`), and a
    ///   consumer that commits nothing itself.
    /// - A consumer commit on a path with no transactional producer (the order of the
    ///   commit and the effects there is MA001's).
    pub static MA010 = {
        code: "MA010",
        name: "offsets-outside-transaction",
        severity: Error,
        concern: BrokerTransaction,
        consequence: Duplicate,
        summary: "Consume-transform-produce with a transactional producer, but the consumer commits offsets itself.",
        boundary: "atomicity of output and progress",
    };
}

/// A consumer offset commit on a path with a transactional producer: the offsets
/// belong in the producer's transaction, before or after it begins.
pub fn reports(p: &PairFact, _: &Facts) -> bool {
    p.relation == Relation::OffsetsBesideBrokerTransaction
}

pub fn check(facts: &Facts) -> Vec<Finding> {
    report(&MA010, facts, reports, |f| {
        Wording {
        message: format!(
            "{} commits consumer offsets outside the producer's transaction begun by {}",
            code(&f.primary.text),
            code(&f.other.text)
        ),
        window: "output and offsets commit separately: a crash between them loses the input or produces \
                 the output twice"
            .into(),
        help: "send the offsets with `producer.send_offsets_to_transaction(..)` before `commit_transaction` \
               and do not commit them from the consumer"
            .into(),
        other_label: "the producer's transaction begins here".into(),
    }
    })
}

super::relation_rule!(MA010);
