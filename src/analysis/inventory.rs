//! The review inventory (docs/review.md): every consumer and producer of a crate, with what
//! the model and the flow facts know about it (receive, handlers, acks, effects,
//! dedup records, retries, fresh ids, auto-ack settings, Kafka transactions), and
//! the guarantee each consumer provides. Emitters (`emit/checklist.rs`) only print it.
//!
//! Everything here is computed from the delivery model and the ordering facts; the
//! findings of the run are attached afterwards ([`Inventory::attach`]), by location,
//! so the guarantee can name the findings that decide it. Output is sorted.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::apis::{self, Apis};
use crate::diagnostic::{Concern, Consequence, Finding, Severity};
use crate::ir::{
    Crate, DedupRetention, EventKind, ExternalKind, Function, IdFlow, KafkaClient, Loc, Node,
    ReplayWindow, RetentionFacts, SqlKind, Tables,
};

use super::flow::{AckBeforeEffect, Facts, PairFact, Relation, Resolver, MAX_CALL_DEPTH};

/// Consumers and producers found in the analyzed tree, sorted by location.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Inventory {
    pub consumers: Vec<Consumer>,
    pub producers: Vec<Producer>,
    /// Set by [`Inventory::retain_code`]: the sections shown are those a change touches.
    /// Never set in the driver's output (what the analysis cache stores).
    #[serde(skip)]
    pub scope: Option<Scope>,
}

/// What [`Inventory::retain_code`] left out of the inventory (the checklist says so).
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// The `--diff-base` revision the change is taken since.
    pub rev: String,
    /// How many consumers and producers the whole analysis found.
    pub consumers: usize,
    pub producers: usize,
    /// The findings the sections left out cite (path, line, column, code): they
    /// belong to a message path, only not to one shown.
    pub cited: BTreeSet<(String, u32, u32, &'static str)>,
}

/// A call the inventory points at.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Site {
    pub loc: Loc,
    /// The call as written: `self.consumer.commit_message`.
    pub text: String,
    /// How it reads: `offset committed`, ``INSERT into `orders` ``.
    pub describe: String,
}

/// What kind of effect a handler applies.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum EffectClass {
    Write,
    Publish,
    Http,
    Email,
    Payment,
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Effect {
    pub site: Site,
    pub class: EffectClass,
    pub tables: Vec<String>,
    /// `Some(true)`: idempotent by its shape (an upsert, an absolute update, a claim
    /// tested in the same statement); `Some(false)`: known not to be; `None`: unknown.
    pub idempotent: Option<bool>,
    /// Written on a pool or connection: commits by itself unless a transaction is open.
    pub autocommit: bool,
}

/// A consumer setting that acknowledges independently of processing (auto-ack).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct AutoAck {
    pub what: String,
    pub loc: Loc,
}

/// A finding of the run, as a section cites it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct FindingRef {
    pub path: String,
    pub line: u32,
    pub column: u32,
    #[serde(with = "crate::diagnostic::static_str")]
    pub code: crate::diagnostic::StaticStr,
    #[serde(with = "crate::diagnostic::static_str")]
    pub name: crate::diagnostic::StaticStr,
    pub severity: Severity,
    pub message: String,
    /// The rule's properties (`rules::RuleMeta`): what the checklist and the
    /// guarantee read, never the code.
    pub concern: Concern,
    pub consequence: Consequence,
}

