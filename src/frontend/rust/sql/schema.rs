//! Unique business keys from schemas: which tables a `CREATE TABLE` / `CREATE UNIQUE
//! INDEX` gives a key that refuses a repeated insert (non-idempotent effects).

use sqlparser::ast::Statement;
use sqlparser::dialect::{Dialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};

use super::{parse_quietly, table_name, MAX_SQL_BYTES};

/// Tables that a schema (migrations, `schema.sql`) gives a unique business key: a
/// `UNIQUE` column or constraint, a `CREATE UNIQUE INDEX`, a primary key of several
/// columns, or one of a single column that the database does not generate (no `SERIAL`,
/// identity, `AUTOINCREMENT` or default). An insert into such a table is refused when
/// repeated, not applied twice (non-idempotent effects). Statements that do not parse
/// (or are longer than [`MAX_SQL_BYTES`]) are skipped one by one.
pub fn unique_keyed_tables(schema: &str) -> Vec<String> {
    keyed_tables(schema, true)
}

/// [`unique_keyed_tables`]; without `identity`, a key that is (or contains) the
/// table's single-column primary key, the row's own id, is not a business key (a
/// schema written in the code beside the inserts, whose ids it may mint per insert).
pub(in crate::frontend::rust) fn keyed_tables(schema: &str, identity: bool) -> Vec<String> {
    use sqlparser::ast::{ColumnOption, TableConstraint};
    let mut out = Vec::new();
    // Statement by statement, each bounded like any SQL text (a schema may be
    // large; only `CREATE` statements matter, and one that does not parse is skipped).
    let statements: Vec<Statement> = schema
        .split(';')
        .filter(|s| s.len() <= MAX_SQL_BYTES && s.to_ascii_lowercase().contains("create"))
        .filter_map(|s| {
            [
                &PostgreSqlDialect {} as &dyn Dialect,
                &SQLiteDialect {},
                &MySqlDialect {},
            ]
            .iter()
            .find_map(|d| parse_quietly(*d, s))
        })
        .flatten()
        .collect();
    for st in &statements {
        match st {
            Statement::CreateTable(t) => {
                let generated = |c: &sqlparser::ast::ColumnDef| {
                    let ty = c.data_type.to_string().to_ascii_lowercase();
                    ty.contains("serial")
                        || c.options.iter().any(|o| {
                            matches!(
                                o.option,
                                ColumnOption::Default(_)
                                    | ColumnOption::Generated { .. }
                                    | ColumnOption::DialectSpecific(_)
                            )
                        })
                };
                let column_unique = t.columns.iter().any(|c| {
                    c.options.iter().any(|o| match o.option {
                        ColumnOption::Unique { is_primary, .. } => {
                            !is_primary || (identity && !generated(c))
                        }
                        _ => false,
                    })
                });
                // The row's id: a single-column primary key.
                let id_column = (!identity).then(|| single_primary_key(t)).flatten();
                let constraint_unique = t.constraints.iter().any(|c| match c {
                    TableConstraint::Unique { columns, .. } => {
                        id_column.as_ref().is_none_or(|id| {
                            !columns
                                .iter()
                                .any(|k| k.column.expr.to_string().eq_ignore_ascii_case(id))
                        })
                    }
                    TableConstraint::PrimaryKey { columns, .. } => {
                        columns.len() > 1
                            || identity
                                && columns.iter().any(|k| {
                                    let k = k.to_string();
                                    t.columns.iter().any(|c| c.name.value == k && !generated(c))
                                })
                    }
                    _ => false,
                });
                if column_unique || constraint_unique {
                    out.push(table_name(&t.name));
                }
            }
            Statement::CreateIndex(i) if i.unique => out.push(table_name(&i.table_name)),
            _ => {}
        }
    }
    for t in &mut out {
        *t = t.to_ascii_lowercase();
    }
    out.sort();
    out.dedup();
    out
}

/// The column of a table's single-column primary key (declared on the column or as
/// a constraint).
fn single_primary_key(t: &sqlparser::ast::CreateTable) -> Option<String> {
    use sqlparser::ast::{ColumnOption, TableConstraint};
    let on_column = t.columns.iter().filter(|c| {
        c.options.iter().any(|o| {
            matches!(
                o.option,
                ColumnOption::Unique {
                    is_primary: true,
                    ..
                }
            )
        })
    });
    let in_constraint = t.constraints.iter().filter_map(|c| match c {
        TableConstraint::PrimaryKey { columns, .. } if columns.len() == 1 => {
            Some(columns[0].column.expr.to_string())
        }
        _ => None,
    });
    on_column
        .map(|c| c.name.value.clone())
        .chain(in_constraint)
        .next()
}
