//! Conversions between msgaudit's positions and paths and the protocol's: file URIs,
//! and columns (msgaudit counts characters; LSP counts UTF-16 code units unless the
//! client accepts UTF-8 or UTF-32, `positionEncoding`).

use std::path::{Path, PathBuf};

use lsp_types::{Position, PositionEncodingKind, Range, Uri};

use crate::diagnostic::Span;

/// How the protocol's `character` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
    Utf32,
}

impl Encoding {
    /// The client's preferred encoding among those it offers (`general.positionEncodings`,
    /// in order of preference), UTF-16 when it offers none.
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
        for kind in offered.unwrap_or_default() {
            match kind.as_str() {
                "utf-32" => return Encoding::Utf32,
                "utf-8" => return Encoding::Utf8,
                "utf-16" => return Encoding::Utf16,
                _ => {}
            }
        }
        Encoding::Utf16
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
            Encoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    fn units(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Utf32 => 1,
        }
    }
}

/// The text of 0-based `line` in `text`, without its line break (empty past the end).
pub fn line_text(text: &str, line: usize) -> &str {
    let l = text.split('\n').nth(line).unwrap_or("");
    l.strip_suffix('\r').unwrap_or(l)
}

/// The protocol position of 1-based `line` and 1-based character `column` in `text`.
/// An unknown line (0) is the start of the file.
pub fn position(text: &str, line: u32, column: u32, enc: Encoding) -> Position {
    if line == 0 {
        return Position::new(0, 0);
    }
    let l = line_text(text, line as usize - 1);
    let character: usize = l
        .chars()
        .take(column.max(1) as usize - 1)
        .map(|c| enc.units(c))
        .sum();
    Position::new(line - 1, character as u32)
}

/// The protocol range of `span` in `text`.
pub fn range(text: &str, span: &Span, enc: Encoding) -> Range {
    let start = position(text, span.line, span.column, enc);
    let end = if span.end_line == 0 {
        start
    } else {
        position(text, span.end_line, span.end_column, enc)
    };
    Range::new(start, end)
}

/// The 1-based line and 1-based character column of a protocol position in `text`
/// (a character past the line's end is its end).
pub fn line_column(text: &str, p: Position, enc: Encoding) -> (u32, u32) {
    let l = line_text(text, p.line as usize);
    let mut units = 0;
    let mut column = 1;
    for c in l.chars() {
        if units >= p.character as usize {
            break;
        }
        units += enc.units(c);
        column += 1;
    }
    (p.line + 1, column)
}

/// Byte offset in `text` of a protocol position (clamped to the text).
pub fn offset(text: &str, p: Position, enc: Encoding) -> usize {
    let mut start = 0;
    for _ in 0..p.line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let mut units = 0;
    for (i, c) in text[start..end].char_indices() {
        if units >= p.character as usize {
            return start + i;
        }
        units += enc.units(c);
    }
    end
}

/// The protocol position of byte `offset` in `text` (clamped to the text, and back
/// to a character boundary).
pub fn position_at(text: &str, offset: usize, enc: Encoding) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count();
    let character: usize = text[start..offset].chars().map(|c| enc.units(c)).sum();
    Position::new(line as u32, character as u32)
}

/// A `file:` URI of an absolute path (bytes outside the unreserved set and `/`
/// percent-encoded).
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    let s = path.to_str()?;
    if !s.starts_with('/') {
        return None;
    }
    let mut out = String::from("file://");
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out.parse().ok()
}

/// The path of a `file:` URI (`file:///abs`, `file://localhost/abs`), percent-decoded.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    let s = uri.as_str();
    let rest = s.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let b = rest.as_bytes();
    let mut bytes = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                bytes.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        bytes.push(b[i]);
        i += 1;
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
    }
    #[cfg(not(unix))]
    {
        String::from_utf8(bytes).ok().map(PathBuf::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_convert_in_each_encoding() {
        let text = "a\n  é𝄞x = 1;\r\nlast";
        // `x` is the 5th character of line 2: é is 2 UTF-8 bytes, 𝄞 is 4 bytes and
        // 2 UTF-16 units.
        for (enc, character) in [
            (Encoding::Utf32, 4),
            (Encoding::Utf16, 5),
            (Encoding::Utf8, 8),
        ] {
            let p = position(text, 2, 5, enc);
            assert_eq!(p, Position::new(1, character), "{enc:?}");
            assert_eq!(line_column(text, p, enc), (2, 5), "{enc:?}");
            assert_eq!(&text[offset(text, p, enc)..][..1], "x", "{enc:?}");
            assert_eq!(position_at(text, offset(text, p, enc), enc), p, "{enc:?}");
        }
        assert_eq!(line_text(text, 1), "  é𝄞x = 1;");
        assert_eq!(
            offset(text, Position::new(9, 0), Encoding::Utf16),
            text.len()
        );
        assert_eq!(position(text, 0, 0, Encoding::Utf16), Position::new(0, 0));
    }

    #[test]
    fn uris_round_trip() {
        let p = Path::new("/work/a b/ünï#x.rs");
        let uri = path_to_uri(p).unwrap();
        assert_eq!(uri.as_str(), "file:///work/a%20b/%C3%BCn%C3%AF%23x.rs");
        assert_eq!(uri_to_path(&uri).unwrap(), p);
        let localhost: Uri = "file://localhost/x/y%2Fz.rs".parse().unwrap();
        assert_eq!(uri_to_path(&localhost).unwrap(), Path::new("/x/y/z.rs"));
        let other: Uri = "untitled:Untitled-1".parse().unwrap();
        assert_eq!(uri_to_path(&other), None);
        assert_eq!(path_to_uri(Path::new("relative.rs")), None);
    }

    #[test]
    fn negotiates_the_clients_first_known_encoding() {
        let offered = [
            PositionEncodingKind::new("utf-7"),
            PositionEncodingKind::UTF32,
        ];
        assert_eq!(Encoding::negotiate(Some(&offered)), Encoding::Utf32);
        assert_eq!(Encoding::negotiate(None), Encoding::Utf16);
    }
}