/// A function (or the closures in it) that receives messages, and what its handlers do.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Consumer {
    /// `KafkaOrders::run`.
    pub name: String,
    pub loc: Option<Loc>,
    /// The API pack(s) its receive and ack calls come from: `rdkafka`, `aws_sdk_sqs`.
    pub library: Option<String>,
    /// That pack's broker, when it is one pack.
    pub broker: Option<apis::Broker>,
    pub receives: Vec<Site>,
    /// The crate's functions it reaches that ack, write, publish or call out.
    pub handlers: Vec<(String, Loc)>,
    pub acks: Vec<Site>,
    pub nacks: Vec<Site>,
    /// Effects, dedup records excluded.
    pub effects: Vec<Effect>,
    /// Dedup records and claims.
    pub dedup: Vec<Effect>,
    pub retries: Vec<(Loc, String)>,
    pub fresh_ids: Vec<IdFlow>,
    pub auto_ack: Vec<AutoAck>,
    /// `begin_transaction` reached, and `send_offsets_to_transaction` with it.
    pub broker_tx: Option<Site>,
    pub offsets_in_tx: Option<Site>,
    /// Ordering facts from the paths that start here.
    pub ack_before_effect: Vec<AckBeforeEffect>,
    pub pairs: Vec<PairFact>,
    /// Retention of the crate's dedup stores and the replay windows stated in it.
    pub retention: Vec<DedupRetention>,
    pub windows: Vec<ReplayWindow>,
    /// Topics it consumes, when literal: the crate's subscriptions and its Kafka
    /// consumer clients' topics (a crate's subscriptions may feed any of its consumers).
    pub topics: Vec<String>,
    /// Serverless: the event source mappings of the deploy YAML that run it.
    #[serde(default)]
    pub event_sources: Vec<EventSource>,
    /// Findings at (or labelled at) any of the locations above.
    pub findings: Vec<FindingRef>,
    /// Locations that tie a finding to this consumer.
    pub locs: BTreeSet<(String, u32, u32)>,
    /// Its function and the functions it reaches, each whole (`fn` to closing
    /// brace): the code a change must touch to touch this consumer.
    pub code: Vec<Loc>,
}

/// A function that publishes to a broker.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Producer {
    pub name: String,
    pub loc: Option<Loc>,
    pub library: Option<String>,
    pub broker: Option<apis::Broker>,
    pub publishes: Vec<Site>,
    /// Kafka: `begin_transaction` in the function, `send_offsets_to_transaction`.
    pub broker_tx: Option<Site>,
    pub offsets_in_tx: Option<Site>,
    /// Kafka producer configurations of the crate (acks, idempotence, transactional.id).
    pub clients: Vec<KafkaClient>,
    /// RabbitMQ: the crate puts a channel in confirm mode; whether every publish's
    /// confirmation is looked at.
    pub confirm_select: bool,
    pub confirms_checked: Option<bool>,
    pub retries: Vec<(Loc, String)>,
    pub fresh_ids: Vec<IdFlow>,
    pub pairs: Vec<PairFact>,
    /// DB writes in the same function (a dual write unless they are outbox rows).
    pub db_writes: Vec<Effect>,
    /// Topics it sends to, when literal (`FutureRecord::to("invoices")`).
    pub topics: Vec<String>,
    pub findings: Vec<FindingRef>,
    pub locs: BTreeSet<(String, u32, u32)>,
    /// Its function and the functions it reaches, each whole (as a consumer's).
    pub code: Vec<Loc>,
}

fn key(loc: &Loc) -> (String, u32, u32) {
    (loc.path.to_string(), loc.span.line, loc.span.column)
}

impl Inventory {
    /// The files where consumers, their handlers and producers are defined.
    pub fn places(&self) -> impl Iterator<Item = &str> {
        let consumers = self.consumers.iter().flat_map(|c| {
            c.loc
                .iter()
                .chain(c.handlers.iter().map(|(_, l)| l))
                .map(|l| l.path.as_ref())
        });
        let producers = self
            .producers
            .iter()
            .flat_map(|p| p.loc.iter().map(|l| l.path.as_ref()));
        consumers.chain(producers)
    }

    /// Keeps the consumers and producers some of whose code (their function or a
    /// function they reach, [`Consumer::code`]) `touched` says yes to, the change
    /// being taken since `rev`. Call after [`Inventory::attach`].
    pub fn retain_code(&mut self, rev: String, touched: impl Fn(&Loc) -> bool) {
        let mut scope = Scope {
            rev,
            consumers: self.consumers.len(),
            producers: self.producers.len(),
            cited: BTreeSet::new(),
        };
        let cite = |fs: &[FindingRef], cited: &mut BTreeSet<_>| {
            cited.extend(
                fs.iter()
                    .map(|f| (f.path.clone(), f.line, f.column, f.code)),
            );
        };
        let (shown, hidden): (Vec<Consumer>, Vec<Consumer>) = std::mem::take(&mut self.consumers)
            .into_iter()
            .partition(|c| c.code.iter().any(&touched));
        hidden
            .iter()
            .for_each(|c| cite(&c.findings, &mut scope.cited));
        self.consumers = shown;
        let (shown, hidden): (Vec<Producer>, Vec<Producer>) = std::mem::take(&mut self.producers)
            .into_iter()
            .partition(|p| p.code.iter().any(&touched));
        hidden
            .iter()
            .for_each(|p| cite(&p.findings, &mut scope.cited));
        self.producers = shown;
        self.scope = Some(scope);
    }

