//! `--format checklist` and `msgaudit checklist`: the pull-request review checklist of
//! docs/review.md, as Markdown for a GitHub comment. One section per consumer and producer of
//! `report.inventory`, the six questions answered from the analysis (`- [x]`) or left
//! open for the reviewer (`- [ ]`, with the reason), the guarantee each consumer
//! provides with the findings that decide it, and a summary of findings by rule.
//!
//! Everything taken from the analyzed tree is escaped for Markdown, since the
//! checklist is pasted into pull requests: code (call texts, names, values) goes
//! into code spans that hold any text ([`code`]), msgaudit's own messages that
//! quote code are escaped around their code spans ([`md`]), and link targets are
//! percent-encoded. No analyzed text can start a line, a link, an image or HTML.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::escape;

mod fit;
mod map;
mod serverless;
mod sources;
use crate::analysis::inventory::{
    self, Consumer, Effect, EffectClass, FindingRef, Guarantee, Producer, Site,
};
use crate::apis::Broker;
use crate::diagnostic::Concern;
use crate::ir::Loc;
use crate::report::Report;
use sources::{send_promise, source_kept};

/// Analyzed code as one Markdown code span (`` `tx.commit()` ``).
fn code(text: &str) -> String {
    escape::markdown_code(text)
}

/// A message of msgaudit's, which may quote analyzed code in backticks, as
/// Markdown text.
fn md(text: &str) -> String {
    escape::markdown(text)
}

thread_local! {
    /// The `--link-base` of the rendering under way ([`render_with`]).
    static LINK_BASE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// `[src/consumer.rs:42](src/consumer.rs#L42)`, the target under the link base
/// (`https://github.com/o/r/blob/SHA/src/consumer.rs#L42`) when one is given.
fn link(path: &str, line: u32) -> String {
    LINK_BASE.with(|base| {
        format!(
            "[{}:{line}]({}{}#L{line})",
            md(path),
            base.borrow(),
            escape::uri_path(path, None)
        )
    })
}

/// What the checklist's rendering takes besides the report.
#[derive(Clone, Debug, Default)]
pub struct ChecklistOptions {
    /// Prefix of every link (`--link-base`: `https://github.com/ORG/REPO/blob/SHA/`),
    /// so that links work in a pull-request comment; relative links when `None`.
    pub link_base: Option<String>,
}

/// The checklist with `options`.
pub fn render_with(report: &Report, options: &ChecklistOptions) -> String {
    // Characters that would end or break a Markdown link target are encoded.
    let base = options.link_base.as_deref().map_or(String::new(), |b| {
        let mut b: String = b
            .trim()
            .chars()
            .map(|c| match c {
                ' ' => "%20".to_string(),
                '(' => "%28".to_string(),
                ')' => "%29".to_string(),
                '<' => "%3C".to_string(),
                '>' => "%3E".to_string(),
                c if c.is_control() => String::new(),
                c => c.to_string(),
            })
            .collect();
        if !b.is_empty() && !b.ends_with('/') {
            b.push('/');
        }
        b
    });
    let before = LINK_BASE.with(|l| std::mem::replace(&mut *l.borrow_mut(), base));
    let out = render(report);
    LINK_BASE.with(|l| *l.borrow_mut() = before);
    out
}

fn at(loc: &Loc) -> String {
    link(&loc.path, loc.span.line)
}

fn call(s: &Site) -> String {
    if s.describe.is_empty() {
        format!("{} {}", code(&s.text), at(&s.loc))
    } else {
        format!("{} ({}) {}", code(&s.text), md(&s.describe), at(&s.loc))
    }
}

fn effect(e: &Effect) -> String {
    call(&e.site)
}

/// `[CODE](…/docs/rules/CODE-name.md) name`: the code links to the rule's
/// published page, the URL of SARIF's `helpUri`.
fn rule(code: &str, name: &str) -> String {
    match crate::rules::lookup(code) {
        Some(r) => format!("[{code}]({}) {name}", r.doc_url()),
        None => format!("{code} {name}"),
    }
}

fn finding(f: &FindingRef) -> String {
    format!("{} {}", rule(f.code, f.name), link(&f.path, f.line))
}

/// The code of the rule about a boundary, where the checklist names it without a
/// finding (a fresh id the inventory saw).
fn rule_about(concern: Concern) -> &'static str {
    crate::rules::ALL
        .iter()
        .find(|r| r.concern == concern)
        .map_or("", |r| r.code)
}

