//! SQL inside string literals: what a statement does, from sqlparser. A string that
//! does not parse is `SqlKind::Unknown`, never a guess. So is a string longer than
//! [`MAX_SQL_BYTES`]: its syntax tree could take hundreds of times its size in memory.

use sqlparser::ast::{
    Expr, FromTable, ObjectName, OnConflictAction, OnInsert, SetExpr, SqliteOnConflict, Statement,
    TableFactor, TableObject,
};
use sqlparser::dialect::{Dialect, GenericDialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;

use std::cell::RefCell;
use std::collections::HashMap;

use crate::ir::{SqlFacts, SqlKind};

mod schema;

pub(super) use schema::keyed_tables;
pub use schema::unique_keyed_tables;

/// Longest SQL text parsed. A 10 MB `INSERT ... VALUES (1),(1),...` literal took
/// 4.6 GB to parse; real statements in code are a few kilobytes.
pub const MAX_SQL_BYTES: usize = 64 * 1024;

/// Facts about the statements in `sql` (several statements: the strongest kind wins).
pub fn facts(sql: &str) -> SqlFacts {
    facts_of(sql, true)
}

/// Facts about the start of a statement that the code completes later
/// (`QueryBuilder::new("INSERT INTO t (a, b) ")` before `push_values` and an
/// `ON CONFLICT` clause): what parses, never a guess by its leading words, since the
/// rest may make the write idempotent.
pub fn prefix_facts(sql: &str) -> SqlFacts {
    facts_of(sql, false)
}

/// Text of SQL remembered per thread, at most: the same statement written in many
/// places (or in one generated function ten thousand times) is parsed once. Past the
/// bound the memo starts again, so memory stays bounded whatever the input.
const MEMO_BYTES: usize = 4 * 1024 * 1024;

#[derive(Default)]
struct Memo {
    complete: HashMap<Box<str>, SqlFacts>,
    prefix: HashMap<Box<str>, SqlFacts>,
    bytes: usize,
}

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// `parse_facts`, remembered: it is a pure function of its arguments.
fn facts_of(sql: &str, complete: bool) -> SqlFacts {
    let known = MEMO.with(|m| {
        let m = m.borrow();
        let map = if complete { &m.complete } else { &m.prefix };
        map.get(sql).cloned()
    });
    if let Some(facts) = known {
        return facts;
    }
    let facts = parse_facts(sql, complete);
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.bytes + sql.len() > MEMO_BYTES {
            *m = Memo::default();
        }
        m.bytes += sql.len();
        let map = if complete {
            &mut m.complete
        } else {
            &mut m.prefix
        };
        map.insert(sql.into(), facts.clone());
    });
    facts
}

thread_local! {
    /// Set while the SQL parser runs: a panic there is the parser's, not ours.
    static IN_PARSER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `Parser::parse_sql`, with a panic inside the parser (a dialect that unwraps on
/// some text, such as SQLite's `MATCH` at the end of a statement) read as text that
/// does not parse: the statement gets no facts and the file is still analyzed. The
/// parser's panic message is not printed (the process's panic hook stays silent for
/// it; any other panic is printed as before).
fn parse_quietly(d: &dyn Dialect, sql: &str) -> Option<Vec<Statement>> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_PARSER.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    IN_PARSER.with(|p| p.set(true));
    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Parser::parse_sql(d, sql).ok()
    }));
    IN_PARSER.with(|p| p.set(false));
    parsed.ok().flatten()
}

fn parse_facts(sql: &str, complete: bool) -> SqlFacts {
    if sql.len() > MAX_SQL_BYTES {
        return keyword_fallback(sql, complete);
    }
    let dialects: [&dyn Dialect; 4] = [
        &PostgreSqlDialect {},
        &SQLiteDialect {},
        &MySqlDialect {},
        &GenericDialect {},
    ];
    for d in dialects {
        if let Some(stmts) = parse_quietly(d, sql) {
            if stmts.is_empty() {
                break;
            }
            let mut out = SqlFacts::unknown();
            out.kind = SqlKind::Read;
            for s in &stmts {
                merge(&mut out, statement(s));
            }
            return out;
        }
    }
    if let Some((insert, if_not_exists)) = cql_insert(sql) {
        let mut f = parse_facts(&insert, complete);
        if f.kind == SqlKind::Write && f.verb == "INSERT" {
            f.ignores_conflict |= if_not_exists;
            return f;
        }
    }
    keyword_fallback(sql, complete)
}

/// A CQL insert's clauses that no SQL dialect has, at its end: `IF NOT EXISTS` (a
/// lightweight transaction: the row is written only by the first writer, so the
/// insert ignores conflicts, a claim like `ON CONFLICT DO NOTHING`) and then
/// `USING TTL …` / `USING TIMESTAMP …` (how long the row lives: nothing to its
/// effect). The insert without them, and whether `IF NOT EXISTS` was there; `None`
/// when the text is no `INSERT` or has neither clause. (Text-level: sqlparser
/// reads no CQL; the rest of the statement is still parsed as any SQL.)
fn cql_insert(sql: &str) -> Option<(String, bool)> {
    let norm = sql
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(';')
        .trim_end()
        .to_string();
    let upper = norm.to_ascii_uppercase();
    if !upper.starts_with("INSERT ") {
        return None;
    }
    let mut end = upper.len();
    let using = [" USING TTL ", " USING TIMESTAMP "]
        .iter()
        .filter_map(|k| upper.rfind(k))
        .min();
    // Only a clause after the values (no parenthesis nor quote after it).
    if let Some(u) = using.filter(|&u| !upper[u..].contains([')', '\'', '"'])) {
        end = u;
    }
    let if_not_exists = upper[..end].ends_with(" IF NOT EXISTS");
    if if_not_exists {
        end -= " IF NOT EXISTS".len();
    }
    (end < upper.len()).then(|| (norm[..end].to_string(), if_not_exists))
}