    /// Merges the inventory of another crate and sorts.
    pub fn extend(&mut self, other: Inventory) {
        self.consumers.extend(other.consumers);
        self.producers.extend(other.producers);
        self.sort();
    }

    fn sort(&mut self) {
        self.consumers
            .sort_by(|a, b| (&a.loc, &a.name).cmp(&(&b.loc, &b.name)));
        self.producers
            .sort_by(|a, b| (&a.loc, &a.name).cmp(&(&b.loc, &b.name)));
    }

    /// Attaches each finding to the consumers and producers whose locations it
    /// points at (its primary location or a label). `rule` gives a rule's properties
    /// by its code (the registry is above this layer).
    pub fn attach(&mut self, findings: &[Finding], rule: &dyn Fn(&str) -> (Concern, Consequence)) {
        // Findings by each place they point at (primary location and labels).
        let mut at: std::collections::HashMap<(&str, u32, u32), Vec<usize>> =
            std::collections::HashMap::new();
        for (i, f) in findings.iter().enumerate() {
            at.entry((f.path.as_str(), f.span.line, f.span.column))
                .or_default()
                .push(i);
            for l in &f.labels {
                at.entry((l.path.as_str(), l.span.line, l.span.column))
                    .or_default()
                    .push(i);
            }
        }
        let refs = |locs: &BTreeSet<(String, u32, u32)>| -> Vec<FindingRef> {
            let mut out: Vec<FindingRef> = locs
                .iter()
                .flat_map(|(path, line, column)| {
                    at.get(&(path.as_str(), *line, *column))
                        .into_iter()
                        .flatten()
                })
                .map(|&i| {
                    let f = &findings[i];
                    let (concern, consequence) = rule(f.code);
                    FindingRef {
                        path: f.path.clone(),
                        line: f.span.line,
                        column: f.span.column,
                        code: f.code,
                        name: f.name,
                        severity: f.severity,
                        message: f.message.clone(),
                        concern,
                        consequence,
                    }
                })
                .collect();
            out.sort();
            out.dedup();
            out
        };
        for c in &mut self.consumers {
            c.findings = refs(&c.locs);
        }
        for p in &mut self.producers {
            p.findings = refs(&p.locs);
        }
        // A finding no section points at, inside the function of one (a split dedup record in
        // a producer's own function), belongs to that section.
        let cited: BTreeSet<(String, u32, u32, &str)> = self
            .consumers
            .iter()
            .flat_map(|c| &c.findings)
            .chain(self.producers.iter().flat_map(|p| &p.findings))
            .map(|f| (f.path.clone(), f.line, f.column, f.code))
            .collect();
        for f in findings {
            if cited.contains(&(f.path.clone(), f.span.line, f.span.column, f.code)) {
                continue;
            }
            let inside = |code: &[Loc]| {
                code.first().is_some_and(|l| {
                    *l.path == *f.path
                        && l.span.line <= f.span.line
                        && f.span.line <= l.span.end_line
                })
            };
            let at = key(&Loc {
                path: f.path.clone().into(),
                span: f.span,
            });
            let own = match self.consumers.iter_mut().find(|c| inside(&c.code)) {
                Some(c) => Some((&mut c.locs, &mut c.findings)),
                None => self
                    .producers
                    .iter_mut()
                    .find(|p| inside(&p.code))
                    .map(|p| (&mut p.locs, &mut p.findings)),
            };
            if let Some((locs, fs)) = own {
                let mut one = BTreeSet::new();
                one.insert(at.clone());
                fs.extend(refs(&one).into_iter().filter(|r| r.code == f.code));
                fs.sort();
                fs.dedup();
                locs.insert(at);
            }
        }
    }
}

/// What the crate-level analysis hands to [`crate_inventory`].
pub struct CrateInput<'a> {
    pub krate: &'a Crate,
    pub facts: &'a Facts,
    pub tables: &'a Tables,
    pub apis: &'a Apis,
    pub retention: &'a RetentionFacts,
}

