use super::declare_rule;
use super::fixes;
use super::group::{by_primary, Labels};
use super::pairs::label;
use crate::analysis::channels::{self, Mode, Publish};
use std::collections::BTreeSet;

use crate::analysis::flow::Facts;
use crate::analysis::kafka_clients::{is_producer, value};
use crate::diagnostic::{Edit, Finding, Fix};
use crate::ir::{ConfigClient, Crate, EventKind, KafkaClient, Loc, OptionsImport, Prop};

declare_rule! {
    /// ## What it does
    ///
    /// Finds producers configured to lose or duplicate sends, by explicit weakening
    /// only: `acks` set to `0` or `1`, `enable.idempotence=false`, or more than 5
    /// in-flight requests per connection with idempotence on. Client defaults are not
    /// findings. One producer gets one finding, at its first offending setting, with
    /// the others as labels. The same settings are read from pipeline YAML: property
    /// maps, Spring (`spring.kafka.producer.acks`), Vector sinks' `librdkafka_options`,
    /// Redpanda Connect outputs (`ack_replicas: false` is `acks=1`, `idempotent_write`)
    /// and Strimzi source connectors (`producer.override.*`).
    ///
    /// For RabbitMQ (lapin): a `basic_publish` on a channel that was not put in
    /// confirm mode (`confirm_select`) where it was made, or a publish whose
    /// confirmation is requested but dropped (`basic_publish(..).await?;` awaits only
    /// the send, not the `PublisherConfirm` it returns) with no `wait_for_confirms`
    /// on the channel afterwards; also a helper returning the pending confirmation
    /// (`-> lapin::Result<PublisherConfirm>`) whose caller awaits the call once and
    /// drops the result (the call as a label); and a publish whose confirmation is
    /// awaited but treated as success when the broker did not take the message (a
    /// `Nack` arm, an `Ack(_) | NotRequested` arm or an `if c.is_nack()` side that
    /// logs and goes on), on a path that returns as on success with no ack after it
    /// (with an ack after it, MA014 reports that ack). The channel is traced to where it is
    /// made: the
    /// `create_channel` in the same function, the channels the callers pass for a
    /// parameter, or, for a field or parameter, the
    /// channels bound under the same name (`let audit = conn.create_channel()…;
    /// Publishers { audit, .. }` for `self.audit`), else every channel the crate
    /// makes when they all agree. A crate that opens no channel of its own (it gets
    /// them from elsewhere), channels that disagree, and a `confirm_select` in a
    /// helper handed the channel leave it unknown: not reported.
    ///
    /// Batch calls with per-entry results (SQS `send_message_batch`, SNS
    /// `publish_batch`, Kinesis `put_records`, Firehose `put_record_batch`,
    /// EventBridge `put_events`; the packs' `entry_failures`): a batch whose
    /// response's failed entries nothing acts on (the result dropped, or only logged:
    /// in a logging macro, or in an `if`/`match` whose branches only log) and after
    /// which no ack, delete, commit or relay marking follows, at the batch call. `?`
    /// on the call catches only a failed request. Where such a progress record follows
    /// the batch, MA014 reports it at that record instead (one defect, one finding).
    ///
    /// rdkafka delivery reports (the pack's `delivery`): a `FutureProducer::send` /
    /// `send_result` whose delivery future is dropped unawaited, or a `BaseProducer::send`
    /// with no `poll` / `flush` on the producer after it, followed by an ack, a commit
    /// or a relay's marking, at the send (the ack as a label). A future kept in a
    /// binding or a collection counts as read.
    ///
    /// ## Why is this bad?
    ///
    /// With `acks=0` the producer never learns whether the broker got the record; with
    /// `acks=1` a leader failover loses records the leader acknowledged but had not
    /// replicated. Without idempotence, a send retried after a lost acknowledgement is
    /// written **twice**, and with more than 5 requests in flight the broker cannot
    /// keep idempotent ordering.
    ///
    /// Boundary broken: producer-to-broker acceptance.
    ///
    /// ## Example
    ///
    /// ```rust
    /// let producer: FutureProducer = ClientConfig::new()
    ///     .set("bootstrap.servers", &brokers)
    ///     .set("acks", "1")
    ///     .create()?;
    /// ```
    ///
    /// ```yaml
    /// spring:
    ///   kafka:
    ///     producer:
    ///       acks: 1
    /// ```
    ///
    /// Use instead: `.set("acks", "all")` and leave `enable.idempotence` on (in YAML,
    /// `acks: all`).
    ///
    /// A batch that returns entries it could not publish:
    ///
    /// ```rust
    /// let out = sns.publish_batch().topic_arn(arn).set_publish_batch_request_entries(Some(entries)).send().await?;
    /// tracing::warn!(failed = out.failed().len(), "some alerts were not published");
    /// ```
    ///
    /// Use instead: retry the entries in `out.failed()`, or return an error when it is
    /// not empty.
    ///
    /// ## Not reported
    ///
    /// - Client defaults: a Kafka producer that leaves `acks`, `enable.idempotence` or
    ///   the in-flight limit unset (only explicit weakening is a finding).
    /// - A RabbitMQ channel whose making cannot be found or is ambiguous: made outside
    ///   the crate, channels under one name that disagree, or `confirm_select` called
    ///   in a helper the channel is handed to.
    /// - A batch call whose response's failed entries the code does more with than
    ///   drop or log them, and one followed by an ack, delete, commit or relay
    ///   marking: MA014 reports that record instead.
    /// - An rdkafka delivery future kept in a binding or a collection, awaited, or a
    ///   `BaseProducer` polled or flushed before the ack.
    /// - A nack that is logged and then retried, returned as an error (`bail!`), or
    ///   followed by a nack of the source: the failure is not taken for a success.
    /// - A confirmation awaited on a channel in confirm mode
    ///   (`basic_publish(..).await?.await?`), the form the unsafe fix writes: the
    ///   confirm is waited for; only a nack handled as a success is reported.
    pub static MA008 = {
        code: "MA008",
        name: "unconfirmed-publish",
        severity: Warning,
        concern: SendPromise,
        consequence: Loss,
        summary: "A producer can lose or duplicate sends (weak acks, idempotence off, too many in-flight requests with idempotence).",
        boundary: "producer to broker acceptance",
        fix: "Kafka producers: `acks` becomes `all`, `enable.idempotence` `true`, and more than 5 in-flight requests 5, where each offending value is written in place.",
        unsafe_fix: "a RabbitMQ channel made by a simple `let` in a function returning a `Result` (`let channel = conn.create_channel().await?;`) is put in confirm mode on the next line (`channel.confirm_select(ConfirmSelectOptions::default()).await?;`, the option type added to the file's `use` list of its module, or written in full), and each publish on it that drops its confirmation awaits it (`.await?.await?`); only where every publish on that channel is in the same function and can be so changed. A nack still has to be handled.",
    };
}