/// The findings about these boundaries, as the checklist cites them.
fn findings_of(fs: &[FindingRef], concerns: &[Concern]) -> Vec<String> {
    fs.iter()
        .filter(|f| concerns.contains(&f.concern))
        .map(finding)
        .collect()
}

fn join(items: &[String]) -> String {
    items.join(", ")
}

fn item(out: &mut String, ok: bool, question: &str, answer: &str) {
    let mark = if ok { "x" } else { " " };
    let _ = writeln!(out, "- [{mark}] **{question}** {answer}");
}

pub fn render(report: &Report) -> String {
    escape::with_raw_paths(&report.raw_paths, || render_body(report))
}

fn render_body(report: &Report) -> String {
    let inv = &report.inventory;
    let mut head = String::from("## msgaudit review checklist\n\n");
    match &inv.scope {
        Some(s) => {
            let _ = writeln!(
                head,
                "{} of {} consumer{} and {} of {} producer{} shown: those whose code, or code \
                 they call, changed since {}; the answers come from the whole tree. Checked \
                 boxes are answered by the analysis; open ones need the reviewer.",
                inv.consumers.len(),
                s.consumers,
                plural(s.consumers),
                inv.producers.len(),
                s.producers,
                plural(s.producers),
                code(&s.rev),
            );
        }
        None => {
            let _ = writeln!(
                head,
                "{} consumer{} and {} producer{} found. Checked boxes are answered by the \
                 analysis; open ones need the reviewer.",
                inv.consumers.len(),
                plural(inv.consumers.len()),
                inv.producers.len(),
                plural(inv.producers.len()),
            );
        }
    }
    let map = map::render(inv, &|p| send_promise(p).0.as_str());
    if !map.is_empty() {
        let _ = write!(
            head,
            "\n### Pipeline map\n\nTopics and queues, and the consumers and producers \
             between them: each edge is labelled with the guarantee of the consumer or the \
             promise of the producer's sends; ⚠ marks findings.\n\n{map}"
        );
    }
    let mut sections = Vec::new();
    for c in &inv.consumers {
        let mut full = String::from("\n");
        consumer(&mut full, c, report);
        let name = format!(
            "Consumer {}: {}",
            code(&c.name),
            inventory::infer(c).guarantee.as_str()
        );
        sections.push(fit::Section::new(full, name, c.loc.as_ref(), &c.findings));
    }
    for p in &inv.producers {
        let mut full = String::from("\n");
        producer(&mut full, p, report);
        let name = format!("Producer {}", code(&p.name));
        sections.push(fit::Section::new(full, name, p.loc.as_ref(), &p.findings));
    }
    let elsewhere: Vec<String> = report
        .findings
        .iter()
        .filter(|f| {
            let cited = |fs: &[FindingRef]| {
                fs.iter().any(|r| {
                    r.code == f.code
                        && r.path == f.path
                        && r.line == f.span.line
                        && r.column == f.span.column
                })
            };
            let left_out = inv.scope.as_ref().is_some_and(|s| {
                s.cited
                    .contains(&(f.path.clone(), f.span.line, f.span.column, f.code))
            });
            !left_out
                && !inv.consumers.iter().any(|c| cited(&c.findings))
                && !inv.producers.iter().any(|p| cited(&p.findings))
        })
        .map(|f| {
            format!(
                "- {} {}: {}
",
                rule(f.code, f.name),
                link(&f.path, f.span.line),
                md(&f.message)
            )
        })
        .collect();
    let tail = format!("\n{}", summary(report));
    fit::fit(&head, sections, &elsewhere, &tail, fit::COMMENT_LIMIT)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// ` in crate `worker``, where the place is in a known crate (docs/what-is-analyzed.md).
fn in_crate(report: &Report, path: &str) -> String {
    report
        .crate_of(path)
        .map(|k| format!(" in crate {}", code(k)))
        .unwrap_or_default()
}

/// A consumer's section: what it is, the six questions, and the guarantee.
fn consumer(out: &mut String, c: &Consumer, report: &Report) {
    let inf = inventory::infer(c);
    let _ = writeln!(
        out,
        "### Consumer {}: {}\n",
        code(&c.name),
        inf.guarantee.as_str()
    );
    let mut facts = Vec::new();
    let home = c
        .loc
        .as_ref()
        .map(|l| l.path.as_ref())
        .and_then(|p| report.crate_of(p));
    if let Some(l) = &c.loc {
        facts.push(format!("defined at {}{}", at(l), in_crate(report, &l.path)));
    }
    if let Some(lib) = &c.library {
        facts.push(format!("library {}", code(lib)));
    }
    if !c.receives.is_empty() {
        facts.push(format!(
            "receives at {}",
            join(&c.receives.iter().map(|s| at(&s.loc)).collect::<Vec<_>>())
        ));
    }
    if !c.handlers.is_empty() {
        facts.push(format!(
            "handlers {}",
            join(
                &c.handlers
                    .iter()
                    .map(|(n, l)| {
                        // A handler in another crate of the workspace says which.
                        let other = report.crate_of(&l.path).filter(|k| Some(*k) != home);
                        let krate = other.map(|k| format!(" (crate {})", code(k)));
                        format!("{}{} {}", code(n), krate.unwrap_or_default(), at(l))
                    })
                    .collect::<Vec<_>>()
            )
        ));
    }
    let _ = writeln!(out, "{}.\n", capitalize(&facts.join("; ")));

    event_id(out, c);
    retries(out, c);
    ack(out, c);
    one_transaction(out, c);
    external_effects(out, c);
    retention(out, c);
    guarantee(out, &inf);
}

/// Question 1: a stable event id, reused on every retry and redelivery.
fn event_id(out: &mut String, c: &Consumer) {
    let q = "1. Stable event id, reused on every retry and redelivery?";
    if !c.fresh_ids.is_empty() {
        let ids: Vec<String> = c
            .fresh_ids
            .iter()
            .map(|x| {
                format!(
                    "{} {} reaches {} {}",
                    code(&x.idgen_text),
                    at(&x.idgen),
                    code(&x.sink_text),
                    at(&x.sink)
                )
            })
            .collect();
        item(
            out,
            false,
            q,
            &format!(
                "A fresh id is minted per attempt or delivery: {} ({}).",
                join(&ids),
                rule_about(Concern::EventId)
            ),
        );
    } else if !c.dedup.is_empty() {
        item(
            out,
            true,
            q,
            &format!(
                "No id is minted per attempt; the dedup record is keyed by what the handler receives: {}.",
                join(&c.dedup.iter().map(effect).collect::<Vec<_>>())
            ),
        );
    } else if !c.effects.is_empty() && c.effects.iter().all(|e| e.idempotent == Some(true)) {
        item(
            out,
            true,
            q,
            "No id is minted per attempt, and none is needed: every effect is idempotent by key.",
        );
    } else {
        item(
            out,
            false,
            q,
            "No id is minted per attempt, but no event id is used either (no dedup record, no \
             idempotency key the analysis can see): who assigns one?",
        );
    }
}

/// Question 2: which steps may retry.
fn retries(out: &mut String, c: &Consumer) {
    let q = "2. Which steps may retry?";
    let mut steps = vec![format!(
        "broker redelivery{} of any message not yet acked",
        c.library
            .as_deref()
            .map(|l| format!(" ({})", code(l)))
            .unwrap_or_default()
    )];
    if c.retries.is_empty() {
        steps.push("no application retry loop".into());
    } else {
        steps.push(format!(
            "application retries {}",
            join(
                &c.retries
                    .iter()
                    .map(|(l, t)| format!("{} {}", code(t.trim()), at(l)))
                    .collect::<Vec<_>>()
            )
        ));
    }
    // A serverless handler's nacks list records as failed: redelivered or not, as its
    // event sources say.
    let listed = serverless::listed_failures(c);
    match &listed {
        Some((text, _)) => steps.push(text.clone()),
        None if !c.nacks.is_empty() => steps.push(format!(
            "nacks requesting redelivery {}",
            join(&c.nacks.iter().map(call).collect::<Vec<_>>())
        )),
        None => {}
    }
    let ignored = listed.is_some_and(|(_, ignored)| ignored);
    let retry_ids = c.fresh_ids.iter().any(|x| x.retry.is_some());
    let mut answer = format!("{}.", capitalize(&join(&steps)));
    if retry_ids {
        let _ = write!(
            answer,
            " A retry mints a new id ({}).",
            rule_about(Concern::EventId)
        );
    }
    item(out, !retry_ids && !ignored, q, &answer);
}

/// Whether the analysis saw the consumer ack before an effect, or ack on its own
/// (question 3's "No"), findings or not.
fn acks_early(c: &Consumer) -> bool {
    !c.ack_before_effect.is_empty()
        || !c.auto_ack.is_empty()
        || !findings_of(&c.findings, &[Concern::AckOrder]).is_empty()
}

/// Question 3: what the ack confirms, and whether it runs after the effect commits.
fn ack(out: &mut String, c: &Consumer) {
    let q = "3. What does the ack confirm, and does it run after the effect commits?";
    if !c.ack_before_effect.is_empty() || !c.auto_ack.is_empty() {
        let mut why: Vec<String> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for a in &c.ack_before_effect {
            if seen.insert((a.ack.loc.clone(), a.effect.loc.clone())) {
                why.push(format!(
                    "{} ({}) {} runs before {} {}",
                    code(&a.ack.text),
                    md(&a.ack.describe),
                    at(&a.ack.loc),
                    code(&a.effect.text),
                    at(&a.effect.loc)
                ));
            }
        }
        for a in &c.auto_ack {
            why.push(format!("{} {} acks on its own", md(&a.what), at(&a.loc)));
        }
        let codes = findings_of(&c.findings, &[Concern::AckOrder]);
        let suffix = if codes.is_empty() {
            String::new()
        } else {
            format!(" ({})", join(&codes))
        };
        item(out, false, q, &format!("No: {}{suffix}.", why.join("; ")));
    } else if !findings_of(&c.findings, &[Concern::AckOnFailure]).is_empty() {
        item(
            out,
            false,
            q,
            &format!(
                "Not only on success: it also runs where the effect failed and its error was only \
                 handled ({}), so a failed message is lost instead of redelivered.",
                join(&findings_of(&c.findings, &[Concern::AckOnFailure]))
            ),
        );
    } else if let Some(o) = &c.offsets_in_tx {
        item(
            out,
            true,
            q,
            &format!(
                "The offsets commit with the output in the Kafka transaction: {}.",
                call(o)
            ),
        );
    } else if c.acks.is_empty() {
        item(
            out,
            false,
            q,
            "No ack or offset commit is reached from here: where is progress recorded?",
        );
    } else {
        item(
            out,
            true,
            q,
            &format!(
                "{}: after the effects on every path.",
                capitalize(&join(&c.acks.iter().map(call).collect::<Vec<_>>()))
            ),
        );
    }
}

/// Question 4: whether the effect and the progress (or dedup) record commit in one transaction.
fn one_transaction(out: &mut String, c: &Consumer) {
    let q = "4. Do the effect and the progress (or dedup) record commit in one transaction?";
    let split = findings_of(
        &c.findings,
        &[Concern::DedupRecord, Concern::BrokerTransaction],
    );
    let effects_db: Vec<&Effect> = c
        .effects
        .iter()
        .filter(|e| e.class == EffectClass::Write)
        .collect();
    if !split.is_empty() {
        item(out, false, q, &format!("No: {}.", join(&split)));
    } else if c.offsets_in_tx.is_some() {
        item(
            out,
            true,
            q,
            "Yes: output and offsets commit in one Kafka transaction.",
        );
    } else if !c.dedup.is_empty() && inventory::dedup_gates(c) {
        item(
            out,
            true,
            q,
            &format!(
                "Yes: the dedup record {} commits with the effects.",
                join(&c.dedup.iter().map(effect).collect::<Vec<_>>())
            ),
        );
    } else if c.effects.is_empty() {
        item(out, true, q, "Nothing to commit: no effect is reached.");
    } else if acks_early(c) {
        // What question 3 answers from the analysis decides here too, whether or not
        // its finding is shown (a baseline, --diff-base, a rule turned off).
        let codes = findings_of(&c.findings, &[Concern::AckOrder]);
        let cited = if codes.is_empty() {
            String::new()
        } else {
            format!(" ({})", join(&codes))
        };
        item(
            out,
            false,
            q,
            &format!(
                "No: progress is recorded before the effect commits{cited}, so a crash in between loses the message."
            ),
        );
    } else if c.effects.iter().all(|e| e.idempotent == Some(true)) {
        item(
            out,
            true,
            q,
            "No, and it need not: the ack follows the effect, and every effect is idempotent \
             (an upsert, an absolute update, a request with an idempotency key), so a \
             redelivery is harmless.",
        );
    } else {
        let open: Vec<String> = c
            .effects
            .iter()
            .filter(|e| e.idempotent != Some(true))
            .map(effect)
            .collect();
        let extra = if effects_db.is_empty() {
            ""
        } else {
            " with no dedup record"
        };
        item(
            out,
            false,
            q,
            &format!(
                "No: the effect and the ack commit apart{extra}; a crash in between applies {} again.",
                join(&open)
            ),
        );
    }
}

/// Question 5: how external side effects are made idempotent.
fn external_effects(out: &mut String, c: &Consumer) {
    let q = "5. How are external side effects (HTTP, e-mail, payments) made idempotent?";
    let externals: Vec<&Effect> = c
        .effects
        .iter()
        .filter(|e| {
            matches!(
                e.class,
                EffectClass::Http | EffectClass::Email | EffectClass::Payment | EffectClass::Other
            )
        })
        .collect();
    if externals.is_empty() {
        item(out, true, q, "No HTTP, e-mail or payment call is reached.");
    } else {
        let nonidem = findings_of(&c.findings, &[Concern::SideEffect]);
        let fresh_keys = findings_of(&c.findings, &[Concern::EventId]);
        let list = join(&externals.iter().map(|e| effect(e)).collect::<Vec<_>>());
        let keyed = nonidem.is_empty()
            && fresh_keys.is_empty()
            && externals.iter().all(|e| e.idempotent == Some(true));
        let answer = if keyed {
            format!("{list}: sent with an idempotency key (the receiver deduplicates by it).")
        } else if nonidem.is_empty() {
            format!(
                "{list}: the analysis cannot see an idempotency key derived from the event id; \
                 confirm the receiver deduplicates."
            )
        } else {
            format!("{list}: not idempotent ({}).", join(&nonidem))
        };
        item(out, keyed, q, &answer);
    }
}

/// Question 6: whether dedup records live as long as the source can replay.
fn retention(out: &mut String, c: &Consumer) {
    let q = "6. Do dedup records live as long as the source can replay?";
    let ma012 = findings_of(&c.findings, &[Concern::Retention]);
    let kept = source_kept(c);
    if c.dedup.is_empty() {
        // What questions 4 and 5 find not idempotent is what a replay applies again.
        let repeated: Vec<String> = c
            .effects
            .iter()
            .filter(|e| e.idempotent != Some(true))
            .map(effect)
            .collect();
        let unkeyed =
            !findings_of(&c.findings, &[Concern::SideEffect, Concern::EventId]).is_empty();
        if c.effects.is_empty() {
            item(
                out,
                true,
                q,
                &format!("No effect is reached: nothing to deduplicate. {kept}"),
            );
        } else if repeated.is_empty() && !unkeyed {
            item(
                out,
                true,
                q,
                &format!("No dedup records are written, and none are needed: every effect is idempotent. {kept}"),
            );
        } else {
            let them = if repeated.len() == 1 { "it" } else { "them" };
            let what = if repeated.is_empty() {
                "the external effects of question 5 are".to_string()
            } else {
                format!(
                    "{} {}",
                    join(&repeated),
                    if repeated.len() == 1 { "is" } else { "are" }
                )
            };
            item(
                out,
                false,
                q,
                &format!(
                    "No dedup records are written, yet {what} not idempotent: every redelivery \
                     the source can make applies {them} again. {kept}"
                ),
            );
        }
    } else if !ma012.is_empty() {
        item(out, false, q, &format!("No: {}. {kept}", join(&ma012)));
    } else if !c.retention.is_empty() && !c.windows.is_empty() {
        let r: Vec<String> = c
            .retention
            .iter()
            .map(|d| format!("{} {}", md(&d.store), at(&d.loc)))
            .collect();
        let w: Vec<String> = c
            .windows
            .iter()
            .map(|w| format!("{} {}", md(&w.source), at(&w.loc)))
            .collect();
        item(
            out,
            true,
            q,
            &format!(
                "Yes: retention of {} covers the replay window ({}). {kept}",
                join(&r),
                join(&w)
            ),
        );
    } else {
        item(
            out,
            false,
            q,
            "The dedup retention or the source's replay window (topic `retention.ms`) is not \
             stated in the analyzed code.",
        );
    }
}

/// The guarantee the consumer gives, with its reasons and the findings that decide it.
fn guarantee(out: &mut String, inf: &inventory::Inference) {
    let _ = write!(out, "\n**Guarantee: {}**", inf.guarantee.as_str());
    if !inf.reasons.is_empty() {
        let reasons: Vec<String> = inf
            .reasons
            .iter()
            .map(|(r, l)| match l {
                Some(l) => format!("{} {}", md(r), at(l)),
                None => md(r),
            })
            .collect();
        let _ = write!(out, ": {}", reasons.join("; "));
    }
    out.push('.');
    if !inf.deciding.is_empty() {
        let _ = write!(
            out,
            " Decided by {}.",
            join(&inf.deciding.iter().map(finding).collect::<Vec<_>>())
        );
    }
    if inf.guarantee == Guarantee::Unknown {
        out.push_str(" The reviewer decides.");
    }
    out.push('\n');
}

fn producer(out: &mut String, p: &Producer, report: &Report) {
    producer_header(out, p, report);
    producer_event_id(out, p);
    let settings = inventory::producer_settings(p);
    producer_retries(out, p, &settings);
    producer_confirm(out, p, &settings);
    producer_commits_with_state(out, p);
    out.push('\n');
    let _ = writeln!(
        out,
        "Findings here: {}.",
        if p.findings.is_empty() {
            "none".to_string()
        } else {
            join(&p.findings.iter().map(finding).collect::<Vec<_>>())
        }
    );
}

/// The client settings a producer's checklist reads (`acks`, `enable.idempotence`).
type Settings = BTreeMap<String, (Option<String>, Loc)>;

/// `### Producer name`, where it is defined, what it publishes, and its send promise.
fn producer_header(out: &mut String, p: &Producer, report: &Report) {
    let _ = writeln!(out, "### Producer {}\n", code(&p.name));
    let mut facts = Vec::new();
    if let Some(l) = &p.loc {
        facts.push(format!("defined at {}{}", at(l), in_crate(report, &l.path)));
    }
    if let Some(lib) = &p.library {
        facts.push(format!("library {}", code(lib)));
    }
    facts.push(format!(
        "publishes {}",
        join(&p.publishes.iter().map(call).collect::<Vec<_>>())
    ));
    facts.push(match &p.broker_tx {
        Some(b) => format!("transactional ({})", call(b)),
        None => "not transactional".into(),
    });
    let _ = writeln!(out, "{}.\n", capitalize(&facts.join("; ")));
    let (promise, when) = send_promise(p);
    let _ = writeln!(
        out,
        "Sends are **{}**: a send counts as sent when {when}.\n",
        promise.as_str()
    );
}

/// Item 1: is the event id minted once, not per send attempt?
fn producer_event_id(out: &mut String, p: &Producer) {
    let q = "1. Stable event id, reused on every retry?";
    if p.fresh_ids.is_empty() {
        item(out, true, q, "No id is minted per send attempt here.");
    } else {
        let ids: Vec<String> = p
            .fresh_ids
            .iter()
            .map(|x| format!("{} {}", code(&x.idgen_text), at(&x.idgen)))
            .collect();
        item(
            out,
            false,
            q,
            &format!(
                "A fresh id per attempt: {} ({}).",
                join(&ids),
                rule_about(Concern::EventId)
            ),
        );
    }
}

/// Item 2: the client's and the application's send retries.
fn producer_retries(out: &mut String, p: &Producer, settings: &Settings) {
    let q = "2. Which steps may retry?";
    let mut steps = Vec::new();
    let mut idempotent = true;
    if p.broker == Some(Broker::Kafka) {
        steps.push(match settings.get("enable.idempotence") {
            Some((Some(v), l)) => {
                idempotent = v == "true";
                format!(
                    "client send retries with {} {}",
                    code(&format!("enable.idempotence={v}")),
                    at(l)
                )
            }
            _ => {
                idempotent = false;
                "client send retries; `enable.idempotence` is not set in the analyzed code \
                 (librdkafka's default is `false`: a retried send may be written twice)"
                    .into()
            }
        });
    }
    if p.retries.is_empty() {
        steps.push("no application retry loop".into());
    } else {
        steps.push(format!(
            "application retries {}",
            join(
                &p.retries
                    .iter()
                    .map(|(l, t)| format!("{} {}", code(t.trim()), at(l)))
                    .collect::<Vec<_>>()
            )
        ));
    }
    item(
        out,
        p.fresh_ids.is_empty() && idempotent,
        q,
        &format!("{}.", capitalize(&join(&steps))),
    );
}

/// Item 3: what confirms a send (publisher confirms, `acks`, or nothing visible).
fn producer_confirm(out: &mut String, p: &Producer, settings: &Settings) {
    let q = "3. What confirms the send?";
    let ma008 = findings_of(&p.findings, &[Concern::SendPromise]);
    if !ma008.is_empty() {
        item(out, false, q, &format!("Weakened: {}.", join(&ma008)));
    } else if p.broker == Some(Broker::Rabbitmq) {
        match (p.confirm_select, p.confirms_checked) {
            (true, Some(true)) => item(
                out,
                true,
                q,
                "The channel is in confirm mode and each publish's confirmation is awaited.",
            ),
            _ => item(
                out,
                false,
                q,
                "The analysis cannot see a checked publisher confirm.",
            ),
        }
    } else if let Some((v, l)) = settings.get("acks") {
        item(
            out,
            true,
            q,
            &format!(
                "The broker's acknowledgement with {} {}.",
                code(&format!("acks={}", v.as_deref().unwrap_or("?"))),
                at(l)
            ),
        );
    } else {
        item(
            out,
            false,
            q,
            "The client's default acknowledgement: no setting is visible to confirm it.",
        );
    }
}

/// Item 4: does the publish commit with the database state it announces?
fn producer_commits_with_state(out: &mut String, p: &Producer) {
    let q = "4. Does the publish commit with the state it announces?";
    let dual = findings_of(
        &p.findings,
        &[Concern::DualWrite, Concern::BrokerTransaction],
    );
    if !dual.is_empty() {
        item(out, false, q, &format!("No: {}.", join(&dual)));
    } else if p.offsets_in_tx.is_some() {
        item(
            out,
            true,
            q,
            "Yes: output and consumer offsets commit in one Kafka transaction.",
        );
    } else if p.db_writes.is_empty() {
        item(
            out,
            true,
            q,
            "No database change is made next to the publish here.",
        );
    } else {
        item(
            out,
            true,
            q,
            "The database writes next to it go through an outbox (no dual write found).",
        );
    }
}

/// `**Findings:** 3 MA0NN rule-name, 1 MA0NN other-rule … (5 in total).`
fn summary(report: &Report) -> String {
    let mut by: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for f in &report.findings {
        *by.entry((f.code, f.name)).or_default() += 1;
    }
    let mut out = String::from("---\n\n**Findings by rule:** ");
    if by.is_empty() {
        out.push_str("none");
    } else {
        let parts: Vec<String> = by
            .iter()
            .map(|((code, name), n)| format!("{n} {}", rule(code, name)))
            .collect();
        let _ = write!(
            out,
            "{} ({} in total)",
            parts.join(", "),
            report.findings.len()
        );
    }
    if !report.errors.is_empty() {
        let _ = write!(
            out,
            "; {} input error{} (see `msgaudit check`)",
            report.errors.len(),
            plural(report.errors.len())
        );
    }
    out.push_str(".\n");
    out
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
