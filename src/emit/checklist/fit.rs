//! Keeps the checklist under GitHub's comment limit (docs/review.md): past it, the sections
//! of consumers and producers without findings shrink to one line each and come
//! after those with findings; then those with findings shrink to their findings;
//! then sections are left out from the end (clean ones first), with a final line
//! saying how many and how to see them all.

use std::fmt::Write as _;

use super::{at, finding, join};
use crate::analysis::inventory::FindingRef;
use crate::ir::Loc;

/// GitHub's limit on the body of a pull-request comment, in characters.
pub const COMMENT_LIMIT: usize = 65_536;

/// One consumer's or producer's section, whole and shortened.
pub struct Section {
    full: String,
    /// One list line (a section without findings, shortened).
    line: String,
    /// Heading and findings (a section with findings, shortened).
    brief: String,
    findings: bool,
}

impl Section {
    /// `full` is the whole section; `name` its heading's text (`Consumer `run`:
    /// at-most-once`).
    pub fn new(full: String, name: String, loc: Option<&Loc>, findings: &[FindingRef]) -> Self {
        let place = loc.map(|l| format!(", {}", at(l))).unwrap_or_default();
        let line = format!("- {name}{place}\n");
        let brief = format!(
            "\n### {name}\n\nDefined{}. Findings here: {}.\n",
            loc.map(|l| format!(" at {}", at(l))).unwrap_or_default(),
            join(&findings.iter().map(finding).collect::<Vec<_>>())
        );
        Section {
            full,
            line,
            brief,
            findings: !findings.is_empty(),
        }
    }
}

fn chars(parts: &[&str]) -> usize {
    parts.iter().map(|p| p.chars().count()).sum()
}

const ELSEWHERE: &str = "\n### Findings outside these message paths\n\n";
const CLEAN: &str = "\n### Without findings\n\n";

/// The checklist from its parts: `head`, the sections, the findings outside them
/// (one list line each) and `tail`, within `limit` characters when it can be.
pub fn fit(
    head: &str,
    sections: Vec<Section>,
    elsewhere: &[String],
    tail: &str,
    limit: usize,
) -> String {
    let elsewhere_head = if elsewhere.is_empty() { "" } else { ELSEWHERE };
    let mut whole = String::from(head);
    sections.iter().for_each(|s| whole.push_str(&s.full));
    whole.push_str(elsewhere_head);
    elsewhere.iter().for_each(|e| whole.push_str(e));
    whole.push_str(tail);
    if whole.chars().count() <= limit {
        return whole;
    }
    let (with, clean): (Vec<Section>, Vec<Section>) =
        sections.into_iter().partition(|s| s.findings);
    let clean: Vec<&str> = clean.iter().map(|s| s.line.as_str()).collect();
    let fixed = |note: &str, kept_clean: usize, kept_elsewhere: usize| {
        chars(&[head, note, tail])
            + chars(&clean[..kept_clean])
            + if kept_clean > 0 { chars(&[CLEAN]) } else { 0 }
            + elsewhere[..kept_elsewhere]
                .iter()
                .map(|e| e.chars().count())
                .sum::<usize>()
            + if kept_elsewhere > 0 {
                chars(&[ELSEWHERE])
            } else {
                0
            }
    };
    // First the sections with findings whole, then each shrunk to its findings.
    let one_line = "\n_Shortened to stay under GitHub's comment limit (65 536 characters): \
                    sections without findings are one line each._\n";
    let findings_only = "\n_Shortened to stay under GitHub's comment limit (65 536 characters): \
                         sections without findings are one line each, the others list only \
                         their findings._\n";
    let full_with: Vec<&str> = with.iter().map(|s| s.full.as_str()).collect();
    let brief_with: Vec<&str> = with.iter().map(|s| s.brief.as_str()).collect();
    for (note, parts) in [(one_line, &full_with), (findings_only, &brief_with)] {
        if fixed(note, clean.len(), elsewhere.len()) + chars(parts) <= limit {
            return assemble(head, note, parts, &clean, elsewhere, tail, "");
        }
    }
    // Then sections and findings are left out from the end: clean sections first,
    // then the findings outside them, then sections with findings.
    let (mut kept_with, mut kept_clean, mut kept_elsewhere) =
        (brief_with.len(), clean.len(), elsewhere.len());
    loop {
        let last = left_out(
            brief_with.len() - kept_with + clean.len() - kept_clean,
            elsewhere.len() - kept_elsewhere,
        );
        let size = fixed(findings_only, kept_clean, kept_elsewhere)
            + chars(&brief_with[..kept_with])
            + chars(&[&last]);
        if size <= limit || (kept_with == 0 && kept_clean == 0 && kept_elsewhere == 0) {
            return assemble(
                head,
                findings_only,
                &brief_with[..kept_with],
                &clean[..kept_clean],
                &elsewhere[..kept_elsewhere],
                tail,
                &last,
            );
        }
        if kept_clean > 0 {
            kept_clean -= 1;
        } else if kept_elsewhere > 0 {
            kept_elsewhere -= 1;
        } else {
            kept_with -= 1;
        }
    }
}

