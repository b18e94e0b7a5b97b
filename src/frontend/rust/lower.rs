//! Lowering of function bodies to the delivery model.
//!
//! Expressions are visited in evaluation order; each appends the nodes it produces
//! (events, branches, loops, closures, exits) to an output vector and returns an
//! [`Info`] about its value: which local value it denotes, its role, a SQL text it
//! carries, a builder it starts (`sqlx::query(..)` before `.execute(..)`), and the
//! values it mentions. Roles come from declared types and from the API packs.

use syn::spanned::Spanned;
use syn::{Expr, Pat, Stmt};

mod batch;
mod batch_failed;
mod batch_uses;
mod blocks;
mod builder_text;
mod calls;
mod confirm;
mod confirmed;
mod control;
mod crate_calls;
mod ctor;
mod dedup;
mod elements;
mod events;
mod exprs;
mod file_cx;
mod function;
mod hoist;
mod joined;
mod macros;
mod outcome;
mod recorded;
mod settings;
mod spans;
mod statement;
mod values;
pub(super) use batch_uses::logged_params;
use elements::Elements;
pub use file_cx::{FileCx, IndexReads};
use function::lower_fn;
pub(super) use macros::body_exprs as macro_body_exprs;

use super::{is_test_attr, CrateIndex, TypeInfo};
use crate::apis::{Apis, CallSpec, Role};
use crate::ir::{
    AckSetting, Event, EventKind, Function, IdFlow, KafkaClient, Loc, Node, SqlFacts, ValueId,
};

/// The lowerer's own maps and sets, looked up per node: a fast hasher.
type FastMap<K, V> = foldhash::HashMap<K, V>;
type FastSet<T> = foldhash::HashSet<T>;

/// Names the lowering makes facts of by themselves, besides the API knowledge (the
/// packs' calls and types, topics, `auto_ack` options and retry methods): a SQL
/// schema included from a file (the macros of kind `include_file`). A function body
/// naming none of them nor the API knowledge has no fact of its own
/// (`driver::lazy`).
pub fn fact_names(apis: &Apis) -> impl Iterator<Item = &str> {
    apis.std
        .macro_kinds
        .iter()
        .filter(|(_, k)| **k == crate::apis::MacroKind::IncludeFile)
        .map(|(name, _)| name.as_str())
}

/// What a loop's text says of a retry (`is_retry_loop`; `driver::lazy` reads the
/// same text before parsing).
pub struct RetryText {
    /// It names attempts, retries or backoff and handles an error or continues: a
    /// retry, whatever the loop.
    pub named: bool,
    pub handles_err: bool,
    /// It leaves (`break`, `return`).
    pub leaves: bool,
}

impl RetryText {
    pub fn of(text: &str) -> RetryText {
        let lower = text.to_ascii_lowercase();
        let handles_err = lower.contains("err") || lower.contains("is_ok") || tests_ok(&lower);
        let named = ["attempt", "retry", "retries", "tries", "backoff"]
            .iter()
            .any(|w| names_word(text, &lower, w))
            && (handles_err || lower.contains("continue"));
        let text = lower;
        RetryText {
            named,
            handles_err,
            leaves: text.contains("break") || text.contains("return"),
        }
    }
}

