//! A span-keeping YAML tree for schema-free walks.
//!
//! serde-saphyr parses (with its budget: alias bombs, deep nesting, document storms
//! are refused with an error), resolves anchors, aliases and merge keys, and hands
//! every node over with two locations: where it is referenced and where it is
//! defined. The tree keeps the *defined* location, so a value reached through an
//! alias or a merge key points where it is written (the anchor's definition).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Location, Spanned};

use crate::diagnostic::Span;
use crate::support::lines::LineIndex;

/// One YAML node with the span of its text (for collections: of their first token).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub value: Value,
    pub span: Span,
    /// A scalar written in place (not reached through an alias or a merge key): the
    /// span of its text inside any quotes, when that text is the value itself
    /// (`support::lines::in_place`), for a fix to replace.
    pub in_place: Option<Span>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Null,
    /// Any scalar, as text: `true`, `1`, `read_committed`.
    Scalar(String),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
}

impl Node {
    /// The scalar's text; `None` for null, sequences and maps.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s) => Some(s),
            _ => None,
        }
    }

    pub fn entries(&self) -> &[Entry] {
        match &self.value {
            Value::Map(m) => m,
            _ => &[],
        }
    }

    pub fn items(&self) -> &[Node] {
        match &self.value {
            Value::Seq(v) => v,
            _ => &[],
        }
    }

    pub fn is_map(&self) -> bool {
        matches!(self.value, Value::Map(_))
    }

    /// The entry whose key is `key` (the last one, as YAML loaders keep it).
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries()
            .iter()
            .rev()
            .find(|e| e.key.as_str() == Some(key))
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }
}

/// A parse failure: message and 1-based position when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub message: String,
}

/// Nesting deeper than this is refused: real configurations stay far below, and the
/// parse recurses once per level.
pub const MAX_DEPTH: usize = 64;
/// Nodes after alias expansion: stops alias bombs ("billion laughs").
pub const MAX_NODES: usize = 250_000;
pub const MAX_DOCUMENTS: usize = 1_024;

/// Parses every document of `text` (BOM already removed). Null documents are dropped.
pub fn parse(text: &str) -> Result<Vec<Node>, ParseError> {
    // YAML breaks lines at a CR alone too (old Mac line endings), and the parser
    // counts its lines so: a lone CR becomes a LF (one byte for one, so offsets stay)
    // for the line index to count the same lines, parse errors and findings alike.
    let normalized = lone_cr_to_lf(text);
    let text = normalized.as_deref().unwrap_or(text);
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: MAX_DEPTH,
            max_nodes: MAX_NODES,
            max_documents: MAX_DOCUMENTS,
        },
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
        with_snippet: false,
    };
    let read = |text: &str| {
        serde_saphyr::from_str_multiple_with_options::<Spanned<Raw>, Vec<_>>(text, options.clone())
    };
    let docs: Vec<Spanned<Raw>> = match read(text) {
        Ok(docs) => docs,
        // Application tags (`!choose [...]`, `!timestamp`, CloudFormation's `!GetAtt`)
        // are valid YAML that the typed reader may refuse to take as text: read the
        // file again with the tags blanked (offsets kept), as the front ends ignore
        // tags anyway; the first error stands if that fails too.
        Err(e) if is_tag_error(&e) => read(&blank_tags(text)).map_err(|_| error(&e))?,
        Err(e) => return Err(error(&e)),
    };
    // One index for the file: a line/column lookup per node must not walk the text.
    let lines = LineIndex::new(text);
    Ok(docs.into_iter().map(|d| convert(&lines, d)).collect())
}

/// The reader refused a tag (an unknown one, or a core tag on a value it cannot
/// take), not the file's syntax.
fn is_tag_error(e: &serde_saphyr::Error) -> bool {
    use serde_saphyr::Error as E;
    let mut inner = e;
    while let E::AliasError { error, .. } | E::WithSnippet { error, .. } = inner {
        inner = error;
    }
    matches!(
        inner,
        E::TaggedScalarCannotDeserializeIntoString { .. } | E::UnsupportedTag { .. }
    )
}

