//! Line and column positions in text.

/// 1-based line and column (counted in characters) of byte offset `byte` in
/// `text`. An offset past the end, or inside a character, is clamped.
pub fn line_col(text: &str, byte: usize) -> (u32, u32) {
    let mut byte = byte.min(text.len());
    while !text.is_char_boundary(byte) {
        byte -= 1;
    }
    let before = &text[..byte];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line as u32, column as u32)
}

/// Maps 1-based line and 0-based character column to byte offsets, and byte
/// offsets to 1-based line and column, in time that does not grow with the length
/// of the line (a file may be one 10 MB line).
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// `None` when the text is ASCII (a column is then a byte count).
    chars: Option<CharIndex>,
}

/// Characters per checkpoint of a [`CharIndex`].
const CHUNK: usize = 64;

/// Where characters are, for text that is not all ASCII.
struct CharIndex {
    /// Byte offset of character number `k * CHUNK`.
    checkpoints: Vec<usize>,
    /// Character number of each line's first character.
    line_chars: Vec<usize>,
    /// Characters in the text.
    total: usize,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let chars = (!text.is_ascii()).then(|| {
            let mut checkpoints = Vec::with_capacity(text.len() / CHUNK + 1);
            let mut line_chars = Vec::with_capacity(starts.len());
            line_chars.push(0);
            let mut total = 0;
            for (i, c) in text.char_indices() {
                if total % CHUNK == 0 {
                    checkpoints.push(i);
                }
                total += 1;
                if c == '\n' {
                    line_chars.push(total);
                }
            }
            CharIndex {
                checkpoints,
                line_chars,
                total,
            }
        });
        LineIndex {
            text,
            starts,
            chars,
        }
    }

    /// Byte offset of (1-based line, 0-based char column); clamped to the text. A
    /// column past the end of its line counts on into the next lines.
    pub fn offset(&self, line: usize, column: usize) -> usize {
        let Some(&start) = self.starts.get(line.saturating_sub(1)) else {
            return self.text.len();
        };
        match &self.chars {
            None => start.saturating_add(column).min(self.text.len()),
            Some(ci) => {
                let n = ci.line_chars[line.saturating_sub(1)].saturating_add(column);
                if n >= ci.total {
                    return self.text.len();
                }
                let from = ci.checkpoints[n / CHUNK];
                self.text[from..]
                    .char_indices()
                    .nth(n % CHUNK)
                    .map_or(self.text.len(), |(i, _)| from + i)
            }
        }
    }

    /// 1-based line and column (counted in characters) of byte offset `byte`, as
    /// [`crate::support::lines::line_col`] gives them: an offset past the end, or inside a
    /// character, is clamped.
    pub fn line_col(&self, byte: usize) -> (u32, u32) {
        let mut byte = byte.min(self.text.len());
        while !self.text.is_char_boundary(byte) {
            byte -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= byte);
        let start = self.starts[line - 1];
        let column = match &self.chars {
            None => byte - start,
            Some(ci) => {
                let k = ci.checkpoints.partition_point(|&c| c <= byte) - 1;
                let n = k * CHUNK + self.text[ci.checkpoints[k]..byte].chars().count();
                n - ci.line_chars[line - 1]
            }
        };
        (line as u32, column as u32 + 1)
    }

    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The 1-based line byte offset `byte` is on (an offset past the end is on the
    /// last line).
    pub fn line_of(&self, byte: usize) -> usize {
        self.starts.partition_point(|&s| s <= byte).max(1)
    }

    /// Byte offset of the start of 1-based `line`; `None` past the last line.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line.checked_sub(1)?).copied()
    }

    /// The span from the start of `start` to the end of `end` (proc-macro2 positions:
    /// 1-based lines, 0-based character columns).
    pub fn span(
        &self,
        start: proc_macro2::Span,
        end: proc_macro2::Span,
    ) -> crate::diagnostic::Span {
        let (s, e) = (start.start(), end.end());
        crate::diagnostic::Span {
            line: s.line as u32,
            column: s.column as u32 + 1,
            end_line: e.line as u32,
            end_column: e.column as u32 + 1,
            byte_start: self.offset(s.line, s.column),
            byte_end: self.offset(e.line, e.column),
        }
    }
}

/// The span of `value` written in place at `span` of `text`: the span itself when
/// its text is `value`, or the inside of its quotes when it is `"value"` or
/// `'value'`, all on one line (so not through an escape or a line fold). A fix
/// replaces that text and keeps the quoting style.
pub fn in_place(
    text: &str,
    span: crate::diagnostic::Span,
    value: &str,
) -> Option<crate::diagnostic::Span> {
    let written = text.get(span.byte_start..span.byte_end)?;
    if span.line != span.end_line || written.contains(['\n', '\r']) || value.is_empty() {
        return None;
    }
    if written == value {
        return Some(span);
    }
    let quoted = written.len() >= 2
        && (written.starts_with('"') && written.ends_with('"')
            || written.starts_with('\'') && written.ends_with('\''));
    if quoted && &written[1..written.len() - 1] == value {
        return Some(crate::diagnostic::Span {
            column: span.column + 1,
            end_column: span.end_column - 1,
            byte_start: span.byte_start + 1,
            byte_end: span.byte_end - 1,
            ..span
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::LineIndex;

    #[test]
    fn offsets_count_characters() {
        let idx = LineIndex::new("ab\nçd\n");
        assert_eq!(idx.offset(1, 1), 1);
        assert_eq!(idx.offset(2, 0), 3);
        assert_eq!(idx.offset(2, 1), 5);
        assert_eq!(idx.offset(9, 0), 7);
    }

    /// The index agrees with a plain walk over the characters, on ASCII and other
    /// text, short and long lines, and offsets past the end.
    #[test]
    fn index_agrees_with_a_plain_walk() {
        let slow_offset = |text: &str, line: usize, column: usize| {
            let mut starts = vec![0];
            starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
            let Some(&start) = starts.get(line.saturating_sub(1)) else {
                return text.len();
            };
            text[start..]
                .char_indices()
                .nth(column)
                .map_or(text.len(), |(i, _)| start + i)
        };
        let long = format!("{}é{}\n\nx", "a".repeat(130), "ü".repeat(200));
        for text in [
            "",
            "\n",
            "abc",
            "ab\r\nc\td\n",
            "é\nxé y",
            "\u{feff}a\n😀b\nc",
            long.as_str(),
        ] {
            let idx = LineIndex::new(text);
            for line in 0..5 {
                for column in 0..340 {
                    assert_eq!(
                        idx.offset(line, column),
                        slow_offset(text, line, column),
                        "{text:?} {line}:{column}"
                    );
                }
            }
            for byte in 0..text.len() + 3 {
                assert_eq!(
                    idx.line_col(byte),
                    crate::support::lines::line_col(text, byte),
                    "{text:?} at {byte}"
                );
            }
        }
    }

    #[test]
    fn a_long_line_is_not_walked_for_every_lookup() {
        let text = format!("{}\n", "é".repeat(2_000_000));
        let idx = LineIndex::new(&text);
        let start = std::time::Instant::now();
        for column in (0..2_000_000).step_by(100) {
            assert_eq!(idx.offset(1, column), 2 * column);
            assert_eq!(idx.line_col(2 * column), (1, column as u32 + 1));
        }
        // 20 000 lookups on one 4 MB line: a walk from the line start each time
        // would take minutes.
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
    }
}
