//! Fixes as code actions (docs/fixes.md, "Fixes"): a quickfix for each finding with a fix
//! on the requested lines, and `source.fixAll.msgaudit`, the safe fixes of the
//! document's findings. Edits are positional: a fix is offered only while every
//! file it edits is still the text analyzed.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use lsp_types as lsp;

use super::{convert, Server};
use crate::diagnostic::{Applicability, Edit, Finding, Fix};

/// The code action kind of "apply every safe fix of the document".
pub(super) const FIX_ALL: &str = "source.fixAll.msgaudit";

impl Server {
    /// The text the editor has of the file at display path `path` and the length of
    /// the byte order mark it starts with, when it is the text analyzed: the open
    /// buffer's, else the file on disk (whose mark an editor does not show).
    fn unchanged(&self, path: &str) -> Option<(Cow<'_, str>, usize)> {
        let analyzed = self.published.report.sources.get(path)?;
        let (text, bom) = match self.docs.get(Path::new(path)) {
            Some(doc) => {
                let bom = if doc.text.starts_with('\u{feff}') {
                    3
                } else {
                    0
                };
                (Cow::Borrowed(doc.text.as_str()), bom)
            }
            None => {
                let disk = std::fs::read_to_string(path).ok()?;
                let text = match disk.strip_prefix('\u{feff}') {
                    Some(rest) => rest.to_string(),
                    None => disk,
                };
                (Cow::Owned(text), 0)
            }
        };
        (text[bom..] == **analyzed).then_some((text, bom))
    }

    /// The workspace edit of `edits` (each in its own file), when every file they
    /// touch is still the text analyzed.
    fn workspace_edit<'a>(
        &self,
        edits: impl IntoIterator<Item = &'a Edit>,
    ) -> Option<lsp::WorkspaceEdit> {
        let mut edits: Vec<&Edit> = edits.into_iter().collect();
        edits.sort_by_key(|e| (&e.path, e.span.byte_start));
        edits.dedup();
        let mut texts: HashMap<&str, (Cow<'_, str>, usize)> = HashMap::new();
        #[allow(clippy::mutable_key_type)] // the type lsp-types gives `changes`
        let mut changes: HashMap<lsp::Uri, Vec<lsp::TextEdit>> = HashMap::new();
        for e in edits {
            if !texts.contains_key(e.path.as_str()) {
                texts.insert(&e.path, self.unchanged(&e.path)?);
            }
            let (text, bom) = &texts[e.path.as_str()];
            let at = |byte: usize| convert::position_at(text, bom + byte, self.encoding);
            changes
                .entry(self.uri_of(Path::new(&e.path))?)
                .or_default()
                .push(lsp::TextEdit {
                    range: lsp::Range::new(at(e.span.byte_start), at(e.span.byte_end)),
                    new_text: e.content.clone(),
                });
        }
        if changes.is_empty() {
            return None;
        }
        Some(lsp::WorkspaceEdit {
            changes: Some(changes),
            ..lsp::WorkspaceEdit::default()
        })
    }

    /// A quickfix titled as each fix of `findings` (once for a fix that several
    /// findings carry, with all their diagnostics), preferred when it is safe.
    pub(super) fn fix_actions(&self, findings: &[&Finding]) -> Vec<lsp::CodeActionOrCommand> {
        let report = &self.published.report;
        let mut out: Vec<(&Fix, lsp::CodeAction)> = Vec::new();
        for f in findings {
            let Some(fix) = &f.fix else {
                continue;
            };
            let diagnostic = self.diagnostic(report, f);
            if let Some((_, action)) = out.iter_mut().find(|(other, _)| *other == fix) {
                action
                    .diagnostics
                    .get_or_insert_with(Vec::new)
                    .push(diagnostic);
                continue;
            }
            let Some(edit) = self.workspace_edit(&fix.edits) else {
                continue;
            };
            out.push((
                fix,
                lsp::CodeAction {
                    title: fix.title.clone(),
                    kind: Some(lsp::CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diagnostic]),
                    edit: Some(edit),
                    is_preferred: (fix.applicability == Applicability::Safe).then_some(true),
                    ..lsp::CodeAction::default()
                },
            ));
        }
        out.into_iter()
            .map(|(_, a)| lsp::CodeActionOrCommand::CodeAction(a))
            .collect()
    }

    /// `source.fixAll.msgaudit`: the safe fixes of the findings of the document at
    /// `path` that apply together (as `check --fix` takes them in one round), when
    /// there is one.
    pub(super) fn fix_all(&self, path: &Path) -> Option<lsp::CodeActionOrCommand> {
        let report = &self.published.report;
        let findings: Vec<&Finding> = self
            .published
            .by_path
            .get(path)?
            .iter()
            .map(|&i| &report.findings[i])
            .collect();
        let mut current: HashMap<&str, bool> = HashMap::new();
        let mut fixable = Vec::new();
        for fix in findings.iter().filter_map(|f| f.fix.as_ref()) {
            if fix.applicability != Applicability::Safe {
                continue;
            }
            let all = fix.edits.iter().all(|e| {
                *current
                    .entry(e.path.as_str())
                    .or_insert_with(|| self.unchanged(&e.path).is_some())
            });
            if all {
                fixable.push(fix);
            }
        }
        let (taken, fixes) = crate::diagnostic::select_fixes(fixable, &report.sources);
        if fixes.is_empty() {
            return None;
        }
        let edit = self.workspace_edit(taken.values().flatten().copied())?;
        let diagnostics = findings
            .iter()
            .filter(|f| f.fix.as_ref().is_some_and(|x| fixes.contains(&x)))
            .map(|f| self.diagnostic(report, f))
            .collect();
        Some(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: "msgaudit: apply every safe fix".into(),
            kind: Some(lsp::CodeActionKind::new(FIX_ALL)),
            diagnostics: Some(diagnostics),
            edit: Some(edit),
            ..lsp::CodeAction::default()
        }))
    }
}
