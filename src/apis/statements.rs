//! What the steps and words of a statement builder do to its statement: diesel's
//! builder steps and DSL tables, sea-orm's chain, a key store's argument words.

use serde::Deserialize;

use super::TtlUnit;

/// A pack's `[dsl_tables]`: a query DSL's table is the path segment before `item`
/// (`orders::table`), skipping `modules` that are no table's name (`schema`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DslTables {
    pub(super) item: String,
    #[serde(default)]
    pub(super) modules: Vec<String>,
}

/// The packs' `[dsl_tables]`, merged.
#[derive(Debug, Clone, Default)]
pub struct DslTableNames {
    /// The names of a table's own item (`table`).
    pub items: Vec<String>,
    /// Modules along a table's path that are no table's name (`dsl`, `schema`).
    pub modules: Vec<String>,
}

impl DslTableNames {
    /// Whether `name` is no table's name along a DSL path: a table's item, one of
    /// the DSL's modules, or `crate`.
    pub fn is_not_table(&self, name: &str) -> bool {
        name == "crate" || self.items.iter().chain(&self.modules).any(|n| n == name)
    }

    /// The table two path segments name as `table::item` (`orders::table`,
    /// `processed_event::Entity`).
    pub fn before_item(&self, w: &[String]) -> Option<String> {
        match w {
            [t, item] if self.items.contains(item) && !self.is_not_table(t) => Some(t.clone()),
            _ => None,
        }
    }
}

/// A pack's `[[arg_words]]` entry: words among a key-store command's arguments
/// (`cmd("SET").arg(k).arg(v).arg("NX").arg("EX").arg(60)`, and the names of a
/// typed options builder: `ExistenceCheck::NX`, `SetExpiry::EX(60)`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgWordSpec {
    pub words: Vec<String>,
    pub means: ArgWord,
    /// For `expires`: the unit of the argument that follows the word (or of the
    /// typed option's argument); none when it is no duration (`EXAT`, `KEEPTTL`).
    pub unit: Option<TtlUnit>,
}

/// What an argument word does to a key-store write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgWord {
    /// The write succeeds only where the key is absent (`NX`): a claim.
    OnlyIfAbsent,
    /// The key expires (`EX 60`): a cache entry or a lease, unless it is a claim.
    Expires,
}

/// What a step along a statement builder (`diesel::insert_into(t).values(..)
/// .on_conflict_do_nothing()`) does to its statement: `[builder_steps]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BuilderStep {
    /// A conflict leaves the row as it was (`ON CONFLICT DO NOTHING`).
    IgnoresConflict,
    /// A conflict updates the row (`ON CONFLICT … DO UPDATE`).
    Upsert,
    /// Its arguments assign columns (`.set(n.eq(n + 1))`): one that adds to or
    /// subtracts from the column's own value makes the statement self-referencing.
    Assignments,
}

/// A statement builder whose text is written along its calls, also in later
/// statements on the local holding it (`qb.push("SET status = ").push_bind(x)`):
/// the pack's `text` table of a builder-starting call.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuilderText {
    /// Methods that append their literal argument to the text.
    #[serde(default)]
    pub appends: Vec<String>,
    /// Methods that bind their argument: a placeholder in the text.
    #[serde(default)]
    pub binds: Vec<String>,
    /// Methods that open a list on the builder (a helper that writes to it,
    /// separating what it binds by its literal argument).
    #[serde(default)]
    pub lists: Vec<String>,
    /// Methods of a list helper that add without a separator.
    #[serde(default)]
    pub unseparated: Vec<String>,
    /// Methods that bind their argument to the text's next placeholder (`$n`, `?n`,
    /// the n-th `?`) without writing to it (`sqlx::query(sql).bind(v)`): a bound enum
    /// variant or constant is read there as the literal it names.
    #[serde(default)]
    pub fills: Vec<String>,
    /// Methods that leave the text as it is (finishing the statement).
    #[serde(default)]
    pub keeps: Vec<String>,
}

/// A pack's `[unique_indexes]`, merged: calls that create an index on the table the
/// receiver names (`create_index`), and the option steps that make it unique
/// (`.unique(true)`, `unique: Some(true)`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UniqueIndexes {
    #[serde(default)]
    pub creates: Vec<String>,
    #[serde(default)]
    pub unique: Vec<String>,
}