/// Everything reached from one function: its events with the crate's functions it calls.
#[derive(Default)]
struct Reach<'c> {
    events: Vec<&'c crate::ir::Event>,
    callbacks: Vec<Loc>,
    functions: Vec<usize>,
}

fn walk<'c>(
    krate: &'c Crate,
    resolver: &Resolver<'c>,
    fn_idx: usize,
    node: &'c Node,
    depth: usize,
    seen: &mut BTreeSet<usize>,
    out: &mut Reach<'c>,
) {
    if let Node::Closure {
        run: crate::ir::ClosureRun::Callback,
        loc,
        ..
    } = node
    {
        out.callbacks.push(loc.clone());
    }
    if let Node::Event(e) = node {
        out.events.push(e);
        if let EventKind::Call(c) = &e.kind {
            if depth < MAX_CALL_DEPTH {
                for j in resolver.resolve(&krate.functions[fn_idx], c) {
                    if seen.insert(j) {
                        out.functions.push(j);
                        walk(
                            krate,
                            resolver,
                            j,
                            &krate.functions[j].body,
                            depth + 1,
                            seen,
                            out,
                        );
                    }
                }
            }
        }
    }
    for child in node.children() {
        walk(krate, resolver, fn_idx, child, depth, seen, out);
    }
}

fn reach<'c>(krate: &'c Crate, resolver: &Resolver<'c>, i: usize) -> Reach<'c> {
    let mut out = Reach::default();
    let mut seen = BTreeSet::from([i]);
    out.functions.push(i);
    walk(
        krate,
        resolver,
        i,
        &krate.functions[i].body,
        0,
        &mut seen,
        &mut out,
    );
    out
}

fn site(e: &crate::ir::Event) -> Site {
    Site {
        loc: e.loc.clone(),
        text: e.text.clone(),
        describe: e.describe.clone(),
    }
}

/// Classifies a write: whether it is a dedup record, and whether it is idempotent.
fn write_effect(e: &crate::ir::Event, tables: &Tables) -> Option<(Effect, bool)> {
    let EventKind::Write {
        sql, autocommit, ..
    } = &e.kind
    else {
        return None;
    };
    if matches!(
        sql.kind,
        SqlKind::Read | SqlKind::Begin | SqlKind::Commit | SqlKind::Rollback
    ) {
        return None;
    }
    let outbox = sql.tables.iter().any(|t| tables.is_outbox(t));
    let dedup = !outbox
        && !sql.guarded
        && (sql.tables.iter().any(|t| tables.is_dedup(t)) || sql.is_claim_shape());
    let idempotent = if sql.guarded || sql.upsert || sql.ignores_conflict {
        Some(true)
    } else if sql.self_referencing || sql.verb == "INSERT" {
        Some(false)
    } else if matches!(sql.verb.as_str(), "UPDATE" | "DELETE") {
        Some(true)
    } else {
        None
    };
    let describe = if sql.verb.is_empty() {
        e.describe.clone()
    } else {
        sql.describe()
    };
    Some((
        Effect {
            site: Site {
                describe,
                ..site(e)
            },
            class: EffectClass::Write,
            tables: sql.tables.clone(),
            idempotent,
            autocommit: *autocommit,
        },
        dedup,
    ))
}

fn other_effect(e: &crate::ir::Event) -> Option<Effect> {
    let (class, idempotent) = match &e.kind {
        EventKind::Publish { non_idempotent, .. } => {
            (EffectClass::Publish, non_idempotent.then_some(false))
        }
        EventKind::External {
            kind,
            non_idempotent,
            idempotency_key,
        } => (
            match kind {
                ExternalKind::Http => EffectClass::Http,
                ExternalKind::Email => EffectClass::Email,
                ExternalKind::Payment => EffectClass::Payment,
                ExternalKind::Cache | ExternalKind::Store(_) | ExternalKind::Other(_) => {
                    EffectClass::Other
                }
            },
            if *idempotency_key {
                Some(true)
            } else {
                non_idempotent.then_some(false)
            },
        ),
        _ => return None,
    };
    Some(Effect {
        site: site(e),
        class,
        tables: Vec::new(),
        idempotent,
        autocommit: false,
    })
}