/// `text` with every tag (`!name`, `!!type`, `!<uri>`) at the start of a token
/// outside quotes and comments replaced by spaces: the same offsets, no tags.
fn blank_tags(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    for (start, line) in line_starts(text) {
        let b = line.as_bytes();
        let mut quote: Option<u8> = None;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            match quote {
                Some(q) => {
                    if c == q {
                        quote = None;
                    }
                }
                None => {
                    let at_token = i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'[' | b'{' | b',');
                    if c == b'#' && at_token {
                        break;
                    }
                    if (c == b'"' || c == b'\'') && at_token {
                        quote = Some(c);
                    } else if c == b'!' && at_token {
                        let mut j = i;
                        while j < b.len()
                            && !matches!(b[j], b' ' | b'\t' | b',' | b'[' | b']' | b'{' | b'}')
                        {
                            out[start + j] = b' ';
                            j += 1;
                        }
                        i = j;
                        continue;
                    }
                }
            }
            i += 1;
        }
    }
    // Only ASCII bytes were replaced by spaces.
    String::from_utf8(out).expect("still UTF-8")
}

/// Each line of `text` with the offset it starts at.
fn line_starts(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = 0;
    text.split('\n').map(move |line| {
        let s = start;
        start += line.len() + 1;
        (s, line)
    })
}

/// `text` with each CR not followed by a LF replaced by a LF; `None` when it has none.
fn lone_cr_to_lf(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let lone = |i: usize| b[i] == b'\r' && b.get(i + 1) != Some(&b'\n');
    if !(0..b.len()).any(lone) {
        return None;
    }
    let out: Vec<u8> = (0..b.len())
        .map(|i| if lone(i) { b'\n' } else { b[i] })
        .collect();
    // Only ASCII bytes were replaced by ASCII bytes.
    Some(String::from_utf8(out).expect("still UTF-8"))
}

fn error(e: &serde_saphyr::Error) -> ParseError {
    use serde_saphyr::budget::BudgetBreach as B;
    use serde_saphyr::Error as E;
    let loc = e.location().filter(|l| l.line() > 0);
    // Unwrap the alias-site and snippet wrappers to see what went wrong.
    let mut inner = e;
    while let E::AliasError { error, .. } | E::WithSnippet { error, .. } = inner {
        inner = error;
    }
    let message = match inner {
        E::Budget { breach, .. } => match breach {
            B::Depth { .. } => format!("refused: nesting deeper than {MAX_DEPTH} levels"),
            B::Nodes { .. } | B::Events { .. } => {
                format!("refused: the file expands to more than {MAX_NODES} nodes (an alias bomb?)")
            }
            B::Aliases { .. } | B::AliasAnchorRatio { .. } => {
                "refused: too many aliases for the anchors they expand (an alias bomb?)".to_string()
            }
            B::Documents { .. } => format!("refused: more than {MAX_DOCUMENTS} documents"),
            other => format!("refused: size limit exceeded ({other:?})"),
        },
        E::AliasReplayLimitExceeded { .. }
        | E::AliasExpansionLimitExceeded { .. }
        | E::AliasReplayStackDepthExceeded { .. }
        | E::AliasReplayCounterOverflow { .. } => {
            "refused: aliases expand too far (an alias bomb?)".to_string()
        }
        _ => {
            let mut m = e.to_string();
            // The position goes in the error's own fields; drop the " at line …" suffix.
            if let Some(i) = m.find(" at line ") {
                m.truncate(i);
            }
            if m.trim() == "recursion limit exceeded" {
                // The scanner's own limit on flow nesting (`[[[…`), met before the budget's.
                format!("refused: nesting deeper than {MAX_DEPTH} levels")
            } else {
                m.trim().to_string()
            }
        }
    };
    ParseError {
        line: loc.map(|l| l.line() as u32),
        column: loc.map(|l| l.column() as u32),
        message,
    }
}

fn span_of(lines: &LineIndex, loc: &Location) -> Span {
    let text = lines.text();
    let s = loc.span();
    if let (Some(start), Some(len)) = (s.byte_offset(), s.byte_len()) {
        let (start, len) = (start as usize, len as usize);
        let (line, column) = lines.line_col(start);
        let (end_line, end_column) = lines.line_col(start + len);
        return Span {
            line,
            column,
            end_line,
            end_column,
            byte_start: start,
            byte_end: (start + len).min(text.len()),
        };
    }
    let (line, column) = (loc.line() as u32, loc.column() as u32);
    Span {
        line,
        column,
        end_line: line,
        end_column: column + s.len() as u32,
        byte_start: 0,
        byte_end: 0,
    }
}