/// The final line of a checklist that left sections out.
fn left_out(sections: usize, findings: usize) -> String {
    let mut out = format!(
        "\n**{sections} section{} ",
        if sections == 1 { "" } else { "s" }
    );
    if findings > 0 {
        let _ = write!(
            out,
            "and {findings} finding{} outside the message paths ",
            if findings == 1 { "" } else { "s" }
        );
    }
    out.push_str(
        "left out** to stay under GitHub's comment limit (65 536 characters). To see them \
         all, run `msgaudit checklist` locally (or `msgaudit check --format checklist \
         --output FILE`), or show only what a pull request changes with `--diff-base \
         origin/main`.\n",
    );
    out
}

fn assemble(
    head: &str,
    note: &str,
    with: &[&str],
    clean: &[&str],
    elsewhere: &[String],
    tail: &str,
    last: &str,
) -> String {
    let mut out = String::from(head);
    out.push_str(note);
    with.iter().for_each(|s| out.push_str(s));
    if !clean.is_empty() {
        out.push_str(CLEAN);
        clean.iter().for_each(|s| out.push_str(s));
    }
    if !elsewhere.is_empty() {
        out.push_str(ELSEWHERE);
        elsewhere.iter().for_each(|e| out.push_str(e));
    }
    out.push_str(tail);
    out.push_str(last);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(n: usize, findings: bool) -> Section {
        Section {
            full: format!("\n### S{n}\n\n{}\n", "x".repeat(100)),
            line: format!("- S{n}\n"),
            brief: format!("\n### S{n}\n\nFindings here: F{n}.\n"),
            findings,
        }
    }

    #[test]
    fn under_the_limit_nothing_changes() {
        let s = vec![section(1, false), section(2, true)];
        let out = fit("H\n", s, &["- e\n".into()], "T\n", 10_000);
        assert!(out.starts_with("H\n\n### S1"));
        assert!(out.ends_with("- e\nT\n"));
        assert!(!out.contains("Shortened"));
    }

    #[test]
    fn clean_sections_shrink_first_then_the_rest_then_leave() {
        let s: Vec<Section> = (0..20).map(|i| section(i, i % 5 == 0)).collect();
        let whole = fit("H\n", s, &[], "T\n", usize::MAX);
        let limit = whole.chars().count() - 1;
        let s: Vec<Section> = (0..20).map(|i| section(i, i % 5 == 0)).collect();
        let out = fit("H\n", s, &[], "T\n", limit);
        assert!(out.chars().count() <= limit);
        assert!(out.contains("- S1\n") && out.contains(&"x".repeat(100)));
        // The sections with findings come first.
        assert!(out.find("### S5").unwrap() < out.find("- S1\n").unwrap());
        let s: Vec<Section> = (0..20).map(|i| section(i, i % 5 == 0)).collect();
        let out = fit("H\n", s, &[], "T\n", 600);
        assert!(out.chars().count() <= 600, "{}", out.len());
        assert!(out.contains("list only their findings") && out.contains("- S1\n"));
        assert!(out.contains("Findings here: F5.") && !out.contains("left out"));
        let s: Vec<Section> = (0..200).map(|i| section(i, i % 5 == 0)).collect();
        let out = fit("H\n", s, &[], "T\n", 2000);
        assert!(out.chars().count() <= 2000, "{}", out.len());
        // Clean sections leave first.
        assert!(out.contains("Findings here: F195.") && !out.contains("- S199\n"));
        assert!(out.contains("left out**"), "{out}");
        assert!(out.ends_with("origin/main`.\n"));
    }
}
