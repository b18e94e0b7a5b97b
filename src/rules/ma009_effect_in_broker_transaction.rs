use super::declare_rule;
use super::pairs::{code, report, Wording};
use crate::analysis::flow::{Facts, PairFact, Relation};
use crate::diagnostic::Finding;

declare_rule! {
    /// ## What it does
    ///
    /// Finds SQL writes, HTTP calls (other than GET/HEAD) and e-mails made between a
    /// Kafka producer's `begin_transaction()` and `commit_transaction()`, as if the
    /// Kafka transaction covered them.
    ///
    /// ## Why is this bad?
    ///
    /// A Kafka transaction covers Kafka records and consumer offsets only. When it
    /// aborts (a fencing error, a timeout, a crash before the commit), the records are
    /// discarded and the input is consumed again, but the SQL write, the HTTP call and
    /// the e-mail have already happened: on the retry they are applied **twice**.
    ///
    /// Boundary broken: the scope of the Kafka transaction.
    ///
    /// ## Example
    ///
    /// ```rust
    /// producer.begin_transaction()?;
    /// producer.send(FutureRecord::to("invoices").payload(&out), timeout).await?;
    /// sqlx::query("INSERT INTO invoices (id) VALUES ($1)").bind(id).execute(&pool).await?;
    /// producer.send_offsets_to_transaction(&offsets, &group, timeout)?;
    /// producer.commit_transaction(timeout)?;
    /// ```
    ///
    /// Use instead: keep only Kafka work inside the transaction, and make external
    /// effects idempotent (keyed by the input's stable id) in their own system, or
    /// move them to a consumer of the output topic.
    ///
    /// ## Not reported
    ///
    /// - Sends and `send_offsets_to_transaction` inside the transaction.
    /// - Effects before `begin_transaction` or after `commit_transaction`.
    pub static MA009 = {
        code: "MA009",
        name: "effect-in-broker-transaction",
        severity: Warning,
        concern: BrokerTransaction,
        consequence: Duplicate,
        summary: "SQL writes, HTTP calls or e-mails inside a Kafka transaction, as if the transaction covered them.",
        boundary: "scope of the Kafka transaction",
    };
}

/// Every SQL write or external call inside a broker transaction: the broker's
/// commit or abort does not cover it.
pub fn reports(p: &PairFact, _: &Facts) -> bool {
    p.relation == Relation::InBrokerTransaction
}

pub fn check(facts: &Facts) -> Vec<Finding> {
    report(&MA009, facts, reports, |f| {
        Wording {
        message: format!(
            "{} {} inside the Kafka transaction begun by {}, which does not cover it",
            code(&f.primary.text),
            f.primary.phrase,
            code(&f.other.text)
        ),
        window: "if the Kafka transaction aborts, its records are discarded and the input is reprocessed, \
                 but this effect already happened: it is applied twice"
            .into(),
        help: "keep only Kafka sends and offsets inside the transaction; make the external effect idempotent \
               by the input's stable id, or move it to a consumer of the output topic"
            .into(),
        other_label: "the Kafka transaction begins here".into(),
    }
    })
}

super::relation_rule!(MA009);
