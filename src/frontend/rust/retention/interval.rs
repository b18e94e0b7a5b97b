//! The retention a cleanup statement states in its SQL text: `interval '2 days'`,
//! MySQL `INTERVAL 2 DAY`, `make_interval(..)`, SQLite `datetime('now', '-2 days')`,
//! or a bound value (`$1::interval`, `$1 * interval '1 day'`).

use std::ops::ControlFlow;

use crate::support::duration::{self, DAY, HOUR, MINUTE, SECOND, WEEK};

/// The retention written in a cleanup statement.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Interval {
    /// Written in the SQL: `interval '2 days'` (the text as written, to point at it).
    Literal { millis: u64, text: String },
    /// `$1::interval`, `$1 * interval '1 day'`, `interval ? day`: the bound value
    /// (1-based), and the unit of a bare number bound to it.
    Bind { index: usize, unit: Option<u64> },
    /// No interval in the SQL: a cutoff timestamp may be bound (`Utc::now() - d`).
    Cutoff,
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// PostgreSQL's `make_interval(hours => $1)`, `make_interval(days => 7)` or
/// positional `make_interval(0, 0, 0, 7)` (years, months, weeks, days, hours, mins,
/// secs): the first non-zero part.
fn make_interval_in(sql: &str, lower: &str) -> Option<Interval> {
    const UNITS: [(&str, u64); 7] = [
        ("years", 365 * DAY),
        ("months", 30 * DAY),
        ("weeks", WEEK),
        ("days", DAY),
        ("hours", HOUR),
        ("mins", MINUTE),
        ("secs", SECOND),
    ];
    let at = lower.find("make_interval")?;
    let open = at + lower[at..].find('(')?;
    let close = open + lower[open..].find(')')?;
    let placeholders_before = |i: usize| lower[..i].matches('?').count();
    for (pos, arg) in lower[open + 1..close].split(',').enumerate() {
        let (unit, value) = match arg.split_once("=>") {
            Some((name, v)) => (UNITS.iter().find(|(n, _)| *n == name.trim())?.1, v.trim()),
            None => (UNITS.get(pos)?.1, arg.trim()),
        };
        if let Some(n) = value.strip_prefix('$') {
            return Some(Interval::Bind {
                index: n.parse().ok()?,
                unit: Some(unit),
            });
        }
        if value == "?" {
            let offset = open + 1 + lower[open + 1..close].find(arg)? + arg.find('?')?;
            return Some(Interval::Bind {
                index: placeholders_before(offset) + 1,
                unit: Some(unit),
            });
        }
        match value.parse::<f64>() {
            Ok(n) if n > 0.0 => {
                return Some(Interval::Literal {
                    millis: (n * unit as f64) as u64,
                    text: sql[at..=close].to_string(),
                })
            }
            _ => continue,
        }
    }
    None
}

/// Finds the retention of a cleanup statement in its SQL text.
pub(super) fn interval_in(sql: &str) -> Option<Interval> {
    let lower = sql.to_ascii_lowercase();
    if let Some(found) = make_interval_in(sql, &lower) {
        return Some(found);
    }
    let bytes = lower.as_bytes();
    let mut search = 0;
    while let Some(rel) = lower[search..].find("interval") {
        let at = search + rel;
        search = at + 8;
        if (at > 0 && is_word(bytes[at - 1])) || bytes.get(at + 8).is_some_and(|b| is_word(*b)) {
            continue;
        }
        if let ControlFlow::Break(found) = interval_keyword(sql, &lower, at) {
            return found;
        }
    }
    sqlite_now_offset(sql, &lower)
        .or_else(|| epoch_minus(sql, &lower))
        .or(Some(Interval::Cutoff))
}

/// The index after the blanks from `i` on.
fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The placeholder ending just before `end` (`$2`, `?`), skipping blanks and `*`:
/// its 1-based index.
fn placeholder_before(lower: &str, end: usize) -> Option<usize> {
    let head = lower[..end].trim_end().trim_end_matches('*').trim_end();
    if head.ends_with('?') {
        return Some(lower[..head.len() - 1].matches('?').count() + 1);
    }
    let digits = head.len() - head.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    (digits > 0 && head[..head.len() - digits].ends_with('$'))
        .then(|| head[head.len() - digits..].parse().ok())
        .flatten()
}