fn offending(c: &KafkaClient) -> Vec<(&Prop, String)> {
    let mut out = Vec::new();
    // Only the value in force: a later `.set` of the key (at a helper's call site,
    // after the helper's own) overrides an earlier one.
    for p in c
        .props
        .iter()
        .filter(|p| c.prop(&p.key).is_some_and(|last| std::ptr::eq(last, *p)))
    {
        let v = p.value.as_deref().map(|v| v.trim().to_ascii_lowercase());
        let why = match (p.key.as_str(), v.as_deref()) {
            ("acks" | "request.required.acks", Some("0")) => "`acks=0`: the producer never learns whether a record arrived",
            ("acks" | "request.required.acks", Some("1")) => "`acks=1`: a leader failover loses acknowledged records",
            ("enable.idempotence", Some("false")) => "`enable.idempotence=false`: a retried send is written twice",
            ("max.in.flight.requests.per.connection" | "max.in.flight", Some(n))
                if n.parse::<u32>().is_ok_and(|n| n > 5) && value(c, "enable.idempotence").as_deref() == Some("true") =>
            {
                "more than 5 in-flight requests with idempotence: ordering and deduplication are not kept"
            }
            _ => continue,
        };
        out.push((p, why.to_string()));
    }
    out
}

pub fn check(krate: &Crate, facts: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    // A nack let go and then an ack of the source: MA014 reports it at the ack.
    let acked: BTreeSet<&Loc> = facts.failures.iter().map(|f| &f.failed.loc).collect();
    let publishes = channels::publishes(krate);
    for p in &publishes {
        let (loc, text) = (&p.event.loc, &p.event.text);
        if !seen.insert(loc.clone()) {
            continue;
        }
        let fix = match p.mode {
            Mode::Unconfirmed => confirm_fix(krate, &publishes, p),
            _ => None,
        };
        let mut help = "call `channel.confirm_select(..)` where the channel is made and await the \
                        confirmation (`basic_publish(..).await?.await?`), treating a nack as a failure";
        let (message, labels) = match p.mode {
            Mode::Unconfirmed => (
                format!("{} publishes on a channel that is never put in confirm mode (`confirm_select`)", crate::diagnostic::quoted(text)),
                p.made_at
                    .iter()
                    .map(|l| label(l, "the channel is made here, without `confirm_select`"))
                    .collect(),
            ),
            Mode::Confirmed | Mode::Unknown
                if p.checked
                    && p.nack_ignored
                    && facts.failed_at_exit.contains(loc)
                    && !acked.contains(loc) => {
                help = "treat every confirmation but an ack as a failure: return an error (or nack \
                        the source, or retry the publish) where the broker nacked the message";
                (
                format!("{} awaits the broker's confirmation but treats a nack (or `NotRequested`) as success: the failure side only logs and goes on", crate::diagnostic::quoted(text)),
                Vec::new(),
            )
            }
            Mode::Confirmed if !p.checked => (
                format!("{} requests a publisher confirm but drops it: the send is awaited, the broker's confirmation is not", crate::diagnostic::quoted(text)),
                p.dropped_at
                    .iter()
                    .map(|l| label(l, "the confirmation this call returns is dropped here"))
                    .collect(),
            ),
            _ => continue,
        };
        out.push(
            MA008
                .finding(
                    loc,
                    message,
                    "a message the broker never accepted (or nacked) counts as sent: it is lost"
                        .into(),
                    labels,
                    help.into(),
                )
                .with_fix(fix),
        );
    }
    for f in &krate.functions {
        out.extend(f.kafka_clients.iter().filter_map(kafka_producer));
    }
    out
}