/// The API packs an event's call may come from (`rdkafka` for `commit_message`).
fn libraries(apis: &Apis, e: &crate::ir::Event) -> BTreeSet<String> {
    let want = match &e.kind {
        EventKind::Receive { .. } => apis::ApiEvent::Receive,
        EventKind::Ack { .. } => apis::ApiEvent::Ack,
        EventKind::Nack { .. } => apis::ApiEvent::Nack,
        EventKind::Publish { .. } => apis::ApiEvent::Publish,
        EventKind::BrokerBegin => apis::ApiEvent::BrokerBegin,
        _ => return BTreeSet::new(),
    };
    let text = e.text.trim_end_matches("()");
    let name = text.rsplit(['.', ':']).next().unwrap_or(text);
    apis.methods
        .get(name)
        .into_iter()
        .chain(apis.paths.get(name))
        .flatten()
        .filter(|s| s.event == want)
        .map(|s| s.pack_name())
        .collect()
}

/// One library for a set of broker calls: the packs every call may come from,
/// narrowed to those the crate certainly uses when that leaves one.
fn library_of(
    apis: &Apis,
    events: &[&crate::ir::Event],
    used: &BTreeSet<String>,
) -> Option<String> {
    let mut acc: Option<BTreeSet<String>> = None;
    // The packs of each kind of call, looked up once however often it is made.
    let mut known: HashMap<(std::mem::Discriminant<EventKind>, &str), BTreeSet<String>> =
        HashMap::new();
    for e in events {
        let libs = known
            .entry((std::mem::discriminant(&e.kind), e.text.as_str()))
            .or_insert_with(|| libraries(apis, e));
        if libs.is_empty() {
            continue;
        }
        acc = Some(match acc {
            None => libs.clone(),
            // `a ∩ libs = a`: nothing to compute.
            Some(a) if a.is_subset(libs) => a,
            Some(a) => {
                let i: BTreeSet<String> = a.intersection(libs).cloned().collect();
                if i.is_empty() {
                    a.union(libs).cloned().collect()
                } else {
                    i
                }
            }
        });
    }
    let libs = acc?;
    if libs.len() > 1 {
        let narrowed: Vec<&String> = libs.iter().filter(|l| used.contains(*l)).collect();
        if narrowed.len() == 1 {
            return Some(narrowed[0].clone());
        }
    }
    Some(libs.into_iter().collect::<Vec<_>>().join(" or "))
}

/// Whether a Kafka consumer configuration auto-commits (docs/what-is-analyzed.md, the client's defaults).
fn auto_commit(c: &KafkaClient, stores_offsets: bool) -> Option<AutoAck> {
    if c.dynamic || c.framework {
        return None;
    }
    let val = |k: &str| c.prop(k).and_then(|p| p.value.clone());
    if val("enable.auto.offset.store").as_deref() == Some("false") && stores_offsets {
        return None;
    }
    match c.prop("enable.auto.commit") {
        Some(p) if p.value.as_deref() == Some("true") => Some(AutoAck {
            what: "`enable.auto.commit=true`".into(),
            loc: p.loc.clone(),
        }),
        None => Some(AutoAck {
            what: "`enable.auto.commit` unset (librdkafka default: `true`)".into(),
            loc: c.new_loc.clone(),
        }),
        _ => None,
    }
}

fn sort_dedup<T: Ord>(v: &mut Vec<T>) {
    v.sort();
    v.dedup();
}

