//! A statement builder's text written along its calls, also in later statements on
//! the local holding it (the packs' `text` tables): `qb.push("SET status = ")`, a
//! bound value as a placeholder (or, an enum variant or a constant, as the literal it
//! names), the binds of a list helper opened on the builder. Read at the terminal in
//! place of the builder's start when it parses.

use syn::Expr;

use super::{strip, Builder, Info, Lowerer};
use crate::apis::CallSpec;
use crate::frontend::rust::sql;
use crate::ir::{Loc, SqlKind, ValueId};

#[derive(Clone, Debug, Default)]
pub(super) struct Written {
    /// The text so far; `None`: not a text builder, or a step wrote what is unknown.
    text: Option<String>,
    /// Steps appended to it past its start.
    grown: bool,
    /// Placeholders so far.
    binds: usize,
    /// Bare `?` placeholders filled with a literal so far (they are no longer `?`).
    filled: usize,
    /// The local holding the builder: its text is read and written there.
    owner: Option<ValueId>,
    /// A list helper of the builder (its separator): what it adds is separated.
    list: Option<String>,
    /// An item is in the open list: the next one is separated from it.
    listed: bool,
}

impl Written {
    /// The text a builder starts with: its first argument's, when the pack says how
    /// its steps write to it.
    pub(super) fn start(spec: &CallSpec, arg0: Option<&Info>) -> Self {
        Written {
            text: spec.text.as_ref().and(arg0).and_then(|i| i.str_lit.clone()),
            ..Written::default()
        }
    }
}

impl<'a, 'b> Lowerer<'a, 'b> {
    /// A local now holds `b` (`let mut qb = QueryBuilder::new(..)`): the steps on it
    /// in later statements write its text there.
    pub(super) fn hold_builder(&self, b: &mut Builder, v: ValueId) {
        // Steps that only fill placeholders take the statement by value (`q.bind(v)`
        // returns a new one): they write nothing to the local.
        let in_place = b
            .spec
            .text
            .as_ref()
            .is_some_and(|t| !t.appends.is_empty() || !t.lists.is_empty());
        if in_place && b.written.owner.is_none() {
            b.written.owner = Some(v);
        }
    }

    /// The builder as the local holding it has it now (earlier statements wrote to
    /// it); a list helper stays one.
    pub(super) fn current_builder(&self, b: Box<Builder>) -> Box<Builder> {
        let held = b
            .written
            .owner
            .and_then(|o| self.values[o as usize].builder.clone());
        match held {
            Some(mut cur) if b.spec.text.is_some() => {
                cur.written.list.clone_from(&b.written.list);
                cur
            }
            _ => b,
        }
    }

    /// A step on a builder with a known text (the pack's `text` table) writes to it,
    /// and to the local holding the builder. Any other step leaves the text unknown.
    pub(super) fn text_step(
        &mut self,
        b: &mut Builder,
        name: &str,
        args: &[&Expr],
        infos: &[Info],
    ) {
        let Some(t) = b.spec.text.clone() else { return };
        let text_methods = &self.cx.apis.std.text_methods;
        let has = |list: &[String]| list.iter().any(|m| m == name);
        if has(&t.keeps) {
            return;
        }
        let w = &mut b.written;
        let lit = infos.first().and_then(|i| i.str_lit.clone());
        if has(&t.fills) {
            w.binds += 1;
            let piece = bound_text(args.first().copied(), infos.first(), w.binds, text_methods);
            let filled = w
                .text
                .as_deref()
                .filter(|_| !piece.starts_with('$'))
                .and_then(|text| fill_placeholder(text, w.binds, w.binds - w.filled, &piece));
            if let Some((text, bare)) = filled {
                w.text = Some(text);
                w.grown = true;
                w.filled += usize::from(bare);
            }
        } else if has(&t.lists) {
            w.list = Some(lit.unwrap_or_else(|| ", ".into()));
            w.listed = false;
        } else if has(&t.appends) || has(&t.binds) {
            let piece = if has(&t.binds) {
                w.binds += 1;
                Some(bound_text(
                    args.first().copied(),
                    infos.first(),
                    w.binds,
                    text_methods,
                ))
            } else {
                lit
            };
            let separated = w.list.is_some() && !has(&t.unseparated);
            match (w.text.as_mut(), piece) {
                (Some(text), Some(piece)) => {
                    if separated && w.listed {
                        text.push_str(w.list.as_deref().unwrap_or_default());
                    }
                    text.push_str(&piece);
                    w.grown = true;
                }
                _ => w.text = None,
            }
            w.listed |= separated;
        } else {
            w.text = None;
        }
        if let Some(o) = w.owner {
            let mut held = b.clone();
            held.written.list = None;
            self.values[o as usize].builder = Some(Box::new(held));
        }
    }

    /// A builder lent mutably (`add_filter(&mut qb)`): what the borrower writes is
    /// not known, so neither is the text.
    pub(super) fn lend_builder(&mut self, info: &Info) {
        let owner = info.builder.as_ref().and_then(|b| b.written.owner);
        if let Some(held) = owner.and_then(|o| self.values[o as usize].builder.as_mut()) {
            held.written.text = None;
        }
    }