fn rank(k: &SqlKind) -> u8 {
    match k {
        SqlKind::Read => 0,
        SqlKind::Unknown => 1,
        SqlKind::Begin | SqlKind::Commit | SqlKind::Rollback => 2,
        SqlKind::Write => 3,
    }
}

fn merge(acc: &mut SqlFacts, f: SqlFacts) {
    if rank(&f.kind) > rank(&acc.kind) {
        acc.kind = f.kind.clone();
        acc.verb = f.verb.clone();
    }
    for t in f.tables {
        if !acc.tables.contains(&t) {
            acc.tables.push(t);
        }
    }
    acc.ignores_conflict |= f.ignores_conflict;
    acc.upsert |= f.upsert;
    acc.guarded |= f.guarded;
    acc.self_referencing |= f.self_referencing;
    acc.columns = acc.columns.max(f.columns);
    acc.many_rows |= f.many_rows;
    acc.returning |= f.returning;
    acc.marks_done |= f.marks_done;
    acc.clears_done |= f.clears_done;
    acc.sweeps_by_age |= f.sweeps_by_age;
}

fn table_name(name: &ObjectName) -> String {
    let full = name.to_string();
    let last = full.rsplit('.').next().unwrap_or(&full);
    last.trim_matches('"')
        .trim_matches('`')
        .to_ascii_lowercase()
}

fn factor_name(f: &TableFactor) -> Option<String> {
    match f {
        TableFactor::Table { name, .. } => Some(table_name(name)),
        _ => None,
    }
}

fn write(verb: &str, tables: Vec<String>) -> SqlFacts {
    SqlFacts {
        kind: SqlKind::Write,
        verb: verb.into(),
        tables,
        ..SqlFacts::unknown()
    }
}

/// A value that names no parameter: a literal, or a function of none (`now()`,
/// `CURRENT_TIMESTAMP`, `gen_random_uuid()`). An expression over one (an expiry,
/// `now() + interval '30 seconds'`) is not: a lease's row, not a claim's.
fn is_constant(e: &Expr) -> bool {
    if !matches!(e, Expr::Value(_) | Expr::Function(_) | Expr::Identifier(_)) {
        return false;
    }
    let text = e.to_string();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let named = matches!(c, ':' | '@') && chars.peek().is_some_and(|n| n.is_ascii_alphabetic());
        if c == '$' || c == '?' || named {
            return false;
        }
    }
    true
}

/// Statements that change no rows: settings and plans, and schema statements (a
/// service's `CREATE TABLE IF NOT EXISTS` at start-up, a SQLite `PRAGMA`), which are
/// no message's effect.
fn changes_no_rows(s: &Statement) -> bool {
    matches!(
        s,
        Statement::Set(_)
            | Statement::ShowVariable { .. }
            | Statement::Explain { .. }
            | Statement::CreateTable(_)
            | Statement::CreateIndex(_)
            | Statement::CreateView { .. }
            | Statement::AlterTable { .. }
            | Statement::AlterIndex { .. }
            | Statement::Drop { .. }
            | Statement::CreateExtension { .. }
            | Statement::Comment { .. }
            | Statement::CreateSchema { .. }
            | Statement::CreateFunction(_)
            | Statement::CreateTrigger(_)
            | Statement::Grant { .. }
            | Statement::CreateSequence { .. }
            | Statement::CreateType { .. }
            | Statement::Pragma { .. }
    )
}

