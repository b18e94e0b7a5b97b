//! API knowledge: the packs in `rules/*.toml`, compiled into the binary, plus the
//! config's `[apis]` table for a project's own wrappers. This is the only place that
//! maps library types and calls to roles and delivery events; see `rules/README.md`.

use std::collections::BTreeMap;

use foldhash::HashMap;

use serde::Deserialize;

use crate::diagnostic::InputError;

pub mod serverless;
mod specs;
mod statements;
mod std_names;

pub use specs::{
    last_two_segments, ApiEvent, AutoAckSpec, Binds, Broker, CallSpec, ConfigStep, Delivery, Role,
    Target, TopicSpec, TtlForm, TtlSpec, TtlUnit, TypeSpec, FETCHED,
};
use statements::DslTables;
pub use statements::{
    ArgWord, ArgWordSpec, BuilderStep, BuilderText, DslTableNames, UniqueIndexes,
};
pub use std_names::{builtin_std, DurationSpec, MacroKind, ResultSide, ResultSpec, StdNames};

/// The config's `[apis]` table: kind (`ack`, `commit`, `begin`, ...) -> entries
/// (`crate::queue::Queue::done`), plus `dedup_tables` / `outbox_tables`.
#[derive(Clone, Debug, Default)]
pub struct ApiConfig {
    pub lists: BTreeMap<String, Vec<String>>,
    /// Path of the config file, for error messages.
    pub origin: Option<String>,
}

/// The packs shipped with msgaudit, in a fixed order.
pub const PACKS: &[(&str, &str)] = &[
    ("rdkafka.toml", include_str!("../../rules/rdkafka.toml")),
    ("lapin.toml", include_str!("../../rules/lapin.toml")),
    (
        "async_nats.toml",
        include_str!("../../rules/async_nats.toml"),
    ),
    (
        "aws_sdk_sqs.toml",
        include_str!("../../rules/aws_sdk_sqs.toml"),
    ),
    ("rusoto.toml", include_str!("../../rules/rusoto.toml")),
    ("redis.toml", include_str!("../../rules/redis.toml")),
    ("pulsar.toml", include_str!("../../rules/pulsar.toml")),
    ("kafka.toml", include_str!("../../rules/kafka.toml")),
    ("rskafka.toml", include_str!("../../rules/rskafka.toml")),
    ("fred.toml", include_str!("../../rules/fred.toml")),
    (
        "google_cloud_pubsub.toml",
        include_str!("../../rules/google_cloud_pubsub.toml"),
    ),
    ("rumqttc.toml", include_str!("../../rules/rumqttc.toml")),
    ("paho_mqtt.toml", include_str!("../../rules/paho_mqtt.toml")),
    ("amiquip.toml", include_str!("../../rules/amiquip.toml")),
    (
        "azservicebus.toml",
        include_str!("../../rules/azservicebus.toml"),
    ),
    (
        "azure_messaging_servicebus.toml",
        include_str!("../../rules/azure_messaging_servicebus.toml"),
    ),
    ("fluvio.toml", include_str!("../../rules/fluvio.toml")),
    ("iggy.toml", include_str!("../../rules/iggy.toml")),
    ("sqlx.toml", include_str!("../../rules/sqlx.toml")),
    (
        "tokio_postgres.toml",
        include_str!("../../rules/tokio_postgres.toml"),
    ),
    (
        "mysql_async.toml",
        include_str!("../../rules/mysql_async.toml"),
    ),
    ("tiberius.toml", include_str!("../../rules/tiberius.toml")),
    ("scylla.toml", include_str!("../../rules/scylla.toml")),
    ("mongodb.toml", include_str!("../../rules/mongodb.toml")),
    (
        "elasticsearch.toml",
        include_str!("../../rules/elasticsearch.toml"),
    ),
    (
        "opensearch.toml",
        include_str!("../../rules/opensearch.toml"),
    ),
    (
        "clickhouse.toml",
        include_str!("../../rules/clickhouse.toml"),
    ),
    ("rusqlite.toml", include_str!("../../rules/rusqlite.toml")),
    ("diesel.toml", include_str!("../../rules/diesel.toml")),
    ("sea_orm.toml", include_str!("../../rules/sea_orm.toml")),
    ("lambda.toml", include_str!("../../rules/lambda.toml")),
    ("sqlxmq.toml", include_str!("../../rules/sqlxmq.toml")),
    ("apalis.toml", include_str!("../../rules/apalis.toml")),
    (
        "async_stripe.toml",
        include_str!("../../rules/async_stripe.toml"),
    ),
    ("sendgrid.toml", include_str!("../../rules/sendgrid.toml")),
    ("effects.toml", include_str!("../../rules/effects.toml")),
    ("runtime.toml", include_str!("../../rules/runtime.toml")),
];