/// The unsafe fix of a publish on a channel never put in confirm mode (docs/getting-started.md): the
/// pack's statement after the simple `let` that makes the channel, in a function
/// returning a `Result`, and a second `.await?` on every publish on that channel
/// that drops its confirmation. None when the channel comes from elsewhere, or a
/// publish on it is in another function or cannot be so changed (half a fix would
/// leave a finding standing).
fn confirm_fix(krate: &Crate, all: &[Publish], p: &Publish) -> Option<Fix> {
    let made = p.made_at.as_ref().filter(|_| p.own)?;
    let at = krate.functions[p.function]
        .confirm_ats
        .iter()
        .find(|c| c.open == *made && c.returns_result)?;
    let mut edits = Vec::new();
    for q in all.iter().filter(|q| q.made_at.as_ref() == Some(made)) {
        if !q.own || q.function != p.function || q.mode != Mode::Unconfirmed {
            return None;
        }
        if !q.checked {
            let w = krate.functions[q.function]
                .confirm_awaits
                .iter()
                .find(|w| w.publish == q.event.loc);
            edits.push(w.map(|w| Edit {
                path: w.at.path.to_string(),
                span: w.at.span,
                content: ".await?".into(),
            }));
        }
    }
    let name = at.options.rsplit("::").next().unwrap_or(&at.options);
    let options = match &at.import {
        OptionsImport::InScope => name,
        OptionsImport::Add { at, text } => {
            edits.push(Some(Edit {
                path: at.path.to_string(),
                span: at.span,
                content: text.clone(),
            }));
            name
        }
        OptionsImport::FullPath => at.options.as_str(),
    };
    let statement = at
        .statement
        .replace("{channel}", &at.binding)
        .replace("{options}", options);
    edits.push(Some(Edit {
        path: at.after.path.to_string(),
        span: at.after.span,
        content: format!("{}{statement}{}", at.indent, at.newline),
    }));
    fixes::unsafe_fix(
        format!(
            "put {} in confirm mode where it is made and await the publishes' confirmations",
            crate::diagnostic::quoted(&at.binding)
        ),
        edits,
    )
}

/// YAML producers: the same settings, in every format (docs/what-is-analyzed.md: explicit weakening only).
pub fn check_config(clients: &[ConfigClient]) -> Vec<Finding> {
    clients
        .iter()
        .filter_map(|c| kafka_producer(&c.client))
        .collect()
}

/// One finding per producer, at its first offending setting, the others as labels.
fn kafka_producer(c: &KafkaClient) -> Option<Finding> {
    if !is_producer(c) {
        return None;
    }
    let bad = offending(c);
    let (first, why) = bad.first()?;
    let mut labels: Vec<_> = bad[1..]
        .iter()
        .map(|(p, w)| label(&p.loc, w.clone()))
        .collect();
    labels.push(label(
        &c.new_loc,
        "the producer's configuration starts here",
    ));
    labels.sort();
    let fix = fixes::safe(
        format!(
            "set {}",
            bad.iter()
                .map(|(p, _)| crate::diagnostic::quoted(&format!("{}={}", p.key, wanted(&p.key))))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        bad.iter()
            .map(|(p, _)| fixes::set_value(p, wanted(&p.key)))
            .collect(),
    );
    Some(
        MA008
            .finding(
                &first.loc,
                format!("producer sets {why}"),
                "a broker failover or a lost acknowledgement loses the record or writes it twice"
                    .into(),
                labels,
                "set `acks=all` and keep `enable.idempotence=true` (at most 5 requests in flight)"
                    .into(),
            )
            .with_fix(fix),
    )
}

/// The value a weakening setting must take (docs/getting-started.md: the safe fixes).
fn wanted(key: &str) -> &'static str {
    match key {
        "acks" | "request.required.acks" => "all",
        "enable.idempotence" => "true",
        _ => "5",
    }
}

