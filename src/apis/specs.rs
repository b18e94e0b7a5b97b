//! What one pack entry says: the roles, events and settings a `[[types]]` or
//! `[[calls]]` entry of `rules/*.toml` can name, as the loader reads them.

use foldhash::HashMap;

use serde::Deserialize;

use super::BuilderText;

/// The roles the analysis itself must know, declared once. Every other role is a
/// name the packs define and use among themselves. `Apis::builtin` refuses packs in
/// which one of these is never given (by a `[[types]]` entry or a call's `returns`),
/// so renaming a role in a pack fails at once instead of silently changing results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    KafkaConfig,
    KafkaClient,
    KafkaConsumer,
    KafkaProducer,
    KafkaStream,
    AmqpConsumer,
    NatsMessages,
    PulsarConsumer,
    SqsClient,
    DbTx,
    DbPool,
    DbConn,
    RedisConn,
    JoinHandle,
}

impl Role {
    pub const ALL: [Role; 14] = [
        Role::KafkaConfig,
        Role::KafkaClient,
        Role::KafkaConsumer,
        Role::KafkaProducer,
        Role::KafkaStream,
        Role::AmqpConsumer,
        Role::NatsMessages,
        Role::PulsarConsumer,
        Role::SqsClient,
        Role::DbTx,
        Role::DbPool,
        Role::DbConn,
        Role::RedisConn,
        Role::JoinHandle,
    ];

    /// The role's name in the packs.
    pub const fn name(self) -> &'static str {
        match self {
            Role::KafkaConfig => "kafka.config",
            Role::KafkaClient => "kafka.client",
            Role::KafkaConsumer => "kafka.consumer",
            Role::KafkaProducer => "kafka.producer",
            Role::KafkaStream => "kafka.stream",
            Role::AmqpConsumer => "amqp.consumer",
            Role::NatsMessages => "nats.messages",
            Role::PulsarConsumer => "pulsar.consumer",
            Role::SqsClient => "sqs.client",
            Role::DbTx => "db.tx",
            Role::DbPool => "db.pool",
            Role::DbConn => "db.conn",
            Role::RedisConn => "redis.conn",
            Role::JoinHandle => "join.handle",
        }
    }

    /// The known role of that name, if the analysis knows it.
    pub fn of(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == name)
    }

    /// `role.as_deref()` is this role.
    pub fn is(self, role: Option<&str>) -> bool {
        role == Some(self.name())
    }

    /// The name as a value's role.
    pub fn some(self) -> Option<String> {
        Some(self.name().to_string())
    }
}

/// The broker a pack's calls move messages through (the pack's `broker`): what
/// the inventory and the checklist ask of a consumer or producer depends on it
/// (offsets and producer settings for Kafka, publisher confirms for RabbitMQ).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Broker {
    Kafka,
    Rabbitmq,
    Nats,
    Sqs,
    Redis,
    Pulsar,
    /// Google Cloud Pub/Sub, MQTT, Azure Service Bus: acked per message; the
    /// checklist asks nothing broker-specific of them.
    Pubsub,
    Mqtt,
    Servicebus,
}

/// What a call does to delivery.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiEvent {
    Receive,
    Ack,
    Nack,
    Begin,
    Commit,
    Rollback,
    Write,
    Publish,
    External,
    Idgen,
    Spawn,
    TxClosure,
    Callback,
    /// Runs its closure argument again on failure (backoff, tokio-retry, again, retry).
    Retry,
    BrokerBegin,
    BrokerCommit,
    BrokerAbort,
    BrokerOffsets,
    /// A RabbitMQ channel is opened; `confirm_select` puts one in publisher-confirm mode.
    ChannelOpen,
    ConfirmSelect,
    /// Awaits every confirmation pending on a channel (`wait_for_confirms`).
    ConfirmsWaited,
    /// Reads the rows the connection's last statement changed (rusqlite `changes()`):
    /// a test of the claims run on it.
    ClaimResult,
    /// Sends a value on an in-process channel (`tx.send(job)`): the worker that owns
    /// the receiver processes it.
    ChannelSend,
    /// Receives from an in-process channel (`rx.recv()`): a loop around it is a worker.
    ChannelRecv,
    /// Fetches records from an external source (an HTTP `GET`): what its response
    /// holds is rows read, of the source named by `external` ([`FETCHED`]).
    Fetch,
    #[default]
    None,
}

/// Marks the pseudo-table of a fetch (`@http`): records read from an external source
/// rather than from a table. A relay's cursor set from them advances over them.
pub const FETCHED: &str = "@";