/// Where a send carries the id its receiver deduplicates by (a pack's
/// `[dedup_fields]`): a fresh id minted per delivery into one of them defeats the
/// dedup.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DedupFields {
    /// Builder steps whose argument is the dedup id (`message_deduplication_id`).
    #[serde(default)]
    pub methods: Vec<String>,
    /// Path calls (by their last segment) whose argument is the dedup id
    /// (`RequestStrategy::Idempotent(key)`).
    #[serde(default)]
    pub paths: Vec<String>,
    /// Header names whose value is the dedup id, matched case-insensitively on a
    /// call whose first argument is the name (`headers.insert("Nats-Msg-Id", id)`,
    /// `.header("Idempotency-Key", key)`); kept lower-case.
    #[serde(default)]
    pub headers: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pack {
    #[allow(dead_code)] // documents the file; not used by the analysis
    library: String,
    /// Crate and module names that mark a file as naming this library.
    #[serde(default)]
    modules: Vec<String>,
    /// Names of the pack too common to mark a file as relevant on their own.
    #[serde(default)]
    common: Vec<String>,
    /// Crates that are never the analyzed code's own, besides `modules`.
    #[serde(default)]
    outside: Vec<String>,
    broker: Option<Broker>,
    /// Methods that retry the closure they are called on (backon).
    #[serde(default)]
    retry_methods: Vec<String>,
    /// Methods of a retry policy that retry the closure they are given (again).
    #[serde(default)]
    retry_arg_methods: Vec<String>,
    /// Where a send carries its dedup id (see [`DedupFields`]).
    dedup_fields: Option<DedupFields>,
    /// What standard types' methods do (see [`StdNames`]).
    #[serde(default)]
    std_methods: Vec<String>,
    #[serde(default)]
    alias_methods: Vec<String>,
    #[serde(default)]
    passthrough: Vec<String>,
    #[serde(default)]
    passthrough_last: Vec<String>,
    /// Associated functions that make a value of the type they are called on.
    #[serde(default)]
    constructors: Vec<String>,
    #[serde(default)]
    accessors: Vec<String>,
    #[serde(default)]
    ubiquitous: Vec<String>,
    #[serde(default)]
    task_joins: Vec<String>,
    #[serde(default)]
    task_takes: Vec<String>,
    #[serde(default)]
    task_set_types: Vec<String>,
    #[serde(default)]
    channel_makers: Vec<String>,
    #[serde(default)]
    element_methods: Vec<String>,
    #[serde(default)]
    element_accessors: Vec<String>,
    #[serde(default)]
    value_closures: Vec<String>,
    #[serde(default)]
    element_takes: Vec<String>,
    #[serde(default)]
    element_closures: Vec<String>,
    #[serde(default)]
    future_boxes: Vec<String>,
    #[serde(default)]
    stream_joins: Vec<String>,
    #[serde(default)]
    stream_callbacks: Vec<String>,
    #[serde(default)]
    stream_adapters: Vec<String>,
    #[serde(default)]
    text_methods: Vec<String>,
    #[serde(default)]
    renders: Vec<String>,
    #[serde(default)]
    collections: Vec<String>,
    #[serde(default)]
    wrappers: Vec<String>,
    #[serde(default)]
    std_types: Vec<String>,
    #[serde(default)]
    wrapper_suffixes: Vec<String>,
    #[serde(default)]
    serializers: Vec<String>,
    #[serde(default)]
    store_methods: Vec<String>,
    #[serde(default)]
    text_conversions: Vec<String>,
    durations: Option<DurationSpec>,
    #[serde(default)]
    macro_kinds: HashMap<String, MacroKind>,
    results: Option<ResultSpec>,
    dsl_tables: Option<DslTables>,
    #[serde(default)]
    types: Vec<TypeSpec>,
    #[serde(default)]
    calls: Vec<CallSpec>,
    #[serde(default)]
    ttls: Vec<TtlSpec>,
    topics: Option<TopicSpec>,
    #[serde(default)]
    auto_ack: Vec<AutoAckSpec>,
    #[serde(default)]
    transient_queue: Vec<AutoAckSpec>,
    #[serde(default)]
    builder_steps: HashMap<String, BuilderStep>,
    #[serde(default)]
    chain_idents: HashMap<String, BuilderStep>,
    #[serde(default)]
    chain_verbs: HashMap<String, String>,
    #[serde(default)]
    arg_words: Vec<ArgWordSpec>,
    #[serde(default)]
    lock_keys: Vec<String>,
    #[serde(default)]
    cache_names: Vec<String>,
    unique_indexes: Option<UniqueIndexes>,
    /// The SQL text of this pack's calls is a dialect whose `INSERT` is an upsert
    /// (CQL: it overwrites the row with the same primary key).
    #[serde(default)]
    insert_is_upsert: bool,
    lambda: Option<serverless::RuntimeSpec>,
    /// A job queue's worker and the handler it runs (`[worker]`).
    #[serde(default)]
    worker: Option<serverless::WorkerSpec>,
    #[serde(default)]
    batch_events: Vec<serverless::BatchEventSpec>,
}

