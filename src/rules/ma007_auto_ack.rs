use super::declare_rule;
use super::fixes;
use super::pairs::label;
use crate::analysis::kafka_clients::{is_consumer, value};
use crate::diagnostic::Finding;
use crate::ir::{ClientRef, ConfigClient, ConfigFormat, Crate, EventKind};

declare_rule! {
    /// ## What it does
    ///
    /// Finds consumers whose progress advances on its own, independently of
    /// processing, in code with side effects: Kafka `enable.auto.commit=true` (also
    /// when unset on a raw rdkafka `ClientConfig`, whose default is `true`), lapin
    /// `BasicConsumeOptions { no_ack: true, .. }`, JetStream `AckPolicy::None`, Redis
    /// stream group reads with `NOACK` (fred `xreadgroup_map(.., true, ..)`, redis-rs
    /// `StreamReadOptions::noack()`), iggy `poll_messages(.., true)` (auto commit).
    /// librdkafka's at-least-once pattern is clean: `enable.auto.commit=true` with
    /// `enable.auto.offset.store=false` and an explicit `store_offset*` after the work.
    ///
    /// In YAML, which cannot show side effects, only an explicit
    /// `enable.auto.commit: true` is reported, on a raw-client property map (Helm
    /// values, a ConfigMap) or in Spring Boot (`spring.kafka.consumer.enable-auto-commit`),
    /// whose listener container otherwise commits after the listener returns.
    ///
    /// ## Why is this bad?
    ///
    /// With auto commit, offsets are committed on a timer for every message handed to
    /// the application, whether or not its effect happened; with `no_ack` the broker
    /// forgets a delivery as soon as it is sent. A crash loses every message in
    /// flight: at-most-once delivery, without anyone having chosen it.
    ///
    /// Boundary broken: progress decoupled from the effect.
    ///
    /// ## Example
    ///
    /// ```rust
    /// let consumer: StreamConsumer = ClientConfig::new()
    ///     .set("group.id", "billing")
    ///     .set("bootstrap.servers", &brokers)
    ///     .create()?; // enable.auto.commit defaults to true
    /// ```
    ///
    /// Use instead:
    ///
    /// ```rust
    /// let consumer: StreamConsumer = ClientConfig::new()
    ///     .set("group.id", "billing")
    ///     .set("bootstrap.servers", &brokers)
    ///     .set("enable.auto.commit", "false")
    ///     .create()?;
    /// // … commit_message(&msg, CommitMode::Async) after the effect commits
    /// ```
    ///
    /// In YAML:
    ///
    /// ```yaml
    /// spring:
    ///   kafka:
    ///     consumer:
    ///       enable-auto-commit: true   # remove: the container commits after processing
    /// ```
    ///
    /// ## Not reported
    ///
    /// - YAML that leaves `enable.auto.commit` unset, and Kafka Connect, Vector and
    ///   Redpanda Connect settings: those frameworks manage offsets themselves.
    /// - Configuration built at run time (keys copied from a map): the analysis stays
    ///   silent.
    /// - Crates with no side effects at all.
    /// - An rdkafka consumer whose whole configuration is seen and sets no `group.id`
    ///   (a metadata client, or one that assigns partitions and keeps its progress
    ///   elsewhere): it has no group to commit offsets to.
    pub static MA007 = {
        code: "MA007",
        name: "auto-ack",
        severity: Warning,
        concern: AckOrder,
        consequence: Loss,
        summary: "Progress advances independently of processing (auto commit, no_ack, AckPolicy::None) in a consumer with side effects.",
        boundary: "progress decoupled from effect",
        unsafe_fix: "`enable.auto.commit` written as `true` becomes `false` (or is added as `false` to an rdkafka `ClientConfig` chain that leaves it unset), where the consumer commits offsets explicitly after its effect (an rdkafka consumer whose received messages are followed by `commit_message`/`commit`; a Spring Boot consumer, whose listener container then commits after the listener returns); never where nothing would commit.",
    };
}