/// The inventory of one crate.
pub fn crate_inventory(input: &CrateInput) -> Inventory {
    let krate = input.krate;
    let resolver = Resolver::new(krate);
    let all_events: Vec<&crate::ir::Event> = krate
        .functions
        .iter()
        .flat_map(|f| f.body.each_event())
        .collect();
    // Libraries the crate certainly uses: calls only one pack knows (each kind of
    // call looked up once, however often it is made).
    let mut seen = HashSet::new();
    let mut used: BTreeSet<String> = all_events
        .iter()
        .filter(|e| seen.insert((std::mem::discriminant(&e.kind), e.text.as_str())))
        .map(|e| libraries(input.apis, e))
        .filter(|l| l.len() == 1)
        .flatten()
        .collect();
    // And the packs whose entries the front end matched at the crate's calls.
    used.extend(krate.functions.iter().flat_map(|f| f.packs.iter().cloned()));
    let kafka_clients: Vec<&KafkaClient> = krate
        .functions
        .iter()
        .flat_map(|f| f.kafka_clients.iter())
        .collect();
    // A client made by a pack's configuration calls is that pack's; one of unknown
    // making, any Kafka pack's.
    used.extend(kafka_clients.iter().filter_map(|c| c.library.clone()));
    if kafka_clients.iter().any(|c| c.library.is_none()) {
        used.extend(input.apis.packs_of(apis::Broker::Kafka).map(String::from));
    }
    let stores_offsets = all_events
        .iter()
        .any(|e| matches!(e.kind, EventKind::Ack { offsets: true, .. }));
    // Each lapin publish's channel, traced to where it is made.
    let confirms: BTreeMap<Loc, (bool, bool)> = super::channels::publishes(krate)
        .into_iter()
        .map(|p| {
            let confirmed = p.mode == super::channels::Mode::Confirmed;
            (p.event.loc.clone(), (confirmed, p.checked))
        })
        .collect();

    let mut inv = Inventory::default();
    for (i, f) in krate.functions.iter().enumerate() {
        let direct = f.body.events();
        let receives_here = direct
            .iter()
            .any(|e| matches!(e.kind, EventKind::Receive { .. }))
            || has_callback(&f.body);
        if receives_here {
            inv.consumers.push(consumer(
                input,
                &resolver,
                i,
                &used,
                &kafka_clients,
                stores_offsets,
            ));
        }
        if direct
            .iter()
            .any(|e| matches!(e.kind, EventKind::Publish { .. }))
        {
            let mut p = producer(input, f, &used, &kafka_clients, &confirms);
            p.code = code_of(krate, &reach(krate, &resolver, i));
            inv.producers.push(p);
        }
    }
    // A function that reaches another consumer (`main` running the consume loops)
    // orchestrates them: the innermost consumers are the sections.
    let names: Vec<(String, BTreeSet<String>)> = inv
        .consumers
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                c.handlers.iter().map(|h| h.0.clone()).collect(),
            )
        })
        .collect();
    inv.consumers.retain(|c| {
        !names
            .iter()
            .any(|(other, _)| *other != c.name && c.handlers.iter().any(|h| h.0 == *other))
    });
    inv.sort();
    inv
}

/// The whole functions in `r`, first the one it starts from, then the others in
/// source order.
fn code_of(krate: &Crate, r: &Reach) -> Vec<Loc> {
    let mut code: Vec<Loc> = r
        .functions
        .iter()
        .map(|&j| krate.functions[j].extent.clone())
        .collect();
    if code.len() > 1 {
        code[1..].sort();
    }
    code.dedup();
    code
}

fn has_callback(n: &Node) -> bool {
    matches!(
        n,
        Node::Closure {
            run: crate::ir::ClosureRun::Callback,
            ..
        }
    ) || n.children().into_iter().any(has_callback)
}

/// The inventory of the consumer whose entry function is `i`: what it receives,
/// acks and does (through the functions it reaches), its broker's settings, the
/// ordering facts found from it and the windows its source keeps messages for.
fn consumer(
    input: &CrateInput,
    resolver: &Resolver,
    i: usize,
    used: &BTreeSet<String>,
    kafka_clients: &[&KafkaClient],
    stores_offsets: bool,
) -> Consumer {
    let krate = input.krate;
    let f = &krate.functions[i];
    let r = reach(krate, resolver, i);
    let mut c = Consumer {
        name: f.name.clone(),
        loc: Some(f.loc.clone()),
        ..Consumer::default()
    };
    let broker_events = consumer_events(&mut c, &r, input.tables);
    c.library = library_of(input.apis, &broker_events, used);
    c.broker = input.apis.broker_of(c.library.as_deref());
    consumer_functions(&mut c, krate, &r, i);
    // A fresh id counts only where it reaches what is sent.
    c.fresh_ids.retain(|x| match &x.sink_call {
        None => true,
        Some(callee) => resolver
            .resolve_callee(f, callee)
            .iter()
            .any(|&j| input.facts.effectful[j]),
    });
    let kafka = c.broker == Some(apis::Broker::Kafka);
    if kafka {
        c.topics
            .extend(input.retention.consumer_topics.iter().cloned());
        for k in kafka_clients
            .iter()
            .filter(|k| super::kafka_clients::is_consumer(k))
        {
            c.topics.extend(k.topics.iter().cloned());
            c.locs.insert(key(&k.new_loc));
            c.locs.extend(k.props.iter().map(|p| key(&p.loc)));
            c.auto_ack.extend(auto_commit(k, stores_offsets));
        }
    }
    c.ack_before_effect = of_entry(&input.facts.acks, |a| &a.entry, &f.name);
    c.pairs = of_entry(&input.facts.pairs, |p| &p.entry, &f.name);
    sort_dedup(&mut c.topics);
    // How long the source keeps messages: the windows of its topics, or all the
    // crate states when its topics are not known.
    c.windows = input
        .retention
        .windows
        .iter()
        .filter(|w| c.topics.is_empty() || w.topic.as_ref().is_none_or(|t| c.topics.contains(t)))
        .cloned()
        .collect();
    if !c.dedup.is_empty() {
        c.retention = input.retention.dedup.clone();
        c.locs.extend(
            c.retention
                .iter()
                .flat_map(|d| [key(&d.loc), key(&d.write)]),
        );
    }
    c.code = code_of(krate, &r);
    finish_consumer(&mut c);
    c
}