/// The verbs an ORM call (`sql = "method"`) may give its statement.
/// The values `sql` takes: where a call's statement is, or its fixed kind.
pub const SQL_KINDS: &[&str] = &[
    "arg0",
    "first_str",
    "prefix",
    "receiver",
    "method",
    "key_set",
    "key_claim",
    "dsl_insert",
    "dsl_insert_ignore",
    "dsl_insert_keyed",
    "dsl_replace",
    "dsl_update",
    "dsl_delete",
    "dsl_select",
    "table",
];

pub const ORM_VERBS: &[&str] = &["INSERT", "UPDATE", "DELETE", "SAVE", "WRITE"];

impl Pack {
    /// What serde cannot check: keys that hold only together.
    fn check(&self) -> Result<(), String> {
        for c in &self.calls {
            let what = || {
                c.methods
                    .iter()
                    .chain(&c.paths)
                    .chain(&c.macros)
                    .cloned()
                    .collect::<Vec<_>>()
            };
            let (m, p, x) = (
                !c.methods.is_empty(),
                !c.paths.is_empty(),
                !c.macros.is_empty(),
            );
            let sql = c.sql.as_deref();
            let fits = match c.binds {
                None => true,
                Some(Binds::BindCalls) => p && !m && !x && sql == Some("arg0"),
                Some(Binds::Arg1) => m && !p && !x && sql == Some("arg0"),
                Some(Binds::AfterSql) => x && !m && !p && sql == Some("first_str"),
            };
            let verb_fits = match (c.sql.as_deref(), c.verb.as_deref()) {
                (Some("method"), Some(v)) => ORM_VERBS.contains(&v),
                (Some("method"), None) => false,
                (_, v) => v.is_none(),
            };
            if !verb_fits {
                return Err(format!(
                    "{:?}: `sql = \"method\"` takes a `verb` (one of {ORM_VERBS:?}), \
                     and only it",
                    what()
                ));
            }
            if let Some(kind) = c.sql.as_deref().filter(|k| !SQL_KINDS.contains(k)) {
                return Err(format!(
                    "{:?}: `sql = {kind:?}` is none of {SQL_KINDS:?}",
                    what()
                ));
            }
            if c.channel
                .is_some_and(|t| !matches!(t, Target::Receiver | Target::Arg0))
                || (c.channel.is_some() && c.event != ApiEvent::None)
            {
                return Err(format!(
                    "{:?}: `channel` is `receiver` or `arg0`, on a call of event `none`",
                    what()
                ));
            }
            if c.config.is_some() && (c.methods.is_empty() || c.on.is_empty()) {
                return Err(format!("{:?}: `config` is for methods on a role", what()));
            }
            if !fits {
                return Err(format!(
                    "{:?}: `binds` goes with paths (`bind_calls`) or methods (`arg1`) \
                     whose `sql = \"arg0\"`, or macros (`after_sql`) whose `sql = \"first_str\"`",
                    what()
                ));
            }
        }
        let bad_option = (self.auto_ack.iter())
            .find(|a| !a.well_formed())
            .or_else(|| {
                self.transient_queue
                    .iter()
                    .find(|a| !a.methods.is_empty() || !a.well_formed())
            });
        if let Some(a) = bad_option {
            return Err(format!(
                "[[auto_ack]]/[[transient_queue]] {:?}: an option is a `field` with its `value` (and \
                 `struct`), or, for `[[auto_ack]]` only, `methods` with an `arg` and its `value`, or neither",
                a.methods.first().unwrap_or(&a.field)
            ));
        }
        for t in &self.ttls {
            let timed = matches!(t.form, TtlForm::ValueTtl | TtlForm::KeyTtl);
            if timed != t.unit.is_some() {
                return Err(format!(
                    "[[ttls]] {:?}: `unit` goes with the forms `value_ttl` and `key_ttl` only",
                    t.methods
                ));
            }
        }
        for (ident, step) in &self.chain_idents {
            if *step == BuilderStep::Assignments {
                return Err(format!(
                    "[chain_idents] {ident:?}: a name along a chain says `ignores_conflict` \
                     or `upsert`; `assignments` is for `[builder_steps]`"
                ));
            }
        }
        for (prefix, verb) in &self.chain_verbs {
            if !["INSERT", "UPDATE", "DELETE"].contains(&verb.as_str()) {
                return Err(format!(
                    "[chain_verbs] {prefix:?}: the verb is one of INSERT, UPDATE, DELETE"
                ));
            }
        }
        for w in &self.arg_words {
            if w.unit.is_some() && w.means != ArgWord::Expires {
                return Err(format!(
                    "[[arg_words]] {:?}: `unit` goes with `means = \"expires\"` only",
                    w.words
                ));
            }
        }
        Ok(())
    }
}

