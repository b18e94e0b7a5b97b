//! Markdown to plain text, for the formats that carry both (SARIF's `help.text`
//! beside `help.markdown`): the text a reader sees in a rendered page, without
//! the markup. Headings and paragraphs stay separated by blank lines, list items
//! start with `- ` (or their number), code blocks are indented by four spaces,
//! code spans keep their text, and a link keeps its text with the target after it
//! in parentheses.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The plain text of a Markdown document, with a final newline when not empty.
pub fn markdown_to_text(md: &str) -> String {
    let mut out = String::new();
    // One entry per open list: the next item's number (`None`: a bullet list).
    let mut lists: Vec<Option<u64>> = Vec::new();
    let mut in_code_block = false;
    let mut links: Vec<String> = Vec::new();
    let mut link_text_start = Vec::new();
    for event in Parser::new_ext(md, Options::empty()) {
        match event {
            Event::Start(Tag::Paragraph | Tag::Heading { .. }) => block_start(&mut out, &lists),
            Event::End(TagEnd::Paragraph | TagEnd::Heading(_)) => out.push('\n'),
            Event::Start(Tag::CodeBlock(_)) => {
                block_start(&mut out, &lists);
                in_code_block = true;
            }
            Event::End(TagEnd::CodeBlock) => in_code_block = false,
            Event::Start(Tag::List(first)) => {
                if lists.is_empty() {
                    block_start(&mut out, &lists);
                } else if !out.ends_with('\n') {
                    out.push('\n');
                }
                lists.push(first);
            }
            Event::End(TagEnd::List(_)) => {
                lists.pop();
            }
            Event::Start(Tag::Item) => {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(&"  ".repeat(lists.len().saturating_sub(1)));
                match lists.last_mut() {
                    Some(Some(n)) => {
                        out.push_str(&format!("{n}. "));
                        *n += 1;
                    }
                    _ => out.push_str("- "),
                }
            }
            Event::End(TagEnd::Item) if !out.ends_with('\n') => out.push('\n'),
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                links.push(dest_url.to_string());
                link_text_start.push(out.len());
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                let (Some(url), Some(start)) = (links.pop(), link_text_start.pop()) else {
                    continue;
                };
                if out[start..] != url {
                    out.push_str(&format!(" ({url})"));
                }
            }
            Event::Text(t) if in_code_block => {
                for line in t.split_inclusive('\n') {
                    if line != "\n" {
                        out.push_str("    ");
                    }
                    out.push_str(line);
                }
            }
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => {
                out.push_str(&t)
            }
            Event::SoftBreak | Event::HardBreak => {
                out.push('\n');
                // Continuation lines of a list item line up with its text.
                out.push_str(&"  ".repeat(lists.len()));
            }
            Event::Rule => {
                block_start(&mut out, &lists);
                out.push_str("----\n");
            }
            _ => {}
        }
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// Separates a new block from the previous one by a blank line (inside a list
/// item, a paragraph follows its item's first line directly).
fn block_start(out: &mut String, lists: &[Option<u64>]) {
    if out.is_empty() || !lists.is_empty() {
        return;
    }
    while !out.ends_with("\n\n") {
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::markdown_to_text;

    #[test]
    fn markup_goes_text_stays() {
        let md = "## What it does\n\nFinds a `tx.commit()` *before*\nthe **ack**.\n\n\
                  ```rust\nlet a = *b;\n\nc();\n```\n\n- one\n- two `x`\n\n1. first\n2. [docs](https://e.x/d)\n";
        assert_eq!(
            markdown_to_text(md),
            "What it does\n\nFinds a tx.commit() before\nthe ack.\n\n    let a = *b;\n\n    c();\n\n\
             - one\n- two x\n\n1. first\n2. docs (https://e.x/d)\n"
        );
    }

    #[test]
    fn empty_stays_empty() {
        assert_eq!(markdown_to_text(""), "");
        assert_eq!(markdown_to_text("plain"), "plain\n");
    }
}