fn convert(lines: &LineIndex, raw: Spanned<Raw>) -> Node {
    let span = span_of(lines, &raw.defined);
    let mut in_place = None;
    let value = match raw.value {
        Raw::Null => Value::Null,
        Raw::Scalar(s) => {
            if raw.referenced == raw.defined {
                in_place = crate::support::lines::in_place(lines.text(), span, &s);
            }
            Value::Scalar(s)
        }
        Raw::Seq(v) => Value::Seq(v.into_iter().map(|n| convert(lines, n)).collect()),
        Raw::Map(m) => Value::Map(
            m.into_iter()
                .map(|(k, v)| Entry {
                    key: convert(lines, k),
                    value: convert(lines, v),
                })
                .collect(),
        ),
    };
    Node {
        value,
        span,
        in_place,
    }
}

/// What serde-saphyr hands over, before spans are turned into ours.
enum Raw {
    Null,
    Scalar(String),
    Seq(Vec<Spanned<Raw>>),
    Map(Vec<(Spanned<Raw>, Spanned<Raw>)>),
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Scalar(v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Scalar(v.to_string()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Raw, E> {
        Ok(Raw::Scalar(v.to_string()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Raw, E> {
        Ok(Raw::Scalar(v.to_string()))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Raw, E> {
        Ok(Raw::Scalar(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw::Scalar(v.to_string()))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Scalar(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Scalar(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Raw, E> {
        Ok(Raw::Scalar(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        Raw::deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
        Raw::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut out = Vec::new();
        while let Some(n) = seq.next_element::<Spanned<Raw>>()? {
            out.push(n);
        }
        Ok(Raw::Seq(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut out = Vec::new();
        while let Some(k) = map.next_key::<Spanned<Raw>>()? {
            let v = map.next_value::<Spanned<Raw>>()?;
            out.push((k, v));
        }
        Ok(Raw::Map(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(n: &Node) -> (u32, u32) {
        (n.span.line, n.span.column)
    }

    #[test]
    fn application_tags_are_read_as_untagged_values() {
        // Tags a typed reader refuses (a core-looking `!timestamp` on nothing, a tag
        // on a flow sequence) are valid YAML: read with the tags dropped, in place.
        let text = "t:\n  id: !var id\n  m:\n    !choose [\"a!b\", c]\n  ts: !timestamp\n  s: 'x !y' # !z\n";
        let docs = parse(text).unwrap();
        let t = docs[0].get("t").unwrap();
        assert_eq!(t.get("id").unwrap().as_str(), Some("id"));
        assert_eq!(t.get("m").unwrap().items()[0].as_str(), Some("a!b"));
        assert_eq!(at(&t.get("m").unwrap().items()[1]), (4, 21));
        assert_eq!(t.get("s").unwrap().as_str(), Some("x !y"));
        assert_eq!(blank_tags("a: !Ref B # !c\n"), "a:      B # !c\n");
        // A syntax error is still one, tags or not.
        assert!(parse("a: !x [\n").is_err());
    }

    #[test]
    fn keys_and_values_keep_positions() {
        let docs = parse("a:\n  b: 1\n  c: [x, true]\n").unwrap();
        assert_eq!(docs.len(), 1);
        let a = docs[0].entry("a").unwrap();
        assert_eq!(at(&a.key), (1, 1));
        let b = a.value.entry("b").unwrap();
        assert_eq!(at(&b.key), (2, 3));
        assert_eq!(at(&b.value), (2, 6));
        assert_eq!(b.value.as_str(), Some("1"));
        let c = a.value.get("c").unwrap();
        assert_eq!(c.items()[1].as_str(), Some("true"));
        assert_eq!(at(&c.items()[1]), (3, 10));
    }

    #[test]
    fn several_documents() {
        let docs = parse("a: 1\n---\nb: 2\n").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(at(&docs[1].entry("b").unwrap().key), (3, 1));
    }

    #[test]
    fn aliases_and_merge_keys_point_at_the_definition() {
        let text = "base: &b\n  acks: 1\nprod:\n  <<: *b\n  x: *b\n";
        let docs = parse(text).unwrap();
        let prod = docs[0].get("prod").unwrap();
        let acks = prod.entry("acks").unwrap();
        assert_eq!(at(&acks.value), (2, 9));
        let x = prod.get("x").unwrap();
        assert_eq!(at(&x.entry("acks").unwrap().value), (2, 9));
    }

    #[test]
    fn syntax_error_has_a_position() {
        let e = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(e.line.is_some(), "{e:?}");
    }

    #[test]
    fn characters_not_bytes() {
        let docs = parse("é: ñ\n").unwrap();
        let e = &docs[0].entries()[0];
        assert_eq!(at(&e.value), (1, 4));
    }
}
