//! Unique business keys from schemas: which tables a `CREATE TABLE` / `CREATE UNIQUE
//! INDEX` / `ALTER TABLE .. ADD` gives a key that refuses a repeated insert (non-idempotent effects).

use sqlparser::ast::{
    AlterTableOperation, ColumnDef, ColumnOption, CreateTable, Statement, TableConstraint,
};
use sqlparser::dialect::{Dialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};

use super::{parse_quietly, table_name, MAX_SQL_BYTES};

/// Tables that a schema (migrations, `schema.sql`) gives a unique business key: a
/// `UNIQUE` column or constraint (in the `CREATE TABLE` or added by an `ALTER TABLE`), a `CREATE UNIQUE INDEX`, a primary key of several
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
    let mut out = Vec::new();
    // Statement by statement, each bounded like any SQL text (a schema may be
    // large; only `CREATE` and `ALTER` statements matter, and one that does not
    // parse is skipped).
    let statements: Vec<Statement> = schema
        .split(';')
        .filter(|s| {
            let lower = s.to_ascii_lowercase();
            s.len() <= MAX_SQL_BYTES && (lower.contains("create") || lower.contains("alter"))
        })
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
    // The tables the schema creates, for the keys a later `ALTER TABLE` adds.
    let created: std::collections::HashMap<String, &CreateTable> = statements
        .iter()
        .filter_map(|st| match st {
            Statement::CreateTable(t) => Some((table_name(&t.name), t)),
            _ => None,
        })
        .collect();
    for st in &statements {
        match st {
            Statement::CreateTable(t) => {
                let keys = Keys {
                    table: Some(t),
                    identity,
                };
                if t.columns.iter().any(|c| keys.column(c))
                    || t.constraints.iter().any(|c| keys.constraint(c))
                {
                    out.push(table_name(&t.name));
                }
            }
            Statement::CreateIndex(i) if i.unique => out.push(table_name(&i.table_name)),
            // `ALTER TABLE t ADD [CONSTRAINT c] UNIQUE (..)`, `ADD PRIMARY KEY (a, b)`,
            // `ADD COLUMN k TEXT UNIQUE`: the key is the table's as if it were declared in
            // its `CREATE TABLE` (known when the same schema creates it).
            Statement::AlterTable {
                name, operations, ..
            } => {
                let table = table_name(name);
                let keys = Keys {
                    table: created.get(&table).copied(),
                    identity,
                };
                if operations.iter().any(|op| match op {
                    AlterTableOperation::AddConstraint { constraint, .. } => {
                        keys.constraint(constraint)
                    }
                    AlterTableOperation::AddColumn { column_def, .. } => keys.column(column_def),
                    _ => false,
                }) {
                    out.push(table);
                }
            }
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

/// Whether a column or a constraint of a table gives it a unique business key.
struct Keys<'a> {
    /// The table's `CREATE TABLE`, when the schema has it (an `ALTER TABLE` of a
    /// table created elsewhere has none).
    table: Option<&'a CreateTable>,
    identity: bool,
}

impl Keys<'_> {
    /// A column the database fills itself (`SERIAL`, identity, a default).
    fn generated(c: &ColumnDef) -> bool {
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
    }

    /// A `UNIQUE` column, or a primary key column the database does not generate
    /// (with `identity`).
    fn column(&self, c: &ColumnDef) -> bool {
        c.options.iter().any(|o| match o.option {
            ColumnOption::Unique { is_primary, .. } => {
                !is_primary || (self.identity && !Self::generated(c))
            }
            _ => false,
        })
    }

    fn constraint(&self, c: &TableConstraint) -> bool {
        // The row's id: a single-column primary key.
        let id_column = (!self.identity)
            .then(|| self.table.and_then(single_primary_key))
            .flatten();
        match c {
            TableConstraint::Unique { columns, .. } => id_column.as_ref().is_none_or(|id| {
                !columns
                    .iter()
                    .any(|k| k.column.expr.to_string().eq_ignore_ascii_case(id))
            }),
            TableConstraint::PrimaryKey { columns, .. } => {
                columns.len() > 1
                    || self.identity
                        && columns.iter().any(|k| {
                            let k = k.to_string();
                            self.table.is_some_and(|t| {
                                t.columns
                                    .iter()
                                    .any(|c| c.name.value == k && !Self::generated(c))
                            })
                        })
            }
            _ => false,
        }
    }
}

/// The column of a table's single-column primary key (declared on the column or as
/// a constraint).
fn single_primary_key(t: &CreateTable) -> Option<String> {
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