/// Where the values bound to a call's SQL statement are (the pack's `binds`), for
/// the dedup-retention reader: a cleanup's interval may be a bound value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Binds {
    /// A path call that starts a builder: the values are the last argument of each
    /// `.bind(x)` call of its chain (`sqlx::query("…").bind(a).bind(b)`).
    BindCalls,
    /// A method whose second argument lists them (`client.execute("…", &[&a, &b])`,
    /// `conn.execute("…", params![a, b])`).
    Arg1,
    /// A macro whose arguments after the SQL string are the values
    /// (`sqlx::query!("…", a, b)`).
    AfterSql,
}

/// What a call does to the client configuration it is called on (the pack's
/// `config`): rdkafka's `ClientConfig::new().set(k, v).create()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfigStep {
    /// `(key, value)`: sets one property of the client.
    Property,
    /// Leaves the client's properties as they are (`set_log_level`).
    Keep,
    /// Creates the client from the configuration (`create`, `create_with_context`).
    Create,
    /// Copies the configuration (`clone`): a new configuration with the same
    /// properties, which later calls change apart from the one copied.
    Copy,
}

/// Where a publish's delivery report arrives (a pack's `delivery`, docs/what-is-analyzed.md "Batch
/// calls with per-entry results": rdkafka delivery reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// In the value the call returns (a future, or a future inside its `Ok`): a
    /// statement that drops it unawaited never sees the report.
    Future,
    /// Through calls on the producer after it (`poll`, `flush`: the pack's
    /// `confirms_waited` events); until one runs, the report is unseen.
    Polled,
}

/// How a call gives a key its time to live (a pack's `[[ttls]]`), for the
/// dedup-retention reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TtlForm {
    /// `(key, value, ttl)`: the key is written with its TTL (`set_ex`).
    ValueTtl,
    /// `(key, ttl)`: the TTL of a key that a claim of the same function wrote
    /// (`expire` after `set_nx`).
    KeyTtl,
    /// `(key, value, options)`: a write whose options may hold the TTL (`EX(n)`,
    /// `PX(n)`) and make it a claim (`NX`) (`set_options`).
    Options,
    /// `(key, value)`: a claim without TTL, whose TTL a `key_ttl` call gives.
    Claim,
}

/// The unit of a TTL argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TtlUnit {
    Seconds,
    Millis,
    Minutes,
    Hours,
    Days,
    Weeks,
}

impl TtlUnit {
    /// Milliseconds per unit.
    pub fn millis(self) -> u64 {
        use crate::support::duration::{DAY, HOUR, MINUTE, SECOND, WEEK};
        match self {
            TtlUnit::Millis => 1,
            TtlUnit::Seconds => SECOND,
            TtlUnit::Minutes => MINUTE,
            TtlUnit::Hours => HOUR,
            TtlUnit::Days => DAY,
            TtlUnit::Weeks => WEEK,
        }
    }
}

/// A pack's `[[ttls]]` entry: methods that give a key its time to live.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TtlSpec {
    pub methods: Vec<String>,
    pub form: TtlForm,
    /// The unit of the TTL argument (`value_ttl` and `key_ttl` only).
    pub unit: Option<TtlUnit>,
}

/// A pack's `[topics]`: topics named in code (replay windows of dedup retention), created with
/// their settings and subscribed to.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicSpec {
    /// Path calls whose first argument names a topic to create (`NewTopic::new`).
    #[serde(default)]
    pub create: Vec<String>,
    /// Methods of the created topic's builder that set one of its properties
    /// `(key, value)` (`.set("retention.ms", "604800000")`).
    #[serde(default)]
    pub configure: Vec<String>,
    /// Methods whose arguments name the topics a consumer subscribes to.
    #[serde(default)]
    pub subscribe: Vec<String>,
    /// Path calls that build a record for the topic their first argument names
    /// (`FutureRecord::to("orders")`): the topic a publish of it sends to.
    #[serde(default)]
    pub records: Vec<String>,
}

/// The last two segments of a path (`("FutureRecord", "to")` of
/// `rdkafka::FutureRecord::to`); `None` for a single segment.
pub fn last_two_segments(path: &str) -> Option<(&str, &str)> {
    let (head, last) = path.rsplit_once("::")?;
    Some((head.rsplit("::").next().unwrap_or(head), last))
}