/// Sorts the consumer's events reached from its entry into receives, acks, nacks,
/// effects and dedup records (its handler callbacks are receives too): the broker
/// events among them, which tell its library.
fn consumer_events<'c>(
    c: &mut Consumer,
    r: &Reach<'c>,
    tables: &Tables,
) -> Vec<&'c crate::ir::Event> {
    let mut broker_events = Vec::new();
    for e in &r.events {
        match &e.kind {
            EventKind::Receive { .. } => {
                c.receives.push(site(e));
                broker_events.push(*e);
            }
            EventKind::Ack { .. } => {
                c.acks.push(site(e));
                broker_events.push(*e);
            }
            EventKind::Nack { .. } => c.nacks.push(site(e)),
            EventKind::Write { .. } => {
                if let Some((eff, dedup)) = write_effect(e, tables) {
                    if dedup {
                        c.dedup.push(eff);
                    } else {
                        c.effects.push(eff);
                    }
                }
            }
            EventKind::BrokerBegin => {
                c.broker_tx.get_or_insert_with(|| site(e));
            }
            EventKind::BrokerOffsets => {
                c.offsets_in_tx.get_or_insert_with(|| site(e));
            }
            EventKind::Begin { .. } => {
                c.locs.insert(key(&e.loc));
            }
            _ => {
                if let Some(eff) = other_effect(e) {
                    c.effects.push(eff);
                }
            }
        }
    }
    for cb in &r.callbacks {
        c.receives.push(Site {
            loc: cb.clone(),
            text: "callback".into(),
            describe: "handler callback".into(),
        });
    }
    broker_events
}

/// What the functions reached from the entry `i` declare: retries, fresh ids, ack
/// settings, and which of them (other than the entry) act on the message: the
/// consumer's handlers.
fn consumer_functions(c: &mut Consumer, krate: &Crate, r: &Reach, i: usize) {
    for &j in &r.functions {
        let g = &krate.functions[j];
        c.retries.extend(g.retries.iter().cloned());
        c.fresh_ids.extend(g.id_flows.iter().cloned());
        c.auto_ack.extend(g.ack_settings.iter().map(|s| AutoAck {
            what: s.what.clone(),
            loc: s.loc.clone(),
        }));
        let acts = g.body.each_event().any(|e| {
            matches!(
                e.kind,
                EventKind::Ack { .. }
                    | EventKind::Write { .. }
                    | EventKind::Publish { .. }
                    | EventKind::External { .. }
            )
        });
        if j != i && acts {
            c.handlers.push((g.name.clone(), g.loc.clone()));
        }
    }
}