fn statement(s: &Statement) -> SqlFacts {
    match s {
        Statement::Insert(i) => {
            let tables = match &i.table {
                TableObject::TableName(n) => vec![table_name(n)],
                _ => vec![],
            };
            let mut f = write("INSERT", tables);
            f.ignores_conflict = i.ignore
                || matches!(i.or, Some(SqliteOnConflict::Ignore))
                || matches!(&i.on, Some(OnInsert::OnConflict(c)) if matches!(c.action, OnConflictAction::DoNothing));
            f.upsert = matches!(i.or, Some(SqliteOnConflict::Replace))
                || i.replace_into
                || matches!(&i.on, Some(OnInsert::DuplicateKeyUpdate(_)))
                || matches!(&i.on, Some(OnInsert::OnConflict(c)) if matches!(c.action, OnConflictAction::DoUpdate(_)));
            f.returning = i.returning.is_some();
            // The columns it writes data to: in one `VALUES` row, a column set to a
            // constant (`'orders'`, `now()`) carries none of the message's data.
            f.columns = match i.source.as_ref().map(|q| q.body.as_ref()) {
                Some(SetExpr::Values(v))
                    if v.rows.len() == 1 && v.rows[0].len() == i.columns.len() =>
                {
                    v.rows[0].iter().filter(|e| !is_constant(e)).count()
                }
                _ => i.columns.len(),
            };
            // (`SELECT $1, now()` without `FROM` is one row.)
            f.many_rows = i.source.as_ref().is_some_and(|q| match q.body.as_ref() {
                SetExpr::Values(v) => v.rows.len() > 1,
                SetExpr::Select(s) => !s.from.is_empty(),
                _ => true,
            });
            // `ON CONFLICT (k) DO UPDATE SET n = t.n + 1` (or MySQL's `ON DUPLICATE KEY
            // UPDATE n = n + 1`): a redelivered row counts twice (docs/what-is-analyzed.md,
            // non-idempotent effects).
            let update = match &i.on {
                Some(OnInsert::OnConflict(c)) => match &c.action {
                    OnConflictAction::DoUpdate(u) => u.assignments.as_slice(),
                    _ => &[],
                },
                Some(OnInsert::DuplicateKeyUpdate(a)) => a.as_slice(),
                _ => &[],
            };
            f.self_referencing = update.iter().any(|a| {
                let target = a.target.to_string().to_ascii_lowercase();
                let col = target.rsplit('.').next().unwrap_or(&target).to_string();
                increments(&a.value, &col)
            });
            // `INSERT … SELECT … WHERE NOT EXISTS (…)`: inserts only what is not there.
            if i.source
                .as_ref()
                .is_some_and(|q| q.to_string().to_ascii_uppercase().contains("NOT EXISTS"))
            {
                f.upsert = true;
            }
            f
        }
        Statement::Update {
            table,
            returning,
            assignments,
            selection,
            ..
        } => {
            let mut f = write("UPDATE", factor_name(&table.relation).into_iter().collect());
            f.returning = returning.is_some();
            f.many_rows = selection.as_ref().is_none_or(names_a_set);
            f.marks_done = marks_done(assignments);
            // `SET n = n + $1` / `n = n - $1`: applied twice, it counts twice.
            // (`GREATEST(n, $1)`, `COALESCE(n, $1)` are idempotent.)
            f.self_referencing = assignments.iter().any(|a| {
                let target = a.target.to_string().to_ascii_lowercase();
                let col = target.rsplit('.').next().unwrap_or(&target).to_string();
                increments(&a.value, &col)
            });
            f
        }
        Statement::Delete(d) => {
            let from = match &d.from {
                FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
            };
            let mut tables: Vec<String> = d.tables.iter().map(table_name).collect();
            tables.extend(from.iter().filter_map(|t| factor_name(&t.relation)));
            let mut f = write("DELETE", tables);
            f.returning = d.returning.is_some();
            f.clears_done = d.selection.as_ref().is_some_and(keeps_only_done);
            f.sweeps_by_age = d.selection.as_ref().is_some_and(compares_with_now);
            f.many_rows = d.selection.as_ref().is_none_or(names_a_set);
            f
        }
        Statement::Merge { .. } | Statement::Truncate { .. } | Statement::Copy { .. } => {
            write("WRITE", vec![])
        }
        Statement::Query(q) => {
            // A data-modifying body (`WITH … INSERT`) is a write; a claim made in a CTE
            // (`WITH first AS (INSERT … ON CONFLICT DO NOTHING RETURNING id) INSERT …`)
            // guards the statement's own effect.
            let claims_in_cte = q.with.as_ref().is_some_and(|w| {
                w.cte_tables.iter().any(|c| match c.query.body.as_ref() {
                    SetExpr::Insert(ins) => statement(ins).ignores_conflict,
                    _ => false,
                })
            });
            match q.body.as_ref() {
                SetExpr::Insert(inner) | SetExpr::Update(inner) => {
                    let mut f = statement(inner);
                    f.guarded = claims_in_cte;
                    f
                }
                // A read: the tables it reads rows from (what a relay publishes).
                SetExpr::Select(sel) => SqlFacts {
                    kind: SqlKind::Read,
                    tables: sel
                        .from
                        .iter()
                        .filter_map(|t| factor_name(&t.relation))
                        .collect(),
                    ..SqlFacts::unknown()
                },
                _ => SqlFacts {
                    kind: SqlKind::Read,
                    ..SqlFacts::unknown()
                },
            }
        }
        Statement::StartTransaction { .. } => SqlFacts {
            kind: SqlKind::Begin,
            verb: "BEGIN".into(),
            ..SqlFacts::unknown()
        },
        Statement::Commit { .. } => SqlFacts {
            kind: SqlKind::Commit,
            verb: "COMMIT".into(),
            ..SqlFacts::unknown()
        },
        Statement::Rollback { .. } => SqlFacts {
            kind: SqlKind::Rollback,
            verb: "ROLLBACK".into(),
            ..SqlFacts::unknown()
        },
        s if changes_no_rows(s) => SqlFacts {
            kind: SqlKind::Read,
            ..SqlFacts::unknown()
        },
        _ => SqlFacts::unknown(),
    }
}