fn any_event(krate: &Crate, pred: &dyn Fn(&EventKind) -> bool) -> bool {
    krate
        .functions
        .iter()
        .any(|f| f.body.each_event().any(|e| pred(&e.kind)))
}

/// `facts` tells which consumers have side effects: a Kafka client whose messages the
/// crate receives where it is configured counts only if an effect follows those
/// receives; one passed elsewhere falls back to "some consume path has an effect".
pub fn check(krate: &Crate, facts: &crate::analysis::flow::Facts) -> Vec<Finding> {
    if !facts.handler_effects {
        return Vec::new();
    }
    let effects = any_event(krate, &|k| {
        matches!(
            k,
            EventKind::Write { .. } | EventKind::Publish { .. } | EventKind::External { .. }
        )
    });
    if !effects {
        return Vec::new();
    }
    let stores = any_event(krate, &|k| {
        matches!(k, EventKind::Ack { offsets: true, .. })
    });
    let mut out = Vec::new();
    let finding = |loc: &crate::ir::Loc, message: String, labels| {
        MA007.finding(
            loc,
            message,
            "progress is recorded whether or not the effect happened: a crash loses the messages in flight"
            .into(),
            labels,
            "turn automatic acknowledgement off and acknowledge each message after its effect commits".into(),
        )
    };
    for (fi, f) in krate.functions.iter().enumerate() {
        for (ci, c) in f.kafka_clients.iter().enumerate() {
            let key = (fi, ci as u32);
            // Received where it is configured, or where the function configuring it
            // (a factory) returned it to.
            let received_here = f.body.each_event().any(|e| {
                matches!(e.kind, EventKind::Receive { client: Some(ClientRef::Here(c)), .. } if c == ci as u32)
            }) || facts.received_clients.contains(&key);
            if received_here && !facts.effect_clients.contains(&key) {
                continue;
            }
            // A configuration partly made at run time is judged only by what was
            // set after it: an explicit `enable.auto.commit=true`, unless offsets
            // are stored by hand and the store setting is not seen.
            if !is_consumer(c)
                || !c.knows("enable.auto.commit")
                || (stores && !c.knows("enable.auto.offset.store"))
            {
                continue;
            }
            // With no `group.id` a consumer commits no offsets at all (it reads
            // metadata, or partitions it assigns itself): automatic commits need a
            // group to commit to.
            if c.knows("group.id") && c.prop("group.id").is_none() {
                continue;
            }
            let store_pattern =
                value(c, "enable.auto.offset.store").as_deref() == Some("false") && stores;
            if store_pattern {
                continue;
            }
            match (c.prop("enable.auto.commit"), value(c, "enable.auto.commit")) {
                (Some(p), Some(v)) if v == "true" => {
                    // Turning auto commit off is safe for progress only where the
                    // consumer's messages are committed explicitly after their effect.
                    let commits = facts.effect_clients.contains(&key)
                        && facts.committed_clients.contains(&key);
                    out.push(
                        finding(
                            &p.loc,
                            "consumer sets `enable.auto.commit=true`: offsets are committed on a timer, not \
                             after the effect"
                                .into(),
                            vec![label(&c.new_loc, "the consumer's configuration starts here")],
                        )
                        .with_fix(commits.then(|| auto_commit_off(p)).flatten()),
                    )
                }
                (None, _) => {
                    let commits = facts.effect_clients.contains(&key)
                        && facts.committed_clients.contains(&key);
                    let fix = commits.then(|| auto_commit_added_off(c)).flatten();
                    out.push(
                        finding(
                            &c.new_loc,
                            "consumer leaves `enable.auto.commit` unset, and librdkafka's default (`true`) \
                             commits offsets on a timer, not after the effect"
                                .into(),
                            Vec::new(),
                        )
                        .with_fix(fix),
                    )
                }
                _ => {}
            }
        }
        for s in &f.ack_settings {
            out.push(finding(
                &s.loc,
                format!(
                    "consumer sets {}: deliveries count as acknowledged as soon as they are sent",
                    s.what
                ),
                Vec::new(),
            ));
        }
    }
    out
}

