//! `--format github`: GitHub Actions workflow commands, which the runner turns
//! into annotations on the pull request's diff.
//!
//! One line per finding:
//! `::error file=PATH,line=L,col=C,endLine=EL,endColumn=EC,title=MA0NN rule-name::MESSAGE`
//! (`::warning` for warnings). The message is followed, on further lines of the
//! same annotation, by the related places, the failure window and the help.
//! Input errors are `::error file=PATH,line=L,col=C::MESSAGE`, without the
//! position parts they lack.
//!
//! Escaping follows the runner's parser: `%`, `\r` and `\n` are escaped
//! everywhere; `:` and `,` also in property values, never in the message. Before
//! that, every part that comes from the analyzed tree (paths, messages, labels,
//! window, help) is escaped with [`text`]: a newline in quoted code
//! shows as `\n` inside its line of the annotation, and only msgaudit's own line
//! breaks (between the message, the related places, the window and the help)
//! become `%0A`.

use super::escape::text;
use crate::diagnostic::{Finding, InputError, Severity};
use crate::report::Report;

/// Escapes the message part of a workflow command.
pub fn escape_data(s: &str) -> String {
    escape(s, false)
}

/// Escapes a property value (`file=`, `title=`) of a workflow command.
pub fn escape_property(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, property: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' if property => out.push_str("%3A"),
            ',' if property => out.push_str("%2C"),
            c => out.push(c),
        }
    }
    out
}

/// One workflow command: `::command key=value,...::message` and a newline.
fn command(name: &str, properties: &[(&str, String)], message: &str) -> String {
    let props = properties
        .iter()
        .map(|(k, v)| format!("{k}={}", escape_property(v)))
        .collect::<Vec<_>>()
        .join(",");
    format!("::{name} {props}::{}\n", escape_data(message))
}

fn finding(f: &Finding) -> String {
    let s = &f.span;
    let mut props = vec![("file", text(&f.path).into_owned())];
    if s.line > 0 {
        props.push(("line", s.line.to_string()));
        if s.column > 0 {
            props.push(("col", s.column.to_string()));
        }
        if s.end_line >= s.line {
            props.push(("endLine", s.end_line.to_string()));
            if s.end_column > 0 {
                props.push(("endColumn", s.end_column.to_string()));
            }
        }
    }
    props.push(("title", format!("{} {}", f.code, f.name)));
    let mut message = text(&f.message).into_owned();
    for l in &f.labels {
        message.push_str(&format!(
            "\n{}:{}:{}: {}",
            text(&l.path),
            l.span.line,
            l.span.column,
            text(&l.message)
        ));
    }
    if !f.window.is_empty() {
        message.push_str(&format!("\nwindow: {}", text(&f.window)));
    }
    if !f.help.is_empty() {
        message.push_str(&format!("\nhelp: {}", text(&f.help)));
    }
    let name = match f.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    command(name, &props, &message)
}

fn input_error(e: &InputError) -> String {
    let mut props = Vec::new();
    if !e.path.is_empty() {
        props.push(("file", text(&e.path).into_owned()));
    }
    if let Some(line) = e.line {
        props.push(("line", line.to_string()));
        if let Some(col) = e.column {
            props.push(("col", col.to_string()));
        }
    }
    let message = text(&e.message);
    if props.is_empty() {
        format!("::error::{}\n", escape_data(&message))
    } else {
        command("error", &props, &message)
    }
}

/// One command per finding, then one per input error.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        out.push_str(&finding(f));
    }
    for e in &report.errors {
        out.push_str(&input_error(e));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{Label, Span};

    #[test]
    fn data_escapes_percent_and_line_breaks_only() {
        assert_eq!(
            escape_data("100% done\r\nnext: a, b::c"),
            "100%25 done%0D%0Anext: a, b::c"
        );
        // `%` first: an already escaped-looking text is escaped again, not decoded.
        assert_eq!(escape_data("%0A"), "%250A");
    }

    #[test]
    fn properties_also_escape_colon_and_comma() {
        assert_eq!(escape_property("C:\\a,b%\n.rs"), "C%3A\\a%2Cb%25%0A.rs");
        assert_eq!(
            escape_property("MA001 ack-before-commit"),
            "MA001 ack-before-commit"
        );
    }

    fn sample() -> Finding {
        Finding {
            code: "MA001",
            name: "ack-before-commit",
            severity: Severity::Warning,
            path: "src/a,b:c.rs".into(),
            span: Span {
                line: 3,
                column: 5,
                end_line: 3,
                end_column: 9,
                ..Span::default()
            },
            message: "ack: before `tx.commit()`, 100%".into(),
            boundary: "b".into(),
            window: "w".into(),
            labels: vec![Label {
                path: "src/x.rs".into(),
                span: Span {
                    line: 1,
                    column: 2,
                    ..Span::default()
                },
                message: "here".into(),
            }],
            help: "h".into(),
            fix: None,
        }
    }

    #[test]
    fn finding_is_one_command_line() {
        assert_eq!(
            finding(&sample()),
            "::warning file=src/a%2Cb%3Ac.rs,line=3,col=5,endLine=3,endColumn=9,\
             title=MA001 ack-before-commit::ack: before `tx.commit()`, 100%25\
             %0Asrc/x.rs:1:2: here%0Awindow: w%0Ahelp: h\n"
        );
    }

    #[test]
    fn input_errors_carry_the_position_they_have() {
        let e = |line, column| InputError {
            path: "a.rs".into(),
            line,
            column,
            message: "expected `;`".into(),
        };
        assert_eq!(
            input_error(&e(Some(3), Some(1))),
            "::error file=a.rs,line=3,col=1::expected `;`\n"
        );
        assert_eq!(
            input_error(&e(Some(3), None)),
            "::error file=a.rs,line=3::expected `;`\n"
        );
        assert_eq!(
            input_error(&e(None, None)),
            "::error file=a.rs::expected `;`\n"
        );
        let mut no_path = e(None, None);
        no_path.path.clear();
        assert_eq!(input_error(&no_path), "::error::expected `;`\n");
    }
}