/// `SET` assignments that mark rows done: a column named for what was done (`sent`,
/// `sent_at`, `processed`, `published_at`) or a status set to such a word, and no
/// column that records a failure (an error, an attempt count, a retry time).
fn marks_done(assignments: &[sqlparser::ast::Assignment]) -> bool {
    let pairs: Vec<(String, String)> = assignments
        .iter()
        .map(|a| (a.target.to_string(), a.value.to_string()))
        .collect();
    sets_done(&pairs)
}

/// Column = value assignments, as texts (from SQL, or from a query DSL's
/// `.set(col.eq(value))`), that mark rows done, as [`marks_done`] says.
pub(crate) fn sets_done(pairs: &[(String, String)]) -> bool {
    let mut done = false;
    for (target, value) in pairs {
        let col = column_words(target);
        if col.iter().any(|w| FAILURE.contains(&w.as_str())) {
            return false;
        }
        let value = value.to_ascii_lowercase();
        let literal = value.trim_matches(|c| c == '\'' || c == '"');
        let status = col.iter().any(|w| w == "status" || w == "state");
        done |=
            col.iter().any(|w| DONE.contains(&w.as_str())) || (status && DONE.contains(&literal));
    }
    done
}

/// Words that say a row's work was done: a column named for it (`sent`, `sent_at`,
/// `processed`) or a status value (`'complete'`).
const DONE: &[&str] = &[
    "sent",
    "published",
    "processed",
    "delivered",
    "dispatched",
    "relayed",
    "done",
    "complete",
    "completed",
    "acked",
];

/// Words of a column that records a failure.
const FAILURE: &[&str] = &[
    "error", "errors", "attempt", "attempts", "retry", "retries", "failed", "failure", "next",
];

/// A column's last name, split at `_`, lower case (`o.sent_at` → `sent`, `at`).
fn column_words(s: &str) -> Vec<String> {
    s.to_ascii_lowercase()
        .rsplit('.')
        .next()
        .unwrap_or_default()
        .split('_')
        .map(str::to_string)
        .collect()
}

/// A `WHERE` that keeps only rows marked done: one of its `AND`ed terms is a status
/// equal to a done word (`status = 'complete'`), a done flag (`sent`, `sent = true`,
/// `processed IS TRUE`) or a done time that is set (`sent_at IS NOT NULL`). A term
/// under `OR` or `NOT` keeps other rows too.
/// Whether a condition compares something with the current time (`<`, `<=`, `>`,
/// `>=` with `now()`, `current_timestamp`, `unixepoch()`, `datetime('now', ..)` on
/// either side).
fn compares_with_now(e: &sqlparser::ast::Expr) -> bool {
    use sqlparser::ast::{BinaryOperator as B, Expr};
    const NOW: [&str; 6] = [
        "now()",
        "current_timestamp",
        "unixepoch(",
        "datetime('now'",
        "localtimestamp",
        "current_date",
    ];
    let mentions_now = |x: &Expr| {
        let t = x.to_string().to_ascii_lowercase();
        NOW.iter().any(|n| t.contains(n))
    };
    match e {
        Expr::BinaryOp { left, op, right } => match op {
            B::And | B::Or => compares_with_now(left) || compares_with_now(right),
            B::Lt | B::LtEq | B::Gt | B::GtEq => mentions_now(left) || mentions_now(right),
            _ => false,
        },
        Expr::Nested(inner) => compares_with_now(inner),
        _ => false,
    }
}

fn keeps_only_done(e: &sqlparser::ast::Expr) -> bool {
    use sqlparser::ast::{BinaryOperator, Expr, Value};
    let done_col = |c: &Expr| {
        matches!(c, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) && {
            let col = column_words(&c.to_string());
            col.iter().any(|w| DONE.contains(&w.as_str()))
                && !col.iter().any(|w| FAILURE.contains(&w.as_str()))
        }
    };
    let status_col = |c: &Expr| {
        matches!(c, Expr::Identifier(_) | Expr::CompoundIdentifier(_))
            && column_words(&c.to_string())
                .iter()
                .any(|w| w == "status" || w == "state")
    };
    let done_word = |v: &Expr| match v {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => DONE.contains(&s.to_ascii_lowercase().as_str()),
            _ => false,
        },
        _ => false,
    };
    let is_true = |v: &Expr| matches!(v, Expr::Value(v) if v.value == Value::Boolean(true));
    match e {
        Expr::Nested(inner) => keeps_only_done(inner),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => keeps_only_done(left) || keeps_only_done(right),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } => {
            let pair =
                |c: &Expr, v: &Expr| (status_col(c) && done_word(v)) || (done_col(c) && is_true(v));
            pair(left, right) || pair(right, left)
        }
        Expr::IsTrue(c) | Expr::IsNotNull(c) => done_col(c),
        c => done_col(c),
    }
}

/// A `WHERE` that picks its rows from a set of keys (`id = ANY($1)`, `id IN (…)`,
/// `id IN (SELECT …)`), with anything else ANDed: many rows at once.
fn names_a_set(e: &sqlparser::ast::Expr) -> bool {
    use sqlparser::ast::{BinaryOperator, Expr};
    match e {
        Expr::Nested(inner) => names_a_set(inner),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => names_a_set(left) || names_a_set(right),
        Expr::InList { negated, .. }
        | Expr::InSubquery { negated, .. }
        | Expr::InUnnest { negated, .. } => !negated,
        Expr::AnyOp { .. } => true,
        Expr::BinaryOp { right, .. } => {
            matches!(right.as_ref(), Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("any"))
        }
        _ => false,
    }
}