impl TopicSpec {
    /// The record type of a `records` path call ending in `segs` (`FutureRecord` of
    /// `FutureRecord::to`): the last two segments match.
    pub fn record_type(&self, segs: &[String]) -> Option<&str> {
        let [.., ty, call] = segs else {
            return None;
        };
        self.records.iter().find_map(|r| {
            let (t, c) = last_two_segments(r)?;
            (t == ty && c == call).then_some(t)
        })
    }

    /// Whether `ident` is the type of a `records` path call.
    pub fn is_record_type(&self, ident: &str) -> bool {
        self.record_types().any(|t| t == ident)
    }

    /// The types of the `records` path calls (`FutureRecord`).
    pub fn record_types(&self) -> impl Iterator<Item = &str> {
        self.records
            .iter()
            .filter_map(|r| last_two_segments(r).map(|(t, _)| t))
    }
}

/// A consumer option that turns acknowledgements off (`[[auto_ack]]`): set in a
/// struct literal (lapin `BasicConsumeOptions { no_ack: true, .. }`, JetStream
/// `ack_policy: AckPolicy::None`), or a method call: one of `methods` whose argument
/// `arg` is `value` (fred `xreadgroup_map(.., true /* noack */, ..)`), or, with no
/// `arg`, the call itself (redis-rs `StreamReadOptions::noack()`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoAckSpec {
    /// The struct literal's type (last segment); any struct when absent.
    #[serde(rename = "struct")]
    pub struct_name: Option<String>,
    /// The struct literal's field (empty for the method form).
    #[serde(default)]
    pub field: String,
    /// The method form: the methods whose call sets the option.
    #[serde(default)]
    pub methods: Vec<String>,
    /// The method form: the index of the argument that sets it...
    pub arg: Option<usize>,
    /// ...and that parameter's name, for messages (`noack`).
    pub arg_name: Option<String>,
    /// `true`/`false` (a bool literal), or the path the field is set to (its last
    /// two segments: `AckPolicy::None`); empty for a method whose call sets it.
    #[serde(default)]
    pub value: String,
}

impl AutoAckSpec {
    /// The identifiers that make a file name the option (the prefilter's words).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        let path_type = last_two_segments(&self.value).map(|(t, _)| t);
        self.struct_name
            .as_deref()
            .into_iter()
            .chain(path_type)
            .chain(self.methods.iter().map(String::as_str))
    }

    /// The form is whole: a field and its value, or methods with an argument and
    /// its value (or neither).
    pub fn well_formed(&self) -> bool {
        if self.methods.is_empty() {
            self.arg.is_none() && !self.field.is_empty() && !self.value.is_empty()
        } else {
            self.struct_name.is_none()
                && self.field.is_empty()
                && self.arg.is_some() != self.value.is_empty()
                && (self.arg.is_some() || self.arg_name.is_none())
        }
    }
}