/// The text tests a call's outcome through `Ok(..)`: as a pattern (`if let Ok(v) =`,
/// `Ok(v) =>`, `Ok(r) if .. =>`, `let Ok(v) = .. else`) or by `.ok()`. Not a value built with `Ok(..)`
/// (`break Ok(id)`, `return Ok(())`): a loop that leaves with one handles no failure.
fn tests_ok(lower: &str) -> bool {
    let bytes = lower.as_bytes();
    lower.match_indices("ok(").any(|(i, _)| {
        if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
            return false;
        }
        if i > 0 && bytes[i - 1] == b'.' {
            return true;
        }
        // Past the balanced group and any closing parentheses around it.
        let mut depth = 0usize;
        let mut j = i + 2;
        while j < bytes.len() {
            match bytes[j] {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        let rest = lower[(j + 1).min(lower.len())..]
            .trim_start_matches(|c: char| c == ')' || c.is_whitespace());
        rest.starts_with("=>")
            || rest.starts_with('|')
            || rest.starts_with("if ")
            || (rest.starts_with('=') && !rest.starts_with("=="))
    })
}

/// `word` begins a word of `text` (`lower` is it in lower case): at its start,
/// after a character that is no letter or digit (`max_tries`, `self.retry`), or at
/// a capital (`MaxTries`); not inside another word (`entries`, `countries`).
fn names_word(text: &str, lower: &str, word: &str) -> bool {
    lower.match_indices(word).any(|(i, _)| {
        i == 0
            || !lower.as_bytes()[i - 1].is_ascii_alphanumeric()
            || text.as_bytes()[i].is_ascii_uppercase()
    })
}

/// A call that starts a builder; the event happens at one of its terminals.
#[derive(Clone, Debug)]
struct Builder {
    spec: CallSpec,
    loc: Loc,
    text: String,
    sql: Option<SqlFacts>,
    mentions: Vec<ValueId>,
    /// String literals passed along the chain (`.arg("NX")`).
    strs: Vec<String>,
    /// The statement's text written so far (the pack's `text` steps), `None` once a
    /// step wrote what is not known; the local holding the builder; a list view.
    written: builder_text::Written,
}

#[derive(Clone, Debug, Default)]
struct Info {
    /// The local value this expression denotes (an alias), or the value an event made.
    value: Option<ValueId>,
    role: Option<String>,
    crate_type: Option<String>,
    /// Of a type outside the analyzed code, or a collection ([`TypeInfo::outside`]).
    outside: bool,
    /// A literal or a constant of the code, as written (`"lock:x"`, `LOCK_KEY`).
    constant: bool,
    sql: Option<SqlFacts>,
    builder: Option<Box<Builder>>,
    /// Values whose identity appears in the expression.
    mentions: Vec<ValueId>,
    /// Identifiers of paths in the expression (`CommitMode`, `FutureRecord`, `POST`).
    idents: Vec<String>,
    str_lit: Option<String>,
    /// String literals written in the expression, macros' tokens included, or in
    /// the `let` that bound the local it names (filled only to match `arg_keys`).
    lits: Vec<String>,
    kafka_config: Option<Box<KafkaClient>>,
    kafka_client: Option<usize>,
    /// A Kafka client a crate function returned (a consumer factory), configured there.
    client_made_by: Option<Box<crate::ir::Callee>>,
    /// A fresh id the expression evaluates to (a helper that mints one).
    fresh: Option<(Loc, String, Option<u32>)>,
    /// The value is not the fresh id its mentions carry (an unknown call's result).
    fresh_blocked: bool,
    /// A client whose requests carry an idempotency key (the packs' `keys_requests`).
    keyed: bool,
    /// The rows of these tables, as a query read them (`fetch_all` of a `SELECT`).
    rows: Vec<String>,
    /// A struct literal's fields, each with the values it mentions.
    parts: Vec<(String, Vec<ValueId>)>,
    /// A struct literal's fields given a value (`InFlight { delivery, write:
    /// tokio::spawn(..) }`): the value a binding of the literal holds in each.
    field_values: Vec<(String, ValueId)>,
    /// A tuple literal's elements, each as its own expression (`let (db, ev) =
    /// (Arc::clone(&pool), msg.clone());` binds each name to its element).
    elems: Vec<Info>,
}

impl Info {
    fn absorb(&mut self, other: &Info) {
        for m in &other.mentions {
            if !self.mentions.contains(m) {
                self.mentions.push(*m);
            }
        }
        self.idents.extend(other.idents.iter().cloned());
        if self.fresh.is_none() {
            self.fresh.clone_from(&other.fresh);
        }
        add_rows(&mut self.rows, &other.rows);
    }
}

/// Adds the tables of `more` to `rows`, each once.
fn add_rows(rows: &mut Vec<String>, more: &[String]) {
    for t in more {
        if !rows.contains(t) {
            rows.push(t.clone());
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Value {
    name: String,
    /// The string literal (or constant) the value was bound to (`let key = "..."`).
    text: Option<String>,
    /// String literals written in the `let` that bound the value, macros' tokens
    /// included (`let update = doc! { "$inc": .. }`).
    lits: Vec<String>,
    role: Option<String>,
    crate_type: Option<String>,
    outside: bool,
    sql: Option<SqlFacts>,
    builder: Option<Box<Builder>>,
    /// A received message, or a value taken from one (its root message).
    msg_root: Option<ValueId>,
    /// Rows a query read from these tables, or a value taken from them (a row, a
    /// field of one, a record built from them).
    rows: Vec<String>,
    /// A fresh id (or a value made from one): where it was generated, and the retry
    /// scope it was generated in.
    fresh: Option<(Loc, String, Option<u32>)>,
    /// A clock reading (or a value made from one): a fresh id once formatted into a
    /// text (the packs' `formatted` id generators).
    clock: Option<(Loc, String, Option<u32>)>,
    /// A client whose requests carry an idempotency key (the packs' `keys_requests`).
    keyed: bool,
    /// A Kafka client config being built, or the client made from one (index into
    /// `kafka_clients`).
    kafka_config: Option<Box<KafkaClient>>,
    kafka_client: Option<usize>,
    /// A Kafka client a crate function returned (a consumer factory), configured there.
    client_made_by: Option<Box<crate::ir::Callee>>,
    /// Identifiers of the expression the value was made from (`ExistenceCheck::NX`).
    idents: Vec<String>,
    /// An async block or closure bound to this name: it runs where it is awaited,
    /// called, spawned or handed to another call, not where it is written.
    deferred: Option<Box<Node>>,
    /// A channel made by a `ChannelOpen` and not yet bound: its first binding names it.
    opened: bool,
    /// A handle made on a channel (the packs' `channel`, amiquip's `Exchange`): the
    /// channel its publishes go out on.
    channel: Option<ValueId>,
    /// Begun by a `lazy` begin and no transaction opened on it yet: writes given it
    /// commit by themselves.
    unopened: bool,
    /// For an end of an in-process channel: what identifies its channel (`@site` of
    /// the `channel()` call that made it, `T:Job` for its element type).
    chan: Vec<String>,
    /// How many loops were being lowered when the value was made.
    depth: u32,
}

struct Lowerer<'a, 'b> {
    /// The `impl` block of the method being lowered: its bounds type the self type's
    /// generic fields.
    impl_of: Option<&'b syn::ItemImpl>,
    cx: &'a FileCx<'b>,
    values: Vec<Value>,
    scopes: Vec<FastMap<String, ValueId>>,
    fields: FastMap<(ValueId, String), ValueId>,
    /// The fields a collection's elements hold (lower/elements.rs): `None` once two
    /// pushes disagree or one pushes a value holding none.
    elements: FastMap<ValueId, Option<Elements>>,
    self_type: Option<String>,
    labels: Vec<(String, u32)>,
    next_label: u32,
    /// How often each value is mentioned, and how often committed, rolled back or
    /// opened (a session's `start_transaction`).
    uses: Vec<u32>,
    finishes: Vec<u32>,
    /// Claims whose result is discarded (by location), and claims bound to a name
    /// that may or may not be used later.
    unchecked: FastSet<Loc>,
    bound_claims: Vec<(ValueId, Loc)>,
    /// Bound outcomes whose error a test handled before the code went on, with where
    /// (`if let Err(e) = &res { log }`): a later `res?` propagates it after all.
    handled_outcomes: Vec<(ValueId, Loc)>,
    /// Markers of those outcomes whose failure an arm that tests them takes and goes
    /// on with (`Ok(Err(e)) => warn!(..)` on a joined task's outcome).
    dropped_outcomes: Vec<Loc>,
    /// Error arms that handle an operation's error by evaluating to it (`Err(e) =>
    /// Err(e.into())`), with where: the value the `match` makes carries it.
    err_valued: Vec<Loc>,
    /// How often each value is filled by a store method (`v.push(..)`), and the
    /// collections filled on operations' success sides, with how often and the
    /// markers of those operations' failure sides (lower/recorded.rs).
    fills: FastMap<ValueId, u32>,
    /// Locals a failure side recorded its failure in (`failed += 1`), by name, with
    /// the side's marker.
    failure_records: Vec<(String, Loc)>,
    /// Those of them a failure side sets to `false` (`ok = false`): a test of one
    /// holds when no failure was recorded.
    cleared_records: FastSet<String>,
    /// Locals holding futures of fallible operations not yet run (a stream whose
    /// futures run concurrently, `let s = stream.map(op).buffer_unordered(n)`; a
    /// collection of futures, `fu.push(op(x))`), with the operations' nodes: a loop
    /// draining it (`while let Some(r) = s.next().await`) takes their outcomes
    /// (lower/joined.rs).
    held_futures: Vec<(ValueId, Vec<Node>)>,
    /// Locals a store method was given spawned tasks' handles (`running.push(
    /// tokio::spawn(..))` into a `FuturesUnordered`): a method awaited on one
    /// (`running.next().await`) finishes one of those tasks.
    task_sets: Vec<ValueId>,
    /// Bindings of a spawned task's own outcome, taken from its join (`Ok(r)` in
    /// `match handle.await { Ok(r) => .., Err(join) => .. }`): a test of one (`if let
    /// Err(e) = r`) handles the task's failure, as `Ok(Err(e))` would.
    task_outcomes: Vec<ValueId>,
    /// Sets spawned tasks were put into (`set.spawn(..)`, `running.push(tokio::spawn(
    /// ..))`): how many (1, or 2 for more than one), and the loops entered since the
    /// set was made that a task was put into it in (lower/values.rs `task_take`).
    set_pushes: Vec<(ValueId, u32, Vec<u32>)>,
    /// The loops being lowered (innermost last), each by a number of its own.
    loops: Vec<u32>,
    loop_serial: u32,
    /// Flags of an operation's outcome (`let sent = op.await.is_ok()`, `let ok = match
    /// r { Ok(_) => true, Err(e) => { warn!(..); false } }`), by name, with where its
    /// error is handled and whether `true` says it succeeded.
    outcome_flags: Vec<(String, Vec<Loc>, bool)>,
    success_fills: Vec<(ValueId, u32, Vec<Loc>)>,
    /// The success arms already counted in `success_fills` (by address): a `match`
    /// may note an arm both as a taken outcome's and as a call's success side.
    success_arms: Vec<usize>,
    /// lapin publishes (their confirmation can be awaited), and those whose
    /// confirmation is dropped.
    confirmable: FastSet<Loc>,
    /// The channel keys of the channel send or receive being emitted.
    chan_keys: Vec<String>,
    /// Channel keys that name one channel ([`Function::chan_links`]).
    chan_links: Vec<Vec<String>>,
    /// The channels made whose pack says how to put them in confirm mode: the
    /// call's place, the statement, the option type's path.
    channel_opens: Vec<(Loc, String, String)>,
    unconfirmed: FastSet<Loc>,
    bound_publishes: Vec<(ValueId, Loc)>,
    /// Bindings of a publish's awaited confirmation (`let c = pending.await;`).
    confirmations: Vec<(ValueId, Option<Loc>)>,
    /// Bindings of the confirmation itself (`let c = pending.await?;`).
    confirmed_values: Vec<(ValueId, Option<Loc>)>,
    /// Publishes whose confirmation a failure side hides (`Function::confirms_ignored`).
    confirms_ignored: Vec<Loc>,
    /// The function, its type or its module is named as a lock or a lease
    /// (`try_lock`, `LeaseStore`, `lock.rs`): a `SET … NX` it runs on a key it is
    /// handed takes that lock.
    lock_helper: bool,
    /// The packs (by origin, `rules/redis.toml`) whose `cache_names` name the
    /// function, its type or its module (`invalidate`, `ProfileCache`): their
    /// key-store writes there keep a cache, not the message's data.
    cache_helper: Vec<String>,
    /// String literals of the builder chain whose event is being emitted.
    builder_strs: Vec<String>,
    /// The tables of the read [`Lowerer::emit`] emitted last (for the value it makes).
    read_rows: Vec<String>,
    /// The receiver of the API call being emitted, when it is a value (an external
    /// call made on an idempotency-keyed client is keyed).
    call_recv: Option<ValueId>,
    /// The API call being emitted is given (or made on) an idempotency-keyed client
    /// built in place, not bound to a name (`create(&client.with_strategy(..), p)`).
    call_keyed: bool,
    /// A binding of a call's result made by the last statement (value, and where the
    /// output stood after it): a `match` on it right after splits by outcome.
    last_outcome: Option<(ValueId, usize, usize)>,
    /// Lowering the function's return value (its tail or a `return`), outside closures.
    in_return: bool,
    /// The `match` or `if` about to be lowered is the function's tail: an arm whose
    /// value is `Err(..)` returns that error (as `return Err(..)` would).
    tail_arms: bool,
    closure_depth: u32,
    /// The element type a closure's first parameter takes (`xs.iter().map(|x| ..)`).
    closure_param_hint: Option<TypeInfo>,
    /// The type of the value the last closure lowered gives (its body's: role and
    /// crate type), for the methods whose value is their closure's.
    closure_value: Option<(Option<String>, Option<String>)>,
    /// Claims run as statements (their result dropped), with their connection: the
    /// connection may still tell the result (rusqlite `changes()`).
    dropped_claims: Vec<(Option<ValueId>, Loc)>,
    returned: FastSet<ValueId>,
    returns_claims: Vec<Loc>,
    /// Publishes whose pending confirmation the function returns (`Function::returns_confirms`).
    returns_confirms: Vec<Loc>,
    /// Calls of the crate's functions a statement or binding awaits at most once.
    calls_awaited_once: FastSet<Loc>,
    /// Calls of the crate's functions whose result is dropped, by location, and
    /// calls whose result is bound (unused if the binding is never read).
    unused_calls: FastSet<Loc>,
    bound_calls: Vec<(ValueId, Loc)>,
    /// Retry scopes being lowered (innermost last), and fresh ids that reached what a
    /// retried step sends (a fresh id per attempt), by the scope they belong to.
    retry_scopes: Vec<(u32, Loc, String)>,
    /// Those of `retry_scopes` that are loops that may prove a relay's poll loop, and
    /// the id flows recorded in them as they would be outside any retry.
    poll_scopes: Vec<u32>,
    poll_fallbacks: Vec<(u32, IdFlow)>,
    /// Fresh ids that reached a send in a poll scope (kept as pass flows if the loop
    /// proves no relay by its own events), and the pass flows and poll loops of
    /// [`crate::ir::Function`].
    poll_sends: Vec<(u32, IdFlow)>,
    pass_id_flows: Vec<crate::ir::PassIdFlow>,
    poll_loops: Vec<crate::ir::PollLoop>,
    /// [`crate::ir::Function::retry_bodies`].
    retry_bodies: Vec<crate::ir::PollLoop>,
    /// Every retry scope lowered (not consume loops), for the review checklist.
    retries_seen: Vec<(Loc, String)>,
    next_scope: u32,
    id_flows: Vec<(Option<u32>, IdFlow)>,
    dedup: dedup::DedupState,
    kafka_clients: Vec<KafkaClient>,
    /// The Kafka client (of `kafka_clients`) the function returns (`Function::returns_kafka_client`).
    returned_kafka_client: Option<usize>,
    /// The client configuration the function returns unmade (`Function::returns_kafka_config`).
    returned_kafka_config: Option<Box<KafkaClient>>,
    /// Packs whose broker entries matched a call here (`Function::packs`).
    packs: Vec<String>,
    ack_settings: Vec<AckSetting>,
    transient_queues: Vec<AckSetting>,
    durable_queues: bool,
    /// Lowering the `..rest` of a struct literal (its `X::default()` fills the
    /// fields not written; it declares nothing by itself).
    in_struct_rest: bool,
    /// Topics this function sends Kafka records to (`FutureRecord::to("t")`).
    sent_topics: Vec<String>,
    /// Topics subscribed on clients made by crate functions (`Function::made_client_topics`).
    made_client_topics: Vec<(crate::ir::Callee, Vec<String>)>,
    /// `Function::topic_fields`.
    topic_fields: Vec<(String, String)>,
    /// Batch calls (line and column of the method's name) whose response's per-entry
    /// failures nothing acts on (`batch.rs`).
    unread_batches: FastSet<(u32, u32)>,
    /// Method calls (line and column of the name) whose value a statement drops
    /// without awaiting it (`batch.rs`).
    dropped_unawaited: FastSet<(u32, u32)>,
    /// Calls (line and column of the path's start or the method's name) whose result
    /// nothing reads as a batch response would be read (`batch.rs`).
    unread_calls: FastSet<(u32, u32)>,
    /// `if`s (line and column of the `if`) whose one side is where a batch call
    /// (line and column of its method's name) had failed entries: `true` the `then`
    /// side (`batch_failed.rs`).
    batch_failure_ifs: FastMap<(u32, u32), ((u32, u32), bool)>,
    /// The names the body awaits as they are (`fut.await`, `batch.rs`).
    awaited_names: FastSet<String>,
    /// The places of the batch calls lowered so far, by line and column.
    batch_locs: FastMap<(u32, u32), Loc>,
    /// A serverless batch handler's event parameter (docs/what-is-analyzed.md, serverless event
    /// sources): received at entry, acked by the `Ok` the handler returns.
    batch_event: Option<ValueId>,
    /// A batch handler, or a function whose result one returns: the `Ok(..)`s it
    /// returns (line and column) ack the batch.
    batch_oks: Option<FastSet<(u32, u32)>>,
    /// In a serverless batch handler: locals bound to a failure list's item
    /// (`let mut f = BatchItemFailure::default();`), pushed later.
    failure_locals: FastSet<String>,
    /// A job-queue worker's handler: its `Ok` acks one job, not a batch.
    job_handler: bool,
    /// The element type of the channel end the function returns, as its signature
    /// says (`fn spawn(..) -> mpsc::Sender<MailerMsg>`): the type of what the
    /// channels it makes carry, when their maker names none.
    returned_chan_elem: Option<String>,
}

/// Lowers every function and method in `items`; returns how many test items were skipped.
pub fn lower_items(
    cx: &FileCx,
    items: &[syn::Item],
    include_tests: bool,
    out: &mut Vec<Function>,
) -> usize {
    let mut skipped = 0;
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                if !include_tests && is_test_attr(&f.attrs) {
                    skipped += 1;
                    continue;
                }
                if cx.wanted(&f.block) {
                    out.push(lower_fn(
                        cx,
                        &f.sig,
                        &f.block,
                        (None, None),
                        &cx.module,
                        None,
                        items,
                    ));
                }
            }
            syn::Item::Impl(imp) => {
                if !include_tests && is_test_attr(&imp.attrs) {
                    skipped += 1;
                    continue;
                }
                let self_ty = super::type_name(&imp.self_ty);
                let trait_name = super::impl_trait_name(imp);
                for it in &imp.items {
                    if let syn::ImplItem::Fn(m) = it {
                        if !include_tests && is_test_attr(&m.attrs) {
                            skipped += 1;
                            continue;
                        }
                        if !cx.wanted(&m.block) {
                            continue;
                        }
                        out.push(lower_fn(
                            cx,
                            &m.sig,
                            &m.block,
                            (self_ty.clone(), trait_name.clone()),
                            &cx.module,
                            Some(imp),
                            items,
                        ));
                    }
                }
            }
            syn::Item::Trait(t) => {
                for it in &t.items {
                    if let syn::TraitItem::Fn(m) = it {
                        if let Some(block) = m.default.as_ref().filter(|b| cx.wanted(b)) {
                            let name = Some(t.ident.to_string());
                            out.push(lower_fn(
                                cx,
                                &m.sig,
                                block,
                                (name.clone(), name),
                                &cx.module,
                                None,
                                items,
                            ));
                        }
                    }
                }
            }
            syn::Item::Mod(m) => {
                if !include_tests && is_test_attr(&m.attrs) {
                    skipped += 1;
                    continue;
                }
                if let Some((_, inner)) = &m.content {
                    let sub = cx.in_module([m.ident.to_string()]);
                    skipped += lower_items(&sub, inner, include_tests, out);
                }
            }
            _ => {}
        }
    }
    skipped
}

/// Whether `x.name(..)`, `x` of unknown type, is lowered as a call into the crate:
/// the crate has one method so named, and standard types have no method of that
/// name nor pass their receiver through one (`Apis::std`). (The prefilter's demand
/// relies on this rule.)
pub(crate) fn links_untyped_receiver(index: &CrateIndex, apis: &Apis, name: &str) -> bool {
    if apis.std.methods.contains(name) || apis.std.aliases.contains(name) {
        return false;
    }
    let n = index
        .fns
        .get(name)
        .map_or(0, |v| v.iter().filter(|s| s.self_type.is_some()).count());
    // docs/what-is-analyzed.md: an unknown receiver links to a crate method only when exactly one
    // method has that name.
    n == 1
}

impl<'a, 'b> Lowerer<'a, 'b> {
    // ----- values and scopes -------------------------------------------------

    /// In a serverless batch handler, or a function whose result one returns,
    /// outside closures: the `Ok(..)` it returns acks every record of its event not
    /// listed as failed (docs/what-is-analyzed.md, serverless event sources).
    pub(super) fn batch_ack(&mut self, e: &Expr, out: &mut Vec<Node>) {
        let sp = e.span();
        let at = self.cx.span(sp, sp);
        let returned = (self.batch_oks.as_ref()).is_some_and(|s| s.contains(&(at.line, at.column)));
        if self.closure_depth != 0 || !returned {
            return;
        }
        out.push(Node::Event(Event {
            // The whole batch, not one record: a record that failed earlier in the
            // loop over the records is acked by it too.
            kind: EventKind::Ack {
                msg: None,
                offsets: false,
                store: false,
            },
            loc: self.cx.loc(sp, sp),
            text: "Ok(..)".into(),
            describe: if self.job_handler {
                "job acked".into()
            } else {
                "batch acked".into()
            },
        }));
    }

    /// In a serverless batch handler: a push into the response's failure list
    /// (`response.batch_item_failures.push(..)`, or of a `BatchItemFailure`) keeps
    /// that record, like a nack.
    pub(super) fn batch_keep(&mut self, mc: &syn::ExprMethodCall, out: &mut Vec<Node>) {
        let sl = &self.cx.apis.serverless;
        let adder = sl.is_failure_adder(&mc.method.to_string());
        if self.batch_oks.is_none() || (mc.method != "push" && !adder) {
            return;
        }
        let list = match strip(&mc.receiver) {
            Expr::Field(f) => match &f.member {
                syn::Member::Named(n) => sl.is_failure_list(&n.to_string()),
                syn::Member::Unnamed(_) => false,
            },
            Expr::Path(p) => p
                .path
                .get_ident()
                .is_some_and(|i| sl.is_failure_list(&i.to_string())),
            _ => false,
        };
        // The item built in the call, or a local bound to one before
        // (`let mut f = BatchItemFailure::default(); f.item_identifier = id;`).
        let item = mc.args.iter().any(|a| {
            self.failure_item(a)
                || matches!(strip(a), Expr::Path(p) if p.path.get_ident()
                    .is_some_and(|i| self.failure_locals.contains(&i.to_string())))
        });
        if !(list || item || adder) {
            return;
        }
        let sp = mc.span();
        out.push(Node::Event(Event {
            kind: EventKind::Nack {
                msg: self.batch_event,
            },
            loc: self.cx.loc(sp, sp),
            text: "batch_item_failures.push".into(),
            describe: "record listed as failed".into(),
        }));
    }
}

impl Lowerer<'_, '_> {
    /// A failure list's item built here (`BatchItemFailure { .. }`,
    /// `BatchItemFailure::default()`, `KinesisBatchItemFailure::new(..)`).
    pub(super) fn failure_item(&self, e: &Expr) -> bool {
        let sl = &self.cx.apis.serverless;
        match strip(e) {
            Expr::Struct(st) => st
                .path
                .segments
                .last()
                .is_some_and(|seg| sl.is_failure_item(&seg.ident.to_string())),
            Expr::Call(c) => match strip(&c.func) {
                Expr::Path(p) => p
                    .path
                    .segments
                    .iter()
                    .any(|seg| sl.is_failure_item(&seg.ident.to_string())),
                _ => false,
            },
            _ => false,
        }
    }
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        Expr::Reference(r) => strip(&r.expr),
        _ => e,
    }
}