/// `col + …`, `… + col`, `col - …` (also nested: `col + $1 + $2`).
fn increments(e: &sqlparser::ast::Expr, col: &str) -> bool {
    use sqlparser::ast::{BinaryOperator, Expr};
    let is_col = |e: &Expr| match e {
        Expr::Identifier(i) => i.value.eq_ignore_ascii_case(col),
        // `EXCLUDED.n` is the row being inserted, not the stored one.
        Expr::CompoundIdentifier(v) => {
            v.last().is_some_and(|i| i.value.eq_ignore_ascii_case(col))
                && !v[0].value.eq_ignore_ascii_case("excluded")
        }
        _ => false,
    };
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Plus,
            right,
        } => is_col(left) || is_col(right) || increments(left, col) || increments(right, col),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Minus,
            ..
        } => is_col(left) || increments(left, col),
        Expr::Nested(inner) => increments(inner, col),
        _ => false,
    }
}

/// Without a parse only transaction control (`BEGIN`, `COMMIT`, `ROLLBACK`), a
/// plain `SELECT … FROM t` (a read of `t`: it can only make a relay of `t` known,
/// which silences, never reports) and the leading words of a write (`INSERT INTO t`,
/// `UPDATE t`, `DELETE FROM t`) are recognized.
fn keyword_fallback(sql: &str, complete: bool) -> SqlFacts {
    let words: Vec<&str> = sql
        .split(|c: char| c.is_whitespace() || c == ';' || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let first = words.first().copied().unwrap_or("").to_ascii_uppercase();
    if first == "SELECT" && sql.len() <= MAX_SQL_BYTES {
        let writes = words.iter().any(|w| {
            matches!(
                w.to_ascii_uppercase().as_str(),
                "INSERT" | "UPDATE" | "DELETE" | "INTO" | "MERGE"
            )
        });
        let from = words
            .iter()
            .position(|w| w.eq_ignore_ascii_case("FROM"))
            .and_then(|i| words.get(i + 1))
            .map(|t| {
                t.trim_matches(|c: char| c == '"' || c == '`')
                    .to_ascii_lowercase()
            })
            .filter(|t| {
                t.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            });
        if let (false, Some(t)) = (writes, from) {
            return SqlFacts {
                kind: SqlKind::Read,
                tables: vec![t.rsplit('.').next().unwrap_or(&t).to_string()],
                ..SqlFacts::unknown()
            };
        }
    }
    // `INSERT INTO t …`, `UPDATE t …`, `DELETE FROM t …` in a dialect sqlparser does not
    // read (T-SQL's `OUTPUT inserted.*`): a write of `t` by its leading words; what
    // else it does (conflict clauses, increments) stays unknown.
    let table_after = |kw: &str| {
        words
            .iter()
            .position(|w| w.eq_ignore_ascii_case(kw))
            .and_then(|i| words.get(i + 1))
            .map(|t| {
                let t: String = t
                    .split('(')
                    .next()
                    .unwrap_or(t)
                    .chars()
                    .filter(|c| !matches!(c, '"' | '`' | '[' | ']'))
                    .collect();
                t.rsplit('.').next().unwrap_or(&t).to_ascii_lowercase()
            })
            .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    };
    let written = match first.as_str() {
        _ if sql.len() > MAX_SQL_BYTES || !complete => None,
        "INSERT" => table_after("INTO"),
        "UPDATE" => words.get(1).and_then(|_| table_after("UPDATE")),
        "DELETE" => table_after("FROM"),
        _ => None,
    };
    if let Some(t) = written {
        return write(&first, vec![t]);
    }
    // Schema statements in a dialect sqlparser does not read (`PRAGMA`, `CREATE TABLE ..
    // STRICT`) change no rows either, as [`changes_no_rows`] says of those it reads.
    let schema = |stmt: &str| {
        let word = stmt.split_whitespace().next().unwrap_or("");
        ["CREATE", "ALTER", "DROP", "PRAGMA", "COMMENT", "GRANT"]
            .iter()
            .any(|k| word.eq_ignore_ascii_case(k))
    };
    let mut stmts = sql.split(';').filter(|s| !s.trim().is_empty()).peekable();
    if complete && stmts.peek().is_some() && stmts.all(schema) {
        return SqlFacts {
            kind: SqlKind::Read,
            ..SqlFacts::unknown()
        };
    }
    let kind = match first.as_str() {
        "BEGIN" | "START" => SqlKind::Begin,
        "COMMIT" | "END" => SqlKind::Commit,
        "ROLLBACK" | "ABORT" => SqlKind::Rollback,
        _ => SqlKind::Unknown,
    };
    SqlFacts {
        verb: if kind == SqlKind::Unknown {
            String::new()
        } else {
            first
        },
        kind,
        ..SqlFacts::unknown()
    }
}

/// An identifier standing for a `format!` argument: its last name (`self.table` →
/// `table`), or `x`.
pub(crate) fn placeholder_name(text: &str) -> String {
    let last = text
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or("x");
    last.to_string()
}

/// A `format!` template with each `{..}` replaced by a name: positional ones by the
/// next argument's, inline ones (`{table}`) by their own, double-quoted with `quote`
/// (a name that is an SQL keyword); `{{`/`}}` are braces.
pub(crate) fn fill_placeholders(template: &str, names: &[String], quote: bool) -> String {
    let mut out = String::with_capacity(template.len());
    let mut next = 0;
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut inner = String::new();
                for d in chars.by_ref() {
                    if d == '}' {
                        break;
                    }
                    inner.push(d);
                }
                let arg = inner.split(':').next().unwrap_or("").trim();
                let name = if arg.is_empty() {
                    next += 1;
                    names.get(next - 1).cloned()
                } else if let Ok(i) = arg.parse::<usize>() {
                    names.get(i).cloned()
                } else {
                    Some(placeholder_name(arg))
                };
                let name = name.unwrap_or_else(|| "x".into());
                if quote {
                    out.push('"');
                    out.push_str(&name);
                    out.push('"');
                } else {
                    out.push_str(&name);
                }
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod format_tests {
    use super::fill_placeholders;

    #[test]
    fn format_templates_get_names() {
        let names = vec!["table".to_string(), "n".to_string()];
        assert_eq!(
            fill_placeholders(
                "INSERT INTO {} (a) VALUES ({1}) -- {{x}} {id:?}",
                &names,
                false
            ),
            "INSERT INTO table (a) VALUES (n) -- {x} id"
        );
        assert_eq!(
            fill_placeholders("DELETE FROM {t}", &[], true),
            "DELETE FROM \"t\""
        );
        assert_eq!(fill_placeholders("{} {} {}", &names, false), "table n x");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_statement_the_parser_panics_on_has_no_facts_and_no_panic() {
        // SQLite full-text search: the SQLite dialect of sqlparser 0.59 unwraps on a
        // trailing `MATCH` (other dialects reject the text first or not at all).
        for sql in [
            "SELECT * FROM docs_fts WHERE docs_fts MATCH",
            "SELECT rowid FROM notes_fts WHERE notes_fts MATCH ",
        ] {
            let f = facts(sql);
            assert_ne!(f.kind, crate::ir::SqlKind::Write, "{sql}");
            let _ = prefix_facts(sql);
        }
        // The parser still works afterwards on this thread.
        assert_eq!(
            facts("INSERT INTO t (a) VALUES (1)").kind,
            crate::ir::SqlKind::Write
        );
    }

    #[test]
    fn an_update_that_marks_rows_done_and_records_no_failure() {
        let marks = |sql: &str| facts(sql).marks_done;
        assert!(marks("UPDATE outbox SET status = 'sent' WHERE id = $1"));
        assert!(marks("UPDATE events SET sent_at = now() WHERE id = $1"));
        assert!(marks(
            "UPDATE jobs SET status = 'complete' WHERE id IN ($2, $3)"
        ));
        assert!(marks(
            "UPDATE jobs SET processed = true, processed_at = now() WHERE id = ?1"
        ));
        assert!(!marks(
            "UPDATE outbox SET last_error = $2, next_attempt_at = now() WHERE id = $1"
        ));
        assert!(!marks(
            "UPDATE outbox SET status = 'sent', attempts = attempts + 1 WHERE id = $1"
        ));
        assert!(!marks("UPDATE outbox SET status = 'failed' WHERE id = $1"));
        assert!(!marks("UPDATE accounts SET balance = $2 WHERE id = $1"));
        assert!(!marks("DELETE FROM outbox WHERE id = $1"));
    }

    #[test]
    fn a_delete_of_rows_marked_done_is_a_clean_up() {
        let clears = |sql: &str| facts(sql).clears_done;
        assert!(clears("DELETE FROM jobs WHERE status = 'complete'"));
        assert!(clears(
            "DELETE FROM outbox WHERE sent_at IS NOT NULL AND sent_at < now() - interval '7 days'"
        ));
        assert!(clears("DELETE FROM outbox WHERE (published = true)"));
        assert!(clears("DELETE FROM outbox WHERE o.processed"));
        assert!(!clears("DELETE FROM outbox WHERE id = $1"));
        assert!(!clears("DELETE FROM outbox WHERE status = $1"));
        assert!(!clears("DELETE FROM outbox WHERE status = 'failed'"));
        assert!(!clears(
            "DELETE FROM outbox WHERE status = 'complete' OR id = $1"
        ));
        assert!(!clears("DELETE FROM outbox WHERE sent_at IS NULL"));
        assert!(!clears("DELETE FROM outbox WHERE sent = false"));
        assert!(!clears(
            "DELETE FROM outbox WHERE retry_sent_at IS NOT NULL"
        ));
        assert!(!clears("DELETE FROM outbox"));
        assert!(!clears("UPDATE outbox SET x = 1 WHERE status = 'complete'"));
    }

    use super::*;

    #[test]
    fn schemas_name_tables_with_business_keys() {
        let schema = "
            CREATE TABLE IF NOT EXISTS retry (
                task_run_id UUID NOT NULL,
                retry_at TIMESTAMPTZ NOT NULL,
                UNIQUE(task_run_id, retry_at)
            );
            CREATE TABLE events (id BIGSERIAL PRIMARY KEY, body TEXT);
            CREATE TABLE payments (payment_id TEXT PRIMARY KEY, cents BIGINT);
            CREATE TABLE audit (id UUID PRIMARY KEY DEFAULT gen_random_uuid(), note TEXT);
            CREATE TABLE lines (order_id BIGINT, line_no INT, PRIMARY KEY (order_id, line_no));
            CREATE TABLE visits (id INTEGER PRIMARY KEY, page TEXT);
            CREATE UNIQUE INDEX visits_page ON visits (page);
            CREATE TABLE charges (id BIGSERIAL PRIMARY KEY, charge_ref TEXT NOT NULL);
            ALTER TABLE charges ADD CONSTRAINT charges_ref_key UNIQUE (charge_ref);
            ALTER TABLE ONLY public.mails ADD CONSTRAINT mails_key UNIQUE (message_id);
            ALTER TABLE grants ADD COLUMN code TEXT UNIQUE;
            ALTER TABLE shipments ADD PRIMARY KEY (order_id, box_no);
            ALTER TABLE events ADD COLUMN note TEXT;
            ALTER TABLE events ADD CONSTRAINT events_body_check CHECK (body <> '');
            ALTER TABLE audit ADD PRIMARY KEY (id);
            CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN RETURN NEW; END $$ LANGUAGE plpgsql;
        ";
        assert_eq!(
            unique_keyed_tables(schema),
            [
                "charges",
                "grants",
                "lines",
                "mails",
                "payments",
                "retry",
                "shipments",
                "visits"
            ]
        );
    }

    #[test]
    fn reads_name_their_tables() {
        let r = facts("SELECT id, payload FROM pending_events WHERE sent_at IS NULL LIMIT 100");
        assert_eq!(
            (r.kind, r.tables),
            (SqlKind::Read, vec!["pending_events".to_string()])
        );
        // Not parsed (a reserved word as a column), still a read of its table.
        let r = facts("SELECT id, offset, status FROM inflight_tasks WHERE status = $1");
        assert_eq!(
            (r.kind, r.tables),
            (SqlKind::Read, vec!["inflight_tasks".to_string()])
        );
        assert_eq!(facts("SELECT 1").tables, Vec::<String>::new());
        assert_ne!(
            facts("SELECT offset FROM t; DELETE FROM t").kind,
            SqlKind::Read
        );
    }

    #[test]
    fn huge_sql_is_not_parsed() {
        let values = "(1),".repeat(MAX_SQL_BYTES / 4);
        let sql = format!("INSERT INTO orders VALUES {values}(1)");
        assert_eq!(facts(&sql).kind, SqlKind::Unknown);
        let sql = format!("INSERT INTO orders VALUES {}(1)", "(1),".repeat(100));
        assert_eq!(facts(&sql).kind, SqlKind::Write);
    }

    #[test]
    fn kinds() {
        assert_eq!(
            facts("SELECT * FROM orders WHERE id = $1").kind,
            SqlKind::Read
        );
        let f = facts("INSERT INTO public.orders (id, total) VALUES ($1, $2)");
        assert_eq!(
            (f.kind, f.tables),
            (SqlKind::Write, vec!["orders".to_string()])
        );
        let f = facts("UPDATE stock SET n = n - $1 WHERE sku = $2");
        assert_eq!((f.kind, f.verb.as_str()), (SqlKind::Write, "UPDATE"));
        assert_eq!(facts("DELETE FROM jobs WHERE id = ?").tables, vec!["jobs"]);
        assert_eq!(facts("BEGIN").kind, SqlKind::Begin);
        assert_eq!(facts("COMMIT").kind, SqlKind::Commit);
        assert_eq!(facts("not sql at all").kind, SqlKind::Unknown);
    }

    #[test]
    fn conflict_clauses() {
        assert!(
            facts("INSERT INTO processed (id) VALUES ($1) ON CONFLICT DO NOTHING").ignores_conflict
        );
        assert!(facts("INSERT OR IGNORE INTO processed (id) VALUES (?)").ignores_conflict);
        assert!(facts("INSERT INTO p (id) VALUES ($1) RETURNING id").returning);
        let up = facts(
            "INSERT INTO s (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v",
        );
        assert!(up.upsert && !up.ignores_conflict);
        assert!(facts("UPDATE stock SET n = n - $1 WHERE sku = $2").self_referencing);
        assert!(!facts("UPDATE stock SET n = $1 WHERE sku = $2").self_referencing);
        assert!(!facts("UPDATE s SET v = GREATEST(v, $1) WHERE k = $2").self_referencing);
        assert!(!facts("UPDATE s SET v = COALESCE(v, $1) WHERE k = $2").self_referencing);
        assert!(facts("UPDATE s SET v = $1 + v WHERE k = $2").self_referencing);
        let counted = "INSERT INTO token (task_id, trigger_datetime, count) VALUES ($1, $2, 1) \
                       ON CONFLICT (task_id, trigger_datetime) DO UPDATE SET count = token.count + 1";
        assert!(facts(counted).upsert && facts(counted).self_referencing);
        let added = "INSERT INTO views (page, n) VALUES ($1, $2) ON CONFLICT (page) DO UPDATE SET n = views.n + EXCLUDED.n";
        assert!(facts(added).self_referencing);
        let replaced = "INSERT INTO views (page, n) VALUES ($1, $2) ON CONFLICT (page) DO UPDATE SET n = EXCLUDED.n";
        assert!(facts(replaced).upsert && !facts(replaced).self_referencing);
        let excluded_plus =
            "INSERT INTO s (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v + 0";
        assert!(!facts(excluded_plus).self_referencing);
        assert!(!facts("INSERT INTO s (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = GREATEST(s.v, EXCLUDED.v)").self_referencing);
        let guarded = facts(
            "INSERT INTO t (id, v) SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM t WHERE id = $1)",
        );
        assert!(guarded.upsert && !guarded.ignores_conflict);
    }

    #[test]
    fn writes_in_other_dialects_by_their_leading_words() {
        let f = facts("INSERT INTO [dbo].[users] (name) OUTPUT inserted.id VALUES (@p1)");
        assert_eq!(
            (f.kind, f.verb.as_str(), f.tables.as_slice()),
            (SqlKind::Write, "INSERT", &["users".to_string()][..])
        );
        assert_eq!(
            facts("UPDATE accounts WITH (ROWLOCK) SET n = 1 OUTPUT inserted.n").tables,
            ["accounts"]
        );
        assert_eq!(
            facts("DELETE FROM q OUTPUT deleted.* WHERE id = @p1").verb,
            "DELETE"
        );
        assert_eq!(facts("INSERT garbage").kind, SqlKind::Unknown);
    }

    #[test]
    fn claims_insert_one_row() {
        let claim = |sql: &str| facts(sql).is_claim_shape();
        assert!(claim(
            "INSERT INTO seen (id) VALUES ($1) ON CONFLICT DO NOTHING"
        ));
        let bulk = facts(
            "INSERT INTO item_group (name) SELECT DISTINCT ON (name) name FROM UNNEST($1::TEXT[]) AS item_group(name) ON CONFLICT DO NOTHING",
        );
        assert!(bulk.many_rows && !bulk.is_claim_shape(), "{bulk:?}");
        assert!(!claim(
            "INSERT INTO tag (name) SELECT DISTINCT name FROM UNNEST($1::TEXT[]) AS t(name) ON CONFLICT DO NOTHING"
        ));
        assert!(!claim(
            "INSERT INTO seen (id) VALUES ($1), ($2) ON CONFLICT DO NOTHING"
        ));
        // Constant columns carry none of the message's data; an expiry is a lease's.
        assert!(claim(
            "INSERT INTO consumed (id, queue, at) VALUES ($1, 'orders', now()) ON CONFLICT DO NOTHING"
        ));
        assert!(claim(
            "INSERT INTO consumed (id, at) VALUES (?, CURRENT_TIMESTAMP) ON CONFLICT DO NOTHING"
        ));
        assert!(!claim(
            "INSERT INTO leases (key, owner, until) VALUES ($1, $2, now() + interval '30 seconds') ON CONFLICT DO NOTHING"
        ));
        assert!(!claim(
            "INSERT INTO users (id, name, email) VALUES ($1, $2, :email) ON CONFLICT DO NOTHING"
        ));
    }

    #[test]
    fn cql_lightweight_transactions_ignore_conflicts() {
        let lwt = facts("INSERT INTO ks.processed (event_id) VALUES (?)\n   IF NOT EXISTS");
        assert_eq!(
            (lwt.kind.clone(), lwt.tables.as_slice()),
            (SqlKind::Write, &["processed".to_string()][..])
        );
        assert!(lwt.is_claim_shape(), "{lwt:?}");
        let ttl = facts("INSERT INTO seen (id) VALUES (?) IF NOT EXISTS USING TTL 86400;");
        assert!(ttl.ignores_conflict && ttl.columns == 1);
        let plain_ttl = facts("INSERT INTO seen (id, v) VALUES (?, ?) USING TTL ?");
        assert!(plain_ttl.kind == SqlKind::Write && !plain_ttl.ignores_conflict);
        assert!(!facts("INSERT INTO t (a) VALUES ('IF NOT EXISTS')").ignores_conflict);
        assert_eq!(facts("CREATE TABLE IF NOT EXISTS t (a int)").verb, "");
    }

    #[test]
    fn schema_statements_change_no_rows() {
        for ddl in [
            "CREATE TABLE IF NOT EXISTS seen (id TEXT PRIMARY KEY); CREATE INDEX IF NOT EXISTS seen_at ON seen (at)",
            "ALTER TABLE orders ADD COLUMN note TEXT",
            "DROP TABLE IF EXISTS scratch",
            "PRAGMA journal_mode = WAL",
        ] {
            let f = facts(ddl);
            assert!(f.kind == SqlKind::Read && f.tables.is_empty(), "{ddl}: {f:?}");
        }
        // A schema statement beside a write is still a write.
        let mixed = facts("CREATE TABLE IF NOT EXISTS t (a int); INSERT INTO t (a) VALUES (1)");
        assert!(mixed.kind == SqlKind::Write && mixed.tables == ["t"]);
    }

    #[test]
    fn cte_insert_is_a_write() {
        let f = facts(
            "WITH first AS (INSERT INTO processed_events (id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id) \
             INSERT INTO inventory (sku) SELECT $2 FROM first",
        );
        assert_eq!(f.kind, SqlKind::Write);
        assert!(f.guarded);
    }
}