/// Whether an explicit `enable.auto.commit=true` in this YAML format makes the
/// client auto-commit: raw clients (property maps) and Spring honour it; Kafka
/// Connect, Vector and Redpanda Connect manage offsets themselves.
fn honours_auto_commit(format: ConfigFormat) -> bool {
    matches!(format, ConfigFormat::PropertyMap | ConfigFormat::Spring)
}

/// YAML consumers. YAML cannot show side effects, so only an explicit
/// `enable.auto.commit=true` is reported (docs/what-is-analyzed.md); an unset key never is.
pub fn check_config(clients: &[ConfigClient]) -> Vec<Finding> {
    let mut out = Vec::new();
    for cc in clients {
        let c = &cc.client;
        if c.dynamic || !is_consumer(c) || !honours_auto_commit(cc.format) {
            continue;
        }
        // librdkafka's at-least-once pattern: whether offsets are stored after the
        // work is in the code, which YAML does not show.
        if value(c, "enable.auto.offset.store").as_deref() == Some("false") {
            continue;
        }
        let Some(p) = c.prop("enable.auto.commit") else {
            continue;
        };
        if value(c, "enable.auto.commit").as_deref() != Some("true") {
            continue;
        }
        let framework = if cc.format == ConfigFormat::Spring {
            " (Spring's listener container then leaves offsets to the client)"
        } else {
            ""
        };
        // Spring's listener container commits after the listener returns once the
        // client stops; a raw property map's commits are in code YAML does not show.
        let fix = (cc.format == ConfigFormat::Spring)
            .then(|| auto_commit_off(p))
            .flatten();
        out.push(MA007.finding(
            &p.loc,
            format!(
                "consumer sets `enable.auto.commit=true`{framework}: offsets are committed on a timer, not \
                 after the effect"
            ),
            "progress is recorded whether or not the effect happened: a crash loses the messages in flight"
                .into(),
            vec![label(&c.new_loc, "the consumer's configuration starts here")],
            "set `enable.auto.commit` to `false` and commit each message's offset after its effect commits \
                   (in Spring, remove the setting: the listener container commits after the listener returns)"
                .into(),
        ).with_fix(fix));
    }
    out
}

/// The unsafe fix that turns auto commit off where `p` writes it (docs/getting-started.md).
fn auto_commit_off(p: &crate::ir::Prop) -> Option<crate::diagnostic::Fix> {
    fixes::unsafe_fix(
        format!(
            "set {} (offsets are committed explicitly)",
            crate::diagnostic::quoted(&format!("{}=false", p.key))
        ),
        vec![fixes::set_value(p, "false")],
    )
}

/// The unsafe fix that adds `enable.auto.commit=false` to a configuration that
/// leaves it unset (after the last `.set(..)` of an rdkafka `ClientConfig` chain).
fn auto_commit_added_off(c: &crate::ir::KafkaClient) -> Option<crate::diagnostic::Fix> {
    fixes::unsafe_fix(
        format!(
            "add {} (offsets are committed explicitly)",
            crate::diagnostic::quoted("enable.auto.commit=false")
        ),
        vec![fixes::insert_setting(c, "enable.auto.commit", "false")],
    )
}

/// MA007 as the dispatcher runs it ([`super::Rule`]).
pub struct Check;

impl super::Rule for Check {
    fn meta(&self) -> &'static super::RuleMeta {
        &MA007
    }

    fn check_crate(&self, cx: &super::CrateInput) -> Vec<Finding> {
        check(cx.krate, cx.facts)
    }

    fn check_tree(&self, tree: &super::TreeInput) -> Vec<Finding> {
        check_config(tree.config_clients)
    }
}