/// All API knowledge, indexed for lookup by the Rust front end.
#[derive(Debug, Default)]
pub struct Apis {
    pub types: HashMap<String, Vec<TypeSpec>>,
    /// The type names the packs give each role (`lapin.channel` -> `Channel`), sorted:
    /// what a value of that role may be when the crate adds methods to it.
    pub types_of_role: HashMap<String, Vec<String>>,
    /// The roles of client configurations: the receivers of the packs' `config`
    /// calls (rdkafka `ClientConfig`, kafka-rust's producer builder).
    pub config_roles: foldhash::HashSet<String>,
    /// Batch calls whose response carries per-entry failures, by method name: the
    /// response's accessors that tell which entries failed (the packs' `entry_failures`).
    pub entry_failures: HashMap<String, Vec<String>>,
    /// The batch responses' accessors that hold failed entries only (the packs'
    /// `only_failures`), sorted.
    pub only_failures: Vec<String>,
    /// Every batch response's accessors of the entries that went through (the
    /// packs' `entry_successes`), sorted.
    pub entry_successes: Vec<String>,
    /// The variants of a publish confirmation that say the broker took the message
    /// (the packs' `confirmed`: lapin `Ack`).
    pub confirmed: Vec<String>,
    /// The confirmation's tests (the packs' `confirmed_tests`: lapin `is_ack`).
    pub confirmed_tests: HashMap<String, bool>,
    /// Some method spec matches on the string literals of its arguments (`arg_keys`).
    pub has_arg_keys: bool,
    pub methods: HashMap<String, Vec<CallSpec>>,
    /// Path calls, keyed by the last path segment.
    pub paths: HashMap<String, Vec<CallSpec>>,
    pub macros: HashMap<String, Vec<CallSpec>>,
    pub dedup_tables: Vec<String>,
    pub outbox_tables: Vec<String>,
    /// Every identifier a file must contain for any rule to care about it (prefilter).
    pub tokens: Vec<String>,
    /// The tokens that are only library type names other crates share (not unique,
    /// restricted to their crates: async-nats' `Batch`), each with those crates: a
    /// file naming one is worth parsing only in a crate that may import one of them.
    pub shared_types: HashMap<String, Vec<String>>,
    /// The packs' crate and module names (`rdkafka`, `jetstream`): a file naming one
    /// is relevant (prefilter).
    pub modules: Vec<String>,
    /// The packs' names too common to mark a file as relevant on their own (`send`,
    /// `new`, `Client`): the prefilter leaves them out, and a path call ending in one
    /// counts only where its type is written.
    pub common: Vec<String>,
    /// Crates that are never the analyzed code's own: the packs' `modules` and
    /// `outside` lists (`std`, `futures`).
    pub outside_crates: Vec<String>,
    /// Each pack's broker, by the pack's name (`rdkafka`).
    pub brokers: HashMap<String, Broker>,
    /// The packs' `[[ttls]]`, by method name.
    pub ttls: HashMap<String, TtlSpec>,
    /// The `modules` of the packs with `[[ttls]]`: the key-store readers of the
    /// retention reader count in a file whose text names one.
    pub ttl_modules: Vec<String>,
    /// The packs' `[topics]`, merged.
    pub topics: TopicSpec,
    /// Methods that retry the closure they are called on (backon's
    /// `(|| async { … }).retry(policy)`): the closure is a retry scope.
    pub retry_methods: Vec<String>,
    /// Methods of a retry policy that retry the closure they are given as their first
    /// argument (again's `policy.retry(|| async { … })`): the closure is a retry scope.
    pub retry_arg_methods: Vec<String>,
    /// The packs' `[dedup_fields]`, merged: where a publish or an effect carries the
    /// id its receiver deduplicates by.
    pub dedup_fields: DedupFields,
    /// Names of standard types' methods and of the calls values pass through.
    pub std: StdNames,
    /// Consumer options that turn acknowledgements off, set in struct literals.
    pub auto_ack: Vec<AutoAckSpec>,
    /// Queue options, set in struct literals, that make a queue live only as long as
    /// the connection that declared it (`exclusive: true`, `auto_delete: true`).
    pub transient_queue: Vec<AutoAckSpec>,
    /// Steps of a statement builder that change what the statement does, by method.
    pub builder_steps: HashMap<String, BuilderStep>,
    /// Names along an ORM statement's chain that change what it does
    /// (`.on_conflict(OnConflict::column(..))`): `[chain_idents]`.
    pub chain_idents: HashMap<String, BuilderStep>,
    /// Method-name prefixes along an ORM statement's chain that name its verb
    /// (`delete_many` → `DELETE`): `[chain_verbs]`.
    pub chain_verbs: HashMap<String, String>,
    /// Words among a key-store command's arguments and what they do to the write
    /// (`NX`, `EX`), by upper-case word: `[[arg_words]]`.
    pub arg_words: HashMap<String, ArgWordSpec>,
    /// Words of a key's name that make a conditional write on it a lock or a lease,
    /// not a claim (`lock_keys`).
    pub lock_keys: Vec<String>,
    /// Words of a function's, its type's or its module's name that make the
    /// key-store writes there a cache's (`invalidate`, `ProfileCache`), by the packs
    /// that declare them (`cache_names`): the pack's origin (as `CallSpec::origin`),
    /// its words.
    pub cache_names: Vec<(String, Vec<String>)>,
    /// Index creation whose unique option keys the table it is made on
    /// (`[unique_indexes]`).
    pub unique_indexes: UniqueIndexes,
    /// How a query DSL names a table (`orders::table`; `[dsl_tables]`).
    pub dsl_tables: DslTableNames,
    /// Serverless runtimes and their batch events (`[lambda]`, `[[batch_events]]`).
    pub serverless: serverless::Serverless,
}