fn is_box_pin(c: &syn::ExprCall) -> bool {
    matches!(strip(&c.func), Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "pin"))
}

/// Marks a Kafka topic among an expression's identifiers (`FutureRecord::to("t")`).
const TOPIC_MARK: &str = "@topic=";

fn contains_receive(nodes: &[Node]) -> bool {
    contains_event(nodes, &|k| {
        matches!(k, EventKind::Receive { element: false, .. })
    })
}

/// Some event among the nodes (nested ones included) is of a kind `pred` accepts.
fn contains_event(nodes: &[Node], pred: &dyn Fn(&EventKind) -> bool) -> bool {
    nodes.iter().any(|n| match n {
        Node::Event(e) => pred(&e.kind),
        Node::Seq(v) | Node::Branch(v) => contains_event(v, pred),
        Node::Loop { body, .. } | Node::Closure { body, .. } => {
            contains_event(std::slice::from_ref(body), pred)
        }
        Node::ResultBranch { scrutinee, ok, err } => [scrutinee, ok, err]
            .iter()
            .any(|n| contains_event(std::slice::from_ref(&***n), pred)),
        _ => false,
    })
}

/// A loop that runs pass after pass (`loop`, `while running`), not one that takes
/// the next item of something (`while let Some(x) = ..`, `for`).
fn may_poll(e: &Expr) -> bool {
    match e {
        Expr::Loop(_) => true,
        Expr::While(w) => !matches!(&*w.cond, Expr::Let(_)),
        _ => false,
    }
}