    /// At the builder's terminal: the statement its steps wrote, when it parses; a
    /// builder a local holds runs here, at `loc`.
    pub(super) fn finish_text(&self, b: &mut Builder, loc: &Loc, text: &str) {
        if b.spec.text.is_none() {
            return;
        }
        if let (true, Some(written)) = (b.written.grown, b.written.text.as_deref()) {
            let facts = sql::facts(written);
            if facts.kind != SqlKind::Unknown {
                b.sql = Some(facts);
            }
        }
        if b.written.owner.is_some() {
            b.loc = loc.clone();
            b.text = text.to_string();
        }
    }
}

/// What a bound value writes into the text: a string literal or constant as its
/// literal; an enum variant (or a constant whose value is a number) or a constant's path (`Status::Complete`, `DELIVERED`)
/// as the literal its last name spells (`'complete'`); else a placeholder.
fn bound_text(
    e: Option<&Expr>,
    info: Option<&Info>,
    n: usize,
    text_methods: &foldhash::HashSet<String>,
) -> String {
    // A constant's number is a code, not a word: its name says what it means.
    let word = info
        .and_then(|i| i.str_lit.as_deref())
        .filter(|s| s.trim().parse::<f64>().is_err());
    if let Some(s) = word {
        return format!("'{}'", s.replace('\'', "''"));
    }
    if let Some(Expr::Path(p)) = e.map(strip).map(|e| unconverted(e, text_methods)) {
        let segs = &p.path.segments;
        if let Some(last) = segs.last().map(|s| s.ident.to_string()) {
            let variant = segs.len() >= 2 && last.starts_with(|c: char| c.is_ascii_uppercase());
            let constant = segs.len() == 1
                && last.chars().any(|c| c.is_ascii_uppercase())
                && !last.chars().any(|c| c.is_ascii_lowercase());
            if variant || constant {
                return format!("'{}'", snake(&last));
            }
        }
    }
    format!("${n}")
}

/// `e` without the no-argument methods whose result holds the receiver's text (the
/// runtime pack's `text_methods`: `Status::Complete.to_string()`, `.as_str()`): the
/// bound text is the value's own.
fn unconverted<'e>(mut e: &'e Expr, text_methods: &foldhash::HashSet<String>) -> &'e Expr {
    while let Expr::MethodCall(m) = e {
        if !m.args.is_empty() || !text_methods.contains(&m.method.to_string()) {
            break;
        }
        e = strip(&m.receiver);
    }
    e
}

/// `text` with its `n`th placeholder (`$n`, `?n`, else the `bare`-th `?` left,
/// outside quotes) replaced by `lit`, and whether it was a bare `?`; `None` when it
/// has none.
fn fill_placeholder(text: &str, n: usize, bare: usize, lit: &str) -> Option<(String, bool)> {
    let chars: Vec<char> = text.chars().collect();
    // (start, end) of each placeholder outside quotes, with its number if written.
    let mut marks: Vec<(usize, usize, Option<usize>)> = Vec::new();
    let mut quoted = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            quoted = !quoted;
        } else if !quoted && (c == '$' || c == '?') {
            let mut j = i + 1;
            while j < chars.len() && chars[j].is_ascii_digit() {
                j += 1;
            }
            let number: Option<usize> = chars[i + 1..j].iter().collect::<String>().parse().ok();
            if number.is_some() || c == '?' {
                marks.push((i, j, number));
            }
            i = j;
            continue;
        }
        i += 1;
    }
    let numbered = marks.iter().find(|m| m.2 == Some(n));
    let (start, end, number) = match numbered {
        Some(m) => *m,
        None => *marks
            .iter()
            .filter(|m| m.2.is_none())
            .nth(bare.checked_sub(1)?)?,
    };
    let mut out: String = chars[..start].iter().collect();
    out.push_str(lit);
    out.extend(&chars[end..]);
    Some((out, number.is_none()))
}

/// `InProgress` → `in_progress`, `DELIVERED` → `delivered`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fill_placeholder;

    #[test]
    fn placeholders_are_filled_by_number_or_position() {
        let fill = |t: &str, n| fill_placeholder(t, n, n, "'complete'").map(|f| f.0);
        assert_eq!(
            fill("DELETE FROM t WHERE status = $1", 1).as_deref(),
            Some("DELETE FROM t WHERE status = 'complete'")
        );
        assert_eq!(
            fill("DELETE FROM t WHERE a = $10 AND status = $1", 1).as_deref(),
            Some("DELETE FROM t WHERE a = $10 AND status = 'complete'")
        );
        assert_eq!(
            fill("UPDATE t SET a = ? WHERE status = ? AND b = '?'", 2).as_deref(),
            Some("UPDATE t SET a = ? WHERE status = 'complete' AND b = '?'")
        );
        assert_eq!(
            fill("DELETE FROM t WHERE status = ?1", 1).as_deref(),
            Some("DELETE FROM t WHERE status = 'complete'")
        );
        assert_eq!(fill("DELETE FROM t WHERE id = $1", 2), None);
        // The second `?` once the first is filled is the first one left.
        assert_eq!(
            fill_placeholder("WHERE k = 'a' AND status = ?", 2, 1, "'sent'"),
            Some(("WHERE k = 'a' AND status = 'sent'".to_string(), true))
        );
    }
}
