//! `--format short`: gcc-style lines for editors' problem matchers.

use super::escape::text;
use crate::report::Report;

/// `path:line:col: severity[CODE]: message` for each finding, then
/// `path:line:col: error: message` for each input error (`path: error: message`
/// when the error has no position). Paths and messages are escaped with
/// [`text`], so each finding and each error is exactly one line.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        out.push_str(&format!(
            "{}:{}:{}: {}[{}]: {}\n",
            text(&f.path),
            f.span.line,
            f.span.column,
            f.severity.as_str(),
            f.code,
            text(&f.message)
        ));
    }
    for e in &report.errors {
        let (path, message) = (text(&e.path), text(&e.message));
        match (e.line, e.column) {
            (Some(l), Some(c)) => out.push_str(&format!("{path}:{l}:{c}: error: {message}\n")),
            (Some(l), None) => out.push_str(&format!("{path}:{l}: error: {message}\n")),
            _ => out.push_str(&format!("{path}: error: {message}\n")),
        }
    }
    out
}
