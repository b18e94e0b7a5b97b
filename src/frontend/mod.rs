//! Front ends: turn source text into the delivery model (`crate::ir`). They never
//! decide whether something is a defect, and they never fail: a file that cannot be
//! read or parsed becomes an `InputError` and the rest is still lowered.

pub mod duration;
pub mod rust;
pub mod yaml;

/// Maps 1-based line and 0-based character column to byte offsets.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    /// Byte offset of (1-based line, 0-based char column); clamped to the text.
    pub fn offset(&self, line: usize, column: usize) -> usize {
        let Some(&start) = self.starts.get(line.saturating_sub(1)) else {
            return self.text.len();
        };
        let rest = &self.text[start..];
        rest.char_indices()
            .nth(column)
            .map(|(i, _)| start + i)
            .unwrap_or(self.text.len().min(start + rest.len()))
    }

    pub fn text(&self) -> &'a str {
        self.text
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
}
