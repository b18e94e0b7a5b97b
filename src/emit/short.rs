//! `--format short`: gcc-style lines for editors' problem matchers.

use crate::diagnostic::Report;

/// `path:line:col: severity[CODE]: message` for each finding, then
/// `path:line:col: error: message` for each input error (`path: error: message`
/// when the error has no position).
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        out.push_str(&format!(
            "{}:{}:{}: {}[{}]: {}\n",
            f.path,
            f.span.line,
            f.span.column,
            f.severity.as_str(),
            f.code,
            f.message
        ));
    }
    for e in &report.errors {
        match (e.line, e.column) {
            (Some(l), Some(c)) => {
                out.push_str(&format!("{}:{l}:{c}: error: {}\n", e.path, e.message))
            }
            (Some(l), None) => out.push_str(&format!("{}:{l}: error: {}\n", e.path, e.message)),
            _ => out.push_str(&format!("{}: error: {}\n", e.path, e.message)),
        }
    }
    out
}