/// Which value an event applies to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    #[default]
    Receiver,
    Arg0,
    Mentions,
    TerminalArg0,
    /// The argument holding a transaction (`insert_one_with_session(doc, None, &mut s)`):
    /// a write joined to it.
    Tx,
    None,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypeSpec {
    pub names: Vec<String>,
    pub role: String,
    #[serde(default)]
    pub crates: Vec<String>,
    #[serde(default = "yes")]
    pub unique: bool,
    /// Modules one of which a known import's path must pass through, for a name the
    /// crate gives two types (async-nats' `consumer::pull::Stream`, a message
    /// stream, beside `jetstream::stream::Stream`, a stream's handle). Empty: any.
    #[serde(default)]
    pub modules: Vec<String>,
    /// Crates whose type of this name is generic over what it pools (`bb8::Pool<M>`,
    /// `r2d2::Pool<M>`): there the role holds only when the manager `M` is not a type
    /// of the analyzed crate and its path names none of `foreign_managers`
    /// (case-insensitive), so a pool of lapin channels or Redis connections is no
    /// database pool.
    #[serde(default)]
    pub managed_in: Vec<String>,
    #[serde(default)]
    pub foreign_managers: Vec<String>,
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    #[serde(default)]
    pub methods: Vec<String>,
    #[serde(default)]
    pub paths: Vec<String>,
    #[serde(default)]
    pub macros: Vec<String>,
    #[serde(default)]
    pub on: Vec<String>,
    pub arity: Option<usize>,
    #[serde(default)]
    pub arg_mentions: Vec<String>,
    #[serde(default)]
    pub arg0_str: Vec<String>,
    /// An argument is a document written in the call (a macro's tokens, `doc! {..}`)
    /// or bound to a local by a `let` of the function, holding one of these string
    /// literals (MongoDB's `"$inc"` update operator).
    #[serde(default)]
    pub arg_keys: Vec<String>,
    #[serde(default)]
    pub arg0_role: Vec<String>,
    /// The receiver names a table (a value made by a `sql = "table"` call, such as a
    /// MongoDB collection, held in a local or a struct field): only then does it match.
    /// `any`: any table; `dedup`: a dedup table by its name (`processed_events`).
    pub on_table: Option<String>,
    pub event: ApiEvent,
    #[serde(default)]
    pub target: Target,
    pub returns: Option<String>,
    pub describe: Option<String>,
    /// Where the statement's SQL is: `arg0` (the first argument), `first_str` (the
    /// first string argument), `prefix` (the first argument starts a statement the
    /// builder completes: read only as far as it parses), `method` (sea-orm's verb),
    /// or a fixed kind (`dsl_insert`, `dsl_select`: a query DSL's statement, its table
    /// in the first argument or named by the receiver; `key_set`, `key_claim`: a key
    /// store's `SET`, `SET NX`; `table`: no statement, the value made names the table
    /// its first argument's text names).
    pub sql: Option<String>,
    /// The key store a `key_set` or `key_claim` writes to, named as its table; it
    /// commits each write by itself.
    pub store: Option<String>,
    pub external: Option<String>,
    /// The external effect writes a database outside SQL (DynamoDB `put_item`): a
    /// durable business change, like an autocommit write, for dual writes.
    #[serde(default)]
    pub durable: bool,
    /// The ack is a Kafka consumer's offset commit or store.
    #[serde(default)]
    pub offsets: bool,
    /// With `offsets`: the call only stores the offset in the client for its auto
    /// commit to commit later (librdkafka's offset store); it commits nothing itself.
    #[serde(default)]
    pub offset_store: bool,
    /// (commit) The commit also acks the message it is called on (sqlxmq's
    /// `complete_with_transaction(tx)`): an ack right after the commit.
    #[serde(default)]
    pub acks: bool,
    /// (begin) The value made holds no transaction until a call with `opens` is made
    /// on it (a MongoDB session, `start_transaction`): a write given it before then
    /// commits by itself.
    #[serde(default)]
    pub lazy: bool,
    /// The call opens the transaction of the `lazy` value it is called on.
    #[serde(default)]
    pub opens: bool,
    /// An `idgen` that reads a clock (`Utc::now`): its reading is an id only once
    /// formatted into a text (`format!("{}-{}", key, now.timestamp_millis())`).
    #[serde(default)]
    pub formatted: bool,
    /// Applying the effect twice does harm (e-mail, payment, `INCR`, `XADD`).
    #[serde(default)]
    pub non_idempotent: bool,
    /// The call returns a client whose requests carry an idempotency key
    /// (async-stripe `with_strategy(RequestStrategy::Idempotent(key))`, the variant
    /// named by `arg_mentions`): an external call given it is keyed, as a request
    /// with an `Idempotency-Key` header is.
    #[serde(default)]
    pub keys_requests: bool,
    /// The publish returns a confirmation to await (lapin `basic_publish`).
    #[serde(default)]
    pub confirmable: bool,
    /// (with `confirmable`) The variants of the awaited confirmation that say the
    /// broker took the message (lapin `Confirmation::Ack`): an arm matching any other
    /// (`Nack`, `NotRequested`) is on the publish's failure side.
    #[serde(default)]
    pub confirmed: Vec<String>,
    /// (with `confirmable`) Methods of the confirmation that test it, and whether
    /// each holds when the broker took the message (lapin `is_ack` true, `is_nack`
    /// false): the side where it did not is the publish's failure side.
    #[serde(default)]
    pub confirmed_tests: std::collections::BTreeMap<String, bool>,
    /// The publish goes out in its channel's confirm mode but returns no confirmation
    /// (amiquip's, confirmed through a listener): the unconfirmed-publish rule asks
    /// only that its channel be put in confirm mode.
    #[serde(default)]
    pub confirm_mode: bool,
    /// (none) The value made publishes on the channel in this place, `receiver` or
    /// `arg0` (amiquip's `Exchange::direct(&channel)`): a confirmable publish on it
    /// goes out on that channel, in its confirm mode.
    pub channel: Option<Target>,
    /// A `channel_open` call: the statement that puts the channel it makes in
    /// confirm mode (the unconfirmed-publish rule's unsafe fix), `{channel}` and `{options}` to fill...
    pub confirm_with: Option<String>,
    /// ...and the path of the option type `{options}` names.
    pub confirm_options: Option<String>,
    /// The publish's delivery report arrives in its returned future or through later
    /// calls on the producer (rdkafka).
    #[serde(default)]
    pub delivery: Option<Delivery>,
    /// The publish appends to a capped log (`xadd_maxlen`): old entries are dropped by
    /// design, so no guarantee rests on it (docs/what-is-analyzed.md, dual writes).
    #[serde(default)]
    pub capped: bool,
    /// The publish appends to a capped log when one of these words is among the
    /// string arguments of its builder chain (`cmd("XADD").arg(key).arg("MAXLEN")`).
    #[serde(default)]
    pub capped_args: Vec<String>,
    #[serde(default)]
    pub terminals: Vec<String>,
    /// A batch call whose response carries per-entry failures: the response's
    /// accessors that tell which entries failed (`failed`, `unprocessed_items`).
    #[serde(default)]
    pub entry_failures: Vec<String>,
    /// Of `entry_failures`, the accessors that hold failed entries only (a count,
    /// the list of the failures): a test that any is there (`> 0`, `!is_empty()`)
    /// opens the side where some entries failed.
    #[serde(default)]
    pub only_failures: Vec<String>,
    /// The response's accessors that hold the entries that went through only (SQS
    /// `successful`): an ack in a loop over them acks none of the failed entries.
    #[serde(default)]
    pub entry_successes: Vec<String>,
    #[serde(default)]
    pub write_terminals: Vec<String>,
    /// (write) Terminals of the builder, or methods of the call, at which the rows
    /// written may stay in the client's buffer (clickhouse `Inserter::commit`, which
    /// sends only once a limit is reached); the call's other methods or terminals
    /// send everything buffered. An ack after a buffering call, before a sending
    /// one, may confirm rows not sent yet.
    #[serde(default)]
    pub buffering: Vec<String>,
    /// The builder's text, written along its calls (any other step leaves it
    /// unknown: only its start is read).
    pub text: Option<BuilderText>,
    /// Where the values bound to the statement are (`sql = "arg0"` calls only).
    pub binds: Option<Binds>,
    /// The statement's verb for `sql = "method"` (ORM calls: `model.insert(&db)`):
    /// `INSERT`, `UPDATE`, `DELETE`, `SAVE` (an insert or an update, so an upsert)
    /// or `WRITE` (a statement built along the chain, `exec`).
    pub verb: Option<String>,
    /// What the call does to the client configuration it is called on.
    pub config: Option<ConfigStep>,
    /// With `config = "property"`: the one property a builder method sets from its
    /// argument (kafka-rust `with_required_acks(RequiredAcks::One)` sets `acks`)...
    pub property: Option<String>,
    /// ...and the value each enum variant the argument names gives it
    /// (`One = "1"`): the last segment of the argument's path.
    #[serde(default)]
    pub property_values: HashMap<String, String>,
    /// The pack's statements are in a dialect whose `INSERT` overwrites the row with
    /// the same key (CQL): an upsert, not a row added (the pack's `insert_is_upsert`).
    #[serde(skip)]
    pub insert_is_upsert: bool,
    /// For user entries: the receiver's declared type must be this (or unknown).
    #[serde(skip)]
    pub on_type: Option<String>,
    /// Name of the pack (or `msgaudit.toml`) the entry comes from.
    #[serde(skip)]
    pub origin: String,
    /// User entries also match a call whose path is a suffix of the entry's path
    /// (`finish_uow(..)` inside the `db` module for `crate::db::finish_uow`).
    #[serde(skip)]
    pub loose: bool,
}

impl CallSpec {
    /// The pack's name, as its file names it (`rules/rdkafka.toml`: `rdkafka`).
    pub fn pack_name(&self) -> String {
        self.origin
            .trim_start_matches("rules/")
            .trim_end_matches(".toml")
            .to_string()
    }

    /// How messages name a statement this call runs on `table`, when `describe` names
    /// the table (`{table}` in it: ``MongoDB `$inc` update of `members` ``); `None`
    /// otherwise (the statement's own SQL names it).
    pub fn describe_table(&self, table: Option<&String>) -> Option<String> {
        let d = self.describe.as_deref().filter(|d| d.contains("{table}"))?;
        Some(d.replace("{table}", &crate::diagnostic::quoted(table?)))
    }
}
