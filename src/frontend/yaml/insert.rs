//! Where a setting a client lacks could be written into its YAML block, and how
//! (docs/fixes.md, "Fixes": a missing key is inserted in the client's block with the
//! block's indentation and quoting style). The front end records the layout
//! ([`Insertion`]); the rules decide whether to insert. A block is recorded only
//! when it is unambiguous: a block map whose keys each start a line of their own at
//! one indentation, written in place (no alias, merge key, anchor, tag or flow
//! style), holding no template (`${…}`, `{{…}}`), and whose last line is not
//! continued below it.

use super::tree::{Node, Value};
use crate::diagnostic::Span;
use crate::ir::{Insertion, Loc};

/// How the format writes keys into the block: the explicit spellings, and the
/// prefix of raw Kafka keys (if it takes them).
pub struct Keys {
    pub keys: Vec<(String, String)>,
    pub prefix: Option<String>,
}

/// The insertion point of `block` (held by the key `holder`; `None`: the block is
/// the document or a list item), or `None` when the block is not one a fix may
/// extend.
pub fn block(
    text: &str,
    loc: &dyn Fn(Span) -> Loc,
    holder: Option<&Node>,
    block: &Node,
    keys: Keys,
) -> Option<Box<Insertion>> {
    let mut entries: Vec<_> = block.entries().iter().collect();
    if entries.is_empty() || (keys.keys.is_empty() && keys.prefix.is_none()) {
        return None;
    }
    entries.sort_by_key(|e| e.key.span.byte_start);
    // Every key written where it stands (not merged in), each at the start of its
    // own line (after `- ` for a list item's first key), all at one column.
    let mut width = None;
    for (i, e) in entries.iter().enumerate() {
        e.key.in_place?;
        let start = e.key.span.byte_start;
        let line_start = text[..start].rfind('\n').map_or(0, |n| n + 1);
        let prefix = &text[line_start..start];
        let plain = prefix.chars().all(|c| c == ' ');
        let item = i == 0 && holder.is_none() && is_item_prefix(prefix);
        if !plain && !item {
            return None;
        }
        let w = prefix.chars().count();
        if *width.get_or_insert(w) != w {
            return None;
        }
    }
    let width = width?;
    let first = entries[0].key.span.byte_start;
    // Between the holder key and the block: only the colon, blanks and comments
    // (no anchor, tag, alias or flow brace), and the block starts on a later line.
    if let Some(h) = holder {
        let between = text.get(h.span.byte_end..first)?;
        if !between.contains('\n') {
            return None;
        }
        let bare: String = between
            .lines()
            .map(|l| l.split(" #").next().unwrap_or(""))
            .collect();
        if !bare
            .chars()
            .all(|c| matches!(c, ':' | ' ' | '\t' | '\r' | '"' | '\''))
        {
            return None;
        }
    }
    // The end of the block's last line.
    let last = entries.last()?;
    let end = leaf_end(&last.value, 0)?.max(last.key.span.byte_end);
    let line_end = text[end..].find('\n').map_or(text.len(), |n| end + n);
    let at = if line_end > end && text.as_bytes()[line_end - 1] == b'\r' {
        line_end - 1
    } else {
        line_end
    };
    let rest = text[end..at].trim_start_matches([' ', '\t', ']', '}', ',']);
    if !(rest.is_empty() || rest.starts_with('#')) {
        return None;
    }
    // Nothing below continues the block's last line (a folded scalar, a flow
    // collection): the next line with content is outside the block.
    for l in text[line_end.min(text.len())..].lines().skip(1) {
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let indent = l.len() - l.trim_start_matches(' ').len();
        let marker = l.starts_with("---") || l.starts_with("...");
        if !(marker || indent < width) {
            return None;
        }
        break;
    }
    let region_start = text[..first].rfind('\n').map_or(0, |n| n + 1);
    let region = &text[region_start..at];
    if ["${", "{{", "{%", "<<"].iter().any(|t| region.contains(t)) {
        return None;
    }
    let newline = if text[at..].starts_with("\r\n") || (at == text.len() && text.contains("\r\n")) {
        "\r\n"
    } else {
        "\n"
    };
    let key_quote = one_quote(entries.iter().map(|e| &e.key), text);
    let value_quote = one_quote(
        entries
            .iter()
            .map(|e| &e.value)
            .filter(|v| v.as_str().is_some_and(|s| !is_plain_typed(s))),
        text,
    );
    let (line, column) = crate::support::lines::line_col(text, at);
    Some(Box::new(Insertion {
        at: loc(Span {
            line,
            column,
            end_line: line,
            end_column: column,
            byte_start: at,
            byte_end: at,
        }),
        indent: " ".repeat(width),
        newline: newline.into(),
        key_quote,
        value_quote,
        keys: keys.keys,
        prefix: keys.prefix,
        call: None,
    }))
}

