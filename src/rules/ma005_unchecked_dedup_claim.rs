use super::declare_rule;
use super::pairs::{code, report, Wording};
use crate::analysis::flow::{Facts, PairFact, Relation};
use crate::diagnostic::Finding;

declare_rule! {
    /// ## What it does
    ///
    /// Finds a dedup claim (`INSERT … ON CONFLICT DO NOTHING`, `INSERT OR IGNORE`,
    /// Redis `SET NX`) whose result is thrown away (the statement's value is discarded
    /// or bound to a name that is never read), or a plain insert into a dedup table
    /// (refused on a repeat by its unique key) whose error is thrown away (`let _ =
    /// claim.await`, `.ok()`, a binding never read), while the effect runs after it anyway:
    /// in a message handler, and in any function when the claim goes into a table
    /// named as a dedup record (`processed_*`, `inbox`, `idempotency*`, the config's
    /// `dedup_tables`).
    ///
    /// ## Why is this bad?
    ///
    /// A claim only deduplicates if its result decides whether the effect runs: zero
    /// rows affected (or no `RETURNING` row, or `false` from `SET NX`) means the
    /// message was handled before. Ignoring it runs the effect on every redelivery: the
    /// effect is applied **twice**, and the dedup table gives a false sense of safety.
    ///
    /// Boundary broken: idempotency (the claim must gate the effect).
    ///
    /// ## Example
    ///
    /// ```rust
    /// sqlx::query("INSERT INTO processed_events (id) VALUES ($1) ON CONFLICT DO NOTHING")
    ///     .bind(event.id).execute(&mut *tx).await?;
    /// sqlx::query("UPDATE accounts SET balance = balance + $1 WHERE id = $2")
    ///     .bind(event.amount).bind(event.account).execute(&mut *tx).await?;
    /// ```
    ///
    /// Use instead:
    ///
    /// ```rust
    /// let claimed = sqlx::query("INSERT INTO processed_events (id) VALUES ($1) ON CONFLICT DO NOTHING")
    ///     .bind(event.id).execute(&mut *tx).await?;
    /// if claimed.rows_affected() == 0 {
    ///     return Ok(()); // a redelivery: already applied
    /// }
    /// sqlx::query("UPDATE accounts SET balance = balance + $1 WHERE id = $2")
    ///     .bind(event.amount).bind(event.account).execute(&mut *tx).await?;
    /// ```
    ///
    /// ## Not reported
    ///
    /// - A claim whose result is tested, matched, bound and read, or returned to the
    ///   caller (a helper `async fn claim(..) -> Result<bool>`).
    /// - The single-statement CTE form that claims and applies the effect together.
    /// - A claim with no effect after it.
    pub static MA005 = {
        code: "MA005",
        name: "unchecked-dedup-claim",
        severity: Error,
        concern: DedupRecord,
        consequence: Duplicate,
        summary: "The dedup claim's result is ignored and the effect runs anyway.",
        boundary: "idempotency: the claim must gate the effect",
    };
}

/// A claim whose result is still untested when an effect runs, in a message
/// handler, or in any function when the claim goes into a table named as a dedup
/// record (docs/what-is-analyzed.md: a claim there whose result is ignored is a bug wherever it is
/// written; a claim recognized only by its shape is one off a message path).
pub fn reports(p: &PairFact, _: &Facts) -> bool {
    matches!(
        p.relation,
        Relation::UntestedClaimBeforeEffect {
            on_message_path,
            into_named_table,
        } if on_message_path || into_named_table
    )
}

pub fn check(facts: &Facts) -> Vec<Finding> {
    report(&MA005, facts, reports, |f| {
        Wording {
        message: format!(
            "the result of the dedup claim {} ({}) is ignored and {} runs anyway",
            code(&f.primary.text),
            f.primary.describe,
            code(&f.other.text)
        ),
        window: "on a redelivery the claim inserts nothing, but the effect still runs: it is applied twice".into(),
        help: "test the claim's result (rows affected, the RETURNING row, the SET NX reply) and skip the effect \
               when the message was already handled"
            .into(),
        other_label: format!("the effect ({}) runs whether or not the claim succeeded", f.other.describe),
    }
    })
}

super::relation_rule!(MA005);
