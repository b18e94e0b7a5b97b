use super::declare_rule;
use super::pairs::{code, label};
use crate::diagnostic::Finding;
use crate::ir::{Crate, EventKind};

declare_rule! {
    /// ## What it does
    ///
    /// Finds a transaction that is begun and then never used: `pool.begin().await?;` as
    /// a bare statement, `let _tx = pool.begin()…` never touched again, or a
    /// transaction that is only committed while the writes go to the pool or another
    /// connection. Applies to any function, not only message handlers.
    ///
    /// ## Why is this bad?
    ///
    /// The code reads as if its writes were atomic, but they run in autocommit, one
    /// by one. A crash or an error between two of them leaves half of the change
    /// committed: a dedup record without its effect (a message **lost** on redelivery),
    /// or an effect without its dedup record (applied **twice**), or a debit without its
    /// credit.
    ///
    /// Boundary broken: transaction scope.
    ///
    /// ## Example
    ///
    /// ```rust
    /// let tx = pool.begin().await?;
    /// sqlx::query("INSERT INTO processed (id) VALUES ($1)").bind(id).execute(&pool).await?;
    /// sqlx::query("UPDATE stock SET n = n - 1 WHERE sku = $1").bind(sku).execute(&pool).await?;
    /// tx.commit().await?;
    /// ```
    ///
    /// Use instead:
    ///
    /// ```rust
    /// let mut tx = pool.begin().await?;
    /// sqlx::query("INSERT INTO processed (id) VALUES ($1)").bind(id).execute(&mut *tx).await?;
    /// sqlx::query("UPDATE stock SET n = n - 1 WHERE sku = $1").bind(sku).execute(&mut *tx).await?;
    /// tx.commit().await?;
    /// ```
    ///
    /// ## Not reported
    ///
    /// - A transaction used for at least one query (a read counts), passed to a helper,
    ///   stored in a struct or returned.
    /// - `BEGIN` issued on a connection (`conn.execute("BEGIN", [])`): the connection
    ///   itself is the transaction.
    pub static MA013 = {
        code: "MA013",
        name: "discarded-transaction",
        severity: Error,
        concern: DedupRecord,
        consequence: Duplicate,
        summary: "A transaction is begun and then dropped or never used, so the writes run in autocommit.",
        boundary: "transaction scope",
    };
}

pub fn check(krate: &Crate) -> Vec<Finding> {
    let mut out = Vec::new();
    for f in &krate.functions {
        for e in f.body.each_event() {
            if let EventKind::Begin {
                fresh: true,
                used: false,
                ..
            } = &e.kind
            {
                out.push(MA013.finding(
                    &e.loc,
                    format!(
                            "the transaction begun by {} is never used: the writes in {} run in autocommit, one by one",
                            code(&e.text),
                            code(&f.name)
                        ),
                    "a crash or error between two writes leaves part of the change committed: \
                                 the first writes stay without the rest (an order without its lines, \
                                 a dedup record without its effect)"
                            .into(),
                    vec![label(&f.loc, "in this function")],
                    "run the queries on the transaction (sqlx `.execute(&mut *tx)`, tokio-postgres \
                               `tx.execute(..)`), or drop the `begin` if no atomicity is needed"
                            .into(),
                ));
            }
        }
    }
    out
}

/// MA013 as the dispatcher runs it ([`super::Rule`]).
pub struct Check;

impl super::Rule for Check {
    fn meta(&self) -> &'static super::RuleMeta {
        &MA013
    }

    fn check_crate(&self, cx: &super::CrateInput) -> Vec<Finding> {
        check(cx.krate)
    }
}