/// `  - ` (or `- - `): a list item's first key.
fn is_item_prefix(prefix: &str) -> bool {
    let t = prefix.trim_start_matches(' ');
    !t.is_empty()
        && t.split_inclusive('-')
            .all(|p| p.trim_end_matches(' ') == "-")
}

/// Where the text of `node` ends: a scalar written in place on one line, or the
/// last of a collection's members.
fn leaf_end(node: &Node, depth: usize) -> Option<usize> {
    if depth > 64 {
        return None;
    }
    match &node.value {
        Value::Scalar(_) => node.in_place.map(|_| node.span.byte_end),
        Value::Map(m) => {
            let e = m.iter().max_by_key(|e| e.key.span.byte_start)?;
            Some(leaf_end(&e.value, depth + 1)?.max(e.key.span.byte_end))
        }
        Value::Seq(items) => {
            let last = items.iter().max_by_key(|i| i.span.byte_start)?;
            leaf_end(last, depth + 1)
        }
        Value::Null => None,
    }
}

/// The quote all of `nodes` are written with, when they agree on one.
fn one_quote<'a>(nodes: impl Iterator<Item = &'a Node>, text: &str) -> Option<char> {
    let mut quote = None;
    for n in nodes {
        let c = text[n.span.byte_start..].chars().next()?;
        let q = matches!(c, '"' | '\'').then_some(c)?;
        if *quote.get_or_insert(q) != q {
            return None;
        }
    }
    quote
}

/// A number or a boolean: written plain whatever the block quotes.
fn is_plain_typed(s: &str) -> bool {
    s.parse::<f64>().is_ok() || matches!(s, "true" | "false" | "True" | "False" | "TRUE" | "FALSE")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn at(text: &str, path: &[&str]) -> Option<Box<Insertion>> {
        let docs = super::super::tree::parse(text).unwrap();
        let mut node = &docs[0];
        let mut holder = None;
        for p in path {
            let e = node.entry(p).unwrap();
            holder = Some(&e.key);
            node = &e.value;
        }
        let loc = |span| Loc {
            path: Arc::from("f.yaml"),
            span,
        };
        block(
            text,
            &loc,
            holder,
            node,
            Keys {
                keys: Vec::new(),
                prefix: Some(String::new()),
            },
        )
    }

    #[test]
    fn the_end_of_the_last_line_with_the_block_style() {
        let text = "a:\n  b:\n    \"x\": 'one' # c\n    \"y\":\n      - 2\n  z: 3\n";
        let i = at(text, &["a", "b"]).unwrap();
        assert_eq!(i.at.span.byte_start, text.find("\n  z").unwrap());
        assert_eq!(i.indent, "    ");
        assert_eq!(i.key_quote, Some('"'));
        assert_eq!(i.value_quote, Some('\''));
        assert_eq!(i.newline, "\n");
        let crlf = "a:\r\n  x: 1\r\n";
        let i = at(crlf, &["a"]).unwrap();
        assert_eq!((i.at.span.byte_start, i.newline.as_str()), (10, "\r\n"));
        assert_eq!(i.key_quote, None);
    }

    #[test]
    fn ambiguous_blocks_have_none() {
        for text in [
            "a: {x: 1, y: 2}\n",
            "a:\n  x: ${X}\n",
            "d: &d\n  x: 1\na:\n  <<: *d\n  y: 2\n",
            "a: &a\n  x: 1\n",
            "a:\n  x: |\n    long\n",
            "a:\n  x: 'one\n    two'\n",
        ] {
            assert!(at(text, &["a"]).is_none(), "{text}");
        }
    }
}
