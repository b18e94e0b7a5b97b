//! Escaping of what the output quotes from the analyzed tree, one function per
//! kind of output:
//!
//! - [`uri_path`]: a path in a URI reference (SARIF `uri`).

use std::fmt::Write as _;

/// A path as the path of a URI reference (RFC 3986): `/` stays the separator, and
/// every byte outside the unreserved set (`A-Z a-z 0-9 - . _ ~`) is
/// percent-encoded, so that a segment never holds a reserved or unsafe character
/// (`\`, `:`, `#`, `?`, `%`, a space, ...) as itself. `keep_colon_at` keeps the
/// colon of a Windows drive (`C:`), which SARIF's `file:///C:/x` needs.
pub fn uri_path(path: &str, keep_colon_at: Option<usize>) -> String {
    let mut out = String::with_capacity(path.len());
    for (i, &b) in path.as_bytes().iter().enumerate() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/')
            || (b == b':' && keep_colon_at == Some(i));
        if keep {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_paths_encode_everything_but_unreserved_and_slash() {
        assert_eq!(uri_path("src/a.rs", None), "src/a.rs");
        assert_eq!(uri_path("src/a b#1.rs", None), "src/a%20b%231.rs");
        assert_eq!(uri_path("src/back\\slash.rs", None), "src/back%5Cslash.rs");
        assert_eq!(uri_path("src/é.rs", None), "src/%C3%A9.rs");
        assert_eq!(
            uri_path("a:b/c?d%e(f).rs", None),
            "a%3Ab/c%3Fd%25e%28f%29.rs"
        );
        assert_eq!(uri_path("C:/x.rs", Some(1)), "C:/x.rs");
    }
}
