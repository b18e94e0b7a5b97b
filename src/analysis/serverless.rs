//! Serverless event sources (docs/what-is-analyzed.md): which batch handlers an event source mapping
//! of the deploy YAML runs. A neutral fact, read by a rule and by the inventory.

use crate::ir::{BatchHandler, EventSourceMapping};

/// Spellings of one binary name compare alike: case, `-` and `_`.
fn same_name(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.to_ascii_lowercase().replace('-', "_");
    norm(a) == norm(b)
}

/// The handlers a mapping runs: by name, or the one handler of its event type when
/// it is the one mapping of that type.
pub fn linked<'h>(
    m: &EventSourceMapping,
    mappings: &[EventSourceMapping],
    handlers: &'h [BatchHandler],
) -> Vec<&'h BatchHandler> {
    let by_name: Vec<&BatchHandler> = handlers
        .iter()
        .filter(|h| m.source.is_none_or(|s| s == h.source))
        .filter(|h| {
            h.names
                .iter()
                .any(|n| m.names.iter().any(|x| same_name(n, x)))
        })
        .collect();
    if !by_name.is_empty() {
        return by_name;
    }
    let of_type: Vec<&BatchHandler> = match m.source {
        Some(s) => handlers.iter().filter(|h| h.source == s).collect(),
        None => handlers.iter().collect(),
    };
    let mappings_of_type = mappings
        .iter()
        .filter(|x| match m.source {
            Some(s) => x.source == Some(s),
            None => true,
        })
        .count();
    if of_type.len() == 1 && mappings_of_type == 1 {
        return of_type;
    }
    Vec::new()
}