/// The nodes end with a call into the crate, or of a closure the caller passed
/// (whose outcome a `ResultBranch` splits).
fn ends_in_call(nodes: &[Node]) -> bool {
    matches!(
        nodes.last(),
        Some(Node::Event(Event {
            kind: EventKind::Call(_) | EventKind::CallValue { .. },
            ..
        }))
    )
}

fn is_message_role(role: &str) -> bool {
    role.ends_with(".message") || role.ends_with(".delivery")
}

pub(super) fn is_stream_role(role: Option<&str>) -> bool {
    matches!(
        role.and_then(Role::of),
        Some(
            Role::KafkaStream
                | Role::KafkaConsumer
                | Role::AmqpConsumer
                | Role::NatsMessages
                | Role::PulsarConsumer
        )
    )
}

/// `Err(..)` -> error return, `Ok(..)` -> success, otherwise unknown (the runtime
/// pack's `[results]`; `anyhow!(..)` is an error).
fn result_kind(e: &Expr, outcomes: &outcome::Outcomes) -> Option<bool> {
    let results = &crate::apis::builtin_std().results;
    match strip(e) {
        Expr::Call(c) => match strip(&c.func) {
            Expr::Path(p) => outcome::std_side(&p.path)
                .or_else(|| outcome::variant_side(outcomes, &p.path))
                .map(|ok| !ok),
            _ => None,
        },
        // `Outcome::Applied`, `Outcome::Failed { error }` (an outcome enum's variant).
        Expr::Path(p) => outcome::variant_side(outcomes, &p.path).map(|ok| !ok),
        Expr::Struct(s) => outcome::variant_side(outcomes, &s.path).map(|ok| !ok),
        Expr::Macro(m) => {
            let name = m.mac.path.segments.last()?.ident.to_string();
            results.error_macros.contains(&name).then_some(true)
        }
        _ => None,
    }
}

