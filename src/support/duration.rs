//! Durations in the spellings configuration and SQL use (dedup retention, replay
//! windows): `7d`, `168h`, `1h30m`, `P7D`, `PT48H`, `'7 days'`, `1 week`,
//! `2 days 12 hours`, `-2 days` (SQLite modifiers), `00:30:00`, and bare numbers in a
//! unit the context gives (`retention.ms: 604800000`). Values are milliseconds;
//! [`UNLIMITED`] stands for "kept forever" (`retention.ms: -1`).

pub const SECOND: u64 = 1_000;
pub const MINUTE: u64 = 60 * SECOND;
pub const HOUR: u64 = 60 * MINUTE;
pub const DAY: u64 = 24 * HOUR;
pub const WEEK: u64 = 7 * DAY;
/// Retention without a limit (`retention.ms: -1`).
pub const UNLIMITED: u64 = u64::MAX;

/// Milliseconds in one `unit` (`d`, `days`, `hour`, `ms`, `mon`, ...).
pub fn unit(word: &str) -> Option<u64> {
    Some(match word.to_ascii_lowercase().as_str() {
        "ms" | "msec" | "msecs" | "milli" | "millis" | "millisecond" | "milliseconds" => 1,
        "s" | "sec" | "secs" | "second" | "seconds" => SECOND,
        "m" | "min" | "mins" | "minute" | "minutes" => MINUTE,
        "h" | "hr" | "hrs" | "hour" | "hours" => HOUR,
        "d" | "day" | "days" => DAY,
        "w" | "wk" | "wks" | "week" | "weeks" => WEEK,
        "mon" | "mons" | "month" | "months" => 30 * DAY,
        "y" | "yr" | "yrs" | "year" | "years" => 365 * DAY,
        _ => return None,
    })
}

/// Parses a duration. `bare`: milliseconds per unit of a number written without a
/// unit (`None`: such a number is not a duration). A leading sign is ignored
/// (`'-2 days'` in a SQLite `datetime` modifier is a distance back in time); a
/// negative bare number is [`UNLIMITED`] (`retention.ms: -1`).
pub fn parse(text: &str, bare: Option<u64>) -> Option<u64> {
    let t = text.trim().trim_matches(|c| c == '\'' || c == '"').trim();
    if t.is_empty() {
        return None;
    }
    let negative = t.starts_with('-');
    let t = t.trim_start_matches(['-', '+']).trim();
    let digits: String = t.chars().filter(|c| *c != '_').collect();
    if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let per = bare?;
        if negative {
            return Some(UNLIMITED);
        }
        return scaled(&digits, per);
    }
    if t.starts_with(['P', 'p']) {
        if let Some(v) = iso8601(&t[1..]) {
            return Some(v);
        }
    }
    if t.contains(':') {
        if let Some(v) = clock(t) {
            return Some(v);
        }
    }
    words(t)
}

/// `7 days`, `7d`, `1h30m`, `1 week 2 days`, `2 days, 12 hours`, `1 day 02:00:00`.
fn words(t: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut rest = t;
    let mut any = false;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        if rest.is_empty() {
            break;
        }
        if let Some(r) = rest.strip_prefix("and ") {
            rest = r;
            continue;
        }
        // `1 day 02:00:00`: a clock time among the units.
        let tok_end = rest
            .find(|c: char| c.is_whitespace() || c == ',')
            .unwrap_or(rest.len());
        if rest[..tok_end].contains(':') {
            total = total.checked_add(clock(&rest[..tok_end])?)?;
            any = true;
            rest = &rest[tok_end..];
            continue;
        }
        let n_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
            .unwrap_or(rest.len());
        if n_len == 0 {
            return None;
        }
        let number: String = rest[..n_len].chars().filter(|c| *c != '_').collect();
        let after = rest[n_len..].trim_start();
        let u_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let per = unit(&after[..u_len])?;
        total = total.checked_add(scaled(&number, per)?)?;
        any = true;
        rest = &after[u_len..];
    }
    any.then_some(total)
}

