//! Hover and code actions: what the server answers from the last published report.

use std::collections::HashSet;

use lsp_types as lsp;

use super::{canonical, convert, tracked_kind, Server};
use crate::diagnostic::Finding;
use crate::source::FileKind;

impl Server {
    /// The published findings of the document at `uri` whose lines `range` touches.
    fn findings_at(&self, uri: &lsp::Uri, lines: (u32, u32)) -> Vec<&Finding> {
        let Some(path) = convert::uri_to_path(uri).map(canonical) else {
            return Vec::new();
        };
        let report = &self.published.report;
        self.published
            .by_path
            .get(&path)
            .into_iter()
            .flatten()
            .map(|&i| &report.findings[i])
            .filter(|f| {
                let end = f.span.end_line.max(f.span.line);
                f.span.line <= lines.1 && end >= lines.0
            })
            .collect()
    }

    pub(super) fn hover(&self, p: &lsp::HoverParams) -> Option<lsp::Hover> {
        let uri = &p.text_document_position_params.text_document.uri;
        let pos = p.text_document_position_params.position;
        let path = convert::uri_to_path(uri)?;
        let path = canonical(path);
        let display = path.to_str()?;
        let text = self.source(&self.published.report, display);
        let (line, column) = convert::line_column(text, pos, self.encoding);
        let under: Vec<&Finding> = self
            .findings_at(uri, (line, line))
            .into_iter()
            .filter(|f| {
                let s = &f.span;
                let (end_line, end_column) = if s.end_line == 0 {
                    (s.line, s.column)
                } else {
                    (s.end_line, s.end_column)
                };
                (line, column) >= (s.line, s.column) && (line, column) <= (end_line, end_column)
            })
            .collect();
        if under.is_empty() {
            return None;
        }
        let mut value = String::new();
        for f in under {
            if !value.is_empty() {
                value.push_str("\n\n---\n\n");
            }
            value.push_str(&format!("**{}** {}\n\n", f.code, f.message));
            if let Some(rule) = crate::rules::lookup(f.code) {
                value.push_str(&crate::emit::explain(rule));
            }
        }
        Some(lsp::Hover {
            contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value,
            }),
            range: None,
        })
    }

    /// The code actions of the requested lines: each fix of a finding there (see
    /// [`super::fixes`]), then "Suppress CODE on this line" for each finding (a
    /// `msgaudit:allow(CODE) reason` comment on a new line above, indented as the
    /// finding's line); and `source.fixAll.msgaudit` for the whole document.
    pub(super) fn code_actions(&self, p: &lsp::CodeActionParams) -> Vec<lsp::CodeActionOrCommand> {
        // A client asking for other kinds only (`source.organizeImports`) gets none.
        let wants = |kind: &str| {
            p.context.only.as_ref().is_none_or(|only| {
                only.iter()
                    .any(|k| kind == k.as_str() || kind.starts_with(&format!("{}.", k.as_str())))
            })
        };
        let uri = &p.text_document.uri;
        let lines = (p.range.start.line + 1, p.range.end.line + 1);
        let Some(path) = convert::uri_to_path(uri).map(canonical) else {
            return Vec::new();
        };
        let Some(kind) = tracked_kind(&path) else {
            return Vec::new();
        };
        let mut actions = Vec::new();
        if wants(lsp::CodeActionKind::QUICKFIX.as_str()) {
            let findings = self.findings_at(uri, lines);
            actions.extend(self.fix_actions(&findings));
            actions.extend(self.suppressions(uri, &path, kind, &findings));
        }
        if wants(super::fixes::FIX_ALL) {
            actions.extend(self.fix_all(&path));
        }
        actions
    }

    /// "Suppress CODE on this line" for each of `findings` (and the removal of an
    /// unused suppression).
    fn suppressions(
        &self,
        uri: &lsp::Uri,
        path: &std::path::Path,
        kind: FileKind,
        findings: &[&Finding],
    ) -> Vec<lsp::CodeActionOrCommand> {
        let marker = if kind == FileKind::Yaml { "#" } else { "//" };
        // The current text: the open buffer's, else the analyzed one.
        let text = match self.docs.get(path) {
            Some(doc) => doc.text.as_str(),
            None => self.source(&self.published.report, path.to_str().unwrap_or("")),
        };
        let mut seen = HashSet::new();
        let mut actions = Vec::new();
        let analyzed = self.source(&self.published.report, path.to_str().unwrap_or(""));
        for &f in findings {
            if f.code == crate::rules::UNUSED_SUPPRESSION.code {
                // Only where the buffer is still the text analyzed: the edit deletes by
                // position.
                if text == analyzed {
                    actions.extend(self.remove_suppression(uri, text, f));
                }
                continue;
            }
            if !seen.insert((f.code, f.span.line)) {
                continue;
            }
            let line = f.span.line - 1;
            let current = convert::line_text(text, line as usize);
            let indent: String = current.chars().take_while(|c| c.is_whitespace()).collect();
            let at = lsp::Position::new(line, 0);
            let edit = lsp::TextEdit {
                range: lsp::Range::new(at, at),
                new_text: format!("{indent}{marker} msgaudit:allow({}) reason\n", f.code),
            };
            let diagnostic = self.diagnostic(&self.published.report, f);
            actions.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: format!("Suppress {} ({}) on this line", f.code, f.name),
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic]),
                edit: Some(lsp::WorkspaceEdit {
                    changes: Some(std::iter::once((uri.clone(), vec![edit])).collect()),
                    ..lsp::WorkspaceEdit::default()
                }),
                ..lsp::CodeAction::default()
            }));
        }
        actions
    }

    /// "Remove the unused suppression" for an unused-suppression finding on a comment
    /// that names one rule (of a comment naming several, only the user knows which to
    /// keep): its whole line when the comment is alone on it, else the comment and the
    /// spaces before it.
    fn remove_suppression(
        &self,
        uri: &lsp::Uri,
        text: &str,
        f: &Finding,
    ) -> Option<lsp::CodeActionOrCommand> {
        let s = f.span;
        if s.line == 0 || s.end_line != s.line {
            return None;
        }
        let line: Vec<char> = convert::line_text(text, s.line as usize - 1)
            .chars()
            .collect();
        let start = (s.column as usize).checked_sub(1)?;
        let end = (s.end_column as usize).checked_sub(1)?.min(line.len());
        let comment: String = line.get(start..end)?.iter().collect();
        let (_, args) = comment.split_once("msgaudit:allow(")?;
        let (list, _) = args.split_once(')')?;
        if list.split(',').filter(|i| !i.trim().is_empty()).count() != 1 {
            return None;
        }
        let before: String = line[..start].iter().collect();
        let range = if before.trim().is_empty() {
            lsp::Range::new(
                lsp::Position::new(s.line - 1, 0),
                lsp::Position::new(s.line, 0),
            )
        } else {
            let kept = before.trim_end().chars().count() as u32;
            lsp::Range::new(
                convert::position(text, s.line, kept + 1, self.encoding),
                convert::position(text, s.line, end as u32 + 1, self.encoding),
            )
        };
        Some(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: "Remove the unused suppression".into(),
            kind: Some(lsp::CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![self.diagnostic(&self.published.report, f)]),
            edit: Some(lsp::WorkspaceEdit {
                changes: Some(
                    std::iter::once((
                        uri.clone(),
                        vec![lsp::TextEdit {
                            range,
                            new_text: String::new(),
                        }],
                    ))
                    .collect(),
                ),
                ..lsp::WorkspaceEdit::default()
            }),
            ..lsp::CodeAction::default()
        }))
    }
}