/// The error edge of an operation `ev` that can fail: it fails (the event says what
/// failed) and the function returns the error.
fn failed_then_return(ev: &crate::ir::Event) -> Node {
    Node::Seq(vec![
        Node::Event(crate::ir::Event {
            kind: crate::ir::EventKind::Failed {
                what: Box::new(ev.kind.clone()),
            },
            ..ev.clone()
        }),
        Node::Exit(crate::ir::ExitKind::Return { err: Some(true) }),
    ])
}

/// A `match` or `if`: the expressions whose arms are the function's tail when it is.
fn is_branching(e: &Expr) -> bool {
    matches!(strip(e), Expr::Match(_) | Expr::If(_))
}

/// The value an arm or block evaluates to: its last expression, through blocks.
fn tail_value(e: &Expr) -> &Expr {
    match strip(e) {
        Expr::Block(b) => match b.block.stmts.last() {
            Some(Stmt::Expr(t, None)) => tail_value(t),
            _ => e,
        },
        s => s,
    }
}

fn pat_name(p: &Pat) -> String {
    match p {
        Pat::Ident(i) => i.ident.to_string(),
        Pat::Type(t) => pat_name(&t.pat),
        Pat::Reference(r) => pat_name(&r.pat),
        _ => "item".into(),
    }
}