/// The placeholder starting at `i` (`$2`, `?`): its 1-based index and its end.
fn placeholder_at(lower: &str, i: usize) -> Option<(usize, usize)> {
    let bytes = lower.as_bytes();
    if bytes.get(i) == Some(&b'$') {
        let n = lower[i + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .count();
        return Some((lower[i + 1..i + 1 + n].parse().ok()?, i + 1 + n));
    }
    if bytes.get(i) == Some(&b'?') {
        return Some((lower[..i].matches('?').count() + 1, i + 1));
    }
    None
}

/// What the `interval` keyword at `at` states: `Continue` when it is no retention
/// (the next one is looked at), `Break` with the statement's answer otherwise
/// (`None`: a malformed interval, which ends the search).
fn interval_keyword(sql: &str, lower: &str, at: usize) -> ControlFlow<Option<Interval>> {
    let bytes = lower.as_bytes();
    // `$1::interval`, `CAST($1 AS interval)`.
    let before = lower[..at].trim_end();
    if let Some(head) = before
        .strip_suffix("::")
        .or_else(|| before.strip_suffix(" as"))
    {
        let head = head.trim_end();
        if let Some(index) = placeholder_before(lower, head.len()) {
            return ControlFlow::Break(Some(Interval::Bind { index, unit: None }));
        }
    }
    let i = skip_ws(bytes, at + 8);
    if bytes.get(i) == Some(&b'\'') {
        return ControlFlow::Break(quoted_interval(sql, lower, at, i));
    }
    // MySQL `INTERVAL 2 DAY`, `INTERVAL ? DAY`.
    let n_len = lower[i..]
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'_')
        .count();
    let (index, j) = if n_len == 0 {
        match placeholder_at(lower, i) {
            Some((idx, end)) => (Some(idx), skip_ws(bytes, end)),
            None => return ControlFlow::Continue(()),
        }
    } else {
        (None, skip_ws(bytes, i + n_len))
    };
    let word_len = lower[j..]
        .bytes()
        .take_while(|b| b.is_ascii_alphabetic())
        .count();
    let Some(per) = duration::unit(&lower[j..j + word_len]) else {
        return ControlFlow::Continue(());
    };
    if let Some(index) = index {
        return ControlFlow::Break(Some(Interval::Bind {
            index,
            unit: Some(per),
        }));
    }
    ControlFlow::Break(
        duration::parse(&lower[i..i + n_len], Some(per)).map(|millis| Interval::Literal {
            millis,
            text: sql[at..j + word_len].to_string(),
        }),
    )
}

/// `interval '2 days'`, `interval '2' day` (the keyword at `at`, the quote at `i`),
/// or a bound number of them (`$1 * interval '1 day'`, `interval '1 day' * $1`).
fn quoted_interval(sql: &str, lower: &str, at: usize, i: usize) -> Option<Interval> {
    let close = lower[i + 1..].find('\'')? + i + 1;
    let inner = &sql[i + 1..close];
    // `interval '2' day`
    let j = skip_ws(lower.as_bytes(), close + 1);
    let word_len = lower[j..]
        .bytes()
        .take_while(|b| b.is_ascii_alphabetic())
        .count();
    let (millis, end) = match duration::parse(inner, None) {
        Some(ms) => (ms, close + 1),
        None => {
            let per = duration::unit(&lower[j..j + word_len])?;
            (duration::parse(inner, Some(per))?, j + word_len)
        }
    };
    // `$1 * interval '1 day'`: the bound number counts the units.
    if let Some(index) = placeholder_before(lower, at) {
        return Some(Interval::Bind {
            index,
            unit: Some(millis),
        });
    }
    let after = lower[end..].trim_start();
    if let Some(rest) = after.strip_prefix('*') {
        if let Some((index, _)) = placeholder_at(lower, lower.len() - rest.trim_start().len()) {
            return Some(Interval::Bind {
                index,
                unit: Some(millis),
            });
        }
    }
    Some(Interval::Literal {
        millis,
        text: sql[at..end].to_string(),
    })
}

/// SQLite: `datetime('now', '-2 days')`, `date('now','-7 day')`,
/// `strftime('%s', 'now', '-1 hour')`: the first negative offset from now.
fn sqlite_now_offset(sql: &str, lower: &str) -> Option<Interval> {
    for f in [
        "datetime(",
        "date(",
        "strftime(",
        "julianday(",
        "unixepoch(",
    ] {
        let mut from = 0;
        while let Some(rel) = lower[from..].find(f) {
            let start = from + rel + f.len();
            from = start;
            let Some(close) = lower[start..].find(')') else {
                break;
            };
            let args = &lower[start..start + close];
            if !args.contains("'now'") {
                continue;
            }
            let mut k = start;
            while let Some(q) = lower[k..start + close].find('\'') {
                let q0 = k + q;
                let Some(q1) = lower[q0 + 1..start + close].find('\'') else {
                    break;
                };
                let q1 = q0 + 1 + q1;
                let inner = &sql[q0 + 1..q1];
                if inner.trim_start().starts_with('-') {
                    if let Some(millis) = duration::parse(inner, None) {
                        return Some(Interval::Literal {
                            millis,
                            text: sql[q0..=q1].to_string(),
                        });
                    }
                }
                k = q1 + 1;
            }
        }
    }
    None
}