/// Keys the config's `[apis]` table accepts besides the table lists.
pub const USER_EVENT_KEYS: &[(&str, ApiEvent)] = &[
    ("receive", ApiEvent::Receive),
    ("ack", ApiEvent::Ack),
    ("nack", ApiEvent::Nack),
    ("begin", ApiEvent::Begin),
    ("commit", ApiEvent::Commit),
    ("rollback", ApiEvent::Rollback),
    ("write", ApiEvent::Write),
    ("publish", ApiEvent::Publish),
    ("idgen", ApiEvent::Idgen),
    ("effect", ApiEvent::External),
];

impl Apis {
    /// The built-in packs only.
    pub fn builtin() -> Apis {
        let mut apis = Apis::default();
        for (name, text) in PACKS {
            let pack: Pack = toml::from_str(text)
                .unwrap_or_else(|e| panic!("built-in API pack rules/{name} is invalid: {e}"));
            apis.add_pack(name, pack);
        }
        if let Some(missing) = apis.missing_roles().first() {
            panic!("no built-in API pack gives the role `{missing}` the analysis knows");
        }
        apis.finish();
        apis
    }

    /// The roles of [`Role::ALL`] that no type or call of the packs gives.
    fn missing_roles(&self) -> Vec<&'static str> {
        let given = |role: &str| {
            self.types.values().flatten().any(|t| t.role == role)
                || [&self.methods, &self.paths, &self.macros]
                    .iter()
                    .flat_map(|m| m.values().flatten())
                    .any(|c| c.returns.as_deref() == Some(role))
        };
        Role::ALL
            .iter()
            .map(|r| r.name())
            .filter(|r| !given(r))
            .collect()
    }

    /// The built-in packs plus the config's `[apis]` table.
    pub fn with_user(user: &ApiConfig) -> Result<Apis, InputError> {
        let mut apis = Apis::builtin();
        let origin = user
            .origin
            .clone()
            .unwrap_or_else(|| "msgaudit.toml".into());
        for (key, entries) in &user.lists {
            match key.as_str() {
                "dedup_tables" => apis.dedup_tables.extend(entries.iter().cloned()),
                "outbox_tables" => apis.outbox_tables.extend(entries.iter().cloned()),
                "retry" => {} // used by later rules; accepted
                _ => {
                    let Some(&(_, event)) = USER_EVENT_KEYS.iter().find(|(k, _)| k == key) else {
                        return Err(InputError {
                            path: origin.clone(),
                            line: None,
                            column: None,
                            message: format!("unknown key `{key}` in [apis]"),
                        });
                    };
                    for entry in entries {
                        apis.add_user_entry(&origin, event, entry)?;
                    }
                }
            }
        }
        apis.finish();
        Ok(apis)
    }

    fn add_pack(&mut self, name: &str, pack: Pack) {
        if let Err(e) = pack.check() {
            panic!("built-in API pack rules/{name} is invalid: {e}");
        }
        if let Some(b) = pack.broker {
            let stem = name.trim_end_matches(".toml").to_string();
            self.brokers.insert(stem, b);
        }
        self.outside_crates.extend(pack.modules.iter().cloned());
        self.outside_crates.extend(pack.outside);
        if !pack.ttls.is_empty() {
            self.ttl_modules.extend(pack.modules.iter().cloned());
        }
        for t in pack.ttls {
            for m in &t.methods {
                self.ttls.insert(m.clone(), t.clone());
            }
        }
        if let Some(t) = pack.topics {
            self.topics.create.extend(t.create);
            self.topics.configure.extend(t.configure);
            self.topics.subscribe.extend(t.subscribe);
            self.topics.records.extend(t.records);
        }
        self.retry_methods.extend(pack.retry_methods);
        self.retry_arg_methods.extend(pack.retry_arg_methods);
        if let Some(d) = pack.dedup_fields {
            self.dedup_fields.methods.extend(d.methods);
            self.dedup_fields.paths.extend(d.paths);
            self.dedup_fields
                .headers
                .extend(d.headers.iter().map(|h| h.to_ascii_lowercase()));
        }
        self.serverless.add(pack.lambda, pack.batch_events);
        self.serverless.add_worker(pack.worker);
        self.std.methods.extend(pack.std_methods);
        self.std.aliases.extend(pack.alias_methods);
        self.std.passthrough.extend(pack.passthrough);
        self.std.passthrough_last.extend(pack.passthrough_last);
        self.std.constructors.extend(pack.constructors);
        self.std.accessors.extend(pack.accessors);
        self.std.ubiquitous.extend(pack.ubiquitous);
        self.std.task_joins.extend(pack.task_joins);
        self.std.task_takes.extend(pack.task_takes);
        self.std.task_set_types.extend(pack.task_set_types);
        self.std.channel_makers.extend(pack.channel_makers);
        self.std.element_methods.extend(pack.element_methods);
        self.std.element_accessors.extend(pack.element_accessors);
        self.std.value_closures.extend(pack.value_closures);
        self.std.element_takes.extend(pack.element_takes);
        self.std.element_closures.extend(pack.element_closures);
        self.std.future_boxes.extend(pack.future_boxes);
        self.std.stream_joins.extend(pack.stream_joins);
        self.std.stream_callbacks.extend(pack.stream_callbacks);
        self.std.stream_adapters.extend(pack.stream_adapters);
        self.std.text_methods.extend(pack.text_methods);
        self.std.renders.extend(pack.renders);
        self.std.collections.extend(pack.collections);
        self.std.wrappers.extend(pack.wrappers);
        self.std.types.extend(pack.std_types);
        self.std.wrapper_suffixes.extend(pack.wrapper_suffixes);
        self.std.serializers.extend(pack.serializers);
        self.std.store_methods.extend(pack.store_methods);
        self.std.text_conversions.extend(
            pack.text_conversions
                .iter()
                .map(|p| p.split("::").map(str::to_string).collect()),
        );
        self.std.macro_kinds.extend(pack.macro_kinds);
        if let Some(d) = pack.dsl_tables {
            self.dsl_tables.items.push(d.item);
            self.dsl_tables.modules.extend(d.modules);
        }
        if let Some(r) = pack.results {
            self.std.results.extend(r);
        }
        if let Some(d) = pack.durations {
            self.std.durations.extend(d);
        }
        self.chain_idents.extend(pack.chain_idents);
        self.chain_verbs.extend(pack.chain_verbs);
        for w in pack.arg_words {
            for word in &w.words {
                self.arg_words.insert(word.to_ascii_uppercase(), w.clone());
            }
        }
        self.lock_keys.extend(pack.lock_keys);
        if !pack.cache_names.is_empty() {
            self.cache_names
                .push((format!("rules/{name}"), pack.cache_names));
        }
        if let Some(u) = pack.unique_indexes {
            self.unique_indexes.creates.extend(u.creates);
            self.unique_indexes.unique.extend(u.unique);
        }
        self.auto_ack.extend(pack.auto_ack);
        self.transient_queue.extend(pack.transient_queue);
        self.builder_steps.extend(pack.builder_steps);
        self.modules.extend(pack.modules);
        self.common.extend(pack.common);
        for t in pack.types {
            for n in &t.names {
                self.types.entry(n.clone()).or_default().push(t.clone());
                let names = self.types_of_role.entry(t.role.clone()).or_default();
                if let Err(at) = names.binary_search(n) {
                    names.insert(at, n.clone());
                }
            }
        }
        for mut c in pack.calls {
            c.origin = format!("rules/{name}");
            c.insert_is_upsert = pack.insert_is_upsert;
            self.add_call(c);
        }
    }

    fn add_call(&mut self, c: CallSpec) {
        for m in &c.methods {
            self.methods.entry(m.clone()).or_default().push(c.clone());
        }
        for p in &c.paths {
            let last = p.rsplit("::").next().unwrap_or(p).to_string();
            self.paths.entry(last).or_default().push(c.clone());
        }
        for m in &c.macros {
            self.macros.entry(m.clone()).or_default().push(c.clone());
        }
    }

    /// `crate::queue::Queue::done` becomes a method `done` on a receiver of type
    /// `Queue` (or of unknown type) and a path call `Queue::done`; a lower-case
    /// second-to-last segment (`crate::db::finish`) makes it a free function.
    fn add_user_entry(
        &mut self,
        origin: &str,
        event: ApiEvent,
        entry: &str,
    ) -> Result<(), InputError> {
        let segs: Vec<&str> = entry
            .split("::")
            .filter(|s| !s.is_empty() && *s != "crate")
            .collect();
        let Some(&last) = segs.last() else {
            return Err(InputError {
                path: origin.into(),
                line: None,
                column: None,
                message: format!("empty API entry `{entry}` in [apis]"),
            });
        };
        let owner = segs
            .len()
            .checked_sub(2)
            .map(|i| segs[i])
            .filter(|s| s.starts_with(|c: char| c.is_ascii_uppercase()));
        let mut spec = CallSpec {
            event,
            describe: Some(format!("`{entry}`")),
            origin: origin.to_string(),
            loose: true,
            target: match event {
                ApiEvent::Ack | ApiEvent::Nack => Target::Mentions,
                _ => Target::Receiver,
            },
            ..CallSpec::default()
        };
        match owner {
            Some(ty) => {
                spec.methods = vec![last.to_string()];
                spec.on = vec!["*".into()];
                spec.on_type = Some(ty.to_string());
                spec.paths = vec![format!("{ty}::{last}")];
            }
            None => {
                spec.paths = vec![segs.join("::")];
            }
        }
        self.add_call(spec);
        Ok(())
    }

    fn finish(&mut self) {
        let mut batches: HashMap<String, Vec<String>> = HashMap::default();
        for (name, specs) in &self.methods {
            for f in specs.iter().flat_map(|s| &s.entry_failures) {
                let fields = batches.entry(name.clone()).or_default();
                if !fields.contains(f) {
                    fields.push(f.clone());
                }
            }
        }
        self.entry_failures = batches;
        let mut only: Vec<String> = (self.methods.values().flatten())
            .flat_map(|s| {
                s.only_failures
                    .iter()
                    .filter(|f| s.entry_failures.contains(f))
            })
            .cloned()
            .collect();
        only.sort();
        only.dedup();
        self.only_failures = only;
        let mut successes: Vec<String> = (self.methods.values().flatten())
            .flat_map(|s| s.entry_successes.iter().cloned())
            .collect();
        successes.sort();
        successes.dedup();
        self.entry_successes = successes;
        let mut confirmed: Vec<String> = Vec::new();
        for v in self.methods.values().flatten().flat_map(|s| &s.confirmed) {
            if !confirmed.contains(v) {
                confirmed.push(v.clone());
            }
        }
        self.confirmed = confirmed;
        self.confirmed_tests = (self.methods.values().flatten())
            .flat_map(|s| &s.confirmed_tests)
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        self.has_arg_keys = self
            .methods
            .values()
            .flatten()
            .any(|s| !s.arg_keys.is_empty());
        self.config_roles = self
            .methods
            .values()
            .flatten()
            .filter(|s| s.config.is_some())
            .flat_map(|s| s.on.iter().filter(|o| *o != "?").cloned())
            .collect();
        let mut tokens: Vec<String> = Vec::new();
        tokens.extend(self.types.keys().cloned());
        tokens.extend(self.methods.keys().cloned());
        tokens.extend(self.paths.keys().cloned());
        tokens.extend(self.macros.keys().cloned());
        tokens.sort();
        tokens.dedup();
        self.tokens = tokens;
        // A type name only libraries' paths give a role (`Batch` of async-nats:
        // not unique, restricted to its crates) and nothing else of the packs uses.
        let mut shared: HashMap<String, Vec<String>> = HashMap::default();
        for specs in self.types.values() {
            for spec in specs.iter().filter(|s| !s.unique && !s.crates.is_empty()) {
                for name in &spec.names {
                    shared
                        .entry(name.clone())
                        .or_default()
                        .extend(spec.crates.iter().cloned());
                }
            }
        }
        shared.retain(|name, _| {
            !self.methods.contains_key(name)
                && !self.paths.contains_key(name)
                && !self.macros.contains_key(name)
                && self
                    .types
                    .get(name)
                    .into_iter()
                    .flatten()
                    .all(|s| !s.unique && !s.crates.is_empty())
        });
        for crates in shared.values_mut() {
            crates.sort();
            crates.dedup();
        }
        self.shared_types = shared;
        for list in [
            &mut self.modules,
            &mut self.common,
            &mut self.outside_crates,
            &mut self.ttl_modules,
            &mut self.retry_methods,
            &mut self.retry_arg_methods,
            &mut self.dedup_fields.methods,
            &mut self.dedup_fields.paths,
            &mut self.dedup_fields.headers,
        ] {
            list.sort();
            list.dedup();
        }
    }

    /// The broker of a library as the inventory names it (a pack's name); `None`
    /// for several of different brokers (`rdkafka or lapin`) or none.
    pub fn broker_of(&self, library: Option<&str>) -> Option<Broker> {
        let library = library?;
        if let Some(b) = self.brokers.get(library) {
            return Some(*b);
        }
        // Several packs (`amiquip or lapin`): their broker when they share one.
        let mut brokers = library
            .split(" or ")
            .map(|l| self.brokers.get(l.trim()).copied());
        let first = brokers.next()??;
        brokers.all(|b| b == Some(first)).then_some(first)
    }

    /// The packs of a broker, by name.
    pub fn packs_of(&self, broker: Broker) -> impl Iterator<Item = &str> {
        self.brokers
            .iter()
            .filter(move |(_, b)| **b == broker)
            .map(|(name, _)| name.as_str())
    }

    /// Whether a path's first segment is a crate that is never the analyzed code's.
    pub fn is_outside_crate(&self, first: &str) -> bool {
        self.outside_crates.iter().any(|c| c == first)
    }

    /// Type specs whose last segment is `name`.
    pub fn type_specs(&self, name: &str) -> &[TypeSpec] {
        self.types.get(name).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Whether `segs` ends with the segments of `path` (`a::b`, `dynamodb::Event`).
pub fn path_ends_with(segs: &[String], path: &str) -> bool {
    let want: Vec<&str> = path.split("::").collect();
    segs.len() >= want.len()
        && segs[segs.len() - want.len()..]
            .iter()
            .zip(&want)
            .all(|(a, b)| a == b)
}

#[cfg(test)]
mod tests;
