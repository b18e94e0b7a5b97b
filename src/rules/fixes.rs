//! Building fixes (docs/fixes.md, "Fixes") from the positions the front ends record: a
//! rule says which value a setting must take; the edit replaces the value's text
//! where it is written in place ([`crate::ir::Prop::value_at`]), or adds the
//! setting to the client's block where it is missing ([`crate::ir::Insertion`]).

use crate::diagnostic::{Applicability, Edit, Fix};
use crate::ir::{KafkaClient, Prop};

/// The edit that makes the value of `p` read `to`, in the case the value was
/// written in (`READ_UNCOMMITTED` becomes `READ_COMMITTED`); `None` when the value is
/// not written in place (an alias, a constant, an implied setting) or already reads so.
pub fn set_value(p: &Prop, to: &str) -> Option<Edit> {
    let at = p.value_at.as_ref()?;
    let written = p.value.as_deref()?;
    let upper = written.chars().any(|c| c.is_ascii_uppercase())
        && !written.chars().any(|c| c.is_ascii_lowercase());
    let content = if upper {
        to.to_ascii_uppercase()
    } else {
        to.to_string()
    };
    (written != content).then(|| Edit {
        path: at.path.to_string(),
        span: at.span,
        content,
    })
}

/// The edit that adds the setting `key` (canonical name) with `value` to the
/// client's block, on a line of its own after the block's last, with the block's
/// indentation, quoting and line break, and the key as the block's format writes
/// it; `None` when the client sets the key already, may take settings from run
/// time, or has no block the front end found unambiguous.
pub fn insert_setting(c: &KafkaClient, key: &str, value: &str) -> Option<Edit> {
    if c.dynamic || c.prop(key).is_some() {
        return None;
    }
    let at = c.insert.as_deref()?;
    let written = at.key(key)?;
    let (k, v) = (
        quoted(&written, at.key_quote),
        quoted(value, at.value_quote),
    );
    let entry = match &at.call {
        // A Rust builder chain: one more call of its setter.
        Some(method) => format!(".{method}({k}, {v})"),
        None => format!("{k}: {v}"),
    };
    Some(Edit {
        path: at.at.path.to_string(),
        span: at.at.span,
        content: format!("{}{}{entry}", at.newline, at.indent),
    })
}

/// `s` in the quote the block uses, or plain when it reads the same so.
fn quoted(s: &str, quote: Option<char>) -> String {
    let plain = !s.is_empty()
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    match quote {
        Some(q) => format!("{q}{s}{q}"),
        None if plain => s.to_string(),
        None => format!("\"{s}\""),
    }
}

/// A safe fix of the given edits, when every setting it needs has one (a partial
/// fix would leave the finding standing).
pub fn safe(title: String, edits: Vec<Option<Edit>>) -> Option<Fix> {
    of(title, Applicability::Safe, edits)
}

/// An unsafe fix (docs/getting-started.md: right in most programs, but it can change behaviour;
/// applied only with `--unsafe-fixes`), when every edit it needs exists.
pub fn unsafe_fix(title: String, edits: Vec<Option<Edit>>) -> Option<Fix> {
    of(title, Applicability::Unsafe, edits)
}

fn of(title: String, applicability: Applicability, edits: Vec<Option<Edit>>) -> Option<Fix> {
    let edits: Option<Vec<Edit>> = edits.into_iter().collect();
    let mut edits = edits?;
    if edits.is_empty() {
        return None;
    }
    edits.sort();
    edits.dedup();
    Some(Fix {
        title,
        applicability,
        edits,
    })
}