/// The end of the call whose `(` is at `open` (nested parentheses counted).
fn call_end(lower: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in lower.bytes().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Seconds since the epoch, now, minus a number of seconds: SQLite `unixepoch() -
/// 86400` (also `unixepoch('now')`, `strftime('%s', 'now')`, in a `CAST(.. AS
/// INTEGER)`), PostgreSQL `extract(epoch from now()) - 86400`; `- 3 * 86400`; a bound
/// number (`- ?1`) counts seconds.
fn epoch_minus(sql: &str, lower: &str) -> Option<Interval> {
    let now = |f: &str, args: &str| match f {
        "unixepoch(" => args.trim().is_empty() || args.trim() == "'now'",
        "strftime(" => {
            let parts: Vec<&str> = args.split(',').map(str::trim).collect();
            parts == ["'%s'", "'now'"]
        }
        _ => {
            args.contains("epoch") && (args.contains("now()") || args.contains("current_timestamp"))
        }
    };
    for f in ["unixepoch(", "strftime(", "extract(", "date_part("] {
        let mut from = 0;
        while let Some(rel) = lower[from..].find(f) {
            let at = from + rel;
            from = at + f.len();
            if at > 0 && is_word(lower.as_bytes()[at - 1]) {
                continue;
            }
            let open = at + f.len() - 1;
            let Some(close) = call_end(lower, open) else {
                break;
            };
            if !now(f, &lower[open + 1..close]) {
                continue;
            }
            // Past a `CAST(.. AS INTEGER)` around it.
            let mut i = close + 1;
            loop {
                let rest = &lower[i..];
                let trimmed = rest.trim_start();
                i += rest.len() - trimmed.len();
                if let Some(t) = [
                    "as integer)",
                    "as int)",
                    "as bigint)",
                    "::bigint",
                    "::int",
                    ")",
                ]
                .iter()
                .find(|t| lower[i..].starts_with(**t))
                {
                    i += t.len();
                    continue;
                }
                break;
            }
            let Some(after) = lower[i..].strip_prefix('-') else {
                continue;
            };
            let start = i + 1 + (after.len() - after.trim_start().len());
            let tail = &lower[start..];
            if let Some(n) = tail.strip_prefix('?').or_else(|| tail.strip_prefix('$')) {
                let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
                let index = match digits.parse() {
                    Ok(n) => n,
                    Err(_) if tail.starts_with('?') => lower[..start].matches('?').count() + 1,
                    Err(_) => continue,
                };
                return Some(Interval::Bind {
                    index,
                    unit: Some(SECOND),
                });
            }
            // `86400`, `3 * 86400`.
            let mut end = start;
            let mut secs: u64 = 1;
            let mut factors = 0;
            loop {
                let len = lower[end..].bytes().take_while(u8::is_ascii_digit).count();
                if len == 0 {
                    break;
                }
                let Ok(n) = lower[end..end + len].parse::<u64>() else {
                    break;
                };
                secs = secs.saturating_mul(n);
                factors += 1;
                end += len;
                let rest = &lower[end..];
                let more = rest.trim_start();
                match more.strip_prefix('*') {
                    Some(r) if r.trim_start().starts_with(|c: char| c.is_ascii_digit()) => {
                        end += rest.len() - r.trim_start().len();
                    }
                    _ => break,
                }
            }
            if factors == 0 || secs == 0 {
                continue;
            }
            return Some(Interval::Literal {
                millis: secs.saturating_mul(SECOND),
                text: sql[start..end].to_string(),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_seconds_minus_a_number() {
        let lit = |sql: &str| match interval_in(sql) {
            Some(Interval::Literal { millis, .. }) => Some(millis),
            _ => None,
        };
        assert_eq!(
            lit("DELETE FROM processed_events WHERE seen_at < unixepoch() - 86400"),
            Some(DAY)
        );
        assert_eq!(
            lit("DELETE FROM seen WHERE at < CAST(strftime('%s', 'now') AS INTEGER) - 3 * 86400"),
            Some(3 * DAY)
        );
        assert_eq!(
            lit("DELETE FROM inbox WHERE at < extract(epoch from now()) - 7200"),
            Some(2 * HOUR)
        );
        assert_eq!(
            interval_in("DELETE FROM inbox WHERE k = ?1 AND at < unixepoch() - ?2"),
            Some(Interval::Bind {
                index: 2,
                unit: Some(SECOND)
            })
        );
        // Ahead of now, or not now at all: no retention.
        assert_eq!(
            lit("DELETE FROM inbox WHERE at < unixepoch() + 86400"),
            None
        );
        assert_eq!(
            lit("DELETE FROM inbox WHERE at < unixepoch(created) - 86400"),
            None
        );
    }

    #[test]
    fn make_interval_in_cleanup_sql() {
        assert_eq!(
            interval_in(
                "DELETE FROM processed_events WHERE at < now() - make_interval(hours => $1)"
            ),
            Some(Interval::Bind {
                index: 1,
                unit: Some(3_600_000)
            })
        );
        assert_eq!(
            interval_in(
                "DELETE FROM inbox WHERE k = $1 AND at < now() - make_interval(days => $2)"
            ),
            Some(Interval::Bind {
                index: 2,
                unit: Some(DAY)
            })
        );
        assert_eq!(
            interval_in("DELETE FROM inbox WHERE at < now() - make_interval(0, 0, 0, 2)"),
            Some(Interval::Literal {
                millis: 2 * DAY,
                text: "make_interval(0, 0, 0, 2)".into()
            })
        );
    }
}