/// `hh:mm:ss` or `hh:mm`.
fn clock(t: &str) -> Option<u64> {
    let parts: Vec<&str> = t.trim().split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let mut total = 0u64;
    for (p, per) in parts.iter().zip([HOUR, MINUTE, SECOND]) {
        total = total.checked_add(scaled(p.trim(), per)?)?;
    }
    Some(total)
}

/// ISO 8601 after the `P`: `7D`, `1W`, `T48H`, `1DT12H`, `T90M`.
fn iso8601(t: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut time = false;
    let mut num = String::new();
    let mut any = false;
    for c in t.chars() {
        match c.to_ascii_uppercase() {
            'T' if num.is_empty() => time = true,
            d if d.is_ascii_digit() || d == '.' => num.push(d),
            u => {
                let per = match (u, time) {
                    ('Y', false) => 365 * DAY,
                    ('M', false) => 30 * DAY,
                    ('W', false) => WEEK,
                    ('D', false) => DAY,
                    ('H', true) => HOUR,
                    ('M', true) => MINUTE,
                    ('S', true) => SECOND,
                    _ => return None,
                };
                total = total.checked_add(scaled(&num, per)?)?;
                num.clear();
                any = true;
            }
        }
    }
    (any && num.is_empty()).then_some(total)
}

fn scaled(number: &str, per: u64) -> Option<u64> {
    if number.contains('.') {
        let v: f64 = number.parse().ok()?;
        let ms = v * per as f64;
        return (ms.is_finite() && (0.0..1.8e19).contains(&ms)).then_some(ms.round() as u64);
    }
    number.parse::<u64>().ok()?.checked_mul(per)
}

/// How messages show a duration: `1 day`, `7 days`, `36 hours`, `90 minutes`, `forever`.
pub fn human(ms: u64) -> String {
    if ms == UNLIMITED {
        return "forever".into();
    }
    let plural = |n: u64, w: &str| {
        if n == 1 {
            format!("1 {w}")
        } else {
            format!("{n} {w}s")
        }
    };
    for (per, w) in [
        (DAY, "day"),
        (HOUR, "hour"),
        (MINUTE, "minute"),
        (SECOND, "second"),
    ] {
        if ms >= per && ms.is_multiple_of(per) {
            return plural(ms / per, w);
        }
    }
    if ms > DAY {
        return format!("{:.1} days", ms as f64 / DAY as f64);
    }
    if ms > HOUR {
        return format!("{:.1} hours", ms as f64 / HOUR as f64);
    }
    plural(ms, "millisecond")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_week() {
        for t in [
            "7d",
            "168h",
            "P7D",
            "P1W",
            "PT168H",
            "'7 days'",
            "1 week",
            "7 DAYS",
            "6 days 24 hours",
            "6d24h",
            "-7 days",
            "10080 minutes",
            "6 days, 24:00:00",
        ] {
            assert_eq!(parse(t, None), Some(WEEK), "{t}");
        }
        assert_eq!(parse("604800000", Some(1)), Some(WEEK));
        assert_eq!(parse("604_800", Some(SECOND)), Some(WEEK));
        assert_eq!(parse("168", Some(HOUR)), Some(WEEK));
    }

    #[test]
    fn other_forms() {
        assert_eq!(parse("1h30m", None), Some(90 * MINUTE));
        assert_eq!(parse("00:30:00", None), Some(30 * MINUTE));
        assert_eq!(parse("P1DT12H", None), Some(36 * HOUR));
        assert_eq!(parse("1.5 days", None), Some(36 * HOUR));
        assert_eq!(parse("500ms", None), Some(500));
        assert_eq!(parse("-1", Some(1)), Some(UNLIMITED));
        assert_eq!(parse("86400", None), None);
        assert_eq!(parse("soon", None), None);
        assert_eq!(parse("7 fortnights", None), None);
        assert_eq!(parse("", None), None);
        assert_eq!(parse("P", None), None);
    }

    #[test]
    fn human_readable() {
        assert_eq!(human(DAY), "1 day");
        assert_eq!(human(WEEK), "7 days");
        assert_eq!(human(36 * HOUR), "36 hours");
        assert_eq!(human(90 * MINUTE), "90 minutes");
        assert_eq!(human(UNLIMITED), "forever");
    }
}
