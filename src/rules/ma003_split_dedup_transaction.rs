use super::declare_rule;
use super::pairs::{code, report, Wording};
use crate::analysis::flow::{Facts, PairFact, Relation};
use crate::diagnostic::Finding;

declare_rule! {
    /// ## What it does
    ///
    /// Finds a dedup record (an insert into a dedup table such as `processed_*`,
    /// `inbox`, `dedup*`, `idempotency*`, `done`, `*_seen` or the config's
    /// `dedup_tables`, or a claim that ignores conflicts: `ON CONFLICT DO NOTHING`,
    /// `INSERT OR IGNORE`, Redis `SET NX`) written in a different transaction from the
    /// effect it protects: two transactions, two connections or pools, a different
    /// store, or one of them in autocommit. It follows helpers in other files of the
    /// crate, so a dedup row written through `&mut *tx` in a repository function counts
    /// as written in `tx`.
    ///
    /// ## Why is this bad?
    ///
    /// Deduplication works only when the dedup record and the effect commit together.
    /// Written apart, a crash between the two commits breaks it either way: with the
    /// record first, the redelivered message is skipped as a duplicate although its
    /// effect never committed (the message is **lost**); with the effect first, the
    /// redelivery finds no record and applies the effect **twice**.
    ///
    /// Boundary broken: atomicity of dedup record and effect.
    ///
    /// ## Example
    ///
    /// ```rust
    /// sqlx::query("INSERT INTO processed_events (id) VALUES ($1) ON CONFLICT DO NOTHING")
    ///     .bind(event.id).execute(&pool).await?;          // autocommit
    /// let mut tx = pool.begin().await?;
    /// sqlx::query("UPDATE stock SET n = n - $1 WHERE sku = $2")
    ///     .bind(event.qty).bind(&event.sku).execute(&mut *tx).await?;
    /// tx.commit().await?;
    /// ```
    ///
    /// Use instead:
    ///
    /// ```rust
    /// let mut tx = pool.begin().await?;
    /// let claimed = sqlx::query("INSERT INTO processed_events (id) VALUES ($1) ON CONFLICT DO NOTHING")
    ///     .bind(event.id).execute(&mut *tx).await?.rows_affected() == 1;
    /// if claimed {
    ///     sqlx::query("UPDATE stock SET n = n - $1 WHERE sku = $2")
    ///         .bind(event.qty).bind(&event.sku).execute(&mut *tx).await?;
    /// }
    /// tx.commit().await?;
    /// ```
    ///
    /// ## Not reported
    ///
    /// - Both writes in one transaction, also through helpers that take `&mut *tx`.
    /// - A single statement that claims in a CTE and applies the effect
    ///   (`WITH first AS (INSERT … ON CONFLICT DO NOTHING RETURNING id) INSERT …`).
    /// - Writes that bypass a transaction that was begun and never used: that is
    ///   MA013 (discarded-transaction), which covers them.
    /// - Writes whose connection the analysis cannot tell (a transaction passed in from
    ///   an unknown caller).
    pub static MA003 = {
        code: "MA003",
        name: "split-dedup-transaction",
        severity: Error,
        concern: DedupRecord,
        consequence: Duplicate,
        summary: "The dedup record and the effect are written in different transactions, connections, or with one in autocommit.",
        boundary: "atomicity of dedup record and effect",
    };
}

/// The dedup record and the effect commit apart: each becomes durable in a known
/// place, and not in the one transaction. A guarded effect is its own dedup; an
/// outbox row is the effect's announcement, not the effect; while a transaction
/// begun on the path is still unused, the split is the discarded transaction's.
pub fn reports(p: &PairFact, _: &Facts) -> bool {
    matches!(
        p.relation,
        Relation::DedupAndEffect {
            dedup,
            effect,
            same_transaction: false,
            effect_guarded: false,
            effect_to_outbox: false,
            idle_transaction_open: false,
        } if dedup.known() && effect.known()
    )
}

pub fn check(facts: &Facts) -> Vec<Finding> {
    report(&MA003, facts, reports, |f| Wording {
        message: format!(
            "dedup record {} ({}) commits apart from the effect {} ({})",
            code(&f.primary.text),
            f.primary.describe,
            code(&f.other.text),
            f.other.describe
        ),
        window:
            "a crash between the two commits either skips the redelivered message as a duplicate \
                 although its effect never committed (message lost) or applies the effect twice"
                .into(),
        help: "write the dedup record and the effect in the same transaction, and commit once"
            .into(),
        other_label: format!("the effect ({}) commits separately here", f.other.describe),
    })
}

super::relation_rule!(MA003);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::flow::Durability::{Autocommit, Transaction, Unknown};

    fn split(dedup: crate::analysis::flow::Durability, same: bool) -> PairFact {
        super::super::pairs::fact(
            Relation::DedupAndEffect {
                dedup,
                effect: Transaction,
                same_transaction: same,
                effect_guarded: false,
                effect_to_outbox: false,
                idle_transaction_open: false,
            },
            (3, 7),
        )
    }

    #[test]
    fn apart_only_where_both_commits_are_known_and_differ() {
        let facts = Facts::default();
        assert!(reports(&split(Autocommit, false), &facts));
        assert!(reports(&split(Transaction, false), &facts));
        assert!(!reports(&split(Transaction, true), &facts));
        // A dedup record written into a transaction a caller handed in.
        assert!(!reports(&split(Unknown, false), &facts));
        let mut guarded = split(Autocommit, false);
        if let Relation::DedupAndEffect { effect_guarded, .. } = &mut guarded.relation {
            *effect_guarded = true;
        }
        assert!(!reports(&guarded, &facts));
        let findings = check(&Facts {
            pairs: vec![split(Autocommit, false), split(Transaction, true)],
            ..Facts::default()
        });
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].span.line, 3);
    }
}
