//! Schemas kept in Rust code: migrations that run `CREATE TABLE` / `CREATE UNIQUE
//! INDEX` / `ALTER TABLE .. ADD CONSTRAINT .. UNIQUE` from string literals (`query!(r#"CREATE TABLE .."#)`, `execute("..")`)
//! rather than from `.sql` files. Their unique business keys count as a `.sql`
//! file's do (non-idempotent effects), except the row's own id (`sql::keyed_tables`).

use super::lex::{literal_value, Kind, Lexer, Lit};
use crate::apis::UniqueIndexes;

/// Tables given a unique business key by SQL in the string literals of a Rust file.
/// A file that names no `UNIQUE` and no `PRIMARY` is not lexed.
pub fn unique_keyed_tables(text: &str) -> Vec<String> {
    let names = |w: &str| text.contains(w) || text.contains(&w.to_ascii_lowercase());
    if !(names("CREATE") || names("ALTER")) || !(names("UNIQUE") || names("PRIMARY")) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for t in Lexer::new(text) {
        let Kind::Literal(lit @ (Lit::Str | Lit::RawStr)) = t.kind else {
            continue;
        };
        let Some(body) = literal_value(&text[t.start..t.end], lit) else {
            continue;
        };
        let lower = body.to_ascii_lowercase();
        if (lower.contains("create") || lower.contains("alter"))
            && (lower.contains("unique") || lower.contains("primary"))
        {
            out.extend(super::sql::keyed_tables(&body, false));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Collections a document store's unique index keys, created in a Rust file
/// (`collection::<T>("orders")` and `create_index(IndexModel::builder()
/// .options(IndexOptions::builder().unique(true).build())..)` in one function): a
/// repeated insert into one is refused by the index. `idx`: the packs'
/// `[unique_indexes]`; `makers`: the methods making a collection that names its table
/// (`sql = "table"` calls). Read function by function (from one `fn` to the next): a
/// function that names several collections gives each the key (a miss at worst).
pub fn unique_indexed_tables(text: &str, idx: &UniqueIndexes, makers: &[String]) -> Vec<String> {
    let names = |ws: &[String]| ws.iter().any(|w| text.contains(w.as_str()));
    if idx.creates.is_empty() || !names(&idx.creates) || !names(&idx.unique) {
        return Vec::new();
    }
    let toks: Vec<_> = Lexer::new(text)
        .filter(|t| !matches!(t.kind, Kind::LineComment { .. } | Kind::BlockComment { .. }))
        .collect();
    let word = |i: usize| -> &str {
        match toks.get(i) {
            Some(t) if t.kind == Kind::Ident => &text[t.start..t.end],
            _ => "",
        }
    };
    let mut out = Vec::new();
    let (mut creates, mut unique, mut tables) = (false, false, Vec::new());
    for i in 0..=toks.len() {
        if i == toks.len() || word(i) == "fn" {
            if creates && unique {
                out.append(&mut tables);
            }
            (creates, unique, tables) = (false, false, Vec::new());
            continue;
        }
        let w = word(i);
        creates |= idx.creates.iter().any(|c| c == w);
        // `.unique(true)`, `unique: Some(true)`.
        unique |= idx.unique.iter().any(|u| u == w)
            && (i + 1..(i + 5).min(toks.len()))
                .map(word)
                .find(|n| !matches!(*n, "" | "Some"))
                == Some("true");
        if makers.iter().any(|m| m == w) {
            // `collection("t")`, `collection::<T>("t")`: the first literal in reach.
            let lit = toks[i + 1..]
                .iter()
                .take(12)
                .take_while(|t| !matches!(t.kind, Kind::Close(b')')))
                .find_map(|t| match t.kind {
                    Kind::Literal(lit @ (Lit::Str | Lit::RawStr)) => {
                        literal_value(&text[t.start..t.end], lit)
                    }
                    _ => None,
                });
            tables.extend(lit.map(|l| l.to_ascii_lowercase()));
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::{unique_indexed_tables, unique_keyed_tables};
    use crate::apis::UniqueIndexes;

    #[test]
    fn unique_indexes_of_collections() {
        let idx = UniqueIndexes {
            creates: vec!["create_index".into(), "create_indexes".into()],
            unique: vec!["unique".into()],
        };
        let makers = vec!["collection".into()];
        let text = r#"
            async fn indexes(db: &Database) -> Result<()> {
                let orders = db.collection::<Document>("Orders");
                let opts = IndexOptions::builder().unique(true).build();
                orders.create_index(IndexModel::builder().keys(doc! { "event_id": 1 }).options(opts).build()).await?;
                Ok(())
            }
            async fn plain(db: &Database) -> Result<()> {
                let hog = db.collection::<Document>("hog");
                hog.create_indexes(vec![IndexModel::builder().keys(doc! { "t": 1 }).build()]).await?;
                let o = IndexOptions { unique: Some(false), ..Default::default() };
                Ok(())
            }
            async fn literal(db: &Database) -> Result<()> {
                let o = IndexOptions { unique: Some(true), ..Default::default() };
                db.collection::<Document>("payments").create_index(IndexModel::builder().options(o).build()).await?;
                Ok(())
            }
        "#;
        assert_eq!(
            unique_indexed_tables(text, &idx, &makers),
            vec!["orders".to_string(), "payments".to_string()]
        );
        assert!(unique_indexed_tables("fn f() {}", &idx, &makers).is_empty());
    }

    #[test]
    fn keys_in_literals() {
        let text = r####"
            fn up() {
                query!(r#"CREATE TABLE orders(id UUID CONSTRAINT orders_pk PRIMARY KEY,
                    shop TEXT NOT NULL, number TEXT NOT NULL,
                    CONSTRAINT orders_uq UNIQUE(shop, number))"#);
                execute("CREATE TABLE notes(id UUID PRIMARY KEY, body TEXT)");
                execute("CREATE TABLE grants(id UUID PRIMARY KEY, owner UUID, UNIQUE(id, owner))");
                execute("CREATE TABLE tags(item UUID, tag TEXT, PRIMARY KEY (item, tag))");
                execute("CREATE TABLE refunds(id UUID PRIMARY KEY, charge TEXT)");
                execute("ALTER TABLE refunds ADD CONSTRAINT refunds_charge UNIQUE (charge)");
                execute("CREATE TABLE logs(id UUID PRIMARY KEY, line TEXT)");
                execute("ALTER TABLE logs ADD COLUMN at TIMESTAMPTZ");
            }
        "####;
        assert_eq!(unique_keyed_tables(text), vec!["orders", "refunds", "tags"]);
    }
}