/// Shortens a receiver's source text for messages: `self.consumer`, `tx`.
fn short_text(s: &str) -> String {
    if s.chars().count() <= 40 {
        return s.to_string();
    }
    let cut = s.find(['(', '{', ' ']).unwrap_or(s.len());
    let head: String = s[..cut].chars().take(40).collect();
    match s[cut..].chars().next() {
        Some('(') => format!("{head}(…)"),
        Some('{') => format!("{head} {{ … }}"),
        _ => format!("{head}…"),
    }
}

fn collect_idents(e: &Expr, out: &mut Vec<String>) {
    use syn::visit::Visit;
    struct V<'o>(&'o mut Vec<String>);
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_path(&mut self, p: &'ast syn::Path) {
            self.0
                .extend(p.segments.iter().map(|s| s.ident.to_string()));
            syn::visit::visit_path(self, p);
        }
    }
    V(out).visit_expr(e);
}

/// The string literals written in `tokens`, macros' tokens included.
fn token_strings(tokens: proc_macro2::TokenStream, out: &mut Vec<String>) {
    for t in tokens {
        match t {
            proc_macro2::TokenTree::Group(g) => token_strings(g.stream(), out),
            proc_macro2::TokenTree::Literal(l) => {
                if let Ok(s) = syn::parse_str::<syn::LitStr>(&l.to_string()) {
                    out.push(s.value());
                }
            }
            _ => {}
        }
    }
}

/// The table of a query-DSL statement: `orders::table` or `orders` -> `orders`.
fn dsl_table(e: &Expr, names: &crate::apis::DslTableNames) -> Option<String> {
    let mut idents = Vec::new();
    collect_idents(e, &mut idents);
    idents.into_iter().find(|i| !names.is_not_table(i))
}
