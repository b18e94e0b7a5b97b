//! Schemas kept in Rust code: migrations that run `CREATE TABLE` / `CREATE UNIQUE
//! INDEX` from string literals (`query!(r#"CREATE TABLE .."#)`, `execute("..")`)
//! rather than from `.sql` files. Their unique business keys count as a `.sql`
//! file's do (non-idempotent effects), except the row's own id (`sql::keyed_tables`).

use super::lex::{Kind, Lexer, Lit};

/// Tables given a unique business key by SQL in the string literals of a Rust file.
/// A file that names no `UNIQUE` and no `PRIMARY` is not lexed.
pub fn unique_keyed_tables(text: &str) -> Vec<String> {
    let names = |w: &str| text.contains(w) || text.contains(&w.to_ascii_lowercase());
    if !names("CREATE") || !(names("UNIQUE") || names("PRIMARY")) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for t in Lexer::new(text) {
        let Kind::Literal(lit @ (Lit::Str | Lit::RawStr)) = t.kind else {
            continue;
        };
        let Some(body) = content(&text[t.start..t.end], lit) else {
            continue;
        };
        let lower = body.to_ascii_lowercase();
        if lower.contains("create") && (lower.contains("unique") || lower.contains("primary")) {
            out.extend(super::sql::keyed_tables(&body, false));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The text of a string literal (its common escapes undone), `None` for a byte or C
/// string or one left open.
fn content(lit: &str, kind: Lit) -> Option<String> {
    match kind {
        Lit::RawStr => {
            let rest = lit.strip_prefix('r')?;
            let hashes = rest.len() - rest.trim_start_matches('#').len();
            let inner = rest.get(hashes + 1..rest.len().checked_sub(hashes + 1)?)?;
            Some(inner.to_string())
        }
        _ => {
            let inner = lit.strip_prefix('"')?.strip_suffix('"')?;
            let mut out = String::with_capacity(inner.len());
            let mut chars = inner.chars().peekable();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('n' | 't' | 'r') => out.push(' '),
                    // A line continuation: the break and the next line's indent go.
                    Some('\n') => {
                        while chars.peek().is_some_and(|c| c.is_whitespace()) {
                            chars.next();
                        }
                    }
                    Some(other) => out.push(other),
                    None => {}
                }
            }
            Some(out)
        }
    }
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
            }
        "####;
        assert_eq!(unique_keyed_tables(text), vec!["orders", "tags"]);
    }
}
