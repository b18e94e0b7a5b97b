//! Schemas kept in Rust code: migrations that run `CREATE TABLE` / `CREATE UNIQUE
//! INDEX` / `ALTER TABLE .. ADD CONSTRAINT .. UNIQUE` from string literals (`query!(r#"CREATE TABLE .."#)`, `execute("..")`)
//! rather than from `.sql` files. Their unique business keys count as a `.sql`
//! file's do (non-idempotent effects), except the row's own id (`sql::keyed_tables`).

use super::lex::{literal_value, Kind, Lexer, Lit};

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

#[cfg(test)]
mod tests {
    use super::unique_keyed_tables;

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