/// Batch publishes whose per-entry failures nothing acts on (docs/what-is-analyzed.md, "Batch calls
/// with per-entry results"), at the batch call. A batch followed on some path by a
/// progress record (an ack, a delete, a commit, the relay's marking) is MA014's, at
/// that record: one defect, one finding.
pub fn unread_batches(krate: &Crate, facts: &Facts) -> Vec<Finding> {
    let followed: BTreeSet<&Loc> = facts.failures.iter().map(|f| &f.failed.loc).collect();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    // A helper returns the batch's response and a caller does not read it: at the
    // batch call where it is written, with a label at each call site.
    let returned = facts
        .returned_unread
        .iter()
        .filter(|e| !followed.contains(&e.loc));
    for group in by_primary(returned, |e| &e.loc, |e| e.via.len()) {
        let first = group[0];
        if !seen.insert(first.loc.clone()) {
            continue;
        }
        let mut labels = Labels::default();
        for e in &group {
            if let Some(site) = e.via.last() {
                labels.push(
                    site,
                    "the batch's response comes back through this call; its failed entries are not read",
                );
            }
        }
        out.push(
            MA008.finding(
                &first.loc,
                format!(
                "{} publishes a batch whose response is returned to a caller that never acts on \
                 its per-entry failures: a successful request can still reject entries",
                crate::diagnostic::quoted(&first.text)
            ),
                "an entry rejected inside a successful batch request counts as sent: it is lost"
                    .into(),
                labels.sorted(),
                "read the response's failed entries (in the helper or the caller) and retry them, \
             return an error, or record them (logging the response alone does not keep them)"
                    .into(),
            ),
        );
    }
    for f in krate.functions.iter().filter(|f| !f.dependency) {
        for e in f.body.each_event() {
            let EventKind::EntriesUnread {
                what,
                delivery: false,
            } = &e.kind
            else {
                continue;
            };
            if !matches!(**what, EventKind::Publish { .. })
                || followed.contains(&e.loc)
                || !seen.insert(e.loc.clone())
            {
                continue;
            }
            out.push(MA008.finding(
                &e.loc,
                format!(
                    "{} publishes a batch whose per-entry failures are never acted on: a successful \
                     request says nothing of the entries the broker rejected",
                    crate::diagnostic::quoted(&e.text)
                ),
                "an entry rejected inside a successful batch request counts as sent: it is lost".into(),
                Vec::new(),
                "read the response's failed entries and retry them, return an error, or record them \
                 (logging the response or its failure count alone does not keep them)"
                    .into(),
            ));
        }
    }
    out
}

/// Sends whose delivery report nothing reads before the source is acked (docs/what-is-analyzed.md:
/// "a `FutureProducer::send` / `send_result` future dropped or never awaited before
/// the source is acked, or a `BaseProducer::send` with no `poll`/`flush` before it,
/// is MA008 at the send"): at the send, with the ack as a label. A send after which
/// nothing is acked is not reported.
pub fn unread_deliveries(facts: &Facts) -> Vec<Finding> {
    let sends = facts.failures.iter().filter(|f| f.delivery);
    by_primary(
        sends,
        |f| &f.failed.loc,
        |f| f.ack.via.len() + f.failed.via.len(),
    )
    .into_iter()
    .map(|group| {
        let first = group[0];
        let mut labels = Labels::default();
        for f in &group {
            labels.push(
                &f.ack.loc,
                format!("{} here without the send's delivery report", f.ack.describe),
            );
            for site in &f.failed.via {
                labels.push(site, "the send runs inside this call");
            }
        }
        MA008.finding(
            &first.failed.loc,
            format!(
                "{} sends a record whose delivery report is never read before the source \
                     is acked: its future is dropped unawaited, or no `poll`/`flush` serves it",
                crate::diagnostic::quoted(&first.failed.text)
            ),
            "a record the broker never accepted counts as sent once the source is acked: \
                 it is lost"
                .into(),
            labels.sorted(),
            "await the delivery future (or collect the futures and await them all) before \
                 the ack, or `flush` the producer before it, treating a failed delivery as a \
                 failure"
                .into(),
        )
    })
    .collect()
}

/// MA008 as the dispatcher runs it ([`super::Rule`]).
pub struct Check;

impl super::Rule for Check {
    fn meta(&self) -> &'static super::RuleMeta {
        &MA008
    }

    fn check_crate(&self, cx: &super::CrateInput) -> Vec<Finding> {
        let mut out = check(cx.krate, cx.facts);
        out.extend(unread_batches(cx.krate, cx.facts));
        out.extend(unread_deliveries(cx.facts));
        out
    }

    fn check_tree(&self, tree: &super::TreeInput) -> Vec<Finding> {
        check_config(tree.config_clients)
    }
}
