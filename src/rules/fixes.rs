//! Building fixes (SPEC §4, "Fixes") from the positions the front ends record: a
//! rule says which value a setting must take; the edit replaces the value's text
//! where it is written in place ([`crate::ir::Prop::value_at`]).

use crate::diagnostic::{Applicability, Edit, Fix};
use crate::ir::Prop;

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

/// A safe fix of the given edits, when every setting it needs has one (a partial
/// fix would leave the finding standing).
pub fn safe(title: String, edits: Vec<Option<Edit>>) -> Option<Fix> {
    of(title, Applicability::Safe, edits)
}

/// An unsafe fix (SPEC §4: right in most programs, but it can change behaviour;
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