/// The places the consumer's findings may be anchored at (its sites, id
/// generators and ack settings), and its lists in order without repeats.
fn finish_consumer(c: &mut Consumer) {
    let locs: Vec<(String, u32, u32)> = c
        .receives
        .iter()
        .chain(&c.acks)
        .chain(&c.nacks)
        .chain(c.effects.iter().map(|e| &e.site))
        .chain(c.dedup.iter().map(|e| &e.site))
        .chain(&c.broker_tx)
        .chain(&c.offsets_in_tx)
        .map(|s| key(&s.loc))
        .chain(c.fresh_ids.iter().map(|x| key(&x.idgen)))
        .chain(c.auto_ack.iter().map(|a| key(&a.loc)))
        .collect();
    c.locs.extend(locs);
    sort_dedup(&mut c.receives);
    sort_dedup(&mut c.acks);
    sort_dedup(&mut c.nacks);
    sort_dedup(&mut c.effects);
    sort_dedup(&mut c.dedup);
    sort_dedup(&mut c.handlers);
    sort_dedup(&mut c.retries);
    sort_dedup(&mut c.fresh_ids);
    sort_dedup(&mut c.auto_ack);
}

fn producer(
    input: &CrateInput,
    f: &Function,
    used: &BTreeSet<String>,
    kafka_clients: &[&KafkaClient],
    confirms: &BTreeMap<Loc, (bool, bool)>,
) -> Producer {
    let mut p = Producer {
        name: f.name.clone(),
        loc: Some(f.loc.clone()),
        ..Producer::default()
    };
    let events = f.body.events();
    let mut broker_events = Vec::new();
    for e in &events {
        match &e.kind {
            EventKind::Publish { confirm, .. } => {
                p.publishes.push(site(e));
                broker_events.push(*e);
                if confirm.is_some() {
                    let (confirmed, checked) = confirms.get(&e.loc).copied().unwrap_or_default();
                    // Every confirmable publish on a confirmed channel (the first decides
                    // alone: `confirms_checked` is still unset then).
                    p.confirm_select =
                        confirmed && (p.confirms_checked.is_none() || p.confirm_select);
                    p.confirms_checked = Some(p.confirms_checked.unwrap_or(true) && checked);
                }
            }
            EventKind::BrokerBegin => {
                p.broker_tx.get_or_insert_with(|| site(e));
            }
            EventKind::BrokerOffsets => {
                p.offsets_in_tx.get_or_insert_with(|| site(e));
            }
            EventKind::Write { .. } => {
                if let Some((eff, _)) = write_effect(e, input.tables) {
                    p.db_writes.push(eff);
                }
            }
            _ => {}
        }
    }
    p.library = library_of(input.apis, &broker_events, used);
    p.broker = input.apis.broker_of(p.library.as_deref());
    if p.broker == Some(apis::Broker::Kafka) {
        p.clients = kafka_clients
            .iter()
            .filter(|k| super::kafka_clients::is_producer(k))
            .map(|k| (*k).clone())
            .collect();
    }
    p.topics = f.kafka_sent_topics.clone();
    p.topics
        .extend(p.clients.iter().flat_map(|k| k.topics.iter().cloned()));
    sort_dedup(&mut p.topics);
    p.retries = f.retries.clone();
    p.fresh_ids = f.id_flows.clone();
    p.pairs = input
        .facts
        .pairs
        .iter()
        .filter(|x| {
            matches!(
                x.relation,
                Relation::PublishApartFromDbChange { .. }
                    | Relation::OffsetsBesideBrokerTransaction
            ) && p.publishes.iter().any(|s| s.loc == x.primary.loc)
        })
        .cloned()
        .collect();
    let mut locs: Vec<(String, u32, u32)> = p
        .publishes
        .iter()
        .chain(&p.broker_tx)
        .map(|s| key(&s.loc))
        .chain(p.fresh_ids.iter().map(|x| key(&x.idgen)))
        .collect();
    for k in &p.clients {
        locs.push(key(&k.new_loc));
        locs.extend(k.props.iter().map(|x| key(&x.loc)));
    }
    p.locs.extend(locs);
    sort_dedup(&mut p.publishes);
    sort_dedup(&mut p.retries);
    sort_dedup(&mut p.fresh_ids);
    p
}

mod infer;
pub use infer::{dedup_gates, infer, producer_settings, Guarantee, Inference};
mod serverless;
pub use serverless::EventSource;

#[cfg(test)]
mod tests;

/// The facts found on paths that start in the entry function `name`.
fn of_entry<T: Clone>(facts: &[T], entry: impl Fn(&T) -> &String, name: &str) -> Vec<T> {
    facts.iter().filter(|x| entry(x) == name).cloned().collect()
}
