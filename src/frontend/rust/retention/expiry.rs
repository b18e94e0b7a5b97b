//! Dedup records that carry their own expiry: an INSERT that sets a column to
//! `now() + interval '2 days'` (or binds `Utc::now() + Duration::days(2)`), and a
//! sweep that deletes the rows whose column has passed (`DELETE … WHERE expires_at <
//! now()`). Together they are the store's retention; apart, neither is.

/// The columns of an `INSERT INTO t (a, b, …) VALUES (x, y, …)` (lowercase, unquoted)
/// with each value's text and its byte offset in `sql`. `None` for another statement,
/// or when the two lists do not pair up.
pub(super) fn insert_values(sql: &str) -> Option<Vec<(String, &str, usize)>> {
    let lower = sql.to_ascii_lowercase();
    let into = lower.find("insert")?;
    let open = into + lower[into..].find('(')?;
    let close = open + matching(&lower[open..])?;
    let values = close + lower[close..].find("values")?;
    let vopen = values + lower[values..].find('(')?;
    let vclose = vopen + matching(&lower[vopen..])?;
    let columns: Vec<String> = split_top(&lower[open + 1..close])
        .into_iter()
        .map(|(c, _)| c.trim().trim_matches(|c| c == '"' || c == '`').to_string())
        .collect();
    let vals = split_top(&sql[vopen + 1..vclose]);
    (columns.len() == vals.len()).then(|| {
        columns
            .into_iter()
            .zip(vals)
            .map(|(c, (v, at))| (c, v, vopen + 1 + at))
            .collect()
    })
}

/// The column a DELETE sweeps by its expiry: `WHERE expires_at < now()` (also `<=`,
/// `current_timestamp`, `datetime('now')`, `now() > expires_at`), lowercase.
pub(super) fn swept_column(sql: &str) -> Option<String> {
    let lower = sql.to_ascii_lowercase();
    let at = lower.find(" where ")? + 7;
    let cond = &lower[at..];
    const NOW: [&str; 4] = [
        "now()",
        "current_timestamp",
        "datetime('now')",
        "unixepoch()",
    ];
    for part in cond.split(" and ") {
        let part = part.trim();
        let (left, right, flipped) = if let Some((l, r)) = part.split_once("<=") {
            (l, r, false)
        } else if let Some((l, r)) = part.split_once('<') {
            (l, r, false)
        } else if let Some((l, r)) = part.split_once(">=") {
            (l, r, true)
        } else if let Some((l, r)) = part.split_once('>') {
            (l, r, true)
        } else {
            continue;
        };
        let (column, now) = if flipped {
            (right, left)
        } else {
            (left, right)
        };
        let now = now.trim().trim_end_matches(';').trim();
        let column = column.trim();
        if NOW.contains(&now) && !column.is_empty() && column.bytes().all(is_name_byte) {
            let name = column.rsplit('.').next().unwrap_or(column);
            return Some(name.trim_matches(|c| c == '"' || c == '`').to_string());
        }
    }
    None
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'"' | b'`')
}

/// The length up to and including the `)` that closes the `(` at the start of `s`.
fn matching(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `s` split at the commas outside parentheses and quotes, with each part's offset.
fn split_top(s: &str) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut from) = (0usize, None, 0);
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth = depth.saturating_sub(1),
            (None, ',') if depth == 0 => {
                out.push((&s[from..i], from));
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push((&s[from..], from));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_columns_pair_with_their_values() {
        let sql = "INSERT INTO processed (id, expires_at) VALUES ($1, now() + interval '2 days') \
                   ON CONFLICT DO NOTHING";
        let v = insert_values(sql).unwrap();
        assert_eq!(v[0].0, "id");
        assert_eq!(v[1].0, "expires_at");
        assert_eq!(v[1].1.trim(), "now() + interval '2 days'");
        assert_eq!(&sql[v[1].2..v[1].2 + 6], " now()");
        assert!(insert_values("INSERT INTO t (a, b) VALUES (1)").is_none());
        assert!(insert_values("DELETE FROM t").is_none());
    }

    #[test]
    fn sweeps_by_an_expiry_column() {
        assert_eq!(
            swept_column("DELETE FROM processed WHERE expires_at < now()").as_deref(),
            Some("expires_at")
        );
        assert_eq!(
            swept_column("DELETE FROM inbox WHERE NOW() >= inbox.valid_until").as_deref(),
            Some("valid_until")
        );
        assert_eq!(
            swept_column("DELETE FROM t WHERE id = $1 AND expires_at <= CURRENT_TIMESTAMP;")
                .as_deref(),
            Some("expires_at")
        );
        assert_eq!(
            swept_column("DELETE FROM t WHERE at < now() - interval '1 day'"),
            None
        );
        assert_eq!(swept_column("DELETE FROM t WHERE id = $1"), None);
    }
}
